//! What the waiting runs under a run folder wait for: the open questions a person owes
//! them (oldest first) and the messages and signals they wait for. What `runs pending`
//! prints and the web console's tasklist shows.

use std::path::Path;

use serde_json::{Map, Value};

use crate::journal::event::Awaited;
use crate::journal::{Event, FlowState, store};
use crate::vocab::{Question, Untrusted};

/// One open question of a waiting run.
#[derive(Debug, Clone)]
pub struct Open {
    pub run_id: String,
    pub app: String,
    /// When it was asked (milliseconds since the Unix epoch; 0 when unknown).
    pub asked_at_ms: u64,
    pub question: Question,
    /// The run's variables as they stand, and which of them hold untrusted data.
    pub variables: Map<String, Value>,
    pub untrusted: Untrusted,
}

impl Open {
    /// Whether `person` may answer it: a guardrail's approvers when it names any, else
    /// anyone; a question that waits for a remote agent, nobody.
    pub fn answerable_by(&self, person: &str) -> bool {
        if self
            .question
            .remote
            .as_ref()
            .is_some_and(|r| r.until_ms.is_none() || r.state != "input-required")
        {
            return false;
        }
        match &self.question.approval {
            Some(a) if !a.approvers.is_empty() => a.approvers.iter().any(|p| p == person),
            _ => true,
        }
    }

    /// Whether it names `person` among those who may answer it (not anyone's).
    pub fn addressed_to(&self, person: &str) -> bool {
        (self.question.approval.as_ref()).is_some_and(|a| a.approvers.iter().any(|p| p == person))
    }
}

/// A message or signal a waiting run waits for.
#[derive(Debug, Clone)]
pub struct Wait {
    pub run_id: String,
    pub app: String,
    pub awaited: Awaited,
}

/// The open questions (oldest first) and the waits of the runs under `base`, of `app`
/// only when given.
pub fn pending(base: &Path, app: Option<&str>) -> (Vec<Open>, Vec<Wait>) {
    let mut open = Vec::new();
    let mut waits = Vec::new();
    for id in store::run_ids(base) {
        let path = store::run_dir(base, &id).join(store::JOURNAL_FILE);
        let Ok(read) = store::read_journal(&path) else {
            continue;
        };
        let state = FlowState::fold(read.records.iter());
        if state.status.is_some() || app.is_some_and(|app| state.app != app) {
            continue;
        }
        open.extend(questions(&id, &read.records, &state));
        if let Some(waiting) = &state.waiting {
            for a in &waiting.awaiting {
                waits.push(Wait {
                    run_id: id.clone(),
                    app: state.app.clone(),
                    awaited: a.clone(),
                });
            }
        }
    }
    open.sort_by(|a, b| (a.asked_at_ms.cmp(&b.asked_at_ms)).then_with(|| a.run_id.cmp(&b.run_id)));
    (open, waits)
}

/// The open questions of the runs under a run folder, kept between looks: a run's journal
/// is read again only when it changed (its length or its modification time), so a server
/// listing them often (the web console's tasklist) reads what changed, not every journal.
#[derive(Debug, Default)]
pub struct Cache {
    by_run: std::sync::Mutex<std::collections::HashMap<String, Seen>>,
}

#[derive(Debug)]
struct Seen {
    len: u64,
    modified: Option<std::time::SystemTime>,
    app: String,
    open: Vec<Open>,
}

impl Cache {
    /// The open questions under `base` (of `app` only when given), oldest first.
    pub fn open(&self, base: &Path, app: Option<&str>) -> Vec<Open> {
        let ids = store::run_ids(base);
        // A run gone from the folder (pruned) is forgotten.
        let mut by_run = self.by_run.lock().unwrap_or_else(|p| p.into_inner());
        let present: std::collections::HashSet<&String> = ids.iter().collect();
        by_run.retain(|id, _| present.contains(id));
        let mut out = Vec::new();
        for id in ids {
            let path = store::run_dir(base, &id).join(store::JOURNAL_FILE);
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let (len, modified) = (meta.len(), meta.modified().ok());
            let fresh = by_run
                .get(&id)
                .is_some_and(|s| s.len == len && s.modified == modified);
            if !fresh {
                let Ok(read) = store::read_journal(&path) else {
                    by_run.remove(&id);
                    continue;
                };
                let state = FlowState::fold(read.records.iter());
                let open = if state.status.is_some() {
                    Vec::new()
                } else {
                    questions(&id, &read.records, &state)
                };
                let seen = Seen {
                    len,
                    modified,
                    app: state.app.clone(),
                    open,
                };
                by_run.insert(id.clone(), seen);
            }
            if let Some(seen) = by_run.get(&id)
                && app.is_none_or(|a| a == seen.app)
            {
                out.extend(seen.open.iter().cloned());
            }
        }
        out.sort_by(|a, b| {
            (a.asked_at_ms.cmp(&b.asked_at_ms)).then_with(|| a.run_id.cmp(&b.run_id))
        });
        out
    }
}

/// The open questions of run `id` (its records and their state).
pub fn questions(id: &str, records: &[crate::journal::Record], state: &FlowState) -> Vec<Open> {
    if state.open_questions.is_empty() {
        return Vec::new();
    }
    let asked = |key: &str| {
        records.iter().rev().find_map(|r| match &r.event {
            Event::QuestionParked { question } if question.key == key => Some(r.at_ms),
            _ => None,
        })
    };
    (state.open_questions.values())
        .map(|q| Open {
            run_id: id.to_string(),
            app: state.app.clone(),
            asked_at_ms: asked(&q.key).unwrap_or(0),
            question: q.clone(),
            variables: state.process_variables.clone(),
            untrusted: state.untrusted.clone().unwrap_or_default(),
        })
        .collect()
}
