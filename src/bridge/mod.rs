//! The bridge contract: the only way an engine and the harness talk. [`ControlPoints`] is
//! what an engine calls at each control point (the harness implements it; the MCP
//! transport in [`crate::mcp`] carries it between processes), [`run`] what a run asks of
//! an engine. No transport is defined here.

pub mod child;
pub mod run;
pub mod shared;
pub mod types;

use std::future::Future;
use std::pin::Pin;

pub use types::*;

use crate::vocab::ControlPointKind;

/// A boxed future, for object-safe async traits.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a control point answered: the typed answer of its kind.
#[derive(Debug)]
pub enum Answer {
    Task(TaskOutcome),
    Gateway(GatewayDecision),
    Hook(HookDecision),
}

impl Answer {
    pub fn kind(&self) -> ControlPointKind {
        match self {
            Answer::Task(_) => ControlPointKind::Task,
            Answer::Gateway(_) => ControlPointKind::Gateway,
            Answer::Hook(_) => ControlPointKind::Hook,
        }
    }

    /// An answer of another kind than the one asked: the implementation's mistake, told
    /// as the control point's failure rather than a panic.
    fn mismatched(self, element: &str, asked: ControlPointKind) -> ControlPointError {
        ControlPointError {
            element: element.to_string(),
            message: format!(
                "asked a {} control point, answered as a {}",
                asked.as_str(),
                self.kind().as_str()
            ),
            ..ControlPointError::default()
        }
    }
}

/// The control points an engine calls. Every call carries a [`ControlPointContext`] and
/// returns a typed answer, already validated against what is permitted.
///
/// An implementation writes one method, [`ControlPoints::answer`]; engines call the typed
/// three (`execute_task`, `route_gateway`, `evaluate_hook`), which it provides.
pub trait ControlPoints: Send + Sync {
    /// Answer the control point `element`, of kind `kind`, with an [`Answer`] of that kind.
    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>>;

    /// `execute_task`: fulfil one task.
    fn execute_task(
        &self,
        task_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<TaskOutcome, ControlPointError>> {
        let asked = self.answer(ControlPointKind::Task, task_id, ctx);
        let id = task_id.to_string();
        Box::pin(async move {
            match asked.await? {
                Answer::Task(outcome) => Ok(outcome),
                other => Err(other.mismatched(&id, ControlPointKind::Task)),
            }
        })
    }

    /// `route_gateway`: choose the outgoing flow(s) of a gateway.
    fn route_gateway(
        &self,
        gateway_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<GatewayDecision, ControlPointError>> {
        let asked = self.answer(ControlPointKind::Gateway, gateway_id, ctx);
        let id = gateway_id.to_string();
        Box::pin(async move {
            match asked.await? {
                Answer::Gateway(decision) => Ok(decision),
                other => Err(other.mismatched(&id, ControlPointKind::Gateway)),
            }
        })
    }

    /// `evaluate_hook`: decide what happens on a hooked sequence flow.
    fn evaluate_hook(
        &self,
        hook_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<HookDecision, ControlPointError>> {
        let asked = self.answer(ControlPointKind::Hook, hook_id, ctx);
        let id = hook_id.to_string();
        Box::pin(async move {
            match asked.await? {
                Answer::Hook(decision) => Ok(decision),
                other => Err(other.mismatched(&id, ControlPointKind::Hook)),
            }
        })
    }

    /// Whether a context may leave its model summary out (`model: None`) while the live
    /// topology is still the process registered under the context's process key, because
    /// the answering side restores that summary itself (as [`crate::mcp::BridgeServer`] does).
    /// Engines then skip building and sending it. By default every context carries it.
    fn restores_unchanged_model(&self) -> bool {
        false
    }

    /// A run goes on from its journal (`records`, before any control point is asked):
    /// restore what answering its control points needs that the engine does not carry
    /// (the harness's tool conversations left mid-way and delegations still going). Every
    /// engine calls it when it resumes a run, whoever hosts the run. By default nothing.
    fn resuming(&self, _records: &[crate::journal::Record]) {}
}
