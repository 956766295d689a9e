//! Continuing a parked (or crashed) run from its journal: what every host that resumes
//! runs on the terminal's path (`runs resume`, `runs answer`, `worker`) plans the run
//! with. The run goes on with what it was launched with (its `run_started.launch`), the
//! approvals written into its graph and the deadlines passed journalled first.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::app::EngineKind;
use crate::journal::store::{self, Durability, Journal};
use crate::journal::{Event, EventSink, FlowState, Record};
use crate::vocab::{Decider, Question};

use super::parked::Found;
use super::plan::{PlanError, Resumed, RunSpec};

/// What a host resumes runs with.
#[derive(Debug, Clone)]
pub struct Resuming {
    /// The apps folder.
    pub apps_dir: PathBuf,
    /// Where the runs are journalled, and how.
    pub run_dir: PathBuf,
    pub durability: Durability,
    /// The app, when the run's app folder has moved.
    pub app: Option<String>,
    /// Never call a model while resuming.
    pub no_model: bool,
    /// Never ask at the terminal: questions park again.
    pub detach: bool,
    /// How long a run waits in-process for a timer before it parks again.
    pub max_wait: Option<u64>,
    /// A run on Flowable or Kogito: the engine's URL, when it has moved.
    pub engine_url: Option<String>,
    /// A run whose engine stops answering parks instead of failing (a worker fleet).
    pub lost_parks: bool,
}

/// The plan of run `id`'s continuation, whose journal is open (its lock held): the
/// approvals an approver wrote into its graph and the deadlines passed journalled first,
/// then the run as it was launched (its app, scenario, answers file, engine, budgets),
/// with what `settings` changes.
pub fn plan(
    settings: &Resuming,
    id: String,
    journal: Journal,
    records: Vec<Record>,
    repaired: Option<String>,
) -> Result<(RunSpec, Resumed), PlanError> {
    let mut records = records;
    let mut state = FlowState::fold(records.iter());
    if let Some(status) = state.status {
        return Err(PlanError::new(format!(
            "run `{id}` has finished ({}); there is nothing to resume",
            status.as_str()
        )));
    }
    if records.is_empty() {
        return Err(PlanError::new(format!(
            "run `{id}` stopped before its first record was written: it never started and \
             nothing was done"
        ))
        .with_help("start it again with `cuga-flo start`"));
    }
    let started_app = started_app(settings.app.as_ref(), &records);
    if let Some(app) = &started_app {
        for record in answer_from_graph(&settings.apps_dir, app, &journal, &state, &id)? {
            state.apply(&record);
            records.push(record);
        }
    }
    for record in crate::run::parked::answer_timeouts(&journal, &state)
        .map_err(|e| PlanError::new(format!("cannot journal the timeout: {e}")))?
    {
        state.apply(&record);
        records.push(record);
    }
    let Some(Event::RunStarted {
        app,
        variables,
        untrusted,
        engine,
        launch,
        ..
    }) = records.first().map(|r| r.event.clone())
    else {
        return Err(PlanError::new(format!(
            "the journal of run `{id}` does not start with `run_started`: it cannot be resumed"
        )));
    };
    let engine = match engine.as_str() {
        "native" => EngineKind::Native,
        // The engine keeps the instance; the run re-attaches to it.
        "flowable" => EngineKind::Flowable,
        "kogito" => EngineKind::Kogito,
        other => {
            return Err(PlanError::new(format!(
                "run `{id}` ran on the {other} engine; runs of an external MCP engine cannot \
                 be resumed yet"
            ))
            .with_help("see docs/bridge.md §13 for what such an engine would need"));
        }
    };
    let launch = launch.unwrap_or_default();
    let engine_url = match engine {
        EngineKind::Native => None,
        _ => settings
            .engine_url
            .clone()
            .or_else(|| launch.engine_url.clone()),
    };
    let app = settings
        .app
        .clone()
        .or_else(|| launch.app_dir.clone().filter(|d| Path::new(d).is_dir()))
        .unwrap_or(app);
    let app_ref = match crate::app::registry::resolve(&app, &settings.apps_dir) {
        Ok(crate::app::registry::Target::App(app)) => app,
        Ok(crate::app::registry::Target::Model(path)) => {
            return Err(PlanError::new(format!(
                "{} is a BPMN model; `start` runs an app",
                path.display()
            ))
            .with_help("name the app folder or its flow config"));
        }
        Err(e) => {
            let help = crate::diag::Help::help(&e);
            let error = PlanError::new(e.to_string());
            return Err(match help {
                Some(h) => error.with_help(h),
                None => error,
            });
        }
    };
    let mut spec = RunSpec::new(
        app_ref,
        app,
        settings.apps_dir.clone(),
        settings.run_dir.clone(),
    );
    spec.durability = settings.durability;
    spec.scenario = launch.scenario.clone();
    spec.answers = launch.answers.as_ref().map(PathBuf::from);
    spec.engine = Some(engine);
    spec.engine_url = engine_url;
    spec.step_budget = launch.step_budget;
    spec.no_model = settings.no_model || launch.no_model;
    spec.detach = settings.detach || launch.detach;
    spec.max_wait = settings.max_wait;
    spec.lost_parks = settings.lost_parks;
    spec.adopt = launch
        .adopted
        .clone()
        .map(|instance| super::plan::Adoption {
            run_id: id.clone(),
            instance,
            variables: serde_json::Map::new(),
        });
    let answers = crate::run::chain::answers_of(&records, &state);
    let resumed = Resumed {
        run_id: id,
        journal,
        variables,
        untrusted,
        model_usage: state.model_usage,
        records,
        answers,
        repaired,
    };
    Ok((spec, resumed))
}

/// Guardrail decisions an external tool wrote into the run's graph (docs/graph.md,
/// "Guardrail gateways") for questions still open: journalled as the approver's answers
/// before the run resumes. A store that cannot be read is reported and changes nothing.
fn answer_from_graph(
    apps_dir: &Path,
    app: &str,
    journal: &Journal,
    state: &FlowState,
    run_id: &str,
) -> Result<Vec<Record>, PlanError> {
    let open: Vec<&Question> = state
        .open_questions
        .values()
        .filter(|q| q.approval.is_some())
        .collect();
    if open.is_empty() {
        return Ok(Vec::new());
    }
    let Some(app) = crate::app::registry::find(app, apps_dir) else {
        return Ok(Vec::new());
    };
    let loaded = crate::app::load_app(&app);
    let mut records = Vec::new();
    for q in open {
        let Some(approval) = &q.approval else {
            continue;
        };
        let Some(found) = graph_decision(&loaded, run_id, q) else {
            continue;
        };
        let flow = if found.approved {
            &approval.approve_flow
        } else {
            &approval.deny_flow
        };
        let record = journal
            .emit(Event::QuestionAnswered {
                key: q.key.clone(),
                answer: json!({ "flows": [flow] }),
                decided_by: Decider::Human,
                by: Some(found.by.clone().unwrap_or_else(|| "graph".to_string())),
                reason: Some(format!(
                    "{} = {} written into the run's graph",
                    approval.variable, found.value
                )),
            })
            .and_then(|r| journal.commit().map(|()| r))
            .map_err(|e| PlanError::new(format!("cannot journal the approval: {e}")))?;
        records.push(record);
    }
    Ok(records)
}

/// The decision an approver wrote into run `run_id`'s graph for the guardrail question
/// `q` (DENIED wins over APPROVED: a guardrail fails safe). Values written by someone who
/// is not an approver are ignored with a warning; a store that cannot be read is reported
/// and gives none.
fn graph_decision(
    loaded: &crate::app::LoadedApp,
    run_id: &str,
    q: &Question,
) -> Option<crate::graph::approval::GraphDecision> {
    let approval = q.approval.as_ref()?;
    let written = match crate::graph::approval::decisions(loaded, run_id, &approval.variable) {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!("{}: the run's graph cannot be read: {e}", q.key);
            return None;
        }
    };
    let (admitted, refused): (Vec<_>, Vec<_>) = written
        .into_iter()
        .partition(|d| crate::app::guardrail::admits(&approval.approvers, d.by.as_deref()));
    for d in &refused {
        tracing::warn!(
            "{}: `{}` written into the graph by {} is ignored: not an approver ({})",
            q.key,
            d.value,
            d.by.as_deref().unwrap_or("nobody named"),
            approval.approvers.join(", ")
        );
    }
    let deny = admitted.iter().position(|d| !d.approved).unwrap_or(0);
    admitted.into_iter().nth(deny)
}

/// The app a run was started from, to resume it: `--app`, else the folder it was started
/// from (when it is still there), else its name.
fn started_app(app: Option<&String>, records: &[Record]) -> Option<String> {
    match records.first().map(|r| &r.event) {
        Some(Event::RunStarted {
            app: name, launch, ..
        }) => app.cloned().or_else(|| {
            launch
                .as_ref()
                .and_then(|l| l.app_dir.clone())
                .filter(|d| Path::new(d).is_dir())
                .or_else(|| Some(name.clone()))
        }),
        _ => None,
    }
}

/// When a worker looks for runs to resume: for due runs (and, asked, runs a dead process
/// left) every `interval`, and (with `graph_poll`) into the graphs of runs waiting at a
/// guardrail every `graph_poll`.
pub struct Looks {
    interval: Duration,
    graph_poll: Option<Duration>,
    next_look: Instant,
    next_graph_look: Instant,
    /// With [`Looks::with_orphans`]: the runs a dead process left that the last look found.
    orphans: Option<std::collections::HashSet<String>>,
}

impl Looks {
    pub fn new(interval: Duration, graph_poll: Option<Duration>) -> Looks {
        let now = Instant::now();
        Looks {
            interval,
            graph_poll,
            next_look: now,
            next_graph_look: now,
            orphans: None,
        }
    }

    /// Also look for the runs a dead process left ([`super::parked::orphans`]): a worker
    /// fleet's, or any worker's on a shared store.
    pub fn with_orphans(mut self) -> Looks {
        self.orphans = Some(Default::default());
        self
    }

    /// The runs to resume now, each with how it was found: due (a timer, an answer, a
    /// delivery), left by a dead process (with [`Looks::with_orphans`]), or with an
    /// approver's decision in its graph. Empty when no look is due.
    pub fn runs(&mut self, settings: &Resuming) -> Vec<(String, Found)> {
        let now = Instant::now();
        let mut ids: Vec<(String, Found)> = Vec::new();
        if now >= self.next_look {
            // One listing for the look (with a shared store, one refresh of the cache).
            let listed = store::run_ids(&settings.run_dir);
            let (due, late_ms) =
                super::parked::due_among(&settings.run_dir, &listed, crate::clock::now_ms());
            if let Some(metrics) = crate::telemetry::metrics() {
                use crate::telemetry::metrics::{WORKER_LAG, WORKER_QUEUE};
                metrics.set(WORKER_QUEUE, Vec::new(), due.len() as f64);
                metrics.set(WORKER_LAG, Vec::new(), late_ms as f64 / 1000.0);
            }
            ids = due.into_iter().map(|id| (id, Found::Due)).collect();
            if let Some(suspected) = &mut self.orphans {
                // Taken when a second look finds it still left: a writer cut off by a
                // store restart has that long to take its run again.
                let found = super::parked::orphans(&settings.run_dir, &listed);
                for id in found.iter().filter(|id| suspected.contains(*id)) {
                    if !ids.iter().any(|(i, _)| i == id) {
                        ids.push((id.clone(), Found::Orphaned));
                    }
                }
                *suspected = found.into_iter().collect();
            }
            self.next_look = now + self.interval;
        }
        if let Some(every) = self.graph_poll
            && now >= self.next_graph_look
        {
            for id in graph_decided_runs(settings) {
                if !ids.iter().any(|(i, _)| *i == id) {
                    ids.push((id, Found::Decided));
                }
            }
            self.next_graph_look = now + every;
        }
        ids
    }

    /// When the next look is due.
    pub fn next(&self) -> Instant {
        match self.graph_poll {
            Some(_) => self.next_look.min(self.next_graph_look),
            None => self.next_look,
        }
    }
}

/// The parked runs under `base` waiting at a guardrail for which an approver's decision
/// is already in the run's graph (an endpoint, or the embedded store on disk): `worker
/// --graph-poll` resumes them without waiting for the deadline.
pub fn graph_decided_runs(settings: &Resuming) -> Vec<String> {
    let base = &settings.run_dir;
    store::run_ids(base)
        .into_iter()
        .filter(|id| {
            let path = store::run_dir(base, id).join(store::JOURNAL_FILE);
            let Ok(read) = store::read_journal(&path) else {
                return false;
            };
            let state = FlowState::fold(read.records.iter());
            if state.status.is_some() || state.waiting.is_none() {
                return false;
            }
            let open: Vec<&Question> = (state.open_questions.values())
                .filter(|q| q.approval.is_some())
                .collect();
            if open.is_empty() {
                return false;
            }
            let Some(app) = started_app(settings.app.as_ref(), &read.records) else {
                return false;
            };
            let Some(app) = crate::app::registry::find(&app, &settings.apps_dir) else {
                return false;
            };
            let loaded = crate::app::load_app(&app);
            open.into_iter()
                .any(|q| graph_decision(&loaded, id, q).is_some())
        })
        .collect()
}
