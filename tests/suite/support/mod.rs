//! Helpers for tests: small apps written into a temporary folder.
#![allow(dead_code)]

pub mod a2a;
pub mod a2a_served;
pub mod chat_server;
pub mod flowable;
pub mod fuseki;
pub mod http;
pub mod kogito;
pub mod listener;
pub mod postgres;
pub mod python;
pub mod runs;
pub mod slow_model;
pub mod telemetry;
pub mod webdriver;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use cuga_flo::app::{load_app, registry::app_at};
use cuga_flo::check::check_app;
use cuga_flo::diag::{Diagnostic, Severity};

/// A BPMN model from a compact description: nodes as `(kind, id)` where kind is the
/// element's local name (optionally with attributes, e.g. `exclusiveGateway default="f3"`),
/// flows as `(id, source, target, condition)` with an empty condition for none.
pub fn bpmn(nodes: &[(&str, &str)], flows: &[(&str, &str, &str, &str)]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<bpmn:definitions xmlns:bpmn=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\" targetNamespace=\"t\">\n  <bpmn:process id=\"P\" isExecutable=\"true\">\n",
    );
    for (kind, id) in nodes {
        let (tag, attrs) = kind.split_once(' ').unwrap_or((kind, ""));
        xml.push_str(&format!("    <bpmn:{tag} id=\"{id}\" {attrs}/>\n"));
    }
    for (id, source, target, cond) in flows {
        if cond.is_empty() {
            xml.push_str(&format!("    <bpmn:sequenceFlow id=\"{id}\" sourceRef=\"{source}\" targetRef=\"{target}\"/>\n"));
        } else {
            xml.push_str(&format!(
                "    <bpmn:sequenceFlow id=\"{id}\" sourceRef=\"{source}\" targetRef=\"{target}\"><bpmn:conditionExpression>{}</bpmn:conditionExpression></bpmn:sequenceFlow>\n",
                cond.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
            ));
        }
    }
    xml.push_str("  </bpmn:process>\n</bpmn:definitions>\n");
    xml
}

/// start → A → B → end
pub fn linear() -> String {
    bpmn(
        &[
            ("startEvent", "S"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "A", ""),
            ("f2", "A", "B", ""),
            ("f3", "B", "E", ""),
        ],
    )
}

/// A temporary app: `<tmp>/demo/config/demo_config.yaml` + `model.bpmn`, policies in
/// `<tmp>/demo/policies/`.
pub struct TestApp {
    pub dir: tempfile::TempDir,
}

impl TestApp {
    /// An app whose config is `flow:` (pointing at model.bpmn) followed by `rest`.
    pub fn new(model: &str, rest: &str) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("demo");
        fs::create_dir_all(app.join("config")).unwrap();
        fs::create_dir_all(app.join("policies")).unwrap();
        fs::write(app.join("config/model.bpmn"), model).unwrap();
        let config = format!("flow:\n  id: demo_v1\n  name: Demo\n  bpmn_file: model.bpmn\n{rest}");
        fs::write(app.join("config/demo_config.yaml"), config).unwrap();
        TestApp { dir }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("demo")
    }

    pub fn apps_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Add lines to the config's `flow:` section (each indented by two spaces).
    pub fn edit_flow(self, lines: &str) -> Self {
        let path = self.path().join("config/demo_config.yaml");
        let text = fs::read_to_string(&path).unwrap();
        let text = text.replacen(
            "  bpmn_file: model.bpmn\n",
            &format!("  bpmn_file: model.bpmn\n{lines}"),
            1,
        );
        fs::write(path, text).unwrap();
        self
    }

    pub fn policy(self, name: &str, text: &str) -> Self {
        fs::write(self.path().join("policies").join(name), text).unwrap();
        self
    }

    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        check_app(&load_app(&app_at(&self.path())))
    }

    /// `(severity, code, message)` of every diagnostic.
    pub fn findings(&self) -> Vec<(Severity, &'static str, String)> {
        self.diagnostics()
            .into_iter()
            .map(|d| (d.severity, d.code, d.message))
            .collect()
    }

    pub fn codes(&self) -> Vec<&'static str> {
        self.diagnostics().into_iter().map(|d| d.code).collect()
    }

    /// The one diagnostic with this code (panics with all findings otherwise).
    pub fn only(&self, code: &str) -> Diagnostic {
        let all = self.diagnostics();
        let matching: Vec<_> = all.iter().filter(|d| d.code == code).cloned().collect();
        assert_eq!(
            matching.len(),
            1,
            "expected one `{code}`, got: {:#?}",
            summary(&all)
        );
        matching.into_iter().next().unwrap()
    }
}

pub fn summary(diags: &[Diagnostic]) -> Vec<String> {
    diags
        .iter()
        .map(|d| format!("{} [{}]", d.one_line(), d.code))
        .collect()
}

/// Copy a folder tree (a demo app, the shared policies) into a test's workspace.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `cuga-flo ARGS` from the repository root, stdin empty (no person at a terminal).
pub fn cuga(args: &[&str], run_dir: &Path, env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_STORE")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CRASH_TRACE")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .args(args)
        .arg("--run-dir")
        .arg(run_dir)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cuga-flo runs")
}

/// A command's exit status, stdout and stderr, for an assertion message.
pub fn text(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Run a test server's start script (`script`, relative to the repository, with `args`
/// and `env`; the server stops once this test binary exits: `CUGA_FLO_OWNER_PID`) and
/// return what its one `listening …` line says; fail, with the script's stderr, when it
/// could not start `what`.
pub fn start_server(script: &str, args: &[&str], env: &[(&str, String)], what: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new("bash");
    cmd.arg(root.join(script))
        .args(args)
        .env("CUGA_FLO_OWNER_PID", std::process::id().to_string())
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    assert!(
        out.status.success(),
        "{what} did not start ({script}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("listening "))
        .unwrap_or_else(|| panic!("{script} printed no `listening …` line: {stdout}"))
        .trim()
        .to_string()
}
