//! Runs that outlive their process, through the real binary: a run killed with SIGKILL at
//! more than a hundred points resumes to the same end as a run never interrupted; a
//! question for a person parks the run (exit 3) until `runs answer` answers it (a wrong
//! answer is refused and changes nothing); timers wait in-process or park the run until
//! `runs resume --due`; Ctrl-C at a prompt parks the run (exit 130).

use crate::support;
use support::{cuga, text};

use crate::support::runs;
use runs::{events, journal_path, only_run, records};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of the trip_planner app in an apps folder under `tmp`, to edit: the folder (as
/// an argument) and the copy's flow config.
fn trip_planner_copy(tmp: &Path) -> (String, PathBuf) {
    let apps = tmp.join("apps");
    support::copy_dir(
        &root().join("applications/trip_planner"),
        &apps.join("trip_planner"),
    );
    let config = apps.join("trip_planner/config/trip_planner_config.yaml");
    (apps.to_string_lossy().into_owned(), config)
}

/// What must be the same at the end of a run, however often it was interrupted: the
/// status, the final variables and steps, and per element the sequence of its task
/// results, gateway routings, hook decisions and entries.
fn final_state(records: &[Value]) -> Value {
    let finished = events(records, "run_finished");
    assert_eq!(finished.len(), 1, "exactly one run_finished");
    let f = finished[0];
    let mut per: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in records {
        let (node, what) = match r["event"].as_str().unwrap_or_default() {
            "node_entered" => (&r["node"], json!("entered")),
            "task_finished" => (
                &r["node"],
                json!({"status": r["status"], "outputs": r["outputs"], "variables": r["variables"], "by": r["decided_by"]}),
            ),
            "gateway_routed" => (
                &r["node"],
                json!({"flows": r["flows"], "by": r["decided_by"]}),
            ),
            "hook_evaluated" => (
                &r["hook"],
                json!({"action": r["action"], "target": r["target"], "by": r["decided_by"]}),
            ),
            "timer_fired" => (&r["node"], json!("fired")),
            "event_thrown" => (
                &r["node"],
                json!({"thrown": r["kind"], "code": r["code"], "caught_by": r["caught_by"]}),
            ),
            _ => continue,
        };
        per.entry(node.as_str().unwrap_or_default().to_string())
            .or_default()
            .push(what);
    }
    json!({
        "status": f["status"],
        "message": f["message"],
        "variables": f["variables"],
        "steps": f["steps"],
        "per_element": per,
    })
}

// ---------------------------------------------------------------------------------------
// Kill and resume

/// One run to kill: `start` arguments and the environment.
struct Case {
    name: &'static str,
    args: Vec<&'static str>,
    env: Vec<(&'static str, String)>,
}

fn scenario(app: &'static str, name: &'static str, extra: &[&'static str]) -> Case {
    let mut args = vec!["start", app, "--scenario", name, "--no-model"];
    args.extend(extra);
    if app.starts_with("loan_approval") {
        args.extend(["--engine", "native"]);
    }
    Case {
        name,
        args,
        env: Vec::new(),
    }
}

/// How many crash points a run passes (`CUGA_FLO_CRASH_TRACE`).
fn crash_points(case: &Case, tmp: &Path) -> u64 {
    let dir = tmp.join(format!("{}-trace", case.name));
    let mut env = case.env.clone();
    env.push(("CUGA_FLO_CRASH_TRACE", "1".into()));
    let out = cuga(&case.args, &dir, &env);
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("crash-point "))
        .count() as u64
}

/// A small deterministic generator (xorshift), so a failure names a reproducible point.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Kill `case` at `points` (each its own run, killed with SIGKILL there), resume each,
/// and check that it ends as `baseline` did. Returns the kills that happened.
fn kill_and_resume(case: &Case, points: &[u64], baseline: &Value, tmp: &Path) -> usize {
    let mut killed = 0;
    for &at in points {
        let dir = tmp.join(format!("{}-{at}", case.name));
        let mut env = case.env.clone();
        env.push(("CUGA_FLO_CRASH_AT", at.to_string()));
        let out = cuga(&case.args, &dir, &env);
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if out.status.signal() != Some(9) {
                // The point is past the end of this run (it finished): nothing to resume.
                assert!(out.status.code().is_some(), "{}", text(&out));
                continue;
            }
        }
        let id = only_run(&dir);
        let resumed = cuga(&["runs", "resume", &id], &dir, &case.env);
        if records(&dir, &id).is_empty() {
            // Killed before `run_started` was durable: the run never started.
            assert_eq!(resumed.status.code(), Some(2), "{}", text(&resumed));
            assert!(
                text(&resumed).contains("never started"),
                "{}",
                text(&resumed)
            );
            continue;
        }
        killed += 1;
        let journal = records(&dir, &id);
        assert_eq!(
            &final_state(&journal),
            baseline,
            "{} killed at crash point {at}, then resumed:\n{}",
            case.name,
            text(&resumed)
        );
        // Every record reads back and folds; nothing was repeated.
        let finished = events(&journal, "task_finished");
        let want = events_count(baseline, "status");
        assert_eq!(finished.len(), want, "{} at {at}: task results", case.name);
    }
    killed
}

/// How many task results the baseline has.
fn events_count(baseline: &Value, field: &str) -> usize {
    baseline["per_element"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap())
        .filter(|v| v.get(field).is_some())
        .count()
}

#[test]
fn runs_killed_at_a_hundred_points_resume_to_the_same_end() {
    let tmp = tempfile::tempdir().unwrap();
    // Strict durability (a write and an fsync per record) and the MCP bridge (a commit per
    // control point) give many crash points; the default batch mode few, but its kills
    // fall inside a batch's write.
    let strict = ["--durability", "strict"];
    let mcp = ["--bridge", "mcp"];
    let cases = vec![
        scenario("incident_response", "regulated_breach", &strict),
        scenario("incident_response", "ransomware", &strict),
        scenario("incident_response", "notify_first", &mcp),
        scenario("incident_response", "low_severity", &strict),
        scenario("incident_response", "false_positive", &[]),
        scenario("receive_order", "no_invoice_1212", &strict),
        scenario("receive_order", "standard", &mcp),
        scenario("loan_approval", "regulatory_restriction", &strict),
        scenario("trip_planner", "agent_plans", &[]),
        scenario("trip_planner", "human_plans", &strict),
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = 0;
    let mut summary = Vec::new();
    for case in &cases {
        let dir = tmp.path().join(format!("{}-baseline", case.name));
        let out = cuga(&case.args, &dir, &case.env);
        assert!(out.status.code().is_some(), "{}", text(&out));
        let baseline = final_state(&records(&dir, &only_run(&dir)));
        let n = crash_points(case, tmp.path());
        assert!(n >= 4, "{}: only {n} crash points", case.name);
        // Up to 14 points per run: spread over the whole run (one in each fourteenth), at
        // a random place inside it.
        let slices = 14u64.min(n);
        let points: Vec<u64> = (0..slices)
            .map(|i| 1 + i * n / slices + rng.below((n / slices).max(1)))
            .collect();
        let killed = kill_and_resume(case, &points, &baseline, tmp.path());
        summary.push(format!("{}: {killed} of {n} points", case.name));
        total += killed;
    }
    assert!(total >= 100, "only {total} kills: {summary:#?}");
    eprintln!("{total} runs killed and resumed: {summary:#?}");
}

#[test]
fn a_long_run_killed_from_outside_at_random_times_resumes_to_the_same_end() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--apps-dir",
        "tests/fixtures/apps",
        "start",
        "endless",
        "--step-budget",
        "1500",
    ];
    let base = tmp.path().join("baseline");
    cuga(&args, &base, &[]);
    let baseline = final_state(&records(&base, &only_run(&base)));
    assert_eq!(baseline["status"], "failed");
    let mut rng = Rng(42);
    for i in 0..6 {
        let dir = tmp.path().join(format!("kill-{i}"));
        let mut child = Command::new(BIN)
            .current_dir(root())
            .args(args)
            .arg("--run-dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20 + rng.below(150)));
        child.kill().unwrap();
        child.wait().unwrap();
        let Ok(mut runs) = std::fs::read_dir(dir.join("runs")) else {
            continue;
        };
        if runs.next().is_none() {
            continue;
        }
        let id = only_run(&dir);
        // Killed before the journal was created, or before `run_started` was durable: it
        // never started.
        if !journal_path(&dir, &id).exists() || records(&dir, &id).is_empty() {
            continue;
        }
        let mut last = None;
        // A run that had finished before the kill has nothing to resume.
        if events(&records(&dir, &id), "run_finished").is_empty() {
            let out = cuga(&["runs", "resume", &id], &dir, &[]);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "the resume failed: {}",
                text(&out)
            );
            last = Some(out);
        }
        assert_eq!(
            final_state(&records(&dir, &id)),
            baseline,
            "killed after some time, resumed: {}",
            last.as_ref().map(text).unwrap_or_default()
        );
    }
}

/// A run killed at every crash point around a BPMN error caught by a boundary event (the
/// payment agent raises PAYMENT_FAILED, the boundary routes to a person) resumes to the
/// same end: the same throw, caught by the same boundary, the same path.
#[test]
fn a_run_killed_around_an_error_catch_resumes_to_the_same_end() {
    let tmp = tempfile::tempdir().unwrap();
    let case = scenario(
        "invoice_payment",
        "payment_declined",
        &["--durability", "strict"],
    );
    let dir = tmp.path().join("baseline");
    let out = cuga(&case.args, &dir, &case.env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let baseline = final_state(&records(&dir, &only_run(&dir)));
    assert_eq!(
        baseline["per_element"]["Activity_pay"][2],
        json!({"thrown": "error", "code": "PAYMENT_FAILED", "caught_by": "Boundary_payment_failed"}),
        "{baseline:#}"
    );
    assert_eq!(
        baseline["per_element"]["Boundary_payment_failed"],
        json!(["entered"])
    );
    let n = crash_points(&case, tmp.path());
    let points: Vec<u64> = (1..=n).collect();
    let killed = kill_and_resume(&case, &points, &baseline, tmp.path());
    assert!(
        killed * 2 >= n as usize,
        "only {killed} of {n} points killed"
    );
}

/// A failed task caught by an error boundary routes to a person: with nobody to answer,
/// the run parks at the person's task; `runs answer` resumes it past the error catch,
/// which the resumed run derives again from the journal.
#[test]
fn an_error_routed_to_a_person_parks_and_an_answer_resumes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let answers = dir.join("answers.yaml");
    std::fs::write(
        &answers,
        "answers:\n  Activity_pay: {error: PAYMENT_FAILED, message: declined}\n",
    )
    .unwrap();
    let answers = answers.to_string_lossy().into_owned();
    let args = [
        "start",
        "invoice_payment",
        "--answers",
        answers.as_str(),
        "--no-model",
    ];
    let out = cuga(&args, dir, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("⚡ error PAYMENT_FAILED on Pay invoice → caught by Payment failed"),
        "{stdout}"
    );
    let id = only_run(dir);
    let out = cuga(
        &[
            "runs",
            "answer",
            &id,
            "Activity_resolve",
            "--outputs",
            r#"{"resolution": "paid by card"}"#,
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = records(dir, &id);
    let path: Vec<&str> = events(&journal, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        path,
        [
            "StartEvent_invoice",
            // No line items: the multi-instance review runs no instance.
            "Activity_review_lines",
            "Activity_pay",
            "Boundary_payment_failed",
            "Activity_resolve",
            "EndEvent_resolved"
        ]
    );
    assert_eq!(events(&journal, "event_thrown").len(), 1);
    let state = final_state(&journal);
    assert_eq!(state["status"], "completed");
    assert_eq!(state["variables"]["resolution"], "paid by card");
}

/// A person's answer may raise a BPMN error too (`runs answer --error CODE`): here the
/// person who pays finds the card declined, and the error boundary for that code takes it.
#[test]
fn a_person_raises_a_bpmn_error_with_runs_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(&["start", "invoice_payment", "--no-model"], dir, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(dir);
    // Not a code, or not a task: refused, nothing written.
    let before = std::fs::read(journal_path(dir, &id)).unwrap();
    let bad = cuga(
        &[
            "runs",
            "answer",
            &id,
            "Activity_pay",
            "--error",
            "no such code!",
        ],
        dir,
        &[],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert_eq!(std::fs::read(journal_path(dir, &id)).unwrap(), before);
    let out = cuga(
        &[
            "runs",
            "answer",
            &id,
            "Activity_pay",
            "--error",
            "PAYMENT_FAILED",
            "--message",
            "card declined",
        ],
        dir,
        &[],
    );
    // The run goes on to the person who resolves the payment, and parks there.
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("⚡ error PAYMENT_FAILED on Pay invoice → caught by Payment failed"),
        "{stdout}"
    );
    let journal = records(dir, &id);
    let pay = events(&journal, "task_finished")
        .into_iter()
        .find(|e| e["node"] == "Activity_pay")
        .unwrap();
    assert_eq!(pay["status"], "failed");
    assert_eq!(pay["error_code"], "PAYMENT_FAILED");
    assert_eq!(pay["error"], "card declined");
    assert_eq!(pay["decided_by"], "human");
}

#[test]
fn a_finished_run_is_not_resumed_and_an_edited_journal_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    cuga(
        &["start", "trip_planner", "--scenario", "agent_plans"],
        dir,
        &[],
    );
    let id = only_run(dir);
    let out = cuga(&["runs", "resume", &id], dir, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("has finished (completed)"),
        "{}",
        text(&out)
    );

    // A journal edited since: the chain is broken, the resume refuses and writes nothing.
    let path = journal_path(dir, &id);
    let all = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    let gateway = lines
        .iter()
        .position(|l| l.contains("\"gateway_routed\""))
        .unwrap();
    let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    edited[gateway] = edited[gateway].replace("Flow_0g3h7rx", "Flow_0xkvb29");
    let cut = edited.join("\n") + "\n";
    std::fs::write(&path, &cut).unwrap();
    let out = cuga(&["runs", "resume", &id], dir, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("hash chain is broken"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), cut);
}

#[test]
fn a_run_resumes_only_on_the_app_it_started_with() {
    let tmp = tempfile::tempdir().unwrap();
    let (apps_arg, config) = trip_planner_copy(tmp.path());
    let dir = tmp.path().join("runs");
    let out = cuga(
        &[
            "--apps-dir",
            &apps_arg,
            "start",
            "trip_planner",
            "--no-model",
        ],
        &dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(&dir);
    let before = std::fs::read(journal_path(&dir, &id)).unwrap();
    let changed = std::fs::read_to_string(&config).unwrap().replace(
        "planning_preference: \"agent\"",
        "planning_preference: \"human\"",
    );
    std::fs::write(&config, changed).unwrap();
    let out = cuga(&["runs", "resume", &id], &dir, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("has changed since run"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(journal_path(&dir, &id)).unwrap(), before);
}

// ---------------------------------------------------------------------------------------
// Park and answer

#[test]
fn a_question_parks_the_run_a_wrong_answer_changes_nothing_and_an_answer_resumes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(&["start", "trip_planner", "--no-model"], dir, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("⏸ waiting: 1 question for a person"),
        "{stdout}"
    );
    assert!(stdout.contains("cuga-flo runs answer"), "{stdout}");
    let id = only_run(dir);

    let pending = cuga(&["runs", "pending", "--json"], dir, &[]);
    let doc: Value = serde_json::from_slice(&pending.stdout).unwrap();
    let q = &doc[0]["question"];
    assert_eq!(doc.as_array().unwrap().len(), 1);
    assert_eq!(doc[0]["run_id"], id.as_str());
    assert_eq!(q["element"], "Activity_1dlyezk");
    assert_eq!(q["kind"], "task");
    assert_eq!(
        q["offered"],
        json!({
            "type": "outputs",
            "outputs": ["planning_preference", "destination"],
            "kinds": {"planning_preference": "string", "destination": "string"},
        })
    );
    assert!(q["key"].as_str().unwrap().ends_with(":Activity_1dlyezk:1"));

    let before = std::fs::read(journal_path(dir, &id)).unwrap();
    for wrong in [
        vec!["--outputs", r#"{"planning_preference": "human"}"#],
        vec!["--outputs", "not json"],
        // Typed like the variables they are mapped to: text, not a number.
        vec![
            "--outputs",
            r#"{"planning_preference": 7, "destination": "Lisbon"}"#,
        ],
        vec!["--flow", "Flow_0xkvb29"],
        vec!["--action", "continue"],
    ] {
        let mut args = vec!["runs", "answer", &id, "Activity_1dlyezk"];
        args.extend(wrong.iter());
        let out = cuga(&args, dir, &[]);
        assert_eq!(out.status.code(), Some(2), "{wrong:?}: {}", text(&out));
        assert_eq!(
            std::fs::read(journal_path(dir, &id)).unwrap(),
            before,
            "a refused answer wrote to the journal"
        );
    }
    let refused = cuga(
        &[
            "runs",
            "answer",
            &id,
            "Activity_1dlyezk",
            "--outputs",
            r#"{"planning_preference": "human"}"#,
        ],
        dir,
        &[],
    );
    assert!(
        text(&refused).contains("planning_preference, destination"),
        "the refusal names what is allowed: {}",
        text(&refused)
    );

    let out = cuga(
        &[
            "runs",
            "answer",
            &id[..12],
            "Activity_1dlyezk",
            "--outputs",
            r#"{"planning_preference": "human", "destination": "Lisbon"}"#,
            "--by",
            "ana",
            "--reason",
            "the traveller called",
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = records(dir, &id);
    let answered = events(&journal, "question_answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["by"], "ana");
    assert_eq!(answered[0]["decided_by"], "human");
    let done = final_state(&journal);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["variables"]["destination"], "Lisbon");
    assert!(
        done["per_element"].get("Activity_199zx27").is_some(),
        "{done}"
    );
    let task = events(&journal, "task_finished")
        .into_iter()
        .find(|r| r["node"] == "Activity_1dlyezk")
        .unwrap();
    assert_eq!(task["decided_by"], "human");
    assert_eq!(task["reason"], "the traveller called");
    assert_eq!(
        task["key"], answered[0]["key"],
        "the answer is applied under the question's idempotency key"
    );
    let pending = cuga(&["runs", "pending"], dir, &[]);
    assert!(String::from_utf8_lossy(&pending.stdout).contains("no open questions"));
    // Answering again: the question is closed.
    let again = cuga(
        &["runs", "answer", &id, "Activity_1dlyezk", "--outputs", "{}"],
        dir,
        &[],
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
}

/// Answer every question of a parked run (`--choice 1` for gateways and hooks, an output
/// per name for tasks) until it ends; the number of questions answered.
fn answer_until_done(dir: &Path, id: &str, extra: &[&str]) -> (Output, usize) {
    let mut answered = 0;
    loop {
        let pending = cuga(&["runs", "pending", "--json"], dir, &[]);
        let doc: Value = serde_json::from_slice(&pending.stdout).unwrap();
        let Some(open) = doc.as_array().unwrap().iter().find(|q| q["run_id"] == id) else {
            let state = cuga(&["runs", "show", id], dir, &[]);
            return (state, answered);
        };
        let q = &open["question"];
        let element = q["element"].as_str().unwrap().to_string();
        let outputs;
        let mut args = vec!["runs", "answer", id, element.as_str()];
        match q["offered"]["type"].as_str().unwrap() {
            "outputs" => {
                let mut o = serde_json::Map::new();
                for name in q["offered"]["outputs"].as_array().unwrap() {
                    let name = name.as_str().unwrap();
                    // A value of the output's declared type (a person's answer is typed).
                    let value = match q["offered"]["kinds"][name].as_str() {
                        Some("number") => json!(1),
                        Some("boolean") => json!(true),
                        Some("list") => json!([]),
                        Some("object") => json!({}),
                        _ => json!("given"),
                    };
                    o.insert(name.into(), value);
                }
                outputs = Value::Object(o).to_string();
                args.extend(["--outputs", outputs.as_str()]);
            }
            _ => args.extend(["--choice", "1"]),
        }
        args.extend(extra);
        let out = cuga(&args, dir, &[]);
        assert!(
            matches!(out.status.code(), Some(0 | 1 | 3)),
            "{}",
            text(&out)
        );
        answered += 1;
        assert!(answered < 50, "the run never ends");
    }
}

#[test]
fn every_kind_of_question_parks_and_is_answered_later() {
    let tmp = tempfile::tempdir().unwrap();
    // receive_order: tasks and a hook; loan_approval: gateways and hooks.
    for (app, extra) in [
        ("receive_order", vec![]),
        (
            "loan_approval",
            vec![
                "--engine",
                "native",
                "--var",
                "applicant_name=Maria Santos",
                "--var",
                "applicant_id=1187",
            ],
        ),
        (
            "incident_response",
            vec![
                "--var",
                "alert_description=outbound traffic to a known C2 host",
            ],
        ),
    ] {
        let dir = tmp.path().join(app);
        let mut args = vec!["start", app, "--no-model"];
        args.extend(extra.iter());
        let out = cuga(&args, &dir, &[]);
        assert_eq!(out.status.code(), Some(3), "{app}: {}", text(&out));
        let id = only_run(&dir);
        let (_, answered) = answer_until_done(&dir, &id, &[]);
        let journal = records(&dir, &id);
        let kinds: Vec<&str> = events(&journal, "question_parked")
            .iter()
            .map(|q| q["question"]["kind"].as_str().unwrap())
            .collect();
        assert!(answered >= 2, "{app}: {kinds:?}");
        assert_eq!(events(&journal, "run_finished").len(), 1, "{app}");
        assert_eq!(
            events(&journal, "question_answered").len(),
            answered,
            "{app}"
        );
        // Each parked question was applied under its own key, once.
        for q in events(&journal, "question_parked") {
            let key = &q["question"]["key"];
            let applied = journal
                .iter()
                .filter(|r| &r["key"] == key)
                .filter(|r| {
                    matches!(
                        r["event"].as_str(),
                        Some("task_finished" | "gateway_routed" | "hook_evaluated")
                    )
                })
                .count();
            assert_eq!(applied, 1, "{app}: {key}");
        }
    }
}

#[test]
fn one_writer_per_run_a_second_resume_of_the_same_run_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A run parked on a 3-second timer: resuming it holds the run for 3 s.
    let out = cuga(
        &[
            "--apps-dir",
            "tests/fixtures/apps",
            "start",
            "timers",
            "--var",
            "wait=PT3S",
            "--max-wait",
            "0",
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(dir);
    let spawn = || {
        Command::new(BIN)
            .current_dir(root())
            .args(["--apps-dir", "tests/fixtures/apps", "runs", "resume", &id])
            .arg("--run-dir")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Race several resumes: exactly one writes, the others exit 2 at once.
    let children: Vec<_> = (0..4).map(|_| spawn()).collect();
    let outs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let codes: Vec<Option<i32>> = outs.iter().map(|o| o.status.code()).collect();
    let refused = outs.iter().filter(|o| o.status.code() == Some(2)).count();
    assert_eq!(refused, 3, "{codes:?}");
    for o in outs.iter().filter(|o| o.status.code() == Some(2)) {
        assert!(
            text(o).contains("being written by another cuga-flo process"),
            "{}",
            text(o)
        );
    }
    let journal = records(dir, &id);
    assert_eq!(events(&journal, "run_resumed").len(), 1, "one writer");
    let seqs: Vec<u64> = journal.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------------------
// Timers

#[test]
fn a_short_timer_waits_in_process_and_a_long_one_parks_until_due() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let started = Instant::now();
    let out = cuga(
        &["--apps-dir", "tests/fixtures/apps", "start", "timers"],
        dir,
        &[],
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        took >= Duration::from_secs(2),
        "the 2-second timer waited {took:?}"
    );
    let id = only_run(dir);
    let journal = records(dir, &id);
    let scheduled = events(&journal, "timer_scheduled");
    assert_eq!(scheduled.len(), 2, "the wait, then the approval deadline");
    let fired = events(&journal, "timer_fired");
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0]["node"], "Timer_Wait");
    let waited = fired[0]["at_ms"].as_u64().unwrap() - scheduled[0]["at_ms"].as_u64().unwrap();
    assert!(waited >= 2000, "fired after {waited} ms");
    let waiting = events(&journal, "run_waiting");
    let due = waiting[0]["due_ms"].as_u64().unwrap();
    assert_eq!(due, scheduled[1]["due_ms"].as_u64().unwrap());
    let in_an_hour = scheduled[1]["at_ms"].as_u64().unwrap() + 3_600_000;
    assert!(
        due.abs_diff(in_an_hour) < 1000,
        "due {due}, expected {in_an_hour}"
    );

    // Not due yet: nothing to resume.
    let out = cuga(&["runs", "resume", "--due"], dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(records(dir, &id).len(), journal.len());
    // An hour later (the documented clock hook): the deadline fires, the approval is
    // withdrawn and the request escalated.
    let later = [("CUGA_FLO_CLOCK_OFFSET", "3700".to_string())];
    let out = cuga(&["runs", "resume", "--due"], dir, &later);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = records(dir, &id);
    let end = final_state(&journal);
    assert_eq!(end["status"], "completed");
    assert!(end["per_element"].get("End_Escalated").is_some(), "{end}");
    assert!(
        end["per_element"]
            .get("Task_Approve")
            .unwrap()
            .as_array()
            .unwrap()
            .len()
            == 1
    );
    assert_eq!(events(&journal, "question_withdrawn").len(), 1);
    let pending = cuga(&["runs", "pending", "--json"], dir, &[]);
    assert_eq!(
        serde_json::from_slice::<Value>(&pending.stdout).unwrap(),
        json!([])
    );
}

#[test]
fn an_answer_before_the_deadline_cancels_the_boundary_timer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(
        &[
            "--apps-dir",
            "tests/fixtures/apps",
            "start",
            "timers",
            "--var",
            "wait=PT0S",
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(dir);
    let out = cuga(
        &[
            "--apps-dir",
            "tests/fixtures/apps",
            "runs",
            "answer",
            &id,
            "Task_Approve",
            "--outputs",
            r#"{"approved": true}"#,
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = records(dir, &id);
    let end = final_state(&journal);
    assert_eq!(end["variables"]["approved"], true);
    assert!(end["per_element"].get("End_Done").is_some(), "{end}");
    assert!(end["per_element"].get("Timer_Deadline").is_none(), "{end}");
    // Even when the deadline has passed since: the run is over.
    let later = [("CUGA_FLO_CLOCK_OFFSET", "7200".to_string())];
    let out = cuga(&["runs", "resume", "--due"], dir, &later);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no waiting run is due"));
}

#[test]
fn timers_the_native_engine_cannot_run_are_refused_at_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let apps = tmp.path().join("apps");
    support::copy_dir(
        &root().join("tests/fixtures/apps/timers"),
        &apps.join("timers"),
    );
    let bpmn = apps.join("timers/config/timers.bpmn");
    let original = std::fs::read_to_string(&bpmn).unwrap();
    for (bad, code, needle) in [
        (
            "<bpmn:timeCycle>R3/PT1H</bpmn:timeCycle>",
            "engine::unsupported_element",
            "repeats",
        ),
        (
            "<bpmn:timeDuration>soon</bpmn:timeDuration>",
            "bpmn::timer",
            "not an ISO 8601 duration",
        ),
        (
            "<bpmn:timeDate>2026-02-30T10:00:00Z</bpmn:timeDate>",
            "bpmn::timer",
            "not an ISO 8601 date-time",
        ),
        ("", "bpmn::timer", "names no time"),
    ] {
        let text_ = original.replace("<bpmn:timeDuration>${wait}</bpmn:timeDuration>", bad);
        std::fs::write(&bpmn, text_).unwrap();
        let out = Command::new(BIN)
            .args(["--apps-dir"])
            .arg(&apps)
            .args(["validate", "timers", "--json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{bad}: {}", text(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let diag = doc.to_string();
        assert!(
            diag.contains(code) && diag.contains(needle),
            "{bad}: {diag}"
        );
        assert!(diag.contains("\"line\":"), "{diag}");
    }
}

// ---------------------------------------------------------------------------------------
// Ctrl-C at a prompt

#[test]
#[cfg(unix)]
fn ctrl_c_at_a_prompt_parks_the_question_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let script = root().join("tests/durable/ctrl_c_at_prompt.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(BIN)
        .arg(dir)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exit"], 130, "{report}");
    let screen = report["screen"].as_str().unwrap();
    assert!(screen.contains("runs resume"), "{screen}");
    let id = only_run(dir);
    let journal = records(dir, &id);
    let last = journal.last().unwrap();
    assert_eq!(last["event"], "run_waiting");
    assert_eq!(last["reason"], "interrupted");
    let parked = events(&journal, "question_parked");
    assert_eq!(parked.len(), 1, "the question at the prompt parks");
    assert_eq!(parked[0]["question"]["element"], "Activity_1dlyezk");
    assert!(events(&journal, "run_finished").is_empty());
    // It is answered later, from another command.
    let out = cuga(
        &[
            "runs",
            "answer",
            &id,
            "Activity_1dlyezk",
            "--outputs",
            r#"{"planning_preference": "human", "destination": "Oslo"}"#,
            "--no-model",
        ],
        dir,
        &[],
    );
    let journal = records(dir, &id);
    let end = final_state(&journal);
    assert_eq!(end["variables"]["destination"], "Oslo", "{}", text(&out));
}

#[test]
#[cfg(unix)]
fn the_worker_resumes_runs_as_their_timers_come_due_and_stops_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(
        &[
            "--apps-dir",
            "tests/fixtures/apps",
            "start",
            "timers",
            "--var",
            "wait=PT2S",
            "--max-wait",
            "0",
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(dir);
    assert!(events(&records(dir, &id), "timer_fired").is_empty());
    let worker = Command::new(BIN)
        .current_dir(root())
        .args(["worker", "--interval", "0.2", "--run-dir"])
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while events(&records(dir, &id), "question_parked").is_empty() {
        assert!(
            Instant::now() < deadline,
            "the worker never resumed the run"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = Command::new("kill")
        .args(["-TERM", &worker.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = worker.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = records(dir, &id);
    let fired = events(&journal, "timer_fired");
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0]["node"], "Timer_Wait");
    assert_eq!(events(&journal, "run_resumed").len(), 1, "resumed once");
    assert_eq!(journal.last().unwrap()["event"], "run_waiting");
}

/// Several runs due at once, two workers looking at the same time, each resuming up to
/// three runs at once: every run is resumed, by exactly one of them, once.
#[test]
fn two_concurrent_workers_resume_every_due_run_exactly_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    const RUNS: usize = 6;
    for _ in 0..RUNS {
        let out = cuga(
            &[
                "--apps-dir",
                "tests/fixtures/apps",
                "start",
                "timers",
                "--var",
                "wait=PT1H",
                "--max-wait",
                "0",
            ],
            dir,
            &[],
        );
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    }
    let ids: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), RUNS);
    // An hour later for the workers: every timer is due.
    let worker = || {
        Command::new(BIN)
            .current_dir(root())
            .args(["worker", "--once", "--concurrency", "3", "--run-dir"])
            .arg(dir)
            .env("CUGA_FLO_CLOCK_OFFSET", "7200")
            .env_remove("CUGA_FLO_CRASH_AT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (worker(), worker());
    for w in [a, b] {
        let out = w.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    for id in &ids {
        let journal = records(dir, id);
        assert_eq!(
            events(&journal, "run_resumed").len(),
            1,
            "run {id} resumed once"
        );
        let fired = events(&journal, "timer_fired");
        assert_eq!(fired.len(), 1, "run {id}");
        assert_eq!(fired[0]["node"], "Timer_Wait");
        // Resumed to its end for now: parked at the approval the timer leads to.
        assert_eq!(events(&journal, "question_parked").len(), 1, "run {id}");
        assert_eq!(journal.last().unwrap()["event"], "run_waiting", "run {id}");
    }
}

/// `runs resume --due --concurrency N` resumes the due runs as `worker` does (the same
/// code): two of them started at once over the same runs resume every run exactly once,
/// and each exits with the most serious of its runs' outcomes (parked again: 3), or 0
/// when the other took every run.
#[test]
fn concurrent_resume_due_resumes_every_due_run_exactly_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    const RUNS: usize = 6;
    for _ in 0..RUNS {
        let out = cuga(
            &[
                "--apps-dir",
                "tests/fixtures/apps",
                "start",
                "timers",
                "--var",
                "wait=PT1H",
                "--max-wait",
                "0",
            ],
            dir,
            &[],
        );
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    }
    let ids: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let resume = || {
        Command::new(BIN)
            .current_dir(root())
            .args(["runs", "resume", "--due", "--concurrency", "3", "--run-dir"])
            .arg(dir)
            .env("CUGA_FLO_CLOCK_OFFSET", "7200")
            .env_remove("CUGA_FLO_CRASH_AT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (resume(), resume());
    for r in [a, b] {
        let out = r.wait_with_output().unwrap();
        // Each run it resumed parks again at its approval (3); none at all: 0.
        let code = out.status.code();
        assert!(code == Some(3) || code == Some(0), "{}", text(&out));
        if code == Some(0) {
            assert!(
                text(&out).contains("no waiting run is due"),
                "{}",
                text(&out)
            );
        }
    }
    for id in &ids {
        let journal = records(dir, id);
        assert_eq!(
            events(&journal, "run_resumed").len(),
            1,
            "run {id} resumed once"
        );
        assert_eq!(events(&journal, "timer_fired").len(), 1, "run {id}");
        assert_eq!(events(&journal, "question_parked").len(), 1, "run {id}");
        assert_eq!(journal.last().unwrap()["event"], "run_waiting", "run {id}");
    }
    // `--concurrency` goes with `--due` only.
    let out = cuga(&["runs", "resume", &ids[0], "--concurrency", "2"], dir, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn a_question_past_its_deadline_takes_its_on_timeout_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (apps_arg, config) = trip_planner_copy(tmp.path());
    let edited = std::fs::read_to_string(&config).unwrap().replace(
        "      policy: \"../policies/task-choose-planner.md\"\n",
        "      policy: \"../policies/task-choose-planner.md\"\n    deadline: PT1H\n    on_timeout: {outputs: {planning_preference: human, destination: \"to be decided\"}}\n",
    );
    std::fs::write(&config, edited).unwrap();
    let dir = tmp.path().join("runs");
    let out = cuga(
        &[
            "--apps-dir",
            &apps_arg,
            "start",
            "trip_planner",
            "--no-model",
        ],
        &dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(&dir);
    let journal = records(&dir, &id);
    let q = &events(&journal, "question_parked")[0]["question"];
    let asked = events(&journal, "question_parked")[0]["at_ms"]
        .as_u64()
        .unwrap();
    let deadline = q["deadline_ms"].as_u64().unwrap();
    assert!(deadline.abs_diff(asked + 3_600_000) < 1000, "{q}");
    assert_eq!(
        events(&journal, "run_waiting")[0]["due_ms"].as_u64(),
        Some(deadline)
    );
    // Before the deadline nothing happens; after it, the on_timeout answer decides.
    let out = cuga(&["runs", "resume", "--due"], &dir, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no waiting run is due"));
    let later = [("CUGA_FLO_CLOCK_OFFSET", "3700".to_string())];
    let out = cuga(&["runs", "resume", "--due", "--no-model"], &dir, &later);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = records(&dir, &id);
    let answered = events(&journal, "question_answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["decided_by"], "timeout");
    let task = events(&journal, "task_finished")
        .into_iter()
        .find(|r| r["node"] == "Activity_1dlyezk")
        .unwrap();
    assert_eq!(task["decided_by"], "timeout");
    let end = final_state(&journal);
    assert_eq!(end["status"], "completed");
    assert_eq!(end["variables"]["destination"], "to be decided");

    // A deadline that is not a duration is a config error at its line.
    let bad = std::fs::read_to_string(&config)
        .unwrap()
        .replace("deadline: PT1H", "deadline: tomorrow");
    std::fs::write(&config, bad).unwrap();
    let out = Command::new(BIN)
        .args(["--apps-dir", &apps_arg, "validate", "trip_planner"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("`deadline` of"), "{}", text(&out));
    assert!(
        text(&out).contains("trip_planner_config.yaml:"),
        "{}",
        text(&out)
    );
}

#[test]
#[cfg(unix)]
fn an_app_that_says_questions_park_never_prompts_at_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let (apps_arg, config) = trip_planner_copy(tmp.path());
    let text_ = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("questions: park\n{text_}")).unwrap();
    let dir = tmp.path().join("runs");
    let out = Command::new("python3")
        .arg(root().join("tests/durable/ctrl_c_at_prompt.py"))
        .arg(BIN)
        .arg(&dir)
        .args([
            "--apps-dir",
            &apps_arg,
            "start",
            "trip_planner",
            "--no-model",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["prompted"], false, "{report}");
    assert_eq!(report["exit"], 3, "{report}");
    let journal = records(&dir, &only_run(&dir));
    assert_eq!(events(&journal, "question_parked").len(), 1);

    std::fs::write(&config, format!("questions: later\n{text_}")).unwrap();
    let out = Command::new(BIN)
        .args(["--apps-dir", &apps_arg, "validate", "trip_planner"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("`questions: later` is not a choice"),
        "{}",
        text(&out)
    );
}

// ---------------------------------------------------------------------------------------
// Cancelling

#[test]
fn a_parked_run_is_cancelled_with_who_and_why_and_then_refuses_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(&["start", "trip_planner", "--no-model"], dir, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = only_run(dir);
    let before = std::fs::read(journal_path(dir, &id)).unwrap();

    // Live in another process (here: this one holds its lock): refused, naming the pid,
    // and nothing written.
    {
        let _held = cuga_flo::journal::Journal::open(
            &dir.join("runs").join(&id),
            cuga_flo::journal::Durability::Batch,
        )
        .unwrap();
        let out = cuga(&["runs", "cancel", &id], dir, &[]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            text(&out).contains(&format!("cuga-flo process {}", std::process::id())),
            "{}",
            text(&out)
        );
        assert_eq!(std::fs::read(journal_path(dir, &id)).unwrap(), before);
    }

    let out = cuga(
        &[
            "runs",
            "cancel",
            &id[..8],
            "--reason",
            "trip called off",
            "--by",
            "alice",
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("cancelled run {id} by alice")),
        "{}",
        text(&out)
    );
    let journal = records(dir, &id);
    let n = journal.len();
    assert_eq!(journal[n - 2]["event"], "run_cancelled");
    assert_eq!(journal[n - 2]["by"], "alice");
    assert_eq!(journal[n - 2]["reason"], "trip called off");
    assert_eq!(journal[n - 1]["event"], "run_finished");
    assert_eq!(journal[n - 1]["status"], "cancelled");
    assert_eq!(
        journal[n - 1]["message"],
        "cancelled by alice: trip called off"
    );

    // The run reads as any finished run.
    let verify = cuga(&["runs", "verify", &id], dir, &[]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
    let show = cuga(&["runs", "show", &id], dir, &[]);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("⊘ cancelled by alice: trip called off"),
        "{shown}"
    );
    let list = cuga(&["runs", "list", "--status", "cancelled"], dir, &[]);
    assert!(
        String::from_utf8_lossy(&list.stdout).contains(&id),
        "{}",
        text(&list)
    );
    let xes = cuga(&["runs", "export", &id, "--format", "xes"], dir, &[]);
    assert_eq!(xes.status.code(), Some(0), "{}", text(&xes));
    assert!(String::from_utf8_lossy(&xes.stdout).contains("cancelled"));
    let html = dir.join("run.html");
    let report = cuga(
        &["runs", "report", &id, "-o", html.to_str().unwrap()],
        dir,
        &[],
    );
    assert_eq!(report.status.code(), Some(0), "{}", text(&report));
    let replay = cuga(&["runs", "replay", &id], dir, &[]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay));
    let pending = cuga(&["runs", "pending"], dir, &[]);
    assert!(!String::from_utf8_lossy(&pending.stdout).contains(&id));

    // Nothing continues it, and a second cancel writes nothing.
    let after = std::fs::read(journal_path(dir, &id)).unwrap();
    for args in [
        vec!["runs", "resume", &id],
        vec![
            "runs",
            "answer",
            &id,
            "Activity_1dlyezk",
            "--outputs",
            r#"{"planning_preference": "human", "destination": "Lisbon"}"#,
        ],
        vec!["runs", "message", &id, "anything"],
        vec!["runs", "cancel", &id],
    ] {
        let out = cuga(&args, dir, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("cancelled"), "{args:?}: {}", text(&out));
        assert_eq!(std::fs::read(journal_path(dir, &id)).unwrap(), after);
    }
}

#[test]
fn cancelling_a_run_parked_on_its_child_run_cancels_the_child_too() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(
        &[
            "--apps-dir",
            "tests/fixtures/apps",
            "start",
            "call_parent",
            "--var",
            "amount=300",
            "--no-model",
            "--detach",
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let mut ids: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    let (parent, child) = (ids[0].clone(), ids[1].clone());
    let out = cuga(
        &[
            "--apps-dir",
            "tests/fixtures/apps",
            "runs",
            "cancel",
            &parent,
            "--by",
            "ops",
            "--json",
        ],
        dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["children"][0]["run_id"], child.as_str());
    for (id, reason) in [
        (&parent, Value::Null),
        (
            &child,
            json!(format!("its parent run {parent} was cancelled")),
        ),
    ] {
        let journal = records(dir, id);
        let cancelled = events(&journal, "run_cancelled");
        assert_eq!(cancelled.len(), 1, "{id}");
        assert_eq!(cancelled[0]["by"], "ops");
        assert_eq!(cancelled[0]["reason"], reason);
        assert_eq!(journal.last().unwrap()["status"], "cancelled");
    }
    let pending = cuga(&["runs", "pending"], dir, &[]);
    assert!(
        String::from_utf8_lossy(&pending.stdout).contains("no open questions"),
        "{}",
        text(&pending)
    );
}

/// A run stopped before its first record (killed while its journal was being created) is
/// listed as `empty`, not as unfinished for ever, and `runs cancel` removes it: nothing was
/// journalled, nothing is lost. A tampered journal is read only with --allow-tampered,
/// and then with a warning.
#[test]
fn an_empty_journal_is_listed_empty_and_cancel_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs-here");
    let id = "20261207T000000Z-e0e0e0";
    let dir = cuga_flo::journal::store::run_dir(&runs, id);
    let journal = cuga_flo::journal::Journal::create(&dir, Default::default()).unwrap();
    drop(journal);
    let list = cuga(&["runs", "list", "--json"], &runs, &[]);
    assert!(list.status.success(), "{}", text(&list));
    let rows: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(rows[0]["run_id"], id, "{}", text(&list));
    assert_eq!(rows[0]["status"], "empty", "{}", text(&list));
    let cancel = cuga(&["runs", "cancel", id], &runs, &[]);
    assert!(cancel.status.success(), "{}", text(&cancel));
    assert!(
        String::from_utf8_lossy(&cancel.stdout).contains("never started"),
        "{}",
        text(&cancel)
    );
    assert!(!dir.exists());

    // A finished run whose journal gains a record after its end: refused, then read
    // loudly with --allow-tampered.
    let done = cuga(
        &[
            "start",
            "trip_planner",
            "--scenario",
            "agent_plans",
            "--json",
        ],
        &runs,
        &[],
    );
    assert!(done.status.success(), "{}", text(&done));
    let id = only_run(&runs);
    let path = journal_path(&runs, &id);
    runs::forge_after_end(&path);
    let shown = cuga(&["runs", "show", &id], &runs, &[]);
    assert!(!shown.status.success(), "{}", text(&shown));
    let shown = cuga(&["runs", "show", &id, "--allow-tampered"], &runs, &[]);
    assert!(shown.status.success(), "{}", text(&shown));
    assert!(
        String::from_utf8_lossy(&shown.stderr).contains("is not intact"),
        "{}",
        text(&shown)
    );
}
