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

/// Why an engine's settings cannot be made from the app's `workflow_engine:` block and
/// the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("the {0} engine needs a url (`workflow_engine.url` or --engine-url)")]
    NoUrl(EngineKind),
    #[error("the Flowable password is read from the environment variable `{0}`, which is not set")]
    NoPassword(String),
    #[error("`workflow_engine.token_env`: the environment variable `{0}` is not set")]
    NoToken(String),
    #[error("`workflow_engine.callback_host`: `{0}` has no address")]
    NoAddress(String),
    /// The URL (shown without its userinfo) is not one an engine answers at.
    #[error("the {kind} engine's url `{url}` is not an http(s) URL: {why}")]
    BadUrl {
        kind: EngineKind,
        url: String,
        why: String,
    },
}

/// The engine's URL: `url` (from `--engine-url`) when given, else the block's `url`.
pub(crate) fn engine_url(
    block: &EngineConfig,
    url: Option<&str>,
    kind: EngineKind,
) -> Result<String, SettingsError> {
    let url = (url.map(str::to_string))
        .or_else(|| block.url.as_ref().map(|u| u.value.clone()))
        .ok_or(SettingsError::NoUrl(kind))?;
    let bad = |why: String| SettingsError::BadUrl {
        kind,
        url: crate::secret::without_userinfo(&url),
        why,
    };
    match reqwest::Url::parse(url.trim()) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(url),
        Ok(u) => Err(bad(format!("the scheme is `{}`", u.scheme()))),
        Err(e) => Err(bad(e.to_string())),
    }
}

/// A duration in seconds from the config, or `default`.
pub(crate) fn seconds(value: &Option<Located<f64>>, default: Duration) -> Duration {
    value
        .as_ref()
        .map_or(default, |s| Duration::from_secs_f64(s.value))
}

/// Why the flows the harness chose are not a valid answer for a gateway.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    #[error("the harness chose no flow")]
    None,
    #[error("must take exactly one flow, the harness chose {}: {}", .0.len(), .0.join(", "))]
    NotOne(Vec<String>),
    #[error("the harness chose `{0}` twice")]
    Twice(String),
    #[error("the harness chose `{flow}`, which is not an outgoing flow (those are: {})", .outgoing.join(", "))]
    NotOutgoing { flow: String, outgoing: Vec<String> },
}

/// Whether `chosen` is a valid answer for a gateway of `kind` with `outgoing` flows:
/// exclusive and event-based gateways take exactly one flow, the others at least one;
/// every flow named once, and each an outgoing flow of the gateway.
pub(crate) fn check_choice(
    kind: GatewayKind,
    outgoing: &[&str],
    chosen: &[String],
) -> Result<(), ChoiceError> {
    let one = matches!(kind, GatewayKind::Exclusive | GatewayKind::EventBased);
    if chosen.is_empty() {
        return Err(ChoiceError::None);
    }
    if one && chosen.len() != 1 {
        return Err(ChoiceError::NotOne(chosen.to_vec()));
    }
    for (i, flow) in chosen.iter().enumerate() {
        if chosen[..i].contains(flow) {
            return Err(ChoiceError::Twice(flow.clone()));
        }
        if !outgoing.contains(&flow.as_str()) {
            return Err(ChoiceError::NotOutgoing {
                flow: flow.clone(),
                outgoing: outgoing.iter().map(|f| f.to_string()).collect(),
            });
        }
    }
    Ok(())
}
