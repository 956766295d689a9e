//! The child runs of call activities, as `start` (and `runs resume`) runs them: the called
//! process is found by its key among the other processes of the calling app's BPMN file,
//! then among the apps of the apps folder (an app's `flow.id`, or its process's id); it
//! runs on the native engine with its own id (derived from the call's idempotency key),
//! its own journal (`runs/<child id>/`, its `run_started` naming its parent) and its own
//! control points: the called app's harness, whose policy rules decide first, then the
//! answers the calling scenario or answers file gives its elements as
//! `<call activity id>/<element id>` (those of a grandchild as `<call>/<call>/<element>`),
//! then the called app's model. A child never asks a person at the terminal: a question
//! nobody answers parks it, and its parent with it (`runs answer` on the child, then
//! `runs resume` on the parent); the answers given with `runs answer` are applied when
//! the parent resumes the child. A served run's children (`serve --a2a`) ask the served
//! task's A2A caller instead (its `asker`): the task becomes `input-required`.
//!
//! A call made again (the parent resumed after a crash) finds the child's journal: a
//! finished child is not run again (its end is read back), an unfinished one is resumed.

use std::path::PathBuf;
use std::sync::Arc;

use crate::app::LoadedApp;
use crate::app::called::find_called;
use crate::bridge::child::{ChildCall, ChildError, ChildOutcome, ChildRuns, ParentRun};
use crate::bridge::{BoxFuture, ControlPoints};
use crate::engine::native::NativeEngine;
use crate::engine::{Resume, RunRequest, WorkflowEngine};
use crate::harness::FlowAgent;
use crate::journal::event::ThrownKind;
use crate::journal::store::{self, JOURNAL_FILE, Journal};
use crate::journal::{Anchor, Durability, Event, EventSink, FlowState, JournalOptions, Launch};
use crate::vocab::RunStatus;

use crate::run::chain::{self, Given, Labelled, Sources};

/// How deep call activities may nest (validate refuses cycles; this bounds the rest).
const MAX_DEPTH: usize = 16;

/// Runs the processes a run's call activities call (see the module documentation).
#[derive(Clone)]
pub struct AppChildren {
    pub apps_dir: PathBuf,
    /// The calling app (its file's other processes are callable).
    pub caller: LoadedApp,
    pub run_dir: PathBuf,
    pub durability: Durability,
    pub no_model: bool,
    /// What the calling run's scenario and answers file give in advance, its child runs'
    /// answers among them (`<call activity>/<element>`).
    pub given: Vec<Given>,
    pub depth: usize,
    /// Who answers what nobody before a person decides in a child run, instead of the
    /// child parking (a served run's A2A caller: `serve --a2a`); `None` parks it.
    pub asker: Option<Arc<dyn crate::reason::Reasoner>>,
    /// Graph mode: the calling run's writer (set once it is open). A child whose app names
    /// the same store is written into it; each child run is its own ABox graph, linked to
    /// its caller (`cf:parentRun`).
    pub graph: ParentGraph,
}

/// The calling run's graph-mode writer, known once the run's store is open (after the
/// child runner is made).
pub type ParentGraph = Arc<std::sync::OnceLock<Arc<crate::graph::abox::GraphRun>>>;

/// Why a child run could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum ChildRunError {
    #[error("call activities nest deeper than {MAX_DEPTH} runs (calling `{0}`)")]
    TooDeep(String),
    #[error(transparent)]
    RunId(#[from] crate::journal::store::BadRunId),
    #[error("cannot {what} child run {run}")]
    Journal {
        what: &'static str,
        run: String,
        #[source]
        source: crate::journal::JournalError,
    },
    #[error(
        "no app of {} and no process of the calling file has the process key `{key}`",
        .apps_dir.display()
    )]
    NotFound {
        apps_dir: std::path::PathBuf,
        key: String,
    },
    #[error("app `{0}` has no flow config")]
    NoConfig(String),
    #[error(transparent)]
    Chain(#[from] super::chain::ChainError),
    #[error(transparent)]
    Harness(#[from] crate::harness::HarnessError),
    #[error("child run {run}: graph mode")]
    Graph {
        run: String,
        #[source]
        source: crate::graph::store::StoreError,
    },
    #[error("child run {run}: graph mode: {message}")]
    GraphFailed { run: String, message: String },
    #[error("child run {run}")]
    Engine {
        run: String,
        #[source]
        source: crate::engine::EngineError,
    },
}

impl ChildRuns for AppChildren {
    fn run_child(&self, call: ChildCall) -> BoxFuture<'static, Result<ChildOutcome, ChildError>> {
        let this = self.clone();
        Box::pin(async move { this.run(call).await.map_err(ChildError::from) })
    }
}

impl AppChildren {
    async fn run(self, call: ChildCall) -> Result<ChildOutcome, ChildRunError> {
        if self.depth >= MAX_DEPTH {
            return Err(ChildRunError::TooDeep(call.process_key));
        }
        store::check_run_id(&call.run_id)?;
        let dir = store::run_dir(&self.run_dir, &call.run_id);
        let journal_path = dir.join(JOURNAL_FILE);
        // The child of this call exists already (the parent was resumed): read its end,
        // or resume it.
        let answered = if journal_path.exists() {
            let records = store::read_journal(&journal_path)
                .map_err(|source| ChildRunError::Journal {
                    what: "read",
                    run: call.run_id.clone(),
                    source,
                })?
                .records;
            let state = FlowState::fold(records.iter());
            if let Some(status) = state.status.filter(|s| *s != RunStatus::Waiting) {
                return Ok(ChildOutcome {
                    run_id: call.run_id.clone(),
                    status,
                    message: state.message.clone(),
                    variables: state.process_variables.clone(),
                    error_code: uncaught_error(&records),
                    untrusted: state.untrusted.clone(),
                });
            }
            Some(chain::answers_of(&records, &state))
        } else {
            None
        };
        let (loaded, process) = find_called(Some(&self.apps_dir), &self.caller, &call.process_key)
            .ok_or_else(|| ChildRunError::NotFound {
                apps_dir: self.apps_dir.clone(),
                key: call.process_key.clone(),
            })?;
        let config =
            (loaded.config.clone()).ok_or_else(|| ChildRunError::NoConfig(loaded.name.clone()))?;
        // The caller's answers for this call's elements, under their own ids (and those
        // for the calls it makes in turn, as `<call>/<element>`).
        let given: Vec<Given> = (self.given.iter())
            .filter_map(|g| g.for_call(&call.node))
            .collect();
        let (reasoner, _) = chain::judgement(
            &config,
            &Sources {
                given: &given,
                no_model: self.no_model,
                person: false,
                // Asked on: nobody answering is the asker's to handle (it fails the
                // question), not a park.
                park: self.asker.is_none(),
                detach: true,
                answered: answered.as_ref(),
                process: Some(&process),
                ..Sources::default()
            },
        )?;
        let reasoner = match &self.asker {
            Some(asker) => Arc::new(crate::reason::Chain::new(vec![reasoner, asker.clone()]))
                as Arc<dyn crate::reason::Reasoner>,
            None => reasoner,
        };
        let judgement = reasoner.describe();
        let harness = FlowAgent::new(&loaded, reasoner)?;
        let annotations = harness.annotations();
        let harness: Arc<dyn ControlPoints> = Arc::new(harness);
        let app_digest = loaded.digest();
        // Graph mode: the child's own ABox graph, written by its journal's observer.
        let graph = crate::graph::abox::child_graph_run(
            self.graph.get().map(|g| &**g),
            &loaded,
            &call.run_id,
        )
        .map_err(|source| ChildRunError::Graph {
            run: call.run_id.clone(),
            source,
        })?
        .map(Arc::new);
        let observed = |journal: Journal| match &graph {
            Some(g) => {
                let g = g.clone();
                journal.with_observer(move |record: &crate::journal::Record| g.apply(record))
            }
            None => journal,
        };
        let (journal, resume) = match answered.is_some() {
            true => {
                let (journal, reopened) =
                    Journal::open(&dir, self.durability).map_err(|source| {
                        ChildRunError::Journal {
                            what: "reopen",
                            run: call.run_id.clone(),
                            source,
                        }
                    })?;
                let journal = observed(journal);
                let records = reopened.records;
                if let Some(g) = &graph {
                    g.replay(&records);
                }
                // Killed before its first record: the child starts (in its journal).
                if records.is_empty() {
                    (journal, None)
                } else {
                    journal
                        .emit(Event::RunResumed {
                            from_seq: records.len() as u64,
                            repaired: None,
                        })
                        .and_then(|_| journal.commit())
                        .map_err(|source| ChildRunError::Journal {
                            what: "write",
                            run: call.run_id.clone(),
                            source,
                        })?;
                    (journal, Some(Arc::new(Resume { records })))
                }
            }
            false => {
                let options = JournalOptions {
                    durability: self.durability,
                    anchor: Anchor::new(&call.run_id, Some(app_digest.clone())),
                };
                let journal =
                    Journal::create(&dir, options).map_err(|source| ChildRunError::Journal {
                        what: "create",
                        run: call.run_id.clone(),
                        source,
                    })?;
                (observed(journal), None)
            }
        };
        let journal = Arc::new(journal);
        let sink: Arc<dyn EventSink> = Arc::new(Labelled {
            inner: journal.clone(),
            app: loaded.name.clone(),
            judgement,
            app_digest: Some(app_digest),
            launch: Some(Launch {
                app_dir: (loaded.dir.canonicalize().ok()).map(|d| d.display().to_string()),
                no_model: self.no_model,
                detach: true,
                ..Launch::default()
            }),
            sealed: Default::default(),
            graph: graph.clone(),
        });
        let variables = match &resume {
            Some(r) => match r.records.first().map(|r| &r.event) {
                Some(Event::RunStarted { variables, .. }) => variables.clone(),
                _ => call.variables.clone(),
            },
            None => call.variables.clone(),
        };
        let mut request = RunRequest::new(
            call.run_id.clone(),
            config.process_key().to_string(),
            process,
            annotations,
            variables,
            resume,
        );
        // What a call passes in keeps the calling run's provenance.
        if request.resume.is_none() {
            request.untrusted = call.untrusted.clone();
        }
        request.parent = Some(ParentRun {
            run_id: call.parent_run.clone(),
            node: call.node.clone(),
        });
        let nested = AppChildren {
            caller: loaded.clone(),
            depth: self.depth + 1,
            given,
            graph: Arc::new(match &graph {
                Some(g) => std::sync::OnceLock::from(g.clone()),
                None => std::sync::OnceLock::new(),
            }),
            ..self.clone()
        };
        request.children = Some(Arc::new(nested));
        let outcome = NativeEngine::new()
            .run(request, harness, sink)
            .await
            .map_err(|source| ChildRunError::Engine {
                run: call.run_id.clone(),
                source,
            })?;
        let _ = journal.commit();
        if let Some(err) = graph.as_ref().and_then(|g| g.failed()) {
            return Err(ChildRunError::GraphFailed {
                run: call.run_id.clone(),
                message: err.to_string(),
            });
        }
        let records = store::read_journal(journal.path())
            .map(|r| r.records)
            .unwrap_or_default();
        Ok(ChildOutcome {
            run_id: call.run_id,
            status: outcome.status,
            message: outcome.message,
            variables: outcome.variables,
            error_code: uncaught_error(&records),
            untrusted: FlowState::fold(records.iter()).untrusted,
        })
    }
}

/// The code of the BPMN error that nothing in a failed child caught.
fn uncaught_error(records: &[crate::journal::Record]) -> Option<String> {
    let failed = records.iter().any(|r| {
        matches!(
            r.event,
            Event::RunFinished {
                status: RunStatus::Failed,
                ..
            }
        )
    });
    if !failed {
        return None;
    }
    records.iter().rev().find_map(|r| match &r.event {
        Event::EventThrown {
            kind: ThrownKind::Error,
            code,
            caught_by: None,
            ..
        } => code.clone(),
        _ => None,
    })
}
