//! What a person sees before a run (`cuga-flo describe`): every control point of an app
//! (its tasks, gateways and hooks) with what its config says about it and who decides
//! there, the guarantees every run keeps, and who answers a question (the judgement chain
//! as a run's plan builds it), as one document the CLI renders or prints as JSON.

use serde::Serialize;

use crate::app::rules::parse_rules;
use crate::app::{
    ActionSpec, FlowConfig, GatewayMode, GuaranteeRule, HookConfig, LoadedApp, OnFailure, TaskMode,
};
use crate::bpmn::Process;
use crate::reason::Reasoner;
use crate::reason::llm::LlmReasoner;
use crate::vocab::VarKind;

/// `1 noun` or `n nouns` (`policies`).
pub fn count(n: usize, noun: &str) -> String {
    match noun {
        "policy" if n != 1 => format!("{n} policies"),
        _ => crate::diag::count(n, noun),
    }
}

/// Why an app cannot be described: it does not load.
#[derive(Debug, thiserror::Error)]
#[error("app `{app}` does not load")]
pub struct DescribeError {
    pub app: String,
}

impl super::Help for DescribeError {
    fn help(&self) -> Option<String> {
        Some(format!("`cuga-flo validate {}` says why", self.app))
    }
}

/// An element of the model: its id and its name (when it has one).
#[derive(Debug, Serialize)]
pub struct Element {
    pub id: String,
    pub name: Option<String>,
}

impl Element {
    fn of(process: &Process, id: &str) -> Element {
        Element {
            id: id.to_owned(),
            name: process
                .node(id)
                .and_then(|n| n.name.clone())
                .map(|n| flat(&n))
                .filter(|n| !n.is_empty()),
        }
    }
}

/// A policy file a control point names, and how many deterministic rules it holds.
#[derive(Debug, Serialize)]
pub struct PolicyRef {
    /// As written in the config.
    pub path: String,
    /// Rules read from its `rules` blocks (`None`: the file cannot be read or has bad
    /// rules; `validate` says why).
    pub rules: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct Output {
    /// The key the task's answer carries.
    pub output: String,
    /// The process variable it is written to.
    pub variable: String,
    /// The variable's kind, from its declared default.
    pub kind: VarKind,
}

#[derive(Debug, Serialize)]
pub struct TaskDesc {
    #[serde(flatten)]
    pub element: Element,
    /// The BPMN element (`userTask`, ...).
    pub element_kind: String,
    pub configured: bool,
    pub mode: TaskMode,
    pub agent: Option<String>,
    pub agent_type: Option<String>,
    pub tool: Option<String>,
    pub policy: Option<PolicyRef>,
    pub outputs: Vec<Output>,
    pub raises: Vec<String>,
    pub on_failure: OnFailure,
    pub decided_by: Vec<String>,
    /// The tools its agent may call (of the config's tool sources).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<TaskTool>,
    /// Its budget of tool calls per visit, when it has tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u64>,
}

/// A tool a task's agent may call, and who confirms its calls.
#[derive(Debug, Serialize)]
pub struct TaskTool {
    /// `<source>.<tool>`, or the entry as written (`<source>.*`) when what its source
    /// offers is not known.
    pub tool: String,
    /// Who confirms a call before it is made.
    pub confirm: String,
}

/// The tools a task names and who confirms each (what the sources offer as known without
/// reaching them: OpenAPI documents, the tools lock).
fn task_tools(
    config: &FlowConfig,
    known: &crate::tools::Known,
    t: &crate::app::TaskConfig,
) -> Vec<TaskTool> {
    let Some(agent) = &t.agent else {
        return Vec::new();
    };
    let on_untrusted = match config.permissions.on_untrusted {
        crate::app::OnUntrusted::Confirm => {
            "a person confirms a call made on untrusted data (`on_untrusted: confirm`)"
        }
        crate::app::OnUntrusted::Deny => {
            "a call made on untrusted data is denied (`on_untrusted: deny`)"
        }
        crate::app::OnUntrusted::Allow => "nobody (`on_untrusted: allow`)",
    };
    let mut out: Vec<TaskTool> = Vec::new();
    for entry in &agent.tools {
        let Some(source) = crate::tools::ToolRef::parse(&entry.value).source() else {
            continue;
        };
        if !known.sources.contains_key(source) {
            continue;
        }
        match known.named(&entry.value) {
            Some(specs) if !specs.is_empty() => {
                for spec in specs {
                    let confirm = match spec.confirm {
                        Some(crate::app::Confirm::Always) => {
                            "a person confirms each call (`confirm: true`)".to_string()
                        }
                        Some(crate::app::Confirm::Never) => {
                            "nobody: `confirm: never` in the config".to_string()
                        }
                        None if spec.destructive => {
                            "a person confirms each call (it may destroy or overwrite)".to_string()
                        }
                        None if spec.read_only => "nobody (read-only)".to_string(),
                        None => on_untrusted.to_string(),
                    };
                    if !out.iter().any(|o| o.tool == spec.qualified()) {
                        out.push(TaskTool {
                            tool: spec.qualified(),
                            confirm,
                        });
                    }
                }
            }
            _ => out.push(TaskTool {
                tool: entry.value.clone(),
                confirm: "not known until its server is reached (`cuga-flo tools <app> --lock` records it)".to_string(),
            }),
        }
    }
    out
}

#[derive(Debug, Serialize)]
pub struct FlowDesc {
    pub id: String,
    pub name: Option<String>,
    pub target: Element,
    /// The condition that decides it (the config's, else the model's).
    pub condition: Option<String>,
    /// The config's `decision` label.
    pub decision: Option<String>,
    pub default: bool,
}

#[derive(Debug, Serialize)]
pub struct GatewayDesc {
    #[serde(flatten)]
    pub element: Element,
    /// `exclusive`, `parallel`, `inclusive`, `event_based`, `complex`.
    pub kind: crate::bpmn::GatewayKind,
    pub configured: bool,
    pub mode: GatewayMode,
    pub condition: Option<String>,
    pub policy: Option<PolicyRef>,
    pub human_consultation: Option<String>,
    pub flows: Vec<FlowDesc>,
    pub default_flow: Option<String>,
    pub on_failure: OnFailure,
    pub consequential: bool,
    pub decided_by: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct HookPermissions {
    /// The actions it may take (the app's permissions).
    pub actions: Vec<String>,
    /// `any`, or the node ids a skip_to / swap_nodes / remove_node may name.
    pub allowed_targets: Vec<Element>,
    pub any_target: bool,
    pub insertable_tasks: Vec<String>,
    pub may_set: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct HookDesc {
    pub id: String,
    /// The sequence flow it sits on.
    pub flow: Option<String>,
    pub source: Option<Element>,
    pub target: Option<Element>,
    pub enabled: bool,
    /// A static action (no judgement), when the config gives one.
    pub action: Option<String>,
    pub condition: Option<String>,
    pub instruction: Option<String>,
    pub policy: Option<PolicyRef>,
    pub human_consultation: Option<String>,
    pub permissions: HookPermissions,
    pub on_failure: OnFailure,
    pub decided_by: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct GuaranteeDesc {
    pub id: String,
    /// The rule in words, by node names.
    pub rule: String,
}

/// One link of the judgement chain.
#[derive(Debug, Serialize)]
pub struct Answerer {
    /// `rules`, `scenario`, `model`, `remote`, `person`, `park`.
    pub source: &'static str,
    /// Whether it is part of a plain `start` of this app.
    pub active: bool,
    pub detail: String,
}

#[derive(Debug, Serialize)]
pub struct Description {
    pub app: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub process: Element,
    /// What a run takes: every declared variable, its kind and default, whether it is
    /// required, and what it holds.
    pub inputs: Vec<InputDesc>,
    pub engine: String,
    /// The engine's URL, without credentials.
    pub engine_url: Option<String>,
    pub tasks: Vec<TaskDesc>,
    pub gateways: Vec<GatewayDesc>,
    pub hooks: Vec<HookDesc>,
    pub permitted_actions: Vec<String>,
    pub on_denied: crate::app::OnDenied,
    pub on_untrusted: crate::app::OnUntrusted,
    pub guarantees: Vec<GuaranteeDesc>,
    pub judgement: Vec<Answerer>,
}

/// A declared variable as a run input.
#[derive(Debug, Clone, Serialize)]
pub struct InputDesc {
    pub name: String,
    /// `string`, `number`, `boolean`, ... (its default's type).
    pub kind: String,
    pub default: serde_json::Value,
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The description of a loaded app (`env` reads the environment, for the model).
pub fn describe(
    loaded: &LoadedApp,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Description, DescribeError> {
    let not_loaded = || DescribeError {
        app: loaded.name.clone(),
    };
    let config = loaded.config.as_ref().ok_or_else(not_loaded)?;
    let process = loaded.process().ok_or_else(not_loaded)?;

    let policy = |p: &Option<crate::app::Located<String>>| {
        p.as_ref().map(|p| PolicyRef {
            path: p.value.clone(),
            rules: crate::source::read_text(config.resolve(&p.value))
                .ok()
                .and_then(|text| parse_rules(&text).ok())
                .map(|r| r.len()),
        })
    };
    let rules_first = |p: &Option<PolicyRef>, by: &mut Vec<String>| {
        if let Some(n) = p.as_ref().and_then(|p| p.rules).filter(|n| *n > 0) {
            by.push(format!("{} in its policy", count(n, "rule")));
        }
    };

    let known = crate::tools::Known::of(config);
    let tasks = (process.nodes.iter())
        .filter(|n| n.kind.is_task())
        .map(|node| {
            let t = config.task(&node.id);
            let mode = t.map_or(TaskMode::Native, |t| t.mode);
            let policy = t.and_then(|t| policy(&t.policy));
            let outputs = (t.map(|t| t.output_mapping.as_slice()).unwrap_or_default())
                .iter()
                .map(|(k, v)| Output {
                    output: k.value.clone(),
                    variable: v.value.clone(),
                    kind: config
                        .variable(&v.value)
                        .map_or(VarKind::Any, |d| VarKind::of(&d.default)),
                })
                .collect();
            let tools = t.map(|t| task_tools(config, &known, t)).unwrap_or_default();
            let mut decided_by = Vec::new();
            match mode {
                TaskMode::Native => decided_by.push(match t.and_then(|t| t.tool.as_ref()) {
                    Some(tool) => format!("tool `{}` (no judgement)", tool.value),
                    None => "nobody: a pass-through (no judgement)".to_owned(),
                }),
                TaskMode::TaskAgent => {
                    let remote = t
                        .and_then(|t| t.agent.as_ref())
                        .and_then(|a| a.agent_type.as_ref())
                        .filter(|k| config.remote_agent(&k.value).is_some());
                    match remote {
                        // Delegated: the remote agent fulfils it; its questions
                        // (input-required) go to the reasoners below.
                        Some(k) => decided_by.push(format!(
                            "remote agent `{}` over A2A (its questions: the task agent, below)",
                            k.value
                        )),
                        None => decided_by.push("the task agent (who answers, below)".to_owned()),
                    }
                }
            }
            TaskDesc {
                element: Element::of(process, &node.id),
                element_kind: node.kind.tag().to_owned(),
                configured: t.is_some(),
                mode,
                agent: t.and_then(|t| t.agent.as_ref()?.name.as_ref().map(|n| n.value.clone())),
                agent_type: t.and_then(|t| {
                    t.agent
                        .as_ref()?
                        .agent_type
                        .as_ref()
                        .map(|n| n.value.clone())
                }),
                tool: t.and_then(|t| t.tool.as_ref().map(|n| n.value.clone())),
                policy,
                outputs,
                raises: t
                    .map(|t| t.raises.iter().map(|r| r.value.clone()).collect())
                    .unwrap_or_default(),
                on_failure: t
                    .and_then(|t| t.on_failure.as_ref().map(|o| o.value))
                    .unwrap_or(OnFailure::Fail),
                decided_by,
                max_tool_calls: (!tools.is_empty()).then(|| {
                    t.and_then(|t| t.agent.as_ref()?.max_tool_calls.as_ref().map(|m| m.value))
                        .unwrap_or(crate::app::DEFAULT_MAX_TOOL_CALLS)
                }),
                tools,
            }
        })
        .collect();

    let gateways = (process.nodes.iter())
        .filter_map(|n| Some((n, n.kind.gateway()?)))
        .map(|(node, kind)| {
            let g = config.gateway(&node.id);
            let mode = g.map_or(GatewayMode::Native, |g| g.mode);
            let policy = g.and_then(|g| policy(&g.policy));
            let flows: Vec<FlowDesc> = process
                .outgoing(&node.id)
                .map(|f| {
                    let cf = g.and_then(|g| g.flows.iter().find(|x| x.id.value == f.id));
                    FlowDesc {
                        id: f.id.clone(),
                        name: f.name.as_deref().map(flat).filter(|n| !n.is_empty()),
                        target: Element::of(process, &f.target),
                        condition: cf
                            .and_then(|c| c.condition.as_ref().map(|c| c.value.clone()))
                            .or_else(|| f.condition.as_ref().map(|c| flat(&c.body))),
                        decision: cf.and_then(|c| c.decision.as_ref().map(|d| flat(&d.value))),
                        default: node.default_flow.as_deref() == Some(f.id.as_str()),
                    }
                })
                .collect();
            let mut decided_by = Vec::new();
            let has_conditions = flows.iter().any(|f| f.condition.is_some())
                || g.is_some_and(|g| g.condition.is_some() && !g.condition_is_question());
            match kind {
                _ if flows.len() <= 1 => decided_by.push("nobody: a join (one way out)".to_owned()),
                crate::bpmn::GatewayKind::Parallel => {
                    decided_by.push("nobody: every flow is taken".to_owned())
                }
                _ => {
                    if has_conditions {
                        decided_by.push("the conditions".to_owned());
                    }
                    if mode == GatewayMode::DecisionAgent {
                        rules_first(&policy, &mut decided_by);
                        if let Some(q) = g.and_then(|g| g.human_consultation.as_ref()) {
                            decided_by.push(format!(
                                "a person the model consults (human_consultation: remote agent `{}`)",
                                q.value
                            ));
                        }
                        decided_by.push("the decision agent (who answers, below)".to_owned());
                    } else if flows.iter().any(|f| f.default) {
                        decided_by.push("the default flow".to_owned());
                    }
                }
            }
            GatewayDesc {
                element: Element::of(process, &node.id),
                kind,
                configured: g.is_some(),
                mode,
                condition: g.and_then(|g| g.condition.as_ref().map(|c| flat(&c.value))),
                policy,
                human_consultation: g
                    .and_then(|g| g.human_consultation.as_ref().map(|c| c.value.clone())),
                default_flow: node.default_flow.clone(),
                flows,
                on_failure: g
                    .and_then(|g| g.on_failure.as_ref().map(|o| o.value))
                    .unwrap_or(OnFailure::Ask),
                consequential: g.is_some_and(|g| g.consequential),
                decided_by,
            }
        })
        .collect();

    let allowed: Vec<String> = config
        .permissions
        .allowed()
        .iter()
        .map(|a| a.as_str().to_owned())
        .collect();
    let hooks = config
        .hooks
        .iter()
        .map(|h| hook(h, process, &allowed, &policy, &rules_first))
        .collect();

    let name = |id: &crate::app::Located<String>| {
        let e = Element::of(process, &id.value);
        e.name.unwrap_or(e.id)
    };
    let names =
        |ids: &[crate::app::Located<String>]| ids.iter().map(name).collect::<Vec<_>>().join(", ");
    let guarantees = config
        .guarantees
        .iter()
        .map(|g| GuaranteeDesc {
            id: g.id.value.clone(),
            rule: match &g.rule {
                GuaranteeRule::OnlyAfter { reach, after } => {
                    format!("{} is reached only after {}", name(reach), names(after))
                }
                GuaranteeRule::AlwaysVisit(ids) => {
                    format!("every completed run executes {}", names(ids))
                }
                GuaranteeRule::NeverReach(ids) => format!("no run reaches {}", names(ids)),
            },
        })
        .collect();

    Ok(Description {
        app: loaded.name.clone(),
        name: config.flow.name.as_ref().map(|n| n.value.clone()),
        description: config.flow.description.as_ref().map(|n| flat(&n.value)),
        process: Element {
            id: process.id.clone(),
            name: process.name.clone(),
        },
        inputs: (config.variables.iter())
            .map(|v| {
                let input = config.input(&v.name.value);
                InputDesc {
                    name: v.name.value.clone(),
                    kind: VarKind::of(&v.default).as_str().to_owned(),
                    default: v.default.clone(),
                    required: input.is_some_and(|i| i.required),
                    description: input.and_then(|i| i.description.as_deref()).map(flat),
                }
            })
            .collect(),
        engine: config.engine.kind.as_str().to_owned(),
        engine_url: config
            .engine
            .url
            .as_ref()
            .map(|u| crate::secret::redact_urls(&u.value)),
        tasks,
        gateways,
        hooks,
        permitted_actions: allowed,
        on_denied: config.permissions.on_denied,
        on_untrusted: config.permissions.on_untrusted,
        guarantees,
        judgement: judgement(loaded, config, env),
    })
}

fn hook(
    h: &HookConfig,
    process: &Process,
    allowed: &[String],
    policy: &dyn Fn(&Option<crate::app::Located<String>>) -> Option<PolicyRef>,
    rules_first: &dyn Fn(&Option<PolicyRef>, &mut Vec<String>),
) -> HookDesc {
    let flow = h.location.as_ref().and_then(|l| process.flow(&l.value));
    let policy = policy(&h.policy);
    let static_action = h.action.as_ref().map(|a| match &a.value {
        ActionSpec::SkipTo(t) => format!("skip_to {}", t.value),
        ActionSpec::SwapNodes(a, b) => format!("swap_nodes {} {}", a.value, b.value),
        ActionSpec::RemoveNode(t) => format!("remove_node {}", t.value),
        ActionSpec::AddNode(t) => format!("add_node {}", t.id.value),
        other => other.action().as_str().to_owned(),
    });
    let mut decided_by = Vec::new();
    if !h.enabled {
        decided_by.push("nobody: the hook is disabled".to_owned());
    } else if let Some(a) = &static_action {
        decided_by.push(format!("the config: always {a} (no judgement)"));
    } else {
        if let Some(c) = &h.condition {
            decided_by.push(format!("asked only when {}", flat(&c.value)));
        }
        rules_first(&policy, &mut decided_by);
        if let Some(q) = &h.human_consultation {
            decided_by.push(format!(
                "a person the model consults (human_consultation: remote agent `{}`)",
                q.value
            ));
        }
        decided_by.push("the hook agent (who answers, below)".to_owned());
    }
    HookDesc {
        id: h.id.value.clone(),
        flow: h.location.as_ref().map(|l| l.value.clone()),
        source: flow.map(|f| Element::of(process, &f.source)),
        target: flow.map(|f| Element::of(process, &f.target)),
        enabled: h.enabled,
        action: static_action,
        condition: h.condition.as_ref().map(|c| flat(&c.value)),
        instruction: h.instruction.as_ref().map(|c| flat(&c.value)),
        policy,
        human_consultation: h.human_consultation.as_ref().map(|c| c.value.clone()),
        permissions: HookPermissions {
            actions: allowed.to_vec(),
            allowed_targets: h
                .allowed_targets
                .iter()
                .map(|t| Element::of(process, &t.value))
                .collect(),
            any_target: h.any_target.is_some(),
            insertable_tasks: h
                .insertable_tasks
                .iter()
                .map(|t| t.id.value.clone())
                .collect(),
            may_set: h.may_set.iter().map(|v| v.value.clone()).collect(),
        },
        on_failure: h.on_failure.as_ref().map_or(OnFailure::Ask, |o| o.value),
        decided_by,
    }
}

/// The judgement chain of a plain `start` of the app, from the links
/// run::chain::judgement builds (chain::links, in chain::Link::ORDER): policy rules, a
/// scenario's answers (with `--scenario`), the model, the remote people consulted, a
/// person at the terminal, park.
fn judgement(
    loaded: &LoadedApp,
    config: &FlowConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<Answerer> {
    use crate::run::chain::{Available, Link, Sources, links};
    let model = LlmReasoner::from_config(config, env);
    let remotes = std::sync::Arc::new(crate::reason::remote::Remotes::of(config));
    let available = Available {
        model: matches!(model, Ok(Some(_))),
        remote: crate::reason::remote::RemoteChooser::of(config, remotes).is_some(),
        // Shown as asked when stdin is a terminal.
        terminal: true,
    };
    let started = links(config, &Sources::plain_start(), available);
    let active = |link: Link| started.contains(&link);

    let mut chain = Vec::new();
    let policies: Vec<&str> = (config.tasks.iter().filter_map(|t| t.policy.as_ref()))
        .chain(config.gateways.iter().filter_map(|g| g.policy.as_ref()))
        .chain(config.hooks.iter().filter_map(|h| h.policy.as_ref()))
        .map(|p| p.value.as_str())
        .collect();
    let with_rules = policies
        .iter()
        .filter(|p| {
            crate::source::read_text(config.resolve(p))
                .ok()
                .and_then(|t| parse_rules(&t).ok())
                .is_some_and(|r| !r.is_empty())
        })
        .count();
    // The rules wrap the chain: they decide before any link.
    chain.push(Answerer {
        source: "rules",
        active: with_rules > 0,
        detail: if with_rules > 0 {
            format!(
                "policy rules decide first ({} with rules)",
                count(with_rules, "policy")
            )
        } else {
            "no policy has rules (```rules blocks); the next one answers".to_owned()
        },
    });
    for link in Link::ORDER {
        let answerer = match link {
            // A resumed run's recorded answers, a caller's answers for a child run, and
            // `--no-park` are not a plain start's; an answers file is told with the
            // scenario.
            Link::Answered | Link::AnswersFile | Link::Given | Link::NoOne => continue,
            Link::Scenario => {
                let scenarios = crate::app::scenario::list(&loaded.dir);
                Answerer {
                    source: "scenario",
                    active: active(link),
                    detail: if scenarios.is_empty() {
                        "no scenarios; `--answers FILE` gives answers in advance".to_owned()
                    } else {
                        format!(
                            "with --scenario NAME, its answers: {}",
                            crate::diag::name_list(&scenarios, 8)
                        )
                    },
                }
            }
            Link::Model => Answerer {
                source: "model",
                active: active(link),
                detail: match &model {
                    Ok(Some(m)) => m.describe(),
                    Ok(None) => "none: the config has no `llm:` and CUGA_FLO_LLM_BASE_URL is \
                                 not set"
                        .to_owned(),
                    Err(e) => format!("cannot be set up: {e}"),
                },
            },
            Link::Remote => {
                // The remote people a gateway or hook consults (`human_consultation`)
                // decide there when no model does (reason::remote::RemoteChooser).
                let consulted: Vec<String> =
                    (config.gateways.iter())
                        .filter_map(|g| Some((&g.id.value, &g.human_consultation.as_ref()?.value)))
                        .chain((config.hooks.iter()).filter_map(|h| {
                            Some((&h.id.value, &h.human_consultation.as_ref()?.value))
                        }))
                        .map(|(element, agent)| format!("{element} → {agent}"))
                        .collect();
                Answerer {
                    source: "remote",
                    active: active(link),
                    detail: if consulted.is_empty() {
                        "no gateway or hook consults a remote agent (`human_consultation`)"
                            .to_owned()
                    } else {
                        let shown: Vec<&str> =
                            consulted.iter().take(8).map(String::as_str).collect();
                        let more = consulted.len().saturating_sub(shown.len());
                        format!(
                            "a remote person over A2A decides where no model does: {}{}",
                            shown.join(", "),
                            if more > 0 {
                                format!(" (and {more} more)")
                            } else {
                                String::new()
                            }
                        )
                    },
                }
            }
            Link::Person => Answerer {
                source: "person",
                active: active(link),
                detail: if config.park_questions {
                    "never asked at the terminal (`questions: park`)".to_owned()
                } else {
                    "at the terminal, when stdin is one (not with --no-prompt)".to_owned()
                },
            },
            Link::Park => Answerer {
                source: "park",
                active: active(link),
                detail: "an unanswered question parks the run for `cuga-flo runs answer` \
                         (--no-park: the run fails)"
                    .to_owned(),
            },
        };
        chain.push(answerer);
    }
    chain
}

/// Whitespace runs (newlines included) as one space: names and conditions on one line.
pub fn flat(text: &str) -> String {
    // Control characters (a terminal's escape sequences among them) become spaces.
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
