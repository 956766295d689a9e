//! `runs verify` and `runs export` on a real run written by the binary: every kind of
//! tampering is caught at the first bad record; the export round-trips (JSON lines) and is
//! an XES log that pm4py reads.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use assert_cmd::Command;
use cuga_flo::journal::Record;
use cuga_flo::journal::store::{HEAD_FILE, JOURNAL_FILE, read_journal, run_dir};
use serde_json::Value;

use crate::support::python;

fn cuga() -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_DURABILITY")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// One real run (incident_response, scenario regulated_breach), written once per test
/// binary under the target's temporary folder: its base folder and id.
fn original() -> (&'static Path, &'static str) {
    static RUN: OnceLock<(PathBuf, String)> = OnceLock::new();
    let (base, id) = RUN.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("verify-run");
        let _ = fs::remove_dir_all(&base);
        cuga()
            .args([
                "start",
                "incident_response",
                "--scenario",
                "regulated_breach",
            ])
            .arg("--run-dir")
            .arg(&base)
            .assert()
            .success();
        let ids: Vec<String> = fs::read_dir(base.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(ids.len(), 1, "{ids:?}");
        (base, ids[0].clone())
    });
    (base, id)
}

/// A copy of the original run under a new base folder.
fn copy_run() -> (tempfile::TempDir, String) {
    let (base, id) = original();
    let tmp = tempfile::tempdir().unwrap();
    let from = run_dir(base, id);
    let to = run_dir(tmp.path(), id);
    fs::create_dir_all(&to).unwrap();
    for name in [JOURNAL_FILE, HEAD_FILE] {
        fs::copy(from.join(name), to.join(name)).unwrap();
    }
    (tmp, id.to_string())
}

fn journal_lines(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join(JOURNAL_FILE))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(dir: &Path, lines: &[String]) {
    fs::write(dir.join(JOURNAL_FILE), lines.join("\n") + "\n").unwrap();
}

fn verify(base: &Path, id: &str, json: bool) -> (i32, String) {
    let mut cmd = cuga();
    cmd.args(["runs", "verify", id, "--run-dir"]).arg(base);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn edit_at_ms(line: &str) -> String {
    let record: Value = serde_json::from_str(line).unwrap();
    let at = record["at_ms"].as_u64().unwrap();
    line.replacen(
        &format!("\"at_ms\":{at}"),
        &format!("\"at_ms\":{}", at + 1),
        1,
    )
}

type Tamper = fn(&Path, &mut Vec<String>);

#[test]
fn an_untouched_run_verifies() {
    let (base, id) = original();
    let (code, out) = verify(base, id, false);
    assert_eq!(code, 0, "{out}");
    let count = journal_lines(&run_dir(base, id)).len();
    assert!(
        out.starts_with(&format!(
            "✓ run {id}: journal intact, {count} records, head {count} "
        )),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1, "{out}");
    let (code, out) = verify(base, &id[..10], true);
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["intact"], true);
    assert_eq!(report["records"], count);
    assert_eq!(report["head_hash"].as_str().unwrap().len(), 64);
}

#[test]
fn every_kind_of_tampering_is_caught_at_the_first_bad_record() {
    let (base, id) = original();
    let count = journal_lines(&run_dir(base, id)).len() as u64;
    assert!(count > 30, "a run long enough to tamper with: {count}");
    let last = count;
    let cases: Vec<(&str, Tamper, u64, &str)> = vec![
        (
            "edit a value in a middle record",
            |_, l| l[9] = edit_at_ms(&l[9]),
            10,
            "edited",
        ),
        (
            "edit the run's app digest in record 1",
            |_, l| {
                let record: Value = serde_json::from_str(&l[0]).unwrap();
                let digest = record["app_digest"].as_str().unwrap().to_string();
                l[0] = l[0].replace(&digest, &"0".repeat(64));
            },
            1,
            "edited",
        ),
        (
            "edit the last record (the head file's hash catches it)",
            |_, l| {
                let n = l.len() - 1;
                l[n] = edit_at_ms(&l[n]);
            },
            last,
            "edited",
        ),
        (
            "insert a copied record",
            |_, l| {
                let copy = l[9].clone();
                l.insert(20, copy);
            },
            21,
            "inserted",
        ),
        (
            "delete a middle record",
            |_, l| {
                l.remove(9);
            },
            10,
            "removed",
        ),
        (
            "delete the last records (the head file says more)",
            |_, l| {
                l.truncate(l.len() - 3);
            },
            last - 2,
            "removed",
        ),
        ("swap two records", |_, l| l.swap(9, 10), 10, "inserted"),
        (
            "truncate the last line mid-way",
            |dir, l| {
                let text = l.join("\n") + "\n";
                let cut = text.len() - 1 - l.last().unwrap().len() / 2;
                fs::write(dir.join(JOURNAL_FILE), &text[..cut]).unwrap();
                l.clear();
            },
            last,
            "truncated",
        ),
    ];
    for (what, tamper, seq, kind) in cases {
        let (tmp, id) = copy_run();
        let dir = run_dir(tmp.path(), &id);
        let mut lines = journal_lines(&dir);
        tamper(&dir, &mut lines);
        if !lines.is_empty() {
            write_lines(&dir, &lines);
        }
        let (code, out) = verify(tmp.path(), &id, false);
        assert_eq!(code, 1, "{what}: {out}");
        assert!(
            out.starts_with(&format!(
                "✗ run {id}: journal tampered: record {seq} {kind}: "
            )),
            "{what}: {out}"
        );
        let (code, out) = verify(tmp.path(), &id, true);
        assert_eq!(code, 1);
        let report: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["intact"], false, "{what}");
        assert_eq!(report["problem"]["seq"], seq, "{what}: {out}");
        assert_eq!(report["problem"]["kind"], kind, "{what}: {out}");
    }
}

#[test]
fn verify_output() {
    let (base, id) = original();
    let (_, intact) = verify(base, id, false);
    let (tmp, id) = copy_run();
    let dir = run_dir(tmp.path(), &id);
    let mut lines = journal_lines(&dir);
    lines[4] = edit_at_ms(&lines[4]);
    write_lines(&dir, &lines);
    let (_, tampered) = verify(tmp.path(), &id, false);
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\d{8}T\d{6}Z-[0-9a-f]{6}", "[RUN_ID]");
    settings.add_filter(r"[0-9a-f]{64}", "[HASH]");
    settings.add_filter(r"\d+ records, head \d+", "[N] records, head [N]");
    settings.bind(|| {
        insta::assert_snapshot!("verify_intact", intact);
        insta::assert_snapshot!("verify_tampered", tampered);
    });
}

fn export(base: &Path, id: &str, format: &str) -> String {
    let out = cuga()
        .args(["runs", "export", id, "--format", format, "--run-dir"])
        .arg(base)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn jsonl_export_is_the_journal() {
    let (base, id) = original();
    let path = run_dir(base, id).join(JOURNAL_FILE);
    let text = export(base, id, "jsonl");
    assert_eq!(text, fs::read_to_string(&path).unwrap());
    let records: Vec<Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records, read_journal(&path).unwrap().records);
    assert!(records.iter().all(|r| r.prev.len() == 64));

    // -o FILE writes the same.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("out.jsonl");
    cuga()
        .args(["runs", "export", id, "--format", "jsonl", "--run-dir"])
        .arg(base)
        .arg("-o")
        .arg(&file)
        .assert()
        .success()
        .stdout("");
    assert_eq!(fs::read_to_string(file).unwrap(), text);
}

/// The records an XES log has an event for, and the activity name of each.
fn activities(records: &[Record]) -> Vec<String> {
    use cuga_flo::journal::Event;
    let mut names = std::collections::HashMap::new();
    for r in records {
        if let Event::NodeEntered {
            node,
            name: Some(n),
            ..
        } = &r.event
        {
            names.insert(node.clone(), n.clone());
        }
    }
    let name = |id: &String| names.get(id).cloned().unwrap_or_else(|| id.clone());
    records
        .iter()
        .filter_map(|r| match &r.event {
            Event::NodeEntered { node, .. } => Some(name(node)),
            Event::TaskFinished { node, .. } | Event::GatewayRouted { node, .. } => {
                Some(name(node))
            }
            Event::HookEvaluated { hook, .. } => Some(hook.clone()),
            Event::RunFinished { .. } => Some("run finished".to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn xes_export_is_well_formed_with_one_trace_and_an_event_per_activity() {
    let (base, id) = original();
    let records = read_journal(&run_dir(base, id).join(JOURNAL_FILE))
        .unwrap()
        .records;
    let xes = export(base, id, "xes");
    let mut reader = quick_xml::Reader::from_str(&xes);
    let (mut traces, mut events, mut names) = (0, 0, Vec::new());
    let mut in_event = false;
    let mut root = None;
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("not XML: {e}"))
        {
            quick_xml::events::Event::Start(e) => match e.name().as_ref() {
                "log" => {
                    let version = e.try_get_attribute("xes.version").unwrap().unwrap();
                    root = Some(version.value.to_string());
                }
                "trace" => traces += 1,
                "event" => {
                    events += 1;
                    in_event = true;
                }
                _ => {}
            },
            quick_xml::events::Event::End(e) if e.name().as_ref() == "event" => in_event = false,
            quick_xml::events::Event::Empty(e) if in_event && e.name().as_ref() == "string" => {
                let key = e.try_get_attribute("key").unwrap().unwrap();
                if key.value == "concept:name" {
                    let value = e.try_get_attribute("value").unwrap().unwrap();
                    names.push(
                        value
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .unwrap()
                            .into_owned(),
                    );
                }
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(root.as_deref(), Some("1.0"));
    assert_eq!(traces, 1);
    let expected = activities(&records);
    assert!(expected.len() > 20);
    assert_eq!(events, expected.len());
    assert_eq!(names, expected);
    for ext in ["concept", "time", "lifecycle", "org"] {
        assert!(xes.contains(&format!("prefix=\"{ext}\"")), "{ext}");
    }
    assert!(xes.contains(&format!("<string key=\"concept:name\" value=\"{id}\"/>")));
}

#[test]
fn pm4py_reads_the_xes_export() {
    let (base, id) = original();
    let records = read_journal(&run_dir(base, id).join(JOURNAL_FILE))
        .unwrap()
        .records;
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("run.xes");
    cuga()
        .args(["runs", "export", id, "--format", "xes", "-o"])
        .arg(&file)
        .arg("--run-dir")
        .arg(base)
        .assert()
        .success();
    let script = "import json, sys, pm4py\n\
                  log = pm4py.read_xes(sys.argv[1])\n\
                  print(json.dumps({'events': len(log), \
                  'traces': sorted(set(log['case:concept:name'])), \
                  'activities': list(log['concept:name']), \
                  'transitions': sorted(set(log['lifecycle:transition']))}))\n";
    let out = python::run(
        std::process::Command::new(python::pm4py_python())
            .args(["-c", script])
            .arg(&file),
        Duration::from_secs(300),
    )
    .unwrap();
    assert!(out.success(), "{}", out.show("pm4py.read_xes"));
    let last = out.stdout.lines().last().unwrap_or_default();
    let read: Value =
        serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {}", out.show("pm4py")));
    let mut expected = activities(&records);
    assert_eq!(read["events"], expected.len());
    assert_eq!(read["traces"], serde_json::json!([id]));
    assert_eq!(
        read["transitions"],
        serde_json::json!(["complete", "start"])
    );
    // pm4py may order events of the same millisecond differently: compare as multisets.
    let mut got: Vec<String> = read["activities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
}
