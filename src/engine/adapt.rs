//! Hook decisions against the live topology: [`plan`] checks the action a hook asks for
//! and turns it into a [`Plan`] (or the reason it cannot apply); [`Plan::apply`] changes
//! the topology for the actions that change it; [`Evaluation::event`] is the audit record
//! of what was applied. The native engine applies hook decisions with these, and the
//! external engine's witness records what a conforming engine applies with them too.

use std::collections::BTreeSet;

use crate::bridge::{HookDecision, NewTask, Variables};
use crate::diag::with_article;
use crate::journal::Event;
use crate::semantics::topology::{LiveFlow, LiveNode, Topology, inserted_flow_id};
use crate::vocab::HookAction;

/// A hook action that can be applied as it stands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    Continue,
    /// The edge's target, entered and recorded as skipped.
    SkipNode(String),
    SkipTo(String),
    Swap(String, String),
    Terminate(Option<String>),
    Remove(String),
    Add(NewTask),
}

/// What a decision is checked against: the live topology, the nodes entered so far, the
/// nodes holding a token, and the hooked flow.
pub(crate) struct Facts<'a> {
    pub topology: &'a Topology,
    pub executed: &'a BTreeSet<String>,
    pub held: &'a BTreeSet<&'a str>,
    pub flow: &'a LiveFlow,
}

/// Why a hook's action cannot apply where the token stands (the run continues instead,
/// and the reason is journalled with the hook's record).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{action} refused: {why}")]
pub(crate) struct Refused {
    pub action: HookAction,
    #[source]
    pub why: Refusal,
}

/// What is wrong with an action's target.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("`{0}` is not a node of the process")]
    NotANode(String),
    #[error("`{0}` has already been entered in this run")]
    Entered(String),
    #[error("`{id}` is {}, not an activity", with_article(kind))]
    NotAnActivity { id: String, kind: String },
    #[error("a token is at `{0}`")]
    Held(String),
    #[error("no {0} given")]
    Missing(&'static str),
    #[error("`{id}` is not in the same scope as `{other}`")]
    OtherScope { id: String, other: String },
    #[error("`{id}` is {}, which only an event can start", with_article(kind))]
    NotEnterable { id: String, kind: String },
    #[error("`{0}` cannot be swapped with itself")]
    SwapSelf(String),
    #[error("`{0}` and `{1}` are not in the same scope")]
    ApartScopes(String, String),
    #[error("`{0}` must have exactly one outgoing flow, to another node")]
    NotOneSuccessor(String),
    #[error("the task to insert has no id")]
    NoId,
    #[error("`{0}` already exists in the process")]
    Exists(String),
}

/// Check the action of `decision` for the token about to traverse `facts.flow`. `Err`
/// says why it cannot apply (the caller continues instead).
pub(crate) fn plan(facts: &Facts, decision: &HookDecision) -> Result<Plan, Refused> {
    let why = |why: Refusal| Refused {
        action: decision.action,
        why,
    };
    match decision.action {
        HookAction::Continue => Ok(Plan::Continue),
        HookAction::Terminate => Ok(Plan::Terminate(decision.message.clone())),
        HookAction::SkipNode => facts.skip_node().map_err(why),
        HookAction::SkipTo => facts.skip_to(decision.target.as_deref()).map_err(why),
        HookAction::SwapNodes => facts.swap(decision.swap.as_ref()).map_err(why),
        HookAction::RemoveNode => facts.remove(decision.target.as_deref()).map_err(why),
        HookAction::AddNode => facts.add(decision.add.as_ref()).map_err(why),
    }
}

impl Facts<'_> {
    fn node(&self, id: &str) -> Result<&LiveNode, Refusal> {
        self.topology
            .node(id)
            .ok_or_else(|| Refusal::NotANode(id.to_string()))
    }

    fn not_executed(&self, id: &str) -> Result<(), Refusal> {
        if self.executed.contains(id) {
            Err(Refusal::Entered(id.to_string()))
        } else {
            Ok(())
        }
    }

    /// An activity that has not run and holds no token.
    fn untouched_activity(&self, id: &str) -> Result<&LiveNode, Refusal> {
        let node = self.node(id)?;
        if !node.is_activity() {
            return Err(Refusal::NotAnActivity {
                id: id.to_string(),
                kind: node.kind.tag().to_string(),
            });
        }
        self.not_executed(id)?;
        if self.held.contains(id) {
            return Err(Refusal::Held(id.to_string()));
        }
        Ok(node)
    }

    fn edge_target(&self) -> Result<&LiveNode, Refusal> {
        self.node(&self.flow.target)
    }

    fn skip_node(&self) -> Result<Plan, Refusal> {
        let target = self.untouched_activity(&self.flow.target)?;
        Ok(Plan::SkipNode(target.id.clone()))
    }

    fn skip_to(&self, target: Option<&str>) -> Result<Plan, Refusal> {
        let id = target.ok_or(Refusal::Missing("target node"))?;
        let node = self.node(id)?;
        let edge_target = self.edge_target()?;
        if node.parent != edge_target.parent {
            return Err(Refusal::OtherScope {
                id: id.to_string(),
                other: edge_target.id.clone(),
            });
        }
        if !node.is_enterable() {
            return Err(Refusal::NotEnterable {
                id: id.to_string(),
                kind: node.kind.tag().to_string(),
            });
        }
        self.not_executed(id)?;
        Ok(Plan::SkipTo(id.to_string()))
    }

    fn swap(&self, pair: Option<&(String, String)>) -> Result<Plan, Refusal> {
        let (a, b) = pair.ok_or(Refusal::Missing("pair of nodes"))?;
        if a == b {
            return Err(Refusal::SwapSelf(a.clone()));
        }
        let node_a = self.untouched_activity(a)?;
        let node_b = self.untouched_activity(b)?;
        if node_a.parent != node_b.parent {
            return Err(Refusal::ApartScopes(a.clone(), b.clone()));
        }
        Ok(Plan::Swap(a.clone(), b.clone()))
    }

    fn remove(&self, target: Option<&str>) -> Result<Plan, Refusal> {
        let id = target.ok_or(Refusal::Missing("node to remove"))?;
        self.untouched_activity(id)?;
        match self.topology.single_successor(id) {
            Some(out) if out.target != id => Ok(Plan::Remove(id.to_string())),
            _ => Err(Refusal::NotOneSuccessor(id.to_string())),
        }
    }

    fn add(&self, task: Option<&NewTask>) -> Result<Plan, Refusal> {
        let task = task.ok_or(Refusal::Missing("task to insert"))?;
        if task.id.trim().is_empty() {
            return Err(Refusal::NoId);
        }
        if self.topology.has_id(&task.id) {
            return Err(Refusal::Exists(task.id.clone()));
        }
        let new_flow = inserted_flow_id(&self.flow.id, &task.id);
        if self.topology.has_id(&new_flow) {
            return Err(Refusal::Exists(new_flow));
        }
        Ok(Plan::Add(task.clone()))
    }
}

impl Plan {
    pub fn action(&self) -> HookAction {
        match self {
            Plan::Continue => HookAction::Continue,
            Plan::SkipNode(_) => HookAction::SkipNode,
            Plan::SkipTo(_) => HookAction::SkipTo,
            Plan::Swap(..) => HookAction::SwapNodes,
            Plan::Terminate(_) => HookAction::Terminate,
            Plan::Remove(_) => HookAction::RemoveNode,
            Plan::Add(_) => HookAction::AddNode,
        }
    }

    /// The node the action aims at (skip_node, skip_to, remove_node).
    pub fn target(&self) -> Option<String> {
        match self {
            Plan::SkipNode(n) | Plan::SkipTo(n) | Plan::Remove(n) => Some(n.clone()),
            _ => None,
        }
    }

    pub fn swap(&self) -> Option<(String, String)> {
        match self {
            Plan::Swap(a, b) => Some((a.clone(), b.clone())),
            _ => None,
        }
    }

    pub fn added(&self) -> Option<String> {
        match self {
            Plan::Add(task) => Some(task.id.clone()),
            _ => None,
        }
    }

    /// For the actions that change the topology, what the change is (the detail of the
    /// `TopologyChanged` event, written before the change is made).
    pub fn change(&self, topology: &Topology, flow: &LiveFlow) -> Option<String> {
        match self {
            Plan::Swap(a, b) => Some(format!("swapped `{a}` and `{b}`")),
            Plan::Remove(x) => {
                let successor = topology.single_successor(x)?;
                let retargeted: Vec<String> = topology
                    .incoming(x)
                    .map(|f| format!("`{}`", f.id))
                    .collect();
                let flows = match retargeted.len() {
                    0 => "no flow now leads".to_string(),
                    1 => format!("{} now leads", retargeted[0]),
                    _ => format!("{} now lead", retargeted.join(", ")),
                };
                Some(format!("removed `{x}`; {flows} to `{}`", successor.target))
            }
            Plan::Add(task) => Some(format!(
                "inserted task `{}` on `{}` before `{}` (new flow `{}`)",
                task.id,
                flow.id,
                flow.target,
                inserted_flow_id(&flow.id, &task.id)
            )),
            _ => None,
        }
    }

    /// Change the topology (swap, remove, add); other actions leave it as it is.
    pub fn apply(&self, topology: &mut Topology, flow: &LiveFlow) {
        match self {
            Plan::Swap(a, b) => topology.swap(a, b),
            Plan::Remove(x) => {
                topology.remove(x);
            }
            Plan::Add(task) => {
                let parent = match topology.node(&flow.target) {
                    Some(target) => target.parent.clone(),
                    None => flow.parent.clone(),
                };
                let node = LiveNode::inserted(&task.id, task.name.clone(), parent);
                topology.insert_on(&flow.id, node);
            }
            _ => {}
        }
    }
}

/// One hook evaluation, for its `HookEvaluated` record.
pub(crate) struct Evaluation<'a> {
    pub hook: &'a str,
    pub flow: &'a str,
    pub decision: &'a HookDecision,
    pub duration_ms: u64,
    /// The call's idempotency key, when the engine gave it one: the record then carries
    /// the decision as answered, so that a resumed run applies it again.
    pub key: Option<&'a str>,
}

/// The action a `HookEvaluated` record reports, with its details.
pub(crate) struct Applied {
    action: HookAction,
    target: Option<String>,
    swap: Option<(String, String)>,
    added: Option<String>,
}

impl Applied {
    pub fn plan(plan: &Plan) -> Self {
        Applied {
            action: plan.action(),
            target: plan.target(),
            swap: plan.swap(),
            added: plan.added(),
        }
    }

    /// The action as the harness answered it (a run failed by the hook applies nothing).
    pub fn answered(decision: &HookDecision) -> Self {
        Applied {
            action: decision.action,
            target: decision.target.clone(),
            swap: decision.swap.clone(),
            added: decision.add.as_ref().map(|t| t.id.clone()),
        }
    }
}

impl Evaluation<'_> {
    pub fn event(
        &self,
        applied: Applied,
        rejected: Option<String>,
        state_updates: Variables,
    ) -> Event {
        let d = self.decision;
        Event::HookEvaluated {
            hook: self.hook.to_string(),
            flow: self.flow.to_string(),
            action: applied.action,
            target: applied.target,
            swap: applied.swap,
            added: applied.added,
            state_updates,
            decided_by: d.decided_by,
            reason: d.reason.clone(),
            message: d.message.clone(),
            denied: d.denied,
            rejected,
            duration_ms: self.duration_ms,
            digest: d.digest.clone(),
            key: self.key.map(str::to_string),
            answer: self.key.and_then(|_| {
                let mut d = d.clone();
                d.calls.clear();
                serde_json::to_value(d).ok()
            }),
        }
    }
}
