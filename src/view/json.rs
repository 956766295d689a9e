//! JSON lines: each record exactly as journaled, one object per line, nothing else.

use std::io::{self, Write};
use std::sync::Mutex;

use super::View;
use crate::journal::{FlowState, Record};

pub struct JsonLines {
    out: Mutex<Box<dyn Write + Send>>,
}

impl JsonLines {
    /// Write to standard output.
    pub fn new() -> Self {
        Self::to_writer(Box::new(io::stdout()))
    }

    pub fn to_writer(out: Box<dyn Write + Send>) -> Self {
        JsonLines {
            out: Mutex::new(out),
        }
    }
}

impl Default for JsonLines {
    fn default() -> Self {
        Self::new()
    }
}

impl View for JsonLines {
    fn record(&self, record: &Record) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        // A closed pipe must not stop the run: the journal is the record, this is a view.
        let _ = out.write_all(&line).and_then(|()| out.flush());
    }

    /// The journal's own lines, written at once: one write per commit, not per record.
    fn committed(&self, _records: &[Record], lines: &[u8]) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = out.write_all(lines).and_then(|()| out.flush());
    }

    /// Nothing more: the `run_finished` record is the summary.
    fn finish(&self, _state: &FlowState) {}
}
