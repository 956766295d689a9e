//! The `cuga-flo` command line, end to end: `list` and `validate` over the repo's own
//! demo apps, the original project's apps (compatibility fixtures) and broken input.

use assert_cmd::Command;
use predicates::prelude::*;

const UPSTREAM: &str = "tests/fixtures/upstream-apps";
const CORPUS: &str = "tests/fixtures/bpmn-corpus";

fn cuga() -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

fn stdout_of(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn version_and_help_read_well() {
    cuga()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("cuga-flo "));
    let help = stdout_of(cuga().arg("--help"), 0);
    for word in [
        "list",
        "validate",
        "--apps-dir",
        "CUGA_FLO_APPS",
        "Examples:",
    ] {
        assert!(help.contains(word), "help lacks {word}:\n{help}");
    }
}

#[test]
fn the_repos_own_apps_all_validate_without_a_warning() {
    let out = stdout_of(cuga().args(["validate", "--all", "--strict"]), 0);
    for app in [
        "incident_response",
        "loan_approval",
        "loan_approval_kogito",
        "receive_order",
        "trip_planner",
    ] {
        assert!(out.contains(&format!("✓ app `{app}` is valid\n")), "{out}");
    }
    assert!(out.contains("0 errors, 0 warnings"), "{out}");
}

#[test]
fn list_shows_each_app_with_what_it_runs() {
    let out = stdout_of(cuga().arg("list"), 0);
    insta::assert_snapshot!("list_demo_apps", out);
}

#[test]
fn list_json_is_for_machines() {
    let out = stdout_of(cuga().args(["list", "--json"]), 0);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let receive = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "receive_order")
        .unwrap();
    assert_eq!(receive["engine"], "native");
    assert_eq!(receive["process_key"], "receive_order_v1");
    assert_eq!(receive["tasks"], 3);
    assert_eq!(receive["hooks"], 1);
    assert_eq!(receive["valid"], true);
    // docs/config.md: `flow.description` is shown by `list --json`; so are the scenarios.
    assert!(
        receive["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    assert_eq!(
        receive["scenarios"],
        serde_json::json!(["no_invoice_1212", "standard"])
    );
}

#[test]
fn list_takes_the_apps_folder_from_the_environment_and_shows_broken_apps() {
    let out = stdout_of(cuga().env("CUGA_FLO_APPS", UPSTREAM).arg("list"), 0);
    insta::assert_snapshot!("list_upstream_apps", out);
}

#[test]
fn upstream_loan_approval_names_a_model_that_is_not_there() {
    let out = stdout_of(
        cuga().args(["--apps-dir", UPSTREAM, "validate", "loan_approval"]),
        1,
    );
    insta::assert_snapshot!("validate_upstream_loan_approval", out);
}

#[test]
fn upstream_loan_approval_kogito_is_checked_in_full() {
    let out = stdout_of(
        cuga().args(["--apps-dir", UPSTREAM, "validate", "loan_approval_kogito"]),
        1,
    );
    insta::assert_snapshot!("validate_upstream_loan_approval_kogito", out);
}

#[test]
fn upstream_receive_order_is_checked_in_full() {
    let out = stdout_of(
        cuga().args(["--apps-dir", UPSTREAM, "validate", "receive_order"]),
        1,
    );
    insta::assert_snapshot!("validate_upstream_receive_order", out);
}

#[test]
fn upstream_trip_planner_warns_that_its_gateway_can_take_no_flow() {
    let out = stdout_of(
        cuga().args(["--apps-dir", UPSTREAM, "validate", "trip_planner"]),
        1,
    );
    insta::assert_snapshot!("validate_upstream_trip_planner", out);
}

#[test]
fn validate_json_reports_every_diagnostic_with_its_position() {
    let out = stdout_of(
        cuga().args(["--apps-dir", UPSTREAM, "validate", "--json", "trip_planner"]),
        1,
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["valid"], false);
    let diags = doc["targets"][0]["diagnostics"].as_array().unwrap();
    let gateway = diags
        .iter()
        .find(|d| d["code"] == "graph::no_flow_taken")
        .unwrap();
    assert_eq!(gateway["severity"], "warning");
    assert_eq!(gateway["line"], 12);
    assert!(
        gateway["file"]
            .as_str()
            .unwrap()
            .ends_with("trip-planner.bpmn")
    );
}

#[test]
fn an_app_may_be_named_by_folder_or_by_config_file() {
    cuga()
        .args(["validate", "applications/receive_order"])
        .assert()
        .success();
    cuga()
        .args([
            "validate",
            "applications/trip_planner/config/trip_planner_config.yaml",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("✓ app `trip_planner` is valid"));
}

#[test]
fn an_unknown_app_is_a_usage_error_with_a_suggestion() {
    cuga()
        .args(["validate", "recieve_order"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no app `recieve_order` under applications",
        ))
        .stderr(predicate::str::contains("did you mean `receive_order`?"));
}

#[test]
fn validate_without_a_target_is_a_usage_error() {
    cuga()
        .arg("validate")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--all"));
}

#[test]
fn a_bpmn_file_on_its_own_can_be_validated() {
    let ok = format!("{CORPUS}/miwg-reference/A.1.0.bpmn");
    cuga()
        .args(["validate", &ok])
        .assert()
        .success()
        .stdout(predicate::str::contains("✓ model `A.1.0.bpmn` is valid"));
}

#[test]
fn xml_that_is_not_well_formed_fails_at_its_line() {
    let broken = format!("{CORPUS}/miwg-tools/GenMyModel-0.47__C.1.1-export.bpmn");
    let out = stdout_of(cuga().args(["validate", "--json", &broken]), 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &doc["targets"][0]["diagnostics"][0];
    assert_eq!(d["code"], "bpmn::xml");
    assert_eq!(d["line"], 26);
}

#[test]
fn strict_turns_warnings_into_failure() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("warned/config");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::copy(
        "applications/trip_planner/config/trip_planner.bpmn",
        app.join("trip_planner.bpmn"),
    )
    .unwrap();
    std::fs::write(
        app.join("warned_config.yaml"),
        "flow: {id: w, name: W, bpmn_file: trip_planner.bpmn}\nteam_notes: {}\n",
    )
    .unwrap();
    let apps = dir.path().to_str().unwrap();
    cuga()
        .args(["--apps-dir", apps, "validate", "warned"])
        .assert()
        .success();
    cuga()
        .args(["--apps-dir", apps, "validate", "--strict", "warned"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("unknown key `team_notes`"));
    // A key that looks like a misspelling of one (`variabels`) would drop what it says:
    // an error without --strict.
    std::fs::write(
        app.join("warned_config.yaml"),
        "flow: {id: w, name: W, bpmn_file: trip_planner.bpmn}\nvariabels: {}\n",
    )
    .unwrap();
    cuga()
        .args(["--apps-dir", apps, "validate", "warned"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("did you mean `variables`?"));
}

#[test]
fn malformed_yaml_points_at_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("bad/config");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(
        app.join("bad_config.yaml"),
        "flow:\n  id: x\n  bpmn_file: [unclosed\n",
    )
    .unwrap();
    let out = stdout_of(
        cuga().args([
            "--apps-dir",
            dir.path().to_str().unwrap(),
            "validate",
            "--json",
            "bad",
        ]),
        1,
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &doc["targets"][0]["diagnostics"][0];
    assert_eq!(d["code"], "config::yaml");
    assert!(d["line"].as_u64().unwrap() >= 3, "{d}");
}

#[test]
fn a_missing_apps_folder_is_a_usage_error() {
    cuga()
        .args(["--apps-dir", "no/such/dir", "list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot read the apps folder no/such/dir",
        ));
}

#[test]
fn a_supervisor_file_chooses_the_flow_config_and_a_wrong_one_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sup/config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(
        "applications/trip_planner/config/trip_planner.bpmn",
        config.join("m.bpmn"),
    )
    .unwrap();
    let flow = "flow: {id: chosen_v1, name: C, bpmn_file: m.bpmn}\n";
    std::fs::write(
        config.join("a_config.yaml"),
        flow.replace("chosen", "other"),
    )
    .unwrap();
    std::fs::write(config.join("b_config.yaml"), flow).unwrap();
    std::fs::write(
        config.join("supervisor_sup.yaml"),
        "agents:\n  - name: x\n    type: flow_agent\n    flow_config: b_config.yaml\n",
    )
    .unwrap();
    let apps = dir.path().to_str().unwrap();
    let out = stdout_of(cuga().args(["--apps-dir", apps, "list", "--json"]), 0);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rows[0]["process_key"], "chosen_v1");

    std::fs::write(
        config.join("supervisor_sup.yaml"),
        "agents:\n  - name: x\n    flow_config: gone.yaml\n",
    )
    .unwrap();
    let out = stdout_of(cuga().args(["--apps-dir", apps, "list"]), 0);
    assert!(out.contains("config/supervisor_sup.yaml:3:18: the supervisor names flow config `gone.yaml`, which does not exist"), "{out}");
}

#[test]
fn an_app_full_of_mistakes_gets_every_one_reported_in_place() {
    let out = stdout_of(
        cuga().args(["--apps-dir", "tests/fixtures/apps", "validate", "mistakes"]),
        1,
    );
    insta::assert_snapshot!("validate_mistakes", out);
}

/// A guarantee a hook's permitted adaptation breaks is an error at the guarantee, with
/// the hook, the action, the target and the run's path; an unknown node gets a "did you
/// mean".
#[test]
fn a_guarantee_a_hook_can_break_is_reported_with_the_run_that_breaks_it() {
    let out = stdout_of(
        cuga().args(["--apps-dir", "tests/fixtures/apps", "validate", "guarded"]),
        1,
    );
    insta::assert_snapshot!("validate_broken_guarantee", out);
}

#[test]
fn the_shipped_completion_scripts_are_current() {
    use clap_complete::Shell;
    for (shell, file) in [
        (Shell::Bash, "bash"),
        (Shell::Zsh, "zsh"),
        (Shell::Fish, "fish"),
    ] {
        let shipped = std::fs::read_to_string(format!("completions/cuga-flo.{file}")).unwrap();
        let current = cuga_flo::cli::completions::script(shell);
        assert!(
            shipped == current,
            "completions/cuga-flo.{file} is stale: run `cargo run -- completions {file} > completions/cuga-flo.{file}`"
        );
        let printed = stdout_of(cuga().args(["completions", file]), 0);
        assert_eq!(printed, current);
    }
}

/// Every command says its exit codes: at the end of its `--help` and in its man page.
#[test]
fn every_command_says_its_exit_codes() {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            out.push(p.clone());
            walk(sub, p, out);
        }
    }
    let mut commands = vec![Vec::new()];
    walk(&cuga_flo::cli::command(), Vec::new(), &mut commands);
    assert!(commands.len() > 30, "{commands:?}");
    for path in &commands {
        let mut args = path.clone();
        args.push("--help".into());
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
            .args(&args)
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}");
        for code in ["Exit codes:", "  0 ", "  1 ", "  2 ", "  3 ", "  130 "] {
            assert!(
                help.contains(code),
                "{args:?} --help lacks `{code}`:\n{help}"
            );
        }
    }
    for (name, text) in cuga_flo::cli::man::pages() {
        assert!(text.contains("Exit codes:"), "man/{name}");
    }
}

#[test]
fn the_shipped_man_pages_are_current() {
    let pages = cuga_flo::cli::man::pages();
    let stale = "man/ is stale: run `cargo run -- man --dir man`";
    let mut shipped: Vec<String> = std::fs::read_dir("man")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    let mut names: Vec<String> = pages.iter().map(|(n, _)| n.clone()).collect();
    names.sort();
    assert_eq!(shipped, names, "{stale}");
    for (name, text) in &pages {
        let on_disk = std::fs::read_to_string(format!("man/{name}")).unwrap();
        assert!(&on_disk == text, "man/{name}: {stale}");
    }
    assert_eq!(pages[0].0, "cuga-flo.1");
    for word in [
        ".TH cuga-flo 1",
        "CUGA_FLO_APPS",
        "init",
        "schema",
        "validate",
    ] {
        assert!(pages[0].1.contains(word), "cuga-flo.1 lacks {word}");
    }
    assert!(names.contains(&"cuga-flo-runs-answer.1".to_string()));
    // `man` prints the command's page; `--dir` writes them all
    assert_eq!(stdout_of(cuga().arg("man"), 0), pages[0].1);
    let dir = tempfile::tempdir().unwrap();
    let out = stdout_of(cuga().args(["man", "--dir"]).arg(dir.path()), 0);
    assert!(
        out.contains(&format!("wrote {} man pages", pages.len())),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("cuga-flo-init.1")).unwrap(),
        std::fs::read_to_string("man/cuga-flo-init.1").unwrap()
    );
}

#[test]
fn kogito_build_writes_a_quarkus_project_whose_control_points_are_user_tasks() {
    let out = tempfile::tempdir().unwrap();
    cuga()
        .args([
            "kogito",
            "build",
            "loan_approval_kogito",
            "--no-build",
            "--out",
        ])
        .arg(out.path())
        .assert()
        .success()
        .stdout(predicates::str::contains("wrote"));
    for file in [
        "pom.xml",
        "src/main/resources/application.properties",
        "src/main/java/org/cugaflo/CugaFloTrace.java",
    ] {
        assert!(out.path().join(file).is_file(), "{file} missing");
    }
    let props =
        std::fs::read_to_string(out.path().join("src/main/resources/application.properties"))
            .unwrap();
    // The port of the config's `workflow_engine.url`, on loopback.
    assert!(props.contains("quarkus.http.port=8081") && props.contains("host=127.0.0.1"));
    let model = out
        .path()
        .join("src/main/resources/org/cugaflo/loan_approval.bpmn");
    let xml = std::fs::read(&model).unwrap();
    let doc = cuga_flo::bpmn::parse(&model, &xml).unwrap();
    let process = doc.main_process().unwrap();
    assert_eq!(process.id, "loan_approval");
    for worker in [
        "Activity_0oydey5",
        "cuga_route__Gateway_09ad5fc",
        "cuga_hook__Flow_1e5ztf6",
        "cuga_hook__Flow_0ybszcv",
    ] {
        let node = process
            .node(worker)
            .unwrap_or_else(|| panic!("{worker} missing"));
        assert_eq!(node.kind.tag(), "userTask", "{worker}");
    }
    // Every variable of the app is declared (Kogito drops undeclared ones).
    for var in ["credit_score", "applicant_name", "cugaRoute1", "cugaHook1"] {
        assert!(process.properties.iter().any(|p| p.id == var), "{var}");
    }
}

/// A model using elements an engine does not run yet (a conditional boundary event; on
/// Flowable a message catch event from outside too) is refused where each is written,
/// instead of being run once or passed without waiting. The native engine and Kogito
/// (which parks for the message) run all but the conditional boundary event; Flowable
/// the multi-instance review and the error boundary too.
#[test]
fn a_model_the_engine_would_misrun_is_refused_not_run() {
    let apps = "tests/fixtures/apps";
    let out = stdout_of(
        cuga().args(["--apps-dir", apps, "validate", "expense_claim"]),
        1,
    );
    insta::assert_snapshot!("validate_unsupported_elements", out);

    let runs = tempfile::tempdir().unwrap();
    let run_dir = runs.path().to_str().unwrap();
    for engine in ["native", "flowable", "kogito"] {
        let out = cuga()
            .args(["--apps-dir", apps, "start", "expense_claim", "--no-model"])
            .args(["--engine", engine, "--run-dir", run_dir])
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        for id in [
            "`review`",
            "`receipt`",
            "`payment_failed`",
            "`budget_exceeded`",
        ] {
            // Every engine runs the multi-instance review, the message catch event (a
            // run parks for it) and the error boundary.
            let refused = id == "`budget_exceeded`";
            assert_eq!(
                err.contains(id),
                refused,
                "{engine}: {id} refused: {}\n{err}",
                !refused
            );
        }
        assert!(out.stdout.is_empty(), "{engine}: something ran");
    }
    let written: Vec<_> = std::fs::read_dir(runs.path()).unwrap().collect();
    assert!(written.is_empty(), "a refused run left {written:?}");
}

/// A bare model is judged as an app with it is on the default (native) engine: what that
/// refuses is an error, as it is for the app (`validate FILE` and `validate APP` agree),
/// with a help line saying an app may choose an engine that runs more.
#[test]
fn a_bare_model_is_refused_what_the_native_engine_would_refuse() {
    let out = stdout_of(
        cuga().args([
            "validate",
            "--json",
            "tests/fixtures/apps/expense_claim/config/expense_claim.bpmn",
        ]),
        1,
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lines: Vec<(String, String, u64)> = doc["targets"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let refused = |line| {
        (
            "engine::unsupported_element".to_string(),
            "error".to_string(),
            line,
        )
    };
    assert_eq!(lines, vec![refused(33)], "{out}");
    let help = doc["targets"][0]["diagnostics"][0]["help"]
        .as_str()
        .unwrap();
    assert!(help.contains("may choose Flowable or Kogito"), "{help}");
}

/// A reader that goes away (`cuga-flo list | head -1`) ends the output quietly: no panic
/// (exit 101), and a run still ends as it would have, journal and exit code agreeing.
#[test]
fn a_closed_stdout_never_panics_and_a_run_still_finishes() {
    use std::process::{Command as Std, Stdio};
    let bin = assert_cmd::cargo::cargo_bin("cuga-flo");
    let runs = tempfile::tempdir().unwrap();
    let run_dir = runs.path().to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["list"], 0),
        (vec!["validate", "--all"], 0),
        (vec!["list", "--json"], 0),
        (
            vec![
                "start",
                "loan_approval",
                "--engine",
                "native",
                "--scenario",
                "approve",
                "--run-dir",
                run_dir,
            ],
            0,
        ),
        (vec!["runs", "list", "--run-dir", run_dir], 0),
    ];
    for (args, want) in cases {
        let mut child = Std::new(&bin)
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the first line
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(want), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // The run finished and says so in its journal.
    let journal = std::fs::read_dir(runs.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("journal.jsonl");
    let last = std::fs::read_to_string(journal).unwrap();
    assert!(
        last.lines().last().unwrap().contains("\"completed\""),
        "{last}"
    );
}

/// A one-line BPMN export: a diagnostic past column 65,535 is shown without its snippet,
/// at its file:line:column, never a panic.
#[test]
fn a_diagnostic_on_a_very_long_line_is_shown_without_a_snippet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oneline.bpmn");
    let tasks: String = (0..6000).map(|i| format!("<task id=\"t{i}\"/>")).collect();
    std::fs::write(
        &path,
        format!(
            "<?xml version=\"1.0\"?><definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"><process id=\"p\" isExecutable=\"true\"><startEvent id=\"s\"/>{tasks}<sequenceFlow id=\"f\" sourceRef=\"s\" targetRef=\"nowhere\"/></process></definitions>"
        ),
    )
    .unwrap();
    let out = stdout_of(cuga().args(["validate", path.to_str().unwrap()]), 1);
    assert!(out.contains("bpmn::dangling_ref"), "{out}");
    assert!(
        out.contains("oneline.bpmn:1:107033 (the line is too long to show)"),
        "{out}"
    );
}

/// Special files are refused at once with a clear message, never waited on (a FIFO) or
/// read without end (/dev/zero): as a model, a policy, an answers file or an input file.
#[test]
fn special_files_are_refused_never_waited_on_or_read_forever() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("policy.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap().to_string();

    // An app whose hook policy is the FIFO.
    let app = dir.path().join("apps/fifo/config");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::copy(
        "applications/trip_planner/config/trip_planner.bpmn",
        app.join("trip_planner.bpmn"),
    )
    .unwrap();
    let flow = std::fs::read_to_string("applications/trip_planner/config/trip_planner.bpmn")
        .unwrap()
        .split("sequenceFlow id=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    std::fs::write(
        app.join("fifo_config.yaml"),
        format!(
            "flow: {{id: f, name: F, bpmn_file: trip_planner.bpmn}}\nhooks:\n  - id: h\n    location: {flow}\n    policy: {fifo}\n    allowed_targets: []\n"
        ),
    )
    .unwrap();
    let apps = dir.path().join("apps");
    let apps = apps.to_str().unwrap();

    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec!["validate".into(), fifo.clone()],
            2,
            "not a regular file",
        ),
        (
            vec!["validate".into(), "/dev/zero".into()],
            2,
            "not a regular file",
        ),
        (
            vec![
                "--apps-dir".into(),
                apps.into(),
                "validate".into(),
                "fifo".into(),
            ],
            1,
            "not a regular file",
        ),
        (
            vec!["--apps-dir".into(), apps.into(), "list".into()],
            0,
            "fifo",
        ),
        (
            vec![
                "start".into(),
                "loan_approval".into(),
                "--engine".into(),
                "native".into(),
                "--answers".into(),
                "/dev/zero".into(),
            ],
            2,
            "not a regular file",
        ),
        (
            vec![
                "start".into(),
                "loan_approval".into(),
                "--engine".into(),
                "native".into(),
                "--input".into(),
                fifo.clone(),
            ],
            2,
            "not a regular file",
        ),
    ];
    for (args, code, says) in cases {
        let out = cuga()
            .args(&args)
            .write_stdin("")
            .timeout(Duration::from_secs(20))
            .assert()
            .code(code)
            .get_output()
            .clone();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(says), "{args:?}: {text}");
        assert!(!text.contains("panicked"), "{args:?}: {text}");
    }
}

/// `--var` with a misspelt name is refused with "did you mean" (it would set a variable
/// nothing reads); one without a name is refused; an undeclared, unrelated name is taken.
#[test]
fn a_misspelt_var_is_refused_with_a_suggestion() {
    let runs = tempfile::tempdir().unwrap();
    let run_dir = runs.path().to_str().unwrap();
    let start = |var: &str| {
        let mut cmd = cuga();
        cmd.args([
            "start",
            "trip_planner",
            "--engine",
            "native",
            "--no-model",
            "--no-park",
        ])
        .args(["--run-dir", run_dir, "--var", var])
        .write_stdin("");
        cmd
    };
    start("destnation=Paris")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `destination`?"));
    start("=1")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no name"));
    assert!(
        std::fs::read_dir(runs.path())
            .map(|d| d.count() == 0)
            .unwrap_or(true),
        "a refused run wrote something"
    );
}

/// A flow config that is not UTF-8 is reported as such, at the file (not as a missing
/// config).
#[test]
fn a_config_that_is_not_utf8_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("latin/config");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::copy(
        "applications/trip_planner/config/trip_planner.bpmn",
        app.join("trip_planner.bpmn"),
    )
    .unwrap();
    std::fs::write(
        app.join("latin_config.yaml"),
        b"flow: {id: f, name: \"Caf\xe9\", bpmn_file: trip_planner.bpmn}\n",
    )
    .unwrap();
    let out = stdout_of(
        cuga().args([
            "--apps-dir",
            dir.path().to_str().unwrap(),
            "validate",
            "latin",
        ]),
        1,
    );
    assert!(out.contains("config::encoding"), "{out}");
    assert!(!out.contains("app::no_flow_config"), "{out}");
}

/// A Camunda 8 model whose gateway conditions are FEEL (`=...`) runs natively: each input
/// takes the branch its conditions choose, and a condition that is UNKNOWN (a value it
/// needs is missing) leaves the choice to the default flow.
#[test]
fn a_feel_conditioned_app_runs_the_branch_its_conditions_choose() {
    let runs = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&[], "Standard"),
        (
            &[
                "amount=5000",
                r#"customer={"tier":"Gold","blockedUntil":null}"#,
            ],
            "Priority",
        ),
        (
            &[
                "amount=5000",
                r#"customer={"tier":"silver","blockedUntil":null}"#,
            ],
            "Standard",
        ),
        (&["status=fraud", "amount=5000"], "Blocked"),
        (
            &[r#"customer={"tier":"silver","blockedUntil":"2999-01-01"}"#],
            "Blocked",
        ),
        (
            &[r#"customer={"tier":"silver","blockedUntil":"2000-01-01"}"#],
            "Standard",
        ),
        (
            &[r#"items=[{"express":false},{"express":true}]"#],
            "Priority",
        ),
        // The tier is missing: `upper case(customer.tier) in (...)` is UNKNOWN.
        (&["amount=5000", "customer={}"], "Standard"),
    ];
    for (vars, branch) in cases {
        let mut cmd = cuga();
        cmd.args(["--apps-dir", "tests/fixtures/apps", "start", "feel_routing"])
            .args(["--no-model", "--no-park", "--run-dir"])
            .arg(runs.path());
        for v in *vars {
            cmd.args(["--var", v]);
        }
        let out = stdout_of(cmd.write_stdin(""), 0);
        // The stream names elements as the model does.
        let name = match *branch {
            "Blocked" => "Hold the order",
            "Priority" => "Ship with priority",
            _ => "Ship normally",
        };
        let path = format!("path: Order received → Which handling? → {name} → Order handled");
        assert!(out.contains(&path), "{vars:?} should take {branch}:\n{out}");
    }
}

/// FEEL that cuga-flo does not evaluate is named, at its place, once per condition; FEEL
/// is never told to use `==`.
#[test]
fn feel_outside_the_subset_is_reported_where_it_is_written() {
    let out = stdout_of(
        cuga().args([
            "--apps-dir",
            "tests/fixtures/apps",
            "validate",
            "feel_mistakes",
        ]),
        1,
    );
    assert!(!out.contains("use `==`"), "{out}");
    insta::assert_snapshot!("validate_feel_mistakes", out);
}

/// Camunda 8 and FEEL-language models from the corpus: their conditions read as FEEL (no
/// `expr::` finding) and their event sub-processes get no sequence-flow advice. (C.9.0
/// and C.9.2 call processes of other files, which a model on its own cannot reach.)
#[test]
fn camunda_8_feel_models_validate_without_condition_or_flow_advice() {
    for (file, exit) in [("C.8.1", 0), ("C.9.0", 1), ("C.9.2", 1)] {
        let path = format!("{CORPUS}/miwg-reference/{file}.bpmn");
        let out = stdout_of(cuga().args(["validate", "--json", &path]), exit);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        for d in doc["targets"][0]["diagnostics"].as_array().unwrap() {
            let code = d["code"].as_str().unwrap();
            assert!(
                !code.starts_with("expr::") && code != "graph::implicit_end",
                "{file}: {d}"
            );
        }
    }
}

/// Event sub-processes get no sequence-flow advice; each mistake is one diagnostic (a
/// disconnected gateway, an unreachable sub-process with its boundary events, a loop
/// with no way out); `instantiate="true"` makes an event-based gateway or a receive task
/// an entry, and without it either is unreachable alike.
#[test]
fn event_sub_processes_and_entry_nodes_are_reported_once_each() {
    let out = stdout_of(
        cuga().args([
            "validate",
            "tests/fixtures/models/entries_and_event_sub_processes.bpmn",
        ]),
        1,
    );
    assert!(!out.contains("implicit_end"), "{out}");
    insta::assert_snapshot!("validate_entries_and_event_sub_processes", out);
}

/// The original project's `excel_flows_kogito`: its consulting gateway's `condition` is
/// the question to ask, not a condition that fails to parse.
#[test]
fn upstream_excel_flows_kogito_asks_its_prose_condition() {
    let out = stdout_of(
        cuga().args(["--apps-dir", UPSTREAM, "validate", "excel_flows_kogito"]),
        0,
    );
    assert!(!out.contains("expr::"), "{out}");
    insta::assert_snapshot!("validate_upstream_excel_flows_kogito", out);
}

/// `validate FILE` and `validate APP` give the same verdict on the same model: each model
/// below, on its own and as the model of an app that configures nothing, is refused for
/// the same errors (the app's own config findings aside) or accepted by both.
#[test]
fn a_model_on_its_own_and_in_an_app_get_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "miwg-reference/A.1.0.bpmn",
        "miwg-reference/C.6.0.bpmn",
        "miwg-reference/C.3.0.bpmn",
        "miwg-reference/C.8.0.bpmn",
        "kogito-examples/resources__hiring.bpmn",
        "flowable-engine/adhocsubprocess.bpmn",
        "camunda7-examples/order-handling__order-handling.bpmn",
    ] {
        let source = format!("{CORPUS}/{file}");
        let name: String = (file
            .rsplit('/')
            .next()
            .unwrap()
            .trim_end_matches(".bpmn")
            .chars())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
        let config = dir.path().join(&name).join("config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::copy(&source, config.join(format!("{name}.bpmn"))).unwrap();
        std::fs::write(
            config.join(format!("{name}_config.yaml")),
            format!("flow:\n  id: {name}\n  bpmn_file: {name}.bpmn\n"),
        )
        .unwrap();
        let errors = |args: &[&str]| {
            let out = cuga().args(args).output().unwrap();
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut found: Vec<(String, u64)> = (doc["targets"].as_array().unwrap().iter())
                .flat_map(|t| t["diagnostics"].as_array().unwrap().iter())
                .filter(|d| d["severity"] == "error")
                .map(|d| {
                    (
                        d["code"].as_str().unwrap().to_string(),
                        d["line"].as_u64().unwrap_or(0),
                    )
                })
                .filter(|(code, _)| !code.starts_with("config::") && !code.starts_with("app::"))
                .collect();
            found.sort();
            (out.status.code(), found)
        };
        let alone = errors(&["validate", "--json", &source]);
        let apps = dir.path().to_str().unwrap();
        let in_app = errors(&["--apps-dir", apps, "validate", "--json", &name]);
        assert_eq!(alone, in_app, "{file}: on its own vs in an app");
    }
}

/// One word for a waiting run: its status is `waiting` everywhere a person reads it (the
/// help, the man pages, the docs), "parks" is only the verb, and what a person owes it is
/// an "open question". The old adjective ("a parked run", "parked question") is gone, and
/// the prune flag's old name still works.
#[test]
fn a_waiting_run_has_one_name() {
    let mut texts: Vec<(String, String)> = cuga_flo::cli::man::pages();
    for entry in std::fs::read_dir("docs").unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            texts.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
    texts.push((
        "README.md".into(),
        std::fs::read_to_string("README.md").unwrap(),
    ));
    for (name, text) in &texts {
        let lower = text.to_lowercase();
        for old in ["parked run", "parked question", "is parked", "are parked"] {
            assert!(!lower.contains(old), "{name} says `{old}`; say `waiting`");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--include-waiting", "--include-parked"] {
        let out = stdout_of(
            cuga()
                .args(["runs", "prune", "--run-dir"])
                .arg(dir.path())
                .arg(flag),
            0,
        );
        assert!(out.contains("no run"), "{flag}: {out}");
    }
}
