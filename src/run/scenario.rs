//! A scenario's run and its verdict: whether the run ended as the scenario expects
//! (`start --scenario` prints it after the run; `test` runs every scenario here, in this
//! process, and reports each).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::launch::{Ended, launch, never_started};
use super::plan::{PlanError, RunPlan, RunSpec};
use crate::app::scenario::Scenario;
use crate::journal::{FlowState, Record};
use crate::vocab::RunStatus;

/// A scenario's expectations checked against its run's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub scenario: String,
    /// Every expectation holds (and the run started).
    pub met: bool,
    /// The run never started (it failed before entering any node): the expectations say
    /// nothing about the process, and are not met.
    pub never_started: bool,
    /// What differs, one line each.
    pub mismatches: Vec<String>,
}

/// `scenario`'s expectations checked against a run that ended with `status` at `path`
/// with `variables`; `None` when the scenario expects nothing.
pub fn check(
    scenario: &Scenario,
    process: Option<&crate::bpmn::Process>,
    status: RunStatus,
    path: &[String],
    variables: &Map<String, Value>,
) -> Option<Checked> {
    let expect = scenario.expect.as_ref()?;
    let never = never_started(status, path);
    let mismatches = if never {
        Vec::new()
    } else {
        expect.mismatches(process, Some(status), path, variables)
    };
    Some(Checked {
        scenario: scenario.name.clone(),
        met: !never && mismatches.is_empty(),
        never_started: never,
        mismatches,
    })
}

/// How a scenario's run went.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    /// The run, when it was journalled.
    pub run_id: Option<String>,
    /// How it ended (`None`: it could not run, or did not end).
    pub status: Option<RunStatus>,
    /// Its expectations checked (`None`: it could not run, or the scenario expects
    /// nothing).
    pub checked: Option<Checked>,
    /// Why it could not run or complete (its plan was refused, its engine failed), or
    /// why it never started.
    pub failure: Option<String>,
    /// Where it went and what it ended with (its path and final variables), when it ran.
    pub ended: Option<(Vec<String>, Map<String, Value>)>,
}

/// Run `spec` (a scenario's run, asking nobody at the terminal) on a runtime of its own,
/// shown to nobody; its verdict.
pub fn run_scenario(spec: RunSpec) -> ScenarioRun {
    let mut result = ScenarioRun {
        run_id: None,
        status: None,
        checked: None,
        failure: None,
        ended: None,
    };
    // One thread, as for `start` (a served sibling agent answers on it while the run
    // waits for it); `cuga-flo test` runs scenarios on a thread per core.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            result.failure = Some(format!("cannot start the async runtime: {e}"));
            return result;
        }
    };
    let said = |e: &PlanError| {
        let text = crate::diag::chain(e);
        match crate::diag::Help::help(e) {
            Some(help) => format!("{text} ({help})"),
            None => text,
        }
    };
    let mut plan = match RunPlan::resolve(spec, None, &runtime) {
        Ok(plan) => plan,
        Err(e) => {
            result.failure = Some(said(&e));
            return result;
        }
    };
    let served = plan.served.take();
    let scenario = plan.scenario.clone();
    let process = plan.loaded.shared_process();
    let ended = runtime.block_on(launch(plan, Arc::new(Quiet), std::future::pending()));
    if let Some(served) = served {
        runtime.block_on(served.stop());
    }
    runtime.shutdown_background();
    let ran = match ended {
        Ok(Ended::Ran(ran)) => ran,
        // Never stopped: nothing sends it a signal.
        Ok(Ended::Interrupted { run_id, .. }) => {
            result.run_id = Some(run_id);
            result.failure = Some("the run was interrupted".into());
            return result;
        }
        Err(e) => {
            result.failure = Some(said(&e));
            return result;
        }
    };
    result.run_id = Some(ran.run_id.clone());
    let outcome = match ran.outcome {
        Ok(outcome) => outcome,
        Err(e) => {
            result.failure = Some(e.to_string());
            return result;
        }
    };
    result.status = Some(outcome.status);
    result.ended = Some((outcome.path.clone(), outcome.variables.clone()));
    if never_started(outcome.status, &outcome.path) {
        result.failure = outcome.message.clone();
    }
    result.checked = scenario.as_ref().and_then(|s| {
        check(
            s,
            process.as_deref(),
            outcome.status,
            &outcome.path,
            &outcome.variables,
        )
    });
    result
}

/// A run shown to nobody.
struct Quiet;

impl crate::view::View for Quiet {
    fn record(&self, _record: &Record) {}
    fn finish(&self, _state: &FlowState) {}
}

/// An app's scenarios checked without running them (`validate`): each reads; its inputs
/// are declared variables of their kinds; its answers name the app's control points and
/// answer as they accept; the elements its expectations name (by id or name) are the
/// process's. One error per problem, in the scenario's file.
pub fn lint(loaded: &crate::app::LoadedApp) -> Vec<crate::diag::Diagnostic> {
    use crate::diag::Diagnostic;
    let Some(config) = loaded.config.as_ref() else {
        return Vec::new();
    };
    let process = loaded.process();
    let mut out = Vec::new();
    for name in crate::app::scenario::list(&loaded.dir) {
        let path = crate::app::scenario::scenarios_dir(&loaded.dir).join(format!("{name}.yaml"));
        let error = |code: &'static str, message: String| {
            Diagnostic::error(code, message).in_path(path.display())
        };
        let s = match crate::app::scenario::load(&loaded.dir, &name) {
            Ok(s) => s,
            Err(e) => {
                out.push(error("scenario::invalid", crate::diag::chain(&e)));
                continue;
            }
        };
        let path = s.path.clone();
        let error = |code: &'static str, message: String| {
            Diagnostic::error(code, format!("scenario `{name}`: {message}")).in_path(path.display())
        };
        for (input, value) in &s.inputs {
            if let Err(e) = super::plan::check_input(config, "input", input, value) {
                let mut d = error("scenario::input", e.to_string());
                d.help = crate::diag::Help::help(&e);
                out.push(d);
            }
        }
        if let Err(e) = super::chain::scenario_answers(&s, config, process) {
            out.push(error("scenario::answers", crate::diag::chain(&e)));
        }
        let Some(expect) = &s.expect else { continue };
        let Some(process) = process else { continue };
        let named = (expect.path.iter().flatten())
            .map(|e| ("path", e))
            .chain(expect.visits.iter().map(|e| ("visits", e)))
            .chain(expect.never_visits.iter().map(|e| ("never_visits", e)));
        // Tasks a hook may add at run time are elements of a path too: those a reasoned
        // add_node may insert, and a static one's.
        let inserted: Vec<&str> = (config.hooks.iter())
            .flat_map(|h| {
                let fixed = match h.action.as_ref().map(|a| &a.value) {
                    Some(crate::app::config::ActionSpec::AddNode(t)) => Some(t.id.value.as_str()),
                    _ => None,
                };
                (h.insertable_tasks.iter().map(|t| t.id.value.as_str())).chain(fixed)
            })
            .collect();
        for (key, wanted) in named {
            let id = crate::app::scenario::element_id(Some(process), wanted);
            if process.node(id).is_some() || inserted.contains(&id) {
                continue;
            }
            let known = (process.nodes.iter())
                .flat_map(|n| std::iter::once(n.id.as_str()).chain(n.name.as_deref()))
                .chain(inserted.iter().copied());
            let mut d = error(
                "scenario::element",
                format!(
                    "expect.{key} names `{wanted}`, which is no element of process `{}` (by id, or by a name only one element has)",
                    process.id
                ),
            );
            d.help =
                crate::diag::did_you_mean(wanted, known).map(|m| format!("did you mean `{m}`?"));
            out.push(d);
        }
    }
    out
}
