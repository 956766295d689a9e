//! Running apps' scenarios as a suite (`cuga-flo test`): each scenario is a run of its
//! own through [`crate::run::scenario::run_scenario`], several at a time, journalled
//! apart from real work (`<run-dir>/test-runs/<id>/`); what became of each is a
//! [`CaseResult`], and the suite's results are written as JSON or as JUnit XML here.
//! Scenarios of apps bound to a server (Flowable, Kogito, an MCP engine) are skipped, with
//! the reason, when the server cannot be reached or its secret is not set; unless the
//! scenario is named (`named`) or the suite runs them on another engine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::app::registry::AppRef;
use crate::app::{EngineKind, load_app, scenario};
use crate::journal::Durability;
use crate::run::plan::RunSpec;

/// One scenario to run.
#[derive(Debug, Clone)]
pub struct Case {
    pub app: AppRef,
    pub scenario: String,
    /// Named on the command line (run even when its server looks unreachable).
    pub named: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Passed,
    Failed,
    Skipped,
    /// Not met, and its expectations rewritten from its run (`--update`).
    Updated,
}

/// What became of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub app: String,
    pub scenario: String,
    pub outcome: Verdict,
    /// The run's status (`completed`, `terminated`, ...), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The expectations not met.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<String>,
    /// Why it was skipped, or why it failed without a run to check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub duration_ms: u64,
}

/// How the suite runs its scenarios.
#[derive(Debug, Clone)]
pub struct Options {
    pub durability: Durability,
    /// Run every scenario on this engine rather than its app's.
    pub engine: Option<EngineKind>,
    /// Let scenarios without scripted answers reach the app's model.
    pub model: bool,
    /// Rewrite the expectations of a scenario not met from its run.
    pub update: bool,
}

/// A suite of scenarios: where their runs are journalled and how they run.
pub struct Suite<'a> {
    apps_dir: &'a Path,
    options: Options,
    /// Where the scenarios' runs are journalled (apart from real work).
    run_dir: PathBuf,
    /// The folder of every suite's runs, `<run-dir>/test-runs`.
    all_suites: PathBuf,
    /// Per app folder: why its server cannot be used (checked once per app).
    servers: Mutex<BTreeMap<PathBuf, Option<String>>>,
}

impl<'a> Suite<'a> {
    /// A suite whose runs are journalled under `run_dir` in a folder of their own,
    /// `<run-dir>/test-runs/<time>-<pid>/`, never in `<run-dir>/runs`: `runs pending`,
    /// `runs resume --due` and `worker` of the real runs never see them (a scenario that
    /// parks would otherwise be resumed, or answered, as work).
    pub fn new(apps_dir: &'a Path, run_dir: &Path, options: Options) -> Suite<'a> {
        let all_suites = run_dir.join("test-runs");
        Suite {
            apps_dir,
            options,
            run_dir: all_suites.join(format!("{}-{}", crate::clock::now_ms(), std::process::id())),
            all_suites,
            servers: Mutex::default(),
        }
    }

    /// Where this suite's runs are journalled.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// Run `cases` on `jobs` threads, each taking the next case; `each` gets the results
    /// in the cases' order, as soon as every earlier one is in. The results, in order.
    pub fn run_all(
        &self,
        cases: &[Case],
        jobs: usize,
        each: impl Fn(&CaseResult) + Sync,
    ) -> Vec<CaseResult> {
        let next = AtomicUsize::new(0);
        let slots: Mutex<(Vec<Option<CaseResult>>, usize)> =
            Mutex::new((vec![None; cases.len()], 0));
        std::thread::scope(|scope| {
            for _ in 0..jobs.clamp(1, cases.len().max(1)) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(case) = cases.get(i) else { break };
                        let result = self.run(case);
                        let mut slots = slots.lock().unwrap_or_else(|p| p.into_inner());
                        slots.0[i] = Some(result);
                        while let Some(Some(done)) = slots.0.get(slots.1) {
                            each(done);
                            slots.1 += 1;
                        }
                    }
                });
            }
        });
        slots
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .into_iter()
            .flatten()
            .collect()
    }

    /// Delete the suite's runs (and `test-runs/` itself when this was its last folder).
    pub fn delete_runs(&self) {
        if let Err(e) = std::fs::remove_dir_all(&self.run_dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(
                "cannot delete the test runs in {}: {e}",
                self.run_dir.display()
            );
        }
        let _ = std::fs::remove_dir(&self.all_suites);
    }

    /// Why the app's scenarios cannot run here now: its engine's server (unless the
    /// suite chose the engine) or one of its tool sources is unavailable.
    fn unreachable(&self, app: &AppRef) -> Option<String> {
        let mut servers = self.servers.lock().unwrap_or_else(|p| p.into_inner());
        let engine_chosen = self.options.engine.is_some();
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

    /// Run one scenario and check its expectations.
    pub fn run(&self, case: &Case) -> CaseResult {
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
        spec.durability = self.options.durability;
        spec.scenario = Some(case.scenario.clone());
        spec.no_model = !self.options.model;
        spec.engine = self.options.engine;
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
                    && self.options.update
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

/// How many scenarios passed, failed, were skipped and were updated.
pub fn tally(results: &[CaseResult]) -> BTreeMap<&'static str, usize> {
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

/// What a failed scenario failed by, in a few words.
pub fn failed_by(r: &CaseResult) -> String {
    if r.mismatches.is_empty() {
        r.reason.clone().unwrap_or_default()
    } else {
        format!(
            "{} not met",
            crate::diag::count(r.mismatches.len(), "expectation")
        )
    }
}

/// The suite's summary as one JSON document (`test --json`'s last line).
pub fn summary_json(results: &[CaseResult], elapsed: Duration) -> Value {
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
pub fn junit(results: &[CaseResult], elapsed: Duration) -> String {
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
                    let message = failed_by(r);
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
