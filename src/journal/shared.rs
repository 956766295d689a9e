//! A run store shared by several hosts (`--store postgres://…`, [`super::pg`]): the store
//! of record for every run's journal and for who writes it. The run folder a host is
//! given (`--run-dir`) becomes that host's cache of the store, so every reader of
//! journals (listing, `show`, `verify`, the worker's look for due runs) works on files as
//! before, after [`refresh`] has brought them up to the store's heads.
//!
//! The guarantees are the file store's:
//! - **One writer per run.** A [`Lease`] on the run (in PostgreSQL, a session advisory
//!   lock on the lease's own connection) is taken before its journal is created or
//!   reopened, and held for the journal's lifetime. A process that dies loses its
//!   connection and so its leases, at once.
//! - **Nothing shown that is not durable.** A commit writes the batch to the store (one
//!   transaction: the lines and the new head, only if the head is still the one this
//!   writer last wrote), then to the cache, then shows it. A writer that lost its lease
//!   (the store restarted, another host took the run) is fenced: its next commit fails
//!   and the run stops where its last commit left it.
//! - **Group commit.** One transaction per journal commit (`Durability::Batch` commits a
//!   step's records together).
//!
//! Imports nothing of the crate outside the journal.

use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::OnceLock;

use super::error::JournalError;
use super::event::Record;
use super::layout::{self as store, HEAD_FILE, JOURNAL_FILE};

/// A commit's records, as the store keeps them.
pub struct Batch<'a> {
    pub run_id: &'a str,
    /// The head this writer last committed (`0` before its first commit).
    pub after: u64,
    /// Each line (without its newline): `(seq, line hash, bytes)`.
    pub lines: Vec<(u64, String, &'a [u8])>,
    /// The last record (its event says whether the run parked, when it is due, ...).
    pub last: &'a Record,
}

/// The right to write one run, held for as long as the value lives.
pub trait Lease: Send {
    /// Write `batch` durably, fenced: only if this lease still holds the run and the
    /// store's head is `batch.after`. A lease whose connection was lost takes the run
    /// again first (when nobody else has), then writes; a batch that landed before the
    /// connection broke is not written twice.
    fn commit(&mut self, batch: &Batch<'_>) -> Result<(), JournalError>;
}

/// What the store holds of one run: its head, and its lines from a sequence number on.
pub trait SharedStore: Send + Sync {
    /// The store, for messages (a URL without its password).
    fn shown(&self) -> String;
    /// Take the lease on run `run_id`: [`JournalError::Locked`] when another process holds
    /// it. With `create`, the run is new: [`JournalError::Exists`] when the store has it.
    fn lease(
        &self,
        run_dir: &Path,
        run_id: &str,
        create: bool,
    ) -> Result<Box<dyn Lease>, JournalError>;
    /// Whether some process holds the lease on run `run_id` (this one included).
    fn held(&self, run_id: &str) -> Result<bool, JournalError>;
    /// Every run's `(id, head seq, head hash)`.
    fn heads(&self) -> Result<Vec<(String, u64, String)>, JournalError>;
    /// One run's head, when the store has the run.
    fn head(&self, run_id: &str) -> Result<Option<(u64, String)>, JournalError>;
    /// The hash of run `run_id`'s line `seq`.
    fn hash_at(&self, run_id: &str, seq: u64) -> Result<Option<String>, JournalError>;
    /// Run `run_id`'s lines after `after`, in order: `(seq, bytes)`.
    fn lines(&self, run_id: &str, after: u64) -> Result<Vec<(u64, Vec<u8>)>, JournalError>;
    /// Forget run `run_id` (`runs prune`); its lease must be held by the caller.
    fn remove(&self, run_id: &str) -> Result<(), JournalError>;

    // ---- Deliveries to a run a server holds parked ([`super::mailbox`]), any host ----

    /// Say (`Some(pid)`) or stop saying (`None`) that a server holds run `run_id` parked.
    fn hold_parked(&self, run_id: &str, pid: Option<u32>) -> Result<(), JournalError>;
    /// The pid of the server holding run `run_id` parked: one that said so and still holds
    /// the run's lease.
    fn held_parked(&self, run_id: &str) -> Result<Option<u32>, JournalError>;
    /// Post a delivery (JSON) to run `run_id`'s server: the post's id.
    fn post(&self, run_id: &str, delivery: &str) -> Result<i64, JournalError>;
    /// The server's reply (JSON) to post `posted`, once it answered (taken: read once).
    fn reply(&self, posted: i64) -> Result<Option<String>, JournalError>;
    /// Withdraw post `posted`: whether it was, before any server claimed it.
    fn withdraw(&self, posted: i64) -> Result<bool, JournalError>;
    /// Claim the deliveries posted to run `run_id`, oldest first: `(post id, JSON)`.
    fn claim_posted(&self, run_id: &str) -> Result<Vec<(i64, String)>, JournalError>;
    /// Answer a claimed post (JSON).
    fn answer(&self, posted: i64, reply: &str) -> Result<(), JournalError>;
}

static MOUNTED: OnceLock<Box<dyn SharedStore>> = OnceLock::new();

/// Make `store` this process's run store (once, at start: the CLI's `--store`).
pub fn mount(store: Box<dyn SharedStore>) {
    if MOUNTED.set(store).is_err() {
        tracing::warn!("a run store is mounted already; the second is ignored");
    }
}

/// The shared store runs are kept in, when one is mounted (files alone otherwise).
pub fn mounted() -> Option<&'static dyn SharedStore> {
    MOUNTED.get().map(|s| s.as_ref())
}

/// Bring every run of the mounted store into the cache under `base`: their ids, sorted
/// (`None` without a store, or when it cannot be read: the cache is all there is then).
/// A run that cannot be brought is said and left as the cache has it.
pub fn refresh_all(base: &Path) -> Option<Vec<String>> {
    let shared = mounted()?;
    let heads = match shared.heads() {
        Ok(heads) => heads,
        Err(e) => {
            tracing::warn!("cannot read the runs of {}: {e}", shared.shown());
            return None;
        }
    };
    let mut ids = Vec::with_capacity(heads.len());
    for (id, seq, hash) in heads {
        if let Err(e) = bring(shared, base, &id, Some((seq, hash))) {
            tracing::warn!("run {id}: cannot bring it from {}: {e}", shared.shown());
        }
        ids.push(id);
    }
    ids.retain(|id| store::check_run_id(id).is_ok());
    ids.sort();
    Some(ids)
}

/// Bring run `id` into the cache under `base` (nothing without a store, or when the
/// store does not have it).
pub fn refresh(base: &Path, id: &str) -> Result<(), JournalError> {
    match mounted() {
        Some(shared) => bring(shared, base, id, None),
        None => Ok(()),
    }
}

/// [`refresh`] of the run folder `run_dir` (its name the run's id).
pub fn refresh_dir(run_dir: &Path) -> Result<(), JournalError> {
    match mounted() {
        Some(shared) => bring_dir(shared, run_dir, &store::run_id_of(run_dir), None),
        None => Ok(()),
    }
}

/// Bring run `id`'s cached journal up to the store's head (`known`: the head, when the
/// caller read it already). A cache that a writer of this host holds is that writer's to
/// keep current; a cache that disagrees with the store (a line the store does not have)
/// is rewritten from it.
pub(crate) fn bring(
    shared: &dyn SharedStore,
    base: &Path,
    id: &str,
    known: Option<(u64, String)>,
) -> Result<(), JournalError> {
    if store::check_run_id(id).is_err() {
        return Ok(());
    }
    bring_dir(shared, &store::run_dir(base, id), id, known)
}

/// [`bring`] into the run folder `dir`.
pub(crate) fn bring_dir(
    shared: &dyn SharedStore,
    dir: &Path,
    id: &str,
    known: Option<(u64, String)>,
) -> Result<(), JournalError> {
    let head = match known {
        Some(head) => head,
        None => match shared.head(id)? {
            Some(head) => head,
            None => return Ok(()),
        },
    };
    if store::read_head(dir).as_ref() == Some(&head) && dir.join(JOURNAL_FILE).is_file() {
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(|e| JournalError::io(dir, &e))?;
    let path = dir.join(JOURNAL_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(&path)
        .map_err(|e| JournalError::io(&path, &e))?;
    // A writer here holds it: it is as current as the store (it wrote the store's head).
    if file.try_lock().is_err() {
        return Ok(());
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| JournalError::io(&path, &e))?;
    let (lines, _) = store::split_lines(&bytes);
    // The cache's whole lines that the store has too, as a prefix.
    let mut have = 0u64;
    let mut good_len = 0usize;
    if let Some(&(start, end)) = lines.last() {
        let count = lines.len() as u64;
        let last_hash = super::chain::line_hash(&bytes[start..end]);
        if count <= head.0 && shared.hash_at(id, count)?.as_deref() == Some(&last_hash) {
            have = count;
            good_len = end + 1;
        }
    }
    let missing = shared.lines(id, have)?;
    let mut tail = Vec::new();
    for (expected, (seq, line)) in (have + 1..).zip(&missing) {
        if *seq != expected {
            return Err(JournalError::Corrupt {
                path: path.clone(),
                line: expected as usize,
                message: format!("the store has line {seq} where {expected} was expected"),
            });
        }
        tail.extend_from_slice(line);
        tail.push(b'\n');
    }
    // A torn tail, or lines the store never had, are cut: the cache keeps the store's text
    // (appended: the file is opened to append). Not synced: a crash loses what the store
    // gives again.
    let cut = if good_len < bytes.len() {
        file.set_len(good_len as u64)
    } else {
        Ok(())
    };
    cut.and_then(|()| file.write_all(&tail))
        .map_err(|e| JournalError::io(&path, &e))?;
    // The head of what is written now (the store may have gone on since `head` was read).
    let written = match missing.last() {
        Some((seq, line)) => (*seq, super::chain::line_hash(line)),
        None => head,
    };
    let tmp = dir.join(format!("{HEAD_FILE}.tmp"));
    fs::write(&tmp, store::head_line(written.0, &written.1))
        .and_then(|()| fs::rename(&tmp, dir.join(HEAD_FILE)))
        .map_err(|e| JournalError::io(dir, &e))?;
    drop(file);
    Ok(())
}

/// A lease taken without a journal ([`store::hold`]): nothing opens the run meanwhile.
pub(crate) fn hold(run_dir: &Path) -> Result<Option<Box<dyn Lease>>, JournalError> {
    let Some(shared) = mounted() else {
        return Ok(None);
    };
    shared
        .lease(run_dir, &store::run_id_of(run_dir), false)
        .map(Some)
}

/// A journal's bytes and its head, as the store holds them.
pub type Stored = (Vec<u8>, Option<(u64, String)>);

/// Run `run_dir`'s journal as the shared store holds it: its bytes and its head; `None`
/// without a store, or when the store does not have the run.
pub fn stored(run_dir: &Path) -> Option<Result<Stored, JournalError>> {
    let shared = mounted()?;
    let id = store::run_id_of(run_dir);
    let read = || {
        let Some(head) = shared.head(&id)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        for (_, line) in shared.lines(&id, 0)? {
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
        }
        Ok(Some((bytes, Some(head))))
    };
    read().transpose()
}

/// Forget run `run_dir` in the shared store (its lease held by the caller).
pub fn remove(run_dir: &Path) -> Result<(), JournalError> {
    match mounted() {
        Some(shared) => shared.remove(&store::run_id_of(run_dir)),
        None => Ok(()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    /// A stored line: `(seq, hash, bytes)`.
    type Line = (u64, String, Vec<u8>);

    /// A shared store in memory: each run's lines, and whether commits are refused.
    #[derive(Default)]
    pub(crate) struct Memory {
        pub runs: Mutex<HashMap<String, Vec<Line>>>,
        pub refuse: std::sync::atomic::AtomicBool,
    }

    pub(crate) struct MemoryLease(pub Arc<Memory>);

    impl Lease for MemoryLease {
        fn commit(&mut self, batch: &Batch<'_>) -> Result<(), JournalError> {
            if self.0.refuse.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(JournalError::Fenced {
                    run_dir: batch.run_id.into(),
                    message: "refused by the test".into(),
                });
            }
            let mut runs = self.0.runs.lock().unwrap();
            let lines = runs.entry(batch.run_id.to_string()).or_default();
            assert_eq!(lines.len() as u64, batch.after, "fenced on the head");
            for (seq, hash, line) in &batch.lines {
                lines.push((*seq, hash.clone(), line.to_vec()));
            }
            Ok(())
        }
    }

    impl SharedStore for Memory {
        fn shown(&self) -> String {
            "memory".into()
        }
        fn lease(&self, _: &Path, _: &str, _: bool) -> Result<Box<dyn Lease>, JournalError> {
            unreachable!("the tests take leases themselves")
        }
        fn held(&self, _: &str) -> Result<bool, JournalError> {
            Ok(false)
        }
        fn heads(&self) -> Result<Vec<(String, u64, String)>, JournalError> {
            let runs = self.runs.lock().unwrap();
            Ok((runs.iter())
                .filter_map(|(id, l)| l.last().map(|(s, h, _)| (id.clone(), *s, h.clone())))
                .collect())
        }
        fn head(&self, run_id: &str) -> Result<Option<(u64, String)>, JournalError> {
            let runs = self.runs.lock().unwrap();
            Ok((runs.get(run_id))
                .and_then(|l| l.last())
                .map(|(s, h, _)| (*s, h.clone())))
        }
        fn hash_at(&self, run_id: &str, seq: u64) -> Result<Option<String>, JournalError> {
            let runs = self.runs.lock().unwrap();
            Ok((runs.get(run_id))
                .and_then(|l| l.iter().find(|(s, _, _)| *s == seq))
                .map(|(_, h, _)| h.clone()))
        }
        fn lines(&self, run_id: &str, after: u64) -> Result<Vec<(u64, Vec<u8>)>, JournalError> {
            let runs = self.runs.lock().unwrap();
            Ok((runs.get(run_id).into_iter().flatten())
                .filter(|(s, _, _)| *s > after)
                .map(|(s, _, l)| (*s, l.clone()))
                .collect())
        }
        fn remove(&self, run_id: &str) -> Result<(), JournalError> {
            self.runs.lock().unwrap().remove(run_id);
            Ok(())
        }
        fn hold_parked(&self, _: &str, _: Option<u32>) -> Result<(), JournalError> {
            unreachable!()
        }
        fn held_parked(&self, _: &str) -> Result<Option<u32>, JournalError> {
            unreachable!()
        }
        fn post(&self, _: &str, _: &str) -> Result<i64, JournalError> {
            unreachable!()
        }
        fn reply(&self, _: i64) -> Result<Option<String>, JournalError> {
            unreachable!()
        }
        fn withdraw(&self, _: i64) -> Result<bool, JournalError> {
            unreachable!()
        }
        fn claim_posted(&self, _: &str) -> Result<Vec<(i64, String)>, JournalError> {
            unreachable!()
        }
        fn answer(&self, _: i64, _: &str) -> Result<(), JournalError> {
            unreachable!()
        }
    }

    fn line(seq: u64) -> Vec<u8> {
        format!(r#"{{"seq":{seq},"at_ms":1,"event":"run_resumed","from_seq":0}}"#).into_bytes()
    }

    fn store_of(id: &str, count: u64) -> Memory {
        let memory = Memory::default();
        let lines = (1..=count)
            .map(|s| (s, super::super::chain::line_hash(&line(s)), line(s)))
            .collect();
        memory.runs.lock().unwrap().insert(id.to_string(), lines);
        memory
    }

    fn text(count: u64) -> Vec<u8> {
        (1..=count)
            .flat_map(|s| {
                let mut l = line(s);
                l.push(b'\n');
                l
            })
            .collect()
    }

    /// A host's cache is brought to the store's head however it stands: missing, behind,
    /// torn mid-line by a crash, or holding a line the store never had (a host killed
    /// between writing its cache and the store refusing the commit cannot happen, but a
    /// cache is never trusted over the store); a store with a gap is refused.
    #[test]
    fn a_cache_is_brought_to_the_stores_head_whatever_it_holds() {
        let store = store_of("r", 5);
        let head = store.head("r").unwrap();
        let cases: [(&str, Option<Vec<u8>>); 5] = [
            ("missing", None),
            ("empty", Some(Vec::new())),
            ("behind", Some(text(3))),
            (
                "torn",
                Some([text(3), b"{\"seq\":4,\"at".to_vec()].concat()),
            ),
            (
                "diverged",
                Some([text(3), b"{\"seq\":4}\n".to_vec()].concat()),
            ),
        ];
        for (what, cache) in cases {
            let base = tempfile::tempdir().unwrap();
            let dir = store::run_dir(base.path(), "r");
            if let Some(bytes) = cache {
                fs::create_dir_all(&dir).unwrap();
                fs::write(dir.join(JOURNAL_FILE), bytes).unwrap();
            }
            bring(&store, base.path(), "r", None).unwrap();
            assert_eq!(fs::read(dir.join(JOURNAL_FILE)).unwrap(), text(5), "{what}");
            assert_eq!(store::read_head(&dir), head, "{what}");
            // Up to date: left as it is.
            bring(&store, base.path(), "r", None).unwrap();
            assert_eq!(fs::read(dir.join(JOURNAL_FILE)).unwrap(), text(5), "{what}");
        }
        // A run the store does not have: nothing made.
        let base = tempfile::tempdir().unwrap();
        bring(&store, base.path(), "other", None).unwrap();
        assert!(!store::run_dir(base.path(), "other").exists());
        // A store that skips a line is not copied.
        store.runs.lock().unwrap().get_mut("r").unwrap().remove(2);
        let err = bring(&store, base.path(), "r", None).unwrap_err();
        assert!(
            err.to_string().contains("line 4 where 3 was expected"),
            "{err}"
        );
    }
}
