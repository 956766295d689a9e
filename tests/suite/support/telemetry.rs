//! The telemetry backends of the tests, real ones on 127.0.0.1: Jaeger v2 (the Go module
//! github.com/jaegertracing/jaeger v1.75.0, built once by `tests/telemetry/start-jaeger.sh`
//! from the Go module proxy and cached) receiving OTLP/HTTP, and Debian's Prometheus
//! (`tests/telemetry/start-prometheus.sh`) scraping one target. Both stop when the test
//! binary exits. Without Go or Prometheus the tests that need them say so and pass,
//! unless `CUGA_FLO_REQUIRE_TELEMETRY` is set (CI sets it), when they fail.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

fn script(name: &str, args: &[&str]) -> Result<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("tests/telemetry").join(name))
        .args(args)
        .env("CUGA_FLO_OWNER_PID", std::process::id().to_string())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("listening "))
        .map(|l| l.trim().to_string())
        .ok_or_else(|| format!("{name} printed no `listening` line: {stdout}"))
}

/// Whether the tests may pass without the backend (`why` says what is missing).
fn unavailable(why: &str) -> Option<()> {
    if std::env::var_os("CUGA_FLO_REQUIRE_TELEMETRY").is_some() {
        panic!("{why}");
    }
    eprintln!("skipped: {why} (CUGA_FLO_REQUIRE_TELEMETRY makes this a failure)");
    None
}

/// A Jaeger started for this test binary.
pub struct Jaeger {
    /// `http://127.0.0.1:PORT`: OTLP/HTTP (`/v1/traces`).
    pub otlp: String,
    /// `http://127.0.0.1:PORT`: the query API (`/api/traces`) and the UI.
    pub query: String,
}

/// The Jaeger these tests share, or `None` when Go is missing (and not required).
pub fn jaeger() -> Option<&'static Jaeger> {
    static JAEGER: OnceLock<Result<Jaeger, String>> = OnceLock::new();
    let started = JAEGER.get_or_init(|| {
        let line = script("start-jaeger.sh", &[])?;
        let field = |k: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(k))
                .map(str::to_string)
                .ok_or_else(|| format!("no {k} in `{line}`"))
        };
        Ok(Jaeger {
            otlp: field("otlp=")?,
            query: field("query=")?,
        })
    });
    match started {
        Ok(j) => Some(j),
        Err(why) => unavailable(&format!("Jaeger did not start: {why}")).map(|_| unreachable!()),
    }
}

/// The body `GET url` answers (empty when nothing answers).
pub fn get_text(url: &str) -> String {
    Command::new("curl")
        .args(["-s", "--max-time", "5", url])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default()
}

fn get_json(url: &str) -> Option<Value> {
    serde_json::from_str(&get_text(url)).ok()
}

impl Jaeger {
    /// The traces of `service`, once `ready` holds of them (or as they are after 30 s).
    pub fn traces(&self, service: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let url = format!("{}/api/traces?service={service}&limit=50", self.query);
        let started = Instant::now();
        loop {
            let traces = get_json(&url)
                .and_then(|v| v["data"].as_array().cloned())
                .unwrap_or_default();
            if ready(&traces) || started.elapsed() > Duration::from_secs(30) {
                return traces;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// A span's tag, as Jaeger shows it.
pub fn tag<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["tags"]
        .as_array()?
        .iter()
        .find(|t| t["key"] == key)
        .map(|t| &t["value"])
}

/// The span a span's `CHILD_OF` reference names.
pub fn parent(span: &Value) -> Option<&str> {
    span["references"]
        .as_array()?
        .iter()
        .find(|r| r["refType"] == "CHILD_OF")?["spanID"]
        .as_str()
}

/// A Prometheus scraping one target, started for one test.
pub struct Prometheus {
    pub url: String,
}

impl Prometheus {
    /// Scrape `target` (`HOST:PORT`, path `/metrics`) every second; `None` when Debian's
    /// Prometheus is missing (and not required).
    pub fn scraping(target: &str) -> Option<Prometheus> {
        match script("start-prometheus.sh", &[target]) {
            Ok(url) => Some(Prometheus { url }),
            Err(why) => {
                unavailable(&format!("Prometheus did not start: {why}")).map(|_| unreachable!())
            }
        }
    }

    /// The value of the instant query `query` once it equals `want` (or what it was after
    /// 30 s; `None` when it had no result).
    pub fn value_when(&self, query: &str, want: f64) -> Option<f64> {
        let url = format!(
            "{}/api/v1/query?query={}",
            self.url,
            form_urlencoded::byte_serialize(query.as_bytes()).collect::<String>()
        );
        let started = Instant::now();
        loop {
            let value = get_json(&url).and_then(|v| {
                v["data"]["result"][0]["value"][1]
                    .as_str()
                    .and_then(|s| s.parse::<f64>().ok())
            });
            if value == Some(want) || started.elapsed() > Duration::from_secs(30) {
                return value;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}
