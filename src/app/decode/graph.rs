//! The `graph` section: graph mode's store (the embedded one, or a SPARQL 1.1 endpoint).

use super::super::config::*;
use super::super::yaml::Node;
use super::reader::Cx;

pub(crate) const GRAPH_KEYS: &[&str] = &[
    "store",
    "path",
    "endpoint",
    "dataset",
    "user_env",
    "password_env",
    "user",
    "password",
    "timeout",
];

/// The values of `store:`.
pub(crate) const GRAPH_STORES: &[&str] = &["embedded", "endpoint"];

impl Cx<'_> {
    pub(super) fn graph(&mut self, node: &Node) -> GraphConfig {
        let what = "`graph`";
        let f = self.fields(node, what, GRAPH_KEYS);
        let store_written = self.opt_string(&f, "store", what);
        let endpoint = self.opt_string(&f, "endpoint", what);
        let store = match store_written.as_ref().map(|s| s.value.as_str()) {
            None if endpoint.is_some() => GraphBackend::Endpoint,
            None | Some("embedded") => GraphBackend::Embedded,
            Some("endpoint") => GraphBackend::Endpoint,
            Some(other) => {
                let span = store_written.as_ref().map_or(node.span, |s| s.span);
                self.error(
                    "config::unknown_store",
                    span,
                    format!("unknown graph store `{other}`"),
                    "unknown store",
                    Some("`store: embedded` (oxigraph, in the process), or `endpoint: URL` for any SPARQL 1.1 endpoint".into()),
                );
                GraphBackend::Embedded
            }
        };
        if store_written.is_none() && endpoint.is_none() {
            self.error(
                "config::missing_key",
                node.span,
                "`graph` names no store".to_string(),
                "which store?",
                Some("write `graph: {store: embedded}`, or `graph: {endpoint: http://127.0.0.1:3030, dataset: ds}`".into()),
            );
        }
        match (store, &endpoint) {
            (GraphBackend::Embedded, Some(url)) => self.error(
                "config::conflict",
                url.span,
                "`graph` has an `endpoint` but `store: embedded`".to_string(),
                "not used by the embedded store",
                Some("drop `store:` (or write `store: endpoint`) to use the endpoint".into()),
            ),
            (GraphBackend::Endpoint, None) => self.error(
                "config::missing_key",
                store_written.as_ref().map_or(node.span, |s| s.span),
                "`graph` uses an endpoint but has no `endpoint:` URL".to_string(),
                "where is the endpoint?",
                Some("add `endpoint: http://127.0.0.1:3030` (and `dataset: <name>`)".into()),
            ),
            (GraphBackend::Endpoint, Some(url)) => {
                let lower = url.value.to_ascii_lowercase();
                if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                    self.error(
                        "config::type",
                        url.span,
                        format!("`endpoint` of {what} is not an http(s) URL"),
                        "expected http://… or https://…",
                        None,
                    );
                } else if url.value.contains('@')
                    && url.value.split('/').nth(2).is_some_and(|h| h.contains('@'))
                {
                    self.secret_in_file(
                        url.span,
                        "the graph endpoint's URL carries a user (and maybe a password)"
                            .to_string(),
                        "name the variables that hold them with `user_env:` and `password_env:`"
                            .into(),
                    );
                }
            }
            _ => {}
        }
        let path = self.opt_string(&f, "path", what);
        if let (Some(p), GraphBackend::Endpoint) = (&path, store) {
            self.error(
                "config::conflict",
                p.span,
                "`path` is for the embedded store, not an endpoint".to_string(),
                "not used by an endpoint",
                None,
            );
        }
        let dataset = self.opt_string(&f, "dataset", what);
        let user = self.opt_secret(&f, "user", what, "the graph store's user");
        let password = self.opt_secret(&f, "password", what, "the graph store's password");
        let user_env = self.opt_string(&f, "user_env", what);
        let password_env = self.opt_string(&f, "password_env", what);
        for (key, v) in [
            ("dataset", &dataset),
            ("user_env", &user_env),
            ("password_env", &password_env),
        ] {
            if let (Some(v), GraphBackend::Embedded) = (v, store) {
                self.warn(
                    "config::unused",
                    v.span,
                    format!("`{key}` of {what} is not used by the embedded store"),
                    "not used",
                    None,
                );
            }
        }
        let timeout = self.opt_number(&f, "timeout", what);
        if let Some(t) = timeout
            .as_ref()
            .filter(|t| !(t.value > 0.0 && t.value <= 1.0e9))
        {
            self.error(
                "config::type",
                t.span,
                format!("`timeout` of {what} must be a number of seconds > 0"),
                "must be > 0",
                None,
            );
        }
        GraphConfig {
            store,
            path,
            endpoint,
            dataset,
            user_env,
            password_env,
            user_written: user.is_some() || password.is_some(),
            timeout,
            span: node.span,
        }
    }
}
