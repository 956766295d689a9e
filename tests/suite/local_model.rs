//! A REAL MODEL, end to end. The `loan_approval` demo app runs with every control point
//! that nothing deterministic decides answered by a real language model (SmolLM2-135M,
//! a GGUF shipped in a PyPI package) behind a real OpenAI-compatible server on 127.0.0.1
//! (llama.cpp through node-llama-cpp; tests/llm/). A 135M model does not reason well, so
//! this asserts the plumbing, not the wisdom: every answer is valid under the schema and
//! inside the permitted set, tokens are counted, the journal records each call.
//!
//! The server: `CUGA_FLO_TEST_LLM_URL` when set (CI starts it once), else this test starts
//! it with `tests/llm/start-server.sh` (Node.js 20+ and pip needed; the first start
//! installs node-llama-cpp and fetches the model, about 30 s) and stops it afterwards.

use std::path::Path;
use std::process::Command as Process;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support;
use crate::support::python;
use support::copy_dir;

/// The server for the test: (base URL, whether this test started it).
fn server() -> (String, bool) {
    if let Ok(url) = std::env::var("CUGA_FLO_TEST_LLM_URL")
        && !url.trim().is_empty()
    {
        return (url.trim().to_string(), false);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Process::new("bash")
        .arg(root.join("tests/llm/start-server.sh"))
        .arg("small")
        // Room for a prompt, a reply and one re-ask.
        .env("CUGA_FLO_LLM_CTX", "4096")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "the local model server did not start (tests/llm/start-server.sh small):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (url, true)
}

struct StopOnDrop(bool);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if self.0 {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let _ = Process::new("bash")
                .arg(root.join("tests/llm/stop-server.sh"))
                .arg("small")
                .status();
        }
    }
}

#[test]
fn a_real_local_model_answers_every_control_point_within_the_permitted_set() {
    let (url, started) = server();
    let _stop = StopOnDrop(started);

    // The demo app, with the gateway's condition removed so that the model routes it too,
    // and generous timeouts (one CPU thread).
    let dir = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    copy_dir(
        &root.join("applications/loan_approval"),
        &dir.path().join("applications/loan_approval"),
    );
    copy_dir(&root.join("policies"), &dir.path().join("policies"));
    let config = dir
        .path()
        .join("applications/loan_approval/config/loan_approval_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text
        .replacen("    condition: \"${credit_score} > 0.6\"\n", "", 1)
        .replacen(
            "workflow_engine:",
            "llm:\n  provider: llamacpp\n  model: local\n  temperature: 0\n  max_tokens: 400\n  timeout: 240\n  retries: 0\n  max_attempts: 2\n\nworkflow_engine:",
            1,
        );
    std::fs::write(&config, text).unwrap();
    let inputs = json!({
        "applicant_name": "Maria Santos",
        "applicant_id": "1187",
        "loan_amount": 25000,
        "credit_history": "excellent: eight years without a missed payment",
        "income": 72000,
        "employment_years": 6
    });
    let input = dir.path().join("inputs.json");
    std::fs::write(&input, inputs.to_string()).unwrap();

    let out = Command::cargo_bin("cuga-flo")
        .unwrap()
        .current_dir(dir.path())
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_LLM_MODEL")
        .env_remove("CUGA_FLO_LLM_API_KEY")
        .env("CUGA_FLO_LLM_BASE_URL", &url)
        .env("NO_COLOR", "1")
        .args(["start", "loan_approval", "--engine", "native", "--input"])
        .arg(&input)
        .args(["--run-dir", "state"])
        .write_stdin("")
        .timeout(Duration::from_secs(1200))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}\n{stderr}");

    let runs = dir.path().join("state/runs");
    let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap();
    let journal: Vec<Value> = std::fs::read_to_string(run.path().join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = journal.last().unwrap();
    assert_eq!(last["event"], "run_finished", "the run did not finish");

    let calls: Vec<&Value> = journal
        .iter()
        .filter(|e| e["event"] == "model_called")
        .collect();
    assert!(!calls.is_empty(), "no model call was made");
    // The first control point (the screening hook) is always asked.
    assert_eq!(calls[0]["node"], "Flow_1e5ztf6");
    for c in &calls {
        // The grammar-constrained server never answers outside the schema; at worst the
        // harness's own checks find an answer invalid, never an error.
        assert!(
            ["answered", "invalid"].contains(&c["outcome"].as_str().unwrap()),
            "{c}"
        );
        assert!(c["prompt_tokens"].as_u64().unwrap() > 100, "{c}");
        assert!(c["completion_tokens"].as_u64().unwrap() > 0, "{c}");
        assert_eq!(c["model"], "local");
    }
    assert!(calls.iter().any(|c| c["outcome"] == "answered"));

    // Whatever the model chose, it was among what was offered.
    for e in journal.iter().filter(|e| e["event"] == "hook_evaluated") {
        let action = e["action"].as_str().unwrap();
        assert!(
            ["continue", "skip_to", "terminate"].contains(&action),
            "{e}"
        );
        if action == "skip_to" {
            assert_eq!(e["target"], "Activity_131ar38", "{e}");
        }
    }
    for e in journal.iter().filter(|e| e["event"] == "gateway_routed") {
        let flows = e["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 1);
        assert!(["Flow_0ybszcv", "Flow_1jgea85"].contains(&flows[0].as_str().unwrap()));
    }
    assert!(stdout.contains("model:"), "{stdout}");

    // The same server, now behind a task agent that calls tools.
    a_real_local_model_looks_an_employee_up_with_a_tool(&url);
}

/// `hr_offboarding`'s lookup task answered by the real model, which is offered the HR
/// server's tools (the official MCP Python SDK, over stdio): it calls one (the server's
/// grammar makes every reply a well-formed call or a final answer), is given the result,
/// and gives its answer. The later tasks are scripted. Asserted: the plumbing, not the
/// wisdom (a 135M model may pick the wrong employee or read the result wrongly).
fn a_real_local_model_looks_an_employee_up_with_a_tool(url: &str) {
    let dir = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let app = dir.path().join("applications/hr_offboarding");
    copy_dir(&root.join("applications/hr_offboarding"), &app);
    let _ = std::fs::remove_file(app.join("servers/hr_db.json"));
    let config = app.join("config/hr_offboarding_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap().replacen(
        "mcp_servers:",
        "llm:\n  provider: llamacpp\n  model: local\n  temperature: 0\n  max_tokens: 700\n  timeout: 240\n  retries: 0\n  max_attempts: 3\n\naction_permissions:\n  on_untrusted: allow\n\nmcp_servers:",
        1,
    );
    std::fs::write(&config, text).unwrap();
    let answers = dir.path().join("answers.yaml");
    std::fs::write(
        &answers,
        "answers:\n  Task_return: {outputs: {laptop_returned: true}}\n  Task_revoke: {outputs: {access_revoked: true}}\n  Task_notify: {outputs: {notice_number: 1}}\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        python::python().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::cargo_bin("cuga-flo")
        .unwrap()
        .current_dir(dir.path())
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_LLM_MODEL")
        .env_remove("CUGA_FLO_LLM_API_KEY")
        .env("CUGA_FLO_LLM_BASE_URL", url)
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .env("HR_DB", dir.path().join("hr_db.json"))
        .env("HR_CALL_LOG", dir.path().join("hr_calls.jsonl"))
        .args([
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E101",
            "--answers",
        ])
        .arg(&answers)
        .args(["--run-dir", "state"])
        .write_stdin("")
        .timeout(Duration::from_secs(1200))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));

    let run = std::fs::read_dir(dir.path().join("state/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let journal: Vec<Value> = std::fs::read_to_string(run.path().join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |event: &str| -> Vec<&Value> {
        journal
            .iter()
            .filter(|e| e["event"] == event && e["node"] == "Task_lookup")
            .collect()
    };
    // The model asked for a tool; the harness journalled the turn, then the call before
    // and after it was made; the server got it.
    let requested = of("tools_requested");
    assert!(!requested.is_empty(), "the model called no tool: {stdout}");
    let called = of("tool_called");
    assert!(!called.is_empty(), "{stdout}");
    let offered = ["hr.lookup_employee", "hr.list_employees"];
    for c in &called {
        assert!(offered.contains(&c["tool"].as_str().unwrap()), "{c}");
        assert!(
            ["ok", "error"].contains(&c["outcome"].as_str().unwrap()),
            "{c}"
        );
    }
    assert_eq!(of("tool_call_started").len(), called.len());
    let served = std::fs::read_to_string(dir.path().join("hr_calls.jsonl")).unwrap_or_default();
    assert_eq!(served.lines().count(), called.len(), "{served}");
    // The result went back to the model, which then answered: the task completed with its
    // outputs, marked untrusted (they came after a tool's result).
    assert!(of("model_called").len() >= 2, "{stdout}");
    let done = of("task_finished");
    assert_eq!(done.len(), 1, "{stdout}");
    assert_eq!(
        done[0]["status"], "completed",
        "the lookup task did not complete: {stdout}"
    );
    assert!(
        stdout.contains("which called tools (their results are untrusted)"),
        "{stdout}"
    );
}
