//! The native engine: an in-process BPMN token engine on tokio.
//!
//! # Tokens and the live topology
//! Tokens move over a **live topology**, a copy of the [`Process`](crate::bpmn::Process)'s
//! nodes and flows taken at run start, which hook actions may change for the rest of the
//! run. One coordinator owns the run's state and moves tokens; every control-point call
//! (`execute_task`, `route_gateway`, `evaluate_hook`) that does not answer at once runs as
//! its own tokio task, so the branches of a parallel split run concurrently and their
//! calls may overlap. Answers are applied in the order they arrive (an answer given at
//! once arrives when the call is made).
//!
//! Every node entry counts one step. Entering a node beyond `annotations.step_budget`
//! (0: [`DEFAULT_STEP_BUDGET`](crate::engine::DEFAULT_STEP_BUDGET)) ends the run `Failed`
//! with a message naming the budget and the node.
//!
//! # Events
//! Every event is emitted before its effect is visible: `RunStarted` (engine `native`,
//! reasoner `""`), `FlowTaken` when a token traverses a flow (after its hook, if any,
//! decided to go along it), `NodeEntered`, then what the node does (`TaskFinished`,
//! `GatewayRouted`, ...), and exactly one `RunFinished`. When an event cannot be written
//! the run stops and [`EngineError::Journal`](crate::engine::EngineError::Journal) is
//! returned.
//!
//! # Nodes
//! - **Start**: the run starts at the process-level none start events (every
//!   process-level start event when there is no none start event; no start event at all:
//!   the run fails). Variables are the request's.
//! - **Task** (any kind), **call activity**, **inserted task**: `execute_task`. Completed
//!   (or skipped by the harness): its variables are merged into the process variables,
//!   `TaskFinished`, and the token leaves on every outgoing flow (one: a sequence;
//!   several: an implicit parallel split; none: the token ends). Failed, or the call
//!   errs: `TaskFinished` with status `failed` and its error code, and the task raises
//!   that BPMN error (see **Errors and escalations**).
//! - **Call activities** that name a process (`calledElement`, Zeebe's
//!   `zeebe:calledElement`) run it as a child run with its own id and journal
//!   ([`call`]): the `in` mappings give its variables, the `out` mappings take its
//!   results back; a failed child raises a BPMN error on the call activity; a parked
//!   child parks the run (`run_waiting`, reason `child run <id>`).
//! - **Event-based gateways** whose outgoing flows all lead to message, signal or timer
//!   catch events or receive tasks arm them all; the first triggered wins ([`messages`]).
//!   Other event-based gateways are asked like exclusive ones (below).
//! - **Exclusive, inclusive, event-based (and complex) gateways** with two or more
//!   outgoing flows ask `route_gateway`, offering the outgoing flows (condition: the BPMN
//!   flow's non-empty condition body; `is_default` from the gateway's default flow). The
//!   answer must name outgoing flows, each once: exactly one for exclusive and
//!   event-based gateways, at least one otherwise; else the run fails. Then
//!   `GatewayRouted`, and a token along each chosen flow. With one outgoing flow the
//!   gateway passes the token on without asking. A complex gateway behaves like an
//!   inclusive one.
//! - **Parallel gateway**: a split sends a token along every outgoing flow.
//! - **Joins** (parallel, inclusive or complex gateway with two or more incoming flows):
//!   a token waits at the join until every incoming flow has a token or can no longer be
//!   reached by any live token of the same scope (reachability follows the live flows
//!   forward, ignoring conditions). Then the join fires once: one token enters it and
//!   goes on. For a parallel join this is the **dead-branch release** (a hook skipped,
//!   removed or terminated a branch, or a branch ended elsewhere); it is logged with
//!   `tracing::debug`. Tokens arriving again on a flow already satisfied wait for the
//!   next activation (loops). A token that jumps onto a join (`skip_to`) waits there like
//!   one that arrived along a flow. An exclusive or event-based gateway with several
//!   incoming flows merges: it passes each token on.
//! - **Embedded sub-process** and transaction: entering one starts a token at each of its
//!   none start events (else at each child nothing flows into). When no token is left
//!   inside, the sub-process completes and its token leaves on its outgoing flows.
//! - **Multi-instance** tasks, call activities and sub-processes ([`multi`]): one instance
//!   per item of a collection (or per count of a cardinality), each a token entering the
//!   activity with variables of its own, all at once or one after the other; a completion
//!   condition may end the activity early; the outputs are collected into a list.
//! - **Timers** (intermediate catch and boundary, interrupting or not) wait
//!   ([`timers`]). **Messages and signals** (intermediate catch events, receive tasks,
//!   boundary events) wait for a delivery or a throw within the run ([`messages`]); a
//!   message or signal throw or end event delivers to the run's own catches and goes on.
//!   A **link throw** event continues at the link catch event of the same
//!   name in the same scope (no such catch: the run fails). An **escalation** throw event
//!   throws its escalation ([`throws`]) and goes on.
//! - **Event sub-processes** start when their trigger occurs inside their scope
//!   ([`event_subprocess`]).
//! - **End event**: the token ends. A **terminate** end event at process level ends the
//!   run `Terminated` ("terminate end event <id>") and discards every token; inside a
//!   sub-process it ends only that instance's tokens, and the sub-process completes. An
//!   **error** or **escalation** end event throws its error or escalation ([`throws`]).
//! - **Errors and escalations** ([`throws`]): a failed task raises a BPMN error (the code
//!   its answer names, else why it failed); the innermost event sub-process or error
//!   boundary event that catches the code (or catches all) takes it; a boundary takes
//!   the token to its path and cancels its activity; nothing catching it, the run fails naming the code. Escalations are caught
//!   likewise, non-interrupting boundaries starting a token while the activity goes on;
//!   an uncaught escalation passes.
//! - **Unsupported** elements ([`crate::semantics::support`]: loop activities,
//!   multi-instance activities that name no collection or cardinality, ad-hoc
//!   sub-processes, event sub-processes without a supported trigger, conditional catch
//!   and boundary events, compensation): a process holding one fails at once, before any node is
//!   entered (`validate` and `start` refuse such processes).
//!
//! The run ends when no token is left: `Completed`, unless it was terminated or failed.
//! Tokens left waiting at a join that can never fire, with nothing moving, fail the run
//! with a message naming the join. Once a run has ended, control-point calls still in
//! flight are abandoned (aborted) and nothing moves.
//!
//! # Hooks
//! A flow is hooked when `annotations.hooks` maps its id to a hook id. Before a token
//! traverses a hooked flow F (S → T), `evaluate_hook` is asked, with the edge, the nodes
//! entered so far (`executed`) and the hook id as the element. A hook on a flow out of a
//! start event is evaluated before anything else happens; a hook on a branch of a split
//! concerns that branch only. The harness has applied the permissions already (a denied
//! action arrives as `continue` with `denied` set). `fail_run` fails the run with the
//! decision's message after the `HookEvaluated` record (which reports the action as
//! answered); a hook that cannot be evaluated fails the run. Otherwise the action is
//! checked against the live topology; an action that cannot apply is replaced by
//! `continue`, the reason recorded in `HookEvaluated.rejected`, and its `state_updates`
//! dropped (a refused answer changes nothing, as a denial by the harness). An applied
//! action's `state_updates` are merged into the variables (`VariablesSet`, source
//! `hook <id>`, right after the `HookEvaluated` record) before anything moves. Exactly
//! one `HookEvaluated` per evaluation, then `TopologyChanged` for the actions that change
//! the topology, then the token moves:
//! - `continue`: along F to T.
//! - `skip_node`: T must be an activity not entered yet and holding no token; the token
//!   takes F, T is entered and recorded as skipped (`TaskFinished`, status `skipped`,
//!   decided by the hook's decider, no control-point call), and the token leaves T.
//! - `skip_to X`: X must exist, be in T's scope, not have been entered (no backwards
//!   jumps) and not be a start event, boundary event or event sub-process; the token goes
//!   straight to X (no `FlowTaken` for F), which runs as usual (an end event ends the
//!   token; a terminate end event terminates).
//! - `swap_nodes (A, B)`: two distinct activities of one scope, neither entered nor
//!   holding a token, exchange their places in every flow's ends (adjacent ones too: A → B
//!   becomes B → A); the token then takes F. The swap lasts for the rest of the run.
//! - `terminate`: the run ends `Terminated` with the decision's message (default
//!   "terminated by hook <id>"); every other token is discarded.
//! - `remove_node X`: X must be an activity not entered, holding no token, with exactly
//!   one outgoing flow X → Y (Y ≠ X). Every flow into X now leads to Y (keeping its id,
//!   hook and condition); X, its outgoing flow, anything nested in it or attached to it
//!   disappear. The token then takes F.
//! - `add_node N`: N's id must be new (and so must the flow id `<F>__then__<N>`); task N
//!   (name: N's name, else its id) goes on F, which now leads to N, and the new flow
//!   `<F>__then__<N>` leads from N to T. The token takes F into N, which runs as a task
//!   (`execute_task` with `instruction` = N's instruction); F's hook is not evaluated
//!   again for this traversal, and the new flow has no hook.
//!
//! # Contexts
//! Every call carries the run id, the process key, the element (for hooks: the hook id),
//! its name, a snapshot of the variables, the history (node ids entered, in order) and a
//! summary of the live topology; inserted tasks carry their instruction, gateways their
//! outgoing flows, hooks the edge and the executed nodes. Snapshots are shared, not
//! copied per call: the variables and the history are copied only when the run changes
//! them while a call still holds them, and the summary is built once per change of the
//! topology. When the control points restore the summary themselves
//! ([`ControlPoints::restores_unchanged_model`]), it is left out until a hook changes the
//! topology.
//!
//! # Modules
//! [`topology`](crate::semantics::topology) the live graph; [`tokens`] tokens and sub-process instances; [`run`] the
//! coordinator; [`nodes`] token movement and node kinds; [`joins`] joins and dead-branch
//! release; [`calls`] task and gateway calls; [`hooks`] hook calls (checked and applied
//! by [`adapt`](super::adapt)); [`context`] control-point contexts; [`multi`]
//! multi-instance activities.

mod call;
mod calls;
mod context;
mod event_subprocess;
mod hooks;
mod joins;
pub(crate) mod messages;
pub(crate) mod multi;
mod nodes;
pub(crate) mod replay;
mod run;
mod throws;
mod timers;
mod tokens;

/// How long a run waits in-process for a timer before it parks (`max_wait_secs`).
pub use run::DEFAULT_WAIT_LIMIT_SECS;

use std::sync::Arc;

use super::{EngineError, RunOutcome, RunRequest, WorkflowEngine};
use crate::bridge::{BoxFuture, ControlPoints};
use crate::journal::EventSink;

/// The in-process engine (see the module documentation for its semantics).
#[derive(Debug, Default, Clone, Copy)]
pub struct NativeEngine;

impl NativeEngine {
    pub fn new() -> Self {
        NativeEngine
    }
}

impl WorkflowEngine for NativeEngine {
    fn name(&self) -> &'static str {
        "native"
    }

    fn run(
        &self,
        request: RunRequest,
        control_points: Arc<dyn ControlPoints>,
        events: Arc<dyn EventSink>,
    ) -> BoxFuture<'static, Result<RunOutcome, EngineError>> {
        Box::pin(run::Run::new(request, control_points, events).execute())
    }
}
