//! `execute_task`: the TaskAgent.
//!
//! - A task the config does not list, or lists with `mode: native`, passes through: it
//!   completes with no outputs and nobody is asked.
//! - A task a hook inserted (not in the config, with an instruction in the context) is
//!   asked of the reasoner with that instruction and no declared outputs.
//! - A `task_agent` task is asked of the reasoner with its instruction, its policy and its
//!   inputs (`input_mapping`: task parameter ← process variable; a variable that is not set
//!   is left out; without a mapping every variable is offered). Its answer must hold every
//!   key of `output_mapping`, which are then written to their process variables; a missing
//!   key fails the task (the reply is never written in its place). Without an
//!   `output_mapping` the outputs are reported and no variable is written. An output of
//!   another type than its variable's declared default (text where a number is declared)
//!   fails the task too; null is accepted (the value is unknown), and does not erase a
//!   value the run has learnt (a variable away from its declared default keeps it).
//! - A failed task raises a BPMN error (`TaskOutcome::error_code`): the code an answer
//!   names (`error: CODE`), else one of [`error_code`] for why it failed (an unusable
//!   answer, a missing output, the model failing, a budget spent). What catches it is the
//!   engine's business: the harness only reports it.

use crate::app::TaskMode;
use crate::bridge::{ControlPointContext, ControlPointError, Taint, TaskOutcome, Variables};
use crate::reason::{CallLog, ReasonError, TaskAnswer, TaskRequest};
use crate::vocab::{Decider, TaskStatus, VarKind, error_code};

use std::sync::Arc;

use super::{FlowAgent, Trace, context, tools, trust};

pub(crate) async fn execute(
    agent: &FlowAgent,
    task_id: &str,
    ctx: ControlPointContext,
) -> Result<TaskOutcome, ControlPointError> {
    let name = context::element_name(&ctx, agent.process(), task_id);
    let Some(task) = agent.config.task(task_id) else {
        // Inserted by a hook (add_node): reason with the instruction it carries.
        if let Some(instruction) = ctx.instruction.clone() {
            let req = TaskRequest {
                raises: Vec::new(),
                task_id: task_id.to_string(),
                name,
                agent: None,
                instruction: Some(instruction),
                policy: None,
                inputs: Variables::clone(&ctx.variables),
                outputs: Vec::new(),
                output_kinds: Default::default(),
                context: ctx,
                calls: CallLog::default(),
                tools: Default::default(),
            };
            let (answer, trace) = ask(agent, task_id, req, None).await?;
            let outcome = match answer {
                Ok(Tainted(a, taint)) => {
                    raised(&a).unwrap_or_else(|| completed(a, Variables::new(), taint))
                }
                Err((code, message)) => {
                    failed(Decider::None, None, Variables::new(), code, message)
                }
            };
            return Ok(traced(outcome, trace));
        }
        return Ok(pass_through());
    };
    if task.mode == TaskMode::Native {
        return Ok(pass_through());
    }

    let inputs = if task.input_mapping.is_empty() {
        Variables::clone(&ctx.variables)
    } else {
        task.input_mapping
            .iter()
            .filter_map(|(param, var)| {
                let value = ctx.variables.get(&var.value)?;
                Some((param.value.clone(), value.clone()))
            })
            .collect()
    };
    let outputs: Vec<String> = task
        .output_mapping
        .iter()
        .map(|(key, _)| key.value.clone())
        .collect();
    let kinds = output_kinds(agent, task);
    let req = TaskRequest {
        raises: task.raises.iter().map(|c| c.value.clone()).collect(),
        task_id: task_id.to_string(),
        name,
        agent: task
            .agent
            .as_ref()
            .and_then(|a| a.name.as_ref())
            .map(|n| n.value.clone()),
        instruction: task
            .instruction
            .as_ref()
            .map(|i| i.value.clone())
            .or_else(|| ctx.instruction.clone()),
        policy: agent.policies.tasks.get(task_id).cloned(),
        inputs,
        outputs,
        output_kinds: kinds.clone(),
        context: ctx,
        calls: CallLog::default(),
        tools: Default::default(),
    };
    let ctx_variables = req.context.variables.clone();
    let mut req = req;
    // `pre_execute`: refuse the task, or rewrite its inputs, before anyone is asked.
    if let Some(agent_config) = &task.agent {
        match step_rules(
            &agent_config.pre_execute,
            &req.inputs,
            &req.context.variables,
        ) {
            Step::Raise {
                code,
                message,
                because,
            } => {
                let outcome = failed(
                    Decider::Rule,
                    because,
                    Variables::new(),
                    &code,
                    format!("task {task_id}: pre_execute: {message}"),
                );
                return Ok(outcome);
            }
            Step::Set(values) => {
                for (k, v) in values {
                    req.inputs.insert(k, v);
                }
            }
            Step::Pass => {}
        }
    }
    let gate =
        tools::TaskTools::of(tools::Setup {
            toolbox: &agent.toolbox,
            reasoner: &agent.reasoner,
            sink: agent.remotes.sink_for(&req.context.run_id),
            task,
            name: req.name.clone(),
            context: &req.context,
            untrusted_inputs: !trust::untrusted(&agent.config, &req.context).is_empty(),
            on_untrusted: agent.config.permissions.on_untrusted,
            offline: agent.remotes.is_offline(),
            resumed: req.context.idempotency_key.as_ref().and_then(|k| {
                (agent.tool_visits.lock().unwrap_or_else(|e| e.into_inner())).remove(k)
            }),
        })
        .map(Arc::new);
    if let Some(g) = &gate {
        req.tools = crate::reason::tools::ToolAccess::new(g.clone());
    }
    let remote = task
        .agent
        .as_ref()
        .and_then(|a| a.agent_type.as_ref())
        .and_then(|t| agent.remotes.get(&t.value));
    let command = task.agent.as_ref().and_then(|a| a.command.as_ref());
    // A command agent's task runs its CLI, unless an answer given in advance (a scenario's,
    // an answers file's) is there for this visit: that answer is used as for any task.
    let command = command.filter(|_| !agent.reasoner.answers_in_advance(&req));
    let (answer, trace) = match (command, remote) {
        (Some(command), _) => run_command(agent, task_id, command, req).await,
        (None, Some(remote)) => delegate(agent, task_id, remote, req).await?,
        (None, None) => ask(agent, task_id, req, gate.as_deref()).await?,
    };
    let (answer, taint) = match answer {
        Ok(Tainted(a, taint)) => match raised(&a) {
            Some(outcome) => return Ok(traced(outcome, trace)),
            None => (a, taint),
        },
        Err((code, message)) => {
            let by = if command.is_some() {
                Decider::Command
            } else {
                Decider::None
            };
            let outcome = failed(by, None, Variables::new(), code, message);
            return Ok(traced(outcome, trace));
        }
    };

    // `post_execute`: refuse the answer, or rewrite its outputs.
    let mut answer = answer;
    if let Some(agent_config) = &task.agent {
        let mut scope = Variables::clone(&ctx_variables);
        for (k, v) in &answer.outputs {
            scope.insert(k.clone(), v.clone());
        }
        match step_rules(&agent_config.post_execute, &answer.outputs, &scope) {
            Step::Raise {
                code,
                message,
                because,
            } => {
                let outcome = failed(
                    Decider::Rule,
                    because.or(answer.reason),
                    answer.outputs,
                    &code,
                    format!("task {task_id}: post_execute: {message}"),
                );
                return Ok(traced(outcome, trace));
            }
            Step::Set(values) => {
                for (k, v) in values {
                    answer.outputs.insert(k, v);
                }
            }
            Step::Pass => {}
        }
    }
    let mut variables = Variables::new();
    for (key, var) in &task.output_mapping {
        match answer.outputs.get(&key.value) {
            Some(value)
                if kinds
                    .get(&key.value)
                    .is_some_and(|k| !k.admits_output(value)) =>
            {
                // Written, it would change the route silently (`lots` where a score is
                // compared): the task fails instead, and its error boundary may catch it.
                let kind = kinds[&key.value];
                let message = format!(
                    "task {task_id}: output `{}` must be {} (variable `{}` is declared so); got {value}",
                    key.value,
                    kind.described(),
                    var.value
                );
                let outcome = failed(
                    answer.decided_by,
                    answer.reason,
                    answer.outputs,
                    error_code::TASK_FAILED,
                    message,
                );
                return Ok(traced(outcome, trace));
            }
            // Null is "not known": it does not erase what the run has learnt (a variable
            // that holds a value other than its declared default keeps it); an unset one,
            // or one at its default, becomes unknown.
            Some(serde_json::Value::Null)
                if ctx_variables.get(&var.value).is_some_and(|known| {
                    !known.is_null()
                        && agent
                            .config
                            .variable(&var.value)
                            .is_none_or(|declared| declared.default != *known)
                }) => {}
            Some(value) => {
                variables.insert(var.value.clone(), value.clone());
            }
            None => {
                let message = format!(
                    "task {task_id} did not return output `{}` (declared in output_mapping)",
                    key.value
                );
                let outcome = failed(
                    answer.decided_by,
                    answer.reason,
                    answer.outputs,
                    error_code::OUTPUT_MISSING,
                    message,
                );
                return Ok(traced(outcome, trace));
            }
        }
    }
    Ok(traced(completed(answer, variables, taint), trace))
}

/// Each output's type: the declared default of the variable it is mapped to (absent for a
/// variable the config does not declare or declares with a null default).
fn output_kinds(
    agent: &FlowAgent,
    task: &crate::app::TaskConfig,
) -> std::collections::BTreeMap<String, VarKind> {
    task.output_mapping
        .iter()
        .filter_map(|(key, var)| Some((key.value.clone(), agent.config.declared_kind(&var.value)?)))
        .collect()
}

/// Ask the reasoner. The outer error stops the run (nothing answers, or the answer could
/// not be obtained); the inner one fails the task (the answer was not usable, or the
/// model gave none: a task's only `on_failure` is to fail).
async fn ask(
    agent: &FlowAgent,
    task_id: &str,
    mut req: TaskRequest,
    tools: Option<&tools::TaskTools>,
) -> Result<(Result<Tainted, (&'static str, String)>, Trace), ControlPointError> {
    context::fill_model(&mut req.context, agent.model());
    let untrusted = trust::untrusted(&agent.config, &req.context);
    let declared = agent
        .config
        .task(task_id)
        .is_some_and(|t| t.untrusted_outputs);
    let name = req.name.clone().unwrap_or_else(|| task_id.to_string());
    let (result, trace) = Trace::ask(req, async |req| agent.reasoner.task(req).await).await;
    // Tool results are untrusted: an answer given after a tool answered is too.
    let called = tools.is_some_and(|t| t.answered());
    let external = declared || called;
    let what = || {
        format!(
            "model output on task `{name}`{}",
            if called {
                ", which called tools (their results are untrusted)"
            } else if declared {
                ", which brings data from outside the run (untrusted_outputs)"
            } else {
                ""
            }
        )
    };
    match result {
        Ok(a) => {
            let taint = trust::taint(a.decided_by, &untrusted, external, what);
            Ok((Ok(Tainted(a, taint)), trace))
        }
        Err(e @ ReasonError::Invalid { .. }) => {
            Ok((Err((error_code::TASK_FAILED, e.to_string())), trace))
        }
        Err(e @ ReasonError::Failed { code, .. }) => Ok((Err((code, e.to_string())), trace)),
        Err(e) => Err(trace.fail(task_id, e)),
    }
}

/// Do the task with its command agent's CLI. Its outputs come from outside the run: they
/// are untrusted. A CLI that fails fails the task ([`error_code::COMMAND_FAILED`]).
async fn run_command(
    agent: &FlowAgent,
    task_id: &str,
    command: &crate::app::CommandAgent,
    req: TaskRequest,
) -> (Result<Tainted, (&'static str, String)>, Trace) {
    let name = req.name.clone().unwrap_or_else(|| task_id.to_string());
    let result = super::command::execute(
        &agent.config,
        command,
        task_id,
        &req.context.run_id,
        &req.inputs,
    )
    .await;
    let trace = Trace::default();
    match result {
        Ok(ran) => {
            let answer = TaskAnswer {
                outputs: ran.outputs.into_iter().collect(),
                reason: Some(format!(
                    "`{}` answered in {} ms",
                    ran.argv.first().map_or("", String::as_str),
                    ran.duration.as_millis()
                )),
                decided_by: Decider::Command,
                raised: None,
            };
            let taint = Some(Taint {
                source: format!("command agent on task `{name}`"),
                derived_from: Vec::new(),
            });
            (Ok(Tainted(answer, taint)), trace)
        }
        Err(failed) => (Err((error_code::COMMAND_FAILED, failed.to_string())), trace),
    }
}

/// Fulfil the task on a remote agent. A failed delegation fails the task
/// ([`error_code::REMOTE_FAILED`]): an error boundary may catch it, else the run fails.
/// An agent still working past its `wait` parks the run (the outer error: the question
/// names the A2A task, which a resumed run follows up on).
async fn delegate(
    agent: &FlowAgent,
    task_id: &str,
    remote: &super::remote::Remote,
    mut req: TaskRequest,
) -> Result<(Result<Tainted, (&'static str, String)>, Trace), ControlPointError> {
    context::fill_model(&mut req.context, agent.model());
    let name = req.name.clone().unwrap_or_else(|| task_id.to_string());
    if agent.remotes.is_offline() {
        return replayed_delegation(agent, task_id, remote, &name, req).await;
    }
    let digest = crate::reason::record::context_digest(&req);
    let mut calls = Vec::new();
    let result = super::remote::delegate(
        &agent.remotes,
        remote,
        agent.reasoner.clone(),
        req,
        &mut calls,
    )
    .await;
    let trace = Trace {
        calls,
        digest: Some(digest),
    };
    match result {
        Ok(a) => {
            let taint = trust::taint(a.decided_by, &[], true, || {
                format!("remote agent `{}` on task `{name}`", remote.name)
            });
            Ok((Ok(Tainted(a, taint)), trace))
        }
        Err(super::remote::NotDelegated::Parked(question)) => {
            Err(trace.fail(task_id, ReasonError::Parked(question)))
        }
        Err(super::remote::NotDelegated::Failed(message)) => Ok((
            Err((
                error_code::REMOTE_FAILED,
                format!("task {task_id}: delegation failed: {message}"),
            )),
            trace,
        )),
    }
}

/// A delegation in a replay (`runs replay`), which is read-only against remote agents:
/// the reply the journal recorded for this visit is used (the cassette answers it); with
/// none (the original run's remote task never finished), the task is not sent and the
/// replay stops there, saying so.
async fn replayed_delegation(
    agent: &FlowAgent,
    task_id: &str,
    remote: &super::remote::Remote,
    name: &str,
    req: TaskRequest,
) -> Result<(Result<Tainted, (&'static str, String)>, Trace), ControlPointError> {
    let (result, trace) = Trace::ask(req, async |req| agent.reasoner.task(req).await).await;
    match result {
        Ok(a) => {
            let taint = trust::taint(a.decided_by, &[], true, || {
                format!("remote agent `{}` on task `{name}`", remote.name)
            });
            Ok((Ok(Tainted(a, taint)), trace))
        }
        Err(ReasonError::NoAnswer { .. }) => Err(trace.error(
            task_id,
            format!(
                "task {task_id} is delegated to remote agent `{}` and the journal has no reply                  for this visit (the original run's remote task never finished): a replay is                  read-only against remote agents, so nothing was sent",
                remote.name
            ),
        )),
        Err(e) => Err(trace.fail(task_id, e)),
    }
}

/// The failed outcome of an answer that raises a BPMN error (`error: CODE`): the task
/// fails with that code and its outputs are not written. `None`: the answer raises none.
fn raised(answer: &TaskAnswer) -> Option<TaskOutcome> {
    let error = answer.raised.as_ref()?;
    let message = (error.message.clone())
        .unwrap_or_else(|| format!("the answer raised BPMN error `{}`", error.code));
    Some(failed(
        answer.decided_by,
        answer.reason.clone(),
        answer.outputs.clone(),
        &error.code,
        message,
    ))
}

/// The outcome with the reasoner's calls and the question's digest.
fn traced(mut outcome: TaskOutcome, trace: Trace) -> TaskOutcome {
    outcome.calls = trace.calls;
    outcome.digest = trace.digest;
    outcome
}

fn pass_through() -> TaskOutcome {
    TaskOutcome {
        status: TaskStatus::Completed,
        outputs: Variables::new(),
        variables: Variables::new(),
        decided_by: Decider::None,
        reason: Some("pass-through".to_string()),
        error: None,
        error_code: None,
        calls: Vec::new(),
        digest: None,
        taint: None,
    }
}

/// A reasoner's answer with the taint of what it wrote ([`trust::taint`]).
struct Tainted(TaskAnswer, Option<Taint>);

fn completed(answer: TaskAnswer, variables: Variables, taint: Option<Taint>) -> TaskOutcome {
    TaskOutcome {
        status: TaskStatus::Completed,
        outputs: answer.outputs,
        variables,
        decided_by: answer.decided_by,
        reason: answer.reason,
        error: None,
        error_code: None,
        calls: Vec::new(),
        digest: None,
        taint,
    }
}

fn failed(
    decided_by: Decider,
    reason: Option<String>,
    outputs: Variables,
    code: &str,
    message: String,
) -> TaskOutcome {
    TaskOutcome {
        status: TaskStatus::Failed,
        outputs,
        variables: Variables::new(),
        decided_by,
        reason,
        error: Some(message),
        error_code: Some(code.to_string()),
        calls: Vec::new(),
        digest: None,
        taint: None,
    }
}

/// What a task's `pre_execute` or `post_execute` rules decided.
enum Step {
    /// No rule applied.
    Pass,
    /// Set these inputs (before) or outputs (after).
    Set(Vec<(String, serde_json::Value)>),
    /// Fail the task with this BPMN error.
    Raise {
        code: String,
        message: String,
        because: Option<String>,
    },
}

/// Check `rules` in order against `values` layered over `scope` (a rule's `when` reads
/// the task's parameters or outputs by name, and any process variable): every rule that
/// holds sets its values, seen by the rules after it; the first that raises ends the
/// check. FALSE and UNKNOWN skip a rule.
fn step_rules(rules: &[crate::app::StepRule], values: &Variables, scope: &Variables) -> Step {
    if rules.is_empty() {
        return Step::Pass;
    }
    let mut seen = Variables::clone(scope);
    for (k, v) in values {
        seen.insert(k.clone(), v.clone());
    }
    let mut set: Vec<(String, serde_json::Value)> = Vec::new();
    for rule in rules {
        // Read when the config was decoded: one that cannot be read never got here.
        let Ok(condition) = crate::expr::parse(&rule.when.value) else {
            continue;
        };
        if !condition.eval(&seen).is_true() {
            continue;
        }
        if let Some(code) = &rule.raise {
            return Step::Raise {
                code: code.value.clone(),
                message: format!(
                    "`{}` holds: {}",
                    rule.when.value,
                    rule.because
                        .as_ref()
                        .map_or_else(|| format!("raises {}", code.value), |b| b.value.clone())
                ),
                because: rule.because.as_ref().map(|b| b.value.clone()),
            };
        }
        for (name, value) in &rule.set {
            seen.insert(name.value.clone(), value.value.clone());
            set.retain(|(n, _)| n != &name.value);
            set.push((name.value.clone(), value.value.clone()));
        }
    }
    if set.is_empty() {
        Step::Pass
    } else {
        Step::Set(set)
    }
}
