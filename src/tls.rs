//! The TLS crypto provider of the process's HTTP clients (models, engines, MCP over HTTP):
//! rustls with `ring`, installed once. Another provider installed first is kept.

use std::sync::Once;

/// Install `ring` as the process's rustls provider (once; idempotent).
pub fn install_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
