//! Workflow engines move tokens through the BPMN graph and never reason: at every control
//! point they ask the harness through [`ControlPoints`], and they report what happens to an
//! [`EventSink`]. [`native`] is the in-process engine; what every engine
//! shares is beside it ([`recall`]) or below it ([`crate::semantics`]): no engine reaches
//! into another's files.

pub(crate) mod adapt;
pub mod external;
pub mod flowable;
pub(crate) mod http;
pub mod kogito;
pub mod native;
pub(crate) mod pull;
pub mod recall;

use std::sync::LazyLock;
use std::time::Duration;

use crate::app::{EngineConfig, EngineKind, Located};
use crate::bpmn::GatewayKind;

pub use crate::bridge::run::{
    DEFAULT_STEP_BUDGET, EngineError, Resume, RunOutcome, RunRequest, WorkflowEngine,
};

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
