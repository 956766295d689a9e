//! Parked runs: which can go on now (a timer or deadline due, an answer or a delivery
//! recorded since they parked, a child run they wait for finished), reopening one for
//! writing, and the questions whose deadline passed answered with their `on_timeout`.
//! What the worker, `runs resume --due`, `runs answer` and `serve` share.

use std::path::Path;

use crate::journal::store::{self, Journal, JournalError};
use crate::journal::{Durability, Event, EventSink, FlowState, Record};
use crate::reason::park::{self, Given};
use crate::vocab::Decider;

/// Why a run's journal cannot be reopened for writing.
#[derive(Debug, thiserror::Error)]
pub enum ReopenError {
    #[error("run `{id}` is being written by another cuga-flo process: {source}")]
    Locked {
        id: String,
        #[source]
        source: JournalError,
    },
    #[error("cannot reopen the journal of run `{id}`: {source}")]
    Other {
        id: String,
        #[source]
        source: JournalError,
    },
}

impl super::Help for ReopenError {
    fn help(&self) -> Option<String> {
        let help: Option<&str> = match self {
            ReopenError::Locked { .. } => {
                Some("wait for it to finish, or stop it; a run has one writer at a time")
            }
            ReopenError::Other { .. } => None,
        };
        help.map(str::to_string)
    }
}

/// The parked runs under `base` that can go on at `now`: a timer or a deadline is due,
/// or a question was answered (`runs answer --no-resume`) or a message or signal
/// delivered (`--no-resume`, the bridge's tools) since the run parked.
///
/// A parked run's journal ends with its `run_waiting` (a finished run's with
/// `run_finished`): those are told from the journal's last record alone, read from the end
/// of the file, so a look costs the same however long the runs' journals are. Any other
/// ending (an answer or a delivery recorded since it parked, a run a crash stopped) is
/// folded from the whole journal.
pub fn due_runs(base: &Path, now: u64) -> Vec<String> {
    store::run_ids(base)
        .into_iter()
        .filter(|id| {
            let path = store::run_dir(base, id).join(store::JOURNAL_FILE);
            match store::last_record(&path).map(|r| r.event) {
                Some(Event::RunWaiting { due_ms, reason, .. }) => {
                    return due_ms.is_some_and(|due| due <= now) || child_finished(base, &reason);
                }
                Some(Event::RunFinished { .. }) => return false,
                _ => {}
            }
            store::read_journal(&path)
                .is_ok_and(|r| can_go_on(base, &FlowState::fold(r.records.iter()), now))
        })
        .collect()
}

/// Whether a run in `state` can go on at `now` (what [`due_runs`] looks for).
pub fn can_go_on(base: &Path, state: &FlowState, now: u64) -> bool {
    let Some(waiting) = state.waiting.as_ref().filter(|_| state.status.is_none()) else {
        return false;
    };
    waiting.due_ms.is_some_and(|due| due <= now)
        || !state.unapplied_answers.is_empty()
        || !waiting.delivered.is_empty()
        || child_finished(base, &waiting.reason)
}

/// A run parked for a call activity's child run (`child run <id>, ...`) can go on once
/// one of them has finished (the child was answered and resumed on its own).
pub fn child_finished(base: &Path, reason: &str) -> bool {
    let Some(children) = reason.strip_prefix("child run ") else {
        return false;
    };
    children.split(", ").any(|id| {
        let path = store::run_dir(base, id).join(store::JOURNAL_FILE);
        match store::last_record(&path).map(|r| r.event) {
            Some(Event::RunFinished { status, .. }) => {
                return status != crate::vocab::RunStatus::Waiting;
            }
            Some(Event::RunWaiting { .. }) => return false,
            _ => {}
        }
        store::read_journal(&path).is_ok_and(|r| {
            FlowState::fold(r.records.iter())
                .status
                .is_some_and(|s| s != crate::vocab::RunStatus::Waiting)
        })
    })
}

/// Open run `id`'s journal for writing (taking its lock).
pub fn reopen(
    base: &Path,
    id: &str,
    durability: Durability,
) -> Result<(Journal, Vec<Record>, Option<String>), ReopenError> {
    let dir = store::run_dir(base, id);
    let (journal, reopened) = Journal::open(&dir, durability).map_err(|source| match source {
        JournalError::Locked { .. } => ReopenError::Locked {
            id: id.to_string(),
            source,
        },
        source => ReopenError::Other {
            id: id.to_string(),
            source,
        },
    })?;
    let repaired = reopened.repaired.map(|r| {
        format!(
            "a torn last line (line {}, {} bytes) was cut off",
            r.line, r.bytes_dropped
        )
    });
    if let Some(r) = &repaired {
        tracing::warn!("run {id}: {r}");
    }
    Ok((journal, reopened.records, repaired))
}

/// Questions of a run in `state` whose deadline has passed are answered with their
/// `on_timeout` (checked as any answer, journalled as decided by `timeout`) before the run
/// resumes; the records journalled.
pub fn answer_timeouts(journal: &Journal, state: &FlowState) -> Result<Vec<Record>, JournalError> {
    let now = crate::clock::now_ms();
    let mut records = Vec::new();
    for q in state.open_questions.values() {
        let (Some(deadline), Some(on_timeout)) = (q.deadline_ms, &q.on_timeout) else {
            continue;
        };
        if deadline > now {
            continue;
        }
        let answer = Given::from_value(on_timeout).and_then(|g| park::check_answer(q, &g));
        let answer = match answer {
            Ok(a) => a,
            Err(why) => {
                tracing::warn!(
                    "{}: the on_timeout answer cannot be given ({why}); the question stays open",
                    q.key
                );
                continue;
            }
        };
        let record = journal
            .emit(Event::QuestionAnswered {
                key: q.key.clone(),
                answer,
                decided_by: Decider::Timeout,
                by: None,
                reason: Some(format!(
                    "no answer by the deadline ({})",
                    crate::view::utc_time(deadline)
                )),
            })
            .and_then(|r| journal.commit().map(|()| r))?;
        records.push(record);
    }
    Ok(records)
}
