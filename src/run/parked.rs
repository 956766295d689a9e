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
    due_among(base, &store::run_ids(base), now)
}

/// [`due_runs_late`] among the runs `ids` under `base` (listed already).
pub fn due_among(base: &Path, ids: &[String], now: u64) -> (Vec<String>, u64) {
    let mut late = 0;
    let ids = (ids.iter())
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
        .cloned()
        .collect();
    (ids, late)
}

/// The runs of `ids` (under `base`) a process stopped in (SIGKILL, a lost machine, a
/// store that went away): their journal is neither finished nor parked, and nobody holds
/// it (its file lock, or with a shared store its lease on any host). A worker fleet's look at its
/// engine does not find such a run when its instance has no job waiting (it ended, or
/// moved on by itself, after the dead worker's last completion); on a shared store a
/// native run on a lost host is found only so. Resumed, each goes on from its journal
/// (a fleet's run re-attaches to its instance and journals how it ended). One read of
/// each journal's last line.
pub fn orphans(base: &Path, ids: &[String]) -> Vec<String> {
    (ids.iter())
        .filter(|id| {
            let dir = store::run_dir(base, id);
            !matches!(
                store::last_record(&dir.join(store::JOURNAL_FILE)).map(|r| r.event),
                None | Some(Event::RunFinished { .. } | Event::RunWaiting { .. })
            ) && store::hold(&dir).is_ok()
        })
        .cloned()
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

/// A parked run taken to be resumed here: its journal open (its lock held), its records,
/// and what reopening it repaired.
pub struct Taken {
    pub id: String,
    pub journal: Journal,
    pub records: Vec<Record>,
    pub repaired: Option<String>,
}

/// How a run to take was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Due: a timer or a deadline, an answer, a delivery ([`due_runs`]).
    Due,
    /// Waiting at a guardrail, with an approver's decision in its graph.
    Decided,
    /// Its engine has work for it (a worker fleet's look, [`super::fleet`]): it goes on
    /// unless it has finished.
    Engine,
    /// A process stopped in it ([`orphans`]): it goes on unless it has finished.
    Orphaned,
}

/// What a pool of workers is handed: a run to resume, or something else to run for run
/// `id` (`A`: a worker fleet's instance to take over).
pub enum Next<A> {
    Resume(String, Found),
    Other(String, A),
}

impl<A> Next<A> {
    /// The run it is for.
    pub fn id(&self) -> &str {
        match self {
            Next::Resume(id, _) | Next::Other(id, _) => id,
        }
    }
}

/// What [`take_each`] hands its caller: a run taken to be resumed, or the other work.
pub enum Job<A> {
    Resume(Box<Taken>),
    Other(A),
}

/// What taking runs did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakenAll {
    /// How many runs were handed over to be resumed (or other work run).
    pub resumed: usize,
    /// Taking stopped early (`stop` was set, or a resume asked to stop): the runs not taken
    /// yet are left for the next look.
    pub stopped: bool,
}

/// Take each run of `items` (each with how it was found) that can still go on, and each
/// other piece of work, up to `concurrency` at once, each on a thread of its own, and
/// hand it to `run`, which says whether to go on taking. A run is taken by exactly one
/// process: its journal is opened under its lock (a run another process holds is left to
/// it) and looked at again, since another worker may have resumed it between the look
/// that listed it and the lock. What `worker` and `runs resume --due` resume runs with.
pub fn take_each<A, F>(
    base: &Path,
    durability: Durability,
    items: Vec<Next<A>>,
    concurrency: usize,
    stop: &std::sync::atomic::AtomicBool,
    run: F,
) -> TakenAll
where
    A: Send,
    F: Fn(Job<A>) -> bool + Sync,
{
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let queue = std::sync::Mutex::new(std::collections::VecDeque::from(items));
    let stopped = AtomicBool::new(false);
    let resumed = AtomicUsize::new(0);
    let next = || {
        if stop.load(Ordering::SeqCst) || stopped.load(Ordering::SeqCst) {
            return None;
        }
        queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
    };
    let take_one = |item: Next<A>| {
        let job = match item {
            Next::Other(_, other) => Job::Other(other),
            Next::Resume(id, found) => {
                let (journal, records, repaired) = match reopen(base, &id, durability) {
                    Ok(open) => open,
                    Err(e) => {
                        tracing::info!("run {id}: {e}");
                        return;
                    }
                };
                let state = FlowState::fold(records.iter());
                let goes_on = match found {
                    Found::Decided => {
                        state.status.is_none()
                            && state.waiting.is_some()
                            && state.open_questions.values().any(|q| q.approval.is_some())
                    }
                    Found::Due => can_go_on(base, &state, crate::clock::now_ms()),
                    Found::Engine | Found::Orphaned => state.status.is_none(),
                };
                if !goes_on {
                    tracing::info!("run {id}: resumed by another worker since it was found; left");
                    return;
                }
                Job::Resume(Box::new(Taken {
                    id,
                    journal,
                    records,
                    repaired,
                }))
            }
        };
        resumed.fetch_add(1, Ordering::SeqCst);
        if !run(job) {
            stopped.store(true, Ordering::SeqCst);
        }
    };
    let threads = concurrency
        .max(1)
        .min(queue.lock().map_or(1, |q| q.len().max(1)));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(item) = next() {
                    take_one(item);
                }
            });
        }
    });
    TakenAll {
        resumed: resumed.load(Ordering::SeqCst),
        stopped: stopped.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst),
    }
}

/// Keep up to `concurrency` runs going until `stop` is set: `look(free)` is asked, on
/// this thread, about every `tick` for new work (at most `free` pieces: the threads not
/// busy and nothing queued for them), and each piece found is handed, as [`take_each`]
/// hands it, to one of `concurrency` threads, at once: a long run holds one thread, not
/// the next look. Work for a run already queued or in hand is dropped. Once `stop` is
/// set (or `run` says stop), nothing more is taken; the runs in hand go on until they
/// end or park, and then this returns.
pub fn serve_each<A, L, F>(
    base: &Path,
    durability: Durability,
    concurrency: usize,
    stop: &std::sync::atomic::AtomicBool,
    tick: std::time::Duration,
    mut look: L,
    run: F,
) -> TakenAll
where
    A: Send,
    L: FnMut(usize) -> Vec<Next<A>>,
    F: Fn(Job<A>) -> bool + Sync,
{
    use std::collections::{HashSet, VecDeque};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex};
    let concurrency = concurrency.max(1);
    let queue: Mutex<VecDeque<Next<A>>> = Mutex::new(VecDeque::new());
    let ready = Condvar::new();
    let in_hand: Mutex<HashSet<String>> = Mutex::new(HashSet::new());
    let busy = AtomicUsize::new(0);
    let closing = AtomicBool::new(false);
    let stopped = AtomicBool::new(false);
    let resumed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..concurrency {
            scope.spawn(|| {
                loop {
                    let item = {
                        let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if closing.load(Ordering::SeqCst) {
                                return;
                            }
                            if let Some(item) = q.pop_front() {
                                busy.fetch_add(1, Ordering::SeqCst);
                                break item;
                            }
                            q = ready
                                .wait_timeout(q, std::time::Duration::from_millis(200))
                                .map_or_else(|e| e.into_inner().0, |(q, _)| q);
                        }
                    };
                    let id = item.id().to_string();
                    let taken = take_each(base, durability, vec![item], 1, &closing, &run);
                    resumed.fetch_add(taken.resumed, Ordering::SeqCst);
                    if taken.stopped && !closing.load(Ordering::SeqCst) {
                        stopped.store(true, Ordering::SeqCst);
                    }
                    in_hand
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&id);
                    busy.fetch_sub(1, Ordering::SeqCst);
                }
            });
        }
        while !stop.load(Ordering::SeqCst) && !stopped.load(Ordering::SeqCst) {
            let queued = queue.lock().map_or(0, |q| q.len());
            let free = concurrency.saturating_sub(busy.load(Ordering::SeqCst) + queued);
            if free > 0 {
                let found = look(free);
                if !found.is_empty() {
                    let mut hand = in_hand.lock().unwrap_or_else(|e| e.into_inner());
                    let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                    for item in found {
                        if hand.insert(item.id().to_string()) {
                            q.push_back(item);
                        }
                    }
                    ready.notify_all();
                }
            }
            std::thread::sleep(tick);
        }
        // Nothing more is taken: the queued work is left for the next worker's look.
        closing.store(true, Ordering::SeqCst);
        queue.lock().unwrap_or_else(|e| e.into_inner()).clear();
        ready.notify_all();
    });
    TakenAll {
        resumed: resumed.load(Ordering::SeqCst),
        stopped: true,
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use super::*;

    /// Work found while other work runs is taken at once by a free thread (not after the
    /// slow one ends), work for a run in hand is not taken twice, and a stop lets the work
    /// in hand end before `serve_each` returns.
    #[test]
    fn serve_each_takes_new_work_while_a_long_run_holds_a_thread() {
        let base = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let ran: Mutex<Vec<(String, std::time::Instant)>> = Mutex::new(Vec::new());
        let started = std::time::Instant::now();
        let mut looks = 0;
        let look = |free: usize| -> Vec<Next<u32>> {
            looks += 1;
            assert!(free <= 2, "free {free}");
            match looks {
                // A slow run, and a second look that finds it again (in hand: dropped).
                1 => vec![Next::Other("slow".into(), 300)],
                2 => vec![Next::Other("slow".into(), 300)],
                3 => vec![Next::Other("quick".into(), 1)],
                _ => {
                    if started.elapsed() > Duration::from_millis(200) {
                        stop.store(true, Ordering::SeqCst);
                    }
                    Vec::new()
                }
            }
        };
        let taken = serve_each(
            base.path(),
            Durability::Off,
            2,
            &stop,
            Duration::from_millis(5),
            look,
            |job: Job<u32>| {
                let Job::Other(ms) = job else {
                    unreachable!("only other work here")
                };
                std::thread::sleep(Duration::from_millis(u64::from(ms)));
                let name = if ms > 1 { "slow" } else { "quick" };
                ran.lock()
                    .unwrap()
                    .push((name.into(), std::time::Instant::now()));
                true
            },
        );
        let ran = ran.into_inner().unwrap();
        let names: Vec<&str> = ran.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["quick", "slow"],
            "the slow run once, the quick one first"
        );
        assert!(
            ran[0].1 - started < Duration::from_millis(250),
            "taken at once"
        );
        assert_eq!(taken.resumed, 2);
    }
}
