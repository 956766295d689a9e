//! What the interop tests share: the venv with the official MCP SDK (set up once per test
//! binary, cached across runs), the pinned npm packages of the JavaScript checks, children
//! run to their end with a timeout, demo scenarios written as files for `serve --answers`
//! and the checkers, tokens.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

/// Creating the venv from nothing (download and install) may take this long.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(900);

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn interop_dir() -> PathBuf {
    root().join("tests/interop")
}

pub fn app_dir(name: &str) -> PathBuf {
    root().join("applications").join(name)
}

/// A child run to its end (or killed at its timeout), with what it printed.
pub struct Check {
    child: Child,
    started: Instant,
    stdout: Option<thread::JoinHandle<String>>,
    stderr: Option<thread::JoinHandle<String>>,
}

pub struct Finished {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Check {
    pub fn spawn(cmd: &mut Command) -> Result<Check, String> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        let drain = |mut pipe: Box<dyn Read + Send>| {
            thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            })
        };
        let stdout = drain(Box::new(child.stdout.take().unwrap()));
        let stderr = drain(Box::new(child.stderr.take().unwrap()));
        Ok(Check {
            child,
            started: Instant::now(),
            stdout: Some(stdout),
            stderr: Some(stderr),
        })
    }

    pub fn wait(mut self, timeout: Duration) -> Finished {
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if self.started.elapsed() >= timeout => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break None;
                }
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("cannot wait for a child: {e}"),
            }
        };
        Finished {
            status,
            stdout: self
                .stdout
                .take()
                .and_then(|h| h.join().ok())
                .unwrap_or_default(),
            stderr: self
                .stderr
                .take()
                .and_then(|h| h.join().ok())
                .unwrap_or_default(),
            elapsed: self.started.elapsed(),
        }
    }
}

impl Drop for Check {
    fn drop(&mut self) {
        // Still running only when `wait` was never reached (a panic in between).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Finished {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    pub fn show(&self, what: &str) -> String {
        let status = match self.status {
            Some(s) => format!("{s}"),
            None => format!("killed after {:.0?} (timeout)", self.elapsed),
        };
        format!(
            "{what}: {status}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout, self.stderr
        )
    }
}

/// Run `cmd` to its end, killing it after `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> Result<Finished, String> {
    Ok(Check::spawn(cmd)?.wait(timeout))
}

/// The venv's python, set up once per test binary (and cached across runs).
pub fn python() -> PathBuf {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| setup_venv(&[]))
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The python of the venv with pm4py (tests/interop/requirements-pm4py.txt), set up once
/// per test binary and cached across runs as `<cache>/venv-pm4py-<hash>`.
pub fn pm4py_python() -> PathBuf {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let requirements = interop_dir().join("requirements-pm4py.txt");
            setup_venv(&[requirements.to_str().unwrap(), "venv-pm4py", "pm4py"])
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Run setup_venv.py with `args` (none: the MCP SDK's venv; else `REQUIREMENTS NAME
/// MODULE`).
fn setup_venv(args: &[&str]) -> Result<PathBuf, String> {
    let python3 = std::env::var("PYTHON3").unwrap_or_else(|_| "python3".into());
    let help = "these tests need Python 3.10+ with the venv module and pip \
                (Debian: apt-get install python3 python3-venv python3-pip), and PyPI the \
                first time (CI has them)";
    let out = run(
        Command::new(&python3)
            .arg(interop_dir().join("setup_venv.py"))
            .args(args),
        SETUP_TIMEOUT,
    )
    .map_err(|e| format!("{e}\n{help}"))?;
    if !out.success() {
        return Err(format!("{}\n{help}", out.show("setup_venv.py")));
    }
    if !out.stderr.trim().is_empty() {
        eprintln!("{}", out.stderr.trim());
    }
    let path = PathBuf::from(out.stdout.trim());
    if !path.is_file() {
        return Err(format!(
            "setup_venv.py printed `{}`, which is not a file",
            path.display()
        ));
    }
    Ok(path)
}

/// Scenario `name` of demo app `app` as two JSON files in `dir`: the answers for `serve
/// --answers`, and the inputs and expectations for the Python checkers' `--scenario`.
pub fn scenario_files(dir: &Path, app: &str, name: &str) -> (PathBuf, PathBuf) {
    let s = cuga_flo::app::scenario::load(&app_dir(app), name).unwrap_or_else(|e| panic!("{e}"));
    let expect = s.expect.as_ref().expect("the scenario has an `expect:`");
    std::fs::create_dir_all(dir).unwrap();
    let answers = dir.join("answers.json");
    let scenario = dir.join("scenario.json");
    std::fs::write(&answers, json!({ "answers": s.answers }).to_string()).unwrap();
    let doc = json!({
        "name": format!("{app}/{name}"),
        "inputs": s.inputs,
        "expect": {
            "status": expect.status,
            "path": expect.path,
            "variables": expect.variables,
        },
    });
    std::fs::write(&scenario, doc.to_string()).unwrap();
    (answers, scenario)
}

/// A token unique to this test run, starting with `prefix` (no secrets involved: the
/// servers are on loopback).
pub fn token(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{prefix}-{}-{nanos:x}", std::process::id())
}

/// The python of the venv with pyoxigraph and rdflib (tests/interop/requirements-rdf.txt),
/// set up once per test binary and cached across runs as `<cache>/venv-rdf-<hash>`.
pub fn rdf_python() -> PathBuf {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let requirements = interop_dir().join("requirements-rdf.txt");
            setup_venv(&[requirements.to_str().unwrap(), "venv-rdf", "pyoxigraph"])
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The python of the venv with pyshacl, the SHACL oracle (tests/interop/requirements-shacl.txt),
/// set up once per test binary and cached across runs as `<cache>/venv-shacl-<hash>`.
pub fn shacl_python() -> PathBuf {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let requirements = interop_dir().join("requirements-shacl.txt");
            setup_venv(&[requirements.to_str().unwrap(), "venv-shacl", "pyshacl"])
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The python of the venv with the official A2A SDK (tests/interop/requirements-a2a.txt),
/// set up once per test binary and cached across runs as `<cache>/venv-a2a-<hash>`.
pub fn a2a_python() -> PathBuf {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let requirements = interop_dir().join("requirements-a2a.txt");
            setup_venv(&[requirements.to_str().unwrap(), "venv-a2a", "a2a-sdk"])
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `${CUGA_FLO_CACHE:-~/.cache/cuga-flo}/<folder>-<hash>/` with the npm packages pinned in
/// `tests/interop/<folder>/package-lock.json` installed (`npm ci`, once; keyed on the lock
/// file's content, so a new pin installs afresh). `probe` is a file the install must have
/// (e.g. `node_modules/@a2a-js/sdk/package.json`). A check script run with `node` must be
/// copied into the returned folder: ES modules resolve packages from the script's folder.
pub fn npm_packages(folder: &str, probe: &str) -> PathBuf {
    let pinned = interop_dir().join(folder);
    let lock = std::fs::read(pinned.join("package-lock.json")).unwrap();
    // FNV-1a: stable across runs and toolchains.
    let hash = lock.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    // Where the Python venvs live too (tests/interop/setup_venv.py).
    let cache = std::env::var_os("CUGA_FLO_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/cuga-flo")))
        .expect("HOME is set");
    let dir = cache.join(format!("{folder}-{hash:016x}"));
    if dir.join(probe).exists() {
        return dir;
    }
    // Installed beside, then moved in place: a half-done install is never used.
    std::fs::create_dir_all(&cache).unwrap();
    let work = tempfile::tempdir_in(&cache).unwrap();
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(pinned.join(file), work.path().join(file)).unwrap();
    }
    let done = Check::spawn(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
            .current_dir(work.path()),
    )
    .unwrap_or_else(|e| panic!("{e} (the JavaScript interop checks need Node.js 20+ and npm)"))
    .wait(Duration::from_secs(600));
    assert!(
        done.success(),
        "npm ci failed:\n{}\n{}",
        done.stdout,
        done.stderr
    );
    let _ = std::fs::rename(work.keep(), &dir);
    assert!(dir.join(probe).exists(), "npm ci installed no {probe}");
    dir
}
