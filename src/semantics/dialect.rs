//! The rewritten model ([`super::rewrite`]) written as BPMN 2.0 XML: one walk of its
//! scopes, nodes and flows for every engine cuga-flo pulls, with what differs between
//! their dialects behind [`Dialect`] (Flowable's external-worker tasks and JUEL guards,
//! Kogito's user tasks, signals and Java guards).

use std::fmt::Write as _;

use super::rewrite::{Element, Guard, RNode, Scopes, Thrown, TimerOn, xml_escape};
use crate::journal::event::CatchKind;

/// What an engine's BPMN dialect writes its own way.
pub trait Dialect {
    /// The prefix of the BPMN elements (`""` in the default namespace, `"bpmn2:"`).
    fn prefix(&self) -> &'static str;
    /// The event definition of a terminate end event (`all`: it ends the whole instance).
    fn terminate(&self, all: bool) -> String;
    /// A worker (`multi`: of a multi-instance task: sequential, its step's variable), as
    /// whole lines at `pad`.
    fn worker(&self, xml: &mut String, node: &RNode, pad: &str, multi: Option<(bool, &str)>);
    /// Attributes a gateway adds after its name (each with its leading space).
    fn gateway_attributes(&self, _node: &RNode) -> String {
        String::new()
    }
    /// The event definition of an error or escalation thrown or caught.
    fn thrown(&self, thrown: &Thrown) -> String;
    /// The event definition of a message or signal catch waiting for `name` (`start`: an
    /// event sub-process's start event).
    fn caught(&self, kind: CatchKind, name: &str, start: bool) -> String;
    /// The event definition of timer event `node`.
    fn timer(&self, node: &RNode, timer: &crate::bpmn::Timer) -> String;
    /// The loop characteristics of sub-process `node`, when it is multi-instance.
    fn loop_of(&self, _node: &RNode) -> Option<String> {
        None
    }
    /// A guard's `<conditionExpression>` element.
    fn condition(&self, guard: &Guard) -> String;
}

/// ` name="…"` when `node` has a name.
pub fn name_attribute(node: &RNode) -> String {
    node.name
        .as_deref()
        .map(|s| format!(" name=\"{}\"", xml_escape(s)))
        .unwrap_or_default()
}

/// Write scope `scope` of `children` (its nodes, then its flows) at `depth`, nested
/// scopes within their sub-processes.
pub fn write_scope(
    dialect: &impl Dialect,
    xml: &mut String,
    children: &Scopes,
    scope: Option<&str>,
    depth: usize,
) {
    let pad = "  ".repeat(depth);
    let p = dialect.prefix();
    let Some((nodes, flows)) = children.get(&scope) else {
        return;
    };
    for n in nodes {
        let id = xml_escape(&n.id);
        let name = name_attribute(n);
        // An event element holding its definition.
        let event = |xml: &mut String, tag: &str, attributes: &str, definition: &str| {
            let _ = writeln!(
                xml,
                "{pad}<{p}{tag} id=\"{id}\"{name}{attributes}>{definition}</{p}{tag}>"
            );
        };
        let attached = |to: &str, cancel: bool| {
            format!(
                " attachedToRef=\"{}\" cancelActivity=\"{cancel}\"",
                xml_escape(to)
            )
        };
        match &n.element {
            Element::Start => {
                let _ = writeln!(xml, "{pad}<{p}startEvent id=\"{id}\"{name}/>");
            }
            Element::End {
                terminate_all: None,
            } => {
                let _ = writeln!(xml, "{pad}<{p}endEvent id=\"{id}\"{name}/>");
            }
            Element::End {
                terminate_all: Some(all),
            } => event(xml, "endEvent", "", &dialect.terminate(*all)),
            Element::Intermediate => {
                let _ = writeln!(xml, "{pad}<{p}intermediateThrowEvent id=\"{id}\"{name}/>");
            }
            Element::Worker => dialect.worker(xml, n, &pad, None),
            Element::MultiWorker {
                sequential,
                variable,
            } => dialect.worker(xml, n, &pad, Some((*sequential, variable))),
            Element::Gateway(tag) => {
                let _ = writeln!(
                    xml,
                    "{pad}<{p}{} id=\"{id}\"{name}{}/>",
                    tag.tag(),
                    dialect.gateway_attributes(n)
                );
            }
            Element::SubProcess | Element::EventSubProcess => {
                let triggered = if n.element == Element::EventSubProcess {
                    " triggeredByEvent=\"true\""
                } else {
                    ""
                };
                let _ = writeln!(xml, "{pad}<{p}subProcess id=\"{id}\"{name}{triggered}>");
                if let Some(characteristics) = dialect.loop_of(n) {
                    let _ = writeln!(xml, "{pad}  {characteristics}");
                }
                write_scope(dialect, xml, children, Some(n.id.as_str()), depth + 1);
                let _ = writeln!(xml, "{pad}</{p}subProcess>");
            }
            Element::TriggerStart {
                interrupting,
                thrown,
            } => event(
                xml,
                "startEvent",
                &format!(" isInterrupting=\"{interrupting}\""),
                &dialect.thrown(thrown),
            ),
            Element::CatchStart {
                interrupting,
                kind,
                name: caught,
            } => event(
                xml,
                "startEvent",
                &format!(" isInterrupting=\"{interrupting}\""),
                &dialect.caught(*kind, caught, true),
            ),
            Element::Throw { end, thrown } => {
                let tag = if *end {
                    "endEvent"
                } else {
                    "intermediateThrowEvent"
                };
                event(xml, tag, "", &dialect.thrown(thrown));
            }
            Element::Catch { kind, name: caught } => event(
                xml,
                "intermediateCatchEvent",
                "",
                &dialect.caught(*kind, caught, false),
            ),
            Element::CatchBoundary {
                attached_to,
                cancel,
                kind,
                name: caught,
            } => event(
                xml,
                "boundaryEvent",
                &attached(attached_to, *cancel),
                &dialect.caught(*kind, caught, false),
            ),
            Element::Boundary {
                attached_to,
                cancel,
                thrown,
            } => event(
                xml,
                "boundaryEvent",
                &attached(attached_to, *cancel),
                &dialect.thrown(thrown),
            ),
            Element::Timer { timer, on } => {
                let definition = dialect.timer(n, timer);
                match on {
                    TimerOn::Catch => event(xml, "intermediateCatchEvent", "", &definition),
                    TimerOn::Boundary {
                        attached_to,
                        cancel,
                    } => event(
                        xml,
                        "boundaryEvent",
                        &attached(attached_to, *cancel),
                        &definition,
                    ),
                    TimerOn::Start { interrupting } => event(
                        xml,
                        "startEvent",
                        &format!(" isInterrupting=\"{interrupting}\""),
                        &definition,
                    ),
                }
            }
        }
    }
    for f in flows {
        let open = format!(
            "{pad}<{p}sequenceFlow id=\"{}\" sourceRef=\"{}\" targetRef=\"{}\"",
            xml_escape(&f.id),
            xml_escape(&f.source),
            xml_escape(&f.target)
        );
        let _ = match &f.guard {
            Some(guard) => writeln!(xml, "{open}>{}</{p}sequenceFlow>", dialect.condition(guard)),
            None => writeln!(xml, "{open}/>"),
        };
    }
}
