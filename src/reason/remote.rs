//! Remote agents (A2A) as the reasoners see them: the clients of an app's
//! `remote_agents` ([`Remotes`]: one per agent, its credential read from the environment
//! variable the config names when first used, its card cached for the run), one exchange
//! as call records for the journal, and [`RemoteConsultant`]: the `consult_user` of a
//! gateway or hook with `human_consultation: <agent>` asks that agent.
//!
//! Every step of an exchange (card, send, status, input-required, answer, cancel, the
//! reply or the failure) is a call record (model `a2a:<agent>`) of the control point.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, json};

use crate::a2a::{self, A2aError, AgentConfig, Answerer, Client, Credential, Outgoing, Step};
use crate::app::{FlowConfig, RemoteAuth};
use crate::bridge::BoxFuture;
use crate::secret::Secret;
use crate::vocab::{CallOutcome, ModelCall};

use super::{CallLog, Consult, ReasonError};

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

/// `consult_user` at gateways and hooks with `human_consultation`: the question goes to
/// that remote agent (role `elicit_user_preference`); any other control point's question
/// goes to `fallback` (the person at the terminal), if any. A failed consultation is an
/// error the model sees as the tool's result ("decide without it"), and is journalled.
pub struct RemoteConsultant {
    remotes: Arc<Remotes>,
    /// Control point id → the remote agent it consults.
    by_element: HashMap<String, String>,
    fallback: Option<Arc<dyn Consult>>,
    context_id: String,
}

impl RemoteConsultant {
    /// `None` when no gateway or hook consults a remote agent.
    pub fn of(
        config: &FlowConfig,
        remotes: Arc<Remotes>,
        fallback: Option<Arc<dyn Consult>>,
    ) -> Option<RemoteConsultant> {
        let by_element: HashMap<String, String> = config
            .gateways
            .iter()
            .filter_map(|g| {
                Some((
                    g.id.value.clone(),
                    g.human_consultation.as_ref()?.value.clone(),
                ))
            })
            .chain(config.hooks.iter().filter_map(|h| {
                Some((
                    h.id.value.clone(),
                    h.human_consultation.as_ref()?.value.clone(),
                ))
            }))
            .filter(|(_, agent)| remotes.get(agent).is_some())
            .collect();
        (!by_element.is_empty()).then(|| RemoteConsultant {
            remotes,
            by_element,
            fallback,
            context_id: a2a::new_id(),
        })
    }
}

impl Consult for RemoteConsultant {
    fn consult(
        &self,
        element: &str,
        question: &str,
        log: CallLog,
    ) -> BoxFuture<'_, Result<String, ReasonError>> {
        let element = element.to_string();
        let question = question.to_string();
        Box::pin(async move {
            let Some(remote) = self
                .by_element
                .get(&element)
                .and_then(|name| self.remotes.get(name))
            else {
                return match &self.fallback {
                    Some(f) => f.consult(&element, &question, log).await,
                    None => Err(ReasonError::no_answer(element, "nobody can be consulted")),
                };
            };
            let mut metadata = Map::new();
            metadata.insert("role".into(), json!("elicit_user_preference"));
            let out = Outgoing {
                context_id: self.context_id.clone(),
                text: question,
                data: None,
                metadata,
            };
            let mut calls = Vec::new();
            let result = remote.exchange(&out, &a2a::NoAnswerer, &mut calls).await;
            for c in calls {
                log.push(c);
            }
            match result {
                Ok(reply) if !reply.text.trim().is_empty() => Ok(reply.text),
                Ok(reply) => Ok(reply.data.map(|d| d.to_string()).unwrap_or_default()),
                Err(e) => Err(ReasonError::Io(format!(
                    "consultation unavailable: {e}. Decide using the policy and the process state alone."
                ))),
            }
        })
    }
}
