//! `cuga-flo runs`: the runs journalled under the run folder. `list` shows them, `show`
//! prints one as the live stream did, `replay` re-executes one with the answers its
//! journal recorded (no model, no person) and fails on any drift: a question whose
//! context changed since (its digest differs), or a decision that differs. `verify`
//! checks a journal's hash chain and head file; `export` writes it as JSON lines or XES.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Map, Value, json};

use crate::journal::store::{self, JOURNAL_FILE};
use crate::journal::{Durability, Event, FlowState, Record, export, verify};
use crate::reason::record::cassette_from_journal;
use crate::run::listing::{self, Listed, RunSummary};
use crate::run::lookup::{find_run, names_of, read};
use crate::run::replay::{Drift, compare, decisions, drifts, tool_drifts};
use crate::view::{Human, HumanOptions, View};

use super::start::{self, EngineChoice, Preset};
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
    /// Delete old runs: say which (a dry run), or delete them with --yes; never a run
    /// another process has open, nor a waiting or unfinished one without --include-waiting
    Prune(PruneArgs),
    /// Print a journalled run as `start` streamed it
    Show(ShowArgs),
    /// Follow a run from another terminal as `start` streams it (a live or a waiting run,
    /// until it ends), and exit as it ended: 0 completed, 1 failed, terminated or
    /// cancelled
    Watch(WatchArgs),
    /// Re-execute a journalled run from its recorded answers, with no model, and check
    /// that every decision is the same
    Replay(ReplayArgs),
    /// Continue a run from its journal: after a crash, an interruption, or once it parked
    /// (--due: every waiting run whose timer is due)
    Resume(Box<super::durable::ResumeArgs>),
    /// The questions (and messages and signals) waiting runs wait for
    Pending(super::durable::PendingArgs),
    /// Answer an open question (checked as a live answer), journal it, and resume the run
    Answer(Box<super::durable::AnswerArgs>),
    /// Cancel a waiting run (or one a crash left behind): it ends `cancelled`, its remote
    /// tasks cancelled at their agents (a run live in another process is refused)
    Cancel(Box<super::durable::CancelArgs>),
    /// Deliver a message to a run waiting for it (by id, or --correlate
    /// NAME=VALUE), journal it, and resume the run
    Message(Box<super::deliver::MessageArgs>),
    /// Deliver a signal to every run waiting for it, and resume each
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
    pub tampered: super::ReadTampered,
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
                Durability::Batch => {
                    "one fsync when the run waits or an external effect lands, before it is shown"
                }
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
    pub status: Option<Listed>,
    /// At most N runs (the newest)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// The runs as one JSON array
    #[arg(long)]
    pub json: bool,
}

/// A run's status as `runs list` and `runs prune` take it (`--status`): the run
/// service's [`Listed`], named as it shows it.
impl ValueEnum for Listed {
    fn value_variants<'a>() -> &'a [Self] {
        &Listed::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self {
            Listed::Waiting => Some("waiting for an answer, a message or a timer"),
            Listed::Cancelled => Some("Cancelled with `runs cancel`"),
            Listed::Unfinished => {
                Some("Stopped without an end (a crash): `runs resume` continues it")
            }
            Listed::Empty => Some("Stopped before its first record was written: it never started"),
            Listed::Unreadable => Some("The journal cannot be read"),
            Listed::Completed | Listed::Terminated | Listed::Failed => None,
        };
        let value = clap::builder::PossibleValue::new(self.as_str());
        Some(match help {
            Some(h) => value.help(h),
            None => value,
        })
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cuga-flo runs prune --older-than 30d\n  cuga-flo runs \
    prune --status failed --status cancelled --app loan_approval --yes\n  cuga-flo runs prune \
    --older-than 7d --include-waiting --yes"
)]
pub struct PruneArgs {
    #[command(flatten)]
    pub runs: super::RunDir,
    /// Only runs whose last record is older than this (90s, 12h, 7d, 2w)
    #[arg(long, value_name = "AGE", value_parser = super::age)]
    pub older_than: Option<std::time::Duration>,
    /// Only runs with this status (repeatable)
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Vec<Listed>,
    /// Only the runs of this app
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
    /// Waiting and unfinished runs too (they still have work to do: a question, a timer,
    /// a crash to resume from)
    #[arg(long, alias = "include-parked")]
    pub include_waiting: bool,
    /// Delete them (without it, only say what would be deleted)
    #[arg(long)]
    pub yes: bool,
    /// What was (or would be) deleted, as one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cuga-flo runs watch last\n  cuga-flo runs watch 20261207T0246"
)]
pub struct WatchArgs {
    /// The run's id (a unique fragment of it, or `last`)
    pub run_id: String,
    #[command(flatten)]
    pub runs: super::RunDir,
    /// How often the journal is read for new records, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 200, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub interval: u64,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    #[command(flatten)]
    pub tampered: super::ReadTampered,
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
    pub tampered: super::ReadTampered,
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
        RunsCommand::Prune(a) => prune(a),
        RunsCommand::Watch(a) => watch(a, &cli.apps_dir, cli.verbose > 0, style),
        RunsCommand::Show(a) => show(a, &cli.apps_dir, cli.verbose > 0, style),
        RunsCommand::Replay(a) => replay(cli, a, style),
        RunsCommand::Resume(a) => super::durable::resume(cli, a, style),
        RunsCommand::Pending(a) => super::durable::pending(a, style),
        RunsCommand::Answer(a) => super::durable::answer(cli, a, style),
        RunsCommand::Cancel(a) => super::durable::cancel(cli, a, style),
        RunsCommand::Message(a) => super::deliver::message(cli, a, style),
        RunsCommand::Signal(a) => super::deliver::signal(cli, a, style),
        RunsCommand::Verify(a) => verify_run(a, style),
        RunsCommand::Export(a) => export_run(a, style),
        RunsCommand::Report(a) => super::report::run(&cli.apps_dir, a, style),
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

fn export_run(args: &ExportArgs, style: Style) -> Result<Outcome, UsageError> {
    let id = find_run(&args.runs.run_dir, &args.run_id)?;
    let path = store::run_dir(&args.runs.run_dir, &id).join(JOURNAL_FILE);
    let bytes = std::fs::read(&path)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
    let records = args.tampered.read(&args.runs.run_dir, &id, style)?;
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

/// The messages and signals `original` received from outside, delivered again to the
/// replayed run `new_id` as it parks waiting for them: in the original's batches (those
/// delivered while it was parked once), each to the same element, the run resumed with
/// the replay's answers after each batch.
fn redeliver(
    cli: &Cli,
    spec: &crate::run::plan::RunSpec,
    json: bool,
    original: &[Record],
    new_id: &str,
    style: Style,
) -> Result<(), UsageError> {
    for batch in crate::run::replay::delivery_batches(original) {
        let delivered =
            crate::run::replay::deliver_again(&spec.run_dir, spec.durability, new_id, &batch)
                .map_err(|e| UsageError::new(e.to_string()))?;
        let Some(resumed) = delivered else {
            // The replay waits for something else (or has ended): the comparison says so.
            return Ok(());
        };
        start::run_spec(cli, spec.clone(), Some(resumed), json, style)?;
    }
    Ok(())
}

fn list(args: &ListArgs) -> Result<Outcome, UsageError> {
    // Newest first, by the time of each journal's first record (ids made in the same
    // second do not sort by time).
    let mut runs: Vec<RunSummary> = listing::summaries(&args.runs.run_dir)
        .into_iter()
        .filter(|r| args.app.as_ref().is_none_or(|app| &r.state.app == app))
        .filter(|r| args.status.is_none_or(|s| r.status == s))
        .collect();
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
                    "status": r.status.as_str(),
                    "scenario": r.scenario,
                    "started_ms": r.started_ms,
                    "duration_ms": r.duration_ms(),
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
                crate::view::duration(r.duration_ms()),
                r.state.app.clone(),
                r.status.as_str().to_owned(),
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

fn prune(args: &PruneArgs) -> Result<Outcome, UsageError> {
    let filter = listing::Prune {
        older_than: args.older_than,
        statuses: args.status.clone(),
        app: args.app.clone(),
        include_open: args.include_waiting,
    };
    let plan = filter.plan(&args.runs.run_dir, crate::clock::now_ms());
    let mut deleted = Vec::new();
    let mut refused = Vec::new();
    if args.yes {
        for run in &plan.take {
            match listing::remove(&args.runs.run_dir, &run.id) {
                Ok(_) => deleted.push(run),
                Err(e) => {
                    tracing::warn!("{}", crate::diag::chain(&e));
                    refused.push((run, e.to_string()));
                }
            }
        }
    }
    let kept: Vec<(&RunSummary, String)> = (plan.keep.iter())
        .map(|(run, why)| {
            let listing::Kept::Open(status) = why;
            (
                run,
                format!("{}: pass --include-waiting to delete it", status.as_str()),
            )
        })
        .chain(refused.iter().map(|(r, why)| (*r, why.clone())))
        .collect();
    if args.json {
        let row = |r: &RunSummary| json!({"run_id": r.id, "app": r.state.app, "status": r.status.as_str(), "last_ms": r.last_ms});
        let doc = json!({
            "dry_run": !args.yes,
            "deleted": if args.yes { deleted.iter().map(|r| row(r)).collect::<Vec<_>>() } else { Vec::new() },
            "would_delete": if args.yes { Vec::new() } else { plan.take.iter().map(row).collect::<Vec<_>>() },
            "kept": kept.iter().map(|(r, why)| { let mut v = row(r); v["why"] = json!(why); v }).collect::<Vec<_>>(),
        });
        outln!("{doc}");
        return Ok(if refused.is_empty() {
            Outcome::Ok
        } else {
            Outcome::Failed
        });
    }
    let describe = |r: &RunSummary| {
        let when = match r.last_ms {
            0 => "-".to_owned(),
            t => crate::view::utc_time(t),
        };
        format!("{}  {}  {}  {}", r.id, r.state.app, r.status.as_str(), when)
    };
    if args.yes {
        for r in &deleted {
            outln!("deleted {}", describe(r));
        }
    } else {
        for r in &plan.take {
            outln!("would delete {}", describe(r));
        }
    }
    for (r, why) in &kept {
        outln!("kept {} ({why})", describe(r));
    }
    let base = args.runs.run_dir.join("runs");
    match (args.yes, plan.take.len()) {
        (_, 0) => outln!("no runs to delete under {}", base.display()),
        (false, n) => outln!(
            "{n} run(s) would be deleted from {}; pass --yes to delete them",
            base.display()
        ),
        (true, _) => outln!("{} run(s) deleted from {}", deleted.len(), base.display()),
    }
    Ok(if refused.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

fn watch(
    args: &WatchArgs,
    apps_dir: &Path,
    verbose: bool,
    style: Style,
) -> Result<Outcome, UsageError> {
    use crate::vocab::RunStatus;
    let id = find_run(&args.runs.run_dir, &args.run_id)?;
    let mut follower = crate::run::watch::Follower::new(&store::run_dir(&args.runs.run_dir, &id));
    let mut options = HumanOptions::detect(verbose);
    options.color = style.color;
    options.width = style.width;
    options.interactive = false;
    let mut view: Option<Human> = None;
    let mut seen: Vec<Record> = Vec::new();
    loop {
        let records = follower.next_records().map_err(|e| {
            UsageError::new(crate::diag::chain(&e))
                .with_help(format!("`cuga-flo runs verify {id}` says what is wrong"))
        })?;
        for r in records {
            let view = view.get_or_insert_with(|| {
                Human::new(options).with_names(names_of(apps_dir, std::slice::from_ref(&r)))
            });
            view.record(&r);
            seen.push(r);
        }
        let state = FlowState::fold(seen.iter());
        let ended = match state.status {
            Some(RunStatus::Completed) => Some(Outcome::Ok),
            Some(RunStatus::Failed | RunStatus::Terminated | RunStatus::Cancelled) => {
                Some(Outcome::Failed)
            }
            Some(RunStatus::Waiting) | None => None,
        };
        if let Some(outcome) = ended {
            if let Some(view) = &view {
                view.finish(&state);
            }
            return Ok(outcome);
        }
        std::thread::sleep(std::time::Duration::from_millis(args.interval));
    }
}

fn show(
    args: &ShowArgs,
    apps_dir: &Path,
    verbose: bool,
    style: Style,
) -> Result<Outcome, UsageError> {
    let id = find_run(&args.runs.run_dir, &args.run_id)?;
    let records = args.tampered.read(&args.runs.run_dir, &id, style)?;
    if args.json {
        let row = RunSummary::read(&args.runs.run_dir, id.clone());
        let mut doc = match serde_json::to_value(&row.state) {
            Ok(Value::Object(state)) => state,
            _ => Map::new(),
        };
        doc.insert("run_id".into(), json!(id));
        doc.insert("status".into(), json!(row.status.as_str()));
        doc.insert("scenario".into(), json!(row.scenario));
        doc.insert("started_ms".into(), json!(row.started_ms));
        doc.insert("duration_ms".into(), json!(row.duration_ms()));
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

fn replay(cli: &Cli, args: &ReplayArgs, style: Style) -> Result<Outcome, UsageError> {
    let id = find_run(&args.journal.run_dir, &args.run_id)?;
    let records = args.tampered.read(&args.journal.run_dir, &id, style)?;
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
    let new_id = store::new_run_id_in(&args.journal.run_dir);
    // A cancelled run stopped where it waited: its replay parks at the same place (a
    // question the journal does not answer), and is cancelled there too.
    let cancelled =
        FlowState::fold(records.iter()).status == Some(crate::vocab::RunStatus::Cancelled);
    let mut spec = start::app_spec(
        cli,
        args.app.as_deref().unwrap_or(app),
        // The replay is journalled as `--durability` (or CUGA_FLO_DURABILITY) says.
        &args.journal,
    )?;
    // The engine the run ran on.
    spec.engine = EngineChoice::from_str(engine, true).ok().map(Into::into);
    spec.no_model = true;
    spec.detach = cancelled;
    // A replay answers only from the journal: a question it cannot answer fails it (parks
    // it, replaying a cancelled run).
    spec.no_park = !cancelled;
    spec.preset = Some(Box::new(Preset {
        run_id: new_id.clone(),
        cassette: cassette_from_journal(&records),
        source: format!("the answers journalled by run `{id}`"),
        variables: variables.clone(),
        untrusted: untrusted.clone(),
    }));
    start::run_spec(cli, spec.clone(), None, args.json, style)?;
    redeliver(cli, &spec, args.json, &records, &new_id, style)?;
    if cancelled {
        crate::run::cancel::cancel_run(
            &super::durable::cancelling(&cli.apps_dir, &args.journal, args.app.as_deref()),
            &new_id,
            None,
            Some(format!("replay of cancelled run {id}")),
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
