//! A small RDF document: statements in the order they were made, each with its RDF 1.2
//! annotations (the `{| |}` block after a triple), and its writers. Turtle and TriG are
//! written here, grouped by subject with the annotations in annotation syntax, which both
//! RDF 1.2 readers (oxigraph, rdflib) and RDF-star readers (Jena 4/5) accept; N-Quads go
//! through oxttl, with each annotation as a reifier (`_:r rdf:reifies <<( s p o )>>`), the
//! only way N-Quads can say it (RDF 1.2 readers only).

use std::collections::HashMap;
use std::fmt::Write as _;

use oxrdf::{BlankNode, Literal, NamedNode, NamedOrBlankNode, Quad, Term, Triple};

use super::vocab;

/// A subject or object of the document: a named node, a blank node or a literal.
pub type Node = Term;

#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub subject: NamedOrBlankNode,
    pub predicate: NamedNode,
    pub object: Term,
    /// RDF 1.2 annotations on this triple (one reifier).
    pub annotations: Vec<(NamedNode, Term)>,
}

/// The statements of one graph, in the order they were made.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub statements: Vec<Statement>,
    next_blank: usize,
}

pub fn named(iri: impl Into<String>) -> NamedNode {
    NamedNode::new_unchecked(iri)
}

pub fn term((ns, local): (&str, &str)) -> NamedNode {
    NamedNode::new_unchecked(format!("{ns}{local}"))
}

pub fn string(value: impl Into<String>) -> Term {
    Literal::new_simple_literal(value).into()
}

pub fn boolean(value: bool) -> Term {
    Literal::from(value).into()
}

pub fn integer(value: i64) -> Term {
    Literal::from(value).into()
}

impl Document {
    /// A fresh blank node (labelled `b0`, `b1`, ... so output is reproducible).
    pub fn blank(&mut self) -> BlankNode {
        let b = BlankNode::new_unchecked(format!("b{}", self.next_blank));
        self.next_blank += 1;
        b
    }

    pub fn add(
        &mut self,
        subject: impl Into<NamedOrBlankNode>,
        predicate: NamedNode,
        object: impl Into<Term>,
    ) {
        self.statements.push(Statement {
            subject: subject.into(),
            predicate,
            object: object.into(),
            annotations: Vec::new(),
        });
    }

    pub fn annotated(
        &mut self,
        subject: impl Into<NamedOrBlankNode>,
        predicate: NamedNode,
        object: impl Into<Term>,
        annotations: Vec<(NamedNode, Term)>,
    ) {
        self.statements.push(Statement {
            subject: subject.into(),
            predicate,
            object: object.into(),
            annotations,
        });
    }

    /// The asserted triples, then for every annotated one a reifier and its annotations
    /// (what an RDF 1.2 reader makes of the Turtle).
    pub fn triples(&self) -> Vec<Triple> {
        let mut out = Vec::new();
        let mut reifier = 0usize;
        for s in &self.statements {
            let triple = Triple::new(s.subject.clone(), s.predicate.clone(), s.object.clone());
            out.push(triple.clone());
            if !s.annotations.is_empty() {
                let r = BlankNode::new_unchecked(format!("r{reifier}"));
                reifier += 1;
                out.push(Triple::new(
                    r.clone(),
                    named(format!("{}reifies", vocab::RDF)),
                    Term::Triple(Box::new(triple)),
                ));
                for (p, o) in &s.annotations {
                    out.push(Triple::new(r.clone(), p.clone(), o.clone()));
                }
            }
        }
        out
    }

    /// The same statements with every annotation block as standard RDF reification, for
    /// RDF 1.1 readers (rdflib, pyshacl, Jena 3): the triple is asserted as it is, and a
    /// blank node `_:sN a rdf:Statement; rdf:subject s; rdf:predicate p; rdf:object o`
    /// carries the annotations. No triple terms remain.
    pub fn reified(&self) -> Document {
        let mut out = Document {
            statements: Vec::with_capacity(self.statements.len()),
            next_blank: self.next_blank,
        };
        let rdf = |local: &str| named(format!("{}{local}", vocab::RDF));
        let mut n = 0usize;
        for s in &self.statements {
            out.add(s.subject.clone(), s.predicate.clone(), s.object.clone());
            if s.annotations.is_empty() {
                continue;
            }
            let r = BlankNode::new_unchecked(format!("s{n}"));
            n += 1;
            out.add(r.clone(), rdf("type"), rdf("Statement"));
            out.add(r.clone(), rdf("subject"), Term::from(s.subject.clone()));
            out.add(r.clone(), rdf("predicate"), s.predicate.clone());
            out.add(r.clone(), rdf("object"), s.object.clone());
            for (p, o) in &s.annotations {
                out.add(r.clone(), p.clone(), o.clone());
            }
        }
        out
    }

    /// Turtle: prefixes, then one block per named subject, blank nodes used once inline.
    pub fn to_turtle(&self, prefixes: &[(String, String)]) -> String {
        let mut out = String::new();
        for (p, ns) in prefixes {
            let _ = writeln!(out, "@prefix {p}: <{ns}> .");
        }
        out.push('\n');
        self.body(prefixes, "", &mut out);
        out
    }

    /// TriG: the same statements in the named graph `graph`.
    pub fn to_trig(&self, prefixes: &[(String, String)], graph: &str) -> String {
        let mut out = String::new();
        for (p, ns) in prefixes {
            let _ = writeln!(out, "@prefix {p}: <{ns}> .");
        }
        let _ = writeln!(out, "\n{} {{", Writer { prefixes }.iri(graph));
        self.body(prefixes, "    ", &mut out);
        out.push_str("}\n");
        out
    }

    /// N-Quads in the named graph `graph` (annotations as reifiers with triple terms).
    pub fn to_nquads(&self, graph: &str) -> String {
        let mut ser = oxttl::NQuadsSerializer::new().for_writer(Vec::new());
        let g = named(graph);
        for t in self.triples() {
            let q = Quad::new(t.subject, t.predicate, t.object, g.clone());
            // Writing into a Vec cannot fail.
            let _ = ser.serialize_quad(&q);
        }
        String::from_utf8(ser.finish()).unwrap_or_default()
    }

    fn body(&self, prefixes: &[(String, String)], indent: &str, out: &mut String) {
        let w = Writer { prefixes };
        // Blank nodes that are the object of exactly one statement are written inline.
        let mut uses: HashMap<&BlankNode, usize> = HashMap::new();
        for s in &self.statements {
            if let Term::BlankNode(b) = &s.object {
                *uses.entry(b).or_default() += 1;
            }
            for (_, o) in &s.annotations {
                if let Term::BlankNode(b) = o {
                    *uses.entry(b).or_default() += 1;
                }
            }
        }
        let inline = |b: &BlankNode| uses.get(b) == Some(&1);
        let mut by_subject: Vec<(&NamedOrBlankNode, Vec<&Statement>)> = Vec::new();
        let mut at: HashMap<&NamedOrBlankNode, usize> = HashMap::new();
        for s in &self.statements {
            let i = *at.entry(&s.subject).or_insert_with(|| {
                by_subject.push((&s.subject, Vec::new()));
                by_subject.len() - 1
            });
            by_subject[i].1.push(s);
        }
        let groups: HashMap<&NamedOrBlankNode, &Vec<&Statement>> =
            by_subject.iter().map(|(s, v)| (*s, v)).collect();
        for (subject, statements) in &by_subject {
            if let NamedOrBlankNode::BlankNode(b) = subject
                && inline(b)
            {
                continue;
            }
            let head = match subject {
                NamedOrBlankNode::NamedNode(n) => w.iri(n.as_str()),
                NamedOrBlankNode::BlankNode(b) => format!("_:{}", b.as_str()),
            };
            let _ = write!(out, "{indent}{head}");
            w.predicates(statements, &groups, &inline, indent, 1, out);
            out.push_str(" .\n\n");
        }
        if out.ends_with("\n\n") {
            out.pop();
        }
    }
}

struct Writer<'a> {
    prefixes: &'a [(String, String)],
}

impl Writer<'_> {
    fn iri(&self, iri: &str) -> String {
        if iri == format!("{}type", vocab::RDF) {
            return "a".into();
        }
        for (p, ns) in self.prefixes {
            if let Some(local) = iri.strip_prefix(ns.as_str())
                && is_local_name(local)
            {
                return format!("{p}:{local}");
            }
        }
        format!("<{}>", escape_iri(iri))
    }

    #[allow(clippy::too_many_arguments)]
    fn predicates(
        &self,
        statements: &[&Statement],
        groups: &HashMap<&NamedOrBlankNode, &Vec<&Statement>>,
        inline: &dyn Fn(&BlankNode) -> bool,
        indent: &str,
        depth: usize,
        out: &mut String,
    ) {
        let pad = format!("{indent}{}", "    ".repeat(depth));
        for (i, s) in statements.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { " ;\n" });
            let _ = write!(
                out,
                "{pad}{} {}",
                self.iri(s.predicate.as_str()),
                self.object(&s.object, groups, inline, indent, depth)
            );
            if !s.annotations.is_empty() {
                out.push_str(" {|");
                for (j, (p, o)) in s.annotations.iter().enumerate() {
                    if j > 0 {
                        out.push_str(" ;");
                    }
                    let _ = write!(
                        out,
                        " {} {}",
                        self.iri(p.as_str()),
                        self.object(o, groups, inline, indent, depth + 1)
                    );
                }
                out.push_str(" |}");
            }
        }
    }

    fn object(
        &self,
        o: &Term,
        groups: &HashMap<&NamedOrBlankNode, &Vec<&Statement>>,
        inline: &dyn Fn(&BlankNode) -> bool,
        indent: &str,
        depth: usize,
    ) -> String {
        match o {
            Term::NamedNode(n) => self.iri(n.as_str()),
            Term::BlankNode(b) if inline(b) => {
                let key = NamedOrBlankNode::BlankNode(b.clone());
                match groups.get(&key) {
                    Some(statements) => {
                        let mut s = String::from("[");
                        self.predicates(statements, groups, inline, indent, depth + 1, &mut s);
                        let _ = write!(s, "\n{indent}{}]", "    ".repeat(depth));
                        s
                    }
                    None => "[]".into(),
                }
            }
            Term::BlankNode(b) => format!("_:{}", b.as_str()),
            Term::Literal(l) => self.literal(l),
            Term::Triple(t) => format!(
                "<< {} {} {} >>",
                match &t.subject {
                    NamedOrBlankNode::NamedNode(n) => self.iri(n.as_str()),
                    NamedOrBlankNode::BlankNode(b) => format!("_:{}", b.as_str()),
                },
                self.iri(t.predicate.as_str()),
                self.object(&t.object, groups, &|_| false, indent, depth)
            ),
        }
    }

    fn literal(&self, l: &Literal) -> String {
        let dt = l.datatype().as_str();
        let quoted = quote(l.value());
        if let Some(lang) = l.language() {
            return format!("{quoted}@{lang}");
        }
        match dt.strip_prefix(vocab::XSD) {
            Some("string") => quoted,
            Some("boolean") if matches!(l.value(), "true" | "false") => l.value().to_owned(),
            Some("integer")
                if l.value()
                    .parse::<i64>()
                    .is_ok_and(|n| n.to_string() == l.value()) =>
            {
                l.value().to_owned()
            }
            Some("decimal") if is_decimal(l.value()) => l.value().to_owned(),
            _ => format!("{quoted}^^{}", self.iri(dt)),
        }
    }
}

/// Turtle's DECIMAL: `[+-]? [0-9]* '.' [0-9]+`.
fn is_decimal(v: &str) -> bool {
    let v = v.strip_prefix(['+', '-']).unwrap_or(v);
    match v.split_once('.') {
        Some((int, frac)) => {
            int.chars().all(|c| c.is_ascii_digit())
                && !frac.is_empty()
                && frac.chars().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// A Turtle local name this writer is sure of (a conservative subset of PN_LOCAL).
fn is_local_name(local: &str) -> bool {
    let mut chars = local.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphanumeric() || first == '_')
        && local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !local.ends_with('.')
}

fn escape_iri(iri: &str) -> String {
    let mut out = String::with_capacity(iri.len());
    for c in iri.chars() {
        match c {
            '<' | '>' | '"' | '{' | '}' | '|' | '^' | '`' | '\\' | ' ' | '\0'..='\x1f' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A Turtle string literal (short form, every special character escaped).
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\x7f' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
