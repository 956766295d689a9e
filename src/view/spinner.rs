//! A one-line spinner on the terminal while something slow happens (a model call, a
//! remote engine's step): what is awaited and for how long. Drawn on standard output by
//! its own thread, only when a person watches it (the caller decides: an interactive
//! terminal, never a pipe or `--json`); it steps aside while a person is being asked at
//! the terminal, and leaves no trace once stopped.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::duration;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Nothing is drawn for waits shorter than this (no flicker for instant answers).
const GRACE: Duration = Duration::from_millis(250);
const TICK: Duration = Duration::from_millis(100);

pub struct Spinner {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Start spinning `message` (cut to `width` columns so that it never wraps).
    pub fn start(message: String, width: usize, color: bool) -> Spinner {
        Spinner::start_at(message, Instant::now(), width, color)
    }

    /// Start spinning `message` for a wait that began at `since` (its time counts from
    /// there: a spinner redrawn under a new line goes on counting).
    pub fn start_at(message: String, since: Instant, width: usize, color: bool) -> Spinner {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("cuga-flo-spinner".into())
            .spawn(move || spin(&message, since, width, color, &flag))
            .ok();
        Spinner { stop, thread }
    }

    /// Stop and clear the line (returns once the line is clear).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.halt();
    }
}

fn spin(message: &str, started: Instant, width: usize, color: bool, stop: &AtomicBool) {
    let mut drawn = false;
    let mut frame = 0usize;
    let clear = |drawn: &mut bool| {
        if std::mem::take(drawn) {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\r\x1b[2K").and_then(|()| out.flush());
        }
    };
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let elapsed = started.elapsed();
        // A person answering at the terminal needs the screen.
        if elapsed < GRACE || !crate::terminal::asking().is_empty() {
            clear(&mut drawn);
            continue;
        }
        let text = line(FRAMES[frame % FRAMES.len()], message, elapsed, width);
        frame += 1;
        let text = if color {
            format!("\x1b[36m{text}\x1b[0m")
        } else {
            text
        };
        let mut out = std::io::stdout().lock();
        if out
            .write_all(format!("\r\x1b[2K{text}").as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return;
        }
        drawn = true;
    }
    clear(&mut drawn);
}

/// `⠋ message · 3.2 s`, at most `width - 1` columns.
fn line(frame: &str, message: &str, elapsed: Duration, width: usize) -> String {
    let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let tail = format!(" · {}", duration(ms));
    let room = width
        .saturating_sub(1)
        .saturating_sub(tail.chars().count() + 2);
    format!("{frame} {}{tail}", super::excerpt(message, room.max(10)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_wait_and_its_time_and_never_wraps() {
        let text = line(
            "⠋",
            "asking model `m` at Check credit",
            Duration::from_millis(3_210),
            80,
        );
        assert_eq!(text, "⠋ asking model `m` at Check credit · 3.2 s");
        let long = "x ".repeat(100);
        let text = line("⠋", &long, Duration::from_secs(1), 40);
        assert!(text.chars().count() < 40, "{text}");
        assert!(text.ends_with("· 1.0 s"), "{text}");
    }
}
