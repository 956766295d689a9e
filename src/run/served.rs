//! What a server does for the people it serves (the web console), on the same run host
//! as its A2A agents ([`Runner`]): start a run of a served app (its questions park, for a
//! person to answer later), answer a waiting run's open question, cancel a run. An answer
//! is checked and journalled as `runs answer` does it, with the signed-in person as `by`;
//! the run then goes on in this server, whichever process left it waiting.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::agent::{AgentError, Runner, Served};
use super::answer::{AnswerError, AnswerRequest, Answered};
use crate::journal::FlowState;
use crate::journal::store;
use crate::mcp::RunProcessArgs;
use crate::vocab::Untrusted;

/// Why a person's request about a run is refused (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum ServedError {
    #[error("no app `{0}` is served here")]
    NoApp(String),
    #[error("no run `{0}`")]
    NoRun(String),
    #[error(transparent)]
    Inputs(#[from] super::plan::PlanError),
    #[error(transparent)]
    Start(#[from] AgentError),
    #[error(transparent)]
    Answer(#[from] Box<AnswerError>),
    #[error(
        "run `{0}` is held by another process (a worker, a server or a terminal); answer it there, or once it lets go"
    )]
    Elsewhere(String),
    #[error("run `{0}` is going (not waiting): it can be cancelled once it waits")]
    Going(String),
    #[error("run `{id}`: {message}")]
    Journal { id: String, message: String },
    #[error(transparent)]
    Cancel(#[from] super::cancel::CancelError),
}

impl Runner {
    /// The served app named `name` (its name, or the slug it is served under).
    pub fn served(&self, name: &str) -> Option<&Served> {
        (self.apps.get(name)).or_else(|| self.apps.values().find(|s| s.loaded.name == name))
    }

    /// Start a run of app `app` from a form's fields (typed and checked as `--var` values
    /// are), by `by`: its id. The run goes on here; a question nobody before a person
    /// answers parks it, and it is held here until answered.
    pub fn start_for(
        self: &Arc<Self>,
        app: &str,
        fields: &[(String, String)],
        by: &str,
    ) -> Result<String, ServedError> {
        let served = self
            .served(app)
            .ok_or_else(|| ServedError::NoApp(app.to_string()))?;
        let config =
            (served.loaded.config.as_ref()).ok_or_else(|| ServedError::NoApp(app.to_string()))?;
        let (variables, untrusted): (Map<String, Value>, Untrusted) =
            super::plan::form_variables(config, fields, &format!("from the web console ({by})"))?;
        let run_id = store::new_run_id_in(self.journals.base());
        let args = RunProcessArgs {
            process_key: served.process_key.clone(),
            run_id: run_id.clone(),
            variables: variables.clone(),
            untrusted: Some(untrusted.clone()),
            bridge: None,
            adopt: None,
            lost_parks: false,
        };
        let (sink, _graph) = self.journals.open_run(&args).map_err(AgentError::from)?;
        let key = served.process_key.clone();
        self.go(&run_id, &key, sink, Some((variables, untrusted)))?;
        Ok(run_id)
    }

    /// Answer the open question of waiting run `run_id` that `request` names, checked and
    /// journalled as `runs answer` does; the run then goes on here (held here already, or
    /// taken over from the folder when no process holds it and its app is served here;
    /// otherwise `worker` or `runs resume` continues it).
    pub fn answer(
        self: &Arc<Self>,
        run_id: &str,
        request: AnswerRequest,
    ) -> Result<Answered, ServedError> {
        if let Some(answered) = self.journals.answer(run_id, request.clone()) {
            return Ok(answered.map_err(Box::new)?);
        }
        let base = self.journals.base().to_path_buf();
        let (journal, records, _) = super::parked::reopen(
            &base,
            run_id,
            self.journals.durability(),
        )
        .map_err(|e| match e {
            super::parked::ReopenError::Locked { .. } => ServedError::Elsewhere(run_id.to_string()),
            other => ServedError::Journal {
                id: run_id.to_string(),
                message: crate::diag::chain(&other),
            },
        })?;
        let (answered, record) =
            super::answer::answer(&journal, &records, run_id, request).map_err(Box::new)?;
        let mut records = records;
        records.push(record);
        let state = FlowState::fold(records.iter());
        let ours = self
            .apps
            .values()
            .any(|s| s.process_key == state.process_key);
        let child = matches!(
            records.first().map(|r| &r.event),
            Some(crate::journal::Event::RunStarted {
                parent: Some(_),
                ..
            })
        );
        if ours && state.waiting.is_some() && !child {
            self.journals.remember(&records);
            let sink = self.journals.take(run_id, &state.process_key, journal);
            if let Err(e) = self.go(run_id, &state.process_key, sink, None) {
                tracing::warn!("run {run_id}: answered, but it cannot go on here: {e}");
                self.journals.release(run_id);
            }
        }
        Ok(answered)
    }

    /// Cancel waiting run `run_id` by `by`, as `runs cancel` does: its remote tasks
    /// cancelled at their agents, its child runs with it. A run going in this or another
    /// process is refused.
    pub async fn cancel_for(
        self: &Arc<Self>,
        run_id: &str,
        by: &str,
        reason: Option<String>,
    ) -> Result<(), ServedError> {
        let base = self.journals.base().to_path_buf();
        if store::check_run_id(run_id).is_err()
            || !store::run_dir(&base, run_id)
                .join(store::JOURNAL_FILE)
                .is_file()
        {
            return Err(ServedError::NoRun(run_id.to_string()));
        }
        let (apps_dir, durability) = (self.children.apps_dir.clone(), self.journals.durability());
        let (id, by) = (run_id.to_string(), by.to_string());
        if self.journals.holds(run_id) {
            if !self.journals.is_parked(run_id) {
                return Err(ServedError::Going(run_id.to_string()));
            }
            // Held parked here: cancelled through its journal open here, as a served run
            // its A2A caller cancels.
            let (records, state) = (self.journals.records(run_id))
                .ok_or_else(|| ServedError::NoRun(run_id.to_string()))?;
            let remotes = (self.apps.values())
                .find(|s| s.process_key == state.process_key)
                .and_then(|s| s.loaded.config.as_ref())
                .map(crate::reason::remote::Remotes::of);
            let remote = match &remotes {
                Some(r) => super::cancel::cancel_at_agents(r, &state).await,
                None => Vec::new(),
            };
            self.journals
                .cancel(run_id, Some(by.clone()), reason, remote, &state);
            let _ = tokio::task::spawn_blocking(move || {
                let c = super::cancel::Cancelling {
                    run_dir: &base,
                    durability,
                    app: None,
                    find_app: Box::new(|app| crate::app::registry::find(app, &apps_dir)),
                };
                super::cancel::cancel_children(&c, &id, &records, &state, Some(by)).len()
            })
            .await;
            return Ok(());
        }
        let done = tokio::task::spawn_blocking(move || {
            let c = super::cancel::Cancelling {
                run_dir: &base,
                durability,
                app: None,
                find_app: Box::new(|app| crate::app::registry::find(app, &apps_dir)),
            };
            super::cancel::cancel_run(&c, &id, Some(by), reason).map(|_| ())
        })
        .await;
        match done {
            Ok(result) => Ok(result?),
            Err(e) => Err(ServedError::Journal {
                id: run_id.to_string(),
                message: e.to_string(),
            }),
        }
    }
}
