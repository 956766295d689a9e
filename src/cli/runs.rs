//! `cuga-flo runs`: the runs journalled under the run folder. `list` shows them, `show`
//! prints one as the live stream did, `replay` re-executes one with the answers its
//! journal recorded (no model, no person) and fails on any drift: a question whose
//! context changed since (its digest differs), or a decision that differs. `verify`
//! checks a journal's hash chain and head file; `export` writes it as JSON lines or XES.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Map, Value, json};

use crate::journal::store::{self, JOURNAL_FILE};
use crate::journal::{Durability, Event, EventSink, FlowState, Record, export, verify};
use crate::reason::record::cassette_from_journal;
use crate::view::{Human, HumanOptions, Names, View};
use crate::vocab::{Decider, HookAction};

use super::start::{self, EngineChoice, Preset, StartArgs};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: RunsCommand,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List the journalled runs, newest first
    List(ListArgs),
    /// Print a journalled run as `start` streamed it
    Show(ShowArgs),
    /// Re-execute a journalled run from its recorded answers, with no model, and check
    /// that every decision is the same
    Replay(ReplayArgs),
    /// Continue a run from its journal: after a crash, an interruption, or once it parked
    /// (--due: every parked run whose timer is due)
    Resume(Box<super::durable::ResumeArgs>),
    /// The questions (and messages and signals) parked runs wait for
    Pending(super::durable::PendingArgs),
    /// Answer a parked question (checked as a live answer), journal it, and resume the run
    Answer(Box<super::durable::AnswerArgs>),
    /// Cancel a parked run (or one a crash left behind): it ends `cancelled`, its remote
    /// tasks cancelled at their agents (a run live in another process is refused)
    Cancel(Box<super::durable::CancelArgs>),
    /// Deliver a message to a parked run waiting for it (by id, or --correlate
    /// NAME=VALUE), journal it, and resume the run
    Message(Box<super::deliver::MessageArgs>),
    /// Deliver a signal to every parked run waiting for it, and resume each
    Signal(Box<super::deliver::SignalArgs>),
    /// Check a run's journal against its hash chain and head file (exit 1 when it was
    /// tampered with)
    Verify(VerifyArgs),
    /// Write a run's journal as JSON lines (the audit trail) or as an XES event log
    Export(ExportArgs),
    /// Write one self-contained HTML page of a run: its BPMN diagram with the path taken,
    /// the decisions, adaptations and timings laid over it, and its journal as a table
    #[command(after_help = "Example:\n  cuga-flo runs report 295d46 -o run.html")]
    Report(super::report::ReportArgs),
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    #[command(flatten)]
    pub runs: super::RunDir,
    /// The report as one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    #[command(flatten)]
    pub runs: super::RunDir,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ExportFormat,
    /// Write to this file instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The journal's records, one JSON object per line, with their hash chain
    Jsonl,
    /// An IEEE 1849 XES 1.0 event log (one trace, one event per activity)
    Xes,
}

impl ValueEnum for Durability {
    fn value_variants<'a>() -> &'a [Self] {
        &Durability::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(
            clap::builder::PossibleValue::new(self.as_str()).help(match self {
                Durability::Strict => "fsync every event before it is shown",
                Durability::Batch => "one fsync per step, before the step is shown",
                Durability::Off => "no fsync (survives a crash of the process, not of the machine)",
            }),
        )
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub runs: super::RunDir,
    /// Only the runs of this app
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
    /// Only the runs with this status
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Option<ListStatus>,
    /// At most N runs (the newest)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// The runs as one JSON array
    #[arg(long)]
    pub json: bool,
}

/// A run's status as `runs list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListStatus {
    Completed,
    Terminated,
    Failed,
    /// Parked: waiting for an answer or a timer
    Waiting,
    /// Cancelled with `runs cancel`
    Cancelled,
    /// Stopped without an end (a crash): `runs resume` continues it
    Unfinished,
    /// The journal cannot be read
    Unreadable,
}

impl ListStatus {
    fn as_str(self) -> &'static str {
        match self {
            ListStatus::Completed => "completed",
            ListStatus::Terminated => "terminated",
            ListStatus::Failed => "failed",
            ListStatus::Waiting => "waiting",
            ListStatus::Cancelled => "cancelled",
            ListStatus::Unfinished => "unfinished",
            ListStatus::Unreadable => "unreadable",
        }
    }
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    #[command(flatten)]
    pub runs: super::RunDir,
    /// The run as one JSON document: its state (the journal folded: path, decisions,
    /// variables, the untrusted ones and where each came from), its summary and its records
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    #[command(flatten)]
    pub journal: super::JournalArgs,
    /// The app, when the run's app is not found by its name under the apps folder
    #[arg(long, value_name = "APP|PATH")]
    pub app: Option<String>,
    /// Stream one JSON event per line
    #[arg(long)]
    pub json: bool,
}

pub fn run(cli: &Cli, args: &RunsArgs, style: Style) -> Result<Outcome, UsageError> {
    match &args.command {
        RunsCommand::List(a) => list(a),
        RunsCommand::Show(a) => show(a, &cli.apps_dir, cli.verbose > 0, style),
        RunsCommand::Replay(a) => replay(cli, a, style),
        RunsCommand::Resume(a) => super::durable::resume(cli, a, style),
        RunsCommand::Pending(a) => super::durable::pending(a, style),
        RunsCommand::Answer(a) => super::durable::answer(cli, a, style),
        RunsCommand::Cancel(a) => super::durable::cancel(cli, a, style),
        RunsCommand::Message(a) => super::deliver::message(cli, a, style),
        RunsCommand::Signal(a) => super::deliver::signal(cli, a, style),
        RunsCommand::Verify(a) => verify_run(a, style),
        RunsCommand::Export(a) => export_run(a),
        RunsCommand::Report(a) => super::report::run(&cli.apps_dir, a),
    }
}

fn verify_run(args: &VerifyArgs, style: Style) -> Result<Outcome, UsageError> {
    let id = find_run(&args.runs.run_dir, &args.run_id)?;
    let report = verify(&store::run_dir(&args.runs.run_dir, &id))
        .map_err(|e| UsageError::new(format!("cannot read the journal: {e}")))?;
    if args.json {
        let mut value = serde_json::to_value(&report).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("run_id".into(), json!(id));
            map.insert("intact".into(), json!(report.is_intact()));
        }
        outln!("{value}");
    } else {
        match &report.problem {
            None => outln!(
                "{} run {id}: journal intact, {} records, head {} {}{}",
                style.green("✓"),
                report.records,
                report.head_seq,
                report.head_hash,
                if report.head_file {
                    ""
                } else {
                    " (no head file: removed last records would go unseen)"
                }
            ),
            Some(t) => outln!(
                "{} run {id}: journal tampered: record {} {}: {}",
                style.red("✗"),
                t.seq,
                t.kind,
                t.detail
            ),
        }
    }
    Ok(if report.is_intact() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

fn export_run(args: &ExportArgs) -> Result<Outcome, UsageError> {
    let id = find_run(&args.runs.run_dir, &args.run_id)?;
    let path = store::run_dir(&args.runs.run_dir, &id).join(JOURNAL_FILE);
    let bytes = std::fs::read(&path)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
    let records = read(&args.runs.run_dir, &id)?;
    let text = match args.format {
        // The lines as written (their hashes are the chain), without a torn tail.
        ExportFormat::Jsonl => {
            let (lines, _) = store::split_lines(&bytes);
            let mut out = Vec::new();
            for &(start, end) in lines.iter().take(records.len()) {
                out.extend_from_slice(&bytes[start..=end]);
            }
            String::from_utf8_lossy(&out).into_owned()
        }
        ExportFormat::Xes => export::xes(&id, &records),
    };
    match &args.output {
        Some(file) => std::fs::write(file, text)
            .map_err(|e| UsageError::new(format!("cannot write {}: {e}", file.display())))?,
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                // The reader went away (`| head`): the export ends there, quietly.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                other => {
                    other.map_err(|e| UsageError::new(format!("cannot write the export: {e}")))?
                }
            }
        }
    }
    Ok(Outcome::Ok)
}

/// The ids of the runs under `base` (for shell completion).
pub fn run_ids_in(base: &Path) -> Vec<String> {
    store::run_ids(base)
}

/// The run `wanted` names: its id, or a unique prefix or suffix of it (`20261201T21`, or
/// the memorable `295d46` at its end).
pub(super) fn find_run(base: &Path, wanted: &str) -> Result<String, UsageError> {
    let ids = store::run_ids(base);
    if ids.iter().any(|id| id == wanted) {
        return Ok(wanted.to_string());
    }
    let matching: Vec<&String> = if wanted.is_empty() {
        Vec::new()
    } else {
        ids.iter()
            .filter(|id| id.starts_with(wanted) || id.ends_with(wanted))
            .collect()
    };
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(UsageError::new(format!(
            "no run `{wanted}` under {}",
            base.join("runs").display()
        ))
        .with_help(match ids.last() {
            Some(last) => format!("`cuga-flo runs list` shows them; the newest is `{last}`"),
            None => "no run has been journalled there yet".to_string(),
        })),
        many => {
            let shown: Vec<&str> = many.iter().take(10).map(|s| s.as_str()).collect();
            let more = many.len().saturating_sub(shown.len());
            Err(UsageError::new(format!(
                "`{wanted}` names {} runs; give more of the id",
                many.len()
            ))
            .with_help(format!(
                "candidates: {}{}",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )))
        }
    }
}

pub(super) fn read(base: &Path, id: &str) -> Result<Vec<Record>, UsageError> {
    let path = store::run_dir(base, id).join(JOURNAL_FILE);
    store::read_journal(&path)
        .map(|r| r.records)
        .map_err(|e| UsageError::new(format!("cannot read the journal: {e}")))
}

/// The messages and signals `original` received from outside, delivered again to the
/// replayed run `new_id` as it parks waiting for them: in the original's batches (those
/// delivered while it was parked once), each to the same element, the run resumed with
/// the replay's answers after each batch.
fn redeliver(
    cli: &Cli,
    args: &StartArgs,
    original: &[Record],
    new_id: &str,
    style: Style,
) -> Result<(), UsageError> {
    let external = |e: &Event| {
        matches!(
            e,
            Event::MessageReceived {
                thrown_by: None,
                ..
            }
        )
    };
    let mut batches: Vec<Vec<&Event>> = Vec::new();
    let mut previous_was_delivery = false;
    for event in original.iter().map(|r| &r.event) {
        let delivery = external(event);
        if delivery {
            match batches.last_mut() {
                Some(batch) if previous_was_delivery => batch.push(event),
                _ => batches.push(vec![event]),
            }
        }
        previous_was_delivery = delivery;
    }
    for batch in batches {
        let (journal, reopened) = crate::journal::Journal::open(
            &store::run_dir(&args.journal.run_dir, new_id),
            args.journal.durability,
        )
        .map_err(|e| UsageError::new(format!("cannot reopen the replayed run: {e}")))?;
        let mut records = reopened.records;
        let state = FlowState::fold(records.iter());
        let Some(waiting) = state.waiting.as_ref().filter(|_| state.status.is_none()) else {
            return Ok(());
        };
        let mut open = waiting.awaiting.clone();
        for event in batch {
            let Event::MessageReceived {
                node,
                kind,
                name,
                variables,
                taint,
                ..
            } = event
            else {
                continue;
            };
            let Some(i) = open
                .iter()
                .position(|a| &a.node == node && a.kind == *kind && &a.name == name)
            else {
                // The replay waits for something else: the comparison reports it.
                return Ok(());
            };
            let wait = open.remove(i);
            let record = journal
                .emit(Event::MessageReceived {
                    key: wait.key,
                    node: node.clone(),
                    kind: *kind,
                    name: name.clone(),
                    variables: variables.clone(),
                    thrown_by: None,
                    taint: taint.clone(),
                })
                .and_then(|r| journal.commit().map(|()| r))
                .map_err(|e| UsageError::new(format!("cannot journal the delivery: {e}")))?;
            records.push(record);
        }
        let Some(Event::RunStarted {
            variables,
            untrusted,
            ..
        }) = records.first().map(|r| r.event.clone())
        else {
            return Ok(());
        };
        let resumed = start::Resumed {
            run_id: new_id.to_string(),
            journal,
            variables,
            untrusted,
            model_usage: state.model_usage,
            records,
            answers: crate::reason::park::Answers::default(),
            repaired: None,
        };
        start::run_resumed(cli, args, Some(resumed), style)?;
    }
    Ok(())
}

/// One row of `runs list`.
struct RunRow {
    id: String,
    state: FlowState,
    status: &'static str,
    started_ms: u64,
    duration_ms: u64,
    scenario: Option<String>,
    problem: Option<String>,
}

impl RunRow {
    fn read(base: &Path, id: String) -> RunRow {
        let path = store::run_dir(base, &id).join(JOURNAL_FILE);
        let (records, problem) = match store::read_journal(&path) {
            Ok(r) => (r.records, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let state = FlowState::fold(records.iter());
        let started_ms = records.first().map_or(0, |r| r.at_ms);
        let duration_ms = records
            .last()
            .map_or(0, |r| r.at_ms.saturating_sub(started_ms));
        let scenario = match records.first().map(|r| &r.event) {
            Some(Event::RunStarted {
                launch: Some(launch),
                ..
            }) => launch.scenario.clone(),
            _ => None,
        };
        let status = match (&problem, state.status) {
            (Some(_), _) => ListStatus::Unreadable,
            (None, Some(crate::vocab::RunStatus::Completed)) => ListStatus::Completed,
            (None, Some(crate::vocab::RunStatus::Terminated)) => ListStatus::Terminated,
            (None, Some(crate::vocab::RunStatus::Failed)) => ListStatus::Failed,
            (None, Some(crate::vocab::RunStatus::Waiting)) => ListStatus::Waiting,
            (None, Some(crate::vocab::RunStatus::Cancelled)) => ListStatus::Cancelled,
            (None, None) if state.waiting.is_some() => ListStatus::Waiting,
            (None, None) => ListStatus::Unfinished,
        }
        .as_str();
        RunRow {
            id,
            state,
            status,
            started_ms,
            duration_ms,
            scenario,
            problem,
        }
    }
}

fn list(args: &ListArgs) -> Result<Outcome, UsageError> {
    // Newest first, by the time of each journal's first record (ids made in the same
    // second do not sort by time).
    let mut runs: Vec<RunRow> = store::run_ids(&args.runs.run_dir)
        .into_iter()
        .map(|id| RunRow::read(&args.runs.run_dir, id))
        .filter(|r| args.app.as_ref().is_none_or(|app| &r.state.app == app))
        .filter(|r| args.status.is_none_or(|s| r.status == s.as_str()))
        .collect();
    runs.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| b.id.cmp(&a.id))
    });
    if let Some(limit) = args.limit {
        runs.truncate(limit);
    }
    if args.json {
        let rows: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                json!({
                    "run_id": r.id,
                    "app": r.state.app,
                    "status": r.status,
                    "scenario": r.scenario,
                    "started_ms": r.started_ms,
                    "duration_ms": r.duration_ms,
                    "steps": r.state.steps,
                    "model_calls": r.state.model_usage.calls,
                    "problem": r.problem,
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(rows));
        return Ok(Outcome::Ok);
    }
    if runs.is_empty() {
        outln!("no runs under {}", args.runs.run_dir.join("runs").display());
        return Ok(Outcome::Ok);
    }
    let table: Vec<[String; 7]> = runs
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                if r.started_ms == 0 {
                    "-".to_owned()
                } else {
                    crate::view::utc_time(r.started_ms)
                },
                crate::view::duration(r.duration_ms),
                r.state.app.clone(),
                r.status.to_owned(),
                r.scenario.clone().unwrap_or_else(|| "-".to_owned()),
                r.state.steps.to_string(),
            ]
        })
        .collect();
    let header = [
        "RUN", "STARTED", "DURATION", "APP", "STATUS", "SCENARIO", "STEPS",
    ];
    let mut widths = header.map(str::len);
    for row in &table {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 7]| {
        let text = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ");
        text.trim_end().to_owned()
    };
    outln!("{}", line(header));
    for row in &table {
        outln!("{}", line(row.each_ref().map(String::as_str)));
    }
    Ok(Outcome::Ok)
}

fn show(
    args: &ShowArgs,
    apps_dir: &Path,
    verbose: bool,
    style: Style,
) -> Result<Outcome, UsageError> {
    let id = find_run(&args.runs.run_dir, &args.run_id)?;
    let records = read(&args.runs.run_dir, &id)?;
    if args.json {
        let row = RunRow::read(&args.runs.run_dir, id.clone());
        let mut doc = match serde_json::to_value(&row.state) {
            Ok(Value::Object(state)) => state,
            _ => Map::new(),
        };
        doc.insert("run_id".into(), json!(id));
        doc.insert("status".into(), json!(row.status));
        doc.insert("scenario".into(), json!(row.scenario));
        doc.insert("started_ms".into(), json!(row.started_ms));
        doc.insert("duration_ms".into(), json!(row.duration_ms));
        doc.insert("records".into(), json!(records));
        outln!("{}", Value::Object(doc));
        return Ok(Outcome::Ok);
    }
    let mut options = HumanOptions::detect(verbose);
    options.color = style.color;
    options.width = style.width;
    options.interactive = false;
    let view = Human::new(options).with_names(names_of(apps_dir, &records));
    for r in &records {
        view.record(r);
    }
    view.finish(&FlowState::fold(records.iter()));
    Ok(Outcome::Ok)
}

/// What to call a journalled run's elements: the app it ran (from where it was launched,
/// else by its name under the apps folder), when it still loads; the journal itself names
/// what it entered either way.
pub(super) fn names_of(apps_dir: &Path, records: &[Record]) -> Names {
    match app_of(apps_dir, records) {
        Some(app) => Names::from_app(&app),
        None => Names::default(),
    }
}

/// The app a journalled run ran (from where it was launched, else by its name under the
/// apps folder), when it still loads.
pub(super) fn app_of(apps_dir: &Path, records: &[Record]) -> Option<crate::app::LoadedApp> {
    let Some(Event::RunStarted { app, launch, .. }) = records.first().map(|r| &r.event) else {
        return None;
    };
    let dir = launch
        .as_ref()
        .and_then(|l| l.app_dir.as_deref())
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| apps_dir.join(app));
    if !dir.join("config").is_dir() {
        return None;
    }
    Some(crate::app::load_app(&crate::app::registry::app_at(&dir)))
}

fn replay(cli: &Cli, args: &ReplayArgs, style: Style) -> Result<Outcome, UsageError> {
    let id = find_run(&args.journal.run_dir, &args.run_id)?;
    let records = read(&args.journal.run_dir, &id)?;
    let Some(Event::RunStarted {
        app,
        variables,
        untrusted,
        engine,
        ..
    }) = records.first().map(|r| &r.event)
    else {
        return Err(UsageError::new(format!(
            "the journal of run `{id}` does not start with `run_started`"
        )));
    };
    let new_id = store::new_run_id();
    // A cancelled run stopped where it waited: its replay parks at the same place (a
    // question the journal does not answer), and is cancelled there too.
    let cancelled =
        FlowState::fold(records.iter()).status == Some(crate::vocab::RunStatus::Cancelled);
    let start_args = StartArgs {
        app: args.app.clone().unwrap_or_else(|| app.clone()),
        scenario: None,
        answers: None,
        record: None,
        replay: None,
        vars: Vec::new(),
        input: None,
        // The engine the run ran on.
        engine: EngineChoice::from_str(engine, true).ok(),
        engine_url: None,
        // The replay is journalled as `--durability` (or CUGA_FLO_DURABILITY) says.
        journal: args.journal.clone(),
        step_budget: None,
        json: args.json,
        no_model: true,
        detach: cancelled,
        // A replay answers only from the journal: a question it cannot answer fails it
        // (parks it, replaying a cancelled run).
        no_park: !cancelled,
        by: None,
        max_wait: None,
        bridge: start::BridgeChoice::Direct,
        preset: Some(Box::new(Preset {
            run_id: new_id.clone(),
            cassette: cassette_from_journal(&records),
            source: format!("the answers journalled by run `{id}`"),
            variables: variables.clone(),
            untrusted: untrusted.clone(),
        })),
    };
    start::run(cli, &start_args, style)?;
    redeliver(cli, &start_args, &records, &new_id, style)?;
    if cancelled {
        let cancel = super::durable::CancelArgs {
            run_id: new_id.clone(),
            reason: Some(format!("replay of cancelled run {id}")),
            by: None,
            journal: args.journal.clone(),
            app: args.app.clone(),
            json: false,
        };
        crate::run::cancel::cancel_run(
            &super::durable::cancelling(&cli.apps_dir, &cancel),
            &new_id,
            None,
            cancel.reason.clone(),
        )?;
    }
    let replayed = read(&args.journal.run_dir, &new_id)?;
    let differences = compare(&decisions(&records), &decisions(&replayed));
    let drifts = drifts(&records, &replayed);
    let tool_drifts = tool_drifts(&replayed);
    if args.json {
        let line = json!({
            "event": "replay_checked",
            "run_id": id,
            "replay_run_id": new_id,
            "identical": differences.is_empty(),
            "differences": differences,
            "drift": drifts.iter().map(Drift::to_json).collect::<Vec<_>>(),
            "tool_drift": tool_drifts,
        });
        outln!("{line}");
    } else if differences.is_empty() {
        let count = decisions(&records).values().map(Vec::len).sum::<usize>();
        outln!(
            "{} replay of `{id}`: {count} decisions, all identical (replayed as `{new_id}`)",
            style.green("✓")
        );
    } else {
        outln!(
            "{} replay of `{id}` differs in {} place(s) (replayed as `{new_id}`):",
            style.red("✗"),
            differences.len()
        );
        for d in &differences {
            outln!("    {d}");
        }
        for d in &drifts {
            for line in d.lines() {
                outln!("  {line}");
            }
        }
        for d in &tool_drifts {
            outln!("  {}", crate::diag::printable(d));
        }
    }
    // A replay checks decisions: identical ones succeed whatever the run's own status
    // (a terminated or failed run replayed to the same end is reproduced).
    if differences.is_empty() {
        Ok(Outcome::Ok)
    } else {
        Ok(Outcome::Failed)
    }
}

/// Who decided, as a replay must reproduce it: a model's, a person's or a script's answer,
/// or a model's fallback, is replayed from the journal (so all read as `judgement`);
/// conditions, rules, defaults and static actions decide again by themselves.
fn decider(by: Decider) -> &'static str {
    match by {
        Decider::Model | Decider::Human | Decider::Scripted | Decider::Fallback => "judgement",
        other => other.as_str(),
    }
}

/// Per control point, what was decided at each visit (the decider, the choice), as text.
fn decisions(records: &[Record]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in records {
        // The run's own outcome is kept under the empty id (`compare` calls it "the run").
        let (id, text): (&str, String) = match &r.event {
            Event::TaskFinished {
                node,
                status,
                outputs,
                decided_by,
                ..
            } => (
                node,
                format!(
                    "task {status:?} by {} with {}",
                    decider(*decided_by),
                    serde_json::Value::Object(outputs.clone())
                ),
            ),
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                ..
            } => (
                node,
                format!("gateway → {} by {}", flows.join(", "), decider(*decided_by)),
            ),
            Event::HookEvaluated {
                hook,
                action,
                target,
                swap,
                added,
                denied,
                decided_by,
                ..
            } => {
                let mut text = format!("hook {action} by {}", decider(*decided_by));
                if let Some(t) = target {
                    text.push_str(&format!(" target {t}"));
                }
                if let Some((a, b)) = swap {
                    text.push_str(&format!(" swap {a}↔{b}"));
                }
                if let Some(a) = added {
                    text.push_str(&format!(" add {a}"));
                }
                if let Some(d) = denied.filter(|d| *d != HookAction::Continue) {
                    text.push_str(&format!(" (denied {d})"));
                }
                (hook, text)
            }
            Event::RunFinished { status, .. } => {
                ("", format!("run {}", format!("{status:?}").to_lowercase()))
            }
            _ => continue,
        };
        out.entry(id.to_string()).or_default().push(text);
    }
    out
}

/// The differences between two runs' decisions, one line each.
fn compare(
    original: &BTreeMap<String, Vec<String>>,
    replayed: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let mut out = Vec::new();
    let name = |id: &str| {
        if id.is_empty() {
            "the run".to_string()
        } else {
            format!("`{id}`")
        }
    };
    let ids: std::collections::BTreeSet<&String> = original.keys().chain(replayed.keys()).collect();
    for id in ids {
        let a = original.get(id).map(Vec::as_slice).unwrap_or_default();
        let b = replayed.get(id).map(Vec::as_slice).unwrap_or_default();
        for i in 0..a.len().max(b.len()) {
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) if x == y => {}
                (Some(x), Some(y)) => {
                    out.push(format!("{} visit {}: was {x}; now {y}", name(id), i + 1))
                }
                (Some(x), None) => out.push(format!(
                    "{} visit {}: was {x}; not reached now",
                    name(id),
                    i + 1
                )),
                (None, Some(y)) => out.push(format!(
                    "{} visit {}: not reached before; now {y}",
                    name(id),
                    i + 1
                )),
                (None, None) => {}
            }
        }
    }
    out
}

/// What the replay found drifted at one control point: its question's context differs
/// from the recorded one. The journal keeps a question's digest, not the question, so
/// the recorded side is rebuilt from the journal: the process variables as they were when
/// the control point was asked (the fold of the records before its decision).
#[derive(Debug)]
struct Drift {
    element: String,
    /// The element's name in the model, when the journal gives one.
    name: Option<String>,
    visit: usize,
    diff: crate::reason::record::ContextDiff,
    /// The app's files differ from those the run ran (by their digests).
    app_changed: bool,
}

/// The replayed tool calls that the config now governs differently from the record,
/// each named: `<task>: tool call drifted from the record: call N, `<tool>` ...`.
fn tool_drifts(replayed: &[Record]) -> Vec<String> {
    use crate::reason::tools::TOOL_DRIFT;
    (replayed.iter())
        .filter_map(|r| match &r.event {
            Event::TaskFinished {
                node,
                error: Some(error),
                ..
            } => error
                .find(TOOL_DRIFT)
                .map(|at| format!("`{node}`: {}", &error[at..])),
            _ => None,
        })
        .collect()
}

/// Marks the message of a refused answer (reason::scripted).
const DRIFTED: &str = "context drifted since recording";

/// The control points whose recorded answers the replay refused as drifted, each with
/// the difference between its recorded and its new context.
fn drifts(original: &[Record], replayed: &[Record]) -> Vec<Drift> {
    let app_digest = |records: &[Record]| match records.first().map(|r| &r.event) {
        Some(Event::RunStarted { app_digest, .. }) => app_digest.clone(),
        _ => None,
    };
    let app_changed = match (app_digest(original), app_digest(replayed)) {
        (Some(a), Some(b)) => a != b,
        _ => false,
    };
    let mut out: Vec<Drift> = Vec::new();
    for (at, r) in replayed.iter().enumerate() {
        let texts: Vec<&str> = match &r.event {
            Event::TaskFinished { error, .. } => error.iter().map(String::as_str).collect(),
            Event::HookEvaluated {
                rejected, reason, ..
            } => rejected.iter().chain(reason).map(String::as_str).collect(),
            Event::RunFinished { message, .. } => message.iter().map(String::as_str).collect(),
            _ => continue,
        };
        let Some(element) = texts
            .iter()
            .filter(|t| t.contains(DRIFTED))
            .find_map(|t| drifted_element(t))
        else {
            continue;
        };
        if out.iter().any(|d| d.element == element) {
            continue;
        }
        // Which visit: the decisions at the element before this record, plus one.
        let visit = decision_positions(&replayed[..at], &element).len() + 1;
        let before_new = &replayed[..at];
        let before_old = match decision_positions(original, &element).get(visit - 1) {
            Some(&i) => &original[..i],
            None => original,
        };
        let vars = |records: &[Record]| FlowState::fold(records).process_variables;
        let name = original
            .iter()
            .chain(replayed)
            .find_map(|r| match &r.event {
                Event::NodeEntered { node, name, .. } if *node == element => name.clone(),
                _ => None,
            });
        out.push(Drift {
            diff: crate::reason::record::ContextDiff::of(&vars(before_old), &vars(before_new)),
            element,
            name,
            visit,
            app_changed,
        });
    }
    out
}

/// `X` in "… control point `X`: …".
fn drifted_element(text: &str) -> Option<String> {
    let rest = &text[text.find("control point `")? + "control point `".len()..];
    Some(rest[..rest.find('`')?].to_owned())
}

/// The positions of the records deciding at `element` (task, gateway or hook).
fn decision_positions(records: &[Record], element: &str) -> Vec<usize> {
    (records.iter().enumerate())
        .filter(|(_, r)| match &r.event {
            Event::TaskFinished { node, .. } | Event::GatewayRouted { node, .. } => node == element,
            Event::HookEvaluated { hook, flow, .. } => hook == element || flow == element,
            _ => false,
        })
        .map(|(i, _)| i)
        .collect()
}

impl Drift {
    fn lines(&self) -> Vec<String> {
        let who = match &self.name {
            Some(n) => format!("{n} (`{}`)", self.element),
            None => format!("`{}`", self.element),
        };
        let mut lines = vec![format!(
            "drift at {who}, visit {}: its question is not the one recorded",
            self.visit
        )];
        if self.diff.is_empty() {
            lines.push("  the variables are the same as when it was recorded".to_owned());
        } else {
            lines.push("  variables, recorded → now:".to_owned());
            lines.extend(
                self.diff
                    .lines(DRIFT_LINES)
                    .into_iter()
                    .map(|l| format!("    {l}")),
            );
        }
        if self.app_changed {
            lines.push(
                "  the app's files changed since the run (config, model or policies): its \
                 policy, instruction, outputs or flows may differ too"
                    .to_owned(),
            );
        } else if self.diff.is_empty() {
            lines.push(
                "  the app's files are the same: the choices offered there differ (an earlier \
                 decision or condition went another way)"
                    .to_owned(),
            );
        }
        lines
    }

    fn to_json(&self) -> Value {
        json!({
            "element": self.element,
            "name": self.name,
            "visit": self.visit,
            "variables": self.diff.to_json(),
            "app_changed": self.app_changed,
        })
    }
}

/// At most this many changed keys are listed per drift.
const DRIFT_LINES: usize = 12;
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drifted_element_is_read_from_the_refusal() {
        let text = "invalid answer for control point `Task_1`: the context drifted since \
                    recording (…)";
        assert_eq!(drifted_element(text).as_deref(), Some("Task_1"));
        assert_eq!(drifted_element("no element here"), None);
    }

    #[test]
    fn compare_names_each_visit_that_differs() {
        let mut a = BTreeMap::new();
        a.insert("G".to_string(), vec!["gateway → F1 by model".to_string()]);
        a.insert(String::new(), vec!["run completed".to_string()]);
        let mut b = a.clone();
        assert!(compare(&a, &b).is_empty());
        b.insert(
            "G".to_string(),
            vec!["gateway → F2 by scripted".to_string()],
        );
        b.insert(
            "T".to_string(),
            vec!["task Completed by none with {}".to_string()],
        );
        let diffs = compare(&a, &b);
        assert_eq!(diffs.len(), 2, "{diffs:?}");
        assert!(diffs[0].contains("`G` visit 1: was gateway → F1 by model"));
        assert!(diffs[1].contains("`T` visit 1: not reached before"));
    }
}
