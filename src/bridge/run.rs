//! The contract between the one who starts a run and the engine that performs it: the
//! run to perform ([`RunRequest`], possibly a [`Resume`]), how it ended ([`RunOutcome`]),
//! and the [`WorkflowEngine`] trait every engine implements. No transport here: the MCP
//! transport ([`crate::mcp`]) carries the same contract between processes.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::child::{ChildRuns, ParentRun};
use super::{BoxFuture, ControlPoints, FlowAnnotations, Taint, Untrusted};
use crate::bpmn::Process;
use crate::journal::EventSink;
use crate::vocab::RunStatus;

/// The default step budget: node entries allowed in one run.
pub const DEFAULT_STEP_BUDGET: u64 = 10_000;

/// One run to perform.
#[derive(Clone)]
pub struct RunRequest {
    pub run_id: String,
    pub process_key: String,
    pub process: Arc<Process>,
    pub annotations: FlowAnnotations,
    pub variables: Map<String, Value>,
    /// Which of `variables` are untrusted, and where each came from; `None`: unknown (a
    /// run journalled before provenance was recorded), and the harness over-approximates.
    pub untrusted: Option<Untrusted>,
    /// Continue a run from its journal instead of starting it (see [`Resume`]).
    pub resume: Option<Arc<Resume>>,
    /// Who runs the processes its call activities call (`None`: a call activity that
    /// names a process fails the run).
    pub children: Option<Arc<dyn ChildRuns>>,
    /// A child run: the run and call activity that called it.
    pub parent: Option<ParentRun>,
    /// Where the engine shows, each time it starts waiting (for a control point's answer
    /// or a timer), the messages and signals the run waits for: whoever stops the run
    /// there (Ctrl-C) parks it with them (`run_waiting.awaiting`). `None`: nobody looks.
    pub awaiting: Option<Arc<Awaiting>>,
    /// Take over this instance of the engine, started outside cuga-flo (Flowable's REST
    /// API or UI), instead of starting one: the run is journalled from there on. Only an
    /// engine that keeps its instances (Flowable) can; the others refuse the run.
    pub adopt: Option<String>,
    /// When the engine stops answering mid-run, park the run (due at once, the instance
    /// left as it is) instead of failing it: a worker fleet resumes it through another
    /// node of the engine's cluster, or once the engine is back.
    pub lost_parks: bool,
}

/// What a run waits for right now (see [`RunRequest::awaiting`]).
pub type Awaiting = std::sync::Mutex<Vec<crate::journal::event::Awaited>>;

/// A run to continue: the records its journal holds. The engine re-executes the run from
/// them (answering from the journal what was answered, and checking what it derives
/// against it), writes nothing it finds journalled, and goes on from where the journal
/// ends. `variables` of the request are the run's initial ones.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    pub records: Vec<crate::journal::Record>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub message: Option<String>,
    pub variables: Map<String, Value>,
    /// Node entries.
    pub steps: u64,
    /// The node ids entered, in order.
    pub path: Vec<String>,
}

impl RunRequest {
    /// A run of `process`: its variables are the config's defaults (`annotations.variables`)
    /// overridden by the run's own `variables`. Those of the run's variables that differ
    /// from their default (or have none) are untrusted run inputs; a caller that knows
    /// better where each came from sets [`RunRequest::untrusted`] itself.
    pub fn new(
        run_id: String,
        process_key: String,
        process: Arc<Process>,
        annotations: FlowAnnotations,
        variables: Map<String, Value>,
        resume: Option<Arc<Resume>>,
    ) -> RunRequest {
        let untrusted = variables
            .iter()
            .filter(|(name, value)| annotations.variables.get(*name) != Some(*value))
            .map(|(name, _)| (name.clone(), Taint::input("from the run's inputs")))
            .collect();
        let mut vars = annotations.variables.clone();
        vars.extend(variables);
        RunRequest {
            run_id,
            process_key,
            process,
            annotations,
            variables: vars,
            untrusted: Some(untrusted),
            resume,
            children: None,
            parent: None,
            awaiting: None,
            adopt: None,
            lost_parks: false,
        }
    }

    /// The run's `run_started` event on `engine` (the app and the source of judgement are
    /// filled in by the journal's owner).
    pub(crate) fn started(&self, engine: &str) -> crate::journal::Event {
        crate::journal::Event::RunStarted {
            run_id: self.run_id.clone(),
            app: self.process_key.clone(),
            process_key: self.process_key.clone(),
            process_id: self.process.id.clone(),
            engine: engine.into(),
            reasoner: String::new(),
            variables: self.variables.clone(),
            untrusted: self.untrusted.clone(),
            launch: None,
            app_digest: None,
            parent: self.parent.clone(),
            trace: None,
        }
    }
}

impl RunOutcome {
    /// The run's `run_finished` event.
    pub(crate) fn finished(&self) -> crate::journal::Event {
        crate::journal::Event::RunFinished {
            status: self.status,
            message: self.message.clone(),
            variables: self.variables.clone(),
            steps: self.steps,
        }
    }
}

/// An engine could not run at all (as opposed to a run that failed, which is an outcome).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("the journal could not be written: {0}")]
    Journal(String),
    #[error("{0}")]
    Model(String),
    /// This engine does not run processes here.
    #[error("{0}")]
    Refused(String),
    /// A resumed run does not re-execute as its journal says (the app or the engine
    /// changed since): nothing was written.
    #[error("the run cannot be resumed: {0}")]
    Diverged(String),
}

/// Why an engine's server cannot be reached now (its URL and the causes kept; the
/// engine's own error).
pub type Unreachable = Box<dyn std::error::Error + Send + Sync>;

pub trait WorkflowEngine: Send + Sync {
    fn name(&self) -> &'static str;
    /// Run to the end. Every control point goes through `control_points`; every event is
    /// emitted to `events` before its effect is visible.
    fn run(
        &self,
        request: RunRequest,
        control_points: Arc<dyn ControlPoints>,
        events: Arc<dyn EventSink>,
    ) -> BoxFuture<'static, Result<RunOutcome, EngineError>>;

    /// Whether the engine answers now (for the process with `process_id`): a run resumed
    /// on an engine that owns its tokens checks it before anything is written. `Err`
    /// names the engine's URL and what went wrong.
    fn reachable(&self, _process_id: &str) -> BoxFuture<'static, Result<(), Unreachable>> {
        Box::pin(async { Ok(()) })
    }
}
