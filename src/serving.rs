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

/// Runs spread over the cores: one OS thread per core, each driving a single-threaded
/// tokio runtime. A run is spawned on the thread with the fewest runs and stays there: no
/// run moves between threads, so its memory stays in one core's caches and is freed by the
/// thread that allocated it (on one multi-threaded runtime, K runs at once took 1.2× less
/// time than one after the other on 2 cores while both were busy: each run cost more).
/// `serve` runs the runs its clients start on it.
pub struct Cores {
    workers: Vec<Worker>,
}

struct Worker {
    handle: tokio::runtime::Handle,
    runs: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Dropped to stop the thread (its runtime, and the runs still on it, go with it).
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Cores {
    /// `threads` threads (at least one), named `cuga-flo-run-<i>`.
    pub fn new(threads: usize) -> std::io::Result<Cores> {
        let mut workers = Vec::new();
        for i in 0..threads.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            std::thread::Builder::new()
                .name(format!("cuga-flo-run-{i}"))
                .spawn(move || {
                    let _ = runtime.block_on(stopped);
                })?;
            workers.push(Worker {
                handle,
                runs: Default::default(),
                _stop: stop,
            });
        }
        Ok(Cores { workers })
    }

    /// One thread per core the process may use.
    pub fn per_core() -> std::io::Result<Cores> {
        Cores::new(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// Run `run` on the thread with the fewest runs; await the handle for its output.
    /// Dropping the handle stops the run, as dropping `run` itself would.
    pub fn spawn<F>(&self, run: F) -> Running<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        use std::sync::atomic::Ordering;
        let worker = (self.workers.iter())
            .min_by_key(|w| w.runs.load(Ordering::Relaxed))
            .expect("at least one thread");
        /// Counts the run off its thread however it ends (finished, or dropped).
        struct Counted(std::sync::Arc<std::sync::atomic::AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        worker.runs.fetch_add(1, Ordering::Relaxed);
        let counted = Counted(worker.runs.clone());
        Running(worker.handle.spawn(async move {
            let _counted = counted;
            run.await
        }))
    }

    pub fn threads(&self) -> usize {
        self.workers.len()
    }
}

/// A run spawned on [`Cores`]: its output, or the task's failure (a panic); stops the
/// run when dropped.
pub struct Running<T>(tokio::task::JoinHandle<T>);

impl<T> std::future::Future for Running<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Running<T> {
    /// Stop the run and wait until it has stopped on its thread (nothing of it runs
    /// after this returns).
    pub async fn stop(mut self) {
        self.0.abort();
        let _ = (&mut self.0).await;
    }
}

impl<T> Drop for Running<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

// ---- The bearer token every HTTP server of the process asks for ----

/// Why a request is refused for its bearer token, if it is: with `expected` set, a request
/// must present it (`Authorization: Bearer <token>`, the scheme in any case), compared in
/// constant time. `None`: every request passes.
pub fn token_refusal(
    expected: Option<&crate::secret::Secret>,
    headers: &axum::http::HeaderMap,
) -> Option<&'static str> {
    let expected = expected?;
    match bearer(headers) {
        None => Some("missing bearer token: send `Authorization: Bearer <token>`"),
        Some(presented) if !expected.matches(presented) => Some("invalid bearer token"),
        Some(_) => None,
    }
}

/// The credentials of `Authorization: Bearer <token>` (the scheme in any case).
pub fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, credentials) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// 401 with `WWW-Authenticate: Bearer` and `{"error": message}`.
pub fn unauthorized(message: &str) -> axum::response::Response {
    use axum::http::header;
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = axum::response::Response::new(axum::body::Body::from(body));
    *response.status_mut() = axum::http::StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// The process's metrics in Prometheus's text format on `GET /metrics` (`--metrics
/// HOST:PORT` of `serve` and `worker`), behind the bearer-token gate when `token` is set;
/// until `stop`.
pub struct MetricsEndpoint {
    addr: std::net::SocketAddr,
    stop: CancellationToken,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl MetricsEndpoint {
    /// Listen on `addr` (on the current runtime); [`exposure`] decides whether it may.
    pub async fn bind(
        addr: std::net::SocketAddr,
        token: Option<crate::secret::Secret>,
    ) -> std::io::Result<MetricsEndpoint> {
        use axum::response::IntoResponse;
        exposure(addr, token.as_ref())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::PermissionDenied, e))?;
        let metrics = crate::telemetry::keep_metrics();
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let token = std::sync::Arc::new(token);
        let router = axum::Router::new().route(
            "/metrics",
            axum::routing::get(move |headers: axum::http::HeaderMap| {
                let token = token.clone();
                async move {
                    if let Some(message) = token_refusal(token.as_ref().as_ref(), &headers) {
                        return unauthorized(message);
                    }
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        metrics.prometheus(),
                    )
                        .into_response()
                }
            }),
        );
        let stop = CancellationToken::new();
        let served = tokio::spawn(accept(
            listener,
            router,
            stop.clone(),
            Duration::from_secs(10),
        ));
        Ok(MetricsEndpoint { addr, stop, served })
    }

    /// Where it listens (the port given, or the one chosen for port 0).
    pub fn url(&self) -> String {
        format!("http://{}/metrics", self.addr)
    }

    pub async fn stop(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(1), self.served).await;
    }
}

/// The shortest bearer token accepted on a non-loopback address (shorter ones are
/// accepted on loopback, with a warning).
pub const MIN_TOKEN_LEN: usize = 16;

/// Why a server may not listen where it was asked to.
#[derive(Debug, thiserror::Error)]
pub enum Exposure {
    #[error("refusing to serve on {addr}: {}", weak(*len))]
    WeakToken {
        addr: std::net::SocketAddr,
        len: usize,
    },
    #[error("refusing to serve on {addr} without a token: it is not a loopback address")]
    NoToken { addr: std::net::SocketAddr },
}

fn weak(len: usize) -> String {
    format!(
        "the token has {len} characters; a bearer token needs at least {MIN_TOKEN_LEN} (e.g. \
         `openssl rand -hex 32`)"
    )
}

/// Whether a server may listen on `addr` with `token`: anywhere with a token of at least
/// [`MIN_TOKEN_LEN`] characters, on a loopback address only without one; a shorter token
/// is accepted on loopback with a warning.
pub fn exposure(
    addr: std::net::SocketAddr,
    token: Option<&crate::secret::Secret>,
) -> Result<(), Exposure> {
    let loopback = addr.ip().is_loopback();
    match token.map(|t| t.expose().len()) {
        Some(len) if len < MIN_TOKEN_LEN && !loopback => Err(Exposure::WeakToken { addr, len }),
        Some(len) if len < MIN_TOKEN_LEN => {
            tracing::warn!(
                "WEAK TOKEN: {}; accepted only because {addr} is a loopback address",
                weak(len)
            );
            Ok(())
        }
        None if !loopback => Err(Exposure::NoToken { addr }),
        _ => Ok(()),
    }
}

/// Why a bearer token is not usable.
#[derive(Debug, thiserror::Error)]
pub enum BadToken {
    #[error("the token is empty")]
    Empty,
    #[error("the token must be printable ASCII without spaces")]
    NotPrintable,
}

/// A usable bearer token from `value` (trimmed): not empty, printable ASCII without
/// spaces (a header value). The error never holds the token.
pub fn token(value: &str) -> Result<crate::secret::Secret, BadToken> {
    let value = value.trim();
    if value.is_empty() {
        return Err(BadToken::Empty);
    }
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(BadToken::NotPrintable);
    }
    Ok(crate::secret::Secret::new(value.to_string()))
}

/// Raise this process's soft limit on open files to its hard limit, as servers do (Go's
/// runtime does it for every program): each open run holds its journal open, so the usual
/// soft limit of 1,024 would cap one server at about a thousand runs open at once while
/// the hard limit allows hundreds of thousands. Best effort: a failure leaves the limit.
pub fn raise_open_files_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0
                || limit.rlim_cur >= limit.rlim_max
            {
                return;
            }
            let before = limit.rlim_cur;
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                tracing::debug!(
                    "open files limit raised from {before} to {}",
                    limit.rlim_max
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cores;

    /// Runs go to the least busy thread and each stays on the thread it started on.
    #[test]
    fn runs_spread_over_the_threads_and_stay_on_theirs() {
        let cores = Cores::new(2).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (release, released) = tokio::sync::watch::channel(false);
        let runs: Vec<_> = (0..4)
            .map(|_| {
                let mut released = released.clone();
                cores.spawn(async move {
                    let before = std::thread::current().name().map(str::to_string);
                    let _ = released.wait_for(|r| *r).await;
                    tokio::task::yield_now().await;
                    let after = std::thread::current().name().map(str::to_string);
                    (before, after)
                })
            })
            .collect();
        release.send(true).unwrap();
        let mut names: Vec<String> = rt
            .block_on(async {
                let mut out = Vec::new();
                for run in runs {
                    out.push(run.await.unwrap());
                }
                out
            })
            .into_iter()
            .map(|(before, after)| {
                assert_eq!(before, after, "a run moved between threads");
                before.unwrap()
            })
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "cuga-flo-run-0",
                "cuga-flo-run-0",
                "cuga-flo-run-1",
                "cuga-flo-run-1"
            ]
        );
    }

    #[test]
    fn bearer_credentials() {
        use axum::http::{HeaderMap, header};
        let mut headers = HeaderMap::new();
        assert_eq!(super::bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(super::bearer(&headers), Some("abc"));
        headers.insert(header::AUTHORIZATION, "bearer  abc ".parse().unwrap());
        assert_eq!(super::bearer(&headers), Some("abc"));
        headers.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(super::bearer(&headers), None);
    }
}
