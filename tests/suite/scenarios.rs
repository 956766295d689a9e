//! The demo apps' scenarios, end to end: `cuga-flo start <app> --scenario <name>` runs the
//! real binary on the native engine with the scenario's inputs and answers, and the run must
//! meet every expectation the scenario writes down (status, exact path, final variables).
//! Each run's human view is kept as a snapshot, with the run id, durations and the temporary
//! run folder redacted.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

/// Every scenario file of the demo apps; each has a test below.
const SCENARIOS: &[(&str, &str)] = &[
    ("claim_intake", "assessor_fails"),
    ("claim_intake", "consultation_fails"),
    ("claim_intake", "consultation_holds"),
    ("claim_intake", "delegated_and_paid"),
    // The tool-calling demos need their tool servers: tests/suite/tools.rs runs their scenarios
    // (the_demo_scenarios_call_the_hr_servers_tools, an_http_api_described_by_openapi_...).
    ("credit_check", "approve"),
    ("credit_check", "unknown_customer"),
    ("expense_claim", "approved"),
    ("expense_claim", "large_denied"),
    ("git_push_safety", "approved"),
    ("git_push_safety", "denied"),
    ("git_push_safety", "scripts_approved"),
    ("git_push_safety", "scripts_secret_denied"),
    ("git_push_safety", "timed_out"),
    ("hr_offboarding", "offboard_with_laptop"),
    ("hr_offboarding", "revocation_denied"),
    ("hr_offboarding", "unknown_employee"),
    ("incident_response", "duplicate_alert"),
    ("incident_response", "false_positive"),
    ("incident_response", "low_severity"),
    ("incident_response", "notify_first"),
    ("incident_response", "ransomware"),
    ("incident_response", "regulated_breach"),
    ("incident_response", "routine"),
    ("invoice_payment", "agent_fails"),
    ("invoice_payment", "line_disputed"),
    ("invoice_payment", "lines_reviewed"),
    ("invoice_payment", "paid"),
    ("invoice_payment", "payment_declined"),
    ("loan_approval", "approve"),
    ("loan_approval", "missing_name"),
    ("loan_approval", "regulatory_restriction"),
    ("loan_approval", "reject_low_score"),
    ("loan_approval", "score_unknown"),
    ("loan_approval_kogito", "approve"),
    ("loan_approval_kogito", "missing_name"),
    ("loan_approval_kogito", "reject_low_score"),
    ("receive_order", "no_invoice_1212"),
    ("receive_order", "standard"),
    ("sim_activation", "escalated"),
    ("sim_activation", "provisioned"),
    ("sim_activation", "scripts_escalate"),
    ("sim_activation", "scripts_hlr_refuses"),
    ("trip_planner", "agent_plans"),
    ("trip_planner", "human_plans"),
];

/// The variable claim_intake's remote agents read their bearer token from (its scenarios
/// serve them with it), and the value the tests give it: it must never be written.
const DESK_TOKEN: &str = "CLAIM_DESK_TOKEN";
const CANARY: &str = "canary-desk-token-5f1e";

/// The apps whose config names an external engine (Flowable, Kogito): `start` runs them
/// only with `--engine native`.
const EXTERNAL_ENGINE: &[&str] = &["loan_approval", "loan_approval_kogito"];

fn cuga(run_dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env(DESK_TOKEN, CANARY)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("start")
        .arg("--run-dir")
        .arg(run_dir)
        .write_stdin("");
    cmd
}

/// `start <app> --scenario <name>`, with `--engine native` where the config needs it.
fn start_scenario(run_dir: &Path, app: &str, scenario: &str) -> Command {
    let mut cmd = cuga(run_dir);
    cmd.args([app, "--scenario", scenario]);
    if EXTERNAL_ENGINE.contains(&app) {
        cmd.args(["--engine", "native"]);
    }
    cmd
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn output(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    Output {
        code: out.status.code().expect("the process exited with a code"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// How a scenario's run ends, and so the exit code it must give.
#[derive(Clone, Copy)]
enum Ends {
    /// Exit code 0.
    Completed,
    /// Exit code 0 too: the scenario expects it, so meeting it is a success (a terminated
    /// run without a scenario exits 1).
    Terminated,
    /// Exit code 3: the run parks for a person (the scenario expects what holds then).
    Parked,
}

/// Run a scenario, check that every expectation is met with the right exit code, and
/// snapshot the human view. `parallel` names tasks on concurrent branches: their lines may
/// come in either order, so the snapshot lists them sorted.
fn check(app: &str, scenario: &str, ends: Ends, parallel: &[&str]) {
    let tmp = TempDir::new().unwrap();
    let out = output(&mut start_scenario(tmp.path(), app, scenario));
    let want = match ends {
        Ends::Completed | Ends::Terminated => 0,
        Ends::Parked => 3,
    };
    assert_eq!(
        out.code, want,
        "`{app}` scenario `{scenario}` exited {}\nstdout:\n{}\nstderr:\n{}",
        out.code, out.stdout, out.stderr
    );
    let met = format!("scenario `{scenario}`: every expectation met");
    assert!(
        out.stdout.contains(&met),
        "`{app}` scenario `{scenario}` missed an expectation:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let engine = if EXTERNAL_ENGINE.contains(&app) {
        " --engine native"
    } else {
        ""
    };
    let mut settings = redactions(tmp.path());
    settings.set_description(format!(
        "cuga-flo start {app} --scenario {scenario}{engine}"
    ));
    let stdout = a2a_outcomes(&sorted_lines(&out.stdout, parallel));
    settings.bind(|| insta::assert_snapshot!(format!("{app}__{scenario}"), stdout));
}

/// Insta filters for what changes from run to run: the run id, durations and the
/// temporary run folder in the journal path.
fn redactions(run_dir: &Path) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&run_dir.display().to_string()), "[RUN_DIR]");
    settings.add_filter(r"\d{8}T\d{6}Z-[0-9a-f]{6}", "[RUN_ID]");
    settings.add_filter(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "[TASK_ID]",
    );
    // A command agent's reason says how long its CLI took; the line may wrap before `ms`.
    settings.add_filter(r"answered in \d+\s+ms", "answered in [DURATION]");
    settings.add_filter(r"\(\d+(\.\d+)? (ms|s)\) *", "([DURATION]) ");
    settings.add_filter(r"\d+ ms", "[DURATION]");
    settings.add_filter(r"duration: .*", "duration: [DURATION]");
    settings.add_filter(r"due \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z", "due [TIME]");
    settings
}

fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The task entries of `tasks` (by name: a task's line and its wrapped continuation
/// lines) sorted among the places they occupy; every other line stays.
fn sorted_lines(stdout: &str, tasks: &[&str]) -> String {
    let is_parallel = |line: &str| {
        line.trim_start()
            .strip_prefix("● task")
            .map(str::trim_start)
            .is_some_and(|rest| tasks.iter().any(|t| rest.starts_with(&format!("{t}  "))))
    };
    // Entries: a line and the continuation lines under it (indented past the markers).
    let mut entries: Vec<String> = Vec::new();
    for line in stdout.lines() {
        match entries.last_mut() {
            Some(last) if line.starts_with("      ") && !line.trim().is_empty() => {
                last.push('\n');
                last.push_str(line);
            }
            _ => entries.push(line.to_owned()),
        }
    }
    let slots: Vec<usize> = (0..entries.len())
        .filter(|i| is_parallel(&entries[*i]))
        .collect();
    let mut moved: Vec<String> = slots.iter().map(|i| entries[*i].clone()).collect();
    moved.sort_unstable();
    for (slot, entry) in slots.iter().zip(moved) {
        entries[*slot] = entry;
    }
    let mut text = entries.join("\n");
    if stdout.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The exchanges with remote A2A agents as their outcomes: how a served agent's task
/// goes between `SendMessage` and its end depends on timing (the reply may already say
/// `input-required` or `completed`, and the polls in between are as many as it took), so
/// the state the task was sent with, the send and each poll (`send task`, `status task`)
/// are left out and the calls are not numbered. What stays is what the exchange decided:
/// the agent's card, the input it asked for, its reply or failure — and the decisions
/// and final state the rest of the view shows.
fn a2a_outcomes(stdout: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in stdout.lines() {
        let call = line.trim_start().starts_with("· model") && line.contains(" a2a:");
        if call && (line.contains("  send task ") || line.contains("  status task ")) {
            continue;
        }
        let mut line = line.to_string();
        // `a2a:<agent> #<n>` → `a2a:<agent>`
        if call && let Some(at) = line.find(" a2a:") {
            let rest = &line[at + 5..];
            if let Some(hash) = rest.find(" #") {
                let digits = rest[hash + 2..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .count();
                let from = at + 5 + hash;
                line.replace_range(from..from + 2 + digits, "");
            }
        }
        // `↗ remote ... A2A task <id> [<state>]` → without the state
        if line.trim_start().starts_with("↗ remote")
            && line.ends_with(']')
            && let Some(task) = line.rfind(": A2A task ")
            && let Some(state) = line.rfind(" [").filter(|at| *at > task)
        {
            line.truncate(state);
        }
        out.push(line);
    }
    let mut text = out.join("\n");
    if stdout.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn event(record: &Value) -> &str {
    record["event"].as_str().unwrap_or_default()
}

#[test]
fn every_scenario_file_has_a_test() {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("applications");
    let mut found: Vec<(String, String)> = Vec::new();
    for app in std::fs::read_dir(&apps).unwrap() {
        let app = app.unwrap();
        let Ok(files) = std::fs::read_dir(app.path().join("scenarios")) else {
            continue;
        };
        for file in files {
            let name = file.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".yaml") {
                found.push((app.file_name().to_string_lossy().into_owned(), stem.into()));
            }
        }
    }
    found.sort();
    let listed: Vec<(String, String)> = SCENARIOS
        .iter()
        .map(|(a, s)| (a.to_string(), s.to_string()))
        .collect();
    assert_eq!(found, listed);
}

/// claim_intake's scenarios serve claim_assessor and claim_adjuster over A2A (their
/// `remote_agents:` entries): the run reaches them on 127.0.0.1 with a bearer token.
mod claim_intake {
    use super::*;

    /// Every file under the run folder: the served runs' journals beside the scenario's.
    fn journals(run_dir: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for run in std::fs::read_dir(run_dir.join("runs")).unwrap() {
            let run = run.unwrap().path();
            let text = std::fs::read_to_string(run.join("journal.jsonl")).unwrap_or_default();
            out.push((
                run.file_name().unwrap().to_string_lossy().into_owned(),
                text,
            ));
        }
        out
    }

    fn run(scenario: &str, ends: Ends) -> TempDir {
        check("claim_intake", scenario, ends, &[]);
        let tmp = TempDir::new().unwrap();
        let out = output(start_scenario(tmp.path(), "claim_intake", scenario).arg("--json"));
        assert!(
            out.stdout.contains("\"met\":true"),
            "{}{}",
            out.stdout,
            out.stderr
        );
        assert!(!out.stdout.contains(CANARY) && !out.stderr.contains(CANARY));
        for (run, text) in journals(tmp.path()) {
            assert!(
                !text.contains(CANARY),
                "the token is in run {run}'s journal"
            );
        }
        tmp
    }

    #[test]
    fn delegated_and_paid_on_the_adjusters_word() {
        let tmp = run("delegated_and_paid", Ends::Completed);
        let runs = journals(tmp.path());
        // The scenario's run and one served run of each sibling app, journalled beside it.
        assert_eq!(runs.len(), 3, "{runs:?}");
        let served = |app: &str| {
            runs.iter()
                .find(|(_, t)| t.contains(&format!("\"app\":\"{app}\"")))
                .unwrap_or_else(|| panic!("no run of {app}"))
        };
        assert!(served("claim_assessor").1.contains("\"payout\":750"));
        assert!(served("claim_adjuster").1.contains("Flow_pay"));
    }

    #[test]
    fn consultation_holds_the_claim() {
        run("consultation_holds", Ends::Completed);
    }

    #[test]
    fn a_failed_assessor_is_caught_by_the_error_boundary() {
        let tmp = run("assessor_fails", Ends::Completed);
        let runs = journals(tmp.path());
        let main = runs
            .iter()
            .find(|(_, t)| t.contains("\"app\":\"claim_intake\""))
            .unwrap();
        assert!(main.1.contains("REMOTE_FAILED"), "{}", main.1);
        assert!(main.1.contains("NOT_COVERED"), "{}", main.1);
    }

    #[test]
    fn a_failed_consultation_is_journalled_and_the_question_parks() {
        let tmp = run("consultation_fails", Ends::Parked);
        let runs = journals(tmp.path());
        let main = runs
            .iter()
            .find(|(_, t)| t.contains("\"app\":\"claim_intake\""))
            .unwrap();
        assert!(main.1.contains("a2a:adjuster"), "{}", main.1);
        assert!(main.1.contains("nobody could answer"), "{}", main.1);
    }

    #[test]
    fn cuga_flo_test_runs_them_with_a_token_of_its_own() {
        let tmp = TempDir::new().unwrap();
        let out = Command::cargo_bin("cuga-flo")
            .unwrap()
            .env_remove("CUGA_FLO_APPS")
            .env_remove(DESK_TOKEN)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["test", "claim_intake", "--json", "--run-dir"])
            .arg(tmp.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        let summary = json_objects(&stdout).pop().unwrap();
        assert_eq!(summary["passed"], 4, "{stdout}");
    }

    /// The demo runs with `start` alone: the remote agents its scenario serves in-process
    /// take a token of the process's own when the environment gives none.
    #[test]
    fn start_alone_runs_the_demo_with_a_token_of_its_own() {
        let tmp = TempDir::new().unwrap();
        let out = output(cuga(tmp.path()).env_remove(DESK_TOKEN).args([
            "claim_intake",
            "--scenario",
            "delegated_and_paid",
        ]));
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("every expectation met"),
            "{}",
            out.stdout
        );
    }

    /// A copy of the three apps, with one more scenario.
    fn apps_with(scenario: &str) -> TempDir {
        let apps = TempDir::new().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("applications");
        for app in ["claim_intake", "claim_assessor", "claim_adjuster"] {
            let dir = apps.path().join(app).join("config");
            std::fs::create_dir_all(&dir).unwrap();
            for f in std::fs::read_dir(src.join(app).join("config")).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
            }
        }
        let dir = apps.path().join("claim_intake/scenarios");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bad.yaml"), scenario).unwrap();
        apps
    }

    fn bad(scenario: &str) -> String {
        let apps = apps_with(scenario);
        let out = output(
            cuga(&apps.path().join("runs"))
                .args(["claim_intake", "--scenario", "bad", "--apps-dir"])
                .arg(apps.path()),
        );
        assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
        assert!(
            !apps.path().join("runs/runs").exists(),
            "no run was started"
        );
        out.stderr
    }

    #[test]
    fn an_unknown_remote_agent_or_app_is_named_with_its_line() {
        let err = bad("inputs: {amount: 1}\nremote_agents:\n  asessor: {serve: claim_assessor}\n");
        assert!(
            err.contains("bad.yaml:3:3: app `claim_intake` has no remote agent `asessor`"),
            "{err}"
        );
        assert!(err.contains("did you mean `assessor`?"), "{err}");
        let err = bad("remote_agents:\n  assessor:\n    serve: claim_asesor\n");
        assert!(
            err.contains("bad.yaml:3:12: no app `claim_asesor`"),
            "{err}"
        );
        assert!(err.contains("did you mean `claim_assessor`?"), "{err}");
        let err = bad("remote_agents:\n  assessor: {serve: claim_assessor, url: x}\n");
        assert!(
            err.contains("bad.yaml:2:37: unknown key `url` in remote agent `assessor`"),
            "{err}"
        );
        // The served app's answers are checked against its own control points.
        let err = bad(
            "remote_agents:\n  assessor:\n    serve: claim_assessor\n    answers: {Activity_nope: {outputs: {}}}\n",
        );
        assert!(err.contains("Activity_nope"), "{err}");
    }
}

mod expense_claim {
    use super::*;

    #[test]
    fn a_small_claim_is_approved_and_paid() {
        check("expense_claim", "approved", Ends::Completed, &[]);
    }

    /// The static hook inserts the legal review before the approval (add_node).
    #[test]
    fn a_large_claim_gets_a_legal_review_then_is_denied() {
        check("expense_claim", "large_denied", Ends::Completed, &[]);
    }
}

mod git_push_safety {
    use super::*;

    #[test]
    fn approved_pushes_after_the_guardrail() {
        check("git_push_safety", "approved", Ends::Completed, &[]);
    }

    #[test]
    fn denied_aborts_the_push() {
        check("git_push_safety", "denied", Ends::Completed, &[]);
    }

    #[test]
    fn timed_out_parks_at_the_guardrail() {
        check("git_push_safety", "timed_out", Ends::Parked, &[]);
    }

    // No answer for the tasks: their command agents' scripts run for real, on a
    // throwaway git repository.
    #[test]
    fn scripts_push_an_approved_branch() {
        check("git_push_safety", "scripts_approved", Ends::Completed, &[]);
    }

    #[test]
    fn scripts_find_a_staged_secret() {
        check(
            "git_push_safety",
            "scripts_secret_denied",
            Ends::Completed,
            &[],
        );
    }
}

mod sim_activation {
    use super::*;

    #[test]
    fn a_critical_request_is_escalated() {
        check("sim_activation", "escalated", Ends::Completed, &[]);
    }

    #[test]
    fn a_standard_request_is_provisioned() {
        check("sim_activation", "provisioned", Ends::Completed, &[]);
    }

    // No answer for the tasks: their command agents' scripts run for real.
    #[test]
    fn scripts_escalate_a_fraud_report() {
        check("sim_activation", "scripts_escalate", Ends::Completed, &[]);
    }

    // The simulated HLR refuses the number: the task fails (COMMAND_FAILED), as expected.
    #[test]
    fn the_hlr_script_refuses_a_bad_number() {
        check(
            "sim_activation",
            "scripts_hlr_refuses",
            Ends::Terminated,
            &[],
        );
    }
}

mod loan_approval {
    use super::*;

    #[test]
    fn approve_grants_the_loan_when_both_hooks_continue() {
        check("loan_approval", "approve", Ends::Completed, &[]);
    }

    #[test]
    fn reject_low_score_sends_the_rejection_letter() {
        check("loan_approval", "reject_low_score", Ends::Completed, &[]);
    }

    #[test]
    fn regulatory_restriction_skips_to_the_rejection_with_state_updates() {
        check(
            "loan_approval",
            "regulatory_restriction",
            Ends::Completed,
            &[],
        );
    }

    #[test]
    fn missing_name_is_terminated_by_screening() {
        check("loan_approval", "missing_name", Ends::Terminated, &[]);
    }

    #[test]
    fn score_unknown_asks_the_decision_agent() {
        check("loan_approval", "score_unknown", Ends::Completed, &[]);
    }
}

mod loan_approval_kogito {
    use super::*;

    #[test]
    fn approve_grants_the_loan_and_informs_the_manager() {
        check("loan_approval_kogito", "approve", Ends::Completed, &[]);
    }

    #[test]
    fn reject_low_score_informs_the_manager_of_the_rejection() {
        check(
            "loan_approval_kogito",
            "reject_low_score",
            Ends::Completed,
            &[],
        );
    }

    #[test]
    fn missing_name_is_terminated_before_anything_is_scored() {
        check(
            "loan_approval_kogito",
            "missing_name",
            Ends::Terminated,
            &[],
        );
    }

    #[test]
    fn without_engine_native_the_run_goes_to_the_configured_kogito_service() {
        // Nothing listens at the config's URL here (tests/suite/kogito.rs runs a real service):
        // the run fails at once, saying where it looked, with a closed journal.
        let tmp = TempDir::new().unwrap();
        let out = output(
            cuga(tmp.path())
                .args(["loan_approval_kogito", "--scenario", "approve"])
                .args(["--engine-url", "http://127.0.0.1:1"]),
        );
        assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("engine kogito"), "{}", out.stdout);
        assert!(
            out.stdout
                .contains("cannot reach Kogito at http://127.0.0.1:1"),
            "{}",
            out.stdout
        );
    }
}

mod invoice_payment {
    use super::*;

    #[test]
    fn paid_raises_no_error() {
        check("invoice_payment", "paid", Ends::Completed, &[]);
    }

    #[test]
    fn payment_declined_is_caught_by_its_error_boundary_and_goes_to_a_person() {
        check("invoice_payment", "payment_declined", Ends::Completed, &[]);
    }

    #[test]
    fn agent_fails_is_caught_by_the_catch_all_boundary() {
        check("invoice_payment", "agent_fails", Ends::Completed, &[]);
    }

    #[test]
    fn lines_reviewed_runs_one_review_per_line_item_and_collects_them() {
        check(
            "invoice_payment",
            "lines_reviewed",
            Ends::Completed,
            &["Review line item"],
        );
    }

    #[test]
    fn line_disputed_interrupts_every_review_through_the_boundary_of_the_whole_activity() {
        check("invoice_payment", "line_disputed", Ends::Completed, &[]);
    }
}

mod receive_order {
    use super::*;

    #[test]
    fn standard_runs_both_branches_and_joins() {
        check(
            "receive_order",
            "standard",
            Ends::Completed,
            &["Reserve inventory", "Generate invoice"],
        );
    }

    #[test]
    fn no_invoice_1212_bypasses_the_invoice_and_releases_the_join() {
        check("receive_order", "no_invoice_1212", Ends::Completed, &[]);
    }
}

mod trip_planner {
    use super::*;

    #[test]
    fn agent_plans_by_the_default_flow() {
        check("trip_planner", "agent_plans", Ends::Completed, &[]);
    }

    #[test]
    fn human_plans_when_the_traveller_asks_for_a_person() {
        check("trip_planner", "human_plans", Ends::Completed, &[]);
    }
}

mod incident_response {
    use super::*;

    #[test]
    fn routine_every_hook_continues() {
        check("incident_response", "routine", Ends::Completed, &[]);
    }

    #[test]
    fn false_positive_is_terminated() {
        check("incident_response", "false_positive", Ends::Terminated, &[]);
    }

    #[test]
    fn duplicate_alert_skips_the_ticket() {
        check("incident_response", "duplicate_alert", Ends::Completed, &[]);
    }

    #[test]
    fn ransomware_skips_to_containment() {
        check("incident_response", "ransomware", Ends::Completed, &[]);
    }

    #[test]
    fn notify_first_swaps_containment_and_notification() {
        check("incident_response", "notify_first", Ends::Completed, &[]);
    }

    #[test]
    fn regulated_breach_adds_the_legal_review() {
        check(
            "incident_response",
            "regulated_breach",
            Ends::Completed,
            &[],
        );
    }

    #[test]
    fn low_severity_removes_the_postmortem() {
        check("incident_response", "low_severity", Ends::Completed, &[]);
    }
}

#[test]
fn json_streams_one_event_per_line_and_ends_with_the_check() {
    let tmp = TempDir::new().unwrap();
    let out = output(start_scenario(tmp.path(), "incident_response", "ransomware").arg("--json"));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let records = json_lines(&out.stdout);
    assert!(records.len() > 3, "{}", out.stdout);
    assert_eq!(event(&records[0]), "run_started");
    let [.., finished, checked] = records.as_slice() else {
        unreachable!()
    };
    assert_eq!(event(finished), "run_finished");
    assert_eq!(finished["status"], "completed");
    assert_eq!(event(checked), "scenario_checked");
    assert_eq!(checked["scenario"], "ransomware");
    assert_eq!(checked["met"], true);
    assert_eq!(checked["mismatches"], serde_json::json!([]));
    assert!(
        !out.stdout.contains("journal:"),
        "the human view leaks into --json"
    );

    let hooks: Vec<&Value> = records
        .iter()
        .filter(|r| event(r) == "hook_evaluated")
        .collect();
    assert!(!hooks.is_empty());
    let mut deciders: Vec<&str> = hooks
        .iter()
        .map(|h| {
            h["decided_by"]
                .as_str()
                .unwrap_or_else(|| panic!("hook_evaluated without decided_by: {h}"))
        })
        .collect();
    deciders.sort_unstable();
    deciders.dedup();
    // Guards decide the hooks whose guard does not hold; policy rules decide the fast track
    // and the containment order.
    assert_eq!(deciders, ["condition", "rule"]);
}

#[test]
fn an_unknown_scenario_exits_2_naming_the_available_ones() {
    let tmp = TempDir::new().unwrap();
    let out = output(cuga(tmp.path()).args(["receive_order", "--scenario", "express"]));
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no scenario `express`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("there are: no_invoice_1212, standard"),
        "{}",
        out.stderr
    );
    assert!(!tmp.path().join("runs").exists(), "no run was started");
}

#[test]
fn without_answers_or_a_terminal_the_run_fails_naming_the_control_point() {
    let tmp = TempDir::new().unwrap();
    // stdin is an empty pipe, not a terminal: nobody can answer, and --no-park says not
    // to wait for someone.
    let out = output(cuga(tmp.path()).args(["receive_order", "--no-park"]));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("judgement: policy rules, then no reasoner"),
        "{all}"
    );
    assert!(all.contains("✘ failed"), "{all}");
    assert!(
        all.contains("no answer for control point `Activity_0oydey5`"),
        "{all}"
    );
    for how in ["--answers FILE", "--scenario NAME", "`llm:`"] {
        assert!(
            all.contains(how),
            "the failure does not mention {how}:\n{all}"
        );
    }
}

#[test]
fn without_answers_or_a_terminal_the_run_parks_and_says_how_to_answer() {
    let tmp = TempDir::new().unwrap();
    let out = output(cuga(tmp.path()).arg("receive_order"));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("then a person, later (questions park)"),
        "{all}"
    );
    assert!(all.contains("⏸ waiting: 1 question for a person"), "{all}");
    assert!(
        all.contains("cuga-flo runs answer") && all.contains("Activity_0oydey5"),
        "{all}"
    );
    for how in ["--answers FILE", "--scenario NAME", "`llm:`"] {
        assert!(
            all.contains(how),
            "the message does not mention {how}:\n{all}"
        );
    }
}

#[test]
fn two_runs_of_one_app_get_their_own_run_ids_and_journals() {
    let tmp = TempDir::new().unwrap();
    let run_id = |out: &Output| {
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let first = json_lines(&out.stdout).remove(0);
        assert_eq!(event(&first), "run_started");
        first["run_id"].as_str().unwrap().to_string()
    };
    let run = || output(start_scenario(tmp.path(), "trip_planner", "human_plans").arg("--json"));
    let a = run_id(&run());
    let b = run_id(&run());
    assert_ne!(a, b);

    let runs = tmp.path().join("runs");
    let mut dirs: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut want = vec![a.clone(), b.clone()];
    want.sort();
    assert_eq!(dirs, want);
    for id in [&a, &b] {
        let text = std::fs::read_to_string(runs.join(id).join("journal.jsonl")).unwrap();
        let records = json_lines(&text);
        assert_eq!(event(&records[0]), "run_started");
        assert!(
            records
                .iter()
                .all(|r| r["run_id"].is_null() || r["run_id"] == **id),
            "journal {id} holds another run's records"
        );
        assert_eq!(event(records.last().unwrap()), "run_finished");
    }
}

/// The answer examples in the demo apps' hook policies agree with what the hooks are
/// offered: a permitted action, a target among `allowed_targets` (never the hooked flow's
/// own for skip_to), state updates among `may_set` with values of the declared types.
#[test]
fn demo_hook_policies_show_only_answers_the_hook_accepts() {
    use cuga_flo::app::{load_app, registry::app_at};
    use cuga_flo::vocab::{HookAction, Settable, VarKind, check_state_updates};

    let mut examples = 0;
    for app in [
        "incident_response",
        "loan_approval",
        "loan_approval_kogito",
        "receive_order",
        "trip_planner",
    ] {
        let loaded = load_app(&app_at(&Path::new("applications").join(app)));
        let config = loaded.config.as_ref().unwrap();
        let process = loaded.process().unwrap();
        let config_dir = loaded.config_path.as_ref().unwrap().parent().unwrap();
        for hook in &config.hooks {
            let Some(policy) = &hook.policy else { continue };
            let text = std::fs::read_to_string(config_dir.join(&policy.value)).unwrap();
            let settable: Vec<Settable> = hook
                .may_set
                .iter()
                .map(|n| Settable {
                    name: n.value.clone(),
                    kind: config
                        .variable(&n.value)
                        .map_or(VarKind::Any, |v| VarKind::of(&v.default)),
                })
                .collect();
            let flow_target = hook
                .location
                .as_ref()
                .and_then(|l| process.flow(&l.value))
                .map(|f| f.target.clone());
            for example in json_objects(&text)
                .into_iter()
                .filter(|v| v.get("action").is_some())
            {
                examples += 1;
                let what = format!("{app}: {} example {example}", hook.id.value);
                let action: HookAction = example["action"].as_str().unwrap().parse().unwrap();
                assert!(
                    action == HookAction::Continue || config.permissions.allows(action),
                    "{what}: not permitted"
                );
                if let Some(target) = example.get("target").and_then(Value::as_str) {
                    assert!(
                        hook.allowed_targets.iter().any(|t| t.value == target),
                        "{what}: not an allowed target"
                    );
                    assert!(
                        action != HookAction::SkipTo || flow_target.as_deref() != Some(target),
                        "{what}: skip_to the hooked flow's own target"
                    );
                }
                if let Some(updates) = example.get("state_updates").and_then(Value::as_object) {
                    check_state_updates(&settable, updates)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                }
            }
        }
    }
    assert!(examples >= 8, "only {examples} answer examples found");
}

/// Every top-level JSON object written in `text` (balanced braces that parse).
fn json_objects(text: &str) -> Vec<Value> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let mut depth = 0;
            let mut in_string = false;
            let mut escaped = false;
            for (j, &b) in bytes.iter().enumerate().skip(i) {
                match (in_string, escaped, b) {
                    (true, true, _) => escaped = false,
                    (true, false, b'\\') => escaped = true,
                    (true, false, b'"') => in_string = false,
                    (false, _, b'"') => in_string = true,
                    (false, _, b'{') => depth += 1,
                    (false, _, b'}') => {
                        depth -= 1;
                        if depth == 0 {
                            if let Ok(v @ Value::Object(_)) = serde_json::from_str(&text[i..=j]) {
                                out.push(v);
                                i = j;
                            }
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        i += 1;
    }
    out
}
