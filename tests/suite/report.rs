//! `cuga-flo runs report`: the HTML page of a run, checked as a person's browser shows it.
//! Each page is loaded in a real headless Chromium (Debian's `chromium`; .ci/run installs
//! it) with every host name unresolvable, and the test reads back the DOM the page built:
//! the diagram drawn by the vendored bpmn-js, the path's elements highlighted (counted
//! against the journal's path), no console message and no network request; journal text
//! that tries to inject markup stays text.
//!
//! Without Chromium the browser checks are skipped with a note, unless
//! `CUGA_FLO_REQUIRE_CHROMIUM` is set (CI sets it). `CUGA_FLO_UPDATE_SCREENSHOT=1`
//! rewrites docs/run-report.png from a demo run.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

const INJECT_SCRIPT: &str = "</script><script>document.title=\"pwned\"</script>";
const INJECT_IMG: &str = "<img src=x onerror=\"document.title='pwned'\">";

fn cuga(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(dir)
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1");
    cmd
}

fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A demo app's scenario run in a fresh run folder; returns the workspace, the run folder
/// and the run's id.
fn demo_run(app: &str, scenario: &str) -> (TempDir, PathBuf, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = TempDir::new().unwrap();
    support::copy_dir(
        &root.join("applications").join(app),
        &dir.path().join("applications").join(app),
    );
    let runs = dir.path().join("state");
    if scenario == "evil" {
        std::fs::write(
            dir.path()
                .join("applications")
                .join(app)
                .join("scenarios/evil.yaml"),
            evil_scenario(),
        )
        .unwrap();
    }
    ok(cuga(dir.path())
        .args(["start", app, "--scenario", scenario, "--run-dir"])
        .arg(&runs));
    let id = std::fs::read_dir(runs.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    (dir, runs, id)
}

/// invoice_payment's disputed-line scenario with markup in an input, an output and a reason.
fn evil_scenario() -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    format!(
        r#"description: markup in every journal text
inputs:
  invoice_id: {script}
  amount: 2300.0
  line_items:
    - {{description: {img}, quantity: 10, unit_price: 30.0}}
answers:
  Activity_review_lines:
    - {{error: LINE_DISPUTED, message: {img}}}
  Activity_resolve: {{outputs: {{resolution: {img}}}, reason: {script}}}
"#,
        script = q(INJECT_SCRIPT),
        img = q(INJECT_IMG)
    )
}

fn report(workspace: &Path, runs: &Path, id: &str) -> (PathBuf, String) {
    let page = workspace.join("run.html");
    let out = ok(cuga(workspace)
        .args(["runs", "report", id, "--run-dir"])
        .arg(runs)
        .arg("-o")
        .arg(&page));
    assert!(out.contains(id), "{out}");
    let html = std::fs::read_to_string(&page).unwrap();
    (page, html)
}

fn journal(runs: &Path, id: &str) -> Vec<Value> {
    std::fs::read_to_string(runs.join("runs").join(id).join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The nodes entered and flows taken.
fn path_of(journal: &[Value]) -> BTreeSet<String> {
    let mut path = BTreeSet::new();
    for r in journal {
        match r["event"].as_str() {
            Some("node_entered") => path.insert(r["node"].as_str().unwrap().to_string()),
            Some("flow_taken") => path.insert(r["flow"].as_str().unwrap().to_string()),
            _ => false,
        };
    }
    path
}

// --- The browser ---------------------------------------------------------------------------

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CUGA_FLO_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CUGA_FLO_REQUIRE_CHROMIUM").is_none(),
            "no chromium on PATH (apt-get install chromium; .ci/run does)"
        );
        eprintln!("note: no chromium on PATH: the report's browser checks are skipped");
    }
    found
}

/// What a page did in the browser.
struct Loaded {
    dom: String,
    /// The page's console messages.
    console: Vec<String>,
    /// The URLs the page asked the network for.
    requests: Vec<String>,
}

/// Chromium, headless and offline (no host name resolves; no background services), with a
/// profile of its own.
fn browser(bin: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        "--window-size=1400,1000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

fn load(bin: &Path, page: &Path) -> Loaded {
    let scratch = TempDir::new().unwrap();
    let net = scratch.path().join("net.json");
    let out = browser(bin, &scratch.path().join("profile"))
        .arg(format!("--log-net-log={}", net.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    Loaded {
        dom: String::from_utf8(out.stdout).unwrap(),
        console,
        requests: page_requests(&net),
    }
}

/// The requests of the net log the page made (the browser's own, which it makes whatever
/// the page, have no origin: "not an origin").
fn page_requests(net_log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(net_log).unwrap_or_default();
    let log: Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .unwrap_or_else(|e| panic!("the net log does not parse: {e}"));
    let Some(start_job) = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].as_u64()
    else {
        panic!("the net log has no URL_REQUEST_START_JOB type");
    };
    (log["events"].as_array().into_iter().flatten())
        .filter(|e| e["type"].as_u64() == Some(start_job))
        .filter(|e| e["params"]["initiator"].as_str() != Some("not an origin"))
        .filter_map(|e| e["params"]["url"].as_str().map(str::to_string))
        .collect()
}

/// The ids of the diagram elements that carry `marker`.
fn marked(dom: &str, marker: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for tag in dom.split("<g ").skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        let attr = |name: &str| {
            let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
            let end = tag[start..].find('"')? + start;
            Some(&tag[start..end])
        };
        if let (Some(class), Some(id)) = (attr("class"), attr("data-element-id"))
            && class.split_whitespace().any(|c| c == marker)
        {
            out.insert(id.to_string());
        }
    }
    out
}

fn body_attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let body = &dom[dom.find("<body")?..];
    let body = &body[..body.find('>')?];
    let start = body.find(&format!("{name}=\""))? + name.len() + 2;
    Some(&body[start..start + body[start..].find('"')?])
}

// --- Tests ---------------------------------------------------------------------------------

#[test]
fn the_page_is_self_contained_and_draws_the_path_with_the_models_diagram() {
    let (dir, runs, id) = demo_run("incident_response", "regulated_breach");
    let (page, html) = report(dir.path(), &runs, &id);
    // Nothing to fetch: the viewer, its styles and the data are in the page.
    assert!(
        html.contains("bpmn-js - bpmn-viewer v18"),
        "the viewer is inlined"
    );
    for fetch in ["<script src", "<link", "@import", "url(http"] {
        assert!(!html.contains(fetch), "the page fetches with `{fetch}`");
    }
    // The journal as a table, one row per record.
    let journal = journal(&runs, &id);
    assert_eq!(html.matches("<tr class=\"ev-").count(), journal.len());
    assert!(
        html.contains("hook_regulated_breach"),
        "the adaptation is in the table"
    );

    let Some(bin) = chromium() else { return };
    let loaded = load(&bin, &page);
    assert_eq!(body_attr(&loaded.dom, "data-report"), Some("ready"));
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(
        loaded.requests.is_empty(),
        "requests: {:#?}",
        loaded.requests
    );
    // Every element of the path is drawn and highlighted, and nothing else: what a hook
    // added at run time too, drawn on the flow it was inserted on.
    let added: Vec<String> = (journal.iter())
        .filter(|r| r["event"] == "hook_evaluated" && r["action"] == "add_node")
        .filter_map(|r| r["added"].as_str().map(str::to_string))
        .collect();
    assert!(!added.is_empty(), "the demo scenario adds a node");
    let expected: BTreeSet<String> = path_of(&journal).into_iter().collect();
    let highlighted = marked(&loaded.dom, "cf-taken");
    assert_eq!(highlighted, expected);
    for a in &added {
        assert!(highlighted.contains(a), "the inserted {a} is drawn");
    }
    assert_eq!(
        body_attr(&loaded.dom, "data-highlighted"),
        Some(expected.len().to_string().as_str())
    );
    assert!(
        !loaded.dom.contains("<p>Not in the model"),
        "nothing of the path is left undrawn"
    );
    // The adaptation says what it did, by name, on the task it inserted.
    assert!(
        loaded
            .dom
            .contains("inserted this task (hook hook_regulated_breach)"),
        "the adaptation in words"
    );
    // Who decided, and the hook's adaptation, are laid over the diagram.
    assert!(!marked(&loaded.dom, "cf-decided").is_empty());
    assert!(!marked(&loaded.dom, "cf-adapted").is_empty());
    assert!(loaded.dom.contains("class=\"cf-decision\""));
    assert!(loaded.dom.contains("class=\"cf-adaptation\""));
    // The bpmn.io watermark the licence requires is there.
    assert!(loaded.dom.contains("bjs-powered-by"));
}

#[test]
fn a_model_without_a_diagram_is_laid_out_and_drawn() {
    let (dir, runs, id) = demo_run("invoice_payment", "line_disputed");
    let model = std::fs::read_to_string(
        dir.path()
            .join("applications/invoice_payment/config/invoice_payment.bpmn"),
    )
    .unwrap();
    assert!(!model.contains("BPMNShape"), "the fixture has no DI");
    let (page, html) = report(dir.path(), &runs, &id);
    assert!(html.contains("cuga_flo_layout"), "a diagram was generated");

    let Some(bin) = chromium() else { return };
    let loaded = load(&bin, &page);
    assert_eq!(body_attr(&loaded.dom, "data-report"), Some("ready"));
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(
        loaded.requests.is_empty(),
        "requests: {:#?}",
        loaded.requests
    );
    assert!(loaded.dom.contains("this layout was generated by cuga-flo"));
    assert_eq!(
        marked(&loaded.dom, "cf-taken"),
        path_of(&journal(&runs, &id))
    );
    // The review failed (its error was caught by the boundary event).
    assert!(marked(&loaded.dom, "cf-failed").contains("Activity_review_lines"));
}

#[test]
fn journal_text_never_becomes_markup_or_script() {
    let (dir, runs, id) = demo_run("invoice_payment", "evil");
    let (page, html) = report(dir.path(), &runs, &id);
    // Three scripts: the data, the viewer, the page's own; the journal's text is escaped.
    assert_eq!(html.to_lowercase().matches("<script").count(), 3, "{html}");
    assert_eq!(html.matches("</script>").count(), 3);
    assert!(
        !html.contains("<img"),
        "markup from the journal in the page"
    );
    assert!(
        html.contains("&lt;img src=x onerror="),
        "the text is shown, escaped"
    );
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;document.title="));

    let Some(bin) = chromium() else { return };
    let loaded = load(&bin, &page);
    assert_eq!(body_attr(&loaded.dom, "data-report"), Some("ready"));
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(
        loaded
            .dom
            .contains(&format!("<title>cuga-flo run {id}</title>"))
    );
    assert!(!loaded.dom.contains("pwned</title>"));
    assert!(!loaded.dom.contains("<img"), "an element was injected");
    // The overlay shows the output as text.
    assert!(
        loaded.dom.contains("resolution=\"&lt;img src=x onerror="),
        "{}",
        loaded.dom
    );
}

#[test]
fn the_network_check_sees_a_page_that_fetches() {
    // The check above is only worth something if it sees a request when there is one.
    let Some(bin) = chromium() else { return };
    let dir = TempDir::new().unwrap();
    let page = dir.path().join("fetches.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><img src=\"http://example.invalid/x.png\"></body></html>",
    )
    .unwrap();
    let loaded = load(&bin, &page);
    assert!(
        loaded
            .requests
            .iter()
            .any(|u| u.contains("example.invalid")),
        "{:?}",
        loaded.requests
    );
}

#[test]
fn a_run_and_its_report_on_standard_output() {
    let (dir, runs, id) = demo_run("incident_response", "regulated_breach");
    let out = ok(cuga(dir.path())
        .args(["runs", "report", &id[id.len() - 6..], "--run-dir"])
        .arg(&runs));
    assert!(out.starts_with("<!DOCTYPE html>"));
    assert!(out.trim_end().ends_with("</html>"));
    // Without its app the page still has the journal, and says why there is no diagram.
    std::fs::remove_dir_all(dir.path().join("applications")).unwrap();
    let out = ok(cuga(dir.path())
        .args(["runs", "report", &id, "--run-dir"])
        .arg(&runs));
    assert!(out.contains("\"xml\":null"), "no model in the data");
    assert!(out.contains("<tr class=\"ev-run_finished\">"));
    // An unknown run is a usage error, not a page.
    let out = cuga(dir.path())
        .args(["runs", "report", "nosuchrun", "--run-dir"])
        .arg(&runs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn the_readme_screenshot_is_of_a_demo_run() {
    let Some(bin) = chromium() else { return };
    let (dir, runs, id) = demo_run("incident_response", "regulated_breach");
    let (page, _) = report(dir.path(), &runs, &id);
    let shot = dir.path().join("run-report.png");
    let out = browser(&bin, &dir.path().join("profile"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000);
    // 1400 × 1000, as the window.
    assert_eq!(&png[16..24], &[0, 0, 0x05, 0x78, 0, 0, 0x03, 0xe8]);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/run-report.png");
    if std::env::var_os("CUGA_FLO_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(&docs, &png).unwrap();
    }
    assert!(
        docs.is_file(),
        "docs/run-report.png (CUGA_FLO_UPDATE_SCREENSHOT=1 writes it)"
    );
}
