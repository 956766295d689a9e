//! Engine overhead, measured on generated processes with a reasoner that is never asked
//! (every task passes through, so the numbers are the engine's and the bridge's own):
//!
//! - `transitions`: a chain of N intermediate events — token moves only, no control point;
//! - `control_points`: a chain of N pass-through tasks — one `execute_task` each,
//!   called directly on the harness or through the in-process MCP bridge;
//! - each with events kept in memory, journalled without fsync (`Durability::Off`), or
//!   journalled with an fsync per event (`Durability::Strict`); benches/journal.rs
//!   compares the durability modes;
//! - `multi_instance_items`: one multi-instance task over n items, parallel and sequential
//!   (divide by n for the cost per instance).
//!
//! Divide a run's time by N for the cost per transition or per control point.
//! Run with `cargo bench --bench run`.

use std::path::Path;
use std::sync::Arc;

use cuga_flo::bridge::ControlPoints;
use cuga_flo::engine::WorkflowEngine;
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::journal::store::{Journal, MemorySink};
use cuga_flo::journal::{Anchor, Durability, EventSink, JournalOptions};
use cuga_flo::mcp::{BridgeServer, InProcessBridge, RegisteredFlow, Registry, RunProcessArgs};

const N: usize = 200;

#[path = "support/mod.rs"]
mod support;

use support::{chain, multi_instance, multi_instance_request, request};

fn main() {
    divan::main();
}

#[derive(Clone, Copy, Debug)]
enum Journalling {
    Memory,
    Flushed,
    Fsynced,
}

impl std::fmt::Display for Journalling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Journalling::Memory => "memory",
            Journalling::Flushed => "flushed",
            Journalling::Fsynced => "fsynced",
        })
    }
}

fn sink(kind: Journalling, dir: &Path, n: usize) -> Arc<dyn EventSink> {
    match kind {
        Journalling::Memory => Arc::new(MemorySink::new()),
        Journalling::Flushed => Arc::new(journal(dir, n, Durability::Off)),
        Journalling::Fsynced => Arc::new(journal(dir, n, Durability::Strict)),
    }
}

fn journal(dir: &Path, n: usize, durability: Durability) -> Journal {
    let options = JournalOptions {
        durability,
        anchor: Anchor::new(format!("run-{n}"), None),
    };
    Journal::create(&dir.join(format!("r{n}")), options).unwrap()
}

const JOURNALLING: [Journalling; 3] = [
    Journalling::Memory,
    Journalling::Flushed,
    Journalling::Fsynced,
];

/// Run the chain of `element`s on the native engine, calling the harness directly.
fn direct(bencher: divan::Bencher, journalling: Journalling, element: &str) {
    direct_n(bencher, journalling, element, N);
}

/// [`direct`] over a chain of `n`.
fn direct_n(bencher: divan::Bencher, journalling: Journalling, element: &str, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let agent = chain(dir.path(), element, n);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut run = 0;
    bencher.bench_local(|| {
        run += 1;
        let events = sink(journalling, dir.path(), run);
        rt.block_on(NativeEngine::new().run(request(&agent, run), agent.clone(), events))
            .unwrap()
    });
}

#[divan::bench(args = JOURNALLING, sample_count = 20)]
fn transitions_direct(bencher: divan::Bencher, journalling: Journalling) {
    direct(bencher, journalling, "intermediateThrowEvent");
}

#[divan::bench(args = JOURNALLING, sample_count = 20)]
fn control_points_direct(bencher: divan::Bencher, journalling: Journalling) {
    direct(bencher, journalling, "task");
}

/// The chain of tasks at 10, 1,000 and 10,000 nodes, journalled in memory: the cost per
/// control point must not grow with the run's length (divide by n).
#[divan::bench(args = [10, 1_000, 10_000], sample_count = 10)]
fn control_points_by_length(bencher: divan::Bencher, n: usize) {
    direct_n(bencher, Journalling::Memory, "task", n);
}

#[divan::bench(args = JOURNALLING, sample_count = 20)]
fn control_points_through_mcp(bencher: divan::Bencher, journalling: Journalling) {
    let dir = tempfile::tempdir().unwrap();
    let agent = chain(dir.path(), "task", N);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let registry = Arc::new(Registry::default());
    registry.register(RegisteredFlow {
        process_key: "bench_v1".into(),
        process: Arc::new(agent.process().unwrap().clone()),
        annotations: agent.annotations(),
        harness: agent.clone() as Arc<dyn ControlPoints>,
    });
    let bridge = rt
        .block_on(InProcessBridge::start(BridgeServer::new(
            registry.clone(),
            Arc::new(NativeEngine::new()),
            None,
        )))
        .unwrap();
    let client = bridge.client();
    let mut run = 0;
    bencher.bench_local(|| {
        run += 1;
        let run_id = format!("run-{run}");
        registry.attach_sink(&run_id, sink(journalling, dir.path(), run));
        let args = RunProcessArgs {
            process_key: "bench_v1".into(),
            run_id,
            variables: Default::default(),
            untrusted: None,
            bridge: None,
            adopt: None,
            lost_parks: false,
        };
        rt.block_on(client.run_process(&args)).unwrap()
    });
    rt.block_on(bridge.shutdown());
}

/// One multi-instance task over `n` items (pass-through instances, journalled in memory),
/// parallel and sequential: the cost per instance must not grow with `n`.
#[divan::bench(args = [(false, 100), (false, 1000), (false, 4000), (true, 100), (true, 1000), (true, 4000)], sample_count = 5)]
fn multi_instance_items(bencher: divan::Bencher, (sequential, n): (bool, usize)) {
    let dir = tempfile::tempdir().unwrap();
    let agent = multi_instance(dir.path(), sequential);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut run = 0;
    bencher.bench_local(|| {
        run += 1;
        let events: Arc<dyn EventSink> = Arc::new(MemorySink::new());
        let outcome = rt
            .block_on(NativeEngine::new().run(
                multi_instance_request(&agent, run, n),
                agent.clone(),
                events,
            ))
            .unwrap();
        assert_eq!(outcome.steps as usize, n + 2, "{outcome:?}");
        outcome
    });
}

/// `k` runs of the chain of tasks at once on a runtime with one worker per core, each
/// journalled in memory: when the runs use the cores, the time for `k` runs at once stays
/// near the time for one until `k` passes the number of cores (on 2 cores: k = 2 about as
/// fast as k = 1, k = 4 about twice as long).
#[divan::bench(args = [1, 2, 4], sample_count = 20)]
fn parallel_runs(bencher: divan::Bencher, k: usize) {
    let dir = tempfile::tempdir().unwrap();
    let agent = chain(dir.path(), "task", N);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut run = 0;
    bencher.bench_local(|| {
        let handles: Vec<_> = (0..k)
            .map(|_| {
                run += 1;
                let request = request(&agent, run);
                let agent = agent.clone();
                let events: Arc<dyn EventSink> = Arc::new(MemorySink::new());
                rt.spawn(async move { NativeEngine::new().run(request, agent, events).await })
            })
            .collect();
        rt.block_on(async {
            for h in handles {
                h.await.unwrap().unwrap();
            }
        })
    });
}
