//! `cuga-flo test [APP|APP:SCENARIO…]`: run apps' scenarios and check their expectations,
//! for CI. The scenarios run as a suite of the run service ([`crate::run::suite`]: each as
//! `cuga-flo start --scenario` runs it, several at a time, journalled apart from real
//! work and deleted at the end unless `--keep`); here the arguments name them and the
//! results are printed in a stable order, one line each, then a summary, and optionally
//! written as JUnit XML. A scenario passes when every expectation is met, whatever the
//! run's status.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::Value;

use crate::app::{EngineKind, scenario};
use crate::diag::did_you_mean;
use crate::run::suite::{
    Case, CaseResult, Options, Suite, Verdict, failed_by, junit, summary_json, tally,
};

use super::start::EngineChoice;
use super::target::{Target, all_apps, resolve};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cuga-flo test\n  cuga-flo test loan_approval \
    trip_planner:agent_plans\n  cuga-flo test --junit target/scenarios.xml\n  cuga-flo test \
    loan_approval --engine native"
)]
pub struct TestArgs {
    /// Apps (every scenario of each) or `APP:SCENARIO`; every app when none is given
    #[arg(value_name = "APP|APP:SCENARIO")]
    pub targets: Vec<String>,

    /// Also write the results as JUnit XML to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// One JSON object per scenario, then a summary object (JSON lines)
    #[arg(long)]
    pub json: bool,

    /// Run every scenario on this engine instead of its app's
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,

    /// Let the apps' models answer what a scenario leaves open (by default a scenario
    /// runs without a model: its answers and the policy rules decide)
    #[arg(long)]
    pub model: bool,

    /// How many scenarios run at once [default: the number of cores]
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Rewrite the `expect:` of each scenario whose run did not meet it from what the run
    /// did (its status, its path, the values of the variables it names; `visits` and
    /// `never_visits` are kept), and show what changed
    #[arg(long)]
    pub update: bool,

    /// Keep the scenarios' runs (their journals, under `<run-dir>/test-runs/<id>/`) for
    /// reading with `runs … --run-dir`; by default they are deleted at the end
    #[arg(long)]
    pub keep: bool,

    #[command(flatten)]
    pub journal: super::JournalArgs,
}

pub fn run(cli: &Cli, args: &TestArgs, style: Style) -> Result<Outcome, UsageError> {
    let cases = select(cli, args)?;
    if cases.is_empty() {
        if args.json {
            outln!("{}", summary_json(&[], Duration::ZERO));
        } else {
            outln!("no scenarios to run (an app's scenarios are `scenarios/*.yaml` in its folder)");
        }
        return Ok(Outcome::Ok);
    }
    // A remote agent a scenario serves takes a bearer token: a fresh one for this
    // process, unless the environment gives one.
    // (No other thread runs yet: the scenarios' threads and runtimes start below.)
    for case in &cases {
        super::start::tokens_for_served_agents(&case.app, &case.scenario);
    }
    let jobs = (args.jobs.map(usize::from))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let suite = Suite::new(
        &cli.apps_dir,
        &args.journal.run_dir,
        Options {
            durability: args.journal.durability,
            engine: args.engine.map(EngineKind::from),
            model: args.model,
            update: args.update,
        },
    );
    let kept_in = args.keep.then_some(suite.run_dir());
    let started = Instant::now();
    let results = suite.run_all(&cases, jobs, |done| {
        print_result(done, args.json, kept_in, style)
    });
    let elapsed = started.elapsed();

    let kept = if args.keep {
        Some(suite.run_dir())
    } else {
        suite.delete_runs();
        None
    };
    if args.json {
        let mut summary = summary_json(&results, elapsed);
        if let Some(dir) = kept {
            summary["run_dir"] = Value::String(dir.display().to_string());
        }
        outln!("{summary}");
    } else {
        print_summary(&results, elapsed, style);
        match kept {
            Some(dir) => outln!(
                "  the runs are kept in {0}: cuga-flo runs list --run-dir {0}",
                dir.display()
            ),
            None if results.iter().any(|r| r.outcome == Verdict::Failed) => {
                outln!("  pass --keep to keep the runs for reading (runs show, runs report)")
            }
            None => {}
        }
    }
    if let Some(path) = &args.junit {
        let xml = junit(&results, elapsed);
        write_file(path, &xml)?;
    }
    Ok(if results.iter().any(|r| r.outcome == Verdict::Failed) {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// The scenarios the arguments name, in order (apps by name, then scenarios by name).
fn select(cli: &Cli, args: &TestArgs) -> Result<Vec<Case>, UsageError> {
    if args.targets.is_empty() {
        let apps = all_apps(&cli.apps_dir)?;
        return Ok(apps
            .into_iter()
            .flat_map(|app| {
                scenario::list(&app.dir).into_iter().map(move |s| Case {
                    app: app.clone(),
                    scenario: s,
                    named: false,
                })
            })
            .collect());
    }
    let mut cases: Vec<Case> = Vec::new();
    for target in &args.targets {
        // `APP:SCENARIO`, unless the whole argument names an app (a path with a colon).
        let (app_arg, wanted) = match target.rsplit_once(':') {
            Some((app, s)) if !Path::new(target).exists() && !app.is_empty() => (app, Some(s)),
            _ => (target.as_str(), None),
        };
        let app = match resolve(app_arg, &cli.apps_dir)? {
            Target::App(app) => app,
            Target::Model(path) => {
                return Err(UsageError::new(format!(
                    "{} is a BPMN model; `test` runs an app's scenarios",
                    path.display()
                )));
            }
        };
        let known = scenario::list(&app.dir);
        let names = match wanted {
            Some(name) if known.iter().any(|k| k == name) => vec![name.to_owned()],
            Some(name) => {
                let mut err =
                    UsageError::new(format!("app `{}` has no scenario `{name}`", app.name));
                err = match did_you_mean(name, known.iter().map(String::as_str)) {
                    Some(close) => err.with_help(format!("did you mean `{}:{close}`?", app.name)),
                    None if known.is_empty() => err.with_help(format!(
                        "it has no scenarios: add `{}/scenarios/<name>.yaml`",
                        app.dir.display()
                    )),
                    None => err.with_help(format!("its scenarios: {}", known.join(", "))),
                };
                return Err(err);
            }
            None => known,
        };
        for name in names {
            if !cases
                .iter()
                .any(|c| c.app.dir == app.dir && c.scenario == name)
            {
                cases.push(Case {
                    app: app.clone(),
                    scenario: name,
                    named: wanted.is_some(),
                });
            }
        }
    }
    Ok(cases)
}

/// One scenario's line (and what did not hold); its run's folder is `kept_in` when the
/// runs are kept (`--keep`).
fn print_result(r: &CaseResult, json: bool, kept_in: Option<&Path>, style: Style) {
    if json {
        let mut v = serde_json::to_value(r).unwrap_or_default();
        if let Some(map) = v.as_object_mut() {
            map.insert("event".into(), Value::from("scenario"));
        }
        outln!("{v}");
        return;
    }
    let id = format!("{}:{}", r.app, r.scenario);
    let took = crate::view::duration(r.duration_ms);
    match r.outcome {
        Verdict::Passed => {
            // A scenario may expect a run to fail or terminate: say so, not just "failed".
            let status = match r.status.as_deref() {
                Some("completed") | None => r.status.clone().unwrap_or_else(|| "ran".into()),
                Some(other) => format!("{other}, as expected"),
            };
            outln!("{} {id}  {status}  ({took})", style.green("✓"))
        }
        Verdict::Updated => {
            outln!(
                "{} {id}  updated {}  ({took})",
                style.yellow("↻"),
                r.reason.as_deref().unwrap_or_default()
            );
            // What was expected, and what the file now says.
            for m in &r.mismatches {
                outln!("    {m}");
            }
        }
        Verdict::Skipped => outln!(
            "{} {id}  skipped: {}",
            style.yellow("-"),
            r.reason.as_deref().unwrap_or_default()
        ),
        Verdict::Failed => {
            let what = failed_by(r);
            outln!("{} {id}  {what}  ({took})", style.red("✗"));
            for m in &r.mismatches {
                outln!("    {m}");
            }
            if let (Some(run), Some(dir)) = (&r.run_id, kept_in) {
                outln!(
                    "    run: cuga-flo runs show {run} --run-dir {}",
                    dir.display()
                );
            }
        }
    }
}

fn print_summary(results: &[CaseResult], elapsed: Duration, style: Style) {
    let t = tally(results);
    let failed = t["failed"];
    let updated = match t["updated"] {
        0 => String::new(),
        n => format!(", {n} updated"),
    };
    let text = format!(
        "{} scenarios: {} passed, {} failed, {} skipped{updated} in {}",
        results.len(),
        t["passed"],
        failed,
        t["skipped"],
        crate::view::duration(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
    );
    outln!();
    if failed > 0 {
        outln!("{} {text}", style.red("✗"));
    } else {
        outln!("{} {text}", style.green("✓"));
    }
    if t["skipped"] > 0 {
        outln!(
            "  skipped scenarios need a server: start it (docs/engines.md; a tool source: \
             the app's README), run them on the native engine with --engine native, or name one (APP:SCENARIO) to \
             run it anyway"
        );
    }
}

/// Write `text` to `path` whole or not at all (a temporary file renamed into place).
fn write_file(path: &Path, text: &str) -> Result<(), UsageError> {
    let fail = |e: std::io::Error| UsageError::new(format!("cannot write {}: {e}", path.display()));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let tmp = path.with_extension("tmp-cuga-flo");
    let mut file = std::fs::File::create(&tmp).map_err(fail)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}
