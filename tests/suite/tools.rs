//! Agents that act: task agents calling tools, end to end through the real `cuga-flo`
//! binary, against real tool servers: the hr_offboarding demo's HR server (the official MCP
//! Python SDK, started by the flow config over stdio), the tickets server (the official MCP
//! TypeScript SDK over streamable HTTP, with a bearer token) and the credit_check demo's
//! credit bureau (an OpenAPI 3 HTTP service). The model is the in-process chat-completions
//! server (tests/suite/support/chat_server.rs) scripted per task, so these tests assert the
//! governance — what is offered, refused, confirmed, journalled, repeated — not a model's
//! wisdom; a real local model calling a tool is in tests/suite/local_model.rs.
//!
//! Every tool server appends one line per call to a log the test reads, so "no call was
//! made" and "made exactly once" are counted at the server, not inferred from the journal.

use crate::support;
use crate::support::chat_server;
use crate::support::python;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use chat_server::{ChatServer, Received, Reply};
use serde_json::{Value, json};
use support::{copy_dir, text};
use tempfile::TempDir;

/// The interop venv's bin folder (the official MCP Python SDK): put first on PATH, so the
/// flow config's `python3` runs the HR server.
fn venv_bin() -> PathBuf {
    python::python().parent().unwrap().to_path_buf()
}

/// A copy of the hr_offboarding demo with its own HR database and call log.
struct Hr {
    dir: TempDir,
}

impl Hr {
    fn new() -> Hr {
        let dir = TempDir::new().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        copy_dir(
            &root.join("applications/hr_offboarding"),
            &dir.path().join("apps/hr_offboarding"),
        );
        let _ = std::fs::remove_file(dir.path().join("apps/hr_offboarding/servers/hr_db.json"));
        Hr { dir }
    }

    /// Tool calls that change data go ahead on untrusted data (only destructive ones are
    /// confirmed): what most tests want, to look at one thing at a time.
    fn trusting(self) -> Hr {
        self.append_config("\naction_permissions:\n  on_untrusted: allow\n");
        self
    }

    fn config(&self) -> PathBuf {
        self.dir
            .path()
            .join("apps/hr_offboarding/config/hr_offboarding_config.yaml")
    }

    fn append_config(&self, text: &str) {
        let mut config = std::fs::read_to_string(self.config()).unwrap();
        config.push_str(text);
        std::fs::write(self.config(), config).unwrap();
    }

    fn edit_config(&self, from: &str, to: &str) {
        let config = std::fs::read_to_string(self.config()).unwrap();
        assert!(config.contains(from), "the config has no `{from}`");
        std::fs::write(self.config(), config.replacen(from, to, 1)).unwrap();
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("hr_calls.jsonl")
    }

    /// The tool calls the HR server received, in order: (tool, arguments).
    fn calls(&self) -> Vec<(String, Value)> {
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["tool"].as_str().unwrap_or_default().to_string(),
                    v["arguments"].clone(),
                )
            })
            .collect()
    }

    fn count(&self, tool: &str) -> usize {
        self.calls().iter().filter(|(t, _)| t == tool).count()
    }

    /// An answers file for the tasks a test leaves to scripted agents.
    fn answers(&self, yaml: &str) -> PathBuf {
        let path = self.dir.path().join(format!("answers-{}.yaml", yaml.len()));
        std::fs::write(&path, yaml).unwrap();
        path
    }

    /// `cuga-flo ARGS --run-dir STATE` over the copied app, the HR server's environment
    /// set, the model at `model` (when given), stdin empty, `extra` environment after.
    fn cuga(&self, args: &[&str], model: Option<&ChatServer>, extra: &[(&str, String)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
        let path = format!(
            "{}:{}",
            venv_bin().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.current_dir(self.dir.path())
            .env_remove("CUGA_FLO_CRASH_AT")
            .env_remove("CUGA_FLO_CRASH_TRACE")
            .env_remove("CUGA_FLO_LLM_BASE_URL")
            .env("NO_COLOR", "1")
            .env("PATH", path)
            .env("HR_DB", self.dir.path().join("hr_db.json"))
            .env("HR_CALL_LOG", self.log())
            .arg("--apps-dir")
            .arg(self.dir.path().join("apps"))
            .args(args)
            .stdin(Stdio::null());
        // `validate` and `tools` read no runs, so they take no run directory.
        if !matches!(args.first(), Some(&"validate") | Some(&"tools")) {
            cmd.arg("--run-dir").arg(self.run_dir());
        }
        if let Some(m) = model {
            cmd.env("CUGA_FLO_LLM_BASE_URL", m.url())
                .env("CUGA_FLO_LLM_MODEL", chat_server::MODEL);
        }
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().expect("cuga-flo runs")
    }

    fn records(&self, id: &str) -> Vec<Value> {
        let path = self.run_dir().join("runs").join(id).join("journal.jsonl");
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn only_run(&self) -> String {
        let mut ids: Vec<String> = std::fs::read_dir(self.run_dir().join("runs"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        ids.sort();
        assert_eq!(ids.len(), 1, "{ids:?}");
        ids.remove(0)
    }
}

/// The records of `records` whose event is `name`.
fn events<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["event"] == name).collect()
}

/// The function names offered to the model in a request.
fn offered(r: &Received) -> Vec<String> {
    r.body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| {
                    t["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Turns in which the model asked for tools, in the request's conversation.
fn turns(r: &Received) -> usize {
    r.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["role"] == "assistant" && m["tool_calls"].as_array().is_some_and(|c| !c.is_empty())
        })
        .count()
}

/// The content of the last tool result in the request's conversation.
fn last_result(r: &Received) -> String {
    r.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Requests that offered `tool` (the model's function name).
fn asked_with(server: &ChatServer, tool: &str) -> Vec<Received> {
    server
        .requests()
        .into_iter()
        .filter(|r| offered(r).iter().any(|t| t == tool))
        .collect()
}

const LOOKUP: &str = "hr__lookup_employee";
const REVOKE: &str = "hr__revoke_access";
const NOTICE: &str = "hr__send_notice";

/// Scripted agents for every task but the lookup (which the model does), E101 holding a
/// laptop.
const AFTER_LOOKUP: &str = r#"
answers:
  Task_return:
    tools: [{tool: hr.record_return, arguments: {employee_id: E101, item: laptop}, confirm: approve}]
    outputs: {laptop_returned: true}
  Task_revoke:
    tools: [{tool: hr.revoke_access, arguments: {employee_id: E101, reason: offboarding}, confirm: approve}]
    outputs: {access_revoked: true}
  Task_notify:
    tools: [{tool: hr.send_notice, arguments: {employee_id: E101, message: "Your access has ended."}, confirm: approve}]
    outputs: {notice_number: 1}
"#;

/// A lookup agent: the first turn calls `first`, the next turns answer from the result.
fn lookup_agent(r: &Received, calls: &[(&str, &str)]) -> Reply {
    let n = turns(r);
    if let Some((name, args)) = calls.get(n) {
        return Reply::tool_calls(&[(&format!("call_{n}"), name, args)]);
    }
    let result = last_result(r);
    let record: Value = serde_json::from_str(&result).unwrap_or(Value::Null);
    Reply::completion(
        &json!({
            "name": record["name"],
            "department": record["department"],
            "has_laptop": record["has_laptop"],
            "reason": "as the HR system says",
        })
        .to_string(),
    )
}

#[test]
fn a_model_looks_an_employee_up_and_the_result_feeds_its_outputs() {
    let hr = Hr::new().trusting();
    let model = ChatServer::start(|r| lookup_agent(r, &[(LOOKUP, r#"{"employee_id": "E101"}"#)]));
    let answers = hr.answers(AFTER_LOOKUP);
    let out = hr.cuga(
        &[
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E101",
            "--answers",
            answers.to_str().unwrap(),
        ],
        Some(&model),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "⚙ tool    Look up the employee: hr.lookup_employee {\"employee_id\":\"E101\"} → ok"
        ),
        "{stdout}"
    );

    // Offered exactly the task's two tools, each with the server's own schema.
    let first = &asked_with(&model, LOOKUP)[0];
    let mut names = offered(first);
    names.sort();
    assert_eq!(names, ["hr__list_employees", "hr__lookup_employee"]);
    let lock: Value = serde_json::from_str(
        &std::fs::read_to_string(
            hr.dir
                .path()
                .join("apps/hr_offboarding/config/tools.lock.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let locked = lock["sources"]["hr"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "lookup_employee")
        .unwrap();
    let sent = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == LOOKUP)
        .unwrap();
    assert_eq!(sent["function"]["parameters"], locked["input_schema"]);

    // The result went back to the model, and its answer to the variables.
    let second = &asked_with(&model, LOOKUP)[1];
    assert!(
        last_result(second).contains("Finance"),
        "{}",
        last_result(second)
    );
    let records = hr.records(&hr.only_run());
    let finished = events(&records, "run_finished");
    assert_eq!(finished[0]["variables"]["department"], "Finance");
    assert_eq!(finished[0]["variables"]["name"], "Marcus Olsen");

    // Journalled: the turn before the call, the call before it was made, its result after.
    let kinds: Vec<&str> = records
        .iter()
        .filter(|r| r["node"] == "Task_lookup")
        .filter_map(|r| r["event"].as_str())
        .filter(|e| e.starts_with("tool"))
        .collect();
    assert_eq!(
        kinds,
        ["tools_requested", "tool_call_started", "tool_called"]
    );
    let called = events(&records, "tool_called")[0];
    assert_eq!(called["outcome"], "ok");
    assert_eq!(called["tool"], "hr.lookup_employee");
    // Tool results are untrusted: so is what the model derived from them.
    let lookup = events(&records, "task_finished")
        .into_iter()
        .find(|r| r["node"] == "Task_lookup")
        .unwrap();
    assert!(
        lookup["taint"]["source"]
            .as_str()
            .unwrap()
            .contains("called tools"),
        "{lookup}"
    );
    assert_eq!(hr.count("lookup_employee"), 1);

    // A replay answers from the journal: no model, no tool called.
    let before = (model.count(), hr.calls().len());
    let id = hr.only_run();
    let replay = hr.cuga(&["runs", "replay", &id], None, &[]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay));
    assert_eq!(
        (model.count(), hr.calls().len()),
        before,
        "a replay calls nothing"
    );
    // Each call went through the task's governance again, answered from the record.
    let replayed = hr.records(&replay_id(&replay));
    let calls = events(&replayed, "tool_called");
    assert_eq!(calls.len(), events(&records, "tool_called").len());
    assert!(calls.iter().all(|c| c["replayed"] == true), "{calls:?}");
    assert_eq!(calls[0]["result"], called["result"]);
    assert!(events(&replayed, "tool_call_started").is_empty());

    // The config no longer lets the task call the tool: the replay drifts, naming the call.
    hr.edit_config(
        "tools: [hr.lookup_employee, hr.list_employees]",
        "tools: [hr.list_employees]",
    );
    let drifted = hr.cuga(&["runs", "replay", &id], None, &[]);
    assert_eq!(drifted.status.code(), Some(1), "{}", text(&drifted));
    let said = String::from_utf8_lossy(&drifted.stdout);
    assert!(
        said.contains(
            "`Task_lookup`: tool call drifted from the record: call 1, `hr.lookup_employee` {\"employee_id\":\"E101\"}, was ok and now would be refused"
        ),
        "{said}"
    );
    assert_eq!(
        (model.count(), hr.calls().len()),
        before,
        "a replay that drifts calls nothing either"
    );
}

#[test]
fn a_recorded_cassette_replays_tool_calls_without_making_them() {
    let hr = Hr::new().trusting();
    let model = ChatServer::start(|r| lookup_agent(r, &[(LOOKUP, r#"{"employee_id": "E101"}"#)]));
    let answers = hr.answers(AFTER_LOOKUP);
    let cassette = hr.dir.path().join("cassette.json");
    let out = hr.cuga(
        &[
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E101",
            "--answers",
            answers.to_str().unwrap(),
            "--record",
            cassette.to_str().unwrap(),
        ],
        Some(&model),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let lookup = &recorded["answers"]["Task_lookup"][0]["tools"][0];
    assert_eq!(lookup["tool"], "hr.lookup_employee");
    assert_eq!(lookup["recorded"]["outcome"], "ok");
    // The person's approval of the revocation is kept with it.
    assert_eq!(
        recorded["answers"]["Task_revoke"][0]["tools"][0]["confirm"],
        "approve"
    );

    let before = (model.count(), hr.calls().len());
    let replay = hr.cuga(
        &[
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E101",
            "--replay",
            cassette.to_str().unwrap(),
        ],
        None,
        &[],
    );
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay));
    assert_eq!(
        (model.count(), hr.calls().len()),
        before,
        "the cassette answers every call"
    );
    let said = String::from_utf8_lossy(&replay.stdout);
    assert!(
        said.contains("hr.revoke_access {\"employee_id\":\"E101\",\"reason\":\"offboarding\"} → ok (recorded, not called) (confirmed by"),
        "{said}"
    );
}

/// The id of the run a `runs replay` made.
fn replay_id(out: &Output) -> String {
    let said = String::from_utf8_lossy(&out.stdout);
    let at = said
        .find("replayed as `")
        .expect("the replay names its run")
        + "replayed as `".len();
    said[at..][..said[at..].find('`').unwrap()].to_string()
}

#[test]
fn a_tool_the_task_does_not_name_is_refused_and_a_tool_error_goes_back_to_the_model() {
    let hr = Hr::new().trusting();
    // First a tool the lookup task may not call, then a lookup of an unknown id (the
    // server's own error), then the right one.
    let model = ChatServer::start(|r| {
        lookup_agent(
            r,
            &[
                (REVOKE, r#"{"employee_id": "E101", "reason": "x"}"#),
                (LOOKUP, r#"{"employee_id": "E1O1"}"#),
                (LOOKUP, r#"{"employee_id": "E101"}"#),
            ],
        )
    });
    let answers = hr.answers(AFTER_LOOKUP);
    let out = hr.cuga(
        &[
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E101",
            "--answers",
            answers.to_str().unwrap(),
        ],
        Some(&model),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = hr.records(&hr.only_run());
    let lookup: Vec<&Value> = events(&records, "tool_called")
        .into_iter()
        .filter(|r| r["node"] == "Task_lookup")
        .collect();
    let outcomes: Vec<&str> = lookup
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["refused", "error", "ok"]);
    assert!(
        lookup[0]["result"]
            .as_str()
            .unwrap()
            .contains("not a tool this task may call")
    );
    assert!(
        lookup[1]["result"].as_str().unwrap().contains("E1O1"),
        "{}",
        lookup[1]
    );
    // What the model was told after each.
    let asked = asked_with(&model, LOOKUP);
    assert!(
        last_result(&asked[1]).starts_with("refused:"),
        "{}",
        last_result(&asked[1])
    );
    assert!(
        last_result(&asked[2]).starts_with("tool error:"),
        "{}",
        last_result(&asked[2])
    );
    // The refused tool never reached the server; the lookups did, both.
    assert_eq!(hr.count("revoke_access"), 1, "only the scripted revocation");
    assert_eq!(hr.count("lookup_employee"), 2);
    let first_revoke = hr
        .calls()
        .iter()
        .position(|(t, _)| t == "revoke_access")
        .unwrap();
    let last_lookup = hr
        .calls()
        .iter()
        .rposition(|(t, _)| t == "lookup_employee")
        .unwrap();
    assert!(
        first_revoke > last_lookup,
        "the refused call was not made: {:?}",
        hr.calls()
    );

    // Replayed, the refusal, the tool's error and the lookup come out the same, from the
    // record: nothing is called.
    let before = (model.count(), hr.calls().len());
    let replay = hr.cuga(&["runs", "replay", &hr.only_run()], None, &[]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay));
    assert_eq!((model.count(), hr.calls().len()), before);
    let again: Vec<String> = events(&hr.records(&replay_id(&replay)), "tool_called")
        .into_iter()
        .filter(|r| r["node"] == "Task_lookup")
        .map(|r| r["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(again, ["refused", "error", "ok"]);
}

#[test]
fn the_call_budget_spent_raises_budget_exhausted_which_a_boundary_catches() {
    let hr = Hr::new().trusting();
    // A model that never stops looking (max_tool_calls: 4 for the lookup task).
    let model = ChatServer::start(|r| {
        let n = turns(r);
        Reply::tool_calls(&[(&format!("call_{n}"), LOOKUP, r#"{"employee_id": "E101"}"#)])
    });
    let out = hr.cuga(
        &["start", "hr_offboarding", "--var", "employee_id=E101"],
        Some(&model),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = hr.records(&hr.only_run());
    let thrown = events(&records, "event_thrown");
    assert_eq!(thrown[0]["code"], "BUDGET_EXHAUSTED", "{thrown:?}");
    assert_eq!(thrown[0]["caught_by"], "Boundary_lookup_failed");
    let path: Vec<&str> = events(&records, "node_entered")
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        path,
        [
            "Start",
            "Task_lookup",
            "Boundary_lookup_failed",
            "Task_manual",
            "End_manual"
        ]
    );
    assert_eq!(
        hr.count("lookup_employee"),
        4,
        "four calls made, the fifth refused"
    );
    let last = *events(&records, "tool_called").last().unwrap();
    assert_eq!(last["outcome"], "budget");
}

#[test]
fn a_destructive_call_parks_for_a_person_who_approves_it_then_one_who_denies_it() {
    for decision in ["approve", "deny"] {
        let hr = Hr::new().trusting();
        // The revocation agent: it revokes, then says what came of it.
        let model = ChatServer::start(|r| {
            if turns(r) == 0 {
                return Reply::tool_calls(&[(
                    "call_r",
                    REVOKE,
                    r#"{"employee_id": "E102", "reason": "offboarding"}"#,
                )]);
            }
            let revoked = !last_result(r).starts_with("denied");
            Reply::completion(
                &json!({"access_revoked": revoked, "reason": last_result(r)}).to_string(),
            )
        });
        let answers = hr.answers(
            r#"
answers:
  Task_lookup:
    tools: [{tool: hr.lookup_employee, arguments: {employee_id: E102}}]
    outputs: {name: "Lena Brandt", department: Sales, has_laptop: false}
  Task_notify:
    outputs: {notice_number: 0}
"#,
        );
        let answers = answers.to_str().unwrap();
        let out = hr.cuga(
            &[
                "start",
                "hr_offboarding",
                "--var",
                "employee_id=E102",
                "--answers",
                answers,
            ],
            Some(&model),
            &[],
        );
        assert_eq!(out.status.code(), Some(3), "parked: {}", text(&out));
        assert_eq!(
            hr.count("revoke_access"),
            0,
            "not made before a person approves"
        );
        let id = hr.only_run();
        let pending = hr.cuga(&["runs", "pending"], None, &[]);
        let shown = String::from_utf8_lossy(&pending.stdout);
        assert!(shown.contains("hr.revoke_access"), "{shown}");
        assert!(shown.contains("E102"), "{shown}");
        let answer = hr.cuga(
            &[
                "runs",
                "answer",
                &id,
                "Task_revoke",
                decision,
                "--reason",
                "checked with HR",
                "--by",
                "dana",
            ],
            Some(&model),
            &[],
        );
        let records = hr.records(&id);
        let revoke = events(&records, "tool_called")
            .into_iter()
            .find(|r| r["tool"] == "hr.revoke_access")
            .cloned()
            .unwrap_or_else(|| panic!("no revoke record: {}", text(&answer)));
        assert_eq!(revoke["by"], "dana");
        // The model's first turn is continued, never asked again.
        let asked = asked_with(&model, REVOKE);
        assert_eq!(asked.len(), 2, "one turn before the park, one after");
        if decision == "approve" {
            assert_eq!(answer.status.code(), Some(0), "{}", text(&answer));
            assert_eq!(revoke["outcome"], "ok");
            assert_eq!(hr.count("revoke_access"), 1);
            let db: Value = serde_json::from_str(
                &std::fs::read_to_string(hr.dir.path().join("hr_db.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(db["employees"]["E102"]["status"], "revoked");
        } else {
            // Denied: not made; the model is told and answers that nothing was revoked,
            // post_execute raises, the boundary hands it to IT security.
            assert_eq!(answer.status.code(), Some(0), "{}", text(&answer));
            assert_eq!(revoke["outcome"], "denied");
            assert!(
                last_result(&asked[1]).contains("denied by dana"),
                "{}",
                last_result(&asked[1])
            );
            assert!(last_result(&asked[1]).contains("checked with HR"));
            assert_eq!(hr.count("revoke_access"), 0);
            let thrown = events(&records, "event_thrown");
            assert_eq!(thrown[0]["code"], "REVOCATION_INCOMPLETE");
            assert_eq!(thrown[0]["caught_by"], "Boundary_revocation");
        }
    }
}

/// The crash point `name`'s first number in a traced run of `args`.
fn crash_point(hr: &Hr, args: &[&str], model: &ChatServer, name: &str) -> u64 {
    let traced = hr.cuga(args, Some(model), &[("CUGA_FLO_CRASH_TRACE", "1".into())]);
    String::from_utf8_lossy(&traced.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("crash-point "))
        .find_map(|l| {
            let (n, point) = l.split_once(' ')?;
            (point == name).then(|| n.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no crash point `{name}`: {}", text(&traced)))
}

#[test]
fn a_crash_between_a_call_and_its_result_repeats_an_idempotent_call_once() {
    let model_for =
        || ChatServer::start(|r| lookup_agent(r, &[(LOOKUP, r#"{"employee_id": "E101"}"#)]));
    // Where the lookup's result arrives, before it is journalled.
    let probe = Hr::new().trusting();
    let answers = probe.answers(AFTER_LOOKUP);
    let args = [
        "start",
        "hr_offboarding",
        "--var",
        "employee_id=E101",
        "--answers",
        answers.to_str().unwrap(),
    ];
    // The first time a tool's result arrives (named, so that how many commits a busy
    // machine makes first does not move it).
    assert!(crash_point(&probe, &args, &model_for(), "tool answered") > 0);
    let at = "tool answered#1";

    let hr = Hr::new().trusting();
    let answers = hr.answers(AFTER_LOOKUP);
    let args = [
        "start",
        "hr_offboarding",
        "--var",
        "employee_id=E101",
        "--answers",
        answers.to_str().unwrap(),
    ];
    let model = model_for();
    let crashed = hr.cuga(
        &args,
        Some(&model),
        &[("CUGA_FLO_CRASH_AT", at.to_string())],
    );
    assert_ne!(crashed.status.code(), Some(0), "killed: {}", text(&crashed));
    assert_eq!(hr.count("lookup_employee"), 1, "made once before the crash");
    let id = hr.only_run();
    let resumed = hr.cuga(&["runs", "resume", &id], Some(&model), &[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    // Idempotent (read-only): repeated once on resume, and journalled so.
    assert_eq!(hr.count("lookup_employee"), 2);
    let records = hr.records(&id);
    let lookup: Vec<&Value> = events(&records, "tool_called")
        .into_iter()
        .filter(|r| r["tool"] == "hr.lookup_employee")
        .collect();
    assert_eq!(lookup.len(), 1);
    assert_eq!(lookup[0]["repeated"], true);
    // The model's turn that asked for it was not asked again.
    assert_eq!(
        asked_with(&model, LOOKUP).len(),
        2,
        "one turn before the crash, one after"
    );
}

#[test]
fn a_crash_between_a_call_and_its_result_parks_a_call_that_is_not_idempotent() {
    let notice = "hr.send_notice";
    let model_for = || {
        ChatServer::start(|r| {
            if turns(r) == 0 {
                return Reply::tool_calls(&[(
                    "call_n",
                    NOTICE,
                    r#"{"employee_id": "E102", "message": "Your access has ended."}"#,
                )]);
            }
            let number = serde_json::from_str::<Value>(&last_result(r))
                .ok()
                .and_then(|v| v["notice_number"].as_i64())
                .unwrap_or(0);
            Reply::completion(
                &json!({"notice_number": number, "reason": last_result(r)}).to_string(),
            )
        })
    };
    let scripted = r#"
answers:
  Task_lookup:
    tools: [{tool: hr.lookup_employee, arguments: {employee_id: E102}}]
    outputs: {name: "Lena Brandt", department: Sales, has_laptop: false}
  Task_revoke:
    tools: [{tool: hr.revoke_access, arguments: {employee_id: E102, reason: offboarding}, confirm: approve}]
    outputs: {access_revoked: true}
"#;
    let probe = Hr::new().trusting();
    let answers = probe.answers(scripted);
    let args = [
        "start",
        "hr_offboarding",
        "--var",
        "employee_id=E102",
        "--answers",
        answers.to_str().unwrap(),
    ];
    // The third `tool answered`: the lookup's, the revocation's, then the notice's.
    let traced = probe.cuga(
        &args,
        Some(&model_for()),
        &[("CUGA_FLO_CRASH_TRACE", "1".into())],
    );
    let points: Vec<u64> = String::from_utf8_lossy(&traced.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("crash-point "))
        .filter(|l| l.ends_with(" tool answered"))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(points.len(), 3, "{}", text(&traced));

    let hr = Hr::new().trusting();
    let answers = hr.answers(scripted);
    let args = [
        "start",
        "hr_offboarding",
        "--var",
        "employee_id=E102",
        "--answers",
        answers.to_str().unwrap(),
    ];
    let model = model_for();
    let crashed = hr.cuga(
        &args,
        Some(&model),
        // The third time a tool's result arrives, named: how many commits a busy machine
        // makes before it does not move the crash.
        &[("CUGA_FLO_CRASH_AT", "tool answered#3".to_string())],
    );
    assert_ne!(crashed.status.code(), Some(0), "{}", text(&crashed));
    assert_eq!(hr.count("send_notice"), 1);
    let id = hr.only_run();
    // Not idempotent: it may or may not have been made, so a person decides; nothing is
    // sent again meanwhile.
    let resumed = hr.cuga(&["runs", "resume", &id], Some(&model), &[]);
    assert_eq!(resumed.status.code(), Some(3), "parked: {}", text(&resumed));
    assert_eq!(hr.count("send_notice"), 1);
    let records = hr.records(&id);
    let parked = events(&records, "question_parked");
    let question = &parked.last().unwrap()["question"];
    assert_eq!(question["offered"]["tool"], notice, "{question}");
    assert!(
        question["offered"]["why"]
            .as_str()
            .unwrap()
            .contains("in flight"),
        "{question}"
    );
    // Denied: the agent is told it may have happened; still one notice.
    let answer = hr.cuga(
        &["runs", "answer", &id, "Task_notify", "deny", "--by", "dana"],
        Some(&model),
        &[],
    );
    assert_eq!(answer.status.code(), Some(0), "{}", text(&answer));
    assert_eq!(hr.count("send_notice"), 1);
    let told = last_result(asked_with(&model, NOTICE).last().unwrap());
    assert!(told.contains("may have been made"), "{told}");
}

/// The tickets server (the official MCP TypeScript SDK) on a free port with `token`.
struct Tickets {
    child: Child,
    url: String,
    log: PathBuf,
    _dir: TempDir,
}

impl Drop for Tickets {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Tickets {
    fn start(token: &str) -> Tickets {
        let dir = python::npm_packages(
            "mcp-js-server",
            "node_modules/@modelcontextprotocol/sdk/package.json",
        );
        let script = dir.join("server.mjs");
        std::fs::copy(
            python::interop_dir().join("mcp-js-server/server.mjs"),
            &script,
        )
        .unwrap();
        let logs = TempDir::new().unwrap();
        let log = logs.path().join("tickets.jsonl");
        let mut child = Command::new("node")
            .arg(&script)
            .arg("0")
            .env("TICKETS_TOKEN", token)
            .env("TICKETS_CALL_LOG", &log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let deadline = Instant::now() + Duration::from_secs(60);
        use std::io::BufRead;
        while !line.starts_with("listening ") && Instant::now() < deadline {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                break;
            }
        }
        let url = line
            .trim()
            .strip_prefix("listening ")
            .expect("the server's ready line")
            .to_string();
        Tickets {
            child,
            url,
            log,
            _dir: logs,
        }
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["tool"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }
}

#[test]
fn a_remote_mcp_server_over_streamable_http_with_a_bearer_token() {
    let token = "tickets-token-7d1e";
    let tickets = Tickets::start(token);
    let hr = Hr::new();
    // The notice task files a ticket too, on the TypeScript SDK's server.
    hr.edit_config(
        "mcp_servers:\n",
        &format!(
            "mcp_servers:\n  tickets:\n    url: {}\n    token_env: TICKETS_TOKEN\n",
            tickets.url
        ),
    );
    hr.edit_config(
        "tools: [hr.send_notice]",
        "tools: [hr.send_notice, tickets.*]",
    );
    let scenario_answers = hr.answers(
        r#"
answers:
  Task_lookup:
    tools: [{tool: hr.lookup_employee, arguments: {employee_id: E102}}]
    outputs: {name: "Lena Brandt", department: Sales, has_laptop: false}
  Task_revoke:
    tools: [{tool: hr.revoke_access, arguments: {employee_id: E102, reason: offboarding}, confirm: approve}]
    outputs: {access_revoked: true}
  Task_notify:
    tools:
      - {tool: tickets.create_ticket, arguments: {title: "Offboard E102", body: "collect badge", priority: normal}, confirm: approve}
      - {tool: tickets.close_ticket, arguments: {ticket_id: T-1, resolution: done}, confirm: approve}
    outputs: {notice_number: 0}
"#,
    );
    let env = [("TICKETS_TOKEN", token.to_string())];
    // What the server offers, over the session, as `tools` lists it.
    let listed = hr.cuga(&["tools", "hr_offboarding", "--json"], None, &env);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed));
    let doc: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let tickets_tools = doc["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == "tickets")
        .unwrap()["tools"]
        .clone();
    let close = tickets_tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "close_ticket")
        .unwrap();
    assert_eq!(close["destructive"], true);
    let out = hr.cuga(
        &[
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E102",
            "--answers",
            scenario_answers.to_str().unwrap(),
        ],
        None,
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(tickets.calls(), ["create_ticket", "close_ticket"]);
    let records = hr.records(&hr.only_run());
    let made: Vec<(String, String)> = events(&records, "tool_called")
        .iter()
        .map(|r| {
            (
                r["tool"].as_str().unwrap().to_string(),
                r["outcome"].as_str().unwrap().to_string(),
            )
        })
        .filter(|(t, _)| t.starts_with("tickets."))
        .collect();
    assert_eq!(
        made,
        [
            ("tickets.create_ticket".to_string(), "ok".to_string()),
            ("tickets.close_ticket".to_string(), "ok".to_string())
        ]
    );

    // A wrong token: the source cannot be reached; the task fails with TOOL_FAILED and
    // the token never shows.
    let hr2 = Hr::new();
    std::fs::copy(hr.config(), hr2.config()).unwrap();
    let wrong = "wrong-token-55aa";
    let out = hr2.cuga(
        &[
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E102",
            "--answers",
            scenario_answers.to_str().unwrap(),
        ],
        None,
        &[("TICKETS_TOKEN", wrong.to_string())],
    );
    let all = text(&out);
    assert!(all.contains("TOOL_FAILED"), "{all}");
    assert!(!all.contains(wrong), "the token leaked: {all}");
    let records = hr2.records(&hr2.only_run());
    assert!(!serde_json::to_string(&records).unwrap().contains(wrong));
}

#[test]
fn an_http_api_described_by_openapi_is_called_through_its_operations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = TempDir::new().unwrap();
    copy_dir(
        &root.join("applications/credit_check"),
        &dir.path().join("apps/credit_check"),
    );
    let log = dir.path().join("bureau.jsonl");
    let token = "bureau-token-31c9";
    let mut bureau = Command::new("python3")
        .arg(root.join("applications/credit_check/servers/credit_bureau.py"))
        .arg("0")
        .env("BUREAU_TOKEN", token)
        .env("BUREAU_CALL_LOG", &log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(bureau.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().strip_prefix("listening ").unwrap().to_string();
    let config = dir
        .path()
        .join("apps/credit_check/config/credit_check_config.yaml");
    let text_ = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text_.replace("http://127.0.0.1:8086", &url)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("BUREAU_TOKEN", token)
        .args([
            "--apps-dir",
            "apps",
            "test",
            "credit_check",
            "--run-dir",
            "state",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = bureau.kill();
    let _ = bureau.wait();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("2 passed, 0 failed, 0 skipped"), "{stdout}");
    let requests: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ops: Vec<(&str, i64)> = requests
        .iter()
        .map(|r| {
            (
                r["operation"].as_str().unwrap_or_default(),
                r["status"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    assert!(ops.contains(&("getCreditScore", 200)), "{ops:?}");
    assert!(ops.contains(&("createReport", 201)), "{ops:?}");
    assert!(ops.contains(&("getCreditScore", 404)), "{ops:?}");
}

#[test]
fn the_demo_scenarios_call_the_hr_servers_tools() {
    let hr = Hr::new();
    let out = hr.cuga(&["test", "hr_offboarding"], None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("3 passed, 0 failed, 0 skipped"), "{stdout}");
    let tools: Vec<String> = hr.calls().into_iter().map(|(t, _)| t).collect();
    for tool in [
        "lookup_employee",
        "record_return",
        "revoke_access",
        "send_notice",
    ] {
        assert!(
            tools.iter().any(|t| t == tool),
            "{tool} not called: {tools:?}"
        );
    }
    // The denied revocation was not made: E102 keeps its access.
    let db: Value =
        serde_json::from_str(&std::fs::read_to_string(hr.dir.path().join("hr_db.json")).unwrap())
            .unwrap();
    assert_eq!(db["employees"]["E102"]["status"], "active");
    assert_eq!(db["employees"]["E101"]["status"], "revoked");
}

#[test]
fn validate_checks_tools_against_the_declared_sources_and_the_lock() {
    let hr = Hr::new();
    hr.edit_config(
        "tools: [hr.lookup_employee, hr.list_employees]",
        "tools: [hr.lookup_employe, hrr.list_employees, web_search]",
    );
    hr.edit_config(
        "    timeout: 30s\n",
        "    timeout: 30s\n    tools:\n      send_notice: {confirm: never}\n",
    );
    // A post_execute rule that sets what is no output of its task (a typo).
    hr.edit_config(
        "          because: \"access was not revoked; IT security takes over\"",
        "          because: \"access was not revoked; IT security takes over\"\n        - when: \"${access_revoked} == true\"\n          set: {acces_revoked: true}",
    );
    let out = hr.cuga(&["validate", "hr_offboarding", "--json"], None, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let diagnostics = doc["targets"][0]["diagnostics"].as_array().unwrap();
    let found: Vec<(String, String, String)> = diagnostics
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
                d["help"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let has = |code: &str, needle: &str| {
        found
            .iter()
            .any(|(c, m, h)| c == code && (m.contains(needle) || h.contains(needle)))
    };
    assert!(
        has("ref::unknown_tool", "did you mean `hr.lookup_employee`"),
        "{found:?}"
    );
    assert!(
        has("ref::unknown_tool_source", "did you mean `hr`"),
        "{found:?}"
    );
    assert!(has("config::ignored", "web_search"), "{found:?}");
    assert!(has("tools::never_confirmed", "hr.send_notice"), "{found:?}");
    assert!(
        has("ref::unknown_name", "did you mean `access_revoked`"),
        "{found:?}"
    );
    // Every finding points at its line.
    for d in diagnostics {
        assert!(d["line"].as_u64().is_some(), "{d}");
    }
}

/// A run that parks mid-visit (a call made, the next waiting for a person) and is then
/// resumed by a host that is not `start` (a `serve` holding it, a parent run resuming its
/// child: the engine alone, given the journal): the engine has the harness restore the
/// visit (`ControlPoints::resuming`), so the call made before the park is not made again.
#[test]
fn a_run_resumed_by_the_engine_alone_never_repeats_a_call_its_visit_made() {
    use cuga_flo::app::{load_app, registry::app_from_config};
    use cuga_flo::engine::WorkflowEngine;
    use cuga_flo::engine::native::NativeEngine;
    use cuga_flo::harness::FlowAgent;
    use cuga_flo::journal::Durability;
    use cuga_flo::journal::store::Journal;
    use cuga_flo::reason::ScriptedReasoner;
    use cuga_flo::tools::Toolbox;
    use std::sync::Arc;

    let hr = Hr::new().trusting();
    hr.edit_config(
        "tools: [hr.revoke_access]",
        "tools: [hr.send_notice, hr.revoke_access]",
    );
    // The revocation agent tells the employee, then revokes (destructive: a person
    // confirms). The first run has nobody to confirm: it parks after the notice.
    let script = |confirm: &str| {
        format!(
            r#"
answers:
  Task_lookup:
    tools: [{{tool: hr.lookup_employee, arguments: {{employee_id: E102}}}}]
    outputs: {{name: "Lena Brandt", department: Sales, has_laptop: false}}
  Task_revoke:
    tools:
      - {{tool: hr.send_notice, arguments: {{employee_id: E102, message: "Your access ends today."}}}}
      - {{tool: hr.revoke_access, arguments: {{employee_id: E102, reason: offboarding}}{confirm}}}
    outputs: {{access_revoked: true}}
  Task_notify:
    outputs: {{notice_number: 1}}
"#
        )
    };
    let first = hr.answers(&script(""));
    let out = hr.cuga(
        &[
            "start",
            "hr_offboarding",
            "--var",
            "employee_id=E102",
            "--answers",
            first.to_str().unwrap(),
        ],
        None,
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "parked: {}", text(&out));
    assert_eq!(hr.count("send_notice"), 1);
    assert_eq!(hr.count("revoke_access"), 0);
    let id = hr.only_run();

    // Resumed in this process, as `serve` resumes a run it holds: the journal reopened,
    // the request built from it, the native engine given the app's harness.
    let then = hr.answers(&script(", confirm: approve"));
    let reasoner = ScriptedReasoner::from_file(&then).unwrap();
    let loaded = load_app(&app_from_config(&hr.config()));
    // The HR server's environment, given to the tool sources (not set in this process).
    let env: std::collections::HashMap<&str, String> = [
        (
            "PATH",
            format!(
                "{}:{}",
                venv_bin().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        ),
        (
            "HR_DB",
            hr.dir.path().join("hr_db.json").display().to_string(),
        ),
        ("HR_CALL_LOG", hr.log().display().to_string()),
    ]
    .into_iter()
    .collect();
    let toolbox = Toolbox::of(loaded.config.as_ref().unwrap())
        .with_env(Arc::new(move |k: &str| env.get(k).cloned()));
    let agent = Arc::new(
        FlowAgent::new(&loaded, Arc::new(reasoner))
            .unwrap()
            .with_toolbox(Arc::new(toolbox)),
    );
    let dir = hr.run_dir().join("runs").join(&id);
    let (journal, read) = Journal::open(&dir, Durability::Off).unwrap();
    let journal = Arc::new(journal);
    agent.journal_remote_tasks(journal.clone());
    let request = cuga_flo::mcp::resumed_request(
        &id,
        "hr_offboarding_v1",
        Arc::new(agent.process().unwrap().clone()),
        agent.annotations(),
        read.records,
    )
    .unwrap();
    let outcome = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(NativeEngine::new().run(request, agent.clone(), journal.clone()))
        .unwrap();
    assert_eq!(
        outcome.status,
        cuga_flo::vocab::RunStatus::Completed,
        "{outcome:?}"
    );
    assert_eq!(hr.count("send_notice"), 1, "the notice is never sent twice");
    assert_eq!(hr.count("revoke_access"), 1);
}

/// A destructive tool call a person confirms from the web console: the run an answers
/// file drives asks before `hr.revoke_access`, the question parks, the tasklist shows the
/// call with its arguments and approve/deny, and approving it there makes the call once,
/// journalled with who confirmed it; the run then completes.
#[test]
fn a_tool_call_is_confirmed_from_the_web_console() {
    use crate::support::http;
    let hr = Hr::new();
    let answers = hr.answers(
        "answers:\n  Task_lookup:\n    tools:\n      - {tool: hr.lookup_employee, arguments: {employee_id: E101}}\n    outputs: {name: \"Marcus Olsen\", department: Finance, has_laptop: true}\n  Task_return:\n    tools:\n      - {tool: hr.record_return, arguments: {employee_id: E101, item: laptop}, confirm: approve}\n    outputs: {laptop_returned: true}\n  Task_revoke:\n    tools:\n      - {tool: hr.revoke_access, arguments: {employee_id: E101, reason: offboarding}}\n    outputs: {access_revoked: true}\n  Task_notify:\n    tools:\n      - {tool: hr.send_notice, arguments: {employee_id: E101, message: done}, confirm: approve}\n    outputs: {notice_number: 1}\n",
    );
    let path = format!(
        "{}:{}",
        venv_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (mut child, said) = crate::support::listener::announced(
        Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
            .current_dir(hr.dir.path())
            .env("NO_COLOR", "1")
            .env("PATH", path)
            .env("USER", "officer")
            .env("HR_DB", hr.dir.path().join("hr_db.json"))
            .env("HR_CALL_LOG", hr.log())
            .args([
                "serve",
                "--ui",
                "127.0.0.1:0",
                "hr_offboarding",
                "--apps-dir",
            ])
            .arg(hr.dir.path().join("apps"))
            .arg("--run-dir")
            .arg(hr.run_dir())
            .arg("--answers")
            .arg(&answers)
            .stderr(Stdio::null()),
        1,
    );
    let url = said[0].strip_prefix("listening ").unwrap().to_string();
    let csrf = |page: &str| {
        let at = page.find("name=\"csrf\" value=\"").unwrap() + 19;
        page[at..at + 64].to_string()
    };
    let form = http::get(&format!("{url}/start/hr_offboarding"), &[]).body;
    let r = http::post_form(
        &format!("{url}/start/hr_offboarding"),
        &[],
        &[("csrf", &csrf(&form)), ("var.employee_id", "E101")],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let run = r.header("location").unwrap()["/runs/".len()..]
        .split('?')
        .next()
        .unwrap()
        .to_string();
    let journal = |run: &str| -> Vec<Value> {
        std::fs::read_to_string(hr.run_dir().join("runs").join(run).join("journal.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    let until = |what: &str, done: &dyn Fn(&[Value]) -> bool| {
        let started = Instant::now();
        loop {
            let j = journal(&run);
            if done(&j) {
                return j;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "never {what}: {j:#?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let j = until("asked to confirm the revocation", &|j| {
        j.iter().any(|r| {
            r["event"] == "question_parked" && r["question"]["offered"]["type"] == "tool_call"
        }) && j.last().is_some_and(|r| r["event"] == "run_waiting")
    });
    let question = j.iter().find(|r| r["event"] == "question_parked").unwrap()["question"].clone();
    assert_eq!(
        hr.count("revoke_access"),
        0,
        "not made before a person confirms it"
    );
    let page = http::get(&format!("{url}/tasks"), &[]).body;
    assert!(
        page.contains("The agent asks to call <code>hr.revoke_access</code>"),
        "{page}"
    );
    assert!(
        page.contains("value=\"approve\"") && page.contains("value=\"deny\""),
        "{page}"
    );
    let r = http::post_form(
        &format!("{url}/runs/{run}/answer"),
        &[],
        &[
            ("csrf", &csrf(&page)),
            ("key", question["key"].as_str().unwrap()),
            ("decision", "approve"),
            ("reason", "offboarding confirmed with HR"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let j = until("completed", &|j| {
        j.last().is_some_and(|r| r["event"] == "run_finished")
    });
    assert_eq!(j.last().unwrap()["status"], "completed", "{j:#?}");
    assert_eq!(hr.count("revoke_access"), 1, "made once");
    let called = j
        .iter()
        .find(|r| r["event"] == "tool_called" && r["tool"] == "hr.revoke_access")
        .unwrap();
    assert_eq!(called["by"], "officer", "{called}");
    let _ = child.kill();
    let _ = child.wait();
}
