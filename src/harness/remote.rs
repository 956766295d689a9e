//! Remote agents (A2A): delegation of a task, consultation at a gateway or hook.
//!
//! - The clients: [`Remotes`] (one per `remote_agents` entry, shared with the consultant).
//! - Delegation: a task whose `agent.agent_type` names a remote agent is sent to it: a
//!   DataPart with the composed input (`inputs` per `input_mapping`, the `outputs` it must
//!   answer, the instruction and the policy) and the same as readable text. The run id is
//!   the A2A context id; the agent's task id is kept for the visit. A question the agent
//!   asks (`input-required`) goes to the reasoner chain as a question on the same task
//!   with one output, `answer`; the answer goes back in the same A2A task.
//! - Consultation: [`crate::reason::remote::RemoteConsultant`].
//! - Every step of an exchange is a call record of the control point (model
//!   `a2a:<agent>`), journalled with its outcome, and shown in the stream.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::a2a::{self, A2aError, Answerer, Outgoing};
use crate::reason::remote::{Parking, parked};
pub use crate::reason::remote::{Remote, Remotes};
use crate::reason::{Reasoner, TaskAnswer, TaskRequest};
use crate::vocab::{Decider, ModelCall, RemoteWait};

/// What a delegated task sends: the composed input as data and as text.
pub fn task_message(run_id: &str, req: &TaskRequest) -> Outgoing {
    let mut data = Map::new();
    data.insert("task".into(), json!(req.task_id));
    if let Some(n) = &req.name {
        data.insert("name".into(), json!(n));
    }
    if let Some(i) = &req.instruction {
        data.insert("instruction".into(), json!(i));
    }
    if let Some(p) = &req.policy {
        data.insert("policy".into(), json!(p.text));
    }
    data.insert(
        "inputs".into(),
        Value::Object(req.inputs.clone().into_iter().collect()),
    );
    data.insert("outputs".into(), json!(req.outputs));
    let mut text = String::new();
    if let Some(i) = &req.instruction {
        text.push_str(i);
        text.push_str("\n\n");
    }
    if let Some(p) = &req.policy {
        text.push_str("Policy:\n");
        text.push_str(&p.text);
        text.push_str("\n\n");
    }
    text.push_str(&format!(
        "Variables: {}\n",
        Value::Object(req.inputs.clone().into_iter().collect())
    ));
    if !req.outputs.is_empty() {
        text.push_str(&format!(
            "Reply with a JSON object (a DataPart) with the keys: {}\n",
            req.outputs.join(", ")
        ));
    }
    let mut metadata = Map::new();
    metadata.insert("role".into(), json!("fulfill_task"));
    Outgoing {
        context_id: run_id.to_string(),
        text,
        data: Some(Value::Object(data)),
        metadata,
    }
}

/// Answers a delegated task's `input-required` questions with the reasoner chain: the
/// question is asked as the task's own question with one output, `answer`.
/// It also journals the task the agent assigns (through the run's [`Remotes`]).
pub struct ChainAnswerer<'a> {
    pub reasoner: Arc<dyn Reasoner>,
    pub base: TaskRequest,
    pub agent: String,
    pub remotes: &'a Remotes,
}

impl Answerer for ChainAnswerer<'_> {
    fn started(&self, task_id: &str, context_id: &str, state: &str) {
        let Some(key) = self.base.context.idempotency_key.as_deref() else {
            return;
        };
        self.remotes.started(
            &self.base.context.run_id,
            &self.base.task_id,
            key,
            RemoteWait {
                agent: self.agent.clone(),
                task_id: task_id.to_string(),
                context_id: context_id.to_string(),
                state: state.to_string(),
                until_ms: None,
                conversation: None,
            },
        );
    }

    fn answer(&self, question: &str) -> a2a::BoxFuture<'_, Option<String>> {
        let mut req = self.base.clone();
        req.instruction = Some(format!(
            "The remote agent `{}` fulfilling this task asks: {question}",
            self.agent
        ));
        req.outputs = vec!["answer".to_string()];
        req.output_kinds = Default::default();
        req.raises = Vec::new();
        Box::pin(async move {
            let answer = self.reasoner.task(req).await.ok()?;
            match answer.outputs.get("answer")? {
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            }
        })
    }
}

/// Why a delegation gave no answer.
#[derive(Debug)]
pub enum NotDelegated {
    /// It failed: the task fails (`REMOTE_FAILED`).
    Failed(String),
    /// The agent is still working past its `wait` (or asks what nobody here can answer):
    /// the run parks on this question, which names the A2A task to follow up on.
    Parked(Box<crate::vocab::Question>),
}

/// Delegate the task: its answer (decided by `Remote`), why it failed, or the question
/// the run parks on while the agent works. A task the run parked on earlier (the
/// `remotes` know its idempotency key) is followed up with `GetTask`, not sent again.
pub async fn delegate(
    remotes: &Remotes,
    remote: &Remote,
    reasoner: Arc<dyn Reasoner>,
    req: TaskRequest,
    calls: &mut Vec<ModelCall>,
) -> Result<TaskAnswer, NotDelegated> {
    let out = task_message(&req.context.run_id, &req);
    let outputs = req.outputs.clone();
    let earlier = req
        .context
        .idempotency_key
        .as_deref()
        .and_then(|k| remotes.waiting_at(k))
        .filter(|w| w.agent == remote.name);
    let question = crate::reason::park::task_question(&req);
    let key = req.context.idempotency_key.clone();
    let answerer = ChainAnswerer {
        reasoner,
        base: req,
        agent: remote.name.clone(),
        remotes,
    };
    let result = match &earlier {
        Some(w) => {
            remote
                .follow_up(w, out.metadata.clone(), &answerer, calls)
                .await
        }
        None => remote.exchange(&out, &answerer, true, calls).await,
    };
    let reply = match result {
        Ok(reply) => reply,
        Err(A2aError::Pending {
            agent,
            task_id,
            context_id,
            state,
            question: asked,
            ..
        }) => {
            let wait = remote.wait.unwrap_or(a2a::DEFAULT_TIMEOUT);
            let question = parked(
                question,
                Parking {
                    agent,
                    task_id,
                    context_id,
                    state: state.to_string(),
                    asked,
                    wait,
                    until_ms: None,
                    conversation: None,
                },
            );
            // A server resuming the run in-process follows the task up (never sends it
            // again), as a run resumed from its journal does.
            if let (Some(k), Some(w)) = (key.as_deref(), &question.remote) {
                remotes.parked_at(k, w.clone());
            }
            return Err(NotDelegated::Parked(Box::new(question)));
        }
        Err(e) => return Err(NotDelegated::Failed(e.to_string())),
    };
    let outputs = reply
        .outputs(&remote.name, &outputs)
        .map_err(|e| NotDelegated::Failed(e.to_string()))?;
    Ok(TaskAnswer {
        outputs: outputs.into_iter().collect(),
        reason: Some(format!(
            "fulfilled by remote agent `{}` (A2A {}, task {})",
            remote.name,
            reply.version.as_str(),
            reply.task_id
        )),
        decided_by: Decider::Remote,
        raised: None,
    })
}
