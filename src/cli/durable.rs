//! Runs that outlive their terminal: `runs resume` continues a run from its journal
//! (after a crash, an interruption, or when it parked), `runs pending` lists the questions
//! waiting runs wait for, and `runs answer` checks an answer against its question,
//! journals it and resumes the run. Each holds the run's journal lock while it writes: a
//! run never has two writers.

use std::path::Path;

use clap::Args;
use serde_json::{Map, Value, json};

use crate::journal::Record;
use crate::journal::store::Journal;
use crate::reason::park::Given;
use crate::vocab::{Offered, Question};

use crate::run::answer::Answered;
use crate::run::cancel::{Cancelled, Cancelling, cancel_run};

use super::signals::Signals;
use super::start;
use super::{Cli, Outcome, Style, UsageError};
use crate::run::lookup::find_run;
use crate::run::parked::{Found, Job, Next};
use crate::run::plan::RunSpec;
use crate::run::resume::Resuming;

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run's id (or a unique prefix or suffix of it); with --due, leave it out
    #[arg(required_unless_present = "due")]
    pub run_id: Option<String>,
    /// Resume every waiting run whose timer is due (for cron)
    #[arg(long, conflicts_with = "run_id")]
    pub due: bool,
    /// With --due: resume up to N due runs at once, as `worker` does [default: the number
    /// of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,
    #[command(flatten)]
    pub common: ResumeOptions,
}

/// What every command that resumes a run takes.
#[derive(Debug, Args, Clone)]
pub struct ResumeOptions {
    #[command(flatten)]
    pub journal: super::JournalArgs,
    /// The app, when the run's app folder has moved
    #[arg(long, value_name = "APP|PATH")]
    pub app: Option<String>,
    /// Never call a model while resuming
    #[arg(long)]
    pub no_model: bool,
    /// Never ask at the terminal: questions park again (formerly `--detach`, still
    /// accepted)
    #[arg(long = "no-prompt", alias = "detach")]
    pub detach: bool,
    /// Stream one JSON event per line
    #[arg(long)]
    pub json: bool,
    /// Wait in-process for a timer due within SECS seconds; a later one parks the run
    /// again [default: 60]
    #[arg(long, value_name = "SECS")]
    pub max_wait: Option<u64>,
    /// A run on Flowable or Kogito: the engine's URL, when it is no longer where the run
    /// started
    #[arg(long, value_name = "URL")]
    pub engine_url: Option<String>,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Seconds between two looks for due runs
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub interval: f64,
    /// Look once, resume what is due, and exit
    #[arg(long)]
    pub once: bool,
    /// Also look this often (`30s`, `2m`, `500ms`; a bare number is seconds) into the
    /// graph of each run parked at a guardrail, on an endpoint or the embedded store on
    /// disk, and resume it as soon as an approver's decision is there
    #[arg(long, value_name = "DURATION", value_parser = super::age)]
    pub graph_poll: Option<std::time::Duration>,
    /// Resume up to N due runs at once [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,
    /// Serve the worker's metrics (its queue, how late due runs are, the runs it resumes)
    /// in Prometheus's text format at http://HOST:PORT/metrics (a loopback address; port
    /// 0: any free port); prints `metrics URL` on stdout once ready
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics: Option<String>,
    /// Serve every instance of the apps' processes on this engine, whoever started it (a
    /// worker fleet): deploy each app's model (once per content), take over each instance
    /// nobody journals yet, and resume each one a stopped worker left
    #[arg(long, value_name = "ENGINE", value_parser = ["flowable"])]
    pub engine: Option<String>,
    /// With --engine: the apps to serve (names or folders)
    #[arg(value_name = "APP", requires = "engine")]
    pub apps: Vec<String>,
    /// With --engine: every app of the apps folder whose `workflow_engine` is that engine
    #[arg(long, requires = "engine", conflicts_with = "apps")]
    pub all: bool,
    /// With --engine: a node of the engine's cluster (repeat for each; tried in order, the
    /// next when one stops answering) [default: --engine-url, else the first app's
    /// `workflow_engine.url`]
    #[arg(long = "node", value_name = "URL", requires = "engine")]
    pub nodes: Vec<String>,
    /// With --engine: how often to look at the engine for work (`500ms`, `2s`)
    #[arg(long, value_name = "DURATION", value_parser = super::age, default_value = "1s",
          requires = "engine")]
    pub poll: std::time::Duration,
    /// With --engine: answers for the control points of the instances taken over, by id
    /// (as `start --answers`), before the app's model or a person
    #[arg(long, value_name = "FILE", requires = "engine")]
    pub answers: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: ResumeOptions,
}

#[derive(Debug, Args)]
pub struct PendingArgs {
    #[command(flatten)]
    pub runs: super::RunDir,
    /// Only the runs of this app
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
    /// One JSON document: every open question
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    /// The control point: its element id (task, gateway or hook) or the question's key
    pub control_point: String,
    /// A guardrail gateway, or a tool call waiting for a person: `approve` or `deny`
    #[arg(value_name = "approve|deny")]
    pub decision: Option<String>,
    /// A gateway: the flow to take (repeat for an inclusive gateway)
    #[arg(long = "flow", value_name = "FLOW")]
    pub flows: Vec<String>,
    /// A hook: the action
    #[arg(long, value_name = "ACTION")]
    pub action: Option<String>,
    /// A hook: the action's target (twice for swap_nodes; the task for add_node)
    #[arg(long = "target", value_name = "NODE")]
    pub targets: Vec<String>,
    /// A task: its outputs, a JSON object
    #[arg(long, value_name = "JSON")]
    pub outputs: Option<String>,
    /// A task: raise this BPMN error instead of answering outputs (an error boundary
    /// event on the task catches it)
    #[arg(long, value_name = "CODE", conflicts_with = "outputs")]
    pub error: Option<String>,
    /// With --error: what the error says
    #[arg(long, value_name = "TEXT", requires = "error")]
    pub message: Option<String>,
    /// The N-th offered flow or action, as `runs pending` numbers them
    #[arg(long, value_name = "N")]
    pub choice: Option<usize>,
    /// A hook: set a process variable with the action (repeatable)
    #[arg(long = "set", value_name = "NAME=JSON")]
    pub state_updates: Vec<String>,
    /// Why (journalled with the answer)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Who answers (default: $USER)
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// A question a consulted remote person asked back (`input-required`): the reply,
    /// sent to them in the same A2A task
    #[arg(long, value_name = "TEXT")]
    pub reply: Option<String>,
    /// Only record the answer; `runs resume` applies it later
    #[arg(long)]
    pub no_resume: bool,
    #[command(flatten)]
    pub common: ResumeOptions,
}

/// `runs resume`.
pub fn resume(cli: &Cli, args: &ResumeArgs, style: Style) -> Result<Outcome, UsageError> {
    if args.due {
        return resume_due(cli, &args.common, concurrency(args.concurrency), style);
    }
    if args.concurrency.is_some() {
        return Err(
            UsageError::new("--concurrency resumes the due runs: it goes with --due")
                .with_help("`cuga-flo runs resume --due --concurrency N`"),
        );
    }
    let wanted = args.run_id.as_deref().unwrap_or_default();
    let id = find_run(&args.common.journal.run_dir, wanted)?;
    let (journal, records, repaired) = crate::run::parked::reopen(
        &args.common.journal.run_dir,
        &id,
        args.common.journal.durability,
    )?;
    resume_open(cli, &args.common, id, journal, records, repaired, style)
}

/// `--concurrency`: how many runs are resumed at once (default: the number of cores).
fn concurrency(n: Option<u16>) -> usize {
    n.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        usize::from,
    )
}

/// `runs resume --due`: every waiting run that can go on, up to `concurrency` at once (as
/// `worker` resumes them); a run another process holds is left to it. The most serious
/// of the runs' outcomes (a run that cannot be resumed counts as failed).
fn resume_due(
    cli: &Cli,
    opts: &ResumeOptions,
    concurrency: usize,
    style: Style,
) -> Result<Outcome, UsageError> {
    let ids = (crate::run::parked::due_runs(&opts.journal.run_dir, crate::clock::now_ms())
        .into_iter())
    .map(|id| Next::Resume(id, Found::Due))
    .collect();
    let never = std::sync::atomic::AtomicBool::new(false);
    let settings = resuming(cli, opts);
    let done = resume_concurrently(cli, &settings, opts, ids, concurrency, &never, style);
    if done.resumed == 0 && !opts.json {
        outln!("no waiting run is due");
    }
    Ok(done.worst)
}

/// `cuga-flo worker`: resume due runs until stopped; with `--engine flowable`, also serve
/// every instance of the apps' processes on Flowable ([`crate::run::fleet`]). Each run
/// found is taken by the next free thread at once. Ctrl-C or SIGTERM stops taking work,
/// lets the runs in hand park where they are (their journals stay whole; the fleet's other
/// workers take a Flowable run over at once) and ends the worker with exit 0.
pub fn worker(cli: &Cli, args: &WorkerArgs, style: Style) -> Result<Outcome, UsageError> {
    if !(args.interval.is_finite() && args.interval > 0.0) {
        return Err(UsageError::new(
            "--interval must be a positive number of seconds",
        ));
    }
    if args.engine.is_some() && args.apps.is_empty() && !args.all {
        return Err(
            UsageError::new("--engine serves apps: name them, or give --all")
                .with_help("`cuga-flo worker --engine flowable loan_approval`"),
        );
    }
    let stop = stop_flag()?;
    if let Some(at) = &args.metrics {
        let url = metrics_thread(at)?;
        outln!("metrics {url}");
    }
    let mut settings = resuming(cli, &args.common);
    let fleet = match &args.engine {
        Some(_) => {
            settings.lost_parks = true;
            Some(fleet(cli, args)?)
        }
        None => None,
    };
    tracing::info!(
        "worker: resuming due runs under {} every {} s",
        args.common.journal.run_dir.display(),
        args.interval
    );
    if let Some(every) = args.graph_poll {
        tracing::info!(
            "worker: looking into the graphs of runs waiting at a guardrail every {:.1} s",
            every.as_secs_f64()
        );
    }
    let concurrency = concurrency(args.concurrency);
    let interval = std::time::Duration::from_secs_f64(args.interval);
    let mut looks = crate::run::resume::Looks::new(interval, args.graph_poll);
    if fleet.is_some() || crate::journal::shared::mounted().is_some() {
        looks = looks.with_orphans();
    }
    let mut next_poll = std::time::Instant::now();
    // What is due, and the engine's work: what the free threads take next.
    let mut look = |free: usize| -> Vec<Next<Adopting>> {
        let mut items: Vec<Next<Adopting>> = looks
            .runs(&settings)
            .into_iter()
            .map(|(id, found)| Next::Resume(id, found))
            .collect();
        let now = std::time::Instant::now();
        if let Some((fleet, runtime)) = &fleet
            && now >= next_poll
        {
            next_poll = now + args.poll;
            let most = free.saturating_sub(items.len());
            items.extend(fleet_work(
                cli, args, &settings, fleet, runtime, &items, most,
            ));
        }
        items
    };
    // A fleet's runs resume through the node that answered last.
    let settings_now = || {
        let mut now = settings.clone();
        if let Some((fleet, _)) = &fleet {
            now.engine_url = Some(fleet.url());
        }
        now
    };
    if args.once {
        let items = look(usize::MAX);
        let worst = std::sync::Mutex::new(Outcome::Ok);
        crate::run::parked::take_each(
            &settings.run_dir,
            settings.durability,
            items,
            concurrency,
            &stop,
            |job| run_job(cli, &settings_now(), &args.common, job, style, &worst),
        );
        return Ok(Outcome::Ok);
    }
    let worst = std::sync::Mutex::new(Outcome::Ok);
    crate::run::parked::serve_each(
        &args.common.journal.run_dir,
        args.common.journal.durability,
        concurrency,
        &stop,
        std::time::Duration::from_millis(50),
        look,
        |job| run_job(cli, &settings_now(), &args.common, job, style, &worst),
    );
    Ok(Outcome::Ok)
}

/// An instance a worker fleet takes over: the run, and the claim on it (held until the
/// run has ended or parked).
type Adopting = (RunSpec, crate::run::fleet::Claim);

/// The worker fleet `args` asks for, its apps deployed, with the runtime it looks with.
fn fleet(
    cli: &Cli,
    args: &WorkerArgs,
) -> Result<(crate::run::fleet::Fleet, tokio::runtime::Runtime), UsageError> {
    let (apps, nodes) = crate::run::fleet::Fleet::served(
        &cli.apps_dir,
        (!args.all).then_some(args.apps.as_slice()),
        &args.nodes,
        args.common.engine_url.as_deref(),
    )
    .map_err(|e| {
        let help = e.help();
        let error = UsageError::new(crate::diag::chain(&e));
        match help {
            Some(help) => error.with_help(help),
            None => error,
        }
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the async runtime: {e}")))?;
    let fleet = runtime
        .block_on(crate::run::fleet::Fleet::deploy(&apps, &nodes))
        .map_err(|e| UsageError::new(crate::diag::chain(&e)))?;
    for served in fleet.apps() {
        outln!(
            "serving {} on Flowable (definition {}) through {}",
            served.app.name,
            served.deployed.definition,
            fleet.url()
        );
    }
    Ok((fleet, runtime))
}

/// What the fleet's look at Flowable found, beside `items` (found already), at most
/// `most` pieces: the instances to take over and the runs to resume.
fn fleet_work(
    cli: &Cli,
    args: &WorkerArgs,
    settings: &Resuming,
    fleet: &crate::run::fleet::Fleet,
    runtime: &tokio::runtime::Runtime,
    items: &[Next<Adopting>],
    most: usize,
) -> Vec<Next<Adopting>> {
    use crate::run::fleet::Work;
    if most == 0 {
        return Vec::new();
    }
    let work = match runtime.block_on(fleet.look(&settings.run_dir, most)) {
        Ok(work) => work,
        Err(e) => {
            tracing::warn!("fleet: {}", crate::diag::chain(&e));
            return Vec::new();
        }
    };
    let listed = |id: &str| items.iter().any(|i| i.id() == id);
    work.into_iter()
        .filter_map(|w| match w {
            Work::Adopt {
                app,
                adoption,
                claim,
            } => {
                let id = adoption.run_id.clone();
                let mut spec = fleet.adoption(
                    app,
                    adoption,
                    cli.apps_dir.clone(),
                    settings.run_dir.clone(),
                );
                spec.durability = settings.durability;
                spec.no_model = settings.no_model;
                spec.max_wait = settings.max_wait;
                spec.answers.clone_from(&args.answers);
                Some(Next::Other(id, (spec, claim)))
            }
            Work::Resume(id) if !listed(&id) => Some(Next::Resume(id, Found::Engine)),
            Work::Resume(_) => None,
        })
        .collect()
}

/// Run one job a worker took (a run to resume, an instance to take over), shown as
/// `runs resume` shows a run; its outcome folded into `worst`. Whether to go on taking
/// work (not when Ctrl-C or SIGTERM parked the run in hand).
fn run_job(
    cli: &Cli,
    settings: &Resuming,
    opts: &ResumeOptions,
    job: Job<Adopting>,
    style: Style,
    worst: &std::sync::Mutex<Outcome>,
) -> bool {
    let (id, o) = match job {
        Job::Resume(run) => {
            let run = *run;
            let id = run.id.clone();
            let o =
                crate::run::resume::plan(settings, run.id, run.journal, run.records, run.repaired)
                    .map_err(UsageError::from)
                    .and_then(|(spec, resumed)| {
                        start::run_spec(cli, spec, Some(resumed), opts.json, style)
                    });
            (id, o)
        }
        Job::Other((spec, claim)) => {
            let id = spec
                .adopt
                .as_ref()
                .map(|a| a.run_id.clone())
                .unwrap_or_default();
            let o = start::run_spec(cli, spec, None, opts.json, style);
            drop(claim);
            (id, o)
        }
    };
    let o = o.unwrap_or_else(|e| {
        tracing::warn!("run {id}: {}", e.message);
        Outcome::Failed
    });
    let mut worst = worst.lock().unwrap_or_else(|e| e.into_inner());
    *worst = worse(*worst, o);
    o != Outcome::Interrupted
}

/// Resume the runs of `items` that can go on ([`crate::run::parked::take_each`]), each
/// shown as `runs resume` shows it; the most serious of their outcomes.
fn resume_concurrently(
    cli: &Cli,
    settings: &Resuming,
    opts: &ResumeOptions,
    items: Vec<Next<Adopting>>,
    concurrency: usize,
    stop: &std::sync::atomic::AtomicBool,
    style: Style,
) -> Batch {
    let worst = std::sync::Mutex::new(Outcome::Ok);
    let taken = crate::run::parked::take_each(
        &settings.run_dir,
        settings.durability,
        items,
        concurrency,
        stop,
        |job| run_job(cli, settings, opts, job, style, &worst),
    );
    Batch {
        resumed: taken.resumed,
        worst: worst.into_inner().unwrap_or_else(|e| e.into_inner()),
    }
}

/// What [`resume_concurrently`] did.
struct Batch {
    /// How many runs it resumed.
    resumed: usize,
    /// The most serious of their outcomes.
    worst: Outcome,
}

/// The worker's Prometheus endpoint, on a thread of its own for the process's lifetime:
/// its URL once it listens.
fn metrics_thread(at: &str) -> Result<String, UsageError> {
    use std::net::ToSocketAddrs as _;
    let addr = (at.to_socket_addrs().ok().and_then(|mut a| a.next())).ok_or_else(|| {
        UsageError::new(format!("--metrics {at}: not an address to listen on"))
            .with_help("give HOST:PORT, e.g. 127.0.0.1:9464 (port 0: any free port)")
    })?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("cuga-flo-metrics".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                    return;
                }
            };
            runtime.block_on(async move {
                match crate::serving::MetricsEndpoint::bind(addr, None).await {
                    Ok(m) => {
                        let _ = tx.send(Ok(m.url()));
                        std::future::pending::<()>().await;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                    }
                }
            });
        })
        .map_err(|e| UsageError::new(format!("--metrics: cannot start its thread: {e}")))?;
    match rx.recv() {
        Ok(Ok(url)) => Ok(url),
        Ok(Err(e)) => Err(UsageError::new(format!(
            "--metrics: cannot listen on {addr}: {e}"
        ))),
        Err(_) => Err(UsageError::new("--metrics: its thread stopped")),
    }
}

/// A flag set by Ctrl-C or SIGTERM while the worker sleeps between looks (a run in hand
/// handles the signal itself: it parks).
fn stop_flag() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>, UsageError> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the async runtime: {e}")))?;
    let mut signals = runtime
        .block_on(async { Signals::new() })
        .map_err(|e| UsageError::new(format!("cannot watch for signals: {e}")))?;
    std::thread::spawn(move || {
        runtime.block_on(signals.recv());
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    Ok(stop)
}

/// The more serious of two outcomes (for commands that resume several runs).
pub(super) fn worse(a: Outcome, b: Outcome) -> Outcome {
    let rank = |o: &Outcome| match o {
        Outcome::Ok => 0,
        Outcome::Waiting => 1,
        Outcome::Failed => 2,
        Outcome::Interrupted => 3,
        Outcome::Usage => 4,
    };
    if rank(&b) > rank(&a) { b } else { a }
}

/// What `opts` resumes runs with.
fn resuming(cli: &Cli, opts: &ResumeOptions) -> Resuming {
    Resuming {
        apps_dir: cli.apps_dir.clone(),
        run_dir: opts.journal.run_dir.clone(),
        durability: opts.journal.durability,
        app: opts.app.clone(),
        no_model: opts.no_model,
        detach: opts.detach,
        max_wait: opts.max_wait,
        engine_url: opts.engine_url.clone(),
        lost_parks: false,
    }
}

/// Continue run `id`, whose journal is open.
pub(super) fn resume_open(
    cli: &Cli,
    opts: &ResumeOptions,
    id: String,
    journal: Journal,
    records: Vec<Record>,
    repaired: Option<String>,
    style: Style,
) -> Result<Outcome, UsageError> {
    let (spec, resumed) =
        crate::run::resume::plan(&resuming(cli, opts), id, journal, records, repaired)?;
    start::run_spec(cli, spec, Some(resumed), opts.json, style)
}

/// `runs pending`: the open questions of every run, oldest first.
pub fn pending(args: &PendingArgs, style: Style) -> Result<Outcome, UsageError> {
    let (open, waits) = crate::run::pending::pending(&args.runs.run_dir, args.app.as_deref());
    let rows: Vec<(u64, String, String, Question)> = (open.into_iter())
        .map(|o| (o.asked_at_ms, o.run_id, o.app, o.question))
        .collect();
    let waits: Vec<_> = (waits.into_iter())
        .map(|w| (w.run_id, w.app, w.awaited))
        .collect();
    if args.json {
        let doc: Vec<Value> = rows
            .iter()
            .map(|(at, id, app, q)| {
                json!({"run_id": id, "app": app, "asked_at_ms": at, "question": q})
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "[]".into())
        );
        return Ok(Outcome::Ok);
    }
    for (id, app, a) in &waits {
        let command = match (a.kind, &a.correlation) {
            (crate::journal::event::CatchKind::Message, Some(key)) => {
                format!("message --key {}", crate::cli::output::shell_quote(key))
            }
            (crate::journal::event::CatchKind::Message, None) => format!("message {id}"),
            (crate::journal::event::CatchKind::Signal, _) => "signal".to_string(),
        };
        outln!(
            "{} {id}  {app}  {} `{}` at {}  (cuga-flo runs {command} {})",
            style.yellow("✉"),
            a.kind.as_str(),
            a.name,
            a.node,
            crate::cli::output::shell_quote(&a.name)
        );
    }
    if rows.is_empty() {
        if waits.is_empty() {
            outln!("no open questions");
        }
        return Ok(Outcome::Ok);
    }
    for (at, id, app, q) in &rows {
        let name = q
            .name
            .as_deref()
            .map_or_else(String::new, |n| format!(" ({n})"));
        outln!(
            "{} {id}  {app}  {} {}{name}  asked {}",
            style.yellow("?"),
            q.kind.as_str(),
            q.element,
            crate::view::utc_time(*at)
        );
        match &q.remote {
            // A consulted person asked a question back: a person here replies.
            Some(r) if r.until_ms.is_some() && r.state == "input-required" => {
                outln!(
                    "    waits for a reply to remote agent `{}` (A2A task {}, {}): `runs answer {id} {} --reply TEXT`",
                    r.agent,
                    r.task_id,
                    r.state,
                    q.element
                );
                if let Some(i) = q.instruction.as_deref() {
                    outln!("    {i}");
                }
            }
            Some(r) => {
                outln!(
                    "    waits for remote agent `{}` (A2A task {}, {}); `runs resume {id}` asks it again",
                    r.agent,
                    r.task_id,
                    r.state
                );
                if let Some(i) = q
                    .instruction
                    .as_deref()
                    .filter(|_| r.state == "input-required")
                {
                    outln!("    {i}");
                }
            }
            None => {
                for line in offered_lines(q) {
                    outln!("    {line}");
                }
            }
        }
        if let Some(deadline) = q.deadline_ms {
            outln!("    deadline {}", crate::view::utc_time(deadline));
        }
    }
    Ok(Outcome::Ok)
}

/// What a question offers, numbered as `--choice` counts.
fn offered_lines(q: &Question) -> Vec<String> {
    if let Some(a) = &q.approval {
        let who = if a.approvers.is_empty() {
            String::new()
        } else {
            format!("  (approvers: {})", a.approvers.join(", "))
        };
        return vec![
            format!("approve --by NAME → {}{who}", a.approve_flow),
            format!("deny --by NAME → {}", a.deny_flow),
        ];
    }
    match &q.offered {
        Offered::Flows { flows, multiple } => {
            let mut lines: Vec<String> = flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let label = f
                        .label
                        .as_deref()
                        .map_or_else(String::new, |l| format!("  {l}"));
                    format!("{}. --flow {} → {}{label}", i + 1, f.id, f.target)
                })
                .collect();
            if *multiple {
                lines.push("(several flows may be taken: repeat --flow)".into());
            }
            lines
        }
        Offered::Actions {
            actions,
            targets,
            insertable,
            settable,
            ..
        } => {
            let mut lines: Vec<String> = actions
                .iter()
                .enumerate()
                .map(|(i, a)| format!("{}. --action {a}", i + 1))
                .collect();
            if !targets.is_empty() {
                lines.push(format!("targets: {}", targets.join(", ")));
            }
            if !insertable.is_empty() {
                lines.push(format!("insertable tasks: {}", insertable.join(", ")));
            }
            if !settable.is_empty() {
                let vars: Vec<String> = settable
                    .iter()
                    .map(|s| format!("--set {}=<{}>", s.name, s.kind.described()))
                    .collect();
                lines.push(format!("state updates: {}", vars.join(" ")));
            }
            lines
        }
        Offered::ToolCall {
            tool,
            arguments,
            why,
            said,
        } => {
            let mut lines = vec![
                format!("approve → call {tool} {arguments}"),
                "deny [--reason TEXT] → the call is not made; the agent is told".to_string(),
                format!("(asked because {why})"),
            ];
            if let Some(said) = said {
                lines.push(format!("the agent says: {said}"));
            }
            lines
        }
        Offered::Outputs { outputs, .. } => vec![format!(
            "--outputs {}",
            crate::cli::output::shell_quote(&format!(
                "{{{}}}",
                outputs
                    .iter()
                    .map(|o| format!("{}: …", Value::String(o.clone())))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        )],
    }
}

/// `runs answer`.
pub fn answer(cli: &Cli, args: &AnswerArgs, style: Style) -> Result<Outcome, UsageError> {
    let id = find_run(&args.common.journal.run_dir, &args.run_id)?;
    let (journal, records, repaired) = crate::run::parked::reopen(
        &args.common.journal.run_dir,
        &id,
        args.common.journal.durability,
    )?;
    let by = args
        .by
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .filter(|b| !b.trim().is_empty());
    let request = crate::run::answer::AnswerRequest {
        control_point: args.control_point.clone(),
        // Read only when the question takes an answer (not a reply).
        given: if args.reply.is_some() {
            Given::default()
        } else {
            given(args)?
        },
        decision: args.decision.clone(),
        reply: args.reply.clone(),
        by,
        reason: args.reason.clone(),
    };
    let (answered, record) = crate::run::answer::answer(&journal, &records, &id, request)?;
    if !args.common.json {
        match &answered {
            Answered::Reply {
                question,
                agent,
                task_id,
                reply,
            } => outln!(
                "{} replied to remote agent `{agent}` for {} of run {id} (A2A task {task_id}): {reply}",
                style.green("✓"),
                question.element,
            ),
            Answered::Answer { question, answer } => outln!(
                "{} answered {} of run {id}: {answer}",
                style.green("✓"),
                question.element
            ),
        }
    }
    if args.no_resume {
        return Ok(Outcome::Ok);
    }
    let mut records = records;
    records.push(record);
    resume_open(cli, &args.common, id, journal, records, repaired, style)
}

/// The answer as given on the command line.
fn given(args: &AnswerArgs) -> Result<Given, UsageError> {
    let outputs = match &args.outputs {
        Some(text) => Some(serde_json::from_str::<Value>(text).map_err(|e| {
            UsageError::new(format!("--outputs is not JSON: {e}"))
                .with_help("give a JSON object, e.g. --outputs '{\"approved\": true}'")
        })?),
        None => None,
    };
    let mut state_updates = Map::new();
    for assignment in &args.state_updates {
        let (name, raw) = assignment
            .split_once('=')
            .filter(|(n, _)| !n.trim().is_empty())
            .ok_or_else(|| UsageError::new(format!("--set {assignment}: expected NAME=VALUE")))?;
        let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        state_updates.insert(name.trim().to_string(), value);
    }
    Ok(Given {
        flows: args.flows.clone(),
        action: args.action.clone(),
        targets: args.targets.clone(),
        outputs,
        choice: args.choice,
        state_updates,
        error: args.error.clone(),
        message: args.message.clone(),
        confirm: None,
    })
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    /// Why (journalled with the cancellation)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Who cancels (default: $USER)
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    #[command(flatten)]
    pub journal: super::JournalArgs,
    /// The app, when the run's app folder has moved (its remote agents are read from it)
    #[arg(long, value_name = "APP|PATH")]
    pub app: Option<String>,
    /// Print the cancellation as one JSON object
    #[arg(long)]
    pub json: bool,
}

/// A cancellation as one JSON object (`runs cancel --json`).
fn cancelled_json(done: &Cancelled) -> Value {
    json!({
        "run_id": done.run_id,
        "status": if done.removed { "removed" } else { "cancelled" },
        "by": done.by,
        "reason": done.reason,
        "remote": done.remote,
        "children": done.children.iter().map(cancelled_json).collect::<Vec<_>>(),
    })
}

/// A cancellation, a line for the run, one per remote task and its children indented.
fn print_cancelled(done: &Cancelled, style: Style, indent: &str) {
    if done.removed {
        outln!(
            "{indent}{} removed run {}: it never started (it was stopped before its first \
             record), so nothing was journalled",
            style.yellow("⊘"),
            done.run_id
        );
        return;
    }
    let who = done
        .by
        .as_deref()
        .map_or_else(String::new, |b| format!(" by {b}"));
    outln!(
        "{indent}{} cancelled run {}{who}",
        style.yellow("⊘"),
        done.run_id
    );
    for r in &done.remote {
        let outcome = match (&r.state, &r.error) {
            (_, Some(e)) => format!("CancelTask failed: {e}"),
            (Some(s), None) => format!("CancelTask → {s}"),
            (None, None) => "CancelTask sent".to_string(),
        };
        outln!(
            "{indent}    remote agent `{}`, A2A task {} ({}): {outcome}",
            r.agent,
            r.task_id,
            r.node
        );
    }
    for c in &done.children {
        print_cancelled(c, style, &format!("{indent}  "));
    }
}

/// What `runs cancel` (or `runs replay`) asks of a cancellation, for run::cancel: the
/// run folder, and the app (`--app`, else the one the run's journal names under
/// `apps_dir`).
pub(super) fn cancelling<'a>(
    apps_dir: &'a Path,
    journal: &'a super::JournalArgs,
    app: Option<&'a str>,
) -> Cancelling<'a> {
    Cancelling {
        run_dir: &journal.run_dir,
        durability: journal.durability,
        app,
        find_app: Box::new(move |app| crate::app::registry::find(app, apps_dir)),
    }
}

/// `runs cancel`: a waiting run (or one a crash left behind) ends `cancelled`. Its remote
/// tasks are cancelled at their agents first (`CancelTask`, each reply or failure
/// journalled); a run another process is writing is refused, a finished one too, and
/// nothing is written then.
pub fn cancel(cli: &Cli, args: &CancelArgs, style: Style) -> Result<Outcome, UsageError> {
    let id = find_run(&args.journal.run_dir, &args.run_id)?;
    let by = args
        .by
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .filter(|b| !b.trim().is_empty());
    let done = cancel_run(
        &cancelling(&cli.apps_dir, &args.journal, args.app.as_deref()),
        &id,
        by,
        args.reason.clone(),
    )?;
    if args.json {
        outln!("{}", cancelled_json(&done));
    } else {
        print_cancelled(&done, style, "");
    }
    Ok(Outcome::Ok)
}
