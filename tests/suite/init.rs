//! `cuga-flo init`: every template makes an app that validates with no finding, whose
//! scenarios pass, and whose BPMN carries a diagram for every node and flow; names are
//! checked and existing folders are never touched.

use std::path::Path;

use assert_cmd::Command;
use quick_xml::Reader;
use quick_xml::events::Event;

const TEMPLATES: [&str; 3] = ["approval", "triage", "blank"];

fn cuga(apps: &Path) -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_LLM_MODEL")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .current_dir(apps)
        .args(["--apps-dir".as_ref(), apps.as_os_str()]);
    cmd
}

fn stdout_of(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.code() == Some(code),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The files under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn every_template_validates_with_no_finding_and_its_scenarios_pass() {
    for template in TEMPLATES {
        let apps = tempfile::tempdir().unwrap();
        let app = format!("my_{template}");
        let out = stdout_of(
            cuga(apps.path()).args(["init", &app, "--template", template]),
            0,
        );
        assert!(
            out.contains(&format!("created app `{app}` ({template} template)")),
            "{out}"
        );
        assert!(out.contains(&format!("test {app}")), "{out}");
        let written = files(&apps.path().join(&app));
        for f in [
            format!("config/{app}_config.yaml"),
            format!("config/{app}.bpmn"),
            "README.md".into(),
        ] {
            assert!(written.contains(&f), "{template}: no {f} in {written:?}");
        }
        assert!(written.iter().any(|f| f.starts_with("policies/")));
        assert!(written.iter().any(|f| f.starts_with("scenarios/")));
        // nothing left beside it
        assert_eq!(files(apps.path()).len(), written.len(), "{template}");
        assert!(
            !written
                .iter()
                .any(|f| f.contains("{{") || f.contains("{app}")),
            "{written:?}"
        );
        for f in &written {
            let text = std::fs::read_to_string(apps.path().join(&app).join(f)).unwrap();
            assert!(
                !text.contains("{{"),
                "{template}: a placeholder is left in {f}"
            );
        }

        // --strict fails on warnings too: 0 errors, 0 warnings
        let out = stdout_of(cuga(apps.path()).args(["validate", "--strict", &app]), 0);
        assert!(out.contains("is valid"), "{template}: {out}");
        let out = stdout_of(cuga(apps.path()).args(["test", &app]), 0);
        assert!(out.contains(" 0 failed"), "{template}: {out}");
        assert!(!out.contains(" 0 passed"), "{template}: {out}");
    }
}

#[test]
fn the_approval_and_triage_templates_decide_by_rule() {
    let apps = tempfile::tempdir().unwrap();
    for template in ["approval", "triage"] {
        stdout_of(
            cuga(apps.path()).args(["init", template, "--template", template]),
            0,
        );
        let policies = apps.path().join(template).join("policies");
        let mut rules = 0;
        for e in std::fs::read_dir(&policies).unwrap().flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap();
            rules += cuga_flo::reason::rules::parse_rules(&text).unwrap().len();
        }
        assert!(rules >= 2, "{template}: {rules} rules");
    }
    // a rule decides: the journal says so
    let out = stdout_of(
        cuga(apps.path()).args(["start", "approval", "--scenario", "blocked", "--json"]),
        0,
    );
    assert!(out.contains("\"decided_by\":\"rule\""), "{out}");
    let out = stdout_of(
        cuga(apps.path()).args(["start", "triage", "--scenario", "outage", "--json"]),
        0,
    );
    assert!(out.contains("\"decided_by\":\"rule\""), "{out}");
}

/// Every flow node has a BPMNShape with bounds, every sequence flow a BPMNEdge with two or
/// more waypoints, all in one plane of the process: Camunda Modeler opens it laid out.
#[test]
fn every_template_model_has_a_diagram_for_every_node_and_flow() {
    for template in TEMPLATES {
        let apps = tempfile::tempdir().unwrap();
        stdout_of(
            cuga(apps.path()).args(["init", "shop", "--template", template]),
            0,
        );
        let path = apps.path().join("shop/config/shop.bpmn");
        let bytes = std::fs::read(&path).unwrap();
        let doc = cuga_flo::bpmn::parse(&path, &bytes).unwrap();
        let process = &doc.processes[0];
        assert_eq!(process.id, "Process_shop");

        let text = String::from_utf8(bytes).unwrap();
        let mut reader = Reader::from_str(&text);
        let mut shapes: Vec<(String, bool)> = Vec::new(); // (element, has bounds)
        let mut edges: Vec<(String, usize)> = Vec::new(); // (element, waypoints)
        let mut plane = None;
        let mut in_shape = false;
        let mut depth_label = 0;
        loop {
            match reader.read_event().unwrap() {
                Event::Eof => break,
                Event::Start(e) | Event::Empty(e) => {
                    let attr = |name: &str| {
                        e.attributes()
                            .flatten()
                            .find(|a| a.key.as_ref() == name)
                            .map(|a| a.value.to_string())
                    };
                    match e.name().as_ref() {
                        "bpmndi:BPMNPlane" => plane = attr("bpmnElement"),
                        "bpmndi:BPMNShape" => {
                            shapes.push((attr("bpmnElement").unwrap(), false));
                            in_shape = true;
                        }
                        "bpmndi:BPMNEdge" => {
                            edges.push((attr("bpmnElement").unwrap(), 0));
                            in_shape = false;
                        }
                        "bpmndi:BPMNLabel" => depth_label += 1,
                        "dc:Bounds" if in_shape && depth_label == 0 => {
                            let n = |k| attr(k).unwrap().parse::<f64>().unwrap();
                            assert!(n("width") > 0.0 && n("height") > 0.0);
                            assert!(n("x") >= 0.0 && n("y") >= 0.0);
                            shapes.last_mut().unwrap().1 = true;
                        }
                        "di:waypoint" => edges.last_mut().unwrap().1 += 1,
                        _ => {}
                    }
                }
                Event::End(e) => match e.name().as_ref() {
                    "bpmndi:BPMNLabel" => depth_label -= 1,
                    "bpmndi:BPMNShape" => in_shape = false,
                    _ => {}
                },
                _ => {}
            }
        }
        assert_eq!(plane.as_deref(), Some("Process_shop"), "{template}");
        for node in &process.nodes {
            assert!(
                shapes.iter().any(|(id, bounds)| id == &node.id && *bounds),
                "{template}: node {} has no shape with bounds",
                node.id
            );
        }
        for flow in &process.flows {
            assert!(
                edges.iter().any(|(id, n)| id == &flow.id && *n >= 2),
                "{template}: flow {} has no edge with waypoints",
                flow.id
            );
        }
        assert_eq!(shapes.len(), process.nodes.len(), "{template}");
        assert_eq!(edges.len(), process.flows.len(), "{template}");
    }
}

#[test]
fn an_existing_folder_is_never_touched() {
    let apps = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(apps.path().join("taken")).unwrap();
    std::fs::write(apps.path().join("taken/notes.txt"), "mine").unwrap();
    let out = cuga(apps.path())
        .args(["init", "taken"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("already exists; nothing was written"), "{err}");
    assert_eq!(files(apps.path()), ["taken/notes.txt"]);
    // an empty folder too (a rename onto it would succeed)
    std::fs::create_dir(apps.path().join("empty")).unwrap();
    cuga(apps.path()).args(["init", "empty"]).assert().code(1);
    assert!(files(&apps.path().join("empty")).is_empty());
}

#[test]
fn a_name_that_is_not_a_folder_safe_identifier_is_refused() {
    let apps = tempfile::tempdir().unwrap();
    for name in [
        "",
        "9lives",
        "../escape",
        "a/b",
        "with space",
        "x\"y",
        "é",
        "_x",
        "-x",
    ] {
        let out = cuga(apps.path())
            .args(["init", "--", name])
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("cannot create app"), "{name}: {err}");
    }
    let long = "a".repeat(65);
    cuga(apps.path()).args(["init", &long]).assert().code(2);
    assert!(files(apps.path()).is_empty());
    // the apps folder is made when missing; `-` and digits are fine
    let nested = apps.path().join("new/apps");
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.args(["--apps-dir".as_ref(), nested.as_os_str()])
        .args(["init", "Expense-claims2", "--template", "blank"])
        .assert()
        .success();
    assert!(
        nested
            .join("Expense-claims2/config/Expense-claims2_config.yaml")
            .is_file()
    );
    let config =
        std::fs::read_to_string(nested.join("Expense-claims2/config/Expense-claims2_config.yaml"))
            .unwrap();
    assert!(config.contains("name: \"Expense claims2\""), "{config}");
}

#[test]
fn a_template_that_is_not_one_is_a_usage_error() {
    let apps = tempfile::tempdir().unwrap();
    let out = cuga(apps.path())
        .args(["init", "x", "--template", "fancy"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("approval") && err.contains("triage") && err.contains("blank"),
        "{err}"
    );
    assert!(files(apps.path()).is_empty());
}
