//! The settings of a model endpoint, resolved from the flow config's `llm:` block, a
//! control point's own `llm:` block and the environment (`CUGA_FLO_LLM_BASE_URL`,
//! `CUGA_FLO_LLM_MODEL`, `CUGA_FLO_LLM_API_KEY`). The API key only ever comes from the
//! environment and is held in a [`Secret`] that never prints.

use std::fmt;
use std::time::Duration;

use super::ResponseFormat;

/// A secret value (an API key). `Debug` and `Display` print `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, for the one place that sends it (the Authorization header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the secret replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

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
    pub connect_timeout: Duration,
    /// Total time allowed for one HTTP request.
    pub timeout: Duration,
    pub retries: u32,
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
        LlmSettings {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            model: model.into(),
            api_key: None,
            temperature: None,
            max_tokens: None,
            seed: None,
            response_format: ResponseFormat::Auto,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            retries: DEFAULT_RETRIES,
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
