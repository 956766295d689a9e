//! Stop signals, shared by the commands that must end cleanly on them, and the part of a
//! server's life they end: announced, then serving until a signal (or until it stops by
//! itself).

/// SIGINT (Ctrl-C) and SIGTERM, watched from when this is made, so that neither kills
/// the process with its default action before it has closed its journals (`serve`) or
/// parked its run (`start`, `runs resume`, `worker`).
pub(super) struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    pub(super) fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    #[cfg(not(unix))]
    pub(super) fn new() -> std::io::Result<Signals> {
        Ok(Signals {})
    }

    /// The next shutdown signal, by name.
    #[cfg(unix)]
    pub(super) async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "interrupted (Ctrl-C)",
            _ = self.terminate.recv() => "terminated (SIGTERM)",
        }
    }

    #[cfg(not(unix))]
    pub(super) async fn recv(&mut self) -> &'static str {
        let _ = tokio::signal::ctrl_c().await;
        "interrupted (Ctrl-C)"
    }
}

/// Announce a server: `listening <url>` and then `extra` lines on stdout (what scripts
/// and tests read), and what it serves in the log.
pub(super) fn announce(what: &str, url: &str, extra: &[String], requires_token: bool) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "listening {url}");
    for line in extra {
        let _ = writeln!(stdout, "{line}");
    }
    let _ = stdout.flush();
    drop(stdout);
    let token = if requires_token {
        "bearer token required"
    } else {
        "no token"
    };
    tracing::info!("{what} at {url} ({token})");
}

/// Serve until a stop signal (its name, logged), or until the server stops by itself:
/// an error naming it (`what` on `addr`) and why.
pub(super) async fn until_signal<W: std::fmt::Display>(
    signals: &mut Signals,
    stopped: impl std::future::Future<Output = W>,
    what: &str,
    addr: std::net::SocketAddr,
) -> Result<&'static str, super::UsageError> {
    let signal = tokio::select! {
        signal = signals.recv() => signal,
        why = stopped => {
            return Err(super::UsageError::new(format!(
                "the {what} server on {addr} stopped: {why}"
            )));
        }
    };
    tracing::info!("{signal}: shutting down");
    Ok(signal)
}
