//! Graph mode's store, end to end through the binary: a demo app run with a `graph:` block
//! is written into the embedded store (process instance, task instances, variables with
//! their history, gateway decisions, transitions), `graph query` reads it back (rebuilt
//! from the journal); `validate` reports a bad `graph:` block at its line; a store that
//! cannot be reached, a dataset that is missing and an update that is refused fail the run
//! with a clear error and its journal closed.
#![cfg(feature = "graph")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use crate::support::runs;

use crate::support::fuseki;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cuga(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(args)
        .current_dir(root())
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .output()
        .expect("cuga-flo runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// `loan_approval` under `<tmp>/apps` (its policies at `<tmp>/policies`, where its config
/// looks for them), with `graph` appended to its flow config.
fn app_with(tmp: &Path, graph: &str) -> PathBuf {
    let app = tmp.join("apps/loan_approval");
    copy_dir(&root().join("applications/loan_approval"), &app);
    copy_dir(&root().join("policies"), &tmp.join("policies"));
    let config = app.join("config/loan_approval_config.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push('\n');
    text.push_str(graph);
    std::fs::write(&config, text).unwrap();
    app
}

fn start(app: &Path, scenario: &str, runs: &Path) -> Output {
    runs::start_scenario(app, scenario, runs, &["--engine", "native"], &[])
}

/// `graph query --json`: the rows, each variable's value.
fn select(target: &str, runs: &Path, sparql: &str) -> Vec<serde_json::Map<String, Value>> {
    let out = cuga(&[
        "graph",
        "query",
        target,
        sparql,
        "--json",
        "--run-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    v["results"]["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v["value"].clone()))
                .collect()
        })
        .collect()
}

/// The only run's id.
fn run_id(runs: &Path) -> String {
    std::fs::read_dir(runs.join("runs"))
        .unwrap()
        .flatten()
        .next()
        .expect("one run")
        .file_name()
        .to_string_lossy()
        .into_owned()
}

/// The only run's journal records.
fn journal(runs: &Path) -> Vec<Value> {
    let dir = runs.join("runs").join(run_id(runs));
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_run_in_graph_mode_is_written_into_the_embedded_store_and_queried() {
    let tmp = TempDir::new().unwrap();
    let app = app_with(tmp.path(), "graph:\n  store: embedded\n");
    let runs = tmp.path().join("runs");
    for scenario in ["approve", "reject_low_score"] {
        let out = start(&app, scenario, &runs);
        assert!(out.status.success(), "{}", runs::show(&out));
    }
    let app = app.to_str().unwrap();

    // Both runs, completed, none holding a token any more.
    let rows = select(
        app,
        &runs,
        "SELECT ?run ?status (COUNT(?cur) AS ?current) WHERE { ?i a agentflow:ProcessInstance; \
         agentflow:processStatus ?status; cf:runId ?run; \
         agentflow:instantiatesProcess ?p . ?p a sbpmnc:process \
         OPTIONAL { ?i agentflow:currentTask ?cur } } GROUP BY ?run ?status",
    );
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in &rows {
        assert_eq!(row["status"], "COMPLETED");
        assert_eq!(row["current"], "0");
    }

    // The path, in order, from the followedBy chain's transitions.
    let rows = select(
        app,
        &runs,
        "SELECT ?run ?to ?by ?var ?val WHERE { ?i cf:runId ?run; agentflow:hasTaskInstance ?v . \
         ?t a cf:Transition; cf:to ?v; cf:from ?f; cf:seq ?s; agentflow:triggeredBy ?by . \
         ?f agentflow:followedBy ?v . ?v agentflow:instantiatesTask ?n . ?n cf:bpmnId ?to \
         OPTIONAL { ?t agentflow:evaluatedVariable ?var; agentflow:evaluatedValue ?val } } \
         ORDER BY ?run ?s",
    );
    let mut paths: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for r in &rows {
        paths
            .entry(r["run"].as_str().unwrap().into())
            .or_default()
            .push(r["to"].as_str().unwrap().into());
    }
    let mut paths: Vec<Vec<String>> = paths.into_values().collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            [
                "Activity_0oydey5",
                "Gateway_09ad5fc",
                "Activity_131ar38",
                "Gateway_15y9k7z",
                "Event_13axbio"
            ],
            [
                "Activity_0oydey5",
                "Gateway_09ad5fc",
                "Activity_1h9ix55",
                "Gateway_15y9k7z",
                "Event_13axbio"
            ],
        ]
    );
    let chosen = rows.iter().find(|r| r["to"] == "Activity_1h9ix55").unwrap();
    assert_eq!(chosen["by"], "condition");
    assert_eq!(chosen["var"], "credit_score");
    assert_eq!(chosen["val"], "0.9");

    // The gateway decisions: who decided, the variable and its value, the flow chosen.
    let rows = select(
        app,
        &runs,
        "SELECT ?val ?flow ?by WHERE { ?d a cf:GatewayDecision; cf:gateway ?g; cf:decidedBy ?by; \
         agentflow:evaluatedVariable \"credit_score\"; agentflow:evaluatedValue ?val; \
         cf:chosenFlow ?flow . ?g cf:bpmnId \"Gateway_09ad5fc\" } ORDER BY ?val",
    );
    let got: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["val"].as_str().unwrap().into(),
                r["by"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("0.3".to_string(), "condition".to_string()),
            ("0.9".into(), "condition".into())
        ]
    );

    // Variables: the latest value on the variable, every value in its history.
    let rows = select(
        app,
        &runs,
        "SELECT ?run ?value (COUNT(?h) AS ?n) WHERE { ?i cf:runId ?run; agentflow:hasVariable ?v . \
         ?v agentflow:varName \"credit_score\"; agentflow:varValue ?value; cf:history ?h } \
         GROUP BY ?run ?value ORDER BY ?value",
    );
    let got: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["value"].as_str().unwrap().into(),
                r["n"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("0.3".to_string(), "2".to_string()),
            ("0.9".into(), "2".into())
        ]
    );

    // One run by its id; the TBox is there too; a table by default.
    let id = rows[0]["run"].as_str().unwrap();
    let out = cuga(&[
        "graph",
        "query",
        id,
        "SELECT ?name WHERE { ?v a agentflow:ProcessVariable; agentflow:varName ?name } ORDER BY ?name",
        "--run-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    let table = text(&out.stdout);
    assert!(table.starts_with("?name"), "{table}");
    assert!(
        table.contains("credit_score") && table.contains("(9 rows)"),
        "{table}"
    );
    let asked = cuga(&[
        "graph",
        "query",
        id,
        "ASK { GRAPH ?g { ?n agentflow:nextTask ?m } }",
        "--run-dir",
        runs.to_str().unwrap(),
    ]);
    assert_eq!(text(&asked.stdout).trim(), "true", "{}", runs::show(&asked));

    // Bad SPARQL: a usage error that says so.
    let bad = cuga(&[
        "graph",
        "query",
        id,
        "SELEC nothing",
        "--run-dir",
        runs.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", runs::show(&bad));
    assert!(
        text(&bad.stderr).contains("invalid SPARQL"),
        "{}",
        runs::show(&bad)
    );
}

#[test]
fn a_bad_graph_block_is_reported_at_its_line() {
    let tmp = TempDir::new().unwrap();
    let app = app_with(
        tmp.path(),
        "graph:\n  store: fuseki\n  endpoint: ftp://example.org\n  password: hunter2\n",
    );
    let out = cuga(&["validate", app.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", runs::show(&out));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("unknown graph store `fuseki`"), "{all}");
    assert!(all.contains("loan_approval_config.yaml:"), "{all}");
    assert!(
        all.contains("password is written into the config file"),
        "{all}"
    );

    let tmp = TempDir::new().unwrap();
    let app = app_with(tmp.path(), "graph:\n  store: endpoint\n");
    let all = text(&cuga(&["validate", app.to_str().unwrap()]).stderr)
        + &text(&cuga(&["validate", app.to_str().unwrap()]).stdout);
    assert!(all.contains("has no `endpoint:` URL"), "{all}");
}

/// The run failed with `message` in its error and its journal closed with `run_finished`
/// failed.
fn failed_and_closed(out: &Output, runs: &Path, message: &str) {
    assert_eq!(out.status.code(), Some(1), "{}", runs::show(out));
    let err = text(&out.stderr);
    assert!(err.contains(message), "{}", runs::show(out));
    let records = journal(runs);
    let last = records.last().unwrap();
    assert_eq!(last["event"], "run_finished", "{records:?}");
    assert_eq!(last["status"], "failed");
    assert!(
        last["message"].as_str().unwrap().contains(message),
        "{last}"
    );
    // Nothing of the process ran past its start: the store failed on the first step.
    assert!(
        !records.iter().any(|r| r["event"] == "task_finished"),
        "{records:?}"
    );
}

#[test]
fn an_unreachable_endpoint_fails_the_run_with_its_journal_closed() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let tmp = TempDir::new().unwrap();
    let app = app_with(
        tmp.path(),
        &format!("graph:\n  endpoint: http://127.0.0.1:{port}\n  dataset: ds\n  timeout: 5\n"),
    );
    let runs = tmp.path().join("runs");
    let out = start(&app, "approve", &runs);
    failed_and_closed(&out, &runs, "cannot be reached");
}

/// A one-thread HTTP server answering every request with `status` (and counting them).
fn answering(status: u16) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let mut stream = stream;
            let reply = "no such thing";
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    url
}

#[test]
fn a_missing_dataset_or_a_refused_update_fails_the_run_with_its_journal_closed() {
    for (status, message) in [
        (404, "has no dataset `ds`"),
        (405, "refused the graph upload (HTTP 405)"),
        (401, "refused the credentials"),
    ] {
        let url = answering(status);
        let tmp = TempDir::new().unwrap();
        let app = app_with(
            tmp.path(),
            &format!(
                "graph:\n  endpoint: {url}\n  dataset: ds\n  user_env: CUGA_TEST_GRAPH_USER\n  \
                 password_env: CUGA_TEST_GRAPH_PASSWORD\n"
            ),
        );
        let runs = tmp.path().join("runs");
        let secret = "s3cr3t-graph-password";
        let out = runs::start_scenario(
            &app,
            "approve",
            &runs,
            &["--engine", "native"],
            &[
                ("CUGA_TEST_GRAPH_USER", "ana".to_string()),
                ("CUGA_TEST_GRAPH_PASSWORD", secret.to_string()),
            ],
        );
        failed_and_closed(&out, &runs, message);
        // The password is in no message and nowhere in the journal.
        let dir = runs.join("runs").join(run_id(&runs));
        let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
        assert!(!journal.contains(secret));
        assert!(!text(&out.stdout).contains(secret) && !text(&out.stderr).contains(secret));
    }
}

#[test]
fn an_unset_password_variable_is_a_usage_error_and_nothing_is_written() {
    let tmp = TempDir::new().unwrap();
    let app = app_with(
        tmp.path(),
        "graph:\n  endpoint: http://127.0.0.1:9\n  dataset: ds\n  user_env: CUGA_TEST_NO_SUCH_USER\n",
    );
    let runs = tmp.path().join("runs");
    let out = start(&app, "approve", &runs);
    assert_eq!(out.status.code(), Some(2), "{}", runs::show(&out));
    assert!(
        text(&out.stderr).contains("CUGA_TEST_NO_SUCH_USER"),
        "{}",
        runs::show(&out)
    );
    assert!(
        !runs.join("runs").exists()
            || std::fs::read_dir(runs.join("runs"))
                .unwrap()
                .next()
                .is_none()
    );
}

/// The ABox of the only run under `runs`, as sorted N-Triples-like lines with its run id
/// and its timestamps replaced (what differs between two runs of the same scenario).
fn abox(app: &Path, runs: &Path) -> Vec<String> {
    let _ = app;
    abox_of("loan_approval", runs)
}

/// As [`abox`], for a run of app `name`.
fn abox_of(name: &str, runs: &Path) -> Vec<String> {
    let id = run_id(runs);
    let graph = format!("urn:cuga-flo:graph:{name}:run:{id}");
    let rows = select(
        &id,
        runs,
        &format!("SELECT ?s ?p ?o WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"),
    );
    let dt = "http://www.w3.org/2001/XMLSchema#dateTime";
    let mut lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let part = |k: &str| r[k].as_str().unwrap().replace(&id, "RUN");
            format!("{} {} {}", part("s"), part("p"), part("o"))
        })
        .collect();
    // Timestamps: the dateTime values, found by their datatype.
    let times = select(
        &id,
        runs,
        &format!(
            "SELECT ?s ?p WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o FILTER(datatype(?o) = <{dt}>) }} }}"
        ),
    );
    for t in times {
        let prefix = format!(
            "{} {} ",
            t["s"].as_str().unwrap().replace(&id, "RUN"),
            t["p"].as_str().unwrap()
        );
        for line in lines.iter_mut().filter(|l| l.starts_with(&prefix)) {
            *line = format!("{prefix}TIME");
        }
    }
    lines.sort();
    lines
}

#[test]
fn the_same_run_on_fuseki_and_on_the_embedded_store_gives_the_same_abox() {
    let server = fuseki::shared();
    for scenario in ["approve", "reject_low_score"] {
        let tmp = TempDir::new().unwrap();
        let on_fuseki = app_with(
            &tmp.path().join("f"),
            &format!("graph:\n  endpoint: {}\n  dataset: ds\n", server.url),
        );
        let embedded = app_with(&tmp.path().join("e"), "graph:\n  store: embedded\n");
        let (runs_f, runs_e) = (tmp.path().join("runs-f"), tmp.path().join("runs-e"));
        let out = start(&on_fuseki, scenario, &runs_f);
        assert!(out.status.success(), "{}", runs::show(&out));
        let out = start(&embedded, scenario, &runs_e);
        assert!(out.status.success(), "{}", runs::show(&out));
        let (f, e) = (abox(&on_fuseki, &runs_f), abox(&embedded, &runs_e));
        assert!(f.len() > 100, "{f:#?}");
        let only_f: Vec<&String> = f.iter().filter(|l| !e.contains(l)).collect();
        let only_e: Vec<&String> = e.iter().filter(|l| !f.contains(l)).collect();
        assert!(
            only_f.is_empty() && only_e.is_empty() && f.len() == e.len(),
            "{scenario}: Fuseki's ABox differs from the embedded store's\n\
             only on Fuseki: {only_f:#?}\nonly embedded: {only_e:#?}"
        );
        // The TBox went in too, through the Graph Store Protocol.
        let id = run_id(&runs_f);
        let rows = select(
            &id,
            &runs_f,
            "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <urn:cuga-flo:graph:loan_approval:definitions> \
             { ?s agentflow:nextTask ?o } }",
        );
        assert_ne!(rows[0]["n"], "0", "{rows:?}");
    }
}

#[test]
fn a_dataset_fuseki_does_not_have_fails_the_run_with_its_journal_closed() {
    let server = fuseki::shared();
    let tmp = TempDir::new().unwrap();
    let app = app_with(
        tmp.path(),
        &format!("graph:\n  endpoint: {}\n  dataset: nope\n", server.url),
    );
    let runs = tmp.path().join("runs");
    let out = start(&app, "approve", &runs);
    failed_and_closed(&out, &runs, "has no dataset `nope`");
}

/// `trip_planner` under `<tmp>/apps` with `graph` appended to its flow config.
fn trip_planner_with(tmp: &Path, graph: &str) -> PathBuf {
    let app = tmp.join("apps/trip_planner");
    copy_dir(&root().join("applications/trip_planner"), &app);
    let config = app.join("config/trip_planner_config.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push('\n');
    text.push_str(graph);
    std::fs::write(&config, text).unwrap();
    app
}

fn in_runs(args: &[&str], runs: &Path) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--run-dir", runs.to_str().unwrap()]);
    cuga(&all)
}

/// Start trip_planner without a model: it parks on a question for a person; then answer
/// it (`runs answer` resumes the run to its end). The run's id.
fn park_and_answer(app: &Path, runs: &Path, on_park: impl Fn(&str)) -> String {
    let out = in_runs(&["start", app.to_str().unwrap(), "--no-model"], runs);
    assert_eq!(out.status.code(), Some(3), "{}", runs::show(&out));
    let id = run_id(runs);
    on_park(&id);
    let out = in_runs(
        &[
            "runs",
            "answer",
            &id,
            "Activity_1dlyezk",
            "--outputs",
            r#"{"planning_preference": "human", "destination": "Lisbon"}"#,
            "--by",
            "ana",
        ],
        runs,
    );
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    id
}

fn status_of(id: &str, runs: &Path) -> String {
    let rows = select(
        id,
        runs,
        "SELECT ?s WHERE { ?i a agentflow:ProcessInstance; agentflow:processStatus ?s }",
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0]["s"].as_str().unwrap().to_string()
}

#[test]
fn a_parked_run_resumed_goes_on_writing_into_fuseki_as_into_the_embedded_store() {
    let server = fuseki::shared();
    let tmp = TempDir::new().unwrap();
    let on_fuseki = trip_planner_with(
        &tmp.path().join("f"),
        &format!("graph:\n  endpoint: {}\n  dataset: ds\n", server.url),
    );
    let embedded = trip_planner_with(&tmp.path().join("e"), "graph:\n  store: embedded\n");
    let (runs_f, runs_e) = (tmp.path().join("runs-f"), tmp.path().join("runs-e"));
    // Parked: WAITING in the store, the question's task the current one.
    let id = park_and_answer(&on_fuseki, &runs_f, |id| {
        assert_eq!(status_of(id, &runs_f), "WAITING");
    });
    park_and_answer(&embedded, &runs_e, |id| {
        assert_eq!(status_of(id, &runs_e), "WAITING");
    });
    assert_eq!(status_of(&id, &runs_f), "COMPLETED");
    let rows = select(
        &id,
        &runs_f,
        "SELECT ?by ?how WHERE { ?i cf:answer ?a . ?a cf:by ?by; cf:decidedBy ?how }",
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["by"].as_str(), rows[0]["how"].as_str()),
        (Some("ana"), Some("human"))
    );
    let (f, e) = (
        abox_of("trip_planner", &runs_f),
        abox_of("trip_planner", &runs_e),
    );
    let only_f: Vec<&String> = f.iter().filter(|l| !e.contains(l)).collect();
    let only_e: Vec<&String> = e.iter().filter(|l| !f.contains(l)).collect();
    assert!(
        only_f.is_empty() && only_e.is_empty() && f.len() == e.len(),
        "only on Fuseki: {only_f:#?}\nonly embedded: {only_e:#?}"
    );
}

/// Jena reads what `graph export` writes: every demo app's Turtle (RDF 1.2 annotations
/// `{| |}` included) is uploaded to Fuseki's Graph Store Protocol, which parses it with
/// Jena's RIOT (a parse error is a 400), and Jena then holds the same asserted `nextTask`
/// edges as the export's N-Quads.
#[test]
fn jena_parses_every_exported_graph() {
    let server = fuseki::shared();
    let apps: Vec<String> = std::fs::read_dir(root().join("applications"))
        .unwrap()
        .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
        .collect();
    assert!(apps.len() >= 5, "{apps:?}");
    let next_task = "<http://example.org/ontology/agentflow#nextTask>";
    for app in &apps {
        let turtle = cuga(&["graph", "export", app]);
        assert!(turtle.status.success(), "{app}: {}", text(&turtle.stderr));
        let graph = format!("urn:test:jena:{app}");
        let put = Command::new("curl")
            .args([
                "-sS",
                "-o",
                "/dev/stderr",
                "-w",
                "%{http_code}",
                "-X",
                "PUT",
            ])
            .args(["-H", "Content-Type: text/turtle; charset=utf-8"])
            .arg("--data-binary")
            .arg("@-")
            .arg(format!("{}/ds/data?graph={graph}", server.url))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(&turtle.stdout)?;
                child.wait_with_output()
            })
            .expect("curl runs");
        let code = text(&put.stdout);
        assert!(
            code.starts_with('2'),
            "{app}: Fuseki refused the exported Turtle ({code}): {}",
            text(&put.stderr)
        );
        let nquads = cuga(&["graph", "export", app, "--format", "nquads"]);
        assert!(nquads.status.success(), "{app}: {}", text(&nquads.stderr));
        let ours = text(&nquads.stdout)
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some(next_task))
            .count();
        assert!(ours > 0, "{app}: no nextTask edge exported");
        let query =
            format!("SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s {next_task} ?o }} }}");
        let out = Command::new("curl")
            .args(["-sS", "-H", "Accept: application/sparql-results+json"])
            .args(["--data-urlencode", &format!("query={query}")])
            .arg(format!("{}/ds/query", server.url))
            .output()
            .expect("curl runs");
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{app}: {e}: {}", text(&out.stdout)));
        let jena = doc["results"]["bindings"][0]["n"]["value"]
            .as_str()
            .unwrap_or("?");
        assert_eq!(jena, ours.to_string(), "{app}: nextTask edges in Jena");
    }
}

/// call_same_file (a call activity calling a process of the same file) in graph mode.
fn call_same_file_with(tmp: &Path, graph: &str) -> PathBuf {
    let app = tmp.join("apps/call_same_file");
    copy_dir(&root().join("tests/fixtures/apps/call_same_file"), &app);
    let config = app.join("config/call_same_file_config.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push('\n');
    text.push_str(graph);
    std::fs::write(&config, text).unwrap();
    app
}

const CHILD_LINKS: &str = "SELECT ?child ?parent ?node ?status ?g WHERE { GRAPH ?g {
    ?c cf:parentRun ?p; cf:calledBy ?node; cf:runId ?child; agentflow:processStatus ?status }
    GRAPH ?pg { ?p cf:runId ?parent; cf:childRun ?c } }";

/// A child run of a call activity is its own ABox graph in the caller's store, linked to
/// the run that called it both ways; on Fuseki the links are read from the server itself.
#[test]
fn a_child_run_is_written_into_the_store_linked_to_its_parent() {
    let server = fuseki::shared();
    let tmp = TempDir::new().unwrap();
    for (name, graph) in [
        ("e", "graph:\n  store: embedded\n".to_string()),
        (
            "f",
            format!("graph:\n  endpoint: {}\n  dataset: ds\n", server.url),
        ),
    ] {
        let app = call_same_file_with(&tmp.path().join(name), &graph);
        let runs = tmp.path().join(format!("runs-{name}"));
        let out = start(&app, "pass", &runs);
        assert!(out.status.success(), "{}", runs::show(&out));
        // The calling run: the one whose `run_started` names no parent.
        let records: Vec<Value> = std::fs::read_dir(runs.join("runs"))
            .unwrap()
            .map(|e| {
                std::fs::read_to_string(e.unwrap().path().join("journal.jsonl"))
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect::<Vec<Value>>()
            })
            .find(|records| records[0].get("parent").is_none())
            .expect("the calling run");
        let parent = records[0]["run_id"].as_str().unwrap().to_string();
        let child = records
            .iter()
            .find(|r| r["event"] == "child_started")
            .expect("a child run")["run_id"]
            .as_str()
            .unwrap()
            .to_string();
        // Every run of the app: the embedded store is rebuilt from both journals.
        let rows = select(app.to_str().unwrap(), &runs, CHILD_LINKS);
        assert_eq!(rows.len(), 1, "{name}: {rows:?}");
        let row = &rows[0];
        assert_eq!(row["child"], child.as_str(), "{name}");
        assert_eq!(row["parent"], parent.as_str(), "{name}");
        assert_eq!(row["node"], "Call_Sub", "{name}");
        assert_eq!(row["status"], "COMPLETED", "{name}");
        assert_eq!(
            row["g"],
            format!("urn:cuga-flo:graph:call_same_file:run:{child}").as_str(),
            "{name}"
        );
    }
}

/// A run a client starts on `serve --a2a` is written into the app's store as `start`
/// writes it: read back from Fuseki itself (sim_activation, whose tasks run their command
/// agents' scripts: nothing to answer).
#[test]
fn a_run_served_over_a2a_is_written_into_the_store() {
    let server = fuseki::shared();
    let tmp = TempDir::new().unwrap();
    let app = tmp.path().join("apps/sim_activation");
    copy_dir(&root().join("applications/sim_activation"), &app);
    let config = app.join("config/sim_activation_config.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\ngraph:\n  endpoint: {}\n  dataset: ds\n",
        server.url
    ));
    std::fs::write(&config, text).unwrap();
    let base = tmp.path().join("base");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(["--color", "never", "--apps-dir"])
        .arg(tmp.path().join("apps"))
        .args([
            "serve",
            "--a2a",
            "127.0.0.1:0",
            "--no-model",
            "sim_activation",
        ])
        .arg("--run-dir")
        .arg(&base)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let host = line
        .trim()
        .strip_prefix("listening http://")
        .unwrap_or_else(|| panic!("no `listening` line but {line:?}"))
        .to_string();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [
            {"data": {"request": "My SIM was stolen", "msisdn": "+15550177"}}]}}})
    .to_string();
    let mut tcp = std::net::TcpStream::connect(&host).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(
        tcp,
        "POST /sim_activation HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/a2a+json\r\n\
         A2A-Version: 1.0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(response.contains("TASK_STATE_COMPLETED"), "{response}");
    let run = std::fs::read_dir(base.join("runs"))
        .unwrap()
        .flatten()
        .next()
        .expect("the served run's journal")
        .file_name()
        .to_string_lossy()
        .into_owned();
    // Asked of Fuseki directly (an app on an endpoint is not rebuilt from journals).
    let rows = select(
        app.to_str().unwrap(),
        &base,
        &format!(
            "SELECT ?status ?ticket WHERE {{ GRAPH <urn:cuga-flo:graph:sim_activation:run:{run}> {{
              ?i cf:runId \"{run}\"; agentflow:processStatus ?status; agentflow:hasVariable ?v .
              ?v agentflow:varName \"ticket\"; agentflow:varValue ?ticket }} }}"
        ),
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "COMPLETED");
    assert_eq!(rows[0]["ticket"], "SEC-4687");
}
