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

/// A boxed future, for object-safe async traits.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The control points an engine calls. Every call carries a [`ControlPointContext`] and
/// returns a typed answer, already validated against what is permitted.
pub trait ControlPoints: Send + Sync {
    /// `execute_task`: fulfil one task.
    fn execute_task(
        &self,
        task_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<TaskOutcome, ControlPointError>>;
    /// `route_gateway`: choose the outgoing flow(s) of a gateway.
    fn route_gateway(
        &self,
        gateway_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<GatewayDecision, ControlPointError>>;
    /// `evaluate_hook`: decide what happens on a hooked sequence flow.
    fn evaluate_hook(
        &self,
        hook_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<HookDecision, ControlPointError>>;

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
