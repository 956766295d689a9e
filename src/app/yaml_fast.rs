//! A fast path for the YAML configs are made of: block mappings and sequences, one-line
//! plain and quoted scalars, one-line flow collections and comments. It produces the very
//! events (and spans) `saphyr-parser` produces for such a document, several times faster
//! and without its per-token allocations; on anything outside that subset (block scalars,
//! anchors, tags, multi-line scalars, escapes, tabs, syntax errors, ...) it gives up and
//! [`super::yaml::parse`] runs `saphyr-parser` instead, so what is read never depends on
//! which path read it (a test compares both on every YAML file of the repository).

use std::borrow::Cow;

use saphyr_parser::{Event, ScalarStyle};

use crate::source::Span;

/// Where the fast path's events go: a list of them ([`events`]), or straight into a tree
/// (`yaml::parse`, which so never holds every event of a large file at once).
pub(super) trait Sink<'t> {
    fn push(&mut self, event: Event<'t>, span: Span);
}

impl<'t> Sink<'t> for Vec<(Event<'t>, Span)> {
    fn push(&mut self, event: Event<'t>, span: Span) {
        Vec::push(self, (event, span));
    }
}

/// A sink for look-ahead scans that emit nothing.
struct Discard;

impl<'t> Sink<'t> for Discard {
    fn push(&mut self, _: Event<'t>, _: Span) {}
}

/// The events of `text`, or `None` when the text is outside the subset.
#[cfg(test)]
pub(super) fn events(text: &str) -> Option<Vec<(Event<'_>, Span)>> {
    scan(text, Vec::with_capacity(text.len() / 8))
}

/// Gives the events of `text` to `sink`, or `None` when the text is outside the subset
/// (the sink may have had some events by then).
pub(super) fn scan<'t, S: Sink<'t>>(text: &'t str, sink: S) -> Option<S> {
    if !acceptable_chars(text) {
        return None;
    }
    let mut s = Scanner {
        text,
        b: text.as_bytes(),
        pos: 0,
        line_start: 0,
        depth: 0,
        events: sink,
    };
    s.events.push(Event::StreamStart, Span::new(0, 0));
    s.skip_blank()?;
    s.events
        .push(Event::DocumentStart(false), Span::new(s.pos, 0));
    if s.at_end() || s.col() != 0 {
        return None;
    }
    if s.is_dash_entry(s.pos) {
        s.block_sequence(0, false)?;
    } else {
        s.block_mapping(0)?;
    }
    if !s.at_end() {
        return None;
    }
    let end = Span::new(text.len(), 0);
    s.events.push(Event::DocumentEnd, end);
    s.events.push(Event::StreamEnd, end);
    Some(s.events)
}

/// Only spaces, newlines and printable characters that YAML never reads as breaks or marks.
fn acceptable_chars(text: &str) -> bool {
    // One pass over the bytes: every one a newline or printable, and whether all are ASCII.
    let mut high = 0u8;
    for &b in text.as_bytes() {
        if (b < 0x20 && b != b'\n') || b == 0x7f {
            return false;
        }
        high |= b;
    }
    high < 0x80
        || text.chars().all(|c| {
            c.is_ascii()
                || ((c as u32) >= 0xA0
                    && !matches!(
                        c,
                        '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
                    ))
        })
}

struct Scanner<'t, S> {
    text: &'t str,
    b: &'t [u8],
    pos: usize,
    /// Where the line holding `pos` starts.
    line_start: usize,
    /// Collections open around `pos`; deeper nesting is left to the full parser.
    depth: usize,
    events: S,
}

/// How deep the fast path nests (configs need a handful of levels).
const MAX_DEPTH: usize = 32;

/// What may not start a plain scalar here (YAML indicators, quotes handled apart).
fn bad_plain_start(c: u8) -> bool {
    matches!(
        c,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
            | b' '
            | b'\n'
    )
}

impl<'t, S: Sink<'t>> Scanner<'t, S> {
    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }

    fn peek(&self, at: usize) -> Option<u8> {
        self.b.get(at).copied()
    }

    fn col(&self) -> usize {
        self.pos - self.line_start
    }

    /// Whether `at` holds `-` followed by a space, a newline or the end.
    fn is_dash_entry(&self, at: usize) -> bool {
        self.peek(at) == Some(b'-') && matches!(self.peek(at + 1), None | Some(b' ' | b'\n'))
    }

    /// Moves to the next token: over spaces, newlines and comment lines. Refuses document
    /// markers and directives at the start of a line.
    fn skip_blank(&mut self) -> Option<()> {
        loop {
            while self.peek(self.pos) == Some(b' ') {
                self.pos += 1;
            }
            match self.peek(self.pos) {
                Some(b'#') => {
                    // A comment must follow whitespace (or start the line).
                    if self.pos > self.line_start && self.b[self.pos - 1] != b' ' {
                        return None;
                    }
                    self.skip_line();
                }
                Some(b'\n') => {
                    self.pos += 1;
                    self.line_start = self.pos;
                    let rest = &self.b[self.pos..];
                    if rest.starts_with(b"---")
                        || rest.starts_with(b"...")
                        || rest.first() == Some(&b'%')
                    {
                        return None;
                    }
                }
                _ => return Some(()),
            }
        }
    }

    fn skip_line(&mut self) {
        match memchr_newline(&self.b[self.pos..]) {
            Some(i) => self.pos += i,
            None => self.pos = self.b.len(),
        }
    }

    /// After a quoted scalar or a flow collection's end: over spaces and a comment (the
    /// span `saphyr-parser` gives such a token ends there).
    fn trail(&mut self) {
        let start = self.pos;
        while self.peek(self.pos) == Some(b' ') {
            self.pos += 1;
        }
        if self.pos > start && self.peek(self.pos) == Some(b'#') {
            self.skip_line();
        }
    }

    /// At the end of a line (after a value): the line's end or the text's.
    fn expect_eol(&mut self) -> Option<()> {
        while self.peek(self.pos) == Some(b' ') {
            self.pos += 1;
        }
        match self.peek(self.pos) {
            None | Some(b'\n') => Some(()),
            Some(b'#') if self.b[self.pos - 1] == b' ' => {
                self.skip_line();
                Some(())
            }
            _ => None,
        }
    }

    fn push_scalar(&mut self, text: Cow<'t, str>, style: ScalarStyle, span: Span) {
        self.events.push(Event::Scalar(text, style, 0, None), span);
    }

    fn empty(&self, at: usize) -> Span {
        Span::new(at, 0)
    }

    /// A block mapping whose keys sit at column `indent`; `pos` is at its first key.
    fn block_mapping(&mut self, indent: usize) -> Option<()> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let done = self.block_mapping_in(indent);
        self.depth -= 1;
        done
    }

    fn block_mapping_in(&mut self, indent: usize) -> Option<()> {
        self.events
            .push(Event::MappingStart(0, None), self.empty(self.pos));
        loop {
            let colon = self.key()?;
            self.pos = colon + 1;
            while self.peek(self.pos) == Some(b' ') {
                self.pos += 1;
            }
            match self.peek(self.pos) {
                None | Some(b'\n' | b'#') => {
                    if self.peek(self.pos) == Some(b'#') && self.b[self.pos - 1] != b' ' {
                        return None;
                    }
                    self.skip_blank()?;
                    let c = self.col();
                    if self.at_end() || c < indent || (c == indent && !self.is_dash_entry(self.pos))
                    {
                        let at = self.empty(colon);
                        self.push_scalar(Cow::Borrowed(""), ScalarStyle::Plain, at);
                    } else if self.is_dash_entry(self.pos) {
                        self.block_sequence(c, c == indent)?;
                    } else {
                        self.block_mapping(c)?;
                    }
                }
                Some(_) => {
                    self.inline_value()?;
                    self.skip_blank()?;
                }
            }
            if self.at_end() || self.col() < indent {
                break;
            }
            if self.col() > indent {
                return None;
            }
        }
        self.events.push(Event::MappingEnd, self.empty(self.pos));
        Some(())
    }

    /// A block sequence whose dashes sit at column `indent`; `pos` is at its first dash.
    fn block_sequence(&mut self, indent: usize, indentless: bool) -> Option<()> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let done = self.block_sequence_in(indent, indentless);
        self.depth -= 1;
        done
    }

    fn block_sequence_in(&mut self, indent: usize, indentless: bool) -> Option<()> {
        // An indentless sequence (a mapping's value at the mapping's own column) starts,
        // for `saphyr-parser`, at its first entry's content.
        let mut start = self.pos;
        if indentless {
            start += 1;
            while self.peek(start) == Some(b' ') {
                start += 1;
            }
        }
        self.events
            .push(Event::SequenceStart(0, None), self.empty(start));
        loop {
            if !self.is_dash_entry(self.pos) {
                // Something else at the dashes' column: the sequence ends (the mapping
                // around decides whether that is valid).
                break;
            }
            self.pos += 1;
            while self.peek(self.pos) == Some(b' ') {
                self.pos += 1;
            }
            match self.peek(self.pos) {
                None | Some(b'\n' | b'#') | Some(b'-') => return None,
                Some(_) => {
                    if self.is_key_line(self.pos) {
                        let col = self.col();
                        self.block_mapping(col)?;
                    } else {
                        self.inline_value()?;
                        self.skip_blank()?;
                    }
                }
            }
            if self.at_end() || self.col() < indent {
                break;
            }
            if self.col() > indent {
                return None;
            }
        }
        self.events.push(Event::SequenceEnd, self.empty(self.pos));
        Some(())
    }

    /// Whether the scalar at `at` is a mapping key (followed by `: ` or `:` at the end).
    fn is_key_line(&self, at: usize) -> bool {
        let mut probe = Scanner {
            text: self.text,
            b: self.b,
            pos: at,
            line_start: self.line_start,
            depth: self.depth,
            events: Discard,
        };
        probe.key_colon().is_some()
    }

    /// Where the colon after the key at `pos` is (without emitting anything).
    fn key_colon(&mut self) -> Option<usize> {
        match self.peek(self.pos)? {
            q @ (b'"' | b'\'') => {
                let (_, end) = self.quoted_text(self.pos, q)?;
                (self.peek(end) == Some(b':')
                    && matches!(self.peek(end + 1), None | Some(b' ' | b'\n')))
                .then_some(end)
            }
            c if bad_plain_start(c) => None,
            _ => {
                let (_, end, stop) = self.plain_end(self.pos, false);
                (stop == Stop::Colon).then_some(end)
            }
        }
    }

    /// The key at `pos`, emitted; returns the position of its colon.
    fn key(&mut self) -> Option<usize> {
        let start = self.pos;
        match self.peek(start)? {
            q @ (b'"' | b'\'') => {
                let (text, end) = self.quoted_text(start, q)?;
                if self.peek(end) != Some(b':')
                    || !matches!(self.peek(end + 1), None | Some(b' ' | b'\n'))
                    || end - start > 1000
                {
                    return None;
                }
                let style = quote_style(q);
                self.push_scalar(text, style, Span::new(start, end - start));
                Some(end)
            }
            c if bad_plain_start(c) => None,
            _ => {
                let (trimmed, colon, stop) = self.plain_end(start, false);
                if stop != Stop::Colon || trimmed - start > 1000 {
                    return None;
                }
                let text = &self.text[start..trimmed];
                if text.contains(':') {
                    return None;
                }
                self.push_scalar(
                    Cow::Borrowed(text),
                    ScalarStyle::Plain,
                    Span::new(start, trimmed - start),
                );
                Some(colon)
            }
        }
    }

    /// A value on the rest of the line: a flow collection, a quoted or a plain scalar.
    fn inline_value(&mut self) -> Option<()> {
        let start = self.pos;
        match self.peek(start)? {
            b'[' | b'{' => {
                self.flow_node()?;
                self.expect_eol()
            }
            q @ (b'"' | b'\'') => {
                let (text, end) = self.quoted_text(start, q)?;
                self.pos = end;
                self.trail();
                let span = Span::new(start, self.pos - start);
                self.push_scalar(text, quote_style(q), span);
                self.expect_eol()
            }
            b'-' if self
                .peek(start + 1)
                .is_some_and(|c| c.is_ascii_alphanumeric()) =>
            {
                self.plain_value(start)
            }
            c if bad_plain_start(c) => None,
            _ => self.plain_value(start),
        }
    }

    fn plain_value(&mut self, start: usize) -> Option<()> {
        let (trimmed, end, stop) = self.plain_end(start, false);
        if stop == Stop::Colon {
            return None;
        }
        self.push_scalar(
            Cow::Borrowed(&self.text[start..trimmed]),
            ScalarStyle::Plain,
            Span::new(start, trimmed - start),
        );
        self.pos = end;
        self.expect_eol()
    }

    /// Scans a plain scalar from `start`: returns where its text ends (trailing spaces
    /// trimmed), where scanning stopped, and why.
    fn plain_end(&self, start: usize, flow: bool) -> (usize, usize, Stop) {
        let mut i = start;
        let mut last = start;
        loop {
            let Some(c) = self.peek(i) else {
                return (last, i, Stop::Eol);
            };
            match c {
                b'\n' => return (last, i, Stop::Eol),
                b' ' => {
                    if self.peek(i + 1) == Some(b'#') {
                        return (last, i, Stop::Eol);
                    }
                }
                b':' => {
                    let next = self.peek(i + 1);
                    if matches!(next, None | Some(b' ' | b'\n'))
                        || (flow && matches!(next, Some(b',' | b'[' | b']' | b'{' | b'}')))
                    {
                        return (last, i, Stop::Colon);
                    }
                    if flow {
                        return (last, i, Stop::Bad);
                    }
                    last = i + 1;
                }
                b',' | b'[' | b']' | b'{' | b'}' if flow => return (last, i, Stop::Flow),
                _ => last = i + 1,
            }
            i += 1;
        }
    }

    /// The text of a one-line quoted scalar opening at `start`, and where it ends (after
    /// the closing quote). Escapes in double quotes and line breaks are refused.
    fn quoted_text(&self, start: usize, q: u8) -> Option<(Cow<'t, str>, usize)> {
        let mut i = start + 1;
        let mut owned: Option<String> = None;
        let mut from = i;
        loop {
            let c = self.peek(i)?;
            if c == b'\n' || (q == b'"' && c == b'\\') {
                return None;
            }
            if c == q {
                if q == b'\'' && self.peek(i + 1) == Some(b'\'') {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(&self.text[from..=i]);
                    i += 2;
                    from = i;
                    continue;
                }
                let text = match owned {
                    Some(mut s) => {
                        s.push_str(&self.text[from..i]);
                        Cow::Owned(s)
                    }
                    None => Cow::Borrowed(&self.text[from..i]),
                };
                return Some((text, i + 1));
            }
            i += 1;
        }
    }

    /// A flow collection (on one line) at `pos`.
    fn flow_node(&mut self) -> Option<()> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let done = self.flow_node_in();
        self.depth -= 1;
        done
    }

    fn flow_node_in(&mut self) -> Option<()> {
        let start = self.pos;
        let (close, seq) = match self.peek(start)? {
            b'[' => (b']', true),
            b'{' => (b'}', false),
            _ => return None,
        };
        let open = Span::new(start, 1);
        self.events.push(
            if seq {
                Event::SequenceStart(0, None)
            } else {
                Event::MappingStart(0, None)
            },
            open,
        );
        self.pos += 1;
        self.spaces();
        if self.peek(self.pos) != Some(close) {
            loop {
                if !seq {
                    self.flow_key()?;
                    self.spaces();
                }
                self.flow_item()?;
                self.spaces();
                match self.peek(self.pos)? {
                    b',' => {
                        self.pos += 1;
                        self.spaces();
                        if matches!(self.peek(self.pos)?, b']' | b'}' | b',') {
                            return None;
                        }
                    }
                    c if c == close => break,
                    _ => return None,
                }
            }
        }
        let at = self.pos;
        self.pos += 1;
        self.trail();
        let span = Span::new(at, self.pos - at);
        self.events.push(
            if seq {
                Event::SequenceEnd
            } else {
                Event::MappingEnd
            },
            span,
        );
        Some(())
    }

    fn spaces(&mut self) {
        while self.peek(self.pos) == Some(b' ') {
            self.pos += 1;
        }
    }

    /// A key of a flow mapping and its `: `.
    fn flow_key(&mut self) -> Option<()> {
        let start = self.pos;
        match self.peek(start)? {
            q @ (b'"' | b'\'') => {
                let (text, end) = self.quoted_text(start, q)?;
                if self.peek(end) != Some(b':') || self.peek(end + 1) != Some(b' ') {
                    return None;
                }
                self.push_scalar(text, quote_style(q), Span::new(start, end - start));
                self.pos = end + 2;
            }
            c if bad_plain_start(c) => return None,
            _ => {
                let (trimmed, stop_at, stop) = self.plain_end(start, true);
                if stop != Stop::Colon || self.peek(stop_at + 1) != Some(b' ') {
                    return None;
                }
                self.push_scalar(
                    Cow::Borrowed(&self.text[start..trimmed]),
                    ScalarStyle::Plain,
                    Span::new(start, trimmed - start),
                );
                self.pos = stop_at + 2;
            }
        }
        self.spaces();
        // `{a: }` and `{a: , b}`: a null value; left to the full parser.
        if matches!(self.peek(self.pos)?, b',' | b'}' | b']' | b'#') {
            return None;
        }
        Some(())
    }

    /// A value inside a flow collection: a nested collection, a quoted or a plain scalar.
    fn flow_item(&mut self) -> Option<()> {
        let start = self.pos;
        match self.peek(start)? {
            b'[' | b'{' => self.flow_node(),
            q @ (b'"' | b'\'') => {
                let (text, end) = self.quoted_text(start, q)?;
                self.pos = end;
                self.trail();
                if self.peek(self.pos) == Some(b':') {
                    return None;
                }
                let span = Span::new(start, self.pos - start);
                self.push_scalar(text, quote_style(q), span);
                Some(())
            }
            b'-' if self
                .peek(start + 1)
                .is_some_and(|c| c.is_ascii_alphanumeric()) =>
            {
                self.flow_plain(start)
            }
            c if bad_plain_start(c) => None,
            _ => self.flow_plain(start),
        }
    }

    fn flow_plain(&mut self, start: usize) -> Option<()> {
        let (trimmed, end, stop) = self.plain_end(start, true);
        if stop != Stop::Flow {
            return None;
        }
        self.push_scalar(
            Cow::Borrowed(&self.text[start..trimmed]),
            ScalarStyle::Plain,
            Span::new(start, trimmed - start),
        );
        self.pos = end;
        Some(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    /// The end of the line (or a comment).
    Eol,
    /// A `:` followed by a space or the end of the line.
    Colon,
    /// A flow indicator (`,[]{}`).
    Flow,
    /// Something the fast path does not read.
    Bad,
}

fn quote_style(q: u8) -> ScalarStyle {
    if q == b'"' {
        ScalarStyle::DoubleQuoted
    } else {
        ScalarStyle::SingleQuoted
    }
}

fn memchr_newline(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use saphyr_parser::Parser;

    /// The events `saphyr-parser` gives, with byte spans, as text.
    fn slow(text: &str) -> Vec<String> {
        let offsets: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let byte = |i: usize| offsets.get(i).copied().unwrap_or(text.len());
        let mut out = Vec::new();
        let mut parser = Parser::new_from_str(text);
        while let Some(Ok((ev, span))) = parser.next_event() {
            let (start, end) = (byte(span.start.index()), byte(span.end.index()));
            out.push(format!("{ev:?} {start}..{}", end.max(start)));
        }
        out
    }

    fn fast(text: &str) -> Option<Vec<String>> {
        Some(
            events(text)?
                .into_iter()
                .map(|(ev, span)| format!("{ev:?} {}..{}", span.offset, span.end()))
                .collect(),
        )
    }

    /// Either the fast path declines, or it gives exactly the events of `saphyr-parser`.
    fn same(text: &str) -> bool {
        match fast(text) {
            None => false,
            Some(events) => {
                let expected = slow(text);
                let at = events
                    .iter()
                    .zip(&expected)
                    .take_while(|(a, b)| a == b)
                    .count();
                assert!(
                    at == events.len() && at == expected.len(),
                    "event {at}: {:?}, saphyr: {:?}\n{text}",
                    events.get(at.saturating_sub(2)..(at + 1).min(events.len())),
                    expected.get(at.saturating_sub(2)..(at + 1).min(expected.len())),
                );
                true
            }
        }
    }

    fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    yaml_files(&path, out);
                }
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_yaml_file_of_the_repository_reads_the_same_on_both_paths() {
        let mut files = Vec::new();
        yaml_files(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), &mut files);
        assert!(files.len() > 20, "{}", files.len());
        let mut fast_read = 0;
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            if same(&text) {
                fast_read += 1;
            }
        }
        eprintln!("{fast_read} of {} files read by the fast path", files.len());
        assert!(
            fast_read > files.len() / 4,
            "{fast_read} of {}",
            files.len()
        );
    }

    #[test]
    fn the_subset_reads_as_saphyr_reads_it() {
        for text in [
            "flow: {id: a, name: \"B c\", x: [1, 2]}\nvariables:\n  x: \"\"\n  y: 'q'   # c\n",
            "tasks:\n  - id: t0\n    mode: task_agent\n    output:\n      v0: v0\n  - id: t1\n    m:\n    - a\n    - b\n# end\nhooks:\n  - id: h\n    location: f\n",
            "a: \"x\"   \nb: \"y\"  # c\nc: p q   # d\nd:\ne: {}  # z\nf: []\n\"g\": 1\n",
            "a:\n  - x\n  -   y  \nb: [a, \"b\" , c ]   \nc: {k: \"v\" , l: m}\nd: -1\ne:   \n\n\nf: x",
            "- a\n- b: c\n  d: e\n- [x]\n",
            "a: 'it''s'\nb: \"Prüfung – Ω\"\nc: http://x:80/y\nd: a#b\n",
            "a:\n  b:\n    c: 1\n  d:\nz: 2\n",
            "- a:\n  - x\n  b: 1\n",
            "a: {b: {c: [1, [2, 3]]}, d: 'e'}\n",
            "k: v\n# trailing comment\n\n",
            "flow: {id: bench_v1, name: Bench, bpmn_file: model.bpmn}\nvariables:\n  x: \"\"\n  v0: \"\"\ntasks:\n  - id: t0\n    mode: task_agent\n    input_mapping: {x: x}\n    output_mapping:\n      v0: v0\n    agent: {name: agent0, system_instruction: \"Do t0.\"}\ngateways:\n  s0:\n    mode: native\n    flows:\n      f0a: {condition: '${x} == \"a\"'}\naction_permissions: {permitted_actions: [continue, skip_node]}\nhooks:\n  - id: hook0\n    location: f0\n    action: continue\n",
        ] {
            assert!(same(text), "the fast path declined: {text}");
        }
        // Outside the subset: declined (the full parser reads or refuses it).
        for text in [
            "a: |\n  x\n",
            "a: &x 1\nb: *x\n",
            "a: foo\n  bar\n",
            "a: \"x\\ny\"\n",
            "---\na: 1\n",
            "a: b: c\n",
            "a:\tb\n",
            "a: [1, 2,]\n",
            "a: 'x\n  y'\n",
            "",
        ] {
            assert!(fast(text).is_none(), "{text}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Text made of the characters YAML structure is made of: the fast path either
        /// declines it or reads exactly what `saphyr-parser` reads.
        #[test]
        fn random_yaml_like_text_reads_the_same_or_is_declined(
            text in "([a-c1 :\\-#'\"{}\\[\\],.\n]|  |\n  |: |- ){0,40}"
        ) {
            same(&text);
        }

        /// Random well-formed configs of the subset are read by the fast path.
        #[test]
        fn generated_block_yaml_reads_the_same(
            entries in proptest::collection::vec(
                ("[a-z][a-z0-9_]{0,6}", 0usize..6, "[a-zA-Z0-9 ._/-]{0,8}"), 1..12)
        ) {
            let mut text = String::new();
            let mut seen = std::collections::HashSet::new();
            for (key, shape, value) in &entries {
                if !seen.insert(key.clone()) {
                    continue;
                }
                let v = value.trim();
                match shape {
                    0 => text.push_str(&format!("{key}: {v}\n")),
                    1 => text.push_str(&format!("{key}: \"{v}\"  # note\n")),
                    2 => text.push_str(&format!("{key}:\n  - {v}x\n  - id: {v}y\n    k: [{v}z, 'q']\n")),
                    3 => text.push_str(&format!("{key}: {{a: {v}x, b: \"{v}\"}}\n")),
                    4 => text.push_str(&format!("{key}:\n- x{v}\n\n# c\n- y\n")),
                    _ => text.push_str(&format!("{key}:\n  inner:\n    deep: '{v}'\n  other:\n")),
                }
            }
            same(&text);
        }
    }
}
