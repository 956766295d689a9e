//! Checking a run's journal against its hash chain and its head file: intact, or the first
//! record that cannot be trusted and how it was tampered with.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::chain::{anchor, line_hash};
use super::event::{Event, Record};
use super::store::{JOURNAL_FILE, JournalError, read_head, split_lines};

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// The journal file.
    pub journal: PathBuf,
    /// The records read before the first problem (all of them when intact).
    pub records: u64,
    /// The last record read: its seq and its line's hash (`0` and the empty string for an
    /// empty journal).
    pub head_seq: u64,
    pub head_hash: String,
    /// Whether `journal.head` was there to check the end against.
    pub head_file: bool,
    /// The first problem, when there is one.
    pub problem: Option<Tampered>,
}

impl VerifyReport {
    pub fn is_intact(&self) -> bool {
        self.problem.is_none()
    }
}

/// The first record that cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tampered {
    /// The first bad record's sequence number (for `Removed`, the first missing one).
    pub seq: u64,
    pub kind: Tampering,
    /// What exactly is wrong, in words.
    pub detail: String,
}

/// How a journal was changed after it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tampering {
    /// A record's line changed: its hash is not the next record's `prev` (or record 1 does
    /// not match its anchor, or the last record not the head file's hash), or it is not a
    /// record at all.
    Edited,
    /// A record is where it does not belong: a duplicate or out-of-order sequence number.
    Inserted,
    /// Records are missing: a gap in the sequence, or fewer records than the head file says
    /// were committed.
    Removed,
    /// The last line is torn: cut short, without its newline, or not a record.
    Truncated,
}

impl Tampering {
    pub fn as_str(self) -> &'static str {
        match self {
            Tampering::Edited => "edited",
            Tampering::Inserted => "inserted",
            Tampering::Removed => "removed",
            Tampering::Truncated => "truncated",
        }
    }
}

impl std::fmt::Display for Tampering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Verify the journal in `run_dir` against its chain and its head file. Errors only when
/// the journal cannot be read.
///
/// With a shared store, the store's lines and head are what is verified (the run folder
/// is only a cache of them).
pub fn verify(run_dir: &Path) -> Result<VerifyReport, JournalError> {
    let path = run_dir.join(JOURNAL_FILE);
    let (bytes, head) = match super::shared::stored(run_dir) {
        Some(stored) => stored?,
        None => (
            fs::read(&path).map_err(|e| JournalError::io(&path, &e))?,
            read_head(run_dir),
        ),
    };
    let mut report = check(&bytes, head.as_ref());
    report.journal = path;
    report.head_file = head.is_some();
    Ok(report)
}

/// [`verify`] on a journal's bytes and its head file's `(seq, hash)`.
pub fn check(bytes: &[u8], head: Option<&(u64, String)>) -> VerifyReport {
    let (lines, tail) = split_lines(bytes);
    let count = lines.len();
    let mut report = VerifyReport {
        journal: PathBuf::new(),
        records: 0,
        head_seq: 0,
        head_hash: String::new(),
        head_file: head.is_some(),
        problem: None,
    };
    let parsed: Vec<Option<Record>> = lines
        .iter()
        .map(|&(s, e)| serde_json::from_slice(&bytes[s..e]).ok())
        .collect();
    let mut hashes: Vec<String> = Vec::with_capacity(count);
    let tamper = |seq: u64, kind: Tampering, detail: String| Some(Tampered { seq, kind, detail });
    for (index, &(start, end)) in lines.iter().enumerate() {
        let expected = index as u64 + 1;
        let line = &bytes[start..end];
        let Some(record) = &parsed[index] else {
            report.problem = if index + 1 == count && tail.is_none() {
                tamper(
                    expected,
                    Tampering::Truncated,
                    format!("line {} is not a whole record (torn)", index + 1),
                )
            } else {
                tamper(
                    expected,
                    Tampering::Edited,
                    format!("line {} is not a journal record", index + 1),
                )
            };
            return report;
        };
        if record.seq != expected {
            // Out of place: a record that belongs elsewhere (a later line holds the seq
            // expected here, or this seq was seen already) is inserted; otherwise records
            // are missing.
            let later = parsed[index + 1..]
                .iter()
                .flatten()
                .any(|r| r.seq == expected);
            report.problem = if record.seq < expected || later {
                tamper(
                    expected,
                    Tampering::Inserted,
                    format!(
                        "line {} holds record {} where record {expected} belongs ({})",
                        index + 1,
                        record.seq,
                        if record.seq < expected {
                            "a duplicate"
                        } else {
                            "out of order"
                        }
                    ),
                )
            } else {
                tamper(
                    expected,
                    Tampering::Removed,
                    format!(
                        "records {expected} to {} are missing (line {} holds record {})",
                        record.seq - 1,
                        index + 1,
                        record.seq
                    ),
                )
            };
            return report;
        }
        if index == 0 {
            let want = match &record.event {
                Event::RunStarted {
                    run_id, app_digest, ..
                } => Some(anchor(run_id, app_digest.as_deref())),
                _ => None,
            };
            if want.as_deref() != Some(record.prev.as_str()) {
                report.problem = tamper(
                    1,
                    Tampering::Edited,
                    if record.prev.is_empty() {
                        "record 1 has no hash chain (written before journals were chained?)"
                            .to_string()
                    } else {
                        "record 1 does not match its anchor (its run id, app digest or prev changed)"
                            .to_string()
                    },
                );
                return report;
            }
        } else if record.prev != hashes[index - 1] {
            report.problem = tamper(
                expected - 1,
                Tampering::Edited,
                format!(
                    "record {} changed: its line's hash is not record {expected}'s prev",
                    expected - 1
                ),
            );
            return report;
        }
        hashes.push(line_hash(line));
        report.records = expected;
        report.head_seq = expected;
        report.head_hash = hashes[index].clone();
    }
    if tail.is_some() {
        report.problem = tamper(
            report.records + 1,
            Tampering::Truncated,
            format!(
                "the last line (line {}) is cut short: it has no newline",
                count + 1
            ),
        );
        return report;
    }
    // A run writes nothing after its end: a record after `run_finished` was added since.
    let finished = parsed
        .iter()
        .flatten()
        .position(|r| matches!(r.event, crate::journal::Event::RunFinished { .. }));
    if let Some(at) = finished
        && (at as u64 + 1) < report.records
    {
        report.problem = tamper(
            at as u64 + 2,
            Tampering::Inserted,
            format!(
                "record {} follows the run's end (`run_finished` is record {}): a finished run \
                 writes nothing more",
                at + 2,
                at + 1
            ),
        );
        return report;
    }
    if let Some((seq, hash)) = head {
        if *seq > report.records {
            report.problem = tamper(
                report.records + 1,
                Tampering::Removed,
                format!(
                    "the head file says {seq} records were committed; the journal holds {}",
                    report.records
                ),
            );
        } else if *seq > 0 && hashes[*seq as usize - 1] != *hash {
            report.problem = tamper(
                *seq,
                Tampering::Edited,
                format!("record {seq} changed: its line's hash is not the head file's"),
            );
        }
    }
    report
}
