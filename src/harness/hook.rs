//! `evaluate_hook`: what happens on a hooked sequence flow.
//!
//! 1. The hook is found by id, else by its location (the flow id an external engine
//!    passes as the hook id, or the context's edge). An unknown hook is an error.
//! 2. A disabled hook proceeds (nobody decides).
//! 3. A guard (`condition`) that is not TRUE (FALSE or UNKNOWN) proceeds without asking.
//! 4. A hook with a policy asks the reasoner, offering the permitted actions it can take
//!    now (`continue` always), the targets (safe by default: the hook's `allowed_targets`
//!    only; every node but start and end events only with the explicit
//!    `allowed_targets: any`; never, for skip_to, the hooked flow's own target, which is
//!    `continue`), the insertable tasks and the variables `state_updates` may set (its
//!    `may_set`, typed by their defaults). A hook without a policy takes its static
//!    `action:` (default `continue`).
//! 5. The decision is checked, whichever engine runs the process and whoever decided:
//!    - the action must be permitted (`action_permissions`; `continue` always is). A denied
//!      action becomes `continue` with `denied` set, its state updates dropped, and
//!      `fail_run` when `on_denied: fail`;
//!    - a reasoned skip_to / remove_node / swap_nodes must name offered targets; any
//!      target must be a node of the process not yet executed;
//!    - a reasoned add_node must name one of the hook's `insertable_tasks` (a reasoner
//!      never invents a process step); a static add_node carries its task in full. The
//!      task's id must not be a node of the process already;
//!    - `state_updates` set only the hook's `may_set` variables, each with a value of its
//!      declared default's type.
//!
//!    A decision failing these checks is treated like a denial, with the reason
//!    `invalid answer: ...` (or `invalid action: ...` for a static action).
//!    - the adaptation must not break a guarantee of the config, given the live model and
//!      the nodes executed so far ([`crate::govern::Governance::admits`]): one that would
//!      is denied with the reason ``breaks guarantee `<id>`: ...``, as a denied action
//!      (`on_denied` applies).
//!
//! State updates are data only: nothing in them changes what the hook is permitted to do.

use std::sync::Arc;

use crate::app::{ActionSpec, HookConfig, OnDenied, OnFailure, OnUntrusted, TaskSpec};
use crate::bridge::{
    ControlPointContext, ControlPointError, HookDecision, ModelSummary, NewTask, Taint, Variables,
};
use crate::expr::Truth;
use crate::govern::{Breach, LiveModel, Proposed};
use crate::reason::{AddTask, CallLog, HookAnswer, HookRequest, ReasonError};
use crate::vocab::{Decider, HookAction, Settable, VarKind, check_state_updates};

use super::{FlowAgent, Trace, ask_person, context, cp_error, trust};

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
        let truth = guard.eval(&ctx.variables);
        if truth != Truth::True {
            return Ok(HookDecision::proceed(
                Decider::Condition,
                Some(format!("guard `{}` is {}", guard.source(), truth.as_str())),
            ));
        }
    }

    let flow_id = hook
        .location
        .as_ref()
        .map(|l| l.value.clone())
        .or_else(|| ctx.edge.as_ref().map(|e| e.id.clone()))
        .unwrap_or_else(|| hook.id.value.clone());
    let model = context::known_model(&ctx, agent.model());
    let flow_target = ctx
        .edge
        .as_ref()
        .filter(|e| e.id == flow_id)
        .map(|e| e.target.clone())
        .or_else(|| {
            model
                .flows
                .iter()
                .find(|f| f.id == flow_id)
                .map(|f| f.target.clone())
        });
    let check = Check {
        agent,
        hook,
        model,
        executed: ctx.executed.clone(),
        flow: flow_id.clone(),
        flow_target,
        settable: settable(agent, hook),
    };
    if hook.policy.is_none() {
        return Ok(check.validate(static_answer(hook), false));
    }

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
    let untrusted = trust::untrusted(&agent.config, &ctx);
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
        flow_target: check.flow_target.clone(),
        settable: check.settable.clone(),
        insertable_tasks: hook.insertable_tasks.iter().map(new_task).collect(),
        escalation: None,
        context: ctx,
        calls: CallLog::default(),
    };
    let reasoner = &agent.reasoner;
    let policy = hook.on_failure.as_ref().map_or(OnFailure::Ask, |l| l.value);
    let again = req.clone();
    let (result, trace) = Trace::ask(req, async |req| reasoner.hook(req).await).await;
    let person = async |req: HookRequest, why: String| {
        ask_person(req, why, async |r| reasoner.hook(r).await).await
    };
    let mut decision = match result {
        Ok(answer) => {
            let decision = check.validate(answer, true);
            let why = check.untrusted_proposal(&decision, &untrusted);
            match (why, agent.config.permissions.on_untrusted) {
                (None, _) | (Some(_), OnUntrusted::Allow) => decision,
                (Some(why), OnUntrusted::Deny) => check.reject(
                    Some(decision.action),
                    decision.decided_by,
                    why,
                    decision.reason,
                ),
                // A person confirms (or decides otherwise); nobody: denied.
                (Some(why), OnUntrusted::Confirm) => {
                    match person(again, format!("confirm: {why}")).await {
                        Ok(Some(answer)) => check.validate(answer, true),
                        Ok(None) => check.reject(
                            Some(decision.action),
                            decision.decided_by,
                            format!("{why}, and no person can confirm it (on_untrusted: confirm)"),
                            decision.reason,
                        ),
                        Err(other) => return Err(trace.fail(&hook.id.value, other)),
                    }
                }
            }
        }
        Err(e @ ReasonError::Invalid { .. }) => {
            check.reject(None, Decider::None, format!("invalid answer: {e}"), None)
        }
        // Fail-safe: a person decides, or the run waits for one, or it fails.
        Err(e @ ReasonError::Failed { .. }) if policy == OnFailure::Ask => {
            match person(again, e.to_string()).await {
                Ok(Some(answer)) => check.validate(answer, true),
                Ok(None) => nobody_to_ask(hook, e),
                Err(other) => return Err(trace.fail(&hook.id.value, other)),
            }
        }
        Err(e @ ReasonError::Failed { .. }) => on_failure(hook, policy, e),
        Err(e) => return Err(trace.fail(&hook.id.value, e)),
    };
    if !decision.state_updates.is_empty() {
        decision.taint = trust::taint(decision.decided_by, &untrusted, false, || {
            format!("model state update at hook `{}`", hook.id.value)
        });
    }
    decision.calls = trace.calls;
    decision.digest = trace.digest;
    Ok(decision)
}

/// The model gave no usable answer: `on_failure: continue` goes on along the edge; `fail`
/// fails the run. Either way the hook's record says why.
fn on_failure(hook: &HookConfig, policy: OnFailure, e: ReasonError) -> HookDecision {
    let fail = policy != OnFailure::Continue;
    let mut d = HookDecision::proceed(
        Decider::Fallback,
        Some(format!("{e}; on_failure: {}", policy.as_str())),
    );
    if fail {
        d.fail_run = true;
        d.message = Some(format!("hook `{}` failed the run: {e}", hook.id.value));
    }
    d
}

/// `on_failure: ask` with nobody to ask (no terminal, no parking): the run fails rather
/// than go on undecided.
fn nobody_to_ask(hook: &HookConfig, e: ReasonError) -> HookDecision {
    let mut d = HookDecision::proceed(
        Decider::Fallback,
        Some(format!("{e}; on_failure: ask, and no person can answer")),
    );
    d.fail_run = true;
    d.message = Some(format!(
        "hook `{}` failed the run: {e}; no person could decide instead (on_failure: ask)",
        hook.id.value
    ));
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

/// The variables a hook's answer may set: its `may_set`, typed by their declared defaults.
fn settable(agent: &FlowAgent, hook: &HookConfig) -> Vec<Settable> {
    hook.may_set
        .iter()
        .map(|name| Settable {
            name: name.value.clone(),
            kind: agent
                .config
                .variable(&name.value)
                .map_or(VarKind::Any, |v| VarKind::of(&v.default)),
        })
        .collect()
}

/// What a hook's decision is checked against.
struct Check<'a> {
    agent: &'a FlowAgent,
    hook: &'a HookConfig,
    /// The live model (no nodes when nothing is known of it).
    model: Arc<ModelSummary>,
    executed: Vec<String>,
    /// The hooked flow.
    flow: String,
    /// Where the hooked flow goes: skip_to there is `continue`, never offered.
    flow_target: Option<String>,
    /// What `state_updates` may set.
    settable: Vec<Settable>,
}

impl Check<'_> {
    /// Why a model's decision needs `on_untrusted`: a consequential action proposed while
    /// its context held untrusted data ([`trust`]); `None` when it does not.
    fn untrusted_proposal(
        &self,
        decision: &HookDecision,
        untrusted: &[(String, Taint)],
    ) -> Option<String> {
        if decision.decided_by != Decider::Model
            || decision.denied.is_some()
            || !trust::consequential(decision.action)
        {
            return None;
        }
        (!untrusted.is_empty()).then(|| {
            format!(
                "`{}` was proposed by a model whose context held untrusted data: {}",
                decision.action,
                trust::listed(untrusted)
            )
        })
    }

    /// The nodes a skip_to / remove_node / swap_nodes may name now: the hook's
    /// `allowed_targets` not yet executed; with `allowed_targets: any`, every node not yet
    /// executed but start and end events; without either, none (safe by default).
    fn open_targets(&self) -> Vec<String> {
        let open = |id: &String| !self.executed.contains(id);
        if self.hook.any_target.is_some() {
            self.model
                .nodes
                .iter()
                .filter(|n| !matches!(n.kind.as_str(), "startEvent" | "endEvent"))
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
        let targets = self.open_targets();
        let skip_targets = targets
            .iter()
            .filter(|t| Some(*t) != self.flow_target.as_ref())
            .count();
        HookAction::ALL
            .into_iter()
            .filter(|a| *a == HookAction::Continue || self.agent.config.permissions.allows(*a))
            .filter(|a| match a {
                HookAction::SkipTo => skip_targets > 0,
                HookAction::RemoveNode => !targets.is_empty(),
                HookAction::SwapNodes => targets.len() > 1,
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
            taint: None,
        };
        match asked {
            HookAction::SkipTo | HookAction::RemoveNode => {
                let Some(target) = answer.target.clone() else {
                    return invalid(format!("`{asked}` names no target"));
                };
                if asked == HookAction::SkipTo && self.flow_target.as_ref() == Some(&target) {
                    return invalid(format!(
                        "`{target}` is where the flow goes anyway: that is `continue`, not a skip"
                    ));
                }
                if let Err(why) = self.target_ok(&target, reasoned) {
                    return invalid(why.to_string());
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
                if let Err(why) = self
                    .target_ok(&a, reasoned)
                    .and_then(|()| self.target_ok(&b, reasoned))
                {
                    return invalid(why.to_string());
                }
                decision.swap = Some((a, b));
            }
            HookAction::AddNode => match self.task_to_add(answer.add.clone(), reasoned) {
                Ok(task) => decision.add = Some(task),
                Err(why) => return invalid(why.to_string()),
            },
            HookAction::Continue | HookAction::SkipNode | HookAction::Terminate => {}
        }
        if let Err(why) = check_state_updates(&self.settable, &answer.state_updates) {
            return invalid(format!(
                "{why} (a hook sets only the variables of its `may_set`)"
            ));
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
        let (Some(governance), Some(process)) = (&self.agent.governance, self.agent.process())
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
        governance.admits(process, &live, &self.executed, &self.flow, proposed)
    }

    /// A target a decision names: for a reasoned answer, one the hook offers (its
    /// `allowed_targets`, or with `allowed_targets: any` a node that is neither a start
    /// nor an end event); for any decision, a node of the process not yet executed.
    fn target_ok(&self, target: &str, reasoned: bool) -> Result<(), NotATarget> {
        let hook = &self.hook.id.value;
        let allowed = &self.hook.allowed_targets;
        if reasoned && self.hook.any_target.is_none() && !allowed.iter().any(|t| t.value == target)
        {
            if allowed.is_empty() {
                return Err(NotATarget::NoneAllowed {
                    hook: hook.clone(),
                    target: target.to_string(),
                });
            }
            let names: Vec<&str> = allowed.iter().map(|t| t.value.as_str()).collect();
            return Err(NotATarget::NotAllowed {
                hook: hook.clone(),
                target: target.to_string(),
                allowed: names.join(", "),
            });
        }
        let node = self.model.nodes.iter().find(|n| n.id == target);
        if reasoned
            && self.hook.any_target.is_some()
            && let Some(n) = node
            && matches!(n.kind.as_str(), "startEvent" | "endEvent")
        {
            return Err(NotATarget::StartOrEnd {
                target: target.to_string(),
                kind: n.kind.clone(),
            });
        }
        if self.executed.iter().any(|e| e == target) {
            return Err(NotATarget::Executed(target.to_string()));
        }
        if !self.model.nodes.is_empty() && node.is_none() {
            return Err(NotATarget::NotANode(target.to_string()));
        }
        Ok(())
    }

    /// The task an add_node inserts. A reasoned answer must name one of the hook's
    /// `insertable_tasks` (a reasoner never invents a process step); a static action
    /// carries its task in full.
    fn task_to_add(&self, add: Option<AddTask>, reasoned: bool) -> Result<NewTask, NotInsertable> {
        let Some(add) = add else {
            return Err(NotInsertable::NoTask);
        };
        let hook = &self.hook.id.value;
        let insertable = &self.hook.insertable_tasks;
        let task = match add {
            AddTask::New(task) if !reasoned => task,
            add => {
                let id = add.id();
                if insertable.is_empty() {
                    return Err(NotInsertable::NoneOffered {
                        hook: hook.clone(),
                        id: id.to_string(),
                    });
                }
                match insertable.iter().find(|t| t.id.value == id) {
                    Some(spec) => new_task(spec),
                    None => {
                        let names: Vec<&str> =
                            insertable.iter().map(|t| t.id.value.as_str()).collect();
                        return Err(NotInsertable::NotOffered {
                            hook: hook.clone(),
                            id: id.to_string(),
                            offered: names.join(", "),
                        });
                    }
                }
            }
        };
        if self.model.nodes.iter().any(|n| n.id == task.id) {
            return Err(NotInsertable::Exists(task.id));
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

/// Why a hook's decision may not name a node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotATarget {
    #[error("hook `{hook}` lists no `allowed_targets`, so `{target}` cannot be named")]
    NoneAllowed { hook: String, target: String },
    #[error("`{target}` is not an allowed target of hook `{hook}` ({allowed})")]
    NotAllowed {
        hook: String,
        target: String,
        allowed: String,
    },
    #[error(
        "`{target}` is a {kind}: `allowed_targets: any` never offers one (list it to allow it)"
    )]
    StartOrEnd { target: String, kind: String },
    #[error("`{0}` has already been executed")]
    Executed(String),
    #[error("`{0}` is not a node of the process")]
    NotANode(String),
}

/// Why a hook's decision may not insert a task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotInsertable {
    #[error("`add_node` names no task")]
    NoTask,
    #[error(
        "hook `{hook}` offers no tasks to insert, so `{id}` cannot be added (list the tasks \
         under `insertable_tasks`)"
    )]
    NoneOffered { hook: String, id: String },
    #[error("`{id}` is not one of the tasks hook `{hook}` may insert ({offered})")]
    NotOffered {
        hook: String,
        id: String,
        offered: String,
    },
    #[error("`{0}` is already a node of the process")]
    Exists(String),
}
