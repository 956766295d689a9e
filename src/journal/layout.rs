//! A run's folder: where its files are (`<base>/runs/<run_id>/journal.jsonl`, its head
//! file), which run ids may name one, and how a journal's bytes split into lines. Below
//! both the journal file ([`super::store`]) and a shared store's cache of it
//! ([`super::shared`]), which lay runs out the same way.

use std::fs;
use std::path::{Path, PathBuf};

/// The journal's file name inside a run directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// The head file: `{seq} {hash of the last committed line}\n`, rewritten after each commit.
pub const HEAD_FILE: &str = "journal.head";

/// The id of the run whose folder is `run_dir` (its name).
pub fn run_id_of(run_dir: &Path) -> String {
    run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Where a run's files live: `<base>/runs/<run_id>`.
pub fn run_dir(base: &Path, run_id: &str) -> PathBuf {
    base.join("runs").join(run_id)
}

/// Whether `id` can name a run folder: 1 to 128 ASCII letters, digits, `-`, `_` and `.`,
/// not starting with `.` (so `..` and hidden names are refused). Run ids come from
/// clients of the bridge too, and must never reach outside `<base>/runs/`.
pub fn check_run_id(id: &str) -> Result<(), BadRunId> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(BadRunId(id.chars().take(140).collect()))
    }
}

/// A run id that cannot name a folder: 1 to 128 letters, digits, `-`, `_` or `.`, not
/// starting with `.` (the id shown is cut at 140 characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a valid run id (1 to 128 letters, digits, `-`, `_` or `.`, not starting with `.`)"
)]
pub struct BadRunId(pub String);

/// The head file's line for `(seq, hash)`: one length for every seq (zero-padded to 20
/// digits), so the journal rewrites it in place.
pub fn head_line(seq: u64, hash: &str) -> String {
    format!("{seq:020} {hash}\n")
}

/// The head file's `(seq, hash)`, when it is there and reads.
pub fn read_head(run_dir: &Path) -> Option<(u64, String)> {
    let text = fs::read_to_string(run_dir.join(HEAD_FILE)).ok()?;
    let (seq, hash) = text.trim().split_once(' ')?;
    Some((seq.parse().ok()?, hash.to_string()))
}

/// A byte range `(start, end)` of a journal's bytes.
pub type LineRange = (usize, usize);

/// A journal's bytes split into lines: each complete line's byte range (without its
/// newline; the newline is at `end`), and the range of an unterminated last piece.
pub fn split_lines(bytes: &[u8]) -> (Vec<LineRange>, Option<LineRange>) {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            lines.push((start, i));
            start = i + 1;
        }
    }
    let tail = (start < bytes.len()).then_some((start, bytes.len()));
    (lines, tail)
}
