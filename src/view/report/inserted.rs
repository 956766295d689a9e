//! The tasks a hook inserted into a run (`add_node`) drawn into the model's diagram: each
//! is added to the process on the flow it was inserted on (the flow now ends at it, and a
//! new flow leaves it for the flow's old target), and placed in the diagram beside that
//! flow, where it overlaps no shape, the flow routed through it. Found from the run's own
//! records (the flow taken into the new task and the one taken out of it), so whatever
//! the hook or the engine named the new flow.

use std::collections::BTreeMap;

use quick_xml::events::Event as XmlEvent;
use quick_xml::reader::Reader;

use crate::journal::{Event, Record};

/// A task inserted on flow `on_flow` (whose old target is `target`), left by `out_flow`.
#[derive(Debug, Clone, PartialEq)]
pub struct Insertion {
    pub id: String,
    pub name: Option<String>,
    pub on_flow: String,
    pub out_flow: String,
    pub target: String,
}

/// The insertions of a run: each node it entered that the model does not have, entered
/// by a flow the model has, and left by a flow it does not.
pub fn insertions(
    records: &[Record],
    known: &BTreeMap<String, (String, Option<String>)>,
) -> Vec<Insertion> {
    let mut out: Vec<Insertion> = Vec::new();
    for r in records {
        let Event::NodeEntered { node, name, .. } = &r.event else {
            continue;
        };
        if known.contains_key(node) || out.iter().any(|i| &i.id == node) {
            continue;
        }
        let into = records.iter().find_map(|r| match &r.event {
            Event::FlowTaken { flow, target, .. } if target == node && known.contains_key(flow) => {
                Some(flow.clone())
            }
            _ => None,
        });
        let out_of = records.iter().find_map(|r| match &r.event {
            Event::FlowTaken {
                flow,
                source,
                target,
                ..
            } if source == node && !known.contains_key(flow) => {
                Some((flow.clone(), target.clone()))
            }
            _ => None,
        });
        if let (Some(on_flow), Some((out_flow, target))) = (into, out_of) {
            out.push(Insertion {
                id: node.clone(),
                name: name.clone(),
                on_flow,
                out_flow,
                target,
            });
        }
    }
    out
}

#[derive(Debug, Clone, Copy)]
struct Bounds {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Bounds {
    fn overlaps(&self, o: &Bounds) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// A diagram edge's byte range in the text and its waypoints.
type Edge = ((usize, usize), Waypoints);
type Waypoints = Vec<(f64, f64)>;

/// What the XML says, with byte positions.
#[derive(Default)]
struct Found {
    /// Where the process's end tag starts, and the tag's prefix (`bpmn:`, or empty).
    process_end: Option<(usize, String)>,
    /// Each flow's start tag: its byte range.
    flows: BTreeMap<String, (usize, usize)>,
    /// Each edge: its byte range and its waypoints.
    edges: BTreeMap<String, Edge>,
    /// Each shape's bounds, by element.
    shapes: BTreeMap<String, Bounds>,
    /// Where the plane's end tag starts, the DI prefix, and the DC and DI prefixes used.
    plane_end: Option<(usize, String)>,
    dc: String,
    di: String,
}

fn prefix(q: &str) -> String {
    q.rsplit_once(':')
        .map(|(p, _)| format!("{p}:"))
        .unwrap_or_default()
}

fn attr_of(e: &quick_xml::events::BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .and_then(|a| {
            quick_xml::escape::unescape(&a.value)
                .ok()
                .map(|v| v.into_owned())
        })
}

fn find(xml: &str, process_id: &str) -> Found {
    let mut found = Found {
        dc: "dc:".into(),
        di: "di:".into(),
        ..Found::default()
    };
    let mut reader = Reader::from_str(xml);
    let mut in_process = 0usize; // depth inside the process, 0: outside
    // The edge being read: its element, where it starts, its waypoints so far.
    let mut edge: Option<(String, usize, Waypoints)> = None;
    let mut shape: Option<String> = None;
    loop {
        let start = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(XmlEvent::Eof) | Err(_) => break,
            Ok(e) => e,
        };
        let end = reader.buffer_position() as usize;
        match &event {
            XmlEvent::Start(e) | XmlEvent::Empty(e) => {
                let empty = matches!(event, XmlEvent::Empty(_));
                let local = e.local_name();
                match local.as_ref() {
                    "process" if attr_of(e, "id").as_deref() == Some(process_id) && !empty => {
                        in_process = 1;
                        continue;
                    }
                    "sequenceFlow" if in_process > 0 => {
                        if let Some(id) = attr_of(e, "id") {
                            found.flows.insert(id, (start, end));
                        }
                    }
                    "BPMNEdge" => {
                        if let Some(el) = attr_of(e, "bpmnElement") {
                            edge = Some((el, start, Vec::new()));
                        }
                    }
                    "waypoint" => {
                        found.di = prefix(e.name().as_ref());
                        if let Some((_, _, points)) = &mut edge {
                            let x = attr_of(e, "x").and_then(|v| v.parse().ok());
                            let y = attr_of(e, "y").and_then(|v| v.parse().ok());
                            if let (Some(x), Some(y)) = (x, y) {
                                points.push((x, y));
                            }
                        }
                    }
                    "BPMNShape" if !empty => shape = attr_of(e, "bpmnElement"),
                    "Bounds" => {
                        found.dc = prefix(e.name().as_ref());
                        if let Some(el) = &shape {
                            let n = |k: &str| attr_of(e, k).and_then(|v| v.parse::<f64>().ok());
                            if let (Some(x), Some(y), Some(w), Some(h)) =
                                (n("x"), n("y"), n("width"), n("height"))
                            {
                                found
                                    .shapes
                                    .entry(el.clone())
                                    .or_insert(Bounds { x, y, w, h });
                            }
                        }
                    }
                    _ => {}
                }
                if in_process > 0 && !empty {
                    in_process += 1;
                }
            }
            XmlEvent::End(e) => {
                let local = e.local_name();
                if in_process > 0 {
                    in_process -= 1;
                    if in_process == 0 && local.as_ref() == "process" {
                        found.process_end = Some((start, prefix(e.name().as_ref())));
                    }
                }
                match local.as_ref() {
                    "BPMNEdge" => {
                        if let Some((el, s, points)) = edge.take() {
                            found.edges.insert(el, ((s, end), points));
                        }
                    }
                    "BPMNShape" => shape = None,
                    "BPMNPlane" => found.plane_end = Some((start, prefix(e.name().as_ref()))),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    found
}

fn esc(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

/// `xml` with each insertion drawn (see the module's documentation); `None` when one of
/// them cannot be placed (the model's text is not as expected): the caller draws the model
/// as it is and names the inserted tasks instead.
pub fn draw(xml: &str, process_id: &str, insertions: &[Insertion]) -> Option<String> {
    let mut xml = xml.to_string();
    for ins in insertions {
        xml = draw_one(&xml, process_id, ins)?;
    }
    Some(xml)
}

fn draw_one(xml: &str, process_id: &str, ins: &Insertion) -> Option<String> {
    let found = find(xml, process_id);
    let (process_end, bpmn) = found.process_end.clone()?;
    let (flow_start, flow_end) = *found.flows.get(&ins.on_flow)?;
    // Edits from the end of the text backwards, so earlier positions stay valid.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    // The flow now ends at the new task.
    let tag = &xml[flow_start..flow_end];
    let at = tag.find("targetRef=\"")? + "targetRef=\"".len();
    let close = at + tag[at..].find('"')?;
    edits.push((flow_start + at, flow_start + close, esc(&ins.id)));
    edits.push((
        process_end,
        process_end,
        format!(
            "<{bpmn}task id=\"{}\" name=\"{}\"/><{bpmn}sequenceFlow id=\"{}\" sourceRef=\"{}\" targetRef=\"{}\"/>\n",
            esc(&ins.id),
            esc(ins.name.as_deref().unwrap_or(&ins.id)),
            esc(&ins.out_flow),
            esc(&ins.id),
            esc(&ins.target),
        ),
    ));
    // The diagram: the task beside the flow, the flow and the new one routed through it.
    if let (Some(((edge_start, edge_end), points)), Some((plane_end, bpmndi))) =
        (found.edges.get(&ins.on_flow), found.plane_end.clone())
        && points.len() >= 2
    {
        let (dc, di) = (&found.dc, &found.di);
        let place = placement(points, &found.shapes, found.shapes.get(&ins.target))?;
        let (b, into, out_of) = place;
        let pts = |ps: &[(f64, f64)]| -> String {
            ps.iter()
                .map(|(x, y)| format!("<{di}waypoint x=\"{}\" y=\"{}\"/>", x.round(), y.round()))
                .collect()
        };
        let edge_text = &xml[*edge_start..*edge_end];
        let first_wp = edge_text.find(&format!("<{di}waypoint"))?;
        let end_tag = edge_text.rfind("</")?;
        let head = &edge_text[..first_wp];
        let tail = &edge_text[end_tag..];
        edits.push((
            *edge_start,
            *edge_end,
            format!("{head}{}{tail}", pts(&into)),
        ));
        edits.push((
            plane_end,
            plane_end,
            format!(
                "<{bpmndi}BPMNShape id=\"{id}_di\" bpmnElement=\"{id}\"><{dc}Bounds x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></{bpmndi}BPMNShape>\
                 <{bpmndi}BPMNEdge id=\"{of}_di\" bpmnElement=\"{of}\">{}</{bpmndi}BPMNEdge>\n",
                b.x.round(),
                b.y.round(),
                b.w,
                b.h,
                pts(&out_of),
                id = esc(&ins.id),
                of = esc(&ins.out_flow),
            ),
        ));
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = xml.to_string();
    for (from, to, text) in edits {
        out.replace_range(from..to, &text);
    }
    Some(out)
}

/// Where an inserted task goes: a 100×80 box centred over or under the middle of the
/// flow's waypoints (the first of several distances where it overlaps no shape), the
/// flow's new waypoints into it, and the new flow's out of it to the old target.
type Placed = (Bounds, Vec<(f64, f64)>, Vec<(f64, f64)>);

fn placement(
    points: &[(f64, f64)],
    shapes: &BTreeMap<String, Bounds>,
    target: Option<&Bounds>,
) -> Option<Placed> {
    let (w, h) = (100.0, 80.0);
    let first = *points.first()?;
    let last = *points.last()?;
    let (mx, my) = ((first.0 + last.0) / 2.0, (first.1 + last.1) / 2.0);
    let free = |b: &Bounds| {
        let margin = Bounds {
            x: b.x - 10.0,
            y: b.y - 10.0,
            w: b.w + 20.0,
            h: b.h + 20.0,
        };
        !shapes.values().any(|s| s.overlaps(&margin))
    };
    let candidates = [-120.0, 120.0, -240.0, 240.0, -360.0, 360.0];
    let b = candidates
        .iter()
        .map(|dy| Bounds {
            x: mx - w / 2.0,
            y: my + dy - h / 2.0,
            w,
            h,
        })
        .find(|b| free(b))
        .unwrap_or(Bounds {
            x: mx - w / 2.0,
            y: my - 120.0 - h / 2.0,
            w,
            h,
        });
    let (cx, cy) = (b.x + w / 2.0, b.y + h / 2.0);
    let above = cy < my;
    let edge_y = if above { b.y + h } else { b.y };
    let into = vec![first, (cx - 20.0, first.1), (cx - 20.0, edge_y)];
    let out_of = match target {
        // Into the target's side, as the flow came in before (clear of a label above or
        // under the target).
        Some(t) if t.x >= cx + 30.0 => {
            // Down well before the target (a label over it reaches out to its left).
            let (ty, down) = (t.y + t.h / 2.0, (t.x - 28.0).max(cx - 12.0));
            vec![(down, edge_y), (down, ty), (t.x, ty)]
        }
        Some(t) => {
            let tx = (cx + 20.0).max(t.x + t.w / 2.0);
            let ty = if above { t.y } else { t.y + t.h };
            vec![
                (cx + 20.0, edge_y),
                (cx + 20.0, edge_y + if above { 20.0 } else { -20.0 }),
                (tx, edge_y + if above { 20.0 } else { -20.0 }),
                (tx, ty),
            ]
        }
        None => vec![(cx + 20.0, edge_y), (cx + 20.0, last.1), last],
    };
    Some((b, into, out_of))
}
