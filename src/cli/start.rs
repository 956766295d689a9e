//! `cuga-flo start <app>`: run a process on its engine (the native one, or an external
//! engine over MCP), with every control point
//! going through the MCP bridge to the harness, every event journalled under
//! `.cuga-flo/runs/<run-id>/`, and the decisions and hook audit streamed to the terminal.
//! The run is planned ([`crate::run::plan`]) and launched ([`crate::run::launch`]) by the
//! run service; this command turns its flags into a [`RunSpec`] and prints the end.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};

use crate::app::EngineKind;
use crate::journal::FlowState;
use crate::journal::store::DEFAULT_BASE;
use crate::run::launch::{Ended, Ran, RunFailed, launch, never_started};
use crate::run::plan::{self, PlanError, RunPlan, RunSpec, server_help};
use crate::run::scenario::{Checked, check};
use crate::view::{self, Human, HumanOptions, JsonLines, View};
use crate::vocab::RunStatus;

pub use crate::run::plan::{Preset, Resumed};

use super::signals::Signals;
use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The app: a name under the apps folder, an app folder or a flow config file
    #[arg(value_name = "APP|PATH")]
    pub app: String,

    /// Run `applications/<app>/scenarios/<NAME>.yaml`: its inputs and answers, then check its expectations
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,

    /// Answers for control points, by id (YAML: `answers: {<id>: ...}`)
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,

    /// Record every answer given (scenario, answers file, person) to FILE, as a cassette
    /// that `--replay` (or `--answers`) reads
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,

    /// Answer only from a recorded cassette (after the policy rules), refusing an answer
    /// whose context drifted since recording; pass the inputs with --input / --var
    #[arg(long, value_name = "FILE", conflicts_with_all = ["answers", "scenario"])]
    pub replay: Option<PathBuf>,

    /// Set a process variable (typed by its declared default); repeatable
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,

    /// Initial variables from a JSON object in a file, or `-` for stdin
    #[arg(long, value_name = "FILE|-")]
    pub input: Option<String>,

    /// Run on this engine instead of the config's
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,

    /// The engine's URL instead of the config's `workflow_engine.url`: an MCP engine's
    /// endpoint, Flowable's REST API or a Kogito service (alone: the config's engine when
    /// it is reached by URL, else an MCP engine)
    #[arg(long, value_name = "URL")]
    pub engine_url: Option<String>,

    #[command(flatten)]
    pub journal: super::JournalArgs,

    /// Node entries allowed before the run fails (bounds loops); at least 1
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub step_budget: Option<u64>,

    /// Stream one JSON event per line instead of the human view
    #[arg(long)]
    pub json: bool,

    /// Never call a model, even when the app configures one (answers come from the
    /// policy rules, the scenario or answers file, or a person)
    #[arg(long)]
    pub no_model: bool,

    /// Never ask at the terminal: a question for a person parks the run (exit 3) for
    /// `cuga-flo runs answer` (formerly `--detach`, still accepted)
    #[arg(long = "no-prompt", alias = "detach")]
    pub detach: bool,

    /// A question nobody can answer fails the run instead of parking it
    #[arg(long, conflicts_with = "detach")]
    pub no_park: bool,

    /// Who answers at the terminal (default: $USER); at a guardrail with approvers, only
    /// an approver is asked there
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,

    /// How the native engine reaches the control points: directly (the bridge contract
    /// in-process), or through the in-process MCP bridge (as an external engine would)
    #[arg(long, value_enum, default_value = "direct")]
    pub bridge: BridgeChoice,

    /// Wait in-process for a timer due within SECS seconds; a later one parks the run
    /// (exit 3) until `cuga-flo runs resume --due` or `cuga-flo worker` [default: 60]
    #[arg(long, value_name = "SECS")]
    pub max_wait: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BridgeChoice {
    /// The engine calls the harness in-process, through the bridge's Rust contract
    Direct,
    /// The engine calls the harness's MCP tools over an in-process MCP connection
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    Native,
    Flowable,
    Kogito,
    Mcp,
}

impl From<EngineChoice> for EngineKind {
    fn from(choice: EngineChoice) -> EngineKind {
        match choice {
            EngineChoice::Native => EngineKind::Native,
            EngineChoice::Flowable => EngineKind::Flowable,
            EngineChoice::Kogito => EngineKind::Kogito,
            EngineChoice::Mcp => EngineKind::Mcp,
        }
    }
}

impl From<BridgeChoice> for plan::Bridge {
    fn from(choice: BridgeChoice) -> plan::Bridge {
        match choice {
            BridgeChoice::Direct => plan::Bridge::Direct,
            BridgeChoice::Mcp => plan::Bridge::Mcp,
        }
    }
}

/// A run of the app `app_arg` names (under the apps folder, its folder or its config),
/// journalled under `run_dir`.
pub fn app_spec(
    cli: &Cli,
    app_arg: &str,
    journal: &super::JournalArgs,
) -> Result<RunSpec, UsageError> {
    let app = match resolve(app_arg, &cli.apps_dir)? {
        Target::App(app) => app,
        Target::Model(path) => {
            return Err(UsageError::new(format!(
                "{} is a BPMN model; `start` runs an app",
                path.display()
            ))
            .with_help("name the app folder or its flow config"));
        }
    };
    let mut spec = RunSpec::new(
        app,
        app_arg.to_string(),
        cli.apps_dir.clone(),
        journal.run_dir.clone(),
    );
    spec.durability = journal.durability;
    Ok(spec)
}

/// What `start`'s flags ask for.
fn spec(cli: &Cli, args: &StartArgs) -> Result<RunSpec, UsageError> {
    let mut spec = app_spec(cli, &args.app, &args.journal)?;
    spec.scenario = args.scenario.clone();
    spec.answers = args.answers.clone();
    spec.record = args.record.clone();
    spec.replay = args.replay.clone();
    spec.vars = args.vars.clone();
    spec.input = args.input.clone();
    spec.engine = args.engine.map(EngineKind::from);
    spec.engine_url = args.engine_url.clone();
    spec.step_budget = args.step_budget;
    spec.no_model = args.no_model;
    spec.detach = args.detach;
    spec.no_park = args.no_park;
    spec.by = args.by.clone();
    spec.bridge = args.bridge.into();
    spec.max_wait = args.max_wait;
    Ok(spec)
}

pub fn run(cli: &Cli, args: &StartArgs, style: Style) -> Result<Outcome, UsageError> {
    let spec = spec(cli, args)?;
    if let Some(scenario) = &spec.scenario {
        tokens_for_served_agents(&spec.app, scenario);
    }
    run_spec(cli, spec, None, args.json, style)
}

/// A remote agent a scenario serves in-process (a sibling app) takes a bearer token: a
/// fresh one for this process, unless the environment gives one, so that a demo runs
/// with `start` alone. (A remote agent the scenario does not serve keeps its own token,
/// which the environment must give.) Called before any thread starts.
pub(super) fn tokens_for_served_agents(app: &crate::app::registry::AppRef, scenario: &str) {
    for var in crate::run::ready::served_token_vars(app, scenario) {
        if std::env::var_os(&var).is_none_or(|v| v.is_empty()) {
            // SAFETY: called before the process starts any thread (the runtime and the
            // served agents start after), so nothing reads the environment meanwhile.
            unsafe { std::env::set_var(&var, crate::a2a::new_id()) };
        }
    }
}

/// Run `spec` (with `resumed`: continue a journalled run), streamed to the terminal as
/// the human view or JSON lines.
pub fn run_spec(
    cli: &Cli,
    spec: RunSpec,
    resumed: Option<Resumed>,
    json: bool,
    style: Style,
) -> Result<Outcome, UsageError> {
    // One thread: a run is one coordinator task and the calls it waits for, so worker
    // threads would only cost their start-up (a person's prompt and other blocking work
    // go to the blocking pool).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the async runtime: {e}")))?;
    let resuming = resumed.is_some();
    let mut plan = RunPlan::resolve(spec, resumed, &runtime).inspect_err(|e| {
        if let PlanError::Invalid { errors, .. } = e {
            // The diagnostics first; the summary and its help follow.
            for d in errors {
                eprint!("{}", style.diagnostic(d));
            }
        }
    })?;
    let served = plan.served.take();
    let scenario = plan.scenario.clone();
    let spec = plan.spec.clone();
    let loaded = plan.loaded.clone();
    let engine = plan.engine.name().to_string();
    let view = view_of(&plan, json, style, cli.verbose > 0, cli.quiet);
    let ended = runtime.block_on(async {
        // Ctrl-C or SIGTERM parks the run; listening starts before the run does.
        let mut signals = Signals::new()
            .map_err(|e| UsageError::new(format!("cannot watch for signals: {e}")))?;
        let stop = async move {
            signals.recv().await;
        };
        launch(plan, view, stop).await.map_err(UsageError::from)
    });
    if let Some(served) = served {
        runtime.block_on(served.stop());
    }
    // A person's prompt may still block on the terminal: do not wait for it.
    runtime.shutdown_background();
    let (journal, cassette, result, state) = match ended? {
        Ended::Interrupted { run_id, journal } => {
            eprintln!(
                "\n{}: interrupted; the run is waiting: `cuga-flo runs resume {run_id}` continues it",
                style.error_word(),
            );
            eprintln!("  journal: {}", journal.display());
            return Ok(Outcome::Interrupted);
        }
        Ended::Ran(ran) => {
            let Ran {
                journal,
                cassette,
                outcome,
                state,
                ..
            } = *ran;
            (journal, cassette, outcome, state)
        }
    };
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", style.error_word());
            eprintln!("  journal: {}", journal.display());
            if let (RunFailed::Engine(_), Some(path)) = (&e, &cassette) {
                eprintln!("  cassette: {}", path.display());
            }
            return Ok(Outcome::Failed);
        }
    };
    let spec = &spec;
    if !json {
        outln!("  journal: {}", journal.display());
        if let Some(path) = &cassette {
            outln!("  cassette: {}", path.display());
        }
    }

    let not_run = never_started(result.status, &result.path);
    if not_run && !json && engine != "native" {
        let kind = match engine.as_str() {
            "flowable" => Some(EngineKind::Flowable),
            "kogito" => Some(EngineKind::Kogito),
            _ => None,
        };
        if let (Some(kind), Some(config)) = (kind, loaded.config.as_ref()) {
            let help = server_help(config, kind, spec);
            let words: Vec<&str> = help.split(' ').collect();
            for line in crate::view::wrap("  help:", &words, style.width, 8) {
                outln!("{line}");
            }
        }
    }
    let mut outcome = match result.status {
        RunStatus::Completed => Outcome::Ok,
        RunStatus::Terminated | RunStatus::Failed | RunStatus::Cancelled => Outcome::Failed,
        RunStatus::Waiting => {
            if !json {
                print_waiting(&state, &spec.run_dir, style);
            }
            Outcome::Waiting
        }
    };
    let checked = scenario.as_ref().and_then(|s| {
        check(
            s,
            loaded.process(),
            result.status,
            &result.path,
            &result.variables,
        )
    });
    if let Some(checked) = checked {
        print_checked(&checked, json, style);
        // A scenario says how its run should end: met, `start --scenario` succeeds whatever
        // that end is (a scenario expecting `terminated` passes when the run terminates). A
        // resumed run (`runs answer`, `runs resume`) exits as the run ended, the verdict
        // above aside: the person who answered learns whether the run failed.
        if !resuming {
            outcome = match (checked.met, outcome) {
                (false, _) => Outcome::Failed,
                (true, Outcome::Waiting) => Outcome::Waiting,
                (true, _) => Outcome::Ok,
            };
        }
    }
    Ok(outcome)
}

/// A scenario's verdict on the run: a JSON line, or a line and what did not hold.
fn print_checked(checked: &Checked, json: bool, style: Style) {
    let name = &checked.scenario;
    if json {
        let mut line =
            serde_json::json!({"event": "scenario_checked", "scenario": name, "met": checked.met});
        if checked.never_started {
            line["never_started"] = true.into();
        }
        line["mismatches"] = checked.mismatches.clone().into();
        outln!("{line}");
    } else if checked.never_started {
        // Nothing ran: the expectations say nothing about the process.
        outln!(
            "{} scenario `{name}`: not checked, the run never started",
            style.red("✗")
        );
    } else if checked.met {
        outln!(
            "{} scenario `{name}`: every expectation met",
            style.green("✓")
        );
    } else {
        outln!(
            "{} scenario `{name}`: {} expectation(s) not met",
            style.red("✗"),
            checked.mismatches.len()
        );
        for m in &checked.mismatches {
            outln!("    {m}");
        }
    }
}

/// The view of a run: human (with a spinner while a reasoner works) or JSON lines.
fn view_of(plan: &RunPlan, json: bool, style: Style, verbose: bool, quiet: bool) -> Arc<dyn View> {
    if json {
        return Arc::new(JsonLines::new());
    }
    let mut options = HumanOptions::detect(verbose);
    options.color = style.color;
    options.width = style.width;
    // `-q`: the run's end only (no line per step, no spinner).
    options.quiet = quiet;
    options.interactive &= !quiet;
    // The spinner steps aside while a person answers at the terminal.
    let mut names = view::Names::from_app(&plan.loaded);
    if let Some(model) = std::env::var(crate::reason::llm::settings::ENV_MODEL)
        .ok()
        .filter(|m| !m.trim().is_empty())
    {
        names.override_model(model);
    }
    let mut human = Human::new(options).with_names(names);
    if plan.engine.name() != "native" {
        human = human.with_remote_engine(plan.engine.name());
    }
    Arc::new(human)
}

/// How to answer a waiting run's questions.
fn print_waiting(state: &FlowState, run_dir: &std::path::Path, style: Style) {
    let dir = if run_dir == std::path::Path::new(DEFAULT_BASE) {
        String::new()
    } else {
        format!(
            " --run-dir {}",
            super::output::shell_quote(&run_dir.display().to_string())
        )
    };
    let run = &state.run_id;
    for q in state.open_questions.values() {
        let how = match &q.offered {
            // A guardrail: its approver approves or denies.
            crate::vocab::Offered::Flows { .. } if q.approval.is_some() => {
                "approve|deny --by NAME".to_string()
            }
            crate::vocab::Offered::Flows { flows, .. } => {
                let ids: Vec<&str> = flows.iter().map(|f| f.id.as_str()).collect();
                format!("--flow {}", ids.join("|"))
            }
            crate::vocab::Offered::Actions { actions, .. } => {
                let names: Vec<&str> = actions.iter().map(|a| a.as_str()).collect();
                format!("--action {}", names.join("|"))
            }
            crate::vocab::Offered::ToolCall { .. } => "approve|deny [--reason TEXT]".to_string(),
            crate::vocab::Offered::Outputs { outputs, .. } => {
                let keys: Vec<String> = (outputs.iter())
                    .map(|o| format!("{}: ...", serde_json::Value::String(o.clone())))
                    .collect();
                format!(
                    "--outputs {}",
                    super::output::shell_quote(&format!("{{{}}}", keys.join(", ")))
                )
            }
        };
        // Several questions at one element (the instances of a multi-instance task): each
        // is named by its key.
        let shared = (state.open_questions.values())
            .filter(|o| o.element == q.element)
            .count()
            > 1;
        let named = super::output::shell_quote(if shared { &q.key } else { &q.element });
        outln!(
            "  {} answer: cuga-flo runs answer {run} {named} {how}{dir}",
            style.yellow("?")
        );
    }
    let awaiting = state
        .waiting
        .as_ref()
        .map(|w| w.awaiting.as_slice())
        .unwrap_or_default();
    for a in awaiting {
        let command = match (a.kind, &a.correlation) {
            (crate::journal::event::CatchKind::Message, Some(key)) => {
                format!("message --key {}", super::output::shell_quote(key))
            }
            (crate::journal::event::CatchKind::Message, None) => format!("message {run}"),
            (crate::journal::event::CatchKind::Signal, _) => "signal".to_string(),
        };
        let name = super::output::shell_quote(&a.name);
        outln!(
            "  {} deliver: cuga-flo runs {command} {name} [--var NAME=VALUE]{dir}",
            style.yellow("✉"),
        );
    }
    // A call activity's child run parked: it is answered (or resumed) first.
    let children = state
        .waiting
        .as_ref()
        .and_then(|w| w.reason.strip_prefix("child run "));
    if let Some(children) = children {
        for child in children.split(", ") {
            outln!(
                "  {} child run {child} waits: answer it (cuga-flo runs pending{dir}), then \
                 cuga-flo runs resume {run}{dir}",
                style.yellow("⤷"),
            );
        }
    }
    if state.open_questions.is_empty() && !awaiting.is_empty() {
        return;
    }
    outln!("  pending: cuga-flo runs pending{dir}");
    outln!(
        "  (to answer in advance: --answers FILE or --scenario NAME; to let a model answer: \
         `llm:` in the flow config)"
    );
}
