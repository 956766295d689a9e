//! FLOWABLE, FOR REAL. A Flowable REST server built from Maven Central and started on
//! 127.0.0.1 by `tests/flowable/start-server.sh` (H2 in memory; see tests/support/
//! flowable.rs) runs the demo apps under `cuga-flo start`: the adapter deploys the
//! augmented model, starts an instance and works its external-worker jobs until it ends.
//! Every run must journal, per element, what the same scenario journals on the native
//! engine, and meet the scenario's expectations. Then the faults: Flowable unreachable,
//! a deployment Flowable refuses, and Flowable dying while a control point is pending.
//!
//! Needs Java 17+ and Maven (the first run builds the server: a few minutes, then cached).

use std::path::Path;
use std::time::Duration;

mod support;
use support::copy_dir;
#[path = "support/chat_server.rs"]
mod chat_server;
#[path = "support/flowable.rs"]
mod flowable;
#[path = "support/slow_model.rs"]
mod slow_model;
use slow_model::stop_while_the_model_thinks;
#[path = "support/runs.rs"]
mod runs;
use runs::{app_dir, closed_as_failed, journal, same_as_native, show, start_scenario};

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
