//! Whether an app can run here now: its engine's server answers (its secret is set), its
//! tool sources can be reached and list their tools; and the bearer tokens a scenario's
//! served remote agents take. `cuga-flo test` skips what cannot run rather than failing it.

use std::time::Duration;

use crate::app::registry::AppRef;
use crate::app::{EngineKind, FlowConfig, load_app, scenario};

/// The environment variables the bearer tokens of the remote agents a scenario serves
/// (`remote_agents: {<name>: {serve: <app>}}`) are read from.
pub fn served_token_vars(app: &AppRef, name: &str) -> Vec<String> {
    let Ok(s) = scenario::load(&app.dir, name) else {
        return Vec::new();
    };
    if s.remote_agents.is_empty() {
        return Vec::new();
    }
    let loaded = load_app(app);
    let Some(config) = loaded.config.as_ref() else {
        return Vec::new();
    };
    (config.remote_agents.iter())
        .filter(|r| s.remote_agents.contains_key(&r.name.value))
        .filter_map(|r| match &r.auth {
            Some(crate::app::RemoteAuth::Bearer { token_env }) => Some(token_env.value.clone()),
            _ => None,
        })
        .collect()
}

/// Why an app bound to a server cannot run now (its secret is missing, its server does
/// not accept a connection), or `None` (native apps, or the server answers).
pub fn unreachable_server(loaded: &crate::app::LoadedApp) -> Option<String> {
    let config: &FlowConfig = loaded.config.as_ref()?;
    let kind = config.engine.kind;
    if kind == EngineKind::Native {
        return None;
    }
    let settings = match kind {
        EngineKind::Flowable => {
            crate::engine::flowable::FlowableSettings::from_config(&config.engine, None).map(|_| ())
        }
        EngineKind::Kogito => {
            crate::engine::kogito::KogitoSettings::from_config(&config.engine, None).map(|_| ())
        }
        EngineKind::Mcp => {
            crate::engine::external::ExternalSettings::from_config(&config.engine, None).map(|_| ())
        }
        EngineKind::Native => Ok(()),
    };
    if let Err(why) = settings {
        return Some(format!("needs the {kind} server: {why}"));
    }
    let url = config.engine.url.as_ref()?.value.clone();
    (answers(&url) == Some(false))
        .then(|| format!("needs the {kind} server, which does not answer at {url}"))
}

/// Whether a server answers (takes a TCP connection) at `url`'s host and port, within 2
/// seconds; `None` when the URL names none.
pub fn answers(url: &str) -> Option<bool> {
    let addr = host_port(url)?;
    use std::net::ToSocketAddrs;
    Some(addr.to_socket_addrs().ok().is_some_and(|mut addrs| {
        addrs.any(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok())
    }))
}

/// Why one of the app's tool sources cannot be used now (a stdio server that does not
/// start, an HTTP one that does not answer, a secret not set), or `None`: each is reached
/// and its tools listed, as a run would.
pub fn unavailable_tools(loaded: &crate::app::LoadedApp) -> Option<String> {
    let config = loaded.config.as_ref()?;
    if config.tool_sources.is_empty() {
        return None;
    }
    let toolbox = crate::tools::Toolbox::of(config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let listed = runtime.block_on(toolbox.list());
    // An HTTP API's document is read where it lies: its server is asked for a connection.
    let api_down = config.tool_sources.iter().find_map(|s| {
        let crate::app::ToolSourceKind::OpenApi {
            base_url: Some(url),
            ..
        } = &s.kind
        else {
            return None;
        };
        let addr = host_port(&url.value)?;
        use std::net::ToSocketAddrs;
        let up = addr.to_socket_addrs().ok().is_some_and(|mut addrs| {
            addrs.any(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok())
        });
        (!up).then(|| {
            format!(
                "needs tool source `{}`, whose server does not answer at {}",
                s.name.value, url.value
            )
        })
    });
    if api_down.is_some() {
        return api_down;
    }
    listed.into_iter().find_map(|(name, r)| {
        let e = r.err()?;
        // One line: the error, and the last thing the server said before it gave up.
        let text = e.to_string();
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let first = lines.next().unwrap_or_default();
        let why = match lines.next_back() {
            Some(last) => format!(
                "{} ({})",
                first.trim_end_matches("; its stderr ends with:"),
                last.trim()
            ),
            None => first.to_string(),
        };
        Some(format!(
            "needs tool source `{name}`, which cannot be used here: {why}"
        ))
    })
}

/// `host:port` of an `http(s)://` URL (the scheme's port when none is written).
fn host_port(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    if authority.is_empty() {
        return None;
    }
    let has_port = match authority.rfind(']') {
        Some(close) => authority[close..].contains(':'),
        None => authority.contains(':'),
    };
    if has_port {
        Some(authority.to_owned())
    } else {
        let port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        Some(format!("{authority}:{port}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_of_engine_urls() {
        for (url, want) in [
            (
                "http://127.0.0.1:8080/flowable-rest/service",
                Some("127.0.0.1:8080"),
            ),
            ("https://engine.example/api", Some("engine.example:443")),
            ("http://user:pw@host/x", Some("host:80")),
            ("http://[::1]:9000/", Some("[::1]:9000")),
            ("http://[::1]/", Some("[::1]:80")),
            ("not a url", None),
            ("http:///path", None),
        ] {
            assert_eq!(host_port(url).as_deref(), want, "{url}");
        }
    }
}
