//! What the app's engine can run: on Flowable and Kogito, the hook actions their adapters
//! can realise and the model elements the rewrite for them can carry
//! ([`crate::semantics::rewrite`]).

use crate::app::{EngineKind, FlowConfig};
use crate::bpmn::{Document, ProcessIndex, TimerKind, parse_date_time, parse_duration};
use crate::diag::Diagnostic;
use crate::semantics::rewrite::{self, UNREALISABLE};
use crate::semantics::support;

/// The checks for running the app on `engine` (which `start --engine` may choose).
pub fn check_for(
    config: &FlowConfig,
    doc: &Document,
    main: Option<&ProcessIndex>,
    engine: EngineKind,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let name = match engine {
        EngineKind::Flowable => "Flowable",
        EngineKind::Kogito => "Kogito",
        EngineKind::Native => {
            let mut out = native(doc, main);
            out.extend(scripts(doc, Some(config)));
            return out;
        }
        EngineKind::Mcp => return out,
    };
    // cuga-flo answers the tasks of Flowable and Kogito too: their scripts are its to run.
    out.extend(scripts(doc, Some(config)));
    let src = &config.source;
    let permissions = &config.permissions;
    let allowed: Vec<String> = UNREALISABLE
        .into_iter()
        .filter(|a| permissions.allows(*a))
        .map(|a| a.to_string())
        .collect();
    // Without hooks no action is ever taken.
    if !allowed.is_empty() && !config.hooks.is_empty() {
        let span = permissions
            .permitted
            .iter()
            .find(|p| UNREALISABLE.contains(&p.value))
            .map(|p| p.span)
            .or(permissions.span)
            .or_else(|| config.hooks.first().map(|h| h.id.span))
            .unwrap_or_default();
        let help = if permissions.permitted.is_empty() {
            format!(
                "list the permitted actions, or add {} to `prohibited_actions`",
                allowed.join(", ")
            )
        } else {
            format!("take {} out of `permitted_actions`", allowed.join(", "))
        };
        out.push(
            Diagnostic::error(
                "engine::unrealisable_action",
                format!(
                    "on {name}, hooks cannot take {}: they change the topology of a deployed \
                     process",
                    allowed.join(", ")
                ),
            )
            .at(src, span, "permitted here".to_string())
            .with_help(help),
        );
    }
    if let Some(index) = main {
        out.extend(unsupported_elements(doc, index, engine, name));
        for (id, why) in rewrite::limits(index.process()) {
            let span = index
                .node(&id)
                .map(|n| n.span)
                .or_else(|| index.flow(&id).map(|f| f.span))
                .unwrap_or(index.process().span);
            out.push(
                Diagnostic::error(
                    "engine::unsupported_element",
                    format!("`{id}` cannot run on {name}: {why}"),
                )
                .at(&doc.source, span, "here".to_string()),
            );
        }
    }
    out
}

/// The elements `engine` would mis-run ([`support`]), each refused where it is written.
fn unsupported_elements(
    doc: &Document,
    index: &ProcessIndex,
    engine: EngineKind,
    name: &str,
) -> Vec<Diagnostic> {
    support::unsupported_in(index, engine)
        .into_iter()
        .map(|u| {
            Diagnostic::error(
                "engine::unsupported_element",
                format!("`{}` cannot run on {name}: it is {}", u.id, u.why),
            )
            .at(&doc.source, u.span, "here".to_string())
            .with_help(UNSUPPORTED_HELP)
        })
        .collect()
}

/// A model validated without an app: what an app with this model would be refused for on
/// the native engine (the default), as it is refused there (`validate FILE` and `validate
/// APP` give the same verdict on the same model). An app may choose another engine: the
/// help says so.
pub fn check_model(doc: &Document, main: Option<&ProcessIndex>) -> Vec<Diagnostic> {
    let mut out = native(doc, main);
    for d in &mut out {
        if d.code == "engine::unsupported_element" {
            d.help = Some(format!(
                "{} (in an app, `workflow_engine:` may choose Flowable or Kogito, which run \
                 more)",
                d.help.clone().unwrap_or_default()
            ));
        }
    }
    out.extend(scripts(doc, None));
    out
}

/// Script tasks whose script nothing runs, in every process of the model (a process the
/// app does not start may be called): cuga-flo runs no scripts (a script is code, and
/// untrusted text never becomes code), so such a task would pass without its script
/// unless the config gives it to an agent or a tool (`config`: the app's; none for a
/// model on its own).
pub fn scripts(doc: &Document, config: Option<&FlowConfig>) -> Vec<Diagnostic> {
    let fulfilled = |id: &str| {
        config
            .and_then(|c| c.task(id))
            .is_some_and(|t| t.mode == crate::app::TaskMode::TaskAgent || t.tool.is_some())
    };
    (doc.processes.iter())
        .flat_map(|p| p.nodes.iter())
        .filter(|n| n.script.is_some() && !fulfilled(&n.id))
        .map(|n| {
            let format = n
                .attributes
                .iter()
                .find(|(k, _)| k.rsplit(':').next() == Some("scriptFormat"))
                .map(|(_, v)| format!("{} ", v.trim()))
                .unwrap_or_default();
            Diagnostic::error(
                "engine::script",
                format!(
                    "script task `{}` has a {format}script, which cuga-flo does not run: the \
                     task would pass without it",
                    n.id
                ),
            )
            .at(
                &doc.source,
                n.span,
                "a script task with a script".to_string(),
            )
            .with_help(format!(
                "give the task to an agent (`tasks: [{{id: {}, mode: task_agent}}]` with the \
                 script's intent as its policy), a tool (`tool:`) or a command agent; or \
                 remove the script",
                n.id
            ))
        })
        .collect()
}

const UNSUPPORTED_HELP: &str = "cuga-flo refuses a model it would run differently from what it \
     says; model the behaviour with the elements it runs (docs/validate.md lists them), or \
     leave the element out";

/// What the native engine cannot run as written: the elements it would mis-run, timers
/// without a time, repeating timers, and times that are not ISO 8601.
fn native(doc: &Document, main: Option<&ProcessIndex>) -> Vec<Diagnostic> {
    let Some(index) = main else {
        return Vec::new();
    };
    let mut out = unsupported_elements(doc, index, EngineKind::Native, "the native engine");
    out.extend(multi_instance_expressions(doc, index));
    for node in &index.process().nodes {
        let Some(timer) = &node.timer else { continue };
        // A timer start event at process level says when runs start, which is up to whoever
        // starts them (`start`, `serve`): in a run it is a start event like any other.
        if node.parent.is_none() && matches!(node.kind, crate::bpmn::NodeKind::StartEvent { .. }) {
            continue;
        }
        let span = if timer.span == Default::default() {
            node.span
        } else {
            timer.span
        };
        let problem = match timer.kind {
            None => Some((
                "bpmn::timer",
                format!(
                    "timer event `{}` names no time: it has no timeDuration, timeDate or timeCycle",
                    node.id
                ),
                "add <timeDuration>PT1H</timeDuration> (or a timeDate) to its timerEventDefinition",
            )),
            Some(TimerKind::Cycle) => Some((
                "engine::unsupported_element",
                format!(
                    "timer event `{}` repeats (timeCycle `{}`): the native engine does not run repeating timers",
                    node.id, timer.expression
                ),
                "use a timeDuration on a timer in a loop, or run the app on Flowable or Kogito",
            )),
            Some(kind) if timer.variable().is_none() => {
                let checked = match kind {
                    TimerKind::Duration => parse_duration(&timer.expression).map(|_| ()),
                    _ => parse_date_time(&timer.expression).map(|_| ()),
                };
                checked.err().map(|why| {
                    (
                        "bpmn::timer",
                        format!("timer event `{}`: {why}", node.id),
                        "write an ISO 8601 duration (PT30S, P1DT2H) or date-time \
                         (2026-12-01T09:00:00Z), or ${variable} to read one from a variable",
                    )
                })
            }
            Some(_) => None,
        };
        if let Some((code, message, help)) = problem {
            out.push(
                Diagnostic::error(code, message)
                    .at(&doc.source, span, kind_label(timer.kind))
                    .with_help(help),
            );
        }
    }
    out
}

/// The expressions of the multi-instance activities the native engine runs, each one
/// readable: the collection, cardinality, output element and completion condition.
fn multi_instance_expressions(doc: &Document, index: &ProcessIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for node in &index.process().nodes {
        let Some(looping) = &node.looping else {
            continue;
        };
        let m = &looping.multi;
        let language = m.language.as_deref();
        let parts = [
            ("collection", &m.collection),
            ("cardinality", &m.cardinality),
            ("output element", &m.output_element),
            ("completion condition", &m.completion_condition),
        ];
        for (what, text) in parts {
            let Some(text) = text else { continue };
            if let Some(why) = crate::semantics::instances::unreadable(text, language) {
                out.push(
                    Diagnostic::error(
                        "expr::syntax",
                        format!(
                            "multi-instance activity `{}`: its {what} `{text}` cannot be read: {why}",
                            node.id
                        ),
                    )
                    .at(&doc.source, looping.span, "in these loop characteristics".to_string())
                    .with_help(
                        "write a variable name, a condition in cuga-flo's language (`${...}`) or \
                         FEEL (`= ...`); docs/validate.md#multi-instance-activities",
                    ),
                );
            }
        }
    }
    out
}

fn kind_label(kind: Option<TimerKind>) -> String {
    kind.map_or_else(|| "this timer".to_string(), |k| format!("this {}", k.tag()))
}
