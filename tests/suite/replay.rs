//! Record and replay: `start --record FILE` writes every answer given (with a digest of
//! its context) as a cassette; `start --replay FILE` answers only from it, and refuses an
//! answer whose context drifted since recording. The replay takes the inputs with
//! `--input` (`--replay` conflicts with `--scenario` and `--answers`).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cuga_flo::journal::FlowState;
use cuga_flo::journal::store::read_journal;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::{Value, json};
use tempfile::TempDir;

fn cuga(run_dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("start")
        .arg("--run-dir")
        .arg(run_dir)
        .write_stdin("");
    cmd
}

/// The state of the only run journalled under `run_dir`.
fn only_run(run_dir: &Path) -> FlowState {
    let runs: Vec<PathBuf> = std::fs::read_dir(run_dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let journal = read_journal(&runs[0].join("journal.jsonl")).unwrap();
    FlowState::fold(journal.records.iter())
}

/// The regulated_breach scenario's inputs.
fn inputs() -> Value {
    json!({
        "alert_id": "A-7840",
        "alert_source": "DLP",
        "alert_description": "Bulk export of 18,000 customer records (names, emails, postal addresses) from the CRM database to an unknown host.",
        "affected_asset": "crm-db-01",
        "open_incidents": []
    })
}

#[test]
fn a_recorded_run_replays_the_same_path_and_refuses_drift() {
    let tmp = TempDir::new().unwrap();
    let cassette = tmp.path().join("c.yaml");

    // Record.
    let recorded_dir = tmp.path().join("recorded");
    cuga(&recorded_dir)
        .args([
            "incident_response",
            "--scenario",
            "regulated_breach",
            "--record",
        ])
        .arg(&cassette)
        .assert()
        .success()
        .stdout(contains(format!("  cassette: {}", cassette.display())));
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(text.contains("context_digest"), "{text}");
    assert!(text.contains("Activity_Triage"), "{text}");
    let recorded = only_run(&recorded_dir);

    // Replay with the same inputs: the same path and decisions, from the cassette only.
    let input = tmp.path().join("in.json");
    std::fs::write(&input, inputs().to_string()).unwrap();
    let replayed_dir = tmp.path().join("replayed");
    cuga(&replayed_dir)
        .args(["incident_response", "--replay"])
        .arg(&cassette)
        .arg("--input")
        .arg(&input)
        .assert()
        .success()
        .stdout(contains(
            "judgement: policy rules, then recorded answers replayed from",
        ))
        .stdout(contains("then no reasoner").not())
        .stdout(contains("human").not())
        .stdout(contains("[scripted]"));
    let replayed = only_run(&replayed_dir);
    assert_eq!(recorded.status, replayed.status);
    assert_eq!(recorded.execution_path, replayed.execution_path);
    assert_eq!(recorded.gateway_decisions, replayed.gateway_decisions);
    let hooks = |s: &FlowState| {
        s.hook_evaluations
            .iter()
            .map(|h| (h.hook.clone(), h.action, h.target.clone(), h.added.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(hooks(&recorded), hooks(&replayed));
    assert_eq!(recorded.process_variables, replayed.process_variables);

    // Replay after a change the triage task sees: refused, naming the control point.
    let mut changed = inputs();
    changed["alert_description"] = json!("A single login from a new country.");
    std::fs::write(&input, changed.to_string()).unwrap();
    cuga(&tmp.path().join("drifted"))
        .args(["incident_response", "--replay"])
        .arg(&cassette)
        .arg("--input")
        .arg(&input)
        .assert()
        .code(1)
        .stdout(contains("drifted since recording"))
        .stdout(contains("`Activity_Triage`"))
        // The cassette kept the context: the drift names the variable that changed.
        .stdout(contains("what changed:"))
        .stdout(contains("~ variables.alert_description: \"Bulk export"))
        .stdout(contains("→ \"A single login from a new country.\""));
}

#[test]
fn a_cassette_is_an_answers_file() {
    let tmp = TempDir::new().unwrap();
    let cassette = tmp.path().join("c.yaml");
    cuga(&tmp.path().join("a"))
        .args([
            "incident_response",
            "--scenario",
            "regulated_breach",
            "--record",
        ])
        .arg(&cassette)
        .assert()
        .success();
    let input = tmp.path().join("in.json");
    let mut changed = inputs();
    changed["alert_description"] = json!("A single login from a new country.");
    std::fs::write(&input, changed.to_string()).unwrap();
    // As plain answers the digests are ignored.
    cuga(&tmp.path().join("b"))
        .args(["incident_response", "--answers"])
        .arg(&cassette)
        .arg("--input")
        .arg(&input)
        .assert()
        .success();
}

#[test]
fn replay_conflicts_with_answers_and_scenario() {
    let tmp = TempDir::new().unwrap();
    cuga(tmp.path())
        .args([
            "incident_response",
            "--replay",
            "x.yaml",
            "--scenario",
            "routine",
        ])
        .assert()
        .code(2);
    cuga(tmp.path())
        .args([
            "incident_response",
            "--replay",
            "x.yaml",
            "--answers",
            "y.yaml",
        ])
        .assert()
        .code(2);
}

/// `runs replay` checks decisions: a terminated run replayed to the same end exits 0
/// (it used to print "all identical" and exit 1), and a replay that differs exits 1.
#[test]
fn runs_replay_of_a_terminated_run_with_identical_decisions_succeeds() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    cuga(dir)
        .args([
            "loan_approval",
            "--engine",
            "native",
            "--scenario",
            "missing_name",
        ])
        .assert()
        .success();
    let state = only_run(dir);
    assert_eq!(
        state.status,
        Some(cuga_flo::vocab::RunStatus::Terminated),
        "the scenario terminates"
    );
    let run_id = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    let mut replay = Command::cargo_bin("cuga-flo").unwrap();
    replay
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["runs", "replay", &run_id, "--run-dir"])
        .arg(dir)
        .write_stdin("")
        .assert()
        .code(0)
        .stdout(contains("all identical"));
}

/// A drifted replay names the control point and what differs in its context: here a
/// hook's rule sets another value since the run, so the task after it is asked with other
/// variables than the recorded answer was given for.
#[test]
fn runs_replay_names_the_drifted_control_point_and_the_variables_that_differ() {
    let tmp = TempDir::new().unwrap();
    let apps = tmp.path().join("apps");
    let app = apps.join("drift");
    std::fs::create_dir_all(app.join("config")).unwrap();
    std::fs::create_dir_all(app.join("policies")).unwrap();
    std::fs::create_dir_all(app.join("scenarios")).unwrap();
    std::fs::write(
        app.join("config/model.bpmn"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
  <bpmn:process id="P" isExecutable="true">
    <bpmn:startEvent id="S"/>
    <bpmn:task id="T1" name="Intake"/>
    <bpmn:task id="T2" name="Assess"/>
    <bpmn:endEvent id="E"/>
    <bpmn:sequenceFlow id="f1" sourceRef="S" targetRef="T1"/>
    <bpmn:sequenceFlow id="f2" sourceRef="T1" targetRef="T2"/>
    <bpmn:sequenceFlow id="f3" sourceRef="T2" targetRef="E"/>
  </bpmn:process>
</bpmn:definitions>
"#,
    )
    .unwrap();
    std::fs::write(
        app.join("config/drift_config.yaml"),
        r#"flow:
  id: drift_v1
  name: Drift
  bpmn_file: model.bpmn
variables:
  x: 0
  tier: ""
  verdict: ""
tasks:
  - id: T1
    mode: task_agent
    output_mapping: {x: x}
    agent: {system_instruction: "Take the case in."}
  - id: T2
    mode: task_agent
    output_mapping: {verdict: verdict}
    agent: {system_instruction: "Assess the case."}
hooks:
  - id: tiering
    type: edge
    location: f2
    policy: "../policies/tiering.md"
    may_set: [tier]
    allowed_targets: []
"#,
    )
    .unwrap();
    let policy = |tier: &str| {
        format!("# Tiering\n\n```rules\nwhen ${{x}} > 0 then continue set tier = \"{tier}\"\n```\n")
    };
    std::fs::write(app.join("policies/tiering.md"), policy("gold")).unwrap();
    std::fs::write(
        app.join("scenarios/s.yaml"),
        "answers:\n  T1: {outputs: {x: 5}}\n  T2: {outputs: {verdict: ok}}\n",
    )
    .unwrap();
    let run_dir = tmp.path().join("runs");
    let cmd = || {
        let mut c = Command::cargo_bin("cuga-flo").unwrap();
        c.env_remove("CUGA_FLO_APPS")
            .env_remove("CUGA_FLO_LLM_BASE_URL")
            .env("NO_COLOR", "1")
            .arg("--apps-dir")
            .arg(&apps)
            .write_stdin("");
        c
    };
    cmd()
        .args(["start", "drift", "--scenario", "s", "--run-dir"])
        .arg(&run_dir)
        .assert()
        .success();
    let run_id = std::fs::read_dir(run_dir.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();

    // The rule now sets another tier: T2's question differs in `tier`.
    std::fs::write(app.join("policies/tiering.md"), policy("silver")).unwrap();
    let out = cmd()
        .args(["runs", "replay", &run_id, "--run-dir"])
        .arg(&run_dir)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("drift at Assess (`T2`), visit 1"), "{out}");
    assert!(out.contains(r#"~ tier: "gold" → "silver""#), "{out}");
    assert!(
        out.contains("the app's files changed since the run"),
        "{out}"
    );
    // T1 did not drift: its question is the recorded one.
    assert!(!out.contains("drift at Intake"), "{out}");

    // The same as JSON.
    let out = cmd()
        .args(["runs", "replay", &run_id, "--json", "--run-dir"])
        .arg(&run_dir)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let checked: Value = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "replay_checked")
        .unwrap();
    let drift = &checked["drift"][0];
    assert_eq!(drift["element"], "T2");
    assert_eq!(
        drift["variables"]["changed"]["tier"],
        json!({"old": "gold", "new": "silver"})
    );
    assert_eq!(drift["app_changed"], true);
}
