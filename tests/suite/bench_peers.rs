//! The peer benchmark's models (bench/peers): a run writes the models of the shapes and
//! sizes it measures afresh and leaves every other model as an earlier run left it.

use std::path::Path;
use std::process::Command;

#[test]
fn a_run_rewrites_only_the_models_it_measures() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let models = work.path().join("models");
    // An earlier run's models: one of a shape this run measures (stale), one of another.
    let measured = models.join("spiff/linear-10.bpmn");
    let other = models.join("spiff/xor-100.bpmn");
    let other_app = models.join("cuga-flo/par-8/bench/config/model.bpmn");
    for path in [&measured, &other, &other_app] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "an earlier run's model").unwrap();
    }
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/peers");
    let script = r#"
import sys, types
sys.path.insert(0, sys.argv[1])
import bench
args = types.SimpleNamespace(work=sys.argv[2])
for kind in ("spiff", "cuga"):
    engine = types.SimpleNamespace(kind=kind)
    first = bench.model_file(args, engine, "linear", 10)
    assert bench.model_file(args, engine, "linear", 10) == first
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&bench)
        .arg(work.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&measured).unwrap();
    assert!(
        written.contains("<bpmn:definitions") || written.contains("definitions"),
        "{written}"
    );
    assert!(
        models
            .join("cuga-flo/linear-10/bench/config/model.bpmn")
            .is_file()
    );
    assert!(
        models
            .join("cuga-flo/linear-10/bench/config/bench_config.yaml")
            .is_file()
    );
    for path in [&other, &other_app] {
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            "an earlier run's model",
            "{}",
            path.display()
        );
    }
    // run.sh leaves the models folder to bench.py (it used to delete all of it).
    let run = std::fs::read_to_string(bench.join("run.sh")).unwrap();
    assert!(
        !run.lines().any(|l| !l.trim_start().starts_with('#')
            && l.contains("rm -rf")
            && l.contains("models")),
        "run.sh deletes the models"
    );
}
