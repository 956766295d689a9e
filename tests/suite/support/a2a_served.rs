//! A `cuga-flo serve --a2a 127.0.0.1:0` process for the tests that talk to it
//! (tests/suite/a2a_serve.rs, tests/suite/a2a_serve_flows.rs): started in a temporary folder, its
//! `listening` and `agent` lines read (a silent server fails the test rather than hang
//! it), JSON-RPC posted to an agent over plain HTTP/1.1; killed when dropped.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cuga_flo::journal::Event;
use cuga_flo::journal::store::{JOURNAL_FILE, read_journal, run_dir};
use serde_json::Value;

/// Longest wait for anything.
pub const LIMIT: Duration = Duration::from_secs(20);

pub struct A2aServed {
    pub child: Child,
    /// `http://HOST:PORT`, as the server printed it.
    pub url: String,
    /// Each agent's slug and URL, as the server printed them.
    pub agents: Vec<(String, String)>,
    /// The Prometheus endpoint's URL, when `--metrics` was given.
    pub metrics: Option<String>,
    pub dir: tempfile::TempDir,
    base: PathBuf,
}

impl A2aServed {
    /// `cuga-flo --color never <global> serve --a2a 127.0.0.1:0 --no-model --run-dir
    /// <base> <args>` with `env`, in a temporary folder of its own (its stderr in
    /// `stderr.log` there; `base` defaults to `runs-base` there); waits for its
    /// `listening` line and `agents` `agent` lines.
    pub fn start<G, A>(
        global: G,
        args: A,
        base: Option<&Path>,
        env: &[(&str, &str)],
        agents: usize,
    ) -> A2aServed
    where
        G: IntoIterator,
        G::Item: AsRef<OsStr>,
        A: IntoIterator,
        A::Item: AsRef<OsStr>,
    {
        let args: Vec<std::ffi::OsString> = args
            .into_iter()
            .map(|a| a.as_ref().to_os_string())
            .collect();
        let with_metrics = args.iter().any(|a| a == "--metrics");
        let dir = tempfile::tempdir().unwrap();
        let base = base.map_or_else(|| dir.path().join("runs-base"), Path::to_path_buf);
        let stderr = File::create(dir.path().join("stderr.log")).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
        command
            .args(["--color", "never"])
            .args(global)
            .args(["serve", "--a2a", "127.0.0.1:0", "--no-model", "--run-dir"])
            .arg(&base)
            .args(args)
            .current_dir(dir.path())
            // What it did is in the failure message of a test it fails.
            .env("CUGA_FLO_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let lines = first_lines(
            child.stdout.take().unwrap(),
            1 + agents + usize::from(with_metrics),
        );
        let metrics = (lines.iter())
            .find_map(|l| l.strip_prefix("metrics "))
            .map(str::to_string);
        let url = lines.first().and_then(|l| l.strip_prefix("listening "));
        let printed: Vec<(String, String)> = (lines.iter().skip(1))
            .filter_map(|l| l.strip_prefix("agent ")?.split_once(' '))
            .map(|(slug, url)| (slug.to_string(), url.to_string()))
            .collect();
        let Some(url) = url.filter(|_| printed.len() == agents) else {
            let _ = child.kill();
            let _ = child.wait();
            let err = std::fs::read_to_string(dir.path().join("stderr.log")).unwrap_or_default();
            panic!("no `listening` and {agents} `agent` lines but {lines:?}; stderr:\n{err}");
        };
        A2aServed {
            url: url.to_string(),
            agents: printed,
            metrics,
            child,
            dir,
            base,
        }
    }

    /// Where its runs are journalled.
    pub fn base(&self) -> PathBuf {
        self.base.clone()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }

    /// One JSON-RPC request to agent `slug`, with the `headers` lines (`Name: value`)
    /// besides its content type; the response body.
    pub fn post(&self, slug: &str, body: &str, headers: &[&str]) -> Value {
        let host = self.url.trim_start_matches("http://");
        let mut tcp = std::net::TcpStream::connect(host).unwrap();
        tcp.set_read_timeout(Some(LIMIT)).unwrap();
        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
        write!(
            tcp,
            "POST /{slug} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/a2a+json\r\n\
             {extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        if let Err(e) = tcp.read_to_string(&mut response) {
            panic!(
                "no response to {body} within {LIMIT:?} ({e}); read so far: {response:?}\nserver:\n{}",
                self.stderr()
            );
        }
        let (_, body) = response.split_once("\r\n\r\n").unwrap();
        serde_json::from_str(body).unwrap_or_else(|_| panic!("{response}"))
    }

    /// Run `run`'s journal once it has its `run_finished` (or as it is after [`LIMIT`]).
    pub fn journal(&self, run: &str) -> Vec<Event> {
        let path = run_dir(&self.base(), run).join(JOURNAL_FILE);
        let started = Instant::now();
        loop {
            // The journal of a cancelled run is closed right after the task is.
            let records = read_journal(&path).map(|j| j.records).unwrap_or_default();
            let events: Vec<Event> = records.into_iter().map(|r| r.event).collect();
            if events
                .iter()
                .any(|e| matches!(e, Event::RunFinished { .. }))
                || started.elapsed() > LIMIT
            {
                return events;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill it (SIGKILL: nothing of it runs after) and wait for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for A2aServed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The first `n` lines of a child's stdout, read on a thread (bounded wait); the rest is
/// drained there.
fn first_lines(stdout: std::process::ChildStdout, n: usize) -> Vec<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        for _ in 0..n {
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line.trim_end().to_string());
        }
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    (0..n).filter_map(|_| rx.recv_timeout(LIMIT).ok()).collect()
}
