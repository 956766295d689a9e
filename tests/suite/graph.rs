//! `cuga-flo graph export` and `graph import`, end to end through the binary: every demo
//! app goes BPMN → Turtle → imported app, and each of its scenarios runs on the imported
//! app exactly as on the original (same path, same decisions, same journalled events);
//! AgentFLOW's own demo graphs import into apps that run; bad graphs are reported at their
//! line; a second RDF reader (pyoxigraph, rdflib) accepts what is exported.
#![cfg(feature = "graph")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use crate::support::runs;

use crate::support;
use crate::support::python;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cuga(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(args)
        .current_dir(root())
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .output()
        .expect("cuga-flo runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `graph export <app>` to a file, then `graph import` into `<tmp>/apps/<app>` with the
/// app's scenarios copied beside: the imported app's folder.
fn round_trip(app_dir: &Path, tmp: &Path, format: &str) -> PathBuf {
    let app = app_dir.file_name().unwrap().to_str().unwrap();
    let ext = match format {
        "trig" => "trig",
        "nquads" => "nq",
        _ => "ttl",
    };
    let file = tmp.join(format!("{app}.{ext}"));
    let out = cuga(&[
        "graph",
        "export",
        app_dir.to_str().unwrap(),
        "--format",
        format,
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "export {app}: {}", runs::show(&out));
    let imported = tmp.join("apps").join(app);
    let out = cuga(&[
        "graph",
        "import",
        file.to_str().unwrap(),
        "-o",
        imported.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "import {app}: {}", runs::show(&out));
    let scenarios = app_dir.join("scenarios");
    if scenarios.is_dir() {
        std::fs::create_dir_all(imported.join("scenarios")).unwrap();
        for e in std::fs::read_dir(&scenarios).unwrap().flatten() {
            std::fs::copy(e.path(), imported.join("scenarios").join(e.file_name())).unwrap();
        }
    }
    imported
}

/// The run's events as `runs::comparable` keeps them, without the two places the app's
/// folder shows (the launch and the scenario file named in the reasoner chain).
fn events(out: &Output) -> Vec<Value> {
    runs::comparable(&text(&out.stdout))
        .into_iter()
        // The exchange with a remote agent (each SendMessage, GetTask poll and state seen)
        // depends on timing; what it decided is in the task and gateway records.
        .filter(|e| {
            !(e["event"] == "model_called"
                && e["model"].as_str().is_some_and(|m| m.starts_with("a2a:")))
        })
        .map(|mut e| {
            if e["event"] == "run_started" {
                let map = e.as_object_mut().unwrap();
                map.remove("reasoner");
                map.remove("launch");
            }
            // A parked question's deadline is wall-clock time.
            if let Some(map) = e.as_object_mut() {
                map.remove("due_ms");
            }
            if let Some(q) = e.get_mut("question").and_then(|q| q.as_object_mut()) {
                q.remove("deadline_ms");
            }
            // So is a consultation's (its remote task's `until_ms`); and a served agent's
            // task is at `working` or already at `input-required` when its SendMessage
            // returns, as the two processes race.
            if let Some(r) = e.get_mut("remote").and_then(|r| r.as_object_mut()) {
                r.remove("until_ms");
                r.remove("state");
            }
            without_run_ids(&mut e);
            e
        })
        .collect()
}

/// Run ids (`20261202T031604Z-8d8fb0`) inside texts (a child run's id names its parent's)
/// replaced by `[RUN_ID]`.
fn without_run_ids(v: &mut Value) {
    match v {
        Value::String(s) => {
            let b = s.as_bytes();
            let mut out = String::new();
            let mut i = 0;
            while i < b.len() {
                let is_id = b.len() >= i + 23
                    && b[i..i + 8].iter().all(u8::is_ascii_digit)
                    && b[i + 8] == b'T'
                    && b[i + 9..i + 15].iter().all(u8::is_ascii_digit)
                    && &b[i + 15..i + 17] == b"Z-"
                    && b[i + 17..i + 23]
                        .iter()
                        .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c));
                if is_id {
                    out.push_str("[RUN_ID]");
                    i += 23;
                } else {
                    let c = s[i..].chars().next().unwrap();
                    out.push(c);
                    i += c.len_utf8();
                }
            }
            *s = out;
        }
        Value::Array(items) => items.iter_mut().for_each(without_run_ids),
        Value::Object(map) => {
            // An A2A exchange's steps (a scenario serving a remote agent): their timing
            // varies, and the agent's task ids are fresh UUIDs.
            if map
                .get("model")
                .and_then(Value::as_str)
                .is_some_and(|m| m.starts_with("a2a:"))
            {
                map.remove("latency_ms");
            }
            // A command agent's answer says how long its CLI took.
            if map.get("decided_by").and_then(Value::as_str) == Some("command")
                && let Some(Value::String(reason)) = map.get_mut("reason")
                && let Some(at) = reason.find(" answered in ")
            {
                reason.truncate(at + " answered in".len());
            }
            map.values_mut().for_each(without_run_ids)
        }
        _ => {}
    }
    if let Value::String(s) = v {
        *s = without_uuids(s);
    }
}

/// UUIDs (`8-4-4-4-12` lowercase hex: the A2A task ids a served agent assigns) replaced by
/// `[TASK_ID]`.
fn without_uuids(s: &str) -> String {
    let b = s.as_bytes();
    let groups = [8, 4, 4, 4, 12];
    let at = |i: usize| -> Option<usize> {
        let mut j = i;
        for (n, len) in groups.iter().enumerate() {
            if n > 0 {
                (b.get(j) == Some(&b'-')).then_some(())?;
                j += 1;
            }
            let end = j + len;
            (end <= b.len()
                && b[j..end]
                    .iter()
                    .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
            .then_some(())?;
            j = end;
        }
        Some(j)
    };
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = at(i) {
            out.push_str("[TASK_ID]");
            i = end;
        } else {
            let c = s[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn scenarios_of(app_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(app_dir.join("scenarios"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let p = e.path();
                    (p.extension().is_some_and(|x| x == "yaml"))
                        .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Every scenario of `app_dir` runs on its imported copy exactly as on the original.
fn same_runs(app_dir: &Path, format: &str) -> usize {
    let tmp = TempDir::new().unwrap();
    same_runs_in(app_dir, tmp.path(), format)
}

/// As [`same_runs`], the copy imported under `tmp/apps` (beside apps imported before).
fn same_runs_in(app_dir: &Path, tmp: &Path, format: &str) -> usize {
    let imported = round_trip(app_dir, tmp, format);
    // The same model: nodes, flows, names and conditions, branch by branch.
    let drawn =
        |dir: &Path| text(&cuga(&["graph", dir.to_str().unwrap(), "--format", "ascii"]).stdout);
    assert_eq!(drawn(app_dir), drawn(&imported), "{}", app_dir.display());
    let app_name = app_dir.file_name().unwrap().to_string_lossy();
    let scenarios = scenarios_of(app_dir);
    for scenario in &scenarios {
        let native = ["--engine", "native"];
        let dir = tmp.join("runs").join(&*app_name).join(scenario);
        let original = {
            let env = tool_env(app_dir, &dir.join("a"));
            runs::start_scenario(app_dir, scenario, &dir.join("a"), &native, &env)
        };
        let copy = {
            let env = tool_env(app_dir, &dir.join("b"));
            runs::start_scenario(&imported, scenario, &dir.join("b"), &native, &env)
        };
        let app = app_dir.display();
        assert_eq!(
            original.status.code(),
            copy.status.code(),
            "{app} {scenario}\noriginal: {}\nimported: {}",
            runs::show(&original),
            runs::show(&copy)
        );
        let (want, got) = (events(&original), events(&copy));
        assert_eq!(
            got.last().unwrap()["met"],
            true,
            "{app} {scenario}: {}",
            runs::show(&copy)
        );
        assert_eq!(
            want, got,
            "{app} {scenario}: the imported app ran otherwise"
        );
    }
    scenarios.len()
}

/// The environment of a scenario's run in `run_dir`: the bearer token of the remote agents
/// a scenario serves (claim_intake's), and what the demo apps' tool servers need: the MCP
/// SDK's python first on PATH, the HR server's database in the run's folder (each run
/// starts from the same seed), the credit bureau's token.
fn tool_env(app_dir: &Path, run_dir: &Path) -> Vec<(&'static str, String)> {
    let mut env = vec![("CLAIM_DESK_TOKEN", "graph-round-trip".to_string())];
    if app_dir.join("servers").is_dir() {
        let path = format!(
            "{}:{}",
            python::python().parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        env.push(("PATH", path));
        env.push(("HR_DB", run_dir.join("hr_db.json").display().to_string()));
        env.push(("BUREAU_TOKEN", BUREAU_TOKEN.to_string()));
        BUREAU.with_borrow_mut(|b| {
            if let Some(b) = b {
                b.restart();
            }
        });
    }
    env
}

thread_local! {
    /// The credit bureau of the test running on this thread, if it started one (dropped,
    /// and so stopped, with the thread).
    static BUREAU: std::cell::RefCell<Option<Bureau>> = const { std::cell::RefCell::new(None) };
}

const BUREAU_TOKEN: &str = "graph-round-trip-bureau";

/// The credit bureau of the credit_check demo (an HTTP API), on a port of its own; started
/// again for each run, so that each starts from the same state (report numbers).
struct Bureau {
    port: u16,
    child: std::process::Child,
}

impl Bureau {
    fn start(port: u16) -> Bureau {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let mut child = Command::new("python3")
                .arg(root().join("applications/credit_check/servers/credit_bureau.py"))
                .arg(port.to_string())
                .env("BUREAU_TOKEN", BUREAU_TOKEN)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("python3 runs");
            let mut line = String::new();
            use std::io::BufRead;
            let _ = std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
            if let Some(p) = line
                .trim()
                .rsplit(':')
                .next()
                .and_then(|p| p.parse::<u16>().ok())
            {
                return Bureau { port: p, child };
            }
            // The port of the bureau just stopped may not be free yet.
            let _ = child.kill();
            let _ = child.wait();
            assert!(
                std::time::Instant::now() < deadline,
                "the credit bureau does not start on port {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        *self = Bureau::start(self.port);
    }
}

impl Drop for Bureau {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn demo_apps() -> Vec<PathBuf> {
    let mut apps: Vec<PathBuf> = std::fs::read_dir(root().join("applications"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("config").is_dir())
        .collect();
    apps.sort();
    apps
}

#[test]
fn every_demo_scenario_runs_the_same_after_a_turtle_round_trip() {
    let mut count = 0;
    // One apps folder for all: an app's scenario may serve a sibling app as its remote
    // agent (claim_intake's), imported before it (the folders are sorted).
    let tmp = TempDir::new().unwrap();
    let bureau = Bureau::start(0);
    let url = format!("http://127.0.0.1:{}", bureau.port);
    BUREAU.set(Some(bureau));
    for app in demo_apps() {
        // The credit bureau's demo, pointed at the bureau started here.
        let app = if app.join("servers/credit_bureau.py").is_file() {
            let copy = tmp.path().join("src").join(app.file_name().unwrap());
            support::copy_dir(&app, &copy);
            let config = copy.join("config/credit_check_config.yaml");
            let text = std::fs::read_to_string(&config).unwrap();
            assert!(text.contains("http://127.0.0.1:8086"));
            std::fs::write(&config, text.replace("http://127.0.0.1:8086", &url)).unwrap();
            copy
        } else {
            app
        };
        count += same_runs_in(&app, tmp.path(), "turtle");
    }
    BUREAU.set(None);
    assert!(count >= 24, "only {count} scenarios ran");
}

/// Call activities: one calling another app (imported beside it), one calling a second
/// process of its own file (both processes are in the graph).
#[test]
fn fixture_apps_with_call_activities_run_the_same() {
    let tmp = TempDir::new().unwrap();
    let fixtures = root().join("tests/fixtures/apps");
    round_trip(&fixtures.join("call_child"), tmp.path(), "turtle");
    assert_eq!(
        same_runs_in(&fixtures.join("call_parent"), tmp.path(), "turtle"),
        1
    );
    assert_eq!(
        same_runs_in(&fixtures.join("call_same_file"), tmp.path(), "turtle"),
        1
    );
}

#[test]
fn trig_and_nquads_round_trip_too() {
    let app = root().join("applications/loan_approval");
    assert_eq!(same_runs(&app, "trig"), 5);
    assert_eq!(same_runs(&app, "nquads"), 5);
}

#[test]
fn a_fixture_app_with_a_timer_and_a_multi_instance_sub_process_round_trips() {
    // No scenarios here: the imported app validates and its model matches the original's.
    for name in ["loan_granting", "timers", "messages", "expense_claim"] {
        let app = root().join("tests/fixtures/apps").join(name);
        let tmp = TempDir::new().unwrap();
        let imported = round_trip(&app, tmp.path(), "turtle");
        let original = cuga(&["graph", app.to_str().unwrap(), "--format", "ascii"]);
        let copy = cuga(&["graph", imported.to_str().unwrap(), "--format", "ascii"]);
        assert_eq!(text(&original.stdout), text(&copy.stdout), "{name}");
        let a = cuga(&["validate", app.to_str().unwrap(), "--json"]);
        let b = cuga(&["validate", imported.to_str().unwrap(), "--json"]);
        assert_eq!(
            a.status.code(),
            b.status.code(),
            "{name}: {}",
            runs::show(&b)
        );
    }
}

/// Two sequence flows between the same two nodes are one `nextTask` triple with two
/// annotations: both come back, with their ids.
#[test]
fn two_flows_between_the_same_nodes_stay_two() {
    let tmp = TempDir::new().unwrap();
    let app = tmp.path().join("src/twice");
    std::fs::create_dir_all(app.join("config")).unwrap();
    std::fs::write(
        app.join("config/twice_config.yaml"),
        "flow:\n  id: twice\n  name: Twice\n  bpmn_file: twice.bpmn\n",
    )
    .unwrap();
    std::fs::write(
        app.join("config/twice.bpmn"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="urn:t">
  <process id="P" isExecutable="true">
    <startEvent id="S"/>
    <parallelGateway id="Fork"/>
    <parallelGateway id="Join"/>
    <endEvent id="E"/>
    <sequenceFlow id="f0" sourceRef="S" targetRef="Fork"/>
    <sequenceFlow id="left" name="left" sourceRef="Fork" targetRef="Join"/>
    <sequenceFlow id="right" name="right" sourceRef="Fork" targetRef="Join"/>
    <sequenceFlow id="f3" sourceRef="Join" targetRef="E"/>
  </process>
</definitions>
"#,
    )
    .unwrap();
    let imported = round_trip(&app, tmp.path(), "turtle");
    let bpmn = std::fs::read_to_string(imported.join("config/twice.bpmn")).unwrap();
    for id in ["f0", "left", "right", "f3"] {
        assert!(bpmn.contains(&format!("id=\"{id}\"")), "{id}:\n{bpmn}");
    }
    assert_eq!(bpmn.matches("<bpmn:sequenceFlow").count(), 4, "{bpmn}");
    let original = cuga(&["graph", app.to_str().unwrap(), "--format", "ascii"]);
    let copy = cuga(&["graph", imported.to_str().unwrap(), "--format", "ascii"]);
    assert_eq!(text(&original.stdout), text(&copy.stdout));
}

#[test]
fn an_exported_app_as_turtle() {
    let out = cuga(&["graph", "export", "tests/fixtures/apps/guarded"]);
    assert!(out.status.success(), "{}", runs::show(&out));
    insta::assert_snapshot!("graph_export_guarded", text(&out.stdout));
}

/// AgentFLOW's SIM activation demo (its own definitions.ttl) imports into an app whose
/// severity gateway routes as the original's does.
#[test]
fn agentflow_sim_activation_imports_and_runs() {
    let tmp = TempDir::new().unwrap();
    let app = tmp.path().join("apps/sim_activation");
    let graph = root().join("tests/fixtures/graph/agentflow/sim-activation.definitions.ttl");
    let out = cuga(&[
        "graph",
        "import",
        graph.to_str().unwrap(),
        "--out",
        app.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    assert!(
        text(&out.stdout).contains("7 nodes, 7 flows"),
        "{}",
        runs::show(&out)
    );
    let bpmn = std::fs::read_to_string(app.join("config/sim_activation.bpmn")).unwrap();
    assert!(bpmn.contains("${severity} == 'CRITICAL'"), "{bpmn}");
    assert!(
        bpmn.contains("default=\"Flow_GW_SeverityCheck_Task_ProvisionHLR\""),
        "{bpmn}"
    );
    let v = cuga(&["validate", app.to_str().unwrap()]);
    assert!(v.status.success(), "{}", runs::show(&v));

    std::fs::create_dir_all(app.join("scenarios")).unwrap();
    for (name, severity, branch) in [
        ("critical", "CRITICAL", "Task_Escalate"),
        ("low", "LOW", "Task_ProvisionHLR"),
    ] {
        std::fs::write(
            app.join(format!("scenarios/{name}.yaml")),
            format!(
                "answers:\n  Task_ClassifyRequest: {{outputs: {{severity: {severity}}}}}\n\
                 \x20 Task_Escalate: {{outputs: {{}}}}\n  Task_ProvisionHLR: {{outputs: {{}}}}\n\
                 \x20 Task_LogCompletion: {{outputs: {{}}}}\n\
                 expect:\n  status: completed\n  path: [Start_SIM, Task_ClassifyRequest, \
                 GW_SeverityCheck, {branch}, Task_LogCompletion, End_SIM]\n  variables: \
                 {{severity: {severity}}}\n"
            ),
        )
        .unwrap();
        let out = runs::start_scenario(&app, name, &tmp.path().join("runs"), &[], &[]);
        let last = runs::comparable(&text(&out.stdout)).pop().unwrap();
        assert_eq!(last["met"], true, "{name}: {}", runs::show(&out));
    }
}

/// AgentFLOW keeps its Goose recipes in `recipes/` beside a demo's definitions: imported,
/// each agentic task runs its recipe as AgentFLOW does (a command agent, `goose run
/// --recipe`), the recipe copied into the app, its parameters the task's inputs and its
/// response's properties its outputs. The app runs end to end (Goose's stand-in on PATH).
/// Without the recipes, the import says so (a warning naming where it looked).
#[test]
fn agentflow_recipes_come_with_the_imported_app_and_run() {
    let tmp = TempDir::new().unwrap();
    let demo = tmp.path().join("demo/sim-activation");
    support::copy_dir(
        &root().join("applications/sim_activation/recipes"),
        &demo.join("recipes"),
    );
    let graph = demo.join("definitions.ttl");
    std::fs::copy(
        root().join("tests/fixtures/graph/agentflow/sim-activation.definitions.ttl"),
        &graph,
    )
    .unwrap();
    let app = tmp.path().join("apps/sim");
    let out = cuga(&[
        "graph",
        "import",
        graph.to_str().unwrap(),
        "--out",
        app.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    assert!(
        !text(&out.stderr).contains("recipe_missing"),
        "{}",
        runs::show(&out)
    );
    let config = std::fs::read_to_string(app.join("config/sim_config.yaml")).unwrap();
    assert_eq!(config.matches("type: \"command\"").count(), 4, "{config}");
    for recipe in [
        "classify_request",
        "escalate_issue",
        "provision_hlr",
        "log_completion",
    ] {
        assert!(
            config.contains(&format!("recipe: \"../recipes/{recipe}.yaml\"")),
            "{config}"
        );
        assert_eq!(
            std::fs::read_to_string(app.join(format!("recipes/{recipe}.yaml"))).unwrap(),
            std::fs::read_to_string(demo.join(format!("recipes/{recipe}.yaml"))).unwrap()
        );
    }
    // Inputs from the recipes' parameters, outputs from their responses' properties.
    for line in [
        "request: \"request\"",
        "severity: \"severity\"",
        "ticket: \"ticket\"",
        "provisioned: false",
    ] {
        assert!(config.contains(line), "{line}: {config}");
    }
    let v = cuga(&["validate", app.to_str().unwrap()]);
    assert!(v.status.success(), "{}", runs::show(&v));

    // Run: `goose` is Goose's stand-in, answering every recipe.
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let goose = bin.join("goose");
    let stand_in = root().join("tests/suite/support/goose_stand_in.py");
    std::fs::write(
        &goose,
        format!("#!/bin/sh\nexec python3 '{}' \"$@\"\n", stand_in.display()),
    )
    .unwrap();
    std::fs::set_permissions(&goose, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(app.join("scenarios")).unwrap();
    std::fs::write(
        app.join("scenarios/fraud.yaml"),
        "inputs: {request: \"fraud on a stolen SIM\", msisdn: \"4412345\"}\n\
         expect:\n  status: completed\n  path: [Start_SIM, Task_ClassifyRequest, \
         GW_SeverityCheck, Task_Escalate, Task_LogCompletion, End_SIM]\n  \
         variables: {severity: CRITICAL, ticket: T-9}\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let answer =
        r#"{"severity": "CRITICAL", "ticket": "T-9", "provisioned": false, "log_entry": "done"}"#;
    let out = runs::start_scenario(
        &app,
        "fraud",
        &tmp.path().join("runs"),
        &[],
        &[
            ("PATH", path),
            ("GOOSE_STAND_IN_ANSWER", answer.to_string()),
        ],
    );
    let last = runs::comparable(&text(&out.stdout)).pop().unwrap();
    assert_eq!(last["met"], true, "{}", runs::show(&out));

    // The recipes elsewhere: named with --recipes; else a warning.
    let alone = tmp.path().join("alone.ttl");
    std::fs::copy(&graph, &alone).unwrap();
    let out = cuga(&[
        "graph",
        "import",
        alone.to_str().unwrap(),
        "--out",
        tmp.path().join("apps/warned").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    let err = text(&out.stderr);
    assert!(err.contains("graph::recipe_missing"), "{err}");
    assert!(err.contains("the recipe `classify_request`"), "{err}");
    assert!(err.contains("--recipes"), "{err}");
    let out = cuga(&[
        "graph",
        "import",
        alone.to_str().unwrap(),
        "--recipes",
        demo.join("recipes").to_str().unwrap(),
        "--out",
        tmp.path().join("apps/named").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    assert!(
        !text(&out.stderr).contains("recipe_missing"),
        "{}",
        runs::show(&out)
    );
    assert!(
        tmp.path()
            .join("apps/named/recipes/log_completion.yaml")
            .is_file()
    );
}

/// A graph that breaks cuga-flo's SHACL shapes is not imported (nothing is written): an
/// agentic task with no recipe; a recipe name that is a path.
#[test]
fn a_graph_breaking_the_shapes_or_naming_a_path_as_recipe_is_refused() {
    let (code, err) = import_error(&format!(
        "{PREFIXES}ex:P a agentflow:AgenticProcess ; agentflow:hasStartEvent ex:Start .\n\
         ex:Start a sbpmnc:startEvent ; agentflow:nextTask ex:T .\n\
         ex:T a agentflow:AgenticTask ; agentflow:nextTask ex:End .\n\
         ex:End a sbpmnc:endEvent .\n"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("graph::shacl"), "{err}");
    assert!(err.contains("recipe"), "{err}");
    assert!(err.contains("bad.ttl:6:"), "{err}");
    let (code, err) = import_error(&format!(
        "{PREFIXES}ex:P a agentflow:AgenticProcess ; agentflow:hasStartEvent ex:Start .\n\
         ex:Start a sbpmnc:startEvent ; agentflow:nextTask ex:T .\n\
         ex:T a agentflow:AgenticTask ; agentflow:recipe \"../../etc/passwd\" ; agentflow:nextTask ex:End .\n\
         ex:End a sbpmnc:endEvent .\n"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not a plain file name"), "{err}");
}

/// What the SIM activation graph becomes: the model and the generated config.
#[test]
fn agentflow_sim_activation_as_an_app() {
    let tmp = TempDir::new().unwrap();
    let app = tmp.path().join("apps/sim_activation");
    let graph = root().join("tests/fixtures/graph/agentflow/sim-activation.definitions.ttl");
    let out = cuga(&[
        "graph",
        "import",
        graph.to_str().unwrap(),
        "--out",
        app.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    let bpmn = std::fs::read_to_string(app.join("config/sim_activation.bpmn")).unwrap();
    let config = std::fs::read_to_string(app.join("config/sim_activation_config.yaml")).unwrap();
    insta::assert_snapshot!("graph_import_sim_activation_bpmn", bpmn);
    insta::assert_snapshot!("graph_import_sim_activation_config", config);
}

/// AgentFLOW's first version wrote the same graph with its own `sbpmn:`/`sbpmnc:`
/// namespaces and CamelCase classes (`sbpmnc:StartEvent`, `sbpmn:nextTask`): it imports
/// into the same app.
#[test]
fn agentflow_first_namespaces_import_the_same() {
    let current = std::fs::read_to_string(
        root().join("tests/fixtures/graph/agentflow/sim-activation.definitions.ttl"),
    )
    .unwrap();
    let legacy = current
        .replace(
            "<https://sBPMN.github.io/2.0/properties#>",
            "<http://example.org/ontology/sbpmn#>",
        )
        .replace(
            "<https://sBPMN.github.io/2.0/classes#>",
            "<http://example.org/ontology/sbpmnc#>",
        )
        .replace("agentflow:nextTask", "sbpmn:nextTask")
        .replace("agentflow:varName", "sbpmn:varName")
        .replace("agentflow:operator", "sbpmn:operator")
        .replace("agentflow:threshold", "sbpmn:threshold")
        .replace("agentflow:isDefault", "sbpmn:isDefault")
        .replace("sbpmnc:startEvent", "sbpmnc:StartEvent")
        .replace("sbpmnc:endEvent", "sbpmnc:EndEvent")
        .replace("sbpmnc:exclusiveGateway", "sbpmnc:ExclusiveGateway");
    let tmp = TempDir::new().unwrap();
    let mut models = Vec::new();
    for (name, text) in [("current", current), ("legacy", legacy)] {
        let file = tmp.path().join(format!("{name}.ttl"));
        std::fs::write(&file, text).unwrap();
        let app = tmp.path().join("apps").join(name).join("sim");
        let out = cuga(&[
            "graph",
            "import",
            file.to_str().unwrap(),
            "--out",
            app.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{name}: {}", runs::show(&out));
        models.push(std::fs::read_to_string(app.join("config/sim.bpmn")).unwrap());
    }
    assert_eq!(models[0], models[1]);
}

/// The git push demo: its guardrail gateway becomes an exclusive gateway that keeps the
/// approval settings (the approval itself is a later step of graph mode: here the
/// scenario gives `approval_status` as an input); APPROVED pushes, anything else aborts.
#[test]
fn agentflow_git_push_imports_and_routes_on_the_approval() {
    let tmp = TempDir::new().unwrap();
    let app = tmp.path().join("apps/git_push");
    let graph = root().join("tests/fixtures/graph/agentflow/git-push-safety.definitions.ttl");
    let out = cuga(&[
        "graph",
        "import",
        graph.to_str().unwrap(),
        "--out",
        app.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    let bpmn = std::fs::read_to_string(app.join("config/git_push.bpmn")).unwrap();
    assert!(bpmn.contains("cuga:requiresApproval=\"true\""), "{bpmn}");
    assert!(bpmn.contains("cuga:approvalTimeout=\"PT1H\""), "{bpmn}");
    std::fs::create_dir_all(app.join("scenarios")).unwrap();
    // The preparation and push tasks produce nothing the gateway reads.
    let answers: String = [
        "Task_StageChanges",
        "Task_ScanSecrets",
        "Task_GenerateReport",
        "Task_ReadmeCheck",
        "Task_ExecutePush",
        "Task_LogResult",
    ]
    .iter()
    .map(|t| format!("  {t}: {{outputs: {{}}}}\n"))
    .collect();
    // The guardrail waits for an approver: the scenario's answer is the approver's.
    for (name, flow, path) in [
        (
            "approved",
            "Flow_GW_HumanApproval_Task_ExecutePush",
            "Task_ExecutePush, Task_LogResult, End_Completed",
        ),
        ("denied", "Flow_GW_HumanApproval_End_Aborted", "End_Aborted"),
    ] {
        std::fs::write(
            app.join(format!("scenarios/{name}.yaml")),
            format!(
                "answers:\n{answers}  GW_HumanApproval: {{flow: {flow}}}\nexpect:\n  status: completed\n  \
                 path: [Start_GitPush, Task_StageChanges, Task_ScanSecrets, \
                 Task_GenerateReport, Task_ReadmeCheck, GW_HumanApproval, {path}]\n"
            ),
        )
        .unwrap();
        let out = runs::start_scenario(&app, name, &tmp.path().join("runs"), &[], &[]);
        let last = runs::comparable(&text(&out.stdout)).pop().unwrap();
        assert_eq!(last["met"], true, "{name}: {}", runs::show(&out));
    }
}

fn import_error(graph: &str) -> (Option<i32>, String) {
    let tmp = TempDir::new().unwrap();
    let file = tmp.path().join("bad.ttl");
    std::fs::write(&file, graph).unwrap();
    let out = cuga(&[
        "graph",
        "import",
        file.to_str().unwrap(),
        "--out",
        tmp.path().join("apps/bad").to_str().unwrap(),
    ]);
    assert!(!tmp.path().join("apps/bad").exists(), "nothing is written");
    (out.status.code(), text(&out.stderr))
}

const PREFIXES: &str = "@prefix sbpmnc: <https://sBPMN.github.io/2.0/classes#> .\n\
    @prefix agentflow: <http://example.org/ontology/agentflow#> .\n\
    @prefix ex: <http://example.org/instances/> .\n";

#[test]
fn bad_turtle_is_reported_at_its_line() {
    let (code, err) = import_error(&format!(
        "{PREFIXES}ex:Start a sbpmnc:startEvent ;\n  agentflow:nextTask ex:End\nex:End a sbpmnc:endEvent .\n"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("graph::syntax"), "{err}");
    assert!(err.contains("bad.ttl:6:"), "{err}");
}

#[test]
fn a_graph_without_a_start_event_is_refused() {
    let (code, err) = import_error(&format!(
        "{PREFIXES}ex:P a agentflow:AgenticProcess .\n\nex:T a agentflow:AgenticTask ;\n  agentflow:recipe \"r\" ;\n  agentflow:nextTask ex:End .\nex:End a sbpmnc:endEvent .\n"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("graph::no-start"), "{err}");
    assert!(err.contains("bad.ttl:4:"), "{err}");
}

#[test]
fn an_edge_to_an_unknown_node_is_refused_at_its_line() {
    let (code, err) = import_error(&format!(
        "{PREFIXES}ex:Start a sbpmnc:startEvent ;\n  agentflow:nextTask ex:Nowhere .\nex:End a sbpmnc:endEvent .\n"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("graph::edge-target"), "{err}");
    assert!(err.contains("`Nowhere`"), "{err}");
    assert!(err.contains("bad.ttl:4:"), "{err}");
}

#[test]
fn a_bad_operator_and_two_defaults_are_refused() {
    let (code, err) = import_error(&format!(
        "{PREFIXES}ex:Start a sbpmnc:startEvent ; agentflow:nextTask ex:G .\n\
         ex:G a sbpmnc:exclusiveGateway .\n\
         ex:G agentflow:nextTask ex:A {{| agentflow:varName \"x\" ; agentflow:operator \"=~\" ; agentflow:threshold \"1\" |}} .\n\
         ex:G agentflow:nextTask ex:B {{| agentflow:isDefault true |}} .\n\
         ex:G agentflow:nextTask ex:C {{| agentflow:isDefault true |}} .\n\
         ex:A a sbpmnc:endEvent . ex:B a sbpmnc:endEvent . ex:C a sbpmnc:endEvent .\n"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("graph::operator"), "{err}");
    assert!(err.contains("graph::defaults"), "{err}");
}

#[test]
fn an_existing_app_is_replaced_only_with_force() {
    let tmp = TempDir::new().unwrap();
    let graph = root().join("tests/fixtures/graph/agentflow/sim-activation.definitions.ttl");
    let out_dir = tmp.path().join("apps/sim");
    std::fs::create_dir_all(out_dir.join("config")).unwrap();
    std::fs::write(out_dir.join("keep.txt"), "mine").unwrap();
    let args = |force: bool| {
        let mut a = vec![
            "graph".to_string(),
            "import".into(),
            graph.display().to_string(),
            "--out".into(),
            out_dir.display().to_string(),
        ];
        if force {
            a.push("--force".into());
        }
        a
    };
    let run = |a: Vec<String>| cuga(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let out = run(args(false));
    assert_eq!(out.status.code(), Some(2), "{}", runs::show(&out));
    assert!(
        text(&out.stderr).contains("already exists"),
        "{}",
        runs::show(&out)
    );
    assert!(out_dir.join("keep.txt").is_file());
    let out = run(args(true));
    assert!(out.status.success(), "{}", runs::show(&out));
    assert!(!out_dir.join("keep.txt").exists());
    assert!(out_dir.join("config/sim_config.yaml").is_file());
}

/// pyoxigraph (RDF 1.2) reads the Turtle, TriG and N-Quads exports into the same triples
/// oxttl reads, and finds the annotations with SPARQL's reified-triple patterns.
#[test]
fn a_second_reader_accepts_the_export() {
    let python = python::rdf_python();
    let tmp = TempDir::new().unwrap();
    let mut files = Vec::new();
    for (format, ext) in [("turtle", "ttl"), ("trig", "trig"), ("nquads", "nq")] {
        let file = tmp.path().join(format!("loan.{ext}"));
        let out = cuga(&[
            "graph",
            "export",
            "loan_approval",
            "--format",
            format,
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", runs::show(&out));
        files.push(file);
    }
    let guarded = tmp.path().join("guarded.ttl");
    let out = cuga(&[
        "graph",
        "export",
        "tests/fixtures/apps/guarded",
        "-o",
        guarded.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", runs::show(&out));
    files.push(guarded);
    let script = root().join("tests/interop/rdf_check.py");
    let out = Command::new(python)
        .arg(&script)
        .args(&files)
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", runs::show(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // What oxttl reads of the same Turtle.
    let ttl = std::fs::read_to_string(&files[0]).unwrap();
    let ours = oxttl::TurtleParser::new()
        .for_slice(&ttl)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let n = ours.len() as u64;
    assert_eq!(report["pyoxigraph"]["turtle"], n, "{report:#}");
    assert_eq!(report["pyoxigraph"]["trig"], n, "{report:#}");
    assert_eq!(report["pyoxigraph"]["nquads"], n, "{report:#}");
    let checks = report["checks"].as_object().unwrap();
    for (name, ok) in checks {
        assert_eq!(ok, true, "{name}: {report:#}");
    }
    assert_eq!(checks.len(), 6, "{report:#}");
}

/// `--annotations reified`: standard RDF reification (`rdf:Statement` nodes), which rdflib
/// (RDF 1.1, no `{| |}`) reads, finding every annotation; `graph import` reads it back into
/// the same app as the RDF 1.2 export.
#[test]
fn reified_annotations_are_read_by_rdflib_and_imported_back() {
    let tmp = TempDir::new().unwrap();
    let export = |format: &str, annotations: &str, file: &Path| {
        let out = cuga(&[
            "graph",
            "export",
            "loan_approval",
            "--format",
            format,
            "--annotations",
            annotations,
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", runs::show(&out));
        std::fs::read_to_string(file).unwrap()
    };
    let ttl = tmp.path().join("loan.ttl");
    let trig = tmp.path().join("loan.trig");
    let star = tmp.path().join("star.ttl");
    let text = export("turtle", "reified", &ttl);
    export("trig", "reified", &trig);
    export("turtle", "star", &star);
    assert!(!text.contains("{|") && !text.contains("<<"), "{text}");
    assert!(text.contains("a rdf:Statement"), "{text}");
    let nq = export("nquads", "reified", &tmp.path().join("loan.nq"));
    assert!(!nq.contains("<<"), "{nq}");

    let out = Command::new(python::shacl_python())
        .arg(root().join("tests/interop/rdflib_check.py"))
        .args([&ttl, &trig])
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", runs::show(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = report["checks"].as_object().unwrap();
    assert_eq!(checks.len(), 5, "{report:#}");
    for (name, ok) in checks {
        assert_eq!(ok, true, "{name}: {report:#}");
    }

    // Imported back: the same app as from the RDF 1.2 export.
    let import = |file: &Path, under: &str| {
        let name = "loan";
        let dir = tmp.path().join(under).join(name);
        let out = cuga(&[
            "graph",
            "import",
            file.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", runs::show(&out));
        let read = |f: &str| std::fs::read_to_string(dir.join("config").join(f)).unwrap();
        (
            read(&format!("{name}.bpmn")),
            read(&format!("{name}_config.yaml")),
        )
    };
    assert_eq!(import(&ttl, "reified"), import(&star, "star"));
}
