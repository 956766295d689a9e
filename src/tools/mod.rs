//! Tools a task agent may call: the tool sources of an app's flow config (`mcp_servers:`,
//! `openapi:`), reached when first used and kept for the run.
//!
//! This module only reaches tools: it lists what a source offers ([`ToolSpec`], with what
//! its annotations and the config say about confirming and repeating its calls) and makes
//! one call ([`Toolbox::call`]). Which tools a task may call, who confirms a call, what is
//! journalled and what a resumed run repeats is the harness's business
//! (`harness::tools`); the conversation with the model is the reasoner's.
//!
//! - [`mcp`]: an MCP server over stdio (a child process started for the run, with a
//!   minimal environment) or over streamable HTTP (a bearer token from the environment).
//! - [`openapi`]: an HTTP API described by an OpenAPI 3 document, each operation a tool.

pub mod lock;
pub mod mcp;
pub mod openapi;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::app::{Confirm, FlowConfig, ToolSourceConfig, ToolSourceKind};

/// How long one call may take when the source's config does not say.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a source may take to start (stdio) or answer `initialize` when its config
/// does not say.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of a tool's result the model (and the journal) is given; the rest is cut,
/// saying so.
pub const MAX_RESULT_BYTES: usize = 32 * 1024;
/// The separator of a tool's name as a model sees it (`<source>__<tool>`: function names
/// may not hold dots).
pub const MODEL_NAME_SEPARATOR: &str = "__";

/// One tool of a source, as offered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The source's name in the config.
    pub source: String,
    /// The tool's own name (an MCP tool's name, an operation's `operationId`).
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The JSON Schema of its arguments, exactly as the source declares it.
    pub input_schema: Value,
    /// It changes nothing (MCP `readOnlyHint`; an HTTP GET, HEAD or OPTIONS).
    pub read_only: bool,
    /// It may destroy or overwrite (MCP `destructiveHint`, true unless said otherwise for
    /// a tool that is not read-only; an HTTP DELETE, PUT or PATCH).
    pub destructive: bool,
    /// Repeating a call with the same arguments has no further effect (MCP
    /// `idempotentHint`, or read-only; HTTP GET, HEAD, OPTIONS, PUT, DELETE), or the
    /// config's `idempotent:`.
    pub idempotent: bool,
    /// The config's `confirm:` for it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Confirm>,
}

impl ToolSpec {
    /// `<source>.<tool>`: how configs, journals and people name it.
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.source, self.name)
    }

    /// How the model names it: `<source>__<tool>`, with every character a function name
    /// may not hold replaced by `_`, at most 64 characters.
    pub fn model_name(&self) -> String {
        model_name(&self.source, &self.name)
    }

    /// Whether a person confirms each call before it is made: `confirm: true` always,
    /// `confirm: never` never, else a destructive tool's calls.
    pub fn needs_confirmation(&self) -> bool {
        match self.confirm {
            Some(Confirm::Always) => true,
            Some(Confirm::Never) => false,
            None => self.destructive,
        }
    }

    /// Apply the config's settings for this tool (`tools: {<name>: {...}}` of its source).
    fn configured(mut self, source: &ToolSourceConfig) -> ToolSpec {
        if let Some(setting) = source.setting(&self.name) {
            if let Some(i) = &setting.idempotent {
                self.idempotent = i.value;
            }
            self.confirm = setting.confirm.as_ref().map(|c| c.value);
        }
        self
    }
}

/// How a model names tool `tool` of `source`: `<source>__<tool>`, every character a
/// function name may not hold replaced by `_`, at most 64 characters.
/// The bearer token of source `source` from `token_env` (none when it names no variable);
/// a named variable that is unset or empty is an error.
fn bearer_token(
    source: &str,
    token_env: Option<&crate::app::Located<String>>,
    env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
) -> Result<Option<crate::secret::Secret>, ToolError> {
    let Some(var) = token_env else {
        return Ok(None);
    };
    env(&var.value)
        .filter(|t| !t.is_empty())
        .map(|t| Some(crate::secret::Secret::new(t)))
        .ok_or_else(|| ToolError::MissingSecret {
            server: source.to_string(),
            var: var.value.clone(),
        })
}

pub fn model_name(source: &str, tool: &str) -> String {
    format!("{source}{MODEL_NAME_SEPARATOR}{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// What a tool answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolReply {
    /// The result as text for the model (its text content, or its structured content as
    /// JSON), cut at [`MAX_RESULT_BYTES`].
    pub text: String,
    /// The tool reports an error (MCP `isError`, an HTTP status of 400 or more): the model
    /// is given it and may recover.
    pub is_error: bool,
}

impl ToolReply {
    fn new(text: String, is_error: bool) -> ToolReply {
        ToolReply {
            text: cut(text, MAX_RESULT_BYTES),
            is_error,
        }
    }
}

/// `text` cut at `max` bytes (on a character boundary), saying how much was left out.
pub fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let total = text.len();
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("… [cut: {total} bytes in all]"));
    text
}

/// Why a source or a call failed (not a tool's own error, which is a [`ToolReply`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("no tool source `{0}` is declared (`mcp_servers:` or `openapi:`)")]
    UnknownSource(String),
    #[error("tool source `{server}` offers no tool `{tool}`{known}")]
    UnknownTool {
        server: String,
        tool: String,
        /// ": it offers a, b, c" (or empty).
        known: String,
    },
    #[error("tool source `{server}` cannot be started: {message}{}", stderr_tail(.stderr))]
    Start {
        server: String,
        message: String,
        /// The last lines the server wrote to stderr.
        stderr: String,
    },
    #[error("tool `{tool}` did not answer within {secs} s")]
    Timeout { tool: String, secs: u64 },
    #[error("tool `{tool}` failed: {message}{}", stderr_tail(.stderr))]
    Call {
        tool: String,
        message: String,
        stderr: String,
    },
    #[error("the OpenAPI document of `{server}` cannot be used: {message}")]
    Spec { server: String, message: String },
    #[error("tool source `{server}` needs ${var}, which is not set")]
    MissingSecret { server: String, var: String },
}

fn stderr_tail(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with:\n{}", stderr.trim_end())
    }
}

/// A connected source.
enum Conn {
    Mcp(mcp::Session),
    OpenApi(openapi::Api),
}

/// One declared source and, once reached, its connection and tools.
struct Source {
    config: ToolSourceConfig,
    /// The config's folder: relative paths start there.
    base: PathBuf,
    conn: tokio::sync::OnceCell<Result<(Conn, Vec<ToolSpec>), ToolError>>,
}

/// Where a secret named by `token_env` or `pass_env` is read: the process's environment,
/// or a test's.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The tool sources of one app, reached when first used, kept until dropped (a stdio
/// server is stopped then).
pub struct Toolbox {
    sources: HashMap<String, Arc<Source>>,
    /// Where a secret comes from (the process's environment, or a test's).
    env: EnvLookup,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.sources.keys().collect();
        names.sort();
        f.debug_struct("Toolbox").field("sources", &names).finish()
    }
}

impl Toolbox {
    /// The tool sources `config` declares; none is reached yet.
    pub fn of(config: &FlowConfig) -> Toolbox {
        let base = config
            .source
            .path()
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        let sources = config
            .tool_sources
            .iter()
            .map(|s| {
                (
                    s.name.value.clone(),
                    Arc::new(Source {
                        config: s.clone(),
                        base: base.clone(),
                        conn: tokio::sync::OnceCell::new(),
                    }),
                )
            })
            .collect();
        Toolbox {
            sources,
            env: Arc::new(|name| std::env::var(name).ok()),
        }
    }

    /// Read secrets through `env` instead of the process's environment.
    pub fn with_env(mut self, env: EnvLookup) -> Self {
        self.env = env;
        self
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The names of the declared sources, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.sources.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// How to name, for people, a tool the model asked for by `model_name`: `source.tool`
    /// when the name starts with a declared source's, else as asked.
    pub fn display_name(&self, model_name: &str) -> String {
        self.sources
            .keys()
            .find_map(|source| {
                let rest = model_name.strip_prefix(source.as_str())?;
                let tool = rest.strip_prefix(MODEL_NAME_SEPARATOR)?;
                (!tool.is_empty()).then(|| format!("{source}.{tool}"))
            })
            .unwrap_or_else(|| model_name.to_string())
    }

    fn source(&self, name: &str) -> Result<&Arc<Source>, ToolError> {
        self.sources
            .get(name)
            .ok_or_else(|| ToolError::UnknownSource(name.to_string()))
    }

    /// Reach `source` (once) and list its tools.
    async fn reach(&self, name: &str) -> Result<&(Conn, Vec<ToolSpec>), ToolError> {
        let source = self.source(name)?;
        source
            .conn
            .get_or_init(|| async {
                let connect = source
                    .config
                    .connect_timeout
                    .as_ref()
                    .map_or(DEFAULT_CONNECT_TIMEOUT, |t| t.value);
                let (conn, tools) = match &source.config.kind {
                    ToolSourceKind::OpenApi { .. } => {
                        let api = openapi::Api::open(&source.config, &source.base, &*self.env)?;
                        let tools = api.tools();
                        (Conn::OpenApi(api), tools)
                    }
                    _ => {
                        let session =
                            mcp::Session::open(&source.config, &source.base, &*self.env, connect)
                                .await?;
                        let tools = session.tools().await?;
                        (Conn::Mcp(session), tools)
                    }
                };
                let tools = tools
                    .into_iter()
                    .map(|t| t.configured(&source.config))
                    .collect();
                Ok((conn, tools))
            })
            .await
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Every tool `source` offers (it is reached first when it was not yet).
    pub async fn tools(&self, source: &str) -> Result<Vec<ToolSpec>, ToolError> {
        Ok(self.reach(source).await?.1.clone())
    }

    /// Every source's tools, each source reached (one that cannot be is given with why),
    /// in the order of their names; the tools sorted by name, as the source declares them
    /// (without the config's settings: what a lock records).
    pub async fn list(&self) -> Vec<(String, Result<Vec<ToolSpec>, ToolError>)> {
        let mut out = Vec::new();
        for name in self.names() {
            let listed = self.tools(name).await.map(|mut tools| {
                for t in &mut tools {
                    t.confirm = None;
                }
                tools.sort_by(|a, b| a.name.cmp(&b.name));
                tools
            });
            out.push((name.to_string(), listed));
        }
        out
    }

    /// One tool of `source`.
    pub async fn tool(&self, source: &str, tool: &str) -> Result<ToolSpec, ToolError> {
        let (_, tools) = self.reach(source).await?;
        tools
            .iter()
            .find(|t| t.name == tool)
            .cloned()
            .ok_or_else(|| ToolError::UnknownTool {
                server: source.to_string(),
                tool: tool.to_string(),
                known: known(tools),
            })
    }

    /// Call `tool` of `source` with `arguments`, within the source's timeout.
    /// `idempotency_key` names the call (run, task visit, call): sent along (MCP `_meta`,
    /// HTTP `Idempotency-Key`) so a server can tell a repeated call from a new one.
    pub async fn call(
        &self,
        source: &str,
        tool: &str,
        arguments: Value,
        idempotency_key: &str,
    ) -> Result<ToolReply, ToolError> {
        let config = &self.source(source)?.config;
        let timeout = config
            .timeout
            .as_ref()
            .map_or(DEFAULT_CALL_TIMEOUT, |t| t.value);
        let qualified = format!("{source}.{tool}");
        let (conn, _) = self.reach(source).await?;
        let call = async {
            match conn {
                Conn::Mcp(session) => session.call(tool, arguments, idempotency_key).await,
                Conn::OpenApi(api) => api.call(tool, arguments, idempotency_key).await,
            }
        };
        match tokio::time::timeout(timeout, call).await {
            Ok(result) => result.map_err(|e| match e {
                ToolError::Call {
                    message, stderr, ..
                } => ToolError::Call {
                    tool: qualified,
                    message,
                    stderr,
                },
                other => other,
            }),
            Err(_) => Err(ToolError::Timeout {
                tool: qualified,
                secs: timeout.as_secs().max(1),
            }),
        }
    }
}

/// What each of a config's sources is known to offer without reaching it, with the
/// config's settings applied: an OpenAPI source's operations (its document is read), an
/// MCP server's tools from the tools lock beside the config (`None` when it has no entry
/// there). An unreadable lock or OpenAPI document is given as an error, by where it was
/// found (`None`: the lock).
pub struct Known {
    pub sources: std::collections::BTreeMap<String, Option<Vec<ToolSpec>>>,
    pub lock_error: Option<String>,
    /// (source, why) for each OpenAPI document that cannot be read.
    pub openapi_errors: Vec<(String, ToolError)>,
}

impl Known {
    pub fn of(config: &FlowConfig) -> Known {
        let path = config.source.path();
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        let (lock, lock_error) = match lock::Lock::read_beside(path) {
            Ok(l) => (l, None),
            Err(why) => (None, Some(crate::diag::chain(&why))),
        };
        let mut sources = std::collections::BTreeMap::new();
        let mut openapi_errors = Vec::new();
        for s in &config.tool_sources {
            let tools = match &s.kind {
                ToolSourceKind::OpenApi { .. } => match openapi::specs(s, base) {
                    Ok(specs) => Some(specs),
                    Err(e) => {
                        openapi_errors.push((s.name.value.clone(), e));
                        None
                    }
                },
                _ => lock
                    .as_ref()
                    .and_then(|l| l.sources.get(&s.name.value))
                    .cloned(),
            };
            let tools = tools.map(|ts| ts.into_iter().map(|t| t.configured(s)).collect());
            sources.insert(s.name.value.clone(), tools);
        }
        Known {
            sources,
            lock_error,
            openapi_errors,
        }
    }

    /// The tools a task's `tools:` entry names, when known (`None`: its source is not
    /// declared, or what it offers is not known; a tool it does not offer is left out).
    pub fn named(&self, entry: &str) -> Option<Vec<ToolSpec>> {
        let r = ToolRef::parse(entry);
        let tools = self.sources.get(r.source()?)?.as_ref()?;
        Some(match r {
            ToolRef::One { tool, .. } => tools.iter().filter(|t| t.name == tool).cloned().collect(),
            _ => tools.clone(),
        })
    }
}

/// ": it offers a, b and c" for an unknown tool's message.
fn known(tools: &[ToolSpec]) -> String {
    if tools.is_empty() {
        return ": it offers none".to_string();
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    format!(": it offers {}", crate::diag::name_list(&names, 12))
}

/// What a task's `tools:` entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRef<'a> {
    /// A built-in tool (`read_variable`, `consult_user`).
    Builtin(&'a str),
    /// `<source>.<tool>`.
    One { source: &'a str, tool: &'a str },
    /// `<source>.*`.
    All { source: &'a str },
}

impl<'a> ToolRef<'a> {
    /// Read an entry: `a.b` names tool `b` of source `a` (the first dot splits: a tool's
    /// own name may hold dots), `a.*` all of `a`'s, anything else a built-in tool.
    pub fn parse(entry: &'a str) -> ToolRef<'a> {
        match entry.split_once('.') {
            Some((source, "*")) => ToolRef::All { source },
            Some((source, tool)) if !source.is_empty() && !tool.is_empty() => {
                ToolRef::One { source, tool }
            }
            _ => ToolRef::Builtin(entry),
        }
    }

    pub fn source(&self) -> Option<&'a str> {
        match self {
            ToolRef::One { source, .. } | ToolRef::All { source } => Some(source),
            ToolRef::Builtin(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(read_only: bool, destructive: bool, confirm: Option<Confirm>) -> ToolSpec {
        ToolSpec {
            source: "hr".into(),
            name: "revoke.access".into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            read_only,
            destructive,
            idempotent: false,
            confirm,
        }
    }

    #[test]
    fn entries_name_one_tool_all_of_a_source_or_a_builtin() {
        assert_eq!(
            ToolRef::parse("hr.lookup"),
            ToolRef::One {
                source: "hr",
                tool: "lookup"
            }
        );
        assert_eq!(
            ToolRef::parse("api.v1.get"),
            ToolRef::One {
                source: "api",
                tool: "v1.get"
            }
        );
        assert_eq!(ToolRef::parse("hr.*"), ToolRef::All { source: "hr" });
        assert_eq!(
            ToolRef::parse("read_variable"),
            ToolRef::Builtin("read_variable")
        );
        assert_eq!(ToolRef::parse(".x"), ToolRef::Builtin(".x"));
    }

    #[test]
    fn model_names_hold_only_what_function_names_may() {
        let s = spec(true, false, None);
        assert_eq!(s.qualified(), "hr.revoke.access");
        assert_eq!(s.model_name(), "hr__revoke_access");
        let mut long = s.clone();
        long.name = "x".repeat(100);
        assert_eq!(long.model_name().len(), 64);
    }

    #[test]
    fn destructive_tools_are_confirmed_unless_the_config_opts_out() {
        assert!(!spec(true, false, None).needs_confirmation());
        assert!(spec(false, true, None).needs_confirmation());
        assert!(!spec(false, true, Some(Confirm::Never)).needs_confirmation());
        assert!(spec(true, false, Some(Confirm::Always)).needs_confirmation());
    }

    #[test]
    fn long_results_are_cut_on_a_character_boundary_saying_so() {
        let text = "é".repeat(10);
        let cut = cut(text, 5);
        assert!(cut.starts_with("éé"), "{cut}");
        assert!(cut.ends_with("[cut: 20 bytes in all]"), "{cut}");
        assert_eq!(super::cut("short".into(), 10), "short");
    }
}
