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

/// What delivering a message or signal to a waiting run did.
pub enum Delivered {
    /// Journalled under the run's lock, here: the run (its journal open) goes on from
    /// `records` when resumed.
    Here {
        journal: Box<Journal>,
        records: Vec<Record>,
        repaired: Option<String>,
        /// The catches that received it.
        at: Vec<String>,
    },
    /// A server (`serve`, process `pid`) holds the run: it journalled the delivery and
    /// resumes the run itself.
    Held { pid: u32, at: Vec<String> },
}

/// Why a delivery was refused (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error(transparent)]
    Open(#[from] ReopenError),
    #[error(transparent)]
    Refused(#[from] crate::journal::mailbox::DeliveryError),
}

impl super::Help for DeliverError {
    fn help(&self) -> Option<String> {
        match self {
            DeliverError::Open(e) => e.help(),
            DeliverError::Refused(crate::journal::mailbox::DeliveryError::NotWaiting {
                ..
            }) => Some(
                "nothing was recorded; `cuga-flo runs show <run>` shows what the run waits for"
                    .to_string(),
            ),
            DeliverError::Refused(_) => Some("nothing was recorded".to_string()),
        }
    }
}

/// Deliver `delivery` to the waiting run `id` under `base`: journalled under its lock, or
/// posted to the server holding it.
pub fn deliver(
    base: &Path,
    id: &str,
    delivery: &crate::journal::mailbox::Delivery,
    durability: Durability,
) -> Result<Delivered, DeliverError> {
    use crate::journal::mailbox;
    let received_at = |written: &[Record]| -> Vec<String> {
        (written.iter())
            .filter_map(|r| match &r.event {
                Event::MessageReceived { node, .. } => Some(node.clone()),
                _ => None,
            })
            .collect()
    };
    let (journal, mut records, repaired) = match reopen(base, id, durability) {
        Ok(opened) => opened,
        Err(e) => {
            return match mailbox::held_parked(&store::run_dir(base, id)) {
                Some(pid) => {
                    let written = mailbox::deliver_to_run(base, id, delivery, durability)?;
                    Ok(Delivered::Held {
                        pid,
                        at: received_at(&written),
                    })
                }
                None => Err(e.into()),
            };
        }
    };
    let written = mailbox::deliver(&journal, &records, id, delivery)?;
    let at = received_at(&written);
    records.extend(written);
    Ok(Delivered::Here {
        journal: Box::new(journal),
        records,
        repaired,
        at,
    })
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
    due_runs_late(base, now).0
}

/// [`due_runs`], and how late the most overdue of them is at `now` (ms past the timer or
/// deadline it waited for; 0 when none waited for one).
pub fn due_runs_late(base: &Path, now: u64) -> (Vec<String>, u64) {
    let mut late = 0;
    let ids = store::run_ids(base)
        .into_iter()
        .filter(|id| {
            let path = store::run_dir(base, id).join(store::JOURNAL_FILE);
            match store::last_record(&path).map(|r| r.event) {
                Some(Event::RunWaiting { due_ms, reason, .. }) => {
                    if let Some(due) = due_ms.filter(|due| *due <= now) {
                        late = late.max(now - due);
                        return true;
                    }
                    return child_finished(base, &reason);
                }
                Some(Event::RunFinished { .. }) => return false,
                _ => {}
            }
            store::read_journal(&path)
                .is_ok_and(|r| can_go_on(base, &FlowState::fold(r.records.iter()), now))
        })
        .collect();
    (ids, late)
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

/// A parked run taken to be resumed here: its journal open (its lock held), its records,
/// and what reopening it repaired.
pub struct Taken {
    pub id: String,
    pub journal: Journal,
    pub records: Vec<Record>,
    pub repaired: Option<String>,
}

/// What taking runs did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakenAll {
    /// How many runs were handed over to be resumed.
    pub resumed: usize,
    /// Taking stopped early (`stop` was set, or a resume asked to stop): the runs not taken
    /// yet are left for the next look.
    pub stopped: bool,
}

/// Take each run of `ids` (each with how it was found: `true` when an approver's decision
/// in its graph lets it go on, else due) that can still go on, up to `concurrency` at once,
/// each on a thread of its own, and hand it to `resume`, which says whether to go on taking.
/// A run is taken by exactly one process: its journal is opened under its lock (a run
/// another process holds is left to it) and looked at again, since another worker may
/// have resumed it between the look that listed it and the lock. What `worker` and `runs
/// resume --due` resume runs with.
pub fn take_each<F>(
    base: &Path,
    durability: Durability,
    ids: Vec<(String, bool)>,
    concurrency: usize,
    stop: &std::sync::atomic::AtomicBool,
    resume: F,
) -> TakenAll
where
    F: Fn(Taken) -> bool + Sync,
{
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let queue = std::sync::Mutex::new(std::collections::VecDeque::from(ids));
    let stopped = AtomicBool::new(false);
    let resumed = AtomicUsize::new(0);
    let next = || {
        if stop.load(Ordering::SeqCst) || stopped.load(Ordering::SeqCst) {
            return None;
        }
        queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
    };
    let take_one = |(id, from_graph): (String, bool)| {
        let (journal, records, repaired) = match reopen(base, &id, durability) {
            Ok(open) => open,
            Err(e) => {
                tracing::info!("run {id}: {e}");
                return;
            }
        };
        let state = FlowState::fold(records.iter());
        let goes_on = if from_graph {
            state.status.is_none()
                && state.waiting.is_some()
                && state.open_questions.values().any(|q| q.approval.is_some())
        } else {
            can_go_on(base, &state, crate::clock::now_ms())
        };
        if !goes_on {
            tracing::info!("run {id}: resumed by another worker since it was due; left");
            return;
        }
        resumed.fetch_add(1, Ordering::SeqCst);
        let taken = Taken {
            id,
            journal,
            records,
            repaired,
        };
        if !resume(taken) {
            stopped.store(true, Ordering::SeqCst);
        }
    };
    let threads = concurrency
        .max(1)
        .min(queue.lock().map_or(1, |q| q.len().max(1)));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(run) = next() {
                    take_one(run);
                }
            });
        }
    });
    TakenAll {
        resumed: resumed.load(Ordering::SeqCst),
        stopped: stopped.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst),
    }
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
