//! Serving HTTP on a listener: every connection with a header-read timeout, all of them
//! closed gracefully on a stop signal. What the MCP server (`mcp::http`) and the A2A
//! server (`a2a::server`) share.

use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio_util::sync::CancellationToken;

/// Serve every connection `listener` accepts until `stop`, each with a header-read
/// timeout (hyper's, which needs a timer: axum's `serve` sets none). On `stop`, each
/// connection finishes the request it is serving, then closes.
pub(crate) async fn accept(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    stop: CancellationToken,
    read_timeout: Duration,
) -> std::io::Result<()> {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(read_timeout)
        .keep_alive(true);
    loop {
        let tcp = tokio::select! {
            () = stop.cancelled() => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of descriptors and the like: wait a little rather than spin.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let connection = builder.serve_connection(TokioIo::new(tcp), service);
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let mut closing = false;
            loop {
                tokio::select! {
                    _ = connection.as_mut() => break,
                    () = stop.cancelled(), if !closing => {
                        connection.as_mut().graceful_shutdown();
                        closing = true;
                    }
                }
            }
        });
    }
}
