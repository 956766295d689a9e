//! The application layer: what every host of runs (the terminal's `start` and `runs`, the
//! worker, `serve` over MCP, `serve --a2a`, `test`, child runs) shares, below the CLI,
//! which only parses arguments and prints.
//!
//! - [`chain`]: the reasoner chain an app's harness asks (policy rules, answers given in
//!   advance, a model, a person, park), the journal sink that labels a run, and the
//!   answers given with `runs answer` that a resumed run applies;
//! - [`lookup`]: finding a journalled run by a fragment of its id, its records, its app;
//! - [`plan`]: a run planned once ([`plan::RunSpec`] → [`plan::RunPlan`]): the checked
//!   app, its engine, its reasoner chain, its initial variables typed against the app;
//! - [`launch`]: a planned run launched, journalled and shown, until it ends or parks;
//! - [`describe`]: what a person sees before a run: an app's control points, who
//!   decides there, its guarantees;
//! - [`ready`]: whether an app can run here now (its engine's server, its tools);
//! - [`scenario`]: a scenario's run and its verdict (`start --scenario`, `test`);
//! - [`children`]: the child runs of call activities, whichever host runs the parent;
//! - [`answer`]: a person's answer to a parked run's open question, checked and
//!   journalled (`runs answer`);
//! - [`pending`]: the open questions of the waiting runs and what else they wait for
//!   (`runs pending`, the web console's tasklist);
//! - [`parked`]: which parked runs can go on, reopening one, taking each due run for
//!   exactly one process (the worker's), deadlines answered by their `on_timeout`;
//! - [`host`]: the run host of a server: the registered flow of a loaded app and the
//!   `register_flow` loader, the journals of the runs its clients start,
//!   parked runs held until they can go on and resumed in-process, runs left parked by
//!   a server now gone taken over;
//! - [`served`]: what a server does for the people it serves (the web console): start a
//!   run of a served app, answer a waiting run's question, cancel a run;
//! - [`resume`]: a parked run's continuation planned from its journal;
//! - [`replay`]: what tells a replayed run from the original (decisions, drift);
//! - [`fleet`]: a worker fleet on Flowable: every instance of the apps' processes,
//!   whoever started it, found, taken over or resumed by exactly one worker;
//! - [`cancel`]: cancelling a run, its remote tasks and its children (`runs cancel`, a
//!   replay of a cancelled run, a served run its A2A caller cancels).

pub mod agent;
pub mod answer;
pub mod cancel;
pub mod chain;
pub mod children;
pub mod describe;
pub mod fleet;
pub mod host;
pub mod hosting;
pub mod launch;
pub mod listing;
pub mod lookup;
pub mod parked;
pub mod pending;
pub mod plan;
pub mod ready;
pub mod replay;
pub mod resume;
pub mod scenario;
pub mod served;
pub mod store;
pub mod suite;
pub mod watch;

pub use crate::diag::Help;
