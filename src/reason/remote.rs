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
use crate::journal::{Event, EventSink};
use crate::secret::Secret;
use crate::vocab::{CallOutcome, ModelCall};

use super::{CallLog, Consult, ReasonError};

/// The clients of an app's remote agents, by name.
#[derive(Default)]
pub struct Remotes {
    agents: HashMap<String, Arc<Remote>>,
    /// A resumed run's delegations that were still going when it parked, by the task's
    /// idempotency key: followed up, never sent again.
    waiting: std::sync::Mutex<HashMap<String, crate::vocab::RemoteWait>>,
    /// The run's journal, when its owner gave it ([`Remotes::journal_to`]): a remote
    /// task is journalled there (`remote_task_started`) as soon as the agent assigns its
    /// id, inside the control point's visit.
    journal: std::sync::OnceLock<Arc<dyn EventSink>>,
    /// Finds the journal of a run by its id, when the owner serves many runs with one
    /// harness ([`Remotes::journal_by_run`]; `serve --http`).
    runs: std::sync::OnceLock<RunJournals>,
}

/// The journal of a run still going, by its id (a server's open runs).
pub type RunJournals = Arc<dyn Fn(&str) -> Option<Arc<dyn EventSink>> + Send + Sync>;

/// One remote agent: its settings and, once built, its client.
pub struct Remote {
    pub name: String,
    url: String,
    timeout: Duration,
    connect_timeout: Duration,
    /// How long a delegation is followed live before the run parks (`wait`).
    pub wait: Option<Duration>,
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
                        wait: r.wait.as_ref().map(|w| w.value),
                        auth: r.auth.clone(),
                        client: tokio::sync::OnceCell::new(),
                    }),
                ))
            })
            .collect();
        Remotes {
            agents,
            waiting: Default::default(),
            journal: Default::default(),
            runs: Default::default(),
        }
    }

    /// The delegations a resumed run started and did not finish (its state's
    /// `remote_tasks`: parked on, or sent just before a crash), by key.
    pub fn resume_waiting<'q>(
        &self,
        tasks: impl IntoIterator<Item = (&'q String, &'q crate::journal::state::RemoteTask)>,
    ) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        for (key, task) in tasks {
            waiting.insert(key.clone(), task.remote.clone());
        }
    }

    /// Journal the run's remote tasks into `sink` as they start (once per run).
    pub fn journal_to(&self, sink: Arc<dyn EventSink>) {
        let _ = self.journal.set(sink);
    }

    /// Journal the remote tasks of each run into the run's journal that `find` gives for
    /// its id (a harness serving many runs: `serve --http`). A run given its own journal
    /// with [`Remotes::journal_to`] uses that one.
    pub fn journal_by_run(&self, find: RunJournals) {
        let _ = self.runs.set(find);
    }

    /// A delegation's task was assigned its id: journalled and committed at once (before
    /// the task is followed), so that a crash from now on resumes with `GetTask` on it.
    /// A journal that cannot take it is logged; the exchange goes on.
    pub fn started(&self, run_id: &str, node: &str, key: &str, remote: crate::vocab::RemoteWait) {
        let sink = match self.journal.get() {
            Some(s) => s.clone(),
            None => match self.runs.get().and_then(|find| find(run_id)) {
                Some(s) => s,
                None => return,
            },
        };
        let written = sink
            .emit(Event::RemoteTaskStarted {
                node: node.to_string(),
                key: key.to_string(),
                remote,
            })
            .and_then(|_| sink.commit());
        match written {
            Ok(()) => crate::crash::point("remote task journalled"),
            Err(e) => tracing::warn!("{key}: the remote task cannot be journalled: {e}"),
        }
    }

    /// The delegation the run parked on at the control point with `key`, if any.
    pub fn waiting_at(&self, key: &str) -> Option<crate::vocab::RemoteWait> {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
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
                config.wait = self.wait;
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

    /// One exchange; the steps as call records (appended to `calls`). `parks`: a task
    /// still going past the agent's `wait` is [`A2aError::Pending`] (a delegation);
    /// otherwise it is followed up to `timeout` (a consultation).
    pub async fn exchange(
        &self,
        out: &Outgoing,
        answerer: &dyn Answerer,
        parks: bool,
        calls: &mut Vec<ModelCall>,
    ) -> Result<a2a::Reply, A2aError> {
        let mut steps = Vec::new();
        let result = match self.client().await {
            Ok(client) if parks => client.exchange(out, answerer, &mut steps).await,
            Ok(client) => client.exchange_live(out, answerer, &mut steps).await,
            Err(e) => Err(e),
        };
        self.record(result, &steps, calls)
    }

    /// Follow up on a task sent before the run parked (`GetTask`, never sent again); the
    /// steps as call records (appended to `calls`).
    pub async fn follow_up(
        &self,
        wait: &crate::vocab::RemoteWait,
        metadata: Map<String, serde_json::Value>,
        answerer: &dyn Answerer,
        calls: &mut Vec<ModelCall>,
    ) -> Result<a2a::Reply, A2aError> {
        let mut steps = Vec::new();
        let result = match self.client().await {
            Ok(client) => {
                client
                    .follow_up(
                        &wait.task_id,
                        &wait.context_id,
                        metadata,
                        answerer,
                        &mut steps,
                    )
                    .await
            }
            Err(e) => Err(e),
        };
        self.record(result, &steps, calls)
    }

    /// Cancel a task sent earlier (its run is cancelled): the task's state in the
    /// agent's reply.
    pub async fn cancel_task(&self, task_id: &str) -> Result<String, A2aError> {
        self.client().await?.cancel_task(task_id).await
    }

    /// The steps and the end of an exchange as call records.
    fn record(
        &self,
        result: Result<a2a::Reply, A2aError>,
        steps: &[Step],
        calls: &mut Vec<ModelCall>,
    ) -> Result<a2a::Reply, A2aError> {
        let model = format!("{}{}", crate::vocab::REMOTE_CALL_PREFIX, self.name);
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
                Err(A2aError::Timeout { .. } | A2aError::Pending { .. }) => CallOutcome::Timeout,
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
            let result = remote
                .exchange(&out, &a2a::NoAnswerer, false, &mut calls)
                .await;
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

/// A gateway or hook with `human_consultation` when no model asks first: the remote
/// person is asked to choose directly (a gateway's flows; a hook's actions that need no
/// target), and the reply is matched to one choice (a DataPart `{"flow": id}` /
/// `{"action": name}`, or text naming one choice's id, label or name). A consultation
/// that fails, or a reply that names no single choice, is journalled and the chain goes
/// on to the next reasoner (a person at the terminal, or the question parks).
pub struct RemoteChooser {
    consultant: RemoteConsultant,
}

impl RemoteChooser {
    pub fn of(config: &FlowConfig, remotes: Arc<Remotes>) -> Option<RemoteChooser> {
        Some(RemoteChooser {
            consultant: RemoteConsultant::of(config, remotes, None)?,
        })
    }

    fn agent_of(&self, element: &str) -> Option<&Arc<Remote>> {
        let name = self.consultant.by_element.get(element)?;
        self.consultant.remotes.get(name)
    }

    /// Ask `element`'s agent; `Ok(None)`: it does not consult.
    async fn ask(
        &self,
        element: &str,
        text: String,
        data: serde_json::Value,
        log: &CallLog,
    ) -> Result<Option<(String, a2a::Reply)>, ReasonError> {
        let Some(remote) = self.agent_of(element) else {
            return Ok(None);
        };
        let mut metadata = Map::new();
        metadata.insert("role".into(), json!("elicit_user_preference"));
        let out = Outgoing {
            context_id: self.consultant.context_id.clone(),
            text,
            data: Some(data),
            metadata,
        };
        let mut calls = Vec::new();
        let result = remote
            .exchange(&out, &a2a::NoAnswerer, false, &mut calls)
            .await;
        for c in calls {
            log.push(c);
        }
        match result {
            Ok(reply) => Ok(Some((remote.name.clone(), reply))),
            Err(e) => Err(ReasonError::no_answer(
                element,
                format!("the consultation failed ({e}); someone else must decide"),
            )),
        }
    }
}

/// The one choice a reply names: `key` in its data, else its text equal to (or, failing
/// that, containing exactly one of) the choices' names.
fn chosen<'a>(
    reply: &a2a::Reply,
    key: &str,
    choices: &'a [(String, Vec<String>)],
) -> Option<&'a str> {
    if let Some(v) = reply
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .and_then(|v| v.as_str())
    {
        return choices
            .iter()
            .find(|(id, _)| id == v)
            .map(|(id, _)| id.as_str());
    }
    let text = reply.text.trim().to_lowercase();
    let names = |(_, names): &&(String, Vec<String>)| {
        names.iter().map(|n| n.to_lowercase()).collect::<Vec<_>>()
    };
    let exact: Vec<&(String, Vec<String>)> = choices
        .iter()
        .filter(|c| names(c).contains(&text))
        .collect();
    if exact.len() == 1 {
        return Some(exact[0].0.as_str());
    }
    let within: Vec<&(String, Vec<String>)> = choices
        .iter()
        .filter(|c| {
            names(c)
                .iter()
                .any(|n| !n.is_empty() && text.contains(n.as_str()))
        })
        .collect();
    (within.len() == 1).then(|| within[0].0.as_str())
}

impl super::Reasoner for RemoteChooser {
    fn describe(&self) -> String {
        "remote people (human_consultation)".to_string()
    }

    fn task(
        &self,
        req: super::TaskRequest,
    ) -> BoxFuture<'_, Result<super::TaskAnswer, ReasonError>> {
        Box::pin(async move {
            Err(ReasonError::no_answer(
                req.task_id,
                "tasks are not consulted",
            ))
        })
    }

    fn gateway(
        &self,
        req: super::GatewayRequest,
    ) -> BoxFuture<'_, Result<super::GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            let choices: Vec<(String, Vec<String>)> = req
                .flows
                .iter()
                .map(|f| {
                    let mut names = vec![f.id.clone()];
                    names.extend(f.decision.clone());
                    names.extend(f.name.clone());
                    (f.id.clone(), names)
                })
                .collect();
            let question = req
                .condition
                .clone()
                .or_else(|| req.name.clone())
                .unwrap_or_else(|| format!("Which way at `{}`?", req.gateway_id));
            let options: Vec<String> = req
                .flows
                .iter()
                .map(|f| {
                    format!(
                        "- {}{}",
                        f.decision.as_deref().or(f.name.as_deref()).unwrap_or(&f.id),
                        if f.decision.is_some() || f.name.is_some() {
                            format!(" ({})", f.id)
                        } else {
                            String::new()
                        }
                    )
                })
                .collect();
            let text = format!("{question}\nReply with one of:\n{}", options.join("\n"));
            let data = json!({
                "question": question,
                "options": req.flows.iter().map(|f| json!({"flow": f.id, "label": f.decision.as_deref().or(f.name.as_deref())})).collect::<Vec<_>>(),
            });
            let Some((agent, reply)) = self.ask(&req.gateway_id, text, data, &req.calls).await?
            else {
                return Err(ReasonError::no_answer(
                    &req.gateway_id,
                    "no remote person is consulted here",
                ));
            };
            match chosen(&reply, "flow", &choices) {
                Some(flow) => Ok(super::GatewayAnswer {
                    flows: vec![flow.to_string()],
                    reason: Some(format!(
                        "remote agent `{agent}` answered: {}",
                        clip(&reply.text, 300)
                    )),
                    decided_by: crate::vocab::Decider::Remote,
                }),
                None => Err(ReasonError::no_answer(
                    &req.gateway_id,
                    format!(
                        "remote agent `{agent}` named no single flow; someone else must decide"
                    ),
                )),
            }
        })
    }

    fn hook(
        &self,
        req: super::HookRequest,
    ) -> BoxFuture<'_, Result<super::HookAnswer, ReasonError>> {
        Box::pin(async move {
            use crate::vocab::HookAction;
            // Only the actions that need no target or task can be chosen by name.
            let choices: Vec<(String, Vec<String>)> = req
                .permitted
                .iter()
                .filter(|a| {
                    matches!(
                        a,
                        HookAction::Continue | HookAction::Terminate | HookAction::SkipNode
                    )
                })
                .map(|a| (a.as_str().to_string(), vec![a.as_str().to_string()]))
                .collect();
            let question = req
                .instruction
                .clone()
                .or_else(|| req.name.clone())
                .unwrap_or_else(|| format!("May the process go on at `{}`?", req.flow_id));
            let names: Vec<&str> = choices.iter().map(|(id, _)| id.as_str()).collect();
            let text = format!("{question}\nReply with one of: {}", names.join(", "));
            let data = json!({"question": question, "options": names});
            let Some((agent, reply)) = self.ask(&req.hook_id, text, data, &req.calls).await? else {
                return Err(ReasonError::no_answer(
                    &req.hook_id,
                    "no remote person is consulted here",
                ));
            };
            let action = chosen(&reply, "action", &choices)
                .and_then(|a| req.permitted.iter().find(|p| p.as_str() == a).copied());
            match action {
                Some(action) => {
                    let mut answer =
                        super::HookAnswer::action(action, crate::vocab::Decider::Remote);
                    answer.reason = Some(format!(
                        "remote agent `{agent}` answered: {}",
                        clip(&reply.text, 300)
                    ));
                    Ok(answer)
                }
                None => Err(ReasonError::no_answer(
                    &req.hook_id,
                    format!(
                        "remote agent `{agent}` named no single action; someone else must decide"
                    ),
                )),
            }
        })
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(data: Option<serde_json::Value>, text: &str) -> a2a::Reply {
        a2a::Reply {
            task_id: "t".into(),
            context_id: "c".into(),
            version: a2a::Version::V1,
            data,
            text: text.into(),
        }
    }

    #[test]
    fn a_reply_names_one_choice_or_none() {
        let choices = vec![
            (
                "F1".to_string(),
                vec!["F1".to_string(), "update again".to_string()],
            ),
            (
                "F2".to_string(),
                vec!["F2".to_string(), "run function".to_string()],
            ),
        ];
        assert_eq!(
            chosen(&reply(Some(json!({"flow": "F2"})), ""), "flow", &choices),
            Some("F2")
        );
        assert_eq!(
            chosen(&reply(None, "Run function"), "flow", &choices),
            Some("F2")
        );
        assert_eq!(
            chosen(&reply(None, "please update again"), "flow", &choices),
            Some("F1")
        );
        assert_eq!(
            chosen(
                &reply(None, "update again, then run function"),
                "flow",
                &choices
            ),
            None
        );
        assert_eq!(
            chosen(&reply(Some(json!({"flow": "F9"})), ""), "flow", &choices),
            None
        );
    }
}
