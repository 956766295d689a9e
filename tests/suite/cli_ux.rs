//! What a person (and a CI job) sees of a run: the live stream at a given width, and
//! `cuga-flo test` over apps' scenarios with its JUnit report.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn cuga() -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env_remove("FLOWABLE_PASSWORD")
        .env_remove("FLOWABLE_USER")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

fn run(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A copy of demo app `name` (and the shared policies) in `<tmp>/apps`, to edit: the apps
/// folder and the app's folder.
fn demo_copy(tmp: &Path, name: &str) -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let apps = tmp.join("apps");
    crate::support::copy_dir(&root.join("applications").join(name), &apps.join(name));
    crate::support::copy_dir(&root.join("policies"), &tmp.join("policies"));
    let app = apps.join(name);
    (apps, app)
}

fn stream_at(columns: &str, extra: &[&str]) -> String {
    let runs = tempfile::tempdir().unwrap();
    let mut cmd = cuga();
    cmd.env("COLUMNS", columns)
        .args([
            "start",
            "incident_response",
            "--scenario",
            "regulated_breach",
            "--run-dir",
        ])
        .arg(runs.path())
        .args(extra);
    run(&mut cmd, 0)
}

#[test]
fn the_stream_reads_like_a_process_at_80_and_160_columns() {
    for columns in ["80", "160"] {
        let out = stream_at(columns, &[]);
        let width: usize = columns.parse().unwrap();
        // Reasons wrap instead of being cut; only the variables' values may run long.
        assert!(!out.contains('…'), "{out}");
        for line in out
            .lines()
            .filter(|l| !l.starts_with("    ") || l.starts_with("      "))
        {
            if !line.trim_start().starts_with("journal:") {
                assert!(line.chars().count() <= width, "{columns}: {line}");
            }
        }
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(r"\d{8}T\d{6}Z-[0-9a-f]+", "[run-id]");
        settings.add_filter(r"\((\d+ ms|\d+\.\d s)\) *", "(T) ");
        settings.add_filter(r"duration: .*", "duration: [T]");
        settings.add_filter(r"journal: .*", "journal: [path]");
        settings.bind(|| insta::assert_snapshot!(format!("stream_{columns}_columns"), out));
    }
}

#[test]
fn the_stream_names_elements_and_shows_ids_only_when_verbose() {
    let plain = stream_at("100", &[]);
    // Names, not ids; a hook on its flow's ends; the summary's time and deciders.
    assert!(plain.contains("● task    Triage alert"), "{plain}");
    assert!(!plain.contains("Activity_Triage"), "{plain}");
    assert!(plain.contains("⚑ hook    "), "{plain}");
    assert!(plain.contains(" → "), "{plain}");
    assert!(plain.contains("\n  duration: "), "{plain}");
    assert!(plain.contains("\n  decisions: "), "{plain}");
    let verbose = stream_at("100", &["-v"]);
    assert!(
        verbose.contains("Triage alert Activity_Triage"),
        "{verbose}"
    );
}

/// Copy a folder tree (an app, to change it in a test).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// An apps folder with trip_planner (plus a scenario whose expectation is wrong) and the
/// Kogito loan app pointed at a port nothing listens on.
fn apps_with_a_failing_scenario() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let apps = tmp.path().join("apps");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("applications");
    copy_dir(&root.join("trip_planner"), &apps.join("trip_planner"));
    copy_dir(
        &root.join("incident_response"),
        &apps.join("incident_response"),
    );
    let scenarios = apps.join("trip_planner/scenarios");
    let good = std::fs::read_to_string(scenarios.join("agent_plans.yaml")).unwrap();
    let bad = good.replace("status: completed", "status: terminated");
    assert_ne!(good, bad);
    std::fs::write(scenarios.join("wrong_status.yaml"), bad).unwrap();
    let kogito = apps.join("loan_approval_kogito");
    copy_dir(&root.join("loan_approval_kogito"), &kogito);
    let config = kogito.join("config/loan_approval_kogito_config.yaml");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "url: http://127.0.0.1:8081",
        &format!("url: http://127.0.0.1:{port}"),
    );
    std::fs::write(&config, text).unwrap();
    (tmp, apps)
}

#[test]
fn test_runs_every_scenario_reports_each_and_writes_junit() {
    let (tmp, apps) = apps_with_a_failing_scenario();
    let junit = tmp.path().join("report/junit.xml");
    let out = run(
        cuga()
            .arg("--apps-dir")
            .arg(&apps)
            .arg("test")
            .arg("--run-dir")
            .arg(tmp.path().join("runs"))
            .arg("--junit")
            .arg(&junit),
        1,
    );
    // One line per scenario, in a stable order; a terminated run that was expected passes.
    assert!(
        out.contains("✓ incident_response:false_positive  terminated"),
        "{out}"
    );
    assert!(
        out.contains("✗ trip_planner:wrong_status  1 expectation not met"),
        "{out}"
    );
    assert!(
        out.contains("status: expected terminated, got completed"),
        "{out}"
    );
    assert!(
        out.contains("- loan_approval_kogito:approve  skipped: needs the kogito server"),
        "{out}"
    );
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with(['✓', '✗', '-']) && !l.contains(" scenarios: "))
        .collect();
    let ids: Vec<&str> = lines
        .iter()
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "{out}");
    assert!(
        out.contains("13 scenarios: 9 passed, 1 failed, 3 skipped"),
        "{out}"
    );

    // The JUnit report parses, and says the same.
    let xml = std::fs::read_to_string(&junit).unwrap();
    let cases = junit_cases(&xml);
    assert_eq!(cases.len(), 13, "{xml}");
    let verdict = |name: &str| {
        cases
            .iter()
            .find(|c| c.0 == name)
            .map(|c| c.1.as_str())
            .unwrap_or_else(|| panic!("no {name} in {xml}"))
    };
    assert_eq!(verdict("trip_planner.wrong_status"), "failure");
    assert_eq!(verdict("trip_planner.agent_plans"), "passed");
    assert_eq!(verdict("loan_approval_kogito.approve"), "skipped");
    assert_eq!(verdict("incident_response.false_positive"), "passed");
}

/// `(classname.name, passed|failure|skipped)` of each `<testcase>`, read with quick-xml
/// (the root must be `<testsuites>` holding `<testsuite>`s, as CI systems read them).
fn junit_cases(xml: &str) -> Vec<(String, String)> {
    use quick_xml::Reader;
    use quick_xml::events::Event;
    let mut reader = Reader::from_str(xml);
    let mut cases: Vec<(String, String)> = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let attr = |e: &quick_xml::events::BytesStart, name: &str| {
        e.attributes()
            .flatten()
            .find(|a| a.key.into_inner() == name)
            .map(|a| quick_xml::escape::unescape(&a.value).unwrap().into_owned())
            .unwrap_or_default()
    };
    loop {
        let (e, opens) = match reader.read_event().unwrap() {
            Event::Start(e) => (e, true),
            Event::Empty(e) => (e, false),
            Event::End(_) => {
                stack.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let tag = e.name().as_ref().to_owned();
        match tag.as_str() {
            "testsuites" => assert!(stack.is_empty()),
            "testsuite" => assert_eq!(stack, ["testsuites"]),
            "testcase" => {
                assert_eq!(stack, ["testsuites", "testsuite"]);
                cases.push((
                    format!("{}.{}", attr(&e, "classname"), attr(&e, "name")),
                    "passed".into(),
                ));
            }
            "failure" | "skipped" => {
                assert_eq!(stack.last().map(String::as_str), Some("testcase"));
                cases.last_mut().unwrap().1 = tag.clone();
            }
            _ => {}
        }
        if opens {
            stack.push(tag);
        }
    }
    assert!(stack.is_empty());
    cases
}

#[test]
fn test_selects_scenarios_by_app_and_name_and_exits_0_when_all_are_met() {
    let (tmp, apps) = apps_with_a_failing_scenario();
    let out = run(
        cuga()
            .arg("--apps-dir")
            .arg(&apps)
            .args([
                "test",
                "trip_planner:agent_plans",
                "incident_response:false_positive",
                "--json",
                "--run-dir",
            ])
            .arg(tmp.path().join("runs")),
        0,
    );
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["scenario"], "agent_plans");
    assert_eq!(lines[0]["outcome"], "passed");
    assert_eq!(lines[1]["status"], "terminated");
    assert_eq!(lines[1]["outcome"], "passed");
    assert_eq!(lines[2]["event"], "summary");
    assert_eq!(lines[2]["passed"], 2);

    // A misspelt scenario is a usage error with a suggestion.
    let out = cuga()
        .arg("--apps-dir")
        .arg(&apps)
        .args(["test", "trip_planner:agent_plan"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(
        err.contains("did you mean `trip_planner:agent_plans`?"),
        "{err}"
    );

    // Named explicitly, a server-bound scenario runs (and fails: nothing listens).
    let out = run(
        cuga()
            .arg("--apps-dir")
            .arg(&apps)
            .args(["test", "loan_approval_kogito:approve", "--run-dir"])
            .arg(tmp.path().join("runs")),
        1,
    );
    assert!(out.contains("✗ loan_approval_kogito:approve"), "{out}");
}

#[test]
fn runs_are_listed_with_a_header_filtered_and_found_by_prefix_or_suffix() {
    let runs = tempfile::tempdir().unwrap();
    for (app, scenario) in [
        ("trip_planner", "agent_plans"),
        ("incident_response", "false_positive"),
    ] {
        run(
            cuga()
                .args(["start", app, "--scenario", scenario, "--json", "--run-dir"])
                .arg(runs.path()),
            0,
        );
    }
    let list = |extra: &[&str]| {
        run(
            cuga()
                .args(["runs", "list", "--run-dir"])
                .arg(runs.path())
                .args(extra),
            0,
        )
    };
    let out = list(&[]);
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "RUN", "STARTED", "DURATION", "APP", "STATUS", "SCENARIO", "STEPS"
        ]
    );
    // Newest first.
    assert!(lines.next().unwrap().contains("incident_response"), "{out}");
    assert!(
        out.contains("terminated") && out.contains("false_positive"),
        "{out}"
    );

    let json: serde_json::Value = serde_json::from_str(&list(&["--json"])).unwrap();
    let all = json.as_array().unwrap();
    assert_eq!(all.len(), 2);
    let only: serde_json::Value =
        serde_json::from_str(&list(&["--json", "--status", "terminated"])).unwrap();
    assert_eq!(only.as_array().unwrap().len(), 1);
    assert_eq!(only[0]["app"], "incident_response");
    assert_eq!(only[0]["scenario"], "false_positive");
    let by_app: serde_json::Value =
        serde_json::from_str(&list(&["--json", "--app", "trip_planner", "--limit", "5"])).unwrap();
    assert_eq!(by_app.as_array().unwrap().len(), 1);
    let limited: serde_json::Value =
        serde_json::from_str(&list(&["--json", "--limit", "1"])).unwrap();
    assert_eq!(limited[0]["app"], "incident_response");

    // `runs show` by the id's memorable suffix, and as one JSON document.
    let id = by_app[0]["run_id"].as_str().unwrap().to_owned();
    let suffix = &id[id.len() - 6..];
    let shown = run(
        cuga()
            .args(["runs", "show", suffix, "--json", "--run-dir"])
            .arg(runs.path()),
        0,
    );
    let doc: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(doc["run_id"], id.as_str());
    assert_eq!(doc["status"], "completed");
    assert_eq!(doc["records"][0]["event"], "run_started");
    let human = run(
        cuga()
            .args(["runs", "show", suffix, "--run-dir"])
            .arg(runs.path()),
        0,
    );
    assert!(human.contains("● task    Plan trip by agent"), "{human}");

    // A prefix both ids share is ambiguous: the error lists the candidates.
    let err = cuga()
        .args(["runs", "show", "2", "--run-dir"])
        .arg(runs.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(err.contains("names 2 runs"), "{err}");
    assert!(err.contains(&id), "{err}");

    // `last` is the run that started last (incident_response, started second), and a
    // fragment from the middle of an id finds it when only it holds the fragment.
    let newest = all[0]["run_id"].as_str().unwrap().to_owned();
    let shown = |wanted: &str| -> serde_json::Value {
        serde_json::from_str(&run(
            cuga()
                .args(["runs", "show", wanted, "--json", "--run-dir"])
                .arg(runs.path()),
            0,
        ))
        .unwrap()
    };
    assert_eq!(shown("last")["app"], "incident_response");
    assert_eq!(shown("last")["run_id"], newest.as_str());
    let middle = &id[id.len() - 9..id.len() - 3];
    assert_eq!(shown(middle)["run_id"], id.as_str());
}

/// The shipped bash script, driven by bash itself: `complete -p` shows it registered,
/// options of a subcommand complete (they never did: clap_complete's function names did
/// not match its case labels), and apps, scenarios and run ids complete from the folder.
#[test]
fn bash_completes_options_apps_scenarios_and_run_ids() {
    if std::process::Command::new("bash")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no bash: skipped");
        return;
    }
    let runs = tempfile::tempdir().unwrap();
    run(
        cuga()
            .args([
                "start",
                "trip_planner",
                "--scenario",
                "agent_plans",
                "--json",
                "--run-dir",
            ])
            .arg(runs.path()),
        0,
    );
    let bin = assert_cmd::cargo::cargo_bin("cuga-flo");
    let script = format!(
        r#"
source completions/cuga-flo.bash || exit 9
complete -p cuga-flo
ask() {{ COMP_WORDS=("{bin}" "$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=();
  _cuga_flo_dynamic "{bin}" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}";
  echo "$1> ${{COMPREPLY[*]}}"; }}
ask start --sc
ask start tri
ask start trip_planner --scenario ""
ask test trip_planner:a
ask runs show --run-dir "{runs}" ""
ask runs list --st
ask test trip_planner : a
ask test trip_planner :
ask runs answer --run-dir "{runs}" ""
ask runs list --app rec
"#,
        bin = bin.display(),
        runs = runs.path().display()
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .contains("-F _cuga_flo_dynamic cuga-flo"),
        "{text}"
    );
    let answers: Vec<&str> = lines.collect();
    assert_eq!(answers[0], "start> --scenario", "{text}");
    assert_eq!(answers[1], "start> trip_planner", "{text}");
    assert_eq!(answers[2], "start> agent_plans human_plans", "{text}");
    assert_eq!(answers[3], "test> trip_planner:agent_plans", "{text}");
    assert!(
        answers[4].starts_with("runs> 20") && answers[4].len() > 20,
        "{text}"
    );
    assert_eq!(answers[5], "runs> --status --store", "{text}");
    // bash splits `trip_planner:a` at the colon: the scenario still completes, without the
    // app repeated.
    assert_eq!(answers[6], "test> agent_plans", "{text}");
    assert_eq!(answers[7], "test> agent_plans human_plans", "{text}");
    // Only runs with more to do are offered to `runs answer` (the one run completed).
    assert!(answers[4].ends_with(" last"), "{text}");
    let completed = answers[4]
        .trim_start_matches("runs> ")
        .split(' ')
        .next()
        .unwrap();
    assert!(!answers[8].contains(completed), "{text}");
    assert_eq!(answers[9], "runs> receive_order", "{text}");
}

/// `cuga-flo test` journals its scenarios' runs apart from real work: a scenario that
/// parks leaves no question for `runs pending` and no run for `runs list` of the real run
/// folder; with `--keep` its runs stay (under `test-runs/`) and are read there.
#[test]
fn test_runs_are_kept_apart_from_real_runs_and_deleted_unless_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("state");
    let out = run(
        cuga()
            .args(["test", "claim_intake:consultation_fails", "--run-dir"])
            .arg(&base),
        0,
    );
    assert!(out.contains("1 passed"), "{out}");
    let pending = run(cuga().args(["runs", "pending", "--run-dir"]).arg(&base), 0);
    assert!(!pending.contains("claim_intake"), "{pending}");
    let listed = run(cuga().args(["runs", "list", "--run-dir"]).arg(&base), 0);
    assert!(listed.starts_with("no runs"), "{listed}");
    assert!(!base.join("test-runs").exists(), "deleted");

    let out = run(
        cuga()
            .args([
                "test",
                "claim_intake:consultation_fails",
                "--keep",
                "--json",
                "--run-dir",
            ])
            .arg(&base),
        0,
    );
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let kept = PathBuf::from(summary["run_dir"].as_str().unwrap());
    assert!(kept.starts_with(base.join("test-runs")), "{kept:?}");
    let listed = run(cuga().args(["runs", "list", "--run-dir"]).arg(&base), 0);
    assert!(listed.starts_with("no runs"), "{listed}");
    let listed = run(cuga().args(["runs", "list", "--run-dir"]).arg(&kept), 0);
    assert!(
        listed.contains("claim_intake") && listed.contains("waiting"),
        "{listed}"
    );
}

/// `runs prune` says what it would delete (a dry run) and deletes with `--yes`: by age,
/// status and app; never a waiting or unfinished run without `--include-waiting`, and
/// never a run another process has open, even then.
#[test]
fn runs_prune_deletes_old_finished_runs_and_keeps_open_and_live_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("state");
    let start = |app: &str, scenario: &str, code: i32| {
        let out = run(
            cuga()
                .env("CLAIM_DESK_TOKEN", "claim-desk-token-for-the-prune-test")
                .args(["start", app, "--scenario", scenario, "--json", "--run-dir"])
                .arg(&base),
            code,
        );
        let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        first["run_id"].as_str().unwrap().to_string()
    };
    let done = start("trip_planner", "agent_plans", 0);
    let ended = start("incident_response", "false_positive", 0);
    let parked = start("claim_intake", "consultation_fails", 3);
    // A run live in another process: waiting in-process on a 30 s timer.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps");
    let mut live = std::process::Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .arg("--apps-dir")
        .arg(&fixtures)
        .args([
            "start",
            "timers",
            "--var",
            "wait=PT30S",
            "--no-model",
            "--run-dir",
        ])
        .arg(&base)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let runs = base.join("runs");
    let count = || std::fs::read_dir(&runs).map_or(0, |d| d.count());
    // The claim desk's scenario serves its remote agents: their runs are journalled too.
    let before = count();
    let waited = std::time::Instant::now();
    while count() <= before {
        assert!(
            waited.elapsed().as_secs() < 20,
            "the live run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));

    // Nothing is a week old.
    let out = run(
        cuga()
            .args(["runs", "prune", "--older-than", "7d", "--run-dir"])
            .arg(&base),
        0,
    );
    assert!(out.contains("no runs to delete"), "{out}");
    // A dry run by default: the finished runs, named; the parked one kept, with why.
    let out = run(cuga().args(["runs", "prune", "--run-dir"]).arg(&base), 0);
    assert!(out.contains(&format!("would delete {done}")), "{out}");
    assert!(out.contains(&format!("would delete {ended}")), "{out}");
    assert!(out.contains(&format!("kept {parked}")), "{out}");
    assert!(out.contains("--include-waiting"), "{out}");
    assert!(out.contains("pass --yes"), "{out}");
    let total = count();
    assert_eq!(total, before + 1);
    let out = run(cuga().args(["runs", "prune", "--run-dir"]).arg(&base), 0);
    assert!(out.contains("would delete"), "{out}");
    assert_eq!(count(), total, "a dry run deletes nothing");
    // By app and status, for real.
    let out = run(
        cuga()
            .args([
                "runs",
                "prune",
                "--app",
                "trip_planner",
                "--status",
                "completed",
                "--yes",
                "--run-dir",
            ])
            .arg(&base),
        0,
    );
    assert!(out.contains(&format!("deleted {done}")), "{out}");
    assert!(!runs.join(&done).exists());
    assert!(runs.join(&ended).exists());
    // Everything, the open ones too: the live run is refused (exit 1) and stays.
    let out = run(
        cuga()
            .args([
                "runs",
                "prune",
                "--include-waiting",
                "--yes",
                "--json",
                "--run-dir",
            ])
            .arg(&base),
        1,
    );
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let deleted: Vec<&str> = doc["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert!(
        deleted.contains(&ended.as_str()) && deleted.contains(&parked.as_str()),
        "{doc}"
    );
    let kept = doc["kept"].as_array().unwrap();
    assert_eq!(kept.len(), 1, "{doc}");
    assert!(kept[0]["why"].as_str().unwrap().contains("live"), "{doc}");
    assert_eq!(count(), 1, "{doc}");
    let _ = live.kill();
    let _ = live.wait();
    // Bad ages are usage errors.
    run(
        cuga()
            .args(["runs", "prune", "--older-than", "7 fortnights", "--run-dir"])
            .arg(&base),
        2,
    );
}

/// What a run takes: `describe` lists the declared variables (kind, default, required,
/// what each holds); `start` refuses a run that lacks a required input, saying what to
/// pass; an input that names no declared variable is a config error with a suggestion.
#[test]
fn describe_lists_the_inputs_and_start_refuses_a_run_without_a_required_one() {
    let shown = run(cuga().args(["describe", "incident_response"]), 0);
    assert!(shown.contains("Inputs"), "{shown}");
    assert!(
        shown.contains("alert_description: string · required · What the alert says happened"),
        "{shown}"
    );
    assert!(
        shown.contains("open_incidents: list · default []"),
        "{shown}"
    );
    let doc: serde_json::Value = serde_json::from_str(&run(
        cuga().args(["describe", "incident_response", "--json"]),
        0,
    ))
    .unwrap();
    let inputs = doc["inputs"].as_array().unwrap();
    let alert = inputs
        .iter()
        .find(|i| i["name"] == "alert_description")
        .unwrap();
    assert_eq!(alert["required"], true, "{alert}");
    assert_eq!(alert["kind"], "string", "{alert}");
    assert!(
        inputs
            .iter()
            .any(|i| i["name"] == "severity" && i["required"] == false)
    );

    let tmp = tempfile::tempdir().unwrap();
    let out = cuga()
        .args(["start", "incident_response", "--no-model", "--run-dir"])
        .arg(tmp.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("input `alert_description` (What the alert says happened) is required"),
        "{err}"
    );
    assert!(err.contains("--var alert_description="), "{err}");
    assert!(!tmp.path().join("runs").exists(), "nothing journalled");

    // An input that is not a declared variable.
    let (apps, app) = demo_copy(tmp.path(), "incident_response");
    let config = app.join("config/incident_response_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("  alert_id: {description", "  alert_idd: {description"),
    )
    .unwrap();
    let shown = run(
        cuga()
            .arg("--apps-dir")
            .arg(&apps)
            .args(["validate", "incident_response"]),
        1,
    );
    assert!(
        shown.contains("input `alert_idd` is not a declared variable"),
        "{shown}"
    );
    assert!(shown.contains("did you mean `alert_id`?"), "{shown}");
}

/// Scenarios people can keep: expectations name elements by id or name, check what a run
/// visits and never visits, and a failure names the first difference; `validate` checks
/// every scenario without running it (its inputs, its answers' ids and shapes, the
/// elements its expectations name).
#[test]
fn scenarios_name_elements_check_visits_and_are_validated_without_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (apps, app) = demo_copy(tmp.path(), "trip_planner");
    let scenarios = app.join("scenarios");
    let original = std::fs::read_to_string(scenarios.join("agent_plans.yaml")).unwrap();
    let answers_and_inputs = original.split("expect:").next().unwrap().to_string();
    let write = |name: &str, expect: &str| {
        std::fs::write(
            scenarios.join(format!("{name}.yaml")),
            format!("{answers_and_inputs}expect:\n{expect}"),
        )
        .unwrap();
    };
    write(
        "by_name",
        "  status: completed\n  path: [Trip requested, Request travel destination, Choose type of planner, \
         Preference?, Plan trip by agent, Plan ready, Trip planned]\n  visits: [Plan trip by agent]\n  \
         never_visits: [Plan trip by human, Activity_199zx27]\n",
    );
    write(
        "wrong_turn",
        "  visits: [Plan trip by human]\n  path: [StartEvent_1jfmx4r, Activity_0w2einw, Activity_1dlyezk, Gateway_1ctgj6w, Activity_199zx27]\n",
    );
    let out = cuga()
        .arg("--apps-dir")
        .arg(&apps)
        .args([
            "test",
            "trip_planner:by_name",
            "trip_planner:wrong_turn",
            "--run-dir",
        ])
        .arg(tmp.path().join("state"))
        .assert()
        .code(1)
        .get_output()
        .clone();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("✓ trip_planner:by_name"), "{shown}");
    assert!(shown.contains("✗ trip_planner:wrong_turn"), "{shown}");
    assert!(
        shown.contains("path: step 5 expected `Plan trip by human` (Activity_199zx27), got `Plan trip by agent` (Activity_00olk6b)"),
        "{shown}"
    );
    assert!(
        shown.contains("visits: `Plan trip by human` (Activity_199zx27) was never entered"),
        "{shown}"
    );

    // validate reads every scenario: a misspelt answer id, an input of the wrong kind,
    // an element that is not the process's.
    std::fs::remove_file(scenarios.join("wrong_turn.yaml")).unwrap();
    let shown = run(
        cuga()
            .arg("--apps-dir")
            .arg(&apps)
            .args(["validate", "trip_planner"]),
        0,
    );
    assert!(shown.contains("is valid"), "{shown}");
    std::fs::write(
        scenarios.join("typos.yaml"),
        "inputs: {destination: 7}\nanswers:\n  Activity_1dlyezkk: {outputs: {planning_preference: agent}}\n\
         expect:\n  visits: [Plan trip by agnet]\n",
    )
    .unwrap();
    let shown = run(
        cuga()
            .arg("--apps-dir")
            .arg(&apps)
            .args(["validate", "trip_planner"]),
        1,
    );
    assert!(
        shown.contains("scenario `typos`: input `destination` is a string, not a number"),
        "{shown}"
    );
    assert!(shown.contains("Activity_1dlyezkk"), "{shown}");
    assert!(
        shown.contains("expect.visits names `Plan trip by agnet`")
            && shown.contains("did you mean `Plan trip by agent`?"),
        "{shown}"
    );
    assert!(shown.contains("typos.yaml"), "{shown}");
}

/// `runs watch` follows a run from another terminal as `start` streams it: live, then
/// parked (it keeps watching), then resumed by someone else, and exits as the run ended.
#[test]
fn runs_watch_follows_a_run_through_its_park_to_its_end() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("state");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps");
    let bin = env!("CARGO_BIN_EXE_cuga-flo");
    // A 1 s timer the run parks at (--max-wait 0), then, resumed, an approval nobody
    // gives until its 0.3 s deadline escalates it.
    let started = std::process::Command::new(bin)
        .arg("--apps-dir")
        .arg(&fixtures)
        .args([
            "start",
            "timers",
            "--var",
            "wait=PT1S",
            "--var",
            "approval_deadline=PT0.3S",
            "--no-model",
            "--max-wait",
            "0",
            "--run-dir",
        ])
        .arg(&base)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let runs = base.join("runs");
    let waited = std::time::Instant::now();
    let id = loop {
        if let Some(entry) = std::fs::read_dir(&runs).ok().and_then(|mut d| d.next()) {
            let id = entry.unwrap().file_name().to_string_lossy().into_owned();
            if runs.join(&id).join("journal.jsonl").is_file() {
                break id;
            }
        }
        assert!(waited.elapsed().as_secs() < 20, "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let watcher = std::process::Command::new(bin)
        .args(["runs", "watch", &id, "--interval", "50", "--run-dir"])
        .arg(&base)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The run parks at the timer (exit 3); it falls due; someone resumes it.
    let out = started.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    std::thread::sleep(std::time::Duration::from_millis(1200));
    run(
        cuga()
            .arg("--apps-dir")
            .arg(&fixtures)
            .args(["runs", "resume", "--due", "--run-dir"])
            .arg(&base),
        0,
    );
    let watched = watcher.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&watched.stdout);
    assert_eq!(
        watched.status.code(),
        Some(0),
        "{shown}\n{}",
        String::from_utf8_lossy(&watched.stderr)
    );
    let at = |what: &str| {
        shown
            .find(what)
            .unwrap_or_else(|| panic!("`{what}` not shown:\n{shown}"))
    };
    assert!(at("Prepare") < at("Escalate"), "{shown}");
    assert!(shown.contains("completed"), "{shown}");
}

/// `test --update` rewrites the expectations a run did not meet from what it did (only the
/// `expect:` block; comments and answers kept), shows what changed, and the scenario then
/// passes as it is.
#[test]
fn test_update_rewrites_unmet_expectations_from_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (apps, app) = demo_copy(tmp.path(), "trip_planner");
    let file = app.join("scenarios/agent_plans.yaml");
    let original = std::fs::read_to_string(&file).unwrap();
    let broken = original
        .replace("    - Activity_00olk6b\n", "    - Activity_199zx27\n")
        .replace(
            "planning_preference: agent\n",
            "planning_preference: human\n",
        )
        .replace(
            "expect:\n",
            "# what must come out\nexpect:\n  visits: [Plan trip by agent]\n",
        );
    assert_ne!(broken, original);
    std::fs::write(&file, &broken).unwrap();
    let state = tmp.path().join("state");
    let test = |extra: &[&str], code: i32| {
        run(
            cuga()
                .arg("--apps-dir")
                .arg(&apps)
                .args(["test", "trip_planner:agent_plans"])
                .args(extra)
                .arg("--run-dir")
                .arg(&state),
            code,
        )
    };
    let failed = test(&[], 1);
    assert!(failed.contains("✗ trip_planner:agent_plans"), "{failed}");
    let updated = test(&["--update"], 0);
    assert!(
        updated.contains("↻ trip_planner:agent_plans  updated"),
        "{updated}"
    );
    assert!(
        updated.contains("path: step 5 expected `Plan trip by human` (Activity_199zx27), got `Plan trip by agent` (Activity_00olk6b)"),
        "{updated}"
    );
    assert!(updated.contains("1 updated"), "{updated}");
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(now.contains("# what must come out\nexpect:\n"), "{now}");
    assert!(now.contains("    - Activity_00olk6b\n"), "{now}");
    assert!(now.contains("planning_preference: \"agent\""), "{now}");
    assert!(now.contains("visits: [\"Plan trip by agent\"]"), "{now}");
    assert_eq!(
        now.split("expect:").next(),
        broken.split("expect:").next(),
        "what comes before `expect:` is kept"
    );
    let passed = test(&[], 0);
    assert!(passed.contains("✓ trip_planner:agent_plans"), "{passed}");
}

/// `-q` quiets the stream: no line per step, the run's end only (its summary and, with a
/// scenario, the verdict).
#[test]
fn quiet_shows_the_end_of_a_run_only() {
    let tmp = tempfile::tempdir().unwrap();
    let loud = run(
        cuga()
            .args([
                "start",
                "trip_planner",
                "--scenario",
                "agent_plans",
                "--run-dir",
            ])
            .arg(tmp.path()),
        0,
    );
    let quiet = run(
        cuga()
            .args([
                "-q",
                "start",
                "trip_planner",
                "--scenario",
                "agent_plans",
                "--run-dir",
            ])
            .arg(tmp.path()),
        0,
    );
    assert!(loud.contains("● task"), "{loud}");
    assert!(
        !quiet.contains("● task") && !quiet.contains("▶ run"),
        "{quiet}"
    );
    assert!(quiet.contains("completed"), "{quiet}");
    assert!(quiet.contains("every expectation met"), "{quiet}");
}
