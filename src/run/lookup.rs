//! Finding a journalled run (by its id, or a unique prefix or suffix of it), reading its
//! records, and the app it ran.

use std::path::{Path, PathBuf};

use crate::journal::store::{self, JOURNAL_FILE};
use crate::journal::{Event, Record};
use crate::view::Names;

/// Why a run cannot be found or read.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// No run's id is, starts or ends with what was given.
    #[error("no run `{wanted}` under {}", base.join("runs").display())]
    NoRun {
        wanted: String,
        base: PathBuf,
        /// The newest run there, if any.
        newest: Option<String>,
    },
    /// Several runs match: more of the id is needed.
    #[error("`{wanted}` names {} runs; give more of the id", matching.len())]
    Ambiguous {
        wanted: String,
        matching: Vec<String>,
    },
    /// Its journal cannot be read.
    #[error("cannot read the journal: {0}")]
    Unreadable(#[source] crate::journal::JournalError),
    /// Its journal fails verification (its chain or its head file): what it says cannot be
    /// trusted.
    #[error("run `{id}`'s journal is not intact: record {seq} {kind}: {detail}", seq = .problem.seq, kind = .problem.kind.as_str(), detail = .problem.detail)]
    Tampered {
        id: String,
        problem: crate::journal::Tampered,
    },
}

impl crate::diag::Help for LookupError {
    fn help(&self) -> Option<String> {
        match self {
            LookupError::NoRun { newest, .. } => Some(match newest {
                Some(last) => format!("`cuga-flo runs list` shows them; the newest is `{last}`"),
                None => "no run has been journalled there yet".to_string(),
            }),
            LookupError::Ambiguous { matching, .. } => {
                let shown: Vec<&str> = matching.iter().take(10).map(String::as_str).collect();
                let more = matching.len().saturating_sub(shown.len());
                Some(format!(
                    "candidates: {}{}",
                    shown.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ))
            }
            LookupError::Unreadable(_) => None,
            LookupError::Tampered { id, .. } => Some(format!(
                "`cuga-flo runs verify {id}` says what is wrong; pass --allow-tampered to read \
                 it anyway"
            )),
        }
    }
}

/// The run `wanted` names: its id, `last` (the newest run), or a unique prefix, suffix or
/// fragment of its id (`20261201T21`, the memorable `295d46` at its end, `T0515`).
pub fn find_run(base: &Path, wanted: &str) -> Result<String, LookupError> {
    let ids = store::run_ids(base);
    if ids.iter().any(|id| id == wanted) {
        return Ok(wanted.to_string());
    }
    let no_run = || LookupError::NoRun {
        wanted: wanted.to_string(),
        base: base.to_path_buf(),
        newest: newest(base, &ids),
    };
    if matches!(wanted, "last" | "latest") {
        return newest(base, &ids).ok_or_else(no_run);
    }
    let matching = |fits: &dyn Fn(&str) -> bool| -> Vec<&String> {
        if wanted.is_empty() {
            Vec::new()
        } else {
            ids.iter().filter(|id| fits(id)).collect()
        }
    };
    let mut found = matching(&|id| id.starts_with(wanted) || id.ends_with(wanted));
    if found.is_empty() {
        found = matching(&|id| id.contains(wanted));
    }
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(no_run()),
        many => Err(LookupError::Ambiguous {
            wanted: wanted.to_string(),
            matching: many.iter().map(|s| s.to_string()).collect(),
        }),
    }
}

/// The run of `ids` that started last (by its first record's time: ids of different
/// shapes, a timestamp and an A2A task's UUID, do not sort by time); ties by id.
pub fn newest(base: &Path, ids: &[String]) -> Option<String> {
    ids.iter()
        .map(|id| {
            let path = store::run_dir(base, id).join(JOURNAL_FILE);
            (store::first_record(&path).map_or(0, |r| r.at_ms), id)
        })
        .max()
        .map(|(_, id)| id.clone())
}

/// The records of run `id`'s journal.
pub fn read(base: &Path, id: &str) -> Result<Vec<Record>, LookupError> {
    read_checked(base, id, false).map(|(records, _)| records)
}

/// Run `id`'s records, its journal verified first ([`crate::journal::verify`]): one that is
/// not intact is refused, unless `allow_tampered` (then what is wrong comes back with the
/// records, for the caller to say loudly).
pub fn read_checked(
    base: &Path,
    id: &str,
    allow_tampered: bool,
) -> Result<(Vec<Record>, Option<crate::journal::Tampered>), LookupError> {
    // Read once: verified, then parsed (brought from the shared store first, with one).
    crate::journal::shared::refresh(base, id).map_err(LookupError::Unreadable)?;
    let dir = store::run_dir(base, id);
    let path = dir.join(JOURNAL_FILE);
    let bytes = std::fs::read(&path)
        .map_err(|e| LookupError::Unreadable(crate::journal::JournalError::io(&path, &e)))?;
    let report = crate::journal::verify::check(&bytes, store::read_head(&dir).as_ref());
    // A torn last line is what a write in progress (or a crash, repaired when the run is
    // reopened) leaves: the records before it are read, as the journal reader reads them.
    let problem = (report.problem).filter(|p| {
        !(p.kind == crate::journal::Tampering::Truncated && p.seq == report.records + 1)
    });
    if let Some(problem) = &problem
        && !allow_tampered
    {
        return Err(LookupError::Tampered {
            id: id.to_string(),
            problem: problem.clone(),
        });
    }
    let records = store::parse_journal(&path, &bytes)
        .map(|r| r.records)
        .map_err(LookupError::Unreadable)?;
    Ok((records, problem))
}

/// What to call a journalled run's elements: the app it ran (from where it was launched,
/// else by its name under the apps folder), when it still loads; the journal itself names
/// what it entered either way.
pub fn names_of(apps_dir: &Path, records: &[Record]) -> Names {
    match app_of(apps_dir, records) {
        Some(app) => Names::from_app(&app),
        None => Names::default(),
    }
}

/// The app a journalled run ran (from where it was launched, else by its name under the
/// apps folder), when it still loads.
pub fn app_of(apps_dir: &Path, records: &[Record]) -> Option<crate::app::LoadedApp> {
    let Some(Event::RunStarted { app, launch, .. }) = records.first().map(|r| &r.event) else {
        return None;
    };
    let dir = launch
        .as_ref()
        .and_then(|l| l.app_dir.as_deref())
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| apps_dir.join(app));
    if !dir.join("config").is_dir() {
        return None;
    }
    Some(crate::app::load_app(&crate::app::registry::app_at(&dir)))
}
