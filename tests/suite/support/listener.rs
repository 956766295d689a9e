//! A child process that serves MCP over HTTP and announces itself with one stdout line,
//! `listening URL` (`cuga-flo serve --http`, the Python engine): started, waited for,
//! its stderr kept for failure messages, killed when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// How long a child may take to print its `listening` line (the Python SDK alone takes
/// about 2 s to import on a busy machine).
pub const LISTEN_TIMEOUT: Duration = Duration::from_secs(60);

/// Collect a pipe's text as it comes, on a thread.
pub fn collect(pipe: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = text.clone();
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            let mut s = sink.lock().unwrap();
            s.push_str(&line);
            s.push('\n');
        }
    });
    text
}

/// A child that serves MCP over HTTP (`cuga-flo serve` or `engine.py`) and announces itself
/// with `listening URL` on stdout. Killed when dropped.
pub struct Listener {
    what: &'static str,
    pub child: Child,
    pub url: String,
    stderr: Arc<Mutex<String>>,
}

impl Listener {
    pub fn start(what: &'static str, cmd: &mut Command) -> Listener {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {what} ({cmd:?}): {e}"));
        let stderr = collect(child.stderr.take().unwrap());
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        thread::spawn(move || {
            // After the first line nobody listens: keep draining so the child never blocks.
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut listener = Listener {
            what,
            child,
            url: String::new(),
            stderr,
        };
        match rx.recv_timeout(LISTEN_TIMEOUT) {
            Ok(line) => {
                let url = line.strip_prefix("listening ").unwrap_or_else(|| {
                    panic!(
                        "{what}'s first stdout line is not `listening URL`: {line:?}\n{}",
                        listener.show_stderr()
                    )
                });
                assert!(
                    url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
                    "{what}: unexpected endpoint {url:?}"
                );
                listener.url = url.to_string();
            }
            Err(e) => {
                let status = listener.child.try_wait().ok().flatten();
                panic!(
                    "{what} printed no `listening` line within {LISTEN_TIMEOUT:?} ({e}; exit \
                     status: {status:?})\n{}",
                    listener.show_stderr()
                );
            }
        }
        listener
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn show_stderr(&self) -> String {
        // Give the reader a moment to catch up with a child that just failed.
        thread::sleep(Duration::from_millis(100));
        format!("--- {} stderr ---\n{}", self.what, self.stderr())
    }

    /// Wait until the child's stderr holds `needle` (after byte `from`); false on timeout.
    pub fn wait_for_stderr(&self, from: usize, needle: &str, timeout: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < timeout {
            if self
                .stderr()
                .get(from..)
                .is_some_and(|s| s.contains(needle))
            {
                return true;
            }
            thread::sleep(Duration::from_millis(10));
        }
        false
    }

    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("cannot run kill");
        assert!(
            status.success(),
            "kill -{signal} {} failed",
            self.child.id()
        );
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawn `cmd` (stdout piped, stdin closed) and read the first `lines` lines it prints
/// (`listening URL`, then what a server announces after it), within [`LISTEN_TIMEOUT`];
/// the rest of its stdout is drained on a thread so it never blocks.
pub fn announced(cmd: &mut Command, lines: usize) -> (Child, Vec<String>) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = Vec::new();
    let until = Instant::now() + LISTEN_TIMEOUT;
    while said.len() < lines {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => said.push(line),
            Err(e) => {
                let _ = child.kill();
                panic!("{cmd:?} printed {said:?} and then nothing ({e})");
            }
        }
    }
    (child, said)
}
