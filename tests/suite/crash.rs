//! A run stopped from outside leaves a journal that reads back: killed without warning
//! (SIGKILL), every complete record in order with at most a torn last line, and a state
//! that folds from it; interrupted (Ctrl-C), a run parked with a final `run_waiting`
//! record (exit 130), which `runs resume` continues.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuga_flo::journal::store::read_journal;
use cuga_flo::journal::{Durability, Event, FlowState, Journal, verify};
use cuga_flo::vocab::RunStatus;

/// Start the endless-loop fixture and wait until its journal holds `bytes` bytes. The
/// caller owns the child and waits for it (clippy cannot see across the return).
#[allow(clippy::zombie_processes)]
fn start_endless(runs: &Path, bytes: u64) -> (Child, PathBuf) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "--apps-dir",
            "tests/fixtures/apps",
            "start",
            "endless",
            "--json",
        ])
        .args(["--step-budget", "100000000", "--run-dir"])
        .arg(runs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = std::fs::read_dir(runs.join("runs"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path().join("journal.jsonl"));
        let big_enough = |p: &PathBuf| std::fs::metadata(p).is_ok_and(|m| m.len() > bytes);
        if let Some(path) = found.filter(big_enough) {
            return (child, path);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not get going");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_run_killed_mid_flight_leaves_a_readable_journal() {
    let runs = tempfile::tempdir().unwrap();
    let (mut child, journal) = start_endless(runs.path(), 20_000);
    child.kill().unwrap();
    child.wait().unwrap();

    let read = read_journal(&journal).expect("a killed run's journal reads back");
    assert!(
        read.records.len() > 50,
        "only {} records",
        read.records.len()
    );
    for (i, r) in read.records.iter().enumerate() {
        assert_eq!(r.seq, i as u64 + 1, "records are consecutive");
    }
    let state = FlowState::fold(read.records.iter());
    assert_eq!(state.status, None, "the run never finished");
    assert_eq!(state.process_key, "endless_v1");
    assert!(
        state
            .execution_path
            .iter()
            .filter(|n| *n == "Task_Poll")
            .count()
            > 10
    );

    // Reopened to append: a torn tail is cut off, every record chains, and the journal
    // verifies (no process holds its lock any more).
    let dir = journal.parent().unwrap();
    let (reopened, found) = Journal::open(dir, Durability::Batch).expect("the journal reopens");
    assert_eq!(found.records, read.records);
    assert_eq!(found.repaired.is_some(), read.torn_tail);
    drop(reopened);
    let report = verify(dir).unwrap();
    assert!(report.is_intact(), "{report:?}");
}

#[test]
fn ctrl_c_stops_the_run_and_parks_it() {
    let runs = tempfile::tempdir().unwrap();
    let (child, journal) = start_endless(runs.path(), 5_000);
    // The shell's own `kill`, so the test needs no extra package.
    let status = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(stderr.contains("runs resume"), "{stderr}");

    let read = read_journal(&journal).unwrap();
    assert!(!read.torn_tail);
    let last = &read.records.last().unwrap().event;
    assert!(
        matches!(last, Event::RunWaiting { reason, .. } if reason == "interrupted"),
        "nothing after the park: {last:?}"
    );
    let state = FlowState::fold(read.records.iter());
    assert_eq!(state.status, None, "an interrupted run has not finished");
    assert_eq!(state.current_status(), Some(RunStatus::Waiting));
}
