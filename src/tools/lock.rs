//! `tools.lock.json`, beside the flow config: what each tool source offered when `cuga-flo
//! tools <app> --lock` last listed it (every tool with its schema and annotations).
//! `validate` checks a task's `tools:` against it without starting or reaching anything;
//! a run lists its sources afresh (the lock is for checking, not for running). An OpenAPI
//! source needs no lock: its document is read where it lies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ToolSpec;

/// The lock file's name, in the flow config's folder.
pub const FILE: &str = "tools.lock.json";
/// The format's version.
pub const VERSION: u32 = 1;

/// What the sources offered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Lock {
    pub version: u32,
    /// Each source's tools, by source name, sorted by tool name.
    pub sources: BTreeMap<String, Vec<ToolSpec>>,
}

/// Why the tools lock beside a flow config cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a tools lock", .path.display())]
    NotALock {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "{}: version {version} is not {VERSION}; write it again with `cuga-flo tools <app> --lock`",
        .path.display()
    )]
    Version { path: PathBuf, version: u32 },
}

impl Lock {
    /// The lock of the config at `config_path`, if there is one; an unreadable one is an
    /// error saying why.
    pub fn read_beside(config_path: &Path) -> Result<Option<Lock>, LockError> {
        let path = path_beside(config_path);
        let text = match crate::source::read_text(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(LockError::Read { path, source }),
        };
        let lock: Lock = serde_json::from_str(&text).map_err(|source| LockError::NotALock {
            path: path.clone(),
            source,
        })?;
        if lock.version != VERSION {
            return Err(LockError::Version {
                path,
                version: lock.version,
            });
        }
        Ok(Some(lock))
    }

    /// Write the lock beside the config at `config_path` (whole or not at all: a
    /// temporary file renamed into place). Its path.
    pub fn write_beside(&self, config_path: &Path) -> std::io::Result<PathBuf> {
        let path = path_beside(config_path);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, self.to_text())?;
        std::fs::rename(&tmp, &path)?;
        Ok(path)
    }

    /// The lock as written: pretty JSON, a newline at the end.
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Where the lock of the config at `config_path` lies.
pub fn path_beside(config_path: &Path) -> PathBuf {
    config_path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(FILE)
}
