//! An MCP server's tools: a session over stdio (the server is a child process started for
//! the run) or over streamable HTTP.
//!
//! A stdio server gets no shell, runs in the config's folder (or its `cwd`), in a process
//! group of its own that is killed when the session ends, with a minimal environment:
//! PATH, HOME, LANG and the like, the variables its `pass_env` names and its `env`. It
//! never sees cuga-flo's own secrets (an API key, a bearer token) unless passed on purpose.
//! What it writes on stderr is logged (debug) and its last lines kept for an error.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use super::{ToolError, ToolReply, ToolSpec};
use crate::app::{ToolSourceConfig, ToolSourceKind};
use crate::secret::Secret;

/// The variables of cuga-flo's environment every stdio server gets (when set).
const BASE_ENV: [&str; 10] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR", "TZ",
];
/// The stderr lines kept for an error.
const STDERR_LINES: usize = 20;
/// The `_meta` key of a call's idempotency key.
pub const IDEMPOTENCY_META: &str = "io.cuga-flo/idempotency-key";

/// The last lines a server wrote on stderr.
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    fn text(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// A session with one MCP server.
pub struct Session {
    name: String,
    service: RunningService<RoleClient, ()>,
    /// A stdio server's process (killed, with its group, on drop) and stderr.
    child: Option<tokio::process::Child>,
    stderr: Tail,
    /// A streamable HTTP server's token, removed from what errors say.
    token: Option<Secret>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(child) = &self.child
            && let Some(pid) = child.id()
        {
            // The whole group: a server started through a wrapper script goes too.
            // SAFETY: kill(2) on a process group this session created; no memory is touched.
            unsafe {
                libc::kill(-(pid as i32), libc::SIGTERM);
            }
        }
    }
}

impl Session {
    /// Start (stdio) or reach (HTTP) the server of `config` and open a session, within
    /// `timeout`.
    pub async fn open(
        config: &ToolSourceConfig,
        base: &Path,
        env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
        timeout: Duration,
    ) -> Result<Session, ToolError> {
        let name = config.name.value.clone();
        let start_error = |message: String, stderr: String| ToolError::Start {
            server: name.clone(),
            message,
            stderr,
        };
        match &config.kind {
            ToolSourceKind::McpStdio {
                command,
                env: vars,
                pass_env,
                cwd,
            } => {
                let Some(program) = command.first() else {
                    return Err(start_error("`command` is empty".into(), String::new()));
                };
                let dir = match cwd {
                    Some(c) => base.join(&c.value),
                    None => base.to_path_buf(),
                };
                // `./server.py` is the config's; a bare name is looked up on PATH.
                let program =
                    if program.value.contains('/') && Path::new(&program.value).is_relative() {
                        dir.join(&program.value).to_string_lossy().into_owned()
                    } else {
                        program.value.clone()
                    };
                let mut cmd = tokio::process::Command::new(&program);
                cmd.args(command[1..].iter().map(|a| a.value.as_str()))
                    .current_dir(&dir)
                    .env_clear()
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true)
                    .process_group(0);
                for var in BASE_ENV
                    .iter()
                    .copied()
                    .chain(pass_env.iter().map(|p| p.value.as_str()))
                {
                    if let Some(value) = env(var) {
                        cmd.env(var, value);
                    }
                }
                for (k, v) in vars {
                    cmd.env(&k.value, &v.value);
                }
                let mut child = cmd.spawn().map_err(|e| {
                    start_error(
                        format!("`{program}` cannot be run (in {}): {e}", dir.display()),
                        String::new(),
                    )
                })?;
                let stderr = Tail::default();
                if let Some(pipe) = child.stderr.take() {
                    let tail = stderr.clone();
                    let server = name.clone();
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(pipe).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::debug!(target: "cuga_flo::tools", "{server}: {line}");
                            tail.push(line);
                        }
                    });
                }
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(start_error(
                        "its stdio cannot be opened".into(),
                        String::new(),
                    ));
                };
                match tokio::time::timeout(timeout, ().serve((stdout, stdin))).await {
                    Ok(Ok(service)) => Ok(Session {
                        name,
                        service,
                        child: Some(child),
                        stderr,
                        token: None,
                    }),
                    Ok(Err(e)) => {
                        // Give its last words a moment to arrive.
                        let _ =
                            tokio::time::timeout(Duration::from_millis(300), child.wait()).await;
                        Err(start_error(
                            format!("no MCP session with `{program}`: {}", plain_error(&e)),
                            stderr.text(),
                        ))
                    }
                    Err(_) => Err(start_error(
                        format!(
                            "`{program}` did not answer `initialize` within {} s",
                            timeout.as_secs_f64()
                        ),
                        stderr.text(),
                    )),
                }
            }
            ToolSourceKind::McpHttp { url, token_env } => {
                let token = super::bearer_token(&name, token_env.as_ref(), env)?;
                let service = connect_http(&url.value, token.as_ref(), timeout)
                    .await
                    .map_err(|message| start_error(message, String::new()))?;
                Ok(Session {
                    name,
                    service,
                    child: None,
                    stderr: Tail::default(),
                    token,
                })
            }
            ToolSourceKind::OpenApi { .. } => Err(start_error(
                "an OpenAPI source is not an MCP server".into(),
                String::new(),
            )),
        }
    }

    fn redact(&self, text: String) -> String {
        match &self.token {
            Some(t) => t.redact(&text),
            None => text,
        }
    }

    /// Every tool the server lists (all pages), with what its annotations say.
    pub async fn tools(&self) -> Result<Vec<ToolSpec>, ToolError> {
        let tools = self
            .service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| ToolError::Start {
                server: self.name.clone(),
                message: self.redact(format!("its tools cannot be listed: {}", plain_error(&e))),
                stderr: self.stderr.text(),
            })?;
        Ok(tools
            .into_iter()
            .map(|t| {
                let hints = t.annotations.clone().unwrap_or_default();
                let read_only = hints.read_only_hint.unwrap_or(false);
                // The spec's defaults: destructive unless said otherwise, and only a tool
                // that is not read-only can be either.
                let destructive = !read_only && hints.destructive_hint.unwrap_or(true);
                let idempotent = read_only || hints.idempotent_hint.unwrap_or(false);
                ToolSpec {
                    source: self.name.clone(),
                    name: t.name.to_string(),
                    description: t.description.as_deref().unwrap_or_default().to_string(),
                    input_schema: Value::Object((*t.input_schema).clone()),
                    read_only,
                    destructive,
                    idempotent,
                    confirm: None,
                }
            })
            .collect())
    }

    /// Call `tool`. A tool's own error (`isError`) is a reply; a failure of the session
    /// (the server gone, a protocol error) is a [`ToolError::Call`].
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        idempotency_key: &str,
    ) -> Result<ToolReply, ToolError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Ok(ToolReply::new(
                    format!("error: the arguments must be a JSON object, not {other}"),
                    true,
                ));
            }
        };
        let mut meta = json!({ IDEMPOTENCY_META: idempotency_key });
        // The run's trace context (telemetry on), as MCP carries it: `_meta.traceparent`.
        if let Some(tp) = crate::telemetry::outgoing() {
            meta["traceparent"] = Value::String(tp);
        }
        params.meta = serde_json::from_value::<RequestMetaObject>(meta).ok();
        let result = self
            .service
            .peer()
            .call_tool(params)
            .await
            .map_err(|e| ToolError::Call {
                tool: format!("{}.{tool}", self.name),
                message: self.redact(plain_error(&e)),
                stderr: self.stderr.text(),
            })?;
        let mut parts: Vec<String> = Vec::new();
        for block in &result.content {
            let block = serde_json::to_value(block).unwrap_or(Value::Null);
            match block.get("type").and_then(Value::as_str) {
                Some("text") => parts.push(block["text"].as_str().unwrap_or_default().to_string()),
                Some("resource") => {
                    let r = &block["resource"];
                    match r.get("text").and_then(Value::as_str) {
                        Some(t) => parts.push(t.to_string()),
                        None => parts.push(format!("[resource {}]", r["uri"])),
                    }
                }
                Some(other) => parts.push(format!("[{other} content, not shown]")),
                None => {}
            }
        }
        let text = match (&result.structured_content, parts.is_empty()) {
            (Some(structured), true) => structured.to_string(),
            _ => parts.join("\n"),
        };
        Ok(ToolReply::new(text, result.is_error.unwrap_or(false)))
    }
}

/// A session with the MCP server at `url` over streamable HTTP.
pub async fn connect_http(
    url: &str,
    token: Option<&Secret>,
    timeout: Duration,
) -> Result<RunningService<RoleClient, ()>, String> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    crate::tls::install_provider();
    let client = reqwest::Client::builder()
        .connect_timeout(timeout)
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.expose());
    }
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let shown = crate::secret::redact_urls(url);
    let redact = |text: String| match token {
        Some(t) => t.redact(&text),
        None => text,
    };
    match tokio::time::timeout(timeout, ().serve(transport)).await {
        Ok(Ok(running)) => Ok(running),
        Ok(Err(e)) => {
            let why = match &e {
                rmcp::service::ClientInitializeError::TransportError { error, .. } => {
                    plain_error(error.error.as_ref())
                }
                other => plain_error(other),
            };
            Err(redact(format!(
                "cannot open an MCP session with {shown}: {why}"
            )))
        }
        Err(_) => Err(format!(
            "no MCP session with {shown} within {} s",
            timeout.as_secs_f64()
        )),
    }
}

/// An error as a person reads it: its deepest cause (`Connection refused`, not the
/// transport's wrapper), without the Rust type names rmcp's wrappers print
/// (`[rmcp::transport::worker::WorkerTransport<…>]`).
pub fn plain_error(e: &(dyn std::error::Error + 'static)) -> String {
    let mut messages = vec![e.to_string()];
    let mut cause = e.source();
    while let Some(c) = cause {
        messages.push(c.to_string());
        cause = c.source();
    }
    messages
        .iter()
        .rev()
        .map(|m| without_type_names(m))
        .find(|m| !m.is_empty())
        .unwrap_or_else(|| "the transport failed".to_string())
}

/// `text` without bracketed or bare Rust paths (`[a::b<c::D>]`, `a::b::C<…>`).
pub fn without_type_names(text: &str) -> String {
    let mut out = String::new();
    for word in text.split_whitespace() {
        let trimmed = word.trim_matches(|c: char| "[](),:;".contains(c));
        if trimmed.contains("::") {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    // Leftovers of what was removed: `Send []`, a dangling `when`.
    out.replace("[]", "")
        .trim()
        .trim_end_matches(':')
        .trim()
        .to_string()
}
