//! Live rendering of a run's events: [`Human`] lines for a terminal, [`JsonLines`] for
//! programs. A view is fed the journal's records as they become durable (see
//! [`observer`]) and the final state once the run is over. The formatting helpers shared
//! by the renderers live here.

pub mod diagram;
pub mod human;
pub mod json;
pub mod names;
pub mod report;
pub mod spinner;

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::journal::{FlowState, Record};

pub use human::{Human, HumanOptions};
pub use json::JsonLines;
pub use names::Names;

/// Something that shows a run as it happens.
pub trait View: Send + Sync {
    /// A record has been journaled.
    fn record(&self, record: &Record);

    /// A commit made `records` durable; `lines` is the journal's text for them (one
    /// newline-terminated JSON line each). Views show each record in turn unless they can
    /// do better with the batch.
    fn committed(&self, records: &[Record], _lines: &[u8]) {
        records.iter().for_each(|r| self.record(r));
    }

    /// A control point is being decided (a reasoner is at work on `element`). Views that
    /// can show progress do; the next record ends the wait.
    fn waiting(&self, _element: &str) {}

    /// The run is over (or stopped); `state` is the fold of its journal.
    fn finish(&self, state: &FlowState);

    /// The run continues from a journal holding `records` (already shown once): views
    /// that summarise the run start from them.
    fn resumed(&self, _records: &[Record]) {}
}

/// A journal observer that feeds `view` (for [`crate::journal::Journal::with_observer`]).
pub fn observer(view: Arc<dyn View>) -> impl crate::journal::store::Observer {
    Observing(view)
}

struct Observing(Arc<dyn View>);

impl crate::journal::store::Observer for Observing {
    fn committed(&self, records: &[Record], lines: &[u8]) {
        self.0.committed(records, lines);
    }
}

pub use crate::diag::excerpt;

/// `head` followed by `words` (joined by one space), wrapped at `width` columns: each
/// continuation line starts with `indent` spaces. Widths ignore ANSI styling; a word longer
/// than a line keeps a line of its own, whole (nothing is ever cut). A word ending with a
/// space is followed by no other (`"done "` then `"[x]"` reads `done  [x]`); lines never end
/// with spaces.
pub fn wrap<S: AsRef<str>>(head: &str, words: &[S], width: usize, indent: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = head.to_owned();
    let mut used = console::measure_text_width(head);
    let mut fresh = head.trim().is_empty();
    for word in words {
        let word = word.as_ref();
        if word.is_empty() {
            continue;
        }
        let w = console::measure_text_width(word);
        let gap = usize::from(!fresh && !line.ends_with(' '));
        if !fresh && used + gap + w > width {
            lines.push(std::mem::take(&mut line));
            line = " ".repeat(indent);
            used = indent;
        } else if gap == 1 {
            line.push(' ');
            used += 1;
        }
        line.push_str(word);
        used += w;
        fresh = false;
    }
    lines.push(line);
    for line in &mut lines {
        line.truncate(line.trim_end().len());
    }
    lines
}

/// `12 ms`, `1.3 s`, `2 min 05 s`.
pub fn duration(ms: u64) -> String {
    let tenths = (ms + 50) / 100;
    if ms < 1000 {
        format!("{ms} ms")
    } else if tenths < 600 {
        format!("{}.{} s", tenths / 10, tenths % 10)
    } else {
        let secs = (ms + 500) / 1000;
        format!("{} min {:02} s", secs / 60, secs % 60)
    }
}

/// A value as compact JSON (`"text"`, `42`, `{"a":1}`).
pub fn value(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "?".to_owned())
}

/// Text from a model, a tool or a person on one line of the terminal: control
/// characters shown, not obeyed, whitespace folded, at most `max` characters (`…` ends
/// a cut).
pub fn short(text: &str, max: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = crate::diag::printable(&folded);
    if shown.chars().count() <= max {
        return shown;
    }
    let mut cut: String = shown.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `k=v, k=v` in the map's order, values as compact JSON.
pub fn assignments(values: &Map<String, Value>) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k}={}", value(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `2026-12-01 15:07:18Z` for milliseconds since the Unix epoch.
pub fn utc_time(ms: u64) -> String {
    let secs = ms / 1000;
    let (y, mo, d) = crate::journal::store::civil_date((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_flatten_and_cut() {
        assert_eq!(excerpt("a\n  b\tc", 80), "a b c");
        assert_eq!(excerpt("abcdef", 6), "abcdef");
        assert_eq!(excerpt("abcdefg", 6), "abcde…");
        assert_eq!(excerpt("abcd efg", 6), "abcd…");
        assert_eq!(excerpt("ééééééé", 4).chars().count(), 4);
    }

    #[test]
    fn wrapping_keeps_every_word_and_the_width() {
        let words: Vec<&str> = "the applicant's score is above the threshold so the loan goes on"
            .split_whitespace()
            .collect();
        let lines = wrap("  head  ", &words, 30, 4);
        assert!(lines.iter().all(|l| l.chars().count() <= 30), "{lines:?}");
        assert!(
            lines[1..]
                .iter()
                .all(|l| l.starts_with("    ") && !l.starts_with("     "))
        );
        let joined: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(joined[1..], words[..]);
        // A styled head counts its visible width only; an over-long word is kept whole.
        let lines = wrap("\x1b[1mab\x1b[0m", &["c".repeat(40)], 20, 2);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[1], format!("  {}", "c".repeat(40)));
        assert_eq!(wrap("ab", &["cd"], 80, 2), vec!["ab cd"]);
        assert_eq!(wrap("ab ", &["cd"], 80, 2), vec!["ab cd"]);
    }

    #[test]
    fn durations() {
        assert_eq!(duration(0), "0 ms");
        assert_eq!(duration(12), "12 ms");
        assert_eq!(duration(999), "999 ms");
        assert_eq!(duration(1_300), "1.3 s");
        assert_eq!(duration(59_940), "59.9 s");
        assert_eq!(duration(59_960), "1 min 00 s");
        assert_eq!(duration(1_000), "1.0 s");
        assert_eq!(duration(125_000), "2 min 05 s");
    }

    #[test]
    fn values_render_as_compact_json() {
        let mut m = Map::new();
        m.insert("b".into(), Value::from("x"));
        m.insert("a".into(), serde_json::json!({"k": [1, true]}));
        assert_eq!(assignments(&m), r#"b="x", a={"k":[1,true]}"#);
    }
}
