//! The `remote_agents` section: A2A agents reached over HTTP.

use super::super::config::*;
use super::super::yaml::Node;
use super::reader::Cx;

pub(crate) const REMOTE_AGENT_KEYS: &[&str] = &[
    "url",
    "protocol",
    "timeout",
    "connect_timeout",
    "auth",
    "wait",
];

/// The keys of a remote agent's `auth` block.
const AUTH_KEYS: &[&str] = &[
    "type",
    "token_env",
    "header",
    "key_env",
    "token",
    "key",
    "api_key",
    "password",
    "secret",
];

impl Cx<'_> {
    pub(super) fn remote_agents(&mut self, node: &Node) -> Vec<RemoteAgent> {
        self.named_entries(
            node,
            "`remote_agents`",
            "a mapping of agent names to settings",
            "a remote agent name",
            |cx, name, v| Some(cx.remote_agent(name, v)),
        )
    }

    fn remote_agent(&mut self, name: Located<String>, v: &Node) -> RemoteAgent {
        let what = format!("remote agent `{}`", name.value);
        let f = self.fields(v, &what, REMOTE_AGENT_KEYS);
        let url = self.opt_string(&f, "url", &what);
        if url.is_none() {
            self.error(
                "config::missing_key",
                v.span,
                format!("{what} has no `url`"),
                "where is the agent?",
                Some(
                    "add `url: http://127.0.0.1:<port>` (the A2A agent card is read from it)"
                        .into(),
                ),
            );
        }
        let protocol = self.opt_string(&f, "protocol", &what);
        if let Some(p) = protocol.as_ref().filter(|p| p.value != "a2a") {
            self.error(
                "config::unknown_protocol",
                p.span,
                format!(
                    "{what} uses protocol `{}`; only `a2a` is supported",
                    p.value
                ),
                "unknown protocol",
                None,
            );
        }
        let timeout_secs = self.opt_number(&f, "timeout", &what);
        if let Some(t) = timeout_secs.as_ref().filter(|t| t.value < 0.0) {
            self.error(
                "config::type",
                t.span,
                format!("`timeout` of {what} is negative"),
                "must be ≥ 0",
                None,
            );
        }
        let connect_timeout_secs = self.opt_number(&f, "connect_timeout", &what);
        let wait = self.opt_duration(&f, "wait", &what);
        let mut auth_keys = Vec::new();
        let auth = f
            .get("auth")
            .and_then(|a| self.remote_auth(a, &what, &mut auth_keys));
        RemoteAgent {
            name,
            url,
            protocol,
            timeout_secs,
            auth_keys,
            auth,
            connect_timeout_secs,
            wait,
            span: v.span,
        }
    }

    /// The `auth` block: `{type: bearer, token_env: VAR}` or `{type: api_key, header: H,
    /// key_env: VAR}`. A secret written inline is an error (it would be committed with the
    /// file and could reach logs): the help says how to move it to the environment.
    fn remote_auth(
        &mut self,
        node: &Node,
        what: &str,
        auth_keys: &mut Vec<Located<String>>,
    ) -> Option<RemoteAuth> {
        let what = format!("the auth of {what}");
        let f = self.fields(node, &what, AUTH_KEYS);
        for (k, val) in node.as_map().unwrap_or_default() {
            let Some(key) = self.string(k, "an auth key") else {
                continue;
            };
            let secret = matches!(
                key.value.as_str(),
                "token" | "key" | "password" | "api_key" | "secret"
            );
            if secret && val.as_str().is_some_and(|s| !s.is_empty()) {
                let env = if key.value == "token" {
                    "token_env"
                } else {
                    "key_env"
                };
                self.error(
                    "config::secret",
                    val.span,
                    format!(
                        "{what}: a secret (`{}`) is written into the config file",
                        key.value
                    ),
                    "secret in a file that is shared and committed",
                    Some(format!(
                        "put the value in an environment variable (e.g. `export AGENT_TOKEN=...`), \
                         remove `{}:` and write `{env}: AGENT_TOKEN`",
                        key.value
                    )),
                );
            }
            auth_keys.push(key);
        }
        let kind = self.opt_string(&f, "type", &what);
        match kind.as_ref().map(|k| k.value.as_str()) {
            Some("bearer") => {
                let Some(token_env) = self.opt_string(&f, "token_env", &what) else {
                    self.error(
                        "config::missing_key",
                        node.span,
                        format!("{what} is `type: bearer` without `token_env`"),
                        "which variable holds the token?",
                        Some("add `token_env: <VAR>` and export VAR".into()),
                    );
                    return None;
                };
                Some(RemoteAuth::Bearer { token_env })
            }
            Some("api_key") => {
                let header = self.opt_string(&f, "header", &what);
                let Some(key_env) = self.opt_string(&f, "key_env", &what) else {
                    self.error(
                        "config::missing_key",
                        node.span,
                        format!("{what} is `type: api_key` without `key_env`"),
                        "which variable holds the key?",
                        Some(
                            "add `key_env: <VAR>` (and `header: X-API-Key`) and export VAR".into(),
                        ),
                    );
                    return None;
                };
                Some(RemoteAuth::ApiKey { header, key_env })
            }
            Some(other) => {
                let span = kind.as_ref().map_or(node.span, |k| k.span);
                self.error(
                    "config::unknown_auth",
                    span,
                    format!("{what} has unknown type `{other}`"),
                    "unknown auth type",
                    Some("use `type: bearer` (with `token_env`) or `type: api_key` (with `header`, `key_env`)".into()),
                );
                None
            }
            None => {
                if !auth_keys.is_empty() {
                    self.error(
                        "config::missing_key",
                        node.span,
                        format!("{what} has no `type`"),
                        "bearer or api_key?",
                        Some("write `type: bearer` (with `token_env`) or `type: api_key` (with `header`, `key_env`)".into()),
                    );
                }
                None
            }
        }
    }
}
