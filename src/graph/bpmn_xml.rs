//! A process as BPMN 2.0 XML: valid, without diagram interchange (no layout), with the
//! `<error>`, `<escalation>`, `<message>`, `<signal>` and `<itemDefinition>` elements
//! its nodes refer to declared at the top.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::bpmn::{EventDefinition, GatewayKind, LoopKind, Node, NodeKind, Process};

use super::export::event_definition_name;

/// What the file says beside its process.
#[derive(Debug, Clone, Default)]
pub struct Header {
    pub target_namespace: Option<String>,
    pub expression_language: Option<String>,
    /// Prefixes of attributes and extension elements: `(prefix, uri)`.
    pub namespaces: Vec<(String, String)>,
}

const BPMN: &str = "http://www.omg.org/spec/BPMN/20100524/MODEL";
const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";
/// cuga-flo's attributes on imported elements (AgentFLOW's approval settings).
pub const CUGA: &str = "urn:cuga-flo:bpmn";

/// `processes` as one BPMN file; the first is the one the app runs.
pub fn write(processes: &[Process], header: &Header) -> String {
    let Some(process) = processes.first() else {
        return String::new();
    };
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = write!(
        x,
        "<bpmn:definitions xmlns:bpmn=\"{BPMN}\" xmlns:xsi=\"{XSI}\" xmlns:cuga=\"{CUGA}\""
    );
    for (p, uri) in &header.namespaces {
        if matches!(p.as_str(), "bpmn" | "xsi" | "cuga") {
            continue;
        }
        let _ = write!(x, " xmlns:{p}=\"{}\"", esc(uri));
    }
    let _ = write!(x, " id=\"Definitions_{}\"", esc(&process.id));
    let tns = header
        .target_namespace
        .clone()
        .unwrap_or_else(|| "urn:cuga-flo:graph-import".into());
    let _ = write!(x, " targetNamespace=\"{}\"", esc(&tns));
    if let Some(l) = &header.expression_language {
        let _ = write!(x, " expressionLanguage=\"{}\"", esc(l));
    }
    x.push_str(" exporter=\"cuga-flo graph import\">\n");

    // Declarations the nodes refer to.
    // (id, element) → (code, name).
    type Declared<'a> = BTreeMap<(String, &'a str), (Option<String>, Option<String>)>;
    let mut declared: Declared = BTreeMap::new();
    for n in processes.iter().flat_map(|p| p.nodes.iter()) {
        let Some(r) = &n.event_ref else { continue };
        let defs = n.kind.event_definitions();
        let element = if defs.contains(&EventDefinition::Error) {
            "error"
        } else if defs.contains(&EventDefinition::Escalation) {
            "escalation"
        } else if defs.contains(&EventDefinition::Signal) {
            "signal"
        } else {
            "message"
        };
        declared
            .entry((r.reference.clone(), element))
            .or_insert((r.code.clone(), r.name.clone()));
    }
    for p in processes.iter().flat_map(|p| p.properties.iter()) {
        if let Some(item) = &p.item_subject_ref {
            let _ = writeln!(
                x,
                "  <bpmn:itemDefinition id=\"{}\" structureRef=\"java.lang.Object\" />",
                esc(local(item))
            );
        }
    }
    for ((id, element), (code, name)) in &declared {
        let _ = write!(x, "  <bpmn:{element} id=\"{}\"", esc(id));
        if let Some(name) = name {
            let _ = write!(x, " name=\"{}\"", esc(name));
        }
        if let Some(code) = code {
            let attr = if *element == "escalation" {
                "escalationCode"
            } else {
                "errorCode"
            };
            let _ = write!(x, " {attr}=\"{}\"", esc(code));
        }
        x.push_str(" />\n");
    }

    for process in processes {
        write_process(process, &mut x);
    }
    x.push_str("</bpmn:definitions>\n");
    x
}

fn write_process(process: &Process, x: &mut String) {
    let _ = write!(x, "  <bpmn:process id=\"{}\"", esc(&process.id));
    if let Some(name) = &process.name {
        let _ = write!(x, " name=\"{}\"", esc(name));
    }
    let _ = writeln!(
        x,
        " isExecutable=\"{}\">",
        process.is_executable.unwrap_or(true)
    );
    if let Some(doc) = &process.documentation {
        let _ = writeln!(
            x,
            "    <bpmn:documentation>{}</bpmn:documentation>",
            esc(doc)
        );
    }
    if let Some(ext) = &process.extension_elements {
        let _ = writeln!(
            x,
            "    <bpmn:extensionElements>{ext}</bpmn:extensionElements>"
        );
    }
    for p in &process.properties {
        let _ = write!(x, "    <bpmn:property id=\"{}\"", esc(&p.id));
        if let Some(n) = &p.name {
            let _ = write!(x, " name=\"{}\"", esc(n));
        }
        if let Some(item) = &p.item_subject_ref {
            let _ = write!(x, " itemSubjectRef=\"{}\"", esc(item));
        }
        x.push_str(" />\n");
    }
    scope(process, None, 2, x);
    x.push_str("  </bpmn:process>\n");
}

fn local(qname: &str) -> &str {
    qname.rsplit_once(':').map_or(qname, |(_, l)| l)
}

/// The nodes and flows directly inside `parent`, nested sub-processes recursively.
fn scope(process: &Process, parent: Option<&str>, depth: usize, x: &mut String) {
    let pad = "  ".repeat(depth);
    for n in process
        .nodes
        .iter()
        .filter(|n| n.parent.as_deref() == parent)
    {
        node(process, n, depth, x);
    }
    for f in &process.flows {
        let source_parent = process.node(&f.source).and_then(|n| n.parent.as_deref());
        if source_parent != parent {
            continue;
        }
        let _ = write!(
            x,
            "{pad}<bpmn:sequenceFlow id=\"{}\" sourceRef=\"{}\" targetRef=\"{}\"",
            esc(&f.id),
            esc(&f.source),
            esc(&f.target)
        );
        if let Some(name) = &f.name {
            let _ = write!(x, " name=\"{}\"", esc(name));
        }
        match &f.condition {
            None => x.push_str(" />\n"),
            Some(c) => {
                let _ = write!(
                    x,
                    ">\n{pad}  <bpmn:conditionExpression xsi:type=\"bpmn:tFormalExpression\""
                );
                if let Some(l) = &c.language {
                    let _ = write!(x, " language=\"{}\"", esc(l));
                }
                let _ = write!(
                    x,
                    ">{}</bpmn:conditionExpression>\n{pad}</bpmn:sequenceFlow>\n",
                    esc(&c.body)
                );
            }
        }
    }
}

fn node(process: &Process, n: &Node, depth: usize, x: &mut String) {
    let pad = "  ".repeat(depth);
    let tag = n.kind.tag();
    let _ = write!(x, "{pad}<bpmn:{tag} id=\"{}\"", esc(&n.id));
    if let Some(name) = &n.name {
        let _ = write!(x, " name=\"{}\"", esc(name));
    }
    if let Some(d) = &n.default_flow {
        let _ = write!(x, " default=\"{}\"", esc(d));
    }
    match &n.kind {
        NodeKind::StartEvent {
            interrupting: false,
            ..
        } => x.push_str(" isInterrupting=\"false\""),
        NodeKind::BoundaryEvent {
            attached_to,
            cancel_activity,
            ..
        } => {
            let _ = write!(
                x,
                " attachedToRef=\"{}\" cancelActivity=\"{cancel_activity}\"",
                esc(attached_to)
            );
        }
        NodeKind::SubProcess(crate::bpmn::SubProcessKind::Embedded {
            triggered_by_event: true,
        }) => x.push_str(" triggeredByEvent=\"true\""),
        NodeKind::CallActivity {
            called_element: Some(c),
        } => {
            let _ = write!(x, " calledElement=\"{}\"", esc(c));
        }
        NodeKind::Task(crate::bpmn::TaskKind::Receive) => {
            if let Some(r) = &n.event_ref {
                let _ = write!(x, " messageRef=\"{}\"", esc(&r.reference));
            }
        }
        NodeKind::Gateway(GatewayKind::Exclusive) => {}
        _ => {}
    }
    for (k, v) in &n.attributes {
        let _ = write!(x, " {k}=\"{}\"", esc(v));
    }
    let mut body = String::new();
    children(process, n, depth, &mut body);
    if body.is_empty() {
        x.push_str(" />\n");
    } else {
        x.push_str(">\n");
        x.push_str(&body);
        let _ = writeln!(x, "{pad}</bpmn:{tag}>");
    }
}

/// What is inside a node's element: documentation, extension elements, loop
/// characteristics, event definitions, a sub-process's own nodes and flows.
fn children(process: &Process, n: &Node, depth: usize, x: &mut String) {
    let inner = "  ".repeat(depth + 1);
    if let Some(doc) = &n.documentation {
        let _ = writeln!(
            x,
            "{inner}<bpmn:documentation>{}</bpmn:documentation>",
            esc(doc)
        );
    }
    if let Some(ext) = &n.extension_elements {
        let _ = writeln!(
            x,
            "{inner}<bpmn:extensionElements>{ext}</bpmn:extensionElements>"
        );
    }
    if let Some(l) = &n.looping {
        match l.kind {
            LoopKind::Standard => {
                let _ = writeln!(x, "{inner}<bpmn:standardLoopCharacteristics />");
            }
            LoopKind::MultiInstance { sequential } => {
                let m = &l.multi;
                let _ = writeln!(
                    x,
                    "{inner}<bpmn:multiInstanceLoopCharacteristics isSequential=\"{sequential}\">"
                );
                let deeper = "  ".repeat(depth + 2);
                let lang = m
                    .language
                    .as_ref()
                    .map(|l| format!(" language=\"{}\"", esc(l)))
                    .unwrap_or_default();
                let zeebe: Vec<String> = [
                    ("inputCollection", &m.collection),
                    ("inputElement", &m.element_variable),
                    ("outputCollection", &m.output_collection),
                    ("outputElement", &m.output_element),
                ]
                .into_iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!(" {k}=\"{}\"", esc(v))))
                .collect();
                if !zeebe.is_empty() {
                    let _ = writeln!(
                        x,
                        "{deeper}<bpmn:extensionElements><cuga:loopCharacteristics{} /></bpmn:extensionElements>",
                        zeebe.concat()
                    );
                }
                if let Some(c) = &m.cardinality {
                    let _ = writeln!(
                        x,
                        "{deeper}<bpmn:loopCardinality xsi:type=\"bpmn:tFormalExpression\"{lang}>{}</bpmn:loopCardinality>",
                        esc(c)
                    );
                }
                if let Some(c) = &m.completion_condition {
                    let _ = writeln!(
                        x,
                        "{deeper}<bpmn:completionCondition xsi:type=\"bpmn:tFormalExpression\"{lang}>{}</bpmn:completionCondition>",
                        esc(c)
                    );
                }
                let _ = writeln!(x, "{inner}</bpmn:multiInstanceLoopCharacteristics>");
            }
        }
    }
    for def in n.kind.event_definitions() {
        let name = event_definition_name(*def);
        let _ = write!(x, "{inner}<bpmn:{name}EventDefinition");
        let reference = n.event_ref.as_ref().map(|r| esc(&r.reference));
        match (def, reference) {
            (EventDefinition::Error, Some(r)) => {
                let _ = write!(x, " errorRef=\"{r}\"");
            }
            (EventDefinition::Escalation, Some(r)) => {
                let _ = write!(x, " escalationRef=\"{r}\"");
            }
            (EventDefinition::Message, Some(r)) => {
                let _ = write!(x, " messageRef=\"{r}\"");
            }
            (EventDefinition::Signal, Some(r)) => {
                let _ = write!(x, " signalRef=\"{r}\"");
            }
            _ => {}
        }
        match (def, &n.timer) {
            (EventDefinition::Timer, Some(t)) if t.kind.is_some() => {
                let tag = t.kind.map(|k| k.tag()).unwrap_or("timeDuration");
                let _ = writeln!(
                    x,
                    ">\n{inner}  <bpmn:{tag} xsi:type=\"bpmn:tFormalExpression\">{}</bpmn:{tag}>\n{inner}</bpmn:{name}EventDefinition>",
                    esc(&t.expression)
                );
            }
            _ => x.push_str(" />\n"),
        }
    }
    if let NodeKind::SubProcess(_) = n.kind {
        scope(process, Some(&n.id), depth + 1, x);
    }
}

pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}
