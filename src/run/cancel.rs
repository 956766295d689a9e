//! Cancelling a run: a parked run (or one a crash left behind) ends `cancelled`, its
//! remote tasks cancelled at their agents first (`CancelTask`, each reply or failure
//! journalled) and its child runs with it. A run another process is writing is refused,
//! a finished one too, and nothing is written then. Shared by `runs cancel`, `runs
//! replay` (of a cancelled run) and a served run its A2A caller cancels.

use std::path::Path;

use crate::app::registry::AppRef;
use crate::journal::store::{self, Journal, JournalError};
use crate::journal::{Durability, Event, EventSink, FlowState, Record};

/// An app by the name or folder a run's journal (or `--app`) gives; `None`: not found.
pub type FindApp<'a> = Box<dyn Fn(&str) -> Option<AppRef> + 'a>;

/// Where the runs to cancel are, and how to find a run's app (for its remote agents).
pub struct Cancelling<'a> {
    /// Where runs are journalled.
    pub run_dir: &'a Path,
    pub durability: Durability,
    /// The app, when the run's app folder has moved (`runs cancel --app`).
    pub app: Option<&'a str>,
    /// An app by the name or folder the journal (or `app`) gives.
    pub find_app: FindApp<'a>,
}

/// Why a run cannot be cancelled (nothing was written to it).
#[derive(Debug, thiserror::Error)]
pub enum CancelError {
    #[error("cannot read the journal of run `{id}`: {source}")]
    Read {
        id: String,
        #[source]
        source: JournalError,
    },
    #[error("run `{id}` has finished ({status}); there is nothing to cancel")]
    Finished { id: String, status: &'static str },
    #[error(
        "run `{id}` is live: {} is running it, and a run is written by one process at a time, so it cannot be cancelled from here",
        pid.map_or_else(|| "another cuga-flo process".to_string(), |p| format!("cuga-flo process {p}"))
    )]
    Live { id: String, pid: Option<u32> },
    #[error("cannot reopen the journal of run `{id}`: {source}")]
    Reopen {
        id: String,
        #[source]
        source: JournalError,
    },
    #[error("cannot journal the cancellation: {0}")]
    Journal(#[source] JournalError),
}

impl super::Help for CancelError {
    fn help(&self) -> Option<String> {
        let help: Option<&str> = match self {
            CancelError::Finished { .. } => Some("nothing was written"),
            CancelError::Live { .. } => Some(
                "stop that process (Ctrl-C, or SIGTERM: the run parks where it stands), then `cuga-flo runs cancel` it",
            ),
            _ => None,
        };
        help.map(str::to_string)
    }
}

/// What `runs cancel` did to one run.
pub struct Cancelled {
    pub run_id: String,
    pub by: Option<String>,
    pub reason: Option<String>,
    pub remote: Vec<crate::journal::event::RemoteCancelled>,
    /// Child runs (of a call activity the run waited for) cancelled with it.
    pub children: Vec<Cancelled>,
    /// The run never started (stopped before its first record): its empty journal was
    /// removed instead, losing nothing.
    pub removed: bool,
}

/// Cancel run `id` (see the module's documentation): what was done, to it and to its
/// children.
pub fn cancel_run(
    c: &Cancelling<'_>,
    id: &str,
    by: Option<String>,
    reason: Option<String>,
) -> Result<Cancelled, CancelError> {
    // A finished run is refused before its lock is taken: nothing is written to it.
    let path = store::run_dir(c.run_dir, id).join(store::JOURNAL_FILE);
    let read = store::read_journal(&path).map_err(|source| CancelError::Read {
        id: id.to_string(),
        source,
    })?;
    finished_refused(id, &FlowState::fold(read.records.iter()))?;
    let dir = store::run_dir(c.run_dir, id);
    let (journal, reopened) = Journal::open(&dir, c.durability).map_err(|e| match e {
        JournalError::Locked { pid, .. } => CancelError::Live {
            id: id.to_string(),
            pid,
        },
        source => CancelError::Reopen {
            id: id.to_string(),
            source,
        },
    })?;
    if let Some(r) = reopened.repaired {
        tracing::warn!(
            "run {id}: a torn last line (line {}, {} bytes) was cut off",
            r.line,
            r.bytes_dropped
        );
    }
    let records = reopened.records;
    let state = FlowState::fold(records.iter());
    finished_refused(id, &state)?;
    if records.is_empty() {
        // Stopped before its first record (killed while it was being created): nothing
        // was journalled, and nothing can resume it. Its folder goes, under its lock.
        drop(journal);
        std::fs::remove_dir_all(&dir).map_err(|e| CancelError::Reopen {
            id: id.to_string(),
            source: JournalError::io(&dir, &e),
        })?;
        return Ok(Cancelled {
            run_id: id.to_string(),
            by,
            reason,
            remote: Vec::new(),
            children: Vec::new(),
            removed: true,
        });
    }
    let remote = cancel_remote_tasks(c, &records, &state);
    journal_cancellation(&journal, by.clone(), reason.clone(), remote.clone(), &state)
        .map_err(CancelError::Journal)?;
    drop(journal);
    let children = cancel_children(c, id, &records, &state, by.clone());
    Ok(Cancelled {
        run_id: id.to_string(),
        by,
        reason,
        remote,
        children,
        removed: false,
    })
}

/// How long a child run stopped with its parent in this process may take to let its
/// journal go.
const LET_GO: std::time::Duration = std::time::Duration::from_secs(5);

/// The child runs of run `id` (cancelled: its journal is `records`) that have not ended
/// go with it: those it waited for when it parked and those its call activities started
/// (a served run cancelled while a child was going), each cancelled as `runs cancel`
/// cancels a run, its own children with it. Shared by `runs cancel` and a served run
/// cancelled by its caller.
pub fn cancel_children(
    c: &Cancelling<'_>,
    id: &str,
    records: &[Record],
    state: &FlowState,
    by: Option<String>,
) -> Vec<Cancelled> {
    let mut ids: Vec<String> = state
        .waiting
        .as_ref()
        .and_then(|w| w.reason.strip_prefix("child run "))
        .map(|ids| ids.split(", ").map(str::to_string).collect())
        .unwrap_or_default();
    for record in records {
        if let Event::ChildStarted { run_id, .. } = &record.event
            && !ids.contains(run_id)
        {
            ids.push(run_id.clone());
        }
    }
    let mut children = Vec::new();
    for child in ids {
        let path = store::run_dir(c.run_dir, &child).join(store::JOURNAL_FILE);
        let open = store::read_journal(&path).is_ok_and(|r| {
            !r.records.is_empty() && FlowState::fold(r.records.iter()).status.is_none()
        });
        if !open {
            continue;
        }
        // A child going in this process with its parent, which was just stopped, lets
        // its journal go once its own task is dropped on the parent's thread.
        let dir = store::run_dir(c.run_dir, &child);
        let waited = std::time::Instant::now();
        while store::held_here(&dir) && waited.elapsed() < LET_GO {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        match cancel_run(
            c,
            &child,
            by.clone(),
            Some(format!("its parent run {id} was cancelled")),
        ) {
            Ok(done) => children.push(done),
            Err(e) => tracing::warn!("child run {child}: {e}"),
        }
    }
    children
}

fn finished_refused(id: &str, state: &FlowState) -> Result<(), CancelError> {
    match state.status {
        Some(status) => Err(CancelError::Finished {
            id: id.to_string(),
            status: status.as_str(),
        }),
        None => Ok(()),
    }
}

/// `CancelTask` for each remote task the run waits for (or sent before a crash), at the
/// agent its app names: the agent's reply (the task's state) or why it failed. The run is
/// cancelled whatever the agents say.
fn cancel_remote_tasks(
    c: &Cancelling<'_>,
    records: &[Record],
    state: &FlowState,
) -> Vec<crate::journal::event::RemoteCancelled> {
    use crate::journal::event::RemoteCancelled;
    if state.remote_tasks.is_empty() {
        return Vec::new();
    }
    let failed = |why: &str| -> Vec<RemoteCancelled> {
        state
            .remote_tasks
            .values()
            .map(|t| RemoteCancelled {
                agent: t.remote.agent.clone(),
                task_id: t.remote.task_id.clone(),
                node: t.node.clone(),
                state: None,
                error: Some(why.to_string()),
            })
            .collect()
    };
    let app = match records.first().map(|r| &r.event) {
        Some(Event::RunStarted { app, launch, .. }) => c.app.map(str::to_string).or_else(|| {
            launch
                .as_ref()
                .and_then(|l| l.app_dir.clone())
                .filter(|d| Path::new(d).is_dir())
                .or_else(|| Some(app.clone()))
        }),
        _ => None,
    };
    let loaded = match app.as_deref().and_then(|a| (c.find_app)(a)) {
        Some(app) => crate::app::load_app(&app),
        None => {
            return failed(
                "the run's app cannot be found, so neither can its remote agents (pass --app)",
            );
        }
    };
    let Some(config) = loaded.config.as_ref() else {
        return failed("the run's app has no flow config, so no remote agents");
    };
    let remotes = crate::reason::remote::Remotes::of(config);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return failed(&format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(cancel_at_agents(&remotes, state))
}

/// `CancelTask` for each remote task `state` waits for (or sent before a crash), at its
/// agent among `remotes`: the agent's reply (the task's state) or why it failed. Shared by
/// `runs cancel` and a served run cancelled by its caller.
pub async fn cancel_at_agents(
    remotes: &crate::reason::remote::Remotes,
    state: &FlowState,
) -> Vec<crate::journal::event::RemoteCancelled> {
    let mut out = Vec::new();
    for task in state.remote_tasks.values() {
        let r = &task.remote;
        let result = match remotes.get(&r.agent) {
            Some(remote) => remote
                .cancel_task(&r.task_id)
                .await
                .map_err(|e| e.to_string()),
            None => Err(format!(
                "the app has no remote agent `{}` any more",
                r.agent
            )),
        };
        if let Err(e) = &result {
            tracing::warn!("CancelTask {} at `{}`: {e}", r.task_id, r.agent);
        }
        out.push(crate::journal::event::RemoteCancelled {
            agent: r.agent.clone(),
            task_id: r.task_id.clone(),
            node: task.node.clone(),
            state: result.as_ref().ok().filter(|s| !s.is_empty()).cloned(),
            error: result.err(),
        });
    }
    out
}

/// End a run cancelled: `run_cancelled` (who, why, what its remote agents said) and
/// `run_finished` with status `cancelled` (the message `cancelled by WHO: WHY`, the run's
/// variables and steps as `state` has them), committed together. Shared by `runs cancel`
/// and a served run cancelled by its caller.
pub fn journal_cancellation(
    sink: &dyn EventSink,
    by: Option<String>,
    reason: Option<String>,
    remote: Vec<crate::journal::event::RemoteCancelled>,
    state: &FlowState,
) -> Result<(), JournalError> {
    let message = match (&by, &reason) {
        (Some(b), Some(r)) => format!("cancelled by {b}: {r}"),
        (Some(b), None) => format!("cancelled by {b}"),
        (None, Some(r)) => format!("cancelled: {r}"),
        (None, None) => "cancelled".to_string(),
    };
    sink.emit(Event::RunCancelled { by, reason, remote })?;
    sink.emit(Event::RunFinished {
        status: crate::vocab::RunStatus::Cancelled,
        message: Some(message),
        variables: state.process_variables.clone(),
        steps: state.steps,
    })?;
    sink.commit()
}
