//! A BPMN process drawn as text: a Mermaid flowchart, a Graphviz digraph, or an indented
//! listing (`cuga-flo graph`). Nodes are called by their names (their ids when unnamed),
//! drawn by kind (gateways diamonds, events circles, tasks boxes); edges carry their names
//! or conditions; flows with a hook are marked ⚑; boundary events hang off their
//! activity; sub-processes are subgraphs (clusters). Every label is escaped for its
//! format: a model's names are untrusted text and never break the syntax.

use std::collections::{BTreeSet, HashMap};

use crate::bpmn::{Flow, Node, NodeKind, Process};

/// What a node looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Event,
    Gateway,
    Task,
    Call,
    SubProcess,
}

fn shape(kind: &NodeKind) -> Shape {
    match kind {
        NodeKind::Gateway(_) => Shape::Gateway,
        NodeKind::SubProcess(_) => Shape::SubProcess,
        NodeKind::CallActivity { .. } => Shape::Call,
        NodeKind::StartEvent { .. }
        | NodeKind::EndEvent { .. }
        | NodeKind::IntermediateCatchEvent { .. }
        | NodeKind::IntermediateThrowEvent { .. }
        | NodeKind::BoundaryEvent { .. } => Shape::Event,
        NodeKind::Task(_) | NodeKind::Unsupported { .. } => Shape::Task,
    }
}

/// A node's label: its name (on one line), else its id; event definitions after it.
fn node_label(node: &Node) -> String {
    let name = flat(node.name.as_deref().unwrap_or(""));
    let mut label = if name.is_empty() {
        node.id.clone()
    } else {
        name
    };
    let defs: Vec<String> = node
        .kind
        .event_definitions()
        .iter()
        .map(|d| format!("{d:?}").to_lowercase())
        .collect();
    if !defs.is_empty() {
        label.push_str(&format!(" ({})", defs.join(", ")));
    }
    label
}

/// An edge's label: ⚑ when hooked, then its name, else its condition; `default` for the
/// source's default flow.
fn edge_label(process: &Process, flow: &Flow, hooks: &BTreeSet<String>) -> String {
    let mut parts = Vec::new();
    if hooks.contains(&flow.id) {
        parts.push("⚑".to_owned());
    }
    let name = flat(flow.name.as_deref().unwrap_or(""));
    if !name.is_empty() {
        parts.push(name);
    } else if let Some(c) = &flow.condition {
        parts.push(excerpt(&flat(&c.body), 60));
    }
    let is_default = process
        .node(&flow.source)
        .is_some_and(|n| n.default_flow.as_deref() == Some(flow.id.as_str()));
    if is_default {
        parts.push("(default)".to_owned());
    }
    parts.join(" ")
}

fn flat(text: &str) -> String {
    // Control characters (a terminal's escape sequences among them) become spaces.
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn excerpt(text: &str, max: usize) -> String {
    crate::view::excerpt(text, max)
}

/// Generated node ids (`n0`, `n1`, ...): a model's ids may hold anything.
fn ids(process: &Process) -> HashMap<&str, String> {
    process
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), format!("n{i}")))
        .collect()
}

/// Text inside a Mermaid `"..."` label: quotes, `#`, `<`, `>`, `&`, `|`, backticks and
/// brackets as entity codes; control characters as spaces.
pub fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' | '#' | '<' | '>' | '&' | '|' | '`' | '[' | ']' | '{' | '}' | '(' | ')' | ';' => {
                out.push_str(&format!("#{};", u32::from(c)))
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Mermaid flowchart, left to right.
pub fn mermaid(process: &Process, hooks: &BTreeSet<String>) -> String {
    let ids = ids(process);
    let mut out = String::from("flowchart LR\n");
    mermaid_scope(process, None, &ids, 1, &mut out);
    for flow in &process.flows {
        let (Some(s), Some(t)) = (ids.get(flow.source.as_str()), ids.get(flow.target.as_str()))
        else {
            continue;
        };
        let label = edge_label(process, flow, hooks);
        if label.is_empty() {
            out.push_str(&format!("  {s} --> {t}\n"));
        } else {
            out.push_str(&format!("  {s} -->|\"{}\"| {t}\n", mermaid_text(&label)));
        }
    }
    for node in &process.nodes {
        if let NodeKind::BoundaryEvent { attached_to, .. } = &node.kind
            && let (Some(a), Some(b)) = (ids.get(attached_to.as_str()), ids.get(node.id.as_str()))
        {
            out.push_str(&format!("  {a} -.- {b}\n"));
        }
    }
    out
}

fn mermaid_scope(
    process: &Process,
    scope: Option<&str>,
    ids: &HashMap<&str, String>,
    depth: usize,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    for node in process.children(scope) {
        let id = &ids[node.id.as_str()];
        let label = mermaid_text(&node_label(node));
        match shape(&node.kind) {
            Shape::SubProcess => {
                out.push_str(&format!("{pad}subgraph {id} [\"{label}\"]\n"));
                out.push_str(&format!("{pad}  direction LR\n"));
                mermaid_scope(process, Some(&node.id), ids, depth + 1, out);
                out.push_str(&format!("{pad}end\n"));
            }
            Shape::Event => out.push_str(&format!("{pad}{id}((\"{label}\"))\n")),
            Shape::Gateway => out.push_str(&format!("{pad}{id}{{\"{label}\"}}\n")),
            Shape::Task => out.push_str(&format!("{pad}{id}[\"{label}\"]\n")),
            Shape::Call => out.push_str(&format!("{pad}{id}[[\"{label}\"]]\n")),
        }
    }
}

/// Text inside a Graphviz `"..."` string: backslashes and quotes escaped, line breaks
/// and other control characters as spaces (`<`, `>`, `&` need nothing in a quoted string).
pub fn dot_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Graphviz digraph, left to right; sub-processes are clusters holding their own node.
pub fn dot(process: &Process, hooks: &BTreeSet<String>) -> String {
    let ids = ids(process);
    let mut out = format!(
        "digraph \"{}\" {{\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=10];\n",
        dot_text(process.display_name())
    );
    dot_scope(process, None, &ids, 1, &mut out);
    for flow in &process.flows {
        let (Some(s), Some(t)) = (ids.get(flow.source.as_str()), ids.get(flow.target.as_str()))
        else {
            continue;
        };
        let label = edge_label(process, flow, hooks);
        let mut attrs = vec![format!("label=\"{}\"", dot_text(&label))];
        if hooks.contains(&flow.id) {
            attrs.push("color=\"darkorange\"".to_owned());
            attrs.push("penwidth=2".to_owned());
        }
        if label.is_empty() {
            attrs.remove(0);
        }
        if attrs.is_empty() {
            out.push_str(&format!("  {s} -> {t};\n"));
        } else {
            out.push_str(&format!("  {s} -> {t} [{}];\n", attrs.join(", ")));
        }
    }
    for node in &process.nodes {
        if let NodeKind::BoundaryEvent { attached_to, .. } = &node.kind
            && let (Some(a), Some(b)) = (ids.get(attached_to.as_str()), ids.get(node.id.as_str()))
        {
            out.push_str(&format!("  {a} -> {b} [style=dashed, arrowhead=none];\n"));
        }
    }
    out.push_str("}\n");
    out
}

fn dot_scope(
    process: &Process,
    scope: Option<&str>,
    ids: &HashMap<&str, String>,
    depth: usize,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    for node in process.children(scope) {
        let id = &ids[node.id.as_str()];
        let label = dot_text(&node_label(node));
        match shape(&node.kind) {
            Shape::SubProcess => {
                out.push_str(&format!("{pad}subgraph cluster_{id} {{\n"));
                out.push_str(&format!(
                    "{pad}  label=\"{label}\";\n{pad}  style=rounded;\n"
                ));
                out.push_str(&format!(
                    "{pad}  {id} [label=\"{label}\", shape=box, style=\"rounded,bold\"];\n"
                ));
                dot_scope(process, Some(&node.id), ids, depth + 1, out);
                out.push_str(&format!("{pad}}}\n"));
            }
            s => {
                let shape = match s {
                    Shape::Event => "circle",
                    Shape::Gateway => "diamond",
                    _ => "box",
                };
                let mut attrs = format!("label=\"{label}\", shape={shape}");
                if s == Shape::Call {
                    attrs.push_str(", peripheries=2");
                }
                if s == Shape::Task {
                    attrs.push_str(", style=rounded");
                }
                out.push_str(&format!("{pad}{id} [{attrs}];\n"));
            }
        }
    }
}

/// A readable listing of the flow: from each start event, node after node; a node with
/// several outgoing flows lists each branch indented under it; a node already listed is
/// referred to (`↪`); boundary events and sub-processes' insides are nested under their
/// activity. Iterative, so a long model cannot exhaust the stack.
pub fn ascii(process: &Process, hooks: &BTreeSet<String>) -> String {
    enum Item<'a> {
        Visit(&'a Node, usize),
        Line(String, usize),
    }
    let mut out = format!("{} ({})\n", flat(process.display_name()), process.id);
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut stack: Vec<Item> = Vec::new();
    let mut pending: Vec<&Node> = roots_of(process, None);
    pending.reverse();
    let mark = |n: &Node| match shape(&n.kind) {
        Shape::Event => "○",
        Shape::Gateway => "◇",
        Shape::Task => "□",
        Shape::Call => "▣",
        Shape::SubProcess => "▢",
    };
    let write = |out: &mut String, depth: usize, text: &str| {
        out.push_str(&"  ".repeat(depth));
        out.push_str(text);
        out.push('\n');
    };
    loop {
        let item = match stack.pop() {
            Some(i) => i,
            None => {
                // Then every node not reached from a start (unconnected parts).
                let next = pending.pop().or_else(|| {
                    process.nodes.iter().find(|n| {
                        !seen.contains(n.id.as_str())
                            && n.parent.is_none()
                            && !matches!(n.kind, NodeKind::BoundaryEvent { .. })
                    })
                });
                match next {
                    Some(n) if !seen.contains(n.id.as_str()) => Item::Visit(n, 0),
                    Some(_) => continue,
                    None => break,
                }
            }
        };
        let (node, depth) = match item {
            Item::Line(text, depth) => {
                write(&mut out, depth, &text);
                continue;
            }
            Item::Visit(n, d) => (n, d),
        };
        if !seen.insert(node.id.as_str()) {
            write(&mut out, depth, &format!("↪ {} (above)", node_label(node)));
            continue;
        }
        let mut head = format!("{} {}", mark(node), node_label(node));
        if node.name.as_deref().is_some_and(|n| !flat(n).is_empty()) {
            head.push_str(&format!("  [{}]", node.id));
        }
        write(&mut out, depth, &head);
        // What follows, pushed in reverse so that it pops in order.
        let mut next: Vec<Item> = Vec::new();
        if matches!(node.kind, NodeKind::SubProcess(_)) {
            next.push(Item::Line("inside:".to_owned(), depth + 1));
            for r in roots_of(process, Some(&node.id)) {
                next.push(Item::Visit(r, depth + 2));
            }
        }
        for b in process.boundary_events(&node.id) {
            next.push(Item::Line("on boundary:".to_owned(), depth + 1));
            next.push(Item::Visit(b, depth + 2));
        }
        let outgoing: Vec<&Flow> = process.outgoing(&node.id).collect();
        let target = |f: &Flow| process.node(&f.target);
        match outgoing.as_slice() {
            [] => {}
            [only] => {
                let label = edge_label(process, only, hooks);
                if !label.is_empty() {
                    next.push(Item::Line(format!("│ {label}"), depth));
                }
                if let Some(t) = target(only) {
                    next.push(Item::Visit(t, depth));
                }
            }
            many => {
                for (i, f) in many.iter().enumerate() {
                    let branch = if i + 1 == many.len() {
                        "└─"
                    } else {
                        "├─"
                    };
                    let label = edge_label(process, f, hooks);
                    let text = if label.is_empty() {
                        format!("{branch} {}", f.id)
                    } else {
                        format!("{branch} {label}  [{}]", f.id)
                    };
                    next.push(Item::Line(text, depth + 1));
                    if let Some(t) = target(f) {
                        next.push(Item::Visit(t, depth + 2));
                    }
                }
            }
        }
        stack.extend(next.into_iter().rev());
    }
    out
}

/// The nodes of `scope` nothing flows into (start events first): where a listing begins.
fn roots_of<'a>(process: &'a Process, scope: Option<&'a str>) -> Vec<&'a Node> {
    let mut r: Vec<&Node> = process
        .children(scope)
        .filter(|n| {
            !matches!(n.kind, NodeKind::BoundaryEvent { .. })
                && process.incoming(&n.id).next().is_none()
        })
        .collect();
    r.sort_by_key(|n| !n.kind.is_start_event());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mermaid_text_has_no_syntax_left() {
        let hostile = "a\"]) --> x{{\"<b>&amp;</b>|`#;\nnext";
        let t = mermaid_text(hostile);
        for c in ['"', '[', ']', '(', ')', '{', '}', '<', '>', '|', '`', '\n'] {
            assert!(!t.contains(c), "{c:?} in {t}");
        }
        assert!(t.starts_with("a#34;#93;#41; --#62; x"), "{t}");
    }

    #[test]
    fn dot_text_escapes_quotes_and_backslashes() {
        assert_eq!(dot_text("a\"b\\c\nd"), "a\\\"b\\\\c d");
        assert_eq!(dot_text("<&>"), "<&>");
    }
}
