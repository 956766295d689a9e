//! Questions for a person that nobody can answer now. [`Park`] is the reasoner of last
//! resort when a run has no terminal (or is detached): instead of failing, it parks the
//! question ([`ReasonError::Parked`] with a [`Question`] saying what may be answered), and
//! the run waits. `cuga-flo runs answer` checks an answer against the question
//! ([`check_answer`]) and journals it; the resumed run's [`Answers`] gives it to the
//! harness, which validates it again exactly as a live answer.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::tools::{ConfirmRequest, Confirmation, Confirming, confirm_question, no_confirmation};
use super::{
    AddTask, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, Policy, ReasonError, Reasoner,
    TaskAnswer, TaskRequest,
};
use crate::bridge::{BoxFuture, ControlPointContext, NewTask};
use crate::vocab::{ControlPointKind, Decider, HookAction, Offered, OfferedFlow, Question};

/// How many policy lines a parked question carries.
pub const POLICY_LINES: usize = 40;

/// Parks every question it is asked (the last reasoner of a chain with no person).
#[derive(Debug, Clone, Default)]
pub struct Park {
    /// Per control point: how long its question may wait, and the answer given then
    /// (`deadline:` and `on_timeout:` in the flow config).
    pub deadlines: HashMap<String, (std::time::Duration, Value)>,
    /// Per guardrail gateway: what its approver decides (the question says it).
    pub approvals: HashMap<String, crate::vocab::ApprovalAsk>,
}

/// The question a person is asked at a control point: what it offers, its policy.
fn question(
    kind: ControlPointKind,
    element: &str,
    name: Option<String>,
    ctx: &ControlPointContext,
    policy: Option<&Policy>,
    instruction: Option<String>,
    offered: Offered,
) -> Question {
    let key = ctx
        .idempotency_key
        .clone()
        .unwrap_or_else(|| format!("{}:{element}:?", ctx.run_id));
    Question {
        key,
        kind,
        element: element.to_string(),
        name,
        offered,
        policy: policy.map(|p| p.excerpt(POLICY_LINES).0),
        policy_path: policy.map(|p| p.path.clone()),
        instruction,
        deadline_ms: None,
        on_timeout: None,
        approval: None,
        remote: None,
    }
}

/// The question a task asks a person: its outputs.
pub fn task_question(req: &TaskRequest) -> Question {
    question(
        ControlPointKind::Task,
        &req.task_id,
        req.name.clone(),
        &req.context,
        req.policy.as_ref(),
        req.instruction.clone(),
        Offered::Outputs {
            outputs: req.outputs.clone(),
            kinds: req.output_kinds.clone(),
        },
    )
}

/// The question a gateway asks a person: the flows offered.
pub fn gateway_question(req: &GatewayRequest) -> Question {
    let offered = Offered::Flows {
        flows: req
            .flows
            .iter()
            .map(|f| OfferedFlow {
                id: f.id.clone(),
                target: f.target.clone(),
                label: f.decision.clone().or_else(|| f.name.clone()),
            })
            .collect(),
        multiple: req.multiple,
    };
    question(
        ControlPointKind::Gateway,
        &req.gateway_id,
        req.name.clone(),
        &req.context,
        req.policy.as_ref(),
        with_escalation(req.escalation.as_deref(), None),
        offered,
    )
}

/// A question escalated to a person (the model failed, or proposed a consequential
/// action on untrusted data) says why first.
fn with_escalation(escalation: Option<&str>, instruction: Option<String>) -> Option<String> {
    match (escalation, instruction) {
        (Some(why), Some(i)) => Some(format!("{why}\n{i}")),
        (Some(why), None) => Some(why.to_string()),
        (None, i) => i,
    }
}

/// The question a hook asks a person: the permitted actions and their targets.
pub fn hook_question(req: &HookRequest) -> Question {
    let offered = Offered::Actions {
        actions: req.permitted.clone(),
        targets: req.allowed_targets.clone(),
        insertable: req.insertable_tasks.iter().map(|t| t.id.clone()).collect(),
        settable: req.settable.clone(),
        flow_target: req.flow_target.clone(),
    };
    question(
        ControlPointKind::Hook,
        &req.hook_id,
        req.name.clone(),
        &req.context,
        req.policy.as_ref(),
        with_escalation(req.escalation.as_deref(), req.instruction.clone()),
        offered,
    )
}

impl Park {
    fn park(&self, mut question: Question) -> ReasonError {
        if let Some((after, on_timeout)) = self.deadlines.get(&question.element) {
            let due = crate::clock::now_ms()
                .saturating_add(u64::try_from(after.as_millis()).unwrap_or(u64::MAX));
            question.deadline_ms = Some(due);
            question.on_timeout = Some(on_timeout.clone());
        }
        if question.kind == ControlPointKind::Gateway {
            question.approval = self.approvals.get(&question.element).cloned();
        }
        ReasonError::Parked(Box::new(question))
    }
}

impl Reasoner for Park {
    fn describe(&self) -> String {
        "a person, later (questions park)".to_string()
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move { Err(self.park(task_question(&req))) })
    }

    fn confirm(&self, req: ConfirmRequest) -> Confirming<'_> {
        Box::pin(async move { Err(self.park(confirm_question(&req))) })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move { Err(self.park(gateway_question(&req))) })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move { Err(self.park(hook_question(&req))) })
    }
}

/// An answer recorded for a parked question.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub answer: Value,
    pub decided_by: Decider,
    pub reason: Option<String>,
    /// Who answered (`runs answer --by`).
    pub by: Option<String>,
}

/// The answers `runs answer` journalled, by idempotency key: a resumed run's first
/// reasoner. Questions it has no answer for fall through to the rest of the chain.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    by_key: HashMap<String, Recorded>,
}

impl Answers {
    pub fn new(by_key: HashMap<String, Recorded>) -> Self {
        Answers { by_key }
    }

    /// The answer recorded under `key`.
    pub fn recorded(&self, key: &str) -> Option<&Recorded> {
        self.by_key.get(key)
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    fn get(&self, ctx: &ControlPointContext, element: &str) -> Result<&Recorded, ReasonError> {
        ctx.idempotency_key
            .as_ref()
            .and_then(|k| self.by_key.get(k))
            .ok_or_else(|| ReasonError::no_answer(element, "no recorded answer"))
    }
}

/// The answers people gave to the runs a server holds (the web console, `runs answer`
/// through it), by question key, shared by every run of the server: asked first, so a
/// resumed run applies a person's answer before anyone else is asked. A run's answers go
/// once it ends.
#[derive(Debug, Clone, Default)]
pub struct SharedAnswers(std::sync::Arc<std::sync::Mutex<HashMap<String, Recorded>>>);

impl SharedAnswers {
    pub fn insert(&self, key: String, recorded: Recorded) {
        self.lock().insert(key, recorded);
    }

    /// Forget the answers to run `run_id` (its keys are `<run id>:<element>:<visit>`).
    pub fn forget_run(&self, run_id: &str) {
        let prefix = format!("{run_id}:");
        self.lock().retain(|k, _| !k.starts_with(&prefix));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Recorded>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The recorded answer under `key`, alone.
    fn one(&self, key: Option<&String>) -> Answers {
        let found = key.and_then(|k| self.lock().get(k).map(|r| (k.clone(), r.clone())));
        Answers::new(found.into_iter().collect())
    }
}

impl Reasoner for SharedAnswers {
    fn describe(&self) -> String {
        "answers people gave later".to_string()
    }

    fn confirm(&self, req: ConfirmRequest) -> Confirming<'_> {
        Box::pin(async move { self.one(Some(&req.key)).confirm(req).await })
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            self.one(req.context.idempotency_key.as_ref())
                .task(req)
                .await
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            (self.one(req.context.idempotency_key.as_ref()))
                .gateway(req)
                .await
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            self.one(req.context.idempotency_key.as_ref())
                .hook(req)
                .await
        })
    }
}

impl Reasoner for Answers {
    fn describe(&self) -> String {
        "answers given with `runs answer`".to_string()
    }

    fn confirm(&self, req: ConfirmRequest) -> Confirming<'_> {
        Box::pin(async move {
            let Some(r) = self.by_key.get(&req.key) else {
                return Err(no_confirmation(&req));
            };
            let approved = r
                .answer
                .get("confirm")
                .and_then(Value::as_bool)
                .ok_or_else(|| {
                    ReasonError::invalid(
                        &req.task_id,
                        "the recorded answer neither approves nor denies",
                    )
                })?;
            Ok(Confirmation {
                approved,
                decided_by: r.decided_by,
                by: r.by.clone(),
                reason: r.reason.clone(),
            })
        })
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            let r = self.get(&req.context, &req.task_id)?;
            let outputs = r
                .answer
                .get("outputs")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let raised = r.answer.get("error").and_then(Value::as_str).map(|code| {
                crate::vocab::RaisedError {
                    code: code.to_string(),
                    message: (r.answer.get("message").and_then(Value::as_str)).map(str::to_string),
                }
            });
            Ok(TaskAnswer {
                outputs,
                reason: r.reason.clone(),
                decided_by: r.decided_by,
                raised,
            })
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            let r = self.get(&req.context, &req.gateway_id)?;
            let flows = r
                .answer
                .get("flows")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            Ok(GatewayAnswer {
                flows,
                reason: r.reason.clone(),
                decided_by: r.decided_by,
            })
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            let r = self.get(&req.context, &req.hook_id)?;
            let a = &r.answer;
            let text = |k: &str| a.get(k).and_then(Value::as_str).map(str::to_string);
            let action = text("action")
                .and_then(|s| s.parse::<HookAction>().ok())
                .ok_or_else(|| {
                    ReasonError::invalid(&req.hook_id, "the recorded answer has no action")
                })?;
            let swap = a.get("swap").and_then(Value::as_array).and_then(|s| {
                Some((
                    s.first()?.as_str()?.to_string(),
                    s.get(1)?.as_str()?.to_string(),
                ))
            });
            let add =
                text("add").map(
                    |id| match req.insertable_tasks.iter().find(|t| t.id == id) {
                        Some(_) => AddTask::Insertable(id),
                        None => AddTask::New(NewTask {
                            id,
                            ..NewTask::default()
                        }),
                    },
                );
            Ok(HookAnswer {
                action,
                target: text("target"),
                swap,
                add,
                state_updates: a
                    .get("state_updates")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
                message: text("message"),
                reason: r.reason.clone(),
                decided_by: r.decided_by,
            })
        })
    }
}

/// What a person answers on the command line, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// `--flow` (repeatable for inclusive gateways).
    pub flows: Vec<String>,
    pub action: Option<String>,
    /// `--target` (twice for swap_nodes).
    pub targets: Vec<String>,
    /// `--outputs` (a JSON object).
    pub outputs: Option<Value>,
    /// `--choice N`: the N-th offered flow or action (1-based).
    pub choice: Option<usize>,
    /// `--set NAME=VALUE` state updates for a hook.
    pub state_updates: Map<String, Value>,
    /// `--error CODE`: a task's answer that raises this BPMN error instead of outputs.
    pub error: Option<String>,
    /// `--message TEXT`: what the raised error says.
    pub message: Option<String>,
    /// `approve` / `deny` of a tool call a person confirms.
    pub confirm: Option<bool>,
}

impl Given {
    /// An answer written as data (a config's `on_timeout:`): `{flow: F}` or
    /// `{flows: [...]}`, `{action: A, target: X}` (or `targets`), `{outputs: {...}}`,
    /// `{choice: N}`, with optional `state_updates`.
    pub fn from_value(value: &Value) -> Result<Given, String> {
        let Value::Object(map) = value else {
            return Err(format!("{value} is not an answer (a mapping)"));
        };
        let strings = |key: &str| -> Vec<String> {
            match map.get(key) {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            }
        };
        let mut flows = strings("flow");
        flows.extend(strings("flows"));
        let mut targets = strings("target");
        targets.extend(strings("targets"));
        Ok(Given {
            flows,
            action: map
                .get("action")
                .and_then(Value::as_str)
                .map(str::to_string),
            targets,
            outputs: map.get("outputs").cloned(),
            choice: map
                .get("choice")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok()),
            state_updates: map
                .get("state_updates")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            error: map.get("error").and_then(Value::as_str).map(str::to_string),
            message: map
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string),
            confirm: map.get("confirm").and_then(Value::as_bool),
        })
    }
}

/// Check `given` against what `question` offers, as a live answer is checked, and give
/// the answer to journal. The error lists what is allowed.
pub fn check_answer(question: &Question, given: &Given) -> Result<Value, String> {
    if given.error.is_some() && !matches!(question.offered, Offered::Outputs { .. }) {
        return Err(format!(
            "`{}` is not a task: only a task's answer raises a BPMN error (--error)",
            question.element
        ));
    }
    if given.confirm.is_some() && !matches!(question.offered, Offered::ToolCall { .. }) {
        return Err(format!(
            "`{}` is not a tool call to confirm: `approve`/`deny` does not answer it",
            question.element
        ));
    }
    match &question.offered {
        Offered::ToolCall { tool, .. } => {
            let other = !given.flows.is_empty()
                || given.action.is_some()
                || given.outputs.is_some()
                || given.choice.is_some()
                || given.error.is_some();
            match given.confirm {
                Some(approved) if !other => Ok(json!({ "confirm": approved })),
                _ => Err(format!(
                    "`{}` waits for a person to confirm a call to `{tool}`: answer `approve` or `deny` (with --reason)",
                    question.element
                )),
            }
        }
        Offered::Flows { flows, multiple } => {
            let ids: Vec<&str> = flows.iter().map(|f| f.id.as_str()).collect();
            let allowed = || format!("the flows offered are: {}", ids.join(", "));
            if given.action.is_some() || given.outputs.is_some() || !given.targets.is_empty() {
                return Err(format!(
                    "`{}` is a gateway: answer with --flow or --choice ({})",
                    question.element,
                    allowed()
                ));
            }
            let mut chosen = given.flows.clone();
            if let Some(n) = given.choice {
                let flow = ids.get(n.wrapping_sub(1)).ok_or_else(|| {
                    format!(
                        "--choice {n} is not one of 1..{} ({})",
                        ids.len(),
                        allowed()
                    )
                })?;
                chosen.push(flow.to_string());
            }
            if chosen.is_empty() {
                return Err(format!("answer with --flow or --choice ({})", allowed()));
            }
            if !multiple && chosen.len() > 1 {
                return Err(format!(
                    "`{}` takes exactly one flow ({})",
                    question.element,
                    allowed()
                ));
            }
            for (i, flow) in chosen.iter().enumerate() {
                if !ids.contains(&flow.as_str()) {
                    return Err(format!("`{flow}` is not offered ({})", allowed()));
                }
                if chosen[..i].contains(flow) {
                    return Err(format!("`{flow}` is named twice"));
                }
            }
            Ok(json!({ "flows": chosen }))
        }
        Offered::Actions {
            actions,
            targets,
            insertable,
            settable,
            flow_target,
        } => {
            let names: Vec<&str> = actions.iter().map(|a| a.as_str()).collect();
            let allowed = || format!("the actions permitted are: {}", names.join(", "));
            if !given.flows.is_empty() || given.outputs.is_some() {
                return Err(format!(
                    "`{}` is a hook: answer with --action or --choice ({})",
                    question.element,
                    allowed()
                ));
            }
            let action = match (&given.action, given.choice) {
                (Some(a), None) => a
                    .parse::<HookAction>()
                    .map_err(|_| format!("`{a}` is not a hook action ({})", allowed()))?,
                (None, Some(n)) => *actions.get(n.wrapping_sub(1)).ok_or_else(|| {
                    format!(
                        "--choice {n} is not one of 1..{} ({})",
                        actions.len(),
                        allowed()
                    )
                })?,
                (Some(_), Some(_)) => return Err("give --action or --choice, not both".into()),
                (None, None) => return Err(format!("answer with --action ({})", allowed())),
            };
            if !actions.contains(&action) {
                return Err(format!("`{action}` is not permitted here ({})", allowed()));
            }
            let mut answer = Map::new();
            answer.insert("action".into(), json!(action.as_str()));
            let in_targets = |t: &str| -> Result<(), String> {
                if targets.iter().any(|x| x == t) {
                    Ok(())
                } else {
                    Err(format!(
                        "`{t}` is not an allowed target (allowed: {})",
                        if targets.is_empty() {
                            "none".to_string()
                        } else {
                            targets.join(", ")
                        }
                    ))
                }
            };
            match action {
                HookAction::SkipTo | HookAction::RemoveNode => {
                    let [t] = given.targets.as_slice() else {
                        return Err(format!("{action} needs exactly one --target"));
                    };
                    in_targets(t)?;
                    if action == HookAction::SkipTo && flow_target.as_deref() == Some(t.as_str()) {
                        return Err(format!(
                            "`{t}` is where the flow goes anyway: answer --action continue"
                        ));
                    }
                    answer.insert("target".into(), json!(t));
                }
                HookAction::SwapNodes => {
                    let [a, b] = given.targets.as_slice() else {
                        return Err("swap_nodes needs two --target".to_string());
                    };
                    in_targets(a)?;
                    in_targets(b)?;
                    if a == b {
                        return Err("swap_nodes needs two different targets".to_string());
                    }
                    answer.insert("swap".into(), json!([a, b]));
                }
                HookAction::AddNode => {
                    let [t] = given.targets.as_slice() else {
                        return Err(format!(
                            "add_node needs one --target: a task to insert ({})",
                            insertable.join(", ")
                        ));
                    };
                    if !insertable.contains(t) {
                        return Err(format!(
                            "`{t}` is not an insertable task (those are: {})",
                            insertable.join(", ")
                        ));
                    }
                    answer.insert("add".into(), json!(t));
                }
                HookAction::Continue | HookAction::SkipNode | HookAction::Terminate => {
                    if !given.targets.is_empty() {
                        return Err(format!("{action} takes no --target"));
                    }
                }
            }
            if !given.state_updates.is_empty() {
                crate::vocab::check_state_updates(settable, &given.state_updates)?;
                answer.insert(
                    "state_updates".into(),
                    Value::Object(given.state_updates.clone()),
                );
            }
            Ok(Value::Object(answer))
        }
        Offered::Outputs { outputs, kinds } => {
            if !given.flows.is_empty() || given.action.is_some() || given.choice.is_some() {
                return Err(format!(
                    "`{}` is a task: answer with --outputs '{{...}}' (outputs: {})",
                    question.element,
                    outputs.join(", ")
                ));
            }
            if let Some(code) = &given.error {
                if given.outputs.is_some() {
                    return Err("answer with --outputs or raise an --error, not both".into());
                }
                if !crate::vocab::error_code::is_valid(code) {
                    return Err(format!(
                        "`{code}` is not a BPMN error code (letters, digits, `_`, `-`, `.`, `:`)"
                    ));
                }
                let mut answer = Map::new();
                answer.insert("error".into(), Value::String(code.clone()));
                if let Some(message) = &given.message {
                    answer.insert("message".into(), Value::String(message.clone()));
                }
                return Ok(Value::Object(answer));
            }
            let Some(Value::Object(given_outputs)) = &given.outputs else {
                return Err(format!(
                    "answer with --outputs and a JSON object with {}",
                    if outputs.is_empty() {
                        "no keys".to_string()
                    } else {
                        outputs.join(", ")
                    }
                ));
            };
            let missing: Vec<&str> = outputs
                .iter()
                .filter(|o| !given_outputs.contains_key(*o))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "the outputs lack {} (the task's outputs are: {})",
                    missing.join(", "),
                    outputs.join(", ")
                ));
            }
            if let Some(extra) = given_outputs.keys().find(|k| !outputs.contains(k)) {
                return Err(format!(
                    "`{extra}` is not an output of the task (its outputs are: {})",
                    outputs.join(", ")
                ));
            }
            for (key, value) in given_outputs {
                if let Some(kind) = kinds.get(key)
                    && !kind.admits_output(value)
                {
                    return Err(format!(
                        "output `{key}` must be {} (its variable's declared default says so); got {value}",
                        kind.described()
                    ));
                }
            }
            Ok(json!({ "outputs": given_outputs }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway_question() -> Question {
        Question {
            key: "r:G:1".into(),
            kind: ControlPointKind::Gateway,
            element: "G".into(),
            name: None,
            offered: Offered::Flows {
                flows: vec![
                    OfferedFlow {
                        id: "f1".into(),
                        target: "A".into(),
                        label: None,
                    },
                    OfferedFlow {
                        id: "f2".into(),
                        target: "B".into(),
                        label: None,
                    },
                ],
                multiple: false,
            },
            policy: None,
            policy_path: None,
            instruction: None,
            deadline_ms: None,
            on_timeout: None,
            approval: None,
            remote: None,
        }
    }

    #[test]
    fn gateway_answers_are_checked_against_the_offered_flows() {
        let q = gateway_question();
        let flow = |f: &str| Given {
            flows: vec![f.into()],
            ..Given::default()
        };
        assert_eq!(
            check_answer(&q, &flow("f2")).unwrap(),
            json!({"flows": ["f2"]})
        );
        let err = check_answer(&q, &flow("f9")).unwrap_err();
        assert!(err.contains("f1, f2"), "{err}");
        let choice = Given {
            choice: Some(1),
            ..Given::default()
        };
        assert_eq!(check_answer(&q, &choice).unwrap(), json!({"flows": ["f1"]}));
        let bad = Given {
            choice: Some(3),
            ..Given::default()
        };
        assert!(check_answer(&q, &bad).is_err());
        let action = Given {
            action: Some("continue".into()),
            ..Given::default()
        };
        assert!(
            check_answer(&q, &action)
                .unwrap_err()
                .contains("is a gateway")
        );
    }

    #[test]
    fn hook_answers_need_permitted_actions_and_allowed_targets() {
        let q = Question {
            kind: ControlPointKind::Hook,
            offered: Offered::Actions {
                actions: vec![HookAction::Continue, HookAction::SkipTo],
                targets: vec!["X".into()],
                insertable: vec![],
                settable: vec![],
                flow_target: None,
            },
            ..gateway_question()
        };
        let given = |a: &str, t: &[&str]| Given {
            action: Some(a.into()),
            targets: t.iter().map(|s| s.to_string()).collect(),
            ..Given::default()
        };
        assert_eq!(
            check_answer(&q, &given("skip_to", &["X"])).unwrap(),
            json!({"action": "skip_to", "target": "X"})
        );
        assert!(
            check_answer(&q, &given("skip_to", &["Y"]))
                .unwrap_err()
                .contains("allowed")
        );
        assert!(
            check_answer(&q, &given("terminate", &[]))
                .unwrap_err()
                .contains("permitted")
        );
        assert!(check_answer(&q, &given("skip_to", &[])).is_err());
    }

    #[test]
    fn task_answers_need_exactly_the_outputs() {
        let q = Question {
            kind: ControlPointKind::Task,
            offered: Offered::Outputs {
                outputs: vec!["a".into(), "b".into()],
                kinds: [("a".to_string(), crate::vocab::VarKind::Number)].into(),
            },
            ..gateway_question()
        };
        let out = |v: Value| Given {
            outputs: Some(v),
            ..Given::default()
        };
        assert!(check_answer(&q, &out(json!({"a": 1, "b": 2}))).is_ok());
        assert!(
            check_answer(&q, &out(json!({"a": 1})))
                .unwrap_err()
                .contains("lack b")
        );
        assert!(check_answer(&q, &out(json!({"a": 1, "b": 2, "c": 3}))).is_err());
        // Typed like the variable `a` is mapped to; null (unknown) is accepted.
        assert!(
            check_answer(&q, &out(json!({"a": "lots", "b": 2})))
                .unwrap_err()
                .contains("`a` must be a number")
        );
        assert!(check_answer(&q, &out(json!({"a": null, "b": "x"}))).is_ok());
        assert!(check_answer(&q, &out(json!([1]))).is_err());
        let raise = |code: &str| Given {
            error: Some(code.into()),
            message: Some("declined".into()),
            ..Given::default()
        };
        assert_eq!(
            check_answer(&q, &raise("PAYMENT_FAILED")).unwrap(),
            json!({"error": "PAYMENT_FAILED", "message": "declined"})
        );
        assert!(check_answer(&q, &raise("not a code")).is_err());
        let both = Given {
            outputs: Some(json!({"a": 1, "b": 2})),
            ..raise("E")
        };
        assert!(check_answer(&q, &both).is_err());
        // Only a task raises an error.
        assert!(check_answer(&gateway_question(), &raise("E")).is_err());
    }
}
