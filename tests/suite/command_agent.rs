//! Command agents (`agent: {type: command, recipe, command, timeout}`) through the real
//! binary, with a stand-in for the Goose CLI (tests/suite/support/goose_stand_in.py: Goose
//! cannot be installed here) that follows the same contract: success with plain or
//! fenced JSON, the declared parameters as one argument each (no shell), and each failure
//! — a non-zero exit, a timeout (the whole process group killed), output without JSON,
//! output that violates the recipe's schema — failing the task with COMMAND_FAILED and
//! the CLI's stderr tail, caught by the task's error boundary event.

use crate::support;
use support::{copy_dir, cuga, text};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture app, copied under `tmp` with the stand-in's path filled in.
fn app(tmp: &Path) -> PathBuf {
    let dir = tmp.join("apps/command_agent");
    copy_dir(&root().join("tests/fixtures/apps/command_agent"), &dir);
    let config = dir.join("config/command_agent_config.yaml");
    let stand_in = root().join("tests/suite/support/goose_stand_in.py");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("STAND_IN", stand_in.to_str().unwrap());
    std::fs::write(&config, text).unwrap();
    dir
}

fn records(run_dir: &Path) -> Vec<Value> {
    let runs = run_dir.join("runs");
    let id = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    std::fs::read_to_string(runs.join(id).join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn event<'a>(records: &'a [Value], name: &str, node: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["event"] == name && r["node"] == node)
        .unwrap_or_else(|| panic!("no {name} at {node}"))
}

fn path(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["event"] == "node_entered")
        .map(|r| r["node"].as_str().unwrap().to_string())
        .collect()
}

/// Start the app with `request` and the stand-in's environment; the journal's records.
fn run(tmp: &Path, request: &str, env: &[(&str, String)]) -> (std::process::Output, Vec<Value>) {
    let app = app(tmp);
    let run_dir = tmp.join("runs");
    let var = format!("request={request}");
    let out = cuga(
        &["start", app.to_str().unwrap(), "--var", &var],
        &run_dir,
        env,
    );
    let records = records(&run_dir);
    (out, records)
}

#[test]
fn the_cli_answers_and_its_output_routes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("argv.jsonl");
    // Text that a shell would act on: it must reach the CLI as one inert argument.
    let request = "fraud on my line; $(touch pwned) `id` && echo \"x\"";
    let (out, records) = run(
        tmp.path(),
        request,
        &[("GOOSE_STAND_IN_LOG", log.to_string_lossy().into_owned())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        path(&records),
        ["start", "classify", "severity_check", "end_high"]
    );
    let task = event(&records, "task_finished", "classify");
    assert_eq!(task["status"], "completed");
    assert_eq!(task["decided_by"], "command");
    assert_eq!(task["outputs"]["severity"], "HIGH");
    // The declared parameters only, each one argument; the optional one's value mapped.
    let argv: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(argv.len(), 1);
    let recipe = tmp
        .path()
        .join("apps/command_agent/recipes/classify_request.yaml");
    assert_eq!(
        argv[0],
        serde_json::json!([
            "run",
            "--recipe",
            recipe.to_str().unwrap(),
            "--params",
            format!("request={request}"),
            "--params",
            "customer="
        ])
    );
    assert!(!root().join("pwned").exists() && !tmp.path().join("pwned").exists());
    // The outputs came from outside the run: untrusted.
    let finished = records
        .iter()
        .find(|r| r["event"] == "task_finished")
        .unwrap();
    assert!(
        finished["taint"]["source"]
            .as_str()
            .unwrap()
            .contains("command agent"),
        "{finished}"
    );
}

#[test]
fn fenced_json_among_chatter_is_recovered() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, records) = run(
        tmp.path(),
        "please activate my SIM",
        &[("GOOSE_STAND_IN_MODE", "fenced".into())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(path(&records).last().unwrap(), "end_low");
    assert_eq!(
        event(&records, "task_finished", "classify")["outputs"]["severity"],
        "LOW"
    );
}

/// A failure: the task fails with COMMAND_FAILED, its message has `says` and the stderr
/// tail, and the error boundary takes the run to `end_failed`.
fn fails(mode: &str, says: &str) -> Duration {
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    let started = Instant::now();
    let (out, records) = run(
        tmp.path(),
        "fraud",
        &[
            ("GOOSE_STAND_IN_MODE", mode.into()),
            ("GOOSE_STAND_IN_PIDS", pids.to_string_lossy().into_owned()),
        ],
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{mode}: {}", text(&out));
    let task = event(&records, "task_finished", "classify");
    assert_eq!(task["status"], "failed", "{mode}: {task}");
    assert_eq!(task["error_code"], "COMMAND_FAILED", "{mode}: {task}");
    let error = task["error"].as_str().unwrap();
    assert!(error.contains(says), "{mode}: {error}");
    assert!(
        error.contains("stderr: starting session | provider: stand-in"),
        "{mode}: {error}"
    );
    assert_eq!(
        path(&records),
        ["start", "classify", "classify_failed", "end_failed"],
        "{mode}"
    );
    if mode == "hang" {
        // The grandchild the CLI started was killed with it.
        let pid = std::fs::read_to_string(&pids).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        assert!(
            stat.is_err() || stat.unwrap().split_whitespace().nth(2) == Some("Z"),
            "the CLI's child outlived the timeout"
        );
    }
    took
}

#[test]
fn a_non_zero_exit_fails_the_task_with_the_stderr_tail() {
    fails("exit", "exited with status 3");
}

#[test]
fn a_cli_past_its_timeout_is_killed_with_its_process_group() {
    let took = fails("hang", "did not finish within 5s");
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn output_without_json_fails_the_task() {
    fails("garbage", "the output holds no JSON object");
}

#[test]
fn output_against_the_recipe_schema_fails_the_task() {
    fails("schema", "violates the recipe's response.json_schema");
}

fn validate(app: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .env("NO_COLOR", "1")
        .args(["validate", app.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn validate_checks_the_recipe_and_its_parameters() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app(tmp.path());
    let config = app.join("config/command_agent_config.yaml");
    let text0 = std::fs::read_to_string(&config).unwrap();
    // A parameter the recipe does not declare.
    std::fs::write(
        &config,
        text0.replace(
            "customer: customer}",
            "customer: customer, secret: request}",
        ),
    )
    .unwrap();
    let out = validate(&app);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("command::parameter"), "{}", text(&out));
    // A recipe that cannot be read.
    std::fs::write(
        &config,
        text0.replace("classify_request.yaml", "missing.yaml"),
    )
    .unwrap();
    let out = validate(&app);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("command::recipe"), "{}", text(&out));
    // `recipe` without `type: command`.
    std::fs::write(&config, text0.replace("      type: command\n", "")).unwrap();
    let out = validate(&app);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("needs `type: command`"),
        "{}",
        text(&out)
    );
}
