//! The runs under a run folder as lists show them (each journal read once and folded), and
//! pruning old ones: which may go (never a run another process holds; a parked or
//! unfinished run only when asked), and removing them under their journal's lock.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::journal::store::{self, JOURNAL_FILE};
use crate::journal::{Event, FlowState, JournalError};
use crate::vocab::RunStatus;

/// A run's status in a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Listed {
    Completed,
    Terminated,
    Failed,
    /// Parked: waiting for an answer, a timer, a message or a child run.
    Waiting,
    Cancelled,
    /// Stopped without an end (a crash): `runs resume` continues it.
    Unfinished,
    /// Stopped before its first record was written: it never started.
    Empty,
    /// The journal cannot be read.
    Unreadable,
}

impl Listed {
    pub const ALL: [Listed; 8] = [
        Listed::Completed,
        Listed::Terminated,
        Listed::Failed,
        Listed::Waiting,
        Listed::Cancelled,
        Listed::Unfinished,
        Listed::Empty,
        Listed::Unreadable,
    ];

    /// The status of a run whose journal reads as `state` (not empty).
    pub fn of(state: &FlowState) -> Listed {
        match state.status {
            Some(RunStatus::Completed) => Listed::Completed,
            Some(RunStatus::Terminated) => Listed::Terminated,
            Some(RunStatus::Failed) => Listed::Failed,
            Some(RunStatus::Waiting) => Listed::Waiting,
            Some(RunStatus::Cancelled) => Listed::Cancelled,
            None if state.waiting.is_some() => Listed::Waiting,
            None => Listed::Unfinished,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Listed::Completed => "completed",
            Listed::Terminated => "terminated",
            Listed::Failed => "failed",
            Listed::Waiting => "waiting",
            Listed::Cancelled => "cancelled",
            Listed::Unfinished => "unfinished",
            Listed::Empty => "empty",
            Listed::Unreadable => "unreadable",
        }
    }

    /// Whether the run has more to do (it can be resumed, answered, delivered to).
    pub fn is_open(self) -> bool {
        matches!(self, Listed::Waiting | Listed::Unfinished)
    }
}

/// One run as a list shows it.
#[derive(Debug)]
pub struct RunSummary {
    pub id: String,
    pub state: FlowState,
    pub status: Listed,
    /// When its first record was written (0: none).
    pub started_ms: u64,
    /// When its last record was written (0: none).
    pub last_ms: u64,
    pub scenario: Option<String>,
    /// Why its journal cannot be read.
    pub problem: Option<String>,
}

impl RunSummary {
    /// Run `id` under `base`, its journal read once.
    pub fn read(base: &Path, id: String) -> RunSummary {
        let path = store::run_dir(base, &id).join(JOURNAL_FILE);
        let (records, problem) = match store::read_journal(&path) {
            Ok(r) => (r.records, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let state = FlowState::fold(records.iter());
        let started_ms = records.first().map_or(0, |r| r.at_ms);
        let last_ms = records.last().map_or(0, |r| r.at_ms);
        let scenario = match records.first().map(|r| &r.event) {
            Some(Event::RunStarted {
                launch: Some(launch),
                ..
            }) => launch.scenario.clone(),
            _ => None,
        };
        let status = match &problem {
            Some(_) => Listed::Unreadable,
            // Stopped before its first record: `runs cancel` removes it.
            None if records.is_empty() => Listed::Empty,
            None => Listed::of(&state),
        };
        RunSummary {
            id,
            state,
            status,
            started_ms,
            last_ms,
            scenario,
            problem,
        }
    }

    pub fn duration_ms(&self) -> u64 {
        self.last_ms.saturating_sub(self.started_ms)
    }
}

/// Every run under `base`, newest first (by its first record's time: ids made in the same
/// second do not sort by time).
pub fn summaries(base: &Path) -> Vec<RunSummary> {
    let mut runs: Vec<RunSummary> = store::run_ids(base)
        .into_iter()
        .map(|id| RunSummary::read(base, id))
        .collect();
    runs.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| b.id.cmp(&a.id))
    });
    runs
}

/// Which runs `runs prune` takes.
#[derive(Debug, Clone, Default)]
pub struct Prune {
    /// Only runs whose last record is at least this old.
    pub older_than: Option<Duration>,
    /// Only runs with one of these statuses (none: any).
    pub statuses: Vec<Listed>,
    /// Only the runs of this app.
    pub app: Option<String>,
    /// Parked and unfinished runs too (they still have work to do).
    pub include_open: bool,
}

/// Why a run the filter selects is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// It is parked or unfinished, and `include_open` is off.
    Open(Listed),
}

/// What pruning would take, and what it keeps of what it selects.
#[derive(Debug)]
pub struct Plan {
    pub take: Vec<RunSummary>,
    pub keep: Vec<(RunSummary, Kept)>,
}

impl Prune {
    /// The runs under `base` this prune selects, at `now_ms`.
    pub fn plan(&self, base: &Path, now_ms: u64) -> Plan {
        let mut plan = Plan {
            take: Vec::new(),
            keep: Vec::new(),
        };
        for run in summaries(base) {
            if self.app.as_ref().is_some_and(|app| &run.state.app != app) {
                continue;
            }
            if !self.statuses.is_empty() && !self.statuses.contains(&run.status) {
                continue;
            }
            if let Some(age) = self.older_than {
                let age_ms = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
                // A run with no record yet is as old as its folder.
                let last = match run.last_ms {
                    0 => modified_ms(&store::run_dir(base, &run.id)),
                    t => t,
                };
                if now_ms.saturating_sub(last) < age_ms {
                    continue;
                }
            }
            if run.status.is_open() && !self.include_open {
                let status = run.status;
                plan.keep.push((run, Kept::Open(status)));
            } else {
                plan.take.push(run);
            }
        }
        plan
    }
}

/// Why a run could not be removed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// Another process holds its journal: the run is live.
    #[error("run `{id}` is live{}: it was not removed", .pid.map(|p| format!(" (process {p})")).unwrap_or_default())]
    Live { id: String, pid: Option<u32> },
    #[error("cannot remove run `{id}`")]
    Remove {
        id: String,
        #[source]
        source: JournalError,
    },
}

/// Remove run `id` under `base`, holding its journal's lock meanwhile: a run that another
/// process has open (live, or being resumed) is refused, never removed from under it.
pub fn remove(base: &Path, id: &str) -> Result<PathBuf, PruneError> {
    let dir = store::run_dir(base, id);
    let held = store::hold(&dir).map_err(|e| match e {
        JournalError::Locked { pid, .. } => PruneError::Live {
            id: id.to_string(),
            pid,
        },
        source => PruneError::Remove {
            id: id.to_string(),
            source,
        },
    })?;
    let removed = crate::journal::shared::remove(&dir)
        .map_err(|source| PruneError::Remove {
            id: id.to_string(),
            source,
        })
        .and_then(|()| {
            std::fs::remove_dir_all(&dir).map_err(|e| PruneError::Remove {
                id: id.to_string(),
                source: JournalError::io(&dir, &e),
            })
        });
    drop(held);
    removed.map(|()| dir)
}

fn modified_ms(path: &Path) -> u64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
