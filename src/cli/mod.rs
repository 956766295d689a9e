//! The command line: one file per command. Commands print results on stdout (human or
//! `--json`) and logs on stderr (through `tracing`).

/// `println!` for results: a closed stdout (`cuga-flo list | head -1`) stops the output
/// instead of panicking; the command goes on and exits as it would have.
macro_rules! outln {
    () => { $crate::cli::output::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::cli::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for results (see [`outln!`]).
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::write_stdout(format_args!($($arg)*)) };
}

pub mod completions;
mod deliver;
mod describe;
mod durable;
mod graph;
#[cfg(feature = "graph")]
mod graphio;
#[cfg(feature = "graph")]
mod graphquery;
pub mod init;
mod kogito;
mod list;
pub mod man;
mod output;
mod report;
mod runs;
pub mod schema;
mod serve;
mod serve_a2a;
mod signals;
mod start;
mod store;
mod target;
mod test;
mod tools;
mod users;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, Parser, Subcommand, ValueEnum};

pub use output::Style;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done; nothing wrong.
    Ok,
    /// The command ran and found errors (or a run failed).
    Failed,
    /// Bad input or usage.
    Usage,
    /// A run parked: it waits for an answer or a timer (`runs pending`, `runs answer`,
    /// `runs resume`).
    Waiting,
    /// Interrupted by Ctrl-C (the run parked, resumable).
    Interrupted,
}

impl From<Outcome> for ExitCode {
    fn from(o: Outcome) -> ExitCode {
        ExitCode::from(match o {
            Outcome::Ok => 0,
            Outcome::Failed => 1,
            Outcome::Usage => 2,
            Outcome::Waiting => 3,
            Outcome::Interrupted => 130,
        })
    }
}

/// A usage problem: printed on stderr, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UsageError {
    pub message: String,
    pub help: Option<String>,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        UsageError {
            message: message.into(),
            help: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Where runs are journalled: the option of every command that reads runs.
#[derive(Debug, Clone, clap::Args)]
pub struct RunDir {
    /// Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)
    #[arg(long, value_name = "DIR", default_value = crate::journal::store::DEFAULT_BASE, value_parser = run_dir)]
    pub run_dir: std::path::PathBuf,
}

/// Reading a run whose journal fails verification.
#[derive(Debug, Clone, clap::Args)]
pub struct ReadTampered {
    /// Read the run even when its journal fails `runs verify` (a warning says what is wrong)
    #[arg(long)]
    pub allow_tampered: bool,
}

impl ReadTampered {
    /// Run `id`'s records: a journal that is not intact is refused, or with
    /// `--allow-tampered` read with a warning on stderr.
    pub fn read(
        &self,
        base: &std::path::Path,
        id: &str,
        style: Style,
    ) -> Result<Vec<crate::journal::Record>, UsageError> {
        let (records, problem) = crate::run::lookup::read_checked(base, id, self.allow_tampered)?;
        if let Some(p) = problem {
            eprintln!(
                "{}: run `{id}`'s journal is not intact (record {} {}: {}); what follows \
                 cannot be trusted",
                style.yellow("warning"),
                p.seq,
                p.kind,
                crate::diag::printable(&p.detail)
            );
        }
        Ok(records)
    }
}

/// A `--run-dir`: a folder, or a path where one can be made (not a file, a device or a
/// pipe, whose "runs" would silently be none).
fn run_dir(text: &str) -> Result<std::path::PathBuf, NotAFolder> {
    let path = std::path::PathBuf::from(text);
    match std::fs::metadata(&path) {
        Ok(meta) if !meta.is_dir() => Err(NotAFolder(text.to_string())),
        _ => Ok(path),
    }
}

/// Why a duration argument is not one.
#[derive(Debug, thiserror::Error)]
enum BadDuration {
    #[error("`{0}` is not a duration (500ms, 30s, 2m, 12h, 7d, 2w)")]
    NotANumber(String),
    #[error("`{0}`: the unit is one of ms, s, m, h, d, w")]
    Unit(String),
    #[error("`{0}` is not a positive duration")]
    NotPositive(String),
}

/// A duration argument (`--graph-poll`, `--older-than`): `500ms`, `30s`, `2m`, `12h`,
/// `7d`, `2w`, or seconds; more than zero.
fn age(text: &str) -> Result<std::time::Duration, BadDuration> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: f64 = (number.trim().parse()).map_err(|_| BadDuration::NotANumber(text.into()))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        "w" => n * 604_800.0,
        _ => return Err(BadDuration::Unit(text.into())),
    };
    if !(secs.is_finite() && secs > 0.0 && secs < 1e12) {
        return Err(BadDuration::NotPositive(text.into()));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// A `--run-dir` that names something other than a folder.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a folder")]
struct NotAFolder(String);

/// Where runs are journalled and how: the options of every command that writes runs.
#[derive(Debug, Clone, clap::Args)]
pub struct JournalArgs {
    /// Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)
    #[arg(long, value_name = "DIR", default_value = crate::journal::store::DEFAULT_BASE, value_parser = run_dir)]
    pub run_dir: std::path::PathBuf,
    /// How the journal is committed: strict (fsync each event), batch (one fsync per
    /// step) or off (no fsync); see docs/journal.md
    #[arg(
        long,
        value_name = "MODE",
        env = "CUGA_FLO_DURABILITY",
        default_value = "batch"
    )]
    pub durability: crate::journal::Durability,
}

/// An error of the run service, with its help line.
impl<E: crate::diag::Help> From<E> for UsageError {
    fn from(e: E) -> Self {
        let help = e.help();
        let error = UsageError::new(e.to_string());
        match help {
            Some(h) => error.with_help(h),
            None => error,
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "cuga-flo",
    version,
    about = "Run governed agentic business processes",
    long_about = "Run governed agentic business processes.\n\n\
        A process is a BPMN 2.0 diagram plus a flow config and markdown policies, in an app \
        folder under ./applications/<app>/. The structure is enforced deterministically; \
        reasoning happens only at governed control points: tasks, gateways and hooks on \
        sequence flows.",
    after_help = "Examples:\n  cuga-flo list\n  cuga-flo test\n  cuga-flo validate loan_approval\n  cuga-flo validate --all --strict\n  cuga-flo validate path/to/model.bpmn"
)]
pub struct Cli {
    /// Folder holding the apps (one sub-folder each)
    #[arg(long, global = true, env = "CUGA_FLO_APPS", value_name = "DIR", default_value = crate::app::registry::DEFAULT_APPS_DIR)]
    pub apps_dir: PathBuf,

    /// When to use colour
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// More logging on stderr (repeat for more)
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,

    /// Only errors on stderr, and a run's end (not a line per step) on stdout
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Where runs are kept: the run folder (`files`, the default), or a PostgreSQL
    /// database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host's
    /// run folder is then its cache of it); `cuga-flo store migrate` prepares one
    #[arg(
        long,
        global = true,
        env = "CUGA_FLO_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub store: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new app from a template: model with diagram, config, policies, scenarios
    Init(init::InitArgs),
    /// List the apps and whether each validates
    List(list::ListArgs),
    /// Check apps or BPMN models for every mistake that can be found before a run
    Validate(validate::ValidateArgs),
    /// What a person sees before a run: each control point, who decides there, who answers
    Describe(describe::DescribeArgs),
    /// Draw an app's or a model's flow (mermaid, dot, a listing); export it as RDF, import
    /// an RDF graph as an app
    Graph(graph::GraphArgs),
    /// Run a process: every control-point decision and the hook audit log, live
    Start(start::StartArgs),
    /// Run apps' scenarios and check their expectations (for CI: --junit FILE)
    Test(test::TestArgs),
    /// The journalled runs: list, show, replay, verify, export
    Runs(runs::RunsArgs),
    /// Serve apps: MCP over streamable HTTP or stdio, A2A agents, the web console
    Serve(serve::ServeArgs),
    /// The people who may sign in to the web console (serve --ui): add, remove, list
    Users(users::UsersArgs),
    /// The tools an app's tool sources offer (MCP servers, OpenAPI), and who confirms each;
    /// --lock writes tools.lock.json for validate
    Tools(tools::ToolsArgs),
    /// Kogito (Apache KIE): generate and build an app's service
    Kogito(kogito::KogitoArgs),
    /// Resume waiting runs as their timers come due (and answered ones), until stopped
    Worker(durable::WorkerArgs),
    /// The run store a database keeps (--store postgres://…): migrate its schema, its status
    Store(store::StoreArgs),
    /// Print the JSON Schema of a flow config, a scenario or an answers file (for editors)
    Schema(schema::SchemaArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff), or write every page into a folder (--dir)
    Man(man::ManArgs),
}

/// What every command's `--help` and man page end with.
const EXIT_CODES: &str = "Exit codes:
  0    success: the run completed (with --scenario: every expectation met), the check passed
  1    failure: the run failed, terminated or was cancelled (or an expectation is not met),
       the check found an error
  2    bad usage or input: nothing was run or written
  3    the run is waiting (parked: a question, a timer, a message); `runs answer`,
       `runs resume` or `worker` go on with it
  130  interrupted (Ctrl-C, SIGTERM): the run parked where it was, resumable";

/// The command line as clap knows it (parsing, `--help`, completions, man pages), every
/// command's long help ending with the exit codes.
pub fn command() -> clap::Command {
    fn with_exit_codes(cmd: clap::Command) -> clap::Command {
        let after = cmd
            .get_after_help()
            .map(|h| format!("{h}\n\n"))
            .unwrap_or_default();
        cmd.after_long_help(format!("{after}{EXIT_CODES}"))
            .mut_subcommands(with_exit_codes)
    }
    with_exit_codes(<Cli as clap::CommandFactory>::command())
}

/// Entry point used by the binary.
pub fn main() -> ExitCode {
    // The completion scripts' hook, outside the command model so that no script offers it.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == completions::HOOK) {
        return completions::complete(&argv[2..]).into();
    }
    let parsed = command()
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr.
            let _ = e.print();
            return if e.use_stderr() {
                Outcome::Usage
            } else {
                Outcome::Ok
            }
            .into();
        }
    };
    init_logging(cli.verbose, cli.quiet);
    init_telemetry();
    let style = Style::detect(cli.color);
    if let Err(e) = mount_store(&cli) {
        eprintln!("{}: {}", style.error_word(), e.message);
        if let Some(help) = &e.help {
            eprintln!("  help: {help}");
        }
        return Outcome::Usage.into();
    }
    let result = match &cli.command {
        Command::Init(args) => init::run(&cli, args, style),
        Command::List(args) => list::run(&cli, args, style),
        Command::Validate(args) => validate::run(&cli, args, style),
        Command::Describe(args) => describe::run(&cli, args, style),
        Command::Graph(args) => graph::run(&cli, args, style),
        Command::Start(args) => start::run(&cli, args, style),
        Command::Test(args) => test::run(&cli, args, style),
        Command::Runs(args) => runs::run(&cli, args, style),
        Command::Serve(args) => serve::run(&cli, args, style),
        Command::Users(args) => users::run(args, style),
        Command::Tools(args) => tools::run(&cli, args, style),
        Command::Kogito(args) => kogito::run(&cli, args, style),
        Command::Worker(args) => durable::worker(&cli, args, style),
        Command::Store(args) => store::run(&cli, args, style),
        Command::Schema(args) => schema::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    };
    // What the run's spans and metrics left buffered is sent before the process exits.
    crate::telemetry::shutdown();
    match result {
        Ok(outcome) => outcome.into(),
        Err(e) => {
            eprintln!("{}: {}", style.error_word(), e.message);
            if let Some(help) = &e.help {
                eprintln!("  help: {help}");
            }
            Outcome::Usage.into()
        }
    }
}

/// `--store`: where this process keeps runs (`store migrate|status` open it themselves:
/// the database may not be migrated yet).
fn mount_store(cli: &Cli) -> Result<(), UsageError> {
    let Some(url) = &cli.store else {
        return Ok(());
    };
    if matches!(cli.command, Command::Store(_)) {
        return Ok(());
    }
    let url = crate::run::store::StoreUrl::parse(url)?;
    crate::run::store::mount(&url)?;
    Ok(())
}

/// OpenTelemetry as the `OTEL_*` variables configure it (off unless they name an OTLP
/// endpoint); a configuration that cannot be honoured is said, and telemetry stays off.
fn init_telemetry() {
    match crate::telemetry::Config::from_env(&|v| std::env::var(v).ok()) {
        Ok(Some(config)) => {
            crate::telemetry::start(config);
        }
        Ok(None) => {}
        Err(e) => tracing::warn!("telemetry off: {e}"),
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        _ => "trace",
    };
    // rmcp logs its transport's failures with Rust's debug formatting (type names, nested
    // structs); the error that reaches the person says it plainly. Shown from -vv on.
    let default = if verbose >= 2 {
        default.to_string()
    } else {
        format!("{default},rmcp=off")
    };
    let filter = match std::env::var("CUGA_FLO_LOG") {
        // A filter that does not name rmcp keeps it quiet below -vv too.
        Ok(spec) if verbose < 2 && !spec.contains("rmcp") => {
            EnvFilter::try_new(format!("{spec},rmcp=off"))
                .unwrap_or_else(|_| EnvFilter::new(&default))
        }
        Ok(spec) => EnvFilter::try_new(spec).unwrap_or_else(|_| EnvFilter::new(&default)),
        Err(_) => EnvFilter::new(default),
    };
    // Colour only for a person at a terminal: logs redirected to a file stay plain.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}
