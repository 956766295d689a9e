//! The settings of a model endpoint, resolved from the flow config's `llm:` block, a
//! control point's own `llm:` block and the environment (`CUGA_FLO_LLM_BASE_URL`,
//! `CUGA_FLO_LLM_MODEL`, `CUGA_FLO_LLM_API_KEY`). The API key only ever comes from the
//! environment and is held in a [`Secret`] that never prints.

use std::time::Duration;

use super::ResponseFormat;
use crate::app::{BudgetConfig, FlowConfig, LlmConfig};
pub use crate::secret::Secret;

/// Limits on model use. `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// Model calls (each HTTP-level retry is part of one call).
    pub calls: Option<u32>,
    /// Prompt + completion tokens, as the server reports them.
    pub tokens: Option<u64>,
    /// Wall time spent in model calls.
    pub time: Option<Duration>,
}

impl Budget {
    pub fn is_unlimited(&self) -> bool {
        self.calls.is_none() && self.tokens.is_none() && self.time.is_none()
    }
}

/// Default total timeout of one HTTP request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default retries of one call on 429, 5xx, timeouts and connection failures.
pub const DEFAULT_RETRIES: u32 = 2;
/// Default first backoff (doubled per retry, capped at [`MAX_BACKOFF`]).
pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between retries (also caps a server's `Retry-After`).
pub const MAX_BACKOFF: Duration = Duration::from_secs(20);
/// Default asks per control point when answers are invalid (1 + re-asks).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Requests in flight at once to a remote endpoint by default (per endpoint, per process).
pub const DEFAULT_MAX_CONCURRENCY: u32 = 16;
/// Where `provider: openai` goes when no base URL is configured.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// Everything needed to call one model.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmSettings {
    /// The API root, without a trailing slash (`http://127.0.0.1:11434/v1`); requests go
    /// to `{base_url}/chat/completions`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<Secret>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
    pub response_format: ResponseFormat,
    /// Ask for OpenAI's strict structured outputs (the schema then loses its length
    /// limits, which strict mode does not accept). Default: on for OpenAI's own endpoint,
    /// off elsewhere (servers with grammars enforce the limits; others ignore `strict`).
    pub strict: bool,
    pub connect_timeout: Duration,
    /// Total time allowed for one HTTP request.
    pub timeout: Duration,
    pub retries: u32,
    /// Requests in flight at once to this endpoint, over every run of the process (more
    /// wait their turn before they are sent, so the request timeout never counts the wait).
    /// Default: 1 for a server on this machine (llama.cpp and Ollama work one request at a
    /// time: a second one only queues there, and times out), [`DEFAULT_MAX_CONCURRENCY`]
    /// otherwise and for vLLM or LiteLLM, which batch or fan out.
    pub max_concurrency: u32,
    pub backoff: Duration,
    /// Asks per control point when answers are invalid (1 + re-asks).
    pub max_attempts: u32,
    /// Limits over the whole run.
    pub run_budget: Budget,
    /// Limits per control point visit.
    pub control_point_budget: Budget,
}

impl LlmSettings {
    /// Settings for `model` at `base_url` with every default.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> LlmSettings {
        let base_url = base_url.into().trim_end_matches('/').to_string();
        LlmSettings {
            strict: base_url == OPENAI_BASE_URL,
            base_url,
            model: model.into(),
            api_key: None,
            temperature: None,
            max_tokens: None,
            seed: None,
            response_format: ResponseFormat::Auto,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            retries: DEFAULT_RETRIES,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            backoff: DEFAULT_BACKOFF,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            run_budget: Budget::default(),
            control_point_budget: Budget::default(),
        }
    }

    /// `{base_url}/chat/completions`.
    pub fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

/// Environment variables that override the config (the operator's word wins).
pub const ENV_BASE_URL: &str = "CUGA_FLO_LLM_BASE_URL";
pub const ENV_MODEL: &str = "CUGA_FLO_LLM_MODEL";
pub const ENV_API_KEY: &str = "CUGA_FLO_LLM_API_KEY";
/// How many requests go to one endpoint at once (`max_concurrency`), for every app the
/// process runs: what a server's operator sizes to the model server behind it.
pub const ENV_MAX_CONCURRENCY: &str = "CUGA_FLO_LLM_MAX_CONCURRENCY";

/// Why model settings could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {message}")]
pub struct SettingsError {
    /// `llm` or `the llm of gateway \`G\``.
    pub what: String,
    pub message: String,
}

/// The base URL a provider answers at when none is configured.
pub fn provider_base_url(provider: &str) -> Option<&'static str> {
    match provider {
        "openai" => Some(OPENAI_BASE_URL),
        "ollama" => Some("http://127.0.0.1:11434/v1"),
        "vllm" => Some("http://127.0.0.1:8000/v1"),
        "llamacpp" => Some("http://127.0.0.1:8080/v1"),
        "litellm" => Some("http://127.0.0.1:4000/v1"),
        _ => None,
    }
}

/// How many requests go to `base_url` at once when the config does not say: one for a
/// server on this machine (a loopback host), unless it is a server known to batch (vLLM) or
/// a gateway to remote models (LiteLLM).
pub fn default_concurrency(base_url: &str, provider: Option<&str>) -> u32 {
    if matches!(provider, Some("vllm" | "litellm")) {
        return DEFAULT_MAX_CONCURRENCY;
    }
    // The URL's host (`[::1]` without its brackets), as the HTTP client will read it.
    let host = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_owned()));
    let loopback = host.is_some_and(|h| {
        h == "localhost"
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    if loopback { 1 } else { DEFAULT_MAX_CONCURRENCY }
}

/// Whether the process has a model to talk to at all: an `llm:` block in the config (at
/// app level or on a control point) or the base-URL override in the environment.
pub fn configured(config: &FlowConfig, env: &dyn Fn(&str) -> Option<String>) -> bool {
    config.llm.is_some()
        || env(ENV_BASE_URL).is_some_and(|v| !v.trim().is_empty())
        || config.tasks.iter().any(|t| t.llm.is_some())
        || config.gateways.iter().any(|g| g.llm.is_some())
        || config.hooks.iter().any(|h| h.llm.is_some())
}

/// The settings of one control point: the environment's overrides, then the control
/// point's own `llm:` block, then the app's, then the defaults. `what` names the control
/// point in messages.
pub fn resolve(
    app: Option<&LlmConfig>,
    own: Option<&LlmConfig>,
    env: &dyn Fn(&str) -> Option<String>,
    what: &str,
) -> Result<LlmSettings, SettingsError> {
    let error = |message: String| SettingsError {
        what: what.to_string(),
        message,
    };
    let env_value = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    // The first of (own, app) that sets a key.
    macro_rules! pick {
        ($field:ident) => {
            own.and_then(|c| c.$field.as_ref())
                .or_else(|| app.and_then(|c| c.$field.as_ref()))
        };
    }
    let provider = pick!(provider).map(|p| p.value.clone());
    let base_url = match env_value(ENV_BASE_URL) {
        Some(url) => url,
        None => match pick!(base_url) {
            Some(url) => url.value.clone(),
            None => match provider.as_deref() {
                Some(p) => provider_base_url(p)
                    .ok_or_else(|| {
                        error(format!(
                            "provider `{p}` has no known address: set `base_url` or {ENV_BASE_URL}"
                        ))
                    })?
                    .to_string(),
                None => {
                    return Err(error(format!(
                        "no endpoint: set `provider` or `base_url` under `llm:`, or {ENV_BASE_URL}"
                    )));
                }
            },
        },
    };
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(error(format!(
            "`{}` is not an http:// or https:// URL",
            crate::secret::without_userinfo(&base_url)
        )));
    }
    let model = match env_value(ENV_MODEL) {
        Some(m) => m,
        None => pick!(model).map(|m| m.value.clone()).ok_or_else(|| {
            error(format!(
                "no model named: set `model` under `llm:`, or {ENV_MODEL}"
            ))
        })?,
    };
    let mut s = LlmSettings::new(base_url, model);
    s.api_key = match env_value(ENV_API_KEY) {
        Some(key) => Some(Secret::new(key)),
        None => match pick!(api_key_env) {
            Some(var) => Some(Secret::new(env_value(&var.value).ok_or_else(|| {
                error(format!(
                    "`api_key_env` names `{}`, which is not set in the environment",
                    var.value
                ))
            })?)),
            None if provider.as_deref() == Some("openai") || s.base_url == OPENAI_BASE_URL => Some(
                Secret::new(env_value("OPENAI_API_KEY").ok_or_else(|| {
                    error(format!(
                        "no API key for {}: set OPENAI_API_KEY or {ENV_API_KEY}, or name \
                         another variable with `api_key_env`",
                        s.base_url
                    ))
                })?),
            ),
            None => None,
        },
    };
    if provider.as_deref() == Some("openai") {
        s.strict = true;
    }
    if let Some(strict) = pick!(strict) {
        s.strict = strict.value;
    }
    s.temperature = pick!(temperature).map(|t| t.value);
    s.max_tokens = pick!(max_tokens).map(|t| u32::try_from(t.value).unwrap_or(u32::MAX));
    s.seed = pick!(seed).map(|t| t.value);
    if let Some(f) = pick!(response_format) {
        s.response_format = ResponseFormat::parse(&f.value)
            .ok_or_else(|| error(format!("unknown response_format `{}`", f.value)))?;
    }
    if let Some(t) = pick!(timeout) {
        s.timeout = Duration::from_secs_f64(t.value);
    }
    if let Some(t) = pick!(connect_timeout) {
        s.connect_timeout = Duration::from_secs_f64(t.value);
    }
    if let Some(r) = pick!(retries) {
        s.retries = u32::try_from(r.value).unwrap_or(u32::MAX);
    }
    s.max_concurrency = match env_value(ENV_MAX_CONCURRENCY) {
        Some(n) => match n.trim().parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(error(format!(
                    "{ENV_MAX_CONCURRENCY}={n} is not a whole number of requests above 0"
                )));
            }
        },
        None => match app.and_then(|c| c.max_concurrency.as_ref()) {
            Some(n) => u32::try_from(n.value).unwrap_or(u32::MAX).max(1),
            None => default_concurrency(&s.base_url, provider.as_deref()),
        },
    };
    if let Some(a) = pick!(max_attempts) {
        s.max_attempts = u32::try_from(a.value).unwrap_or(u32::MAX).max(1);
    }
    s.run_budget = app
        .and_then(|c| c.budget.as_ref())
        .map(budget)
        .unwrap_or_default();
    s.control_point_budget = own
        .and_then(|c| c.budget.as_ref())
        .or_else(|| app.and_then(|c| c.control_point_budget.as_ref()))
        .map(budget)
        .unwrap_or_default();
    Ok(s)
}

fn budget(b: &BudgetConfig) -> Budget {
    Budget {
        calls: b
            .calls
            .as_ref()
            .map(|c| u32::try_from(c.value).unwrap_or(u32::MAX)),
        tokens: b.tokens.as_ref().map(|t| t.value),
        time: b.seconds.as_ref().map(|s| Duration::from_secs_f64(s.value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CUGA_FLO_LLM_MAX_CONCURRENCY` sets every endpoint's limit over the config's (and the
    /// loopback default of one); a value that is not a count above 0 is refused, not ignored.
    #[test]
    fn the_environment_sets_how_many_requests_go_at_once() {
        let resolved = |value: Option<&str>| {
            let env = |name: &str| match name {
                ENV_BASE_URL => Some("http://127.0.0.1:8080/v1".to_string()),
                ENV_MODEL => Some("m".to_string()),
                ENV_MAX_CONCURRENCY => value.map(str::to_string),
                _ => None,
            };
            resolve(None, None, &env, "`llm`")
        };
        assert_eq!(resolved(None).unwrap().max_concurrency, 1);
        assert_eq!(resolved(Some("16")).unwrap().max_concurrency, 16);
        for bad in ["0", "-2", "many"] {
            let err = resolved(Some(bad)).unwrap_err();
            assert!(
                err.message.contains(ENV_MAX_CONCURRENCY) && err.message.contains(bad),
                "{err}"
            );
        }
    }
}
