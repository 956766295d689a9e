//! Stop signals, shared by the commands that must end cleanly on them.

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
