//! `evaluate_hook`: what happens on a hooked sequence flow.
//!
//! 1. The hook is found by id, else by its location (the flow id an external engine
//!    passes as the hook id, or the context's edge). An unknown hook is an error.
//! 2. A disabled hook proceeds (nobody decides).
//! 3. A guard (`condition`) that is not TRUE (FALSE or UNKNOWN) proceeds without asking.
//! 4. A hook with a policy asks the reasoner, offering the permitted actions it can take
//!    now (`continue` always), the allowed targets (the config's `allowed_targets`, else
//!    every node not yet executed) and the insertable tasks. A hook without a policy takes its static `action:` (default
//!    `continue`).
//! 5. The decision is checked, whichever engine runs the process and whoever decided:
//!    - the action must be permitted (`action_permissions`; `continue` always is). A denied
//!      action becomes `continue` with `denied` set, its state updates dropped, and
//!      `fail_run` when `on_denied: fail`;
//!    - skip_to / remove_node / swap_nodes targets must be in `allowed_targets` when the
//!      hook lists them, must not have been executed, and must be nodes of the process;
//!    - a reasoned add_node must name one of the hook's `insertable_tasks` (a reasoner
//!      never invents a process step); a static add_node carries its task in full. The
//!      task's id must not be a node of the process already.
//!
//!    A decision failing these checks is treated like a denial, with the reason
//!    `invalid answer: ...` (or `invalid action: ...` for a static action).
//!    - the adaptation must not break a guarantee of the config, given the live model and
//!      the nodes executed so far ([`crate::govern::Governance::admits`]): one that would
//!      is denied with the reason ``breaks guarantee `<id>`: ...``, as a denied action
//!      (`on_denied` applies).
//!
//! State updates are data only: any variable may be set, and nothing in them changes what
//! the hook is permitted to do.

use std::sync::Arc;

use crate::app::{ActionSpec, HookConfig, OnDenied, OnFailure, TaskSpec};
use crate::bridge::{
    ControlPointContext, ControlPointError, HookDecision, ModelSummary, NewTask, Variables,
};
use crate::expr::Truth;
use crate::govern::{Breach, LiveModel, Proposed};
use crate::reason::{AddTask, CallLog, HookAnswer, HookRequest, ReasonError};
use crate::vocab::{Decider, HookAction};

use super::{FlowAgent, Trace, context, cp_error};

pub(crate) async fn evaluate(
    agent: &FlowAgent,
    hook_id: &str,
    mut ctx: ControlPointContext,
) -> Result<HookDecision, ControlPointError> {
    let config = &agent.config;
    let hook = config
        .hooks
        .iter()
        .find(|h| h.id.value == hook_id)
        .or_else(|| config.hook_on(hook_id))
        .or_else(|| ctx.edge.as_ref().and_then(|e| config.hook_on(&e.id)));
    let Some(hook) = hook else {
        return Err(cp_error(
            hook_id,
            format!("no hook `{hook_id}` in the flow config"),
        ));
    };
    if !hook.enabled {
        return Ok(HookDecision::proceed(
            Decider::None,
            Some("hook disabled".to_string()),
        ));
    }
    if let Some(guard) = agent.conditions.guards.get(&hook.id.value) {
        let truth = guard.eval(ctx.variables.as_ref());
        if truth != Truth::True {
            return Ok(HookDecision::proceed(
                Decider::Condition,
                Some(format!("guard `{}` is {}", guard.source(), truth.as_str())),
            ));
        }
    }

    let check = Check {
        agent,
        hook,
        model: context::known_model(&ctx, agent.model()),
        executed: ctx.executed.clone(),
        flow: hook
            .location
            .as_ref()
            .map(|l| l.value.clone())
            .or_else(|| ctx.edge.as_ref().map(|e| e.id.clone())),
    };
    if hook.policy.is_none() {
        return Ok(check.validate(static_answer(hook), false));
    }

    let flow_id = hook
        .location
        .as_ref()
        .map(|l| l.value.clone())
        .or_else(|| ctx.edge.as_ref().map(|e| e.id.clone()))
        .unwrap_or_else(|| hook.id.value.clone());
    let name = ctx
        .edge
        .as_ref()
        .filter(|e| e.id == flow_id)
        .and_then(|e| e.name.clone())
        .or_else(|| {
            agent
                .process()
                .and_then(|p| p.flow(&flow_id))
                .and_then(|f| f.name.clone())
        });
    context::fill_model(&mut ctx, agent.model());
    let req = HookRequest {
        hook_id: hook.id.value.clone(),
        flow_id,
        name,
        policy: agent.policies.hooks.get(&hook.id.value).cloned(),
        instruction: hook
            .instruction
            .as_ref()
            .map(|i| i.value.clone())
            .or_else(|| ctx.instruction.clone()),
        permitted: check.offered_actions(),
        allowed_targets: check.open_targets(),
        insertable_tasks: hook.insertable_tasks.iter().map(new_task).collect(),
        context: ctx,
        calls: CallLog::default(),
    };
    let reasoner = &agent.reasoner;
    let (result, trace) = Trace::ask(req, async |req| reasoner.hook(req).await).await;
    let mut decision = match result {
        Ok(answer) => check.validate(answer, true),
        Err(e @ ReasonError::Invalid { .. }) => {
            check.reject(None, Decider::None, format!("invalid answer: {e}"), None)
        }
        Err(e @ ReasonError::Failed { .. }) => on_failure(hook, e),
        Err(e) => return Err(trace.fail(&hook.id.value, e)),
    };
    decision.calls = trace.calls;
    decision.digest = trace.digest;
    Ok(decision)
}

/// The model gave no usable answer: `on_failure: continue` (the default) goes on along
/// the edge; `fail` fails the run. Either way the hook's record says why.
fn on_failure(hook: &HookConfig, e: ReasonError) -> HookDecision {
    let fail = hook
        .on_failure
        .as_ref()
        .is_some_and(|l| l.value == OnFailure::Fail);
    let mut d = HookDecision::proceed(
        Decider::Fallback,
        Some(format!(
            "{e}; on_failure: {}",
            if fail { "fail" } else { "continue" }
        )),
    );
    if fail {
        d.fail_run = true;
        d.message = Some(format!("hook `{}` failed the run: {e}", hook.id.value));
    }
    d
}

/// The decision a hook without a policy takes: its static action.
fn static_answer(hook: &HookConfig) -> HookAnswer {
    let spec = hook
        .action
        .as_ref()
        .map_or(ActionSpec::Continue, |a| a.value.clone());
    let mut answer = HookAnswer::action(spec.action(), Decider::Static);
    match spec {
        ActionSpec::SkipTo(t) | ActionSpec::RemoveNode(t) => answer.target = Some(t.value),
        ActionSpec::SwapNodes(a, b) => answer.swap = Some((a.value, b.value)),
        ActionSpec::AddNode(task) => answer.add = Some(AddTask::New(new_task(&task))),
        ActionSpec::Terminate(message) => answer.message = message,
        ActionSpec::Continue | ActionSpec::SkipNode => {}
    }
    if let Some(m) = &hook.message {
        answer.message = Some(m.value.clone());
    }
    answer.reason = Some(format!("static action `{}`", answer.action));
    answer
}

fn new_task(spec: &TaskSpec) -> NewTask {
    NewTask {
        id: spec.id.value.clone(),
        name: spec.name.as_ref().map(|n| n.value.clone()),
        instruction: spec.instruction.as_ref().map(|i| i.value.clone()),
        agent: spec.agent.as_ref().map(|a| a.value.clone()),
    }
}

/// What a hook's decision is checked against.
struct Check<'a> {
    agent: &'a FlowAgent,
    hook: &'a HookConfig,
    /// The live model (no nodes when nothing is known of it).
    model: Arc<ModelSummary>,
    executed: Vec<String>,
    /// The hooked flow.
    flow: Option<String>,
}

impl Check<'_> {
    /// The nodes a skip_to / remove_node / swap_nodes may name now.
    fn open_targets(&self) -> Vec<String> {
        let open = |id: &String| !self.executed.contains(id);
        if self.hook.allowed_targets.is_empty() {
            self.model
                .nodes
                .iter()
                .map(|n| &n.id)
                .filter(|id| open(id))
                .cloned()
                .collect()
        } else {
            self.hook
                .allowed_targets
                .iter()
                .map(|t| &t.value)
                .filter(|id| open(id))
                .cloned()
                .collect()
        }
    }

    /// The actions a reasoner is offered: those permitted (`continue` always) that the
    /// hook can take now (targets left to name, tasks to insert).
    fn offered_actions(&self) -> Vec<HookAction> {
        let targets = self.open_targets().len();
        HookAction::ALL
            .into_iter()
            .filter(|a| *a == HookAction::Continue || self.agent.config.permissions.allows(*a))
            .filter(|a| match a {
                HookAction::SkipTo | HookAction::RemoveNode => targets > 0,
                HookAction::SwapNodes => targets > 1,
                HookAction::AddNode => !self.hook.insertable_tasks.is_empty(),
                _ => true,
            })
            .collect()
    }

    /// Check a decision; a failing one becomes `continue` with the reason.
    fn validate(&self, answer: HookAnswer, reasoned: bool) -> HookDecision {
        let asked = answer.action;
        let by = answer.decided_by;
        if asked != HookAction::Continue && !self.agent.config.permissions.allows(asked) {
            return self.reject(
                Some(asked),
                by,
                format!("`{asked}` is not permitted"),
                answer.reason,
            );
        }
        let invalid = |why: String| {
            let label = if reasoned {
                "invalid answer"
            } else {
                "invalid action"
            };
            self.reject(
                Some(asked),
                by,
                format!("{label}: {why}"),
                answer.reason.clone(),
            )
        };
        let mut decision = HookDecision {
            action: asked,
            target: None,
            swap: None,
            add: None,
            state_updates: Variables::new(),
            message: answer.message.clone(),
            decided_by: by,
            reason: answer.reason.clone(),
            denied: None,
            fail_run: false,
            calls: Vec::new(),
            digest: None,
        };
        match asked {
            HookAction::SkipTo | HookAction::RemoveNode => {
                let Some(target) = answer.target.clone() else {
                    return invalid(format!("`{asked}` names no target"));
                };
                if let Err(why) = self.target_ok(&target) {
                    return invalid(why);
                }
                decision.target = Some(target);
            }
            HookAction::SwapNodes => {
                let Some((a, b)) = answer.swap.clone() else {
                    return invalid("`swap_nodes` names no nodes".to_string());
                };
                if a == b {
                    return invalid(format!("`swap_nodes` names `{a}` twice"));
                }
                if let Err(why) = self.target_ok(&a).and_then(|()| self.target_ok(&b)) {
                    return invalid(why);
                }
                decision.swap = Some((a, b));
            }
            HookAction::AddNode => match self.task_to_add(answer.add.clone(), reasoned) {
                Ok(task) => decision.add = Some(task),
                Err(why) => return invalid(why),
            },
            HookAction::Continue | HookAction::SkipNode | HookAction::Terminate => {}
        }
        if let Err(breach) = self.keeps_guarantees(&decision) {
            return self.reject(
                Some(asked),
                by,
                format!("breaks guarantee `{}`: {}", breach.guarantee, breach.why),
                answer.reason,
            );
        }
        decision.state_updates = answer.state_updates;
        decision
    }

    /// Whether the decision, applied to the run as it stands, keeps every guarantee.
    fn keeps_guarantees(&self, decision: &HookDecision) -> Result<(), Breach> {
        let (Some(governance), Some(process), Some(flow)) =
            (&self.agent.governance, self.agent.process(), &self.flow)
        else {
            return Ok(());
        };
        let proposed = match (decision.action, &decision.target, &decision.swap) {
            (HookAction::SkipNode, ..) => Proposed::SkipNode,
            (HookAction::SkipTo, Some(t), _) => Proposed::SkipTo(t),
            (HookAction::RemoveNode, Some(t), _) => Proposed::Remove(t),
            (HookAction::SwapNodes, _, Some((a, b))) => Proposed::Swap(a, b),
            (HookAction::AddNode, ..) => match &decision.add {
                Some(task) => Proposed::Add(&task.id),
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        let live = LiveModel {
            nodes: self.model.nodes.iter().map(|n| n.id.as_str()).collect(),
            flows: self
                .model
                .flows
                .iter()
                .map(|f| (f.id.as_str(), f.source.as_str(), f.target.as_str()))
                .collect(),
        };
        governance.admits(process, &live, &self.executed, flow, proposed)
    }

    fn target_ok(&self, target: &str) -> Result<(), String> {
        let allowed = &self.hook.allowed_targets;
        if !allowed.is_empty() && !allowed.iter().any(|t| t.value == target) {
            let names: Vec<&str> = allowed.iter().map(|t| t.value.as_str()).collect();
            return Err(format!(
                "`{target}` is not an allowed target of hook `{}` ({})",
                self.hook.id.value,
                names.join(", ")
            ));
        }
        if self.executed.iter().any(|e| e == target) {
            return Err(format!("`{target}` has already been executed"));
        }
        if !self.model.nodes.is_empty() && !self.model.nodes.iter().any(|n| n.id == target) {
            return Err(format!("`{target}` is not a node of the process"));
        }
        Ok(())
    }

    /// The task an add_node inserts. A reasoned answer must name one of the hook's
    /// `insertable_tasks` (a reasoner never invents a process step); a static action
    /// carries its task in full.
    fn task_to_add(&self, add: Option<AddTask>, reasoned: bool) -> Result<NewTask, String> {
        let Some(add) = add else {
            return Err("`add_node` names no task".to_string());
        };
        let hook = &self.hook.id.value;
        let insertable = &self.hook.insertable_tasks;
        let task = match add {
            AddTask::New(task) if !reasoned => task,
            add => {
                let id = add.id();
                if insertable.is_empty() {
                    return Err(format!(
                        "hook `{hook}` offers no tasks to insert, so `{id}` cannot be added \
                         (list the tasks under `insertable_tasks`)"
                    ));
                }
                match insertable.iter().find(|t| t.id.value == id) {
                    Some(spec) => new_task(spec),
                    None => {
                        let names: Vec<&str> =
                            insertable.iter().map(|t| t.id.value.as_str()).collect();
                        return Err(format!(
                            "`{id}` is not one of the tasks hook `{hook}` may insert ({})",
                            names.join(", ")
                        ));
                    }
                }
            }
        };
        if self.model.nodes.iter().any(|n| n.id == task.id) {
            return Err(format!("`{}` is already a node of the process", task.id));
        }
        Ok(task)
    }

    /// The decision when the asked action cannot be applied: go on along the edge.
    fn reject(
        &self,
        asked: Option<HookAction>,
        decided_by: Decider,
        reason: String,
        answer_reason: Option<String>,
    ) -> HookDecision {
        let fail_run = self.agent.config.permissions.on_denied == OnDenied::Fail;
        // When the denial fails the run, the message says why (the run's final message is
        // this one); otherwise it keeps the answer's own reason for the audit.
        let message = match (fail_run, answer_reason) {
            (true, Some(r)) => format!("{reason} (on_denied: fail); the answer's reason: {r}"),
            (true, None) => format!("{reason} (on_denied: fail)"),
            (false, Some(r)) => format!("the answer's reason: {r}"),
            (false, None) => String::new(),
        };
        let mut d = HookDecision::proceed(decided_by, Some(reason));
        d.denied = asked;
        d.message = (!message.is_empty()).then_some(message);
        d.fail_run = fail_run;
        d
    }
}
