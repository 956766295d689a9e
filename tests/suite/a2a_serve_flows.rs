//! `cuga-flo serve --a2a` running flows that need more than their own control points: a
//! call activity (the called app runs as a child run, journalled and linked to the served
//! run, as under `start`), and a guardrail gateway (its approval question becomes
//! `input-required`; the caller's `approve`/`deny` decides it; nobody deciding within the
//! guardrail's timeout is DENIED). The client is plain JSON-RPC over HTTP/1.1 (the SDK
//! clients are tests/suite/a2a_serve.rs's); no Python or Node needed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cuga_flo::journal::Event;
use cuga_flo::journal::store::{JOURNAL_FILE, read_journal, run_dir};
use cuga_flo::vocab::{Decider, RunStatus};
use serde_json::{Value, json};

use crate::support::a2a_served;
use a2a_served::{A2aServed, LIMIT};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cuga-flo serve --a2a 127.0.0.1:0 <app> --no-model` with `--apps-dir`; killed when
/// dropped.
struct Served {
    inner: A2aServed,
    slug: String,
    /// Its answers file's folder.
    _answers: tempfile::TempDir,
}

impl Served {
    fn start(apps_dir: &Path, app: &str, answers: &str) -> Served {
        Served::start_with(apps_dir, app, answers, &[])
    }

    fn start_with(apps_dir: &Path, app: &str, answers: &str, extra: &[&str]) -> Served {
        Served::start_at(None, apps_dir, app, answers, extra, &[])
    }

    /// As [`Served::start_with`], journalling under `base` (the runs of an earlier server).
    fn start_at(
        base: Option<&Path>,
        apps_dir: &Path,
        app: &str,
        answers: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let answers_file = dir.path().join("answers.yaml");
        std::fs::write(&answers_file, answers).unwrap();
        let mut args: Vec<std::ffi::OsString> = vec![app.into(), "--answers".into()];
        args.push(answers_file.into_os_string());
        args.extend(extra.iter().map(Into::into));
        let global = [std::ffi::OsStr::new("--apps-dir"), apps_dir.as_os_str()];
        let inner = A2aServed::start(global, args, base, env, 1);
        Served {
            inner,
            slug: app.to_string(),
            _answers: dir,
        }
    }

    fn base(&self) -> PathBuf {
        self.inner.base()
    }

    fn stderr(&self) -> String {
        self.inner.stderr()
    }

    /// One JSON-RPC request; the response body.
    fn post(&self, body: &Value) -> Value {
        (self.inner).post(&self.slug, &body.to_string(), &["A2A-Version: 1.0"])
    }

    /// `SendMessage` (blocking: until the task ends or needs input); the task.
    fn send(&self, part: Value, task: Option<&str>) -> Value {
        let mut message =
            json!({"messageId": format!("m{}", rand_id()), "role": "ROLE_USER", "parts": [part]});
        if let Some(t) = task {
            message["taskId"] = json!(t);
        }
        let reply = self.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}));
        let task = reply["result"]["task"].clone();
        assert!(task.is_object(), "{reply}\nserver:\n{}", self.stderr());
        task
    }

    fn journal(&self, run: &str) -> Vec<Event> {
        self.inner.journal(run)
    }
}

fn rand_id() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

fn status_text(task: &Value) -> String {
    task["status"]["message"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn variables(task: &Value) -> Value {
    task["artifacts"][0]["parts"][0]["data"].clone()
}

fn finished(events: &[Event]) -> RunStatus {
    events
        .iter()
        .find_map(|e| match e {
            Event::RunFinished { status, .. } => Some(*status),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no run_finished in {events:#?}"))
}

#[test]
fn a_served_flow_runs_its_call_activity_as_a_linked_child_run() {
    let served = Served::start(
        &root().join("tests/fixtures/apps"),
        "call_parent",
        "answers:\n  Call_Review/Task_Assess: {outputs: {approved: true}}\n",
    );
    let task = served.send(json!({"data": {"amount": 250}}), None);
    assert_eq!(
        state(&task),
        "TASK_STATE_COMPLETED",
        "{task}\n{}",
        served.stderr()
    );
    assert_eq!(variables(&task)["approved"], true, "{task}");
    let run = task["id"].as_str().unwrap();
    let parent = served.journal(run);
    assert_eq!(finished(&parent), RunStatus::Completed);
    let child_id = format!("{run}.Call_Review.1");
    assert!(parent.iter().any(|e| matches!(e,
        Event::ChildStarted { run_id, process_key, .. }
            if *run_id == child_id && process_key == "call_child_v1")));
    let child = served.journal(&child_id);
    assert_eq!(finished(&child), RunStatus::Completed);
    assert!(child.iter().any(|e| matches!(e,
        Event::RunStarted { parent: Some(p), .. } if p.run_id == run)));

    // Over the limit the child ends with LIMIT_EXCEEDED, which the served flow's error
    // boundary catches (no CHILD_FAILED).
    let task = served.send(json!({"data": {"amount": 5000}}), None);
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    let events = served.journal(task["id"].as_str().unwrap());
    assert!(events.iter().any(|e| matches!(e,
        Event::TaskFinished { node, .. } if node == "Task_Escalate")));
    assert!(!format!("{events:?}").contains("CHILD_FAILED"));
}

#[test]
fn a_served_flows_child_run_asks_the_a2a_caller_and_its_reply_answers_the_child() {
    // Nothing answers the child's review in advance: its question goes up to the caller.
    let served = Served::start(
        &root().join("tests/fixtures/apps"),
        "call_parent",
        "answers: {}\n",
    );
    let task = served.send(json!({"data": {"amount": 250}}), None);
    assert_eq!(
        state(&task),
        "TASK_STATE_INPUT_REQUIRED",
        "{task}\n{}",
        served.stderr()
    );
    assert!(status_text(&task).contains("Task_Assess"), "{task}");
    let run = task["id"].as_str().unwrap().to_string();
    let child_id = format!("{run}.Call_Review.1");

    // The caller's reply in the same task answers the child, which completes, and the
    // served run with it.
    let task = served.send(json!({"data": {"approved": true}}), Some(&run));
    assert_eq!(
        state(&task),
        "TASK_STATE_COMPLETED",
        "{task}\n{}",
        served.stderr()
    );
    assert_eq!(variables(&task)["approved"], true, "{task}");
    let child = served.journal(&child_id);
    assert_eq!(finished(&child), RunStatus::Completed);
    assert!(child.iter().any(|e| matches!(e,
        Event::TaskFinished { node, decided_by: Decider::Human, .. } if node == "Task_Assess")));
    assert!(
        !child.iter().any(|e| matches!(e, Event::RunWaiting { .. })),
        "{child:?}"
    );
    assert_eq!(finished(&served.journal(&run)), RunStatus::Completed);
}

const PUSH_ANSWERS: &str = "answers:\n  \
    Task_StageChanges: {outputs: {staged_files: 3}}\n  \
    Task_ScanSecrets: {outputs: {secrets_found: false}}\n  \
    Task_GenerateReport: {outputs: {report: \"3 files, no secrets\"}}\n  \
    Task_ReadmeCheck: {outputs: {readme_stale: false}}\n  \
    Task_ExecutePush: {outputs: {push_result: \"pushed\"}}\n  \
    Task_LogResult: {outputs: {log_entry: \"logged\"}}\n";

fn guardrail_decision(events: &[Event]) -> (Vec<String>, Decider) {
    events
        .iter()
        .find_map(|e| match e {
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                ..
            } if node == "GW_HumanApproval" => Some((flows.clone(), *decided_by)),
            _ => None,
        })
        .expect("the guardrail was decided")
}

#[test]
fn a_guardrail_asks_the_caller_who_approves_or_denies() {
    let served = Served::start(
        &root().join("applications"),
        "git_push_safety",
        PUSH_ANSWERS,
    );
    for (reply, flow, end) in [
        (
            "approve",
            "Flow_GW_HumanApproval_Task_ExecutePush",
            "pushed",
        ),
        ("deny", "Flow_GW_HumanApproval_End_Aborted", ""),
    ] {
        let task = served.send(json!({"data": {"branch": "feature/x"}}), None);
        assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
        let question = status_text(&task);
        assert!(
            question.contains("Guardrail GW_HumanApproval") && question.contains("`approve`"),
            "{question}"
        );
        let id = task["id"].as_str().unwrap().to_string();
        // Not a decision: asked again, saying why.
        let again = served.send(json!({"text": "maybe later"}), Some(&id));
        assert_eq!(state(&again), "TASK_STATE_INPUT_REQUIRED", "{again}");
        assert!(
            status_text(&again).contains("neither `approve` nor `deny`"),
            "{again}"
        );
        let done = served.send(json!({"text": reply}), Some(&id));
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(variables(&done)["push_result"], end, "{done}");
        let events = served.journal(&id);
        assert_eq!(finished(&events), RunStatus::Completed);
        let (flows, by) = guardrail_decision(&events);
        assert_eq!(flows, [flow]);
        assert_eq!(by, Decider::Human);
    }
}

#[test]
fn a_guardrail_nobody_decides_in_time_is_denied() {
    // git_push_safety with a one-second guardrail timeout.
    let apps = tempfile::tempdir().unwrap();
    let src = root().join("applications/git_push_safety/config");
    let dst = apps.path().join("git_push_safety/config");
    std::fs::create_dir_all(&dst).unwrap();
    for f in std::fs::read_dir(&src).unwrap() {
        let f = f.unwrap();
        let text = std::fs::read_to_string(f.path()).unwrap();
        std::fs::write(
            dst.join(f.file_name()),
            text.replace("timeout: 1h ", "timeout: 1s "),
        )
        .unwrap();
    }
    // Its command agents' recipes and scripts, as they are.
    for sub in ["recipes", "scripts"] {
        let (from, to) = (
            root().join("applications/git_push_safety").join(sub),
            apps.path().join("git_push_safety").join(sub),
        );
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(&from).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    }
    let served = Served::start(apps.path(), "git_push_safety", PUSH_ANSWERS);
    let task = served.send(json!({"data": {}}), None);
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let id = task["id"].as_str().unwrap().to_string();
    let events = served.journal(&id);
    assert_eq!(finished(&events), RunStatus::Completed, "{events:?}");
    let (flows, by) = guardrail_decision(&events);
    assert_eq!(flows, ["Flow_GW_HumanApproval_End_Aborted"]);
    assert_eq!(by, Decider::Timeout);
}

impl Served {
    /// `SendMessage` returning at once; the task's id.
    fn send_now(&self, data: Value) -> String {
        let reply = self.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": format!("m{}", rand_id()), "role": "ROLE_USER",
                                   "parts": [{"data": data}]},
                       "configuration": {"returnImmediately": true}}}));
        (reply["result"]["task"]["id"].as_str())
            .unwrap_or_else(|| panic!("{reply}"))
            .to_string()
    }

    fn get(&self, task: &str) -> Value {
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task}}));
        reply["result"].clone()
    }

    /// `GetTask` until `done` holds of the task (bounded).
    fn get_until(&self, task: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let t = self.get(task);
            if done(&t) {
                return t;
            }
            assert!(
                started.elapsed() < LIMIT,
                "task {task} never {what}: {t}\nserver:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A served run that parks (a timer, then a message) leaves its task working, a status
/// update saying what it waits for; the server resumes it when the timer is due and when
/// `cuga-flo runs message` (another process) delivers the message, and the task completes
/// with the run. A task whose run is parked can be cancelled: the run ends `cancelled`.
#[test]
fn a_served_run_that_parks_keeps_its_task_working_until_it_completes() {
    let served = Served::start_with(
        &root().join("tests/fixtures/apps"),
        "served_waits",
        "answers: {}\n",
        &["--max-wait", "0"],
    );
    let task = served.send_now(json!({"order_id": "A-1"}));
    let t = served.get_until(&task, "waited for the message", |t| {
        status_text(t).contains("message `Payment` at Receive_Payment")
    });
    assert_eq!(state(&t), "TASK_STATE_WORKING", "{t}");
    // The timer parked it first, and the server resumed it.
    let events = read_journal(&run_dir(&served.base(), &task).join(JOURNAL_FILE))
        .unwrap()
        .records;
    let waits: Vec<String> = (events.iter())
        .filter_map(|r| match &r.event {
            Event::RunWaiting { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(waits, ["timer", "message"], "{events:#?}");

    let out = Command::new(BIN)
        .env("NO_COLOR", "1")
        .args(["runs", "message", &task, "Payment", "--var", "amount=3"])
        .arg("--run-dir")
        .arg(served.base())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let t = served.get_until(&task, "completed", |t| {
        state(t) == "TASK_STATE_COMPLETED" || state(t) == "TASK_STATE_FAILED"
    });
    assert_eq!(state(&t), "TASK_STATE_COMPLETED", "{t}");
    assert_eq!(variables(&t)["amount"], 3, "{t}");
    assert_eq!(finished(&served.journal(&task)), RunStatus::Completed);

    // Parked at a long timer, then cancelled by its caller.
    let task = served.send_now(json!({"order_id": "A-2", "wait": "PT1H"}));
    served.get_until(&task, "parked", |t| {
        status_text(t).contains("a timer due in")
    });
    let reply = served.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "CancelTask",
        "params": {"id": task}}));
    assert_eq!(
        reply["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{reply}"
    );
    assert_eq!(finished(&served.journal(&task)), RunStatus::Cancelled);
}

/// A served run cancelled while its call activity's child run is going (asking the A2A
/// caller): the child run is ended `cancelled` too, as `runs cancel` ends a run's
/// children.
#[test]
fn the_child_runs_of_a_cancelled_served_run_are_cancelled() {
    let served = Served::start(
        &root().join("tests/fixtures/apps"),
        "call_parent",
        "answers: {}\n",
    );
    let task = served.send(json!({"data": {"amount": 250}}), None);
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let run = task["id"].as_str().unwrap().to_string();
    let child_id = format!("{run}.Call_Review.1");
    let reply = served.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "CancelTask",
        "params": {"id": run}}));
    assert_eq!(
        reply["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{reply}"
    );
    assert_eq!(finished(&served.journal(&run)), RunStatus::Cancelled);
    let child = served.journal(&child_id);
    assert_eq!(finished(&child), RunStatus::Cancelled, "{child:#?}");
    assert!(child.iter().any(|e| matches!(e,
        Event::RunCancelled { reason: Some(r), .. } if r.contains(&run))));
}

/// The served runs a killed `serve --a2a` left parked are taken over by the next server
/// of the app: it holds them (its pid in `inbox/held`), resumes one when its timer is
/// due, and each when `cuga-flo runs message` reaches it; they complete there. Their A2A
/// tasks were the dead server's: the new server does not know them (`GetTask`: task not
/// found) — the caller sees its task no more, the run's end is in its journal.
#[test]
fn a_new_server_takes_over_the_served_runs_a_killed_one_left_parked() {
    let apps = root().join("tests/fixtures/apps");
    let mut first =
        Served::start_with(&apps, "served_waits", "answers: {}\n", &["--max-wait", "0"]);
    let at_message = first.send_now(json!({"order_id": "A-1"}));
    first.get_until(&at_message, "waited for the message", |t| {
        status_text(t).contains("message `Payment` at Receive_Payment")
    });
    let at_timer = first.send_now(json!({"order_id": "A-2", "wait": "PT3S"}));
    first.get_until(&at_timer, "parked at its timer", |t| {
        status_text(t).contains("a timer due in")
    });
    first.inner.kill();
    let base = first.base();

    let second = Served::start_at(
        Some(&base),
        &apps,
        "served_waits",
        "answers: {}\n",
        &["--max-wait", "0"],
        &[("CUGA_FLO_LOG", "info")],
    );
    let pid = second.inner.child.id();
    let held = |run: &str| {
        std::fs::read_to_string(run_dir(&base, run).join("inbox/held"))
            .is_ok_and(|p| p.trim() == pid.to_string())
    };
    let until = |what: &str, done: &dyn Fn() -> bool| {
        let started = Instant::now();
        while !done() {
            assert!(
                started.elapsed() < LIMIT,
                "never {what}\nserver:\n{}",
                second.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    until("took the runs over", &|| {
        held(&at_message) && held(&at_timer)
    });
    // The dead server's task is unknown here.
    let reply = second.post(&json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask",
        "params": {"id": at_message}}));
    assert_eq!(reply["error"]["code"], -32001, "{reply}");

    let message = |run: &str, amount: &str| {
        let out = Command::new(BIN)
            .env("NO_COLOR", "1")
            .args(["runs", "message", run, "Payment", "--var", amount])
            .arg("--run-dir")
            .arg(&base)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            stdout.contains(&format!("(pid {pid}) resumes it")),
            "{stdout}"
        );
    };
    message(&at_message, "amount=3");
    let events = second.journal(&at_message);
    assert_eq!(finished(&events), RunStatus::Completed, "{events:#?}");
    // The timer of the other is due: resumed here, it waits for its message.
    until("resumed the run at its timer", &|| {
        let events = read_journal(&run_dir(&base, &at_timer).join(JOURNAL_FILE))
            .map(|j| j.records)
            .unwrap_or_default();
        (events.iter())
            .filter(|r| matches!(r.event, Event::RunWaiting { .. }))
            .count()
            == 2
            && held(&at_timer)
    });
    message(&at_timer, "amount=4");
    let events = second.journal(&at_timer);
    assert_eq!(finished(&events), RunStatus::Completed, "{events:#?}");
    assert!(
        second.stderr().contains("taken over"),
        "{}",
        second.stderr()
    );
}
