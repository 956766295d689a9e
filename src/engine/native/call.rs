//! Call activities that name a process: the called process runs as a **child run**
//! through the run's [`ChildRuns`] (see [`crate::bridge::child`]); the engine decides the
//! call's idempotency key, the child's id (derived from the key), what goes in (the
//! call's `in` mappings, [`crate::bpmn::call`]) and what comes back (its `out` mappings).
//!
//! Entering the call activity journals `child_started` (derived: a resumed run checks it
//! against its journal instead of writing it again), then the child runs. Its end comes
//! back as the call activity's answer, journalled as its `task_finished` with the call's
//! key: completed, the `out` variables are merged and the token leaves; failed, the call
//! activity raises a BPMN error — the child's uncaught error code, else `CHILD_FAILED` —
//! which the call activity's error boundary catches as a failed task's. A resumed parent
//! whose journal holds the call's `task_finished` does not call again; one whose journal
//! holds only `child_started` calls again with the same child id, and the child is resumed
//! (or its end read), not started anew. A child that parks parks its call activity's
//! token: the run waits (`run_waiting`, reason `child run <id>`) once nothing else moves,
//! and calls again when it is resumed.

use std::time::Instant;

use super::calls::{Answer, elapsed_ms};
use super::replay::Asked;
use super::run::Run;
use super::tokens::TokenId;
use crate::bpmn::call_spec;
use crate::bridge::child::{ChildCall, call_outcome, child_run_id};
use crate::engine::EngineError;
use crate::journal::Event;
use crate::semantics::topology::LiveNode;
use crate::vocab::RunStatus;

impl Run {
    /// Enter a call activity: when it names a process, call it as a child run (`true`);
    /// otherwise it is a task like any other (`false`).
    pub(super) fn call_child(
        &mut self,
        token: TokenId,
        node: &LiveNode,
    ) -> Result<bool, EngineError> {
        let spec = self.request.process.node(&node.id).and_then(call_spec);
        let Some(spec) = spec else {
            return Ok(false);
        };
        let key = self.next_key(&node.id);
        let run_id = child_run_id(&key);
        self.emit(Event::ChildStarted {
            node: node.id.clone(),
            key: key.clone(),
            run_id: run_id.clone(),
            process_key: spec.called.clone(),
        })?;
        if self.hold_replayed(token, &key, Asked::Task { node: &node.id }) {
            return Ok(true);
        }
        let mut ctx = self.context(&node.id, node.name.clone());
        self.with_instance_variables(token, &mut ctx);
        // What goes in keeps the provenance of what it comes from.
        let untrusted = ctx.untrusted.as_deref().map(|known| {
            (spec.inputs.sources(&ctx.variables).into_iter())
                .filter_map(|(target, source)| {
                    Some((target.to_string(), known.get(source)?.clone()))
                })
                .collect()
        });
        let call = ChildCall {
            parent_run: self.request.run_id.clone(),
            node: node.id.clone(),
            key: key.clone(),
            run_id,
            process_key: spec.called.clone(),
            variables: spec.inputs.apply(&ctx.variables),
            untrusted,
        };
        let children = self.request.children.clone();
        let id = node.id.clone();
        self.spawn_call(token, format!("call activity `{id}`"), async move {
            let started = Instant::now();
            let outcome = match children {
                Some(children) => children.run_child(call).await,
                None => Err(format!(
                    "nothing runs the processes call activities call here (`{}`)",
                    spec.called
                )
                .into()),
            };
            // A parked child parks its call activity's token (and so the run).
            if let Ok(child) = &outcome
                && child.status == RunStatus::Waiting
            {
                return Answer::ChildWaiting {
                    token,
                    key,
                    run_id: child.run_id.clone(),
                };
            }
            Answer::Task {
                token,
                node: id,
                key,
                result: Ok(call_outcome(&spec, outcome)),
                duration_ms: elapsed_ms(started),
            }
        });
        Ok(true)
    }
}
