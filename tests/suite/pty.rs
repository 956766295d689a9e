//! What only a terminal shows, on a real pseudo-terminal (expectrl): the spinner that
//! names a slow model call and counts its time, and a person's mistyped answer asked again.
//! `cuga-flo start` runs the `loan_approval` demo app on the native engine with standard
//! input, output and error on the pty, as a person at a terminal runs it.

use crate::support;
use crate::support::chat_server;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use chat_server::{ChatServer, Received, Reply};
use expectrl::{Eof, Expect, Regex, Session};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A copy of the demo app and the shared policies, and the run's inputs.
fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    support::copy_dir(
        &root.join("applications/loan_approval"),
        &dir.path().join("applications/loan_approval"),
    );
    support::copy_dir(&root.join("policies"), &dir.path().join("policies"));
    let inputs = json!({
        "applicant_name": "Maria Santos",
        "applicant_id": "1187",
        "loan_amount": 25000,
        "credit_history": "excellent: eight years without a missed payment",
        "income": 72000,
        "employment_years": 6
    });
    std::fs::write(dir.path().join("inputs.json"), inputs.to_string()).unwrap();
    dir
}

/// `cuga-flo start loan_approval` on the native engine, in `dir`, on a pty.
fn start(dir: &Path, env: &[(&str, String)]) -> expectrl::session::OsSession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(dir)
        .env_remove("CUGA_FLO_APPS")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CUGA_FLO_LLM_BASE_URL")
        .env_remove("CUGA_FLO_LLM_MODEL")
        .env_remove("CUGA_FLO_LLM_API_KEY")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env("TERM", "xterm")
        .args([
            "start",
            "loan_approval",
            "--engine",
            "native",
            "--input",
            "inputs.json",
            "--run-dir",
            "state",
        ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut session = Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session
}

fn journal(dir: &Path) -> Vec<Value> {
    let runs = dir.join("state/runs");
    let run: PathBuf = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_to_string(run.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The control point a request asks about (the id after the first word of the first user
/// message), as tests/suite/llm_run.rs reads it.
fn asked(r: &Received) -> String {
    let first = r.body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    first
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .trim_matches(|c: char| c == '`' || c == ':' || c == '"')
        .to_string()
}

#[test]
fn a_slow_model_call_shows_a_spinner_with_the_element_and_its_time() {
    // Every answer takes 1.5 s: long enough for the spinner (it waits 250 ms) to count.
    let server = ChatServer::start(|r| {
        let reply = match asked(r).as_str() {
            "Activity_0oydey5" => {
                json!({"reason": "six years employed", "outputs": {"credit_score": 0.9}})
            }
            "Activity_1h9ix55" => {
                json!({"reason": "approved", "outputs": {"decision": "loan_granted"}})
            }
            "Activity_131ar38" => {
                json!({"reason": "rejected", "outputs": {"decision": "loan_rejected", "rejection_reason": "low_score"}})
            }
            _ => json!({"reason": "nothing against it", "action": "continue", "target": null}),
        };
        Reply::completion(&reply.to_string()).after(Duration::from_millis(1500))
    });
    let dir = workspace();
    let mut session = start(
        dir.path(),
        &[
            ("CUGA_FLO_LLM_BASE_URL", server.url()),
            ("CUGA_FLO_LLM_MODEL", chat_server::MODEL.to_string()),
            ("CUGA_FLO_LLM_API_KEY", "sk-test".to_string()),
        ],
    );
    // The spinner: a frame, what is decided and by which model, the time so far, on a
    // line it redraws (carriage return, erase line).
    // The spinner: a frame, what is decided (a hook by its flow) and which model is asked,
    // the time so far, on a line it redraws (carriage return, erase line).
    let spun = session
        .expect(Regex(
            r"\r\x1b\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] deciding ([^\r\n·]*) · asking ([^\r\n·]*) · \d+ ms",
        ))
        .unwrap();
    assert_eq!(
        text(spun.get(1).unwrap()).trim(),
        "Application received → Check credit"
    );
    assert_eq!(text(spun.get(2).unwrap()).trim(), chat_server::MODEL);
    // It counts on past a second, under the lines shown meanwhile (the task's entry).
    session
        .expect(Regex(
            r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] deciding Check credit · asking [^\r\n]* · 1\.\d s",
        ))
        .unwrap();
    let rest = session.expect(Eof).unwrap();
    let rest = text(rest.as_bytes());
    assert!(rest.contains("✔ completed"), "{rest}");
    // Once stopped it leaves no trace: the stream's lines start clean after the erase.
    for line in rest.split("\r\n").filter(|l| l.contains("● task")) {
        let shown = line.rsplit("\x1b[2K").next().unwrap();
        assert!(shown.trim_start().starts_with('●'), "{line:?}");
    }
    let journal = journal(dir.path());
    assert!(
        journal
            .iter()
            .filter(|r| r["event"] == "model_called")
            .count()
            >= 4,
        "every control point asked the model"
    );
}

#[test]
fn a_person_who_types_lots_for_a_number_is_asked_again() {
    // No model: the person at the terminal answers every control point.
    let dir = workspace();
    let mut session = start(dir.path(), &[]);
    let prompt = r"(Choose a[^\r\n]*|[a-z_]+ \([^)\r\n]*\)|Reason \(optional\))> ";
    let (mut typed_lots, mut reasked) = (false, false);
    // Until the run ends (the pty closes): continue at the hooks, a credit score (`lots`
    // first), the grant.
    while let Ok(found) = session.expect(Regex(prompt)) {
        let asked = text(found.get(1).unwrap());
        let answer = if asked.starts_with("Choose") {
            "1"
        } else if asked.starts_with("credit_score") && !typed_lots {
            typed_lots = true;
            "lots"
        } else if asked.starts_with("credit_score") {
            let before = text(found.before());
            assert!(
                before.contains("`credit_score` must be a number; `lots` is not"),
                "{before}"
            );
            reasked = true;
            "0.9"
        } else if asked.starts_with("decision") {
            "loan_granted"
        } else {
            ""
        };
        session.send_line(answer).unwrap();
    }
    assert!(typed_lots && reasked, "the credit score was asked again");
    let journal = journal(dir.path());
    let task = journal
        .iter()
        .find(|r| r["event"] == "task_finished" && r["node"] == "Activity_0oydey5")
        .unwrap();
    assert_eq!(task["outputs"]["credit_score"], json!(0.9));
    assert_eq!(task["decided_by"], "human");
}

/// One writer to the terminal: a prompt is drawn only once the steps before it are shown,
/// so that no stream line ever lands on a prompt's line and the person sees what led to
/// the question first (the trip planner asks for its planner after the destination
/// request's step is shown).
#[test]
fn prompts_come_after_the_steps_they_follow_and_never_share_their_line() {
    let dir = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    support::copy_dir(
        &root.join("applications/trip_planner"),
        &dir.path().join("applications/trip_planner"),
    );
    support::copy_dir(&root.join("policies"), &dir.path().join("policies"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(dir.path())
        .env_remove("CUGA_FLO_APPS")
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env("TERM", "xterm")
        .args([
            "start",
            "trip_planner",
            "--no-model",
            "--var",
            "destination=Lisbon",
            "--run-dir",
            "state",
        ]);
    let mut session = Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    let prompt = r"(Choose a[^\r\n]*|[a-z_]+ \([^)\r\n]*\)|Reason \(optional\))> ";
    let mut transcript = String::new();
    let mut prompts = 0;
    while let Ok(found) = session.expect(Regex(prompt)) {
        transcript.push_str(&text(found.before()));
        let asked = text(found.get(1).unwrap());
        transcript.push_str(&text(found.get(0).unwrap()));
        prompts += 1;
        let answer = match asked.split_whitespace().next().unwrap_or_default() {
            "planning_preference" => "agent",
            "destination" => "Lisbon",
            "trip_plan" => "three days in Lisbon",
            "Choose" => "1",
            _ => "",
        };
        // What the terminal shows after the prompt before the person types (a stream line
        // landing on the prompt's line would be here).
        std::thread::sleep(Duration::from_millis(300));
        let mut late = [0u8; 8192];
        while let Ok(n) = session.try_read(&mut late) {
            if n == 0 {
                break;
            }
            transcript.push_str(&text(&late[..n]));
        }
        // The person's Enter ends the prompt's line.
        transcript.push('\n');
        session.send_line(answer).unwrap();
    }
    if let Ok(rest) = session.expect(Eof) {
        transcript.push_str(&text(rest.as_bytes()));
    }
    assert!(prompts >= 2, "{transcript}");
    for line in transcript.split(['\r', '\n']) {
        assert!(
            !(line.contains(")> ") && line.contains('●')),
            "a stream line shares a prompt's line: {line:?}\n{transcript}"
        );
    }
    let shown = transcript
        .find("Request travel destination  completed")
        .unwrap_or_else(|| panic!("{transcript}"));
    let asked = transcript
        .find("planning_preference (")
        .unwrap_or_else(|| panic!("{transcript}"));
    assert!(
        shown < asked,
        "the prompt came before the step it follows:\n{transcript}"
    );
}

/// `runs report` does not pour a page of HTML into a terminal: without `-o` it refuses,
/// saying how to write it, and exits 2; piped, it writes the page.
#[test]
fn a_report_is_not_written_to_a_terminal() {
    let dir = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .current_dir(dir.path())
        .args([
            "start",
            "expense_claim",
            "--scenario",
            "approved",
            "-q",
            "--run-dir",
            "state",
            "--apps-dir",
        ])
        .arg(root.join("applications"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(dir.path()).env("NO_COLOR", "1").args([
        "runs",
        "report",
        "last",
        "--run-dir",
        "state",
    ]);
    let mut session = Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(30)));
    // To the end of the help's line: a terminal may hand over "help: " before the rest.
    let found = session.expect(Regex(r"help: [^\r\n]*\r?\n")).unwrap();
    let said = format!("{}{}", text(found.before()), text(found.get(0).unwrap()));
    assert!(
        said.contains("the report is an HTML page; it is not written to a terminal"),
        "{said}"
    );
    assert!(said.contains("-o run.html"), "{said}");
    assert!(!said.contains("<html"), "{said}");
    let piped = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .current_dir(dir.path())
        .args(["runs", "report", "last", "--run-dir", "state", "--apps-dir"])
        .arg(root.join("applications"))
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert!(text(&piped.stdout).starts_with("<!DOCTYPE html>"));
}
