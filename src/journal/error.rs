//! What can go wrong with a journal: the file store's errors and a shared store's.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: a journal already exists there (runs never share state)", .0.display())]
    Exists(PathBuf),
    #[error("{}:{line}: {message}", path.display())]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("an event could not be serialized: {0}")]
    Serialize(String),
    #[error(
        "run {} is being written by another cuga-flo process{}",
        run_dir.display(),
        match pid { Some(pid) => format!(" (pid {pid})"), None => String::new() }
    )]
    Locked { run_dir: PathBuf, pid: Option<u32> },
    /// The run's lease in a shared store was lost (the store went away and another process
    /// took the run meanwhile, or its head moved): this process may not write it any more.
    #[error("run {} is no longer this process's to write: {message}", run_dir.display())]
    Fenced { run_dir: PathBuf, message: String },
}

impl JournalError {
    pub(crate) fn io(path: &Path, err: &io::Error) -> Self {
        JournalError::Io {
            path: path.to_path_buf(),
            message: err.to_string(),
        }
    }
}
