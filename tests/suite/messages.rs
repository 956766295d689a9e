//! Messages and signals through the real binary: a run waiting for a message parks
//! (exit 3) with what it waits for in its `run_waiting`; `runs message` delivers it (by
//! id or `--correlate NAME=VALUE`), journalled as `message_received` with its variables
//! untrusted, and the run resumes; a wrong message name is refused and writes nothing;
//! `runs signal` reaches every run waiting for the signal.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support;
use support::text;

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

fn cuga(args: &[&str], run_dir: &Path) -> Output {
    Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .args(["--apps-dir", "tests/fixtures/apps"])
        .args(args)
        .arg("--run-dir")
        .arg(run_dir)
        .stdin(Stdio::null())
        .output()
        .expect("cuga-flo runs")
}

fn run_ids(run_dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(run_dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

fn journal(run_dir: &Path, id: &str) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("runs").join(id).join("journal.jsonl"))
        .unwrap()
        .lines()
        // A torn last line (a process killed mid-write) is not a record.
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn events<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["event"] == name).collect()
}

/// Start an order; it parks waiting for its payment. Its run id.
fn start_order(dir: &Path, order: &str) -> String {
    let before = if dir.join("runs").is_dir() {
        run_ids(dir)
    } else {
        Vec::new()
    };
    let var = format!("order_id={order}");
    let out = cuga(&["start", "messages", "--var", &var], dir);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    run_ids(dir)
        .into_iter()
        .find(|id| !before.contains(id))
        .expect("a new run")
}

#[test]
fn a_run_parks_for_a_message_a_wrong_name_is_refused_and_a_delivery_resumes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let id = start_order(dir, "A-1");
    let records = journal(dir, &id);
    let awaited = events(&records, "message_awaited");
    assert_eq!(awaited.len(), 1);
    assert_eq!(awaited[0]["node"], "Receive_Payment");
    assert_eq!(awaited[0]["kind"], "message");
    assert_eq!(awaited[0]["name"], "Payment");
    let waiting = events(&records, "run_waiting");
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["reason"], "message");
    assert_eq!(waiting[0]["awaiting"][0]["name"], "Payment");
    assert_eq!(waiting[0]["awaiting"][0]["key"], awaited[0]["key"]);

    // `runs pending` lists the wait.
    let out = cuga(&["runs", "pending"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("message `Payment` at Receive_Payment") && listed.contains(&id),
        "{listed}"
    );

    // A message the run does not wait for: refused, nothing written.
    let out = cuga(&["runs", "message", &id, "Refund"], dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not waiting for message `Refund`") && err.contains("`Payment`"),
        "{err}"
    );
    assert_eq!(journal(dir, &id), records, "nothing was written");

    // The payment: journalled with its variables untrusted, then applied.
    let out = cuga(
        &["runs", "message", &id, "Payment", "--var", "amount=12"],
        dir,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let records = journal(dir, &id);
    let received = events(&records, "message_received");
    assert_eq!(received.len(), 1, "applied once, not journalled again");
    assert_eq!(received[0]["node"], "Receive_Payment");
    assert_eq!(received[0]["variables"]["amount"], 12);
    assert_eq!(received[0]["taint"]["source"], "from `runs message`");
    assert!(received[0].get("thrown_by").is_none());
    // It waits for the signal now.
    let waiting = events(&records, "run_waiting");
    assert_eq!(waiting.len(), 2);
    assert_eq!(waiting[1]["awaiting"][0]["kind"], "signal");
    assert_eq!(waiting[1]["awaiting"][0]["name"], "Go");
    // The same message again: the run no longer waits for it.
    let out = cuga(&["runs", "message", &id, "Payment"], dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(journal(dir, &id).len(), records.len());

    let out = cuga(&["runs", "signal", "Go"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = journal(dir, &id);
    let finished = events(&records, "run_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "completed");
    assert_eq!(finished[0]["variables"]["amount"], 12);
    let out = cuga(&["runs", "verify", &id], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // `runs replay` delivers the same messages and signals again, and decides the same.
    let out = cuga(&["runs", "replay", &id], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("all identical"),
        "{}",
        text(&out)
    );
}

#[test]
fn correlate_finds_the_one_run_by_a_variable_and_refuses_several() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let first = start_order(dir, "A-1");
    let second = start_order(dir, "A-2");

    // Both runs hold region = eu: ambiguous, both named, nothing written.
    let before = journal(dir, &first);
    let out = cuga(
        &["runs", "message", "--correlate", "region=eu", "Payment"],
        dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&first) && err.contains(&second), "{err}");
    assert_eq!(journal(dir, &first), before);
    // No run holds it.
    let out = cuga(
        &["runs", "message", "--correlate", "order_id=Z-9", "Payment"],
        dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    let out = cuga(
        &["runs", "message", "--correlate", "order_id=A-2", "Payment"],
        dir,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert_eq!(
        events(&journal(dir, &second), "message_received").len(),
        1,
        "the second order got it"
    );
    assert!(events(&journal(dir, &first), "message_received").is_empty());
}

#[test]
fn a_signal_reaches_every_run_waiting_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let first = start_order(dir, "A-1");
    let second = start_order(dir, "A-2");
    // Nobody waits for `Go` yet: refused.
    let out = cuga(&["runs", "signal", "Go"], dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    for id in [&first, &second] {
        let out = cuga(&["runs", "message", id, "Payment", "--no-resume"], dir);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    // The deliveries recorded without resuming: due for `runs resume --due`.
    let out = cuga(&["runs", "resume", "--due"], dir);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));

    let out = cuga(&["runs", "signal", "Go", "--var", "batch=7"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for id in [&first, &second] {
        let records = journal(dir, id);
        let received = events(&records, "message_received");
        assert_eq!(received.len(), 2, "{id}: payment and go");
        assert_eq!(received[1]["kind"], "signal");
        assert_eq!(received[1]["node"], "Catch_Go");
        let finished = events(&records, "run_finished");
        assert_eq!(finished[0]["status"], "completed", "{id}");
        assert_eq!(finished[0]["variables"]["batch"], 7);
        let path: Vec<&str> = events(&records, "node_entered")
            .iter()
            .map(|r| r["node"].as_str().unwrap())
            .collect();
        assert_eq!(
            path,
            [
                "Start",
                "Task_Prepare",
                "Receive_Payment",
                "Catch_Go",
                "Task_Ship",
                "End"
            ]
        );
    }
}

/// `runs message` killed at every crash point (while journalling the delivery, and while
/// the resumed run journals what it does): the delivery is either not journalled (it is
/// delivered again) or journalled (the run resumes with it); either way the run applies
/// it exactly once and its journal verifies.
#[test]
fn a_delivery_killed_at_any_point_is_applied_exactly_once() {
    // The crash points `runs message` passes (counted once with the trace on).
    let tmp = tempfile::tempdir().unwrap();
    let id = start_order(tmp.path(), "A-1");
    let out = Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CUGA_FLO_CRASH_TRACE", "1")
        .args([
            "--apps-dir",
            "tests/fixtures/apps",
            "runs",
            "message",
            &id,
            "Payment",
        ])
        .arg("--run-dir")
        .arg(tmp.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let points = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("crash-point "))
        .count();
    assert!(points >= 8, "{points} crash points");

    for at in 1..=points {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let id = start_order(dir, "A-1");
        let out = Command::new(BIN)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("CUGA_FLO_CRASH_AT", at.to_string())
            .args([
                "--apps-dir",
                "tests/fixtures/apps",
                "runs",
                "message",
                &id,
                "Payment",
            ])
            .args(["--var", "amount=3"])
            .arg("--run-dir")
            .arg(dir)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), None, "killed at {at}: {}", text(&out));
        let delivered = !events(&journal(dir, &id), "message_received").is_empty();
        let out = if delivered {
            cuga(&["runs", "resume", &id], dir)
        } else {
            cuga(
                &["runs", "message", &id, "Payment", "--var", "amount=3"],
                dir,
            )
        };
        assert_eq!(out.status.code(), Some(3), "killed at {at}: {}", text(&out));
        let records = journal(dir, &id);
        assert_eq!(
            events(&records, "message_received").len(),
            1,
            "killed at {at}: applied once"
        );
        let waiting = events(&records, "run_waiting");
        assert_eq!(
            waiting.last().unwrap()["awaiting"][0]["name"],
            "Go",
            "killed at {at}"
        );
        let out = cuga(&["runs", "signal", "Go"], dir);
        assert_eq!(out.status.code(), Some(0), "killed at {at}: {}", text(&out));
        let records = journal(dir, &id);
        let finished = events(&records, "run_finished");
        assert_eq!(finished[0]["variables"]["amount"], 3, "killed at {at}");
        let out = cuga(&["runs", "verify", &id], dir);
        assert_eq!(out.status.code(), Some(0), "killed at {at}: {}", text(&out));
    }
}

/// Event sub-processes started by messages from outside: a non-interrupting one runs
/// while the order keeps waiting for its payment (and waits for the next change); an
/// interrupting one ends the order's wait and the run completes through it.
#[test]
fn messages_start_event_sub_processes_interrupting_or_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(&["start", "order_changes", "--var", "order_id=B-1"], dir);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("runs message")
            && String::from_utf8_lossy(&out.stdout).contains("'Address changed'"),
        "{}",
        text(&out)
    );
    let id = run_ids(dir).remove(0);
    for address in ["Lisbon", "Porto"] {
        let var = format!("address={address}");
        let out = cuga(
            &["runs", "message", &id, "Address changed", "--var", &var],
            dir,
        );
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
        let records = journal(dir, &id);
        let waiting = events(&records, "run_waiting");
        let mut names: Vec<&str> = waiting.last().unwrap()["awaiting"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["Address changed", "Cancel", "Payment"],
            "still waiting"
        );
    }
    let out = cuga(&["runs", "message", &id, "Cancel"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = journal(dir, &id);
    let path: Vec<&str> = events(&records, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        path,
        [
            "Start",
            "Receive_Payment",
            "Sub_Address",
            "Start_Address",
            "Task_Update",
            "End_Address",
            "Sub_Address",
            "Start_Address",
            "Task_Update",
            "End_Address",
            "Sub_Cancel",
            "Start_Cancel",
            "Task_Refund",
            "End_Cancel"
        ]
    );
    let finished = events(&records, "run_finished");
    assert_eq!(finished[0]["status"], "completed");
    assert_eq!(finished[0]["variables"]["address"], "Porto");
    // The payment can no longer be delivered: the run has finished.
    let out = cuga(&["runs", "message", &id, "Payment"], dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = cuga(&["runs", "replay", &id], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// Two deliveries recorded while the run is parked (`--no-resume`) are both applied by
/// one resume, in the order they were delivered.
#[test]
fn deliveries_recorded_while_parked_are_applied_by_one_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(&["start", "order_changes", "--var", "order_id=C-1"], dir);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = run_ids(dir).remove(0);
    for args in [
        ["Address changed", "--var", "address=Faro"],
        ["Payment", "--var", "amount=9"],
    ] {
        let out = cuga(
            &[&["runs", "message", &id][..], &args[..], &["--no-resume"]].concat(),
            dir,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let out = cuga(&["runs", "resume", &id], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = journal(dir, &id);
    assert_eq!(events(&records, "message_received").len(), 2);
    let path: Vec<&str> = events(&records, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    for node in ["Sub_Address", "Task_Update", "Task_Ship", "End"] {
        assert!(path.contains(&node), "{node} in {path:?}");
    }
    let finished = events(&records, "run_finished");
    assert_eq!(finished[0]["status"], "completed");
    assert_eq!(finished[0]["variables"]["address"], "Faro");
    assert_eq!(finished[0]["variables"]["amount"], 9);
    let out = cuga(&["runs", "verify", &id], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A message boundary event on a task waiting for a person: the message interrupts it,
/// its question is withdrawn, and the boundary's path runs.
#[test]
fn a_message_interrupts_a_task_waiting_for_a_person() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = cuga(&["start", "approval_withdrawn", "--no-model"], dir);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = run_ids(dir).remove(0);
    let records = journal(dir, &id);
    assert_eq!(events(&records, "question_parked").len(), 1);
    let waiting = events(&records, "run_waiting");
    assert_eq!(waiting[0]["questions"].as_array().unwrap().len(), 1);
    assert_eq!(waiting[0]["awaiting"][0]["node"], "Msg_Boundary");

    let out = cuga(&["runs", "message", &id, "Withdrawn", "--no-model"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = journal(dir, &id);
    assert_eq!(events(&records, "question_withdrawn").len(), 1);
    let path: Vec<&str> = events(&records, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        path,
        [
            "Start",
            "Task_Approve",
            "Msg_Boundary",
            "Task_Close",
            "End_Closed"
        ]
    );
    let out = cuga(&["runs", "pending"], dir);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no open questions"),
        "{}",
        text(&out)
    );
}

/// Start a run of the Camunda 8 style `messages_keyed` app with `vars`; its exit code and
/// run id.
fn start_keyed(dir: &Path, vars: &[&str]) -> (Option<i32>, String) {
    let before = if dir.join("runs").is_dir() {
        run_ids(dir)
    } else {
        Vec::new()
    };
    let mut args = vec!["start", "messages_keyed"];
    for v in vars {
        args.extend(["--var", v]);
    }
    let out = cuga(&args, dir);
    let id = run_ids(dir)
        .into_iter()
        .find(|id| !before.contains(id))
        .expect("a new run");
    (out.status.code(), id)
}

fn finished(dir: &Path, id: &str) -> Option<String> {
    journal(dir, id)
        .iter()
        .rev()
        .find(|r| r["event"] == "run_finished")
        .map(|r| r["status"].as_str().unwrap().to_string())
}

/// A message whose model gives it a correlation key (Camunda 8's `zeebe:subscription
/// correlationKey`): each run's wait records the key's value; `runs message --key`
/// reaches only the runs waiting under that value (a number as its JSON text), a key
/// nobody waits under is refused, and a run without the key's variable fails at the catch.
#[test]
fn a_message_with_a_correlation_key_reaches_the_runs_waiting_under_its_value() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (code, a) = start_keyed(dir, &["orderId=A-1"]);
    assert_eq!(code, Some(3));
    let (code, b) = start_keyed(dir, &["orderId=B-2"]);
    assert_eq!(code, Some(3));
    let (code, c) = start_keyed(dir, &["orderId=42"]);
    assert_eq!(code, Some(3));
    let waiting = |id: &str| {
        let records = journal(dir, id);
        events(&records, "run_waiting").last().unwrap()["awaiting"][0].clone()
    };
    assert_eq!(waiting(&a)["correlation"], "A-1");
    assert_eq!(waiting(&a)["name"], "PaymentReceived");
    assert_eq!(waiting(&c)["correlation"], "42");

    // What they wait for, with the command that delivers it.
    let pending = cuga(&["runs", "pending"], dir);
    let shown = text(&pending);
    assert!(
        shown.contains("cuga-flo runs message --key B-2 PaymentReceived"),
        "{shown}"
    );

    // A key nobody waits under: refused, nothing written.
    let before = journal(dir, &a).len();
    let out = cuga(&["runs", "message", "--key", "Z-9", "PaymentReceived"], dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("correlation key \"Z-9\""),
        "{}",
        text(&out)
    );
    // By id, under another run's key: refused too.
    let out = cuga(
        &["runs", "message", &a, "PaymentReceived", "--key", "B-2"],
        dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("with correlation key \"B-2\""),
        "{}",
        text(&out)
    );
    assert_eq!(journal(dir, &a).len(), before);

    // The right key: only that run goes on.
    let out = cuga(&["runs", "message", "--key", "B-2", "PaymentReceived"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(finished(dir, &b).as_deref(), Some("completed"));
    assert_eq!(finished(dir, &a), None);
    let out = cuga(&["runs", "message", "--key", "42", "PaymentReceived"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(finished(dir, &c).as_deref(), Some("completed"));
    assert_eq!(finished(dir, &a), None);

    // No value for the key: the run fails at the catch, saying why.
    let (code, d) = start_keyed(dir, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(finished(dir, &d).as_deref(), Some("failed"));
    let records = journal(dir, &d);
    let end = events(&records, "run_finished")[0]["message"].to_string();
    assert!(
        end.contains("correlation key `= orderId` has no value"),
        "{end}"
    );
}

/// A run stopped by Ctrl-C (SIGINT) while it waits in-process for a timer, racing a
/// message, parks with the message it waits for (`run_waiting.awaiting`): `runs message`
/// then delivers it and the run takes the message's path. The same through the
/// in-process MCP bridge (`--bridge mcp`), whose server builds the run's request.
#[test]
#[cfg(unix)]
fn a_run_interrupted_while_waiting_parks_with_what_it_waits_for() {
    interrupted_while_waiting("direct");
}

#[test]
#[cfg(unix)]
fn a_run_interrupted_while_waiting_parks_with_what_it_waits_for_over_the_mcp_bridge() {
    interrupted_while_waiting("mcp");
}

#[cfg(unix)]
fn interrupted_while_waiting(bridge: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let child = Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .args([
            "--apps-dir",
            "tests/fixtures/apps",
            "start",
            "reply_or_timeout",
        ])
        .args([
            "--var",
            "wait=PT50S",
            "--max-wait",
            "60",
            "--bridge",
            bridge,
        ])
        .arg("--run-dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let id = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started waiting"
        );
        let ids = if dir.join("runs").is_dir() {
            run_ids(dir)
        } else {
            Vec::new()
        };
        if let [id] = ids.as_slice()
            && !events(&journal(dir, id), "timer_scheduled").is_empty()
            && !events(&journal(dir, id), "message_awaited").is_empty()
        {
            break id.clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // The engine publishes its waits right before it sleeps: give it that moment.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    let records = journal(dir, &id);
    let waiting = events(&records, "run_waiting");
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["reason"], "interrupted");
    let awaiting = waiting[0]["awaiting"].as_array().unwrap();
    assert_eq!(awaiting.len(), 1, "{awaiting:?}");
    assert_eq!(awaiting[0]["name"], "Reply");
    assert_eq!(awaiting[0]["node"], "Catch_Reply");

    let out = cuga(&["runs", "message", &id, "Reply"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = journal(dir, &id);
    let end = events(&records, "run_finished");
    assert_eq!(end[0]["status"], "completed");
    let entered: Vec<&str> = events(&records, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    assert!(entered.contains(&"End_Replied"), "{entered:?}");
}

/// The last line of `out`'s stdout that holds `needle`, as the command it shows: from
/// `cuga-flo` to the end, or to the `)` that closes it, without `[--var NAME=VALUE]`.
fn printed_command(out: &Output, needle: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = (stdout.lines())
        .rfind(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with `{needle}`: {}", text(out)));
    let command = &line[line.find("cuga-flo ").expect("a command")..];
    let command = command.strip_suffix(')').unwrap_or(command);
    command.replace(" [--var NAME=VALUE]", "")
}

/// Paste `command` into a shell (`sh -c`), with the binary on the PATH.
fn paste(command: &str, apps: &Path) -> Output {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("PATH", path)
        .env("CUGA_FLO_APPS", apps)
        .env("NO_COLOR", "1")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .stdin(Stdio::null())
        .output()
        .expect("sh runs")
}

/// A message and a signal named with a quote, spaces and `$`, and a run folder with a
/// space: the commands the park hint and `runs pending` print paste back into a shell
/// as they are and deliver.
#[test]
fn printed_delivery_commands_paste_back_into_a_shell() {
    let tmp = tempfile::tempdir().unwrap();
    let apps = tmp.path().join("apps");
    let config = apps.join("quoted/config");
    std::fs::create_dir_all(&config).unwrap();
    let bpmn = std::fs::read_to_string("tests/fixtures/apps/messages/config/messages.bpmn")
        .unwrap()
        .replace("name=\"Payment\"", "name=\"Tom&apos;s $HOME pay\"")
        .replace("name=\"Go\"", "name=\"it&apos;s `go` $(false)\"");
    std::fs::write(config.join("messages.bpmn"), bpmn).unwrap();
    let yaml = std::fs::read_to_string("tests/fixtures/apps/messages/config/messages_config.yaml")
        .unwrap();
    std::fs::write(config.join("quoted_config.yaml"), yaml).unwrap();
    let dir = tmp.path().join("run dir");

    let mut start = Command::new(BIN);
    start
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .arg("--apps-dir")
        .arg(&apps)
        .args(["start", "quoted", "--run-dir"])
        .arg(&dir)
        .stdin(Stdio::null());
    let out = start.output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let id = run_ids(&dir).pop().expect("a run");

    // The park hint: `runs message <run> NAME --run-dir DIR`.
    let hint = printed_command(&out, "deliver:");
    assert!(hint.contains("'Tom'\\''s $HOME pay'"), "{hint}");
    let out = paste(&hint, &apps);
    assert_eq!(out.status.code(), Some(3), "{hint}\n{}", text(&out));
    let received = journal(&dir, &id);
    let received = events(&received, "message_received");
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["name"], "Tom's $HOME pay");

    // `runs pending` (run from the run folder's parent, which it names relative to).
    let mut pending = Command::new(BIN);
    pending
        .env("NO_COLOR", "1")
        .args(["runs", "pending", "--run-dir"])
        .arg(&dir)
        .stdin(Stdio::null());
    let out = pending.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let command = printed_command(&out, "signal `it's `go` $(false)`");
    let out = paste(&format!("{command} --run-dir '{}'", dir.display()), &apps);
    assert_eq!(out.status.code(), Some(0), "{command}\n{}", text(&out));
    let records = journal(&dir, &id);
    let finished = events(&records, "run_finished");
    assert_eq!(finished.len(), 1, "{command}");
    assert_eq!(finished[0]["status"], "completed");
}
