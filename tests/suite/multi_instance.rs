//! Multi-instance activities through the real binary: a model from the corpus run as
//! written (Camunda 7's loan granting example: a parallel multi-instance sub-process over
//! `${creditScores}`), a run whose instances wait for a person parks and resumes one
//! instance at a time without redoing any, and a run killed at every crash point of a
//! multi-instance review resumes to the same end.

use crate::support;
use support::{cuga, text};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn only_run(run_dir: &Path) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(run_dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.remove(0)
}

fn records(run_dir: &Path, id: &str) -> Vec<Value> {
    let path = run_dir.join("runs").join(id).join("journal.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn events<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["event"] == name).collect()
}

/// `<element>:<visit>` of a record's idempotency key (the run id left out).
fn visit(record: &Value) -> String {
    let key = record["key"].as_str().unwrap_or_default();
    key.split_once(':').map_or(key, |(_, k)| k).to_string()
}

/// The instances entered: `(node, loop_counter, instances)`.
fn instances(records: &[Value]) -> Vec<(String, u64, u64)> {
    events(records, "node_entered")
        .into_iter()
        .filter(|r| r.get("instance").is_some())
        .map(|r| {
            (
                r["node"].as_str().unwrap().to_string(),
                r["instance"]["loop_counter"].as_u64().unwrap(),
                r["instance"]["instances"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Camunda's loan granting example, unchanged (tests/fixtures/apps/loan_granting): each
/// instance of the sub-process routes by its own `score`, so the good scores are granted
/// and the bad one rejected, in parallel.
#[test]
fn a_camunda_model_with_a_multi_instance_sub_process_runs_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let answers = tmp.path().join("answers.yaml");
    std::fs::write(
        &answers,
        "answers:\n  \
           Task_1lvjtd4: {outputs: {creditScores: [7, 3, 9]}}\n  \
           Task_0v4gadf: {outputs: {granted: yes}}\n  \
           Task_0j0sjlk: {outputs: {rejected: yes}}\n",
    )
    .unwrap();
    let answers = answers.to_string_lossy().into_owned();
    let args = [
        "--apps-dir",
        "tests/fixtures/apps",
        "start",
        "loan_granting",
        "--answers",
        answers.as_str(),
        "--no-model",
    ];
    let out = cuga(&args, tmp.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = records(tmp.path(), &only_run(tmp.path()));
    let sub = "SubProcess_16kr5xn";
    assert_eq!(
        instances(&journal),
        [(sub.into(), 1, 3), (sub.into(), 2, 3), (sub.into(), 3, 3)]
    );
    // Each instance's gateway read its own score.
    let routed: Vec<&str> = events(&journal, "gateway_routed")
        .iter()
        .map(|r| r["flows"][0].as_str().unwrap())
        .collect();
    assert_eq!(
        routed,
        [
            "SequenceFlow_17zmvol",
            "SequenceFlow_0vpum3q",
            "SequenceFlow_17zmvol"
        ]
    );
    let mut tasks: Vec<String> = events(&journal, "task_finished")
        .iter()
        .map(|r| visit(r))
        .collect();
    tasks.sort();
    assert_eq!(
        tasks,
        [
            "Task_0j0sjlk:1",
            "Task_0v4gadf:1",
            "Task_0v4gadf:2",
            "Task_1lvjtd4:1"
        ]
    );
    let finished = events(&journal, "run_finished");
    assert_eq!(finished[0]["status"], "completed");
    // The instances' own variables never reach the process.
    assert!(finished[0]["variables"].get("score").is_none());
    assert!(finished[0]["variables"].get("loopCounter").is_none());
}

/// A review per line item, each for a person: the first is answered in advance, the other
/// two park. A person answers the third (by its question key) and then the second (by
/// the task's id); each resume re-derives the finished instances from the journal and asks
/// only the open one. Every instance is answered once, and the reviews are collected in
/// line order.
#[test]
fn instances_waiting_for_a_person_park_and_resume_one_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let answers = dir.join("answers.yaml");
    std::fs::write(
        &answers,
        "answers:\n  \
           Activity_review_lines: [{outputs: {line_verdict: first}}]\n  \
           Activity_pay: {outputs: {payment_reference: PAY-1}}\n",
    )
    .unwrap();
    let answers = answers.to_string_lossy().into_owned();
    let lines =
        r#"line_items=[{"description":"paper"},{"description":"ink"},{"description":"stamps"}]"#;
    let args = [
        "start",
        "invoice_payment",
        "--answers",
        answers.as_str(),
        "--var",
        "invoice_id=INV-7",
        "--var",
        lines,
        "--no-model",
    ];
    let out = cuga(&args, dir, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(dir);
    let journal = records(dir, &id);
    let parked: Vec<String> = events(&journal, "question_parked")
        .iter()
        .map(|r| r["question"]["key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        parked,
        [
            format!("{id}:Activity_review_lines:2"),
            format!("{id}:Activity_review_lines:3")
        ]
    );

    // While parked, what an instance wrote to its own names (the output element) is not a
    // process variable: `runs show` lists the process's only.
    let out = cuga(&["runs", "show", &id, "--json"], dir, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["status"], "waiting");
    assert!(
        shown["process_variables"].get("line_verdict").is_none(),
        "{}",
        shown["process_variables"]
    );
    let first = events(&journal, "task_finished");
    assert_eq!(first[0]["own"], json!(["line_verdict"]));

    // The third instance first, named by its question's key.
    let third = format!("{id}:Activity_review_lines:3");
    let out = cuga(
        &[
            "runs",
            "answer",
            &id,
            &third,
            "--outputs",
            r#"{"line_verdict": "third"}"#,
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    // The second is still open, and parked once only.
    let journal = records(dir, &id);
    assert_eq!(events(&journal, "question_parked").len(), 2);
    let out = cuga(
        &[
            "runs",
            "answer",
            &id,
            "Activity_review_lines",
            "--outputs",
            r#"{"line_verdict": "second"}"#,
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let journal = records(dir, &id);
    let reviews: Vec<String> = events(&journal, "task_finished")
        .iter()
        .filter(|r| r["node"] == "Activity_review_lines")
        .map(|r| visit(r))
        .collect();
    assert_eq!(
        reviews,
        [
            "Activity_review_lines:1",
            "Activity_review_lines:3",
            "Activity_review_lines:2"
        ],
        "each instance answered once"
    );
    // Entered once each, across the three processes.
    assert_eq!(
        instances(&journal),
        [
            ("Activity_review_lines".into(), 1, 3),
            ("Activity_review_lines".into(), 2, 3),
            ("Activity_review_lines".into(), 3, 3)
        ]
    );
    let finished = events(&journal, "run_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "completed");
    assert_eq!(
        finished[0]["variables"]["line_reviews"],
        json!(["first", "second", "third"])
    );
    assert_eq!(finished[0]["variables"]["payment_reference"], "PAY-1");
}

/// What must be the same however often the run was interrupted: the status, the final
/// variables and steps, and each control point's answer by its idempotency key.
fn end_state(records: &[Value]) -> Value {
    let finished = events(records, "run_finished");
    assert_eq!(finished.len(), 1, "exactly one run_finished");
    let f = finished[0];
    let mut answers: BTreeMap<String, Value> = BTreeMap::new();
    for r in events(records, "task_finished") {
        let previous = answers.insert(
            visit(r),
            json!({"status": r["status"], "outputs": r["outputs"]}),
        );
        assert!(previous.is_none(), "{} answered twice", visit(r));
    }
    json!({
        "status": f["status"],
        "variables": f["variables"],
        "steps": f["steps"],
        "answers": answers,
        "instances": instances(records).len(),
    })
}

/// A run of the line review killed at every crash point (strict durability; and through
/// the MCP bridge, whose parallel calls overlap) resumes to the end of a run never
/// interrupted, no instance answered twice.
#[test]
fn a_multi_instance_review_killed_anywhere_resumes_to_the_same_end() {
    let tmp = tempfile::tempdir().unwrap();
    let mut kills = 0;
    for extra in [["--durability", "strict"], ["--bridge", "mcp"]] {
        let mut args = vec![
            "start",
            "invoice_payment",
            "--scenario",
            "lines_reviewed",
            "--no-model",
        ];
        args.extend(extra);
        let base = tmp.path().join(format!("{}-baseline", extra[1]));
        let out = cuga(&args, &base, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let baseline = end_state(&records(&base, &only_run(&base)));
        let trace = tmp.path().join(format!("{}-trace", extra[1]));
        let out = cuga(&args, &trace, &[("CUGA_FLO_CRASH_TRACE", "1".into())]);
        let points = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("crash-point "))
            .count() as u64;
        assert!(points >= 10, "only {points} crash points");
        for at in 1..=points {
            let dir = tmp.path().join(format!("{}-{at}", extra[1]));
            let out = cuga(&args, &dir, &[("CUGA_FLO_CRASH_AT", at.to_string())]);
            if out.status.code().is_some() {
                continue;
            }
            let id = only_run(&dir);
            let resumed = cuga(&["runs", "resume", &id], &dir, &[]);
            if records(&dir, &id).is_empty() {
                continue;
            }
            kills += 1;
            assert_eq!(
                end_state(&records(&dir, &id)),
                baseline,
                "killed at crash point {at} ({extra:?}), then resumed:\n{}",
                text(&resumed)
            );
        }
    }
    assert!(kills >= 20, "only {kills} kills");
    eprintln!("{kills} runs killed and resumed");
}

/// `validate` reads every multi-instance expression the native engine will evaluate, and
/// reports one it cannot read where the loop characteristics are written.
#[test]
fn validate_reports_an_unreadable_multi_instance_expression_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let apps = tmp.path().join("apps");
    support::copy_dir(
        &root().join("tests/fixtures/apps/loan_granting"),
        &apps.join("loan_granting"),
    );
    let bpmn = apps.join("loan_granting/config/loan-granting.bpmn");
    let original = std::fs::read_to_string(&bpmn).unwrap();
    let broken = original.replace(
        r#"camunda:collection="${creditScores}""#,
        r#"camunda:collection="${creditScores""#,
    );
    assert_ne!(broken, original);
    std::fs::write(&bpmn, broken).unwrap();
    let apps = apps.to_string_lossy().into_owned();
    let out = Command::new(BIN)
        .current_dir(root())
        .env_remove("CUGA_FLO_APPS")
        .args(["--apps-dir", &apps, "validate", "loan_granting", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let diags = doc["targets"][0]["diagnostics"].as_array().unwrap();
    let found = diags
        .iter()
        .find(|d| d["code"] == "expr::syntax")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(found["line"], 19, "{found}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("its collection `${creditScores` cannot be read"),
        "{found}"
    );
}
