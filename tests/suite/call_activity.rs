//! Call activities on the native engine through the real binary: `call_parent`'s
//! `Call_Review` calls the app `call_child` (by its flow.id) with `amount` in and
//! `approved` out; the child runs as a run of its own, journalled beside its parent and
//! linked to it; its uncaught BPMN error reaches the call activity's error boundary; a
//! parent killed at any crash point and resumed never starts a second child; `validate`
//! refuses an unknown called process (did you mean) and a cycle of calls.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support;
use support::text;

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cuga-flo --apps-dir APPS ARGS [--run-dir RUNS]` from the repository root, no terminal.
fn cuga(apps: &Path, args: &[&str], runs: &Path, env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(root())
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CRASH_TRACE")
        .env("NO_COLOR", "1")
        .arg("--apps-dir")
        .arg(apps)
        .args(args)
        .stdin(Stdio::null());
    // `validate` journals nothing.
    if args.first() != Some(&"validate") {
        cmd.arg("--run-dir").arg(runs);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cuga-flo runs")
}

fn apps() -> &'static Path {
    Path::new("tests/fixtures/apps")
}

/// The run ids under `runs/`, sorted: a parent's id sorts before its children's.
fn run_ids(runs: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(runs.join("runs"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

fn records(runs: &Path, id: &str) -> Vec<Value> {
    let path = runs.join("runs").join(id).join("journal.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn events<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["event"] == name).collect()
}

fn path(records: &[Value]) -> Vec<String> {
    events(records, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap().to_string())
        .collect()
}

fn finished(records: &[Value]) -> &Value {
    events(records, "run_finished")
        .last()
        .copied()
        .expect("the run finished")
}

#[test]
fn a_called_app_runs_as_a_linked_child_run_with_mapped_variables() {
    let runs = tempfile::tempdir().unwrap();
    let out = cuga(
        apps(),
        &[
            "start",
            "call_parent",
            "--scenario",
            "approve",
            "--no-model",
        ],
        runs.path(),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let ids = run_ids(runs.path());
    assert_eq!(ids.len(), 2, "{ids:?}");
    let (parent, child) = (&ids[0], &ids[1]);
    assert_eq!(child, &format!("{parent}.Call_Review.1"));

    let p = records(runs.path(), parent);
    assert_eq!(
        path(&p),
        ["Start", "Call_Review", "Gateway_Approved", "End_Approved"]
    );
    let started = events(&p, "child_started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["run_id"], child.as_str());
    assert_eq!(started[0]["process_key"], "call_child_v1");
    assert_eq!(started[0]["key"], format!("{parent}:Call_Review:1"));
    let task = events(&p, "task_finished");
    assert_eq!(task[0]["node"], "Call_Review");
    assert_eq!(task[0]["key"], started[0]["key"]);
    assert_eq!(task[0]["variables"], serde_json::json!({"approved": true}));
    let end = finished(&p);
    assert_eq!(end["status"], "completed");
    assert_eq!(end["variables"]["approved"], true);
    assert_eq!(end["variables"]["amount"], 250);

    let c = records(runs.path(), child);
    let first = &c[0];
    assert_eq!(first["event"], "run_started");
    assert_eq!(first["app"], "call_child");
    assert_eq!(first["process_key"], "call_child_v1");
    assert_eq!(
        first["parent"],
        serde_json::json!({"run_id": parent, "node": "Call_Review"})
    );
    // Only what the `in` mapping passes (and the child's own defaults): not `note`.
    assert_eq!(
        first["variables"],
        serde_json::json!({"amount": 250, "approved": false})
    );
    // What goes in keeps the caller's provenance.
    assert_eq!(
        first["untrusted"],
        serde_json::json!({"amount": {"source": "from scenario `approve`'s inputs"}})
    );
    assert_eq!(
        path(&c),
        ["Start", "Gateway_Limit", "Task_Assess", "End_Done"]
    );
    assert_eq!(finished(&c)["status"], "completed");
    // The child's task was answered by the parent's scenario, addressed `Call_Review/Task_Assess`.
    let assessed = events(&c, "task_finished");
    assert_eq!(assessed[0]["decided_by"], "scripted");
}

/// An answers file answers the called elements too (`<call activity>/<element>`), and an
/// answer addressed through something that is not a call activity is refused before the
/// run starts.
#[test]
fn an_answers_file_answers_the_called_elements() {
    let runs = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("answers.yaml");
    std::fs::write(
        &file,
        "answers:\n  Call_Review/Task_Assess: {outputs: {approved: true}}\n",
    )
    .unwrap();
    let file_arg = file.display().to_string();
    let args = [
        "start",
        "call_parent",
        "--answers",
        file_arg.as_str(),
        "--var",
        "amount=250",
        "--no-model",
        "--no-park",
    ];
    let out = cuga(apps(), &args, runs.path(), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let ids = run_ids(runs.path());
    assert_eq!(ids.len(), 2, "{ids:?}");
    let c = records(runs.path(), &ids[1]);
    let assessed = events(&c, "task_finished");
    assert_eq!(assessed[0]["node"], "Task_Assess");
    assert_eq!(assessed[0]["decided_by"], "scripted");
    assert_eq!(
        finished(&records(runs.path(), &ids[0]))["variables"]["approved"],
        true
    );

    std::fs::write(
        &file,
        "answers:\n  Gateway_Approved/Task_Assess: {outputs: {approved: true}}\n",
    )
    .unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = cuga(apps(), &args, runs.path(), &[]);
    assert!(!out.status.success());
    let err = text(&out);
    assert!(
        err.contains("`Gateway_Approved` is not a call activity"),
        "{err}"
    );
    assert!(run_ids(runs.path()).is_empty(), "nothing is run: {err}");
}

/// Another process of the same file, called in Zeebe's dialect (`zeebe:calledElement`,
/// `zeebe:ioMapping`): only the mapped variables go in (renamed) and come back.
#[test]
fn a_process_of_the_same_file_is_called_with_zeebe_mappings() {
    let runs = tempfile::tempdir().unwrap();
    let out = cuga(
        apps(),
        &[
            "start",
            "call_same_file",
            "--scenario",
            "pass",
            "--no-model",
        ],
        runs.path(),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let ids = run_ids(runs.path());
    assert_eq!(ids.len(), 2, "{ids:?}");
    let c = records(runs.path(), &ids[1]);
    assert_eq!(c[0]["process_id"], "Process_Sub");
    assert_eq!(c[0]["variables"]["points"], 7);
    assert_eq!(path(&c), ["S", "Task_Grade", "E"]);
    let p = records(runs.path(), &ids[0]);
    let end = finished(&p);
    assert_eq!(end["variables"]["grade"], "B");
    assert!(end["variables"].get("points").is_none(), "{end}");
}

#[test]
fn a_childs_uncaught_error_is_caught_by_the_call_activitys_boundary() {
    let runs = tempfile::tempdir().unwrap();
    let out = cuga(
        apps(),
        &[
            "start",
            "call_parent",
            "--var",
            "amount=5000",
            "--no-model",
            "--detach",
        ],
        runs.path(),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let ids = run_ids(runs.path());
    assert_eq!(ids.len(), 2, "{ids:?}");
    let c = records(runs.path(), &ids[1]);
    assert_eq!(path(&c), ["Start", "Gateway_Limit", "End_Over"]);
    assert_eq!(finished(&c)["status"], "failed");

    let p = records(runs.path(), &ids[0]);
    assert_eq!(
        path(&p),
        [
            "Start",
            "Call_Review",
            "Limit_Caught",
            "Task_Escalate",
            "End_Escalated"
        ]
    );
    let task = events(&p, "task_finished");
    assert_eq!(task[0]["status"], "failed");
    assert_eq!(task[0]["error_code"], "LIMIT_EXCEEDED");
    let thrown = events(&p, "event_thrown");
    assert_eq!(thrown[0]["caught_by"], "Limit_Caught");
    assert_eq!(finished(&p)["status"], "completed");
}

/// A child that waits for a person parks its parent; the child's question is answered
/// with `runs answer` (resuming the child then, or left for the parent with
/// `--no-resume`), and `runs resume` on the parent goes on from the child's end.
#[test]
fn a_parked_child_parks_its_parent_until_it_is_answered() {
    for no_resume in [false, true] {
        let runs = tempfile::tempdir().unwrap();
        let out = cuga(
            apps(),
            &[
                "start",
                "call_parent",
                "--var",
                "amount=300",
                "--no-model",
                "--detach",
            ],
            runs.path(),
            &[],
        );
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("waits: answer it"),
            "{}",
            text(&out)
        );
        let ids = run_ids(runs.path());
        assert_eq!(ids.len(), 2, "{ids:?}");
        let (parent, child) = (ids[0].clone(), ids[1].clone());
        let p = records(runs.path(), &parent);
        let waiting = events(&p, "run_waiting");
        assert_eq!(waiting[0]["reason"], format!("child run {child}"));

        let mut answer = vec![
            "runs",
            "answer",
            &child,
            "Task_Assess",
            "--outputs",
            r#"{"approved": true}"#,
        ];
        if no_resume {
            answer.push("--no-resume");
        }
        let out = cuga(apps(), &answer, runs.path(), &[]);
        assert!(out.status.success(), "{}", text(&out));
        // Answered and resumed, the child finished: the parent is due (`runs resume --due`,
        // the worker). Answered only, the parent resumes the child with its answer.
        let resume = if no_resume {
            vec!["runs", "resume", parent.as_str()]
        } else {
            vec!["runs", "resume", "--due"]
        };
        let out = cuga(apps(), &resume, runs.path(), &[]);
        assert!(out.status.success(), "{}", text(&out));

        let p = records(runs.path(), &parent);
        assert_eq!(
            path(&p),
            ["Start", "Call_Review", "Gateway_Approved", "End_Approved"]
        );
        assert_eq!(finished(&p)["variables"]["approved"], true);
        assert_eq!(events(&p, "child_started").len(), 1);
        let c = records(runs.path(), &child);
        assert_eq!(events(&c, "run_started").len(), 1);
        assert_eq!(finished(&c)["status"], "completed");
        assert_eq!(
            path(&c),
            ["Start", "Gateway_Limit", "Task_Assess", "End_Done"]
        );
        assert_eq!(run_ids(runs.path()).len(), 2);
    }
}

/// Killed at every crash point (journal writes and fsyncs, answers received, the
/// child's included) and resumed, the parent completes as an uninterrupted run does,
/// with one child run that started once.
#[test]
fn a_parent_killed_anywhere_and_resumed_never_starts_a_second_child() {
    let trace_dir = tempfile::tempdir().unwrap();
    let args = [
        "start",
        "call_parent",
        "--scenario",
        "approve",
        "--no-model",
    ];
    let traced = cuga(
        apps(),
        &args,
        trace_dir.path(),
        &[("CUGA_FLO_CRASH_TRACE", "1".into())],
    );
    assert!(traced.status.success(), "{}", text(&traced));
    let points = String::from_utf8_lossy(&traced.stderr)
        .lines()
        .filter(|l| l.starts_with("crash-point "))
        .count();
    assert!(points > 10, "only {points} crash points");
    let mut resumed = 0;
    for at in 1..=points {
        let runs = tempfile::tempdir().unwrap();
        let killed = cuga(
            apps(),
            &args,
            runs.path(),
            &[("CUGA_FLO_CRASH_AT", at.to_string())],
        );
        assert!(!killed.status.success(), "crash point {at} was not reached");
        let ids = run_ids(runs.path());
        let Some(parent) = ids.first().cloned() else {
            continue;
        };
        if records(runs.path(), &parent).is_empty() {
            continue;
        }
        let out = cuga(apps(), &["runs", "resume", &parent], runs.path(), &[]);
        let p = records(runs.path(), &parent);
        if finished_already(&p, &out) {
            continue;
        }
        assert!(out.status.success(), "crash point {at}: {}", text(&out));
        resumed += 1;
        let ids = run_ids(runs.path());
        assert_eq!(ids.len(), 2, "crash point {at}: {ids:?}");
        assert_eq!(
            path(&p),
            ["Start", "Call_Review", "Gateway_Approved", "End_Approved"],
            "crash point {at}"
        );
        assert_eq!(finished(&p)["variables"]["approved"], true);
        assert_eq!(events(&p, "child_started").len(), 1, "crash point {at}");
        let c = records(runs.path(), &ids[1]);
        assert_eq!(events(&c, "run_started").len(), 1, "crash point {at}");
        assert_eq!(events(&c, "run_finished").len(), 1, "crash point {at}");
        assert_eq!(
            events(&c, "node_entered").len(),
            4,
            "crash point {at}: the child ran its nodes once"
        );
    }
    assert!(resumed > 5, "only {resumed} runs were resumed");
}

/// The run had finished when it was killed (its last commit was durable): nothing to resume.
fn finished_already(records: &[Value], out: &Output) -> bool {
    !out.status.success()
        && String::from_utf8_lossy(&out.stderr).contains("has finished")
        && !events(records, "run_finished").is_empty()
}

/// Two apps copied into a fresh apps folder, `call_parent`'s called element replaced.
fn apps_calling(called: &str, child_calls_back: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for app in ["call_parent", "call_child"] {
        let to = dir.path().join(app).join("config");
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(root().join(apps()).join(app).join("config")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    let parent = dir.path().join("call_parent/config/call_parent.bpmn");
    let text = std::fs::read_to_string(&parent).unwrap();
    std::fs::write(
        &parent,
        text.replace(
            "calledElement=\"call_child_v1\"",
            &format!("calledElement=\"{called}\""),
        ),
    )
    .unwrap();
    if child_calls_back {
        let child = dir.path().join("call_child/config/call_child.bpmn");
        let text = std::fs::read_to_string(&child).unwrap();
        std::fs::write(
            &child,
            text.replace(
                r#"<bpmn:userTask id="Task_Assess" name="Assess the claim" />"#,
                r#"<bpmn:callActivity id="Task_Assess" name="Ask again" calledElement="call_parent_v1" />"#,
            ),
        )
        .unwrap();
    }
    dir
}

#[test]
fn validate_refuses_an_unknown_called_process_with_did_you_mean() {
    let apps = apps_calling("call_chlid_v1", false);
    let runs = tempfile::tempdir().unwrap();
    let out = cuga(apps.path(), &["validate", "call_parent"], runs.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("engine::unknown_called_process"), "{all}");
    assert!(all.contains("`Call_Review` calls `call_chlid_v1`"), "{all}");
    assert!(all.contains("did you mean `call_child_v1`?"), "{all}");
    // `start` refuses it too, before anything runs.
    let out = cuga(
        apps.path(),
        &["start", "call_parent", "--no-model"],
        runs.path(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(run_ids(runs.path()).is_empty());
}

#[test]
fn validate_refuses_a_cycle_of_calls_naming_it() {
    let apps = apps_calling("call_child_v1", true);
    let runs = tempfile::tempdir().unwrap();
    let out = cuga(apps.path(), &["validate", "call_parent"], runs.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("engine::call_cycle"), "{all}");
    // The message wraps at the terminal's width.
    let flat = all.replace('│', " ");
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "`Call_Review` makes a cycle of calls: Process_CallParent → Process_CallChild → \
             Process_CallParent"
        ),
        "{all}"
    );
}

/// Nothing passes unless the model says so: a call without mappings is valid, warned about.
#[test]
fn validate_warns_about_a_call_that_passes_nothing() {
    let apps = apps_calling("call_child_v1", false);
    let parent = apps.path().join("call_parent/config/call_parent.bpmn");
    let text_of = std::fs::read_to_string(&parent).unwrap();
    let stripped = text_of
        .replace(r#"<camunda:in source="amount" target="amount" />"#, "")
        .replace(r#"<camunda:out source="approved" target="approved" />"#, "");
    std::fs::write(&parent, stripped).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = cuga(apps.path(), &["validate", "call_parent"], runs.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("call activity `Call_Review` passes no variable to `call_child_v1`"),
        "{all}"
    );
}
