//! Apps bound to a Flowable or Kogito server say how to run them: a missing password or
//! an unreachable server names the server (without credentials), how to start one, and
//! `--engine native`; a run that never started checks no scenario expectations. Nothing
//! listens on 127.0.0.1:1, so no server is started here.

use assert_cmd::Command;
use tempfile::TempDir;

fn cuga(run_dir: &std::path::Path) -> Command {
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_LLM_BASE_URL")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("start")
        .arg("--run-dir")
        .arg(run_dir)
        .write_stdin("");
    cmd
}

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A missing password and no server: the server that does not answer is said first,
/// then the password; how to start one fits a user of the binary (the Docker image, the
/// docs page) as well as a clone (the test script).
#[test]
fn a_missing_flowable_password_says_where_the_server_is_and_how_to_run_without_it() {
    let tmp = TempDir::new().unwrap();
    let out = cuga(tmp.path())
        .args(["loan_approval", "--scenario", "approve"])
        .args(["--engine-url", "http://127.0.0.1:1/flowable-rest/service"])
        .env_remove("FLOWABLE_PASSWORD")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "no Flowable server answers at http://127.0.0.1:1/flowable-rest/service (and",
        "`FLOWABLE_PASSWORD`, which is not set",
        "Flowable server at http://127.0.0.1:1/flowable-rest/service",
        "docs/engines.md: the `flowable/flowable-rest` Docker image",
        "tests/flowable/start-server.sh",
        "cuga-flo start loan_approval --engine native",
    ] {
        assert!(flat.contains(needle), "{needle}: {stderr}");
    }
    assert!(!stdout.contains("expectation"), "{stdout}");
}

#[test]
fn an_unreachable_kogito_service_checks_no_expectations_and_says_how_to_start_one() {
    let tmp = TempDir::new().unwrap();
    let out = cuga(tmp.path())
        .args(["loan_approval_kogito", "--scenario", "approve"])
        .args(["--engine-url", "http://user:s3cret@127.0.0.1:1"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "Kogito server at http://127.0.0.1:1",
        "cuga-flo kogito build loan_approval_kogito",
        "tests/kogito/start-service.sh loan_approval_kogito",
        "cuga-flo start loan_approval_kogito --engine native",
        "scenario `approve`: not checked, the run never started",
    ] {
        assert!(flat.contains(needle), "{needle}: {stdout}");
    }
    assert!(!stdout.contains("expectation"), "{stdout}");
    // The URL's credentials are shown nowhere (the failure names the URL without them).
    assert!(
        !stdout.contains("s3cret") && !stderr.contains("s3cret"),
        "{stdout}{stderr}"
    );
}

#[test]
fn an_unreachable_flowable_server_says_how_to_start_one() {
    let tmp = TempDir::new().unwrap();
    let out = cuga(tmp.path())
        .args(["loan_approval", "--scenario", "approve", "--json"])
        .args(["--engine-url", "http://127.0.0.1:1/flowable-rest/service"])
        .env("FLOWABLE_PASSWORD", "x")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    // JSON: the scenario is reported as never started, with no mismatches.
    let checked: serde_json::Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "scenario_checked")
        .unwrap();
    assert_eq!(checked["never_started"], true, "{checked}");
    assert_eq!(checked["mismatches"], serde_json::json!([]));

    let out = cuga(tmp.path())
        .args(["loan_approval", "--scenario", "approve"])
        .args(["--engine-url", "http://127.0.0.1:1/flowable-rest/service"])
        .env("FLOWABLE_PASSWORD", "x")
        .output()
        .unwrap();
    let (stdout, _) = text(&out);
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("cannot reach Flowable at http://127.0.0.1:1"),
        "{stdout}"
    );
    assert!(flat.contains("tests/flowable/start-server.sh"), "{stdout}");
    assert!(flat.contains("--engine native"), "{stdout}");
    assert!(!stdout.contains("expectation"), "{stdout}");
}
