//! Guardrail gateways through the real binary, on the git push safety demo: the run parks
//! at the guardrail until an approver decides — `runs answer <run> <gateway>
//! approve|deny --by NAME` (only a listed approver), a decision an external tool writes
//! into the run's graph on a real Fuseki (SPARQL INSERT, picked up by `runs resume`), or
//! nobody by the timeout: DENIED, decided by `timeout`. Each is journalled with who
//! decided and when, and written into the run's ABox. A guardrail marked only in the model
//! (`requiresApproval`, as `graph import` writes AgentFLOW's GuardrailGateway) waits too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use crate::support::runs;
use runs::events;

#[cfg(feature = "graph")]
use crate::support::fuseki;

const GATEWAY: &str = "GW_HumanApproval";
const PUSH: &str = "Flow_GW_HumanApproval_Task_ExecutePush";
const ABORT: &str = "Flow_GW_HumanApproval_End_Aborted";

fn cuga(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.args(args)
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// A copy of the demo under `tmp`, its flow config edited by `edit`.
fn demo(tmp: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let dir = tmp.join("apps/git_push_safety");
    copy_dir(&runs::app_dir("git_push_safety"), &dir);
    let config = dir.join("config/git_push_safety_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, edit(text)).unwrap();
    // The steps after an approval answer too (the scenario stops at the guardrail).
    let scenario = dir.join("scenarios/timed_out.yaml");
    let text = std::fs::read_to_string(&scenario).unwrap().replace(
        "answers:\n",
        "answers:\n  Task_ExecutePush: {outputs: {push_result: pushed}}\n  \
         Task_LogResult: {outputs: {log_entry: logged}}\n",
    );
    // Its expectations are the demo's; these tests check the runs themselves.
    let text = text[..text.find("expect:").unwrap()].to_string();
    std::fs::write(&scenario, text).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Start the `timed_out` scenario (no answer for the guardrail): the run parks there.
fn parked(app: &Path, run_dir: &Path) -> String {
    let out = runs::start_scenario(app, "timed_out", run_dir, &[], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", runs::show(&out));
    let records = runs::journal(run_dir);
    let parked: Vec<&Value> = events(&records, "question_parked");
    assert_eq!(parked.len(), 1);
    let q = &parked[0]["question"];
    assert_eq!(q["element"], GATEWAY);
    assert_eq!(q["approval"]["approve_flow"], PUSH, "{q}");
    assert_eq!(q["approval"]["deny_flow"], ABORT, "{q}");
    assert_eq!(q["approval"]["variable"], "approval_status", "{q}");
    // The deadline is the approval's timeout, and DENIED answers it then.
    let asked = parked[0]["at_ms"].as_u64().unwrap();
    let deadline = q["deadline_ms"].as_u64().unwrap();
    assert!(deadline.abs_diff(asked + 3_600_000) < 2_000, "{q}");
    assert_eq!(q["on_timeout"]["flow"], ABORT, "{q}");
    runs::only_run(run_dir)
}

fn routed(records: &[Value]) -> &Value {
    records
        .iter()
        .find(|r| r["event"] == "gateway_routed" && r["node"] == GATEWAY)
        .expect("the guardrail routed")
}

fn path(records: &[Value]) -> Vec<&str> {
    events(records, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect()
}

fn answer(run_dir: &Path, id: &str, args: &[&str]) -> Output {
    let mut all = vec!["runs", "answer", id, GATEWAY];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--run-dir", run_dir.to_str().unwrap(), "--no-model"]);
    cuga(&all, &[])
}

#[test]
fn an_approver_approves_with_runs_answer_and_only_listed_approvers_may() {
    let tmp = TempDir::new().unwrap();
    let app = demo(tmp.path(), |t| {
        t.replace(
            "      timeout: 1h ",
            "      approvers: [alice, bob]\n      timeout: 1h ",
        )
    });
    let run_dir = tmp.path().join("runs");
    let id = parked(&app, &run_dir);
    // Not an approver: refused, nothing recorded.
    let out = answer(&run_dir, &id, &["approve", "--by", "mallory"]);
    assert_eq!(out.status.code(), Some(2), "{}", runs::show(&out));
    assert!(runs::show(&out).contains("`mallory` may not decide guardrail"));
    // Not a decision.
    let out = answer(&run_dir, &id, &["perhaps", "--by", "alice"]);
    assert_eq!(out.status.code(), Some(2), "{}", runs::show(&out));
    assert!(events(&runs::journal(&run_dir), "question_answered").is_empty());
    // Alice approves: the push runs.
    let out = answer(
        &run_dir,
        &id,
        &["approve", "--by", "alice", "--reason", "report read"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    let records = runs::journal(&run_dir);
    let answered = events(&records, "question_answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["by"], "alice");
    assert_eq!(answered[0]["decided_by"], "human");
    assert!(answered[0]["at_ms"].as_u64().is_some());
    let r = routed(&records);
    assert_eq!(r["flows"][0], PUSH);
    assert_eq!(r["decided_by"], "human");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .starts_with("approval_status = APPROVED"),
        "{r}"
    );
    assert_eq!(
        &path(&records)[5..],
        [
            GATEWAY,
            "Task_ExecutePush",
            "Task_LogResult",
            "End_Completed"
        ]
    );
    assert_eq!(events(&records, "run_finished")[0]["status"], "completed");
}

#[test]
fn deny_aborts_the_push() {
    let tmp = TempDir::new().unwrap();
    let app = demo(tmp.path(), |t| t);
    let run_dir = tmp.path().join("runs");
    let id = parked(&app, &run_dir);
    let out = answer(&run_dir, &id, &["deny", "--by", "carol"]);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    let records = runs::journal(&run_dir);
    let r = routed(&records);
    assert_eq!(r["flows"][0], ABORT);
    assert_eq!(r["decided_by"], "human");
    assert_eq!(path(&records).last(), Some(&"End_Aborted"));
    assert_eq!(events(&records, "question_answered")[0]["by"], "carol");
}

#[test]
fn no_decision_by_the_timeout_is_denied_by_timeout() {
    let tmp = TempDir::new().unwrap();
    let app = demo(tmp.path(), |t| t);
    let run_dir = tmp.path().join("runs");
    let id = parked(&app, &run_dir);
    let dir = run_dir.to_str().unwrap();
    // Before the deadline nothing is due; a resume parks again.
    let out = cuga(&["runs", "resume", "--due", "--run-dir", dir], &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no waiting run is due"));
    let out = runs::resume(&run_dir, &id, &["--no-model"], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", runs::show(&out));
    // An hour later (the documented clock hook): DENIED, decided by the timeout.
    let later = [("CUGA_FLO_CLOCK_OFFSET", "3700".to_string())];
    let out = cuga(
        &["runs", "resume", "--due", "--no-model", "--run-dir", dir],
        &later,
    );
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    let records = runs::journal(&run_dir);
    let answered = events(&records, "question_answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["decided_by"], "timeout");
    let r = routed(&records);
    assert_eq!(r["flows"][0], ABORT);
    assert_eq!(r["decided_by"], "timeout");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("DENIED: no decision by the deadline"),
        "{r}"
    );
    assert_eq!(path(&records).last(), Some(&"End_Aborted"));
}

#[test]
#[cfg(feature = "graph")]
fn a_guardrail_marked_in_the_model_only_waits_too() {
    // AgentFLOW's own graph: `agentflow:GuardrailGateway` with `requiresApproval true`.
    let tmp = TempDir::new().unwrap();
    let out_dir = tmp.path().join("apps/pushed");
    let graph = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/graph/agentflow/git-push-safety.definitions.ttl");
    let out = cuga(
        &[
            "graph",
            "import",
            graph.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", runs::show(&out));
    let answers = tmp.path().join("answers.yaml");
    let tasks = [
        "Task_ExecutePush",
        "Task_LogResult",
        "Task_StageChanges",
        "Task_ScanSecrets",
        "Task_GenerateReport",
        "Task_ReadmeCheck",
    ];
    std::fs::write(
        &answers,
        format!(
            "answers:\n{}",
            tasks
                .iter()
                .map(|t| format!("  {t}: {{outputs: {{}}}}\n"))
                .collect::<String>()
        ),
    )
    .unwrap();
    let run_dir = tmp.path().join("runs");
    let out = cuga(
        &[
            "start",
            out_dir.to_str().unwrap(),
            "--answers",
            answers.to_str().unwrap(),
            "--no-model",
            "--run-dir",
            run_dir.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", runs::show(&out));
    let records = runs::journal(&run_dir);
    let q = &events(&records, "question_parked")[0]["question"];
    assert_eq!(q["element"], GATEWAY);
    // The variable its edge tests, and the model's approvalTimeout (PT1H).
    assert_eq!(q["approval"]["variable"], "approval_status");
    let asked = events(&records, "question_parked")[0]["at_ms"]
        .as_u64()
        .unwrap();
    let deadline = q["deadline_ms"].as_u64().unwrap();
    assert!(deadline.abs_diff(asked + 3_600_000) < 2_000, "{q}");
    let id = runs::only_run(&run_dir);
    let out = answer(&run_dir, &id, &["approve", "--by", "dave"]);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    let records = runs::journal(&run_dir);
    assert_eq!(path(&records).last(), Some(&"End_Completed"));
}

/// POST a SPARQL update to Fuseki's dataset `ds`.
#[cfg(feature = "graph")]
fn sparql_update(base: &str, update: &str) {
    let url = format!("{base}/ds/update");
    let out = Command::new("curl")
        .args([
            "-sS",
            "-f",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/sparql-update",
        ])
        .arg("--data-binary")
        .arg(update)
        .arg(&url)
        .output()
        .expect("curl runs");
    assert!(out.status.success(), "{}", runs::show(&out));
}

#[test]
#[cfg(feature = "graph")]
fn a_decision_written_into_the_runs_graph_is_picked_up_on_resume() {
    let server = fuseki::shared();
    let tmp = TempDir::new().unwrap();
    let app = demo(tmp.path(), |t| {
        format!("{t}\ngraph:\n  endpoint: {}\n  dataset: ds\n", server.url).replace(
            "      timeout: 1h ",
            "      approvers: [erin]\n      timeout: 1h ",
        )
    });
    let run_dir = tmp.path().join("runs");
    let id = parked(&app, &run_dir);
    let graph = format!("urn:cuga-flo:graph:git_push_safety:run:{id}");
    let instance = format!("urn:cuga-flo:run:{id}#instance");
    let insert = |value: &str, by: &str| {
        format!(
            "PREFIX agentflow: <http://example.org/ontology/agentflow#>\n\
             PREFIX cf: <urn:cuga-flo:vocab#>\n\
             INSERT DATA {{ GRAPH <{graph}> {{ <{instance}> agentflow:hasVariable \
             [ a agentflow:ProcessVariable ; agentflow:varName \"approval_status\" ; \
             agentflow:varValue \"{value}\" ; cf:decidedBy \"{by}\" ] }} }}"
        )
    };
    // Someone who is not an approver writes APPROVED: ignored, the run parks again.
    sparql_update(&server.url, &insert("APPROVED", "mallory"));
    let out = runs::resume(&run_dir, &id, &["--no-model"], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", runs::show(&out));
    assert!(events(&runs::journal(&run_dir), "question_answered").is_empty());
    // Erin's approval, written the way AgentFLOW's `make approve` writes it.
    sparql_update(&server.url, &insert("APPROVED", "erin"));
    let out = runs::resume(&run_dir, &id, &["--no-model"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    let records = runs::journal(&run_dir);
    let answered = events(&records, "question_answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["by"], "erin");
    assert!(
        answered[0]["reason"]
            .as_str()
            .unwrap()
            .contains("written into the run's graph")
    );
    assert_eq!(routed(&records)["flows"][0], PUSH);
    assert_eq!(path(&records).last(), Some(&"End_Completed"));
    // The ABox records the decision, who made it and when.
    let out = cuga(
        &[
            "graph",
            "query",
            &id,
            "--json",
            "--run-dir",
            run_dir.to_str().unwrap(),
            "SELECT ?by ?at WHERE { ?a cf:by ?by ; cf:answeredAt ?at }",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", runs::show(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc["results"]["bindings"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{doc}");
    assert_eq!(rows[0]["by"]["value"], "erin");
    let decided = cuga(
        &[
            "graph",
            "query",
            &id,
            "--json",
            "--run-dir",
            run_dir.to_str().unwrap(),
            "SELECT ?by WHERE { ?d a cf:GatewayDecision ; cf:gateway ?g ; cf:decidedBy ?by \
             FILTER(STRENDS(STR(?g), \"GW_HumanApproval\")) }",
        ],
        &[],
    );
    let doc: Value = serde_json::from_slice(&decided.stdout).unwrap();
    assert_eq!(
        doc["results"]["bindings"][0]["by"]["value"], "human",
        "{doc}"
    );
}

/// `graph query <run> SELECT ?by` of the decision at `gateway`.
#[cfg(feature = "graph")]
fn decided_in_graph(run_dir: &Path, id: &str, gateway: &str) -> Vec<String> {
    let query = format!(
        "SELECT ?by WHERE {{ ?d a cf:GatewayDecision ; cf:gateway ?g ; cf:decidedBy ?by \
         FILTER(STRENDS(STR(?g), \"#{gateway}\")) }}"
    );
    let out = cuga(
        &[
            "graph",
            "query",
            id,
            &query,
            "--json",
            "--run-dir",
            run_dir.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", runs::show(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["results"]["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["by"]["value"].as_str().unwrap().to_string())
        .collect()
}

#[test]
#[cfg(feature = "graph")]
fn the_demos_run_in_graph_mode_on_the_embedded_store() {
    let tmp = TempDir::new().unwrap();
    for (app, scenario, gateway, by) in [
        ("git_push_safety", "approved", GATEWAY, "scripted"),
        ("git_push_safety", "denied", GATEWAY, "scripted"),
        (
            "sim_activation",
            "escalated",
            "GW_SeverityCheck",
            "condition",
        ),
        (
            "sim_activation",
            "provisioned",
            "GW_SeverityCheck",
            "default",
        ),
    ] {
        let dir = tmp.path().join(format!("{scenario}/apps/{app}"));
        copy_dir(&runs::app_dir(app), &dir);
        let config = dir.join(format!("config/{app}_config.yaml"));
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, format!("{text}\ngraph:\n  store: embedded\n")).unwrap();
        let run_dir = tmp.path().join(format!("{scenario}/runs"));
        let out = runs::start_scenario(&dir, scenario, &run_dir, &[], &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{app} {scenario}: {}",
            runs::show(&out)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("\"met\":true"),
            "{app} {scenario}: {}",
            runs::show(&out)
        );
        let id = runs::only_run(&run_dir);
        assert_eq!(
            decided_in_graph(&run_dir, &id, gateway),
            [by],
            "{app} {scenario}"
        );
    }
    // Timed out: parked, then DENIED by the timeout, in the ABox too.
    let app = demo(tmp.path(), |t| format!("{t}\ngraph:\n  store: embedded\n"));
    let run_dir = tmp.path().join("timed_out/runs");
    let id = parked(&app, &run_dir);
    let later = [("CUGA_FLO_CLOCK_OFFSET", "3700".to_string())];
    let out = runs::resume(&run_dir, &id, &["--no-model"], &later);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    assert_eq!(decided_in_graph(&run_dir, &id, GATEWAY), ["timeout"]);
}

#[test]
fn validate_refuses_a_guardrail_whose_decisions_take_one_flow() {
    let tmp = TempDir::new().unwrap();
    let app = demo(tmp.path(), |t| t);
    let bpmn = app.join("config/git_push_safety.bpmn");
    let text = std::fs::read_to_string(&bpmn).unwrap();
    // The push flow tests another variable: APPROVED and DENIED both take the default.
    std::fs::write(
        &bpmn,
        text.replace(
            "${approval_status} == 'APPROVED'",
            "${secrets_found} == false",
        ),
    )
    .unwrap();
    let out = cuga(&["validate", app.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", runs::show(&out));
    let shown = runs::show(&out);
    assert!(shown.contains("guardrail::routes"), "{shown}");
    assert!(shown.contains("approval"), "{shown}");
}

/// `start --by NAME` on a real terminal (a pty), the guardrail not answered by the
/// scenario: what the terminal showed, once the run has ended or parked.
fn at_the_terminal(app: &Path, run_dir: &Path, by: &str, answers: &[&str]) -> String {
    use expectrl::{Eof, Expect, Regex, Session};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.arg("start")
        .arg(app)
        .args([
            "--scenario",
            "timed_out",
            "--no-model",
            "--by",
            by,
            "--run-dir",
        ])
        .arg(run_dir)
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env("TERM", "xterm");
    let mut session = Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(std::time::Duration::from_secs(60)));
    let mut shown = String::new();
    for answer in answers {
        let found = session
            .expect(Regex(r"(Choose a flow \(1-2\)|Reason \(optional\))> "))
            .unwrap_or_else(|e| panic!("no prompt ({e}): {shown}"));
        shown.push_str(&String::from_utf8_lossy(found.before()));
        shown.push_str(&String::from_utf8_lossy(found.get(0).unwrap()));
        session.send_line(answer).unwrap();
    }
    let rest = session.expect(Eof).unwrap();
    shown.push_str(&String::from_utf8_lossy(rest.as_bytes()));
    shown
}

#[test]
fn at_the_terminal_only_an_approver_decides_and_is_recorded_by_name() {
    let tmp = TempDir::new().unwrap();
    let app = demo(tmp.path(), |t| {
        t.replace(
            "      timeout: 1h ",
            "      approvers: [alice, bob]\n      timeout: 1h ",
        )
    });
    // Mallory is not an approver: told so, not asked; the run parks for an approver.
    let run_dir = tmp.path().join("mallory");
    let shown = at_the_terminal(&app, &run_dir, "mallory", &[]);
    assert!(
        shown.contains("you answer as `mallory`") && shown.contains("approvers: alice, bob"),
        "{shown}"
    );
    assert!(shown.contains("`mallory` is not an approver"), "{shown}");
    assert!(!shown.contains("Choose a flow"), "{shown}");
    let records = runs::journal(&run_dir);
    let parked = events(&records, "question_parked");
    assert_eq!(parked.len(), 1, "{shown}");
    assert_eq!(parked[0]["question"]["element"], GATEWAY);
    assert!(events(&records, "run_finished").is_empty());

    // Alice is: she approves at the terminal, and the decision names her.
    let run_dir = tmp.path().join("alice");
    let shown = at_the_terminal(&app, &run_dir, "alice", &["1", "report read"]);
    assert!(shown.contains("you answer as `alice`"), "{shown}");
    let records = runs::journal(&run_dir);
    let r = routed(&records);
    assert_eq!(r["flows"][0], PUSH, "{shown}");
    assert_eq!(r["decided_by"], "human");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("approval_status = APPROVED") && reason.contains("(by alice)"),
        "{reason}"
    );
    assert_eq!(events(&records, "run_finished")[0]["status"], "completed");
}

/// `worker --graph-poll`: a run parked at a guardrail on a real Fuseki is resumed as soon
/// as an approver's decision is in its graph, long before its deadline or the worker's
/// `--interval`; a non-approver's value is not enough.
#[test]
#[cfg(feature = "graph")]
fn the_worker_polls_the_graph_and_resumes_on_an_approvers_decision() {
    let server = fuseki::shared();
    let tmp = TempDir::new().unwrap();
    let app = demo(tmp.path(), |t| {
        format!("{t}\ngraph:\n  endpoint: {}\n  dataset: ds\n", server.url).replace(
            "      timeout: 1h ",
            "      approvers: [erin]\n      timeout: 1h ",
        )
    });
    let run_dir = tmp.path().join("runs");
    let id = parked(&app, &run_dir);
    let graph = format!("urn:cuga-flo:graph:git_push_safety:run:{id}");
    let instance = format!("urn:cuga-flo:run:{id}#instance");
    let insert = |value: &str, by: &str| {
        format!(
            "PREFIX agentflow: <http://example.org/ontology/agentflow#>\n\
             PREFIX cf: <urn:cuga-flo:vocab#>\n\
             INSERT DATA {{ GRAPH <{graph}> {{ <{instance}> agentflow:hasVariable \
             [ a agentflow:ProcessVariable ; agentflow:varName \"approval_status\" ; \
             agentflow:varValue \"{value}\" ; cf:decidedBy \"{by}\" ] }} }}"
        )
    };
    let mut worker = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args([
            "worker",
            "--interval",
            "3600",
            "--graph-poll",
            "300ms",
            "--no-model",
        ])
        .arg("--run-dir")
        .arg(&run_dir)
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let finished = |wait: std::time::Duration| {
        let until = std::time::Instant::now() + wait;
        loop {
            let records = runs::journal(&run_dir);
            if !events(&records, "run_finished").is_empty() {
                return Some(records);
            }
            if std::time::Instant::now() > until {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    // Mallory is not an approver: the run stays parked through several looks.
    sparql_update(&server.url, &insert("APPROVED", "mallory"));
    assert!(finished(std::time::Duration::from_secs(2)).is_none());
    // Erin's approval: resumed by the worker's next look.
    let written = std::time::Instant::now();
    sparql_update(&server.url, &insert("APPROVED", "erin"));
    let records = finished(std::time::Duration::from_secs(30));
    let _ = worker.kill();
    let _ = worker.wait();
    let records = records.expect("the worker resumed the run");
    assert!(written.elapsed() < std::time::Duration::from_secs(30));
    let answered = events(&records, "question_answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["by"], "erin");
    assert_eq!(routed(&records)["flows"][0], PUSH);
    assert_eq!(path(&records).last(), Some(&"End_Completed"));
}

/// `runs answer` exits as the resumed run ended: a push that fails after the approval is
/// exit 1, though the scenario the run started under (`timed_out`: nothing pushed) is met.
#[test]
fn an_answer_whose_resumed_run_fails_exits_1() {
    let tmp = TempDir::new().unwrap();
    let run_dir = tmp.path().join("runs");
    let id = parked(&runs::app_dir("git_push_safety"), &run_dir);
    let mut all = vec!["runs", "answer", &id, GATEWAY, "approve", "--by", "ann"];
    all.extend_from_slice(&["--run-dir", run_dir.to_str().unwrap(), "--no-model"]);
    // No temporary folder to make the push's repository in: the push fails.
    let out = cuga(&all, &[("TMPDIR", "/dev/null".to_string())]);
    assert_eq!(out.status.code(), Some(1), "{}", runs::show(&out));
    let shown = runs::show(&out);
    assert!(shown.contains("✘ failed"), "{shown}");
    assert!(shown.contains("every expectation met"), "{shown}");
    assert_eq!(
        events(&runs::journal(&run_dir), "run_finished")[0]["status"],
        "failed"
    );
}
