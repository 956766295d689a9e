//! Asking the harness on behalf of a BPM engine that cuga-flo **pulls** (Flowable,
//! Kogito): the engine owns the tokens and shows cuga-flo a worker waiting at a control
//! point ([`crate::semantics::rewrite`]); [`Asker`] builds the control point's context from
//! what the engine shows (the variables, the path so far), asks through the [`Witness`]
//! (which journals it), checks the answer and says what the engine must do with it. The
//! engines only carry that out in their own API.
//!
//! Every call carries an idempotency key (`<run id>:<element>:<visit>`, [`visit_key`]),
//! counted from what the engine records of the instance rather than from what this
//! process saw: a run re-attached to its instance after a crash gives a waiting worker
//! the key it had, and so finds the answer its journal holds for it.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::RunRequest;
use super::adapt::Plan;
use super::check_choice;
use super::external::Witness;
use crate::bpmn::{Flow, GatewayKind, LoopKind, MultiInstance, NodeKind, Process};
use crate::bridge::{ControlPointContext, ControlPoints, EdgeInfo, FlowOption, History};
use crate::engine::http::{ClientError, RestError};
use crate::journal::event::ThrownKind;
use crate::journal::{Event, JournalError};
use crate::semantics::instances::{self as multi, InstanceError, Layered};
use crate::semantics::rewrite::{self, Caught, Rewritten, Role, Thrown, catcher};
use crate::semantics::topology::Topology;
use crate::vocab::TaskStatus;

/// Why a pulled run cannot go on: the run fails with it (its message, with its causes,
/// [`crate::diag::chain`], is the run's).
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The engine answers no more (refused, timed out): `engine` at `url`.
    #[error("lost {engine} at {url}")]
    Lost {
        engine: &'static str,
        url: String,
        #[source]
        source: RestError,
    },
    /// The engine did not answer the first call, or refused it: `engine` at `url`.
    #[error("{}", if source.is_unreachable() {
        format!("cannot reach {engine} at {url}")
    } else {
        format!("{engine} at {url} refused the first call")
    })]
    Unreachable {
        engine: &'static str,
        url: String,
        #[source]
        source: RestError,
    },
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A call the run needs failed or was refused; `context` says which.
    #[error("{context}")]
    Call {
        context: String,
        #[source]
        source: RestError,
    },
    /// The journal could not be written.
    #[error("the journal could not be written")]
    Journal(#[from] JournalError),
    /// The harness could not answer a control point: `what` names it.
    #[error("{what}: {message}")]
    Unanswered { what: String, message: String },
    /// The model cannot run on this engine: each element and why.
    #[error("the model cannot run on {engine}: {}", list(.problems))]
    Unsupported {
        engine: &'static str,
        problems: Vec<(String, String)>,
    },
    /// A multi-instance activity's state could not be evaluated.
    #[error("multi-instance activity `{activity}`")]
    Instances {
        activity: String,
        #[source]
        source: InstanceError,
    },
    /// The run fails as its model or the harness says (an uncaught BPMN error, a hook
    /// failing the run, an answer the engine cannot carry out), or the engine shows what
    /// cuga-flo cannot follow.
    #[error("{0}")]
    Failed(String),
}

/// A call the run needs failed, said as `context` (`Flowable could not start `P``).
pub fn call(context: String, source: RestError) -> PullError {
    PullError::Call { context, source }
}

impl PullError {
    /// A call to `engine` at `url` failed: lost when the engine did not answer at all.
    pub fn at(engine: &'static str, url: &str, source: RestError) -> Self {
        if source.is_unreachable() {
            PullError::Lost {
                engine,
                url: url.to_string(),
                source,
            }
        } else {
            PullError::Call {
                context: format!("{engine} at {url}"),
                source,
            }
        }
    }
}

impl super::external::RunFailure for PullError {
    /// With its causes ([`crate::diag::chain`]).
    fn message(&self) -> String {
        crate::diag::chain(self)
    }
}

fn list(problems: &[(String, String)]) -> String {
    problems
        .iter()
        .map(|(id, why)| format!("`{id}`: {why}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// How a pulled run's instance ended, when cuga-flo ended it or saw it end.
#[derive(Debug, Clone)]
pub enum Ended {
    /// The engine finished it (terminated by a hook when the run says so).
    Finished,
    /// cuga-flo failed it (and ended the instance): why.
    Failed(String),
    /// The run parked (`run_waiting` journalled): the instance waits for a timer due later
    /// than the run waits in-process, or for a message or signal from outside, and is kept.
    Waiting,
}

/// What a run on a remote engine finds waiting for cuga-flo's answer.
pub enum Look<W> {
    /// Work to answer, in the order to answer it.
    Work(Vec<W>),
    /// Something moved while looking (a timer fired): look again.
    Again,
    /// Nothing waits for an answer.
    Idle,
}

/// What an idle instance (nothing waiting for cuga-flo's answer) does next.
pub enum Idle {
    /// Something moved, or was delivered: look again.
    Again,
    /// The instance ended.
    Ended,
    /// The run parked (`run_waiting` journalled).
    Park,
}

/// A run on a remote engine (Flowable's external-worker jobs, Kogito's work items), as
/// [`drive`] works it: what differs between engines is how each step talks to the engine,
/// not the order of the steps.
pub(crate) trait Pulled {
    /// What one look at the instance saw (handed to the steps after it).
    type Seen;
    /// One piece of work waiting for cuga-flo's answer.
    type Work;
    /// Look at the instance and journal what it entered; `None` once it ended.
    async fn observe(&self) -> Result<Option<Self::Seen>, PullError>;
    /// Why the path so far spends more than the step budget, if it does.
    fn over_budget(&self) -> Option<PullError>;
    /// What waits for cuga-flo's answer now.
    async fn waiting(&self, seen: &Self::Seen) -> Result<Look<Self::Work>, PullError>;
    /// Nothing waits for an answer: deliver, fire or wait for a timer, or park.
    async fn idle(&self) -> Result<Idle, PullError>;
    /// Answer one piece of work and hand the answer to the engine.
    async fn work(&self, seen: &Self::Seen, work: Self::Work) -> Result<(), PullError>;
    /// End the instance on the engine after cuga-flo failed the run.
    async fn fail(&self, why: PullError) -> Ended;
}

/// Work a remote instance until it ends or cuga-flo ends it: look, check the budget, answer
/// what waits (one at a time: each answer continues the instance in the engine, and
/// concurrent continuations of parallel branches would collide at their join), and when
/// nothing waits, let the run deliver, wait or park.
pub(crate) async fn drive<P: Pulled>(run: &P) -> Ended {
    loop {
        let seen = match run.observe().await {
            Ok(Some(seen)) => seen,
            Ok(None) => return Ended::Finished,
            Err(why) => return run.fail(why).await,
        };
        if let Some(why) = run.over_budget() {
            return run.fail(why).await;
        }
        let work = match run.waiting(&seen).await {
            Ok(Look::Work(work)) => work,
            Ok(Look::Again) => continue,
            Ok(Look::Idle) => match run.idle().await {
                Ok(Idle::Again) => continue,
                Ok(Idle::Ended) => return Ended::Finished,
                Ok(Idle::Park) => return Ended::Waiting,
                Err(why) => return run.fail(why).await,
            },
            Err(why) => return run.fail(why).await,
        };
        for w in work {
            if let Err(why) = run.work(&seen, w).await {
                return run.fail(why).await;
            }
        }
    }
}

/// The step budget spent: the path holds more entries than `budget`.
pub fn over_budget(path: &[String], budget: u64) -> Option<PullError> {
    (path.len() as u64 > budget).then(|| {
        PullError::Failed(format!(
            "the step budget of {budget} node entries is spent: entering `{}` would exceed it",
            path.get(usize::try_from(budget).unwrap_or(usize::MAX))
                .cloned()
                .unwrap_or_default()
        ))
    })
}

/// The outcome of a pulled run that `ended` having entered `path` (cut to the step
/// budget: the engine entered the node that spent it before cuga-flo saw it, and the run
/// failed instead, as on the native engine), journalled as entered, with `variables`;
/// `terminated`: the message of a hook's terminate.
pub fn outcome(
    witness: &Witness,
    request: &RunRequest,
    mut path: Vec<String>,
    variables: Map<String, Value>,
    ended: Ended,
    terminated: Option<String>,
) -> crate::bridge::run::RunOutcome {
    use crate::vocab::RunStatus;
    path.truncate(usize::try_from(request.annotations.step_budget).unwrap_or(usize::MAX));
    witness.entered(&path, Vec::new());
    let (status, message) = match ended {
        Ended::Failed(why) => (RunStatus::Failed, Some(why)),
        Ended::Waiting => (RunStatus::Waiting, None),
        Ended::Finished => match terminated.or_else(|| terminate_end(&request.process, &path)) {
            Some(m) => (RunStatus::Terminated, Some(m)),
            None => (RunStatus::Completed, None),
        },
    };
    crate::bridge::run::RunOutcome {
        status,
        message,
        variables,
        steps: path.len() as u64,
        path,
    }
}

/// What to do with a hook's worker.
#[derive(Debug, Clone, PartialEq)]
pub enum HookMove {
    /// Complete it with these variables (the hook variable set to `continue`), the token
    /// going on along the flow.
    Continue(Map<String, Value>),
    /// Complete it with these variables and mark `task` to be completed as skipped.
    SkipNode(Map<String, Value>, String),
    /// Set these variables and move the token to this node of the model.
    SkipTo(Map<String, Value>, String),
    /// Complete it with these variables (the hook variable set to `terminate`): the run
    /// ends with this message.
    Terminate(Map<String, Value>, String),
}

/// What a task's answer asks of the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskAnswer {
    /// Complete the task's worker with these variables.
    Done(Map<String, Value>),
    /// The task failed: it raises a BPMN error with this code.
    Raised { code: String, error: String },
}

/// Asks the harness about one run's control points.
pub struct Asker<'a> {
    pub witness: &'a Witness,
    pub run_id: &'a str,
    pub process_key: &'a str,
    pub process: &'a Process,
}

impl Asker<'_> {
    fn context(
        &self,
        element: &str,
        key: &str,
        variables: Map<String, Value>,
        path: &[String],
    ) -> ControlPointContext {
        // A run stopped while its control point is asked asks it again when resumed.
        crate::crash::point("engine.asking");
        ControlPointContext {
            idempotency_key: Some(key.to_string()),
            run_id: self.run_id.to_string(),
            process_key: self.process_key.to_string(),
            element_id: element.to_string(),
            element_name: self.process.node(element).and_then(|n| n.name.clone()),
            variables: variables.into(),
            history: History::from(path.to_vec()),
            ..ControlPointContext::default()
        }
    }

    /// A task: the variables it writes, or the BPMN error a failed task raises (the
    /// code its answer names, else [`crate::vocab::error_code::TASK_FAILED`]), as the
    /// native engine raises it. `Err`: the harness could not answer.
    pub async fn answer_task(
        &self,
        task: &str,
        key: &str,
        variables: Map<String, Value>,
        path: &[String],
        instance: Option<crate::vocab::InstanceVisit>,
    ) -> Result<TaskAnswer, PullError> {
        let mut ctx = self.context(task, key, variables, path);
        // An instance of a multi-instance task is asked as the native engine asks it.
        ctx.instance = instance;
        let outcome =
            self.witness
                .execute_task(task, ctx)
                .await
                .map_err(|e| PullError::Unanswered {
                    what: format!("task `{task}` failed"),
                    message: e.message,
                })?;
        if outcome.status == TaskStatus::Failed {
            return Ok(TaskAnswer::Raised {
                code: outcome
                    .error_code
                    .unwrap_or_else(|| crate::vocab::error_code::TASK_FAILED.to_string()),
                error: outcome.error.unwrap_or_else(|| "no reason given".into()),
            });
        }
        Ok(TaskAnswer::Done(outcome.variables))
    }

    /// A gateway's routing step: the routing variable's value (`,flow,flow,`).
    pub async fn route(
        &self,
        gateway: &str,
        key: &str,
        variables: Map<String, Value>,
        path: &[String],
    ) -> Result<String, PullError> {
        let node = self
            .process
            .node(gateway)
            .ok_or_else(|| PullError::Failed(format!("gateway `{gateway}` is not in the model")))?;
        let kind = match node.kind {
            NodeKind::Gateway(kind) => kind,
            _ => GatewayKind::Exclusive,
        };
        let outgoing: Vec<&Flow> = self
            .process
            .flows
            .iter()
            .filter(|f| f.source == gateway)
            .collect();
        let mut ctx = self.context(gateway, key, variables, path);
        // The token is entering the gateway (the engine records it after this step).
        ctx.history.push(gateway.to_string());
        ctx.flows = outgoing
            .iter()
            .map(|f| {
                let is_default = node.default_flow.as_deref() == Some(f.id.as_str());
                FlowOption::of(&edge_info(f), is_default)
            })
            .collect();
        let decision = self
            .witness
            .route_gateway(gateway, ctx)
            .await
            .map_err(|e| PullError::Unanswered {
                what: format!("gateway `{gateway}` could not be routed"),
                message: e.message,
            })?;
        let ids: Vec<&str> = outgoing.iter().map(|f| f.id.as_str()).collect();
        check_choice(kind, &ids, &decision.flows).map_err(|why| {
            PullError::Failed(format!("gateway `{gateway}` ({}): {why}", node.kind.tag()))
        })?;
        Ok(format!(",{},", decision.flows.join(",")))
    }

    /// A hook's step: what the engine must do (`variable` is the hook's variable), or why
    /// the run fails. `engine` names the engine in the refusal of topology changes.
    #[allow(clippy::too_many_arguments)]
    pub async fn hook(
        &self,
        hook: &str,
        key: &str,
        flow: &str,
        variable: &str,
        variables: Map<String, Value>,
        path: &[String],
        engine: &str,
    ) -> Result<HookMove, PullError> {
        let edge = self
            .process
            .flows
            .iter()
            .find(|f| f.id == flow)
            .map(edge_info)
            .ok_or_else(|| {
                PullError::Failed(format!("hooked flow `{flow}` is not in the model"))
            })?;
        let mut ctx = self.context(hook, key, variables, path);
        ctx.element_name = None;
        ctx.edge = Some(edge);
        let mut executed: Vec<String> = Vec::new();
        for id in path {
            if !executed.contains(id) {
                executed.push(id.clone());
            }
        }
        ctx.executed = executed;
        let (decision, applying) =
            self.witness
                .hook(hook, ctx)
                .await
                .map_err(|e| PullError::Unanswered {
                    what: format!("hook `{hook}` on flow `{flow}` could not be evaluated"),
                    message: e.message,
                })?;
        if decision.fail_run {
            return Err(PullError::Failed(decision.message.clone().unwrap_or_else(
                || format!("hook `{hook}` on flow `{flow}` failed the run"),
            )));
        }
        let mut set = applying.state_updates;
        Ok(match applying.plan {
            Plan::Continue => {
                set.insert(variable.to_string(), "continue".into());
                HookMove::Continue(set)
            }
            Plan::SkipNode(task) => {
                set.insert(variable.to_string(), "continue".into());
                HookMove::SkipNode(set, task)
            }
            Plan::SkipTo(target) => HookMove::SkipTo(set, target),
            Plan::Terminate(message) => {
                set.insert(variable.to_string(), "terminate".into());
                let message = message.unwrap_or_else(|| format!("terminated by hook {hook}"));
                HookMove::Terminate(set, message)
            }
            plan @ (Plan::Swap(..) | Plan::Remove(_) | Plan::Add(_)) => {
                return Err(PullError::Failed(format!(
                    "hook `{hook}`: `{}` changes the process's topology, which a {engine} \
                     deployment cannot",
                    plan.action()
                )));
            }
        })
    }
}

/// The idempotency key of the worker `worker` waiting at entry `own` of `entries` (the
/// ids of the rewritten model the instance entered, in order, as the engine records
/// them): its visit counts the entries of every worker of the same control point up to
/// its own (the next one when `own` is not known).
pub fn visit_key(
    run_id: &str,
    rewritten: &Rewritten,
    entries: &[&str],
    own: Option<usize>,
    worker: &str,
) -> String {
    let element = rewritten.roles.get(worker).map_or(worker, Role::element);
    let same = |id: &&&str| rewritten.roles.get(**id).map(Role::element) == Some(element);
    let visit = match own {
        Some(at) => entries.iter().take(at + 1).filter(same).count().max(1),
        None => entries.iter().filter(same).count() + 1,
    };
    format!("{run_id}:{element}:{visit}")
}

/// A multi-instance task of a pulled run: the engine runs its instances (each a worker
/// cuga-flo answers), cuga-flo's step in front of it ([`Role::Multi`]) evaluates what
/// it runs over, and cuga-flo evaluates its completion condition and collects its
/// outputs as the native engine does (`engine::native::multi`), keeping the state in
/// the instance's variables ([`rewrite::multi_variables`]).
pub struct MultiTask {
    pub spec: MultiInstance,
    pub sequential: bool,
    /// Its step's variable (the number of instances; [`rewrite::multi_variables`]).
    pub variable: String,
}

impl MultiTask {
    /// Multi-instance task `task` of `process` as `rewritten` runs it.
    pub fn of(rewritten: &Rewritten, process: &Process, task: &str) -> Option<MultiTask> {
        let variable = rewritten.roles.values().find_map(|r| match r {
            Role::Multi { node, variable, .. } if node == task => Some(variable.clone()),
            _ => None,
        })?;
        let looping = process.node(task)?.looping.as_ref()?;
        let LoopKind::MultiInstance { sequential } = looping.kind else {
            return None;
        };
        Some(MultiTask {
            spec: looping.multi.clone(),
            sequential,
            variable,
        })
    }

    /// The step in front of task `node`: what it runs over (as the native engine
    /// evaluates it over `variables`), the number of instances, and the variables that
    /// set up its instances' state.
    pub fn start(
        &self,
        node: &str,
        variables: &Map<String, Value>,
    ) -> Result<(Map<String, Value>, u64), PullError> {
        let (items, count) = multi::runs_over(node, &self.spec, &Layered(vec![variables]))
            .map_err(|source| PullError::Instances {
                activity: node.to_string(),
                source,
            })?;
        let [items_var, out, completed, done] = rewrite::multi_variables(&self.variable);
        let mut set = Map::new();
        set.insert(self.variable.clone(), Value::from(count));
        set.insert(items_var, Value::Array(items.unwrap_or_default()));
        set.insert(
            out,
            Value::Array(vec![Value::Null; usize::try_from(count).unwrap_or(0)]),
        );
        set.insert(completed, Value::from(0));
        set.insert(done, Value::Bool(false));
        Ok((set, count))
    }

    /// The task ran no instance: the native engine entered it once and sets an empty
    /// output collection (journalled; what to set, if the task has one).
    pub fn no_instance(
        &self,
        witness: &Witness,
        node: &str,
    ) -> Result<Map<String, Value>, PullError> {
        let mut values = Map::new();
        if let Some(collection) = &self.spec.output_collection {
            values.insert(collection.clone(), Value::Array(Vec::new()));
            witness.journal(Event::VariablesSet {
                source: format!("multi-instance {node}"),
                values: values.clone(),
                taint: None,
            })?;
        }
        Ok(values)
    }

    /// Instance `loop_counter` (from 1) of the task, from the variables with cuga-flo's
    /// own (`raw`).
    pub fn instance(&self, raw: &Map<String, Value>, loop_counter: u64) -> Instance {
        let [items_var, out, completed, _] = rewrite::multi_variables(&self.variable);
        let count = raw.get(&self.variable).and_then(Value::as_u64).unwrap_or(0);
        let items: Option<Vec<Value>> = self
            .spec
            .collection
            .as_ref()
            .and_then(|_| raw.get(&items_var))
            .and_then(Value::as_array)
            .cloned();
        let (locals, own) =
            multi::instance_locals(&self.spec, items.as_deref(), count, loop_counter);
        Instance {
            count,
            loop_counter,
            completed: raw.get(&completed).and_then(Value::as_u64).unwrap_or(0),
            outputs: raw
                .get(&out)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_else(|| vec![Value::Null; usize::try_from(count).unwrap_or(0)]),
            locals,
            own,
        }
    }

    /// An instance of the task (`task`) answered `writes` (asked with `variables`): what
    /// its worker completes with, as the native engine goes on from it: what the instance
    /// writes to its own names stays its own, its output takes its item's place in the
    /// outputs, the completion condition is evaluated, and the output collection is set
    /// (and journalled) when the activity completes.
    pub fn instance_done(
        &self,
        witness: &Witness,
        task: &str,
        instance: Instance,
        variables: Map<String, Value>,
        writes: Map<String, Value>,
    ) -> Result<Map<String, Value>, PullError> {
        let mut instance = instance;
        let mut set = Map::new();
        for (name, value) in writes.clone() {
            if instance.own.contains(&name) {
                instance.locals.insert(name, value);
            } else {
                set.insert(name, value);
            }
        }
        let mut process = variables;
        process.retain(|name, _| !instance.locals.contains_key(name));
        process.extend(set.clone());
        set.extend(self.instance_ended(witness, task, instance, &process, &writes)?);
        Ok(set)
    }

    /// An instance of the activity (`task`) ended, its variables `instance.locals` over
    /// the process's `process`, its tasks having written `written`: its output takes its
    /// item's place in the outputs, the completion condition is evaluated, and the output
    /// collection is set (and journalled) when the activity completes. What the
    /// activity's state variables become.
    pub fn instance_ended(
        &self,
        witness: &Witness,
        task: &str,
        instance: Instance,
        process: &Map<String, Value>,
        written: &Map<String, Value>,
    ) -> Result<Map<String, Value>, PullError> {
        let Instance {
            count,
            loop_counter,
            completed,
            mut outputs,
            locals,
            ..
        } = instance;
        let mut set = Map::new();
        let failed = |source: InstanceError| PullError::Instances {
            activity: task.to_string(),
            source,
        };
        let output = multi::instance_output(&self.spec, &Layered(vec![&locals, process]), written)
            .map_err(failed)?;
        let completed = completed + 1;
        let active = if self.sequential {
            0
        } else {
            count.saturating_sub(completed)
        };
        let counts = multi::completion_counts(count, completed, active);
        let done = multi::completion_holds(&self.spec, &Layered(vec![&counts, &locals, process]))
            .map_err(failed)?;
        if let Some(slot) = usize::try_from(loop_counter.saturating_sub(1))
            .ok()
            .and_then(|i| outputs.get_mut(i))
        {
            *slot = output.unwrap_or(Value::Null);
        }
        let [_, out, completed_var, done_var] = rewrite::multi_variables(&self.variable);
        set.insert(out, Value::Array(outputs.clone()));
        set.insert(completed_var, Value::from(completed));
        if done || completed >= count {
            if let Some(collection) = &self.spec.output_collection {
                let mut values = Map::new();
                values.insert(collection.clone(), Value::Array(outputs));
                witness.journal(Event::VariablesSet {
                    source: format!("multi-instance {task}"),
                    values: values.clone(),
                    taint: None,
                })?;
                set.extend(values);
            }
            if done && completed < count {
                // The engine's completion condition reads it: the other instances end.
                set.insert(done_var, Value::Bool(true));
            }
        }
        Ok(set)
    }
}

/// One instance of a multi-instance task, as its worker shows it.
pub struct Instance {
    pub count: u64,
    pub loop_counter: u64,
    /// The instances completed before it.
    pub completed: u64,
    /// The outputs so far, by item.
    pub outputs: Vec<Value>,
    /// Its variables (`loopCounter`, `nrOfInstances`, the element variable) and the
    /// names that stay its own.
    pub locals: Map<String, Value>,
    pub own: BTreeSet<String>,
}

impl Instance {
    /// How the control point of the instance is asked.
    pub fn visit(&self) -> crate::vocab::InstanceVisit {
        crate::vocab::InstanceVisit {
            loop_counter: self.loop_counter,
            instances: self.count,
        }
    }
}

/// Whether delivering a throw of `thrower` to `catches` (the model's ids) starts an
/// interrupting event sub-process whose scope holds the thrower: the interrupt ends the
/// thrower's token there, so its worker is not completed (the native engine cancels it).
pub fn interrupts_thrower(process: &Process, thrower: &str, catches: &[String]) -> bool {
    let encloses = |scope: Option<&str>| {
        let mut at = process.node(thrower).and_then(|n| n.parent.as_deref());
        loop {
            if at == scope {
                return true;
            }
            match at {
                None => return false,
                Some(id) => at = process.node(id).and_then(|n| n.parent.as_deref()),
            }
        }
    };
    catches.iter().filter_map(|c| process.node(c)).any(|start| {
        matches!(
            start.kind,
            NodeKind::StartEvent {
                interrupting: true,
                ..
            }
        ) && start
            .parent
            .as_deref()
            .and_then(|sub| process.node(sub))
            .is_some_and(|sub| {
                matches!(
                    sub.kind,
                    NodeKind::SubProcess(crate::bpmn::SubProcessKind::Embedded {
                        triggered_by_event: true
                    })
                ) && encloses(sub.parent.as_deref())
            })
    })
}

/// The message of a run whose last node is a process-level terminate end event of the
/// model (the engine ended the instance there).
pub fn terminate_end(process: &Process, path: &[String]) -> Option<String> {
    let last = path.last()?;
    let node = process.node(last)?;
    let terminates = matches!(&node.kind, NodeKind::EndEvent { definitions }
        if definitions.contains(&crate::bpmn::EventDefinition::Terminate));
    (terminates && node.parent.is_none()).then(|| format!("terminate end event {last}"))
}

/// When the timer of `event` (a timer event of the model) is due if it starts at `now`,
/// over the run's `variables`: as the native engine computes it (a `${variable}` time
/// read from the variables, a number of seconds as a duration).
pub fn timer_due(
    event: &crate::bpmn::Node,
    variables: &Map<String, Value>,
    now: u64,
) -> Result<u64, crate::bpmn::DueError> {
    event
        .timer
        .as_ref()
        .ok_or(crate::bpmn::DueError::NoDefinition)?
        .due_over(variables, now)
}

/// A gateway that waits for its incoming tokens: parallel, inclusive or complex, with
/// two or more incoming flows.
pub fn is_sync_join(process: &Process, node: &crate::bpmn::Node) -> bool {
    matches!(
        node.kind,
        NodeKind::Gateway(GatewayKind::Parallel | GatewayKind::Inclusive | GatewayKind::Complex)
    ) && process.flows.iter().filter(|f| f.target == node.id).count() >= 2
}

/// The variables without cuga-flo's own (`cugaTopic`, `cugaRouteN`, `cugaHookN`).
pub fn user_variables(mut variables: Map<String, Value>) -> Map<String, Value> {
    variables.retain(|name, _| !name.starts_with("cuga"));
    variables
}

pub fn edge_info(f: &Flow) -> EdgeInfo {
    EdgeInfo {
        id: f.id.clone(),
        source: f.source.clone(),
        target: f.target.clone(),
        name: f.name.clone(),
        condition: f
            .condition
            .as_ref()
            .map(|c| c.body.clone())
            .filter(|c| !c.is_empty()),
    }
}

/// Journal the throw of `thrown` at `node` of `process` (a failed task when `from_task`),
/// caught where the native engine would catch it; the catch. For the engines that deliver
/// errors and escalations themselves (Flowable, Kogito), which cuga-flo only witnesses.
pub(crate) fn journal_throw(
    witness: &Witness,
    process: &Process,
    node: &str,
    thrown: &Thrown,
    from_task: bool,
    message: Option<String>,
) -> Result<Option<Caught>, PullError> {
    // The model's graph (built when needed: it is not `Sync`).
    let topology = Topology::from_process(process);
    let caught = catcher(&topology, node, thrown, from_task);
    let live = topology.node(node);
    let message = message.or_else(|| {
        live.and_then(|n| n.event_ref.as_ref())
            .and_then(|r| r.name.clone())
    });
    witness.journal(Event::EventThrown {
        kind: thrown.kind,
        code: thrown.code.clone(),
        node: node.to_string(),
        name: live.and_then(|n| n.name.clone()),
        message,
        caught_by: caught.as_ref().map(|c| c.boundary.clone()),
        activity: caught.as_ref().map(|c| c.activity.clone()),
        interrupting: caught.as_ref().is_some_and(|c| c.interrupting),
    })?;
    Ok(caught)
}

/// Task `task` of a pulled run failed with BPMN error `code` (`error` says why): its
/// throw journalled (unless `fresh` is false: a resumed run journalled it already), and
/// `Err` when nothing catches it (the run fails, as on the native engine); `Ok` when a
/// boundary event or event sub-process does, for the engine to deliver it there.
pub(crate) fn task_raised(
    witness: &Witness,
    process: &Process,
    task: &str,
    fresh: bool,
    code: &str,
    error: &str,
) -> Result<(), PullError> {
    let thrown = Thrown {
        kind: ThrownKind::Error,
        code: Some(code.to_string()),
    };
    let caught = if fresh {
        journal_throw(
            witness,
            process,
            task,
            &thrown,
            true,
            Some(error.to_string()),
        )?
    } else {
        catcher(&Topology::from_process(process), task, &thrown, true)
    };
    match caught {
        Some(_) => Ok(()),
        None => Err(PullError::Failed(format!(
            "task `{task}` failed: {error} (BPMN error {code}, not caught)"
        ))),
    }
}

/// Journal the throws of the error and escalation events `path` entered since the last
/// look (`throws` of them are journalled already; each after its entry, as the native
/// engine does), within the step budget.
pub(crate) fn journal_throws(
    witness: &Witness,
    request: &RunRequest,
    rewritten: &Rewritten,
    path: &[String],
    throws: &mut usize,
) -> Result<(), PullError> {
    let budget = usize::try_from(request.annotations.step_budget).unwrap_or(usize::MAX);
    let mut seen = 0;
    for (i, id) in path.iter().enumerate().take(budget) {
        let Some(thrown) = rewritten.thrown_at(id) else {
            continue;
        };
        seen += 1;
        if seen <= *throws {
            continue;
        }
        witness.entered(&path[..=i], Vec::new());
        journal_throw(witness, &request.process, id, thrown, false, None)?;
        *throws = seen;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn a_workers_key_counts_the_entries_of_its_control_point_up_to_its_own() {
        let mut roles = HashMap::new();
        roles.insert("T".to_string(), Role::Task("T".into()));
        for flow in ["F1", "F2"] {
            roles.insert(
                format!("cuga__hook__{flow}"),
                Role::Hook {
                    hook: "H".into(),
                    flow: flow.into(),
                    variable: "v".into(),
                },
            );
        }
        let rewritten = Rewritten {
            nodes: Vec::new(),
            flows: Vec::new(),
            roles,
            entry: HashMap::new(),
        };
        let entries = [
            "start",
            "cuga__hook__F1",
            "T",
            "cuga__hook__F2",
            "T",
            "cuga__hook__F1",
        ];
        let key = |own, worker| visit_key("r", &rewritten, &entries, own, worker);
        assert_eq!(key(Some(2), "T"), "r:T:1");
        assert_eq!(key(Some(4), "T"), "r:T:2");
        // A hook on two flows is one control point: its visits count both.
        assert_eq!(key(Some(5), "cuga__hook__F1"), "r:H:3");
        assert_eq!(key(Some(3), "cuga__hook__F2"), "r:H:2");
        // Not in the record yet: the next visit.
        assert_eq!(key(None, "T"), "r:T:3");
        assert_eq!(visit_key("r", &rewritten, &[], Some(0), "T"), "r:T:1");
    }
}
