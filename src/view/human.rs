//! The human stream: one line per control point and notable event, a summary at the end.
//! Elements are called by their names (their ids with `-v`, dimmed), a hook by the flow it
//! sits on (`source → target`), and reasons wrap at the terminal's width instead of being
//! cut. Colour only when asked for; a spinner only when asked for (an interactive terminal).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Mutex;
use std::time::Instant;

use console::Style;
use serde_json::{Map, Value};

use super::spinner::Spinner;
use super::{Names, View, assignments, duration, excerpt, value, wrap};
use crate::journal::event::ThrownKind;
use crate::journal::{Event, FlowState, Record};
use crate::vocab::{CallOutcome, Decider, HookAction, RunStatus, TaskStatus, Untrusted};

/// Answers and model-call details are cut to this many characters (reasons and errors
/// wrap instead).
const DETAIL_CHARS: usize = 160;
/// Continuation lines of a wrapped reason start in this column.
const INDENT: usize = 6;
/// The width used when nothing says better (not a terminal, no `COLUMNS`).
pub const DEFAULT_WIDTH: usize = 100;

/// How the stream looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanOptions {
    /// ANSI colour (and bold/dim). Strictly honoured either way.
    pub color: bool,
    /// Also show element ids, node entries, flows taken and variables set outside tasks.
    pub verbose: bool,
    /// Show a spinner on stdout while a reasoner or a remote engine works (only for a
    /// terminal).
    pub interactive: bool,
    /// The columns lines wrap at.
    pub width: usize,
    /// No line per step (`-q`): the run's end (its summary) only, and no spinner.
    pub quiet: bool,
}

impl Default for HumanOptions {
    fn default() -> Self {
        HumanOptions {
            color: false,
            verbose: false,
            interactive: false,
            width: DEFAULT_WIDTH,
            quiet: false,
        }
    }
}

impl HumanOptions {
    /// Colour, spinner and width as stdout allows (a terminal, `NO_COLOR`/`CLICOLOR` and
    /// `COLUMNS` honoured).
    pub fn detect(verbose: bool) -> Self {
        let term = console::Term::stdout();
        HumanOptions {
            color: console::colors_enabled(),
            verbose,
            interactive: term.is_term(),
            width: terminal_width(),
            quiet: false,
        }
    }
}

/// `COLUMNS` when set (at least 40), else the terminal's width, else [`DEFAULT_WIDTH`].
pub fn terminal_width() -> usize {
    if let Some(w) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w >= 40)
    {
        return w;
    }
    let term = console::Term::stdout();
    if term.is_term()
        && let Some((_, cols)) = term.size_checked()
        && cols >= 40
    {
        return usize::from(cols);
    }
    DEFAULT_WIDTH
}

pub struct Human {
    options: HumanOptions,
    inner: Mutex<Inner>,
}

struct Inner {
    out: Box<dyn Write + Send>,
    /// The run so far, for the summary (the path is not in `run_finished`).
    state: FlowState,
    names: Names,
    /// The engine, when it is remote: its steps are waited for with a spinner.
    remote: Option<String>,
    spinner: Option<Spinner>,
    /// The control point being decided (the spinner's message) and since when: records
    /// shown meanwhile that do not answer it (the step's entries, a model call of a re-ask)
    /// redraw the spinner under them, with the same time.
    deciding: Option<Deciding>,
    summarized: bool,
    /// The first and last record's time: the run's duration.
    first_ms: Option<u64>,
    last_ms: u64,
    /// Decisions per decider (tasks, gateways, hooks).
    deciders: BTreeMap<&'static str, usize>,
}

/// A control point being decided, shown by the spinner.
#[derive(Clone)]
struct Deciding {
    element: String,
    message: String,
    since: Instant,
}

impl Human {
    /// Write to standard output.
    pub fn new(options: HumanOptions) -> Self {
        Self::to_writer(Box::new(io::stdout()), options)
    }

    /// Write to `out` (tests render into a buffer with `interactive: false`). The spinner,
    /// when enabled, is always drawn on stdout.
    pub fn to_writer(out: Box<dyn Write + Send>, options: HumanOptions) -> Self {
        Human {
            options,
            inner: Mutex::new(Inner {
                out,
                state: FlowState::default(),
                names: Names::default(),
                remote: None,
                spinner: None,
                deciding: None,
                summarized: false,
                first_ms: None,
                last_ms: 0,
                deciders: BTreeMap::new(),
            }),
        }
    }

    /// What to call the run's elements (the app's model and config).
    pub fn with_names(self, names: Names) -> Self {
        self.lock().names = names;
        self
    }

    /// The run's steps happen on a remote engine (`flowable`, `kogito`, `mcp`): the
    /// spinner shows while its next step is awaited.
    pub fn with_remote_engine(self, engine: impl Into<String>) -> Self {
        self.lock().remote = Some(engine.into());
        self
    }

    /// Show (or update) the spinner while `element` is decided: its name, the model asked
    /// (when the app has one) and the time so far. Cleared by the next record. Does nothing
    /// unless the view is interactive.
    pub fn waiting(&self, element: &str) {
        if !self.options.interactive {
            return;
        }
        let mut inner = self.lock();
        // A hook is named by its flow, `source → target`.
        let names = &inner.names;
        let flow = names.hook_flow(element).unwrap_or(element);
        let name = match (names.node(element), names.flow(flow)) {
            (Some(name), _) => name.to_owned(),
            (None, Some((source, target))) => format!(
                "{} → {}",
                names.node(source).unwrap_or(source),
                names.node(target).unwrap_or(target)
            ),
            (None, None) => element.to_owned(),
        };
        let message = match inner.names.model(element) {
            Some(model) => format!("deciding {name} · asking {model}"),
            None => format!("deciding {name}"),
        };
        let since = Instant::now();
        inner.deciding = Some(Deciding {
            element: element.to_owned(),
            message: message.clone(),
            since,
        });
        self.spin(&mut inner, message, since);
    }

    fn spin(&self, inner: &mut Inner, message: String, since: Instant) {
        if let Some(old) = inner.spinner.take() {
            old.stop();
        }
        inner.spinner = Some(Spinner::start_at(
            message,
            since,
            self.options.width,
            self.options.color,
        ));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn paint(&self, style: &Style, text: &str) -> String {
        if self.options.color {
            style.apply_to(text).force_styling(true).to_string()
        } else {
            text.to_owned()
        }
    }

    fn dim(&self, text: &str) -> String {
        self.paint(&Style::new().dim(), text)
    }

    fn decider(&self, decided_by: Decider) -> String {
        self.dim(&format!("[{}]", said_by(decided_by)))
    }

    /// `(12 ms)`, padded to a fixed width so that where a line wraps does not depend on
    /// how long a step took (the padding is trimmed at a line's end).
    fn took(&self, ms: u64) -> String {
        let text = format!("({})", duration(ms));
        let pad = " ".repeat(8usize.saturating_sub(text.chars().count()));
        format!("{}{pad}", self.dim(&text))
    }

    /// An element as a person reads it: its name (its id when it has none), with the id
    /// dimmed after it in verbose mode.
    fn element(&self, names: &Names, id: &str) -> String {
        match names.node(id) {
            Some(name) if self.options.verbose => format!("{name} {}", self.dim(id)),
            Some(name) => name.to_owned(),
            None => id.to_owned(),
        }
    }

    /// A flow as `source → target` (by name), its id when its ends are unknown.
    fn flow(&self, names: &Names, id: &str) -> String {
        match names.flow(id) {
            Some((source, target)) => {
                let text = format!(
                    "{} → {}",
                    names.node(source).unwrap_or(source),
                    names.node(target).unwrap_or(target)
                );
                if self.options.verbose {
                    format!("{text} {}", self.dim(id))
                } else {
                    text
                }
            }
            None => id.to_owned(),
        }
    }

    /// `parts` (the first one the line's head; the others kept whole, two spaces apart),
    /// then `reason` (and an error), wrapped at the width.
    fn with_reason(
        &self,
        parts: Vec<String>,
        reason: Option<&str>,
        error: Option<&str>,
    ) -> Vec<String> {
        let mut parts = parts.into_iter();
        let head = parts.next().unwrap_or_default();
        let mut words: Vec<String> = parts.map(|p| format!("{p}  ")).collect();
        words.extend(
            reason
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned),
        );
        if let Some(error) = error.filter(|e| !e.trim().is_empty()) {
            let red = Style::new().red();
            words.push(self.paint(&red, "error:"));
            words.extend(error.split_whitespace().map(|w| self.paint(&red, w)));
        }
        wrap(&format!("{head}  "), &words, self.options.width, INDENT)
    }

    /// The lines for one record (the summary aside).
    fn lines(&self, record: &Record, names: &Names) -> Vec<String> {
        let mut lines = Vec::new();
        match &record.event {
            Event::RunStarted {
                run_id,
                app,
                process_key,
                engine,
                reasoner,
                ..
            } => {
                let header = [
                    format!("run {run_id} ·"),
                    format!("app {app} ({process_key}) ·"),
                    format!("engine {engine}"),
                ];
                let bold = Style::new().bold();
                lines.extend(
                    wrap("▶", &header, self.options.width, 2)
                        .iter()
                        .map(|l| self.paint(&bold, l)),
                );
                if !reasoner.is_empty() {
                    let words: Vec<&str> = reasoner.split_whitespace().collect();
                    lines.extend(wrap("  judgement:", &words, self.options.width, 4));
                }
            }
            Event::InstanceStarted {
                instance,
                definition,
                ..
            } => {
                let line = format!("  instance {instance} of {definition}");
                lines.push(self.dim(&line));
            }
            Event::ChildStarted {
                node,
                run_id,
                process_key,
                ..
            } => {
                let line = format!("  {node} calls {process_key}: child run {run_id}");
                lines.push(self.dim(&line));
            }
            Event::NodeEntered {
                node,
                kind,
                name,
                token,
                instance,
            } if self.options.verbose => {
                let mut line = format!("    · enter   {node}  {kind}");
                if let Some(name) = name {
                    line.push_str(&format!("  \"{}\"", excerpt(name, DETAIL_CHARS)));
                }
                if let Some(i) = instance {
                    line.push_str(&format!("  instance {}/{}", i.loop_counter, i.instances));
                }
                line.push_str(&format!("  #{token}"));
                lines.push(self.dim(&line));
            }
            Event::FlowTaken {
                flow,
                source,
                target,
                token,
            } if self.options.verbose => {
                let line = format!("    · flow    {flow}  {source} → {target}  #{token}");
                lines.push(self.dim(&line));
            }
            Event::VariablesSet {
                source,
                values,
                taint,
            } if self.options.verbose => {
                let untrusted = match taint {
                    Some(t) => format!("; untrusted: {t}"),
                    None => String::new(),
                };
                let line = format!(
                    "    · set     {}  ({source}{untrusted})",
                    assignments(values)
                );
                lines.push(self.dim(&line));
            }
            Event::NodeEntered { .. } | Event::FlowTaken { .. } | Event::VariablesSet { .. } => {}
            Event::TaskFinished {
                node,
                status,
                decided_by,
                reason,
                error,
                duration_ms,
                key,
                ..
            } => {
                let (word, style) = match status {
                    TaskStatus::Completed => ("completed", Style::new().green()),
                    TaskStatus::Skipped => ("skipped", Style::new().yellow()),
                    TaskStatus::Failed => ("failed", Style::new().red()),
                };
                // An instance of a multi-instance task: which one.
                let instance = names
                    .instance_of(node, key.as_deref())
                    .map(|(k, n)| format!("  [{k}/{n}]"))
                    .unwrap_or_default();
                let parts = vec![
                    format!(
                        "  {} task    {}{instance}",
                        self.paint(&style, "●"),
                        self.element(names, node)
                    ),
                    self.paint(&style, word),
                    self.decider(*decided_by),
                    self.took(*duration_ms),
                ];
                lines.extend(self.with_reason(parts, reason.as_deref(), error.as_deref()));
            }
            Event::EventThrown {
                kind,
                code,
                node,
                name,
                caught_by,
                interrupting,
                ..
            } => {
                let code = code.as_deref().unwrap_or("(no code)");
                let on = match name {
                    Some(name) if !self.options.verbose => excerpt(name, DETAIL_CHARS),
                    _ => self.element(names, node),
                };
                let mut line = format!(
                    "  {} {} {code} on {on}",
                    self.paint(&Style::new().yellow(), "⚡"),
                    kind.as_str(),
                );
                match caught_by {
                    Some(boundary) => {
                        let boundary = self.element(names, boundary);
                        line.push_str(&format!(" → caught by {boundary}"));
                        if !interrupting {
                            line.push_str(" (non-interrupting)");
                        }
                    }
                    None if *kind == ThrownKind::Error => line.push_str(" → not caught"),
                    None => line.push_str(" → not caught (the run goes on)"),
                }
                lines.push(line);
            }
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                reason,
                duration_ms,
                ..
            } => {
                // A flow is shown by where it leads (its own name, when it has none).
                let taken = if flows.is_empty() {
                    "(none)".to_owned()
                } else {
                    flows
                        .iter()
                        .map(|f| match names.flow(f) {
                            Some((_, target)) => {
                                let name = names.node(target).unwrap_or(target);
                                if self.options.verbose {
                                    format!("{name} {}", self.dim(f))
                                } else {
                                    name.to_owned()
                                }
                            }
                            None => f.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let parts = vec![
                    format!(
                        "  {} gateway {}",
                        self.paint(&Style::new().cyan(), "◆"),
                        self.element(names, node)
                    ),
                    format!("→ {taken}"),
                    self.decider(*decided_by),
                    self.took(*duration_ms),
                ];
                lines.extend(self.with_reason(parts, reason.as_deref(), None));
            }
            Event::HookEvaluated {
                hook,
                flow,
                action,
                target,
                swap,
                added,
                state_updates,
                decided_by,
                reason,
                denied,
                rejected,
                ..
            } => {
                let mut applied = action.as_str().to_owned();
                if let Some((a, b)) = swap {
                    applied.push_str(&format!(
                        " {} ↔ {}",
                        self.element(names, a),
                        self.element(names, b)
                    ));
                } else if let Some(added) = added {
                    applied.push_str(&format!(" +{}", self.element(names, added)));
                } else if let Some(target) = target {
                    applied.push_str(&format!(" {}", self.element(names, target)));
                }
                let style = hook_style(*action, denied.is_some() || rejected.is_some());
                // The flow by its ends; the hook's own id when it says more than its flow
                // (with -v, or when the flow's ends are unknown).
                let on = match names.flow(flow) {
                    Some(_) if self.options.verbose && hook != flow => {
                        format!("{} {}", self.flow(names, flow), self.dim(hook))
                    }
                    Some(_) => self.flow(names, flow),
                    None if hook != flow => format!("{hook} on {flow}"),
                    None => flow.clone(),
                };
                let parts = vec![
                    format!(
                        "  {} hook    {on}: {}",
                        self.paint(&style, "⚑"),
                        self.paint(&style, &applied)
                    ),
                    self.decider(*decided_by),
                ];
                lines.extend(self.with_reason(parts, reason.as_deref(), None));
                let audit = Style::new().yellow();
                if let Some(denied) = denied {
                    // Denied for want of a person's confirmation: name the untrusted
                    // variables and where each came from.
                    const UNTRUSTED: &str = "context held untrusted data: ";
                    let why = reason
                        .as_deref()
                        .and_then(|r| r.split_once(UNTRUSTED))
                        .map(|(_, names)| names);
                    let text = match why {
                        Some(names) => format!(
                            "    denied: {denied} (untrusted data: {})",
                            excerpt(names, DETAIL_CHARS)
                        ),
                        None => format!("    denied: {denied} (not permitted)"),
                    };
                    lines.push(self.paint(&audit, &text));
                }
                if let Some(rejected) = rejected {
                    let words: Vec<String> = rejected
                        .split_whitespace()
                        .map(|w| self.paint(&audit, w))
                        .collect();
                    lines.extend(wrap(
                        &self.paint(&audit, "    rejected:"),
                        &words,
                        self.options.width,
                        INDENT,
                    ));
                }
                if !state_updates.is_empty() {
                    let text = assignments(state_updates);
                    let words: Vec<&str> = text.split_whitespace().collect();
                    lines.extend(wrap("    state:", &words, self.options.width, INDENT));
                }
            }
            Event::ModelCalled { node, call, .. } => {
                // A hook's calls name its flow (`source → target`).
                let at = match (names.node(node), names.flow(node)) {
                    (Some(name), _) => name.to_owned(),
                    (None, Some((source, target))) => format!(
                        "{} → {}",
                        names.node(source).unwrap_or(source),
                        names.node(target).unwrap_or(target)
                    ),
                    (None, None) => node.clone(),
                };
                let mut text = format!(
                    "    · model   {at}  {} #{}  {}",
                    call.model,
                    call.attempt,
                    call.outcome.as_str()
                );
                if let (Some(p), Some(c)) = (call.prompt_tokens, call.completion_tokens) {
                    text.push_str(&format!("  {p}+{c} tokens"));
                }
                if call.http_attempts > 1 {
                    text.push_str(&format!("  {} requests", call.http_attempts));
                }
                if let Some(detail) = call.detail.as_deref() {
                    text.push_str(&format!("  {}", excerpt(detail, DETAIL_CHARS)));
                }
                text.push_str(&format!("  ({})", duration(call.latency_ms)));
                let style = match call.outcome {
                    CallOutcome::Answered | CallOutcome::ToolUse => Style::new().dim(),
                    _ => Style::new().yellow(),
                };
                lines.push(self.paint(&style, &text));
            }
            Event::TopologyChanged { detail, .. } => {
                let words: Vec<&str> = detail.split_whitespace().collect();
                let magenta = Style::new().magenta();
                lines.extend(
                    wrap("    topology:", &words, self.options.width, INDENT)
                        .iter()
                        .map(|l| self.paint(&magenta, l)),
                );
            }
            Event::QuestionParked { question } => {
                let what = question
                    .name
                    .as_deref()
                    .map_or_else(String::new, |n| format!(" ({n})"));
                let who = match &question.remote {
                    Some(r) => format!(
                        "waits for remote agent `{}` (A2A task {}, {})",
                        r.agent, r.task_id, r.state
                    ),
                    None => "waits for a person".to_string(),
                };
                let text = format!(
                    "  ? {} {}{what} {who}  [{}]",
                    question.kind.as_str(),
                    question.element,
                    question.key
                );
                lines.push(self.paint(&Style::new().magenta(), &text));
                if let Some(asked) = question
                    .remote
                    .as_ref()
                    .filter(|r| r.state == "input-required")
                    .and(question.instruction.as_deref())
                {
                    lines.push(self.paint(
                        &Style::new().magenta(),
                        &format!("    {}", excerpt(asked, DETAIL_CHARS)),
                    ));
                }
            }
            Event::QuestionAnswered {
                key,
                answer,
                decided_by,
                by,
                ..
            } => {
                let who = by
                    .as_deref()
                    .map_or_else(String::new, |b| format!(" by {b}"));
                let text = format!(
                    "  ✎ answer  {key}{who}: {}  [{}]",
                    excerpt(&answer.to_string(), DETAIL_CHARS),
                    decided_by.as_str()
                );
                lines.push(self.paint(&Style::new().magenta(), &text));
            }
            Event::QuestionWithdrawn { key, reason } => {
                let text = format!("  ✗ question {key} withdrawn: {reason}");
                lines.push(self.paint(&Style::new().magenta(), &text));
            }
            Event::TimerScheduled { node, due_ms, .. } => {
                let text = format!(
                    "  ⏲ timer   {} due {}",
                    self.element(names, node),
                    crate::view::utc_time(*due_ms)
                );
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::TimerFired { node, .. } => {
                let text = format!("  ⏲ timer   {} fired", self.element(names, node));
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::MessageAwaited {
                node, kind, name, ..
            } => {
                let text = format!(
                    "  ✉ {:<7} {} waits for `{name}`",
                    kind.as_str(),
                    self.element(names, node)
                );
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::MessageReceived {
                node,
                kind,
                name,
                variables,
                thrown_by,
                ..
            } => {
                let mut text = format!(
                    "  ✉ {:<7} {} received `{name}`",
                    kind.as_str(),
                    self.element(names, node)
                );
                if let Some(by) = thrown_by {
                    text.push_str(&format!(" (thrown by {by})"));
                }
                if !variables.is_empty() {
                    let names: Vec<&str> = variables.keys().map(String::as_str).collect();
                    text.push_str(&format!(", sets {}", names.join(", ")));
                }
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::RemoteTaskStarted { node, remote, .. } => {
                let text = format!(
                    "  ↗ remote  {} sent to `{}`: A2A task {} [{}]",
                    self.element(names, node),
                    remote.agent,
                    remote.task_id,
                    remote.state
                );
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::ToolsRequested { .. } | Event::ToolCallStarted { .. } => {}
            Event::ToolCalled {
                node,
                tool,
                arguments,
                outcome,
                result,
                duration_ms,
                by,
                repeated,
                replayed,
                ..
            } => {
                let args = match arguments {
                    Value::String(raw) => raw.clone(),
                    other => crate::view::value(other),
                };
                let mut text = format!(
                    "  ⚙ tool    {}: {} {} → {}",
                    self.element(names, node),
                    crate::view::short(tool, 60),
                    crate::view::short(&args, 60),
                    outcome.as_str(),
                );
                if *replayed {
                    text.push_str(&format!(" {}", self.dim("(recorded, not called)")));
                } else if outcome.called() {
                    text.push_str(&format!(
                        " {}",
                        self.dim(&format!("({})", duration(*duration_ms)))
                    ));
                }
                if *repeated {
                    text.push_str(" (repeated after a stop)");
                }
                if let Some(by) = by {
                    let verb = if outcome.called() {
                        "confirmed"
                    } else {
                        "denied"
                    };
                    text.push_str(&format!(" ({verb} by {})", crate::view::short(by, 40)));
                }
                let shown = !matches!(outcome, crate::journal::event::ToolOutcome::Ok);
                let style = match outcome {
                    crate::journal::event::ToolOutcome::Ok => Style::new().cyan(),
                    crate::journal::event::ToolOutcome::Error => Style::new().yellow(),
                    _ => Style::new().red(),
                };
                lines.push(self.paint(&style, &text));
                if shown {
                    lines.push(
                        self.dim(&format!("            {}", crate::view::short(result, 100))),
                    );
                }
            }
            Event::RemoteReplied {
                node,
                task_id,
                reply,
                by,
                ..
            } => {
                let text = format!(
                    "  ↗ reply   {}: {} replied in A2A task {task_id}: {reply}",
                    self.element(names, node),
                    by.as_deref().unwrap_or("a person"),
                );
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::RunCancelled { by, reason, remote } => {
                let who = by
                    .as_deref()
                    .map_or_else(String::new, |b| format!(" by {b}"));
                let why = reason
                    .as_deref()
                    .map_or_else(String::new, |r| format!(": {}", excerpt(r, DETAIL_CHARS)));
                lines.push(self.paint(&Style::new().yellow(), &format!("  ⊘ cancelled{who}{why}")));
                for r in remote {
                    let outcome = match (&r.state, &r.error) {
                        (_, Some(e)) => format!("CancelTask failed: {}", excerpt(e, DETAIL_CHARS)),
                        (Some(s), None) if !s.is_empty() => format!("CancelTask → {s}"),
                        _ => "CancelTask sent".to_string(),
                    };
                    lines.push(self.paint(
                        &Style::new().yellow(),
                        &format!(
                            "    remote `{}` task {} ({}): {outcome}",
                            r.agent,
                            r.task_id,
                            self.element(names, &r.node)
                        ),
                    ));
                }
            }
            Event::RunResumed { from_seq, repaired } => {
                let mut text = format!("  ↻ resumed after record {from_seq}");
                if let Some(r) = repaired {
                    text.push_str(&format!(" (repaired: {r})"));
                }
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::RunWaiting { .. } | Event::RunFinished { .. } => {}
        }
        lines
    }

    /// The closing block: outcome, path, duration, who decided, variables.
    fn summary(&self, state: &FlowState, inner: &Inner) -> Vec<String> {
        // A URL's credentials (an engine's message names its URL) are never shown.
        let message = (state.message.as_deref())
            .filter(|m| !m.trim().is_empty())
            .map(crate::secret::redact_urls);
        let message = message.as_deref();
        let (text, style) = match state.status {
            Some(RunStatus::Completed) => ("✔ completed".to_owned(), Style::new().green()),
            Some(RunStatus::Terminated) => {
                (with_message("■ terminated", message), Style::new().yellow())
            }
            Some(RunStatus::Failed) => (with_message("✘ failed", message), Style::new().red()),
            Some(RunStatus::Cancelled) => {
                (with_message("⊘ cancelled", message), Style::new().yellow())
            }
            Some(RunStatus::Waiting) | None if state.waiting.is_some() => {
                let w = state.waiting.clone().unwrap_or_default();
                let mut text = "⏸ waiting".to_owned();
                if !state.open_questions.is_empty() {
                    let n = state.open_questions.len();
                    text.push_str(&format!(
                        ": {n} question{} for a person",
                        if n == 1 { "" } else { "s" }
                    ));
                }
                if let Some(due) = w.due_ms {
                    text.push_str(&format!(", a timer due {}", crate::view::utc_time(due)));
                }
                if !w.awaiting.is_empty() {
                    let names: Vec<String> = w
                        .awaiting
                        .iter()
                        .map(|a| match &a.correlation {
                            Some(key) => format!("{} `{}` (key {key:?})", a.kind.as_str(), a.name),
                            None => format!("{} `{}`", a.kind.as_str(), a.name),
                        })
                        .collect();
                    text.push_str(&format!(", for {}", names.join(", ")));
                }
                if w.reason == "interrupted" {
                    text.push_str(" (interrupted)");
                }
                (text, Style::new().magenta())
            }
            Some(RunStatus::Waiting) | None => (
                "✘ incomplete: the run stopped before it finished".to_owned(),
                Style::new().red(),
            ),
        };
        let width = self.options.width;
        let mut lines = vec![String::new()];
        let head_words: Vec<&str> = text.split_whitespace().collect();
        lines.extend(
            wrap("", &head_words, width, 2)
                .into_iter()
                .map(|l| self.paint(&style.clone().bold(), &l)),
        );
        lines.extend(path_lines(&state.execution_path, &inner.names, width));
        if let Some(first) = inner.first_ms {
            lines.push(format!(
                "  duration: {}",
                duration(inner.last_ms.saturating_sub(first))
            ));
        }
        if !inner.deciders.is_empty() {
            let total: usize = inner.deciders.values().sum();
            let parts: Vec<String> = decider_order()
                .iter()
                .filter_map(|d| {
                    inner
                        .deciders
                        .get(d.as_str())
                        .map(|n| format!("{n} {}", said_by(*d)))
                })
                .collect();
            lines.push(format!("  decisions: {total} ({})", parts.join(", ")));
        }
        let usage = &state.model_usage;
        if !usage.is_empty() {
            let mut text = format!(
                "  model: {} call{}, {}+{} tokens",
                usage.calls,
                if usage.calls == 1 { "" } else { "s" },
                usage.prompt_tokens,
                usage.completion_tokens
            );
            if usage.failed_calls > 0 {
                text.push_str(&format!(", {} without a usable answer", usage.failed_calls));
            }
            lines.push(text);
        }
        lines.extend(variable_lines(
            &state.process_variables,
            state.untrusted.as_ref(),
        ));
        lines
    }
}

/// Who decided, as a person reads it: a pass-through step decides nothing, and says so
/// (not "none").
fn said_by(decided_by: Decider) -> &'static str {
    match decided_by {
        Decider::None => "no judgement",
        d => d.as_str(),
    }
}

/// The order deciders are counted in the summary: judgement first (model, person,
/// scripted, rules), then what decided by itself.
fn decider_order() -> [Decider; 12] {
    [
        Decider::Model,
        Decider::Remote,
        Decider::Command,
        Decider::Human,
        Decider::Scripted,
        Decider::Rule,
        Decider::Fallback,
        Decider::Timeout,
        Decider::Condition,
        Decider::Default,
        Decider::Static,
        Decider::None,
    ]
}

impl Inner {
    /// Fold `record` into what the summary needs.
    fn note(&mut self, record: &Record) {
        self.state.apply(record);
        self.names.learn(record);
        self.first_ms.get_or_insert(record.at_ms);
        self.last_ms = self.last_ms.max(record.at_ms);
        let decided = match &record.event {
            Event::TaskFinished { decided_by, .. }
            | Event::GatewayRouted { decided_by, .. }
            | Event::HookEvaluated { decided_by, .. } => Some(*decided_by),
            _ => None,
        };
        if let Some(d) = decided {
            *self.deciders.entry(d.as_str()).or_default() += 1;
        }
    }
}

impl View for Human {
    fn record(&self, record: &Record) {
        let mut inner = self.lock();
        if let Some(spinner) = inner.spinner.take() {
            spinner.stop();
        }
        inner.note(record);
        let over = matches!(
            record.event,
            Event::RunFinished { .. } | Event::RunWaiting { .. }
        );
        if self.options.quiet && !over {
            return;
        }
        let mut lines = if self.options.quiet {
            Vec::new()
        } else {
            self.lines(record, &inner.names)
        };
        if over {
            inner.summarized = true;
            lines.extend(self.summary(&inner.state, &inner));
        }
        write_lines(&mut inner.out, &lines);
        // A record that answers the control point (or stops the run) ends its wait; any
        // other (the step's entries, shown once the engine commits them, or a model call
        // before a re-ask) is shown above the spinner, which goes on.
        let answers = match &record.event {
            Event::TaskFinished { node, .. } | Event::GatewayRouted { node, .. } => Some(node),
            Event::HookEvaluated { hook, .. } => Some(hook),
            Event::QuestionParked { question } => Some(&question.element),
            _ => None,
        };
        let answered =
            over || (inner.deciding.as_ref()).is_some_and(|d| answers == Some(&d.element));
        if answered {
            inner.deciding = None;
        } else if self.options.interactive
            && let Some(d) = inner.deciding.clone()
        {
            self.spin(&mut inner, d.message, d.since);
            return;
        }
        // On a remote engine, what follows is its next step: show that it is awaited.
        if !over
            && self.options.interactive
            && let Some(engine) = inner.remote.clone()
        {
            self.spin(
                &mut inner,
                format!("waiting for the {engine} engine"),
                Instant::now(),
            );
        }
    }

    fn waiting(&self, element: &str) {
        Human::waiting(self, element);
    }

    fn resumed(&self, records: &[Record]) {
        let mut inner = self.lock();
        for r in records {
            inner.note(r);
        }
    }

    /// Print the summary from `state` unless a `run_finished` record already did.
    fn finish(&self, state: &FlowState) {
        let mut inner = self.lock();
        if let Some(spinner) = inner.spinner.take() {
            spinner.stop();
        }
        if !inner.summarized {
            inner.summarized = true;
            let lines = self.summary(state, &inner);
            write_lines(&mut inner.out, &lines);
        }
    }
}

fn write_lines(out: &mut Box<dyn Write + Send>, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let mut text = crate::diag::terminal_safe(&lines.join("\n"));
    text.push('\n');
    // A closed pipe must not stop the run: the journal is the record, this is a view.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn with_message(head: &str, message: Option<&str>) -> String {
    match message {
        Some(message) => format!("{head}: {message}"),
        None => head.to_owned(),
    }
}

fn hook_style(action: HookAction, refused: bool) -> Style {
    if refused {
        Style::new().yellow()
    } else if action == HookAction::Continue {
        Style::new().blue()
    } else if action == HookAction::Terminate {
        Style::new().red()
    } else {
        Style::new().magenta()
    }
}

/// The variables, each untrusted one marked with where it came from.
fn variable_lines(variables: &Map<String, Value>, untrusted: Option<&Untrusted>) -> Vec<String> {
    if variables.is_empty() {
        return vec!["  variables: (none)".to_owned()];
    }
    let mut sorted: Vec<(&String, &Value)> = variables.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut lines = vec!["  variables:".to_owned()];
    lines.extend(
        sorted
            .into_iter()
            .map(|(name, v)| match untrusted.and_then(|u| u.get(name)) {
                Some(taint) => format!("    {name} = {}  [untrusted: {taint}]", value(v)),
                None => format!("    {name} = {}", value(v)),
            }),
    );
    lines
}

/// `  path: A → B → …`, by name, wrapped at `width`.
fn path_lines(path: &[String], names: &Names, width: usize) -> Vec<String> {
    let named: Vec<String> = path
        .iter()
        .map(|id| names.node(id).unwrap_or(id).to_owned())
        .collect();
    let items = path_items(&named);
    wrap("  path:", &items, width, 8)
}

/// The path's steps joined by arrows (`A →`, `B →`, `C`), with the middle of a long one (a
/// loop) elided; one item per step, so that a wrap never splits a name from its arrow.
fn path_items(path: &[String]) -> Vec<String> {
    const SHOWN: usize = 12;
    let shown: Vec<String> = match path.len() {
        0 => return vec!["(none)".to_owned()],
        n if n <= 2 * SHOWN + 1 => path.to_vec(),
        n => path[..SHOWN]
            .iter()
            .cloned()
            .chain([format!("… {} more …", n - 2 * SHOWN)])
            .chain(path[n - SHOWN..].iter().cloned())
            .collect(),
    };
    let last = shown.len() - 1;
    shown
        .into_iter()
        .enumerate()
        .map(|(i, s)| if i < last { format!("{s} →") } else { s })
        .collect()
}

#[cfg(test)]
mod path_tests {
    use super::path_items;

    #[test]
    fn long_paths_keep_their_ends_and_count_the_middle() {
        let path: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
        let text = path_items(&path).join(" ");
        assert!(text.starts_with("n0 → n1"), "{text}");
        assert!(text.contains("… 16 more …"), "{text}");
        assert!(text.ends_with("n38 → n39"), "{text}");
        assert_eq!(path_items(&path[..3]).join(" "), "n0 → n1 → n2");
        assert_eq!(path_items(&[]), vec!["(none)"]);
    }
}
