//! A run's journal in other formats: JSON lines (the audit trail as written, with its
//! hash chain) and IEEE 1849 XES (an event log process-mining tools read).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::event::{Event, Record};

/// The records as JSON lines, one per record, each ending in a newline. Records read from
/// a journal serialize to the same bytes as their lines (the chain checks out).
pub fn jsonl(records: &[Record]) -> String {
    let mut out = String::new();
    for record in records {
        // A record read back always serializes.
        out.push_str(&serde_json::to_string(record).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// The records as an XES 1.0 log (IEEE 1849): one trace for the run (`concept:name` =
/// `run_id`), one event per record that means an activity happened: a node entered
/// (`lifecycle:transition` start), a task finished (complete, with its status and
/// `org:resource` = who decided), a gateway routed, a hook evaluated (with its action), the
/// run finished. Other records are left out.
pub fn xes(run_id: &str, records: &[Record]) -> String {
    // Element names, from the records that give them.
    let mut names: HashMap<&str, &str> = HashMap::new();
    for r in records {
        if let Event::NodeEntered {
            node,
            name: Some(name),
            ..
        } = &r.event
            && !name.is_empty()
        {
            names.insert(node, name);
        }
    }
    let name_of = |id: &str| names.get(id).copied().unwrap_or(id).to_string();

    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str("<log xes.version=\"1.0\" xmlns=\"http://www.xes-standard.org/\">\n");
    for (name, prefix, uri) in [
        (
            "Concept",
            "concept",
            "http://www.xes-standard.org/concept.xesext",
        ),
        ("Time", "time", "http://www.xes-standard.org/time.xesext"),
        (
            "Lifecycle",
            "lifecycle",
            "http://www.xes-standard.org/lifecycle.xesext",
        ),
        (
            "Organizational",
            "org",
            "http://www.xes-standard.org/org.xesext",
        ),
    ] {
        let _ = writeln!(
            out,
            "  <extension name=\"{name}\" prefix=\"{prefix}\" uri=\"{uri}\"/>"
        );
    }
    out.push_str("  <global scope=\"trace\">\n    <string key=\"concept:name\" value=\"__INVALID__\"/>\n  </global>\n");
    out.push_str("  <global scope=\"event\">\n    <string key=\"concept:name\" value=\"__INVALID__\"/>\n    <date key=\"time:timestamp\" value=\"1970-01-01T00:00:00.000+00:00\"/>\n    <string key=\"lifecycle:transition\" value=\"complete\"/>\n  </global>\n");
    out.push_str("  <classifier name=\"Activity\" keys=\"concept:name\"/>\n");
    out.push_str(
        "  <classifier name=\"Activity with transition\" keys=\"concept:name lifecycle:transition\"/>\n",
    );
    out.push_str("  <string key=\"concept:name\" value=\"cuga-flo runs\"/>\n");

    out.push_str("  <trace>\n");
    attr(&mut out, 4, "string", "concept:name", run_id);
    for r in records {
        if let Event::RunStarted {
            app,
            process_key,
            process_id,
            engine,
            app_digest,
            ..
        } = &r.event
        {
            attr(&mut out, 4, "string", "app", app);
            attr(&mut out, 4, "string", "process_key", process_key);
            attr(&mut out, 4, "string", "process_id", process_id);
            attr(&mut out, 4, "string", "engine", engine);
            if let Some(d) = app_digest {
                attr(&mut out, 4, "string", "app_digest", d);
            }
            break;
        }
    }
    for r in records {
        let mut extra: Vec<(&str, String)> = Vec::new();
        let (element, name, transition, resource) = match &r.event {
            Event::NodeEntered {
                node, kind, name, ..
            } => {
                extra.push(("kind", kind.clone()));
                let name = name
                    .clone()
                    .filter(|n| !n.is_empty())
                    .unwrap_or(node.clone());
                (node.as_str(), name, "start", None)
            }
            Event::TaskFinished {
                node,
                status,
                decided_by,
                ..
            } => {
                extra.push(("status", enum_text(status)));
                (
                    node.as_str(),
                    name_of(node),
                    "complete",
                    Some(enum_text(decided_by)),
                )
            }
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                ..
            } => {
                extra.push(("flows", flows.join(",")));
                (
                    node.as_str(),
                    name_of(node),
                    "complete",
                    Some(enum_text(decided_by)),
                )
            }
            Event::HookEvaluated {
                hook,
                flow,
                action,
                decided_by,
                ..
            } => {
                extra.push(("action", enum_text(action)));
                extra.push(("flow", flow.clone()));
                (
                    hook.as_str(),
                    hook.clone(),
                    "complete",
                    Some(enum_text(decided_by)),
                )
            }
            Event::RunFinished { status, .. } => {
                extra.push(("status", enum_text(status)));
                (run_id, "run finished".to_string(), "complete", None)
            }
            _ => continue,
        };
        out.push_str("    <event>\n");
        attr(&mut out, 6, "string", "concept:name", &name);
        attr(&mut out, 6, "date", "time:timestamp", &iso8601(r.at_ms));
        attr(&mut out, 6, "string", "lifecycle:transition", transition);
        if let Some(resource) = resource {
            attr(&mut out, 6, "string", "org:resource", &resource);
        }
        attr(&mut out, 6, "string", "element", element);
        attr(&mut out, 6, "string", "event", r.event.name());
        attr(&mut out, 6, "string", "seq", &r.seq.to_string());
        for (key, value) in extra {
            attr(&mut out, 6, "string", key, &value);
        }
        out.push_str("    </event>\n");
    }
    out.push_str("  </trace>\n</log>\n");
    out
}

/// A value's JSON text without quotes (`completed`, `model`, `SKIP_TO`).
fn enum_text<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn attr(out: &mut String, indent: usize, kind: &str, key: &str, value: &str) {
    let _ = writeln!(
        out,
        "{:indent$}<{kind} key=\"{}\" value=\"{}\"/>",
        "",
        escape(key),
        escape(value)
    );
}

/// `value` as XML attribute text: markup characters escaped, characters XML 1.0 cannot
/// hold (most control characters) replaced by U+FFFD, whitespace kept as character
/// references so parsers do not normalize it away.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC with milliseconds
/// (`2025-01-01T00:00:00.000+00:00`).
pub fn iso8601(at_ms: u64) -> String {
    let secs = at_ms / 1000;
    let (year, month, day) = super::store::civil_date((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        at_ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_control_characters() {
        assert_eq!(
            escape("a<b>&\"c\" 'd'\n\u{1}"),
            "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;&#10;\u{FFFD}"
        );
    }

    #[test]
    fn timestamps_have_milliseconds() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000+00:00");
        assert_eq!(iso8601(1_735_689_600_042), "2025-01-01T00:00:00.042+00:00");
        assert_eq!(iso8601(1_709_210_096_999), "2024-02-29T12:34:56.999+00:00");
    }
}
