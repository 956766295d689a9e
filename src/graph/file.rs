//! A graph file as text: its triples and prefixes (Turtle, TriG, N-Quads, by extension), and
//! where an IRI is written in it (for a diagnostic at its line). What `import` and `shacl`
//! both read.

use oxrdf::Triple;

use crate::diag::Diagnostic;
use crate::source::{SourceFile, Span};

/// The syntax of a graph file, from its extension: `.trig`, `.nq`/`.nquads`, else Turtle.
fn syntax(source: &SourceFile) -> &'static str {
    match source.path().extension().and_then(|e| e.to_str()) {
        Some("trig") => "trig",
        Some("nq" | "nquads") => "nquads",
        _ => "turtle",
    }
}

/// The triples of a graph file and its prefixes.
pub(crate) type Parsed = (Vec<Triple>, Vec<(String, String)>);

pub(crate) fn parse(source: &SourceFile) -> Result<Parsed, Vec<Diagnostic>> {
    let text = source.text();
    let syntax_error = |e: oxttl::TurtleSyntaxError| {
        let loc = e.location();
        let start = loc.start.offset as usize;
        let end = (loc.end.offset as usize)
            .max(start + 1)
            .min(text.len().max(start + 1));
        vec![
            Diagnostic::error(
                "graph::syntax",
                format!("the graph is not valid: {}", e.message()),
            )
            .at(
                source,
                Span::new(start.min(text.len()), end - start),
                Some(e.message().to_owned()),
            )
            .with_help(
                "graph import reads Turtle (RDF 1.2 / Turtle-star), TriG (.trig) and N-Quads (.nq)",
            ),
        ]
    };
    let mut triples = Vec::new();
    let mut prefixes = Vec::new();
    match syntax(source) {
        "trig" => {
            let mut p = oxttl::TriGParser::new().for_slice(text);
            for q in p.by_ref() {
                triples.push(Triple::from(q.map_err(syntax_error)?));
            }
            prefixes = p
                .prefixes()
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .collect();
        }
        "nquads" => {
            for q in oxttl::NQuadsParser::new().for_slice(text) {
                triples.push(Triple::from(q.map_err(syntax_error)?));
            }
        }
        _ => {
            let mut p = oxttl::TurtleParser::new().for_slice(text);
            for t in p.by_ref() {
                triples.push(t.map_err(syntax_error)?);
            }
            prefixes = p
                .prefixes()
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .collect();
        }
    }
    Ok((triples, prefixes))
}

/// Where an IRI is written in a graph file: its first mention as a subject (at the start of
/// a line), else its first mention anywhere, as `<iri>` or a prefixed name (the start of the
/// file when it is not found).
pub(crate) fn locate(source: &SourceFile, prefixes: &[(String, String)], iri: &str) -> Span {
    let text = source.text();
    let mut forms = vec![format!("<{iri}>")];
    for (p, ns) in prefixes {
        if let Some(local) = iri.strip_prefix(ns.as_str()) {
            forms.push(format!("{p}:{local}"));
        }
    }
    // The first mention at the start of a line (where a subject is written), else the
    // first mention anywhere.
    let mut first: Option<(usize, usize)> = None;
    let mut as_subject: Option<(usize, usize)> = None;
    for form in &forms {
        let mut from = 0;
        while let Some(at) = text[from..].find(form.as_str()) {
            let at = from + at;
            let end = at + form.len();
            let bounded = text[end..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | ':')));
            let before_ok = text[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | ':')));
            if bounded && before_ok {
                if first.is_none_or(|(b, _)| at < b) {
                    first = Some((at, form.len()));
                }
                let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
                if text[line_start..at].trim().is_empty() {
                    if as_subject.is_none_or(|(b, _)| at < b) {
                        as_subject = Some((at, form.len()));
                    }
                    break;
                }
            }
            from = end;
        }
    }
    let best = as_subject.or(first);
    best.map_or(Span::new(0, 0), |(at, len)| Span::new(at, len))
}
