//! A build without graph mode (`cargo test --no-default-features --test suite graph_off::`): an
//! app with a `graph:` block is a `validate` error ("built without graph mode") and does
//! not start; `graph export|import|query|validate` say the same; everything else (the
//! same app without its `graph:` block, `graph APP` drawing the flow) works.
#![cfg(not(feature = "graph"))]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

use crate::support::runs;

fn cuga(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(args)
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_graph_mode_app_is_a_validate_error_and_does_not_start() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("apps/sim_activation");
    copy_dir(&runs::app_dir("sim_activation"), &dir);
    let dir_s = dir.to_str().unwrap();
    // Without a `graph:` block the app validates and its scenario runs.
    let out = cuga(&["validate", dir_s]);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    let run_dir = tmp.path().join("runs");
    let out = runs::start_scenario(&dir, "escalated", &run_dir, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));

    let config = dir.join("config/sim_activation_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\ngraph:\n  store: embedded\n")).unwrap();
    let out = cuga(&["validate", dir_s, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", runs::show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("graph::unavailable"),
        "{}",
        runs::show(&out)
    );
    assert!(
        stdout.contains("built without graph mode"),
        "{}",
        runs::show(&out)
    );
    // The diagnostic points at the `graph:` block of the flow config.
    assert!(
        stdout.contains("sim_activation_config.yaml"),
        "{}",
        runs::show(&out)
    );
    let out = cuga(&["validate", dir_s]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("built without graph mode")
            || String::from_utf8_lossy(&out.stdout).contains("built without graph mode"),
        "{}",
        runs::show(&out)
    );

    let run_dir = tmp.path().join("runs-graph");
    let out = runs::start_scenario(&dir, "escalated", &run_dir, &[], &[]);
    assert_ne!(out.status.code(), Some(0), "{}", runs::show(&out));
    assert!(
        runs::show(&out).contains("built without graph mode"),
        "{}",
        runs::show(&out)
    );
    assert!(!run_dir.exists() || std::fs::read_dir(&run_dir).unwrap().next().is_none());
}

#[test]
fn graph_subcommands_say_they_are_not_built_and_drawing_still_works() {
    let app = runs::app_dir("sim_activation");
    let app = app.to_str().unwrap();
    for args in [
        vec!["graph", "export", app],
        vec!["graph", "import", "x.ttl", "--out", "nowhere"],
        vec!["graph", "query", app, "SELECT * WHERE { ?s ?p ?o }"],
        vec!["graph", "validate", app],
    ] {
        let out = cuga(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", runs::show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("`graph {}`", args[1]))
                && stderr.contains("built without graph mode"),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = cuga(&["graph", app, "--format", "ascii"]);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    assert!(!out.stdout.is_empty());
}
