//! The durable store: one JSON line per [`Record`] in `<run_dir>/journal.jsonl`, appended
//! (and, when durable, fsync'd) before the emitter sees `Ok`. Reading tolerates one torn
//! last line (a crash mid-append) and nothing else.

use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::EventSink;
use super::event::{Event, Record};

/// The journal's file name inside a run directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// Where runs are kept unless the CLI says otherwise (`<base>/runs/<run_id>`).
pub const DEFAULT_BASE: &str = ".cuga-flo";

/// Called with each record once it is durable.
pub type Observer = Box<dyn Fn(&Record) + Send + Sync>;

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
    #[error("{}: the run is being written by another cuga-flo process{}", run_dir.display(), pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Locked { run_dir: PathBuf, pid: Option<u32> },
}

impl JournalError {
    fn io(path: &Path, err: &io::Error) -> Self {
        JournalError::Io {
            path: path.to_path_buf(),
            message: err.to_string(),
        }
    }
}

/// A run's journal file, append-only. Thread-safe: `emit` takes `&self`, and sequence
/// numbers are handed out under the same lock as the write, so the file's order is the
/// sequence order.
pub struct Journal {
    path: PathBuf,
    durable: bool,
    inner: Mutex<Inner>,
    observers: Vec<Observer>,
}

struct Inner {
    file: File,
    /// The sequence number the next record gets.
    next_seq: u64,
    /// Set after a failed write: the file may end in a torn line, so nothing more may be
    /// appended after it.
    broken: Option<JournalError>,
}

impl Journal {
    /// Create `run_dir` (and its parents) and a new, empty journal in it. Fails with
    /// [`JournalError::Exists`] when the directory already holds a journal.
    ///
    /// `durable`: every line is `fsync`'d (`sync_data`) before `emit` returns. Without it,
    /// each line still reaches the operating system before `emit` returns, but may be lost
    /// on power failure (for benchmarks).
    pub fn create(run_dir: &Path, durable: bool) -> Result<Journal, JournalError> {
        fs::create_dir_all(run_dir).map_err(|e| JournalError::io(run_dir, &e))?;
        let path = run_dir.join(JOURNAL_FILE);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => JournalError::Exists(path.clone()),
                _ => JournalError::io(&path, &e),
            })?;
        if durable {
            file.sync_all().map_err(|e| JournalError::io(&path, &e))?;
            sync_dir(run_dir)?;
        }
        Ok(Journal {
            path,
            durable,
            inner: Mutex::new(Inner {
                file,
                next_seq: 1,
                broken: None,
            }),
            observers: Vec::new(),
        })
    }

    /// Add an observer, called with each record after its line is written (and synced when
    /// durable), in sequence order. Observers run under the journal's lock: they must not
    /// emit to this journal.
    pub fn with_observer(mut self, observer: Observer) -> Self {
        self.observers.push(observer);
        self
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_durable(&self) -> bool {
        self.durable
    }

    /// How many records have been appended.
    pub fn len(&self) -> u64 {
        lock(&self.inner).next_seq - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .field("durable", &self.durable)
            .field("observers", &self.observers.len())
            .finish_non_exhaustive()
    }
}

impl EventSink for Journal {
    fn emit(&self, event: Event) -> Result<Record, JournalError> {
        let mut inner = lock(&self.inner);
        if let Some(err) = &inner.broken {
            return Err(err.clone());
        }
        let record = Record {
            seq: inner.next_seq,
            at_ms: now_ms(),
            event,
        };
        let mut line =
            serde_json::to_vec(&record).map_err(|e| JournalError::Serialize(e.to_string()))?;
        line.push(b'\n');
        crate::crash::point("journal.before_write");
        let written = inner.file.write_all(&line).and_then(|()| {
            crate::crash::point("journal.before_fsync");
            if self.durable {
                inner.file.sync_data()
            } else {
                inner.file.flush()
            }
        });
        crate::crash::point("journal.after_fsync");
        if let Err(e) = written {
            let err = JournalError::io(&self.path, &e);
            inner.broken = Some(err.clone());
            return Err(err);
        }
        inner.next_seq += 1;
        for observer in &self.observers {
            observer(&record);
        }
        Ok(record)
    }
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

fn parse_journal(path: &Path, bytes: &[u8]) -> Result<ReadJournal, JournalError> {
    let corrupt = |line: usize, message: String| JournalError::Corrupt {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    // After a final newline, `split` yields an empty piece; otherwise the last piece has
    // no newline and is torn (unless the file is empty).
    let unterminated = lines.pop().filter(|last| !last.is_empty());
    let mut torn_tail = unterminated.is_some();
    let mut records = Vec::with_capacity(lines.len());
    let count = lines.len();
    for (index, line) in lines.into_iter().enumerate() {
        let number = index + 1;
        let record: Record = match serde_json::from_slice(line) {
            Ok(record) => record,
            Err(_) if number == count && !torn_tail => {
                torn_tail = true;
                break;
            }
            Err(e) if line.is_empty() => {
                return Err(corrupt(number, format!("empty line ({e})")));
            }
            Err(e) => return Err(corrupt(number, format!("not a journal record: {e}"))),
        };
        let expected = records.len() as u64 + 1;
        if record.seq != expected {
            return Err(corrupt(
                number,
                format!(
                    "sequence number {} where {expected} was expected",
                    record.seq
                ),
            ));
        }
        records.push(record);
    }
    Ok(ReadJournal { records, torn_tail })
}

/// A fresh run id: `YYYYMMDDTHHMMSSZ-xxxxxx` (UTC, then 6 hex digits of noise).
pub fn new_run_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(now.as_nanos());
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let noise = hasher.finish() & 0xff_ffff;
    format!("{}-{noise:06x}", utc_stamp(now.as_secs()))
}

/// Whether `id` can name a run folder: 1 to 128 ASCII letters, digits, `-`, `_` and `.`,
/// not starting with `.` (so `..` and hidden names are refused). Run ids come from
/// clients of the bridge too, and must never reach outside `<base>/runs/`.
pub fn check_run_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a valid run id (1 to 128 letters, digits, `-`, `_` or `.`, not starting with `.`)",
            id.chars().take(140).collect::<String>()
        ))
    }
}

/// Where a run's files live: `<base>/runs/<run_id>`.
pub fn run_dir(base: &Path, run_id: &str) -> PathBuf {
    base.join("runs").join(run_id)
}

/// `YYYYMMDDTHHMMSSZ` for seconds since the Unix epoch.
fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01.
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so that leap days fall at the end of a year, then
    // split into 400-year eras (146 097 days each).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153; // 0 = March
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(utc_stamp(1_709_210_096), "20240229T123456Z");
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

    #[test]
    fn empty_journal_reads_empty() {
        let read = parse_journal(Path::new("j"), b"").unwrap();
        assert!(read.records.is_empty());
        assert!(!read.torn_tail);
    }
}

// TEMPORARY (replaced by the journal branch's Journal::open): reopen a run's journal for
// append, cutting a torn tail.
/// A torn last line cut off when a journal was reopened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    pub line: usize,
    pub bytes_dropped: u64,
}

/// What reopening a journal found.
#[derive(Debug, Clone)]
pub struct Reopened {
    pub records: Vec<Record>,
    pub repaired: Option<Repair>,
}

impl Journal {
    pub fn open(run_dir: &Path, durable: bool) -> Result<(Journal, Reopened), JournalError> {
        let path = run_dir.join(JOURNAL_FILE);
        let bytes = fs::read(&path).map_err(|e| JournalError::io(&path, &e))?;
        let read = parse_journal(&path, &bytes)?;
        let mut repaired = None;
        if read.torn_tail {
            let good: usize = bytes
                .split_inclusive(|&b| b == b'\n')
                .take(read.records.len())
                .map(<[u8]>::len)
                .sum();
            let f = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| JournalError::io(&path, &e))?;
            f.set_len(good as u64)
                .and_then(|()| f.sync_all())
                .map_err(|e| JournalError::io(&path, &e))?;
            repaired = Some(Repair {
                line: read.records.len() + 1,
                bytes_dropped: (bytes.len() - good) as u64,
            });
        }
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| JournalError::io(&path, &e))?;
        Ok((
            Journal {
                path,
                durable,
                inner: Mutex::new(Inner {
                    file,
                    next_seq: read.records.len() as u64 + 1,
                    broken: None,
                }),
                observers: Vec::new(),
            },
            Reopened {
                records: read.records,
                repaired,
            },
        ))
    }
}
