//! What a person sees before a run: `describe` (each control point, who decides there,
//! who answers) and `graph` (the flow as Mermaid, Graphviz dot or an indented listing),
//! on the repo's demo apps and on a model whose names are hostile to every format.

use crate::support;

use assert_cmd::Command;
use serde_json::Value;

fn cuga() -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_LLM_BASE_URL")
        .env_remove("CUGA_FLO_LLM_MODEL")
        .env_remove("CUGA_FLO_LLM_API_KEY")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

fn stdout_of(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn describe_loan_approval() {
    let out = stdout_of(cuga().args(["describe", "loan_approval"]), 0);
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    insta::assert_snapshot!("describe_loan_approval", out);
}

#[test]
fn describe_receive_order() {
    let out = stdout_of(cuga().args(["describe", "receive_order"]), 0);
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    insta::assert_snapshot!("describe_receive_order", out);
}

#[test]
fn describe_json_is_one_document() {
    let out = stdout_of(cuga().args(["describe", "loan_approval", "--json"]), 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    insta::assert_snapshot!(
        "describe_loan_approval_json",
        serde_json::to_string_pretty(&doc).unwrap()
    );
    // The hook on the approve flow, by name and id, with its permissions.
    let hook = &doc["hooks"][1];
    assert_eq!(hook["flow"], "Flow_0ybszcv");
    assert_eq!(hook["source"]["name"], "Credit sufficient?");
    assert_eq!(hook["target"]["name"], "Grant loan");
    assert_eq!(
        hook["permissions"]["allowed_targets"][0]["id"],
        "Activity_131ar38"
    );
    assert_eq!(hook["permissions"]["may_set"][0], "rejection_reason");
    let chain: Vec<&str> = (doc["judgement"].as_array().unwrap().iter())
        .map(|a| a["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        chain,
        ["rules", "scenario", "model", "remote", "person", "park"]
    );
}

#[test]
fn describe_names_the_model_from_the_environment() {
    let out = stdout_of(
        cuga()
            .args(["describe", "receive_order", "--json"])
            .env("CUGA_FLO_LLM_BASE_URL", "http://user:secret@127.0.0.1:1/v1")
            .env("CUGA_FLO_LLM_MODEL", "tiny"),
        0,
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    let model = &doc["judgement"][2];
    assert_eq!(model["active"], true, "{model}");
    let detail = model["detail"].as_str().unwrap();
    assert!(detail.contains("tiny"), "{detail}");
    assert!(!detail.contains("secret"), "{detail}");
}

#[test]
fn describe_refuses_a_lone_model_and_an_unknown_app() {
    cuga()
        .args(["describe", "tests/fixtures/bpmn-corpus"])
        .assert()
        .code(2);
    cuga()
        .args(["describe", "loan_aproval"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("did you mean `loan_approval`"));
}

#[test]
fn graph_formats_of_loan_approval() {
    for format in ["mermaid", "dot", "ascii"] {
        let out = stdout_of(
            cuga().args(["graph", "loan_approval", "--format", format]),
            0,
        );
        insta::assert_snapshot!(format!("graph_loan_approval_{format}"), out);
    }
    // mermaid is the default
    assert_eq!(
        stdout_of(cuga().args(["graph", "loan_approval"]), 0),
        stdout_of(
            cuga().args(["graph", "loan_approval", "--format", "mermaid"]),
            0
        )
    );
}

/// A model whose every name is hostile to the formats: quotes, brackets, a newline,
/// `<`, `>`, `&`, a backslash, Mermaid's `#` entities and arrows; with a sub-process and
/// a boundary event.
fn hostile_model() -> String {
    let evil =
        "Evil &quot;]) --&gt; x{{&lt;b&gt;&amp;amp;&lt;/b&gt;|`#quot; \\N [[&#10;}} ;&quot; end";
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
  <bpmn:process id="P" name="{evil}" isExecutable="true">
    <bpmn:startEvent id="S" name="{evil}"/>
    <bpmn:task id="A" name="{evil}"/>
    <bpmn:boundaryEvent id="B" name="{evil}" attachedToRef="A"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:boundaryEvent>
    <bpmn:exclusiveGateway id="G" name="{evil}" default="f4"/>
    <bpmn:subProcess id="Sub" name="{evil}">
      <bpmn:startEvent id="S2"/>
      <bpmn:task id="C" name="{evil}"/>
      <bpmn:endEvent id="E2"/>
      <bpmn:sequenceFlow id="s1" sourceRef="S2" targetRef="C"/>
      <bpmn:sequenceFlow id="s2" sourceRef="C" targetRef="E2"/>
    </bpmn:subProcess>
    <bpmn:endEvent id="E" name="{evil}"/>
    <bpmn:sequenceFlow id="f1" name="{evil}" sourceRef="S" targetRef="A"/>
    <bpmn:sequenceFlow id="f2" sourceRef="A" targetRef="G"/>
    <bpmn:sequenceFlow id="f3" sourceRef="G" targetRef="Sub"><bpmn:conditionExpression>${{x &lt; 1 &amp;&amp; y == "]"}}</bpmn:conditionExpression></bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="f4" sourceRef="G" targetRef="E"/>
    <bpmn:sequenceFlow id="f5" sourceRef="Sub" targetRef="E"/>
    <bpmn:sequenceFlow id="f6" sourceRef="B" targetRef="E"/>
  </bpmn:process>
</bpmn:definitions>
"#
    )
}

/// Outside Mermaid's `"..."` labels, brackets balance and no quote is left open.
fn assert_mermaid_well_formed(text: &str) {
    for line in text.lines() {
        assert_eq!(
            line.matches('"').count() % 2,
            0,
            "unbalanced quotes: {line}"
        );
        let mut depth: i64 = 0;
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                '[' | '(' | '{' if !quoted => depth += 1,
                ']' | ')' | '}' if !quoted => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0, "a bracket closes too early: {line}");
        }
        assert_eq!(depth, 0, "unbalanced brackets: {line}");
        // Inside labels, nothing Mermaid reads as syntax.
        for label in line.split('"').skip(1).step_by(2) {
            for bad in ['[', ']', '{', '}', '(', ')', '<', '>', '|', '`'] {
                assert!(!label.contains(bad), "{bad:?} in label {label:?}");
            }
        }
    }
    assert!(
        text.lines().filter(|l| l.trim() == "end").count() == 1,
        "{text}"
    );
}

#[test]
fn hostile_names_never_break_the_formats() {
    let app = support::TestApp::new(&hostile_model(), "");
    let model = app.path().join("config/model.bpmn");
    let run = |format: &str| {
        stdout_of(
            cuga().arg("graph").arg(&model).args(["--format", format]),
            0,
        )
    };

    let mermaid = run("mermaid");
    assert_mermaid_well_formed(&mermaid);
    assert!(mermaid.contains("subgraph"), "{mermaid}");
    assert!(
        mermaid.contains(" -.- "),
        "the boundary event hangs off its task: {mermaid}"
    );
    assert!(mermaid.contains("#34;"), "{mermaid}");

    let dot = run("dot");
    // Every quote inside a string is escaped: unescaped quotes pair up on each line.
    for line in dot.lines() {
        let bare = line.replace("\\\\", "").replace("\\\"", "");
        assert_eq!(bare.matches('"').count() % 2, 0, "{line}");
    }
    assert!(dot.contains("subgraph cluster_"), "{dot}");
    assert!(dot.contains("style=dashed, arrowhead=none"), "{dot}");
    assert!(dot.contains("\\\\N"), "a backslash is escaped: {dot}");
    assert_dot_parses(&dot);

    let ascii = run("ascii");
    assert!(ascii.lines().count() > 5, "{ascii}");
    assert!(
        ascii.contains("on boundary:") && ascii.contains("inside:"),
        "{ascii}"
    );
    // One line per entry: the name's newline is flattened.
    assert!(!ascii.contains("\n}}"), "{ascii}");
}

/// `dot -Tsvg` reads the graph, when Graphviz is installed.
fn assert_dot_parses(dot: &str) {
    use std::io::Write;
    let child = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("skipped: Graphviz `dot` is not installed, so the dot output is not parsed");
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "dot refused the graph: {}\n{dot}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn demo_dot_parses() {
    let dot = stdout_of(
        cuga().args(["graph", "receive_order", "--format", "dot"]),
        0,
    );
    assert_dot_parses(&dot);
    let mermaid = stdout_of(cuga().args(["graph", "receive_order"]), 0);
    assert!(
        mermaid.contains("⚑"),
        "the hooked flow is marked: {mermaid}"
    );
}

#[test]
fn describe_names_the_remote_people_a_gateway_or_hook_consults() {
    let out = stdout_of(
        cuga().args(["describe", "--json", "tests/fixtures/apps/remote_consult"]),
        0,
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    let remote = doc["judgement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["source"] == "remote")
        .expect("a remote link in the judgement chain");
    assert_eq!(remote["active"], true, "{remote}");
    let detail = remote["detail"].as_str().unwrap();
    assert!(detail.contains("Gateway_shipping → advisor"), "{detail}");
    // In the order the chain asks: after the model, before the person at the terminal.
    let order: Vec<&str> = (doc["judgement"].as_array().unwrap().iter())
        .map(|a| a["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["rules", "scenario", "model", "remote", "person", "park"]
    );
    let plain = stdout_of(cuga().args(["describe", "receive_order", "--json"]), 0);
    let doc: Value = serde_json::from_str(&plain).unwrap();
    assert!(
        (doc["judgement"].as_array().unwrap().iter())
            .any(|a| a["source"] == "remote" && a["active"] == false)
    );
}
