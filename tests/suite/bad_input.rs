//! The bad-input catalogue: every kind of broken input a user, a tool or an attacker can
//! hand the binary (flow configs, BPMN models, policies, CLI arguments, answers, scenario
//! and input files, journals, `serve` arguments and requests), as one table. Each case
//! runs the real binary in a fresh copy of an app and must:
//!
//! - exit 1 or 2 (never 0, never 101), with no "panicked" on stderr;
//! - finish within [`LIMIT`] (no hang on a FIFO, no endless read of `/dev/zero`);
//! - point at `file:line` when the problem is in a file (`loc`);
//! - write nothing: the workspace's files are the same before and after;
//! - never name a library's API (serde, saphyr, quick-xml, reqwest, rmcp, hyper).

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin_cmd;

/// Longest a refused input may take.
const LIMIT: Duration = Duration::from_secs(10);
const CONFIG: &str = "apps/receive_order/config/receive_order_config.yaml";
const MODEL: &str = "apps/receive_order/config/receive_order.bpmn";
const HOOK_POLICY: &str = "apps/receive_order/policies/hook-post-receival.md";
const WORDS_OF_LIBRARIES: &[&str] = &[
    "serde",
    "saphyr",
    "quick_xml",
    "quick-xml",
    "reqwest",
    "rmcp",
    "hyper",
    "axum",
];

/// One workspace: `apps/receive_order` (a native app with scenarios), a runs folder, and
/// room for the files a case writes.
struct Ws {
    dir: tempfile::TempDir,
}

impl Ws {
    fn new() -> Ws {
        let dir = tempfile::tempdir().unwrap();
        support::copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("applications/receive_order"),
            &dir.path().join("apps/receive_order"),
        );
        fs::create_dir_all(dir.path().join("rd")).unwrap();
        Ws { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn p(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap()
    }

    /// Replace `from` by `to` in a file of the workspace (the text must be there).
    fn edit(&self, rel: &str, from: &str, to: &str) {
        let text = self.read(rel);
        assert!(text.contains(from), "{rel} has no {from:?}");
        self.write(rel, text.replacen(from, to, 1));
    }

    fn append(&self, rel: &str, more: &str) {
        let text = self.read(rel);
        self.write(rel, format!("{text}{more}"));
    }

    fn fifo(&self, rel: &str) {
        let path = self.path(rel);
        let _ = fs::remove_file(&path);
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    fn symlink(&self, target: &str, rel: &str) {
        let path = self.path(rel);
        let _ = fs::remove_file(&path);
        std::os::unix::fs::symlink(target, path).unwrap();
    }

    fn dir_at(&self, rel: &str) {
        let path = self.path(rel);
        let _ = fs::remove_file(&path);
        fs::create_dir_all(path).unwrap();
    }

    /// A run journalled by the standard scenario; its journal's path.
    fn journalled_run(&self) -> (String, PathBuf) {
        let out = cargo_bin_cmd!("cuga-flo")
            .current_dir(self.dir.path())
            .args(["--apps-dir", "apps", "--color", "never", "start"])
            .args(["receive_order", "--scenario", "standard", "--run-dir", "rd"])
            .timeout(LIMIT)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let runs = self.path("rd/runs");
        let id = fs::read_dir(&runs).unwrap().next().unwrap().unwrap();
        let name = id.file_name().to_string_lossy().into_owned();
        (name.clone(), runs.join(name).join("journal.jsonl"))
    }

    /// Every file under the workspace with its length (what "nothing written" compares).
    fn files(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        walk(self.dir.path(), self.dir.path(), &mut out);
        out.sort();
        out
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, u64)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        if meta.is_dir() {
            walk(root, &path, out);
        } else if !rel.ends_with(".lock") {
            out.push((rel, if meta.is_file() { meta.len() } else { 0 }));
        }
    }
}

/// Cases that are a run failing, not an input refused: a journal records the failure.
const MAY_WRITE: &[&str] = &["--engine-url with userinfo, nothing listening"];

/// Many copies of a text, for long lines and big files.
fn many(text: &str, n: usize) -> String {
    text.repeat(n)
}

/// A minimal BPMN model with one process whose body is `inner`.
fn model(inner: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\" targetNamespace=\"t\">\n<process id=\"P\" isExecutable=\"true\">\n{inner}\n</process>\n</definitions>\n"
    )
}

/// The arguments of a case, after its setup.
type Setup = fn(&Ws) -> Vec<String>;

struct Case {
    name: &'static str,
    setup: Setup,
    /// The exit code expected (1: the input is wrong, 2: the command line is).
    exit: i32,
    /// A file name that must appear as `name:LINE` in the output.
    loc: Option<&'static str>,
    /// Text the output must contain.
    says: &'static str,
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn validate() -> Vec<String> {
    args(&["validate", "receive_order"])
}

fn start(extra: &[&str]) -> Vec<String> {
    let mut a = args(&["start", "receive_order", "--run-dir", "rd"]);
    a.extend(args(extra));
    a
}

/// `validate m.bpmn` of a process from start event `s` to end event `e` through `body`.
fn validate_model(w: &Ws, body: &str) -> Vec<String> {
    w.write(
        "m.bpmn",
        model(&format!(
            "<startEvent id=\"s\"/>\n<endEvent id=\"e\"/>\n{body}"
        )),
    );
    args(&["validate", &w.p("m.bpmn")])
}

/// An exclusive split after `s` whose flow to `e` has `condition` (with `attributes` on
/// its `<conditionExpression>`), the other flow its default.
fn split(condition: &str, attributes: &str) -> String {
    format!(
        "<exclusiveGateway id=\"g\" default=\"f3\"/>\n<endEvent id=\"e2\"/>\n\
         <sequenceFlow id=\"f1\" sourceRef=\"s\" targetRef=\"g\"/>\n\
         <sequenceFlow id=\"f2\" sourceRef=\"g\" targetRef=\"e\"><conditionExpression{attributes}>{}</conditionExpression></sequenceFlow>\n\
         <sequenceFlow id=\"f3\" sourceRef=\"g\" targetRef=\"e2\"/>",
        condition
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    )
}

const CFG: Option<&str> = Some("receive_order_config.yaml");
const BPMN: Option<&str> = Some("receive_order.bpmn");

fn cases() -> Vec<Case> {
    vec![
        // ---- Flow config (YAML) ----
        Case {
            name: "yaml syntax error",
            exit: 1,
            loc: CFG,
            says: "YAML",
            setup: |w| {
                w.append(CONFIG, "tasks: [\n");
                validate()
            },
        },
        Case {
            name: "yaml tab indentation",
            exit: 1,
            loc: CFG,
            says: "",
            setup: |w| {
                w.append(CONFIG, "extra:\n\t- x\n");
                validate()
            },
        },
        Case {
            name: "yaml unknown key in a hook's action",
            exit: 1,
            loc: CFG,
            says: "skip_too",
            setup: |w| {
                w.edit(CONFIG, "hooks:\n", "hooks:\n  - id: extra_hook\n    location: Flow_nope\n    action: {skip_too: Activity_1h9ix55}\n");
                validate()
            },
        },
        Case {
            name: "command agent without input_mapping gets variables its recipe does not declare",
            exit: 1,
            loc: CFG,
            says: "command::inputs",
            setup: |w| {
                w.write(
                    "apps/receive_order/recipes/register.yaml",
                    "title: Register\nprompt: \"Register order {{ order_id }}\"\nparameters:\n  - key: order_id\n    requirement: required\n",
                );
                w.edit(
                    CONFIG,
                    "      name: order_receiver\n",
                    "      type: command\n      recipe: ../recipes/register.yaml\n      command: [sh, \"{config_dir}/register.sh\", \"{params}\"]\n",
                );
                w.edit(CONFIG, "      system_instruction: \"Read the incoming order and register its id, customer and line items.\"\n      policy: \"../policies/task-receive-order.md\"\n", "");
                validate()
            },
        },
        Case {
            name: "yaml wrong type: a variable map where a list of tasks goes",
            exit: 1,
            loc: CFG,
            says: "",
            setup: |w| {
                w.edit(CONFIG, "tasks:\n", "tasks:\n  - 5\n");
                validate()
            },
        },
        Case {
            name: "yaml wrong type: tasks is a number",
            exit: 1,
            loc: CFG,
            says: "tasks",
            setup: |w| {
                w.write(
                    CONFIG,
                    "flow: {id: r, bpmn_file: receive_order.bpmn}\ntasks: 5\n",
                );
                validate()
            },
        },
        Case {
            name: "yaml wrong type: engine type is a list",
            exit: 1,
            loc: CFG,
            says: "type",
            setup: |w| {
                w.edit(CONFIG, "type: native", "type: [native]");
                validate()
            },
        },
        Case {
            name: "yaml float out of range",
            exit: 1,
            loc: CFG,
            says: "does not fit",
            setup: |w| {
                w.edit(CONFIG, "total_amount: 0.0", "total_amount: 1e400");
                validate()
            },
        },
        Case {
            name: "yaml 30-digit integer",
            exit: 1,
            loc: CFG,
            says: "does not fit",
            setup: |w| {
                w.edit(
                    CONFIG,
                    "total_amount: 0.0",
                    "total_amount: 123456789012345678901234567890",
                );
                validate()
            },
        },
        Case {
            name: "yaml hex integer out of range",
            exit: 1,
            loc: CFG,
            says: "does not fit",
            setup: |w| {
                w.edit(
                    CONFIG,
                    "total_amount: 0.0",
                    "total_amount: 0xFFFFFFFFFFFFFFFFFFFF",
                );
                validate()
            },
        },
        Case {
            name: "yaml second document",
            exit: 1,
            loc: CFG,
            says: "second YAML document",
            setup: |w| {
                w.append(CONFIG, "---\nflow: {id: other}\n");
                validate()
            },
        },
        Case {
            name: "yaml duplicate key",
            exit: 1,
            loc: CFG,
            says: "duplicate key",
            setup: |w| {
                w.append(CONFIG, "variables:\n  x: 1\n");
                validate()
            },
        },
        Case {
            name: "yaml alias to an unknown anchor",
            exit: 1,
            loc: CFG,
            says: "anchor",
            setup: |w| {
                w.append(CONFIG, "extra: *nowhere\n");
                validate()
            },
        },
        Case {
            name: "yaml billion laughs",
            exit: 1,
            loc: CFG,
            says: "too many nodes",
            setup: |w| {
                let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
                for i in 1..10 {
                    let prev = i - 1;
                    text.push_str(&format!("a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"));
                }
                w.append(CONFIG, &text);
                validate()
            },
        },
        Case {
            name: "yaml deep nesting",
            exit: 1,
            loc: CFG,
            says: "",
            setup: |w| {
                w.append(CONFIG, &format!("deep: {}\n", many("[", 100_000)));
                validate()
            },
        },
        Case {
            name: "yaml huge line",
            exit: 1,
            loc: CFG,
            says: "",
            setup: |w| {
                w.edit(
                    CONFIG,
                    "total_amount: 0.0",
                    &format!("total_amount: [{}1e400]", many("1, ", 30_000)),
                );
                validate()
            },
        },
        Case {
            name: "yaml NUL byte",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                w.append(CONFIG, "extra: \"a\0b\"\n\0\n");
                validate()
            },
        },
        Case {
            name: "config not UTF-8",
            exit: 1,
            loc: None,
            says: "UTF-8",
            setup: |w| {
                w.write(CONFIG, b"flow:\n  id: \xff\xfe\n");
                validate()
            },
        },
        Case {
            name: "config empty",
            exit: 1,
            loc: None,
            says: "flow",
            setup: |w| {
                w.write(CONFIG, "");
                validate()
            },
        },
        Case {
            name: "config is a directory",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                w.dir_at(CONFIG);
                validate()
            },
        },
        Case {
            name: "config is a FIFO",
            exit: 1,
            loc: None,
            says: "not a regular file",
            setup: |w| {
                w.fifo(CONFIG);
                validate()
            },
        },
        Case {
            name: "config is /dev/zero",
            exit: 1,
            loc: None,
            says: "not a regular file",
            setup: |w| {
                w.symlink("/dev/zero", CONFIG);
                validate()
            },
        },
        Case {
            name: "config is a top-level list",
            exit: 1,
            loc: None,
            says: "flow",
            setup: |w| {
                w.write(CONFIG, "- a\n- b\n");
                validate()
            },
        },
        Case {
            name: "list on a broken config",
            exit: 0,
            loc: None,
            says: "receive_order",
            setup: |w| {
                w.write(CONFIG, "flow: [\n");
                args(&["list", "--json"])
            },
        },
        // ---- The model and the files the config names ----
        Case {
            name: "bpmn_file is /dev/zero",
            exit: 1,
            loc: None,
            says: "not a regular file",
            setup: |w| {
                w.edit(
                    CONFIG,
                    "bpmn_file: \"receive_order.bpmn\"",
                    "bpmn_file: /dev/zero",
                );
                validate()
            },
        },
        Case {
            name: "bpmn_file is a directory",
            exit: 1,
            loc: None,
            says: "directory",
            setup: |w| {
                w.dir_at("apps/receive_order/config/sub.bpmn");
                w.edit(
                    CONFIG,
                    "bpmn_file: \"receive_order.bpmn\"",
                    "bpmn_file: sub.bpmn",
                );
                validate()
            },
        },
        Case {
            name: "bpmn_file missing",
            exit: 1,
            loc: CFG,
            says: "does not exist",
            setup: |w| {
                w.edit(
                    CONFIG,
                    "bpmn_file: \"receive_order.bpmn\"",
                    "bpmn_file: nowhere.bpmn",
                );
                validate()
            },
        },
        Case {
            name: "bpmn_file is a FIFO",
            exit: 1,
            loc: None,
            says: "not a regular file",
            setup: |w| {
                w.fifo(MODEL);
                validate()
            },
        },
        Case {
            name: "bpmn not XML",
            exit: 1,
            loc: BPMN,
            says: "",
            setup: |w| {
                w.write(MODEL, "this is { not xml");
                validate()
            },
        },
        Case {
            name: "bpmn truncated",
            exit: 1,
            loc: BPMN,
            says: "",
            setup: |w| {
                let t = w.read(MODEL);
                w.write(MODEL, &t[..t.len() / 2]);
                validate()
            },
        },
        Case {
            name: "bpmn empty",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                w.write(MODEL, "");
                validate()
            },
        },
        Case {
            name: "bpmn XML entity bomb",
            exit: 1,
            loc: BPMN,
            says: "",
            setup: |w| {
                w.write(MODEL, "<?xml version=\"1.0\"?>\n<!DOCTYPE d [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"><process id=\"P\"><task id=\"t\" name=\"&c;\"/></process></definitions>\n");
                validate()
            },
        },
        Case {
            name: "bpmn external entity",
            exit: 1,
            loc: BPMN,
            says: "",
            setup: |w| {
                w.write(MODEL, "<?xml version=\"1.0\"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"><process id=\"P\"><task id=\"t\" name=\"&x;\"/></process></definitions>\n");
                validate()
            },
        },
        Case {
            name: "bpmn other root element",
            exit: 1,
            loc: BPMN,
            says: "BPMN",
            setup: |w| {
                w.write(MODEL, "<?xml version=\"1.0\"?>\n<html><body/></html>\n");
                validate()
            },
        },
        Case {
            name: "bpmn without a process",
            exit: 1,
            loc: BPMN,
            says: "process",
            setup: |w| {
                w.write(MODEL, "<?xml version=\"1.0\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">\n</definitions>\n");
                validate()
            },
        },
        Case {
            name: "bpmn duplicate id",
            exit: 1,
            loc: BPMN,
            says: "duplicate id",
            setup: |w| {
                w.write(MODEL, model("<startEvent id=\"s\"/>\n<task id=\"s\"/>"));
                validate()
            },
        },
        Case {
            name: "bpmn dangling flow",
            exit: 1,
            loc: BPMN,
            says: "nowhere",
            setup: |w| {
                w.write(MODEL, model("<startEvent id=\"s\"/>\n<sequenceFlow id=\"f\" sourceRef=\"s\" targetRef=\"nowhere\"/>"));
                validate()
            },
        },
        Case {
            name: "bpmn one huge line",
            exit: 1,
            loc: BPMN,
            says: "",
            setup: |w| {
                let tasks: String = (0..4000)
                    .map(|i| format!("<task id=\"task_number_{i}\"/>"))
                    .collect();
                w.write(
                    MODEL,
                    model(&format!(
                        "{tasks}<sequenceFlow id=\"f\" sourceRef=\"s\" targetRef=\"nowhere\"/>"
                    ))
                    .replace('\n', " "),
                );
                validate()
            },
        },
        Case {
            name: "bpmn deep nesting",
            exit: 1,
            loc: BPMN,
            says: "",
            setup: |w| {
                let open: String = (0..20_000)
                    .map(|i| format!("<subProcess id=\"p{i}\">"))
                    .collect();
                w.write(
                    MODEL,
                    model(&format!("{open}{}", many("</subProcess>", 19_999))),
                );
                validate()
            },
        },
        Case {
            name: "bpmn not UTF-8",
            exit: 1,
            loc: None,
            says: "UTF-8",
            setup: |w| {
                w.write(
                    MODEL,
                    model("<task id=\"t\" name=\"~\"/>")
                        .into_bytes()
                        .into_iter()
                        .map(|b| if b == b'~' { 0xff } else { b })
                        .collect::<Vec<u8>>(),
                );
                validate()
            },
        },
        Case {
            name: "bpmn unknown encoding",
            exit: 1,
            loc: None,
            says: "encoding",
            setup: |w| {
                w.write(
                    MODEL,
                    model("<task id=\"t\"/>").replace("UTF-8", "X-KLINGON"),
                );
                validate()
            },
        },
        Case {
            name: "bpmn several processes, none chosen",
            exit: 1,
            loc: BPMN,
            says: "processes that could run",
            setup: |w| {
                let t = w.read(MODEL);
                let second = "<bpmn:process id=\"Other\" isExecutable=\"true\"><bpmn:startEvent id=\"os\"/><bpmn:sequenceFlow id=\"of\" sourceRef=\"os\" targetRef=\"oe\"/><bpmn:endEvent id=\"oe\"/></bpmn:process>\n";
                w.write(
                    MODEL,
                    t.replacen(
                        "</bpmn:definitions>",
                        &format!("{second}</bpmn:definitions>"),
                        1,
                    ),
                );
                validate()
            },
        },
        Case {
            name: "flow.process names no process",
            exit: 1,
            loc: CFG,
            says: "has no process",
            setup: |w| {
                w.edit(
                    CONFIG,
                    "  bpmn_file:",
                    "  process: Process_nope\n  bpmn_file:",
                );
                validate()
            },
        },
        // ---- Models in other dialects: refused, never mis-run (validate FILE judges a
        // model as an app with it would be judged on the native engine) ----
        Case {
            name: "a Python (SpiffWorkflow) comparison of a bare name",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "`v == 2` compares two constants",
            setup: |w| validate_model(w, &split("v == 2", "")),
        },
        Case {
            name: "a Python comparison of a bare name with a quoted text",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "write `${work_done} == 'Yes'`",
            setup: |w| validate_model(w, &split("work_done == 'Yes'", "")),
        },
        Case {
            name: "a bare name alone as a condition",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "`approved` outside `${}` is the text \"approved\", not a condition",
            setup: |w| validate_model(w, &split("not approved", "")),
        },
        Case {
            name: "a condition in a script language",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "a `groovy` condition is code",
            setup: |w| validate_model(w, &split("x > 1", " language=\"groovy\"")),
        },
        Case {
            name: "a script task with a script",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "script task `t` has a python script, which cuga-flo does not run",
            setup: |w| {
                validate_model(
                    w,
                    "<scriptTask id=\"t\" scriptFormat=\"python\"><script>v += 1</script></scriptTask>\n\
                     <sequenceFlow id=\"f1\" sourceRef=\"s\" targetRef=\"t\"/>\n\
                     <sequenceFlow id=\"f2\" sourceRef=\"t\" targetRef=\"e\"/>",
                )
            },
        },
        Case {
            name: "a repeating timer in a model on its own",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "repeats (timeCycle",
            setup: |w| {
                validate_model(
                    w,
                    "<intermediateCatchEvent id=\"t\"><timerEventDefinition><timeCycle>R3/PT1M</timeCycle></timerEventDefinition></intermediateCatchEvent>\n\
                     <sequenceFlow id=\"f1\" sourceRef=\"s\" targetRef=\"t\"/>\n\
                     <sequenceFlow id=\"f2\" sourceRef=\"t\" targetRef=\"e\"/>",
                )
            },
        },
        Case {
            name: "a model on its own calling a process it does not hold",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "which no other process of this file is",
            setup: |w| {
                validate_model(
                    w,
                    "<callActivity id=\"c\" calledElement=\"elsewhere\"/>\n\
                     <sequenceFlow id=\"f1\" sourceRef=\"s\" targetRef=\"c\"/>\n\
                     <sequenceFlow id=\"f2\" sourceRef=\"c\" targetRef=\"e\"/>",
                )
            },
        },
        Case {
            name: "an entity a DTD declares",
            exit: 1,
            loc: Some("m.bpmn"),
            says: "does not expand the entities a DTD declares",
            setup: |w| {
                w.write(
                    "m.bpmn",
                    "<?xml version=\"1.0\"?>\n<!DOCTYPE d [ <!ENTITY x \"hello\"> ]>\n\
                     <definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\">\
                     <process id=\"P\"><startEvent id=\"s\" name=\"&x;\"/></process></definitions>\n",
                );
                args(&["validate", &w.p("m.bpmn")])
            },
        },
        Case {
            name: "validate a symbolic link in a loop",
            exit: 2,
            loc: None,
            says: "is a symbolic link that cannot be followed",
            setup: |w| {
                w.symlink(&w.p("loop2"), "loop1");
                w.symlink(&w.p("loop1"), "loop2");
                args(&["validate", &w.p("loop1")])
            },
        },
        Case {
            name: "a variable default of .nan",
            exit: 1,
            loc: CFG,
            says: "is not a number JSON can hold",
            setup: |w| {
                w.edit(CONFIG, "  total_amount: 0.0", "  total_amount: .nan");
                validate()
            },
        },
        Case {
            name: "a sequence longer than the default step budget",
            exit: 1,
            loc: None,
            says: "every run enters at least 10003 nodes",
            setup: |w| {
                let n = 10_001;
                let mut body =
                    String::from("<sequenceFlow id=\"f0\" sourceRef=\"s\" targetRef=\"t1\"/>\n");
                for i in 1..=n {
                    let to = if i == n {
                        "e".to_string()
                    } else {
                        format!("t{}", i + 1)
                    };
                    body.push_str(&format!(
                        "<task id=\"t{i}\"/><sequenceFlow id=\"f{i}\" sourceRef=\"t{i}\" targetRef=\"{to}\"/>\n"
                    ));
                }
                let mut a = validate_model(w, &body);
                a.insert(1, "--strict".to_string());
                a
            },
        },
        Case {
            name: "validate a FIFO model path",
            exit: 2,
            loc: None,
            says: "not a regular file",
            setup: |w| {
                w.fifo("m.bpmn");
                args(&["validate", &w.p("m.bpmn")])
            },
        },
        Case {
            name: "validate /dev/zero",
            exit: 2,
            loc: None,
            says: "not a regular file",
            setup: |_| args(&["validate", "/dev/zero"]),
        },
        // ---- Policies and hook rules ----
        Case {
            name: "policy is a FIFO",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                w.fifo(HOOK_POLICY);
                validate()
            },
        },
        Case {
            name: "policy is /dev/zero",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                w.symlink("/dev/zero", HOOK_POLICY);
                validate()
            },
        },
        Case {
            name: "policy is a directory",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                w.dir_at(HOOK_POLICY);
                validate()
            },
        },
        Case {
            name: "hook rule skips to a start event",
            exit: 1,
            loc: Some("hook-post-receival.md"),
            says: "start",
            setup: |w| {
                w.append(
                    HOOK_POLICY,
                    "\n```rules\nwhen ${total_amount} > 1 then skip_to StartEvent_0bpt8wp\n```\n",
                );
                validate()
            },
        },
        Case {
            name: "hook rule target outside allowed_targets",
            exit: 1,
            loc: Some("hook-post-receival.md"),
            says: "allowed_targets",
            setup: |w| {
                w.append(
                    HOOK_POLICY,
                    "\n```rules\nwhen ${total_amount} > 1 then skip_to Gateway_15y9k7z\n```\n",
                );
                validate()
            },
        },
        Case {
            name: "hook rule unknown target",
            exit: 1,
            loc: Some("hook-post-receival.md"),
            says: "not a node",
            setup: |w| {
                w.append(
                    HOOK_POLICY,
                    "\n```rules\nwhen ${total_amount} > 1 then skip_to Nowhere\n```\n",
                );
                validate()
            },
        },
        Case {
            name: "hook rule bad syntax",
            exit: 1,
            loc: Some("hook-post-receival.md"),
            says: "rule",
            setup: |w| {
                w.append(HOOK_POLICY, "\n```rules\nwhen when then then\n```\n");
                validate()
            },
        },
        // ---- Command-line arguments ----
        Case {
            name: "unknown subcommand",
            exit: 2,
            loc: None,
            says: "",
            setup: |_| args(&["frobnicate"]),
        },
        Case {
            name: "unknown app",
            exit: 2,
            loc: None,
            says: "receive_ordr",
            setup: |_| args(&["validate", "receive_ordr"]),
        },
        Case {
            name: "--var of an undeclared variable",
            exit: 2,
            loc: None,
            says: "total_amont",
            setup: |_| start(&["--scenario", "standard", "--var", "total_amont=1"]),
        },
        Case {
            name: "--var of a variable the app does not declare at all",
            exit: 2,
            loc: None,
            says: "declares no variable `nosuch`",
            setup: |_| start(&["--scenario", "standard", "--var", "nosuch=1"]),
        },
        Case {
            name: "--input of a value of the wrong type",
            exit: 2,
            loc: None,
            says: "`total_amount` is a number, not a string",
            setup: |w| {
                w.write("in.json", "{\"total_amount\": \"abc\"}");
                start(&["--scenario", "standard", "--input", &w.p("in.json")])
            },
        },
        Case {
            name: "--input of an undeclared variable",
            exit: 2,
            loc: None,
            says: "did you mean `order_id`?",
            setup: |w| {
                w.write("in.json", "{\"order_idd\": \"o-1\"}");
                start(&["--scenario", "standard", "--input", &w.p("in.json")])
            },
        },
        Case {
            name: "scenario input of the wrong type",
            exit: 2,
            loc: None,
            says: "input `items` is a list, not a string",
            setup: |w| {
                w.write(
                    "apps/receive_order/scenarios/bad.yaml",
                    "inputs: {items: \"three\"}\n",
                );
                start(&["--scenario", "bad"])
            },
        },
        Case {
            name: "--var of an integer that does not fit 64 bits",
            exit: 2,
            loc: None,
            says: "this integer does not fit",
            setup: |_| {
                start(&[
                    "--scenario",
                    "standard",
                    "--var",
                    "total_amount=99999999999999999999",
                ])
            },
        },
        Case {
            name: "--input with a key written twice",
            exit: 2,
            loc: None,
            says: "duplicate key `order_id`",
            setup: |w| {
                w.write("in.json", "{\"order_id\": \"a\",\n \"order_id\": \"b\"}");
                start(&["--scenario", "standard", "--input", &w.p("in.json")])
            },
        },
        Case {
            name: "--input with an integer that does not fit 64 bits",
            exit: 2,
            loc: None,
            says: "does not fit",
            setup: |w| {
                w.write("in.json", "{\"total_amount\": 99999999999999999999}");
                start(&["--scenario", "standard", "--input", &w.p("in.json")])
            },
        },
        Case {
            name: "--engine-url that is not a URL",
            exit: 2,
            loc: None,
            says: "is not an http(s) URL",
            setup: |_| start(&["--scenario", "standard", "--engine-url", "not a url"]),
        },
        Case {
            name: "test -j 0",
            exit: 2,
            loc: None,
            says: "",
            setup: |_| args(&["test", "receive_order", "-j", "0"]),
        },
        Case {
            name: "runs list --run-dir of a file",
            exit: 2,
            loc: None,
            says: "is not a folder",
            setup: |_| args(&["runs", "list", "--run-dir", "/dev/zero"]),
        },
        Case {
            name: "--var without a name",
            exit: 2,
            loc: None,
            says: "",
            setup: |_| start(&["--scenario", "standard", "--var", "=1"]),
        },
        Case {
            name: "--var without =",
            exit: 2,
            loc: None,
            says: "",
            setup: |_| start(&["--scenario", "standard", "--var", "total_amount"]),
        },
        Case {
            name: "--var of the wrong type",
            exit: 2,
            loc: None,
            says: "total_amount",
            setup: |_| start(&["--scenario", "standard", "--var", "total_amount=lots"]),
        },
        Case {
            name: "--step-budget 0",
            exit: 2,
            loc: None,
            says: "step-budget",
            setup: |_| start(&["--scenario", "standard", "--step-budget", "0"]),
        },
        Case {
            name: "--step-budget negative",
            exit: 2,
            loc: None,
            says: "-1",
            setup: |_| start(&["--scenario", "standard", "--step-budget", "-1"]),
        },
        Case {
            name: "--step-budget not a number",
            exit: 2,
            loc: None,
            says: "step-budget",
            setup: |_| start(&["--scenario", "standard", "--step-budget", "many"]),
        },
        Case {
            name: "--durability unknown",
            exit: 2,
            loc: None,
            says: "durability",
            setup: |_| start(&["--scenario", "standard", "--durability", "maybe"]),
        },
        Case {
            name: "--engine-url with userinfo, nothing listening",
            exit: 1,
            loc: None,
            says: "cannot reach the engine",
            setup: |_| {
                start(&[
                    "--scenario",
                    "standard",
                    "--engine-url",
                    "http://user:SECRET@127.0.0.1:1/mcp",
                ])
            },
        },
        // ---- Answers, scenarios and inputs ----
        Case {
            name: "unknown scenario",
            exit: 2,
            loc: None,
            says: "nosuch",
            setup: |_| start(&["--scenario", "nosuch"]),
        },
        Case {
            name: "scenario broken YAML",
            exit: 2,
            loc: Some("bad.yaml"),
            says: "",
            setup: |w| {
                w.write("apps/receive_order/scenarios/bad.yaml", "answers: {\n");
                start(&["--scenario", "bad"])
            },
        },
        Case {
            name: "scenario unknown key",
            exit: 2,
            loc: Some("bad.yaml"),
            says: "answerz",
            setup: |w| {
                w.write("apps/receive_order/scenarios/bad.yaml", "answerz: {}\n");
                start(&["--scenario", "bad"])
            },
        },
        Case {
            name: "scenario second document",
            exit: 2,
            loc: Some("bad.yaml"),
            says: "second",
            setup: |w| {
                w.write(
                    "apps/receive_order/scenarios/bad.yaml",
                    "answers: {}\n---\nanswers: {}\n",
                );
                start(&["--scenario", "bad"])
            },
        },
        Case {
            name: "scenario answers an id that is no control point",
            exit: 2,
            loc: Some("standard.yaml"),
            says: "did you mean `Activity_1h9ix55`?",
            setup: |w| {
                w.edit(
                    "apps/receive_order/scenarios/standard.yaml",
                    "  Activity_1h9ix55:",
                    "  Activity_1h9ix5:",
                );
                start(&["--scenario", "standard"])
            },
        },
        Case {
            name: "scenario output of the wrong type",
            exit: 2,
            loc: Some("standard.yaml"),
            says: "output `total_amount` must be a number",
            setup: |w| {
                w.edit(
                    "apps/receive_order/scenarios/standard.yaml",
                    "total_amount: 124.0",
                    "total_amount: lots",
                );
                start(&["--scenario", "standard"])
            },
        },
        Case {
            name: "scenario output misspelt",
            exit: 2,
            loc: Some("standard.yaml"),
            says: "did you mean `inventory_reserved`?",
            setup: |w| {
                w.edit(
                    "apps/receive_order/scenarios/standard.yaml",
                    "{inventory_reserved: true}",
                    "{inventory_reserve: true}",
                );
                start(&["--scenario", "standard"])
            },
        },
        Case {
            name: "answers file: a gateway flow that does not leave the gateway",
            exit: 2,
            loc: Some("a.yaml"),
            says: "does not leave this gateway",
            setup: |w| {
                w.write(
                    "a.yaml",
                    "answers:\n  Gateway_09ad5fc: {flow: Flow_nowhere}\n",
                );
                start(&["--scenario", "standard", "--answers", &w.p("a.yaml")])
            },
        },
        Case {
            name: "answers file: an answer of the wrong kind",
            exit: 2,
            loc: Some("a.yaml"),
            says: "this is a task",
            setup: |w| {
                w.write(
                    "a.yaml",
                    "answers:\n  Activity_1h9ix55: {action: continue}\n",
                );
                start(&["--scenario", "standard", "--answers", &w.p("a.yaml")])
            },
        },
        Case {
            name: "answers missing",
            exit: 2,
            loc: None,
            says: "",
            setup: |w| start(&["--answers", &w.p("nowhere.yaml")]),
        },
        Case {
            name: "answers /dev/zero",
            exit: 2,
            loc: None,
            says: "not a regular file",
            setup: |_| start(&["--answers", "/dev/zero"]),
        },
        Case {
            name: "answers FIFO",
            exit: 2,
            loc: None,
            says: "not a regular file",
            setup: |w| {
                w.fifo("answers.yaml");
                start(&["--answers", &w.p("answers.yaml")])
            },
        },
        Case {
            name: "answers directory",
            exit: 2,
            loc: None,
            says: "",
            setup: |w| {
                w.dir_at("answers.yaml");
                start(&["--answers", &w.p("answers.yaml")])
            },
        },
        Case {
            name: "answers broken YAML",
            exit: 2,
            loc: Some("answers.yaml"),
            says: "",
            setup: |w| {
                w.write("answers.yaml", "answers:\n  x: [\n");
                start(&["--answers", &w.p("answers.yaml")])
            },
        },
        Case {
            name: "answers wrong type",
            exit: 2,
            loc: Some("answers.yaml"),
            says: "answers",
            setup: |w| {
                w.write("answers.yaml", "answers: 5\n");
                start(&["--answers", &w.p("answers.yaml")])
            },
        },
        Case {
            name: "answers not UTF-8",
            exit: 2,
            loc: None,
            says: "UTF-8",
            setup: |w| {
                w.write("answers.yaml", b"answers:\n  \xff: 1\n");
                start(&["--answers", &w.p("answers.yaml")])
            },
        },
        Case {
            name: "answers number out of range",
            exit: 2,
            loc: Some("answers.yaml"),
            says: "does not fit",
            setup: |w| {
                w.write(
                    "answers.yaml",
                    "answers:\n  Activity_0oydey5: {outputs: {total_amount: 1e999}}\n",
                );
                start(&["--answers", &w.p("answers.yaml")])
            },
        },
        Case {
            name: "input not JSON",
            exit: 2,
            loc: Some("input.json"),
            says: "",
            setup: |w| {
                w.write("input.json", "{\"order_id\": \n");
                start(&["--scenario", "standard", "--input", &w.p("input.json")])
            },
        },
        Case {
            name: "input is a list",
            exit: 2,
            loc: None,
            says: "object",
            setup: |w| {
                w.write("input.json", "[1, 2]\n");
                start(&["--scenario", "standard", "--input", &w.p("input.json")])
            },
        },
        Case {
            name: "input /dev/zero",
            exit: 2,
            loc: None,
            says: "not a regular file",
            setup: |_| start(&["--scenario", "standard", "--input", "/dev/zero"]),
        },
        Case {
            name: "input empty",
            exit: 2,
            loc: None,
            says: "",
            setup: |w| {
                w.write("input.json", "");
                start(&["--scenario", "standard", "--input", &w.p("input.json")])
            },
        },
        // ---- Journals ----
        Case {
            name: "runs show of an unknown run",
            exit: 2,
            loc: None,
            says: "",
            setup: |_| args(&["runs", "show", "20990101T000000Z-000000", "--run-dir", "rd"]),
        },
        Case {
            name: "runs verify of a truncated journal",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                let (id, journal) = w.journalled_run();
                let text = fs::read_to_string(&journal).unwrap();
                fs::write(&journal, &text[..text.len() - 40]).unwrap();
                args(&["runs", "verify", &id, "--run-dir", "rd"])
            },
        },
        Case {
            name: "runs verify of a journal with a garbage line",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                let (id, journal) = w.journalled_run();
                let text = fs::read_to_string(&journal).unwrap();
                fs::write(&journal, text.replacen('\n', "\n{not json\n", 1)).unwrap();
                args(&["runs", "verify", &id, "--run-dir", "rd"])
            },
        },
        Case {
            name: "runs verify of an emptied journal",
            exit: 1,
            loc: None,
            says: "",
            setup: |w| {
                let (id, journal) = w.journalled_run();
                fs::write(&journal, "").unwrap();
                args(&["runs", "verify", &id, "--run-dir", "rd"])
            },
        },
        Case {
            name: "runs verify of a chain-valid record forged after run_finished",
            exit: 1,
            loc: None,
            says: "follows the run's end",
            setup: |w| {
                let (id, journal) = w.journalled_run();
                crate::support::runs::forge_after_end(&journal);
                args(&["runs", "verify", &id, "--run-dir", "rd"])
            },
        },
        Case {
            name: "runs show of a tampered journal",
            exit: 2,
            loc: None,
            says: "journal is not intact",
            setup: |w| {
                let (id, journal) = w.journalled_run();
                crate::support::runs::forge_after_end(&journal);
                args(&["runs", "show", &id, "--run-dir", "rd"])
            },
        },
        Case {
            name: "runs export of a tampered journal",
            exit: 2,
            loc: None,
            says: "--allow-tampered",
            setup: |w| {
                let (id, journal) = w.journalled_run();
                crate::support::runs::forge_after_end(&journal);
                args(&["runs", "export", &id, "--run-dir", "rd"])
            },
        },
        Case {
            name: "runs resume of a journal that is not one",
            exit: 2,
            loc: Some("journal.jsonl"),
            says: "",
            setup: |w| {
                let (id, journal) = w.journalled_run();
                fs::write(&journal, "\u{0}\u{1}\u{2}\n").unwrap();
                args(&["runs", "resume", &id, "--run-dir", "rd"])
            },
        },
        // ---- serve arguments ----
        Case {
            name: "serve --http not an address",
            exit: 2,
            loc: None,
            says: "--http",
            setup: |_| args(&["serve", "receive_order", "--http", "not-an-address"]),
        },
        Case {
            name: "serve --max-sessions 0",
            exit: 2,
            loc: None,
            says: "max-sessions",
            setup: |_| {
                args(&[
                    "serve",
                    "receive_order",
                    "--http",
                    "127.0.0.1:0",
                    "--max-sessions",
                    "0",
                ])
            },
        },
        Case {
            name: "serve --read-timeout 0",
            exit: 2,
            loc: None,
            says: "read-timeout",
            setup: |_| {
                args(&[
                    "serve",
                    "receive_order",
                    "--http",
                    "127.0.0.1:0",
                    "--read-timeout",
                    "0",
                ])
            },
        },
        Case {
            name: "serve --token-file /dev/zero",
            exit: 2,
            loc: None,
            says: "not a regular file",
            setup: |_| {
                args(&[
                    "serve",
                    "receive_order",
                    "--http",
                    "127.0.0.1:0",
                    "--token-file",
                    "/dev/zero",
                ])
            },
        },
        Case {
            name: "serve --token-file FIFO",
            exit: 2,
            loc: None,
            says: "not a regular file",
            setup: |w| {
                w.fifo("token");
                args(&[
                    "serve",
                    "receive_order",
                    "--http",
                    "127.0.0.1:0",
                    "--token-file",
                    &w.p("token"),
                ])
            },
        },
        Case {
            name: "serve --answers broken",
            exit: 2,
            loc: Some("answers.yaml"),
            says: "",
            setup: |w| {
                w.write("answers.yaml", "answers: [\n");
                args(&[
                    "serve",
                    "receive_order",
                    "--http",
                    "127.0.0.1:0",
                    "--answers",
                    &w.p("answers.yaml"),
                ])
            },
        },
    ]
}

/// `name:LINE` somewhere in `text`.
fn has_location(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let rest = &text[i + name.len()..];
        rest.strip_prefix(':')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
}

#[test]
fn every_bad_input_is_refused_cleanly() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let ws = Ws::new();
        let args = (case.setup)(&ws);
        let before = ws.files();
        let started = Instant::now();
        let output = cargo_bin_cmd!("cuga-flo")
            .current_dir(ws.dir.path())
            .args(["--apps-dir", "apps", "--color", "never"])
            .args(&args)
            .env("CUGA_FLO_LOG", "warn")
            .timeout(LIMIT)
            .output()
            .unwrap();
        let took = started.elapsed();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let all = format!("{stdout}{stderr}");
        let mut wrong = Vec::new();
        match output.status.code() {
            Some(code) if code == case.exit => {}
            Some(code) => wrong.push(format!("exit {code}, expected {}", case.exit)),
            None => wrong.push(format!("killed (hung?) after {took:?}")),
        }
        if case.exit == 0 && !all.replace(' ', "").contains("\"valid\":false") {
            wrong.push("not reported invalid".into());
        }
        if stderr.contains("panicked") {
            wrong.push("panicked".into());
        }
        if let Some(name) = case.loc
            && !has_location(&all, name)
        {
            wrong.push(format!("no `{name}:LINE`"));
        }
        if !all.contains(case.says) {
            wrong.push(format!("does not say {:?}", case.says));
        }
        let lower = all.to_lowercase();
        for word in WORDS_OF_LIBRARIES {
            if lower.contains(word) {
                wrong.push(format!("names a library: {word}"));
            }
        }
        if all.contains("SECRET") {
            wrong.push("shows a secret".into());
        }
        let after = ws.files();
        if after != before && !MAY_WRITE.contains(&case.name) {
            wrong.push("wrote files".into());
        }
        for (file, _) in &after {
            // Regular files only: reading a FIFO a case made would wait for a writer.
            let regular = fs::symlink_metadata(ws.path(file)).is_ok_and(|m| m.is_file());
            if regular
                && !file.starts_with("apps")
                && fs::read(ws.path(file))
                    .is_ok_and(|b| String::from_utf8_lossy(&b).contains("SECRET"))
            {
                wrong.push(format!("{file} holds a secret"));
            }
        }
        if !wrong.is_empty() {
            let tail: String = all.chars().take(1200).collect();
            failures.push(format!(
                "{}: {}\n  args: {args:?}\n  output: {tail}",
                case.name,
                wrong.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
