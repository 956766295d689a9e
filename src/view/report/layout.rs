//! A diagram for a BPMN model that has none: `runs report` draws a run on the model's own
//! diagram interchange (BPMN DI, what a modeller writes) when it places every element of
//! the process; otherwise the model's diagrams are replaced by one laid out here, so that
//! a model written by hand or exported without DI still draws.
//!
//! The layout is layered, left to right: each node's column is its longest distance from
//! the process's starts (loops do not count), nodes of a column stacked in the order they
//! were reached; an embedded sub-process is laid out the same way inside its box (drawn
//! expanded); boundary events sit on their activity's lower edge; flows are drawn with
//! right angles (a loop back runs under the nodes).

use std::collections::{BTreeSet, HashMap, VecDeque};

use quick_xml::events::Event as XmlEvent;
use quick_xml::reader::Reader;

use crate::bpmn::{NodeKind, Process};

/// Whether the text's diagram interchange places every top-level node of `process`.
pub fn has_diagram(text: &str, process: &Process) -> bool {
    let placed = placed_elements(text);
    let mut top = process
        .nodes
        .iter()
        .filter(|n| n.parent.is_none())
        .peekable();
    top.peek().is_some() && top.all(|n| placed.contains(n.id.as_str()))
}

/// Whether the text's diagram interchange draws anything at all (a partial diagram).
pub fn has_any_diagram(text: &str) -> bool {
    !placed_elements(text).is_empty()
}

/// The ids the text's `BPMNShape`s and `BPMNEdge`s draw.
fn placed_elements(text: &str) -> BTreeSet<String> {
    let mut reader = Reader::from_str(text);
    let mut placed = BTreeSet::new();
    loop {
        match reader.read_event() {
            Ok(XmlEvent::Start(e)) | Ok(XmlEvent::Empty(e)) => {
                let local = e.local_name();
                if matches!(local.as_ref(), "BPMNShape" | "BPMNEdge") {
                    for a in e.attributes().flatten() {
                        if a.key.local_name().as_ref() == "bpmnElement"
                            && let Ok(v) = quick_xml::escape::unescape(&a.value)
                        {
                            placed.insert(v.into_owned());
                        }
                    }
                }
            }
            Ok(XmlEvent::Eof) | Err(_) => break,
            _ => {}
        }
    }
    placed
}

/// The byte ranges of the text's `BPMNDiagram` elements.
fn diagram_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut reader = Reader::from_str(text);
    let mut ranges = Vec::new();
    let mut open: Option<(usize, usize)> = None; // (start, depth)
    let mut depth = 0usize;
    loop {
        let before = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let event = reader.read_event();
        let after = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        match event {
            Ok(XmlEvent::Start(e)) => {
                depth += 1;
                if open.is_none() && e.local_name().as_ref() == "BPMNDiagram" {
                    open = Some((before, depth));
                }
            }
            Ok(XmlEvent::Empty(e))
                if open.is_none() && e.local_name().as_ref() == "BPMNDiagram" =>
            {
                ranges.push((before, after));
            }
            Ok(XmlEvent::End(_)) => {
                if let Some((start, d)) = open
                    && d == depth
                {
                    ranges.push((start, after));
                    open = None;
                }
                depth = depth.saturating_sub(1);
            }
            Ok(XmlEvent::Eof) | Err(_) => break,
            _ => {}
        }
    }
    ranges
}

/// The text with its diagrams replaced by a generated one for `process` (`None` when the
/// text has no closing `definitions` tag to put it in).
pub fn with_layout(text: &str, process: &Process) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 4096);
    let mut at = 0;
    for (start, end) in diagram_ranges(text) {
        if start < at || end > text.len() {
            continue;
        }
        out.push_str(text.get(at..start)?);
        at = end;
    }
    out.push_str(text.get(at..)?);
    let close = out.rfind("</")?;
    let tail = &out[close + 2..];
    let tag = tail.split(|c: char| c == '>' || c.is_whitespace()).next()?;
    if tag.rsplit(':').next() != Some("definitions") {
        return None;
    }
    let diagram = diagram_xml(process, &layout(process));
    out.insert_str(close, &diagram);
    Some(out)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// Where each node goes, and each flow's waypoints.
#[derive(Debug, Default)]
pub struct Layout {
    pub shapes: Vec<(String, Bounds)>,
    pub edges: Vec<(String, Vec<(f64, f64)>)>,
    /// Where labels go that must not be left to the viewer (boundary events').
    pub labels: HashMap<String, Bounds>,
}

const GAP_X: f64 = 60.0;
const GAP_Y: f64 = 40.0;
const PAD: f64 = 30.0;

fn size(kind: &NodeKind) -> (f64, f64) {
    match kind {
        NodeKind::Gateway(_) => (50.0, 50.0),
        NodeKind::StartEvent { .. }
        | NodeKind::EndEvent { .. }
        | NodeKind::IntermediateCatchEvent { .. }
        | NodeKind::IntermediateThrowEvent { .. }
        | NodeKind::BoundaryEvent { .. } => (36.0, 36.0),
        _ => (100.0, 80.0),
    }
}

fn attached_to(kind: &NodeKind) -> Option<&str> {
    match kind {
        NodeKind::BoundaryEvent { attached_to, .. } => Some(attached_to.as_str()),
        _ => None,
    }
}

/// Lay out `process`: every node and flow placed, at the origin.
pub fn layout(process: &Process) -> Layout {
    let mut placed: HashMap<String, Bounds> = HashMap::new();
    let size = container(process, None, 20.0, 20.0, &mut placed, 0);
    let _ = size;
    let mut out = Layout::default();
    for node in &process.nodes {
        if let Some(b) = placed.get(&node.id) {
            out.shapes.push((node.id.clone(), *b));
        }
    }
    // An activity's boundary events, numbered: the k-th's flows leave on the k-th lane
    // under the activity, and its label is on the k-th line under the lanes.
    let mut on: HashMap<&str, usize> = HashMap::new();
    let mut index_on: HashMap<&str, usize> = HashMap::new();
    for n in &process.nodes {
        if let Some(a) = attached_to(&n.kind)
            && placed.contains_key(a)
            && placed.contains_key(&n.id)
        {
            let k = on.entry(a).or_insert(0);
            index_on.insert(n.id.as_str(), *k);
            *k += 1;
        }
    }
    for n in &process.nodes {
        let (Some(a), Some(&k)) = (attached_to(&n.kind), index_on.get(n.id.as_str())) else {
            continue;
        };
        let (Some(host), Some(&count)) = (placed.get(a), on.get(a)) else {
            continue;
        };
        out.labels.insert(
            n.id.clone(),
            Bounds {
                x: host.x - 20.0,
                y: host.y + host.h + 18.0 + lanes(count) + 4.0 + LABEL_LINE * k as f64,
                w: host.w + 40.0,
                h: 14.0,
            },
        );
    }
    // A flow back runs under every node and label.
    let bottom = (placed.values().chain(out.labels.values()))
        .map(|b| b.y + b.h)
        .fold(0.0, f64::max);
    for flow in &process.flows {
        let (Some(s), Some(t)) = (placed.get(&flow.source), placed.get(&flow.target)) else {
            continue;
        };
        // From a boundary event: its lane under its activity.
        let from_boundary = index_on.get(flow.source.as_str()).copied();
        out.edges
            .push((flow.id.clone(), route(*s, *t, from_boundary, bottom)));
    }
    out
}

/// Lay out the nodes whose parent is `parent` with their top left at (x0, y0); returns
/// the size they take.
fn container(
    process: &Process,
    parent: Option<&str>,
    x0: f64,
    y0: f64,
    placed: &mut HashMap<String, Bounds>,
    level: usize,
) -> (f64, f64) {
    let nodes: Vec<&crate::bpmn::Node> = (process.nodes.iter())
        .filter(|n| n.parent.as_deref() == parent && attached_to(&n.kind).is_none())
        .collect();
    if nodes.is_empty() || level > 16 {
        return (0.0, 0.0);
    }
    let index: HashMap<&str, usize> = (nodes.iter().enumerate())
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    // A boundary event's flows leave from its activity (for the columns).
    let host: HashMap<&str, &str> = (process.nodes.iter())
        .filter_map(|n| attached_to(&n.kind).map(|a| (n.id.as_str(), a)))
        .collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut incoming = vec![0usize; nodes.len()];
    for flow in &process.flows {
        let source = host
            .get(flow.source.as_str())
            .copied()
            .unwrap_or(&flow.source);
        if let (Some(&s), Some(&t)) = (index.get(source), index.get(flow.target.as_str()))
            && s != t
        {
            next[s].push(t);
            incoming[t] += 1;
        }
    }
    // Reach order: starts first (start events, then nodes nothing flows into), breadth
    // first; unreached nodes after, in document order.
    let mut roots: Vec<usize> = (0..nodes.len())
        .filter(|&i| matches!(nodes[i].kind, NodeKind::StartEvent { .. }))
        .collect();
    let sources: Vec<usize> = (0..nodes.len())
        .filter(|&i| incoming[i] == 0 && !roots.contains(&i))
        .collect();
    roots.extend(sources);
    let mut order = Vec::with_capacity(nodes.len());
    let mut seen = vec![false; nodes.len()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    for r in roots.into_iter().chain(0..nodes.len()) {
        if seen[r] {
            continue;
        }
        seen[r] = true;
        queue.push_back(r);
        while let Some(i) = queue.pop_front() {
            order.push(i);
            for &t in &next[i] {
                if !seen[t] {
                    seen[t] = true;
                    queue.push_back(t);
                }
            }
        }
    }
    let rank_of_order: Vec<usize> = {
        let mut r = vec![0; nodes.len()];
        for (k, &i) in order.iter().enumerate() {
            r[i] = k;
        }
        r
    };
    // Columns: longest path over the edges that go forward in reach order (a loop back is
    // an edge to a node reached earlier).
    let mut column = vec![0usize; nodes.len()];
    for &i in &order {
        for &t in &next[i] {
            if rank_of_order[t] > rank_of_order[i] {
                column[t] = column[t].max(column[i] + 1);
            }
        }
    }
    // Sizes (a sub-process is as large as what it holds).
    let mut sizes: Vec<(f64, f64)> = nodes.iter().map(|n| size(&n.kind)).collect();
    for (i, n) in nodes.iter().enumerate() {
        if matches!(n.kind, NodeKind::SubProcess(_)) {
            let (w, h) = container(
                process,
                Some(&n.id),
                0.0,
                0.0,
                &mut HashMap::new(),
                level + 1,
            );
            if w > 0.0 {
                sizes[i] = (w + 2.0 * PAD, h + 2.0 * PAD);
            }
        }
    }
    let columns = column.iter().max().map_or(0, |m| m + 1);
    let mut width_of = vec![0.0f64; columns];
    let mut stacks: Vec<Vec<usize>> = vec![Vec::new(); columns];
    for &i in &order {
        stacks[column[i]].push(i);
        width_of[column[i]] = width_of[column[i]].max(sizes[i].0);
    }
    let rows = stacks.iter().map(Vec::len).max().unwrap_or(0);
    let mut height_of = vec![0.0f64; rows];
    // Room under a row for its activities' boundary events: their labels, one under the
    // other, and the flows that leave them below those.
    let mut below_of = vec![0.0f64; rows];
    for stack in &stacks {
        for (row, &i) in stack.iter().enumerate() {
            height_of[row] = height_of[row].max(sizes[i].1);
            let attached = (process.nodes.iter())
                .filter(|n| attached_to(&n.kind) == Some(nodes[i].id.as_str()))
                .count();
            if attached > 0 {
                below_of[row] = below_of[row].max(boundary_room(attached));
            }
        }
    }
    let mut x = x0;
    let mut total_w: f64 = 0.0;
    let mut total_h: f64 = 0.0;
    for (c, stack) in stacks.iter().enumerate() {
        let mut y = y0;
        for (row, &i) in stack.iter().enumerate() {
            let (w, h) = sizes[i];
            let b = Bounds {
                x: x + (width_of[c] - w) / 2.0,
                y: y + (height_of[row] - h) / 2.0,
                w,
                h,
            };
            placed.insert(nodes[i].id.clone(), b);
            if matches!(nodes[i].kind, NodeKind::SubProcess(_)) {
                container(
                    process,
                    Some(&nodes[i].id),
                    b.x + PAD,
                    b.y + PAD,
                    placed,
                    level + 1,
                );
            }
            y += height_of[row] + GAP_Y + below_of[row];
        }
        total_h = total_h.max(y - y0 - GAP_Y);
        x += width_of[c] + GAP_X;
        total_w = x - x0 - GAP_X;
    }
    // Boundary events on their activity's lower edge, right to left.
    let mut on: HashMap<&str, usize> = HashMap::new();
    for n in &process.nodes {
        if let Some(a) = attached_to(&n.kind)
            && let Some(&host) = placed.get(a)
            && index.contains_key(a)
        {
            let k = on.entry(a).or_insert(0);
            let b = Bounds {
                x: host.x + host.w - 46.0 - (*k as f64) * 42.0,
                y: host.y + host.h - 18.0,
                w: 36.0,
                h: 36.0,
            };
            *k += 1;
            placed.insert(n.id.clone(), b);
            total_h = total_h.max(b.y + b.h - y0);
        }
    }
    (total_w, total_h)
}

/// A boundary event's label: the `k`-th of an activity's, under the activity, one line
/// under the other (so that neighbours' labels never overlap).
const LABEL_LINE: f64 = 16.0;

/// The flows' lanes under an activity with `n` boundary events (under its events).
fn lanes(n: usize) -> f64 {
    LANE * n as f64 + 4.0
}

/// Between two lanes.
const LANE: f64 = 10.0;

/// The room under an activity with `n` boundary events: their flows' lanes, then their
/// labels.
fn boundary_room(n: usize) -> f64 {
    18.0 + lanes(n) + 4.0 + LABEL_LINE * n as f64 + 8.0
}

/// Right-angled waypoints from `s` to `t`; a flow back (to the left) runs under the
/// nodes, at `bottom`.
fn route(s: Bounds, t: Bounds, from_boundary: Option<usize>, bottom: f64) -> Vec<(f64, f64)> {
    let (tx, ty) = (t.x, t.y + t.h / 2.0);
    if let Some(lane) = from_boundary {
        let (sx, sy) = (s.x + s.w / 2.0, s.y + s.h);
        if tx > sx + 40.0 {
            // Down out of the activity, under the labels of its boundary events, right to
            // the gap before the target, then in.
            let (down, gap) = (sy + 4.0 + LANE * lane as f64, tx - 20.0 - 6.0 * lane as f64);
            return vec![(sx, sy), (sx, down), (gap, down), (gap, ty), (tx, ty)];
        }
        // Back (to the left, or to its own activity): along its lane, above the labels of
        // its activity's boundary events, then up past the target's left (clear of any
        // labels under it) and into it from above.
        let lane_y = sy + 4.0 + LANE * lane as f64;
        let (tcx, left, over) = (t.x + t.w / 2.0, t.x - 30.0 - 6.0 * lane as f64, t.y - 15.0);
        return vec![
            (sx, sy),
            (sx, lane_y),
            (left, lane_y),
            (left, over),
            (tcx, over),
            (tcx, t.y),
        ];
    }
    let (sx, sy) = (s.x + s.w, s.y + s.h / 2.0);
    if tx >= sx {
        if (sy - ty).abs() < 0.5 {
            return vec![(sx, sy), (tx, ty)];
        }
        let mid = sx + (tx - sx) / 2.0;
        return vec![(sx, sy), (mid, sy), (mid, ty), (tx, ty)];
    }
    let below = bottom + 30.0;
    let (scx, tcx) = (s.x + s.w / 2.0, t.x + t.w / 2.0);
    vec![
        (scx, s.y + s.h),
        (scx, below),
        (tcx, below),
        (tcx, t.y + t.h),
    ]
}

fn attr(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

/// The `BPMNDiagram` element of `layout` (namespaces declared on it).
fn diagram_xml(process: &Process, layout: &Layout) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    out.push_str(
        "<bpmndi:BPMNDiagram xmlns:bpmndi=\"http://www.omg.org/spec/BPMN/20100524/DI\" \
         xmlns:dc=\"http://www.omg.org/spec/DD/20100524/DC\" \
         xmlns:di=\"http://www.omg.org/spec/DD/20100524/DI\" id=\"cuga_flo_layout\">\n",
    );
    let _ = writeln!(
        out,
        "<bpmndi:BPMNPlane id=\"cuga_flo_layout_plane\" bpmnElement=\"{}\">",
        attr(&process.id)
    );
    for (n, (id, b)) in layout.shapes.iter().enumerate() {
        let expanded = process
            .node(id)
            .is_some_and(|n| matches!(n.kind, NodeKind::SubProcess(_)));
        let label = layout.labels.get(id).map_or_else(String::new, |l| {
            format!(
                "<bpmndi:BPMNLabel><dc:Bounds x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></bpmndi:BPMNLabel>",
                l.x.round(),
                l.y.round(),
                l.w.round(),
                l.h.round()
            )
        });
        let _ = writeln!(
            out,
            "<bpmndi:BPMNShape id=\"cuga_flo_shape_{n}\" bpmnElement=\"{}\"{}><dc:Bounds x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>{label}</bpmndi:BPMNShape>",
            attr(id),
            if expanded { " isExpanded=\"true\"" } else { "" },
            b.x.round(),
            b.y.round(),
            b.w.round(),
            b.h.round()
        );
    }
    for (n, (id, points)) in layout.edges.iter().enumerate() {
        let _ = write!(
            out,
            "<bpmndi:BPMNEdge id=\"cuga_flo_edge_{n}\" bpmnElement=\"{}\">",
            attr(id)
        );
        for (x, y) in points {
            let _ = write!(
                out,
                "<di:waypoint x=\"{}\" y=\"{}\"/>",
                x.round(),
                y.round()
            );
        }
        out.push_str("</bpmndi:BPMNEdge>\n");
    }
    out.push_str("</bpmndi:BPMNPlane>\n</bpmndi:BPMNDiagram>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_DI: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
  <process id="p" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="check"/>
    <userTask id="check" name="Check"/>
    <sequenceFlow id="f2" sourceRef="check" targetRef="gw"/>
    <exclusiveGateway id="gw"/>
    <sequenceFlow id="f3" sourceRef="gw" targetRef="done"/>
    <sequenceFlow id="f4" sourceRef="gw" targetRef="check"/>
    <boundaryEvent id="late" attachedToRef="check"><timerEventDefinition/></boundaryEvent>
    <sequenceFlow id="f5" sourceRef="late" targetRef="done"/>
    <endEvent id="done"/>
  </process>
</definitions>
"#;

    fn process(text: &str) -> Process {
        crate::bpmn::parse(std::path::Path::new("t.bpmn"), text.as_bytes())
            .unwrap()
            .main_process()
            .cloned()
            .unwrap()
    }

    #[test]
    fn a_model_without_diagram_gets_every_node_and_flow_placed_left_to_right() {
        let p = process(NO_DI);
        assert!(!has_diagram(NO_DI, &p));
        let layout = layout(&p);
        let at = |id: &str| layout.shapes.iter().find(|(i, _)| i == id).unwrap().1;
        assert_eq!(layout.shapes.len(), p.nodes.len());
        assert_eq!(layout.edges.len(), p.flows.len());
        assert!(at("start").x < at("check").x && at("check").x < at("gw").x);
        assert!(at("gw").x < at("done").x);
        // The boundary event sits on its activity's lower edge.
        let (check, late) = (at("check"), at("late"));
        assert!(late.x >= check.x && late.x + late.w <= check.x + check.w);
        assert_eq!(late.y + late.h / 2.0, check.y + check.h);

        let drawn = with_layout(NO_DI, &p).unwrap();
        assert!(has_diagram(&drawn, &p), "{drawn}");
        assert!(drawn.trim_end().ends_with("</definitions>"));
        // Still a model that parses to the same process.
        assert_eq!(process(&drawn).nodes.len(), p.nodes.len());
    }

    #[test]
    fn a_sub_process_holds_its_own_layout() {
        let text = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
  <process id="p">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="sub"/>
    <subProcess id="sub">
      <startEvent id="s2"/>
      <sequenceFlow id="g1" sourceRef="s2" targetRef="t2"/>
      <task id="t2"/>
      <sequenceFlow id="g2" sourceRef="t2" targetRef="e2"/>
      <endEvent id="e2"/>
    </subProcess>
    <sequenceFlow id="f2" sourceRef="sub" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;
        let p = process(text);
        let layout = layout(&p);
        let at = |id: &str| layout.shapes.iter().find(|(i, _)| i == id).unwrap().1;
        let sub = at("sub");
        for child in ["s2", "t2", "e2"] {
            let b = at(child);
            assert!(
                b.x > sub.x
                    && b.x + b.w < sub.x + sub.w
                    && b.y > sub.y
                    && b.y + b.h < sub.y + sub.h,
                "{child} {b:?} outside {sub:?}"
            );
        }
        assert!(at("s").x + at("s").w < sub.x && sub.x + sub.w < at("e").x);
        assert_eq!(layout.edges.len(), 4);
        assert!(
            with_layout(text, &p)
                .unwrap()
                .contains("isExpanded=\"true\"")
        );
    }

    #[test]
    fn a_partial_diagram_is_replaced_not_doubled() {
        let partial = NO_DI.replace(
            "</definitions>",
            r#"<bpmndi:BPMNDiagram xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI" id="old"><bpmndi:BPMNPlane id="pl" bpmnElement="p"><bpmndi:BPMNShape id="s" bpmnElement="start"/></bpmndi:BPMNPlane></bpmndi:BPMNDiagram></definitions>"#,
        );
        let p = process(&partial);
        assert!(!has_diagram(&partial, &p));
        let drawn = with_layout(&partial, &p).unwrap();
        assert!(!drawn.contains("id=\"old\""), "{drawn}");
        assert_eq!(drawn.matches("BPMNDiagram ").count(), 1);
        assert!(has_diagram(&drawn, &p));
    }

    /// Two boundary events on one task: each label on a line of its own under the task,
    /// none over a node, and no flow through a label.
    #[test]
    fn boundary_events_labels_overlap_nothing() {
        let p = process(
            r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
  <process id="p" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="pay"/>
    <serviceTask id="pay" name="Pay"/>
    <boundaryEvent id="e1" name="Payment failed" attachedToRef="pay"><errorEventDefinition/></boundaryEvent>
    <boundaryEvent id="e2" name="Agent failed" attachedToRef="pay"><errorEventDefinition/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="pay" targetRef="done"/>
    <sequenceFlow id="f3" sourceRef="e1" targetRef="fix"/>
    <sequenceFlow id="f4" sourceRef="e2" targetRef="fix"/>
    <boundaryEvent id="e3" name="Retry" attachedToRef="fix"><timerEventDefinition/></boundaryEvent>
    <sequenceFlow id="f6" sourceRef="e3" targetRef="pay"/>
    <userTask id="fix" name="Fix"/>
    <sequenceFlow id="f5" sourceRef="fix" targetRef="done"/>
    <endEvent id="done"/>
  </process>
</definitions>"#,
        );
        let l = layout(&p);
        let (a, b, c) = (l.labels["e1"], l.labels["e2"], l.labels["e3"]);
        let overlaps = |a: &Bounds, b: &Bounds| {
            a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
        };
        assert!(!overlaps(&a, &b), "{a:?} {b:?}");
        for (id, shape) in &l.shapes {
            for label in [&a, &b, &c] {
                assert!(!overlaps(label, shape), "a label over {id}");
            }
        }
        for (id, points) in &l.edges {
            for w in points.windows(2) {
                let seg = Bounds {
                    x: w[0].0.min(w[1].0),
                    y: w[0].1.min(w[1].1),
                    w: (w[0].0 - w[1].0).abs().max(1.0),
                    h: (w[0].1 - w[1].1).abs().max(1.0),
                };
                for label in [&a, &b] {
                    assert!(
                        !overlaps(label, &seg),
                        "flow {id} through a label: {points:?}"
                    );
                }
            }
        }
    }
}
