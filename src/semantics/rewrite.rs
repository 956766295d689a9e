//! A model rewritten so that a BPM engine (Flowable, Kogito) moves the tokens while every
//! judgement comes back to cuga-flo, which **pulls** the control points: each becomes a
//! wait state ("worker" activity) that cuga-flo finds, answers through the harness and
//! completes over the engine's REST API. The engines serialise the same rewrite in their
//! own dialect (`flowable::augment`, external-worker tasks and JUEL guards).
//!
//! - every task (of any kind) and call activity keeps its id and becomes a worker
//!   (`execute_task`; the native engine asks the harness for every task too);
//! - an exclusive, inclusive, complex or event-based gateway with two or more outgoing
//!   flows gets a worker `cuga_route__<gw>` in front of it (`route_gateway`), which sets
//!   `cugaRouteN` to `,flow,flow,`; each outgoing flow is guarded by "the variable names
//!   this flow" (cuga-flo's own conditions are evaluated by the harness, never by the
//!   engine's expression language);
//! - a hooked flow `F` (S → T) becomes S → `cuga_hook__F` (worker, `evaluate_hook`) →
//!   `cuga_hookgw__F` → T, with a branch to a terminate end event `cuga_terminate__F`
//!   taken when the hook sets `cugaHookN` to `terminate`. `F` keeps its id (and the
//!   source side), so the hook still fires where the model says;
//! - events: throw events become none intermediate events, start events none start
//!   events, end events none (or terminate) end events; a link throw flows to its catch.
//!   On an engine that runs BPMN errors and escalations itself (Flowable), error and
//!   escalation end events, escalation throw events and the error and escalation boundary
//!   events that catch them are kept ([`Element::Throw`], [`Element::Boundary`]), with
//!   their codes; a failed task's worker is completed with a BPMN error. An error end
//!   event nothing catches becomes a worker ([`Role::Uncaught`]) where cuga-flo fails the
//!   run as the native engine does. A multi-instance task gets a worker in front of it
//!   ([`Role::Multi`]) that evaluates what it runs over, and becomes the engine's
//!   multi-instance activity ([`Element::MultiWorker`]); so does a multi-instance
//!   sub-process where [`super::support`] lets one through (Flowable), which stays a
//!   sub-process (the engine's dialect writes its loop characteristics) with a worker in
//!   front of each of its end events ([`Role::InstanceEnd`]), where an instance ends. Message and signal catch and
//!   boundary events are kept ([`Element::Catch`], [`Element::CatchBoundary`]), an
//!   event-based gateway racing only them is the engine's, and a message or signal
//!   throw or end event becomes a worker ([`Role::Send`]) where cuga-flo delivers it.
//!   On Flowable and Kogito, timer catch events, timer boundary events and timer event
//!   sub-process starts are kept ([`Element::Timer`], their definition as written;
//!   event-based gateways race them): Flowable runs the timer as written (cuga-flo fires
//!   it when due), Kogito waits at it as for a signal until cuga-flo fires it. A receive
//!   task waits as a message catch event of its id.
//!   Elements whose semantics the rewrite does not carry
//!   on the engine (catch events that wait, event sub-processes, multi-instance
//!   activities, ...) are refused before a rewrite is made ([`super::support`]).
//!
//! [`Rewritten::roles`] maps each worker back to what it stands for.

use std::collections::{BTreeMap, HashMap};

use crate::app::EngineKind;
use crate::bpmn::{EventDefinition, GatewayKind, NodeKind, Process};
use crate::bridge::FlowAnnotations;
use crate::journal::event::{CatchKind, ThrownKind};
use crate::semantics::events::signature;
use crate::semantics::topology::Topology;

/// The hook actions a pulled engine cannot realise: they change the topology, which a
/// deployed definition cannot.
pub const UNREALISABLE: [crate::vocab::HookAction; 3] = [
    crate::vocab::HookAction::SwapNodes,
    crate::vocab::HookAction::RemoveNode,
    crate::vocab::HookAction::AddNode,
];

/// The prefix of every element and flow cuga-flo adds.
pub const PREFIX: &str = "cuga_";

/// What a worker of the rewritten model stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A task or call activity of the app's model.
    Task(String),
    /// The routing step in front of a gateway; the variable it sets.
    Route { gateway: String, variable: String },
    /// The step on a hooked flow; the variable it sets.
    Hook {
        hook: String,
        flow: String,
        variable: String,
    },
    /// An error end event of the model that nothing catches: reaching it fails the run.
    Uncaught { node: String, code: Option<String> },
    /// A message or signal throw or end event (`node`): cuga-flo delivers it to the
    /// instance's catches waiting for it (a message to the first, a signal to all).
    Send {
        node: String,
        kind: CatchKind,
        name: String,
    },
    /// The step `step` in front of multi-instance task `node`: it evaluates what the
    /// activity runs over and sets `variable` (the number of instances) and the
    /// variables named after it ([`multi_variables`]).
    Multi {
        step: String,
        node: String,
        variable: String,
    },
    /// The step `worker` in front of an end event of multi-instance sub-process `node`
    /// (its step's variable `variable`): an instance of the sub-process ends there, and
    /// cuga-flo collects its output and evaluates the completion condition.
    InstanceEnd {
        worker: String,
        node: String,
        variable: String,
    },
}

/// The variables of a multi-instance task's step `variable` (`cugaMultiN`): the items,
/// the outputs so far (by item), the instances completed, and whether the completion
/// condition held (the engine's own completion condition reads it).
pub fn multi_variables(variable: &str) -> [String; 4] {
    [
        format!("{variable}Items"),
        format!("{variable}Out"),
        format!("{variable}Completed"),
        format!("{variable}Done"),
    ]
}

impl Role {
    /// The control point of the app's model the worker stands for.
    pub fn element(&self) -> &str {
        match self {
            Role::Task(task) => task,
            Role::Route { gateway, .. } => gateway,
            Role::Hook { hook, .. } => hook,
            Role::Uncaught { node, .. } | Role::Send { node, .. } => node,
            // Not a control point: a visit of its own.
            Role::Multi { step, .. } => step,
            Role::InstanceEnd { worker, .. } => worker,
        }
    }
}

/// A node of the rewritten model.
#[derive(Debug, Clone)]
pub struct RNode {
    pub id: String,
    pub name: Option<String>,
    pub parent: Option<String>,
    pub element: Element,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Element {
    Start,
    /// `terminate_all`: a terminate end event, ending the whole instance (or, `false`,
    /// its sub-process instance).
    End {
        terminate_all: Option<bool>,
    },
    Intermediate,
    /// A control point cuga-flo answers.
    Worker,
    /// A multi-instance task whose instances are control points cuga-flo answers, as many
    /// as `variable` says (engines that run multi-instance activities themselves).
    MultiWorker {
        sequential: bool,
        variable: String,
    },
    Gateway(GatewayTag),
    SubProcess,
    /// An event sub-process (engines that run them: its start event says what starts it).
    EventSubProcess,
    /// The start event of an event sub-process, started by an error or escalation.
    TriggerStart {
        interrupting: bool,
        thrown: Thrown,
    },
    /// The start event of an event sub-process, started by a message or signal.
    CatchStart {
        interrupting: bool,
        kind: CatchKind,
        name: String,
    },
    /// An error or escalation end event (`end`), or an escalation intermediate throw
    /// event, throwing `thrown` (engines that run errors and escalations themselves).
    Throw {
        end: bool,
        thrown: Thrown,
    },
    /// A message or signal intermediate catch event waiting for `name`.
    Catch {
        kind: CatchKind,
        name: String,
    },
    /// A message or signal boundary event attached to `attached_to`.
    CatchBoundary {
        attached_to: String,
        cancel: bool,
        kind: CatchKind,
        name: String,
    },
    /// An error or escalation boundary event attached to `attached_to` catching `thrown`
    /// (no code: every error or escalation).
    Boundary {
        attached_to: String,
        cancel: bool,
        thrown: Thrown,
    },
    /// A timer event (not repeating) of an engine that waits at it until cuga-flo fires
    /// it when due (Flowable: its timer job moved; Kogito: a signal of cuga-flo's): an
    /// intermediate catch event, a boundary event or an event sub-process's start event,
    /// as `on` says, with the model's `<timerEventDefinition>`.
    Timer {
        timer: crate::bpmn::Timer,
        on: TimerOn,
    },
}

/// Where a timer event of the rewritten model waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimerOn {
    /// An intermediate catch event.
    Catch,
    /// A boundary event attached to `attached_to`.
    Boundary { attached_to: String, cancel: bool },
    /// The start event of an event sub-process.
    Start { interrupting: bool },
}

/// What an error or escalation event throws or catches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thrown {
    pub kind: ThrownKind,
    /// The code; `None`: thrown without one, or (catching) every code.
    pub code: Option<String>,
}

impl Thrown {
    fn of(node: &crate::bpmn::Node, kind: ThrownKind) -> Thrown {
        Thrown {
            kind,
            code: node.event_ref.as_ref().and_then(|r| r.code.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayTag {
    Exclusive,
    Inclusive,
    Parallel,
    /// Racing the message and signal catches it leads to (engines that run them).
    EventBased,
}

impl GatewayTag {
    /// The BPMN element name.
    pub fn tag(self) -> &'static str {
        match self {
            GatewayTag::Exclusive => "exclusiveGateway",
            GatewayTag::Inclusive => "inclusiveGateway",
            GatewayTag::Parallel => "parallelGateway",
            GatewayTag::EventBased => "eventBasedGateway",
        }
    }
}

/// A sequence flow of the rewritten model.
#[derive(Debug, Clone)]
pub struct RFlow {
    pub id: String,
    pub source: String,
    pub target: String,
    pub guard: Option<Guard>,
    pub parent: Option<String>,
}

/// When a flow out of a rewritten gateway is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard {
    /// The routing variable names this flow (`,a,b,` contains `,<flow>,`).
    Routed { variable: String, flow: String },
    /// The hook's variable is (`terminate: true`) or is not `terminate`.
    Hooked { variable: String, terminate: bool },
}

/// The model rewritten for pulling.
#[derive(Debug, Clone)]
pub struct Rewritten {
    pub nodes: Vec<RNode>,
    pub flows: Vec<RFlow>,
    /// Worker id → role.
    pub roles: HashMap<String, Role>,
    /// Where a token sent to a node of the app's model really goes (a routed gateway's
    /// routing step), for `skip_to`.
    pub entry: HashMap<String, String>,
}

impl Rewritten {
    /// What the rewritten model's error or escalation event `id` throws (the engine
    /// delivers it; cuga-flo journals it).
    pub fn thrown_at(&self, id: &str) -> Option<&Thrown> {
        self.nodes
            .iter()
            .find(|n| n.id == id)
            .and_then(|n| match &n.element {
                Element::Throw { thrown, .. } => Some(thrown),
                _ => None,
            })
    }

    /// The id of the app's model this id of the rewritten model stands for in a run's
    /// path: `None` for what cuga-flo added.
    pub fn original<'a>(&self, activity: &'a str) -> Option<&'a str> {
        (!activity.starts_with(PREFIX)).then_some(activity)
    }

    /// The activity a token taking the model's flow `flow` arrives at: the hook step of a
    /// hooked flow, the routing step of a routed gateway, else the flow's target.
    pub fn arrival(&self, flow: &crate::bpmn::Flow) -> String {
        let hook = format!("{PREFIX}hook__{}", flow.id);
        if self.roles.contains_key(&hook) {
            return hook;
        }
        self.entry
            .get(&flow.target)
            .cloned()
            .unwrap_or_else(|| flow.target.clone())
    }

    /// The routing and hook variables (each a string).
    pub fn variables(&self) -> Vec<String> {
        let mut vars: Vec<String> = self
            .roles
            .values()
            .filter_map(|r| match r {
                Role::Route { variable, .. } | Role::Hook { variable, .. } => {
                    Some(variable.clone())
                }
                Role::Task(_)
                | Role::Uncaught { .. }
                | Role::Multi { .. }
                | Role::InstanceEnd { .. }
                | Role::Send { .. } => None,
            })
            .collect();
        vars.sort();
        vars
    }
}

/// The nodes and flows of each scope (`None`: the process; else a sub-process's id), in
/// the order of the model, for writing nested XML.
pub type Scopes<'a> = BTreeMap<Option<&'a str>, (Vec<&'a RNode>, Vec<&'a RFlow>)>;

impl Rewritten {
    pub fn scopes(&self) -> Scopes<'_> {
        let mut scopes: Scopes = BTreeMap::new();
        for n in &self.nodes {
            scopes.entry(n.parent.as_deref()).or_default().0.push(n);
        }
        for f in &self.flows {
            scopes.entry(f.parent.as_deref()).or_default().1.push(f);
        }
        scopes
    }
}

/// `text` in an XML attribute or element.
pub fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Why a model cannot run on `engine` (Flowable or Kogito), per element: `(element id,
/// reason)`: the elements whose semantics the rewrite does not carry there
/// ([`super::support`]) and [`limits`].
pub fn unsupported(process: &Process, engine: EngineKind) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = super::support::unsupported(process, engine)
        .into_iter()
        .map(|u| (u.id, u.why))
        .collect();
    out.extend(limits(process));
    out
}

/// What the rewrite itself cannot do: ids in cuga-flo's reserved prefix, several start
/// events.
pub fn limits(process: &Process) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut starts = 0;
    for node in &process.nodes {
        if node.id.starts_with(PREFIX) {
            out.push((
                node.id.clone(),
                format!("ids starting with `{PREFIX}` are reserved for what cuga-flo adds"),
            ));
        }
        if matches!(node.kind, NodeKind::StartEvent { .. }) && node.parent.is_none() {
            starts += 1;
        }
    }
    for flow in &process.flows {
        if flow.id.starts_with(PREFIX) {
            out.push((
                flow.id.clone(),
                format!("ids starting with `{PREFIX}` are reserved for what cuga-flo adds"),
            ));
        }
    }
    if starts > 1 {
        out.push((
            process.id.clone(),
            format!("a BPM engine starts a process at one start event; this one has {starts}"),
        ));
    }
    out
}

/// Rewrite `process` for `engine` (Flowable or Kogito) with the hooks of `annotations`.
/// `Err` lists what cannot run there ([`unsupported`]).
pub fn rewrite(
    process: &Process,
    annotations: &FlowAnnotations,
    engine: EngineKind,
) -> Result<Rewritten, Vec<(String, String)>> {
    let problems = unsupported(process, engine);
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut roles = HashMap::new();
    let mut entry = HashMap::new();
    let mut nodes: Vec<RNode> = Vec::new();
    let mut flows: Vec<RFlow> = process
        .flows
        .iter()
        .map(|f| RFlow {
            id: f.id.clone(),
            source: f.source.clone(),
            target: f.target.clone(),
            // cuga-flo's conditions are the harness's business; routed gateways get theirs.
            guard: None,
            parent: f.parent.clone(),
        })
        .collect();
    let outgoing = |flows: &[RFlow], id: &str| -> Vec<String> {
        flows
            .iter()
            .filter(|f| f.source == id)
            .map(|f| f.id.clone())
            .collect()
    };

    let topology = Topology::from_process(process);
    // The engine runs BPMN errors and escalations, and message and signal catches, itself
    // (cuga-flo delivers the run's own throws); what it cannot run `super::support`
    // refused above.
    let throws = matches!(engine, EngineKind::Flowable | EngineKind::Kogito);
    let messages = |id: &str| topology.node(id).and_then(signature).filter(|_| throws);
    // Flowable and Kogito run timers (cuga-flo fires them when they are due: see
    // `flowable` and `kogito`); a receive task waits there as a message catch event.
    let timers = matches!(engine, EngineKind::Flowable | EngineKind::Kogito);
    let timer = |node: &crate::bpmn::Node| node.timer.clone().filter(|_| timers);
    let mut routes = 0;
    let mut multis = 0;
    let mut multi_subprocesses: Vec<(String, String)> = Vec::new();
    for node in &process.nodes {
        let element = match &node.kind {
            // (A multi-instance call activity's instances are child runs: on Kogito.)
            NodeKind::Task(_) | NodeKind::CallActivity { .. }
                if throws
                    && let Some(crate::bpmn::Looping {
                        kind: crate::bpmn::LoopKind::MultiInstance { sequential },
                        ..
                    }) = &node.looping =>
            {
                multis += 1;
                let variable = format!("cugaMulti{multis}");
                multi_step(
                    node, &variable, &mut nodes, &mut flows, &mut roles, &mut entry,
                );
                roles.insert(node.id.clone(), Role::Task(node.id.clone()));
                Element::MultiWorker {
                    sequential: *sequential,
                    variable,
                }
            }
            // A multi-instance sub-process (engines that run it: `super::support`) is the
            // engine's, run as many times as its step says; a worker in front of each of its
            // end events ends an instance ([`Role::InstanceEnd`]).
            NodeKind::SubProcess(crate::bpmn::SubProcessKind::Embedded {
                triggered_by_event: false,
            }) if throws
                && let Some(crate::bpmn::Looping {
                    kind: crate::bpmn::LoopKind::MultiInstance { .. },
                    ..
                }) = &node.looping =>
            {
                multis += 1;
                let variable = format!("cugaMulti{multis}");
                multi_step(
                    node, &variable, &mut nodes, &mut flows, &mut roles, &mut entry,
                );
                multi_subprocesses.push((node.id.clone(), variable));
                Element::SubProcess
            }
            NodeKind::Task(crate::bpmn::TaskKind::Receive)
                if timers && let Some((kind, name)) = messages(&node.id) =>
            {
                Element::Catch { kind, name }
            }
            NodeKind::Task(_) | NodeKind::CallActivity { .. } => {
                roles.insert(node.id.clone(), Role::Task(node.id.clone()));
                Element::Worker
            }
            NodeKind::IntermediateCatchEvent { .. }
                if let Some((kind, name)) = messages(&node.id) =>
            {
                Element::Catch { kind, name }
            }
            NodeKind::IntermediateCatchEvent { .. } if let Some(timer) = timer(node) => {
                Element::Timer {
                    timer,
                    on: TimerOn::Catch,
                }
            }
            NodeKind::BoundaryEvent {
                attached_to,
                cancel_activity,
                ..
            } if let Some(timer) = timer(node) => Element::Timer {
                timer,
                on: TimerOn::Boundary {
                    attached_to: attached_to.clone(),
                    cancel: *cancel_activity,
                },
            },
            NodeKind::IntermediateThrowEvent { .. } | NodeKind::EndEvent { .. }
                if let Some((kind, name)) = messages(&node.id) =>
            {
                roles.insert(
                    node.id.clone(),
                    Role::Send {
                        node: node.id.clone(),
                        kind,
                        name,
                    },
                );
                Element::Worker
            }
            NodeKind::BoundaryEvent {
                attached_to,
                cancel_activity,
                ..
            } if let Some((kind, name)) = messages(&node.id) => Element::CatchBoundary {
                attached_to: attached_to.clone(),
                cancel: *cancel_activity,
                kind,
                name,
            },
            NodeKind::SubProcess(crate::bpmn::SubProcessKind::Embedded {
                triggered_by_event: true,
            }) if throws => Element::EventSubProcess,
            NodeKind::SubProcess(_) => Element::SubProcess,
            NodeKind::StartEvent {
                definitions,
                interrupting,
            } if throws && node.parent.is_some() => {
                let kind = if definitions.contains(&EventDefinition::Error) {
                    Some(ThrownKind::Error)
                } else if definitions.contains(&EventDefinition::Escalation) {
                    Some(ThrownKind::Escalation)
                } else {
                    None
                };
                match (kind, messages(&node.id), timer(node)) {
                    (Some(kind), _, _) => Element::TriggerStart {
                        interrupting: *interrupting,
                        thrown: Thrown::of(node, kind),
                    },
                    (None, Some((kind, name)), _) => Element::CatchStart {
                        interrupting: *interrupting,
                        kind,
                        name,
                    },
                    (None, None, Some(timer)) => Element::Timer {
                        timer,
                        on: TimerOn::Start {
                            interrupting: *interrupting,
                        },
                    },
                    (None, None, None) => Element::Start,
                }
            }
            NodeKind::StartEvent { .. } => Element::Start,
            NodeKind::EndEvent { definitions }
                if throws && definitions.contains(&EventDefinition::Error) =>
            {
                let thrown = Thrown::of(node, ThrownKind::Error);
                if catcher(&topology, &node.id, &thrown, false).is_some() {
                    Element::Throw { end: true, thrown }
                } else {
                    roles.insert(
                        node.id.clone(),
                        Role::Uncaught {
                            node: node.id.clone(),
                            code: thrown.code,
                        },
                    );
                    Element::Worker
                }
            }
            NodeKind::EndEvent { definitions }
                if throws && definitions.contains(&EventDefinition::Escalation) =>
            {
                Element::Throw {
                    end: true,
                    thrown: Thrown::of(node, ThrownKind::Escalation),
                }
            }
            NodeKind::EndEvent { definitions } => Element::End {
                terminate_all: definitions
                    .contains(&EventDefinition::Terminate)
                    .then_some(node.parent.is_none()),
            },
            NodeKind::IntermediateCatchEvent { .. } => Element::Intermediate,
            NodeKind::IntermediateThrowEvent { definitions }
                if throws && definitions.contains(&EventDefinition::Escalation) =>
            {
                Element::Throw {
                    end: false,
                    thrown: Thrown::of(node, ThrownKind::Escalation),
                }
            }
            NodeKind::BoundaryEvent {
                attached_to,
                cancel_activity,
                definitions,
            } if throws
                && definitions
                    .iter()
                    .any(|d| matches!(d, EventDefinition::Error | EventDefinition::Escalation)) =>
            {
                let kind = if definitions.contains(&EventDefinition::Error) {
                    ThrownKind::Error
                } else {
                    ThrownKind::Escalation
                };
                Element::Boundary {
                    attached_to: attached_to.clone(),
                    // Errors always interrupt.
                    cancel: *cancel_activity || kind == ThrownKind::Error,
                    thrown: Thrown::of(node, kind),
                }
            }
            NodeKind::IntermediateThrowEvent { definitions } => {
                if definitions.contains(&EventDefinition::Link)
                    && let Some(live) = topology.node(&node.id)
                    && let Some(catch) = topology.link_catch(live)
                {
                    flows.push(RFlow {
                        id: format!("{PREFIX}link__{}", node.id),
                        source: node.id.clone(),
                        target: catch.id.clone(),
                        guard: None,
                        parent: node.parent.clone(),
                    });
                }
                Element::Intermediate
            }
            NodeKind::Gateway(kind) => {
                let out = outgoing(&flows, &node.id);
                let tag = match kind {
                    GatewayKind::Parallel => GatewayTag::Parallel,
                    GatewayKind::Inclusive | GatewayKind::Complex => GatewayTag::Inclusive,
                    GatewayKind::Exclusive | GatewayKind::EventBased => GatewayTag::Exclusive,
                };
                let races = throws
                    && *kind == GatewayKind::EventBased
                    && !out.is_empty()
                    && flows.iter().filter(|f| f.source == node.id).all(|f| {
                        topology.node(&f.target).is_some_and(|t| {
                            (matches!(t.kind, NodeKind::IntermediateCatchEvent { .. })
                                && (signature(t).is_some() || (timers && t.timer.is_some())))
                                || (timers
                                    && matches!(
                                        t.kind,
                                        NodeKind::Task(crate::bpmn::TaskKind::Receive)
                                    ))
                        })
                    });
                let tag = if races { GatewayTag::EventBased } else { tag };
                if *kind != GatewayKind::Parallel && !races && out.len() >= 2 {
                    routes += 1;
                    let variable = format!("cugaRoute{routes}");
                    let route = format!("{PREFIX}route__{}", node.id);
                    for f in flows.iter_mut() {
                        if f.target == node.id {
                            f.target = route.clone();
                        }
                        if f.source == node.id {
                            f.guard = Some(Guard::Routed {
                                variable: variable.clone(),
                                flow: f.id.clone(),
                            });
                        }
                    }
                    flows.push(RFlow {
                        id: format!("{PREFIX}routed__{}", node.id),
                        source: route.clone(),
                        target: node.id.clone(),
                        guard: None,
                        parent: node.parent.clone(),
                    });
                    nodes.push(RNode {
                        id: route.clone(),
                        name: node.name.clone(),
                        parent: node.parent.clone(),
                        element: Element::Worker,
                    });
                    roles.insert(
                        route.clone(),
                        Role::Route {
                            gateway: node.id.clone(),
                            variable,
                        },
                    );
                    entry.insert(node.id.clone(), route);
                }
                Element::Gateway(tag)
            }
            NodeKind::BoundaryEvent { .. } | NodeKind::Unsupported { .. } => continue,
        };
        nodes.push(RNode {
            id: node.id.clone(),
            name: node.name.clone(),
            parent: node.parent.clone(),
            element,
        });
    }

    // The end of each instance of a multi-instance sub-process: a worker in front of each
    // of its end events (before the hooks, so that a hooked flow into one is hooked in
    // front of the worker).
    for (sub, variable) in &multi_subprocesses {
        let ends: Vec<String> = nodes
            .iter()
            .filter(|n| {
                n.parent.as_deref() == Some(sub.as_str())
                    && matches!(n.element, Element::End { .. })
            })
            .map(|n| n.id.clone())
            .collect();
        for end in ends {
            let worker = format!("{PREFIX}instanceend__{end}");
            for f in flows.iter_mut() {
                if f.target == end {
                    f.target = worker.clone();
                }
            }
            flows.push(RFlow {
                id: format!("{PREFIX}instanceended__{end}"),
                source: worker.clone(),
                target: end.clone(),
                guard: None,
                parent: Some(sub.clone()),
            });
            nodes.push(RNode {
                id: worker.clone(),
                name: None,
                parent: Some(sub.clone()),
                element: Element::Worker,
            });
            roles.insert(
                worker.clone(),
                Role::InstanceEnd {
                    worker,
                    node: sub.clone(),
                    variable: variable.clone(),
                },
            );
        }
    }

    // Hooks, after the routing tasks took over the gateways' incoming flows.
    for (i, (flow_id, hook)) in annotations.hooks.iter().enumerate() {
        let Some(index) = flows.iter().position(|f| &f.id == flow_id) else {
            continue;
        };
        let variable = format!("cugaHook{}", i + 1);
        let task = format!("{PREFIX}hook__{flow_id}");
        let gateway = format!("{PREFIX}hookgw__{flow_id}");
        let terminate = format!("{PREFIX}terminate__{flow_id}");
        let parent = flows[index].parent.clone();
        let target = std::mem::replace(&mut flows[index].target, task.clone());
        for (id, element) in [
            (task.clone(), Element::Worker),
            (gateway.clone(), Element::Gateway(GatewayTag::Exclusive)),
            (
                terminate.clone(),
                Element::End {
                    terminate_all: Some(true),
                },
            ),
        ] {
            nodes.push(RNode {
                id,
                name: None,
                parent: parent.clone(),
                element,
            });
        }
        let flow = |id: String, source: &str, target: &str, guard: Option<Guard>| RFlow {
            id,
            source: source.to_string(),
            target: target.to_string(),
            guard,
            parent: parent.clone(),
        };
        flows.push(flow(
            format!("{PREFIX}hooked__{flow_id}"),
            &task,
            &gateway,
            None,
        ));
        flows.push(flow(
            format!("{PREFIX}continue__{flow_id}"),
            &gateway,
            &target,
            Some(Guard::Hooked {
                variable: variable.clone(),
                terminate: false,
            }),
        ));
        flows.push(flow(
            format!("{PREFIX}terminated__{flow_id}"),
            &gateway,
            &terminate,
            Some(Guard::Hooked {
                variable: variable.clone(),
                terminate: true,
            }),
        ));
        roles.insert(
            task,
            Role::Hook {
                hook: hook.clone(),
                flow: flow_id.clone(),
                variable,
            },
        );
    }

    Ok(Rewritten {
        nodes,
        flows,
        roles,
        entry,
    })
}

/// The step in front of multi-instance activity `node` ([`Role::Multi`], setting
/// `variable`): the flows into the activity lead to it, and it to the activity.
fn multi_step(
    node: &crate::bpmn::Node,
    variable: &str,
    nodes: &mut Vec<RNode>,
    flows: &mut Vec<RFlow>,
    roles: &mut HashMap<String, Role>,
    entry: &mut HashMap<String, String>,
) {
    let step = format!("{PREFIX}multi__{}", node.id);
    for f in flows.iter_mut() {
        if f.target == node.id {
            f.target = step.clone();
        }
    }
    flows.push(RFlow {
        id: format!("{PREFIX}multied__{}", node.id),
        source: step.clone(),
        target: node.id.clone(),
        guard: None,
        parent: node.parent.clone(),
    });
    nodes.push(RNode {
        id: step.clone(),
        name: node.name.clone(),
        parent: node.parent.clone(),
        element: Element::Worker,
    });
    roles.insert(
        step.clone(),
        Role::Multi {
            step: step.clone(),
            node: node.id.clone(),
            variable: variable.to_string(),
        },
    );
    entry.insert(node.id.clone(), step);
}

/// Where a thrown error or escalation is caught.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caught {
    /// The activity the catching boundary event is attached to.
    pub activity: String,
    /// The boundary event.
    pub boundary: String,
    /// Whether catching it cancels the activity (errors always do).
    pub interrupting: bool,
}

/// The boundary event that catches `thrown`, thrown at `thrower` (a failed task when
/// `from_task`, else an end or throw event), as the native engine delivers it
/// (`engine::native::throws`, on a model without event sub-processes): the failed task's
/// own boundary events, then those of each sub-process around the thrower, outwards; at
/// each, one for the thrown code first, else a catch-all.
pub(crate) fn catcher(
    topology: &Topology,
    thrower: &str,
    thrown: &Thrown,
    from_task: bool,
) -> Option<Caught> {
    let definition = match thrown.kind {
        ThrownKind::Error => EventDefinition::Error,
        ThrownKind::Escalation => EventDefinition::Escalation,
    };
    let node = topology.node(thrower)?;
    let boundary = |activity: &str| {
        topology
            .catching_boundary(activity, definition, thrown.code.as_deref())
            .map(|b| Caught {
                activity: activity.to_string(),
                boundary: b.id.clone(),
                interrupting: thrown.kind == ThrownKind::Error
                    || matches!(
                        b.kind,
                        NodeKind::BoundaryEvent {
                            cancel_activity: true,
                            ..
                        }
                    ),
            })
    };
    if from_task && let Some(caught) = boundary(&node.id) {
        return Some(caught);
    }
    // Outwards from the thrower's scope: its event sub-processes, then the boundary
    // events of the sub-process it is, then the scope around it, ...
    let mut scope = node.parent.clone();
    loop {
        if let Some(caught) = event_subprocess(topology, scope.as_deref(), definition, thrown) {
            return Some(caught);
        }
        let id = scope?;
        if let Some(caught) = boundary(&id) {
            return Some(caught);
        }
        scope = topology.node(&id).and_then(|n| n.parent.clone());
    }
}

/// The event sub-process of `scope` whose start event catches `thrown`: one for its code
/// first, else a catch-all.
fn event_subprocess(
    topology: &Topology,
    scope: Option<&str>,
    definition: EventDefinition,
    thrown: &Thrown,
) -> Option<Caught> {
    let starts: Vec<&crate::semantics::topology::LiveNode> = topology
        .children(scope)
        .filter(|n| {
            matches!(
                n.kind,
                NodeKind::SubProcess(crate::bpmn::SubProcessKind::Embedded {
                    triggered_by_event: true
                })
            )
        })
        .filter_map(|sub| {
            topology.children(Some(sub.id.as_str())).find(|n| {
                n.kind.is_start_event() && n.kind.event_definitions().contains(&definition)
            })
        })
        .collect();
    let code = |n: &crate::semantics::topology::LiveNode| {
        n.event_ref.as_ref().and_then(|r| r.code.clone())
    };
    let start = starts
        .iter()
        .find(|s| thrown.code.is_some() && code(s) == thrown.code)
        .or_else(|| starts.iter().find(|s| code(s).is_none()))?;
    Some(Caught {
        activity: start.parent.clone().unwrap_or_default(),
        boundary: start.id.clone(),
        interrupting: thrown.kind == ThrownKind::Error
            || !matches!(
                start.kind,
                NodeKind::StartEvent {
                    interrupting: false,
                    ..
                }
            ),
    })
}
