//! Parse and validate timings: the largest BPMN file of the corpus, and `validate --all`
//! over the repo's demo apps (in-process, and as a whole `cuga-flo` process).
//!
//! Run with `cargo bench --bench validate`. The corpus lives in `../shared/fixtures`.

use std::path::{Path, PathBuf};

use cuga_flo::app::{load_app, registry};
use cuga_flo::bpmn;
use cuga_flo::check::{check_app, check_model};

#[path = "support/mod.rs"]
mod support;

fn main() {
    divan::main();
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The largest well-formed file of the corpus.
fn largest_model() -> (PathBuf, Vec<u8>) {
    let path = root().join("../shared/fixtures/bpmn-corpus/miwg-reference/C.8.0.bpmn");
    let bytes = std::fs::read(&path).expect("the BPMN corpus is in ../shared/fixtures");
    (path, bytes)
}

#[divan::bench]
fn parse_largest_corpus_file(bencher: divan::Bencher) {
    let (path, bytes) = largest_model();
    bencher
        .counter(divan::counter::BytesCount::new(bytes.len()))
        .bench(|| bpmn::parse(&path, divan::black_box(&bytes)).unwrap());
}

#[divan::bench]
fn parse_and_check_largest_corpus_file(bencher: divan::Bencher) {
    let (path, bytes) = largest_model();
    bencher.bench(|| {
        let doc = bpmn::parse(&path, divan::black_box(&bytes)).unwrap();
        check_model(&doc)
    });
}

#[divan::bench]
fn validate_all_demo_apps_in_process() {
    let apps = registry::discover(&root().join("applications")).unwrap();
    for app in &apps {
        let diags = check_app(&load_app(app));
        assert!(diags.is_empty());
    }
}

#[divan::bench(sample_count = 20)]
fn validate_all_demo_apps_as_a_process() {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(["validate", "--all", "--quiet"])
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Proving the guarantees of the largest demo app (incident_response: six hooks between
/// them permitted every action, four guarantees).
#[divan::bench]
fn prove_guarantees_of_the_largest_demo_app(bencher: divan::Bencher) {
    let app = load_app(&registry::app_at(
        &root().join("applications/incident_response"),
    ));
    let (config, process) = (app.config.as_ref().unwrap(), app.process().unwrap());
    bencher.bench(|| cuga_flo::govern::prove(config, divan::black_box(process)));
}

/// Proving two guarantees of a generated model of about 1,000 nodes with 10 reasoned
/// hooks (and a static swap).
#[divan::bench]
fn prove_guarantees_of_1000_nodes_and_10_hooks(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let app = support::guarded(dir.path(), 198, 10);
    let (config, process) = (app.config.as_ref().unwrap(), app.process().unwrap());
    bencher.bench(|| cuga_flo::govern::prove(config, divan::black_box(process)));
}
