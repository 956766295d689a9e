//! Graph mode, SHACL: a validator for the SHACL Core and SHACL-SPARQL constraints that
//! cuga-flo's process shapes ([`SHAPES`], `shapes.ttl`) use, producing a W3C SHACL
//! validation report (`sh:conforms`, `sh:result` with `sh:focusNode`, `sh:resultPath`,
//! `sh:value`, `sh:sourceShape`, `sh:sourceConstraintComponent`, `sh:resultSeverity`,
//! `sh:resultMessage`).
//!
//! The data graph sits in an in-memory oxigraph store: property paths (predicate, inverse,
//! sequence, alternative, zero-or-more, one-or-more, zero-or-one) are evaluated as SPARQL
//! property paths, `sh:class` and `sh:targetClass` follow `rdf:type/rdfs:subClassOf*`, and
//! `sh:sparql` SELECT constraints run with `$this` pre-bound (SEP-0007 substitution).
//! Supported: the targets `sh:targetClass`, `targetNode`, `targetSubjectsOf`,
//! `targetObjectsOf`; the constraint components `class`, `datatype`, `nodeKind`,
//! `minCount`, `maxCount`, `in`, `hasValue`, `node`, `not`, `and`, `or`, `xone`, `property`,
//! `qualifiedValueShape` (with `qualifiedMinCount`/`qualifiedMaxCount`) and `sparql`. A
//! shapes graph using anything else is refused ([`ShaclError::Unsupported`]), never
//! silently passed.
//!
//! [`lower`] makes the data graph from a process graph: RDF 1.2 annotation reifiers become
//! RDF reification (`rdf:subject`/`rdf:predicate`/`rdf:object`), which SHACL paths can
//! follow and RDF 1.1 SHACL processors can read; AgentFLOW's first namespaces become the
//! current ones.

use std::collections::{BTreeMap, HashMap, HashSet};

use oxigraph::model::{
    BlankNode, GraphNameRef, Literal, NamedNode, QuadRef, Term, Triple, Variable,
};
use oxigraph::sparql::{QueryResults, SparqlEvaluator};
use oxigraph::store::Store;

use super::vocab::{self as v, RDF, RDFS, SBPMNC, XSD};
use crate::app::LoadedApp;
use crate::diag::Diagnostic;
use crate::source::{SourceFile, Span};

/// The SHACL namespace.
pub const SH: &str = "http://www.w3.org/ns/shacl#";
/// The namespace of cuga-flo's shapes.
pub const CFSH: &str = "urn:cuga-flo:shapes#";
/// cuga-flo's process shapes (Turtle), built into the binary.
pub const SHAPES: &str = include_str!("shapes.ttl");

/// What validation can fail with (a data graph that does not conform is a report, not an
/// error).
#[derive(Debug, thiserror::Error)]
pub enum ShaclError {
    #[error("the shapes graph is not valid Turtle: {0}")]
    Shapes(String),
    #[error("the shapes graph uses {0}, which cuga-flo's SHACL validator does not implement")]
    Unsupported(String),
    #[error("the shapes graph is malformed: {0}")]
    Malformed(String),
    #[error("the data graph cannot be queried: {0}")]
    Store(String),
}

/// One `sh:ValidationResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationResult {
    pub focus: Term,
    /// The path of the property shape (a term of the shapes graph; complex paths are blank
    /// nodes there), or the `?path` a SPARQL constraint bound.
    pub path: Option<Term>,
    pub value: Option<Term>,
    pub shape: Term,
    pub component: NamedNode,
    /// The SPARQL constraint node, for `sh:SPARQLConstraintComponent`.
    pub constraint: Option<Term>,
    pub severity: NamedNode,
    pub message: Option<String>,
}

impl ValidationResult {
    pub fn is_violation(&self) -> bool {
        self.severity.as_str() == format!("{SH}Violation")
    }
}

/// A `sh:ValidationReport`.
#[derive(Debug, Clone)]
pub struct Report {
    pub conforms: bool,
    pub results: Vec<ValidationResult>,
    /// The shapes graph's triples, for writing complex result paths out.
    shapes: Vec<Triple>,
}

fn sh(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{SH}{local}"))
}

fn iri(ns: &str, local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{ns}{local}"))
}

/// The data graph SHACL validates, from a process graph's triples: each annotation reifier
/// (`_:r rdf:reifies <<( s p o )>>`) is given `rdf:subject s; rdf:predicate p; rdf:object
/// o` and its `rdf:reifies` statement is dropped (no triple terms remain); AgentFLOW's
/// first namespaces (`http://example.org/ontology/sbpmnc#`, `.../sbpmn#`) are read as the
/// current ones, and its capitalised sBPMN class names as sBPMN's lowerCamel ones.
pub fn lower(triples: &[Triple]) -> Vec<Triple> {
    let reifies = format!("{RDF}reifies");
    let mut out = Vec::with_capacity(triples.len());
    let mut seen = HashSet::new();
    let mut push = |t: Triple, out: &mut Vec<Triple>| {
        if seen.insert(t.clone()) {
            out.push(t);
        }
    };
    for t in triples {
        let predicate = NamedNode::new_unchecked(v::normalize(t.predicate.as_str()));
        let object = match &t.object {
            Term::Triple(inner) => {
                if predicate.as_str() == reifies
                    && let (subject, Term::NamedNode(_) | Term::BlankNode(_) | Term::Literal(_)) =
                        (&inner.subject, &inner.object)
                {
                    let r = t.subject.clone();
                    let inner_p = NamedNode::new_unchecked(v::normalize(inner.predicate.as_str()));
                    push(
                        Triple::new(r.clone(), iri(RDF, "subject"), subject.clone()),
                        &mut out,
                    );
                    push(
                        Triple::new(r.clone(), iri(RDF, "predicate"), inner_p),
                        &mut out,
                    );
                    push(
                        Triple::new(r, iri(RDF, "object"), class_term(&inner.object)),
                        &mut out,
                    );
                }
                continue;
            }
            other if predicate.as_str() == format!("{RDF}type") => class_term(other),
            other => other.clone(),
        };
        push(Triple::new(t.subject.clone(), predicate, object), &mut out);
    }
    out
}

/// A class read from a graph: AgentFLOW's first sBPMN namespace and capitalised names
/// (`sbpmnc:StartEvent`) as sBPMN's (`startEvent`).
fn class_term(t: &Term) -> Term {
    let Term::NamedNode(n) = t else {
        return t.clone();
    };
    let normal = v::normalize(n.as_str());
    if let Some(local) = normal.strip_prefix(SBPMNC) {
        let mut chars = local.chars();
        if let Some(first) = chars.next() {
            let lower: String = first.to_lowercase().chain(chars).collect();
            return Term::NamedNode(iri(SBPMNC, &lower));
        }
    }
    Term::NamedNode(NamedNode::new_unchecked(normal))
}

/// The shipped shapes' triples.
pub fn shapes() -> Result<Vec<Triple>, ShaclError> {
    parse_turtle(SHAPES)
}

fn parse_turtle(text: &str) -> Result<Vec<Triple>, ShaclError> {
    oxttl::TurtleParser::new()
        .for_slice(text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ShaclError::Shapes(e.to_string()))
}

/// Validate `data` (a data graph, see [`lower`]) against the shapes graph `shapes`.
pub fn validate(data: &[Triple], shapes: &[Triple]) -> Result<Report, ShaclError> {
    let store = Store::new().map_err(|e| ShaclError::Store(e.to_string()))?;
    for t in data {
        store
            .insert(QuadRef::new(
                t.subject.as_ref(),
                t.predicate.as_ref(),
                t.object.as_ref(),
                GraphNameRef::DefaultGraph,
            ))
            .map_err(|e| ShaclError::Store(e.to_string()))?;
    }
    let validator = Validator::new(&store, shapes)?;
    let mut results = Vec::new();
    for shape in validator.shapes_with_targets() {
        if validator.deactivated(&shape) {
            continue;
        }
        for focus in validator.focus_nodes(&shape)? {
            validator.validate_shape(&shape, &focus, 0, &mut results)?;
        }
    }
    Ok(Report {
        conforms: results.is_empty(),
        results,
        shapes: shapes.to_vec(),
    })
}

/// Validate `data` against cuga-flo's process shapes.
pub fn validate_process(data: &[Triple]) -> Result<Report, ShaclError> {
    validate(data, &shapes()?)
}

/// The parameters of a shape that are not constraints (or are read with another one).
const NOT_CONSTRAINTS: [&str; 17] = [
    "path",
    "targetClass",
    "targetNode",
    "targetSubjectsOf",
    "targetObjectsOf",
    "message",
    "severity",
    "name",
    "description",
    "deactivated",
    "order",
    "group",
    "qualifiedMinCount",
    "qualifiedMaxCount",
    "qualifiedValueShapesDisjoint",
    "defaultValue",
    "declare",
];

/// Recursion through `sh:node`/`sh:not`/`sh:or`/... deeper than this is a cycle.
const MAX_DEPTH: usize = 64;

struct Validator<'a> {
    store: &'a Store,
    /// (predicate, object) of every shapes-graph subject.
    about: HashMap<Term, Vec<(NamedNode, Term)>>,
    subjects: Vec<Term>,
}

impl<'a> Validator<'a> {
    fn new(store: &'a Store, shapes: &[Triple]) -> Result<Self, ShaclError> {
        let mut about: HashMap<Term, Vec<(NamedNode, Term)>> = HashMap::new();
        let mut subjects = Vec::new();
        for t in shapes {
            let s: Term = t.subject.clone().into();
            if !about.contains_key(&s) {
                subjects.push(s.clone());
            }
            about
                .entry(s)
                .or_default()
                .push((t.predicate.clone(), t.object.clone()));
        }
        Ok(Validator {
            store,
            about,
            subjects,
        })
    }

    fn objects(&self, s: &Term, p: &str) -> Vec<&Term> {
        self.about
            .get(s)
            .map(|ps| {
                ps.iter()
                    .filter(|(q, _)| q.as_str() == p)
                    .map(|(_, o)| o)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn object(&self, s: &Term, p: &str) -> Option<&Term> {
        self.objects(s, p).into_iter().next()
    }

    fn sh_object(&self, s: &Term, local: &str) -> Option<&Term> {
        self.object(s, &format!("{SH}{local}"))
    }

    fn list(&self, head: &Term) -> Result<Vec<Term>, ShaclError> {
        let nil = format!("{RDF}nil");
        let mut out = Vec::new();
        let mut at = head.clone();
        while !matches!(&at, Term::NamedNode(n) if n.as_str() == nil) {
            let first = self
                .object(&at, &format!("{RDF}first"))
                .ok_or_else(|| ShaclError::Malformed(format!("{at} is not an RDF list")))?;
            out.push(first.clone());
            at = self
                .object(&at, &format!("{RDF}rest"))
                .ok_or_else(|| ShaclError::Malformed(format!("{at} is not an RDF list")))?
                .clone();
            if out.len() > 10_000 {
                return Err(ShaclError::Malformed("an endless RDF list".into()));
            }
        }
        Ok(out)
    }

    fn shapes_with_targets(&self) -> Vec<Term> {
        let targets = [
            "targetClass",
            "targetNode",
            "targetSubjectsOf",
            "targetObjectsOf",
        ];
        self.subjects
            .iter()
            .filter(|s| targets.iter().any(|t| self.sh_object(s, t).is_some()))
            .cloned()
            .collect()
    }

    fn deactivated(&self, shape: &Term) -> bool {
        matches!(self.sh_object(shape, "deactivated"), Some(Term::Literal(l)) if l.value() == "true")
    }

    fn select(
        &self,
        sparql: &str,
        bind: &[(&str, &Term)],
        var: &str,
    ) -> Result<Vec<Term>, ShaclError> {
        let mut query = SparqlEvaluator::new()
            .parse_query(sparql)
            .map_err(|e| ShaclError::Malformed(format!("{e}: {sparql}")))?;
        for (name, term) in bind {
            query = query.substitute_variable(Variable::new_unchecked(*name), (*term).clone());
        }
        let mut out = Vec::new();
        match query
            .on_store(self.store)
            .execute()
            .map_err(|e| ShaclError::Store(e.to_string()))?
        {
            QueryResults::Solutions(solutions) => {
                for s in solutions {
                    let s = s.map_err(|e| ShaclError::Store(e.to_string()))?;
                    if let Some(t) = s.get(var)
                        && !out.contains(t)
                    {
                        out.push(t.clone());
                    }
                }
            }
            _ => {
                return Err(ShaclError::Malformed(format!(
                    "not a SELECT query: {sparql}"
                )));
            }
        }
        Ok(out)
    }

    fn focus_nodes(&self, shape: &Term) -> Result<Vec<Term>, ShaclError> {
        let mut out: Vec<Term> = Vec::new();
        let mut add = |ts: Vec<Term>| {
            for t in ts {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        };
        for c in self.objects(shape, &format!("{SH}targetClass")) {
            add(self.select(
                &format!("SELECT DISTINCT ?f ?c WHERE {{ ?f <{RDF}type>/<{RDFS}subClassOf>* ?c }}"),
                &[("c", c)],
                "f",
            )?);
        }
        for n in self.objects(shape, &format!("{SH}targetNode")) {
            add(vec![n.clone()]);
        }
        for p in self.objects(shape, &format!("{SH}targetSubjectsOf")) {
            let p = named_of(p)?;
            add(self.select(
                &format!("SELECT DISTINCT ?f WHERE {{ ?f <{}> ?o }}", p.as_str()),
                &[],
                "f",
            )?);
        }
        for p in self.objects(shape, &format!("{SH}targetObjectsOf")) {
            let p = named_of(p)?;
            add(self.select(
                &format!("SELECT DISTINCT ?f WHERE {{ ?s <{}> ?f }}", p.as_str()),
                &[],
                "f",
            )?);
        }
        Ok(out)
    }

    /// A SHACL property path as a SPARQL property path.
    fn path_sparql(&self, path: &Term, depth: usize) -> Result<String, ShaclError> {
        if depth > MAX_DEPTH {
            return Err(ShaclError::Malformed("a path nests too deep".into()));
        }
        match path {
            Term::NamedNode(n) => Ok(format!("<{}>", n.as_str())),
            Term::BlankNode(_) => {
                if self.object(path, &format!("{RDF}first")).is_some() {
                    let parts = (self.list(path)?.iter())
                        .map(|p| self.path_sparql(p, depth + 1))
                        .collect::<Result<Vec<_>, _>>()?;
                    if parts.len() < 2 {
                        return Err(ShaclError::Malformed(
                            "a sequence path needs two or more members".into(),
                        ));
                    }
                    return Ok(format!("({})", parts.join("/")));
                }
                if let Some(p) = self.sh_object(path, "inversePath") {
                    return Ok(format!("^({})", self.path_sparql(p, depth + 1)?));
                }
                if let Some(p) = self.sh_object(path, "alternativePath") {
                    let parts = (self.list(p)?.iter())
                        .map(|p| self.path_sparql(p, depth + 1))
                        .collect::<Result<Vec<_>, _>>()?;
                    if parts.len() < 2 {
                        return Err(ShaclError::Malformed(
                            "an alternative path needs two or more members".into(),
                        ));
                    }
                    return Ok(format!("({})", parts.join("|")));
                }
                for (local, op) in [
                    ("zeroOrMorePath", "*"),
                    ("oneOrMorePath", "+"),
                    ("zeroOrOnePath", "?"),
                ] {
                    if let Some(p) = self.sh_object(path, local) {
                        return Ok(format!("({}){op}", self.path_sparql(p, depth + 1)?));
                    }
                }
                Err(ShaclError::Unsupported(format!("the path {path}")))
            }
            other => Err(ShaclError::Malformed(format!("{other} is not a path"))),
        }
    }

    /// The value nodes of `shape` for `focus`.
    fn value_nodes(&self, shape: &Term, focus: &Term) -> Result<Vec<Term>, ShaclError> {
        let Some(path) = self.sh_object(shape, "path") else {
            return Ok(vec![focus.clone()]);
        };
        let path = self.path_sparql(path, 0)?;
        self.select(
            &format!("SELECT DISTINCT ?this ?v WHERE {{ ?this {path} ?v }}"),
            &[("this", focus)],
            "v",
        )
    }

    fn is_instance(&self, value: &Term, class: &Term) -> Result<bool, ShaclError> {
        if matches!(value, Term::Literal(_)) {
            return Ok(false);
        }
        let query = format!("ASK {{ ?v <{RDF}type>/<{RDFS}subClassOf>* ?c }}");
        let prepared = SparqlEvaluator::new()
            .parse_query(&query)
            .map_err(|e| ShaclError::Malformed(e.to_string()))?
            .substitute_variable(Variable::new_unchecked("v"), value.clone())
            .substitute_variable(Variable::new_unchecked("c"), class.clone());
        match prepared
            .on_store(self.store)
            .execute()
            .map_err(|e| ShaclError::Store(e.to_string()))?
        {
            QueryResults::Boolean(b) => Ok(b),
            _ => Err(ShaclError::Store("an ASK query gave no boolean".into())),
        }
    }

    fn conforms(&self, shape: &Term, focus: &Term, depth: usize) -> Result<bool, ShaclError> {
        let mut results = Vec::new();
        self.validate_shape(shape, focus, depth + 1, &mut results)?;
        Ok(results.is_empty())
    }

    fn validate_shape(
        &self,
        shape: &Term,
        focus: &Term,
        depth: usize,
        out: &mut Vec<ValidationResult>,
    ) -> Result<(), ShaclError> {
        if depth > MAX_DEPTH {
            return Err(ShaclError::Malformed(format!(
                "the shapes refer to each other in a cycle through {shape}"
            )));
        }
        if self.deactivated(shape) {
            return Ok(());
        }
        let values = self.value_nodes(shape, focus)?;
        let path = self.sh_object(shape, "path").cloned();
        let severity = match self.sh_object(shape, "severity") {
            Some(Term::NamedNode(n)) => n.clone(),
            _ => sh("Violation"),
        };
        let message = match self.sh_object(shape, "message") {
            Some(Term::Literal(l)) => Some(l.value().to_owned()),
            _ => None,
        };
        let result = |component: &str, value: Option<Term>| ValidationResult {
            focus: focus.clone(),
            path: path.clone(),
            value,
            shape: shape.clone(),
            component: sh(component),
            constraint: None,
            severity: severity.clone(),
            message: message.clone(),
        };
        let params = self.about.get(shape).cloned().unwrap_or_default();
        for (p, o) in &params {
            let Some(local) = p.as_str().strip_prefix(SH) else {
                continue;
            };
            match local {
                l if NOT_CONSTRAINTS.contains(&l) => {}
                "class" => {
                    for v in &values {
                        if !self.is_instance(v, o)? {
                            out.push(result("ClassConstraintComponent", Some(v.clone())));
                        }
                    }
                }
                "datatype" => {
                    let d = named_of(o)?;
                    for v in &values {
                        let ok = matches!(v, Term::Literal(l) if l.datatype() == d.as_ref() && well_formed(l));
                        if !ok {
                            out.push(result("DatatypeConstraintComponent", Some(v.clone())));
                        }
                    }
                }
                "nodeKind" => {
                    let kind = named_of(o)?;
                    let kind = kind.as_str().strip_prefix(SH).unwrap_or_default();
                    for v in &values {
                        let ok = match v {
                            Term::NamedNode(_) => kind.contains("IRI"),
                            Term::BlankNode(_) => kind.contains("BlankNode"),
                            Term::Literal(_) => kind.contains("Literal"),
                            Term::Triple(_) => false,
                        };
                        if !ok {
                            out.push(result("NodeKindConstraintComponent", Some(v.clone())));
                        }
                    }
                }
                "minCount" => {
                    if (values.len() as u64) < count_of(o)? {
                        out.push(result("MinCountConstraintComponent", None));
                    }
                }
                "maxCount" => {
                    if (values.len() as u64) > count_of(o)? {
                        out.push(result("MaxCountConstraintComponent", None));
                    }
                }
                "in" => {
                    let allowed = self.list(o)?;
                    for v in &values {
                        if !allowed.contains(v) {
                            out.push(result("InConstraintComponent", Some(v.clone())));
                        }
                    }
                }
                "hasValue" => {
                    if !values.contains(o) {
                        out.push(result("HasValueConstraintComponent", None));
                    }
                }
                "node" => {
                    for v in &values {
                        if !self.conforms(o, v, depth)? {
                            out.push(result("NodeConstraintComponent", Some(v.clone())));
                        }
                    }
                }
                "not" => {
                    for v in &values {
                        if self.conforms(o, v, depth)? {
                            out.push(result("NotConstraintComponent", Some(v.clone())));
                        }
                    }
                }
                "and" | "or" | "xone" => {
                    let members = self.list(o)?;
                    for v in &values {
                        let mut passed = 0;
                        for m in &members {
                            if self.conforms(m, v, depth)? {
                                passed += 1;
                            }
                        }
                        let ok = match local {
                            "and" => passed == members.len(),
                            "or" => passed > 0,
                            _ => passed == 1,
                        };
                        if !ok {
                            let component = match local {
                                "and" => "AndConstraintComponent",
                                "or" => "OrConstraintComponent",
                                _ => "XoneConstraintComponent",
                            };
                            out.push(result(component, Some(v.clone())));
                        }
                    }
                }
                "property" => {
                    for v in &values {
                        self.validate_shape(o, v, depth + 1, out)?;
                    }
                }
                "qualifiedValueShape" => {
                    let mut passed = 0u64;
                    for v in &values {
                        if self.conforms(o, v, depth)? {
                            passed += 1;
                        }
                    }
                    if let Some(min) = self.sh_object(shape, "qualifiedMinCount")
                        && passed < count_of(min)?
                    {
                        out.push(result("QualifiedMinCountConstraintComponent", None));
                    }
                    if let Some(max) = self.sh_object(shape, "qualifiedMaxCount")
                        && passed > count_of(max)?
                    {
                        out.push(result("QualifiedMaxCountConstraintComponent", None));
                    }
                }
                "sparql" => {
                    self.sparql(shape, o, focus, &path, &severity, &message, out)?;
                }
                other => return Err(ShaclError::Unsupported(format!("sh:{other}"))),
            }
        }
        Ok(())
    }

    /// A SPARQL-based constraint (`sh:select`, `$this` pre-bound): one result per solution.
    #[allow(clippy::too_many_arguments)]
    fn sparql(
        &self,
        shape: &Term,
        constraint: &Term,
        focus: &Term,
        path: &Option<Term>,
        severity: &NamedNode,
        shape_message: &Option<String>,
        out: &mut Vec<ValidationResult>,
    ) -> Result<(), ShaclError> {
        if self.deactivated(constraint) {
            return Ok(());
        }
        if path.is_some() {
            return Err(ShaclError::Unsupported(
                "sh:sparql on a property shape ($PATH)".into(),
            ));
        }
        let Some(Term::Literal(select)) = self.sh_object(constraint, "select") else {
            return Err(ShaclError::Unsupported(
                "a SPARQL constraint without sh:select".into(),
            ));
        };
        let mut prefixes = String::new();
        for p in self.objects(constraint, &format!("{SH}prefixes")) {
            for d in self.objects(p, &format!("{SH}declare")) {
                let (Some(Term::Literal(prefix)), Some(Term::Literal(ns))) =
                    (self.sh_object(d, "prefix"), self.sh_object(d, "namespace"))
                else {
                    return Err(ShaclError::Malformed(format!(
                        "the prefix declaration {d} needs sh:prefix and sh:namespace"
                    )));
                };
                prefixes.push_str(&format!("PREFIX {}: <{}>\n", prefix.value(), ns.value()));
            }
        }
        let query = format!("{prefixes}{}", select.value());
        let mut prepared = SparqlEvaluator::new()
            .parse_query(&query)
            .map_err(|e| ShaclError::Malformed(format!("{e}: {query}")))?;
        prepared = prepared.substitute_variable(Variable::new_unchecked("this"), focus.clone());
        let message = match self.sh_object(constraint, "message") {
            Some(Term::Literal(l)) => Some(l.value().to_owned()),
            _ => shape_message.clone(),
        };
        let QueryResults::Solutions(solutions) = prepared
            .on_store(self.store)
            .execute()
            .map_err(|e| ShaclError::Store(e.to_string()))?
        else {
            return Err(ShaclError::Malformed(format!(
                "a SPARQL constraint must be a SELECT: {query}"
            )));
        };
        for s in solutions {
            let s = s.map_err(|e| ShaclError::Store(e.to_string()))?;
            if matches!(s.get("failure"), Some(Term::Literal(l)) if l.value() == "true") {
                return Err(ShaclError::Store(format!(
                    "the SPARQL constraint of {shape} failed on {focus}"
                )));
            }
            out.push(ValidationResult {
                focus: focus.clone(),
                path: s.get("path").cloned(),
                value: Some(s.get("value").cloned().unwrap_or_else(|| focus.clone())),
                shape: shape.clone(),
                component: sh("SPARQLConstraintComponent"),
                constraint: Some(constraint.clone()),
                severity: severity.clone(),
                message: match s.get("message") {
                    Some(Term::Literal(l)) => Some(l.value().to_owned()),
                    _ => message.clone(),
                },
            });
        }
        Ok(())
    }
}

fn named_of(t: &Term) -> Result<NamedNode, ShaclError> {
    match t {
        Term::NamedNode(n) => Ok(n.clone()),
        other => Err(ShaclError::Malformed(format!("{other} is not an IRI"))),
    }
}

fn count_of(t: &Term) -> Result<u64, ShaclError> {
    match t {
        Term::Literal(l) => l
            .value()
            .parse()
            .map_err(|_| ShaclError::Malformed(format!("{t} is not a count"))),
        other => Err(ShaclError::Malformed(format!("{other} is not a count"))),
    }
}

/// Whether a literal's text is in the lexical space of its (XSD) datatype, for the
/// datatypes the shapes name; others are taken as written.
fn well_formed(l: &Literal) -> bool {
    let text = l.value();
    let Some(local) = l.datatype().as_str().strip_prefix(XSD) else {
        return true;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = |s: &str| s.strip_prefix(['+', '-']).unwrap_or(s).to_owned();
    match local {
        "boolean" => matches!(text, "true" | "false" | "1" | "0"),
        "integer" => digits(&unsigned(text)),
        "decimal" => {
            let s = unsigned(text);
            match s.split_once('.') {
                Some((a, b)) => {
                    (digits(a) || a.is_empty())
                        && (digits(b) || b.is_empty())
                        && !(a.is_empty() && b.is_empty())
                }
                None => digits(&s),
            }
        }
        "double" | "float" => {
            matches!(text, "INF" | "-INF" | "+INF" | "NaN") || {
                let (m, e) = match text.split_once(['e', 'E']) {
                    Some((m, e)) => (m, Some(e)),
                    None => (text, None),
                };
                let m = unsigned(m);
                let m_ok = match m.split_once('.') {
                    Some((a, b)) => {
                        (digits(a) || a.is_empty())
                            && (digits(b) || b.is_empty())
                            && !(a.is_empty() && b.is_empty())
                    }
                    None => digits(&m),
                };
                m_ok && e.is_none_or(|e| digits(&unsigned(e)))
            }
        }
        "dayTimeDuration" => day_time_duration(text),
        _ => true,
    }
}

/// `-?P(nD)?(T(nH)?(nM)?(n(.n)?S)?)?` with at least one part, and a part after `T`.
fn day_time_duration(text: &str) -> bool {
    let s = text.strip_prefix('-').unwrap_or(text);
    let Some(s) = s.strip_prefix('P') else {
        return false;
    };
    let (days, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut any = false;
    if !days.is_empty() {
        let Some(n) = days.strip_suffix('D') else {
            return false;
        };
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        any = true;
    }
    if let Some(mut t) = time {
        if t.is_empty() {
            return false;
        }
        for unit in ['H', 'M', 'S'] {
            if let Some(at) = t.find(unit) {
                let n = &t[..at];
                let ok = if unit == 'S' {
                    let (a, b) = n.split_once('.').unwrap_or((n, "0"));
                    !a.is_empty()
                        && a.bytes().all(|c| c.is_ascii_digit())
                        && !b.is_empty()
                        && b.bytes().all(|c| c.is_ascii_digit())
                } else {
                    !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())
                };
                if !ok {
                    return false;
                }
                t = &t[at + 1..];
                any = true;
            }
        }
        if !t.is_empty() {
            return false;
        }
    }
    any
}

impl Report {
    /// The results that are violations (not warnings or infos).
    pub fn violations(&self) -> impl Iterator<Item = &ValidationResult> {
        self.results.iter().filter(|r| r.is_violation())
    }

    /// The report as an RDF graph (`sh:ValidationReport`).
    pub fn to_triples(&self) -> Vec<Triple> {
        let mut out = Vec::new();
        let report = BlankNode::default();
        let rdf_type = iri(RDF, "type");
        out.push(Triple::new(
            report.clone(),
            rdf_type.clone(),
            sh("ValidationReport"),
        ));
        out.push(Triple::new(
            report.clone(),
            sh("conforms"),
            Literal::from(self.conforms),
        ));
        let shapes: BTreeMap<String, Vec<&Triple>> =
            self.shapes.iter().fold(BTreeMap::new(), |mut m, t| {
                m.entry(t.subject.to_string()).or_default().push(t);
                m
            });
        for r in &self.results {
            let node = BlankNode::default();
            out.push(Triple::new(report.clone(), sh("result"), node.clone()));
            out.push(Triple::new(
                node.clone(),
                rdf_type.clone(),
                sh("ValidationResult"),
            ));
            out.push(Triple::new(node.clone(), sh("focusNode"), r.focus.clone()));
            if let Some(path) = &r.path {
                out.push(Triple::new(node.clone(), sh("resultPath"), path.clone()));
                copy_blank(path, &shapes, &mut out, 0);
            }
            if let Some(value) = &r.value {
                out.push(Triple::new(node.clone(), sh("value"), value.clone()));
            }
            out.push(Triple::new(
                node.clone(),
                sh("sourceShape"),
                r.shape.clone(),
            ));
            if let Some(c) = &r.constraint {
                out.push(Triple::new(node.clone(), sh("sourceConstraint"), c.clone()));
            }
            out.push(Triple::new(
                node.clone(),
                sh("sourceConstraintComponent"),
                r.component.clone(),
            ));
            out.push(Triple::new(
                node.clone(),
                sh("resultSeverity"),
                r.severity.clone(),
            ));
            if let Some(m) = &r.message {
                out.push(Triple::new(
                    node.clone(),
                    sh("resultMessage"),
                    Literal::new_simple_literal(m),
                ));
            }
        }
        out
    }

    /// The report as Turtle.
    pub fn to_turtle(&self) -> String {
        let mut serializer = oxttl::TurtleSerializer::new();
        for (p, ns) in [("sh", SH), ("cfsh", CFSH)]
            .into_iter()
            .chain(v::PREFIXES.iter().copied())
        {
            serializer = serializer
                .with_prefix(p, ns)
                .unwrap_or_else(|_| oxttl::TurtleSerializer::new());
        }
        let mut writer = serializer.for_writer(Vec::new());
        for t in self.to_triples() {
            // Writing into memory cannot fail.
            let _ = writer.serialize_triple(&t);
        }
        writer
            .finish()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }
}

/// The statements of a blank-node path of the shapes graph, into the report.
fn copy_blank(
    t: &Term,
    shapes: &BTreeMap<String, Vec<&Triple>>,
    out: &mut Vec<Triple>,
    depth: usize,
) {
    if depth > MAX_DEPTH || !matches!(t, Term::BlankNode(_)) {
        return;
    }
    for triple in shapes.get(&t.to_string()).into_iter().flatten() {
        if !out.contains(triple) {
            out.push((*triple).clone());
            copy_blank(&triple.object, shapes, out, depth + 1);
        }
    }
}

/// A term as text: an IRI bare, a blank node `_:id`, a literal in N-Triples form.
pub fn term_text(t: &Term) -> String {
    match t {
        Term::NamedNode(n) => n.as_str().to_owned(),
        other => other.to_string(),
    }
}

/// A term shortened with the prefixes (`cfsh:ReachableShape`, `sh:MinCountConstraintComponent`).
pub fn short(t: &Term, prefixes: &[(String, String)]) -> String {
    if let Term::NamedNode(n) = t {
        for (p, ns) in prefixes
            .iter()
            .map(|(p, n)| (p.as_str(), n.as_str()))
            .chain([("sh", SH), ("cfsh", CFSH)])
            .chain(v::PREFIXES.iter().copied())
        {
            if let Some(local) = n.as_str().strip_prefix(ns)
                && !local.is_empty()
                && local
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
                && !local.ends_with('.')
            {
                return format!("{p}:{local}");
            }
        }
    }
    if matches!(t, Term::BlankNode(_)) {
        return "a blank node".to_owned();
    }
    term_text(t)
}

/// What one result says, for a person: the focus node, the shape and the constraint.
fn describe(r: &ValidationResult, prefixes: &[(String, String)]) -> (String, String) {
    let message = r
        .message
        .clone()
        .unwrap_or_else(|| "the node does not conform to the shape".to_owned());
    let label = format!(
        "{} violates {} ({})",
        short(&r.focus, prefixes),
        short(&r.shape, prefixes),
        short(&Term::NamedNode(r.component.clone()), prefixes),
    );
    (message, label)
}

fn diagnostic(r: &ValidationResult, message: String) -> Diagnostic {
    let code = "graph::shacl";
    if r.is_violation() {
        Diagnostic::error(code, message)
    } else {
        Diagnostic::warning(code, message)
    }
}

const HELP_SHAPES: &str = "cuga-flo's process shapes: `cuga-flo graph validate --shapes` prints them, \
    `--report` prints the SHACL validation report (docs/graph.md)";

/// The SHACL validation of a graph-mode app (an app whose flow config has a `graph:`
/// block): its export validated against the process shapes, each result a diagnostic at
/// the BPMN element it comes from. Nothing for other apps, or when the app cannot be
/// exported (its own checks say why).
pub fn check_app(app: &LoadedApp) -> Vec<Diagnostic> {
    if app.config.as_ref().is_none_or(|c| c.graph.is_none()) {
        return Vec::new();
    }
    let Some(doc) = &app.bpmn else {
        return Vec::new();
    };
    let Ok(exported) = super::export(app) else {
        return Vec::new();
    };
    let data = lower(&exported.document.triples());
    match validate_process(&data) {
        Ok(report) => check_app_report(app, &exported, &data, &report),
        Err(e) => vec![
            Diagnostic::error(
                "graph::shacl_failed",
                format!("SHACL validation failed: {e}"),
            )
            .in_path(doc.source.path().display()),
        ],
    }
}

/// The results of an app's report as diagnostics at their BPMN elements.
pub fn check_app_report(
    app: &LoadedApp,
    exported: &super::Exported,
    data: &[Triple],
    report: &Report,
) -> Vec<Diagnostic> {
    let Some(doc) = &app.bpmn else {
        return Vec::new();
    };
    let bpmn_id = iri(v::CF, "bpmnId");
    let id_of = |focus: &Term| {
        data.iter()
            .find(|t| Term::from(t.subject.clone()) == *focus && t.predicate == bpmn_id)
            .and_then(|t| match &t.object {
                Term::Literal(l) => Some(l.value().to_owned()),
                _ => None,
            })
    };
    let mut out = Vec::new();
    for r in &report.results {
        let (message, label) = describe(r, &exported.prefixes);
        let id = id_of(&r.focus);
        let span = id.as_ref().and_then(|id| {
            doc.processes.iter().find_map(|p| {
                if p.id == *id {
                    return Some(p.span);
                }
                (p.nodes.iter().find(|n| n.id == *id).map(|n| n.span))
                    .or_else(|| p.flows.iter().find(|f| f.id == *id).map(|f| f.span))
            })
        });
        // A declared variable: at its name in the flow config.
        let var_name = iri(v::AGENTFLOW, "varName");
        let variable = (data.iter())
            .find(|t| Term::from(t.subject.clone()) == r.focus && t.predicate == var_name)
            .and_then(|t| match &t.object {
                Term::Literal(l) => Some(l.value().to_owned()),
                _ => None,
            })
            .filter(|_| id.is_none());
        let in_config = app.config.as_ref().and_then(|c| {
            let name = variable.as_ref()?;
            let var = c.variables.iter().find(|v| v.name.value == *name)?;
            Some((&c.source, var.name.span))
        });
        let element = id.as_deref().or(variable.as_deref()).unwrap_or("?");
        let d = diagnostic(r, format!("SHACL: `{element}`: {message}"));
        let d = match (span, in_config) {
            (Some(span), _) => d.at(&doc.source, span, Some(label)),
            (None, Some((source, span))) => d.at(source, span, Some(label)),
            (None, None) => d
                .in_path(doc.source.path().display())
                .with_help(format!("{label}; {HELP_SHAPES}")),
        };
        out.push(if d.help.is_none() {
            d.with_help(HELP_SHAPES)
        } else {
            d
        });
    }
    out
}

/// A graph file validated: its data graph, the report, and the report's results as
/// diagnostics at the lines of the file where their focus nodes are written. A file that
/// does not parse gives its syntax diagnostics.
pub struct FileValidation {
    pub data: Vec<Triple>,
    pub report: Report,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn check_file(source: &SourceFile) -> Result<FileValidation, Vec<Diagnostic>> {
    let (triples, prefixes) = super::file::parse(source)?;
    check_parsed(source, &triples, &prefixes)
}

/// [`check_file`] on a file already parsed (its triples and prefixes).
pub(crate) fn check_parsed(
    source: &SourceFile,
    triples: &[Triple],
    prefixes: &[(String, String)],
) -> Result<FileValidation, Vec<Diagnostic>> {
    let data = lower(triples);
    let report = validate_process(&data).map_err(|e| {
        vec![
            Diagnostic::error(
                "graph::shacl_failed",
                format!("SHACL validation failed: {e}"),
            )
            .in_path(source.path().display()),
        ]
    })?;
    let diagnostics = report
        .results
        .iter()
        .map(|r| {
            let (message, label) = describe(r, prefixes);
            let span = match &r.focus {
                Term::NamedNode(n) => super::file::locate(source, prefixes, n.as_str()),
                _ => Span::new(0, 0),
            };
            diagnostic(
                r,
                format!("SHACL: {}: {message}", short(&r.focus, prefixes)),
            )
            .at(source, span, Some(label))
            .with_help(HELP_SHAPES)
        })
        .collect();
    Ok(FileValidation {
        data,
        report,
        diagnostics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turtle(text: &str) -> Vec<Triple> {
        oxttl::TurtleParser::new()
            .for_slice(text)
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    }

    #[test]
    fn annotations_are_lowered_to_rdf_reification() {
        let data = lower(&turtle(
            "@prefix af: <http://example.org/ontology/agentflow#> .
             @prefix old: <http://example.org/ontology/sbpmnc#> .
             <urn:g> a old:ExclusiveGateway ; af:nextTask <urn:t> {| af:isDefault true |} .",
        ));
        let text: Vec<String> = data.iter().map(|t| t.to_string()).collect();
        let has = |p: &str, o: &str| {
            text.iter()
                .any(|t| t.contains(&format!("{RDF}{p}>")) && t.ends_with(o))
        };
        assert!(has("subject", "<urn:g>"), "{text:#?}");
        assert!(
            has(
                "predicate",
                "<http://example.org/ontology/agentflow#nextTask>"
            ),
            "{text:#?}"
        );
        assert!(has("object", "<urn:t>"), "{text:#?}");
        // No triple term is left, and the legacy capitalised class is sBPMN's.
        assert!(!text.iter().any(|t| t.contains("<<")), "{text:#?}");
        assert!(
            text.iter()
                .any(|t| t.ends_with(&format!("<{SBPMNC}exclusiveGateway>"))),
            "{text:#?}"
        );
    }

    #[test]
    fn day_time_durations_are_checked_lexically() {
        for ok in ["PT1H", "P1D", "P2DT3H4M5.5S", "-PT30M", "PT0S"] {
            assert!(day_time_duration(ok), "{ok}");
        }
        for bad in [
            "", "P", "PT", "1H", "PT1X", "P1Y", "PT1.5H", "PT1H2", "P1DT",
        ] {
            assert!(!day_time_duration(bad), "{bad}");
        }
    }

    #[test]
    fn the_shipped_shapes_parse_and_use_only_supported_constraints() {
        // The empty graph conforms; every shape is read (an unsupported constraint would
        // be an error as soon as a focus node reaches it, so give each target one).
        let report = validate_process(&[]).unwrap();
        assert!(report.conforms);
        let data = lower(&turtle(&format!(
            "@prefix af: <http://example.org/ontology/agentflow#> .
             @prefix s: <{SBPMNC}> .
             <urn:p> a af:AgenticProcess ; af:hasTask <urn:t> .
             <urn:t> a af:AgenticTask , af:GuardrailGateway , s:exclusiveGateway .
             <urn:v> a af:ProcessVariable ."
        )));
        let report = validate_process(&data).unwrap();
        assert!(!report.conforms);
        assert!(report.to_turtle().contains("sh:ValidationReport"));
    }

    #[test]
    fn an_unsupported_constraint_is_refused_not_passed() {
        let shapes = turtle(
            "@prefix sh: <http://www.w3.org/ns/shacl#> .
             <urn:s> sh:targetNode <urn:x> ; sh:closed true .",
        );
        let err = validate(&[], &shapes).unwrap_err();
        assert!(err.to_string().contains("sh:closed"), "{err}");
    }

    #[test]
    fn blank_focus_nodes_and_sequence_paths_work() {
        let shapes = turtle(
            "@prefix sh: <http://www.w3.org/ns/shacl#> .
             <urn:s> sh:targetSubjectsOf <urn:a> ;
                 sh:property [ sh:path ( <urn:a> <urn:b> ) ; sh:minCount 1 ] .",
        );
        let data = turtle("_:x <urn:a> _:y . _:y <urn:b> 1 . _:z <urn:a> _:w .");
        let report = validate(&data, &shapes).unwrap();
        assert_eq!(report.results.len(), 1, "{:?}", report.results);
        assert!(matches!(report.results[0].focus, Term::BlankNode(_)));
    }
}
