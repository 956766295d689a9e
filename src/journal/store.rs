//! The durable store: one JSON line per [`Record`] in `<run_dir>/journal.jsonl`, hash
//! chained (each record's `prev` is the hash of the line before it), written by one
//! process at a time (an OS lock on the journal file; the holder's pid in `journal.lock`), committed in groups ([`Durability`]), with the last
//! committed record's sequence number and hash in `journal.head`. Reading tolerates one
//! torn last line (a crash mid-append) and nothing else.

use std::fmt;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use super::EventSink;
use super::chain::{Anchor, anchor, line_hash};
pub use super::error::JournalError;
use super::event::{Event, Record};
pub use super::layout::{
    BadRunId, HEAD_FILE, JOURNAL_FILE, LineRange, check_run_id, head_line, read_head, run_dir,
    run_id_of, split_lines,
};
use super::shared::{self, Batch, Lease};

/// The lock file: held (and holding the writer's pid) while a [`Journal`] is open.
pub const LOCK_FILE: &str = "journal.lock";

/// Where runs are kept unless the CLI says otherwise (`<base>/runs/<run_id>`).
pub const DEFAULT_BASE: &str = ".cuga-flo";

/// A buffer of uncommitted lines larger than this is committed at once.
pub const BATCH_LIMIT: usize = 1 << 20;

/// Shown each commit once it is durable (as the journal is): its records in sequence order,
/// and the bytes written for them (one JSON line each, newline-terminated), so that a
/// reader wanting the journal's own text (the JSON stream) need not serialize again.
/// A closure `Fn(&Record)` is an observer called once per record.
pub trait Observer: Send + Sync {
    fn committed(&self, records: &[Record], lines: &[u8]);
}

impl<F: Fn(&Record) + Send + Sync> Observer for F {
    fn committed(&self, records: &[Record], _lines: &[u8]) {
        records.iter().for_each(self);
    }
}

/// How much a commit is worth: what a crash or a power loss can take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// Every record is written and `fdatasync`'d before `emit` returns; observers see it
    /// then. Nothing emitted is lost.
    Strict,
    /// Records are buffered; `commit` writes the buffer with one write and one
    /// `fdatasync`, then shows them to the observers. A run commits when it waits (for
    /// an answer, a timer, a message), right after applying an answer a model was
    /// called for, around every tool call and remote task, and otherwise every 1,024
    /// steps. A crash loses at most the records since the last commit, none of which
    /// was shown and none of which holds a paid-for external effect: the lost steps
    /// are taken again on resume, identically.
    #[default]
    Batch,
    /// Like `Batch`, but a commit is not `fdatasync`'d: committed records survive the
    /// process crashing, not the machine losing power.
    Off,
}

impl Durability {
    pub const ALL: [Durability; 3] = [Durability::Strict, Durability::Batch, Durability::Off];

    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Strict => "strict",
            Durability::Batch => "batch",
            Durability::Off => "off",
        }
    }

    /// Whether a commit is `fdatasync`'d.
    pub fn syncs(self) -> bool {
        self != Durability::Off
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Durability {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Durability::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("`{s}` is not a durability (strict, batch or off)"))
    }
}

/// How a new journal is written and what anchors its chain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalOptions {
    pub durability: Durability,
    pub anchor: Anchor,
}

/// What [`Journal::open`] found in the file it reopened.
#[derive(Debug, Clone, PartialEq)]
pub struct Reopened {
    /// The records already in the journal (after any repair).
    pub records: Vec<Record>,
    /// The torn last line that was cut off, when there was one.
    pub repaired: Option<Repair>,
}

/// A torn last line cut off by [`Journal::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repair {
    /// The torn line's number (1-based).
    pub line: usize,
    pub bytes_dropped: u64,
}

/// A run's journal file, append-only, written by one process at a time. Thread-safe:
/// `emit` takes `&self`, and sequence numbers and hashes are handed out under the same
/// lock as the buffer, so the file's order is the sequence order.
pub struct Journal {
    path: PathBuf,
    run_dir: PathBuf,
    durability: Durability,
    inner: Mutex<Inner>,
    observers: Vec<Box<dyn Observer>>,
}

struct Inner {
    file: File,
    /// The sequence number the next record gets.
    next_seq: u64,
    /// The next record's `prev`: the hash of the last line, or the anchor. `None` only for
    /// a reopened journal with no record yet: the first record anchors itself then.
    prev: Option<String>,
    /// Lines emitted and not yet written.
    buffer: Vec<u8>,
    /// Their records, for the observers once committed.
    pending: Vec<Record>,
    /// The last committed record's seq and line hash (for the head file).
    head: Option<(u64, String)>,
    /// Set after a failed write: the file may end in a torn line, so nothing more may be
    /// appended after it.
    broken: Option<JournalError>,
    /// The run's spans and measurements, telemetry on.
    otel: Option<super::otel::RunTrace>,
    /// The run's lease in the shared store (`--store`), which each commit goes to first.
    lease: Option<Box<dyn Lease>>,
}

impl Journal {
    /// Create `run_dir` (and its parents) and a new, empty journal in it, locked for this
    /// journal's lifetime. Fails with [`JournalError::Exists`] when the directory already
    /// holds a journal, with [`JournalError::Locked`] when another journal holds its lock.
    pub fn create(run_dir: &Path, options: JournalOptions) -> Result<Journal, JournalError> {
        // A shared store first: the run is claimed there, by this process, or not at all.
        let lease = match shared::mounted() {
            Some(store) => Some(store.lease(run_dir, &run_id_of(run_dir), true)?),
            None => None,
        };
        fs::create_dir_all(run_dir).map_err(|e| JournalError::io(run_dir, &e))?;
        let path = run_dir.join(JOURNAL_FILE);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                // Say who holds it, when someone does.
                io::ErrorKind::AlreadyExists => match File::open(&path) {
                    Ok(existing) => match try_lock(run_dir, &existing) {
                        Err(locked) => locked,
                        Ok(()) => JournalError::Exists(path.clone()),
                    },
                    Err(e) => JournalError::io(&path, &e),
                },
                _ => JournalError::io(&path, &e),
            })?;
        take_lock(run_dir, &file)?;
        // With a shared store the folder is a cache of it, rebuilt from it after a crash.
        if options.durability.syncs() && lease.is_none() {
            file.sync_all().map_err(|e| JournalError::io(&path, &e))?;
            sync_dir(run_dir)?;
        }
        let journal = Journal::with_file(
            run_dir,
            path,
            file,
            options.durability,
            1,
            Some(options.anchor.hash()),
            None,
            None,
        );
        lock(&journal.inner).lease = lease;
        Ok(journal)
    }

    /// Reopen the journal in `run_dir` to append to it (after a crash): lock it, read it
    /// and check its sequence and chain. A torn last line (no newline, or not a record) is
    /// cut off (and the cut synced) and reported; any other bad line, a sequence gap or a
    /// broken chain is [`JournalError::Corrupt`], and nothing is written then. The journal
    /// continues the sequence and the chain.
    pub fn open(
        run_dir: &Path,
        durability: Durability,
    ) -> Result<(Journal, Reopened), JournalError> {
        let path = run_dir.join(JOURNAL_FILE);
        // A shared store first: the run's lease, then its journal as the store has it.
        let lease = match shared::mounted() {
            Some(store) => {
                let id = run_id_of(run_dir);
                let lease = store.lease(run_dir, &id, false)?;
                shared::bring_dir(store, run_dir, &id, None)?;
                Some(lease)
            }
            None => None,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| JournalError::io(&path, &e))?;
        take_lock(run_dir, &file)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| JournalError::io(&path, &e))?;
        let checked = check_chain(&path, &bytes)?;
        if let Some((seq, _)) = read_head(run_dir)
            && seq > checked.records.len() as u64
        {
            return Err(JournalError::Corrupt {
                path: path.clone(),
                line: checked.records.len() + 1,
                message: format!(
                    "{HEAD_FILE} says {seq} records were committed, the journal holds {}: records were removed",
                    checked.records.len()
                ),
            });
        }
        let repaired = if checked.good_len < bytes.len() {
            file.set_len(checked.good_len as u64)
                .and_then(|()| file.sync_all())
                .map_err(|e| JournalError::io(&path, &e))?;
            Some(Repair {
                line: checked.records.len() + 1,
                bytes_dropped: (bytes.len() - checked.good_len) as u64,
            })
        } else {
            None
        };
        file.seek(io::SeekFrom::End(0))
            .map_err(|e| JournalError::io(&path, &e))?;
        let count = checked.records.len() as u64;
        let head = checked.last_hash.clone().map(|h| (count, h));
        let journal = Journal::with_file(
            run_dir,
            path,
            file,
            durability,
            count + 1,
            checked.last_hash,
            head,
            checked.records.first(),
        );
        lock(&journal.inner).lease = lease;
        journal.write_head(&lock(&journal.inner));
        Ok((
            journal,
            Reopened {
                records: checked.records,
                repaired,
            },
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn with_file(
        run_dir: &Path,
        path: PathBuf,
        file: File,
        durability: Durability,
        next_seq: u64,
        prev: Option<String>,
        head: Option<(u64, String)>,
        first: Option<&Record>,
    ) -> Journal {
        Journal {
            path,
            run_dir: run_dir.to_path_buf(),
            durability,
            inner: Mutex::new(Inner {
                file,
                next_seq,
                prev,
                buffer: Vec::new(),
                pending: Vec::new(),
                head,
                broken: None,
                otel: super::otel::RunTrace::new(first),
                lease: None,
            }),
            observers: Vec::new(),
        }
    }

    /// Add an observer, called with each record once it is committed (written, and synced
    /// unless the durability is `Off`), in sequence order. Observers run under the
    /// journal's lock: they must not emit to this journal.
    pub fn with_observer(mut self, observer: impl Observer + 'static) -> Self {
        self.observers.push(Box::new(observer));
        self
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run directory (holding the journal, its head and its lock).
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Whether commits are `fsync`'d.
    pub fn is_durable(&self) -> bool {
        self.durability.syncs()
    }

    /// How many records have been emitted (committed or not).
    pub fn len(&self) -> u64 {
        lock(&self.inner).next_seq - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many records have been committed.
    pub fn committed(&self) -> u64 {
        lock(&self.inner).head.as_ref().map_or(0, |h| h.0)
    }

    /// Write the buffered lines (one write, one `fdatasync` unless `Off`), update the head
    /// file, then show the records to the observers.
    fn commit_locked(&self, inner: &mut Inner) -> Result<(), JournalError> {
        if let Some(err) = &inner.broken {
            return Err(err.clone());
        }
        if inner.buffer.is_empty() {
            return Ok(());
        }
        let began = crate::telemetry::metrics().map(|_| std::time::Instant::now());
        // The shared store first (when the run is kept in one), then the file.
        let written = self.commit_shared(inner).and_then(|()| {
            crate::crash::point("journal.before_write");
            let written = write_batch(&mut inner.file, &inner.buffer).and_then(|()| {
                crate::crash::point("journal.before_fsync");
                // With a shared store, the store made it durable: the file is its cache.
                if self.durability.syncs() && inner.lease.is_none() {
                    inner.file.sync_data()
                } else {
                    inner.file.flush()
                }
            });
            crate::crash::point("journal.after_fsync");
            written.map_err(|e| JournalError::io(&self.path, &e))
        });
        if let Err(err) = written {
            inner.broken = Some(err.clone());
            inner.buffer.clear();
            crate::terminal::shown(inner.pending.len());
            inner.pending.clear();
            return Err(err);
        }
        if let (Some(last), Some(prev)) = (inner.pending.last(), &inner.prev) {
            inner.head = Some((last.seq, prev.clone()));
        }
        self.write_head(inner);
        for observer in &self.observers {
            observer.committed(&inner.pending, &inner.buffer);
        }
        if let Some(began) = began {
            super::otel::commit_measured(inner.pending.len(), began.elapsed().as_secs_f64());
        }
        if let Some(otel) = &mut inner.otel {
            otel.committed(&inner.pending);
        }
        crate::terminal::shown(inner.pending.len());
        // Keep the allocations for the next batch.
        inner.buffer.clear();
        inner.pending.clear();
        Ok(())
    }

    /// The batch to the shared store, when the run is kept in one: before the cache (the
    /// run folder) is written, so nothing is shown that the store does not hold.
    fn commit_shared(&self, inner: &mut Inner) -> Result<(), JournalError> {
        let Some(last) = inner.pending.last() else {
            return Ok(());
        };
        let Some(lease) = inner.lease.as_mut() else {
            return Ok(());
        };
        let run_id = run_id_of(&self.run_dir);
        let (ranges, _) = split_lines(&inner.buffer);
        let lines = (ranges.iter().zip(&inner.pending))
            .map(|(&(start, end), record)| {
                let line = &inner.buffer[start..end];
                (record.seq, line_hash(line), line)
            })
            .collect();
        let batch = Batch {
            run_id: &run_id,
            after: inner.head.as_ref().map_or(0, |h| h.0),
            lines,
            last,
        };
        lease.commit(&batch)?;
        crate::crash::point("store.after_commit");
        Ok(())
    }

    /// Best effort: the head file is a witness for `verify`, not part of the journal.
    /// Rewritten in place (no temporary file, no rename): the line has one length (the
    /// seq zero-padded to 20 digits, [`head_line`]), so each write covers the one before.
    /// Not kept open: an open run holds one file descriptor, its journal's.
    fn write_head(&self, inner: &Inner) {
        use std::os::unix::fs::FileExt;
        let Some((seq, hash)) = &inner.head else {
            return;
        };
        let line = head_line(*seq, hash);
        let written = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.run_dir.join(HEAD_FILE))
            .and_then(|file| file.write_all_at(line.as_bytes(), 0));
        if let Err(e) = written {
            tracing::warn!(
                "{}: cannot write the head file: {e}",
                self.run_dir.display()
            );
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        let mut inner = lock(&self.inner);
        let _ = self.commit_locked(&mut inner);
    }
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .field("durability", &self.durability)
            .field("observers", &self.observers.len())
            .finish_non_exhaustive()
    }
}

impl EventSink for Journal {
    fn emit(&self, mut event: Event) -> Result<Record, JournalError> {
        super::otel::stamp(&mut event);
        let mut inner = lock(&self.inner);
        if let Some(err) = &inner.broken {
            return Err(err.clone());
        }
        let prev = match &inner.prev {
            Some(prev) => prev.clone(),
            // A reopened, empty journal: the first record anchors itself.
            None => match &event {
                Event::RunStarted {
                    run_id, app_digest, ..
                } => anchor(run_id, app_digest.as_deref()),
                _ => anchor(&run_id_of(&self.run_dir), None),
            },
        };
        let finished = matches!(event, Event::RunFinished { .. });
        let record = Record {
            seq: inner.next_seq,
            at_ms: now_ms(),
            prev,
            event,
        };
        let line =
            serde_json::to_vec(&record).map_err(|e| JournalError::Serialize(e.to_string()))?;
        inner.prev = Some(line_hash(&line));
        inner.next_seq += 1;
        inner.buffer.extend_from_slice(&line);
        inner.buffer.push(b'\n');
        inner.pending.push(record.clone());
        crate::terminal::emitted(1);
        if self.durability == Durability::Strict || finished || inner.buffer.len() > BATCH_LIMIT {
            self.commit_locked(&mut inner)?;
        }
        Ok(record)
    }

    fn commit(&self) -> Result<(), JournalError> {
        let mut inner = lock(&self.inner);
        self.commit_locked(&mut inner)
    }
}

/// Write a batch with one `write`; while the crash test hook is armed, in two halves with
/// a crash point between them, so that a kill can fall inside a batch (a torn tail).
fn write_batch(file: &mut File, batch: &[u8]) -> io::Result<()> {
    if crate::crash::armed() && batch.len() > 1 {
        let (first, rest) = batch.split_at(batch.len() / 2);
        file.write_all(first)?;
        crate::crash::point("journal.mid_batch");
        return file.write_all(rest);
    }
    file.write_all(batch)
}

/// Lock the journal `file` for this process (an OS file lock on the open file, released
/// when the journal is dropped or the process exits, however it exits), and write the
/// process's pid into `<run_dir>/journal.lock` for a contender's message. Locking the
/// journal's own descriptor keeps an open run at one file descriptor, which is what
/// bounds how many runs one `serve` holds open (`ulimit -n`). The lock is advisory:
/// readers (`runs show`, `verify`) read the file while it is held.
fn take_lock(run_dir: &Path, file: &File) -> Result<(), JournalError> {
    try_lock(run_dir, file)?;
    let path = run_dir.join(LOCK_FILE);
    fs::write(&path, format!("{}\n", std::process::id())).map_err(|e| JournalError::io(&path, &e))
}

/// Lock `file`, or say who holds it ([`JournalError::Locked`], with the pid in
/// `journal.lock`).
fn try_lock(run_dir: &Path, file: &File) -> Result<(), JournalError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(JournalError::Locked {
            run_dir: run_dir.to_path_buf(),
            pid: fs::read_to_string(run_dir.join(LOCK_FILE))
                .ok()
                .and_then(|text| text.trim().parse().ok()),
        }),
        Err(TryLockError::Error(e)) => Err(JournalError::io(&run_dir.join(JOURNAL_FILE), &e)),
    }
}

/// Hold the journal in `run_dir` (its lock, as a run holds it) for as long as the returned
/// file lives, so that nothing opens the run meanwhile; [`JournalError::Locked`] when a
/// run already holds it. Writes nothing.
pub fn hold(run_dir: &Path) -> Result<Held, JournalError> {
    let lease = shared::hold(run_dir)?;
    let path = run_dir.join(JOURNAL_FILE);
    let file = File::open(&path).map_err(|e| JournalError::io(&path, &e))?;
    try_lock(run_dir, &file)?;
    Ok(Held {
        _file: file,
        _lease: lease,
    })
}

/// A run held by [`hold`]: its file lock, and its lease in a shared store.
pub struct Held {
    _file: File,
    _lease: Option<Box<dyn Lease>>,
}

/// Whether the journal in `run_dir` is held by this very process: one of its runs is
/// still going, or is being let go of (a stopped run's tasks are dropped on its thread
/// a moment after it stops).
pub fn held_here(run_dir: &Path) -> bool {
    let Ok(file) = File::open(run_dir.join(JOURNAL_FILE)) else {
        return false;
    };
    matches!(try_lock(run_dir, &file), Err(JournalError::Locked { pid, .. })
        if pid == Some(std::process::id()))
}

/// A journal whose sequence and chain were checked.
struct Checked {
    records: Vec<Record>,
    /// Where the good lines end (a torn tail starts there).
    good_len: usize,
    last_hash: Option<String>,
}

/// A journal's records, read line by line: a last line without its newline, or that is
/// not a record, is a torn tail (left out); every other line must be a record, in
/// sequence. `each` sees every record with its line number and bytes before it is kept.
struct Walked {
    records: Vec<Record>,
    torn_tail: bool,
    /// Where the good lines end (a torn tail starts there).
    good_len: usize,
}

fn walk(
    path: &Path,
    bytes: &[u8],
    mut each: impl FnMut(usize, &Record, &[u8]) -> Result<(), String>,
) -> Result<Walked, JournalError> {
    let corrupt = |line: usize, message: String| JournalError::Corrupt {
        path: path.to_path_buf(),
        line,
        message,
    };
    let (lines, tail) = split_lines(bytes);
    let count = lines.len();
    let mut walked = Walked {
        records: Vec::with_capacity(count),
        torn_tail: tail.is_some(),
        good_len: 0,
    };
    for (index, &(start, end)) in lines.iter().enumerate() {
        let number = index + 1;
        let line = &bytes[start..end];
        let record: Record = match serde_json::from_slice(line) {
            Ok(record) => record,
            Err(_) if number == count && tail.is_none() => {
                walked.torn_tail = true;
                break;
            }
            Err(e) if line.is_empty() => {
                return Err(corrupt(number, format!("empty line ({e})")));
            }
            Err(e) => return Err(corrupt(number, format!("not a journal record: {e}"))),
        };
        let expected = walked.records.len() as u64 + 1;
        if record.seq != expected {
            return Err(corrupt(
                number,
                format!(
                    "sequence number {} where {expected} was expected",
                    record.seq
                ),
            ));
        }
        each(number, &record, line).map_err(|message| corrupt(number, message))?;
        walked.good_len = end + 1;
        walked.records.push(record);
    }
    Ok(walked)
}

/// Check a journal's lines for [`Journal::open`]: as [`read_journal`] reads them, and
/// every record chained to the one before it (the first to its anchor).
fn check_chain(path: &Path, bytes: &[u8]) -> Result<Checked, JournalError> {
    let mut last_hash: Option<String> = None;
    let walked = walk(path, bytes, |number, record, line| {
        let want = match (&last_hash, &record.event) {
            (Some(h), _) => h.clone(),
            (
                None,
                Event::RunStarted {
                    run_id, app_digest, ..
                },
            ) => anchor(run_id, app_digest.as_deref()),
            (None, _) => record.prev.clone(),
        };
        if record.prev != want {
            return Err(if number == 1 {
                "record 1 does not match its anchor (its run id or app digest changed)".to_string()
            } else {
                format!(
                    "the hash chain is broken: record {} does not follow the line before it",
                    record.seq
                )
            });
        }
        last_hash = Some(line_hash(line));
        Ok(())
    })?;
    Ok(Checked {
        records: walked.records,
        good_len: walked.good_len,
        last_hash,
    })
}

/// An in-memory sink for tests and benchmarks.
#[derive(Debug, Default)]
pub struct MemorySink {
    records: Mutex<Vec<Record>>,
}

impl MemorySink {
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the records emitted so far.
    pub fn records(&self) -> Vec<Record> {
        lock(&self.records).clone()
    }
}

impl EventSink for MemorySink {
    fn emit(&self, event: Event) -> Result<Record, JournalError> {
        let mut records = lock(&self.records);
        let record = Record {
            seq: records.len() as u64 + 1,
            at_ms: now_ms(),
            prev: String::new(),
            event,
        };
        records.push(record.clone());
        Ok(record)
    }
}

/// A journal as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadJournal {
    pub records: Vec<Record>,
    /// The last line was incomplete (a crash mid-append) and was ignored.
    pub torn_tail: bool,
}

/// Read a journal file. A last line without its newline, or that is not valid JSON, is a
/// torn tail: ignored and reported. Any other bad line is [`JournalError::Corrupt`], as
/// is a sequence that is not 1, 2, 3...
pub fn read_journal(path: &Path) -> Result<ReadJournal, JournalError> {
    let bytes = fs::read(path).map_err(|e| JournalError::io(path, &e))?;
    parse_journal(path, &bytes)
}

/// The first record of the journal at `path` (its `run_started`), read alone.
pub fn first_record(path: &Path) -> Option<Record> {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(File::open(path).ok()?)
        .read_line(&mut line)
        .ok()?;
    serde_json::from_str(line.trim_end()).ok()
}

/// A journal's last record, read from the end of the file (a few KiB, however long the
/// journal is). `None` when the file cannot be read, is empty, or ends in a torn line or
/// something that is not a record: read the whole journal then ([`read_journal`]).
pub fn last_record(path: &Path) -> Option<Record> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut chunk = 4096u64;
    loop {
        let start = len.saturating_sub(chunk);
        file.seek(SeekFrom::Start(start)).ok()?;
        let mut bytes = Vec::with_capacity(usize::try_from(len - start).ok()?);
        file.read_to_end(&mut bytes).ok()?;
        // A complete journal ends with a newline; anything else is a torn line.
        let body = bytes.strip_suffix(b"\n")?;
        match body.iter().rposition(|&b| b == b'\n') {
            Some(i) => return serde_json::from_slice(&body[i + 1..]).ok(),
            None if start == 0 => return serde_json::from_slice(body).ok(),
            // The last line is longer than what was read: read more.
            None => chunk = chunk.saturating_mul(4),
        }
    }
}

/// [`read_journal`] of a journal's bytes already read (`path`: for its messages).
pub fn parse_journal(path: &Path, bytes: &[u8]) -> Result<ReadJournal, JournalError> {
    let walked = walk(path, bytes, |_, _, _| Ok(()))?;
    Ok(ReadJournal {
        records: walked.records,
        torn_tail: walked.torn_tail,
    })
}

/// A fresh run id: `YYYYMMDDTHHMMSSZ-xxxxxx` ([`crate::clock::run_id`]).
pub fn new_run_id() -> String {
    crate::clock::run_id()
}

/// A new run id no run under `base` has. Ids carry 24 random bits beside their second, so
/// two runs started in the same second may draw the same (the journal's creation refuses
/// the second one, as it refuses any folder that holds a journal): draw again then.
pub fn new_run_id_in(base: &Path) -> String {
    let mut run_id = new_run_id();
    for _ in 0..16 {
        if !run_dir(base, &run_id).exists() {
            break;
        }
        run_id = new_run_id();
    }
    run_id
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01
/// ([`crate::clock::civil_date`]).
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    crate::clock::civil_date(days)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Lock, ignoring poisoning: a panicking observer must not make the journal unusable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Make a new directory entry durable.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), JournalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| JournalError::io(dir, &e))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), JournalError> {
    Ok(())
}

/// The ids of the runs under `base`, sorted (ids start with their UTC time). With a
/// shared store, the runs it holds, each brought into `base` (its cache) first.
pub fn run_ids(base: &Path) -> Vec<String> {
    if let Some(ids) = shared::refresh_all(base) {
        return ids;
    }
    let Ok(entries) = std::fs::read_dir(base.join("runs")) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join(JOURNAL_FILE).is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    ids.sort();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last record is read from the end, whatever the length of the lines before it
    /// or of itself; a torn or missing last line gives `None` (the caller reads it all).
    #[test]
    fn the_last_record_is_read_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let line = |seq: u64, pad: usize| {
            let mut r = serde_json::json!({"seq": seq, "at_ms": 1, "event": "run_resumed",
                "from_seq": 0});
            r["pad"] = serde_json::Value::String("x".repeat(pad));
            format!("{r}\n")
        };
        assert!(last_record(&path).is_none(), "no file");
        std::fs::write(&path, "").unwrap();
        assert!(last_record(&path).is_none(), "empty");
        for (pads, last) in [
            (vec![10], 1),
            (vec![10, 20, 30], 3),
            (vec![100_000, 10], 2),
            (vec![10, 100_000], 2),
            (vec![50_000, 50_000, 50_000], 3),
        ] {
            let text: String = (pads.iter().enumerate())
                .map(|(i, &p)| line(i as u64 + 1, p))
                .collect();
            std::fs::write(&path, &text).unwrap();
            assert_eq!(last_record(&path).unwrap().seq, last, "{pads:?}");
            // Torn: the last line lost its end.
            std::fs::write(&path, &text[..text.len() - 5]).unwrap();
            assert!(last_record(&path).is_none(), "torn {pads:?}");
        }
    }

    #[test]
    fn run_ids_cannot_leave_the_runs_folder() {
        assert!(check_run_id(&new_run_id()).is_ok());
        assert!(check_run_id("run-1_a.b").is_ok());
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            ".hidden",
            "a\\b",
            "x y",
            &"a".repeat(129),
        ] {
            assert!(check_run_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(59), (1970, 3, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(11_017), (2000, 3, 1));
        assert_eq!(civil_date(19_782), (2024, 2, 29));
        assert_eq!(civil_date(-1), (1969, 12, 31));
        assert_eq!(crate::clock::utc_stamp(1_709_210_096), "20240229T123456Z");
    }

    #[test]
    fn run_ids_have_the_documented_shape() {
        let id = new_run_id();
        let (stamp, noise) = id.split_once('-').unwrap();
        assert_eq!(stamp.len(), 16, "{id}");
        assert_eq!(&stamp[8..9], "T");
        assert!(stamp.ends_with('Z'));
        assert_eq!(noise.len(), 6);
        assert!(noise.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(new_run_id(), new_run_id());
    }

    #[test]
    fn run_dir_is_under_runs() {
        assert_eq!(
            run_dir(Path::new(".cuga-flo"), "r1"),
            Path::new(".cuga-flo/runs/r1")
        );
    }

    /// With a shared store, a commit goes to the store first: a commit the store refuses
    /// (the run's lease lost) writes nothing to the run folder, shows nothing, and leaves
    /// the journal refusing every later record.
    #[test]
    fn a_commit_the_shared_store_refuses_is_neither_written_nor_shown() {
        use super::super::shared::tests::{Memory, MemoryLease};
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let base = tempfile::tempdir().unwrap();
        let dir = run_dir(base.path(), "r");
        let memory = Arc::new(Memory::default());
        let shown = Arc::new(AtomicUsize::new(0));
        let seen = shown.clone();
        let journal = Journal::create(
            &dir,
            JournalOptions {
                durability: Durability::Batch,
                anchor: Anchor::new("r", None),
            },
        )
        .unwrap()
        .with_observer(move |_: &Record| {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        lock(&journal.inner).lease = Some(Box::new(MemoryLease(memory.clone())));
        let event = || Event::RunResumed {
            from_seq: 0,
            repaired: None,
        };
        journal.emit(event()).unwrap();
        journal.emit(event()).unwrap();
        journal.commit().unwrap();
        let stored = memory.runs.lock().unwrap()["r"].clone();
        assert_eq!(stored.len(), 2);
        let file = fs::read(dir.join(JOURNAL_FILE)).unwrap();
        let cached: Vec<u8> = (stored.iter())
            .flat_map(|(_, _, l)| [l.clone(), b"\n".to_vec()].concat())
            .collect();
        assert_eq!(file, cached, "the cache holds the store's bytes");
        assert_eq!(stored[1].1, line_hash(&stored[1].2));
        assert_eq!(shown.load(Ordering::SeqCst), 2);

        memory.refuse.store(true, Ordering::SeqCst);
        journal.emit(event()).unwrap();
        let err = journal.commit().unwrap_err();
        assert!(matches!(err, JournalError::Fenced { .. }), "{err}");
        assert_eq!(
            fs::read(dir.join(JOURNAL_FILE)).unwrap(),
            file,
            "nothing written"
        );
        assert_eq!(shown.load(Ordering::SeqCst), 2, "nothing shown");
        memory.refuse.store(false, Ordering::SeqCst);
        assert!(
            journal.emit(event()).is_err(),
            "a fenced journal takes nothing more"
        );
        assert_eq!(memory.runs.lock().unwrap()["r"].len(), 2);
    }

    /// The head file is rewritten in place at each commit, one length whatever the seq,
    /// and names the last committed record; a head file written the older way (shorter,
    /// unpadded) is covered whole by the next commit's.
    #[test]
    fn the_head_file_names_the_last_commit() {
        let base = tempfile::tempdir().unwrap();
        let dir = run_dir(base.path(), "h");
        let options = || JournalOptions {
            durability: Durability::Off,
            anchor: Anchor::new("h", None),
        };
        let event = || Event::RunResumed {
            from_seq: 0,
            repaired: None,
        };
        let journal = Journal::create(&dir, options()).unwrap();
        let head_file = dir.join(HEAD_FILE);
        for commit in 1..=12u64 {
            journal.emit(event()).unwrap();
            journal.commit().unwrap();
            let (seq, hash) = read_head(&dir).unwrap();
            assert_eq!(seq, commit);
            assert_eq!(hash.len(), 64);
            assert_eq!(fs::metadata(&head_file).unwrap().len(), 86);
        }
        drop(journal);
        let (seq, hash) = read_head(&dir).unwrap();
        fs::write(&head_file, format!("{seq} {hash}\n")).unwrap();
        let (journal, _) = Journal::open(&dir, Durability::Off).unwrap();
        journal.emit(event()).unwrap();
        journal.commit().unwrap();
        assert_eq!(read_head(&dir).unwrap().0, 13);
        assert_eq!(fs::metadata(&head_file).unwrap().len(), 86);
    }

    #[test]
    fn empty_journal_reads_empty() {
        let read = parse_journal(Path::new("j"), b"").unwrap();
        assert!(read.records.is_empty());
        assert!(!read.torn_tail);
    }
}
