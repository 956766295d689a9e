//! JSON over HTTP for the BPM engines' REST APIs (Flowable, Kogito): one way to send a
//! request and to report a failure — the call, the status, the server's message
//! (shortened) — with a secret (a password) never in it.

use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;

use crate::secret::Secret;

/// A failed call: what was asked, and what came back.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{what}: {detail}")]
pub struct RestError {
    pub what: String,
    pub status: Option<u16>,
    pub detail: String,
}

impl RestError {
    /// No answer at all (refused, timed out, reset).
    pub fn is_unreachable(&self) -> bool {
        self.status.is_none()
    }
}

/// The HTTP client could not be built (its TLS backend could not start).
#[derive(Debug, thiserror::Error)]
#[error("cannot build an HTTP client")]
pub struct ClientError(#[source] reqwest::Error);

/// An HTTP client bounding each connect and each request (TLS on the ring provider).
pub fn client(
    connect_timeout: std::time::Duration,
    timeout: std::time::Duration,
) -> Result<reqwest::Client, ClientError> {
    crate::tls::install_provider();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .timeout(timeout)
        .build()
        .map_err(ClientError)
}

/// Send; the JSON body of a 2xx answer (`null` when empty). `secret` is redacted from
/// every message.
pub async fn send(
    request: RequestBuilder,
    what: &str,
    secret: Option<&Secret>,
) -> Result<Value, RestError> {
    let redact = |text: String| match secret {
        Some(p) => p.redact(&text),
        None => text,
    };
    let response = request.send().await.map_err(|e| RestError {
        what: what.to_string(),
        status: None,
        detail: redact(describe(&e)),
    })?;
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(RestError {
            what: what.to_string(),
            status: Some(status.as_u16()),
            detail: redact(answer_excerpt(status, &body)),
        });
    }
    if body.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&body).map_err(|e| RestError {
        what: what.to_string(),
        status: Some(status.as_u16()),
        detail: format!("the answer is not JSON ({e})"),
    })
}

fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "no answer in time".to_string()
    } else if e.is_connect() {
        format!("cannot connect ({})", root_cause(e))
    } else {
        root_cause(e)
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Flowable's error answers are `{"message": ..., "exception": ...}`.
fn answer_excerpt(status: StatusCode, body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let text = match parsed {
        Some(v) => match (v["message"].as_str(), v["exception"].as_str()) {
            (Some(m), Some(x)) if !x.is_empty() => format!("{m}: {x}"),
            (Some(m), _) => m.to_string(),
            _ => body.to_string(),
        },
        None => body.to_string(),
    };
    format!("HTTP {} — {}", status.as_u16(), excerpt(text.trim()))
}

pub fn excerpt(text: &str) -> String {
    const MAX: usize = 300;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}
