//! The BPMN corpus (`tests/fixtures/bpmn-corpus/`, copied with its `LICENSES.md`): every file the MANIFEST marks
//! `parse_ok=yes` parses and its element counts equal the MANIFEST's; every file marked
//! `no: ...` fails as not well-formed at the line the MANIFEST names. See the notes in
//! the corpus's `LICENSES.md` for how the counts were made.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cuga_flo::bpmn::{BpmnError, Document, EventDefinition, GatewayKind, NodeKind, parse_file};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bpmn-corpus")
}

/// One MANIFEST row, by column name.
struct Row(HashMap<String, String>);

impl Row {
    fn get(&self, column: &str) -> &str {
        self.0.get(column).map_or("", String::as_str)
    }
}

fn manifest() -> Vec<Row> {
    let path = corpus_dir().join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .expect("MANIFEST has a header")
        .split('\t')
        .collect();
    lines
        .map(|line| {
            let cells = line.split('\t').map(str::to_owned);
            Row(header.iter().map(|h| h.to_string()).zip(cells).collect())
        })
        .collect()
}

/// The MANIFEST's count columns, computed from a parsed document.
fn counts(doc: &Document) -> Vec<(&'static str, usize)> {
    let nodes = || doc.all_nodes();
    let count = |pred: &dyn Fn(&NodeKind) -> bool| nodes().filter(|n| pred(&n.kind)).count();
    let gateways = |kind: GatewayKind| count(&|k| k.gateway() == Some(kind));
    let definitions = |def: EventDefinition| {
        nodes()
            .flat_map(|n| n.kind.event_definitions())
            .filter(|d| **d == def)
            .count()
    };
    vec![
        ("tasks", count(&NodeKind::is_task)),
        (
            "subprocesses_callactivities",
            count(&|k| matches!(k, NodeKind::SubProcess(_) | NodeKind::CallActivity { .. })),
        ),
        ("exclusiveGateway", gateways(GatewayKind::Exclusive)),
        ("parallelGateway", gateways(GatewayKind::Parallel)),
        ("inclusiveGateway", gateways(GatewayKind::Inclusive)),
        ("eventBasedGateway", gateways(GatewayKind::EventBased)),
        ("complexGateway", gateways(GatewayKind::Complex)),
        ("gateways_total", count(&NodeKind::is_gateway)),
        ("sequenceFlows", doc.all_flows().count()),
        (
            "conditionExpressions",
            doc.all_flows().filter(|f| f.condition.is_some()).count(),
        ),
        (
            "default_flows",
            nodes()
                .filter(|n| n.default_flow.is_some())
                .filter(|n| n.kind.is_gateway() || n.kind.is_activity())
                .count(),
        ),
        (
            "boundaryEvents",
            count(&|k| matches!(k, NodeKind::BoundaryEvent { .. })),
        ),
        ("lanes", doc.processes.iter().map(|p| p.lanes.len()).sum()),
        ("participants", doc.participants.len()),
        ("messageFlows", doc.message_flows.len()),
        ("timerEventDefs", definitions(EventDefinition::Timer)),
        ("messageEventDefs", definitions(EventDefinition::Message)),
        ("processes", doc.processes.len()),
    ]
}

/// The line number in a `parse_ok` cell such as `no: ... : line 26, column 62`.
fn expected_line(parse_ok: &str) -> Option<usize> {
    let rest = &parse_ok[parse_ok.find("line ")? + "line ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Check one file; `Ok(true)` if it is as the MANIFEST says, problems appended.
fn check_row(row: &Row, problems: &mut Vec<String>) -> bool {
    let file = row.get("file");
    let parse_ok = row.get("parse_ok");
    let result = parse_file(&corpus_dir().join(file));
    let before = problems.len();
    match (parse_ok, result) {
        ("yes", Ok(doc)) => {
            for (column, got) in counts(&doc) {
                match row.get(column).trim().parse::<usize>() {
                    Ok(expected) if expected == got => {}
                    Ok(expected) => {
                        problems.push(format!("{file}: {column}: expected {expected}, got {got}"))
                    }
                    Err(_) => problems.push(format!("{file}: {column}: no number in the MANIFEST")),
                }
            }
        }
        ("yes", Err(errors)) => {
            let all: Vec<String> = errors.errors.iter().map(ToString::to_string).collect();
            problems.push(format!(
                "{file}: expected to parse, got: {}",
                all.join("; ")
            ));
        }
        (no, Err(errors)) if no.starts_with("no") => {
            let line = expected_line(no);
            let reported = errors.errors.iter().find_map(|e| match e {
                BpmnError::NotWellFormed { span, .. } => errors
                    .text
                    .as_ref()
                    .map(|text| text.line_col(span.offset).line),
                _ => None,
            });
            if reported.is_none() || reported != line {
                problems.push(format!(
                    "{file}: expected not-well-formed at line {line:?}, got {reported:?} ({})",
                    errors.first_line()
                ));
            }
        }
        (no, Ok(_)) if no.starts_with("no") => {
            problems.push(format!(
                "{file}: expected a not-well-formed error, but it parsed"
            ));
        }
        (other, _) => problems.push(format!("{file}: unknown parse_ok value `{other}`")),
    }
    problems.len() == before
}

#[test]
fn corpus_matches_manifest() {
    let rows = manifest();
    assert!(!rows.is_empty(), "the MANIFEST lists no files");
    let mut problems = Vec::new();
    let passed = rows
        .iter()
        .filter(|row| check_row(row, &mut problems))
        .count();
    eprintln!(
        "{passed} of {} corpus files as the MANIFEST says",
        rows.len()
    );
    assert!(
        problems.is_empty(),
        "{} of {} corpus files differ from the MANIFEST:\n{}",
        rows.len() - passed,
        rows.len(),
        problems.join("\n")
    );
}
