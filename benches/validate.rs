//! Parse and validate timings: the largest BPMN file of the corpus, `validate --all` over
//! the repo's demo apps (in-process, and as a whole `cuga-flo` process), and generated
//! apps that show how `validate` scales (issue 12: every check O(n log n) or better):
//!
//! - `validate_app_{linear,xor,parallel}`: load and check an app whose model has 1k, 10k
//!   or 100k nodes in that shape, with a task entry per task, a gateway entry per split
//!   and a hook on every tenth flow (targets: 10k nodes under 50 ms, a 100k chain under 1 s);
//! - `validate_model_{linear,xor,parallel}`: `validate model.bpmn` on those models;
//! - `validate_app_variables`: a config declaring 40k or 240k variables, each written by
//!   one of 1,000 tasks (target: 240k under 2 s).
//!
//! Run with `cargo bench --bench validate` (`-- linear` for one group; `DIVAN_SAMPLE_COUNT`
//! to take fewer samples). The corpus is the copy in `tests/fixtures/bpmn-corpus`.

use std::path::{Path, PathBuf};

use cuga_flo::app::{load_app, registry};
use cuga_flo::bpmn;
use cuga_flo::check::{check_app, check_model};

#[path = "support/mod.rs"]
mod support;

use support::{Shape, generated_app};

/// Model sizes, in flow nodes.
const SIZES: &[usize] = &[1_000, 10_000, 100_000];

fn main() {
    divan::main();
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The largest well-formed file of the corpus.
fn largest_model() -> (PathBuf, Vec<u8>) {
    let path = root().join("tests/fixtures/bpmn-corpus/miwg-reference/C.8.0.bpmn");
    let bytes = std::fs::read(&path).expect("the BPMN corpus is in tests/fixtures");
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

/// Load and check the generated app at `config` as `validate` does; it must be clean.
fn validate_generated(bencher: divan::Bencher, config: &Path) {
    let app = registry::app_from_config(config);
    let diags = check_app(&load_app(&app));
    assert!(diags.is_empty(), "{diags:?}");
    bencher.bench(|| check_app(&load_app(divan::black_box(&app))));
}

fn validate_shape(bencher: divan::Bencher, shape: Shape, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let config = generated_app(dir.path(), shape, n, n / 10);
    validate_generated(bencher, &config);
}

/// Parse and check the model alone (`validate model.bpmn`).
fn validate_model_shape(bencher: divan::Bencher, shape: Shape, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let model = generated_app(dir.path(), shape, n, 1).with_file_name("model.bpmn");
    let bytes = std::fs::read(&model).unwrap();
    let check = || check_model(&bpmn::parse(&model, divan::black_box(&bytes)).unwrap());
    assert!(check().is_empty());
    bencher.bench(check);
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
fn validate_app_linear(bencher: divan::Bencher, n: usize) {
    validate_shape(bencher, Shape::Linear, n);
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
fn validate_app_xor(bencher: divan::Bencher, n: usize) {
    validate_shape(bencher, Shape::Xor, n);
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
fn validate_app_parallel(bencher: divan::Bencher, n: usize) {
    validate_shape(bencher, Shape::Parallel, n);
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
fn validate_model_linear(bencher: divan::Bencher, n: usize) {
    validate_model_shape(bencher, Shape::Linear, n);
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
fn validate_model_xor(bencher: divan::Bencher, n: usize) {
    validate_model_shape(bencher, Shape::Xor, n);
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
fn validate_model_parallel(bencher: divan::Bencher, n: usize) {
    validate_model_shape(bencher, Shape::Parallel, n);
}

/// A config declaring `n` variables, written by the tasks of a 1,000-task chain.
#[divan::bench(args = [40_000, 240_000], sample_count = 10, max_time = 10)]
fn validate_app_variables(bencher: divan::Bencher, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let config = generated_app(dir.path(), Shape::Linear, 1_000, n);
    validate_generated(bencher, &config);
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
