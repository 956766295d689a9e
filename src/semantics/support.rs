//! What each engine can run: the one list of BPMN elements whose semantics an engine does
//! not implement yet. A model that uses one is refused (`validate`, `start` and the
//! engine itself) instead of being mis-run: a multi-instance review run once, a message
//! event passed without waiting, an error boundary that can never trigger.
//!
//! The native engine runs sequences, every gateway kind, embedded and transaction
//! sub-processes, multi-instance activities over a collection or a cardinality,
//! terminate and link events, timers (catch and boundary, not repeating;
//! [`crate::check`] checks their times), and BPMN errors and escalations: error and
//! escalation end events, escalation throw events, and the error and escalation boundary
//! events that catch them (and failed tasks), messages and signals (catch events, receive
//! tasks, boundary events, event-based gateways before them, throws reaching the run's own
//! catches; see `engine::native::messages`). Flowable and Kogito run the model as
//! [`super::rewrite`] rewrites it. On Flowable the rewrite keeps error and escalation
//! events (end events, escalation throw events, the error and escalation boundary events
//! that catch them) and a failed task's job is completed with a BPMN error, so Flowable
//! delivers errors and escalations itself; multi-instance tasks run as Flowable's, each
//! instance a job; message and signal catches (events, boundaries, event-based gateways
//! racing them, receive tasks, which wait as message catch events) wait on Flowable and
//! on Kogito: cuga-flo delivers what the run itself throws, and a run whose instance
//! waits for nothing else parks for a delivery from outside (`runs message`, `runs
//! signal`, then delivered to the waiting execution when the run re-attaches). Timers
//! (catch events, boundary events, event sub-process starts, event-based gateways racing
//! them; not repeating) are fired by cuga-flo when they are due by its own clock: on
//! Flowable they are Flowable's timer jobs, moved when due; on Kogito each waits for a
//! jBPM signal cuga-flo raises. A timer due within the run's wait limit is waited for
//! in-process, one due later parks the run. Event sub-processes started by an error, an
//! escalation, a message, a signal or a timer are the engine's too, and multi-instance
//! tasks run as the engine's (jBPM and Flowable run the instances). Flowable runs
//! multi-instance sub-processes too (`flowable::multi`: cuga-flo ends each instance at a
//! worker in front of the sub-process's end events, and the control points inside see
//! their instance's variables) when each instance runs one token to one end event: one
//! with no end event, a parallel split, a non-interrupting boundary event or an event
//! sub-process inside, or another multi-instance activity inside, is refused. None
//! reaches Kogito: jBPM keeps an instance's element variable and loop counter in the
//! sub-process instance's scope, which its REST API does not show. On Flowable a call
//! activity's job, and on Kogito its user task, runs the called app as a child run of
//! cuga-flo's, as on the native engine, and a child that parks parks its parent (on
//! Kogito a multi-instance call activity too: a multi-instance task whose instances are
//! child runs).
//!
//! Throw events that nothing in the run catches (message and signal throws and ends with
//! no catch waiting, and escalations on Kogito) pass on every engine: passing
//! is what the model means within a run (an uncaught escalation passes in BPMN too; a
//! message goes to another participant).

use crate::app::EngineKind;
use crate::bpmn::{
    EventDefinition, GatewayKind, LoopKind, Node, NodeKind, Process, ProcessIndex, SubProcessKind,
};

use crate::diag::with_article;
use crate::semantics::events::signature;
use crate::source::Span;

/// An element the engine would mis-run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The element's id.
    pub id: String,
    /// Where it is written (its start tag, or its loop characteristics).
    pub span: Span,
    /// What it is and what the engine would do with it instead.
    pub why: String,
}

/// How an engine runs a model: its own semantics, or pulled through the rewrite (Flowable
/// runs BPMN errors and escalations itself, Kogito gets every event as a none event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Executor {
    Native,
    Flowable,
    Kogito,
}

impl Executor {
    fn pulled(self) -> bool {
        self != Executor::Native
    }
}

/// The elements of `process` that `engine` cannot run as the model means. An engine
/// reached over MCP says itself what it runs: nothing is refused for it here.
pub fn unsupported(process: &Process, engine: EngineKind) -> Vec<Unsupported> {
    unsupported_in(&ProcessIndex::new(process), engine)
}

/// [`unsupported`] through an index of the process already built.
pub fn unsupported_in(index: &ProcessIndex, engine: EngineKind) -> Vec<Unsupported> {
    let process = index.process();
    let executor = match engine {
        EngineKind::Native => Executor::Native,
        EngineKind::Flowable => Executor::Flowable,
        EngineKind::Kogito => Executor::Kogito,
        EngineKind::Mcp => return Vec::new(),
    };
    // Flowable and Kogito run every message and signal catch: cuga-flo delivers the
    // run's own throws, and a run waiting for nothing else parks for a delivery from
    // outside (`runs message`, `runs signal` deliver it when it is resumed).
    // The topology is built only when a catch needs looking up (never for the native
    // engine, which delivers nothing from outside): building it costs as much as the rest
    // of the walk on a large model.
    let topology = std::cell::OnceCell::new();
    let delivers = executor.pulled();
    let catch_problem = |node: &Node| -> Option<Option<String>> {
        let waits = match node.kind {
            NodeKind::IntermediateCatchEvent { .. } | NodeKind::BoundaryEvent { .. } => true,
            // A process's message start event is the run's input.
            NodeKind::StartEvent { .. } => parent_is_event_subprocess(index, node),
            _ => false,
        };
        if !delivers || !waits {
            return None;
        }
        topology
            .get_or_init(|| crate::semantics::topology::Topology::from_process(process))
            .node(&node.id)
            .and_then(signature)?;
        Some(None)
    };
    let mut out = Vec::new();
    for node in &process.nodes {
        // What an event or ad-hoc sub-process holds is reported once, at the sub-process.
        if inside_refused_scope(index, node, executor) {
            continue;
        }
        let problem = match executor {
            Executor::Native if is_event_subprocess(node) => event_subprocess_problem(index, node),
            Executor::Flowable if is_event_subprocess(node) => {
                flowable_event_subprocess_problem(index, node)
            }
            Executor::Kogito if is_event_subprocess(node) => {
                kogito_event_subprocess_problem(index, node)
            }
            // The start events of an event sub-process the engine runs name its trigger.
            Executor::Native if parent_is_event_subprocess(index, node) => None,
            Executor::Flowable | Executor::Kogito if parent_is_event_subprocess(index, node) => {
                catch_problem(node).flatten()
            }
            _ => match catch_problem(node) {
                Some(problem) => problem,
                None => element_problem(node, executor),
            },
        };
        let problem = problem.or_else(|| pulled_timer_problem(node, executor));
        if let Some(why) = problem {
            out.push(Unsupported {
                id: node.id.clone(),
                span: node.span,
                why,
            });
        }
        if let Some(looping) = &node.looping {
            let why = match looping.kind {
                // The native engine runs multi-instance activities (engine::native::multi)
                // that say what to run over.
                LoopKind::MultiInstance { .. }
                    if executor == Executor::Native
                        && (looping.multi.collection.is_some()
                            || looping.multi.cardinality.is_some()) =>
                {
                    continue;
                }
                // Flowable and Kogito run multi-instance tasks (the rewrite keeps them;
                // cuga-flo evaluates what they run over and their completion condition).
                LoopKind::MultiInstance { .. }
                    if executor.pulled()
                        && matches!(node.kind, NodeKind::Task(_))
                        && (looping.multi.collection.is_some()
                            || looping.multi.cardinality.is_some()) =>
                {
                    continue;
                }
                // Flowable runs multi-instance sub-processes whose instances each end at
                // one end event (cuga-flo collects an instance's output there).
                LoopKind::MultiInstance { .. }
                    if executor == Executor::Flowable
                        && (looping.multi.collection.is_some()
                            || looping.multi.cardinality.is_some())
                        && matches!(
                            node.kind,
                            NodeKind::SubProcess(SubProcessKind::Embedded {
                                triggered_by_event: false
                            })
                        ) =>
                {
                    match flowable_multi_subprocess_problem(index, node) {
                        Some(why) => why,
                        None => continue,
                    }
                }
                // On Kogito a multi-instance call activity runs as a multi-instance task
                // whose instances are child runs.
                LoopKind::MultiInstance { .. }
                    if executor == Executor::Kogito
                        && matches!(node.kind, NodeKind::CallActivity { .. })
                        && (looping.multi.collection.is_some()
                            || looping.multi.cardinality.is_some()) =>
                {
                    continue;
                }
                LoopKind::MultiInstance { .. }
                    if looping.multi.collection.is_none()
                        && looping.multi.cardinality.is_none() =>
                {
                    "a multi-instance activity that names neither a collection (loopDataInputRef, \
                     a `collection` attribute, zeebe:loopCharacteristics inputCollection) nor a \
                     loopCardinality: the engine cannot tell how many instances to run"
                        .to_string()
                }
                // jBPM would run it, but cuga-flo could not ask what is inside as the
                // native engine asks it.
                LoopKind::MultiInstance { sequential }
                    if executor == Executor::Kogito && is_subprocess(node) =>
                {
                    format!(
                        "a {} multi-instance {}: on Kogito only multi-instance tasks run (jBPM \
                         keeps each instance's element variable and loop counter in the \
                         sub-process instance's own scope, which Kogito's REST API does not \
                         show, and cuga-flo completes each user task with the process's \
                         variables: the control points inside an instance would not see its \
                         variables, and parallel instances would overwrite each other's)",
                        if sequential { "sequential" } else { "parallel" },
                        node.kind.tag(),
                    )
                }
                LoopKind::MultiInstance { sequential } => format!(
                    "a {} multi-instance {}: {}",
                    if sequential { "sequential" } else { "parallel" },
                    node.kind.tag(),
                    if executor == Executor::Kogito {
                        "on Kogito only multi-instance tasks run (the control points inside \
                         each instance would not see its variables)"
                    } else {
                        "on Flowable only multi-instance tasks and embedded sub-processes run \
                         (each instance would not call its own child run)"
                    }
                ),
                LoopKind::Standard => "a loop activity (standardLoopCharacteristics): the engine \
                                       would run it once"
                    .to_string(),
            };
            out.push(Unsupported {
                id: node.id.clone(),
                span: looping.span,
                why,
            });
        }
    }
    out
}

/// What Flowable cannot run of multi-instance sub-process `node`: cuga-flo ends an
/// instance (collects its output, evaluates the completion condition) where its token
/// reaches an end event of the sub-process, so an instance must end at exactly one: no
/// parallel split, non-interrupting boundary event or event sub-process inside it, and
/// an end event; and the control points inside see the variables of one instance, so
/// no multi-instance activity inside it.
fn flowable_multi_subprocess_problem(index: &ProcessIndex, node: &Node) -> Option<String> {
    let process = index.process();
    let inside = |n: &Node| {
        let mut at = n.parent.as_deref();
        while let Some(id) = at {
            if id == node.id {
                return true;
            }
            at = index.node(id).and_then(|p| p.parent.as_deref());
        }
        false
    };
    let kind = node.kind.tag();
    let sequential = matches!(
        node.looping.as_ref().map(|l| l.kind),
        Some(LoopKind::MultiInstance { sequential: true })
    );
    let what = format!(
        "a {} multi-instance {kind}",
        if sequential { "sequential" } else { "parallel" }
    );
    let descendants: Vec<&Node> = process.nodes.iter().filter(|n| inside(n)).collect();
    if let Some(nested) = descendants.iter().find(|n| {
        matches!(
            n.looping.as_ref().map(|l| l.kind),
            Some(LoopKind::MultiInstance { .. })
        )
    }) {
        return Some(format!(
            "{what} holding another multi-instance activity (`{}`): on Flowable the control \
             points inside would not see the inner instance's variables",
            nested.id
        ));
    }
    let ends = descendants
        .iter()
        .any(|n| n.parent.as_deref() == Some(node.id.as_str()) && n.kind.is_end_event());
    if !ends {
        return Some(format!(
            "{what} with no end event: on Flowable cuga-flo collects an instance's output \
             where its token reaches an end event"
        ));
    }
    let split = descendants.iter().find(|n| {
        let outgoing = process.flows.iter().filter(|f| f.source == n.id).count();
        let branches = match &n.kind {
            NodeKind::Gateway(GatewayKind::Exclusive | GatewayKind::EventBased) => false,
            NodeKind::BoundaryEvent {
                cancel_activity, ..
            } => !cancel_activity,
            _ => outgoing >= 2,
        };
        branches || is_event_subprocess(n)
    });
    split.map(|n| {
        format!(
            "{what} in which more than one token may run (`{}`): on Flowable cuga-flo ends \
             an instance where its token reaches an end event, so an instance must run one \
             token",
            n.id
        )
    })
}

/// What `node`'s kind means that `executor` does not do.
fn element_problem(node: &Node, executor: Executor) -> Option<String> {
    let pulled = executor.pulled();
    // Flowable and Kogito run errors and escalations themselves (the rewrite keeps their
    // events).
    let throws = |d| matches!(d, EventDefinition::Error | EventDefinition::Escalation);
    let first = |definitions: &[EventDefinition], refused: &dyn Fn(EventDefinition) -> bool| {
        definitions.iter().copied().find(|d| refused(*d))
    };
    match &node.kind {
        NodeKind::SubProcess(SubProcessKind::Embedded {
            triggered_by_event: true,
        }) => Some("an event sub-process: nothing would ever start it".to_string()),
        NodeKind::SubProcess(SubProcessKind::AdHoc) => Some(
            "an ad-hoc sub-process: its activities would not run in the order a performer picks"
                .to_string(),
        ),
        // The native engine runs the called process as a child run (engine::native::call).
        // On Flowable and Kogito the call activity's job or user task runs the called app
        // as a child run of cuga-flo's, as on the native engine (`engine::external::Witness`).
        NodeKind::IntermediateCatchEvent { definitions } => first(definitions, &|d| {
            d == EventDefinition::Conditional
                || (pulled && matches!(d, EventDefinition::Message | EventDefinition::Signal))
        })
        .map(|d| {
            format!(
                "{} catch event: the run would pass it without waiting",
                with_article(definition_name(d))
            )
        }),
        NodeKind::BoundaryEvent { definitions, .. } => {
            let native = |d| {
                matches!(
                    d,
                    EventDefinition::Timer
                        | EventDefinition::Error
                        | EventDefinition::Escalation
                        | EventDefinition::Message
                        | EventDefinition::Signal
                )
            };
            match first(definitions, &|d| {
                !native(d) || (pulled && !throws(d) && d != EventDefinition::Timer)
            }) {
                Some(d) => Some(format!(
                    "{} boundary event: it would never trigger",
                    with_article(definition_name(d))
                )),
                None if definitions.is_empty() => {
                    Some("a boundary event with no event definition: it would never trigger".into())
                }
                None => None,
            }
        }
        NodeKind::StartEvent { definitions, .. } if node.parent.is_some() => {
            first(definitions, &|_| true).map(|d| {
                format!(
                    "{} start event in a sub-process: the sub-process would start without it",
                    with_article(definition_name(d))
                )
            })
        }
        NodeKind::EndEvent { definitions } | NodeKind::IntermediateThrowEvent { definitions } => {
            first(definitions, &|d| {
                matches!(d, EventDefinition::Compensate | EventDefinition::Cancel)
                    || (d == EventDefinition::Error && !throws(d))
            })
            .map(|d| match d {
                EventDefinition::Compensate => {
                    "a compensation event: compensation is not run".to_string()
                }
                EventDefinition::Cancel => {
                    "a cancel end event: the transaction would not be cancelled".to_string()
                }
                _ => "an error end event: the run would complete instead of raising the error"
                    .to_string(),
            })
        }
        NodeKind::Unsupported { tag } => Some(format!("a <{tag}>, which cannot run")),
        _ => None,
    }
}

/// What Flowable cannot run of `node`'s timer (`crate::check` says it for the native
/// engine): a timer with no time (Flowable refuses the deployment), and a repeating one
/// (cuga-flo fires a timer once, when it is due).
/// A timer Flowable or Kogito cannot run as the model means: cuga-flo fires each timer
/// once, when it is due.
fn pulled_timer_problem(node: &Node, executor: Executor) -> Option<String> {
    let engine = match executor {
        Executor::Native => return None,
        Executor::Flowable => "Flowable",
        Executor::Kogito => "Kogito",
    };
    let timer = node.timer.as_ref()?;
    if node.parent.is_none() && node.kind.is_start_event() {
        return None;
    }
    match timer.kind {
        None => Some(
            "a timer event that names no time (no timeDuration, timeDate or timeCycle): \
             there is no time to fire it at"
                .to_string(),
        ),
        Some(crate::bpmn::TimerKind::Cycle) => Some(format!(
            "a repeating timer (timeCycle `{}`): on {engine} cuga-flo fires a timer once, \
             when it is due",
            timer.expression
        )),
        _ => None,
    }
}

fn is_subprocess(node: &Node) -> bool {
    matches!(node.kind, NodeKind::SubProcess(_))
}

fn is_event_subprocess(node: &Node) -> bool {
    matches!(
        node.kind,
        NodeKind::SubProcess(SubProcessKind::Embedded {
            triggered_by_event: true
        })
    )
}

fn parent_is_event_subprocess(index: &ProcessIndex, node: &Node) -> bool {
    node.parent
        .as_deref()
        .and_then(|p| index.node(p))
        .is_some_and(is_event_subprocess)
}

/// What the native engine cannot run in event sub-process `node`: it needs a start event
/// naming an error, escalation, message, signal or timer.
fn event_subprocess_problem(index: &ProcessIndex, node: &Node) -> Option<String> {
    let start = index
        .process()
        .nodes
        .iter()
        .filter(|n| n.parent.as_deref() == Some(node.id.as_str()))
        .find(|n| n.kind.is_start_event() && !n.kind.event_definitions().is_empty());
    let Some(start) = start else {
        return Some(
            "an event sub-process whose start event names no trigger: nothing would ever start it"
                .to_string(),
        );
    };
    start
        .kind
        .event_definitions()
        .iter()
        .find(|d| {
            !matches!(
                d,
                EventDefinition::Error
                    | EventDefinition::Escalation
                    | EventDefinition::Message
                    | EventDefinition::Signal
                    | EventDefinition::Timer
            )
        })
        .map(|d| {
            format!(
                "an event sub-process started by {} event: nothing would ever start it",
                with_article(definition_name(*d))
            )
        })
}

/// What Flowable cannot run in event sub-process `node`: what the native engine cannot,
/// and a start event that is not an error's, escalation's, message's, signal's or
/// timer's (Flowable's own event sub-processes run those, cuga-flo delivering messages
/// and signals and firing due timers).
fn flowable_event_subprocess_problem(index: &ProcessIndex, node: &Node) -> Option<String> {
    event_subprocess_problem(index, node).or_else(|| {
        index
            .process()
            .nodes
            .iter()
            .filter(|n| n.parent.as_deref() == Some(node.id.as_str()))
            .filter(|n| n.kind.is_start_event())
            .flat_map(|n| n.kind.event_definitions().iter().copied())
            .find(|d| {
                !matches!(
                    d,
                    EventDefinition::Error
                        | EventDefinition::Escalation
                        | EventDefinition::Message
                        | EventDefinition::Signal
                        | EventDefinition::Timer
                )
            })
            .map(|d| {
                format!(
                    "an event sub-process started by {} event: on Flowable only error, \
                     escalation, message, signal and timer event sub-processes run",
                    with_article(definition_name(d))
                )
            })
    })
}

/// What Kogito cannot run in event sub-process `node`: what the native engine cannot,
/// and a start event that is not an error's, escalation's, message's, signal's or
/// timer's (jBPM runs those, cuga-flo delivering messages, signals and due timers as
/// jBPM signals), and one catching every error (jBPM 10.1 cannot build it).
fn kogito_event_subprocess_problem(index: &ProcessIndex, node: &Node) -> Option<String> {
    let starts = || {
        index
            .process()
            .nodes
            .iter()
            .filter(|n| n.parent.as_deref() == Some(node.id.as_str()))
            .filter(|n| n.kind.is_start_event())
    };
    let catch_all = starts().any(|n| {
        n.kind.event_definitions().contains(&EventDefinition::Error)
            && n.event_ref.as_ref().and_then(|r| r.code.as_ref()).is_none()
    });
    if event_subprocess_problem(index, node).is_none() && catch_all {
        return Some(
            "an event sub-process started by every error (an error start event without a \
             code): jBPM 10.1 cannot build one (no errorRef: \"must contain a trigger\"; an \
             error without errorCode: a NullPointerException in its code generation)"
                .to_string(),
        );
    }
    event_subprocess_problem(index, node).or_else(|| {
        starts()
            .flat_map(|n| n.kind.event_definitions().iter().copied())
            .find(|d| {
                !matches!(
                    d,
                    EventDefinition::Error
                        | EventDefinition::Escalation
                        | EventDefinition::Message
                        | EventDefinition::Signal
                        | EventDefinition::Timer
                )
            })
            .map(|d| {
                format!(
                    "an event sub-process started by {} event: on Kogito only error, \
                     escalation, message, signal and timer event sub-processes run",
                    with_article(definition_name(d))
                )
            })
    })
}

/// Whether `node` lies in an ad-hoc sub-process, or an event sub-process the engine
/// does not run (reported at the sub-process).
fn inside_refused_scope(index: &ProcessIndex, node: &Node, executor: Executor) -> bool {
    let mut parent = node.parent.as_deref();
    while let Some(id) = parent {
        let Some(p) = index.node(id) else {
            return false;
        };
        let refused = match &p.kind {
            NodeKind::SubProcess(SubProcessKind::AdHoc) => true,
            _ if is_event_subprocess(p) => match executor {
                Executor::Native => event_subprocess_problem(index, p).is_some(),
                Executor::Flowable => flowable_event_subprocess_problem(index, p).is_some(),
                Executor::Kogito => kogito_event_subprocess_problem(index, p).is_some(),
            },
            _ => false,
        };
        if refused {
            return true;
        }
        parent = p.parent.as_deref();
    }
    false
}

fn definition_name(d: EventDefinition) -> &'static str {
    match d {
        EventDefinition::Message => "message",
        EventDefinition::Timer => "timer",
        EventDefinition::Error => "error",
        EventDefinition::Signal => "signal",
        EventDefinition::Escalation => "escalation",
        EventDefinition::Compensate => "compensation",
        EventDefinition::Conditional => "conditional",
        EventDefinition::Link => "link",
        EventDefinition::Cancel => "cancel",
        EventDefinition::Terminate => "terminate",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpmn::parse;

    fn refused(body: &str, engine: EngineKind) -> Vec<String> {
        let xml = format!(
            r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"><process id="p" isExecutable="true">{body}</process></definitions>"#
        );
        let doc = parse(std::path::Path::new("m.bpmn"), xml.as_bytes()).expect("parses");
        unsupported(doc.main_process().unwrap(), engine)
            .into_iter()
            .map(|u| format!("{}: {}", u.id, u.why))
            .collect()
    }

    /// Each element the engines would mis-run, and what each says about it.
    #[test]
    fn catalogue() {
        use EngineKind::{Flowable, Native};
        let cases: &[(&str, EngineKind, &[&str])] = &[
            (r#"<task id="a"/>"#, Native, &[]),
            (r#"<receiveTask id="r"/>"#, Native, &[]),
            // On Flowable and Kogito a receive task waits as a message catch event (the
            // run parks).
            (r#"<receiveTask id="r"/>"#, Flowable, &[]),
            (
                r#"<callActivity id="c" calledElement="other"/>"#,
                Native,
                &[],
            ),
            (
                r#"<callActivity id="c" calledElement="other"/>"#,
                Flowable,
                &[],
            ),
            (
                r#"<callActivity id="c" calledElement="other"/>"#,
                EngineKind::Kogito,
                &[],
            ),
            (r#"<callActivity id="c"/>"#, Native, &[]),
            (
                r#"<callActivity id="c" calledElement="other"><multiInstanceLoopCharacteristics><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics></callActivity>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<callActivity id="c" calledElement="other"><multiInstanceLoopCharacteristics><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics></callActivity>"#,
                Flowable,
                &[
                    "c: a parallel multi-instance callActivity: on Flowable only multi-instance tasks",
                ],
            ),
            (
                r#"<userTask id="m"><multiInstanceLoopCharacteristics isSequential="true"/></userTask>"#,
                Native,
                &["m: a multi-instance activity that names neither a collection"],
            ),
            (
                r#"<userTask id="m"><multiInstanceLoopCharacteristics isSequential="true"><loopCardinality>3</loopCardinality></multiInstanceLoopCharacteristics></userTask>"#,
                Native,
                &[],
            ),
            (
                r#"<userTask id="m"><multiInstanceLoopCharacteristics isSequential="true"><loopCardinality>3</loopCardinality></multiInstanceLoopCharacteristics></userTask>"#,
                Flowable,
                &[],
            ),
            (
                r#"<userTask id="m"><multiInstanceLoopCharacteristics isSequential="true"><loopCardinality>3</loopCardinality></multiInstanceLoopCharacteristics></userTask>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<userTask id="m"><multiInstanceLoopCharacteristics isSequential="true"/></userTask>"#,
                Flowable,
                &["m: a multi-instance activity that names neither a collection"],
            ),
            (
                r#"<subProcess id="s"><multiInstanceLoopCharacteristics><loopDataInputRef>items</loopDataInputRef></multiInstanceLoopCharacteristics><startEvent id="ss"/><task id="in"/><endEvent id="se"/></subProcess>"#,
                Flowable,
                &[],
            ),
            (
                r#"<subProcess id="s"><multiInstanceLoopCharacteristics><loopDataInputRef>items</loopDataInputRef></multiInstanceLoopCharacteristics><task id="in"/></subProcess>"#,
                Flowable,
                &["s: a parallel multi-instance subProcess with no end event"],
            ),
            (
                r#"<subProcess id="s"><multiInstanceLoopCharacteristics isSequential="true"><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics><startEvent id="ss"/><parallelGateway id="pg"/><task id="a"/><task id="b"/><endEvent id="se"/><sequenceFlow id="f1" sourceRef="ss" targetRef="pg"/><sequenceFlow id="f2" sourceRef="pg" targetRef="a"/><sequenceFlow id="f3" sourceRef="pg" targetRef="b"/></subProcess>"#,
                Flowable,
                &[
                    "s: a sequential multi-instance subProcess in which more than one token may run (`pg`)",
                ],
            ),
            (
                r#"<subProcess id="s"><multiInstanceLoopCharacteristics><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics><startEvent id="ss"/><task id="in"><multiInstanceLoopCharacteristics><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics></task><endEvent id="se"/></subProcess>"#,
                Flowable,
                &[
                    "s: a parallel multi-instance subProcess holding another multi-instance activity (`in`)",
                ],
            ),
            (
                r#"<subProcess id="s"><multiInstanceLoopCharacteristics><loopDataInputRef>items</loopDataInputRef></multiInstanceLoopCharacteristics><task id="in"/></subProcess>"#,
                Native,
                &[],
            ),
            (
                r#"<subProcess id="s"><multiInstanceLoopCharacteristics><loopDataInputRef>items</loopDataInputRef></multiInstanceLoopCharacteristics><task id="in"/></subProcess>"#,
                EngineKind::Kogito,
                &["s: a parallel multi-instance subProcess: on Kogito only multi-instance tasks"],
            ),
            (
                r#"<task id="l"><standardLoopCharacteristics/></task>"#,
                Native,
                &["l: a loop activity"],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><errorEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                Native,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><errorEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                Flowable,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><errorEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                EngineKind::Kogito,
                &["e: an event sub-process started by every error"],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><escalationEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><signalEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                EngineKind::Kogito,
                // The run parks for `runs signal`.
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es" name="Go"><signalEventDefinition/></startEvent><task id="et"/></subProcess><intermediateThrowEvent id="t" name="Go"><signalEventDefinition/></intermediateThrowEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><timerEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                EngineKind::Kogito,
                &["es: a timer event that names no time"],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></startEvent><task id="et"/></subProcess>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><timerEventDefinition><timeCycle>R3/PT1H</timeCycle></timerEventDefinition></startEvent><task id="et"/></subProcess>"#,
                EngineKind::Kogito,
                &[
                    "es: a repeating timer (timeCycle `R3/PT1H`): on Kogito cuga-flo fires a timer once",
                ],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></startEvent><task id="et"/></subProcess>"#,
                Flowable,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"/><task id="et"/></subProcess>"#,
                Native,
                &["e: an event sub-process whose start event names no trigger"],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es"><conditionalEventDefinition/></startEvent><receiveTask id="et"/></subProcess>"#,
                Native,
                &["e: an event sub-process started by a conditional event"],
            ),
            (
                r#"<adHocSubProcess id="h"><task id="ht"/></adHocSubProcess>"#,
                Native,
                &["h: an ad-hoc sub-process"],
            ),
            (
                r#"<intermediateCatchEvent id="m"><messageEventDefinition/></intermediateCatchEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="m"><messageEventDefinition/></intermediateCatchEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="s"><signalEventDefinition/></intermediateCatchEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="m" name="Go"><signalEventDefinition/></intermediateCatchEvent><endEvent id="e" name="Go"><signalEventDefinition/></endEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="m" name="Go"><signalEventDefinition/></intermediateCatchEvent><endEvent id="e" name="Go"><signalEventDefinition/></endEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="m"><messageEventDefinition/></intermediateCatchEvent>"#,
                EngineKind::Kogito,
                // The run parks for `runs message`.
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="m"><messageEventDefinition/></intermediateCatchEvent>"#,
                Flowable,
                &[],
            ),
            (r#"<receiveTask id="r"/>"#, EngineKind::Kogito, &[]),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><timerEventDefinition/></boundaryEvent>"#,
                EngineKind::Kogito,
                &["b: a timer event that names no time"],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></boundaryEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a" name="Stop"><messageEventDefinition/></boundaryEvent><intermediateThrowEvent id="t" name="Stop"><messageEventDefinition/></intermediateThrowEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="c"><conditionalEventDefinition/></intermediateCatchEvent>"#,
                Native,
                &["c: a conditional catch event"],
            ),
            (
                r#"<intermediateCatchEvent id="t"><timerEventDefinition/></intermediateCatchEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="t"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></intermediateCatchEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="t"><timerEventDefinition/></intermediateCatchEvent>"#,
                EngineKind::Kogito,
                &["t: a timer event that names no time"],
            ),
            (
                r#"<intermediateCatchEvent id="t"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></intermediateCatchEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<intermediateCatchEvent id="t"><timerEventDefinition><timeCycle>R/PT1M</timeCycle></timerEventDefinition></intermediateCatchEvent>"#,
                EngineKind::Kogito,
                &["t: a repeating timer (timeCycle `R/PT1M`)"],
            ),
            (
                r#"<intermediateCatchEvent id="k"><linkEventDefinition/></intermediateCatchEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><errorEventDefinition/></boundaryEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><errorEventDefinition/></boundaryEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><errorEventDefinition/></boundaryEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<subProcess id="a"/><boundaryEvent id="b" attachedToRef="a" cancelActivity="false"><escalationEventDefinition/></boundaryEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<subProcess id="a"/><boundaryEvent id="b" attachedToRef="a" cancelActivity="false"><escalationEventDefinition/></boundaryEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a" cancelActivity="false"><escalationEventDefinition/></boundaryEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><messageEventDefinition/></boundaryEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><messageEventDefinition/></boundaryEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><messageEventDefinition/></boundaryEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><signalEventDefinition/></boundaryEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><conditionalEventDefinition/></boundaryEvent>"#,
                Native,
                &["b: a conditional boundary event"],
            ),
            (
                r#"<endEvent id="x"><escalationEventDefinition/></endEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><timerEventDefinition/></boundaryEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></boundaryEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a"/>"#,
                Native,
                &["b: a boundary event with no event definition"],
            ),
            (
                r#"<endEvent id="x"><errorEventDefinition/></endEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<endEvent id="x"><errorEventDefinition/></endEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<endEvent id="x"><errorEventDefinition/></endEvent>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<intermediateThrowEvent id="x"><compensateEventDefinition/></intermediateThrowEvent>"#,
                Native,
                &["x: a compensation event"],
            ),
            (
                r#"<intermediateThrowEvent id="x"><signalEventDefinition/></intermediateThrowEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<startEvent id="s"><messageEventDefinition/></startEvent>"#,
                Native,
                &[],
            ),
            (
                r#"<startEvent id="s"><messageEventDefinition/></startEvent>"#,
                Flowable,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es" name="Stop"><messageEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                Flowable,
                &[],
            ),
            (
                r#"<subProcess id="e" triggeredByEvent="true"><startEvent id="es" name="Stop"><messageEventDefinition/></startEvent><task id="et"/></subProcess>"#,
                EngineKind::Kogito,
                &[],
            ),
            (
                r#"<subProcess id="sp"><startEvent id="s"><messageEventDefinition/></startEvent></subProcess>"#,
                Native,
                &["s: a message start event in a sub-process"],
            ),
            (r#"<receiveTask id="r"/>"#, EngineKind::Mcp, &[]),
            (
                r#"<intermediateCatchEvent id="t"><timerEventDefinition/></intermediateCatchEvent>"#,
                Flowable,
                &["t: a timer event that names no time"],
            ),
            (
                r#"<task id="a"/><boundaryEvent id="b" attachedToRef="a" cancelActivity="false"><timerEventDefinition><timeCycle>R3/PT1H</timeCycle></timerEventDefinition></boundaryEvent>"#,
                Flowable,
                &["b: a repeating timer (timeCycle `R3/PT1H`)"],
            ),
        ];
        for (body, engine, expected) in cases {
            let got = refused(body, *engine);
            assert_eq!(got.len(), expected.len(), "{body} on {engine:?}: {got:?}");
            for (got, want) in got.iter().zip(expected.iter()) {
                assert!(
                    got.starts_with(want),
                    "{body} on {engine:?}: {got} (want {want}…)"
                );
            }
        }
    }
}
