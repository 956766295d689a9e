//! The run host of a server (`serve` over MCP, `serve --a2a`, a scenario's sibling agents):
//! the journals of the runs its clients start ([`Journals`]), labelled with their app,
//! judgement and launch ([`Labels`]); a run that parks held until it can go on (its timer
//! due, a delivery, its child ended) and resumed in-process; runs a server now gone left
//! parked taken over under their journal's lock; deliveries to a held run; cancelling and
//! interrupting at shutdown. Also each served app's harness chain ([`judge`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::app::registry::AppRef;
use crate::app::{FlowConfig, LoadedApp};
use crate::harness::FlowAgent;
use crate::journal::mailbox::{Delivery, DeliveryError};
use crate::journal::store::{self, Journal};
use crate::journal::{
    Anchor, Durability, Event, EventSink, FlowState, JournalError, JournalOptions, Record,
};
use crate::mcp::{FlowLoader, JournalFactory, RegisteredFlow, RunProcessArgs};
use crate::reason::Reasoner;
use crate::vocab::RunStatus;

use super::Help;
use super::chain::{self, ChainError, Labelled, Sources};

/// How long requests in flight may take to finish after a shutdown signal.
pub const GRACE: Duration = Duration::from_secs(5);

/// Why an app is not served.
#[derive(Debug, thiserror::Error)]
pub enum NotServed {
    /// It does not validate: its problems, one line each.
    #[error("{}", .0.join("\n"))]
    Invalid(Vec<String>),
    #[error("the app has no flow config")]
    NoConfig,
    #[error("the model has no process")]
    NoProcess,
    /// Its reasoner chain cannot be built.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// Its harness cannot be built.
    #[error(transparent)]
    Harness(#[from] crate::harness::HarnessError),
    /// A client asked for an app outside the folders the server serves from (it is not
    /// read).
    #[error("`{path}` is not an app folder or flow config under {roots}")]
    Outside { path: String, roots: String },
    /// A client asked for an app whose process key is served already.
    #[error(
        "process key `{0}` is registered already (runs may be using it); restart the server \
         to load a changed app"
    )]
    Registered(String),
}

impl Help for NotServed {
    fn help(&self) -> Option<String> {
        match self {
            NotServed::Chain(e) => e.help(),
            _ => None,
        }
    }
}

/// Why a served run's journal cannot be opened (the run does not start).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    RunId(#[from] crate::journal::store::BadRunId),
    #[error("run `{run}` already has a journal under {}: a run id names one run", .base.display())]
    Taken { run: String, base: PathBuf },
    #[error("cannot create the journal of run `{run}`")]
    Create {
        run: String,
        #[source]
        source: JournalError,
    },
    #[error("run `{run}`: graph mode")]
    Graph {
        run: String,
        #[source]
        source: crate::graph::store::StoreError,
    },
}

/// A validated app as the bridge registers it: its harness asks `reasoner`, and journals
/// each run's remote tasks into the journal `journals` finds for the run (a server's).
pub fn registered_flow(
    loaded: &LoadedApp,
    reasoner: Arc<dyn Reasoner>,
    journals: Option<crate::reason::remote::RunJournals>,
) -> Result<RegisteredFlow, NotServed> {
    let harness = FlowAgent::new(loaded, reasoner)?;
    if let Some(find) = journals {
        harness.journal_remote_tasks_by_run(find);
    }
    let process = loaded.shared_process().ok_or(NotServed::NoProcess)?;
    Ok(RegisteredFlow {
        process_key: harness.config().process_key().to_string(),
        process,
        annotations: harness.annotations(),
        harness: Arc::new(harness),
    })
}

/// `register_flow`: load an app from a path (an app folder or a flow config) inside one
/// of `roots`; its control points ask what `reasoner` gives for the loaded app. A path
/// elsewhere is refused without being read: clients must not make the server read (and
/// quote in its diagnostics) arbitrary files.
pub fn flow_loader<F>(
    roots: &[PathBuf],
    journals: Option<crate::reason::remote::RunJournals>,
    reasoner: F,
) -> FlowLoader
where
    F: Fn(&LoadedApp) -> Result<Arc<dyn Reasoner>, NotServed> + Send + Sync + 'static,
{
    let roots: Vec<PathBuf> = roots.iter().filter_map(|r| r.canonicalize().ok()).collect();
    Arc::new(move |path: &str| {
        let p = Path::new(path);
        let inside = p
            .canonicalize()
            .is_ok_and(|p| roots.iter().any(|root| p.starts_with(root)));
        if !inside {
            return Err(NotServed::Outside {
                path: path.to_string(),
                roots: roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            }
            .into());
        }
        let app = if p.is_dir() {
            crate::app::registry::app_at(p)
        } else {
            crate::app::registry::app_from_config(p)
        };
        let loaded = chain::load_checked(&app).map_err(NotServed::Invalid)?;
        Ok(registered_flow(
            &loaded,
            reasoner(&loaded)?,
            journals.clone(),
        )?)
    })
}

/// Load, check and wire one app: its registered flow (its harness asks the chain of
/// [`judge`]), a description of that chain, and the app.
///
/// `parking`: a question nobody answers parks the run for a person ([`judge_parking`]:
/// the web console serves beside), rather than failing it.
pub fn load(
    app: &AppRef,
    answers: Option<&chain::AnswersFile>,
    no_model: bool,
    journals: &Journals,
    parking: bool,
) -> Result<(RegisteredFlow, String, LoadedApp), NotServed> {
    let loaded = chain::load_checked(app).map_err(NotServed::Invalid)?;
    let reasoner = judged(&loaded, answers, no_model, Some(journals), parking)?;
    let judgement = reasoner.describe();
    let flow = registered_flow(&loaded, reasoner, Some(journals.lookup()))?;
    Ok((flow, judgement, loaded))
}

/// An app's reasoner: policy rules, then the answers file, then the app's model (unless
/// `no_model`), then nothing. Its consultations (`human_consultation`) journal their
/// remote tasks into the journal `journals` finds for each run (the server's), so that
/// one still going past its agent's `wait` parks the run, which the server holds and
/// resumes in-process.
pub fn judge(
    loaded: &LoadedApp,
    answers: Option<&chain::AnswersFile>,
    no_model: bool,
    journals: Option<&Journals>,
) -> Result<Arc<dyn Reasoner>, NotServed> {
    judged(loaded, answers, no_model, journals, false)
}

/// [`judge`], or with `park` [`judge_parking`].
fn judged(
    loaded: &LoadedApp,
    answers: Option<&chain::AnswersFile>,
    no_model: bool,
    journals: Option<&Journals>,
    park: bool,
) -> Result<Arc<dyn Reasoner>, NotServed> {
    let config: &FlowConfig = loaded.config.as_ref().ok_or(NotServed::NoConfig)?;
    let remotes = Arc::new(crate::reason::remote::Remotes::of(config));
    if let Some(j) = journals {
        remotes.journal_by_run(j.lookup());
    }
    let sources = Sources {
        answers,
        no_model,
        remotes: Some(&remotes),
        park,
        // A guardrail's parked question is its approval.
        approvals_in: park.then(|| loaded.process()).flatten(),
        // One answers file serves every flow the server runs (apps registered later
        // included): it is not checked against this app's control points.
        ..Sources::default()
    };
    let (reasoner, _) = chain::judgement(config, &sources)?;
    Ok(given_first(journals, reasoner))
}

/// `reasoner`, after the answers people gave to the runs `journals` holds (asked first: a
/// resumed run applies a person's answer before anyone else is asked).
fn given_first(journals: Option<&Journals>, reasoner: Arc<dyn Reasoner>) -> Arc<dyn Reasoner> {
    match journals {
        Some(j) => Arc::new(crate::reason::Chain::new(vec![
            Arc::new(j.answers.clone()),
            reasoner,
        ])),
        None => reasoner,
    }
}

/// As [`judge`], then a person later: a question nobody before answers parks the run
/// (a guardrail's as its approval, DENIED at its timeout), for a person to answer from
/// the web console or with `runs answer`. What a server's runs with no caller to ask
/// are judged by (started from the web console, or taken over).
pub fn judge_parking(
    loaded: &LoadedApp,
    answers: Option<&chain::AnswersFile>,
    no_model: bool,
    journals: Option<&Journals>,
) -> Result<Arc<dyn Reasoner>, NotServed> {
    judged(loaded, answers, no_model, journals, true)
}

/// The app name, the source of judgement and the app's digest of each process key, for
/// `RunStarted` (and the journal's anchor).
/// Also the served apps in graph mode, whose runs are written into their stores.
#[derive(Clone, Default)]
pub struct Labels(
    Arc<Mutex<HashMap<String, Label>>>,
    Arc<Mutex<HashMap<String, crate::app::LoadedApp>>>,
    Arc<crate::graph::abox::Stores>,
    /// How each app is served, in its runs' `run_started.launch`: a run the server leaves
    /// parked is resumed by `worker` or `runs resume` with the same app and answers.
    Arc<Mutex<HashMap<String, crate::journal::Launch>>>,
);

type Label = (String, String, Option<String>);

impl Labels {
    pub fn set(&self, process_key: &str, app: &str, judgement: &str, digest: &str) {
        lock(&self.0).insert(
            process_key.to_string(),
            (
                app.to_string(),
                judgement.to_string(),
                Some(digest.to_string()),
            ),
        );
    }

    /// The app of `process_key`, when it runs in graph mode (a `graph:` block): its runs
    /// are written into its store as `start` writes them.
    pub fn set_app(&self, process_key: &str, loaded: &crate::app::LoadedApp) {
        if loaded.config.as_ref().is_some_and(|c| c.graph.is_some()) {
            lock(&self.1).insert(process_key.to_string(), loaded.clone());
        }
    }

    /// The app folder, answers file and `--no-model` the runs of `process_key` are served
    /// with (their `run_started.launch`): a run the server leaves parked is resumed by
    /// `worker` or `runs resume` with the same app and answers.
    pub fn set_launch(
        &self,
        process_key: &str,
        loaded: &LoadedApp,
        answers: Option<&Path>,
        no_model: bool,
    ) {
        let absolute = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let launch = crate::journal::Launch {
            app_dir: Some(absolute(&loaded.dir).display().to_string()),
            answers: answers.map(|a| absolute(a).display().to_string()),
            no_model,
            served: true,
            ..Default::default()
        };
        lock(&self.3).insert(process_key.to_string(), launch);
    }

    fn launch(&self, process_key: &str) -> Option<crate::journal::Launch> {
        lock(&self.3).get(process_key).cloned()
    }

    /// Graph mode's writer of run `run_id` of `process_key` (none without a `graph:`).
    fn graph(
        &self,
        process_key: &str,
        run_id: &str,
    ) -> Result<Option<Arc<crate::graph::abox::GraphRun>>, OpenError> {
        let Some(loaded) = lock(&self.1).get(process_key).cloned() else {
            return Ok(None);
        };
        crate::graph::abox::served_graph_run(&self.2, &loaded, run_id)
            .map(|g| g.map(Arc::new))
            .map_err(|source| OpenError::Graph {
                run: run_id.to_string(),
                source,
            })
    }

    fn get(&self, process_key: &str) -> Label {
        lock(&self.0)
            .get(process_key)
            .cloned()
            .unwrap_or_else(|| (process_key.to_string(), String::new(), None))
    }
}

// ---- Journals of the runs clients start ----

/// A run's graph-mode writer.
type RunGraph = Arc<crate::graph::abox::GraphRun>;

type OpenRuns = Arc<Mutex<BTreeMap<String, Arc<RunJournal>>>>;

/// How a server takes over a run left parked (run id, process key, its journal opened
/// here): holds it and resumes it when it can go on.
pub type Adopt = Arc<TakeOver>;

pub type TakeOver =
    dyn Fn(&str, &str, Arc<dyn EventSink>) -> Result<(), crate::mcp::HostError> + Send + Sync;

/// How often a server looks for runs left parked by a server that is gone.
const ADOPT_EVERY: Duration = Duration::from_secs(1);

/// Opens a journal for each run a client starts, and closes those still open at shutdown.
#[derive(Clone)]
pub struct Journals {
    base: PathBuf,
    labels: Labels,
    durability: Durability,
    open: OpenRuns,
    /// Cancelled when the server stops: the runs it holds parked stay parked.
    stop: tokio_util::sync::CancellationToken,
    /// The answers people gave to the runs held here that the runs have not applied yet.
    answers: crate::reason::park::SharedAnswers,
}

impl Journals {
    pub fn new(base: PathBuf, labels: Labels, durability: Durability) -> Journals {
        Journals {
            base,
            labels,
            durability,
            open: OpenRuns::default(),
            stop: tokio_util::sync::CancellationToken::new(),
            answers: Default::default(),
        }
    }

    pub fn factory(&self) -> JournalFactory {
        let journals = self.clone();
        Arc::new(move |args: &RunProcessArgs| Ok(journals.open(args)?))
    }

    pub fn open(&self, args: &RunProcessArgs) -> Result<Arc<dyn EventSink>, OpenError> {
        self.open_run(args).map(|(sink, _)| sink)
    }

    /// As [`Journals::open`], with the run's graph-mode writer (its child runs write into
    /// its store and link to it).
    pub fn open_run(
        &self,
        args: &RunProcessArgs,
    ) -> Result<(Arc<dyn EventSink>, Option<RunGraph>), OpenError> {
        crate::journal::store::check_run_id(&args.run_id)?;
        let dir = store::run_dir(&self.base, &args.run_id);
        let (app, judgement, app_digest) = self.labels.get(&args.process_key);
        let graph = self.labels.graph(&args.process_key, &args.run_id)?;
        let options = JournalOptions {
            durability: self.durability,
            anchor: Anchor::new(&args.run_id, app_digest.clone()),
        };
        let journal = Journal::create(&dir, options).map_err(|e| match e {
            // A journal there, or one still open (its run has finished but its sink lives).
            JournalError::Exists(_) | JournalError::Locked { .. } => OpenError::Taken {
                run: args.run_id.clone(),
                base: self.base.clone(),
            },
            source => OpenError::Create {
                run: args.run_id.clone(),
                source,
            },
        })?;
        tracing::info!(
            "run {} of `{}`: journal {}",
            args.run_id,
            args.process_key,
            journal.path().display()
        );
        // Graph mode: the store is an observer of the journal, as for `start`.
        let journal = match &graph {
            Some(g) => {
                let g = g.clone();
                journal.with_observer(move |record: &crate::journal::Record| g.apply(record))
            }
            None => journal,
        };
        let run = Arc::new(RunJournal {
            run_id: args.run_id.clone(),
            sink: Labelled {
                inner: Arc::new(journal),
                app,
                judgement,
                launch: self.labels.launch(&args.process_key),
                sealed: Default::default(),
                app_digest,
                graph,
            },
            closed: Mutex::new(false),
            open: Arc::downgrade(&self.open),
            parked: Default::default(),
            wake: tokio::sync::Notify::new(),
            answers: self.answers.clone(),
        });
        lock(&self.open).insert(args.run_id.clone(), run.clone());
        let graph = run.sink.graph.clone();
        Ok((run, graph))
    }

    /// Take over the runs a server left parked that no process holds any more (the
    /// server crashed or stopped): the runs `serve` started (`run_started.launch.served`)
    /// of the apps served here, from the same app folder, that are parked. Each is taken
    /// under its journal's lock — exactly one process takes a run, however many servers
    /// and workers look at once — checked again once locked (it may have gone on
    /// meanwhile), held here as a run started here, and handed to `take`, which holds it
    /// until it can go on and resumes it. `ignored` keeps the runs that never will be
    /// taken (finished, or not started by a server), so that a look reads each once.
    pub fn adopt_left_parked(
        &self,
        ignored: &mut std::collections::HashSet<String>,
        take: &TakeOver,
    ) -> usize {
        let mut taken = 0;
        for run_id in store::run_ids(&self.base) {
            if ignored.contains(&run_id) || lock(&self.open).contains_key(&run_id) {
                continue;
            }
            let dir = store::run_dir(&self.base, &run_id);
            let path = dir.join(store::JOURNAL_FILE);
            if let Some(Event::RunFinished { .. }) = store::last_record(&path).map(|r| r.event) {
                ignored.insert(run_id);
                continue;
            }
            let Some(Event::RunStarted {
                process_key,
                launch,
                parent,
                ..
            }) = store::first_record(&path).map(|r| r.event)
            else {
                continue; // being created, or not a run's journal
            };
            // A child run goes on with its parent, never on its own.
            let Some(launch) = launch.filter(|l| l.served && parent.is_none()) else {
                ignored.insert(run_id);
                continue;
            };
            // Only the runs of an app served here, from the same folder.
            let ours = self.labels.launch(&process_key);
            if ours.is_none_or(|ours| ours.app_dir != launch.app_dir) {
                continue;
            }
            if lock(&self.labels.1).contains_key(&process_key) {
                // Graph mode: its store's writer follows the run from its start.
                if ignored.insert(run_id.clone()) {
                    tracing::info!("run {run_id}: left parked in graph mode; `worker` resumes it");
                }
                continue;
            }
            if self.stop.is_cancelled() {
                break;
            }
            let Ok((journal, reopened)) = Journal::open(&dir, self.durability) else {
                continue; // held by a server, a worker or `runs resume`: theirs
            };
            let state = FlowState::fold(reopened.records.iter());
            if state.status.is_some() {
                ignored.insert(run_id);
                continue;
            }
            if state.waiting.is_none() {
                // Stopped while going (a crash mid-step): `runs resume` recovers it.
                continue;
            }
            self.remember(&reopened.records);
            let run = self.hold(&run_id, &process_key, journal);
            // Say at once who holds it: a delivery from now on is posted here.
            if let Err(e) = crate::journal::mailbox::hold_parked(&dir) {
                tracing::warn!("run {run_id}: cannot open its inbox: {e}");
            }
            match take(&run_id, &process_key, run) {
                Ok(()) => {
                    tracing::info!(
                        "run {run_id}: left parked by a server that is gone; taken over"
                    );
                    taken += 1;
                }
                Err(e) => {
                    let e = crate::diag::chain(&*e);
                    tracing::warn!("run {run_id}: cannot take it over: {e}");
                    crate::journal::mailbox::release_parked(&dir);
                    lock(&self.open).remove(&run_id);
                }
            }
        }
        taken
    }

    /// Hold run `run_id` of `process_key`, whose journal was reopened here, as a run
    /// started here.
    fn hold(&self, run_id: &str, process_key: &str, journal: Journal) -> Arc<dyn EventSink> {
        let (app, judgement, app_digest) = self.labels.get(process_key);
        let run = Arc::new(RunJournal {
            run_id: run_id.to_string(),
            sink: Labelled {
                inner: Arc::new(journal),
                app,
                judgement,
                launch: self.labels.launch(process_key),
                sealed: Default::default(),
                app_digest,
                graph: None,
            },
            closed: Mutex::new(false),
            open: Arc::downgrade(&self.open),
            parked: Default::default(),
            wake: tokio::sync::Notify::new(),
            answers: self.answers.clone(),
        });
        lock(&self.open).insert(run_id.to_string(), run.clone());
        run
    }

    /// At once, then every [`ADOPT_EVERY`] until the server stops:
    /// [`Journals::adopt_left_parked`].
    pub async fn keep_adopting(self, take: Adopt) {
        let ignored = Arc::new(Mutex::new(std::collections::HashSet::new()));
        loop {
            let (journals, take, ignored) = (self.clone(), take.clone(), ignored.clone());
            let look = tokio::task::spawn_blocking(move || {
                journals.adopt_left_parked(&mut lock(&ignored), &*take)
            });
            if let Err(e) = look.await {
                tracing::error!("the look for runs left parked failed: {e}");
            }
            tokio::select! {
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(ADOPT_EVERY) => {}
            }
        }
    }

    /// Finds the journal of a run still going here, by its id (for the harnesses: a
    /// delegation journals its remote task there).
    pub fn lookup(&self) -> crate::reason::remote::RunJournals {
        let open = Arc::downgrade(&self.open);
        Arc::new(move |run_id: &str| {
            let open = open.upgrade()?;
            let run = lock(&open).get(run_id).cloned()?;
            Some(run as Arc<dyn EventSink>)
        })
    }

    /// The runs going here (those parked here are not going).
    pub fn open_count(&self) -> usize {
        lock(&self.open).values().filter(|r| !r.is_parked()).count()
    }

    /// The runs parked here (held by this server until they can go on).
    pub fn parked_count(&self) -> usize {
        lock(&self.open).values().filter(|r| r.is_parked()).count()
    }

    /// Show how many runs this host holds, going and waiting, in the metrics (when they
    /// are kept).
    pub fn measured(&self) {
        let Some(metrics) = crate::telemetry::metrics() else {
            return;
        };
        use crate::telemetry::metrics::RUNS_HELD;
        let going = self.clone();
        metrics.read_gauge(RUNS_HELD, vec![("state", "going".into())], move || {
            going.open_count() as f64
        });
        let waiting = self.clone();
        metrics.read_gauge(RUNS_HELD, vec![("state", "waiting".into())], move || {
            waiting.parked_count() as f64
        });
    }

    /// Whether run `run_id` is parked here (held by this server until it can go on).
    pub fn is_parked(&self, run_id: &str) -> bool {
        lock(&self.open).get(run_id).is_some_and(|r| r.is_parked())
    }

    /// Close the journal of run `run_id`, if still going, with a failed `run_finished`.
    /// The run stays open until its record is written: a shutdown waiting for the open
    /// runs waits for it. A run parked here stays parked (its journal is left as it is).
    pub fn interrupt(&self, run_id: &str, message: &str) {
        let run = lock(&self.open).get(run_id).cloned();
        if let Some(run) = run {
            if !run.is_parked() {
                run.interrupt(message);
            }
            lock(&self.open).remove(run_id);
        }
    }

    /// The records and the state of run `run_id` as its journal has them (committed
    /// first), while the run is held here.
    pub fn records(&self, run_id: &str) -> Option<(Vec<Record>, FlowState)> {
        let run = lock(&self.open).get(run_id).cloned()?;
        self.read(&run)
    }

    /// Take nothing more from run `run_id`'s engine (it is being cancelled while it goes
    /// on its thread): its records from now on are refused.
    pub fn seal(&self, run_id: &str) {
        if let Some(run) = lock(&self.open).get(run_id).cloned() {
            run.sink.seal();
        }
    }

    /// Stop holding parked run `run_id` (it is about to be ended here: cancelled).
    pub fn unpark(&self, run_id: &str) {
        let Some(run) = lock(&self.open).get(run_id).cloned() else {
            return;
        };
        let _closed = lock(&run.closed);
        run.parked.store(false, std::sync::atomic::Ordering::SeqCst);
        crate::journal::mailbox::release_parked(&store::run_dir(&self.base, run_id));
    }

    /// Journal a person's answer to run `run_id`, held parked here, through its journal
    /// (checked as `runs answer` checks it), and wake the run so it goes on here. `None`
    /// when this server does not hold the run parked.
    pub fn answer(
        &self,
        run_id: &str,
        request: crate::run::answer::AnswerRequest,
    ) -> Option<Result<crate::run::answer::Answered, crate::run::answer::AnswerError>> {
        let run = lock(&self.open).get(run_id).cloned()?;
        let closed = lock(&run.closed);
        if *closed || !run.is_parked() {
            return None;
        }
        let (mut records, _) = self.read(&run)?;
        let answered = crate::run::answer::answer(&run.sink.inner, &records, run_id, request);
        drop(closed);
        if let Ok((_, record)) = &answered {
            records.push(record.clone());
            self.remember(&records);
            run.wake.notify_one();
        }
        Some(answered.map(|(answered, _)| answered))
    }

    /// Keep the answers `records` hold that their run has not applied yet, for when it
    /// resumes here.
    pub fn remember(&self, records: &[Record]) {
        let state = FlowState::fold(records.iter());
        if state.unapplied_answers.is_empty() {
            return;
        }
        let given = chain::answers_of(records, &state);
        for key in state.unapplied_answers.keys() {
            if let Some(r) = given.recorded(key) {
                self.answers.insert(key.clone(), r.clone());
            }
        }
    }

    /// Hold waiting run `run_id` of `process_key`, whose journal was reopened here (its
    /// lock taken), as a run started here; its inbox says so at once.
    pub fn take(&self, run_id: &str, process_key: &str, journal: Journal) -> Arc<dyn EventSink> {
        let run = self.hold(run_id, process_key, journal);
        if let Err(e) = crate::journal::mailbox::hold_parked(&store::run_dir(&self.base, run_id)) {
            tracing::warn!("run {run_id}: cannot open its inbox: {e}");
        }
        run
    }

    /// Whether run `run_id` is held here (going or parked).
    pub fn holds(&self, run_id: &str) -> bool {
        lock(&self.open).contains_key(run_id)
    }

    /// Let go of run `run_id` (taken here, it could not be resumed): its inbox and lock
    /// are released.
    pub fn release(&self, run_id: &str) {
        crate::journal::mailbox::release_parked(&store::run_dir(&self.base, run_id));
        lock(&self.open).remove(run_id);
    }

    /// Where the runs are journalled, and how durably.
    pub fn base(&self) -> &Path {
        &self.base
    }

    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Run `run_id`'s journal committed and read, with its state.
    fn read(&self, run: &RunJournal) -> Option<(Vec<Record>, FlowState)> {
        let _ = run.sink.inner.commit();
        let records = store::read_journal(run.sink.inner.path()).ok()?.records;
        let state = FlowState::fold(records.iter());
        Some((records, state))
    }

    /// Hold run `run_id`, which has parked, until it can go on: its timer is due, a
    /// delivery was journalled (through this server, or posted to its inbox by another
    /// process and taken here), or the child run it waits for has ended. The records to
    /// resume it from; `None` once the server stops (the run stays parked, for `worker`
    /// or `runs resume`) or when the run has ended meanwhile (cancelled).
    async fn hold_until_due(self, run_id: String) -> Option<Vec<Record>> {
        let run = lock(&self.open).get(&run_id).cloned()?;
        let dir = store::run_dir(&self.base, &run_id);
        {
            let _closed = lock(&run.closed);
            run.parked.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if let Err(e) = crate::journal::mailbox::hold_parked(&dir) {
            tracing::warn!("run {run_id}: cannot open its inbox: {e}");
        }
        tracing::info!("run {run_id}: parked; held here until it can go on");
        // The journal as last read: read again only when it may have changed (this
        // server journalled a delivery, an answer or a cancellation, and woke the run; or
        // a delivery posted to the inbox was taken), not at every look. Ten thousand runs
        // held here then cost their inboxes' listings, not their journals' parsing.
        let mut kept: Option<(Vec<Record>, FlowState)> = None;
        let ready = loop {
            let read = kept.take().or_else(|| self.read(&run));
            let Some((records, state)) = read else {
                // Left parked (as at shutdown): `runs resume` continues it.
                tracing::error!("run {run_id}: its journal cannot be read; left parked");
                crate::journal::mailbox::release_parked(&dir);
                return None;
            };
            if state.status.is_some() {
                break None;
            }
            let Some(waiting) = state.waiting.clone() else {
                break Some(records);
            };
            let now = crate::clock::now_ms();
            if waiting.due_ms.is_some_and(|due| due <= now)
                || !waiting.delivered.is_empty()
                || answered_since_resumed(&records, &state)
                || crate::run::parked::child_finished(&self.base, &waiting.reason)
            {
                break Some(records);
            }
            let taken = {
                let _closed = lock(&run.closed);
                self.take_posted(&run, &dir)
            };
            if taken > 0 {
                continue;
            }
            let poll = crate::journal::mailbox::INBOX_POLL;
            let sleep = waiting
                .due_ms
                .map_or(poll, |due| Duration::from_millis(due - now).min(poll));
            tokio::select! {
                () = self.stop.cancelled() => {
                    crate::journal::mailbox::release_parked(&dir);
                    return None;
                }
                () = run.wake.notified() => {}
                () = tokio::time::sleep(sleep) => kept = Some((records, state)),
            }
        };
        // Going on: deliveries posted meanwhile are taken first, then no more are.
        crate::journal::mailbox::release_parked(&dir);
        {
            let _closed = lock(&run.closed);
            self.take_posted(&run, &dir);
            run.parked.store(false, std::sync::atomic::Ordering::SeqCst);
        }
        let ready = ready?;
        // What was taken last is part of the records the run resumes from.
        Some(self.read(&run).map_or(ready, |(records, _)| records))
    }

    /// Journal the deliveries posted to parked run `run` by other processes.
    fn take_posted(&self, run: &RunJournal, dir: &Path) -> usize {
        crate::journal::mailbox::take_posted(dir, |delivery| {
            let (records, _) = self.read(run).ok_or_else(|| DeliveryError::Held {
                run: run.run_id.clone(),
                message: format!("cannot read the journal of run `{}`", run.run_id),
            })?;
            crate::journal::mailbox::deliver(&run.sink.inner, &records, &run.run_id, delivery)
        })
    }

    /// The state of run `run_id` as its journal has it (committed first), while the run
    /// is still going here.
    pub fn state(&self, run_id: &str) -> Option<FlowState> {
        let run = lock(&self.open).get(run_id).cloned()?;
        let _ = run.sink.inner.commit();
        store::read_journal(run.sink.inner.path())
            .ok()
            .map(|r| FlowState::fold(r.records.iter()))
    }

    /// End the journal of run `run_id`, if still going, cancelled: `runs cancel`'s
    /// records (`run_cancelled`, then `run_finished` with status `cancelled`), with the
    /// variables and steps of `state`.
    pub fn cancel(
        &self,
        run_id: &str,
        by: Option<String>,
        reason: Option<String>,
        remote: Vec<crate::journal::event::RemoteCancelled>,
        state: &FlowState,
    ) {
        let run = lock(&self.open).get(run_id).cloned();
        let Some(run) = run else { return };
        {
            let mut closed = lock(&run.closed);
            if *closed {
                return;
            }
            *closed = true;
            // Straight to the journal: the run's own sink may be sealed (see `seal`).
            let written = crate::run::cancel::journal_cancellation(
                &*run.sink.inner,
                by,
                reason,
                remote,
                state,
            );
            match written {
                Ok(()) => tracing::info!("run {run_id}: cancelled"),
                Err(e) => tracing::error!("run {run_id}: cannot journal its cancellation: {e}"),
            }
        }
        lock(&self.open).remove(run_id);
        // Held parked here: it sees that it ended.
        run.wake.notify_one();
    }

    /// Close the journal of every run still going with a failed `run_finished`; the runs
    /// parked here stay parked (`worker` or `runs resume` continues them).
    pub fn interrupt_all(&self) {
        self.stop.cancel();
        let runs: Vec<Arc<RunJournal>> = std::mem::take(&mut *lock(&self.open))
            .into_values()
            .collect();
        for run in runs {
            if run.is_parked() {
                crate::journal::mailbox::release_parked(&store::run_dir(&self.base, &run.run_id));
                tracing::info!("run {}: left parked", run.run_id);
            } else {
                run.interrupt("interrupted (the server shut down)");
            }
        }
    }
}

impl crate::mcp::Parking for Journals {
    fn until_due(&self, run_id: &str) -> crate::bridge::BoxFuture<'static, Option<Vec<Record>>> {
        Box::pin(self.clone().hold_until_due(run_id.to_string()))
    }

    fn deliver(
        &self,
        run_id: &str,
        delivery: &Delivery,
    ) -> Option<Result<Vec<Record>, DeliveryError>> {
        let run = lock(&self.open).get(run_id).cloned()?;
        let closed = lock(&run.closed);
        if *closed || !run.is_parked() {
            // Going here (or ending): a delivery waits until it parks.
            return Some(Err(DeliveryError::Held {
                run: run_id.to_string(),
                message: format!(
                    "run `{run_id}` is going in this server; a delivery is taken once it parks"
                ),
            }));
        }
        let written = match self.read(&run) {
            Some((records, _)) => {
                crate::journal::mailbox::deliver(&run.sink.inner, &records, run_id, delivery)
            }
            None => Err(DeliveryError::Held {
                run: run_id.to_string(),
                message: format!("cannot read the journal of run `{run_id}`"),
            }),
        };
        drop(closed);
        if written.is_ok() {
            run.wake.notify_one();
        }
        Some(written)
    }
}

/// Whether an answer the run has not applied was journalled since it last resumed (one
/// journalled before was there when it resumed and did not apply: it does not wake it
/// again, or the run would resume and park for ever).
fn answered_since_resumed(records: &[Record], state: &FlowState) -> bool {
    if state.unapplied_answers.is_empty() {
        return false;
    }
    for r in records.iter().rev() {
        match &r.event {
            Event::RunResumed { .. } => return false,
            Event::QuestionAnswered { key, .. } if state.unapplied_answers.contains_key(key) => {
                return true;
            }
            _ => {}
        }
    }
    false
}

/// The journal of one run started by a client.
struct RunJournal {
    run_id: String,
    sink: Labelled,
    /// Set once the run has its `run_finished` record: nothing is appended after it.
    closed: Mutex<bool>,
    open: Weak<Mutex<BTreeMap<String, Arc<RunJournal>>>>,
    /// Parked and held here (set and cleared under `closed`).
    parked: std::sync::atomic::AtomicBool,
    /// Woken by a delivery through this server while parked.
    wake: tokio::sync::Notify,
    /// The server's answers people gave: this run's go when it ends.
    answers: crate::reason::park::SharedAnswers,
}

impl RunJournal {
    fn is_parked(&self) -> bool {
        self.parked.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn interrupt(&self, message: &str) {
        let mut closed = lock(&self.closed);
        if *closed {
            return;
        }
        *closed = true;
        let _ = self.sink.inner.commit();
        let state = store::read_journal(self.sink.inner.path())
            .map(|r| FlowState::fold(r.records.iter()))
            .unwrap_or_default();
        let written = self.sink.inner.emit(Event::RunFinished {
            status: RunStatus::Failed,
            message: Some(message.to_string()),
            variables: state.process_variables,
            steps: state.steps,
        });
        match written {
            Ok(_) => tracing::warn!("run {}: {message}", self.run_id),
            Err(e) => tracing::error!("run {}: cannot close its journal: {e}", self.run_id),
        }
    }
}

impl EventSink for RunJournal {
    fn emit(&self, event: Event) -> Result<Record, JournalError> {
        let mut closed = lock(&self.closed);
        if *closed {
            return Err(JournalError::Io {
                path: self.sink.inner.path().to_path_buf(),
                message: "the run was interrupted: the server shut down".to_string(),
            });
        }
        let finished = matches!(event, Event::RunFinished { .. });
        let record = self.sink.emit(event)?;
        if finished {
            *closed = true;
            drop(closed);
            self.answers.forget_run(&self.run_id);
            if let Some(open) = self.open.upgrade() {
                lock(&open).remove(&self.run_id);
            }
        }
        Ok(record)
    }

    fn commit(&self) -> Result<(), JournalError> {
        self.sink.commit()
    }
}

/// Lock, ignoring poisoning.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(run_id: &str) -> RunProcessArgs {
        RunProcessArgs {
            process_key: "k".into(),
            run_id: run_id.into(),
            variables: serde_json::Map::new(),
            untrusted: None,
            bridge: None,
            adopt: None,
            lost_parks: false,
        }
    }

    fn started(run_id: &str) -> Event {
        Event::RunStarted {
            run_id: run_id.into(),
            app: "k".into(),
            process_key: "k".into(),
            process_id: "P".into(),
            engine: "native".into(),
            reasoner: String::new(),
            variables: serde_json::Map::new(),
            untrusted: None,
            launch: None,
            app_digest: None,
            parent: None,
            trace: None,
        }
    }

    #[test]
    fn journals_are_labelled_unique_and_closed_when_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let labels = Labels::default();
        labels.set("k", "app_k", "answers file a.yaml", "d1");
        let journals = Journals::new(dir.path().to_path_buf(), labels, Durability::Batch);
        let open = journals.factory();

        // A run that finishes leaves the open set.
        let done = open(&run_args("done")).unwrap();
        done.emit(started("done")).unwrap();
        assert_eq!(journals.open_count(), 1);
        done.emit(Event::RunFinished {
            status: RunStatus::Completed,
            message: None,
            variables: serde_json::Map::new(),
            steps: 1,
        })
        .unwrap();
        assert_eq!(journals.open_count(), 0);
        let Err(e) = open(&run_args("done")) else {
            panic!("a second journal for the same run id");
        };
        assert!(e.to_string().contains("already has a journal"), "{e}");

        // A run still going at shutdown gets a failed `run_finished`, then nothing more.
        let going = open(&run_args("going")).unwrap();
        going.emit(started("going")).unwrap();
        journals.interrupt_all();
        assert!(going.emit(started("going")).is_err());
        let path = store::run_dir(dir.path(), "going").join(store::JOURNAL_FILE);
        let records = store::read_journal(&path).unwrap().records;
        assert_eq!(records.len(), 2);
        match &records[0].event {
            Event::RunStarted {
                app,
                reasoner,
                app_digest,
                ..
            } => {
                assert_eq!(app, "app_k");
                assert_eq!(reasoner, "answers file a.yaml");
                assert_eq!(app_digest.as_deref(), Some("d1"));
            }
            other => panic!("{other:?}"),
        }
        match &records[1].event {
            Event::RunFinished {
                status, message, ..
            } => {
                assert_eq!(*status, RunStatus::Failed);
                assert!(message.as_deref().unwrap().contains("interrupted"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn run_ids_name_one_folder() {
        assert!(crate::journal::store::check_run_id("20240229T123456Z-abc123").is_ok());
        assert!(crate::journal::store::check_run_id("r1.retry_2").is_ok());
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", "a b"] {
            assert!(crate::journal::store::check_run_id(bad).is_err(), "{bad:?}");
        }
        assert!(crate::journal::store::check_run_id(&"x".repeat(129)).is_err());
    }
}
