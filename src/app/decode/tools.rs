//! Tool sources (`mcp_servers:`, `openapi:`) and the `pre_execute` / `post_execute` rules
//! of a task's agent.

use super::super::config::*;
use super::super::yaml::{Node, Value};
use super::reader::{Cx, Fields};

pub(crate) const MCP_SERVER_KEYS: &[&str] = &[
    "command",
    "env",
    "pass_env",
    "cwd",
    "url",
    "token_env",
    "timeout",
    "connect_timeout",
    "tools",
];
pub(crate) const OPENAPI_KEYS: &[&str] = &[
    "spec",
    "base_url",
    "token_env",
    "timeout",
    "connect_timeout",
    "tools",
];
pub(crate) const TOOL_SETTING_KEYS: &[&str] = &["confirm", "idempotent"];
pub(crate) const STEP_RULE_KEYS: &[&str] = &["when", "raise", "set", "because"];

/// A source name: what `tools:` entries write before the dot.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.contains("__")
}

impl Cx<'_> {
    /// `mcp_servers:` and `openapi:`, as one list of named sources.
    pub(super) fn tool_sources(&mut self, f: &Fields) -> Vec<ToolSourceConfig> {
        let mut out: Vec<ToolSourceConfig> = Vec::new();
        if let Some(node) = f.get("mcp_servers") {
            out.extend(self.named_entries(
                node,
                "`mcp_servers`",
                "a mapping of server names to settings",
                "a server name",
                |cx, name, v| cx.mcp_server(name, v),
            ));
        }
        if let Some(node) = f.get("openapi") {
            out.extend(self.named_entries(
                node,
                "`openapi`",
                "a mapping of API names to settings",
                "an API name",
                |cx, name, v| cx.openapi(name, v),
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        let mut duplicates = Vec::new();
        for s in &out {
            if seen.contains(&s.name.value.as_str()) {
                duplicates.push(s.name.clone());
            }
            seen.push(&s.name.value);
        }
        for name in duplicates {
            self.error(
                "config::duplicate",
                name.span,
                format!("tool source `{}` is declared twice", name.value),
                "declared again",
                Some(
                    "`mcp_servers` and `openapi` share one set of names (tasks write `<name>.<tool>`)"
                        .into(),
                ),
            );
        }
        out
    }

    fn source_name(&mut self, name: &Located<String>) -> bool {
        if valid_name(&name.value) {
            return true;
        }
        self.error(
            "config::value",
            name.span,
            format!("`{}` cannot name a tool source", name.value),
            "not a name",
            Some(
                "use letters, digits, `_` and `-` (no `__`), starting with a letter: tasks write `<name>.<tool>`"
                    .into(),
            ),
        );
        false
    }

    fn mcp_server(&mut self, name: Located<String>, v: &Node) -> Option<ToolSourceConfig> {
        let what = format!("MCP server `{}`", name.value);
        let ok = self.source_name(&name);
        let f = self.fields(v, &what, MCP_SERVER_KEYS);
        let command = f
            .get("command")
            .map(|n| match &n.value {
                // One string: the program alone (no shell, no splitting).
                Value::Seq(_) => self.string_list(n, "`command`"),
                _ => self.string(n, "`command`").into_iter().collect(),
            })
            .unwrap_or_default();
        let url = self.opt_string(&f, "url", &what);
        let token_env = self.opt_string(&f, "token_env", &what);
        let env = f
            .get("env")
            .map(|n| self.string_map(n, || format!("`env` of {what}")))
            .unwrap_or_default();
        let pass_env = f
            .get("pass_env")
            .map(|n| self.string_list(n, "`pass_env`"))
            .unwrap_or_default();
        let cwd = self.opt_string(&f, "cwd", &what);
        let kind = match (command.is_empty(), url) {
            (false, None) => {
                if let Some(span) = f.key_span("token_env") {
                    self.error(
                        "config::value",
                        span,
                        format!("`token_env` of {what} needs `url`"),
                        "a stdio server takes no token",
                        Some("pass the variable to it with `pass_env: [VAR]`".into()),
                    );
                }
                ToolSourceKind::McpStdio {
                    command,
                    env,
                    pass_env,
                    cwd,
                }
            }
            (true, Some(url)) => {
                for key in ["env", "pass_env", "cwd"] {
                    if let Some(span) = f.key_span(key) {
                        self.error(
                            "config::value",
                            span,
                            format!("`{key}` of {what} needs `command` (a server cuga-flo starts)"),
                            "not used with `url`",
                            None,
                        );
                    }
                }
                if !(url.value.starts_with("http://") || url.value.starts_with("https://")) {
                    self.error(
                        "config::value",
                        url.span,
                        format!("`url` of {what} is not an http(s) URL"),
                        "not a URL",
                        Some("write the server's streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`".into()),
                    );
                }
                ToolSourceKind::McpHttp { url, token_env }
            }
            (false, Some(url)) => {
                self.error(
                    "config::value",
                    url.span,
                    format!("{what} has both `command` and `url`"),
                    "one or the other",
                    Some("`command` starts a server over stdio; `url` reaches one over streamable HTTP".into()),
                );
                return None;
            }
            (true, None) => {
                self.error(
                    "config::missing_key",
                    v.span,
                    format!("{what} has neither `command` nor `url`"),
                    "how is it reached?",
                    Some("write `command: [python3, server.py]` (stdio, started for the run) or `url: http://127.0.0.1:8000/mcp` (streamable HTTP)".into()),
                );
                return None;
            }
        };
        let source = ToolSourceConfig {
            timeout: self.opt_duration(&f, "timeout", &what),
            connect_timeout: self.opt_duration(&f, "connect_timeout", &what),
            tools: f
                .get("tools")
                .map(|n| self.tool_settings(n, &what))
                .unwrap_or_default(),
            name,
            kind,
            span: v.span,
        };
        ok.then_some(source)
    }

    fn openapi(&mut self, name: Located<String>, v: &Node) -> Option<ToolSourceConfig> {
        let what = format!("OpenAPI source `{}`", name.value);
        let ok = self.source_name(&name);
        let f = self.fields(v, &what, OPENAPI_KEYS);
        let Some(spec) = self.opt_string(&f, "spec", &what) else {
            self.error(
                "config::missing_key",
                v.span,
                format!("{what} has no `spec`"),
                "which API?",
                Some("add `spec: api.yaml` (an OpenAPI 3 document, relative to the config)".into()),
            );
            return None;
        };
        let source = ToolSourceConfig {
            kind: ToolSourceKind::OpenApi {
                spec,
                base_url: self.opt_string(&f, "base_url", &what),
                token_env: self.opt_string(&f, "token_env", &what),
            },
            timeout: self.opt_duration(&f, "timeout", &what),
            connect_timeout: self.opt_duration(&f, "connect_timeout", &what),
            tools: f
                .get("tools")
                .map(|n| self.tool_settings(n, &what))
                .unwrap_or_default(),
            name,
            span: v.span,
        };
        ok.then_some(source)
    }

    fn tool_settings(&mut self, node: &Node, owner: &str) -> Vec<ToolSetting> {
        let what = format!("`tools` of {owner}");
        self.named_entries(
            node,
            &what,
            "a mapping of tool names to settings",
            "a tool name",
            |cx, name, v| {
                let what = format!("tool `{}` of {owner}", name.value);
                let f = cx.fields(v, &what, TOOL_SETTING_KEYS);
                let confirm = f.get("confirm").and_then(|n| cx.confirm(n, &what));
                let idempotent = cx.opt_bool(&f, "idempotent", &what);
                Some(ToolSetting {
                    name,
                    confirm,
                    idempotent,
                })
            },
        )
    }

    /// `confirm: true | always | never`. `false` is refused: opting out is written out.
    fn confirm(&mut self, node: &Node, what: &str) -> Option<Located<Confirm>> {
        let confirm = match &node.value {
            Value::Bool(true) => Some(Confirm::Always),
            _ => match node.scalar_text(self.file.text()).as_deref() {
                Some("always") => Some(Confirm::Always),
                Some("never") => Some(Confirm::Never),
                _ => None,
            },
        };
        if confirm.is_none() {
            self.error(
                "config::value",
                node.span,
                format!("`confirm` of {what} is `true` (or `always`) or `never`"),
                "not a choice",
                Some("`confirm: true`: a person confirms every call; `confirm: never`: nobody does (say so explicitly); leave it out to follow the tool's annotations".into()),
            );
        }
        confirm.map(|c| Located::new(c, node.span))
    }

    /// `pre_execute:` / `post_execute:`: a list of `{when, raise | set, because}`.
    pub(super) fn step_rules(&mut self, node: &Node, what: &str) -> Vec<StepRule> {
        let items = self.seq(node, what);
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let f = self.fields(item, &format!("a rule of {what}"), STEP_RULE_KEYS);
            let Some(when) = self.opt_string(&f, "when", what) else {
                self.error(
                    "config::missing_key",
                    item.span,
                    format!("a rule of {what} has no `when`"),
                    "when does it apply?",
                    Some("add `when: \"<condition>\"` (`when: \"true\"` applies always)".into()),
                );
                continue;
            };
            match crate::expr::parse(&when.value) {
                Err(e) => self.error(
                    "config::condition",
                    when.span,
                    format!("`when` of a rule of {what} cannot be read: {e}"),
                    "not a condition",
                    Some("see docs/conditions.md".into()),
                ),
                // `amount > 10` compares the word "amount": a variable is `${amount}`.
                Ok(c) if c.variables().is_empty() && !matches!(when.value.trim(), "true" | "True") => self.error(
                    "config::condition",
                    when.span,
                    format!("`when` of a rule of {what} reads no variable: `{}`", when.value),
                    "compares constants",
                    Some("name a parameter, output or variable as `${name}` (a bare word is text); `when: \"true\"` applies always".into()),
                ),
                Ok(_) => {}
            }
            let raise = self.opt_string(&f, "raise", what);
            if let Some(code) = &raise
                && !crate::vocab::error_code::is_valid(&code.value)
            {
                self.error(
                    "config::type",
                    code.span,
                    format!("`{}` is not a BPMN error code", code.value),
                    "an error code",
                    Some("use letters, digits, `_`, `-`, `.` and `:` (e.g. LIMIT_EXCEEDED)".into()),
                );
            }
            let set: Vec<(Located<String>, Located<serde_json::Value>)> = match f.get("set") {
                Some(n) => match n.as_map() {
                    Some(entries) => entries
                        .iter()
                        .filter_map(|(k, v)| {
                            let name = self.string(k, "a name under `set`")?;
                            Some((name, Located::new(v.to_json(), v.span)))
                        })
                        .collect(),
                    None => {
                        self.type_error(n, &format!("`set` of a rule of {what}"), "a mapping");
                        Vec::new()
                    }
                },
                None => Vec::new(),
            };
            if raise.is_none() && set.is_empty() {
                self.error(
                    "config::missing_key",
                    item.span,
                    format!("a rule of {what} neither raises nor sets anything"),
                    "does nothing",
                    Some("add `raise: ERROR_CODE` or `set: {name: value}`".into()),
                );
            }
            if raise.is_some() && !set.is_empty() {
                self.error(
                    "config::value",
                    item.span,
                    format!("a rule of {what} both raises and sets"),
                    "one or the other",
                    Some("a raised error fails the task: nothing it would set is used".into()),
                );
            }
            out.push(StepRule {
                because: self.opt_string(&f, "because", what),
                when,
                raise,
                set,
                span: item.span,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn source_names_are_words_without_double_underscores() {
        assert!(super::valid_name("hr"));
        assert!(super::valid_name("tickets-2"));
        assert!(!super::valid_name("2hr"));
        assert!(!super::valid_name("a__b"));
        assert!(!super::valid_name("a.b"));
        assert!(!super::valid_name(""));
    }
}
