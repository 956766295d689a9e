//! A YAML tree that remembers where every node came from, so that config problems can
//! point at the exact key or value. Built from `saphyr-parser` events (YAML 1.2, pure
//! Rust); scalars are resolved with the YAML 1.2 core schema.

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError};

use crate::source::Span;

/// Expanding aliases may not create more nodes than this (protects against "billion
/// laughs" documents). The nodes written out are not counted: there are never more of
/// them than the text is long.
const MAX_NODES: usize = 1_000_000;
/// How deep lists and mappings may nest (a config needs a handful of levels; the limit
/// keeps the recursive build far from the stack's end).
const MAX_DEPTH: usize = 200;

/// A node of the tree; its strings borrow from the text it was parsed from wherever they
/// are written as they read (plain scalars and quoted ones without escapes), so building
/// the tree copies no text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node<'a> {
    pub span: Span,
    pub value: Value<'a>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A string; `plain` tells whether it was written without quotes.
    Str {
        text: Cow<'a, str>,
        plain: bool,
    },
    Seq(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>),
}

/// A YAML syntax problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    pub message: String,
    pub span: Span,
    /// For duplicate keys: where the key first appeared.
    pub first: Option<Span>,
}

impl<'a> Node<'a> {
    /// What kind of value this is, for messages ("a mapping", "a string", ...).
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str { .. } => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    pub fn as_map(&self) -> Option<&[(Node<'a>, Node<'a>)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node<'a>]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str { text, .. } => Some(text),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// A scalar's text as a string: strings as they are, numbers and booleans as written
    /// in the source (`version: 1.0` stays "1.0"). `None` for null, lists and mappings.
    pub fn scalar_text(&self, source: &str) -> Option<String> {
        match &self.value {
            Value::Str { text, .. } => Some(text.to_string()),
            Value::Bool(_) | Value::Int(_) | Value::Float(_) => source
                .get(self.span.offset..self.span.end())
                .map(|s| s.trim().to_string()),
            _ => None,
        }
    }

    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Convert to JSON (keys that are not strings are rendered as text).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::Str { text, .. } => J::String(text.to_string()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match k.to_json() {
                            J::String(s) => s,
                            other => other.to_string(),
                        };
                        (key, v.to_json())
                    })
                    .collect(),
            ),
        }
    }
}

/// Whether trees may be left to the end of the process instead of being freed
/// ([`keep_trees_until_exit`]).
static KEEP_TREES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For a command that reads its configs and then exits (`validate`): the YAML trees
/// decoded from now on are not freed one node at a time (a tenth of `validate`'s work on a
/// large config) but with the process. Never for a long-running process (`serve`).
pub fn keep_trees_until_exit() {
    KEEP_TREES.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Done with `root`: freed now, or left to the process's end after
/// [`keep_trees_until_exit`].
pub fn release(root: Node<'_>) {
    if KEEP_TREES.load(std::sync::atomic::Ordering::Relaxed) {
        std::mem::forget(root);
    }
}

/// Parse the one document of `text`. An empty document is `Null`; a second document
/// (after `---`) is an error, as is any syntax error after the first.
pub fn parse(text: &str) -> Result<Node<'_>, YamlError> {
    // The configs' own subset of YAML is read by a fast path that gives the same events,
    // built into the tree as they come; anything else (and every error: a number that
    // does not fit, a duplicate key) goes through `saphyr-parser`.
    if let Some(root) = super::yaml_fast::scan(text, Tree::default()).and_then(Tree::finish) {
        return Ok(root);
    }
    let offsets = CharOffsets::new(text);
    let mut builder = Builder {
        source: Source::Saphyr(Box::new(Parser::new_from_str(text))),
        offsets,
        anchors: HashMap::new(),
        expanded: 0,
        depth: 0,
        text_len: text.len(),
    };
    let root = builder.document()?;
    builder.rest()?;
    Ok(root)
}

/// Maps the parser's character indices to byte offsets.
struct CharOffsets {
    /// Byte offset of each char; empty when the text is ASCII (identity mapping).
    table: Vec<usize>,
    len: usize,
}

impl CharOffsets {
    fn new(text: &str) -> Self {
        let table = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(i, _)| i).collect()
        };
        CharOffsets {
            table,
            len: text.len(),
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        if self.table.is_empty() {
            char_index.min(self.len)
        } else {
            self.table.get(char_index).copied().unwrap_or(self.len)
        }
    }

    fn span(&self, s: saphyr_parser::Span) -> Span {
        let start = self.byte(s.start.index());
        let end = self.byte(s.end.index()).max(start);
        Span::new(start, end - start)
    }
}

/// Where the events come from: `saphyr-parser` (spans in characters).
enum Source<'t> {
    Saphyr(Box<Parser<'t, saphyr_parser::StrInput<'t>>>),
}

struct Builder<'t> {
    source: Source<'t>,
    offsets: CharOffsets,
    /// The node of each anchor id (a later anchor of the same id replaces it).
    anchors: HashMap<usize, Node<'t>>,
    /// Nodes copied by expanding aliases so far.
    expanded: usize,
    /// Lists and mappings open around the node being built.
    depth: usize,
    text_len: usize,
}

impl<'t> Builder<'t> {
    fn next(&mut self) -> Result<(Event<'t>, Span), YamlError> {
        let Source::Saphyr(parser) = &mut self.source;
        match parser.next_event() {
            Some(Ok((ev, span))) => Ok((ev, self.offsets.span(span))),
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Ok((Event::StreamEnd, Span::new(self.text_len, 0))),
        }
    }

    fn scan_error(&self, e: &ScanError) -> YamlError {
        let at = self.offsets.byte(e.marker().index());
        YamlError {
            message: e.info().to_string(),
            span: Span::new(at, 0),
            first: None,
        }
    }

    fn document(&mut self) -> Result<Node<'t>, YamlError> {
        loop {
            let (ev, span) = self.next()?;
            match ev {
                Event::StreamStart | Event::Nothing => continue,
                Event::StreamEnd => {
                    return Ok(Node {
                        span,
                        value: Value::Null,
                    });
                }
                Event::DocumentStart(_) => break,
                _ => return Err(error("unexpected content before the document", span)),
            }
        }
        let (ev, span) = self.next()?;
        if matches!(ev, Event::DocumentEnd) {
            return Ok(Node {
                span,
                value: Value::Null,
            });
        }
        self.node(ev, span)
    }

    /// What follows the document: only its end. Another document is refused rather than
    /// ignored (a file is read as one config, one list of answers).
    fn rest(&mut self) -> Result<(), YamlError> {
        loop {
            let (ev, span) = self.next()?;
            match ev {
                Event::DocumentEnd | Event::Nothing => continue,
                Event::StreamEnd => return Ok(()),
                Event::DocumentStart(_) => {
                    return Err(error(
                        "a second YAML document (after `---`): the file must hold one",
                        span,
                    ));
                }
                _ => return Err(error("unexpected content after the document", span)),
            }
        }
    }

    fn node(&mut self, ev: Event<'t>, span: Span) -> Result<Node<'t>, YamlError> {
        if matches!(ev, Event::SequenceStart(..) | Event::MappingStart(..)) {
            if self.depth >= MAX_DEPTH {
                return Err(error(
                    &format!("lists and mappings nest deeper than {MAX_DEPTH} levels"),
                    span,
                ));
            }
            self.depth += 1;
            let node = self.collection(ev, span);
            self.depth -= 1;
            return node;
        }
        self.leaf(ev, span)
    }

    fn leaf(&mut self, ev: Event<'t>, span: Span) -> Result<Node<'t>, YamlError> {
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let forced_str = tag.as_ref().is_some_and(|t| t.suffix == "str");
                let value = if style == ScalarStyle::Plain && !forced_str {
                    resolve_plain(text).map_err(|why| error(&why, span))?
                } else {
                    Value::Str { text, plain: false }
                };
                let node = Node { span, value };
                self.remember(anchor, &node);
                Ok(node)
            }
            _ => self.collection(ev, span),
        }
    }

    fn collection(&mut self, ev: Event<'t>, span: Span) -> Result<Node<'t>, YamlError> {
        match ev {
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                let end = loop {
                    let (ev, s) = self.next()?;
                    match ev {
                        Event::SequenceEnd => break s,
                        Event::StreamEnd => {
                            return Err(error("unexpected end of file in a list", s));
                        }
                        ev => items.push(self.node(ev, s)?),
                    }
                };
                let node = Node {
                    span: span.to(end),
                    value: Value::Seq(items),
                };
                self.remember(anchor, &node);
                Ok(node)
            }
            Event::MappingStart(anchor, _) => {
                let mut entries: Vec<(Node<'t>, Node<'t>)> = Vec::new();
                let mut keys = Keys::default();
                let end = loop {
                    let (ev, s) = self.next()?;
                    match ev {
                        Event::MappingEnd => break s,
                        Event::StreamEnd => {
                            return Err(error("unexpected end of file in a mapping", s));
                        }
                        ev => {
                            let key = self.node(ev, s)?;
                            let (vev, vs) = self.next()?;
                            let value = self.node(vev, vs)?;
                            if let Some((first, _)) = keys.seen(&key, entries.len(), &entries) {
                                return Err(YamlError {
                                    message: format!(
                                        "duplicate key `{}`",
                                        key.as_str().map_or_else(
                                            || format!("{:?}", key.value),
                                            str::to_string
                                        )
                                    ),
                                    span: key.span,
                                    first: Some(first.span),
                                });
                            }
                            entries.push((key, value));
                        }
                    }
                };
                let node = Node {
                    span: span.to(end),
                    value: Value::Map(entries),
                };
                self.remember(anchor, &node);
                Ok(node)
            }
            Event::Alias(id) => {
                let target = self
                    .anchors
                    .get(&id)
                    .ok_or_else(|| error("alias to an unknown anchor", span))?;
                self.expanded += subtree_size(target);
                if self.expanded > MAX_NODES {
                    return Err(error(
                        "the document expands to too many nodes (alias bomb?)",
                        span,
                    ));
                }
                Ok(Node {
                    span,
                    value: target.value.clone(),
                })
            }
            _ => Err(error("unexpected YAML event", span)),
        }
    }

    fn remember(&mut self, anchor: usize, node: &Node<'t>) {
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
    }
}

/// The tree of the fast path's events, built as they come (see `yaml_fast::Sink`). The
/// fast path has no anchors, aliases or tags and nests far less than [`MAX_DEPTH`]; what
/// [`Builder`] would refuse (a number that does not fit, a duplicate key) marks the tree
/// failed, and the text is then read again by `saphyr-parser` for the error. The items
/// and entries of the open lists and mappings are stacked in two shared lists and moved
/// into a list of their exact size when they close, so no list grows by copying.
#[derive(Default)]
struct Tree<'t> {
    open: Vec<Open<'t>>,
    items: Vec<Node<'t>>,
    entries: Vec<(Node<'t>, Node<'t>)>,
    root: Option<Node<'t>>,
    failed: bool,
}

/// A list or mapping of a [`Tree`] whose end has not come yet; `base`: where its items or
/// entries start in the tree's stack of them.
enum Open<'t> {
    Seq {
        start: Span,
        base: usize,
    },
    Map {
        start: Span,
        base: usize,
        keys: Keys,
        key: Option<Node<'t>>,
    },
}

impl<'t> Tree<'t> {
    fn finish(self) -> Option<Node<'t>> {
        (!self.failed && self.open.is_empty()).then_some(self.root)?
    }

    fn add(&mut self, node: Node<'t>) {
        match self.open.last_mut() {
            None if self.root.is_none() => self.root = Some(node),
            None => self.failed = true,
            Some(Open::Seq { .. }) => self.items.push(node),
            Some(Open::Map {
                base, keys, key, ..
            }) => match key.take() {
                None => *key = Some(node),
                Some(k) => {
                    let entries = &self.entries[*base..];
                    if keys.seen(&k, entries.len(), entries).is_some() {
                        self.failed = true;
                    }
                    self.entries.push((k, node));
                }
            },
        }
    }
}

impl<'t> super::yaml_fast::Sink<'t> for Tree<'t> {
    fn push(&mut self, event: Event<'t>, span: Span) {
        if self.failed {
            return;
        }
        match event {
            Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd => {}
            Event::Scalar(text, style, _, None) => {
                let value = if style == ScalarStyle::Plain {
                    match resolve_plain(text) {
                        Ok(value) => value,
                        Err(_) => {
                            self.failed = true;
                            return;
                        }
                    }
                } else {
                    Value::Str { text, plain: false }
                };
                self.add(Node { span, value });
            }
            Event::SequenceStart(0, None) => self.open.push(Open::Seq {
                start: span,
                base: self.items.len(),
            }),
            Event::MappingStart(0, None) => self.open.push(Open::Map {
                start: span,
                base: self.entries.len(),
                keys: Keys::default(),
                key: None,
            }),
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match self.open.pop() {
                    Some(Open::Seq { start, base }) if matches!(event, Event::SequenceEnd) => {
                        Node {
                            span: start.to(span),
                            value: Value::Seq(self.items.drain(base..).collect()),
                        }
                    }
                    Some(Open::Map {
                        start,
                        base,
                        key: None,
                        ..
                    }) if matches!(event, Event::MappingEnd) => Node {
                        span: start.to(span),
                        value: Value::Map(self.entries.drain(base..).collect()),
                    },
                    _ => {
                        self.failed = true;
                        return;
                    }
                };
                self.add(node);
            }
            _ => self.failed = true,
        }
    }
}

/// The keys of one mapping so far, to find a duplicate without comparing a key with every
/// key before it: a small mapping is scanned; a larger one indexes its scalar keys by hash
/// (nothing copied); the rare others (numbers with a fraction, lists, mappings) are
/// compared one by one. Equal means what `==` on [`Value`] means.
#[derive(Default)]
struct Keys {
    /// Hash of a scalar key → the first entry with that hash.
    scalars: foldhash::HashMap<u64, usize>,
    others: Vec<usize>,
}

/// Mappings with fewer entries than this are scanned.
const SCAN_KEYS: usize = 8;

#[derive(Hash)]
enum ScalarKey<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Str(&'a str, bool),
}

impl ScalarKey<'_> {
    fn of<'v>(value: &'v Value<'_>) -> Option<ScalarKey<'v>> {
        Some(match value {
            Value::Null => ScalarKey::Null,
            Value::Bool(b) => ScalarKey::Bool(*b),
            Value::Int(i) => ScalarKey::Int(*i),
            Value::Str { text, plain } => ScalarKey::Str(text, *plain),
            Value::Float(_) | Value::Seq(_) | Value::Map(_) => return None,
        })
    }

    fn hash(&self) -> u64 {
        use std::hash::BuildHasher;
        foldhash::fast::FixedState::default().hash_one(self)
    }
}

impl Keys {
    /// The earlier entry whose key equals `key`, else none, and `key` (about to become
    /// entry `at`) is remembered.
    fn seen<'e>(
        &mut self,
        key: &Node<'_>,
        at: usize,
        entries: &'e [(Node<'e>, Node<'e>)],
    ) -> Option<&'e (Node<'e>, Node<'e>)> {
        let Some(scalar) = ScalarKey::of(&key.value) else {
            let first = self
                .others
                .iter()
                .find(|&&i| entries[i].0.value == key.value);
            return match first {
                Some(&i) => Some(&entries[i]),
                None => {
                    self.others.push(at);
                    None
                }
            };
        };
        if at < SCAN_KEYS {
            return entries[..at].iter().find(|(k, _)| k.value == key.value);
        }
        if at == SCAN_KEYS {
            for (i, (k, _)) in entries[..at].iter().enumerate() {
                if let Some(s) = ScalarKey::of(&k.value) {
                    self.scalars.entry(s.hash()).or_insert(i);
                }
            }
        }
        match self.scalars.entry(scalar.hash()) {
            Entry::Occupied(first) => {
                let first = &entries[*first.get()];
                if first.0.value == key.value {
                    Some(first)
                } else {
                    // Two keys with one hash: compare with every key.
                    entries[..at].iter().find(|(k, _)| k.value == key.value)
                }
            }
            Entry::Vacant(slot) => {
                slot.insert(at);
                None
            }
        }
    }
}

fn subtree_size(node: &Node<'_>) -> usize {
    match &node.value {
        Value::Seq(items) => 1 + items.iter().map(subtree_size).sum::<usize>(),
        Value::Map(entries) => {
            1 + entries
                .iter()
                .map(|(k, v)| subtree_size(k) + subtree_size(v))
                .sum::<usize>()
        }
        _ => 1,
    }
}

fn error(message: &str, span: Span) -> YamlError {
    YamlError {
        message: message.to_string(),
        span,
        first: None,
    }
}

/// YAML 1.2 core schema resolution of a plain scalar. A number that does not fit (an
/// integer beyond 64 bits, a float beyond `f64`) is an error, not a silent string, float
/// or null.
fn resolve_plain(text: Cow<'_, str>) -> Result<Value<'_>, String> {
    Ok(resolve_plain_scalar(&text)?.unwrap_or(Value::Str { text, plain: true }))
}

/// [`resolve_plain`] of a plain scalar that is not a string; `None` for a string.
fn resolve_plain_scalar(text: &str) -> Result<Option<Value<'static>>, String> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Some(Value::Null)),
        "true" | "True" | "TRUE" => return Ok(Some(Value::Bool(true))),
        "false" | "False" | "FALSE" => return Ok(Some(Value::Bool(false))),
        // Variables, answers and journals are JSON, which has no infinity and no NaN:
        // refused rather than turned into null.
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            return Err(format!(
                "`{text}` is not a number JSON can hold (variables and journals are JSON); \
                 quote it to keep it as text"
            ));
        }
        _ => {}
    }
    let too_big = || {
        Err(format!(
            "the number `{}` does not fit: integers must lie within ±9223372036854775807 \
             and other numbers within ±1.8e308 (quote it to keep it as text)",
            shorten(text)
        ))
    };
    for (prefix, radix) in [("0x", 16), ("0o", 8)] {
        if let Some(digits) = text.strip_prefix(prefix)
            && !digits.is_empty()
            && digits.chars().all(|c| c.is_digit(radix))
        {
            return i64::from_str_radix(digits, radix)
                .map_or_else(|_| too_big(), |i| Ok(Some(Value::Int(i))));
        }
    }
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E');
    if text.chars().all(numeric) && text.chars().any(|c| c.is_ascii_digit()) {
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Some(Value::Int(i)));
        }
        let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
        if digits.chars().all(|c| c.is_ascii_digit()) {
            return too_big();
        }
        if let Ok(f) = text.parse::<f64>() {
            return if f.is_finite() {
                Ok(Some(Value::Float(f)))
            } else {
                too_big()
            };
        }
    }
    Ok(None)
}

/// At most 40 characters of `text`, for messages.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice<'a>(text: &'a str, n: &Node) -> &'a str {
        &text[n.span.offset..n.span.end()]
    }

    #[test]
    fn numbers_that_do_not_fit_are_errors_at_their_place() {
        for (text, bad) in [
            ("a: 1e400\n", "1e400"),
            ("a: -1e400\n", "-1e400"),
            (
                "a: 123456789012345678901234567890\n",
                "123456789012345678901234567890",
            ),
            ("a: [1, -99999999999999999999]\n", "-99999999999999999999"),
            ("a: 0xFFFFFFFFFFFFFFFFFF\n", "0xFFFFFFFFFFFFFFFFFF"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.message.contains("does not fit"), "{text}: {}", e.message);
            assert_eq!(&text[e.span.offset..e.span.end()], bad, "{text}");
        }
        // What fits is read; quoted, it is text.
        let root = parse("a: 9223372036854775807\nb: 1e300\nc: \"1e400\"\nd: 1.5e-400\n").unwrap();
        assert_eq!(root.get("a").unwrap().value, Value::Int(i64::MAX));
        assert_eq!(root.get("b").unwrap().value, Value::Float(1e300));
        assert_eq!(root.get("c").unwrap().as_str(), Some("1e400"));
        assert_eq!(root.get("d").unwrap().value, Value::Float(0.0));
    }

    #[test]
    fn a_second_document_or_trailing_garbage_is_an_error() {
        let text = "a: 1\n---\nb: 2\n";
        let e = parse(text).unwrap_err();
        assert!(e.message.contains("second YAML document"), "{}", e.message);
        assert_eq!(e.span.offset, text.find("---").unwrap());
        // An explicit end of the one document is fine.
        assert!(parse("---\na: 1\n...\n").is_ok());
        assert!(parse("").is_ok());
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(parse(&deep).unwrap_err().message.contains("nest deeper"));
        // Far deeper input is refused (by the scanner or here), never a stack overflow.
        assert!(parse(&"[".repeat(200_000)).is_err());
        assert!(parse(&"a: {".repeat(50_000)).is_err());
    }

    #[test]
    fn scalars_resolve_with_the_core_schema() {
        let text = "a: 1\nb: 1.5\nc: true\nd: ~\ne: hello\nf: '1'\ng: 0x1F\nh: yes\n";
        let root = parse(text).unwrap();
        assert_eq!(root.get("a").unwrap().value, Value::Int(1));
        assert_eq!(root.get("b").unwrap().value, Value::Float(1.5));
        assert_eq!(root.get("c").unwrap().value, Value::Bool(true));
        assert!(root.get("d").unwrap().is_null());
        assert_eq!(root.get("e").unwrap().as_str(), Some("hello"));
        assert_eq!(root.get("f").unwrap().as_str(), Some("1"));
        assert_eq!(root.get("g").unwrap().value, Value::Int(31));
        // YAML 1.2: `yes` is a string, not a boolean
        assert_eq!(root.get("h").unwrap().as_str(), Some("yes"));
    }

    #[test]
    fn spans_point_at_keys_and_values_even_after_multibyte_text() {
        let text = "name: \"Prüfung – Ω\"\ntasks:\n  - id: Activity_1\n";
        let root = parse(text).unwrap();
        let tasks = root.get("tasks").unwrap().as_seq().unwrap();
        let id = tasks[0].get("id").unwrap();
        assert_eq!(slice(text, id), "Activity_1");
        let (key, _) = &root.as_map().unwrap()[1];
        assert_eq!(slice(text, key), "tasks");
    }

    #[test]
    fn duplicate_keys_are_errors_pointing_at_both() {
        let text = "a: 1\nb: 2\na: 3\n";
        let err = parse(text).unwrap_err();
        assert_eq!(err.message, "duplicate key `a`");
        assert_eq!(err.span.offset, 10);
        assert_eq!(err.first.unwrap().offset, 0);
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        let text = "a: [1, 2\nb: 3\n";
        let err = parse(text).unwrap_err();
        assert!(err.span.offset > 0, "{err:?}");
    }

    #[test]
    fn aliases_expand_and_bombs_are_refused() {
        let root = parse("base: &b {x: 1}\nuse: *b\n").unwrap();
        assert_eq!(
            root.get("use").unwrap().get("x").unwrap().value,
            Value::Int(1)
        );
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let prev = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        assert!(parse(&bomb).unwrap_err().message.contains("too many nodes"));
    }

    #[test]
    fn nodes_written_out_are_not_limited() {
        let big = format!("[{}]", "0, ".repeat(MAX_NODES + 1));
        let root = parse(&big).unwrap();
        assert_eq!(root.as_seq().unwrap().len(), MAX_NODES + 1);
    }

    #[test]
    fn empty_documents_are_null() {
        assert!(parse("").unwrap().is_null());
        assert!(parse("# only a comment\n").unwrap().is_null());
    }
}
