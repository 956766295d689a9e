//! Parse and validate timings: the largest BPMN file of the corpus, and `validate --all`
//! over the repo's demo apps (in-process, and as a whole `cuga-flo` process).
//!
//! Run with `cargo bench --bench validate`. The corpus lives in `../shared/fixtures`.

use std::path::{Path, PathBuf};

use cuga_flo::app::{load_app, registry};
use cuga_flo::bpmn;
use cuga_flo::check::{check_app, check_model};

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
