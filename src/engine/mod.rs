//! Workflow engines move tokens through the BPMN graph and never reason: at every control
//! point they ask the harness through [`ControlPoints`], and they report what happens to an
//! [`EventSink`]. [`native`] is the in-process engine.

pub(crate) mod adapt;
pub mod external;
pub mod flowable;
pub(crate) mod http;
pub mod kogito;
pub mod native;
pub(crate) mod pull;
pub mod rewrite;
pub mod support;
pub(crate) mod topology;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::app::{EngineConfig, EngineKind, Located};
use crate::bpmn::{GatewayKind, Process};
use crate::bridge::{BoxFuture, ControlPoints, FlowAnnotations};
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
    /// Continue a run from its journal instead of starting it (see [`Resume`]).
    pub resume: Option<Arc<Resume>>,
}

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
    /// overridden by the run's own `variables`.
    pub fn new(
        run_id: String,
        process_key: String,
        process: Arc<Process>,
        annotations: FlowAnnotations,
        variables: Map<String, Value>,
        resume: Option<Arc<Resume>>,
    ) -> RunRequest {
        let mut vars = annotations.variables.clone();
        vars.extend(variables);
        RunRequest {
            run_id,
            process_key,
            process,
            annotations,
            variables: vars,
            resume,
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
            launch: None,
            app_digest: None,
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
    fn reachable(&self, _process_id: &str) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// The app's `workflow_engine:` block when it configures an engine of `kind`; when
/// `start --engine` chose another engine than the config's, the config's settings do not
/// apply (defaults do).
pub(crate) fn engine_block(config: &EngineConfig, kind: EngineKind) -> &EngineConfig {
    static DEFAULT: LazyLock<EngineConfig> = LazyLock::new(EngineConfig::default);
    if config.kind == kind {
        config
    } else {
        &DEFAULT
    }
}

/// The engine's URL: `url` (from `--engine-url`) when given, else the block's `url`.
pub(crate) fn engine_url(
    block: &EngineConfig,
    url: Option<&str>,
    kind: EngineKind,
) -> Result<String, String> {
    url.map(str::to_string)
        .or_else(|| block.url.as_ref().map(|u| u.value.clone()))
        .ok_or_else(|| {
            format!("the {kind} engine needs a url (`workflow_engine.url` or --engine-url)")
        })
}

/// A duration in seconds from the config, or `default`.
pub(crate) fn seconds(value: &Option<Located<f64>>, default: Duration) -> Duration {
    value
        .as_ref()
        .map_or(default, |s| Duration::from_secs_f64(s.value))
}

/// Whether `chosen` is a valid answer for a gateway of `kind` with `outgoing` flows:
/// exclusive and event-based gateways take exactly one flow, the others at least one;
/// every flow named once, and each an outgoing flow of the gateway.
pub(crate) fn check_choice(
    kind: GatewayKind,
    outgoing: &[&str],
    chosen: &[String],
) -> Result<(), String> {
    let one = matches!(kind, GatewayKind::Exclusive | GatewayKind::EventBased);
    if chosen.is_empty() {
        return Err("the harness chose no flow".into());
    }
    if one && chosen.len() != 1 {
        return Err(format!(
            "must take exactly one flow, the harness chose {}: {}",
            chosen.len(),
            chosen.join(", ")
        ));
    }
    for (i, flow) in chosen.iter().enumerate() {
        if chosen[..i].contains(flow) {
            return Err(format!("the harness chose `{flow}` twice"));
        }
        if !outgoing.contains(&flow.as_str()) {
            return Err(format!(
                "the harness chose `{flow}`, which is not an outgoing flow (those are: {})",
                outgoing.join(", ")
            ));
        }
    }
    Ok(())
}
