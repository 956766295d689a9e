//! The `remote_agents` section: A2A agents reached over HTTP.

use super::super::config::*;
use super::super::yaml::Node;
use super::reader::Cx;

pub(crate) const REMOTE_AGENT_KEYS: &[&str] = &["url", "protocol", "timeout", "auth"];

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
        let mut auth_keys = Vec::new();
        if let Some(auth) = f.get("auth") {
            for (k, val) in auth.as_map().unwrap_or_default() {
                let Some(key) = self.string(k, "an auth key") else {
                    continue;
                };
                let secret = matches!(
                    key.value.as_str(),
                    "token" | "password" | "api_key" | "secret"
                );
                if secret && val.as_str().is_some_and(|s| !s.is_empty()) {
                    self.secret_in_file(
                        val.span,
                        format!(
                            "{what}: a secret (`{}`) is written into the config file",
                            key.value
                        ),
                        format!(
                            "put it in an environment variable and write `{}_env: <VAR>`",
                            key.value
                        ),
                    );
                }
                auth_keys.push(key);
            }
        }
        RemoteAgent {
            name,
            url,
            protocol,
            timeout_secs,
            auth_keys,
            span: v.span,
        }
    }
}
