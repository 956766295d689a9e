//! Remote agents (A2A): delegation of a task, consultation at a gateway or hook.
//!
//! - One [`crate::a2a::Client`] per `remote_agents` entry, built with the harness (so the
//!   agent card is cached for the run and read again after a failed exchange). The
//!   credential is read from the environment variable the config names, when the agent is
//!   first used; a variable that is not set fails that exchange with a message naming it.
//! - Delegation: a task whose `agent.agent_type` names a remote agent is sent to it: a
//!   DataPart with the composed input (`inputs` per `input_mapping`, the `outputs` it must
//!   answer, the instruction and the policy) and the same as readable text. The run id is
//!   the A2A context id; the agent's task id is kept for the visit. A question the agent
//!   asks (`input-required`) goes to the reasoner chain as a question on the same task
//!   with one output, `answer`; the answer goes back in the same A2A task.
//! - Consultation: a gateway's or hook's `human_consultation` agent is what the reasoner's
//!   `consult_user` reaches ([`RemoteConsultant`]).
//! - Every step of an exchange is a call record of the control point (model
//!   `a2a:<agent>`), journalled with its outcome, and shown in the stream.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::a2a::{self, A2aError, AgentConfig, Answerer, Client, Credential, Outgoing, Step};
use crate::app::{FlowConfig, RemoteAuth};
use crate::reason::{Reasoner, TaskAnswer, TaskRequest};
use crate::secret::Secret;
use crate::vocab::{CallOutcome, Decider, ModelCall};

/// The clients of an app's remote agents, by name.
#[derive(Default)]
pub struct Remotes {
    agents: HashMap<String, Arc<Remote>>,
}

/// One remote agent: its settings and, once built, its client.
pub struct Remote {
    pub name: String,
    url: String,
    timeout: Duration,
    connect_timeout: Duration,
    auth: Option<RemoteAuth>,
    client: tokio::sync::OnceCell<Result<Client, A2aError>>,
}

impl Remotes {
    pub fn of(config: &FlowConfig) -> Remotes {
        let agents = config
            .remote_agents
            .iter()
            .filter_map(|r| {
                let url = r.url.as_ref()?.value.clone();
                let secs = |s: &Option<crate::app::Located<f64>>, d: Duration| {
                    s.as_ref()
                        .filter(|t| t.value > 0.0)
                        .map_or(d, |t| Duration::from_secs_f64(t.value))
                };
                Some((
                    r.name.value.clone(),
                    Arc::new(Remote {
                        name: r.name.value.clone(),
                        url,
                        timeout: secs(&r.timeout_secs, a2a::DEFAULT_TIMEOUT),
                        connect_timeout: secs(
                            &r.connect_timeout_secs,
                            a2a::DEFAULT_CONNECT_TIMEOUT,
                        ),
                        auth: r.auth.clone(),
                        client: tokio::sync::OnceCell::new(),
                    }),
                ))
            })
            .collect();
        Remotes { agents }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Remote>> {
        self.agents.get(name)
    }
}

impl Remote {
    async fn client(&self) -> Result<&Client, A2aError> {
        self.client
            .get_or_init(|| async {
                let credential = match &self.auth {
                    None => None,
                    Some(RemoteAuth::Bearer { token_env }) => {
                        Some(Credential::Bearer(self.secret(&token_env.value)?))
                    }
                    Some(RemoteAuth::ApiKey { header, key_env }) => Some(Credential::Header {
                        name: header
                            .as_ref()
                            .map_or_else(|| "X-API-Key".to_string(), |h| h.value.clone()),
                        value: self.secret(&key_env.value)?,
                    }),
                };
                let mut config = AgentConfig::new(&self.name, &self.url);
                config.timeout = self.timeout;
                config.connect_timeout = self.connect_timeout;
                config.credential = credential;
                Client::new(config)
            })
            .await
            .as_ref()
            .map_err(Clone::clone)
    }

    fn secret(&self, var: &str) -> Result<Secret, A2aError> {
        match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(Secret::new(v)),
            _ => Err(A2aError::Config {
                agent: self.name.clone(),
                message: format!(
                    "its credential is read from environment variable `{var}`, which is not set"
                ),
            }),
        }
    }

    /// One exchange; the steps as call records (appended to `calls`).
    pub async fn exchange(
        &self,
        out: &Outgoing,
        answerer: &dyn Answerer,
        calls: &mut Vec<ModelCall>,
    ) -> Result<a2a::Reply, A2aError> {
        let mut steps = Vec::new();
        let result = match self.client().await {
            Ok(client) => client.exchange(out, answerer, &mut steps).await,
            Err(e) => Err(e),
        };
        let model = format!("a2a:{}", self.name);
        let mut last = 0;
        for (i, step) in steps.iter().enumerate() {
            calls.push(step_call(
                &model,
                i as u32 + 1,
                step,
                step.at_ms - last.min(step.at_ms),
            ));
            last = step.at_ms;
        }
        let n = steps.len() as u32 + 1;
        let end = ModelCall {
            model,
            attempt: n,
            outcome: match &result {
                Ok(_) => CallOutcome::Answered,
                Err(A2aError::Timeout { .. }) => CallOutcome::Timeout,
                Err(_) => CallOutcome::Error,
            },
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: steps.last().map_or(0, |s| s.at_ms),
            http_attempts: 1,
            detail: Some(match &result {
                Ok(r) => format!(
                    "reply: task {} completed (A2A {}, {})",
                    r.task_id,
                    r.version.as_str(),
                    if r.data.is_some() { "data" } else { "text" }
                ),
                Err(e) => format!("failed: {e}"),
            }),
        };
        tracing::info!(agent = %self.name, detail = end.detail.as_deref().unwrap_or(""), "a2a exchange");
        calls.push(end);
        result
    }
}

fn step_call(model: &str, attempt: u32, step: &Step, latency_ms: u64) -> ModelCall {
    let mut detail = step.kind.to_string();
    if let Some(t) = &step.task_id {
        detail.push_str(&format!(" task {t}"));
    }
    if let Some(s) = step.state {
        detail.push_str(&format!(" [{s}]"));
    }
    if let Some(d) = &step.detail {
        detail.push_str(&format!(": {d}"));
    }
    ModelCall {
        model: model.to_string(),
        attempt,
        outcome: CallOutcome::ToolUse,
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms,
        http_attempts: 1,
        detail: Some(detail),
    }
}

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
pub struct ChainAnswerer {
    pub reasoner: Arc<dyn Reasoner>,
    pub base: TaskRequest,
    pub agent: String,
}

impl Answerer for ChainAnswerer {
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

/// Delegate the task: its answer (decided by `Remote`), or why it failed.
pub async fn delegate(
    remote: &Remote,
    reasoner: Arc<dyn Reasoner>,
    req: TaskRequest,
    calls: &mut Vec<ModelCall>,
) -> Result<TaskAnswer, String> {
    let out = task_message(&req.context.run_id, &req);
    let outputs = req.outputs.clone();
    let answerer = ChainAnswerer {
        reasoner,
        base: req,
        agent: remote.name.clone(),
    };
    let reply = remote
        .exchange(&out, &answerer, calls)
        .await
        .map_err(|e| e.to_string())?;
    let outputs = reply
        .outputs(&remote.name, &outputs)
        .map_err(|e| e.to_string())?;
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
