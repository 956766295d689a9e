//! A real browser for the web console's tests: Debian's headless Chromium driven through
//! WebDriver by Debian's chromedriver (`apt-get install chromium chromium-driver`; .ci/run
//! installs both). Without them a test skips its browser checks, unless
//! CUGA_FLO_REQUIRE_CHROMIUM is set (CI), when it fails instead.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http;

/// chromedriver and Chromium, when both are installed.
fn binaries() -> Option<(String, String)> {
    let which = |names: &[&str]| {
        names.iter().find_map(|n| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {n}")])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        })
    };
    let driver = which(&["chromedriver"]);
    let browser = which(&["chromium", "chromium-browser", "google-chrome"]);
    match (driver, browser) {
        (Some(d), Some(b)) => Some((d, b)),
        _ if std::env::var_os("CUGA_FLO_REQUIRE_CHROMIUM").is_some() => {
            panic!(
                "no chromedriver or chromium on PATH (apt-get install chromium chromium-driver; .ci/run does)"
            )
        }
        _ => {
            eprintln!("note: no chromedriver or chromium on PATH: the browser checks are skipped");
            None
        }
    }
}

/// A chromedriver with one headless Chromium session; both go when dropped.
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
}

/// A page element (its WebDriver reference).
#[derive(Clone)]
pub struct Element(String);

const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    /// Start one, or `None` when Chromium or chromedriver is not installed.
    pub fn start() -> Option<Browser> {
        let (driver_bin, browser_bin) = binaries()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap().keep();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": browser_bin,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,1100",
                         format!("--user-data-dir={}", profile.display())],
                "prefs": {"credentials_enable_service": false}
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let reply = http::post_json(&format!("{base}/session"), &caps);
        let v = reply.json();
        let session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {v}"))
            .to_string();
        Some(Browser {
            driver,
            base,
            session,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/session/{}{path}", self.base, self.session)
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let reply = match method {
            "GET" => http::get(&self.url(path), &[]),
            _ => http::post_json(&self.url(path), &body),
        };
        let v = reply.json();
        if reply.status >= 400 {
            panic!("WebDriver {method} {path}: {}", v["value"]);
        }
        v["value"].clone()
    }

    pub fn go(&self, url: &str) {
        self.call("POST", "/url", json!({"url": url}));
    }

    pub fn current_url(&self) -> String {
        self.call("GET", "/url", Value::Null)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn find(&self, css: &str) -> Element {
        self.try_find(css).unwrap_or_else(|| {
            let html = self.script("return document.documentElement.outerHTML", json!([]));
            panic!(
                "no element `{css}` on {}:\n{}",
                self.current_url(),
                html.as_str().unwrap_or_default()
            )
        })
    }

    pub fn try_find(&self, css: &str) -> Option<Element> {
        let reply = http::post_json(
            &self.url("/element"),
            &json!({"using": "css selector", "value": css}),
        );
        let v = reply.json();
        if reply.status >= 400 && v["value"]["error"] != "no such element" {
            panic!("WebDriver find `{css}`: {}", v["value"]);
        }
        v["value"][ELEMENT_KEY]
            .as_str()
            .map(|e| Element(e.to_string()))
    }

    pub fn all(&self, css: &str) -> Vec<Element> {
        let v = self.call(
            "POST",
            "/elements",
            json!({"using": "css selector", "value": css}),
        );
        (v.as_array().into_iter().flatten())
            .filter_map(|e| e[ELEMENT_KEY].as_str().map(|s| Element(s.to_string())))
            .collect()
    }

    pub fn type_into(&self, e: &Element, text: &str) {
        self.call("POST", &format!("/element/{}/clear", e.0), json!({}));
        self.call(
            "POST",
            &format!("/element/{}/value", e.0),
            json!({"text": text}),
        );
    }

    pub fn click(&self, e: &Element) {
        self.call("POST", &format!("/element/{}/click", e.0), json!({}));
    }

    pub fn text(&self, e: &Element) -> String {
        self.call("GET", &format!("/element/{}/text", e.0), Value::Null)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Run `script` (a function body; `arguments` are `args`) in the page.
    pub fn script(&self, script: &str, args: Value) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": args}),
        )
    }

    /// Wait until `script` returns a truthy value (or fail after `secs`, saying `what`).
    pub fn wait_for(&self, what: &str, script: &str, secs: u64) -> Value {
        let until = Instant::now() + Duration::from_secs(secs);
        loop {
            let v = self.script(script, json!([]));
            if !(v.is_null() || v == json!(false) || v == json!("") || v == json!(0)) {
                return v;
            }
            if Instant::now() > until {
                let html = self.script("return document.documentElement.outerHTML", json!([]));
                let html = html.as_str().unwrap_or_default();
                panic!(
                    "waited {secs} s for {what} on {}:\n{}",
                    self.current_url(),
                    &html[..html.len().min(3000)]
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The page as a PNG.
    pub fn screenshot(&self) -> Vec<u8> {
        let b64 = self.call("GET", "/screenshot", Value::Null);
        decode_base64(b64.as_str().unwrap_or_default())
    }

    /// What the page logged to its console (errors: script failures, CSP violations).
    pub fn console_errors(&self) -> Vec<String> {
        let reply = http::post_json(&self.url("/se/log"), &json!({"type": "browser"}));
        let v = reply.json();
        (v["value"].as_array().into_iter().flatten())
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    pub fn delete_cookies(&self) {
        http::request("DELETE", &self.url("/cookie"), &[], "");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http::request(
            "DELETE",
            &format!("{}/session/{}", self.base, self.session),
            &[],
            "",
        );
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn decode_base64(text: &str) -> Vec<u8> {
    let table = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter_map(table) {
        acc = (acc << 6) | c;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}
