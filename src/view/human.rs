//! The human stream: one line per control point and notable event, a summary at the end.
//! Colour only when asked for; a spinner only when asked for (an interactive terminal).

use std::io::{self, Write};
use std::sync::Mutex;
use std::time::Duration;

use console::Style;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value};

use super::{View, assignments, duration, excerpt, value};
use crate::journal::event::ThrownKind;
use crate::journal::{Event, FlowState, Record};
use crate::vocab::{CallOutcome, Decider, HookAction, RunStatus, TaskStatus, Untrusted};

/// Reasons are cut to this many characters.
const REASON_CHARS: usize = 80;
/// Task errors and hook rejections are cut to this many characters.
const ERROR_CHARS: usize = 160;

/// How the stream looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HumanOptions {
    /// ANSI colour (and bold/dim). Strictly honoured either way.
    pub color: bool,
    /// Also show node entries, flows taken and variables set outside tasks.
    pub verbose: bool,
    /// Show a spinner on stdout while a reasoner works (only for a terminal).
    pub interactive: bool,
}

impl HumanOptions {
    /// Colour and spinner as stdout allows (a terminal, `NO_COLOR`/`CLICOLOR` honoured).
    pub fn detect(verbose: bool) -> Self {
        HumanOptions {
            color: console::colors_enabled(),
            verbose,
            interactive: console::Term::stdout().is_term(),
        }
    }
}

pub struct Human {
    options: HumanOptions,
    inner: Mutex<Inner>,
}

struct Inner {
    out: Box<dyn Write + Send>,
    /// The run so far, for the summary (the path is not in `run_finished`).
    state: FlowState,
    spinner: Option<ProgressBar>,
    summarized: bool,
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
                spinner: None,
                summarized: false,
            }),
        }
    }

    /// Show (or update) the spinner: `reasoning at <element>…`. Cleared by the next record.
    /// Does nothing unless the view is interactive.
    pub fn waiting(&self, element: &str) {
        if !self.options.interactive {
            return;
        }
        let mut inner = self.lock();
        let message = format!("reasoning at {element}…");
        match &inner.spinner {
            Some(spinner) => spinner.set_message(message),
            None => {
                let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
                spinner.set_style(ProgressStyle::default_spinner());
                spinner.set_message(message);
                spinner.enable_steady_tick(Duration::from_millis(100));
                inner.spinner = Some(spinner);
            }
        }
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

    fn decider(&self, decided_by: Decider) -> String {
        self.paint(&Style::new().dim(), &format!("[{}]", decided_by.as_str()))
    }

    fn took(&self, ms: u64) -> String {
        self.paint(&Style::new().dim(), &format!("({})", duration(ms)))
    }

    /// The lines for one record (`state` already includes it).
    fn lines(&self, record: &Record, state: &FlowState) -> Vec<String> {
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
                let header =
                    format!("▶ run {run_id} · app {app} ({process_key}) · engine {engine}");
                lines.push(self.paint(&Style::new().bold(), &header));
                if !reasoner.is_empty() {
                    lines.push(format!("  judgement: {reasoner}"));
                }
            }
            Event::InstanceStarted {
                instance,
                definition,
                ..
            } => {
                let line = format!("  instance {instance} of {definition}");
                lines.push(self.paint(&Style::new().dim(), &line));
            }
            Event::NodeEntered {
                node,
                kind,
                name,
                token,
            } if self.options.verbose => {
                let mut line = format!("    · enter   {node}  {kind}");
                if let Some(name) = name {
                    line.push_str(&format!("  \"{}\"", excerpt(name, REASON_CHARS)));
                }
                line.push_str(&format!("  #{token}"));
                lines.push(self.paint(&Style::new().dim(), &line));
            }
            Event::FlowTaken {
                flow,
                source,
                target,
                token,
            } if self.options.verbose => {
                let line = format!("    · flow    {flow}  {source} → {target}  #{token}");
                lines.push(self.paint(&Style::new().dim(), &line));
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
                lines.push(self.paint(&Style::new().dim(), &line));
            }
            Event::NodeEntered { .. } | Event::FlowTaken { .. } | Event::VariablesSet { .. } => {}
            Event::TaskFinished {
                node,
                status,
                decided_by,
                reason,
                error,
                duration_ms,
                ..
            } => {
                let (word, style) = match status {
                    TaskStatus::Completed => ("completed", Style::new().green()),
                    TaskStatus::Skipped => ("skipped", Style::new().yellow()),
                    TaskStatus::Failed => ("failed", Style::new().red()),
                };
                let mut parts = vec![
                    format!("  {} task    {node}", self.paint(&style, "●")),
                    self.paint(&style, word),
                    self.decider(*decided_by),
                ];
                parts.extend(reason_part(reason.as_deref()));
                if let Some(error) = error.as_deref().filter(|e| !e.trim().is_empty()) {
                    let text = format!("error: {}", excerpt(error, ERROR_CHARS));
                    parts.push(self.paint(&Style::new().red(), &text));
                }
                parts.push(self.took(*duration_ms));
                lines.push(parts.join("  "));
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
                let on = name.as_deref().unwrap_or(node);
                let mut line = format!(
                    "  {} {} {code} on {}",
                    self.paint(&Style::new().yellow(), "⚡"),
                    kind.as_str(),
                    excerpt(on, REASON_CHARS)
                );
                match caught_by {
                    Some(boundary) => {
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
                let taken = if flows.is_empty() {
                    "(none)".to_owned()
                } else {
                    flows.join(", ")
                };
                let mut parts = vec![
                    format!("  {} gateway {node}", self.paint(&Style::new().cyan(), "◆")),
                    format!("→ {taken}"),
                    self.decider(*decided_by),
                ];
                parts.extend(reason_part(reason.as_deref()));
                parts.push(self.took(*duration_ms));
                lines.push(parts.join("  "));
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
                    applied.push_str(&format!(" {a}↔{b}"));
                } else if let Some(added) = added {
                    applied.push_str(&format!(" +{added}"));
                } else if let Some(target) = target {
                    applied.push_str(&format!(" {target}"));
                }
                let style = hook_style(*action, denied.is_some() || rejected.is_some());
                let mut parts = vec![
                    format!(
                        "  {} hook    {hook} on {flow}: {}",
                        self.paint(&style, "⚑"),
                        self.paint(&style, &applied)
                    ),
                    self.decider(*decided_by),
                ];
                parts.extend(reason_part(reason.as_deref()));
                lines.push(parts.join("  "));
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
                            excerpt(names, ERROR_CHARS)
                        ),
                        None => format!("    denied: {denied} (not permitted)"),
                    };
                    lines.push(self.paint(&audit, &text));
                }
                if let Some(rejected) = rejected {
                    let text = format!("    rejected: {}", excerpt(rejected, ERROR_CHARS));
                    lines.push(self.paint(&audit, &text));
                }
                if !state_updates.is_empty() {
                    lines.push(format!("    state: {}", assignments(state_updates)));
                }
            }
            Event::ModelCalled { node, call, .. } => {
                let mut text = format!(
                    "    · model   {node}  {} #{}  {}",
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
                    text.push_str(&format!("  {}", excerpt(detail, ERROR_CHARS)));
                }
                text.push_str(&format!("  ({})", duration(call.latency_ms)));
                let style = match call.outcome {
                    CallOutcome::Answered | CallOutcome::ToolUse => Style::new().dim(),
                    _ => Style::new().yellow(),
                };
                lines.push(self.paint(&style, &text));
            }
            Event::TopologyChanged { detail, .. } => {
                let text = format!("    topology: {detail}");
                lines.push(self.paint(&Style::new().magenta(), &text));
            }
            Event::QuestionParked { question } => {
                let what = question
                    .name
                    .as_deref()
                    .map_or_else(String::new, |n| format!(" ({n})"));
                let text = format!(
                    "  ? {} {}{what} waits for a person  [{}]",
                    question.kind.as_str(),
                    question.element,
                    question.key
                );
                lines.push(self.paint(&Style::new().magenta(), &text));
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
                    excerpt(&answer.to_string(), ERROR_CHARS),
                    decided_by.as_str()
                );
                lines.push(self.paint(&Style::new().magenta(), &text));
            }
            Event::QuestionWithdrawn { key, reason } => {
                let text = format!("  ✗ question {key} withdrawn: {reason}");
                lines.push(self.paint(&Style::new().magenta(), &text));
            }
            Event::TimerScheduled { node, due_ms, .. } => {
                let text = format!("  ⏲ timer   {node} due {}", crate::view::utc_time(*due_ms));
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::TimerFired { node, .. } => {
                let text = format!("  ⏲ timer   {node} fired");
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::RunResumed { from_seq, repaired } => {
                let mut text = format!("  ↻ resumed after record {from_seq}");
                if let Some(r) = repaired {
                    text.push_str(&format!(" (repaired: {r})"));
                }
                lines.push(self.paint(&Style::new().cyan(), &text));
            }
            Event::RunWaiting { .. } => lines.extend(self.summary(state)),
            Event::RunFinished { .. } => lines.extend(self.summary(state)),
        }
        lines
    }

    /// The closing block: outcome, path, variables.
    fn summary(&self, state: &FlowState) -> Vec<String> {
        let message = state.message.as_deref().filter(|m| !m.trim().is_empty());
        let (text, style) = match state.status {
            Some(RunStatus::Completed) => ("✔ completed".to_owned(), Style::new().green()),
            Some(RunStatus::Terminated) => {
                (with_message("■ terminated", message), Style::new().yellow())
            }
            Some(RunStatus::Failed) => (with_message("✘ failed", message), Style::new().red()),
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
        let path = path_text(&state.execution_path);
        let mut lines = vec![
            String::new(),
            self.paint(&style.bold(), &text),
            format!("  path: {path}"),
        ];
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

impl View for Human {
    fn record(&self, record: &Record) {
        let mut inner = self.lock();
        if let Some(spinner) = inner.spinner.take() {
            spinner.finish_and_clear();
        }
        inner.state.apply(record);
        let lines = self.lines(record, &inner.state);
        if matches!(
            record.event,
            Event::RunFinished { .. } | Event::RunWaiting { .. }
        ) {
            inner.summarized = true;
        }
        write_lines(&mut inner.out, &lines);
    }

    fn waiting(&self, element: &str) {
        Human::waiting(self, element);
    }

    fn resumed(&self, records: &[Record]) {
        let mut inner = self.lock();
        for r in records {
            inner.state.apply(r);
        }
    }

    /// Print the summary from `state` unless a `run_finished` record already did.
    fn finish(&self, state: &FlowState) {
        let mut inner = self.lock();
        if let Some(spinner) = inner.spinner.take() {
            spinner.finish_and_clear();
        }
        if !inner.summarized {
            inner.summarized = true;
            let lines = self.summary(state);
            write_lines(&mut inner.out, &lines);
        }
    }
}

fn write_lines(out: &mut Box<dyn Write + Send>, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let mut text = lines.join("\n");
    text.push('\n');
    // A closed pipe must not stop the run: the journal is the record, this is a view.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn reason_part(reason: Option<&str>) -> Option<String> {
    reason
        .map(|r| excerpt(r, REASON_CHARS))
        .filter(|r| !r.is_empty())
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

/// The path, with the middle of a long one (a loop) elided.
fn path_text(path: &[String]) -> String {
    const SHOWN: usize = 12;
    match path.len() {
        0 => "(none)".to_owned(),
        n if n <= 2 * SHOWN + 1 => path.join(" → "),
        n => format!(
            "{} → … {} more … → {}",
            path[..SHOWN].join(" → "),
            n - 2 * SHOWN,
            path[n - SHOWN..].join(" → ")
        ),
    }
}

#[cfg(test)]
mod path_tests {
    use super::path_text;

    #[test]
    fn long_paths_keep_their_ends_and_count_the_middle() {
        let path: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
        let text = path_text(&path);
        assert!(text.starts_with("n0 → n1"), "{text}");
        assert!(text.contains("… 16 more …"), "{text}");
        assert!(text.ends_with("n38 → n39"), "{text}");
        assert_eq!(path_text(&path[..3]), "n0 → n1 → n2");
    }
}
