//! The terminal a run shares with a person: the questions being asked there right now,
//! and whether the run's stream has caught up. A person's prompt
//! ([`crate::reason::human`]) holds an [`Asking`] while it waits; the view's spinner steps
//! aside meanwhile, and a run interrupted at a prompt parks the questions (`runs answer`
//! answers them later). A prompt is drawn only once every record emitted before it is
//! shown ([`caught_up`]): a journal marks what it emits and what it commits (and so
//! shows), so that the step a question follows is on the screen before the question, and
//! no stream line lands on the prompt's line. A leaf: both sides only read or mark.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use crate::vocab::Question;

/// The questions being asked at the terminal now (what Ctrl-C at a prompt parks).
static ASKING: Mutex<Vec<Question>> = Mutex::new(Vec::new());

/// The questions a person is being asked at the terminal right now: a run interrupted
/// at a prompt parks them, so that `runs answer` can answer them later.
pub fn asking() -> Vec<Question> {
    ASKING.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Marks a question as being asked until dropped.
pub struct Asking(String);

impl Asking {
    pub fn start(question: Question) -> Asking {
        let key = question.key.clone();
        ASKING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(question);
        Asking(key)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        ASKING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|q| q.key != self.0);
    }
}

/// Records emitted to journals and not yet shown (committed) in this process.
static UNSHOWN: AtomicI64 = AtomicI64::new(0);

/// `n` records were emitted: they are shown when committed.
pub fn emitted(n: usize) {
    UNSHOWN.fetch_add(i64::try_from(n).unwrap_or(i64::MAX), Ordering::Relaxed);
}

/// `n` records emitted earlier were committed (shown), or dropped by a failed write.
pub fn shown(n: usize) {
    UNSHOWN.fetch_sub(i64::try_from(n).unwrap_or(i64::MAX), Ordering::Relaxed);
}

/// Wait until every record emitted so far is shown, at most `limit` (the run's engine
/// commits as soon as it waits for the prompt's answer, so this is short; the limit only
/// guards a journal that stopped committing from holding a prompt back).
pub async fn caught_up(limit: Duration) {
    let until = Instant::now() + limit;
    while UNSHOWN.load(Ordering::Relaxed) > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
