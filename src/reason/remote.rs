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

use crate::a2a::{
    self, A2aError, AgentConfig, Answerer, Client, Credential, Limits, Outgoing, Step,
};
use crate::app::{FlowConfig, RemoteAuth};
use crate::bridge::BoxFuture;
use crate::journal::{Event, EventSink};
use crate::secret::Secret;
use crate::vocab::{CallOutcome, ControlPointKind, ModelCall, Offered, Question, RemoteWait};

use super::{CallLog, Consult, Consultation, Consulted, ReasonError};

/// The clients of an app's remote agents, by name.
#[derive(Default)]
pub struct Remotes {
    agents: HashMap<String, Arc<Remote>>,
    /// A resumed run's delegations that were still going when it parked, by the task's
    /// idempotency key: followed up, never sent again.
    waiting: std::sync::Mutex<HashMap<String, crate::vocab::RemoteWait>>,
    /// A resumed run's replies (`runs answer --reply`) to the questions its consulted
    /// remote people asked back, by the control point's key: sent in the same task.
    replies: std::sync::Mutex<HashMap<String, String>>,
    /// The run's journal, when its owner gave it ([`Remotes::journal_to`]): a remote
    /// task is journalled there (`remote_task_started`) as soon as the agent assigns its
    /// id, inside the control point's visit.
    journal: std::sync::OnceLock<Arc<dyn EventSink>>,
    /// Finds the journal of a run by its id, when the owner serves many runs with one
    /// harness ([`Remotes::journal_by_run`]; `serve --http`).
    runs: std::sync::OnceLock<RunJournals>,
    /// Set for a replay: nothing is sent to an agent.
    offline: std::sync::atomic::AtomicBool,
    /// The agents served for this run only (a scenario's `remote_agents`): gone once the
    /// run's process ends, so nothing may park on a question they ask.
    served_here: std::collections::HashSet<String>,
}

impl std::fmt::Debug for Remotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.agents.keys().collect();
        names.sort();
        f.debug_struct("Remotes")
            .field("agents", &names)
            .finish_non_exhaustive()
    }
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
            replies: Default::default(),
            journal: Default::default(),
            runs: Default::default(),
            offline: Default::default(),
            served_here: Default::default(),
        }
    }

    /// These agents are served for this run only (a scenario plays them): gone once the
    /// run's process ends, a question they ask back does not park the run.
    pub fn served_here<'n>(mut self, names: impl IntoIterator<Item = &'n String>) -> Remotes {
        self.served_here.extend(names.into_iter().cloned());
        self
    }

    /// The delegations a resumed run started and did not finish (its state's
    /// `remote_tasks`: parked on, or sent just before a crash), by key.
    pub fn resume_waiting<'q>(
        &self,
        tasks: impl IntoIterator<Item = (&'q String, &'q crate::journal::state::RemoteTask)>,
    ) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let mut replies = self.replies.lock().unwrap_or_else(|e| e.into_inner());
        for (key, task) in tasks {
            waiting.insert(key.clone(), task.remote.clone());
            if let Some(reply) = &task.reply {
                replies.insert(key.clone(), reply.clone());
            }
        }
    }

    /// Send nothing to any agent from now on (a replay).
    pub fn offline(&self) {
        self.offline
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether nothing may be sent (a replay).
    pub fn is_offline(&self) -> bool {
        self.offline.load(std::sync::atomic::Ordering::Relaxed)
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
        let Some(sink) = self.sink_for(run_id) else {
            return;
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

    /// The journal of run `run_id`, when its owner gave it: where a control point writes
    /// what must be durable inside its visit (a remote task, a tool call).
    pub fn sink_for(&self, run_id: &str) -> Option<Arc<dyn EventSink>> {
        match self.journal.get() {
            Some(s) => Some(s.clone()),
            None => self.runs.get().and_then(|find| find(run_id)),
        }
    }

    /// The delegation (or consultation) the run parked on at the control point with
    /// `key`, if any.
    pub fn waiting_at(&self, key: &str) -> Option<crate::vocab::RemoteWait> {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }

    /// The run parks on remote task `remote` at the control point with `key`: a run
    /// resumed by the same process (a server holding its parked runs) follows it up, as
    /// one resumed from its journal does ([`Remotes::resume_waiting`]).
    pub fn parked_at(&self, key: &str, remote: crate::vocab::RemoteWait) {
        (self.waiting.lock().unwrap_or_else(|e| e.into_inner())).insert(key.to_string(), remote);
    }

    /// Whether the run's own journal was given ([`Remotes::journal_to`]: `start`, `runs
    /// resume`, the worker), so that a person can answer what it parks on with `runs
    /// answer` (a server holds its runs' journals: another command cannot write them).
    pub fn answerable_later(&self, agent: &str) -> bool {
        self.journal.get().is_some() && !self.served_here.contains(agent)
    }

    /// The remote task followed up at `key` has ended (or was given up): a later exchange
    /// at the same visit sends its message.
    pub fn finished(&self, key: &str) {
        (self.waiting.lock().unwrap_or_else(|e| e.into_inner())).remove(key);
        (self.replies.lock().unwrap_or_else(|e| e.into_inner())).remove(key);
    }

    /// A person's reply to the question the consultation the run parked on at `key`
    /// asked back, not sent yet: taken (it is sent once).
    pub fn take_reply(&self, key: &str) -> Option<String> {
        (self.replies.lock().unwrap_or_else(|e| e.into_inner())).remove(key)
    }

    /// Whether the remote tasks of run `run_id` are journalled as they start: only then
    /// may a consultation park the run (a resumed run must find its task).
    pub fn journalled(&self, run_id: &str) -> bool {
        self.journal.get().is_some() || self.runs.get().is_some_and(|find| find(run_id).is_some())
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

    /// One exchange within `limits`; the steps as call records (appended to `calls`).
    pub async fn exchange_limited(
        &self,
        out: &Outgoing,
        answerer: &dyn Answerer,
        limits: Limits,
        calls: &mut Vec<ModelCall>,
    ) -> Result<a2a::Reply, A2aError> {
        let mut steps = Vec::new();
        let result = match self.client().await {
            Ok(client) => {
                client
                    .exchange_limited(out, answerer, &mut steps, limits)
                    .await
            }
            Err(e) => Err(e),
        };
        self.record(result, &steps, calls)
    }

    /// Follow up on a consultation sent before the run parked, within what is left of
    /// its `timeout` (`until_ms`) and for another `wait`.
    pub async fn follow_up_consultation(
        &self,
        wait: &RemoteWait,
        metadata: Map<String, serde_json::Value>,
        calls: &mut Vec<ModelCall>,
    ) -> Result<a2a::Reply, A2aError> {
        let left = wait
            .until_ms
            .map(|until| Duration::from_millis(until.saturating_sub(crate::clock::now_ms())));
        let limits = Limits {
            park_after: self.wait,
            cancel_after: left.or(Some(self.timeout)),
            questions_park: false,
            questions_return: true,
        };
        let mut steps = Vec::new();
        let result = match self.client().await {
            Ok(client) => {
                client
                    .follow_up_limited(
                        &wait.task_id,
                        &wait.context_id,
                        metadata,
                        &a2a::NoAnswerer,
                        &mut steps,
                        limits,
                    )
                    .await
            }
            Err(e) => Err(e),
        };
        self.record(result, &steps, calls)
    }

    /// How a consultation is followed: up to `timeout`, then cancelled; with `wait`
    /// (`parks`), the run parks after it and the task goes on until `timeout`. A question
    /// the remote person asks back ends the exchange ([`A2aError::Asked`]): it goes to the
    /// consulting model or person.
    fn consult_limits(&self, parks: bool) -> Limits {
        Limits {
            park_after: self.wait.filter(|_| parks),
            cancel_after: Some(self.timeout),
            questions_park: false,
            questions_return: true,
        }
    }

    /// Send `out` (the consulting model's or person's answer to the question the remote
    /// person asked back) in the consultation's task `wait`, and follow it within what is
    /// left of its `timeout` (`until_ms`); with `parks`, the run parks after `wait`.
    pub async fn reply_consultation(
        &self,
        wait: &RemoteWait,
        out: &Outgoing,
        answerer: &dyn Answerer,
        parks: bool,
        calls: &mut Vec<ModelCall>,
    ) -> Result<a2a::Reply, A2aError> {
        let left = wait
            .until_ms
            .map(|until| Duration::from_millis(until.saturating_sub(crate::clock::now_ms())));
        let mut limits = self.consult_limits(parks);
        limits.cancel_after = left.or(limits.cancel_after);
        let mut steps = Vec::new();
        let result = match self.client().await {
            Ok(client) => {
                client
                    .reply_limited(&wait.task_id, out, answerer, &mut steps, limits)
                    .await
            }
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
                Ok(_) | Err(A2aError::Asked { .. }) => CallOutcome::Answered,
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
                Err(A2aError::Asked {
                    task_id, question, ..
                }) => format!(
                    "asks back: task {task_id} [input-required]: {}",
                    clip(question, 500)
                ),
                Err(e) => format!("failed: {e}"),
            }),
            finish_reasons: None,
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
        finish_reasons: None,
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
    /// The consultations whose remote person asked the consulting model a question back,
    /// by visit (the control point's key): the task to send the model's answer in (its
    /// next `consult_user` there), and how many questions it asked so far.
    asked: std::sync::Mutex<HashMap<String, (RemoteWait, u32)>>,
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
            asked: Default::default(),
        })
    }
}

/// What a consultation came to, besides a reply.
enum NotConsulted {
    /// Still going past the agent's `wait`: the run parks on this question.
    Parked(Box<Question>),
    /// The remote person asks a question back (`input-required`); the task (`wait`,
    /// state `input-required`) stays open for the answer.
    Asked {
        wait: Box<RemoteWait>,
        question: String,
    },
    Failed(A2aError),
}

/// Journals a consultation's remote task as soon as the agent assigns it (with the
/// consulting model's conversation), and answers none of its questions.
struct ConsultAnswerer<'a> {
    remotes: &'a Remotes,
    run_id: &'a str,
    element: &'a str,
    key: Option<&'a str>,
    agent: &'a str,
    until_ms: u64,
    conversation: Option<serde_json::Value>,
}

impl Answerer for ConsultAnswerer<'_> {
    fn answer(&self, _question: &str) -> a2a::BoxFuture<'_, Option<String>> {
        Box::pin(async { None })
    }

    fn started(&self, task_id: &str, context_id: &str, state: &str) {
        let Some(key) = self.key else { return };
        self.remotes.started(
            self.run_id,
            self.element,
            key,
            RemoteWait {
                agent: self.agent.to_string(),
                task_id: task_id.to_string(),
                context_id: context_id.to_string(),
                state: state.to_string(),
                until_ms: Some(self.until_ms),
                conversation: self.conversation.clone(),
            },
        );
    }
}

impl RemoteConsultant {
    /// Ask `remote`: the reply, the question the run parks on (`base`, naming the remote
    /// task), the question the remote person asks back, or why it failed. A consultation
    /// the run parked on at this visit (`key`) is followed up with `GetTask`, never sent
    /// again; it may park once more, until its `timeout` (counted from when it was sent)
    /// cancels it. `reply_to`, or a parked consultation with a person's `reply`: `out`
    /// (the reply) is sent in that task, which asked a question back.
    #[allow(clippy::too_many_arguments)]
    async fn ask_remote(
        &self,
        remote: &Remote,
        out: Outgoing,
        run_id: &str,
        element: &str,
        key: Option<&str>,
        conversation: Option<serde_json::Value>,
        base: Question,
        log: &CallLog,
        reply_to: Option<RemoteWait>,
    ) -> Result<a2a::Reply, NotConsulted> {
        let earlier = key
            .and_then(|k| self.remotes.waiting_at(k))
            .filter(|w| w.agent == remote.name);
        // A person's reply (`runs answer --reply`) to the question the remote person
        // asked back while the run was parked: it goes in the same task. Any reply goes
        // in the task's own context (a resumed run's consultant has another).
        let person_replied = match (&reply_to, &earlier, key) {
            (None, Some(_), Some(k)) => self.remotes.take_reply(k),
            _ => None,
        };
        let (reply_to, out) = match (reply_to, &earlier) {
            (Some(w), _) => {
                let context_id = w.context_id.clone();
                (Some(w), Outgoing { context_id, ..out })
            }
            (None, Some(w)) if person_replied.is_some() => {
                let text = person_replied.unwrap_or_default();
                let context_id = w.context_id.clone();
                (
                    Some(w.clone()),
                    Outgoing {
                        context_id,
                        text,
                        data: None,
                        ..out
                    },
                )
            }
            _ => (None, out),
        };
        let parks = remote.wait.is_some() && key.is_some() && self.remotes.journalled(run_id);
        let mut calls = Vec::new();
        let (result, until_ms, conversation) = match (reply_to, earlier) {
            (Some(w), _) => {
                let until_ms = w.until_ms.unwrap_or_else(|| {
                    crate::clock::now_ms().saturating_add(
                        u64::try_from(remote.timeout.as_millis()).unwrap_or(u64::MAX),
                    )
                });
                let conversation = conversation.or(w.conversation.clone());
                let answerer = ConsultAnswerer {
                    remotes: &self.remotes,
                    run_id,
                    element,
                    key,
                    agent: &remote.name,
                    until_ms,
                    conversation: conversation.clone(),
                };
                let result = remote
                    .reply_consultation(&w, &out, &answerer, parks, &mut calls)
                    .await;
                (result, Some(until_ms), conversation)
            }
            (None, Some(w)) => {
                let result = remote
                    .follow_up_consultation(&w, out.metadata.clone(), &mut calls)
                    .await;
                (result, w.until_ms, w.conversation)
            }
            (None, None) => {
                let until_ms = crate::clock::now_ms()
                    .saturating_add(u64::try_from(remote.timeout.as_millis()).unwrap_or(u64::MAX));
                let answerer = ConsultAnswerer {
                    remotes: &self.remotes,
                    run_id,
                    element,
                    key,
                    agent: &remote.name,
                    until_ms,
                    conversation: conversation.clone(),
                };
                let result = remote
                    .exchange_limited(&out, &answerer, remote.consult_limits(parks), &mut calls)
                    .await;
                (result, Some(until_ms), conversation)
            }
        };
        for c in calls {
            log.push(c);
        }
        match result {
            Err(A2aError::Pending {
                agent,
                task_id,
                context_id,
                state,
                question,
                ..
            }) => {
                let question = parked(
                    base,
                    Parking {
                        agent,
                        task_id,
                        context_id,
                        state: state.to_string(),
                        asked: question,
                        wait: remote.wait.unwrap_or(a2a::DEFAULT_TIMEOUT),
                        until_ms,
                        conversation,
                    },
                );
                if let (Some(k), Some(w)) = (key, &question.remote) {
                    self.remotes.parked_at(k, w.clone());
                }
                Err(NotConsulted::Parked(Box::new(question)))
            }
            other => {
                // The task ended, failed or asks back: what the run knew of it is done
                // with (a later exchange at this visit sends, or replies, anew).
                if let Some(k) = key {
                    self.remotes.finished(k);
                }
                match other {
                    Ok(reply) => Ok(reply),
                    Err(A2aError::Asked {
                        agent,
                        task_id,
                        context_id,
                        question,
                    }) => Err(NotConsulted::Asked {
                        wait: Box::new(RemoteWait {
                            agent,
                            task_id,
                            context_id,
                            state: a2a::TaskState::InputRequired.as_str().to_string(),
                            until_ms,
                            conversation,
                        }),
                        question,
                    }),
                    Err(e) => Err(NotConsulted::Failed(e)),
                }
            }
        }
    }

    /// Cancel a consultation's task that asked back what nobody will answer; the step is
    /// journalled with the control point's calls.
    async fn give_up(&self, remote: &Remote, wait: &RemoteWait, why: &str, log: &CallLog) {
        let model = format!("{}{}", crate::vocab::REMOTE_CALL_PREFIX, remote.name);
        let state = remote.cancel_task(&wait.task_id).await;
        log.push(step_call(
            &model,
            1,
            &Step {
                at_ms: 0,
                kind: "cancel",
                task_id: Some(wait.task_id.clone()),
                state: None,
                detail: Some(match state {
                    Ok(_) => why.to_string(),
                    Err(e) => format!("{why} (CancelTask failed: {e})"),
                }),
            },
            0,
        ));
    }
}

/// A question to park on for a consultation, before the consulting reasoner says what
/// its control point offers ([`onto`]).
fn consulted_at(element: &str, key: Option<&str>, run_id: &str) -> Question {
    Question {
        key: key.map_or_else(|| format!("{run_id}:{element}:?"), str::to_string),
        kind: ControlPointKind::Gateway,
        element: element.to_string(),
        name: None,
        offered: Offered::Outputs {
            outputs: Vec::new(),
            kinds: Default::default(),
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

/// A consultation that parked (`e`, from [`Consult::consult`]) as the question of the
/// control point that consulted (`base`: what it offers, its policy), naming the remote
/// task and its poll deadline. Any other error is returned as it is.
pub fn onto(e: ReasonError, base: impl FnOnce() -> Question) -> ReasonError {
    match e {
        ReasonError::Parked(q) if q.remote.is_some() => {
            let mut question = base();
            question.remote = q.remote;
            question.instruction = q.instruction;
            question.deadline_ms = q.deadline_ms;
            question.on_timeout = None;
            ReasonError::Parked(Box::new(question))
        }
        other => other,
    }
}

/// The remote task a run parks on.
pub struct Parking {
    pub agent: String,
    pub task_id: String,
    pub context_id: String,
    pub state: String,
    /// The agent's question, when it waits for input.
    pub asked: Option<String>,
    /// The agent's `wait`: the poll deadline is one `wait` away.
    pub wait: Duration,
    /// A consultation's end (its `timeout`): the poll deadline is never later.
    pub until_ms: Option<u64>,
    /// The consulting model's conversation.
    pub conversation: Option<serde_json::Value>,
}

/// The question a run parks on while a remote agent works on its task: the control
/// point's own question (its key, element, what it offers), with the A2A task to follow
/// up on, and a deadline one `wait` away (no later than a consultation's end), when
/// `runs resume --due` and the worker look again.
pub fn parked(mut question: Question, p: Parking) -> Question {
    let Parking {
        agent,
        task_id,
        context_id,
        state,
        asked,
        wait,
        until_ms,
        conversation,
    } = p;
    let mut due = crate::clock::now_ms()
        .saturating_add(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1));
    if let Some(until) = until_ms {
        due = due.min(until.max(crate::clock::now_ms() + 1));
    }
    question.deadline_ms = Some(due);
    question.on_timeout = None;
    let consulted = until_ms.is_some();
    question.instruction = Some(match &asked {
        Some(q) if consulted => format!(
            "the person consulted through remote agent `{agent}` asks back (A2A task {task_id}, input-required): {q}\nReply with `cuga-flo runs answer <run> {} --reply TEXT`: the reply goes to them in the same A2A task and the consultation goes on (past its timeout it is cancelled and the decision is taken without it)",
            question.element
        ),
        Some(q) => format!(
            "remote agent `{agent}` asks (A2A task {task_id}, input-required): {q}\nAnswer it in the same A2A task: resume the run with an answers file or a person at the terminal (`runs resume`)."
        ),
        None if consulted => format!(
            "waiting for the person consulted through remote agent `{agent}` (A2A task {task_id}, {state}); `cuga-flo runs resume` asks it again (`runs resume --due` and the worker do once the deadline passes); past its timeout the consultation is cancelled and the decision is taken without it"
        ),
        None => format!(
            "waiting for remote agent `{agent}` (A2A task {task_id}, {state}); `cuga-flo runs resume` asks it again (`runs resume --due` and the worker do once the deadline passes)"
        ),
    });
    question.remote = Some(RemoteWait {
        agent,
        task_id,
        context_id,
        state,
        until_ms,
        conversation,
    });
    question
}

impl Consult for RemoteConsultant {
    fn consult(&self, c: Consultation) -> BoxFuture<'_, Result<Consulted, ReasonError>> {
        Box::pin(async move {
            let Some(remote) = self
                .by_element
                .get(&c.element)
                .and_then(|name| self.remotes.get(name))
            else {
                return match &self.fallback {
                    Some(f) => f.consult(c).await,
                    None => Err(ReasonError::no_answer(c.element, "nobody can be consulted")),
                };
            };
            let mut metadata = Map::new();
            metadata.insert("role".into(), json!("elicit_user_preference"));
            let out = Outgoing {
                context_id: self.context_id.clone(),
                text: c.question.clone(),
                data: None,
                metadata,
            };
            // The remote person asked this visit's model a question back: this call is
            // the model's answer, sent in the same task.
            let visit = c
                .key
                .clone()
                .unwrap_or_else(|| format!("{}:{}", c.run_id, c.element));
            let asked = (self.asked.lock().unwrap_or_else(|e| e.into_inner())).remove(&visit);
            let (reply_to, rounds) = match asked {
                Some((w, n)) => (Some(w), n),
                None => (None, 0),
            };
            let base = consulted_at(&c.element, c.key.as_deref(), &c.run_id);
            let result = self
                .ask_remote(
                    remote,
                    out,
                    &c.run_id,
                    &c.element,
                    c.key.as_deref(),
                    c.conversation.clone(),
                    base,
                    &c.log,
                    reply_to,
                )
                .await;
            let unavailable = |e: &dyn std::fmt::Display| {
                ReasonError::Io(format!(
                    "consultation unavailable: {e}. Decide using the policy and the process state alone."
                ))
            };
            match result {
                Ok(reply) if !reply.text.trim().is_empty() => Ok(Consulted::Answer(reply.text)),
                Ok(reply) => Ok(Consulted::Answer(
                    reply.data.map(|d| d.to_string()).unwrap_or_default(),
                )),
                Err(NotConsulted::Asked { wait, question }) => {
                    if rounds >= a2a::MAX_ROUNDS {
                        let why = format!(
                            "remote agent `{}` asked back more than {} questions",
                            remote.name,
                            a2a::MAX_ROUNDS
                        );
                        self.give_up(remote, &wait, &why, &c.log).await;
                        return Err(unavailable(&why));
                    }
                    (self.asked.lock().unwrap_or_else(|e| e.into_inner()))
                        .insert(visit, (*wait, rounds + 1));
                    Ok(Consulted::AskedBack(question))
                }
                Err(NotConsulted::Parked(q)) => Err(ReasonError::Parked(q)),
                Err(NotConsulted::Failed(e)) => Err(unavailable(&e)),
            }
        })
    }

    fn conversation(&self, key: &str) -> Option<serde_json::Value> {
        self.remotes.waiting_at(key)?.conversation
    }

    fn settle<'a>(
        &'a self,
        run_id: &'a str,
        element: &'a str,
        key: Option<&'a str>,
        log: &'a CallLog,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let visit = key.map_or_else(|| format!("{run_id}:{element}"), str::to_string);
            let asked = (self.asked.lock().unwrap_or_else(|e| e.into_inner())).remove(&visit);
            let Some((wait, _)) = asked else { return };
            let Some(remote) = self.remotes.get(&wait.agent) else {
                return;
            };
            let why = format!(
                "the model decided without answering the question remote agent `{}` asked back",
                remote.name
            );
            self.give_up(remote, &wait, &why, log).await;
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

    /// Ask `element`'s agent; `Ok(None)`: it does not consult. Still going past the
    /// agent's `wait`: the run parks on `base` (the control point's question).
    async fn ask(
        &self,
        element: &str,
        text: String,
        data: serde_json::Value,
        ctx: &crate::bridge::ControlPointContext,
        base: Question,
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
        // A question the remote person asks back parks the run for a person here only
        // when one can answer it later (`runs answer --reply`): not in a served run.
        let parks =
            ctx.idempotency_key.is_some() && self.consultant.remotes.answerable_later(&remote.name);
        let result = self
            .consultant
            .ask_remote(
                remote,
                out,
                &ctx.run_id,
                element,
                ctx.idempotency_key.as_deref(),
                None,
                base.clone(),
                log,
                None,
            )
            .await;
        match result {
            Ok(reply) => Ok(Some((remote.name.clone(), reply))),
            Err(NotConsulted::Parked(q)) => Err(ReasonError::Parked(q)),
            // The remote person asks a question back: it goes to a person here. The run
            // parks on it (its task stays open); `runs answer --reply` answers it.
            Err(NotConsulted::Asked { wait, question }) if parks => {
                let w = *wait;
                Err(ReasonError::Parked(Box::new(parked(
                    base,
                    Parking {
                        agent: w.agent,
                        task_id: w.task_id,
                        context_id: w.context_id,
                        state: w.state,
                        asked: Some(question),
                        wait: remote.wait.unwrap_or(a2a::DEFAULT_TIMEOUT),
                        until_ms: w.until_ms,
                        conversation: None,
                    },
                ))))
            }
            Err(NotConsulted::Asked { wait, question }) => {
                let why = format!(
                    "remote agent `{}` asked for input and nobody could answer it here (the run \
                     cannot park for a person to reply): {}",
                    remote.name,
                    clip(&question, 200)
                );
                self.consultant.give_up(remote, &wait, &why, log).await;
                Err(ReasonError::no_answer(
                    element,
                    format!("the consultation failed ({why}); someone else must decide"),
                ))
            }
            Err(NotConsulted::Failed(e)) => Err(ReasonError::no_answer(
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
            let base = super::park::gateway_question(&req);
            let Some((agent, reply)) = self
                .ask(&req.gateway_id, text, data, &req.context, base, &req.calls)
                .await?
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
            let base = super::park::hook_question(&req);
            let Some((agent, reply)) = self
                .ask(&req.hook_id, text, data, &req.context, base, &req.calls)
                .await?
            else {
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
