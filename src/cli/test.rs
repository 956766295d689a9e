//! `cuga-flo test [APP|APP:SCENARIO…]`: run apps' scenarios and check their expectations,
//! for CI. Each scenario is one `cuga-flo start --scenario` in a process of its own (as
//! a person would run it, journalled like any run), several at a time; the results are
//! printed in a stable order, one line each, then a summary, and optionally written as
//! JUnit XML. The runs are journalled apart from real work (`<run-dir>/test-runs/<id>/`)
//! and deleted at the end unless `--keep`. A scenario passes when every expectation is met, whatever the run's status.
//! Scenarios of apps bound to a server (Flowable, Kogito, an MCP engine) are skipped, with
//! the reason, when the server cannot be reached or its secret is not set; unless the
//! scenario is named on the command line or `--engine native` runs it on the native engine.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use crate::app::registry::AppRef;
use crate::app::{EngineKind, load_app, scenario};
use crate::diag::did_you_mean;
use crate::run::plan::RunSpec;

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

/// One scenario to run.
#[derive(Debug, Clone)]
struct Case {
    app: AppRef,
    scenario: String,
    /// Named on the command line (run even when its server looks unreachable).
    named: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Passed,
    Failed,
    Skipped,
    /// Not met, and its expectations rewritten from its run (`--update`).
    Updated,
}

/// What became of one scenario.
#[derive(Debug, Clone, Serialize)]
struct CaseResult {
    app: String,
    scenario: String,
    outcome: Verdict,
    /// The run's status (`completed`, `terminated`, ...), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_id: Option<String>,
    /// The expectations not met.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mismatches: Vec<String>,
    /// Why it was skipped, or why it failed without a run to check.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    duration_ms: u64,
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
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, cases.len());
    let started = Instant::now();
    // The scenarios' runs are journalled apart from real work: in a folder of their own
    // under `<run-dir>/test-runs/`, never in `<run-dir>/runs`, so that `runs pending`,
    // `runs resume --due` and `worker` of the real runs never see them (a scenario that
    // parks would otherwise be resumed, or answered, as work).
    let test_runs = args.journal.run_dir.join("test-runs").join(format!(
        "{}-{}",
        crate::clock::now_ms(),
        std::process::id()
    ));
    let kept_in = args.keep.then_some(test_runs.as_path());
    let runner = Runner {
        apps_dir: &cli.apps_dir,
        args,
        run_dir: test_runs.clone(),
        servers: Mutex::default(),
    };

    // Workers take the next case; results are printed in the cases' order as soon as
    // every earlier one is in.
    let next = AtomicUsize::new(0);
    let slots: Mutex<(Vec<Option<CaseResult>>, usize)> = Mutex::new((vec![None; cases.len()], 0));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let result = runner.run(case);
                    let mut slots = slots.lock().unwrap_or_else(|p| p.into_inner());
                    slots.0[i] = Some(result);
                    while let Some(Some(done)) = slots.0.get(slots.1) {
                        print_result(done, args.json, kept_in, style);
                        slots.1 += 1;
                    }
                }
            });
        }
    });
    let elapsed = started.elapsed();
    let results: Vec<CaseResult> = slots
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .0
        .into_iter()
        .flatten()
        .collect();

    let kept = if args.keep {
        Some(test_runs.as_path())
    } else {
        if let Err(e) = std::fs::remove_dir_all(&test_runs)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(
                "cannot delete the test runs in {}: {e}",
                test_runs.display()
            );
        }
        // `test-runs/` itself goes when this was its last folder.
        let _ = std::fs::remove_dir(args.journal.run_dir.join("test-runs"));
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

struct Runner<'a> {
    apps_dir: &'a Path,
    args: &'a TestArgs,
    /// Where the scenarios' runs are journalled (apart from real work).
    run_dir: PathBuf,
    /// Per app folder: why its server cannot be used (checked once per app).
    servers: Mutex<BTreeMap<PathBuf, Option<String>>>,
}

impl Runner<'_> {
    /// Why the app's scenarios cannot run here now: its engine's server (unless the
    /// engine is chosen with `--engine`) or one of its tool sources is unavailable.
    fn unreachable(&self, app: &AppRef) -> Option<String> {
        let mut servers = self.servers.lock().unwrap_or_else(|p| p.into_inner());
        let engine_chosen = self.args.engine.is_some();
        servers
            .entry(app.dir.clone())
            .or_insert_with(|| {
                let loaded = load_app(app);
                let engine = if engine_chosen {
                    None
                } else {
                    crate::run::ready::unreachable_server(&loaded)
                };
                engine.or_else(|| crate::run::ready::unavailable_tools(&loaded))
            })
            .clone()
    }

    fn run(&self, case: &Case) -> CaseResult {
        let started = Instant::now();
        let mut result = CaseResult {
            app: case.app.name.clone(),
            scenario: case.scenario.clone(),
            outcome: Verdict::Failed,
            status: None,
            run_id: None,
            mismatches: Vec::new(),
            reason: None,
            duration_ms: 0,
        };
        if !case.named
            && let Some(why) = self.unreachable(&case.app)
        {
            result.outcome = Verdict::Skipped;
            result.reason = Some(why);
            return result;
        }
        let mut spec = RunSpec::new(
            case.app.clone(),
            case.app.dir.display().to_string(),
            self.apps_dir.to_path_buf(),
            self.run_dir.clone(),
        );
        spec.durability = self.args.journal.durability;
        spec.scenario = Some(case.scenario.clone());
        spec.no_model = !self.args.model;
        spec.engine = self.args.engine.map(EngineKind::from);
        // Nobody answers at the terminal: a question for a person parks the run.
        spec.detach = true;
        // A run that panics fails its scenario, not the others.
        let ran = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::run::scenario::run_scenario(spec)
        })) {
            Ok(ran) => ran,
            Err(_) => {
                result.reason = Some("cuga-flo panicked running it (see above)".to_owned());
                return result;
            }
        };
        result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        result.run_id = ran.run_id;
        result.status = ran.status.map(|s| s.as_str().to_owned());
        match ran.checked {
            Some(checked) if !checked.never_started => {
                result.outcome = if checked.met {
                    Verdict::Passed
                } else {
                    Verdict::Failed
                };
                result.mismatches = checked.mismatches;
                if !checked.met && result.mismatches.is_empty() {
                    result.reason = Some("the expectations were not met".to_owned());
                }
                if !checked.met
                    && self.args.update
                    && let (Some(status), Some((path, variables))) = (ran.status, &ran.ended)
                {
                    match scenario::update(&case.app.dir, &case.scenario, status, path, variables) {
                        Ok(file) => {
                            result.outcome = Verdict::Updated;
                            result.reason = Some(file.display().to_string());
                        }
                        Err(e) => {
                            result.reason =
                                Some(format!("not updated: {}", crate::diag::chain(&e)));
                        }
                    }
                }
            }
            // The run never got to its check: say what stopped it.
            _ => {
                result.reason = Some(ran.failure.unwrap_or_else(|| match result.status {
                    Some(_) => "the scenario expects nothing to check".to_owned(),
                    None => "the run did not end".to_owned(),
                }));
            }
        }
        result
    }
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
            let what = if r.mismatches.is_empty() {
                r.reason.clone().unwrap_or_default()
            } else {
                format!(
                    "{} not met",
                    super::output::count(r.mismatches.len(), "expectation")
                )
            };
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

fn tally(results: &[CaseResult]) -> BTreeMap<&'static str, usize> {
    let mut t = BTreeMap::from([("passed", 0), ("failed", 0), ("skipped", 0), ("updated", 0)]);
    for r in results {
        let key = match r.outcome {
            Verdict::Passed => "passed",
            Verdict::Failed => "failed",
            Verdict::Skipped => "skipped",
            Verdict::Updated => "updated",
        };
        *t.entry(key).or_default() += 1;
    }
    t
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

fn summary_json(results: &[CaseResult], elapsed: Duration) -> Value {
    let t = tally(results);
    let mut summary = serde_json::json!({
        "event": "summary",
        "scenarios": results.len(),
        "passed": t["passed"],
        "failed": t["failed"],
        "skipped": t["skipped"],
        "duration_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
    });
    if t["updated"] > 0 {
        summary["updated"] = t["updated"].into();
    }
    summary
}

/// JUnit XML as CI systems read it (Jenkins, GitLab, GitHub actions' reporters): one
/// `<testsuite>` per app, one `<testcase>` per scenario, with `<failure>` (the unmet
/// expectations) or `<skipped>` (why).
fn junit(results: &[CaseResult], elapsed: Duration) -> String {
    use quick_xml::escape::escape;
    let secs = |ms: u64| format!("{:.3}", ms as f64 / 1000.0);
    let t = tally(results);
    let mut apps: Vec<&str> = Vec::new();
    for r in results {
        if !apps.contains(&r.app.as_str()) {
            apps.push(&r.app);
        }
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"cuga-flo\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">\n",
        results.len(),
        t["failed"],
        t["skipped"],
        secs(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
    ));
    for app in apps {
        let cases: Vec<&CaseResult> = results.iter().filter(|r| r.app == app).collect();
        let count = |v: Verdict| cases.iter().filter(|r| r.outcome == v).count();
        let time: u64 = cases.iter().map(|r| r.duration_ms).sum();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">\n",
            escape(app),
            cases.len(),
            count(Verdict::Failed),
            count(Verdict::Skipped),
            secs(time)
        ));
        for r in cases {
            xml.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
                escape(&r.app),
                escape(&r.scenario),
                secs(r.duration_ms)
            ));
            let mut body = String::new();
            match r.outcome {
                Verdict::Passed | Verdict::Updated => {}
                Verdict::Skipped => body.push_str(&format!(
                    "      <skipped message=\"{}\"/>\n",
                    escape(r.reason.as_deref().unwrap_or_default())
                )),
                Verdict::Failed => {
                    let message = if r.mismatches.is_empty() {
                        r.reason.clone().unwrap_or_default()
                    } else {
                        format!(
                            "{} not met",
                            super::output::count(r.mismatches.len(), "expectation")
                        )
                    };
                    let mut detail = r.mismatches.join("\n");
                    if let Some(reason) = r.reason.as_deref().filter(|_| !r.mismatches.is_empty()) {
                        detail.push('\n');
                        detail.push_str(reason);
                    }
                    body.push_str(&format!(
                        "      <failure message=\"{}\" type=\"expectation\">{}</failure>\n",
                        escape(&message),
                        escape(&detail)
                    ));
                }
            }
            if let Some(run) = &r.run_id {
                let status = r.status.as_deref().unwrap_or("unknown");
                body.push_str(&format!(
                    "      <system-out>run {} ({})</system-out>\n",
                    escape(run),
                    escape(status)
                ));
            }
            if body.is_empty() {
                xml.push_str("/>\n");
            } else {
                xml.push_str(">\n");
                xml.push_str(&body);
                xml.push_str("    </testcase>\n");
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_escapes_and_counts() {
        let r = |scenario: &str, outcome, mismatches: Vec<&str>| CaseResult {
            app: "a<b".into(),
            scenario: scenario.into(),
            outcome,
            status: Some("completed".into()),
            run_id: Some("r1".into()),
            mismatches: mismatches.into_iter().map(str::to_owned).collect(),
            reason: None,
            duration_ms: 1500,
        };
        let xml = junit(
            &[
                r("ok", Verdict::Passed, vec![]),
                r(
                    "bad \"one\"",
                    Verdict::Failed,
                    vec!["status: expected completed, got failed & more"],
                ),
            ],
            Duration::from_secs(2),
        );
        assert!(xml.contains(r#"tests="2" failures="1""#), "{xml}");
        assert!(xml.contains("name=\"bad &quot;one&quot;\""), "{xml}");
        assert!(xml.contains("got failed &amp; more"), "{xml}");
        assert!(xml.contains(r#"time="1.500""#), "{xml}");
    }
}
