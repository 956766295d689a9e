//! The config against the model: every id the config names exists in the BPMN and is of
//! the right kind; policy files exist; remote agents are declared; the engine settings
//! fit the engine.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::app::{BUILTIN_AGENT_TYPES, EngineKind, FlowConfig, GatewayMode, Located, TaskMode};
use crate::bpmn::{Document, GatewayKind, ProcessIndex};
use crate::diag::{Diagnostic, did_you_mean, name_list, with_article};

/// What kind of model element a config entry must name.
#[derive(Clone, Copy)]
pub(super) enum Want {
    Task,
    Gateway,
    Flow,
    /// Any flow node (a hook target).
    Node,
    /// A task, sub-process or call activity.
    Activity,
}

impl Want {
    fn noun(self) -> &'static str {
        match self {
            Want::Task => "task",
            Want::Gateway => "gateway",
            Want::Flow => "sequence flow",
            Want::Node => "flow node",
            Want::Activity => "activity",
        }
    }
}

/// Is `id` an element of the wanted kind? If not, a diagnostic at `at` that says what it
/// is instead, or which ids come close.
pub(super) fn resolve(
    config: &FlowConfig,
    doc: &Document,
    index: &ProcessIndex,
    at: &Located<String>,
    want: Want,
    role: &str,
) -> Option<Diagnostic> {
    let id = at.value.as_str();
    let node = index.node(id);
    let flow = index.flow(id);
    let ok = match want {
        Want::Task => node.is_some_and(|n| n.kind.is_task()),
        Want::Gateway => node.is_some_and(|n| n.kind.is_gateway()),
        Want::Activity => node.is_some_and(|n| n.kind.is_activity()),
        Want::Node => node.is_some(),
        Want::Flow => flow.is_some(),
    };
    if ok || called_here(doc, index.process(), id, want) {
        return None;
    }
    let process = index.process();
    // `role` names the entry, with `{id}` where the id goes ("task", "the location {id} of hook `h`").
    let subject = if role.contains("{id}") {
        role.replace("{id}", &format!("`{id}`"))
    } else {
        format!("{role} `{id}`")
    };
    let model = doc.source.path().file_name().map_or_else(
        || doc.source.path().display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let d = Diagnostic::error(
        "ref::unknown_id",
        match (node, flow) {
            (Some(n), _) => format!(
                "{subject} is {} in {model}, not {}",
                with_article(n.kind.tag()),
                with_article(want.noun())
            ),
            (None, Some(_)) => format!(
                "{subject} is a sequence flow in {model}, not {}",
                with_article(want.noun())
            ),
            (None, None) => format!("{subject} is not in {model}"),
        },
    )
    .at(
        &config.source,
        at.span,
        format!("no {} with this id", want.noun()),
    );
    let candidates: Vec<&str> = match want {
        Want::Task => process.tasks().map(|n| n.id.as_str()).collect(),
        Want::Gateway => process.gateways().map(|n| n.id.as_str()).collect(),
        Want::Activity => process
            .nodes
            .iter()
            .filter(|n| n.kind.is_activity())
            .map(|n| n.id.as_str())
            .collect(),
        Want::Node => process.nodes.iter().map(|n| n.id.as_str()).collect(),
        Want::Flow => process.flows.iter().map(|f| f.id.as_str()).collect(),
    };
    let help = match (want, node) {
        (Want::Flow, Some(n)) => {
            let inc: Vec<_> = index
                .incoming(&n.id)
                .iter()
                .map(|f| f.id.as_str())
                .collect();
            format!(
                "hooks sit on sequence flows; the flows into `{id}` are {}",
                name_list(&inc, 6)
            )
        }
        _ => match did_you_mean(id, candidates.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "the {}s of process `{}` are {}",
                want.noun(),
                process.id,
                name_list(&candidates, 8)
            ),
        },
    };
    Some(d.with_help(help))
}

/// Is `id` an element of the wanted kind in another process of this file that a call
/// activity of `main` calls? Its child runs are answered by this app's config.
fn called_here(doc: &Document, main: &crate::bpmn::Process, id: &str, want: Want) -> bool {
    if matches!(want, Want::Flow) {
        return false;
    }
    let called: HashSet<String> = (main.nodes.iter())
        .filter_map(crate::bpmn::call_spec)
        .map(|spec| spec.called)
        .collect();
    (doc.processes.iter())
        .filter(|p| p.id != main.id && called.contains(&p.id))
        .flat_map(|p| p.nodes.iter())
        .any(|n| {
            n.id == id
                && match want {
                    Want::Task => n.kind.is_task(),
                    Want::Gateway => n.kind.is_gateway(),
                    Want::Activity => n.kind.is_activity(),
                    Want::Node | Want::Flow => true,
                }
        })
}

pub fn check(config: &FlowConfig, doc: &Document, main: Option<&ProcessIndex>) -> Vec<Diagnostic> {
    let mut out = check_without_model(config);
    let Some(index) = main else {
        return out;
    };
    let process = index.process();

    // tasks
    let mut seen: BTreeMap<&str, &Located<String>> = BTreeMap::new();
    for task in &config.tasks {
        if let Some(first) = seen.insert(task.id.as_str(), &task.id) {
            out.push(
                Diagnostic::error(
                    "ref::duplicate",
                    format!("task `{}` is configured twice", task.id.value),
                )
                .at(
                    &config.source,
                    task.id.span,
                    "configured again here".to_string(),
                )
                .also(first.span, "first configured here"),
            );
        }
        out.extend(resolve(config, doc, index, &task.id, Want::Task, "task"));
    }

    // gateways
    for gw in &config.gateways {
        if let Some(d) = resolve(config, doc, index, &gw.id, Want::Gateway, "gateway") {
            out.push(d);
            continue;
        }
        let Some(node) = index.node(&gw.id.value) else {
            continue;
        };
        let kind = node.kind.gateway();
        let outgoing: Vec<&str> = index
            .outgoing(&gw.id.value)
            .iter()
            .map(|f| f.id.as_str())
            .collect();
        let outgoing_set: HashSet<&str> = outgoing.iter().copied().collect();
        if gw.mode == GatewayMode::DecisionAgent {
            if kind == Some(GatewayKind::Parallel) {
                out.push(
                    Diagnostic::error(
                        "ref::gateway_mode",
                        format!("gateway `{}` is a parallel gateway; it takes every flow and has nothing to decide", gw.id.value),
                    )
                    .at(&config.source, gw.id.span, "cannot be a decision_agent".to_string())
                    .with_help("use `mode: native`, or make it an exclusive gateway in the model"),
                );
            } else if outgoing.len() < 2 {
                out.push(
                    Diagnostic::warning(
                        "ref::gateway_mode",
                        format!("gateway `{}` has {} outgoing flow(s); a decision agent has nothing to choose", gw.id.value, outgoing.len()),
                    )
                    .at(&config.source, gw.id.span, "nothing to decide".to_string())
                    .with_help("use `mode: native` for joins"),
                );
            }
        }
        for flow in &gw.flows {
            if outgoing_set.contains(flow.id.as_str()) {
                continue;
            }
            let help = did_you_mean(&flow.id.value, outgoing.iter().copied())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| {
                    format!(
                        "the outgoing flows of `{}` are {}",
                        gw.id.value,
                        name_list(&outgoing, 8)
                    )
                });
            out.push(
                Diagnostic::error(
                    "ref::not_outgoing",
                    format!(
                        "`{}` is not an outgoing flow of gateway `{}`",
                        flow.id.value, gw.id.value
                    ),
                )
                .at(
                    &config.source,
                    flow.id.span,
                    "not an outgoing flow".to_string(),
                )
                .with_help(help),
            );
        }
    }

    // engine-specific: a Kogito model drops variables it does not declare
    if config.engine.kind == EngineKind::Kogito && !process.properties.is_empty() {
        let properties: HashSet<&str> = process
            .properties
            .iter()
            .flat_map(|p| std::iter::once(p.id.as_str()).chain(p.name.as_deref()))
            .collect();
        for var in &config.variables {
            if !properties.contains(var.name.as_str()) {
                out.push(
                    Diagnostic::warning(
                        "ref::kogito_property",
                        format!(
                            "variable `{}` is not a <property> of process `{}`; Kogito drops it",
                            var.name.value, process.id
                        ),
                    )
                    .at(
                        &config.source,
                        var.name.span,
                        "undeclared in the model".to_string(),
                    )
                    .with_help(format!(
                        "add <bpmn:property id=\"{}\" .../> to the process",
                        var.name.value
                    )),
                );
            }
        }
    }
    out
}

/// The checks that need no model: policies, agents, engine settings, mode consistency.
pub fn check_without_model(config: &FlowConfig) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let src = &config.source;

    // policy files
    let mut policies: Vec<(&Located<String>, String)> = Vec::new();
    for t in &config.tasks {
        policies.extend(
            t.policy
                .as_ref()
                .map(|p| (p, format!("task `{}`", t.id.value))),
        );
    }
    for g in &config.gateways {
        policies.extend(
            g.policy
                .as_ref()
                .map(|p| (p, format!("gateway `{}`", g.id.value))),
        );
    }
    for h in &config.hooks {
        policies.extend(
            h.policy
                .as_ref()
                .map(|p| (p, format!("hook `{}`", h.id.value))),
        );
    }
    // Many entries may share one policy: each file is read once.
    let mut read: HashMap<std::path::PathBuf, Result<bool, String>> = HashMap::new();
    for (policy, owner) in policies {
        let path = config.resolve(&policy.value);
        let empty = read.entry(path.clone()).or_insert_with(|| {
            crate::source::read_text(&path)
                .map(|text| text.trim().is_empty())
                .map_err(|e| io_reason(&e))
        });
        match empty {
            Ok(true) => out.push(
                Diagnostic::warning(
                    "ref::empty_policy",
                    format!("the policy of {owner} is empty"),
                )
                .at(src, policy.span, format!("{} is empty", path.display()))
                .with_help("write what the agent must decide and how"),
            ),
            Ok(false) => {}
            Err(reason) => out.push(
                Diagnostic::error(
                    "ref::missing_policy",
                    format!("the policy file of {owner} cannot be read: {reason}"),
                )
                .at(src, policy.span, format!("looked for {}", path.display()))
                .with_help("policy paths are relative to the config file"),
            ),
        }
    }

    // agents: built-in kinds or declared remote agents
    let remote_names: Vec<&str> = config
        .remote_agents
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    let remote_set: HashSet<&str> = remote_names.iter().copied().collect();
    let remote_ref = |at: &Located<String>, where_: String, out: &mut Vec<Diagnostic>| {
        if remote_set.contains(at.as_str()) {
            return;
        }
        let known = if remote_names.is_empty() {
            "none are declared".to_string()
        } else {
            name_list(&remote_names, 8)
        };
        out.push(
            Diagnostic::error(
                "ref::unknown_agent",
                format!("{where_} refers to remote agent `{}`, which is not declared under `remote_agents:`", at.value),
            )
            .at(src, at.span, "undeclared remote agent".to_string())
            .with_help(format!("declared remote agents: {known}")),
        );
    };
    for t in &config.tasks {
        let what = format!("task `{}`", t.id.value);
        if let Some(kind) = t.agent.as_ref().and_then(|a| a.agent_type.as_ref())
            && !BUILTIN_AGENT_TYPES.contains(&kind.as_str())
        {
            remote_ref(kind, format!("the agent_type of {what}"), &mut out);
        }
        match t.mode {
            TaskMode::TaskAgent if t.agent.is_none() && t.instruction.is_none() && t.policy.is_none() => out.push(
                Diagnostic::error("config::no_agent", format!("{what} is a task agent but says nothing about what to do"))
                    .at(src, t.id.span, "no `agent:` block".to_string())
                    .with_help("add `agent: {name: ..., system_instruction: ..., policy: ...}`, or use `mode: native`"),
            ),
            TaskMode::Native if t.agent.is_some() => out.push(
                Diagnostic::warning("config::ignored", format!("{what} is `mode: native`, so its `agent:` block is ignored"))
                    .at(src, t.mode_written.as_ref().map_or(t.id.span, |m| m.span), "native: no reasoning".to_string())
                    .with_help("remove `mode: native` to run the agent"),
            ),
            _ => {}
        }
        if t.mode == TaskMode::Native && !t.output_mapping.is_empty() {
            out.push(
                Diagnostic::warning(
                    "config::ignored",
                    format!("{what} is native, so its `output_mapping` never receives outputs"),
                )
                .at(
                    src,
                    t.output_mapping[0].0.span,
                    "no agent produces this".to_string(),
                ),
            );
        }
    }
    for g in &config.gateways {
        let what = format!("gateway `{}`", g.id.value);
        if let Some(h) = &g.human_consultation {
            remote_ref(h, format!("the human_consultation of {what}"), &mut out);
        }
        if g.mode == GatewayMode::Native {
            for (key, value) in [
                ("condition", &g.condition),
                ("policy", &g.policy),
                ("human_consultation", &g.human_consultation),
            ] {
                if let Some(v) = value {
                    out.push(
                        Diagnostic::warning(
                            "config::ignored",
                            format!("`{key}` of {what} is ignored: a native gateway routes by the conditions of its flows"),
                        )
                        .at(src, v.span, "ignored".to_string())
                        .with_help("set `mode: decision_agent`, or move the condition to `flows.<flow id>.condition`"),
                    );
                }
            }
        }
    }
    for h in &config.hooks {
        if let Some(c) = &h.human_consultation {
            remote_ref(
                c,
                format!("the human_consultation of hook `{}`", h.id.value),
                &mut out,
            );
        }
    }
    for r in &config.remote_agents {
        if let Some(url) = r.url.as_ref().filter(|u| !is_http_url(&u.value)) {
            out.push(
                Diagnostic::error(
                    "config::url",
                    format!(
                        "the url of remote agent `{}` is not an http(s) URL",
                        r.name.value
                    ),
                )
                .at(src, url.span, "expected http://host:port/...".to_string()),
            );
        }
    }

    // engine settings
    let engine = &config.engine;
    if matches!(
        engine.kind,
        EngineKind::Flowable | EngineKind::Kogito | EngineKind::Mcp
    ) {
        match &engine.url {
            None => out.push(
                Diagnostic::error(
                    "config::engine",
                    format!("the {} engine needs a `url`", engine.kind),
                )
                .at(
                    src,
                    engine
                        .kind_written
                        .as_ref()
                        .map_or(engine.span.unwrap_or_default(), |k| k.span),
                    "no url".to_string(),
                )
                .with_help("add `url:` under `workflow_engine:`"),
            ),
            Some(url) if !is_http_url(&url.value) => out.push(
                Diagnostic::error(
                    "config::url",
                    "the engine `url` is not an http(s) URL".to_string(),
                )
                .at(src, url.span, "expected http://host:port/...".to_string()),
            ),
            Some(_) => {}
        }
    }
    if engine.kind.is_external_bpm() {
        for h in &config.hooks {
            if let Some(loc) = h.location.as_ref().filter(|l| l.value != h.id.value) {
                out.push(
                    Diagnostic::error(
                        "config::hook_id",
                        format!(
                            "on the {} engine a hook's id must equal its location: `{}` ≠ `{}`",
                            engine.kind, h.id.value, loc.value
                        ),
                    )
                    .at(
                        src,
                        h.id.span,
                        "the engine calls back with the flow id".to_string(),
                    )
                    .with_help(format!("write `id: {}`", loc.value)),
                );
            }
        }
    }
    for var in &config.variables {
        if !is_identifier(&var.name.value) {
            out.push(
                Diagnostic::warning(
                    "config::variable_name",
                    format!(
                        "variable `{}` cannot be named in a `${{...}}` condition",
                        var.name.value
                    ),
                )
                .at(src, var.name.span, "not an identifier".to_string())
                .with_help(format!(
                    "use letters, digits and `_`, starting with a letter or `_` (FEEL conditions name it as `{}`)",
                    feel_name(&var.name.value)
                )),
            );
        }
    }
    out
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        _ => e.to_string(),
    }
}

/// How a FEEL condition names a variable: as written when it is words separated by single
/// spaces (FEEL names may contain spaces), else between backticks.
fn feel_name(name: &str) -> String {
    let words = name.split(' ').all(|w| {
        let mut chars = w.chars();
        chars
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '?')
            && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '?')
    });
    if words {
        name.to_string()
    } else {
        format!("`{name}`")
    }
}

pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_http_url(s: &str) -> bool {
    let rest = s
        .strip_prefix("http://")
        .or_else(|| s.strip_prefix("https://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
}
