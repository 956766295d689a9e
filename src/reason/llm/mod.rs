//! A model behind any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM,
//! llama.cpp's server, LiteLLM and gateways in front of other providers).
//!
//! - [`client`]: the HTTP side: one logical call with timeouts, retries with backoff on
//!   429/5xx, structured output (`json_schema`, falling back to `json_object` + schema,
//!   then to a schema in the prompt for servers that support neither), token usage.
//! - [`prompt`]: the prompts, as minijinja templates per control-point kind (overridable
//!   per app); process variables are fenced and labelled as untrusted data.
//! - [`answer`]: the JSON schema of each answer (enums are exactly the permitted flows,
//!   actions, targets and tasks) and the parsing of a reply into an answer, checked
//!   against what was offered; a problem is a message the model is re-asked with.
//! - [`reasoner`]: [`LlmReasoner`], the [`Reasoner`](super::Reasoner): ask, validate,
//!   re-ask a bounded number of times, keep within budgets, report every call.

pub mod answer;
pub mod client;
pub mod prompt;
pub mod reasoner;
pub mod settings;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use client::ChatClient;
pub use reasoner::LlmReasoner;
pub use settings::{Budget, LlmSettings, Secret, default_concurrency};

pub use crate::vocab::ResponseFormat;

/// Who wrote a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One chat message (the subset of the protocol cuga-flo sends and reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    #[serde(default)]
    pub content: Option<String>,
    /// Tools the assistant asked for (assistant messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers (tool messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    pub fn system(text: impl Into<String>) -> Self {
        Self::text(Role::System, text)
    }
    pub fn user(text: impl Into<String>) -> Self {
        Self::text(Role::User, text)
    }
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::text(Role::Assistant, text)
    }
    pub fn tool_result(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Tool,
            content: Some(text.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
    fn text(role: Role, text: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: Some(text.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A tool the model may call (a function tool).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: serde_json::Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (a JSON text, maybe malformed).
    pub arguments: String,
}

/// One logical request: messages, the answer's schema, tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    /// The answer's JSON schema.
    pub schema: Option<AnswerSchema>,
    pub tools: Vec<ToolDef>,
    /// The control point's idempotency key: sent as the `Idempotency-Key` header (and
    /// never in the prompt), so a server or gateway can recognise a question asked again
    /// after a crash.
    pub idempotency_key: Option<String>,
}

/// The JSON schema an answer must follow.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerSchema {
    /// A name for the schema (`gateway_choice`, `hook_decision`, `task_outputs`).
    pub name: String,
    pub schema: serde_json::Value,
    /// Whether the schema meets OpenAI's strict mode (every property required,
    /// `additionalProperties: false`, every value typed); sent as `strict`.
    pub strict: bool,
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// What the endpoint answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The assistant's text (None when it only called tools).
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish_reason: Option<String>,
    /// Wall time, retries included.
    pub latency: Duration,
    /// HTTP requests made (1 + retries + format fallbacks).
    pub http_attempts: u32,
    /// The structured-output form that was used.
    pub format: ResponseFormat,
}

/// Why a call gave no response. Messages never contain the API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("no answer from {url} within {secs} s")]
    Timeout {
        url: String,
        secs: u64,
        attempts: u32,
    },
    #[error("cannot reach {url}: {message}")]
    Connect {
        url: String,
        message: String,
        attempts: u32,
    },
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        /// An excerpt of the body (at most a few hundred characters).
        body: String,
        attempts: u32,
    },
    /// A 2xx response that is not a chat completion.
    #[error("{url} answered something that is not a chat completion: {message}")]
    Protocol {
        url: String,
        message: String,
        attempts: u32,
    },
    #[error("the call was cancelled")]
    Cancelled { attempts: u32 },
}

impl CallError {
    /// HTTP requests made before giving up.
    pub fn attempts(&self) -> u32 {
        match self {
            CallError::Timeout { attempts, .. }
            | CallError::Connect { attempts, .. }
            | CallError::Status { attempts, .. }
            | CallError::Protocol { attempts, .. }
            | CallError::Cancelled { attempts } => *attempts,
        }
    }
}
