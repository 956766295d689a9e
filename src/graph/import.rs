//! RDF → app: reads a graph in the shape [`super::export`] writes, or in AgentFLOW's
//! (flow nodes typed by sBPMN/AgentFLOW classes, `agentflow:nextTask` edges, conditions as
//! `varName`/`operator`/`threshold`/`isDefault` annotations), and makes the files of a
//! runnable app: the BPMN model, the flow config and the policy files it names. Every
//! problem is a diagnostic at the line of the graph file it comes from.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use oxrdf::{NamedOrBlankNode, Term, Triple};
use serde_json::{Map, Value, json};

use super::bpmn_xml::{self, Header};
use super::export::iri_safe;
use super::file::{locate, parse};
use super::vocab::{self as v, iri};
use crate::bpmn::{
    Condition, EventDefinition, EventRef, Flow, GatewayKind, LoopKind, Looping, MultiInstance,
    Node, NodeKind, Process, Property, SubProcessKind, TaskKind, Timer, TimerKind,
};
use crate::diag::Diagnostic;
use crate::source::{SourceFile, Span};

/// The files of an imported app.
#[derive(Debug, Clone)]
pub struct Imported {
    /// `config/<app>.bpmn`.
    pub bpmn: String,
    /// `config/<app>_config.yaml`.
    pub config: String,
    /// Files relative to the app folder (`policies/...`) and their text.
    pub policies: Vec<(String, String)>,
    /// What the SHACL shapes warn of (a violation refuses the import).
    pub warnings: Vec<Diagnostic>,
    /// The process, as written into `bpmn`.
    pub process: Process,
}

/// Read the graph in `source` and make app `app` of it. The graph must also conform to
/// cuga-flo's SHACL shapes ([`super::shacl`]): a violation refuses the import (with every
/// result, at the lines of the file); warnings come back with the app.
///
/// An AgentFLOW graph's agentic tasks name Goose recipes (`agentflow:recipe`): each is
/// looked for as `<name>.yaml` (or `.yml`, `.json`) in `recipe_dirs`, then where AgentFLOW
/// keeps them: `recipes/` beside the graph file, then in the folders above it (its demo's
/// and its project's).
pub fn import(
    source: &SourceFile,
    app: &str,
    recipe_dirs: &[PathBuf],
) -> Result<Imported, Vec<Diagnostic>> {
    let (triples, prefixes) = parse(source)?;
    let shapes = {
        let checked = super::shacl::check_parsed(source, &triples, &prefixes)?;
        checked.diagnostics
    };
    let mut graph = Graph::new(source, triples, prefixes);
    graph.recipe_dirs = recipe_dirs.to_vec();
    let beside = source.path().parent().unwrap_or(Path::new("."));
    for up in [
        beside,
        beside.join("..").as_path(),
        beside.join("../..").as_path(),
    ] {
        graph.recipe_dirs.push(up.join("recipes"));
    }
    let mut imported = graph.build(app)?;
    if shapes.iter().any(Diagnostic::is_error) {
        return Err(shapes);
    }
    imported.warnings.splice(0..0, shapes);
    Ok(imported)
}

type Subject = NamedOrBlankNode;

struct Graph<'a> {
    source: &'a SourceFile,
    /// Where an AgentFLOW task's recipe is looked for, in order.
    recipe_dirs: Vec<PathBuf>,
    prefixes: Vec<(String, String)>,
    /// Every statement about a subject: (normalised predicate IRI, object).
    about: HashMap<Subject, Vec<(String, Term)>>,
    /// Subjects in the order they were first met.
    subjects: Vec<Subject>,
    /// Asserted `nextTask` edges in the order met.
    edges: Vec<Triple>,
    /// The reifiers of each triple (annotation blocks), by the triple.
    reifiers: HashMap<Triple, Vec<Subject>>,
}

impl<'a> Graph<'a> {
    fn new(source: &'a SourceFile, triples: Vec<Triple>, prefixes: Vec<(String, String)>) -> Self {
        let mut g = Graph {
            source,
            recipe_dirs: Vec::new(),
            prefixes,
            about: HashMap::new(),
            subjects: Vec::new(),
            edges: Vec::new(),
            reifiers: HashMap::new(),
        };
        let reifies = format!("{}reifies", v::RDF);
        let next = iri(v::NEXT_TASK);
        let mut seen_edges: HashSet<Triple> = HashSet::new();
        for t in unreify(triples) {
            let p = v::normalize(t.predicate.as_str());
            if p == reifies {
                if let Term::Triple(inner) = &t.object {
                    let inner = normalize_triple(inner);
                    g.reifiers.entry(inner).or_default().push(t.subject.clone());
                }
                continue;
            }
            if p == next {
                // Two flows between the same nodes are one triple with two reifiers; a
                // reader may hand the triple over once per annotation block.
                let edge = normalize_triple(&t);
                if seen_edges.insert(edge.clone()) {
                    g.edges.push(edge);
                }
            }
            if !g.about.contains_key(&t.subject) {
                g.subjects.push(t.subject.clone());
            }
            let object = match &t.object {
                Term::NamedNode(n) => {
                    Term::NamedNode(oxrdf::NamedNode::new_unchecked(v::normalize(n.as_str())))
                }
                o => o.clone(),
            };
            g.about.entry(t.subject).or_default().push((p, object));
        }
        g
    }

    fn values(&self, s: &Subject, p: (&str, &str)) -> impl Iterator<Item = &Term> {
        let p = iri(p);
        self.about
            .get(s)
            .into_iter()
            .flatten()
            .filter(move |(q, _)| *q == p)
            .map(|(_, o)| o)
    }

    fn value(&self, s: &Subject, p: (&str, &str)) -> Option<&Term> {
        self.values(s, p).next()
    }

    fn text(&self, s: &Subject, p: (&str, &str)) -> Option<String> {
        match self.value(s, p)? {
            Term::Literal(l) => Some(l.value().to_owned()),
            Term::NamedNode(n) => Some(n.as_str().to_owned()),
            _ => None,
        }
    }

    fn flag(&self, s: &Subject, p: (&str, &str)) -> Option<bool> {
        match self.text(s, p)?.as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }

    fn types(&self, s: &Subject) -> Vec<String> {
        self.values(s, v::TYPE)
            .filter_map(|t| match t {
                Term::NamedNode(n) => Some(n.as_str().to_owned()),
                _ => None,
            })
            .collect()
    }

    fn blank(&self, t: &Term) -> Option<Subject> {
        match t {
            Term::BlankNode(b) => Some(Subject::BlankNode(b.clone())),
            Term::NamedNode(n) => Some(Subject::NamedNode(n.clone())),
            _ => None,
        }
    }

    /// Where a subject is written in the file: its first mention, as an IRI or a prefixed
    /// name (the start of the file for blank nodes and terms not found).
    fn locate(&self, s: &Subject) -> Span {
        let Subject::NamedNode(n) = s else {
            return Span::new(0, 0);
        };
        locate(self.source, &self.prefixes, n.as_str())
    }

    fn error(&self, code: &'static str, at: &Subject, message: String, label: &str) -> Diagnostic {
        Diagnostic::error(code, message).at(self.source, self.locate(at), Some(label.to_owned()))
    }

    fn warning(
        &self,
        code: &'static str,
        at: &Subject,
        message: String,
        label: &str,
    ) -> Diagnostic {
        Diagnostic::warning(code, message).at(self.source, self.locate(at), Some(label.to_owned()))
    }

    /// The flow node kind of a subject, from its classes.
    fn kind(&self, s: &Subject) -> Option<NodeKind> {
        let types = self.types(s);
        let mut kind = None;
        for t in &types {
            let Some(local) = t.strip_prefix(v::SBPMNC) else {
                continue;
            };
            if let Some(k) = kind_of(local) {
                kind = Some(k);
            }
        }
        if kind.is_none() && types.contains(&iri(v::AGENTIC_TASK)) {
            kind = Some(NodeKind::Task(TaskKind::Task));
        }
        if types.contains(&iri(v::GUARDRAIL_GATEWAY)) {
            kind = Some(NodeKind::Gateway(GatewayKind::Exclusive));
        }
        let mut kind = kind?;
        let defs: Vec<EventDefinition> = self
            .values(s, v::EVENT_DEFINITION)
            .filter_map(|t| match t {
                Term::NamedNode(n) => n.as_str().strip_prefix(v::SBPMNC).and_then(definition_of),
                _ => None,
            })
            .collect();
        match &mut kind {
            NodeKind::StartEvent {
                definitions,
                interrupting,
            } => {
                *definitions = defs;
                *interrupting = self.flag(s, v::INTERRUPTING).unwrap_or(true);
            }
            NodeKind::EndEvent { definitions }
            | NodeKind::IntermediateCatchEvent { definitions }
            | NodeKind::IntermediateThrowEvent { definitions } => *definitions = defs,
            NodeKind::BoundaryEvent {
                attached_to,
                cancel_activity,
                definitions,
            } => {
                *definitions = defs;
                *cancel_activity = self.flag(s, v::CANCEL_ACTIVITY).unwrap_or(true);
                if let Some(Term::NamedNode(n)) = self.value(s, v::ATTACHED_TO_REF) {
                    *attached_to = self
                        .text(&Subject::NamedNode(n.clone()), v::BPMN_ID)
                        .unwrap_or_else(|| local_name(n.as_str()));
                }
            }
            NodeKind::SubProcess(SubProcessKind::Embedded { triggered_by_event }) => {
                *triggered_by_event = self.flag(s, v::TRIGGERED_BY_EVENT).unwrap_or(false);
            }
            NodeKind::CallActivity { called_element } => {
                *called_element = self.text(s, v::CALLED_ELEMENT);
            }
            _ => {}
        }
        Some(kind)
    }

    fn id_of(&self, s: &Subject) -> String {
        self.text(s, v::BPMN_ID).unwrap_or_else(|| match s {
            Subject::NamedNode(n) => local_name(n.as_str()),
            Subject::BlankNode(b) => format!("Node_{}", b.as_str()),
        })
    }

    fn order(&self, s: &Subject) -> Option<i64> {
        self.text(s, v::ORDER)?.parse().ok()
    }

    fn build(&self, app: &str) -> Result<Imported, Vec<Diagnostic>> {
        let mut errors: Vec<Diagnostic> = Vec::new();
        let process_types = [iri(v::AGENTIC_PROCESS), iri(v::PROCESS)];
        let processes: Vec<&Subject> = self
            .subjects
            .iter()
            .filter(|s| self.types(s).iter().any(|t| process_types.contains(t)))
            .collect();
        // The process the app runs: marked `cf:main`, else the one carrying the config,
        // else the first; the others are processes its call activities may call.
        let process_subject = processes
            .iter()
            .copied()
            .find(|s| self.flag(s, v::MAIN) == Some(true))
            .or_else(|| {
                processes
                    .iter()
                    .copied()
                    .find(|s| self.value(s, v::FLOW_CONFIG).is_some())
            })
            .or_else(|| processes.first().copied());
        let process_set: HashSet<&Subject> = processes.iter().copied().collect();
        // Which process each node belongs to: the one linking it (`hasStartEvent`,
        // `hasEndEvent`, `hasTask`), else the main process.
        let mut member_of: HashMap<Subject, &Subject> = HashMap::new();
        for p in &processes {
            for link in [v::HAS_START_EVENT, v::HAS_END_EVENT, v::HAS_TASK] {
                for node in self.values(p, link).filter_map(|t| self.blank(t)) {
                    member_of.entry(node).or_insert(p);
                }
            }
        }

        // Nodes, in document order (cf:order, else where they are first written).
        let reifiers: HashSet<&Subject> = self.reifiers.values().flatten().collect();
        let mut node_subjects: Vec<(&Subject, NodeKind)> = Vec::new();
        for s in &self.subjects {
            if process_set.contains(s) || reifiers.contains(s) {
                continue;
            }
            match self.kind(s) {
                Some(k) => node_subjects.push((s, k)),
                None => {
                    let claims_node = self.value(s, v::BPMN_ID).is_some()
                        && self.value(s, v::ORDER).is_some()
                        || self.types(s).iter().any(|t| t.starts_with(v::SBPMNC));
                    if claims_node {
                        let types = self.types(s).join(", ");
                        errors.push(self.error(
                            "graph::unknown-class",
                            s,
                            format!(
                                "`{}` is not a flow node cuga-flo knows (classes: {types})",
                                self.id_of(s)
                            ),
                            "here",
                        ));
                    }
                }
            }
        }
        node_subjects
            .sort_by_key(|(s, _)| (self.order(s).unwrap_or(i64::MAX), self.locate(s).offset));
        let ids: HashMap<&Subject, String> = node_subjects
            .iter()
            .map(|(s, _)| (*s, self.id_of(s)))
            .collect();
        let mut seen = HashSet::new();
        for (s, _) in &node_subjects {
            if !seen.insert(ids[s].clone()) {
                errors.push(self.error(
                    "graph::duplicate-id",
                    s,
                    format!("two flow nodes have the id `{}`", ids[s]),
                    "a second node with this id",
                ));
            }
        }

        let mut nodes: Vec<Node> = Vec::new();
        for (s, kind) in &node_subjects {
            nodes.push(self.node(s, kind.clone(), &ids));
        }

        // Flows.
        let mut flows: Vec<(i64, usize, Flow, bool)> = Vec::new();
        let mut flow_ids: HashSet<String> = HashSet::new();
        for (position, edge) in self.edges.iter().enumerate() {
            let from = &edge.subject;
            let Some(source) = ids.get(from) else {
                errors.push(self.error(
                    "graph::edge-source",
                    from,
                    format!(
                        "`nextTask` leaves `{}`, which is not a flow node of the graph",
                        local_of(from)
                    ),
                    "not typed as a start event, task, gateway or end event",
                ));
                continue;
            };
            let to = match &edge.object {
                Term::NamedNode(n) => Subject::NamedNode(n.clone()),
                Term::BlankNode(b) => Subject::BlankNode(b.clone()),
                _ => {
                    errors.push(self.error(
                        "graph::edge-target",
                        from,
                        format!("`{source}` has a `nextTask` edge to a literal"),
                        "here",
                    ));
                    continue;
                }
            };
            let Some(target) = ids.get(&to) else {
                let mut d = self.error(
                    "graph::edge-target",
                    from,
                    format!("`{source}` has a `nextTask` edge to `{}`, which is not a flow node of the graph", local_of(&to)),
                    "the edge leaves this node",
                );
                let at = self.locate(&to);
                if at.len > 0 {
                    d = d.also(at, "the unknown node");
                }
                errors.push(d);
                continue;
            };
            let annotations: Vec<Option<&Subject>> = match self.reifiers.get(edge) {
                Some(rs) if !rs.is_empty() => rs.iter().map(Some).collect(),
                _ => vec![None],
            };
            for r in annotations {
                let mut id = r.and_then(|r| self.text(r, v::BPMN_ID)).unwrap_or_else(|| {
                    let base = format!("Flow_{}_{}", iri_safe(source), iri_safe(target));
                    let mut id = base.clone();
                    let mut n = 2;
                    while flow_ids.contains(&id) {
                        id = format!("{base}_{n}");
                        n += 1;
                    }
                    id
                });
                if !flow_ids.insert(id.clone()) {
                    id = format!("{id}_{}", flow_ids.len());
                    flow_ids.insert(id.clone());
                }
                let mut flow = Flow {
                    id,
                    name: r.and_then(|r| self.text(r, v::LABEL)),
                    source: source.clone(),
                    target: target.clone(),
                    condition: None,
                    span: Span::default(),
                    parent: None,
                };
                let mut is_default = false;
                if let Some(r) = r {
                    is_default = self.flag(r, v::IS_DEFAULT).unwrap_or(false);
                    // The model's condition; else AgentFLOW's parts, unless they describe
                    // a condition the flow config holds (`cf:routingCondition`).
                    let body = match self.text(r, v::CONDITION) {
                        Some(body) => Some(body),
                        None if self.value(r, v::ROUTING_CONDITION).is_some() => None,
                        None => match self.condition_from_parts(r, from) {
                            Ok(body) => body,
                            Err(d) => {
                                errors.push(*d);
                                None
                            }
                        },
                    };
                    flow.condition = body.map(|body| Condition {
                        language: self.text(r, v::CONDITION_LANGUAGE),
                        body,
                        span: Span::default(),
                    });
                }
                let order = r.and_then(|r| self.order(r)).unwrap_or(i64::MAX);
                flows.push((order, position, flow, is_default));
            }
        }
        flows.sort_by_key(|(o, p, _, _)| (*o, *p));
        for (_, _, flow, is_default) in &flows {
            if !*is_default {
                continue;
            }
            let Some(node) = nodes.iter_mut().find(|n| n.id == flow.source) else {
                continue;
            };
            if let Some(other) = &node.default_flow {
                let at = node_subjects
                    .iter()
                    .find(|(s, _)| ids[s] == node.id)
                    .map(|(s, _)| *s);
                if let Some(at) = at {
                    errors.push(self.error(
                        "graph::defaults",
                        at,
                        format!(
                            "`{}` has two default edges (`{other}` and `{}`)",
                            node.id, flow.id
                        ),
                        "a node with two `isDefault true` edges",
                    ));
                }
            } else {
                node.default_flow = Some(flow.id.clone());
            }
        }
        // Flows inside a sub-process belong to it.
        let flows: Vec<Flow> = flows
            .into_iter()
            .map(|(_, _, mut f, _)| {
                f.parent = nodes
                    .iter()
                    .find(|n| n.id == f.source)
                    .and_then(|n| n.parent.clone());
                f
            })
            .collect();

        // Split nodes and flows by process.
        let main = process_subject;
        let owner_of = |id: &str| -> Option<&Subject> {
            let (s, _) = node_subjects.iter().find(|(s, _)| ids[s] == id)?;
            member_of.get(*s).copied().or(main)
        };
        let node_owner: Vec<Option<&Subject>> = nodes.iter().map(|n| owner_of(&n.id)).collect();
        let starts = nodes
            .iter()
            .zip(&node_owner)
            .filter(|(n, o)| n.kind.is_start_event() && n.parent.is_none() && *o == &main)
            .count();
        if starts == 0 {
            let mut d = Diagnostic::error(
                "graph::no-start",
                "the graph has no start event: a process needs one (a node typed `sbpmnc:startEvent`)",
            );
            let at = process_subject.map(|s| self.locate(s)).unwrap_or_default();
            d = d.at(
                self.source,
                at,
                Some("this process has no start event".to_owned()),
            );
            errors.push(d);
        }
        if !errors.is_empty() {
            return Err(errors);
        }

        // The processes: the main one first, then the others in the order written.
        let mut order: Vec<Option<&Subject>> = vec![main];
        order.extend(
            processes
                .iter()
                .copied()
                .filter(|p| Some(*p) != main)
                .map(Some),
        );
        let mut built: Vec<Process> = Vec::new();
        for ps in order {
            let mine: Vec<Node> = nodes
                .iter()
                .zip(&node_owner)
                .filter(|(_, o)| **o == ps)
                .map(|(n, _)| n.clone())
                .collect();
            let mine_ids: HashSet<&str> = mine.iter().map(|n| n.id.as_str()).collect();
            let my_flows: Vec<Flow> = flows
                .iter()
                .filter(|f| mine_ids.contains(f.source.as_str()))
                .cloned()
                .collect();
            built.push(self.process(ps, app, mine, my_flows));
        }
        let mut header = Header::default();
        if let Some(s) = main {
            header.target_namespace = self.text(s, v::TARGET_NAMESPACE);
            header.expression_language = self.text(s, v::EXPRESSION_LANGUAGE);
            for b in self.values(s, v::NAMESPACE).filter_map(|t| self.blank(t)) {
                if let (Some(p), Some(u)) = (self.text(&b, v::PREFIX), self.text(&b, v::URI)) {
                    header.namespaces.push((p, u));
                }
            }
        }
        let bpmn = bpmn_xml::write(&built, &header);
        let ps = main;
        let process = built.remove(0);

        // The config and its files.
        let mut warnings = Vec::new();
        let (config, policies) = match ps.and_then(|s| self.value(s, v::FLOW_CONFIG).cloned()) {
            Some(Term::Literal(l)) => {
                let s = ps.unwrap_or(&self.subjects[0]);
                let mut tree: Value = serde_json::from_str(l.value()).map_err(|e| {
                    vec![self.error(
                        "graph::config",
                        s,
                        format!("the process's `cf:flowConfig` is not JSON: {e}"),
                        "this process",
                    )]
                })?;
                let policies = self.policies(s, &mut tree);
                if let Some(flow) = tree.get_mut("flow").and_then(Value::as_object_mut) {
                    flow.insert("bpmn_file".into(), Value::String(format!("{app}.bpmn")));
                }
                (tree, policies)
            }
            _ => {
                let generated = self.generated_config(app, &process, &node_subjects, &ids)?;
                warnings = generated.warnings;
                (generated.config, generated.recipes)
            }
        };
        Ok(Imported {
            bpmn,
            config: to_yaml(&config),
            policies,
            warnings,
            process,
        })
    }

    /// One process of the graph (`None`: a graph that names none) with its nodes and flows.
    fn process(
        &self,
        ps: Option<&Subject>,
        app: &str,
        nodes: Vec<Node>,
        flows: Vec<Flow>,
    ) -> Process {
        let mut process = Process {
            id: ps
                .map(|s| self.id_of(s))
                .unwrap_or_else(|| format!("Process_{}", iri_safe(app))),
            // cuga-flo's export says the process's own name (`cf:name`, maybe none); a
            // foreign graph's label names it.
            name: ps.and_then(|s| {
                if self.value(s, v::BPMN_ID).is_some() {
                    self.text(s, v::NAME)
                } else {
                    self.text(s, v::LABEL)
                }
            }),
            is_executable: Some(
                ps.and_then(|s| self.flag(s, v::IS_EXECUTABLE))
                    .unwrap_or(true),
            ),
            span: Span::default(),
            nodes,
            flows,
            lanes: Vec::new(),
            properties: Vec::new(),
            extension_elements: ps.and_then(|s| self.text(s, v::EXTENSION_ELEMENTS)),
            documentation: ps.and_then(|s| self.text(s, v::COMMENT)),
            ids: Default::default(),
        };
        if let Some(s) = ps {
            for b in self.values(s, v::PROPERTY).filter_map(|t| self.blank(t)) {
                if let Some(id) = self.text(&b, v::BPMN_ID) {
                    process.properties.push(Property {
                        id,
                        name: self.text(&b, v::NAME),
                        item_subject_ref: self.text(&b, v::ITEM_SUBJECT_REF),
                    });
                }
            }
        }
        process
    }

    /// AgentFLOW's `varName`/`operator`/`threshold` as a condition.
    fn condition_from_parts(
        &self,
        r: &Subject,
        at: &Subject,
    ) -> Result<Option<String>, Box<Diagnostic>> {
        let var = self.text(r, v::VAR_NAME);
        let op = self.text(r, v::OPERATOR);
        let threshold = self.value(r, v::THRESHOLD);
        let (Some(var), Some(op), Some(threshold)) = (var, op, threshold) else {
            return Ok(None);
        };
        if !matches!(op.as_str(), "==" | "!=" | "<" | "<=" | ">" | ">=") {
            return Err(Box::new(self.error(
                "graph::operator",
                at,
                format!(
                    "an edge of `{}` compares with `{op}`; the operators are ==, !=, <, <=, >, >=",
                    local_of(at)
                ),
                "the edge leaves this node",
            )));
        }
        let ident = var
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && var
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ident {
            return Err(Box::new(self.error(
                "graph::var-name",
                at,
                format!(
                    "an edge of `{}` names the variable `{var}`, which is not a variable name",
                    local_of(at)
                ),
                "the edge leaves this node",
            )));
        }
        let literal = match threshold {
            Term::Literal(l) => {
                let value = l.value();
                let numeric = value.parse::<f64>().is_ok_and(f64::is_finite)
                    && !value.trim().is_empty()
                    && value.trim() == value;
                let dt = l.datatype().as_str();
                let boolean = dt == format!("{}boolean", v::XSD);
                let ordering = matches!(op.as_str(), "<" | "<=" | ">" | ">=");
                if boolean || (numeric && (dt != format!("{}string", v::XSD) || ordering)) {
                    value.to_owned()
                } else {
                    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(format!("${{{var}}} {op} {literal}")))
    }

    fn node(&self, s: &Subject, kind: NodeKind, ids: &HashMap<&Subject, String>) -> Node {
        let id = ids[s].clone();
        let parent = self.value(s, v::PARENT).and_then(|t| {
            let p = self.blank(t)?;
            ids.get(&p).cloned().or_else(|| self.text(&p, v::BPMN_ID))
        });
        let mut attributes = BTreeMap::new();
        for b in self.values(s, v::ATTRIBUTE).filter_map(|t| self.blank(t)) {
            if let (Some(n), Some(val)) = (self.text(&b, v::NAME), self.text(&b, v::VALUE)) {
                attributes.insert(n, val);
            }
        }
        if self.types(s).contains(&iri(v::GUARDRAIL_GATEWAY))
            || self.value(s, v::REQUIRES_APPROVAL).is_some()
        {
            if let Some(a) = self.flag(s, v::REQUIRES_APPROVAL) {
                attributes.insert("cuga:requiresApproval".into(), a.to_string());
            }
            if let Some(t) = self.text(s, v::APPROVAL_TIMEOUT) {
                attributes.insert("cuga:approvalTimeout".into(), t);
            }
        }
        if let Some(recipe) = self.text(s, v::RECIPE)
            && !attributes.contains_key("cuga:recipe")
            && self.value(s, v::MODE).is_none()
        {
            attributes.insert("cuga:recipe".into(), recipe);
        }
        let event_ref = self
            .value(s, v::EVENT_REF)
            .and_then(|t| self.blank(t))
            .and_then(|b| {
                Some(EventRef {
                    reference: self.text(&b, v::REF)?,
                    code: self.text(&b, v::CODE),
                    name: self.text(&b, v::NAME),
                    correlation_key: None,
                })
            });
        let timer = self
            .value(s, v::TIMER)
            .and_then(|t| self.blank(t))
            .map(|b| Timer {
                kind: self.text(&b, v::TIMER_KIND).and_then(|k| match k.as_str() {
                    "timeDuration" => Some(TimerKind::Duration),
                    "timeDate" => Some(TimerKind::Date),
                    "timeCycle" => Some(TimerKind::Cycle),
                    _ => None,
                }),
                expression: self.text(&b, v::EXPRESSION).unwrap_or_default(),
                span: Span::default(),
            });
        let looping = self
            .value(s, v::LOOP)
            .and_then(|t| self.blank(t))
            .map(|b| Looping {
                kind: if self.flag(&b, v::STANDARD_LOOP) == Some(true) {
                    LoopKind::Standard
                } else {
                    LoopKind::MultiInstance {
                        sequential: self.flag(&b, v::SEQUENTIAL).unwrap_or(false),
                    }
                },
                span: Span::default(),
                multi: MultiInstance {
                    collection: self.text(&b, v::COLLECTION),
                    element_variable: self.text(&b, v::ELEMENT_VARIABLE),
                    cardinality: self.text(&b, v::CARDINALITY),
                    output_collection: self.text(&b, v::OUTPUT_COLLECTION),
                    output_element: self.text(&b, v::OUTPUT_ELEMENT),
                    completion_condition: self.text(&b, v::COMPLETION_CONDITION),
                    language: self.text(&b, v::LANGUAGE),
                },
            });
        Node {
            id,
            name: self.text(s, v::LABEL),
            kind,
            span: Span::default(),
            parent,
            default_flow: None,
            attributes: attributes.into_iter().collect(),
            extension_elements: self.text(s, v::EXTENSION_ELEMENTS),
            documentation: self.text(s, v::COMMENT),
            timer,
            looping,
            event_ref,
            // The graph carries no script body (a script task's `scriptFormat` is an
            // attribute); an imported model's script tasks are plain script tasks.
            script: None,
        }
    }

    /// The policy files the graph carries (policies, prompts, command agents' recipes and
    /// scripts), written under `policies/`; the config's references to them rewritten to
    /// match.
    fn policies(&self, process: &Subject, tree: &mut Value) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut renamed: HashMap<String, String> = HashMap::new();
        for b in self
            .values(process, v::POLICY_FILE)
            .filter_map(|t| self.blank(t))
        {
            let (Some(path), Some(text)) = (self.text(&b, v::PATH), self.text(&b, v::TEXT)) else {
                continue;
            };
            let base = path
                .rsplit(['/', '\\'])
                .next()
                .filter(|b| !b.is_empty() && *b != ".." && *b != ".")
                .unwrap_or("policy.md")
                .to_owned();
            let mut name = base.clone();
            let mut n = 2;
            while out.iter().any(|(p, _)| *p == format!("policies/{name}")) {
                name = format!("{n}-{base}");
                n += 1;
            }
            out.push((format!("policies/{name}"), text));
            // A command line's `{config_dir}/...` argument keeps its placeholder.
            let prefix = if path.starts_with("{config_dir}/") {
                "{config_dir}/"
            } else {
                ""
            };
            renamed.insert(path, format!("{prefix}../policies/{name}"));
        }
        rewrite_strings(tree, &renamed);
        out
    }

    /// A config for a graph that carries none (an AgentFLOW graph): every agentic task
    /// runs its Goose recipe as AgentFLOW does (a command agent, `goose run --recipe`,
    /// the recipe copied into the app's `recipes/`; its parameters are the task's inputs
    /// and its response's properties its outputs, each a variable of the same name, as
    /// AgentFLOW keeps every output key). A recipe that cannot be found leaves a task
    /// agent told the recipe's name, with a warning. A task that leads straight into a
    /// gateway outputs the variables that gateway's edges test; the variables, from the
    /// edges and the recipes.
    fn generated_config(
        &self,
        app: &str,
        process: &Process,
        node_subjects: &[(&Subject, NodeKind)],
        ids: &HashMap<&Subject, String>,
    ) -> Result<Generated, Vec<Diagnostic>> {
        let mut warnings = Vec::new();
        let mut recipes: Vec<(String, String)> = Vec::new();
        // The variables each gateway's edges test.
        let mut tested: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut variables = Map::new();
        for f in &process.flows {
            let Some(c) = &f.condition else { continue };
            if let Ok(expr) = crate::expr::parse_in(&c.body, c.language.as_deref()) {
                for name in expr.variables() {
                    let numeric = c.body.contains(['<', '>']);
                    variables.entry(name.to_string()).or_insert(if numeric {
                        json!(0)
                    } else {
                        json!("")
                    });
                    let names = tested.entry(f.source.as_str()).or_default();
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        // A task that leads straight into a gateway produces what the gateway tests; a
        // guardrail gateway's variable is the approver's, not a task's.
        let mut produces: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for f in &process.flows {
            let Some(gateway) = process.node(&f.target) else {
                continue;
            };
            if gateway.attributes.contains_key("cuga:requiresApproval") {
                continue;
            }
            if let Some(names) = tested.get(f.target.as_str()) {
                let out = produces.entry(f.source.as_str()).or_default();
                for n in names {
                    if !out.contains(n) {
                        out.push(n.clone());
                    }
                }
            }
        }
        let mut tasks = Vec::new();
        for (s, _) in node_subjects {
            if !self.types(s).contains(&iri(v::AGENTIC_TASK)) {
                continue;
            }
            let id = &ids[s];
            let recipe = self.text(s, v::RECIPE).unwrap_or_else(|| id.clone());
            let label = self.text(s, v::LABEL).unwrap_or_else(|| id.clone());
            let mut outputs: Map<String, Value> = produces
                .get(id.as_str())
                .into_iter()
                .flatten()
                .map(|k| (k.clone(), Value::String(k.clone())))
                .collect();
            let mut task = json!({
                "id": id,
                "mode": "task_agent",
                "agent": {
                    "name": recipe,
                    "system_instruction": format!("{label}: follow the recipe `{recipe}`."),
                },
            });
            match self.recipe(s, &recipe)? {
                Some(found) => {
                    let mut inputs = Map::new();
                    for p in &found.recipe.parameters {
                        inputs.insert(p.key.clone(), json!(p.key));
                        variables
                            .entry(p.key.clone())
                            .or_insert_with(|| p.default.clone().unwrap_or(json!("")));
                    }
                    for (key, initial) in found.outputs() {
                        outputs.insert(key.clone(), json!(key));
                        variables.entry(key).or_insert(initial);
                    }
                    if !inputs.is_empty() {
                        task["input_mapping"] = Value::Object(inputs);
                    }
                    task["agent"]["system_instruction"] =
                        json!(format!("{label}: run the recipe `{recipe}`."));
                    task["agent"]["type"] = json!("command");
                    task["agent"]["recipe"] = json!(format!("../recipes/{}", found.file));
                    if !recipes.iter().any(|(rel, _)| rel.ends_with(&found.file)) {
                        recipes.push((format!("recipes/{}", found.file), found.text));
                    }
                }
                None => warnings.push(
                    self.warning(
                        "graph::recipe_missing",
                        s,
                        format!(
                            "the recipe `{recipe}` of `{id}` was not found (looked in {}): the \
                             task becomes a task agent told the recipe's name, not its steps",
                            self.recipe_dirs
                                .iter()
                                .map(|d| d.display().to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        "this task's recipe",
                    )
                    .with_help(
                        "pass --recipes DIR: the folder holding the Goose recipes (<name>.yaml)",
                    ),
                ),
            }
            if !outputs.is_empty() {
                task["output_mapping"] = Value::Object(outputs);
            }
            tasks.push(task);
        }
        let name = process.name.clone().unwrap_or_else(|| app.to_owned());
        let mut config = json!({
            "flow": {
                "name": name,
                "id": app,
                "version": "1.0",
                "bpmn_file": format!("{app}.bpmn"),
                "description": format!("Imported from a graph ({}).", self.source.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()),
            },
            "workflow_engine": {"type": "native"},
        });
        if !variables.is_empty() {
            config["variables"] = Value::Object(variables);
        }
        if !tasks.is_empty() {
            config["tasks"] = Value::Array(tasks);
        }
        Ok(Generated {
            config,
            recipes,
            warnings,
        })
    }

    /// The Goose recipe `name` an agentic task (`s`) names, from the first folder of
    /// [`Graph::recipe_dirs`] holding it; `None` when none does. A name that is not a plain
    /// file name, or a recipe that cannot be used, is an error at the task.
    fn recipe(&self, s: &Subject, name: &str) -> Result<Option<FoundRecipe>, Vec<Diagnostic>> {
        let plain = !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !plain {
            return Err(vec![self.error(
                "graph::recipe",
                s,
                format!("the recipe name `{name}` is not a plain file name"),
                "this task's recipe",
            )]);
        }
        for dir in &self.recipe_dirs {
            for ext in ["yaml", "yml", "json"] {
                let file = format!("{name}.{ext}");
                let path = dir.join(&file);
                if !path.is_file() {
                    continue;
                }
                let bad = |message: String| {
                    vec![self.error("graph::recipe", s, message, "this task's recipe")]
                };
                let recipe = crate::app::recipe::read_recipe(&path)
                    .map_err(|e| bad(crate::diag::chain(&e)))?;
                let text = crate::source::read_text(&path)
                    .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
                return Ok(Some(FoundRecipe { file, text, recipe }));
            }
        }
        Ok(None)
    }
}

/// A generated config and what goes with it.
struct Generated {
    config: Value,
    /// The recipes to write into the app (`recipes/<file>`, text).
    recipes: Vec<(String, String)>,
    warnings: Vec<Diagnostic>,
}

/// An agentic task's recipe, found.
struct FoundRecipe {
    /// Its file name (`<name>.yaml`).
    file: String,
    text: String,
    recipe: crate::app::recipe::Recipe,
}

impl FoundRecipe {
    /// The keys its answer holds (its response schema's properties), each with the value
    /// its variable starts with: the empty value of its type.
    fn outputs(&self) -> Vec<(String, Value)> {
        let Some(properties) = (self.recipe.schema.as_ref())
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        else {
            return Vec::new();
        };
        properties
            .iter()
            .map(|(key, schema)| {
                let initial = match schema.get("type").and_then(Value::as_str) {
                    Some("string") => json!(""),
                    Some("boolean") => json!(false),
                    Some("integer" | "number") => json!(0),
                    Some("array") => json!([]),
                    Some("object") => json!({}),
                    _ => Value::Null,
                };
                (key.clone(), initial)
            })
            .collect()
    }
}

fn normalize_triple(t: &Triple) -> Triple {
    Triple::new(
        t.subject.clone(),
        oxrdf::NamedNode::new_unchecked(v::normalize(t.predicate.as_str())),
        t.object.clone(),
    )
}

fn rewrite_strings(tree: &mut Value, renamed: &HashMap<String, String>) {
    match tree {
        Value::String(s) => {
            if let Some(n) = renamed.get(s.as_str()) {
                *s = n.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite_strings(i, renamed)),
        Value::Object(map) => map.values_mut().for_each(|i| rewrite_strings(i, renamed)),
        _ => {}
    }
}

/// The part of an IRI after its last `#`, `/` or `:`.
pub fn local_name(iri: &str) -> String {
    let local = iri.rsplit(['#', '/', ':']).next().unwrap_or(iri);
    let decoded = percent_decode(local);
    let mut out: String = decoded
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn local_of(s: &Subject) -> String {
    match s {
        Subject::NamedNode(n) => local_name(n.as_str()),
        Subject::BlankNode(b) => format!("_:{}", b.as_str()),
    }
}

fn kind_of(local: &str) -> Option<NodeKind> {
    let lower = local.to_ascii_lowercase();
    Some(match lower.as_str() {
        "task" => NodeKind::Task(TaskKind::Task),
        "usertask" => NodeKind::Task(TaskKind::User),
        "servicetask" => NodeKind::Task(TaskKind::Service),
        "scripttask" => NodeKind::Task(TaskKind::Script),
        "sendtask" => NodeKind::Task(TaskKind::Send),
        "receivetask" => NodeKind::Task(TaskKind::Receive),
        "manualtask" => NodeKind::Task(TaskKind::Manual),
        "businessruletask" => NodeKind::Task(TaskKind::BusinessRule),
        "subprocess" => NodeKind::SubProcess(SubProcessKind::Embedded {
            triggered_by_event: false,
        }),
        "transaction" => NodeKind::SubProcess(SubProcessKind::Transaction),
        "adhocsubprocess" => NodeKind::SubProcess(SubProcessKind::AdHoc),
        "callactivity" => NodeKind::CallActivity {
            called_element: None,
        },
        "startevent" => NodeKind::StartEvent {
            definitions: Vec::new(),
            interrupting: true,
        },
        "endevent" => NodeKind::EndEvent {
            definitions: Vec::new(),
        },
        "intermediatecatchevent" => NodeKind::IntermediateCatchEvent {
            definitions: Vec::new(),
        },
        "intermediatethrowevent" => NodeKind::IntermediateThrowEvent {
            definitions: Vec::new(),
        },
        "boundaryevent" => NodeKind::BoundaryEvent {
            attached_to: String::new(),
            cancel_activity: true,
            definitions: Vec::new(),
        },
        "exclusivegateway" => NodeKind::Gateway(GatewayKind::Exclusive),
        "parallelgateway" => NodeKind::Gateway(GatewayKind::Parallel),
        "inclusivegateway" => NodeKind::Gateway(GatewayKind::Inclusive),
        "eventbasedgateway" => NodeKind::Gateway(GatewayKind::EventBased),
        "complexgateway" => NodeKind::Gateway(GatewayKind::Complex),
        _ => return None,
    })
}

fn definition_of(local: &str) -> Option<EventDefinition> {
    use EventDefinition as E;
    Some(match local.strip_suffix("EventDefinition")? {
        "message" => E::Message,
        "timer" => E::Timer,
        "error" => E::Error,
        "signal" => E::Signal,
        "escalation" => E::Escalation,
        "compensate" => E::Compensate,
        "conditional" => E::Conditional,
        "link" => E::Link,
        "cancel" => E::Cancel,
        "terminate" => E::Terminate,
        _ => return None,
    })
}

/// A JSON value as block YAML (strings double-quoted, so any text round-trips).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::from("# Made by `cuga-flo graph import`.\n");
    match value {
        Value::Object(map) if !map.is_empty() => yaml_map(map, 0, &mut out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn yaml_map(map: &Map<String, Value>, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for (k, val) in map {
        out.push_str(&pad);
        out.push_str(&key(k));
        out.push(':');
        yaml_value(val, depth, out);
    }
}

fn yaml_value(val: &Value, depth: usize, out: &mut String) {
    match val {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            yaml_map(m, depth + 1, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            let pad = "  ".repeat(depth + 1);
            for item in items {
                out.push_str(&pad);
                out.push('-');
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        // The first key on the dash's line, the rest aligned under it.
                        let mut inner = String::new();
                        yaml_map(m, depth + 2, &mut inner);
                        out.push(' ');
                        out.push_str(inner.trim_start());
                    }
                    other => yaml_value(other, depth + 1, out),
                }
            }
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn key(k: &str) -> String {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !matches!(
            k,
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if plain {
        k.to_owned()
    } else {
        serde_json::to_string(k).unwrap_or_default()
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        // JSON's escapes are YAML's double-quoted escapes.
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// Standard RDF reification (`_:r a rdf:Statement; rdf:subject s; rdf:predicate p;
/// rdf:object o`, as `graph export --annotations reified` writes annotations) read as
/// RDF 1.2 reifiers (`_:r rdf:reifies <<( s p o )>>`): the annotations on `r` are then
/// the triple's. A node missing one of the three, or with two of one, is left as it is.
fn unreify(triples: Vec<Triple>) -> Vec<Triple> {
    let rdf = |local: &str| format!("{}{local}", v::RDF);
    let (subject, predicate, object) = (rdf("subject"), rdf("predicate"), rdf("object"));
    let statement = rdf("Statement");
    type Parts = (Vec<Term>, Vec<Term>, Vec<Term>);
    let mut parts: HashMap<Subject, Parts> = HashMap::new();
    // In the order the nodes come, so what is read is the same on every run.
    let mut order: Vec<Subject> = Vec::new();
    for t in &triples {
        let p = t.predicate.as_str();
        if (p == subject || p == predicate || p == object) && !parts.contains_key(&t.subject) {
            order.push(t.subject.clone());
        }
        let e = || (Vec::new(), Vec::new(), Vec::new());
        if p == subject {
            parts
                .entry(t.subject.clone())
                .or_insert_with(e)
                .0
                .push(t.object.clone());
        } else if p == predicate {
            parts
                .entry(t.subject.clone())
                .or_insert_with(e)
                .1
                .push(t.object.clone());
        } else if p == object {
            parts
                .entry(t.subject.clone())
                .or_insert_with(e)
                .2
                .push(t.object.clone());
        }
    }
    let mut reified: HashMap<Subject, Triple> = HashMap::new();
    let mut found: Vec<Subject> = Vec::new();
    for r in order {
        let Some((s, p, o)) = parts.remove(&r) else {
            continue;
        };
        if let ([s], [Term::NamedNode(p)], [o]) = (s.as_slice(), p.as_slice(), o.as_slice()) {
            let s = match s {
                Term::NamedNode(n) => Subject::from(n.clone()),
                Term::BlankNode(b) => Subject::from(b.clone()),
                _ => continue,
            };
            found.push(r.clone());
            reified.insert(r, Triple::new(s, p.clone(), o.clone()));
        }
    }
    if reified.is_empty() {
        return triples;
    }
    let ty = rdf("type");
    let mut out: Vec<Triple> = triples
        .into_iter()
        .filter(|t| {
            let Some(_) = reified.get(&t.subject) else {
                return true;
            };
            let p = t.predicate.as_str();
            !(p == subject
                || p == predicate
                || p == object
                || (p == ty && matches!(&t.object, Term::NamedNode(n) if n.as_str() == statement)))
        })
        .collect();
    for r in found {
        let Some(inner) = reified.remove(&r) else {
            continue;
        };
        out.push(Triple::new(
            r,
            oxrdf::NamedNode::new_unchecked(rdf("reifies")),
            Term::Triple(Box::new(inner)),
        ));
    }
    out
}
