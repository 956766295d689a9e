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
        .stdout(contains("`Activity_Triage`"));
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
