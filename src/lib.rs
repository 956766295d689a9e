//! cuga-flo: run governed agentic business processes.
//!
//! The structure of a process (a BPMN 2.0 diagram) is enforced deterministically; LLM
//! reasoning happens only at governed control points (tasks, gateways, hooks on sequence
//! flows). See `ARCHITECTURE.md` for the shape of the crate.

pub mod a2a;
pub mod app;
pub mod bpmn;
pub mod bridge;
pub mod check;
pub mod cli;
pub mod clock;
pub mod crash;
pub mod diag;
pub mod digest;
pub mod engine;
pub mod expr;
pub mod govern;
#[cfg(feature = "graph")]
pub mod graph;
#[cfg(not(feature = "graph"))]
#[path = "graph/off.rs"]
pub mod graph;
pub mod harness;
pub mod journal;
pub mod mcp;
pub mod reason;
pub mod run;
pub mod secret;
pub mod semantics;
pub mod serving;
pub mod source;
pub mod telemetry;
pub mod terminal;
pub mod tls;
pub mod tools;
pub mod view;
pub mod vocab;
pub mod web;
