//! The journal's durability modes on the real disk (a folder under the target directory,
//! not a tmpfs):
//!
//! - `events`: 1,000 events emitted and committed every 3 events (a task's step: entered,
//!   finished, flow taken) or every 100, into a `Strict` journal (an fsync per event) or a
//!   `Batch` one (an fsync per commit); the throughput is durable events per second;
//! - `linear_run`: a 1,000-task linear process on the native engine, the harness called
//!   directly (its pass-through tasks answer without the engine waiting, so a `Batch` run
//!   commits about once), journalled `Strict` or `Batch`; the throughput is nodes per
//!   second (its inverse the time per node);
//! - `linear_run_through_mcp`: the same through the in-process MCP bridge, where the engine
//!   waits for every task (so a `Batch` run commits once per task, `Strict` fsyncs three
//!   times).
//!
//! Run with `cargo bench --bench journal`; with `CUGA_FLO_STORE=postgres://…` (a database
//! `cuga-flo store migrate` prepared), the same journals are kept in PostgreSQL: each
//! commit is one transaction there before it reaches the run folder (docs/operations.md,
//! "Running at scale"; bench/store/run.py starts a throwaway server and runs both).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cuga_flo::bridge::ControlPoints;
use cuga_flo::engine::WorkflowEngine;
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::journal::{Anchor, Durability, Event, EventSink, Journal, JournalOptions};
use cuga_flo::mcp::{BridgeServer, InProcessBridge, RegisteredFlow, Registry, RunProcessArgs};
use divan::counter::ItemsCount;

const EVENTS: usize = 1_000;
const TASKS: usize = 1_000;
const MODES: [Durability; 2] = [Durability::Strict, Durability::Batch];

#[path = "support/mod.rs"]
mod support;

use support::{chain, request};

fn main() {
    if let Ok(url) = std::env::var("CUGA_FLO_STORE") {
        let url = cuga_flo::run::store::StoreUrl::parse(&url).expect("CUGA_FLO_STORE");
        cuga_flo::run::store::mount(&url).expect("the run store opens");
    }
    divan::main();
}

/// A fresh folder on the disk the target directory is on.
fn scratch() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-journal");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

static RUN: AtomicUsize = AtomicUsize::new(0);

fn journal(dir: &Path, durability: Durability) -> Journal {
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    let options = JournalOptions {
        durability,
        anchor: Anchor::new(format!("run-{n}"), None),
    };
    Journal::create(&dir.join(format!("r{n}")), options).unwrap()
}

fn event(i: usize) -> Event {
    Event::NodeEntered {
        node: format!("task_{i}"),
        kind: "serviceTask".into(),
        name: Some(format!("Task number {i}")),
        token: 1,
        instance: None,
    }
}

fn emit_and_commit(bencher: divan::Bencher, durability: Durability, step: usize) {
    let dir = scratch();
    bencher
        .counter(ItemsCount::new(EVENTS))
        .with_inputs(|| journal(dir.path(), durability))
        .bench_local_values(|journal| {
            for i in 0..EVENTS {
                journal.emit(event(i)).unwrap();
                if (i + 1) % step == 0 {
                    journal.commit().unwrap();
                }
            }
            journal.commit().unwrap();
            journal
        });
}

#[divan::bench(args = MODES, sample_count = 5, sample_size = 1)]
fn events_committed_every_3(bencher: divan::Bencher, durability: Durability) {
    emit_and_commit(bencher, durability, 3);
}

#[divan::bench(args = MODES, sample_count = 5, sample_size = 1)]
fn events_committed_every_100(bencher: divan::Bencher, durability: Durability) {
    emit_and_commit(bencher, durability, 100);
}

#[divan::bench(args = MODES, sample_count = 5, sample_size = 1)]
fn linear_run(bencher: divan::Bencher, durability: Durability) {
    let dir = scratch();
    let agent = chain(dir.path(), "task", TASKS);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut run = 0;
    bencher
        .counter(ItemsCount::new(TASKS + 2))
        .with_inputs(|| Arc::new(journal(dir.path(), durability)))
        .bench_local_values(|sink| {
            run += 1;
            let request = request(&agent, run);
            let events: Arc<dyn EventSink> = sink.clone();
            rt.block_on(NativeEngine::new().run(request, agent.clone(), events))
                .unwrap();
            sink
        });
}

#[divan::bench(args = MODES, sample_count = 5, sample_size = 1)]
fn linear_run_through_mcp(bencher: divan::Bencher, durability: Durability) {
    let dir = scratch();
    let agent = chain(dir.path(), "task", TASKS);
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
    bencher
        .counter(ItemsCount::new(TASKS + 2))
        .with_inputs(|| Arc::new(journal(dir.path(), durability)))
        .bench_local_values(|sink| {
            run += 1;
            let run_id = format!("run-{run}");
            let events: Arc<dyn EventSink> = sink.clone();
            registry.attach_sink(&run_id, events);
            let args = RunProcessArgs {
                process_key: "bench_v1".into(),
                run_id,
                variables: Default::default(),
                bridge: None,
                adopt: None,
                lost_parks: false,
                untrusted: None,
            };
            rt.block_on(client.run_process(&args)).unwrap();
            sink
        });
    rt.block_on(bridge.shutdown());
}
