//! Deliveries to parked runs: a message or signal sent from outside (`runs message`,
//! `runs signal`, the bridge's tools) is journalled as `message_received` in the run's
//! journal, under its lock, before any engine applies it; the resumed run applies it
//! exactly once (docs/journal.md). A delivery to a run that does not wait for it is
//! refused and writes nothing.

use std::path::Path;

use serde_json::{Map, Value};

use super::EventSink;
use super::event::{CatchKind, Event, Record};
use super::state::FlowState;
use super::store::{self, Journal, JournalError};
use crate::vocab::Taint;

/// A message or signal to deliver.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Delivery {
    pub kind: CatchKind,
    pub name: String,
    /// The variables it sets in the run: untrusted, like every run input.
    pub variables: Map<String, Value>,
    /// Where it came from, for provenance: `from `runs message``, ...
    pub source: String,
    /// A message's correlation value: only a wait whose correlation key had this value
    /// receives it (`None`: the first wait for the message, whatever its key).
    pub correlation: Option<String>,
    /// The sender's id for this delivery: sent again (a retry after a lost reply), it is
    /// not journalled again.
    #[serde(default)]
    pub id: Option<String>,
}

impl Delivery {
    /// Whether the wait `awaited` takes this delivery: the same kind and name, and, when
    /// the delivery names a correlation value, the wait's.
    pub fn reaches(&self, awaited: &super::event::Awaited) -> bool {
        awaited.kind == self.kind
            && awaited.name == self.name
            && (self.correlation.is_none() || awaited.correlation == self.correlation)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("run `{run}` has finished ({status}); it waits for no {kind}")]
    Finished {
        run: String,
        status: &'static str,
        kind: &'static str,
    },
    #[error("run `{run}` is not waiting for {kind} `{name}`{}{}", keyed(.correlation), waits_for(.waits))]
    NotWaiting {
        run: String,
        kind: &'static str,
        name: String,
        correlation: Option<String>,
        /// What it waits for: `message `Payment` at Catch_Pay`, ...
        waits: Vec<String>,
    },
    #[error("cannot journal the {kind}: {source}")]
    Journal {
        kind: &'static str,
        source: JournalError,
    },
    #[error("no run `{run}` under {base}")]
    NoRun { run: String, base: String },
    #[error("cannot open the journal of run `{run}`: {source}")]
    Open { run: String, source: JournalError },
    /// Posted to the server that holds the parked run, which refused it or did not take it.
    #[error("{message}")]
    Held { run: String, message: String },
}

fn keyed(correlation: &Option<String>) -> String {
    correlation
        .as_ref()
        .map(|c| format!(" with correlation key {c:?}"))
        .unwrap_or_default()
}

fn waits_for(waits: &[String]) -> String {
    if waits.is_empty() {
        " (it waits for no message or signal)".to_string()
    } else {
        format!(" (it waits for {})", waits.join(", "))
    }
}

/// Journal `delivery` to run `run`, whose journal is open (`records`: what it holds): a
/// message to the wait that started first, a signal to every wait for it. The records
/// written; nothing is written when the run does not wait for it.
pub fn deliver(
    journal: &Journal,
    records: &[Record],
    run: &str,
    delivery: &Delivery,
) -> Result<Vec<Record>, DeliveryError> {
    let kind = delivery.kind.as_str();
    // Taken already (the same delivery sent again): what it wrote then, nothing more.
    if let Some(id) = &delivery.id {
        let taken: Vec<Record> = (records.iter())
            .filter(
                |r| matches!(&r.event, Event::MessageReceived { delivery: Some(d), .. } if d == id),
            )
            .cloned()
            .collect();
        if !taken.is_empty() {
            return Ok(taken);
        }
    }
    let state = FlowState::fold(records.iter());
    if let Some(status) = state.status {
        return Err(DeliveryError::Finished {
            run: run.to_string(),
            status: status.as_str(),
            kind,
        });
    }
    let awaiting = state
        .waiting
        .as_ref()
        .map(|w| w.awaiting.clone())
        .unwrap_or_default();
    let mut targets: Vec<_> = awaiting.iter().filter(|a| delivery.reaches(a)).collect();
    if delivery.kind == CatchKind::Message {
        targets.truncate(1);
    }
    if targets.is_empty() {
        return Err(DeliveryError::NotWaiting {
            run: run.to_string(),
            kind,
            name: delivery.name.clone(),
            correlation: delivery.correlation.clone(),
            waits: awaiting
                .iter()
                .map(|a| match &a.correlation {
                    Some(c) => format!("{} `{}` ({c:?}) at {}", a.kind.as_str(), a.name, a.node),
                    None => format!("{} `{}` at {}", a.kind.as_str(), a.name, a.node),
                })
                .collect(),
        });
    }
    let taint = (!delivery.variables.is_empty()).then(|| Taint::input(&delivery.source));
    let mut written = Vec::new();
    for target in targets {
        let record = journal
            .emit(Event::MessageReceived {
                key: target.key.clone(),
                node: target.node.clone(),
                kind: delivery.kind,
                name: delivery.name.clone(),
                variables: delivery.variables.clone(),
                thrown_by: None,
                taint: taint.clone(),
                delivery: delivery.id.clone(),
            })
            .map_err(|source| DeliveryError::Journal { kind, source })?;
        written.push(record);
    }
    journal
        .commit()
        .map_err(|source| DeliveryError::Journal { kind, source })?;
    Ok(written)
}

/// The runs under `base` that took delivery `id` already (a retry of it), each with the
/// records it wrote then; empty when none did.
pub fn taken(base: &Path, id: &str) -> Vec<(String, Vec<Record>)> {
    let mut out = Vec::new();
    for run in store::run_ids(base) {
        let path = store::run_dir(base, &run).join(store::JOURNAL_FILE);
        let Ok(read) = store::read_journal(&path) else {
            continue;
        };
        let records: Vec<Record> = (read.records.into_iter())
            .filter(
                |r| matches!(&r.event, Event::MessageReceived { delivery: Some(d), .. } if d == id),
            )
            .collect();
        if !records.is_empty() {
            out.push((run, records));
        }
    }
    out
}

/// Journal `delivery` to run `run` under `base`, taking the run's lock (a run another
/// process writes is refused). The records written.
pub fn deliver_to_run(
    base: &Path,
    run: &str,
    delivery: &Delivery,
    durability: super::Durability,
) -> Result<Vec<Record>, DeliveryError> {
    if store::check_run_id(run).is_ok() {
        // With a shared store: the run as the store has it (another host may have it only).
        let _ = super::shared::refresh(base, run);
    }
    let dir = store::run_dir(base, run);
    if store::check_run_id(run).is_err() || !dir.join(store::JOURNAL_FILE).is_file() {
        return Err(DeliveryError::NoRun {
            run: run.to_string(),
            base: base.join("runs").display().to_string(),
        });
    }
    // A run being moved on (a server resuming it between two parks, a worker) holds its
    // lock without saying it is held parked; it soon parks again (and says so) or ends.
    let busy_until = std::time::Instant::now() + BUSY_WAIT;
    let (journal, reopened) = loop {
        match Journal::open(&dir, durability) {
            Ok(opened) => break opened,
            // A server (`serve`) holds the run parked: it takes the delivery itself.
            Err(JournalError::Locked { .. }) if held_parked(&dir).is_some() => {
                return post(&dir, run, delivery, POST_WAIT);
            }
            Err(JournalError::Locked { .. }) if std::time::Instant::now() < busy_until => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(source) => {
                return Err(DeliveryError::Open {
                    run: run.to_string(),
                    source,
                });
            }
        }
    };
    deliver(&journal, &reopened.records, run, delivery)
}

// ---- Deliveries to a run a server holds parked ----
//
// A server (`cuga-flo serve`) keeps the journal of a run it started open (its lock held)
// while the run is parked, and resumes the run itself when it can go on. Another process
// cannot take the lock to journal a delivery: it posts the delivery into the run's
// `inbox/` folder instead, and waits for the server's reply. The server looks into the
// inboxes of the runs it holds parked every [`INBOX_POLL`] (a `read_dir` each: cheap,
// and the same on every file system, where a file watcher is not), journals what it
// finds under its lock with [`deliver`] and answers. A file is claimed by renaming it,
// so a delivery is taken once or not at all: a sender that gives up first withdraws it.

/// The folder of a run's posted deliveries.
pub const INBOX_DIR: &str = "inbox";
/// In [`INBOX_DIR`] while a server holds the run parked: the server's pid.
const HELD_FILE: &str = "held";
/// How often a server looks into the inboxes of the runs it holds parked.
pub const INBOX_POLL: std::time::Duration = std::time::Duration::from_millis(200);
/// How long a sender waits for a run another process is moving on to park or end.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(3);
/// How long a sender waits for the server's reply.
const POST_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The pid of the server that holds the run in `run_dir` parked, if one says it does
/// (with a shared store: a server on any host that still holds the run's lease).
pub fn held_parked(run_dir: &Path) -> Option<u32> {
    if let Some(shared) = super::shared::mounted() {
        return (shared.held_parked(&super::layout::run_id_of(run_dir)).ok()).flatten();
    }
    let text = std::fs::read_to_string(run_dir.join(INBOX_DIR).join(HELD_FILE)).ok()?;
    text.trim().parse().ok()
}

/// Say that this process holds the run in `run_dir` parked (and takes its deliveries).
pub fn hold_parked(run_dir: &Path) -> std::io::Result<()> {
    if let Some(shared) = super::shared::mounted() {
        let id = super::layout::run_id_of(run_dir);
        return (shared.hold_parked(&id, Some(std::process::id()))).map_err(std::io::Error::other);
    }
    let inbox = run_dir.join(INBOX_DIR);
    std::fs::create_dir_all(&inbox)?;
    let tmp = inbox.join(format!("{HELD_FILE}.tmp"));
    std::fs::write(&tmp, std::process::id().to_string())?;
    std::fs::rename(tmp, inbox.join(HELD_FILE))
}

/// Stop saying it (the run resumes, or the server stops).
pub fn release_parked(run_dir: &Path) {
    if let Some(shared) = super::shared::mounted() {
        let id = super::layout::run_id_of(run_dir);
        if let Err(e) = shared.hold_parked(&id, None) {
            tracing::warn!("run {id}: cannot say it is no longer held parked here: {e}");
        }
        return;
    }
    let _ = std::fs::remove_file(run_dir.join(INBOX_DIR).join(HELD_FILE));
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reply {
    Delivered(Vec<Record>),
    Refused(String),
}

/// A server's reply to a posted delivery: the records it journalled, or why not.
fn read_reply(text: &str) -> Result<Vec<Record>, String> {
    match serde_json::from_str::<Reply>(text) {
        Ok(Reply::Delivered(records)) => Ok(records),
        Ok(Reply::Refused(why)) => Err(why),
        Err(e) => Err(format!("the server's reply is unreadable: {e}")),
    }
}

/// What a server answers a posted delivery (`text`, or why it could not be read): `deliver`
/// journals it.
fn answer_posted(
    text: Result<String, String>,
    deliver: &mut impl FnMut(&Delivery) -> Result<Vec<Record>, DeliveryError>,
) -> Reply {
    match text.and_then(|t| serde_json::from_str::<Delivery>(&t).map_err(|e| e.to_string())) {
        Ok(delivery) => match deliver(&delivery) {
            Ok(records) => Reply::Delivered(records),
            Err(e) => Reply::Refused(e.to_string()),
        },
        Err(e) => Reply::Refused(format!("the posted delivery is unreadable: {e}")),
    }
}

/// Post `delivery` to the server holding run `run` (in `run_dir`) parked, and wait up to
/// `wait` for it to be journalled there: the records written, or why not.
fn post(
    run_dir: &Path,
    run: &str,
    delivery: &Delivery,
    wait: std::time::Duration,
) -> Result<Vec<Record>, DeliveryError> {
    let failed = |message: String| DeliveryError::Held {
        run: run.to_string(),
        message,
    };
    if let Some(shared) = super::shared::mounted() {
        return post_shared(shared, run_dir, run, delivery, wait).map_err(failed);
    }
    let inbox = run_dir.join(INBOX_DIR);
    let name = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let posted = inbox.join(format!("{name}.json"));
    let reply = inbox.join(format!("{name}.reply"));
    let tmp = inbox.join(format!("{name}.tmp"));
    let body = serde_json::to_vec(delivery).map_err(|e| failed(e.to_string()))?;
    std::fs::write(&tmp, body)
        .and_then(|()| std::fs::rename(&tmp, &posted))
        .map_err(|e| failed(format!("cannot post to run `{run}`'s inbox: {e}")))?;
    let until = std::time::Instant::now() + wait;
    loop {
        if let Ok(text) = std::fs::read_to_string(&reply) {
            let _ = std::fs::remove_file(&reply);
            return read_reply(&text).map_err(failed);
        }
        if std::time::Instant::now() >= until && std::fs::remove_file(&posted).is_ok() {
            // Withdrawn before the server claimed it: nothing was written.
            return Err(failed(format!(
                "run `{run}` is held by the server (pid {}), which did not take the {} \
                 within {} s; nothing was recorded",
                held_parked(run_dir).map_or_else(|| "?".to_string(), |p| p.to_string()),
                delivery.kind.as_str(),
                wait.as_secs()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// [`post`] through a shared store's inbox: to a server on any host.
fn post_shared(
    shared: &dyn super::shared::SharedStore,
    run_dir: &Path,
    run: &str,
    delivery: &Delivery,
    wait: std::time::Duration,
) -> Result<Vec<Record>, String> {
    let id = super::layout::run_id_of(run_dir);
    let body = serde_json::to_string(delivery).map_err(|e| e.to_string())?;
    let posted = (shared.post(&id, &body))
        .map_err(|e| format!("cannot post to run `{run}`'s inbox: {e}"))?;
    let until = std::time::Instant::now() + wait;
    loop {
        if let Some(text) = shared.reply(posted).map_err(|e| e.to_string())? {
            return read_reply(&text);
        }
        if std::time::Instant::now() >= until && shared.withdraw(posted).unwrap_or(false) {
            return Err(format!(
                "run `{run}` is held by a server (pid {}), which did not take the {} within \
                 {} s; nothing was recorded",
                held_parked(run_dir).map_or_else(|| "?".to_string(), |p| p.to_string()),
                delivery.kind.as_str(),
                wait.as_secs()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Take the deliveries posted to the run in `run_dir` (whose journal this process holds),
/// oldest first: each is claimed, handed to `deliver` (which journals it) and answered.
/// How many were journalled.
pub fn take_posted(
    run_dir: &Path,
    mut deliver: impl FnMut(&Delivery) -> Result<Vec<Record>, DeliveryError>,
) -> usize {
    if let Some(shared) = super::shared::mounted() {
        let id = super::layout::run_id_of(run_dir);
        let claimed = match shared.claim_posted(&id) {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!("run {id}: cannot look into its inbox: {e}");
                return 0;
            }
        };
        let mut taken = 0;
        for (posted, text) in claimed {
            let reply = answer_posted(Ok(text), &mut deliver);
            taken += usize::from(matches!(reply, Reply::Delivered(_)));
            let answered = serde_json::to_string(&reply)
                .map_err(|e| e.to_string())
                .and_then(|r| shared.answer(posted, &r).map_err(|e| e.to_string()));
            if let Err(e) = answered {
                tracing::warn!("run {id}: cannot answer a delivery posted to it: {e}");
            }
        }
        return taken;
    }
    let inbox = run_dir.join(INBOX_DIR);
    let Ok(entries) = std::fs::read_dir(&inbox) else {
        return 0;
    };
    let mut posted: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    posted.sort();
    let mut taken = 0;
    for path in posted {
        let claimed = path.with_extension("claimed");
        if std::fs::rename(&path, &claimed).is_err() {
            continue; // withdrawn by its sender
        }
        let text = std::fs::read_to_string(&claimed).map_err(|e| e.to_string());
        let reply = answer_posted(text, &mut deliver);
        taken += usize::from(matches!(reply, Reply::Delivered(_)));
        let tmp = path.with_extension("reply.tmp");
        let written = serde_json::to_vec(&reply)
            .map_err(std::io::Error::other)
            .and_then(|b| std::fs::write(&tmp, b))
            .and_then(|()| std::fs::rename(&tmp, path.with_extension("reply")));
        if let Err(e) = written {
            tracing::warn!("cannot answer the delivery {}: {e}", path.display());
        }
        let _ = std::fs::remove_file(&claimed);
    }
    taken
}

/// The runs under `base` (read without their locks) that are parked and for which
/// `keep` holds, by id.
fn parked_runs(base: &Path, keep: impl Fn(&FlowState) -> bool) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(base.join("runs")) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|id| {
            let path = store::run_dir(base, id).join(store::JOURNAL_FILE);
            store::read_journal(&path).is_ok_and(|read| {
                let state = FlowState::fold(read.records.iter());
                state.status.is_none() && state.waiting.is_some() && keep(&state)
            })
        })
        .collect();
    ids.sort();
    ids
}

/// The parked runs under `base` with a wait `delivery` reaches: every run waiting for a
/// signal, or for a message under its correlation key (Camunda 8's correlation: a message
/// reaches every run subscribed with its name and key, each at most once).
pub fn waiting_runs(base: &Path, delivery: &Delivery) -> Vec<String> {
    parked_runs(base, |state| {
        (state.waiting.as_ref()).is_some_and(|w| w.awaiting.iter().any(|a| delivery.reaches(a)))
    })
}

/// The parked runs under `base` whose variable `variable` holds `value` (as JSON, or as
/// the text of a string or number).
pub fn correlated(base: &Path, variable: &str, value: &str) -> Vec<String> {
    let wanted = serde_json::from_str::<Value>(value).ok();
    parked_runs(base, |state| {
        state
            .process_variables
            .get(variable)
            .is_some_and(|v| matches(v, value, wanted.as_ref()))
    })
}

fn matches(held: &Value, text: &str, parsed: Option<&Value>) -> bool {
    if parsed == Some(held) {
        return true;
    }
    match held {
        Value::String(s) => s == text,
        Value::Number(n) => n.to_string() == text,
        Value::Bool(b) => b.to_string() == text,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn posted() -> Delivery {
        Delivery {
            id: None,
            kind: CatchKind::Message,
            name: "Payment".into(),
            variables: Map::new(),
            source: "from a test".into(),
            correlation: None,
        }
    }

    /// A delivery posted to a server that holds the run is taken once and answered; one
    /// nobody takes in time is withdrawn, and a server looking later finds nothing.
    #[test]
    fn posted_deliveries_are_taken_once_or_withdrawn() {
        let dir = tempfile::tempdir().unwrap();
        hold_parked(dir.path()).unwrap();
        assert_eq!(held_parked(dir.path()), Some(std::process::id()));

        let err = post(
            dir.path(),
            "r",
            &posted(),
            std::time::Duration::from_millis(50),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("did not take the message"),
            "{err}"
        );
        assert_eq!(take_posted(dir.path(), |_| unreachable!("withdrawn")), 0);

        let server_dir = dir.path().to_path_buf();
        let server = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut names = Vec::new();
            while names.is_empty() && started.elapsed() < std::time::Duration::from_secs(5) {
                take_posted(&server_dir, |d| {
                    names.push(d.name.clone());
                    Err(DeliveryError::Held {
                        run: "r".into(),
                        message: "refused by the test server".into(),
                    })
                });
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            names
        });
        let err = post(
            dir.path(),
            "r",
            &posted(),
            std::time::Duration::from_secs(5),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "refused by the test server");
        assert_eq!(server.join().unwrap(), ["Payment"]);
        let left: Vec<_> = std::fs::read_dir(dir.path().join(INBOX_DIR))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [HELD_FILE], "nothing left behind");
        release_parked(dir.path());
        assert_eq!(held_parked(dir.path()), None);
    }

    /// A run another process is moving on (its lock held, not yet said to be held parked,
    /// as a server resuming it between two parks) is waited for: once it parks under the
    /// server, the delivery is posted there instead of being refused as locked.
    #[test]
    fn a_delivery_to_a_run_being_moved_on_waits_until_it_parks() {
        let base = tempfile::tempdir().unwrap();
        let dir = store::run_dir(base.path(), "busy");
        let journal = Journal::create(
            &dir,
            store::JournalOptions {
                durability: super::super::Durability::Batch,
                anchor: super::super::chain::Anchor::new("busy", None),
            },
        )
        .unwrap();
        let server_dir = dir.clone();
        let server = std::thread::spawn(move || {
            // Moving the run on for a while, then parking it and taking what was posted.
            std::thread::sleep(std::time::Duration::from_millis(300));
            hold_parked(&server_dir).unwrap();
            let started = std::time::Instant::now();
            let mut taken = 0;
            while taken == 0 && started.elapsed() < std::time::Duration::from_secs(5) {
                take_posted(&server_dir, |_| {
                    taken += 1;
                    Err(DeliveryError::Held {
                        run: "busy".into(),
                        message: "taken by the test server".into(),
                    })
                });
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            drop(journal);
            taken
        });
        let err = deliver_to_run(
            base.path(),
            "busy",
            &posted(),
            super::super::Durability::Batch,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "taken by the test server");
        assert_eq!(server.join().unwrap(), 1);
    }

    #[test]
    fn correlation_values_match_as_json_or_as_text() {
        assert!(matches(&json!("A-17"), "A-17", None));
        assert!(matches(&json!(42), "42", Some(&json!(42))));
        assert!(matches(&json!("42"), "42", Some(&json!(42))));
        assert!(!matches(&json!("A-18"), "A-17", None));
        assert!(!matches(&json!({"id": 1}), "1", Some(&json!(1))));
    }
}
