//! A test hook for durability: with `CUGA_FLO_CRASH_AT=N` in the environment, the process
//! kills itself with SIGKILL when it reaches its N-th crash point (counting from 1), or
//! with `CUGA_FLO_CRASH_AT=NAME#K` the K-th time it passes the crash point named NAME
//! (which does not depend on how many other points a busy machine's commits pass first),
//! so a test can stop a run at any point it chooses, as a power cut or `kill -9` would: no
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
    /// The N-th crash point of any name.
    at: Option<u64>,
    /// The K-th pass of the crash point with this name.
    named: Option<(String, u64)>,
    trace: bool,
}

static PLAN: OnceLock<Plan> = OnceLock::new();
static PASSED: AtomicU64 = AtomicU64::new(0);
static PASSED_NAMED: AtomicU64 = AtomicU64::new(0);

fn plan() -> &'static Plan {
    PLAN.get_or_init(|| {
        let at = std::env::var("CUGA_FLO_CRASH_AT").unwrap_or_default();
        let at = at.trim();
        let named = at.rsplit_once('#').and_then(|(name, k)| {
            let k = k.trim().parse().ok()?;
            Some((name.to_string(), k))
        });
        Plan {
            at: at.parse().ok(),
            named,
            trace: std::env::var_os("CUGA_FLO_CRASH_TRACE").is_some(),
        }
    })
}

/// Whether crash points are armed at all (the journal then writes batches in two halves,
/// so that a crash can fall inside one).
pub fn armed() -> bool {
    let p = plan();
    p.at.is_some() || p.named.is_some() || p.trace
}

/// A crash point named `name`.
pub fn point(name: &str) {
    let p = plan();
    if !armed() {
        return;
    }
    let n = PASSED.fetch_add(1, Ordering::SeqCst) + 1;
    if p.trace {
        eprintln!("crash-point {n} {name}");
    }
    if p.at == Some(n) {
        kill_self();
    }
    if let Some((wanted, k)) = &p.named
        && wanted == name
        && PASSED_NAMED.fetch_add(1, Ordering::SeqCst) + 1 == *k
    {
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
