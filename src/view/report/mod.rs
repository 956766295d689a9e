//! `cuga-flo runs report <run> -o run.html`: one self-contained HTML page of a journalled
//! run. It draws the run's BPMN diagram with the bpmn-js viewer (vendored under
//! `assets/bpmn-js/`, written into the page: no network), highlights the path taken, and
//! lays over the diagram who decided each control point and why, the adaptations hooks
//! made, and how long each element took; the journal follows as a table.
//!
//! Everything a journal holds is untrusted text (variable values, reasons, names): the
//! table is escaped for HTML, and the data the diagram script reads is a JSON document in
//! a `<script type="application/json">` element with `<`, `>` and `&` escaped, so no value
//! can close the element; the script writes it with `textContent` only.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::journal::{Event, FlowState, Record};
use crate::view::{Names, duration, utc_time};
use crate::vocab::{Decider, HookAction, TaskStatus};

mod inserted;
mod layout;

pub const VIEWER_JS: &str = include_str!("../../../assets/bpmn-js/bpmn-viewer.production.min.js");
pub const DIAGRAM_CSS: &str = include_str!("../../../assets/bpmn-js/diagram-js.css");
pub const BPMN_CSS: &str = include_str!("../../../assets/bpmn-js/bpmn-js.css");

/// The model drawn: its XML (with a generated diagram when its own does not place the
/// process) and what is known about its elements.
pub struct Model {
    pub xml: String,
    /// `model`: the model's own diagram; `generated`: laid out by cuga-flo (the model has
    /// none); `partial`: laid out by cuga-flo (the model's does not place every element).
    pub layout: &'static str,
    /// Element id → (BPMN tag, name).
    pub elements: BTreeMap<String, (String, Option<String>)>,
}

impl Model {
    /// The model of run `records`' process in `app` (its `run_started` names it).
    pub fn for_run(app: &crate::app::LoadedApp, records: &[Record]) -> Option<Model> {
        let process_id = match records.first().map(|r| &r.event) {
            Some(Event::RunStarted { process_id, .. }) => process_id.clone(),
            _ => String::new(),
        };
        let doc = app.bpmn.as_ref()?;
        let process = (doc.processes.iter())
            .find(|p| p.id == process_id)
            .or_else(|| doc.main_shared())?;
        Some(Model::of(doc.source.text(), process).with_insertions(&process.id, records))
    }

    /// The model with the tasks the run's hooks inserted drawn in (see
    /// [`inserted`](self::inserted)); as it was when one cannot be placed.
    pub fn with_insertions(mut self, process_id: &str, records: &[Record]) -> Model {
        let found = inserted::insertions(records, &self.elements);
        if found.is_empty() {
            return self;
        }
        if let Some(xml) = inserted::draw(&self.xml, process_id, &found) {
            self.xml = xml;
            for i in found {
                self.elements
                    .insert(i.id.clone(), ("task".to_string(), i.name.clone()));
                self.elements
                    .insert(i.out_flow.clone(), ("sequenceFlow".to_string(), None));
            }
        }
        self
    }

    pub fn of(text: &str, process: &crate::bpmn::Process) -> Model {
        let (xml, layout) = if layout::has_diagram(text, process) {
            (text.to_string(), "model")
        } else {
            // A diagram that leaves elements out is replaced as a missing one is; the
            // page says which it was.
            let why = if layout::has_any_diagram(text) {
                "partial"
            } else {
                "generated"
            };
            match layout::with_layout(text, process) {
                Some(xml) => (xml, why),
                None => (text.to_string(), "model"),
            }
        };
        let mut elements = BTreeMap::new();
        for n in &process.nodes {
            elements.insert(n.id.clone(), (n.kind.tag().to_string(), n.name.clone()));
        }
        for f in &process.flows {
            elements.insert(f.id.clone(), ("sequenceFlow".to_string(), f.name.clone()));
        }
        Model {
            xml,
            layout,
            elements,
        }
    }
}

/// What the page says about one element of the diagram.
#[derive(Debug, Default)]
struct Mark {
    visits: u64,
    taken: bool,
    duration_ms: u64,
    model_calls: u64,
    model_ms: u64,
    /// Tool calls made (or answered from the record), and those refused or denied.
    tool_calls: u64,
    tools_not_made: u64,
    decisions: Vec<Value>,
    adaptations: Vec<String>,
    failed: bool,
    /// A hook removed it from the run (`remove_node`).
    removed: bool,
}

fn tag<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn short_value(v: &Value) -> String {
    let text = crate::view::value(v);
    crate::diag::excerpt(&text, 80)
}

fn outputs_text(outputs: &Map<String, Value>) -> String {
    (outputs.iter())
        .map(|(k, v)| format!("{k}={}", short_value(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The marks of the run's elements, in the order the run first touched them.
fn marks(records: &[Record], names: &Names) -> Vec<(String, Mark)> {
    let mut order: Vec<String> = Vec::new();
    let mut marks: BTreeMap<String, Mark> = BTreeMap::new();
    let flow_name = |id: &str| match names.flow(id) {
        Some((_, target)) if !target.is_empty() => {
            format!("→ {}", names.node(target).unwrap_or(target))
        }
        _ => id.to_string(),
    };
    // An add_node's adaptation is shown on the task it inserted (entered next).
    let mut inserting: Option<String> = None;
    for r in records {
        match &r.event {
            Event::NodeEntered { node, .. } => {
                let m = mark(&mut marks, &mut order, node);
                m.visits += 1;
                m.taken = true;
                if let Some(text) = inserting.take() {
                    m.adaptations.push(text);
                }
            }
            Event::FlowTaken { flow, .. } => {
                let m = mark(&mut marks, &mut order, flow);
                m.visits += 1;
                m.taken = true;
            }
            Event::TaskFinished {
                node,
                status,
                outputs,
                decided_by,
                reason,
                error,
                duration_ms,
                ..
            } => {
                let m = mark(&mut marks, &mut order, node);
                m.duration_ms += duration_ms;
                if *status == TaskStatus::Failed {
                    m.failed = true;
                }
                if *decided_by != Decider::None || reason.is_some() {
                    let what = match (status, error) {
                        (TaskStatus::Failed, Some(e)) => format!("failed: {e}"),
                        (TaskStatus::Completed, _) => outputs_text(outputs),
                        (s, _) => tag(s),
                    };
                    m.decisions.push(json!({
                        "by": decided_by.as_str(), "what": what, "reason": reason,
                    }));
                }
            }
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                reason,
                duration_ms,
                ..
            } => {
                let m = mark(&mut marks, &mut order, node);
                m.duration_ms += duration_ms;
                let what: Vec<String> = flows.iter().map(|f| flow_name(f)).collect();
                m.decisions.push(json!({
                    "by": decided_by.as_str(), "what": what.join(", "), "reason": reason,
                }));
            }
            Event::HookEvaluated {
                hook,
                flow,
                action,
                target,
                decided_by,
                reason,
                denied,
                rejected,
                duration_ms,
                ..
            } => {
                mark(&mut marks, &mut order, flow).duration_ms += duration_ms;
                let node = |t: &Option<String>| {
                    t.as_deref()
                        .map_or_else(String::new, |t| names.node(t).unwrap_or(t).to_string())
                };
                let mut what = match action {
                    HookAction::Continue => "went on".to_string(),
                    HookAction::SkipNode => "skipped the next step".to_string(),
                    HookAction::SkipTo => format!("skipped to {}", node(target)),
                    HookAction::SwapNodes => format!("swapped {} with the next step", node(target)),
                    HookAction::Terminate => "ended the run".to_string(),
                    HookAction::RemoveNode => format!("removed {}", node(target)),
                    HookAction::AddNode => "inserted this task".to_string(),
                };
                if let Some(d) = denied {
                    let _ = write!(what, " ({} denied)", d.as_str());
                }
                if let Some(why) = rejected {
                    let _ = write!(what, " (refused: {why})");
                }
                let text = format!("{what} (hook {hook})");
                // The node a hook removed is drawn as removed, saying by which hook.
                if *action == HookAction::RemoveNode
                    && denied.is_none()
                    && rejected.is_none()
                    && let Some(t) = target
                {
                    let r = mark(&mut marks, &mut order, t);
                    r.removed = true;
                    r.adaptations
                        .push(format!("removed from this run (hook {hook})"));
                }
                let m = mark(&mut marks, &mut order, flow);
                let applied = denied.is_none() && rejected.is_none();
                if *action == HookAction::AddNode && applied {
                    inserting = Some(text.clone());
                } else if *action == HookAction::RemoveNode && applied && target.is_some() {
                    // Shown on the node it removed (above), not over the diagram again.
                } else if *action != HookAction::Continue || !applied {
                    m.adaptations.push(text.clone());
                }
                m.decisions.push(json!({
                    "by": decided_by.as_str(), "what": text, "reason": reason,
                }));
            }
            Event::ModelCalled { node, call, .. } => {
                let m = mark(&mut marks, &mut order, node);
                m.model_calls += 1;
                m.model_ms += call.latency_ms;
            }
            Event::EventThrown {
                node, caught_by, ..
            } => {
                let m = mark(&mut marks, &mut order, node);
                m.failed = m.failed || caught_by.is_none();
            }
            Event::ToolCalled { node, outcome, .. } => {
                let m = mark(&mut marks, &mut order, node);
                if outcome.called() {
                    m.tool_calls += 1;
                } else {
                    m.tools_not_made += 1;
                }
            }
            _ => {}
        }
    }
    order
        .into_iter()
        .filter_map(|id| marks.remove(&id).map(|m| (id, m)))
        .collect()
}

fn mark<'a>(
    marks: &'a mut BTreeMap<String, Mark>,
    order: &mut Vec<String>,
    id: &str,
) -> &'a mut Mark {
    if !marks.contains_key(id) {
        order.push(id.to_string());
    }
    marks.entry(id.to_string()).or_default()
}

/// Escape text for HTML (element content and quoted attributes).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that may sit inside a `<script>` element: no `<`, `>` or `&` in it.
pub fn script_json(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The viewer, safe inside a `<script>` element (its one `<!--` is in a regex literal,
/// where `\x3C` means the same).
fn viewer_js() -> String {
    VIEWER_JS.replace("<!--", "\\x3C!--")
}

/// One journal record as a line of text for the table.
fn detail(event: &Event, names: &Names) -> (String, String, String) {
    let node_label = |id: &str| match names.node(id) {
        Some(name) if name != id => format!("{name} ({id})"),
        _ => id.to_string(),
    };
    let reason_of = |r: &Option<String>| r.clone().unwrap_or_default();
    match event {
        Event::RunStarted {
            app,
            process_key,
            engine,
            reasoner,
            variables,
            ..
        } => (
            String::new(),
            String::new(),
            format!(
                "app {app}, process {process_key}, engine {engine}, answers from {reasoner}; {}",
                outputs_text(variables)
            ),
        ),
        Event::NodeEntered { node, kind, .. } => (node_label(node), String::new(), kind.clone()),
        Event::FlowTaken {
            flow,
            source,
            target,
            ..
        } => (
            flow.clone(),
            String::new(),
            format!("{} → {}", node_label(source), node_label(target)),
        ),
        Event::TaskFinished {
            node,
            status,
            outputs,
            decided_by,
            reason,
            error,
            duration_ms,
            ..
        } => (
            node_label(node),
            decided_by.as_str().to_string(),
            format!(
                "{} in {}{}{}{}",
                tag(status),
                duration(*duration_ms),
                if outputs.is_empty() {
                    String::new()
                } else {
                    format!(": {}", outputs_text(outputs))
                },
                error
                    .as_ref()
                    .map(|e| format!("; error: {e}"))
                    .unwrap_or_default(),
                reason
                    .as_ref()
                    .map(|r| format!("; because {r}"))
                    .unwrap_or_default(),
            ),
        ),
        Event::GatewayRouted {
            node,
            flows,
            decided_by,
            reason,
            ..
        } => (
            node_label(node),
            decided_by.as_str().to_string(),
            format!(
                "took {}{}",
                flows.join(", "),
                reason
                    .as_ref()
                    .map(|r| format!("; because {r}"))
                    .unwrap_or_default()
            ),
        ),
        Event::HookEvaluated {
            hook,
            flow,
            action,
            target,
            decided_by,
            reason,
            state_updates,
            ..
        } => (
            flow.clone(),
            decided_by.as_str().to_string(),
            format!(
                "hook {hook}: {}{}{}{}",
                action.as_str(),
                target
                    .as_ref()
                    .map(|t| format!(" {}", node_label(t)))
                    .unwrap_or_default(),
                if state_updates.is_empty() {
                    String::new()
                } else {
                    format!("; sets {}", outputs_text(state_updates))
                },
                reason
                    .as_ref()
                    .map(|r| format!("; because {r}"))
                    .unwrap_or_default()
            ),
        ),
        Event::ModelCalled { node, call, .. } => (
            node_label(node),
            "model".into(),
            format!(
                "{} attempt {}: {} in {}",
                call.model,
                call.attempt,
                tag(&call.outcome),
                duration(call.latency_ms)
            ),
        ),
        Event::ToolCalled {
            node,
            tool,
            arguments,
            outcome,
            result,
            duration_ms,
            by,
            replayed,
            ..
        } => {
            let mut text = format!("{tool} {} → {}", short_value(arguments), outcome.as_str());
            if *replayed {
                text.push_str(" (recorded, not called)");
            } else if outcome.called() {
                let _ = write!(text, " in {}", duration(*duration_ms));
            }
            if let Some(by) = by {
                let verb = if outcome.called() {
                    "confirmed"
                } else {
                    "denied"
                };
                let _ = write!(text, " ({verb} by {by})");
            }
            if *outcome != crate::journal::event::ToolOutcome::Ok {
                let _ = write!(text, ": {}", short_value(&Value::String(result.clone())));
            }
            (node_label(node), "tool".into(), text)
        }
        Event::TopologyChanged { action, detail } => (
            String::new(),
            String::new(),
            format!("{}: {detail}", action.as_str()),
        ),
        Event::VariablesSet { source, values, .. } => (
            String::new(),
            String::new(),
            format!("{source}: {}", outputs_text(values)),
        ),
        Event::QuestionAnswered {
            key,
            decided_by,
            by,
            reason,
            ..
        } => (
            // `<run id>:<element>:<visit>`: the element, by name.
            key.rsplit(':')
                .nth(1)
                .map_or_else(|| key.clone(), node_label),
            decided_by.as_str().to_string(),
            format!(
                "answered{}{}",
                by.as_ref().map(|b| format!(" by {b}")).unwrap_or_default(),
                reason
                    .as_ref()
                    .map(|r| format!("; because {r}"))
                    .unwrap_or_default()
            ),
        ),
        Event::EventThrown {
            kind,
            code,
            node,
            caught_by,
            message,
            ..
        } => (
            node_label(node),
            String::new(),
            format!(
                "{} {}{}{}",
                tag(kind),
                code.clone().unwrap_or_default(),
                caught_by
                    .as_ref()
                    .map(|c| format!(", caught by {}", node_label(c)))
                    .unwrap_or_else(|| ", not caught".into()),
                message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
        ),
        Event::RunWaiting { reason, .. } => (String::new(), String::new(), reason.clone()),
        Event::RunFinished {
            status,
            message,
            steps,
            ..
        } => (
            String::new(),
            String::new(),
            format!(
                "{} after {steps} steps{}",
                status.as_str(),
                message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
        ),
        Event::QuestionWithdrawn { key, reason } => {
            (key.clone(), String::new(), reason_of(&Some(reason.clone())))
        }
        other => (
            String::new(),
            String::new(),
            serde_json::to_value(other)
                .map(|mut v| {
                    if let Some(o) = v.as_object_mut() {
                        o.remove("event");
                    }
                    v.to_string()
                })
                .unwrap_or_default(),
        ),
    }
}

/// The page.
/// What the diagram script reads of run `id`: the model's XML and layout, and for each
/// element the run reached its visits, timings, decisions and adaptations (names, not
/// ids). The report and the web console's run page draw the same.
pub fn data(id: &str, records: &[Record], model: Option<&Model>, names: &Names) -> Value {
    let marks = marks(records, names);
    let mut elements = Vec::new();
    let mut missing = Vec::new();
    for (el, m) in &marks {
        let known = model.is_some_and(|model| model.elements.contains_key(el));
        if !known {
            missing.push(json!(el));
        }
        elements.push(json!({
            "id": el,
            "name": names.node(el),
            "visits": m.visits,
            "taken": m.taken,
            "duration_ms": m.duration_ms,
            "duration": if m.duration_ms > 0 { duration(m.duration_ms) } else { String::new() },
            "model_calls": m.model_calls,
            "model_time": if m.model_calls > 0 { duration(m.model_ms) } else { String::new() },
            "tool_calls": m.tool_calls,
            "tools_not_made": m.tools_not_made,
            "decisions": m.decisions,
            "adaptations": m.adaptations,
            "failed": m.failed,
            "removed": m.removed,
        }));
    }
    let state = FlowState::fold(records.iter());
    json!({
        "run_id": id,
        "xml": model.map(|m| m.xml.as_str()),
        "layout": model.map(|m| m.layout),
        "elements": elements,
        "not_in_model": missing,
        "current": state.waiting.as_ref().map(|_| state.open_questions.values().map(|q| q.element.clone()).collect::<Vec<_>>()),
    })
}

/// One row of a run's journal as the report and the console show it: sequence number,
/// time since the start, event name, element, who decided, detail (all plain text).
pub fn rows(records: &[Record], names: &Names) -> Vec<[String; 6]> {
    let started = records.first().map_or(0, |r| r.at_ms);
    records.iter().map(|r| row(r, started, names)).collect()
}

/// One record's row (see [`rows`]); `started`: when the run's first record was written.
pub fn row(r: &Record, started: u64, names: &Names) -> [String; 6] {
    let (element, by, text) = detail(&r.event, names);
    [
        r.seq.to_string(),
        format!("+{}", duration(r.at_ms.saturating_sub(started))),
        r.event.name().to_string(),
        element,
        by,
        text,
    ]
}

/// The rows of `rows` that record a decision (a task's outputs, a gateway's route, a
/// hook's action, a person's answer, a cancellation) and who made it.
pub fn decisions(rows: &[[String; 6]]) -> Vec<&[String; 6]> {
    rows.iter()
        .filter(|r| {
            matches!(
                r[2].as_str(),
                "task_finished"
                    | "gateway_routed"
                    | "hook_evaluated"
                    | "question_answered"
                    | "run_cancelled"
            ) && !r[4].is_empty()
        })
        .collect()
}

/// A page of run `id` (see the module's documentation).
pub fn render(id: &str, records: &[Record], model: Option<&Model>, names: &Names) -> String {
    let state = FlowState::fold(records.iter());
    let started = records.first().map_or(0, |r| r.at_ms);
    let ended = records.last().map_or(0, |r| r.at_ms);
    let data = data(id, records, model, names);

    let mut deciders: BTreeMap<&str, u64> = BTreeMap::new();
    for r in records {
        match &r.event {
            Event::TaskFinished { decided_by, .. }
            | Event::GatewayRouted { decided_by, .. }
            | Event::HookEvaluated { decided_by, .. }
                if *decided_by != Decider::None =>
            {
                *deciders.entry(decided_by.as_str()).or_default() += 1;
            }
            _ => {}
        }
    }
    let status = state
        .status
        .map(|s| s.as_str().to_string())
        .or_else(|| state.waiting.as_ref().map(|_| "waiting".to_string()))
        .unwrap_or_else(|| "unfinished".to_string());

    let mut html = String::with_capacity(VIEWER_JS.len() + 64 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:\">\n\
         <title>cuga-flo run {}</title>\n<style>\n{DIAGRAM_CSS}\n{BPMN_CSS}\n{PAGE_CSS}\n</style>\n</head>\n<body>\n",
        escape(id)
    );
    let _ = write!(
        html,
        "<header><h1>Run <code>{}</code></h1>\n<dl class=\"summary\">\
         <dt>app</dt><dd>{}</dd><dt>process</dt><dd>{}</dd>\
         <dt>status</dt><dd class=\"status status-{}\">{}</dd>",
        escape(id),
        escape(&state.app),
        escape(&state.process_key),
        escape(&status),
        escape(&status),
    );
    if let Some(message) = &state.message {
        let _ = write!(html, "<dt>message</dt><dd>{}</dd>", escape(message));
    }
    let _ = write!(
        html,
        "<dt>started</dt><dd>{}</dd><dt>duration</dt><dd>{}</dd><dt>steps</dt><dd>{}</dd>",
        escape(&utc_time(started)),
        escape(&duration(ended.saturating_sub(started))),
        state.steps
    );
    if !deciders.is_empty() {
        let text: Vec<String> = deciders.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = write!(
            html,
            "<dt>decided by</dt><dd>{}</dd>",
            escape(&text.join(", "))
        );
    }
    if !state.model_usage.is_empty() {
        let u = &state.model_usage;
        let _ = write!(
            html,
            "<dt>model calls</dt><dd>{} ({} failed), {} + {} tokens, {}</dd>",
            u.calls,
            u.failed_calls,
            u.prompt_tokens,
            u.completion_tokens,
            escape(&duration(u.latency_ms))
        );
    }
    html.push_str("</dl></header>\n");
    html.push_str(
        "<section><h2>Path</h2>\n<div id=\"diagram\" class=\"diagram\"></div>\n\
         <p class=\"legend\"><span class=\"key key-taken\"></span> path taken \
         <span class=\"key key-decided\"></span> decided \
         <span class=\"key key-adapted\"></span> adapted by a hook \
         <span class=\"key key-removed\"></span> removed by a hook \
         <span class=\"key key-failed\"></span> failed or thrown</p>\n\
         <div id=\"notes\" class=\"notes\"></div>\n</section>\n",
    );

    let all_rows = rows(records, names);
    html.push_str(
        "<section><h2>Decisions</h2>\n<table id=\"decisions\">\n<thead><tr><th>time</th>\
         <th>element</th><th>decided by</th><th>what, and why</th></tr></thead>\n<tbody>\n",
    );
    for [_, time, _, element, by, text] in decisions(&all_rows) {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(time),
            escape(element),
            escape(by),
            escape(text)
        );
    }
    html.push_str("</tbody>\n</table>\n</section>\n");
    html.push_str(
        "<section><h2>Journal</h2>\n<table id=\"journal\">\n<thead><tr><th>#</th><th>time</th>\
         <th>event</th><th>element</th><th>decided by</th><th>detail</th></tr></thead>\n<tbody>\n",
    );
    for row in all_rows {
        let [seq, time, name, element, by, text] = row;
        let _ = writeln!(
            html,
            "<tr class=\"ev-{name}\"><td>{seq}</td><td>{}</td><td>{name}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&time),
            escape(&element),
            escape(&by),
            escape(&text),
        );
    }
    html.push_str("</tbody>\n</table>\n</section>\n");
    let _ = writeln!(
        html,
        "<footer>Written by cuga-flo {}. Diagram drawn by <a href=\"https://bpmn.io\">bpmn-js</a> \
         (bpmn.io licence).</footer>",
        env!("CARGO_PKG_VERSION")
    );
    let _ = write!(
        html,
        "<script type=\"application/json\" id=\"run-data\">{}</script>\n\
         <script>\n{}\n</script>\n<script>\n{PAGE_JS}\n</script>\n</body>\n</html>\n",
        script_json(&data),
        viewer_js()
    );
    html
}

pub const PAGE_CSS: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 1.5em 2em; color: #1f2328; }
h1 { font-size: 1.3em; margin: 0.8em 0 0.4em; } h2 { font-size: 1.1em; margin: 1.2em 0 0.4em; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: 0.15em 1em; margin: 0; font-size: 0.95em; }
dl.summary dt { color: #57606a; } dl.summary dd { margin: 0; }
.status-completed { color: #1a7f37; font-weight: 600; } .status-failed, .status-terminated { color: #cf222e; font-weight: 600; }
.diagram { height: 62vh; min-height: 380px; border: 1px solid #d0d7de; border-radius: 6px; position: relative; background: #fff; }
.legend { font-size: 0.85em; color: #57606a; }
.key { display: inline-block; width: 0.9em; height: 0.9em; border-radius: 2px; vertical-align: middle; margin-left: 0.8em; }
.key-taken { background: #2da44e; } .key-decided { background: #0969da; } .key-adapted { background: #bf8700; } .key-failed { background: #cf222e; }
.notes p { margin: 0.3em 0; padding: 0.4em 0.6em; background: #fff8c5; border-radius: 4px; font-size: 0.9em; }
.djs-element.cf-taken .djs-visual > :nth-child(1) { stroke: #2da44e !important; stroke-width: 3px !important; }
.djs-shape.cf-taken .djs-visual > :nth-child(1) { fill: #dafbe1 !important; }
.djs-connection.cf-taken .djs-visual > path { stroke: #2da44e !important; stroke-width: 3px !important; }
.djs-element.cf-adapted .djs-visual > :nth-child(1) { stroke: #bf8700 !important; }
.djs-shape.cf-removed .djs-visual > :nth-child(1) { stroke: #8c959f !important; stroke-dasharray: 6 4 !important; fill: #f6f8fa !important; }
.djs-shape.cf-removed .djs-visual text { fill: #8c959f !important; text-decoration: line-through; }
.djs-shape.cf-current .djs-visual > :nth-child(1) { stroke: #9a6700 !important; stroke-width: 4px !important; fill: #fff8c5 !important; }
.key-current { background: #9a6700; } .key-removed { background: #8c959f; }
.djs-element.cf-failed .djs-visual > :nth-child(1) { stroke: #cf222e !important; }
.cf-badge { font-size: 11px; line-height: 1.3; padding: 1px 5px; border-radius: 8px; white-space: nowrap; color: #fff; background: #2da44e; }
.cf-decision { font-size: 11px; line-height: 1.25; padding: 2px 5px; border-radius: 4px; max-width: 180px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; background: #ddf4ff; color: #0a3069; border: 1px solid #54aeff; }
.cf-adaptation { font-size: 11px; padding: 2px 5px; border-radius: 4px; white-space: nowrap; background: #fff8c5; color: #4d2d00; border: 1px solid #bf8700; }
table { border-collapse: collapse; width: 100%; font-size: 0.85em; }
th, td { text-align: left; padding: 0.25em 0.5em; border-bottom: 1px solid #eaeef2; vertical-align: top; }
td:nth-child(6) { white-space: pre-wrap; overflow-wrap: anywhere; }
tr.ev-gateway_routed, tr.ev-task_finished, tr.ev-hook_evaluated { background: #f6f8fa; }
footer { margin-top: 2em; font-size: 0.8em; color: #57606a; }
"#;

pub const PAGE_JS: &str = r#"
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('run-data').textContent);
  var notes = document.getElementById('notes');
  function note(text) {
    var p = document.createElement('p');
    p.textContent = text;
    notes.appendChild(p);
  }
  function el(tag, cls, text, title) {
    var e = document.createElement(tag);
    e.className = cls;
    e.textContent = text;
    if (title) { e.title = title; }
    return e;
  }
  function done(status, highlighted) {
    document.body.setAttribute('data-report', status);
    document.body.setAttribute('data-highlighted', String(highlighted));
  }
  if (!data.xml) {
    note('The run\'s app was not found, so its diagram cannot be drawn (give it with --app); the journal is below.');
    done('no-model', 0);
    return;
  }
  if (data.layout === 'generated') {
    note('The model has no diagram of its process (no BPMN DI): this layout was generated by cuga-flo.');
  } else if (data.layout === 'partial') {
    note('The model\'s diagram does not place every element of its process: this layout was generated by cuga-flo.');
  }
  if (data.not_in_model.length) {
    note('Not in the model (added while the run went, or the model changed since): ' + data.not_in_model.join(', '));
  }
  var viewer = new BpmnJS({ container: '#diagram' });
  viewer.importXML(data.xml).then(function () {
    var canvas = viewer.get('canvas');
    var registry = viewer.get('elementRegistry');
    var overlays = viewer.get('overlays');
    canvas.zoom('fit-viewport', 'auto');
    var highlighted = 0, undrawn = [];
    data.elements.forEach(function (m) {
      var shape = registry.get(m.id);
      if (!shape) {
        if (data.not_in_model.indexOf(m.id) < 0) { undrawn.push(m.id); }
        return;
      }
      var isFlow = !!shape.waypoints;
      if (m.taken) { canvas.addMarker(m.id, 'cf-taken'); highlighted++; }
      if (m.decisions.length) { canvas.addMarker(m.id, 'cf-decided'); }
      if (m.adaptations.length) { canvas.addMarker(m.id, 'cf-adapted'); }
      if (m.failed) { canvas.addMarker(m.id, 'cf-failed'); }
      if (m.removed) { canvas.addMarker(m.id, 'cf-removed'); }
      var badge = [];
      if (m.visits > 1) { badge.push('\u00d7' + m.visits); }
      if (m.duration) { badge.push(m.duration); }
      if (m.model_calls) { badge.push(m.model_calls + ' model call' + (m.model_calls > 1 ? 's' : '') + ' ' + m.model_time); }
      if (m.tool_calls) { badge.push(m.tool_calls + ' tool call' + (m.tool_calls > 1 ? 's' : '')); }
      if (m.tools_not_made) { badge.push(m.tools_not_made + ' refused or denied'); }
      if (badge.length && !isFlow) {
        overlays.add(m.id, 'cf-timing', { position: { top: -10, right: 10 }, html: el('div', 'cf-badge', badge.join(' \u00b7 '), badge.join(' \u00b7 ')) });
      }
      var last = m.decisions[m.decisions.length - 1];
      if (last && last.by !== 'none' && !isFlow) {
        var text = last.by + (last.what ? ': ' + last.what : '');
        var full = m.decisions.map(function (d) {
          return d.by + ': ' + (d.what || '') + (d.reason ? ' \u2014 because ' + d.reason : '');
        }).join('\n');
        // Under the element, unless boundary events sit there: then above it.
        var under = !(shape.attachers && shape.attachers.length);
        var where = under ? { bottom: -4, left: 0 } : { top: -40, left: 0 };
        overlays.add(m.id, 'cf-decision', { position: where, html: el('div', 'cf-decision', text, full) });
      }
      if (m.adaptations.length) {
        var pos = isFlow ? { top: -40, left: 0 } : { top: -26, left: 0 };
        overlays.add(m.id, 'cf-adaptation', { position: pos, html: el('div', 'cf-adaptation', '\u2691 ' + m.adaptations.join('; '), m.adaptations.join('\n')) });
      }
    });
    (data.current || []).forEach(function (id) {
      if (registry.get(id)) { canvas.addMarker(id, 'cf-current'); }
    });
    if (undrawn.length) {
      note('In the model but not in its diagram: ' + undrawn.join(', '));
    }
    done('ready', highlighted);
  }).catch(function (err) {
    note('The diagram could not be drawn: ' + (err && err.message ? err.message : String(err)));
    done('error', 0);
  });
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_in_the_data_or_the_viewer_can_end_its_script_element() {
        let data = json!({"reason": "</script><script>alert(1)</script>", "v": "<!-- & -->"});
        let text = script_json(&data);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        // Still the same JSON for the page's JSON.parse.
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), data);
        let viewer = viewer_js().to_lowercase();
        assert!(!viewer.contains("</script") && !viewer.contains("<script"));
        assert!(!viewer.contains("<!--"));
        assert!(
            !PAGE_JS.contains("innerHTML"),
            "journal text is set as text only"
        );
    }

    #[test]
    fn text_is_escaped_for_content_and_attributes() {
        assert_eq!(
            escape(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
    }
}
