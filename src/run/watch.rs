//! Following a run's journal as it grows (`runs watch`): the records appended since the
//! last look, complete lines only (a line being written is read once it ends), each
//! checked against the hash chain as `verify` checks it, so that what is shown of a run
//! someone else is running is what its journal holds.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::journal::chain::{anchor, line_hash};
use crate::journal::store::JOURNAL_FILE;
use crate::journal::{Event, Record};

/// Why a journal cannot be followed.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line that is not a record, or a record that does not follow the one before it.
    #[error("{}: line {line} is not intact: {why}", .path.display())]
    Tampered {
        path: PathBuf,
        line: usize,
        why: String,
    },
}

/// A journal read as it grows.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    /// Where the next unread byte is.
    offset: u64,
    /// The bytes of a line not ended yet.
    partial: Vec<u8>,
    /// The hash of the last line read (the next record's `prev`).
    prev: Option<String>,
    /// Lines read so far.
    lines: usize,
    /// The next record's sequence number.
    seq: u64,
}

impl Follower {
    /// Follow the journal of the run folder `run_dir`, from its start.
    pub fn new(run_dir: &Path) -> Follower {
        Follower {
            path: run_dir.join(JOURNAL_FILE),
            offset: 0,
            partial: Vec::new(),
            prev: None,
            lines: 0,
            seq: 1,
        }
    }

    /// The records appended since the last call.
    pub fn next_records(&mut self) -> Result<Vec<Record>, WatchError> {
        let read = |source| WatchError::Read {
            path: self.path.clone(),
            source,
        };
        // With a shared store, the run may be going on another host: its lines come from
        // the store into this host's copy first.
        if let Some(dir) = self.path.parent()
            && let Err(e) = crate::journal::shared::refresh_dir(dir)
        {
            tracing::warn!("{}: cannot bring it from the run store: {e}", dir.display());
        }
        let mut file = std::fs::File::open(&self.path).map_err(read)?;
        let len = file.metadata().map_err(read)?.len();
        if len < self.offset {
            return Err(self.tampered(self.lines + 1, "the journal got shorter".into()));
        }
        file.seek(SeekFrom::Start(self.offset)).map_err(read)?;
        let mut bytes = Vec::new();
        file.take(len - self.offset)
            .read_to_end(&mut bytes)
            .map_err(read)?;
        self.offset += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        let mut records = Vec::new();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let line = &line[..line.len() - 1];
            self.lines += 1;
            records.push(self.check(line)?);
        }
        Ok(records)
    }

    fn check(&mut self, line: &[u8]) -> Result<Record, WatchError> {
        let n = self.lines;
        let record: Record = serde_json::from_slice(line)
            .map_err(|e| self.tampered(n, format!("not a journal record ({e})")))?;
        if record.seq != self.seq {
            return Err(self.tampered(
                n,
                format!("record {} where {} was next", record.seq, self.seq),
            ));
        }
        let expected = match (&self.prev, &record.event) {
            (Some(prev), _) => Some(prev.clone()),
            (
                None,
                Event::RunStarted {
                    run_id, app_digest, ..
                },
            ) => Some(anchor(run_id, app_digest.as_deref())),
            // A journal reopened before its first record anchors on its folder's name;
            // `verify` judges that case.
            (None, _) => None,
        };
        if let Some(expected) = expected
            && record.prev != expected
        {
            return Err(self.tampered(n, "it does not follow the record before it".into()));
        }
        self.prev = Some(line_hash(line));
        self.seq += 1;
        Ok(record)
    }

    fn tampered(&self, line: usize, why: String) -> WatchError {
        WatchError::Tampered {
            path: self.path.clone(),
            line,
            why,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::store::{Journal, JournalOptions};
    use crate::journal::{Durability, EventSink};

    fn started() -> Event {
        serde_json::from_value(serde_json::json!({
            "event": "run_started", "run_id": "r", "app": "a", "process_key": "p",
            "process_id": "P", "engine": "native", "reasoner": "scripted", "variables": {}
        }))
        .unwrap()
    }

    /// Records come as they are committed, complete lines only; an edited line stops the
    /// follower.
    #[test]
    fn records_come_as_committed_and_an_edit_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("r");
        let options = JournalOptions {
            durability: Durability::Batch,
            anchor: crate::journal::chain::Anchor::new("r", None),
        };
        let journal = Journal::create(&run, options).unwrap();
        let mut follower = Follower::new(&run);
        assert!(follower.next_records().unwrap().is_empty());
        journal.emit(started()).unwrap();
        assert!(
            follower.next_records().unwrap().is_empty(),
            "not committed yet"
        );
        journal.commit().unwrap();
        let got = follower.next_records().unwrap();
        assert_eq!(got.len(), 1);
        assert!(matches!(got[0].event, Event::RunStarted { .. }));
        // A line half written is read once it ends.
        let path = run.join(JOURNAL_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        let forged =
            br#"{"seq":2,"at_ms":1,"prev":"00","event":"timer_fired","key":"k","node":"n"}"#;
        bytes.extend_from_slice(&forged[..20]);
        std::fs::write(&path, &bytes).unwrap();
        assert!(follower.next_records().unwrap().is_empty());
        bytes.extend_from_slice(&forged[20..]);
        bytes.push(b'\n');
        std::fs::write(&path, &bytes).unwrap();
        let err = follower.next_records().unwrap_err();
        assert!(err.to_string().contains("line 2 is not intact"), "{err}");
    }
}
