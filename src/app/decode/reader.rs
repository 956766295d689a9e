//! The decoding context and its generic readers: diagnostics, mappings with unknown-key
//! warnings, strings, booleans, numbers, lists and string maps.

use crate::diag::{Diagnostic, did_you_mean, name_list};
use crate::source::{SourceFile, Span};

use super::super::config::{Deadline, Located, OnFailure, parse_timeout};
use super::super::yaml::{Node, Value};

/// Keys people write that mean something else in this schema.
const KNOWN_MISTAKES: &[(&str, &str)] = &[
    (
        "process_variables",
        "the initial variables go under `variables:`",
    ),
    (
        "engine",
        "the engine is configured under `workflow_engine:`",
    ),
    (
        "permissions",
        "hook permissions go under `action_permissions:`",
    ),
    ("permitted", "write `permitted_actions:`"),
    ("prohibited", "write `prohibited_actions:`"),
];

/// The file being decoded and the diagnostics found so far.
pub(super) struct Cx<'f> {
    pub(super) file: &'f SourceFile,
    pub(super) diags: Vec<Diagnostic>,
}

/// The entries of a mapping, with null values treated as absent.
pub(super) struct Fields<'n> {
    entries: &'n [(Node<'n>, Node<'n>)],
}

impl<'n> Fields<'n> {
    pub(super) fn get(&self, key: &str) -> Option<&'n Node<'n>> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
            .filter(|v| !v.is_null())
    }

    pub(super) fn key_span(&self, key: &str) -> Option<Span> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, _)| k.span)
    }
}

const EMPTY: &[(Node<'static>, Node<'static>)] = &[];

/// Help for an unknown `name`: the close one among `names` ("did you mean `x`?"), else
/// "`<all>` are `a`, `b` and `c`" listing at most `max` of them.
pub(super) fn did_you_mean_or_list(name: &str, names: &[&str], max: usize, all: &str) -> String {
    did_you_mean(name, names.iter().copied())
        .map(|s| format!("did you mean `{s}`?"))
        .unwrap_or_else(|| format!("{all} are {}", name_list(names, max)))
}

impl Cx<'_> {
    fn push(&mut self, d: Diagnostic, span: Span, label: &str, help: Option<String>) {
        let mut d = d.at(self.file, span, label.to_string());
        d.help = help;
        self.diags.push(d);
    }

    pub(super) fn error(
        &mut self,
        code: &'static str,
        span: Span,
        message: String,
        label: &str,
        help: Option<String>,
    ) {
        self.push(Diagnostic::error(code, message), span, label, help);
    }

    pub(super) fn warn(
        &mut self,
        code: &'static str,
        span: Span,
        message: String,
        label: &str,
        help: Option<String>,
    ) {
        self.push(Diagnostic::warning(code, message), span, label, help);
    }

    pub(super) fn type_error(&mut self, node: &Node, what: &str, expected: &str) {
        self.error(
            "config::type",
            node.span,
            format!("{what} must be {expected}, not {}", node.kind()),
            &format!("expected {expected}"),
            None,
        );
    }

    /// The entries of a mapping (null reads as empty); anything else is a type error.
    pub(super) fn entries<'n>(
        &mut self,
        node: &'n Node<'n>,
        what: &str,
        expected: &str,
    ) -> &'n [(Node<'n>, Node<'n>)] {
        match &node.value {
            Value::Map(entries) => entries.as_slice(),
            Value::Null => EMPTY,
            _ => {
                self.type_error(node, what, expected);
                EMPTY
            }
        }
    }

    /// The fields of a mapping; unknown keys are warned about (with a suggestion).
    pub(super) fn fields<'n>(
        &mut self,
        node: &'n Node<'n>,
        what: &str,
        known: &[&str],
    ) -> Fields<'n> {
        let entries = self.entries(node, what, "a mapping");
        for (key, _) in entries {
            let Some(name) = key.as_str() else {
                self.error(
                    "config::type",
                    key.span,
                    format!("keys of {what} must be strings"),
                    "not a string",
                    None,
                );
                continue;
            };
            if known.contains(&name) {
                continue;
            }
            let mistake = KNOWN_MISTAKES.iter().find(|(k, _)| *k == name);
            let help = mistake.map(|(_, h)| h.to_string()).unwrap_or_else(|| {
                did_you_mean_or_list(name, known, 12, &format!("the keys of {what}"))
            });
            // A misspelt key (`output_maping`) would drop what it says without a word: an
            // error. A key nothing resembles is only ignored.
            if mistake.is_none() && crate::diag::did_you_mean(name, known.iter().copied()).is_some()
            {
                self.error(
                    "config::unknown_key",
                    key.span,
                    format!("unknown key `{name}` in {what}: a misspelling would be ignored"),
                    "unknown key",
                    Some(help),
                );
                continue;
            }
            self.warn(
                "config::unknown_key",
                key.span,
                format!("unknown key `{name}` in {what}; it is ignored"),
                "unknown key",
                Some(help),
            );
        }
        Fields { entries }
    }

    /// Reports an unknown `mode` of a `kind` ("task", "gateway"), which has two `modes`.
    pub(super) fn unknown_mode(&mut self, kind: &str, mode: &Located<String>, modes: [&str; 2]) {
        let help = did_you_mean_or_list(&mode.value, &modes, modes.len(), "the modes");
        self.error(
            "config::unknown_mode",
            mode.span,
            format!("unknown {kind} mode `{}`", mode.value),
            "unknown mode",
            Some(help),
        );
    }

    /// Warns that a secret (`message`) is written into the shared config file.
    pub(super) fn secret_in_file(&mut self, span: Span, message: String, help: String) {
        self.warn(
            "config::secret",
            span,
            message,
            "secret in a file that is shared and committed",
            Some(help),
        );
    }

    /// Reads `key`, a secret (`secret` says which), warning that it should be named through
    /// `<key>_env:` instead of written into the file.
    pub(super) fn opt_secret(
        &mut self,
        f: &Fields,
        key: &str,
        what: &str,
        secret: &str,
    ) -> Option<Located<String>> {
        let value = self.opt_string(f, key, what);
        if let Some(v) = &value {
            self.secret_in_file(
                v.span,
                format!("{secret} is written into the config file"),
                format!(
                    "put it in an environment variable and name that variable with `{key}_env:`"
                ),
            );
        }
        value
    }

    pub(super) fn string(&mut self, node: &Node, what: &str) -> Option<Located<String>> {
        match node.scalar_text(self.file.text()) {
            Some(text) => Some(Located::new(text, node.span)),
            None => {
                self.type_error(node, what, "a string");
                None
            }
        }
    }

    /// [`Self::string`], with `what` only written out for a diagnostic.
    pub(super) fn string_of(
        &mut self,
        node: &Node,
        what: impl FnOnce() -> String,
    ) -> Option<Located<String>> {
        match node.scalar_text(self.file.text()) {
            Some(text) => Some(Located::new(text, node.span)),
            None => {
                self.type_error(node, &what(), "a string");
                None
            }
        }
    }

    pub(super) fn opt_string(
        &mut self,
        f: &Fields,
        key: &str,
        what: &str,
    ) -> Option<Located<String>> {
        let node = f.get(key)?;
        match node.scalar_text(self.file.text()) {
            Some(text) => Some(Located::new(text, node.span)),
            None => {
                self.type_error(node, &format!("`{key}` of {what}"), "a string");
                None
            }
        }
    }

    pub(super) fn opt_bool(&mut self, f: &Fields, key: &str, what: &str) -> Option<Located<bool>> {
        let node = f.get(key)?;
        match node.value {
            Value::Bool(b) => Some(Located::new(b, node.span)),
            _ => {
                self.type_error(node, &format!("`{key}` of {what}"), "true or false");
                None
            }
        }
    }

    pub(super) fn opt_number(&mut self, f: &Fields, key: &str, what: &str) -> Option<Located<f64>> {
        let node = f.get(key)?;
        match node.value {
            Value::Int(i) => Some(Located::new(i as f64, node.span)),
            Value::Float(x) if x.is_finite() => Some(Located::new(x, node.span)),
            _ => {
                self.type_error(node, &format!("`{key}` of {what}"), "a number");
                None
            }
        }
    }

    /// A whole number, at least `min`.
    pub(super) fn opt_count(
        &mut self,
        f: &Fields,
        key: &str,
        what: &str,
        min: u64,
    ) -> Option<Located<u64>> {
        let node = f.get(key)?;
        match node.value {
            Value::Int(i) if i >= 0 && (i as u64) >= min => Some(Located::new(i as u64, node.span)),
            _ => {
                let expected = if min == 0 {
                    "a whole number (0 or more)".to_string()
                } else {
                    format!("a whole number ({min} or more)")
                };
                self.type_error(node, &format!("`{key}` of {what}"), &expected);
                None
            }
        }
    }

    /// A positive number of seconds.
    pub(super) fn opt_seconds(
        &mut self,
        f: &Fields,
        key: &str,
        what: &str,
    ) -> Option<Located<f64>> {
        let node = f.get(key)?;
        match node.value {
            Value::Int(i) if i > 0 => Some(Located::new(i as f64, node.span)),
            Value::Float(x) if x.is_finite() && x > 0.0 && x <= 1.0e9 => {
                Some(Located::new(x, node.span))
            }
            _ => {
                self.type_error(
                    node,
                    &format!("`{key}` of {what}"),
                    "a positive number of seconds",
                );
                None
            }
        }
    }

    /// A duration: an ISO 8601 one (`PT10M`), a number with a unit (`30s`, `10m`, `2h`,
    /// `1d`), or a plain number of seconds.
    pub(super) fn opt_duration(
        &mut self,
        f: &Fields,
        key: &str,
        what: &str,
    ) -> Option<Located<std::time::Duration>> {
        let node = f.get(key)?;
        let text = match node.value {
            Value::Int(i) => i.to_string(),
            Value::Float(x) => x.to_string(),
            _ => node.scalar_text(self.file.text()).unwrap_or_default(),
        };
        match parse_timeout(&text) {
            Some(d) => Some(Located::new(d, node.span)),
            None => {
                self.type_error(
                    node,
                    &format!("`{key}` of {what}"),
                    "a duration (PT10M, 30s, 10m, 2h, 1d)",
                );
                None
            }
        }
    }

    /// `deadline:` (an ISO 8601 duration) and `on_timeout:` (the answer given then).
    pub(super) fn deadline(&mut self, f: &Fields, what: &str) -> Option<Deadline> {
        let on_timeout = f
            .get("on_timeout")
            .map(|n| Located::new(n.to_json(), n.span));
        let Some(text) = self.opt_string(f, "deadline", what) else {
            if let Some(t) = &on_timeout {
                self.error(
                    "config::value",
                    t.span,
                    format!("`on_timeout` of {what} has no `deadline`"),
                    "never used",
                    Some("add `deadline: PT24H` (an ISO 8601 duration)".to_string()),
                );
            }
            return None;
        };
        match crate::bpmn::parse_duration(&text.value) {
            Ok(after) => Some(Deadline {
                after: Located::new(after, text.span),
                on_timeout,
            }),
            Err(why) => {
                self.error(
                    "config::value",
                    text.span,
                    format!("`deadline` of {what}: {why}"),
                    "not a duration",
                    Some("write an ISO 8601 duration: PT30M, PT24H, P2D".to_string()),
                );
                None
            }
        }
    }

    /// `on_failure:`, one of `allowed` for this kind of control point.
    pub(super) fn on_failure(
        &mut self,
        f: &Fields,
        what: &str,
        allowed: &[OnFailure],
    ) -> Option<Located<OnFailure>> {
        let text = self.opt_string(f, "on_failure", what)?;
        let names: Vec<&str> = allowed.iter().map(|a| a.as_str()).collect();
        match allowed.iter().find(|a| a.as_str() == text.value) {
            Some(a) => Some(Located::new(*a, text.span)),
            None => {
                self.error(
                    "config::value",
                    text.span,
                    format!("`on_failure: {}` is not possible for {what}", text.value),
                    "not possible here",
                    Some(format!("{what} may say {}", name_list(&names, names.len()))),
                );
                None
            }
        }
    }

    pub(super) fn string_list(&mut self, node: &Node, what: &str) -> Vec<Located<String>> {
        match &node.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|n| self.string_of(n, || format!("an item of {what}")))
                .collect(),
            Value::Null => Vec::new(),
            _ => {
                self.type_error(node, what, "a list");
                Vec::new()
            }
        }
    }

    /// A mapping of string to string (`input_mapping`, `output_mapping`); `what` is
    /// written out only for a diagnostic.
    pub(super) fn string_map(
        &mut self,
        node: &Node,
        what: impl Fn() -> String,
    ) -> Vec<(Located<String>, Located<String>)> {
        let entries = match &node.value {
            Value::Map(entries) => entries.as_slice(),
            Value::Null => EMPTY,
            _ => {
                self.type_error(node, &what(), "a mapping of names");
                EMPTY
            }
        };
        entries
            .iter()
            .filter_map(|(k, v)| {
                let name = self.string_of(k, &what)?;
                Some((
                    name,
                    self.string_of(v, || format!("a value of {}", what()))?,
                ))
            })
            .collect()
    }

    /// The entries of a mapping keyed by names (`expected` describes it), each decoded by
    /// `item` from its name (`key` says what a name is) and value; entries whose key is
    /// not a string are reported and skipped.
    pub(super) fn named_entries<T>(
        &mut self,
        node: &Node,
        what: &str,
        expected: &str,
        key: &str,
        mut item: impl FnMut(&mut Self, Located<String>, &Node) -> Option<T>,
    ) -> Vec<T> {
        let entries = self.entries(node, what, expected);
        entries
            .iter()
            .filter_map(|(k, v)| {
                let name = self.string(k, key)?;
                item(self, name, v)
            })
            .collect()
    }

    pub(super) fn seq<'n>(&mut self, node: &'n Node<'n>, what: &str) -> &'n [Node<'n>] {
        match &node.value {
            Value::Seq(items) => items,
            Value::Null => &[],
            _ => {
                self.type_error(node, what, "a list");
                &[]
            }
        }
    }
}
