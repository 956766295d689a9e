//! A planned run launched: the harness over the app (its reasoner watched by the view),
//! the engine reached directly or over the in-process MCP bridge, the journal (new, or
//! the resumed run's, reopened) with the view and graph mode as its observers, the run
//! labelled with its app, judgement and launch; a stop (Ctrl-C) parks it as it stands.
//! What it ended as goes back to the host, which prints it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::app::LoadedApp;
use crate::bridge::BoxFuture;
use crate::bridge::ControlPoints;
use crate::engine::{Resume, RunRequest};
use crate::harness::FlowAgent;
use crate::journal::store::{self, Journal};
use crate::journal::{Anchor, Event, EventSink, FlowState, JournalOptions, Launch, Record};
use crate::mcp::{
    BridgeServer, InProcessBridge, RegisteredFlow, Registry, RunProcessArgs, RunProcessResult,
};
use crate::reason::{
    GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, ReasonError, Reasoner, TaskAnswer,
    TaskRequest,
};
use crate::view::{self, View};
use crate::vocab::RunStatus;

use super::chain::Labelled;
use super::plan::{Bridge, PlanError, Resumed, RunPlan, RunSpec};

/// A run's graph-mode writer.
type RunGraph = Arc<crate::graph::abox::GraphRun>;

/// A run's journal opened: its id, the journal, what it resumes from, its graph writer.
type Opened = (String, Journal, Option<Arc<Resume>>, Option<RunGraph>);

/// How a launched run ended.
pub enum Ended {
    /// Stopped (Ctrl-C, SIGTERM): parked as it stood, with the questions a person was
    /// being asked at the terminal; `runs resume` continues it.
    Interrupted { run_id: String, journal: PathBuf },
    /// The engine returned.
    Ran(Box<Ran>),
}

/// A run the engine returned from.
pub struct Ran {
    pub run_id: String,
    pub journal: PathBuf,
    /// The cassette written (`record`), whether or not the run completed.
    pub cassette: Option<PathBuf>,
    pub outcome: Result<RunProcessResult, RunFailed>,
    /// The run's state, folded from its committed records.
    pub state: FlowState,
}

/// Why a run could not complete (its journal closed, failed).
#[derive(Debug, thiserror::Error)]
pub enum RunFailed {
    /// The engine failed (could not be reached, refused the deployment, broke down).
    #[error("the run could not complete: {0}")]
    Engine(String),
    /// Graph mode's store failed and stopped the run.
    #[error("the run failed: graph mode: {0}")]
    Graph(String),
}

/// Run `plan`, shown in `view`, until it ends or `stop` resolves (the run then parks).
pub async fn launch(
    plan: RunPlan,
    view: Arc<dyn View>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<Ended, PlanError> {
    let RunPlan {
        spec: plan_spec,
        loaded,
        engine,
        reasoner,
        recorder,
        variables,
        untrusted,
        resumed,
        children,
        parent_graph,
        remotes,
        ..
    } = plan;
    let judgement = reasoner.describe();
    let mut stop = std::pin::pin!(stop);
    let reasoner: Arc<dyn Reasoner> = Arc::new(Watched {
        inner: reasoner,
        view: view.clone(),
    });
    let harness = FlowAgent::new(&loaded, reasoner)
        .map_err(|e| PlanError::new(e.to_string()))?
        .with_remotes(remotes);
    if plan_spec.preset.is_some() {
        // A replay answers from the journal: it never sends anything to a remote agent.
        harness.remotes_offline();
    }
    let mut annotations = harness.annotations();
    if let Some(budget) = plan_spec.step_budget {
        annotations.step_budget = budget;
    }
    annotations.max_wait_secs = plan_spec.max_wait;
    let process = loaded
        .shared_process()
        .ok_or_else(|| PlanError::new("the app's BPMN model has no process"))?;
    let config = harness.config().clone();
    let process_key = config.process_key().to_string();

    let agent = Arc::new(harness);
    let harness: Arc<dyn ControlPoints> = agent.clone();
    // The native engine calls the harness directly (the bridge contract, no transport)
    // unless `--bridge mcp` asks for the in-process MCP hop; other engines always reach
    // the control points over MCP.
    let direct = plan_spec.bridge == Bridge::Direct && engine.name() == "native";
    if let Some(r) = &resumed
        && !direct
    {
        // The engine restores what the harness needs to go on (`resuming`), but over the
        // MCP bridge it reaches the bridge's client, not the harness: restore it here.
        harness.resuming(&r.records);
    }
    let registry = Arc::new(Registry::default());
    let bridge = if direct {
        None
    } else {
        registry.register(RegisteredFlow {
            process_key: process_key.clone(),
            process: process.clone(),
            annotations: annotations.clone(),
            harness: harness.clone(),
        });
        // Nothing but this run reaches the in-process bridge: it loads no other flow.
        let server = BridgeServer::new(registry.clone(), engine.clone(), None);
        Some(
            InProcessBridge::start(server)
                .await
                .map_err(PlanError::new)?,
        )
    };

    // A run resumed on an engine that owns its tokens re-attaches to its instance there:
    // when the engine cannot be reached, nothing is written and the run stays as it was.
    if let Some(r) = &resumed {
        engine.reachable(&process.id).await.map_err(|why| {
            let why = crate::diag::chain(&*why);
            PlanError::new(format!("run `{}` cannot be resumed now: {why}", r.run_id)).with_help(
                format!(
                    "nothing was written; run `cuga-flo runs resume {}` again once the {} \
                     engine answers (or pass --engine-url URL if it moved)",
                    r.run_id,
                    engine.name()
                ),
            )
        })?;
    }
    // The journal, with the view as its observer and the run's state folded as it is
    // committed: a new one, or the resumed run's.
    let app_digest = loaded.digest();
    let folded = Arc::new(Mutex::new(FlowState::default()));
    let (run_id, journal, resume, graph) =
        open_journal(&plan_spec, &loaded, &view, &folded, resumed, &app_digest)?;
    if let Some(g) = &graph {
        let _ = parent_graph.set(g.clone());
    }
    let journal = Arc::new(journal);
    let sink = Arc::new(Labelled {
        inner: journal.clone(),
        app: loaded.name.clone(),
        judgement,
        app_digest: Some(app_digest),
        launch: Some(launched(&plan_spec, &loaded)),
        sealed: Default::default(),
        graph: graph.clone(),
    });

    // A delegation journals its remote task as soon as the agent assigns it.
    agent.journal_remote_tasks(sink.clone());

    // What the run waits for while it waits: a Ctrl-C parks it with that.
    let awaiting = Arc::new(crate::bridge::run::Awaiting::default());
    let run: BoxFuture<'_, Result<RunProcessResult, String>> = match &bridge {
        None => {
            let mut request = RunRequest::new(
                run_id.clone(),
                process_key,
                process,
                annotations,
                variables,
                resume,
            );
            request.untrusted = untrusted;
            request.children = children;
            request.awaiting = Some(awaiting.clone());
            request.adopt = plan_spec.adopt.as_ref().map(|a| a.instance.clone());
            request.lost_parks = plan_spec.lost_parks;
            let events: Arc<dyn EventSink> = sink.clone();
            let run = engine.run(request, harness, events);
            let id = run_id.clone();
            Box::pin(async move {
                let outcome = run.await.map_err(|e| e.to_string())?;
                Ok(RunProcessResult::of(id, outcome))
            })
        }
        Some(bridge) => {
            registry.attach_sink(&run_id, sink.clone());
            if let Some(resume) = resume {
                registry.attach_resume(&run_id, resume);
            }
            if let Some(children) = children {
                registry.attach_children(&run_id, children);
            }
            // The engine shows what the run waits for here too: a Ctrl-C parks it with it.
            registry.attach_awaiting(&run_id, awaiting.clone());
            let client = bridge.client();
            let args_run = RunProcessArgs {
                process_key,
                run_id: run_id.clone(),
                variables,
                untrusted,
                bridge: None,
                adopt: plan_spec.adopt.as_ref().map(|a| a.instance.clone()),
                lost_parks: plan_spec.lost_parks,
            };
            Box::pin(async move { client.run_process(&args_run).await.map_err(|e| e.message) })
        }
    };
    let result = tokio::select! {
        result = run => Some(result),
        () = &mut stop => None,
    };
    let Some(result) = result else {
        park_interrupted(&sink, &journal, &awaiting);
        if let (Some(recorder), Some(path)) = (&recorder, &plan_spec.record) {
            let _ = recorder.write(path);
        }
        return Ok(Ended::Interrupted {
            run_id,
            journal: journal.path().to_path_buf(),
        });
    };
    if let Some(bridge) = bridge {
        bridge.shutdown().await;
    }
    // The cassette is what happened, whether or not the run completed.
    let cassette = match (&recorder, &plan_spec.record) {
        (Some(recorder), Some(path)) => {
            recorder
                .write(path)
                .map_err(|e| PlanError::new(e.to_string()))?;
            Some(path.clone())
        }
        _ => None,
    };

    // A run that ended without `run_finished` (an engine error) may leave a step uncommitted.
    let _ = journal.commit();
    // Graph mode: a store that failed stopped the run; its journal is closed, failed.
    let graph_failed = graph.as_ref().and_then(|g| g.failed());
    if let Some(err) = &graph_failed {
        close_failed(&journal, &format!("graph mode: {err}"));
    }
    // Whatever is still buffered (a failed run's last records) is committed, and so folded.
    let _ = journal.commit();
    let state = std::mem::take(&mut *lock_state(&folded));
    view.finish(&state);

    let outcome = match (result, graph_failed) {
        // The engine finished, but the store missed its last records.
        (Ok(_), Some(err)) => Err(RunFailed::Graph(err.to_string())),
        (Ok(r), None) => Ok(r),
        (Err(e), _) => Err(RunFailed::Engine(e)),
    };
    Ok(Ended::Ran(Box::new(Ran {
        run_id,
        journal: journal.path().to_path_buf(),
        cassette,
        outcome,
        state,
    })))
}

/// The run's journal, with the view as its observer and the run's state folded into
/// `folded` as it is committed: the resumed run's (its `run_resumed` written), or a new
/// one; with graph mode's writer, when the app has a `graph:` block.
fn open_journal(
    plan_spec: &RunSpec,
    loaded: &LoadedApp,
    view: &Arc<dyn View>,
    folded: &Arc<Mutex<FlowState>>,
    resumed: Option<Box<Resumed>>,
    app_digest: &str,
) -> Result<Opened, PlanError> {
    Ok(match resumed {
        Some(r) => {
            let Resumed {
                run_id,
                journal,
                records,
                repaired,
                ..
            } = *r;
            view.resumed(&records);
            let mut state = FlowState::fold(records.iter());
            state.forget_visits();
            *lock_state(folded) = state;
            let graph = open_graph(loaded, &run_id)?;
            if let Some(g) = &graph {
                g.replay(&records);
            }
            let journal = with_graph(
                journal
                    .with_observer(view::observer(view.clone()))
                    .with_observer(folding(folded)),
                &graph,
            );
            journal
                .emit(Event::RunResumed {
                    from_seq: records.len() as u64,
                    repaired,
                })
                .and_then(|_| journal.commit())
                .map_err(|e| PlanError::new(format!("cannot write the run journal: {e}")))?;
            (run_id, journal, Some(Arc::new(Resume { records })), graph)
        }
        None => {
            let run_id = match (&plan_spec.preset, &plan_spec.adopt) {
                (Some(p), _) => p.run_id.clone(),
                (None, Some(a)) => a.run_id.clone(),
                (None, None) => store::new_run_id_in(&plan_spec.run_dir),
            };
            let run_dir = store::run_dir(&plan_spec.run_dir, &run_id);
            let options = JournalOptions {
                durability: plan_spec.durability,
                anchor: Anchor::new(&run_id, Some(app_digest.to_string())),
            };
            let graph = open_graph(loaded, &run_id)?;
            let journal = Journal::create(&run_dir, options)
                .map_err(|e| PlanError::new(format!("cannot create the run journal: {e}")))?
                .with_observer(view::observer(view.clone()))
                .with_observer(folding(folded));
            let journal = with_graph(journal, &graph);
            (run_id, journal, None, graph)
        }
    })
}

/// How the run was launched, for its `run_started` (what `runs resume` goes on with).
fn launched(plan_spec: &RunSpec, loaded: &LoadedApp) -> Launch {
    Launch {
        app_dir: loaded
            .dir
            .canonicalize()
            .ok()
            .map(|d| d.display().to_string()),
        scenario: plan_spec.scenario.clone(),
        answers: plan_spec
            .answers
            .as_ref()
            .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
            .map(|p| p.display().to_string()),
        no_model: plan_spec.no_model,
        detach: plan_spec.detach,
        step_budget: plan_spec.step_budget,
        engine_url: plan_spec
            .engine_url
            .as_deref()
            .map(crate::secret::without_userinfo),
        served: false,
        adopted: plan_spec.adopt.as_ref().map(|a| a.instance.clone()),
    }
}

/// Park an interrupted run as it stands. What the engine does while it winds down is not
/// part of the run: the journal takes nothing more from it. The questions a person was
/// being asked at the terminal park with it (`runs answer` answers them, `runs resume`
/// asks them again); the bridge is not drained (a prompt may block).
fn park_interrupted(sink: &Labelled, journal: &Journal, awaiting: &crate::bridge::run::Awaiting) {
    sink.seal();
    let asked = crate::terminal::asking();
    let keys = asked.iter().map(|q| q.key.clone()).collect();
    let parked = asked.into_iter().try_for_each(|question| {
        journal
            .emit(Event::QuestionParked {
                question: Box::new(question),
            })
            .map(|_| ())
    });
    let _ = journal
        .commit()
        .and(parked)
        .and_then(|()| {
            journal.emit(Event::RunWaiting {
                reason: "interrupted".to_string(),
                questions: keys,
                due_ms: None,
                awaiting: awaiting.lock().map(|a| a.clone()).unwrap_or_default(),
            })
        })
        .and_then(|_| journal.commit());
}

/// Whether a run failed before anything ran: no node was entered (an engine that could
/// not be reached, a deployment it refused).
pub fn never_started(status: RunStatus, path: &[String]) -> bool {
    status == RunStatus::Failed && path.is_empty()
}

/// Tells the view which control point a reasoner is working on (it shows a spinner).
struct Watched {
    inner: Arc<dyn Reasoner>,
    view: Arc<dyn View>,
}

impl Reasoner for Watched {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn confirm(
        &self,
        req: crate::reason::tools::ConfirmRequest,
    ) -> crate::reason::tools::Confirming<'_> {
        self.inner.confirm(req)
    }

    fn answers_in_advance(&self, req: &TaskRequest) -> bool {
        self.inner.answers_in_advance(req)
    }

    // The spinner starts when the answer is awaited, not when it is asked for: the engine
    // commits (and so shows) its step's records in between, and a record shown stops the
    // spinner (tests/suite/pty.rs).
    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            self.view.waiting(&req.task_id);
            self.inner.task(req).await
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            self.view.waiting(&req.gateway_id);
            self.inner.gateway(req).await
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            self.view.waiting(&req.hook_id);
            self.inner.hook(req).await
        })
    }
}

/// Graph mode's writer of this run (none without a `graph:` block). A store that cannot be
/// set up (an unset variable, no on-disk store in this build) is a usage error: nothing is
/// written. A store that fails later fails the run.
fn open_graph(
    loaded: &LoadedApp,
    run_id: &str,
) -> Result<Option<Arc<crate::graph::abox::GraphRun>>, PlanError> {
    crate::graph::abox::graph_run(loaded, run_id)
        .map(|g| g.map(Arc::new))
        .map_err(|e| {
            PlanError::new(format!("graph mode: {e}"))
                .with_help("the `graph:` block of the flow config names the store (docs/graph.md)")
        })
}

/// An observer folding the committed records into `state` (the run's state without
/// reading its journal back), without the logs of what each visit did
/// ([`FlowState::forget_visits`]): memory that would grow with the run's length, and
/// that nothing shown live reads.
fn folding(state: &Arc<Mutex<FlowState>>) -> impl Fn(&Record) + Send + Sync + 'static {
    let state = state.clone();
    move |record| {
        let mut state = lock_state(&state);
        state.apply(record);
        state.forget_visits();
    }
}

fn lock_state(state: &Mutex<FlowState>) -> std::sync::MutexGuard<'_, FlowState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// The journal with the graph store as an observer of its committed records.
fn with_graph(journal: Journal, graph: &Option<Arc<crate::graph::abox::GraphRun>>) -> Journal {
    match graph {
        Some(g) => {
            let g = g.clone();
            journal.with_observer(move |record: &Record| g.apply(record))
        }
        None => journal,
    }
}

/// Close a journal the engine left open: `run_finished`, failed with `message` (unless it
/// has one already).
fn close_failed(journal: &Journal, message: &str) {
    let Ok(read) = store::read_journal(journal.path()) else {
        return;
    };
    if read
        .records
        .iter()
        .any(|r| matches!(r.event, Event::RunFinished { .. }))
    {
        return;
    }
    let state = FlowState::fold(read.records.iter());
    let _ = journal
        .emit(Event::RunFinished {
            status: RunStatus::Failed,
            message: Some(message.to_string()),
            variables: state.process_variables.clone(),
            steps: state.steps,
        })
        .and_then(|_| journal.commit());
}
