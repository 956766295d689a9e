//! Diagnostics about user files: one type for every problem `validate`, `list` and the
//! loaders report, rendered like rustc (file:line, a source snippet, a help line) through
//! `miette`, or as JSON for machines.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteSpanContents, SourceCode,
    SpanContents,
};
use serde::Serialize;

use crate::source::{SourceFile, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A span with an optional message, in the diagnostic's file.
#[derive(Debug, Clone)]
pub struct Label {
    pub span: Span,
    pub message: Option<String>,
}

/// One problem in a user file.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code such as `config::unknown_key` (for `--json`, docs and tests).
    pub code: &'static str,
    pub message: String,
    /// The file the labels point into; `None` for problems with no file (e.g. a folder).
    pub file: Option<SourceFile>,
    /// The primary label first.
    pub labels: Vec<Label>,
    pub help: Option<String>,
    /// A path named when there is no source text to show (e.g. a missing file).
    pub path: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            file: None,
            labels: Vec::new(),
            help: None,
            path: None,
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// Point at `span` in `file`, with an optional label text.
    pub fn at(mut self, file: &SourceFile, span: Span, label: impl Into<Option<String>>) -> Self {
        self.file = Some(file.clone());
        self.labels.push(Label {
            span,
            message: label.into(),
        });
        self
    }

    /// A further label in the same file.
    pub fn also(mut self, span: Span, label: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: Some(label.into()),
        });
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Name a path for a diagnostic that has no source snippet.
    pub fn in_path(mut self, path: impl fmt::Display) -> Self {
        self.path = Some(path.to_string());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The file name this diagnostic is about, when any.
    pub fn file_name(&self) -> Option<String> {
        self.file
            .as_ref()
            .map(|f| f.path().display().to_string())
            .or_else(|| self.path.clone())
    }

    /// `file:line:col` of the primary label, or the bare path.
    pub fn location(&self) -> Option<String> {
        let name = self.file_name()?;
        match (&self.file, self.labels.first()) {
            (Some(file), Some(label)) => {
                let lc = file.line_col(label.span.offset);
                Some(format!("{name}:{}:{}", lc.line, lc.column))
            }
            _ => Some(name),
        }
    }

    /// One line: `error: file:line:col: message`.
    pub fn one_line(&self) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.location() {
            Some(loc) => format!("{sev}: {loc}: {}", self.message),
            None => format!("{sev}: {}", self.message),
        }
    }

    /// The machine-readable form used by `--json`.
    pub fn to_json(&self) -> JsonDiagnostic {
        let primary = self.file.as_ref().zip(self.labels.first());
        let (line, column) = match primary {
            Some((file, label)) => {
                let lc = file.line_col(label.span.offset);
                (Some(lc.line), Some(lc.column))
            }
            None => (None, None),
        };
        JsonDiagnostic {
            severity: self.severity,
            code: self.code,
            message: self.message.clone(),
            file: self.file_name(),
            line,
            column,
            label: self.labels.first().and_then(|l| l.message.clone()),
            help: self.help.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct JsonDiagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// How to draw diagnostics on a terminal.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    pub color: bool,
    pub unicode: bool,
    pub width: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            color: false,
            unicode: true,
            width: 100,
        }
    }
}

/// `noun` with its indefinite article: "a task", "an exclusiveGateway", "an error".
pub fn with_article(noun: &str) -> String {
    let vowel = noun.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']);
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

/// Columns past this are not shown in a snippet (the renderer counts columns in 16 bits).
const MAX_SNIPPET_COLUMN: usize = 4_096;

/// Render one diagnostic like rustc: header, `file:line:col`, a snippet, labels, help.
pub fn render(diag: &Diagnostic, opts: RenderOptions) -> String {
    let theme = match (opts.unicode, opts.color) {
        (true, true) => GraphicalTheme::unicode(),
        (true, false) => GraphicalTheme::unicode_nocolor(),
        (false, _) => GraphicalTheme::none(),
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_links(false)
        .with_context_lines(1);
    let mut out = String::new();
    if diag.file.is_none()
        && let Some(path) = &diag.path
    {
        out.push_str(&format!("  in {path}\n"));
    }
    // A label on a very long line (a one-line BPMN export) is shown without its snippet:
    // the renderer cannot place it, and the snippet would be unreadable anyway.
    if diag.labels.iter().any(|l| l.span.offset > 0)
        && let Some(file) = &diag.file
        && diag
            .labels
            .iter()
            .any(|l| file.line_col(l.span.offset).column > MAX_SNIPPET_COLUMN)
    {
        let mut plain = diag.clone();
        plain.file = None;
        plain.labels.clear();
        let mut body = String::new();
        if handler.render_report(&mut body, &Report(&plain)).is_err() {
            return diag.one_line() + "\n";
        }
        if let Some(loc) = diag.location() {
            body.push_str(&format!("  at {loc} (the line is too long to show)\n"));
        }
        body.push_str(&out);
        return body;
    }
    let mut body = String::new();
    if handler.render_report(&mut body, &Report(diag)).is_err() {
        // Rendering can only fail on a formatter error; fall back to one line.
        return diag.one_line() + "\n";
    }
    body.push_str(&out);
    body
}

/// Adapter from [`Diagnostic`] to miette's trait.
struct Report<'a>(&'a Diagnostic);

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.0.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.0.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.0
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.0.file.as_ref().map(|f| f as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let file = self.0.file.as_ref()?;
        let len = file.text().len();
        Some(Box::new(self.0.labels.iter().enumerate().map(
            move |(i, l)| {
                let offset = l.span.offset.min(len);
                let span_len = l.span.len.min(len - offset);
                let span = miette::SourceSpan::new(offset.into(), span_len);
                if i == 0 {
                    LabeledSpan::new_primary_with_span(l.message.clone(), span)
                } else {
                    LabeledSpan::new_with_span(l.message.clone(), span)
                }
            },
        )))
    }
}

impl SourceCode for SourceFile {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, miette::MietteError> {
        let inner = self.text().read_span(span, before, after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.path().display().to_string(),
            inner.data(),
            *inner.span(),
            inner.line(),
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// At most `max` characters of `text` on one line: runs of whitespace (newlines
/// included) become one space, and a cut is marked with `…`.
pub fn excerpt(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// The candidate closest to `name` when it is close enough to be a likely typo.
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (name.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// An error with something to say about what to do (the help line under it).
pub trait Help: std::fmt::Display {
    fn help(&self) -> Option<String>;
}

/// An error with its causes as a person reads it, `what: why: deeper why`; a cause whose
/// text the message already holds is not repeated (many errors print their source).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !said.is_empty() && !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// `1 noun` or `n nouns`, for messages.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// "a, b and c" with backticks, for help texts; at most `max` names then "…".
pub fn name_list<S: AsRef<str>>(names: &[S], max: usize) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(max)
        .map(|n| format!("`{}`", n.as_ref()))
        .collect();
    let mut s = match shown.len() {
        0 => "none".to_string(),
        1 => shown[0].clone(),
        n => format!("{} and {}", shown[..n - 1].join(", "), shown[n - 1]),
    };
    if names.len() > max {
        s.push_str(&format!(" (and {} more)", names.len() - max));
    }
    s
}

/// `text` with every control character (escape sequences included) shown as `\u{..}`,
/// so that text from a model, a tool or a file cannot drive the terminal.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Lines for the terminal with every control character shown as `\u{..}` but line ends,
/// tabs and colour (SGR: `ESC [ digits/; m`) sequences: what the views write, so that text
/// from a journal (a model's reason, a person's `--reason` or `--by`, a tool's output)
/// can colour a word at most, never move the cursor, clear the screen or set a title.
pub fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}' {
            let rest = &text[i + 1..];
            let sgr = rest.strip_prefix('[').and_then(|r| {
                let end = r.find(|ch: char| !(ch.is_ascii_digit() || ch == ';'))?;
                (r.as_bytes()[end] == b'm').then_some(end + 2)
            });
            if let Some(len) = sgr {
                out.push_str(&text[i..i + 1 + len]);
                for _ in 0..len {
                    chars.next();
                }
                continue;
            }
        }
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_keeps_colour_and_shows_every_other_control() {
        let red = "\u{1b}[31mred\u{1b}[0m";
        assert_eq!(terminal_safe(red), red);
        assert_eq!(terminal_safe("a\nb\tc"), "a\nb\tc");
        assert_eq!(terminal_safe("\u{1b}[2Jgone"), "\\u{1b}[2Jgone");
        assert_eq!(
            terminal_safe("\u{1b}]0;owned\u{7}x"),
            "\\u{1b}]0;owned\\u{7}x"
        );
        assert_eq!(terminal_safe("\r\u{1b}[1A"), "\\u{d}\\u{1b}[1A");
    }

    #[test]
    fn a_chain_names_each_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("lost the engine")]
        struct Outer(#[source] Inner);
        #[derive(Debug, thiserror::Error)]
        #[error("ping: {0}")]
        struct Inner(#[source] std::io::Error);
        let refused = || std::io::Error::other("connection refused");
        assert_eq!(
            chain(&Outer(Inner(refused()))),
            "lost the engine: ping: connection refused"
        );
        assert_eq!(chain(&refused()), "connection refused");
    }

    #[test]
    fn suggestions_catch_typos_but_not_unrelated_words() {
        let keys = ["variables", "tasks", "gateways", "hooks"];
        assert_eq!(did_you_mean("varaibles", keys), Some("variables"));
        assert_eq!(did_you_mean("hook", keys), Some("hooks"));
        assert_eq!(did_you_mean("Tasks", keys), Some("tasks"));
        assert_eq!(did_you_mean("process_variables", keys), None);
        assert_eq!(did_you_mean("x", keys), None);
    }

    #[test]
    fn rendering_shows_file_line_snippet_and_help() {
        let file = SourceFile::new("app/config.yaml", "flow:\n  idd: x\n");
        let d = Diagnostic::warning("config::unknown_key", "unknown key `idd`")
            .at(&file, Span::new(8, 3), "not a key of `flow`".to_string())
            .with_help("did you mean `id`?");
        let out = render(&d, RenderOptions::default());
        assert!(out.contains("app/config.yaml:2:3"), "{out}");
        assert!(out.contains("idd: x"), "{out}");
        assert!(out.contains("did you mean `id`?"), "{out}");
        assert_eq!(
            d.one_line(),
            "warning: app/config.yaml:2:3: unknown key `idd`"
        );
    }
}
