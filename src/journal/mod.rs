//! The journal of a run: events appended to a hash-chained file, committed in groups and
//! durable before their effects are visible ([`store`], [`chain`]), checked for tampering
//! ([`verify`]), exported ([`export`]), and the run's state as a fold over them
//! ([`state`]). Imports nothing of the crate but the shared vocabulary. See
//! docs/journal.md.

pub mod chain;
pub mod error;
pub mod event;
pub mod export;
pub mod layout;
pub mod mailbox;
pub mod otel;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod shared;
pub mod state;
pub mod store;
pub mod verify;

pub use chain::Anchor;
pub use event::{Event, Launch, Record};
pub use state::{FlowState, ModelUsage};
pub use store::{Durability, Journal, JournalError, JournalOptions, Reopened, Repair};
pub use verify::{Tampered, Tampering, VerifyReport, verify};

/// Where an engine sends what happens. The journal is one; tests use in-memory sinks.
pub trait EventSink: Send + Sync {
    /// Append `event`: it gets its sequence number (and, in a journal, its place in the
    /// hash chain) now, and is durable (as durable as the sink is) once committed: before
    /// `emit` returns for a strict journal, at the next [`EventSink::commit`] otherwise
    /// (`run_finished` commits by itself).
    fn emit(&self, event: Event) -> Result<Record, JournalError>;

    /// Make every record emitted so far durable (as durable as the sink is) and visible to
    /// its observers. Engines call it at the end of each step (before they wait for
    /// anything), so one step's records are written together: group commit. A sink that
    /// writes each record as it is emitted has nothing to do.
    fn commit(&self) -> Result<(), JournalError> {
        Ok(())
    }
}
