//! The run journal: durable append, read back (with a torn tail after a crash), the state
//! fold, and the views that render it.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::thread;

use cuga_flo::journal::chain::{anchor, line_hash};
use cuga_flo::journal::store::{
    HEAD_FILE, MemorySink, ReadJournal, new_run_id, read_head, read_journal, run_dir,
};
use cuga_flo::journal::{
    Anchor, Durability, Event, EventSink, FlowState, Journal, JournalError, JournalOptions, Record,
    Repair,
};
use cuga_flo::view::{self, Human, HumanOptions, JsonLines, View};
use cuga_flo::vocab::{Decider, HookAction, RunStatus, TaskStatus};
use serde_json::{Map, Value, json};

fn vars(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn entered(node: &str, kind: &str, name: Option<&str>) -> Event {
    Event::NodeEntered {
        node: node.into(),
        kind: kind.into(),
        name: name.map(Into::into),
        token: 1,
        instance: None,
    }
}

fn flow(id: &str, source: &str, target: &str) -> Event {
    Event::FlowTaken {
        flow: id.into(),
        source: source.into(),
        target: target.into(),
        token: 1,
    }
}

/// A small loan-approval run: a task, a hook that updates state and swaps two nodes, an
/// exclusive gateway, a skipped task and a failed one, then the end.
fn sample_events() -> Vec<Event> {
    vec![
        Event::RunStarted {
            launch: None,
            run_id: "20250101T000000Z-abc123".into(),
            app: "loan_approval".into(),
            process_key: "loan".into(),
            process_id: "LoanProcess".into(),
            engine: "native".into(),
            reasoner: "scenario standard".into(),
            variables: vars(json!({"amount": 25000, "applicant": "Ada"})),
            app_digest: Some("d1g3st".into()),
            untrusted: None,
            parent: None,
            trace: None,
        },
        entered("start", "startEvent", None),
        flow("f1", "start", "check_credit"),
        entered("check_credit", "serviceTask", Some("Check credit")),
        Event::TaskFinished {
            key: None,
            node: "check_credit".into(),
            status: TaskStatus::Completed,
            outputs: vars(json!({"score": 712})),
            variables: vars(json!({"credit_score": 712})),
            decided_by: Decider::Scripted,
            reason: Some(
                "The bureau report shows a long, clean history;\nno defaults in the last \
                 ten years and a low utilisation ratio across all revolving accounts."
                    .into(),
            ),
            error: None,
            error_code: None,
            duration_ms: 12,
            digest: None,
            taint: None,
            own: Vec::new(),
        },
        Event::HookEvaluated {
            key: None,
            answer: None,
            hook: "risk_review".into(),
            flow: "f2".into(),
            action: HookAction::SwapNodes,
            target: None,
            swap: Some(("assess".into(), "verify".into())),
            added: None,
            state_updates: vars(json!({"risk": "low"})),
            decided_by: Decider::Model,
            reason: Some("Verify income before the assessment.".into()),
            message: None,
            denied: None,
            rejected: None,
            duration_ms: 1340,
            digest: None,
        },
        Event::VariablesSet {
            source: "hook risk_review".into(),
            values: vars(json!({"risk": "low"})),
            taint: None,
        },
        Event::TopologyChanged {
            action: HookAction::SwapNodes,
            detail: "assess ↔ verify".into(),
        },
        Event::HookEvaluated {
            key: None,
            answer: None,
            hook: "shortcut".into(),
            flow: "f3".into(),
            action: HookAction::Continue,
            target: None,
            swap: None,
            added: None,
            state_updates: Map::new(),
            decided_by: Decider::Rule,
            reason: None,
            message: None,
            denied: Some(HookAction::SkipTo),
            rejected: None,
            duration_ms: 3,
            digest: None,
        },
        entered("route", "exclusiveGateway", None),
        Event::GatewayRouted {
            key: None,
            node: "route".into(),
            flows: vec!["to_manual".into()],
            decided_by: Decider::Condition,
            reason: Some("amount > 10000".into()),
            duration_ms: 0,
            digest: None,
        },
        entered("review", "userTask", Some("Manual review")),
        Event::TaskFinished {
            key: None,
            node: "review".into(),
            status: TaskStatus::Skipped,
            outputs: Map::new(),
            variables: Map::new(),
            decided_by: Decider::None,
            reason: None,
            error: None,
            error_code: None,
            duration_ms: 0,
            digest: None,
            taint: None,
            own: Vec::new(),
        },
        entered("notify", "serviceTask", None),
        Event::TaskFinished {
            key: None,
            node: "notify".into(),
            status: TaskStatus::Failed,
            outputs: Map::new(),
            variables: Map::new(),
            decided_by: Decider::Model,
            reason: None,
            error: Some("mail server unreachable".into()),
            error_code: None,
            duration_ms: 61_000,
            digest: None,
            taint: None,
            own: Vec::new(),
        },
        entered("end", "endEvent", None),
        Event::RunFinished {
            status: RunStatus::Failed,
            message: Some("task notify failed".into()),
            variables: vars(json!({
                "applicant": "Ada",
                "amount": 25000,
                "credit_score": 712,
                "risk": "low"
            })),
            steps: 6,
        },
    ]
}

/// Records with fixed times, as a journal would hold them.
fn sample_records() -> Vec<Record> {
    sample_events()
        .into_iter()
        .enumerate()
        .map(|(i, event)| Record {
            seq: i as u64 + 1,
            at_ms: 1_735_689_600_000 + i as u64,
            prev: String::new(),
            event,
        })
        .collect()
}

const SAMPLE_RUN: &str = "20250101T000000Z-abc123";

fn options(durability: Durability) -> JournalOptions {
    JournalOptions {
        durability,
        anchor: Anchor::new(SAMPLE_RUN, Some("d1g3st".into())),
    }
}

fn create(dir: &std::path::Path, durable: bool) -> Journal {
    let durability = if durable {
        Durability::Strict
    } else {
        Durability::Off
    };
    Journal::create(dir, options(durability)).unwrap()
}

fn write_sample(dir: &std::path::Path, durable: bool) -> Vec<Record> {
    let journal = create(dir, durable);
    sample_events()
        .into_iter()
        .map(|e| journal.emit(e).unwrap())
        .collect()
}

/// A writer whose bytes the test can read afterwards.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[test]
fn write_then_read_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nested/run");
    let written = write_sample(&dir, true);

    assert_eq!(
        written.iter().map(|r| r.seq).collect::<Vec<_>>(),
        (1..=written.len() as u64).collect::<Vec<_>>()
    );
    let text = fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    assert_eq!(text.lines().count(), written.len());
    assert!(text.ends_with('\n'));
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["seq"], 1);
    assert_eq!(first["event"], "run_started");
    assert!(first["at_ms"].as_u64().unwrap() > 1_600_000_000_000);

    let read = read_journal(&dir.join("journal.jsonl")).unwrap();
    assert_eq!(
        read,
        ReadJournal {
            records: written,
            torn_tail: false
        }
    );
}

#[test]
fn buffered_journal_reads_back_too() {
    let tmp = tempfile::tempdir().unwrap();
    let written = write_sample(tmp.path(), false);
    let read = read_journal(&tmp.path().join("journal.jsonl")).unwrap();
    assert_eq!(read.records, written);
    assert!(!read.torn_tail);
}

#[test]
fn concurrent_emits_keep_the_sequence_consecutive() {
    let tmp = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let observed = Arc::clone(&seen);
    let journal = Arc::new(
        create(tmp.path(), false)
            .with_observer(move |r: &Record| observed.lock().unwrap().push(r.seq)),
    );
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let journal = Arc::clone(&journal);
            thread::spawn(move || {
                for i in 0..50 {
                    journal
                        .emit(Event::VariablesSet {
                            source: format!("thread {t}"),
                            values: vars(json!({ "i": i })),
                            taint: None,
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    journal.commit().unwrap();

    assert_eq!(journal.len(), 200);
    let read = read_journal(journal.path()).unwrap();
    assert!(!read.torn_tail);
    let seqs: Vec<u64> = read.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=200).collect::<Vec<_>>());
    // Observers see every record, in sequence order.
    assert_eq!(*seen.lock().unwrap(), seqs);
    // Each thread's own events stay in its order.
    for t in 0..4 {
        let source = format!("thread {t}");
        let mine: Vec<i64> = read
            .records
            .iter()
            .filter_map(|r| match &r.event {
                Event::VariablesSet {
                    source: s, values, ..
                } if *s == source => values["i"].as_i64(),
                _ => None,
            })
            .collect();
        assert_eq!(mine, (0..50).collect::<Vec<_>>());
    }
}

#[test]
fn a_crash_mid_line_leaves_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let written = write_sample(tmp.path(), true);
    let path = tmp.path().join("journal.jsonl");
    let len = fs::metadata(&path).unwrap().len();
    let text = fs::read_to_string(&path).unwrap();
    let last_line = text.lines().last().unwrap().len() as u64;

    // Cut the last line in half: no newline, invalid JSON.
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len - 1 - last_line / 2).unwrap();
    let read = read_journal(&path).unwrap();
    assert!(read.torn_tail);
    assert_eq!(read.records, written[..written.len() - 1]);

    // Cut just before the newline: the JSON is whole but the append never completed.
    file.set_len(len - 1).unwrap();
    let read = read_journal(&path).unwrap();
    assert!(read.torn_tail);
    assert_eq!(read.records, written[..written.len() - 1]);
}

#[test]
fn a_garbled_last_line_with_newline_is_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let written = write_sample(tmp.path(), false);
    let path = tmp.path().join("journal.jsonl");
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"{\"seq\":99,\"at_\n").unwrap();
    let read = read_journal(&path).unwrap();
    assert!(read.torn_tail);
    assert_eq!(read.records, written);
}

#[test]
fn a_corrupt_middle_line_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    write_sample(tmp.path(), false);
    let path = tmp.path().join("journal.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "{\"seq\":3, garbage";
    fs::write(&path, lines.join("\n") + "\n").unwrap();

    let err = read_journal(&path).unwrap_err();
    match &err {
        JournalError::Corrupt { path: p, line, .. } => {
            assert_eq!(p, &path);
            assert_eq!(*line, 3);
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(err.to_string().contains("journal.jsonl:3:"), "{err}");
}

#[test]
fn a_gap_in_the_sequence_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    write_sample(tmp.path(), false);
    let path = tmp.path().join("journal.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 4)
        .map(|(_, l)| l)
        .collect();
    fs::write(&path, kept.join("\n") + "\n").unwrap();

    match read_journal(&path).unwrap_err() {
        JournalError::Corrupt { line, message, .. } => {
            assert_eq!(line, 5);
            assert!(message.contains('6') && message.contains('5'), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn runs_never_share_a_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir(tmp.path(), "r1");
    let journal = create(&dir, true);
    journal
        .emit(Event::VariablesSet {
            source: "x".into(),
            values: Map::new(),
            taint: None,
        })
        .unwrap();
    drop(journal);

    let err = Journal::create(&dir, options(Durability::Strict)).unwrap_err();
    assert_eq!(err, JournalError::Exists(dir.join("journal.jsonl")));
    // The existing journal is untouched.
    assert_eq!(
        read_journal(&dir.join("journal.jsonl"))
            .unwrap()
            .records
            .len(),
        1
    );
}

#[test]
fn reading_a_missing_journal_is_an_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let err = read_journal(&tmp.path().join("nope.jsonl")).unwrap_err();
    assert!(matches!(err, JournalError::Io { .. }), "{err:?}");
}

#[test]
fn run_ids_and_folders() {
    let id = new_run_id();
    assert_eq!(id.len(), "YYYYMMDDTHHMMSSZ-xxxxxx".len(), "{id}");
    assert!(id.starts_with("20"), "{id}");
    assert_eq!(
        run_dir(std::path::Path::new(".cuga-flo"), &id),
        std::path::Path::new(".cuga-flo").join("runs").join(&id)
    );
}

#[test]
fn memory_sink_numbers_records() {
    let sink = MemorySink::new();
    for event in sample_events() {
        sink.emit(event).unwrap();
    }
    let records = sink.records();
    assert_eq!(records.len(), sample_events().len());
    assert!(
        records
            .iter()
            .enumerate()
            .all(|(i, r)| r.seq == i as u64 + 1)
    );
}

#[test]
fn the_fold_gives_the_run_state() {
    let records = sample_records();
    // Part way: after the first task and the hook's state update.
    let partial = FlowState::fold(&records[..8]);
    assert_eq!(partial.status, None);
    assert_eq!(partial.execution_path, ["start", "check_credit"]);
    assert_eq!(partial.steps, 2);
    assert_eq!(
        Value::Object(partial.process_variables.clone()),
        json!({"amount": 25000, "applicant": "Ada", "credit_score": 712, "risk": "low"})
    );

    let state = FlowState::fold(&records);
    assert_eq!(state.run_id, "20250101T000000Z-abc123");
    assert_eq!(state.app, "loan_approval");
    assert_eq!(state.process_key, "loan");
    assert_eq!(state.status, Some(RunStatus::Failed));
    assert_eq!(state.message.as_deref(), Some("task notify failed"));
    assert_eq!(state.steps, 6);
    assert_eq!(
        state.execution_path,
        ["start", "check_credit", "route", "review", "notify", "end"]
    );
    assert_eq!(
        state.gateway_decisions,
        BTreeMap::from([("route".to_owned(), vec![vec!["to_manual".to_owned()]])])
    );

    assert_eq!(state.hook_evaluations.len(), 2);
    let swap = &state.hook_evaluations[0];
    assert_eq!(
        (swap.hook.as_str(), swap.flow.as_str(), swap.action),
        ("risk_review", "f2", HookAction::SwapNodes)
    );
    assert_eq!(swap.swap, Some(("assess".into(), "verify".into())));
    assert_eq!(swap.decided_by, Decider::Model);
    let denied = &state.hook_evaluations[1];
    assert_eq!(denied.action, HookAction::Continue);
    assert_eq!(denied.denied, Some(HookAction::SkipTo));
    assert_eq!(denied.decided_by, Decider::Rule);

    let credit = &state.task_results["check_credit"];
    assert_eq!(credit.len(), 1);
    assert_eq!(credit[0].status, TaskStatus::Completed);
    assert_eq!(
        Value::Object(credit[0].outputs.clone()),
        json!({"score": 712})
    );
    assert_eq!(state.task_results["review"][0].status, TaskStatus::Skipped);
    let notify = &state.task_results["notify"][0];
    assert_eq!(notify.status, TaskStatus::Failed);
    assert_eq!(notify.error.as_deref(), Some("mail server unreachable"));

    assert_eq!(
        Value::Object(state.process_variables.clone()),
        json!({"applicant": "Ada", "amount": 25000, "credit_score": 712, "risk": "low"})
    );

    // Folding record by record is the same as folding at once, and the state serializes.
    let mut stepwise = FlowState::default();
    records.iter().for_each(|r| stepwise.apply(r));
    assert_eq!(stepwise, state);
    let back: FlowState = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    assert_eq!(back, state);
}

#[test]
fn the_fold_of_a_journal_read_back_matches_the_live_fold() {
    let tmp = tempfile::tempdir().unwrap();
    let written = write_sample(tmp.path(), false);
    let read = read_journal(&tmp.path().join("journal.jsonl")).unwrap();
    assert_eq!(FlowState::fold(&read.records), FlowState::fold(&written));
}

fn render(records: &[Record], verbose: bool) -> String {
    let buffer = Buffer::default();
    let human = Human::to_writer(
        Box::new(buffer.clone()),
        HumanOptions {
            color: false,
            verbose,
            interactive: false,
            ..Default::default()
        },
    );
    human.waiting("check_credit");
    for record in records {
        human.record(record);
    }
    human.finish(&FlowState::fold(records));
    buffer.text()
}

#[test]
fn human_view_output() {
    insta::assert_snapshot!("human_view", render(&sample_records(), false));
}

#[test]
fn human_view_verbose_output() {
    insta::assert_snapshot!("human_view_verbose", render(&sample_records(), true));
}

#[test]
fn human_view_summarizes_a_run_that_never_finished() {
    let records = sample_records();
    let out = render(&records[..5], false);
    assert!(
        out.ends_with(
            "\n✘ incomplete: the run stopped before it finished\n  path: start → Check credit\n  \
             duration: 4 ms\n  decisions: 1 (1 scripted)\n  variables:\n    amount = 25000\n    applicant = \"Ada\"\n    credit_score = 712\n"
        ),
        "{out}"
    );
}

#[test]
fn human_view_colours_only_when_asked() {
    let records = sample_records();
    assert!(!render(&records, false).contains('\x1b'));

    let buffer = Buffer::default();
    let human = Human::to_writer(
        Box::new(buffer.clone()),
        HumanOptions {
            color: true,
            verbose: false,
            interactive: false,
            ..Default::default()
        },
    );
    records.iter().for_each(|r| human.record(r));
    assert!(buffer.text().contains('\x1b'));
}

#[test]
fn json_lines_are_exactly_the_records() {
    let buffer = Buffer::default();
    let view = JsonLines::to_writer(Box::new(buffer.clone()));
    let records = sample_records();
    records.iter().for_each(|r| view.record(r));
    view.finish(&FlowState::fold(&records));

    let text = buffer.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), records.len());
    for (line, record) in lines.iter().zip(&records) {
        assert_eq!(*line, serde_json::to_string(record).unwrap());
    }
}

#[test]
fn a_journal_observer_feeds_a_view() {
    let tmp = tempfile::tempdir().unwrap();
    let buffer = Buffer::default();
    let json: Arc<dyn View> = Arc::new(JsonLines::to_writer(Box::new(buffer.clone())));
    let journal = create(tmp.path(), true).with_observer(view::observer(json));
    let written: Vec<Record> = sample_events()
        .into_iter()
        .map(|e| journal.emit(e).unwrap())
        .collect();
    let from_file = fs::read_to_string(journal.path()).unwrap();
    assert_eq!(buffer.text(), from_file);
    assert_eq!(read_journal(journal.path()).unwrap().records, written);
}

// ---- Group commit, the hash chain, the head file, the lock, reopening ----

fn line_count(path: &std::path::Path) -> usize {
    fs::read_to_string(path).unwrap().lines().count()
}

fn set(i: i64) -> Event {
    Event::VariablesSet {
        source: "test".into(),
        values: vars(json!({ "i": i })),
        taint: None,
    }
}

fn finished() -> Event {
    Event::RunFinished {
        status: RunStatus::Completed,
        message: None,
        variables: Map::new(),
        steps: 0,
    }
}

/// A journal of `durability` whose observer records the seqs it is shown.
fn observed(dir: &std::path::Path, durability: Durability) -> (Journal, Arc<Mutex<Vec<u64>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let observer = Arc::clone(&seen);
    let journal = Journal::create(dir, options(durability))
        .unwrap()
        .with_observer(move |r: &Record| observer.lock().unwrap().push(r.seq));
    (journal, seen)
}

#[test]
fn batch_writes_one_batch_per_commit_and_shows_only_what_is_committed() {
    let tmp = tempfile::tempdir().unwrap();
    let (journal, seen) = observed(tmp.path(), Durability::Batch);
    assert!(journal.is_durable());
    let path = journal.path().to_path_buf();
    for i in 0..3 {
        assert_eq!(journal.emit(set(i)).unwrap().seq, i as u64 + 1);
    }
    assert_eq!(line_count(&path), 0, "nothing is written before the commit");
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing is shown before the commit"
    );
    assert_eq!((journal.len(), journal.committed()), (3, 0));

    journal.commit().unwrap();
    assert_eq!(line_count(&path), 3);
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
    assert_eq!(journal.committed(), 3);
    let lines: Vec<String> = fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        read_head(tmp.path()),
        Some((3, line_hash(lines[2].as_bytes())))
    );

    journal.emit(set(3)).unwrap();
    journal.emit(set(4)).unwrap();
    assert_eq!(line_count(&path), 3);
    assert_eq!(seen.lock().unwrap().len(), 3);
    journal.commit().unwrap();
    journal.commit().unwrap(); // nothing to commit: nothing changes
    assert_eq!(line_count(&path), 5);
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4, 5]);
    assert_eq!(read_head(tmp.path()).unwrap().0, 5);
}

#[test]
fn run_finished_commits_by_itself() {
    for durability in [Durability::Batch, Durability::Off] {
        let tmp = tempfile::tempdir().unwrap();
        let (journal, seen) = observed(tmp.path(), durability);
        journal.emit(sample_events().remove(0)).unwrap();
        journal.emit(set(1)).unwrap();
        assert_eq!(line_count(journal.path()), 0);
        journal.emit(finished()).unwrap();
        assert_eq!(line_count(journal.path()), 3, "{durability}");
        assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
    }
}

#[test]
fn strict_writes_and_shows_each_event_as_it_is_emitted() {
    let tmp = tempfile::tempdir().unwrap();
    let (journal, seen) = observed(tmp.path(), Durability::Strict);
    assert!(journal.is_durable());
    for i in 0..3 {
        journal.emit(set(i)).unwrap();
        assert_eq!(line_count(journal.path()), i as usize + 1);
        assert_eq!(seen.lock().unwrap().len(), i as usize + 1);
        assert_eq!(read_head(tmp.path()).unwrap().0, i as u64 + 1);
    }
}

#[test]
fn off_buffers_like_batch_without_fsync() {
    let tmp = tempfile::tempdir().unwrap();
    let (journal, seen) = observed(tmp.path(), Durability::Off);
    assert!(!journal.is_durable());
    journal.emit(set(0)).unwrap();
    journal.emit(set(1)).unwrap();
    assert_eq!(line_count(journal.path()), 0);
    journal.commit().unwrap();
    assert_eq!(line_count(journal.path()), 2);
    assert_eq!(*seen.lock().unwrap(), [1, 2]);
}

#[test]
fn dropping_a_journal_commits_what_it_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let (journal, seen) = observed(tmp.path(), Durability::Batch);
    journal.emit(set(0)).unwrap();
    journal.emit(set(1)).unwrap();
    let path = journal.path().to_path_buf();
    drop(journal);
    assert_eq!(line_count(&path), 2);
    assert_eq!(*seen.lock().unwrap(), [1, 2]);
}

#[test]
fn a_buffer_over_a_mebibyte_commits_by_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let (journal, seen) = observed(tmp.path(), Durability::Batch);
    let big = "x".repeat(300_000);
    for i in 0..3 {
        journal
            .emit(Event::VariablesSet {
                source: format!("{i}"),
                values: vars(json!({ "big": big })),
                taint: None,
            })
            .unwrap();
    }
    assert_eq!(line_count(journal.path()), 0);
    journal
        .emit(Event::VariablesSet {
            source: "3".into(),
            values: vars(json!({ "big": big })),
            taint: None,
        })
        .unwrap();
    assert_eq!(line_count(journal.path()), 4, "1.2 MB buffered: committed");
    assert_eq!(seen.lock().unwrap().len(), 4);
}

#[test]
fn records_are_hash_chained_from_the_runs_anchor() {
    let tmp = tempfile::tempdir().unwrap();
    let written = write_sample(tmp.path(), false);
    let text = fs::read_to_string(tmp.path().join("journal.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), written.len());
    assert_eq!(written[0].prev, anchor(SAMPLE_RUN, Some("d1g3st")));
    assert_eq!(
        written[0].prev,
        cuga_flo::journal::chain::sha256_hex(
            format!("cuga-flo journal v1\n{SAMPLE_RUN}\nd1g3st\n").as_bytes()
        )
    );
    for i in 1..lines.len() {
        assert_eq!(written[i].prev, line_hash(lines[i - 1].as_bytes()), "{i}");
        assert_eq!(written[i].prev.len(), 64);
    }
    // Field order: seq, at_ms, prev, then the event.
    assert!(
        lines[1].starts_with("{\"seq\":2,\"at_ms\":"),
        "{}",
        lines[1]
    );
    let prev_at = lines[1].find("\"prev\":").unwrap();
    assert!(prev_at < lines[1].find("\"event\":").unwrap());
    // What was read back is what was written, prev included.
    assert_eq!(
        read_journal(&tmp.path().join("journal.jsonl"))
            .unwrap()
            .records,
        written
    );
    assert_eq!(
        read_head(tmp.path()),
        Some((
            written.len() as u64,
            line_hash(lines.last().unwrap().as_bytes())
        ))
    );
}

#[test]
fn records_without_prev_still_read() {
    let line = r#"{"seq":1,"at_ms":5,"event":"variables_set","source":"s","values":{}}"#;
    let record: Record = serde_json::from_str(line).unwrap();
    assert_eq!(record.prev, "");
    assert_eq!(serde_json::to_string(&record).unwrap(), line);
}

#[test]
fn reopening_repairs_a_torn_tail_and_continues_the_sequence_and_the_chain() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.jsonl");
    let events = sample_events();
    {
        let journal = create(tmp.path(), true);
        for e in events[..5].iter().cloned() {
            journal.emit(e).unwrap();
        }
    }
    let good = fs::read(&path).unwrap();
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"{\"seq\":6,\"at_ms\":17").unwrap();
    drop(file);

    let (journal, reopened) = Journal::open(tmp.path(), Durability::Batch).unwrap();
    assert_eq!(
        reopened.repaired,
        Some(Repair {
            line: 6,
            bytes_dropped: 19
        })
    );
    assert_eq!(reopened.records.len(), 5);
    assert_eq!(
        fs::read(&path).unwrap(),
        good,
        "cut back to the last good line"
    );
    assert_eq!(journal.len(), 5);

    let next = journal.emit(events[5].clone()).unwrap();
    journal.commit().unwrap();
    assert_eq!(next.seq, 6);
    let last_good = String::from_utf8(good.clone()).unwrap();
    assert_eq!(
        next.prev,
        line_hash(last_good.lines().last().unwrap().as_bytes())
    );
    drop(journal);
    let report = cuga_flo::journal::verify(tmp.path()).unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.records, 6);

    // A journal that needs no repair reopens as it is.
    let (journal, reopened) = Journal::open(tmp.path(), Durability::Strict).unwrap();
    assert_eq!(reopened.repaired, None);
    assert_eq!(reopened.records.len(), 6);
    assert_eq!(journal.emit(set(9)).unwrap().seq, 7);
}

#[test]
fn reopening_a_journal_with_a_bad_middle_refuses_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    write_sample(tmp.path(), false);
    let path = tmp.path().join("journal.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();

    let cases: Vec<(String, usize, &str)> = vec![
        // An edited value: record 4 no longer chains to line 3.
        (
            text.replacen("\"score\":712", "\"score\":999", 1),
            6,
            "chain",
        ),
        // Not a record at all.
        (
            {
                let mut l = lines.clone();
                l[2] = "garbage";
                l.join("\n") + "\n"
            },
            3,
            "not a journal record",
        ),
        // A gap.
        (
            {
                let mut l = lines.clone();
                l.remove(4);
                l.join("\n") + "\n"
            },
            5,
            "sequence",
        ),
    ];
    for (bad, line, what) in cases {
        fs::write(&path, &bad).unwrap();
        let head = fs::read(tmp.path().join(HEAD_FILE)).unwrap();
        match Journal::open(tmp.path(), Durability::Batch) {
            Err(JournalError::Corrupt {
                line: l, message, ..
            }) => {
                assert_eq!(l, line, "{what}: {message}");
                assert!(message.contains(what), "{message}");
            }
            Err(other) => panic!("{what}: expected Corrupt, got {other:?}"),
            Ok(_) => panic!("{what}: reopened"),
        }
        assert_eq!(fs::read_to_string(&path).unwrap(), bad, "{what}: untouched");
        assert_eq!(fs::read(tmp.path().join(HEAD_FILE)).unwrap(), head);
    }
}

#[test]
fn one_writer_per_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir(tmp.path(), "r1");
    let first = create(&dir, false);
    first.emit(set(1)).unwrap();

    let locked = |e: JournalError| match e {
        JournalError::Locked { run_dir, pid } => {
            assert_eq!(run_dir, dir);
            assert_eq!(pid, Some(std::process::id()));
            let message = JournalError::Locked { run_dir, pid }.to_string();
            assert!(
                message.contains("is being written by another cuga-flo process (pid"),
                "{message}"
            );
        }
        other => panic!("expected Locked, got {other:?}"),
    };
    locked(Journal::create(&dir, options(Durability::Batch)).unwrap_err());
    locked(
        Journal::open(&dir, Durability::Batch)
            .map(|_| ())
            .unwrap_err(),
    );

    drop(first);
    let (again, reopened) = Journal::open(&dir, Durability::Batch).unwrap();
    assert_eq!(reopened.records.len(), 1);
    // The lock is taken before the journal is looked at: a create while it is open says
    // Locked, after it Exists.
    locked(Journal::create(&dir, options(Durability::Batch)).unwrap_err());
    drop(again);
    assert_eq!(
        Journal::create(&dir, options(Durability::Batch)).unwrap_err(),
        JournalError::Exists(dir.join("journal.jsonl"))
    );
}

#[test]
fn verify_reads_a_journal_without_a_head_file_as_intact_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let written = write_sample(tmp.path(), false);
    let report = cuga_flo::journal::verify(tmp.path()).unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert!(report.head_file);
    assert_eq!(report.records, written.len() as u64);

    fs::remove_file(tmp.path().join(HEAD_FILE)).unwrap();
    let report = cuga_flo::journal::verify(tmp.path()).unwrap();
    assert!(report.is_intact());
    assert!(!report.head_file);
    assert_eq!(report.head_seq, written.len() as u64);
}

#[test]
fn xes_export_escapes_names_and_skips_what_it_does_not_know() {
    use cuga_flo::journal::export;
    let mut records = sample_records();
    if let Event::NodeEntered { name, .. } = &mut records[3].event {
        *name = Some("Check <credit> & \"score\"\n'now'".into());
    }
    let xes = export::xes("run<1>", &records);
    let mut reader = quick_xml::Reader::from_str(&xes);
    let mut names = Vec::new();
    let (mut events, mut depth_event) = (0, false);
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(e) if e.name().as_ref() == "event" => {
                events += 1;
                depth_event = true;
            }
            quick_xml::events::Event::End(e) if e.name().as_ref() == "event" => depth_event = false,
            quick_xml::events::Event::Empty(e)
                if depth_event
                    && e.try_get_attribute("key").unwrap().unwrap().value == "concept:name" =>
            {
                let v = e.try_get_attribute("value").unwrap().unwrap();
                names.push(
                    v.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .unwrap()
                        .into_owned(),
                );
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    // node_entered ×6, task_finished ×3, hook_evaluated ×2, gateway_routed, run_finished;
    // not flow_taken, variables_set, topology_changed, run_started.
    assert_eq!(events, 13);
    assert_eq!(names.len(), 13);
    let odd = "Check <credit> & \"score\"\n'now'";
    assert_eq!(names.iter().filter(|n| *n == odd).count(), 2, "{names:?}");
    assert!(xes.contains("value=\"run&lt;1&gt;\""));
    assert!(xes.contains("2025-01-01T00:00:00.003+00:00"));

    let jsonl = export::jsonl(&records);
    let back: Vec<Record> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(back, records);
}

#[test]
fn the_fold_keeps_the_remote_tasks_a_run_started_and_did_not_finish() {
    let remote = |task: &str, state: &str| cuga_flo::vocab::RemoteWait {
        agent: "reviewer".into(),
        task_id: task.into(),
        context_id: "run-1".into(),
        state: state.into(),
        until_ms: None,
        conversation: None,
    };
    let started = |node: &str, task: &str| Event::RemoteTaskStarted {
        node: node.into(),
        key: format!("run-1:{node}:1"),
        remote: remote(task, "submitted"),
    };
    let events = [
        started("review", "t-1"),
        started("audit", "t-2"),
        // A gateway's consultation, ended by its decision.
        started("shipping", "t-3"),
        Event::GatewayRouted {
            key: Some("run-1:shipping:1".into()),
            node: "shipping".into(),
            flows: vec!["express".into()],
            decided_by: Decider::Remote,
            reason: None,
            duration_ms: 1,
            digest: None,
        },
        Event::TaskFinished {
            key: Some("run-1:review:1".into()),
            node: "review".into(),
            status: TaskStatus::Completed,
            outputs: Map::new(),
            variables: Map::new(),
            decided_by: Decider::Remote,
            reason: None,
            error: None,
            error_code: None,
            duration_ms: 5,
            digest: None,
            taint: None,
            own: Vec::new(),
        },
    ];
    let records: Vec<Record> = events
        .into_iter()
        .enumerate()
        .map(|(i, event)| Record {
            seq: i as u64 + 1,
            at_ms: 1,
            prev: String::new(),
            event,
        })
        .collect();
    let state = FlowState::fold(records.iter());
    let keys: Vec<&String> = state.remote_tasks.keys().collect();
    assert_eq!(keys, ["run-1:audit:1"], "the finished visit's task is gone");
    let task = &state.remote_tasks["run-1:audit:1"];
    assert_eq!(task.node, "audit");
    assert_eq!(task.remote, remote("t-2", "submitted"));

    // As journalled: the remote task nested, and a cancellation with its agents' replies.
    let line = serde_json::to_value(&records[0]).unwrap();
    assert_eq!(line["event"], "remote_task_started");
    assert_eq!(line["remote"]["task_id"], "t-1");
    let cancelled: Event = serde_json::from_value(json!({
        "event": "run_cancelled", "by": "ana",
        "remote": [{"agent": "reviewer", "task_id": "t-2", "node": "audit", "error": "gone"}]
    }))
    .unwrap();
    let Event::RunCancelled { by, reason, remote } = &cancelled else {
        panic!("{cancelled:?}")
    };
    assert_eq!(by.as_deref(), Some("ana"));
    assert_eq!(*reason, None);
    assert_eq!(remote[0].error.as_deref(), Some("gone"));
    assert_eq!(cancelled.name(), "run_cancelled");
    assert!(!cancelled.is_derived());
}
