//! What `start` and `serve` build alike: the reasoner chain an app's harness asks, the
//! registered flow of a loaded app, the `register_flow` loader, and the journal sink that
//! labels a run with its app and its source of judgement.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::app::scenario::Scenario;
use crate::app::{FlowConfig, LoadedApp, load_app};
use crate::check::check_app;

use crate::journal::store::Journal;
use crate::journal::{Event, EventSink, JournalError, Launch, ModelUsage, Record};

use crate::reason::human::HumanReasoner;
use crate::reason::llm::LlmReasoner;
use crate::reason::park::{Answers, Park};
use crate::reason::scripted::ScriptedReasoner;
use crate::reason::{Chain, NoModel, Reasoner, Recorder, Rules};

/// Why a run's reasoner chain cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// Answers given in advance (a scenario's, an answers file's) cannot be read or do
    /// not fit the app's control points.
    #[error(transparent)]
    Answers(#[from] crate::reason::ReasonError),
    /// An answer `<call>/<element>` whose `<call>` is no call activity of the process.
    #[error(
        "{answers}: answer `{key}`: `{call}` is not a call activity of process `{process}` \
         (`<call activity>/<element>` answers an element of the process it calls)"
    )]
    NotACall {
        answers: String,
        key: String,
        call: String,
        process: String,
    },
    /// The app's `llm:` settings (or the environment's) cannot make a model client.
    #[error("the model cannot be set up: {0}")]
    Model(#[source] crate::reason::llm::reasoner::LlmSetupError),
}

impl super::Help for ChainError {
    fn help(&self) -> Option<String> {
        let help: Option<&str> = match self {
            ChainError::Model(_) => Some(
                "fix the `llm:` settings (see docs/config.md), or run without a model: --no-model",
            ),
            _ => None,
        };
        help.map(str::to_string)
    }
}

/// Answers given in advance to a child run: control-point id → answer, what gave them
/// (`scenario `approve``, `answers file a.yaml`) and the file they were written in.
#[derive(Debug, Clone)]
pub struct Given {
    pub answers: serde_json::Map<String, serde_json::Value>,
    pub source: String,
    pub path: PathBuf,
}

impl Given {
    /// The answers of `answers` addressed to the elements `call` calls
    /// (`<call>/<element>`), under their own ids (`None`: none).
    pub fn for_call(&self, call: &str) -> Option<Given> {
        let prefix = format!("{call}/");
        let answers: serde_json::Map<_, _> = (self.answers.iter())
            .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?.to_string(), v.clone())))
            .collect();
        (!answers.is_empty()).then(|| Given {
            answers,
            source: self.source.clone(),
            path: self.path.clone(),
        })
    }
}

/// An answers file (`--answers FILE`), read and parsed once: each reasoner chain built
/// from it gets its own [`ScriptedReasoner::unvisited`] copy.
#[derive(Debug)]
pub struct AnswersFile {
    pub path: PathBuf,
    answers: ScriptedReasoner,
}

impl AnswersFile {
    pub fn read(path: &Path) -> Result<AnswersFile, ChainError> {
        let answers = ScriptedReasoner::from_file(path).map_err(ChainError::Answers)?;
        Ok(AnswersFile {
            path: path.to_path_buf(),
            answers,
        })
    }

    /// `--answers`, if given.
    pub fn of(path: Option<&Path>) -> Result<Option<AnswersFile>, ChainError> {
        path.map(AnswersFile::read).transpose()
    }

    /// A reasoner answering from the file, its visits counted apart.
    pub fn reasoner(&self) -> ScriptedReasoner {
        self.answers.unvisited()
    }
}

/// What a run's scenario and answers file address to the elements of the processes its
/// call activities call (`<call activity>/<element>`), for its child runs.
pub fn given_to_calls(
    scenario: Option<&Scenario>,
    answers: Option<&AnswersFile>,
) -> Result<Vec<Given>, ChainError> {
    let mut out = Vec::new();
    if let Some(s) = scenario {
        out.push(Given {
            answers: s.answers.clone(),
            source: format!("scenario `{}`", s.name),
            path: s.path.clone(),
        });
    }
    if let Some(file) = answers {
        out.push(Given {
            answers: file.answers.called().clone(),
            source: format!("answers file {}", file.path.display()),
            path: file.path.clone(),
        });
    }
    out.retain(|g| g.answers.keys().any(|k| k.contains('/')));
    Ok(out)
}

/// The reasoner a run asks, and the recorder inside it when answers are recorded.
pub type Judgement = (Arc<dyn Reasoner>, Option<Arc<Recorder>>);

/// Where the answers of a chain come from, after the policy rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// A scenario's `answers:` (first).
    pub scenario: Option<&'a Scenario>,
    /// An answers file (`--answers FILE`).
    pub answers: Option<&'a AnswersFile>,
    /// Answers given in advance by the caller's scenario or answers file (a child run of
    /// a call activity: those the caller addressed to the called elements), after the two
    /// above.
    pub given: &'a [Given],
    /// Never call a model, even when the app configures one.
    pub no_model: bool,
    /// A person at the terminal may answer (when stdin is one): `start`, not `serve`.
    pub person: bool,
    /// Who the person at the terminal is (`start --by`; default `$USER`).
    pub by: Option<&'a str>,
    /// Record what the chain inside the rules answers.
    pub record: bool,
    /// A question no one can answer now parks (the run waits) instead of failing.
    pub park: bool,
    /// Never ask the person at the terminal (`start --no-prompt`): questions park.
    pub detach: bool,
    /// Answers recorded with `runs answer` (a resumed run), asked first.
    pub answered: Option<&'a Answers>,
    /// What a resumed run's model calls spent already (counted against the run's budget).
    pub spent: Option<ModelUsage>,
    /// The process the answers are for: each answer given in advance is checked against
    /// its control points before the run starts (`None`: a server answering many flows).
    pub process: Option<&'a crate::bpmn::Process>,
    /// The process whose guardrail gateways a parked question is an approval of, when
    /// `process` is not given (a server: its answers file is not checked against it).
    pub approvals_in: Option<&'a crate::bpmn::Process>,
    /// The clients of the app's remote agents that the run's harness uses too (so that a
    /// consultation's remote task is journalled and followed up on resume); `None`: the
    /// consultations get their own.
    pub remotes: Option<&'a Arc<crate::reason::remote::Remotes>>,
}

impl Sources<'_> {
    /// A plain `cuga-flo start <app>` (no scenario, answers file or flag): what `describe`
    /// shows the chain of.
    pub fn plain_start() -> Self {
        Sources {
            person: true,
            park: true,
            ..Sources::default()
        }
    }
}

/// One link of the judgement chain: who may answer a question. [`Link::ORDER`] is the
/// order [`judgement`] asks them in (policy rules decide before all of them);
/// [`links`] which of them a chain has. `describe` shows the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Answers recorded with `runs answer` (a resumed run).
    Answered,
    /// A scenario's `answers:`.
    Scenario,
    /// An answers file (`--answers FILE`).
    AnswersFile,
    /// Answers a caller's scenario or answers file addressed to a child run's elements.
    Given,
    /// The app's model.
    Model,
    /// The remote people a gateway or hook consults (`human_consultation`).
    Remote,
    /// A person at the terminal.
    Person,
    /// Nobody answers now: the run parks.
    Park,
    /// Nobody answers: the question fails (`--no-park`).
    NoOne,
}

impl Link {
    pub const ORDER: [Link; 9] = [
        Link::Answered,
        Link::Scenario,
        Link::AnswersFile,
        Link::Given,
        Link::Model,
        Link::Remote,
        Link::Person,
        Link::Park,
        Link::NoOne,
    ];
}

/// What a chain may have beyond its sources: found by [`judgement`] as it builds the
/// chain, looked up without building it by `describe`.
#[derive(Debug, Clone, Copy)]
pub struct Available {
    /// The app sets up a model (its `llm:`, or the `CUGA_FLO_LLM_*` environment).
    pub model: bool,
    /// A gateway or hook consults a remote agent the app can reach.
    pub remote: bool,
    /// A person can be asked at the terminal (stdin is one).
    pub terminal: bool,
}

/// The links of the chain [`judgement`] builds for `config` from `sources`, in the
/// order they are asked.
pub fn links(config: &FlowConfig, sources: &Sources<'_>, available: Available) -> Vec<Link> {
    let has = |link: Link| match link {
        Link::Answered => sources.answered.is_some_and(|a| !a.is_empty()),
        Link::Scenario => sources.scenario.is_some(),
        Link::AnswersFile => sources.answers.is_some(),
        Link::Given => !sources.given.is_empty(),
        Link::Model => !sources.no_model && available.model,
        Link::Remote => available.remote,
        Link::Person => {
            sources.person
                && !sources.detach
                && !(sources.park && config.park_questions)
                && available.terminal
        }
        Link::Park => sources.park,
        Link::NoOne => !sources.park,
    };
    Link::ORDER.into_iter().filter(|l| has(*l)).collect()
}

/// Where judgement comes from: scenario or answers file first, then the app's model (its
/// `llm:` settings, or the `CUGA_FLO_LLM_*` environment), then a person at the terminal
/// (when `sources.person`), else an explanation of how to provide it; policy rules before
/// all of them ([`links`]). With `sources.record`, what the chain inside the rules
/// answers is recorded.
pub fn judgement(config: &FlowConfig, sources: &Sources<'_>) -> Result<Judgement, ChainError> {
    // Answers given in advance: read (and checked) first, so that a mistake in them is
    // reported before the model is set up.
    let mut scenario = None;
    if let Some(s) = sources.scenario {
        // Answers addressed to a called process's elements (`<call activity>/<element>`)
        // are its child runs' (run::children): the scripted reasoner keeps them aside.
        scenario = Some(scenario_answers(s, config, sources.process)?);
    }
    let mut answers_file = None;
    if let Some(file) = sources.answers {
        let scripted = file.reasoner();
        checked(&scripted, config, sources.process)?;
        answers_file = Some(scripted);
    }
    let mut given = Vec::new();
    for g in sources.given {
        let source = format!("answers from {} ({})", g.source, g.path.display());
        let scripted = ScriptedReasoner::from_answers(g.answers.clone(), source)
            .map_err(ChainError::Answers)?
            .located_in(&g.path);
        checked(&scripted, config, sources.process)?;
        given.push(scripted);
    }
    // One reader of the terminal, shared by the person answering and the model's
    // `consult_user` tool.
    let terminal = std::io::stdin().is_terminal() && HumanReasoner::terminal_available();
    let asks_person = |terminal| {
        links(
            config,
            sources,
            Available {
                model: false,
                remote: false,
                terminal,
            },
        )
        .contains(&Link::Person)
    };
    let human = asks_person(terminal)
        .then(|| Arc::new(HumanReasoner::terminal().as_person(sources.by.map(str::to_owned))));
    // The clients of the app's remote agents, shared by the model's consult_user and the
    // remote people who decide when no model does.
    let remotes = match sources.remotes {
        Some(r) => r.clone(),
        None => Arc::new(crate::reason::remote::Remotes::of(config)),
    };
    let mut model = None;
    if !sources.no_model {
        let env = |name: &str| std::env::var(name).ok();
        let configured = LlmReasoner::from_config(config, &env).map_err(ChainError::Model)?;
        if let Some(mut m) = configured {
            if let Some(u) = sources.spent {
                m = m.with_spent(
                    u.calls,
                    u.prompt_tokens + u.completion_tokens,
                    std::time::Duration::from_millis(u.latency_ms),
                );
            }
            // `consult_user` reaches the remote agent of a gateway's or hook's
            // `human_consultation`, and the person at the terminal elsewhere.
            let person = human.clone().map(|h| h as Arc<dyn crate::reason::Consult>);
            match crate::reason::remote::RemoteConsultant::of(
                config,
                remotes.clone(),
                person.clone(),
            ) {
                Some(remote) => m = m.with_consultant(Arc::new(remote)),
                None => {
                    if let Some(h) = person {
                        m = m.with_consultant(h);
                    }
                }
            }
            model = Some(m);
        }
    }
    let mut chooser = crate::reason::remote::RemoteChooser::of(config, remotes);
    let available = Available {
        model: model.is_some(),
        remote: chooser.is_some(),
        terminal,
    };
    let mut chain: Vec<Arc<dyn Reasoner>> = Vec::new();
    for link in links(config, sources, available) {
        match link {
            Link::Answered => {
                if let Some(answered) = sources.answered {
                    chain.push(Arc::new(answered.clone()));
                }
            }
            Link::Scenario => chain.extend(scenario.take().map(|s| Arc::new(s) as _)),
            Link::AnswersFile => chain.extend(answers_file.take().map(|s| Arc::new(s) as _)),
            Link::Given => chain.extend(given.drain(..).map(|s| Arc::new(s) as _)),
            Link::Model => chain.extend(model.take().map(|m| Arc::new(m) as _)),
            Link::Remote => chain.extend(chooser.take().map(|c| Arc::new(c) as _)),
            Link::Person => chain.extend(human.clone().map(|h| h as _)),
            Link::Park => {
                let mut deadlines = deadlines(config);
                let mut approvals = std::collections::HashMap::new();
                // A guardrail's question waits until its timeout, then DENIED decides.
                if let Some(process) = sources.process.or(sources.approvals_in) {
                    for (id, g) in crate::app::guardrail::all(Some(config), process) {
                        let Ok(g) = g else { continue };
                        let deny = serde_json::json!({"flow": g.deny_flow});
                        deadlines.insert(id.clone(), (g.timeout, deny));
                        approvals.insert(id, g.ask());
                    }
                }
                chain.push(Arc::new(Park {
                    deadlines,
                    approvals,
                }));
            }
            Link::NoOne => chain.push(Arc::new(NoModel)),
        }
    }
    let inner: Arc<dyn Reasoner> = if chain.len() == 1 {
        chain.remove(0)
    } else {
        Arc::new(Chain::new(chain))
    };
    let recorder = sources
        .record
        .then(|| Arc::new(Recorder::new(inner.clone())));
    let inner: Arc<dyn Reasoner> = match &recorder {
        Some(r) => r.clone(),
        None => inner,
    };
    // Policy rules decide first; the chain is asked only when no rule decides.
    Ok((Arc::new(Rules::new(inner)), recorder))
}

/// A scenario's answers, read and checked against the app's control points.
pub fn scenario_answers(
    s: &crate::app::scenario::Scenario,
    config: &FlowConfig,
    process: Option<&crate::bpmn::Process>,
) -> Result<ScriptedReasoner, ChainError> {
    let doc = serde_json::json!({ "answers": s.answers });
    let source = format!("answers from scenario `{}` ({})", s.name, s.path.display());
    let scripted = ScriptedReasoner::from_value(doc, source)
        .map_err(ChainError::Answers)?
        .located_in(&s.path);
    checked(&scripted, config, process)?;
    Ok(scripted)
}

/// An answers file, read and checked against the app's control points.
pub fn answers_file(
    path: &std::path::Path,
    config: &FlowConfig,
    process: Option<&crate::bpmn::Process>,
) -> Result<ScriptedReasoner, ChainError> {
    let scripted = ScriptedReasoner::from_file(path).map_err(ChainError::Answers)?;
    checked(&scripted, config, process)?;
    Ok(scripted)
}

/// Answers given in advance, checked against the app's control points.
fn checked(
    scripted: &ScriptedReasoner,
    config: &FlowConfig,
    process: Option<&crate::bpmn::Process>,
) -> Result<(), ChainError> {
    let Some(process) = process else {
        return Ok(());
    };
    // An answer for a called element names a call activity of this process.
    for key in scripted.called().keys() {
        let call = key.split('/').next().unwrap_or_default();
        let is_call = process
            .node(call)
            .is_some_and(|n| matches!(n.kind, crate::bpmn::NodeKind::CallActivity { .. }));
        if !is_call {
            return Err(ChainError::NotACall {
                answers: scripted.source().to_string(),
                key: key.clone(),
                call: call.to_string(),
                process: process.id.clone(),
            });
        }
    }
    scripted
        .check(&expected(config, process))
        .map_err(ChainError::Answers)
}

/// What the app's control points accept (see [`crate::reason::scripted::Expected`]).
pub fn expected(
    config: &FlowConfig,
    process: &crate::bpmn::Process,
) -> crate::reason::scripted::Expected {
    use crate::app::TaskMode;
    let mut out = crate::reason::scripted::Expected::default();
    for task in &config.tasks {
        if task.mode != TaskMode::TaskAgent {
            continue;
        }
        let outputs = task
            .output_mapping
            .iter()
            .map(|(key, var)| (key.value.clone(), config.declared_kind(&var.value)))
            .collect();
        out.tasks.insert(task.id.value.clone(), outputs);
    }
    for hook in &config.hooks {
        out.hooks.push(hook.id.value.clone());
        if let Some(flow) = &hook.location {
            out.hooks.push(flow.value.clone());
        }
        for t in &hook.insertable_tasks {
            out.tasks.entry(t.id.value.clone()).or_default();
        }
        // A static add_node's task is asked as an inserted one is.
        if let Some(crate::app::config::ActionSpec::AddNode(t)) =
            hook.action.as_ref().map(|a| &a.value)
        {
            out.tasks.entry(t.id.value.clone()).or_default();
        }
    }
    for node in process.tasks() {
        if !out.tasks.contains_key(&node.id) {
            out.native_tasks.push(node.id.clone());
        }
    }
    for node in process.gateways() {
        out.gateways.insert(node.id.clone(), Vec::new());
    }
    for flow in &process.flows {
        if let Some(outgoing) = out.gateways.get_mut(&flow.source) {
            outgoing.push(flow.id.clone());
        }
    }
    out
}

/// The config's `deadline:` and `on_timeout:` per control point (those without an
/// `on_timeout` never time out: nothing would answer them).
fn deadlines(
    config: &FlowConfig,
) -> std::collections::HashMap<String, (std::time::Duration, serde_json::Value)> {
    let tasks = config.tasks.iter().map(|t| (&t.id, &t.deadline));
    let gateways = config.gateways.iter().map(|g| (&g.id, &g.deadline));
    let hooks = config.hooks.iter().map(|h| (&h.id, &h.deadline));
    tasks
        .chain(gateways)
        .chain(hooks)
        .filter_map(|(id, d)| {
            let d = d.as_ref()?;
            let on_timeout = d.on_timeout.as_ref()?;
            Some((id.value.clone(), (d.after.value, on_timeout.value.clone())))
        })
        .collect()
}

/// An app loaded and checked: its errors, one line each, when it does not validate.
pub fn load_checked(app: &crate::app::registry::AppRef) -> Result<LoadedApp, Vec<String>> {
    let loaded = load_app(app);
    let errors: Vec<String> = check_app(&loaded)
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.one_line())
        .collect();
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(errors)
    }
}

/// Fills the app name, the source of judgement and the app's digest into `RunStarted`.
pub struct Labelled {
    pub inner: Arc<Journal>,
    pub app: String,
    pub judgement: String,
    pub app_digest: Option<String>,
    /// How the run was started (`start`), for a later resume.
    pub launch: Option<Launch>,
    /// Set when the run is stopped from outside (Ctrl-C): nothing more is written.
    pub sealed: std::sync::atomic::AtomicBool,
    /// Graph mode: the run's store, written by the journal's observer. Once it fails,
    /// nothing more is written and the run stops (`start` closes the journal, failed).
    pub graph: Option<Arc<crate::graph::abox::GraphRun>>,
}

impl Labelled {
    /// Refuse every later record: the engine, still winding down, must not journal the
    /// consequences of being stopped (its calls failing as the bridge closes).
    pub fn seal(&self) {
        self.sealed.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Labelled {
    /// The graph store's failure, as the journal error that stops the engine.
    fn graph_failed(&self) -> Result<(), JournalError> {
        match self.graph.as_ref().and_then(|g| g.failed()) {
            Some(e) => Err(JournalError::Io {
                path: self.inner.path().to_path_buf(),
                message: format!("graph mode: {e}"),
            }),
            None => Ok(()),
        }
    }
}

impl EventSink for Labelled {
    fn emit(&self, mut event: Event) -> Result<Record, JournalError> {
        if self.sealed.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(JournalError::Io {
                path: self.inner.path().to_path_buf(),
                message: "the run was stopped".to_string(),
            });
        }
        self.graph_failed()?;
        if let Event::RunStarted {
            app,
            reasoner,
            launch,
            app_digest,
            ..
        } = &mut event
        {
            app.clone_from(&self.app);
            if app_digest.is_none() {
                app_digest.clone_from(&self.app_digest);
            }
            if reasoner.is_empty() {
                reasoner.clone_from(&self.judgement);
            }
            if launch.is_none() {
                launch.clone_from(&self.launch);
            }
        }
        let record = self.inner.emit(event)?;
        self.graph_failed()?;
        Ok(record)
    }

    fn commit(&self) -> Result<(), JournalError> {
        self.inner.commit()?;
        self.graph_failed()
    }
}

/// The answers journalled by `runs answer` that no resumed run has applied yet.
pub fn answers_of(records: &[Record], state: &crate::journal::FlowState) -> Answers {
    let mut by_key = std::collections::HashMap::new();
    for r in records {
        if let Event::QuestionAnswered {
            key,
            answer,
            decided_by,
            reason,
            by,
        } = &r.event
            && state.unapplied_answers.contains_key(key)
        {
            by_key.insert(
                key.clone(),
                crate::reason::park::Recorded {
                    answer: answer.clone(),
                    decided_by: *decided_by,
                    reason: reason.clone(),
                    by: by.clone(),
                },
            );
        }
    }
    Answers::new(by_key)
}
