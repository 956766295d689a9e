//! FLOWABLE, FOR REAL. A Flowable REST server built from Maven Central and started on
//! 127.0.0.1 by `tests/flowable/start-server.sh` (H2 in memory; see tests/suite/support/
//! flowable.rs) runs the demo apps under `cuga-flo start`: the adapter deploys the
//! augmented model, starts an instance and works its external-worker jobs until it ends.
//! Every run must journal, per element, what the same scenario journals on the native
//! engine, and meet the scenario's expectations. Then the faults: Flowable unreachable,
//! a deployment Flowable refuses, and Flowable dying while a control point is pending.
//! Then `runs resume`: runs killed with SIGKILL at every point of the adapter's own and
//! at many of the journal's re-attach to their instance and end as if never stopped, with
//! no control point asked twice; a control point in flight is asked again with its
//! idempotency key; a resume refuses cleanly when Flowable cannot be reached, and closes
//! the run when its instance was deleted meanwhile.
//!
//! Needs Java 17+ and Maven (the first run builds the server: a few minutes, then cached).

use std::path::Path;
use std::time::Duration;

use crate::support;
use crate::support::chat_server;
use crate::support::flowable;
use crate::support::runs;
use crate::support::slow_model;
use runs::{
    answered_keys, answered_once, app_dir, chosen_points, closed_as_failed, crash_points,
    final_state, journal, kill_and_resume, only_run, records, resume, same_as_native, show,
    start_scenario,
};
use slow_model::stop_while_the_model_thinks;
use support::copy_dir;

/// `start` with Flowable's credentials.
fn start(app: &Path, scenario: &str, run_dir: &Path, extra: &[&str]) -> std::process::Output {
    start_scenario(app, scenario, run_dir, extra, &flowable::credentials())
}

fn same_on_flowable(app: &str, scenario: &str, tmp: &Path, flowable_args: &[&str]) {
    let took = same_as_native(
        app,
        scenario,
        tmp,
        "flowable",
        flowable_args,
        &flowable::credentials(),
    );
    eprintln!("{app} {scenario} on Flowable: {took:.1?}");
}

#[test]
fn loan_approval_runs_every_scenario_on_flowable_as_on_the_native_engine() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    for scenario in [
        "approve",
        "missing_name",
        "regulatory_restriction",
        "reject_low_score",
        "score_unknown",
    ] {
        same_on_flowable(
            "loan_approval",
            scenario,
            tmp.path(),
            &["--engine-url", &server.url],
        );
    }
}

#[test]
fn native_apps_run_on_flowable_too() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--engine", "flowable", "--engine-url", &server.url];
    for (app, scenario) in [
        ("receive_order", "standard"),
        ("receive_order", "no_invoice_1212"),
        ("trip_planner", "agent_plans"),
    ] {
        same_on_flowable(app, scenario, tmp.path(), &args);
    }
}

/// The BPMN errors and multi-instance activities of issue 18 on Flowable: a review per
/// line item (a parallel multi-instance task collecting each line's verdict), an error
/// boundary on the review (a disputed line), and error boundaries by code and catch-all on
/// the payment, routing to a person; every scenario journals what it journals on the
/// native engine.
#[test]
fn invoice_payment_runs_every_scenario_on_flowable_as_on_the_native_engine() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--engine", "flowable", "--engine-url", &server.url];
    for scenario in [
        "paid",
        "lines_reviewed",
        "line_disputed",
        "payment_declined",
        "agent_fails",
    ] {
        same_on_flowable("invoice_payment", scenario, tmp.path(), &args);
    }
}

#[test]
fn flowable_unreachable_fails_the_run_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/flowable-rest/service");
    let out = start(
        &app_dir("loan_approval"),
        "approve",
        tmp.path(),
        &["--engine-url", &url],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let message = closed_as_failed(&journal(tmp.path()));
    assert!(
        message.starts_with(&format!("cannot reach Flowable at {url}")),
        "unclear message: {message}"
    );
}

#[test]
fn a_deployment_flowable_refuses_fails_the_run_clearly() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    // The app and the shared policies it names (`../../../policies/`).
    let app = tmp.path().join("applications/loan_approval");
    copy_dir(&app_dir("loan_approval"), &app);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("policies"),
        &tmp.path().join("policies"),
    );
    let config = app.join("config/loan_approval_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    // Not an XML id: Flowable's parser refuses the deployment.
    let text = text.replace(
        "process_definition_key: Process_1s3q83l",
        "process_definition_key: \"1 not an id\"",
    );
    std::fs::write(&config, text).unwrap();
    let run_dir = tmp.path().join("runs");
    let out = start(&app, "approve", &run_dir, &["--engine-url", &server.url]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let message = closed_as_failed(&journal(&run_dir));
    assert!(
        message.starts_with("Flowable refused the deployment of `1 not an id`")
            && message.contains("HTTP 500")
            && message.contains("not a valid value"),
        "unclear message: {message}"
    );
}

#[test]
fn flowable_dying_while_a_control_point_is_pending_fails_the_run_clearly() {
    let mut server = flowable::Flowable::start();
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("runs");
    let url = server.url.clone();
    let (out, after) = stop_while_the_model_thinks(
        &app_dir("loan_approval"),
        &["--engine-url", &url],
        &flowable::credentials(),
        &run_dir,
        || server.stop(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let message = closed_as_failed(&journal(&run_dir));
    assert!(
        message.starts_with("lost Flowable at") && message.contains("cannot connect"),
        "unclear message: {message}"
    );
    assert!(after < Duration::from_secs(30));
}

// ---------------------------------------------------------------------------------------
// Resuming: `runs resume` re-attaches to the instance

#[test]
fn flowable_runs_killed_anywhere_resume_to_the_same_end_asking_nothing_twice() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    let env = flowable::credentials();
    let args = ["--engine", "flowable", "--engine-url", server.url.as_str()];
    let mut total = 0;
    let mut slowest = Duration::ZERO;
    // A task, a gateway and hooks (approve); a hook's skip_to (regulatory_restriction);
    // parallel branches, each with its jobs, and their join (receive_order).
    // A parallel multi-instance sub-process, each instance routing by its own item
    // (loan_granting, a fixture).
    let fixture = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/apps")
            .join(name)
    };
    for (app, scenario, every) in [
        (app_dir("loan_approval"), "approve", 3),
        (app_dir("loan_approval"), "regulatory_restriction", 5),
        (app_dir("receive_order"), "standard", 6),
        (fixture("loan_granting"), "three_scores", 4),
    ] {
        let base = tmp.path().join(format!("{scenario}-baseline"));
        let out = start(&app, scenario, &base, &args);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let baseline = journal(&base);
        let points = crash_points(
            &app,
            scenario,
            &tmp.path().join(format!("{scenario}-trace")),
            &args,
            &env,
        );
        for wanted in [
            "engine.asking",
            "engine.before_complete",
            "engine.after_complete",
        ] {
            assert!(
                points.iter().any(|(_, name)| name == wanted),
                "no crash point {wanted}: {points:?}"
            );
        }
        let chosen = chosen_points(&points, every);
        let (killed, longest) =
            kill_and_resume(&app, scenario, tmp.path(), &args, &env, &chosen, &baseline);
        assert!(killed >= 10, "{scenario}: only {killed} kills");
        total += killed;
        slowest = slowest.max(longest);
    }
    // The jobs the killed process held stay locked to its worker for an hour: the resume
    // gives them back instead of waiting.
    assert!(
        slowest < Duration::from_secs(30),
        "a resume took {slowest:?}"
    );
    eprintln!("{total} Flowable runs killed and resumed; the slowest resume took {slowest:.1?}");
}

/// A model that answers every control point (the first offered choice) after `delay`.
fn model(delay: Duration) -> chat_server::ChatServer {
    chat_server::ChatServer::start(move |received: &chat_server::Received| {
        chat_server::Reply::from_schema_first_choice(received).after(delay)
    })
}

/// The `Idempotency-Key` of every request the model received, in order.
fn asked_keys(model: &chat_server::ChatServer) -> Vec<String> {
    model
        .requests()
        .iter()
        .filter_map(|r| r.header("Idempotency-Key").map(str::to_string))
        .collect()
}

#[test]
fn a_control_point_in_flight_is_asked_again_with_its_key_and_an_answered_one_never() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("runs");
    let slow = model(Duration::from_millis(1500));
    let mut env = flowable::credentials().to_vec();
    env.push(("CUGA_FLO_LLM_BASE_URL", slow.url()));
    env.push(("CUGA_FLO_LLM_MODEL", chat_server::MODEL.to_string()));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.arg("start")
        .arg(app_dir("loan_approval"))
        .args(["--json", "--run-dir"])
        .arg(&run_dir)
        .args(["--engine-url", &server.url])
        .args([
            "--var",
            "applicant_name=Ada Byron",
            "--var",
            "applicant_id=1",
        ])
        .env_remove("CUGA_FLO_APPS")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("cuga-flo runs");
    // Kill it while the model thinks about its second question: the first is answered
    // (journalled, its job completed or not), the second in flight.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while slow.count() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        slow.count() >= 2,
        "the model was asked {} times",
        slow.count()
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let before = asked_keys(&slow);
    let id = only_run(&run_dir);
    let journalled = answered_keys(&journal(&run_dir));
    assert!(!journalled.is_empty(), "nothing answered before the kill");
    let in_flight: Vec<&String> = before.iter().filter(|k| !journalled.contains(k)).collect();
    assert_eq!(
        in_flight.len(),
        1,
        "asked {before:?}, journalled {journalled:?}"
    );

    let fast = model(Duration::ZERO);
    let mut env = flowable::credentials().to_vec();
    env.push(("CUGA_FLO_LLM_BASE_URL", fast.url()));
    env.push(("CUGA_FLO_LLM_MODEL", chat_server::MODEL.to_string()));
    let started = std::time::Instant::now();
    let out = resume(&run_dir, &id, &[], &env);
    let took = started.elapsed();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", show(&out));
    let after = asked_keys(&fast);
    assert_eq!(after.first(), Some(in_flight[0]), "{}", show(&out));
    for key in &journalled {
        assert!(!after.contains(key), "{key} was asked again: {after:?}");
    }
    let records = journal(&run_dir);
    final_state(&records);
    answered_once(&records, "the resumed run");
    assert!(took < Duration::from_secs(30), "the resume took {took:?}");
    eprintln!("resumed after SIGKILL in {took:.1?}");
}

/// A run of loan_approval killed after its first answer was journalled: its run folder
/// and id.
fn killed_run(tmp: &Path, url: &str, name: &str) -> (std::path::PathBuf, String) {
    let app = app_dir("loan_approval");
    let args = ["--engine-url", url];
    let trace = crash_points(
        &app,
        "approve",
        &tmp.join(format!("{name}-trace")),
        &args,
        &flowable::credentials(),
    );
    let (at, _) = trace
        .iter()
        .find(|(_, n)| n == "engine.before_complete")
        .cloned()
        .expect("a crash point before a completion");
    let dir = tmp.join(name);
    let mut env = flowable::credentials().to_vec();
    env.push(("CUGA_FLO_CRASH_AT", at.to_string()));
    let out = start_scenario(&app, "approve", &dir, &args, &env);
    assert_eq!(out.status.code(), None, "not killed: {}", show(&out));
    let id = only_run(&dir);
    (dir, id)
}

#[test]
fn a_resume_refuses_cleanly_when_flowable_cannot_be_reached() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    let (dir, id) = killed_run(tmp.path(), &server.url, "refused");
    let path = dir.join("runs").join(&id).join("journal.jsonl");
    let before = std::fs::read(&path).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/flowable-rest/service");
    let mut env = flowable::credentials().to_vec();
    env.retain(|(k, _)| *k != "FLOWABLE_PASSWORD");
    env.push(("FLOWABLE_PASSWORD", "s3cret-Pa55".to_string()));
    let out = resume(&dir, &id, &["--engine-url", &url], &env);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let text = show(&out);
    assert!(
        text.contains(&format!("cannot reach Flowable at {url}"))
            && text.contains("nothing was written")
            && text.contains(&format!("cuga-flo runs resume {id}")),
        "{text}"
    );
    assert!(!text.contains("s3cret-Pa55"), "{text}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the journal changed");
    // Once Flowable answers, the same run resumes to its end.
    let out = resume(&dir, &id, &[], &flowable::credentials());
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn a_resumed_run_whose_instance_was_deleted_meanwhile_is_closed_as_failed() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    let (dir, id) = killed_run(tmp.path(), &server.url, "deleted");
    let instance = journal(&dir)
        .iter()
        .find(|r| r["event"] == "instance_started")
        .and_then(|r| r["instance"].as_str().map(str::to_string))
        .expect("instance_started journalled");
    let deleted = std::process::Command::new("curl")
        .args(["-sf", "-X", "DELETE", "-u"])
        .arg(format!("{}:{}", flowable::USER, flowable::PASSWORD))
        .arg(format!(
            "{}/runtime/process-instances/{instance}?deleteReason=by%20an%20operator",
            server.url
        ))
        .status()
        .expect("curl runs");
    assert!(deleted.success());
    let out = resume(&dir, &id, &[], &flowable::credentials());
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let message = closed_as_failed(&journal(&dir));
    assert!(
        message.contains(&instance)
            && message.contains("was deleted")
            && message.contains("by an operator"),
        "unclear message: {message}"
    );
}

// ---------------------------------------------------------------------------------------
// Timers, and messages and signals from outside (issue 18 item 6)

/// One step of a run on Flowable through the CLI ([`runs::cli_step`]), with Flowable's
/// credentials and `env`: it must exit with `code` (3: the run parked).
fn step(args: &[&str], dir: &Path, env: &[(&str, String)], code: i32) -> std::process::Output {
    runs::cli_step(
        args,
        dir,
        &[&flowable::credentials()[..], env].concat(),
        code,
    )
}

/// `cuga-flo start APP ARGS` on the shared Flowable server: it must exit with `code`.
fn start_on_flowable(app: &str, args: &[&str], dir: &Path, code: i32) -> std::process::Output {
    let url = flowable::shared().url.as_str();
    let engine = ["--engine", "flowable", "--engine-url", url];
    step(
        &[&["start", app][..], args, &engine[..]].concat(),
        dir,
        &[],
        code,
    )
}

fn events<'a>(records: &'a [serde_json::Value], name: &str) -> Vec<&'a serde_json::Value> {
    records.iter().filter(|r| r["event"] == name).collect()
}

fn entered(records: &[serde_json::Value]) -> Vec<String> {
    events(records, "node_entered")
        .iter()
        .filter_map(|r| r["node"].as_str().map(str::to_string))
        .collect()
}

/// An order on Flowable waits for its payment (a receive task) and then for the
/// warehouse's signal: each time the run parks with what it waits for, and `runs message`
/// / `runs signal` deliver it (with its variables) to the instance it re-attaches to.
#[test]
fn a_run_on_flowable_parks_for_a_message_and_a_signal_and_deliveries_resume_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    start_on_flowable("messages", &["--var", "order_id=A-1"], dir, 3);
    let id = only_run(dir);
    let records = journal(dir);
    let awaited = events(&records, "message_awaited");
    assert_eq!(awaited.len(), 1, "{records:#?}");
    assert_eq!(awaited[0]["node"], "Receive_Payment");
    assert_eq!(awaited[0]["name"], "Payment");
    let waiting = events(&records, "run_waiting");
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["reason"], "message");
    assert_eq!(waiting[0]["awaiting"][0]["key"], awaited[0]["key"]);
    assert!(events(&records, "run_finished").is_empty());

    step(
        &["runs", "message", &id, "Payment", "--var", "amount=12"],
        dir,
        &[],
        3,
    );
    let records = journal(dir);
    assert_eq!(events(&records, "message_received").len(), 1);
    let waiting = events(&records, "run_waiting");
    assert_eq!(waiting.len(), 2, "{records:#?}");
    assert_eq!(waiting[1]["awaiting"][0]["kind"], "signal");
    assert_eq!(waiting[1]["awaiting"][0]["name"], "Go");

    step(&["runs", "signal", "Go"], dir, &[], 0);
    let records = journal(dir);
    let end = final_state(&records);
    assert_eq!(end["status"], "completed", "{end}");
    assert_eq!(
        entered(&records),
        [
            "Start",
            "Task_Prepare",
            "Receive_Payment",
            "Catch_Go",
            "Task_Ship",
            "End"
        ]
    );
    let finished = events(&records, "run_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["variables"]["amount"], 12);
    assert_eq!(events(&records, "message_received").len(), 2);
}

/// A message with a correlation key (`= orderId`) waits on Flowable under the key's value,
/// as on the native engine: `runs message --key` reaches the one run that waits under it,
/// and a key nobody waits under is refused with nothing written.
#[test]
fn runs_message_by_correlation_key_reaches_the_flowable_run_waiting_under_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut ids = Vec::new();
    for order in ["A-1", "B-2"] {
        let before: Vec<String> = std::fs::read_dir(dir.join("runs"))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let var = format!("orderId={order}");
        start_on_flowable(
            "messages_keyed",
            &["--var", &var, "--max-wait", "0"],
            dir,
            3,
        );
        let id = std::fs::read_dir(dir.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|id| !before.contains(id))
            .expect("a new run");
        ids.push(id);
    }
    let journal_of = |id: &str| records(dir, id);
    let a = journal_of(&ids[0]);
    let waiting = events(&a, "run_waiting");
    assert_eq!(waiting.len(), 1, "{a:#?}");
    assert_eq!(waiting[0]["awaiting"][0]["name"], "PaymentReceived");
    assert_eq!(waiting[0]["awaiting"][0]["correlation"], "A-1");

    let before = journal_of(&ids[0]).len();
    step(
        &["runs", "message", "--key", "Z-9", "PaymentReceived"],
        dir,
        &[],
        2,
    );
    assert_eq!(journal_of(&ids[0]).len(), before, "nothing written");

    step(
        &[
            "runs",
            "message",
            "--key",
            "B-2",
            "PaymentReceived",
            "--var",
            "paid=true",
        ],
        dir,
        &[],
        0,
    );
    let b = journal_of(&ids[1]);
    assert_eq!(final_state(&b)["status"], "completed", "{b:#?}");
    assert_eq!(events(&b, "message_received").len(), 1);
    let a = journal_of(&ids[0]);
    assert!(events(&a, "run_finished").is_empty(), "A-1 still waits");
}

/// An event-based gateway races a `Reply` message against a timer of `${wait}`: a short
/// timer is waited for in-process and fires; a long one parks the run with its due time
/// and the message, `runs resume --due` leaves it until it is due and then fires it; a
/// reply before then takes the message's path and the timer never fires.
#[test]
fn timers_on_flowable_wait_in_process_or_park_until_due() {
    // Short: waited for.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let started = std::time::Instant::now();
    start_on_flowable("reply_or_timeout", &["--var", "wait=PT2S"], dir, 0);
    assert!(started.elapsed() >= Duration::from_secs(2));
    let records = journal(dir);
    assert_eq!(
        entered(&records),
        [
            "Start",
            "Task_Ask",
            "Gateway_Race",
            "Timer_Give_Up",
            "End_Gave_Up"
        ]
    );
    let scheduled = events(&records, "timer_scheduled");
    let fired = events(&records, "timer_fired");
    assert_eq!(scheduled.len(), 1, "{records:#?}");
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0]["key"], scheduled[0]["key"]);
    assert!(fired[0]["at_ms"].as_u64() >= scheduled[0]["due_ms"].as_u64());

    // Long: parked until due.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    start_on_flowable("reply_or_timeout", &["--var", "wait=PT1H"], dir, 3);
    let records = journal(dir);
    let scheduled = events(&records, "timer_scheduled");
    let waiting = events(&records, "run_waiting");
    assert_eq!(waiting.len(), 1, "{records:#?}");
    assert_eq!(waiting[0]["reason"], "timer");
    assert_eq!(waiting[0]["due_ms"], scheduled[0]["due_ms"]);
    let in_an_hour = scheduled[0]["at_ms"].as_u64().unwrap() + 3_600_000;
    assert!(waiting[0]["due_ms"].as_u64().unwrap().abs_diff(in_an_hour) < 2000);
    assert_eq!(waiting[0]["awaiting"][0]["name"], "Reply");
    step(&["runs", "resume", "--due"], dir, &[], 0);
    assert_eq!(journal(dir).len(), records.len(), "not due: untouched");
    let later = [("CUGA_FLO_CLOCK_OFFSET", "3700".to_string())];
    step(&["runs", "resume", "--due"], dir, &later, 0);
    let records = journal(dir);
    assert_eq!(final_state(&records)["status"], "completed");
    assert_eq!(entered(&records).last().unwrap(), "End_Gave_Up");
    assert_eq!(events(&records, "timer_fired").len(), 1);
    assert_eq!(events(&records, "timer_scheduled").len(), 1, "not again");

    // A reply before the timer is due.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    start_on_flowable("reply_or_timeout", &["--var", "wait=PT1H"], dir, 3);
    let id = only_run(dir);
    step(&["runs", "message", &id, "Reply"], dir, &[], 0);
    let records = journal(dir);
    assert_eq!(final_state(&records)["status"], "completed");
    assert_eq!(
        entered(&records),
        [
            "Start",
            "Task_Ask",
            "Gateway_Race",
            "Catch_Reply",
            "End_Replied"
        ]
    );
    assert!(events(&records, "timer_fired").is_empty());
}

/// A call activity on Flowable: its job runs the called app as a child run of its own
/// (linked to the parent, journalled beside it) with the `in` mapping, as on the native
/// engine, and the child's `out` variables complete the job.
#[test]
fn a_call_activity_on_flowable_runs_the_called_app_as_a_linked_child_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let args = ["--scenario", "approve", "--no-model"];
    start_on_flowable("call_parent", &args, dir, 0);
    let (parent, child) = parent_and_child(dir);
    assert_eq!(child, format!("{parent}.Call_Review.1"));
    let p = records(dir, &parent);
    assert_eq!(p[0]["engine"], "flowable");
    assert_eq!(
        entered(&p),
        ["Start", "Call_Review", "Gateway_Approved", "End_Approved"]
    );
    let started = events(&p, "child_started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["run_id"], child.as_str());
    assert_eq!(started[0]["key"], format!("{parent}:Call_Review:1"));
    let task = events(&p, "task_finished");
    assert_eq!(task[0]["node"], "Call_Review");
    assert_eq!(task[0]["variables"], serde_json::json!({"approved": true}));
    let end = final_state(&p);
    assert_eq!(end["status"], "completed", "{end}");
    let c = records(dir, &child);
    assert_eq!(
        c[0]["parent"],
        serde_json::json!({"run_id": parent, "node": "Call_Review"})
    );
    assert_eq!(
        c[0]["variables"],
        serde_json::json!({"amount": 250, "approved": false})
    );
    assert_eq!(
        entered(&c),
        ["Start", "Gateway_Limit", "Task_Assess", "End_Done"]
    );
}

/// A call activity on Flowable whose child run waits for a person parks the parent (its
/// call's job kept), `run_waiting` naming the child; the child is answered (`runs
/// answer`, resuming it, or `--no-resume`, left for the parent), and the parent, resumed
/// on Flowable, calls again: the child's end completes the call, as on the native engine.
#[test]
fn a_parked_child_parks_its_flowable_parent_until_it_is_answered() {
    for no_resume in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let args = ["--var", "amount=300", "--no-model", "--detach"];
        let out = start_on_flowable("call_parent", &args, dir, 3);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("waits: answer it"),
            "{}",
            show(&out)
        );
        let (parent, child) = parent_and_child(dir);
        let p = records(dir, &parent);
        let waiting = events(&p, "run_waiting");
        assert_eq!(waiting.len(), 1, "{p:#?}");
        assert_eq!(waiting[0]["reason"], format!("child run {child}"));
        assert!(events(&p, "run_finished").is_empty());
        assert!(
            events(&p, "task_finished").is_empty(),
            "the call is not answered"
        );

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
        step(&answer, dir, &[], 0);
        let resume = if no_resume {
            vec!["runs", "resume", parent.as_str()]
        } else {
            vec!["runs", "resume", "--due"]
        };
        step(&resume, dir, &[], 0);

        let p = records(dir, &parent);
        assert_eq!(p[0]["engine"], "flowable");
        assert_eq!(
            entered(&p),
            ["Start", "Call_Review", "Gateway_Approved", "End_Approved"]
        );
        let end = final_state(&p);
        assert_eq!(end["status"], "completed", "{end}");
        assert_eq!(end["variables"]["approved"], true, "{end}");
        assert_eq!(events(&p, "child_started").len(), 1, "started once");
        let task = events(&p, "task_finished");
        assert_eq!(task.len(), 1);
        assert_eq!(task[0]["node"], "Call_Review");
        let c = records(dir, &child);
        assert_eq!(events(&c, "run_started").len(), 1);
        assert_eq!(final_state(&c)["status"], "completed");
        assert_eq!(
            entered(&c),
            ["Start", "Gateway_Limit", "Task_Assess", "End_Done"]
        );
        assert_eq!(parent_and_child(dir), (parent, child));
    }
}

/// The two runs of a parent and its one child, in that order.
fn parent_and_child(dir: &Path) -> (String, String) {
    let mut ids: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    assert_eq!(ids.len(), 2, "{ids:?}");
    (ids[0].clone(), ids[1].clone())
}

/// Camunda's loan granting example, unchanged (tests/fixtures/apps/loan_granting): its
/// parallel multi-instance sub-process over `${creditScores}` runs as Flowable's, each
/// instance's gateway reading its own `score`, and the run journals what it journals on
/// the native engine: the instances, the routes, the tasks' keys and the variables.
#[test]
fn a_camunda_multi_instance_sub_process_runs_on_flowable_as_on_the_native_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--scenario", "three_scores", "--no-model"];
    let shape = |records: &[serde_json::Value]| {
        let mut keys: Vec<String> = events(records, "task_finished")
            .iter()
            .map(|r| {
                r["key"]
                    .as_str()
                    .unwrap()
                    .split_once(':')
                    .unwrap()
                    .1
                    .to_string()
            })
            .collect();
        keys.sort();
        let instances: Vec<&serde_json::Value> = events(records, "node_entered")
            .into_iter()
            .filter_map(|r| r.get("instance"))
            .collect();
        // Parallel instances: their routes in any order.
        let mut routed: Vec<String> = events(records, "gateway_routed")
            .iter()
            .map(|r| r["flows"].to_string())
            .collect();
        routed.sort();
        let mut entered = entered(records);
        entered.sort();
        let end = final_state(records);
        serde_json::json!({
            "keys": keys, "instances": instances, "routed": routed, "entered": entered,
            "status": end["status"], "variables": end["variables"],
        })
    };
    let native = tmp.path().join("native");
    step(
        &[&["start", "loan_granting"][..], &args[..]].concat(),
        &native,
        &[],
        0,
    );
    let native = shape(&journal(&native));
    let on_flowable = tmp.path().join("flowable");
    start_on_flowable("loan_granting", &args, &on_flowable, 0);
    let records = journal(&on_flowable);
    assert_eq!(records[0]["engine"], "flowable");
    assert_eq!(shape(&records), native);
    assert_eq!(native["status"], "completed");
    assert_eq!(native["instances"].as_array().unwrap().len(), 3, "{native}");
    assert!(native["variables"].get("score").is_none(), "{native}");
}

/// The records of a journal as the engines share them: each record's event with its
/// node, key (without the run id), reason, instance, source and values; the native
/// engine's `flow_taken` and Flowable's `instance_started` left out.
fn shared_shape(records: &[serde_json::Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["event"] != "flow_taken" && r["event"] != "instance_started")
        .map(|r| {
            let mut shown = serde_json::Map::new();
            for field in ["node", "reason", "instance", "source", "values"] {
                if !r[field].is_null() {
                    shown.insert(field.into(), r[field].clone());
                }
            }
            if let Some((_, key)) = r["key"].as_str().and_then(|k| k.split_once(':')) {
                shown.insert("key".into(), key.into());
            }
            format!(
                "{} {}",
                r["event"].as_str().unwrap_or_default(),
                serde_json::Value::Object(shown)
            )
        })
        .collect()
}

/// A sequential multi-instance sub-process whose instances each wait for a message
/// (tests/fixtures/apps/mi_receipts): the run parks inside instance 1, `runs message`
/// resumes it (its instance's state kept on Flowable), it parks again inside instance 2,
/// and the second delivery ends it with the totals collected in order; the journal holds
/// the records the native engine writes, in its order.
#[test]
fn a_multi_instance_sub_process_parks_inside_its_instances_and_resumes_as_on_the_native_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--scenario", "two_orders", "--no-model"];
    let mut shapes = Vec::new();
    for on_flowable in [false, true] {
        let dir = tmp
            .path()
            .join(if on_flowable { "flowable" } else { "native" });
        if on_flowable {
            start_on_flowable("mi_receipts", &args, &dir, 3);
        } else {
            step(
                &[&["start", "mi_receipts"][..], &args[..]].concat(),
                &dir,
                &[],
                3,
            );
        }
        let id = only_run(&dir);
        step(
            &["runs", "message", &id, "Receipt", "--var", "paid=1"],
            &dir,
            &[],
            3,
        );
        step(
            &["runs", "message", &id, "Receipt", "--var", "paid=2"],
            &dir,
            &[],
            0,
        );
        let records = journal(&dir);
        let end = final_state(&records);
        assert_eq!(end["status"], "completed", "{end}");
        assert_eq!(
            end["variables"]["totals"],
            serde_json::json!([10, 20]),
            "{end}"
        );
        assert!(end["variables"].get("total").is_none(), "{end}");
        assert!(end["variables"].get("order").is_none(), "{end}");
        assert_eq!(events(&records, "run_waiting").len(), 2);
        shapes.push(shared_shape(&records));
    }
    assert_eq!(shapes[1], shapes[0]);
}

/// A call activity on Flowable whose child waits for a message and then a signal
/// (tests/fixtures/apps/call_messages calling `messages`): the parent parks naming the
/// child; `runs message` on the child delivers the payment (the child parks again for
/// the signal), `runs signal` ends the child, and the parent, due once its child has
/// finished, resumes on Flowable and completes with the child's `out` variables.
#[test]
fn a_child_waiting_for_a_message_parks_its_flowable_parent_until_it_has_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let args = ["--var", "order_id=A-7", "--no-model"];
    start_on_flowable("call_messages", &args, dir, 3);
    let (parent, child) = parent_and_child(dir);
    let waiting = events(&records(dir, &parent), "run_waiting")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["reason"], format!("child run {child}"));
    let c = records(dir, &child);
    assert_eq!(c[0]["variables"]["order_id"], "A-7");
    assert_eq!(events(&c, "run_waiting")[0]["reason"], "message");

    step(
        &["runs", "message", &child, "Payment", "--var", "amount=12"],
        dir,
        &[],
        3,
    );
    step(&["runs", "signal", "Go"], dir, &[], 0);
    assert_eq!(final_state(&records(dir, &child))["status"], "completed");
    step(&["runs", "resume", "--due"], dir, &[], 0);

    let p = records(dir, &parent);
    assert_eq!(p[0]["engine"], "flowable");
    assert_eq!(entered(&p), ["Start", "Call_Order", "Task_Close", "End"]);
    let end = final_state(&p);
    assert_eq!(end["status"], "completed", "{end}");
    assert_eq!(end["variables"]["paid"], 12, "{end}");
    assert_eq!(events(&p, "child_started").len(), 1);
    assert_eq!(events(&p, "run_waiting").len(), 1);
    assert_eq!(parent_and_child(dir), (parent, child));
}
