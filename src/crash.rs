//! A test hook for durability: with `CUGA_FLO_CRASH_AT=N` in the environment, the process
//! kills itself with SIGKILL when it reaches its N-th crash point (counting from 1), so a
//! test can stop a run at any point it chooses, as a power cut or `kill -9` would: no
//! destructor runs, nothing buffered is flushed. With `CUGA_FLO_CRASH_TRACE=1`, every
//! crash point passed is written to stderr as `crash-point N NAME` (a test counts them to
//! choose where to kill). Crash points are where the journal writes and fsyncs, and where
//! the engine receives an answer before it is journalled. Without these variables a crash
//! point costs one relaxed atomic load.
//!
//! Imports nothing of the crate.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

struct Plan {
    at: Option<u64>,
    trace: bool,
}

static PLAN: OnceLock<Plan> = OnceLock::new();
static PASSED: AtomicU64 = AtomicU64::new(0);

fn plan() -> &'static Plan {
    PLAN.get_or_init(|| Plan {
        at: std::env::var("CUGA_FLO_CRASH_AT")
            .ok()
            .and_then(|v| v.trim().parse().ok()),
        trace: std::env::var_os("CUGA_FLO_CRASH_TRACE").is_some(),
    })
}

/// Whether crash points are armed at all (the journal then writes batches in two halves,
/// so that a crash can fall inside one).
pub fn armed() -> bool {
    let p = plan();
    p.at.is_some() || p.trace
}

/// A crash point named `name`.
pub fn point(name: &str) {
    let p = plan();
    if p.at.is_none() && !p.trace {
        return;
    }
    let n = PASSED.fetch_add(1, Ordering::SeqCst) + 1;
    if p.trace {
        eprintln!("crash-point {n} {name}");
    }
    if p.at == Some(n) {
        kill_self();
    }
}

#[cfg(unix)]
fn kill_self() -> ! {
    // SAFETY: kill(2) on our own pid with a signal that cannot be caught.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    // SIGKILL is delivered before kill returns for the calling process; never reached.
    std::process::abort()
}

#[cfg(not(unix))]
fn kill_self() -> ! {
    std::process::abort()
}
