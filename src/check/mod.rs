//! Static checks: everything `validate` can find wrong before a run starts. Each check
//! returns diagnostics pointing at the YAML key or BPMN element concerned.
//!
//! - [`graph`]: the BPMN model as a graph (reachability, dead ends, gateway shapes).
//! - [`refs`]: the config against the model (ids, kinds, flows, policies, agents, engine).
//! - [`hooks`]: hooks and `action_permissions`.
//! - [`conditions`]: every condition parses; exclusive splits that can take no flow.
//! - [`rules`]: the rules of hook and gateway policies.
//! - [`llm`]: model settings (prompt templates, `on_failure`, unused settings).
//! - [`guarantees`]: the config's guarantees, proven under every permitted adaptation.
//! - [`engine`]: what the app's engine can run (Flowable's hook actions and elements).

mod conditions;
mod engine;
mod graph;
mod guarantees;
mod hooks;
mod llm;
mod refs;
mod rules;

use crate::app::{EngineKind, LoadedApp};
use crate::bpmn::Document;
use crate::diag::{Diagnostic, Severity};

/// Every problem in an app: what loading found, then the checks that loading made possible.
pub fn check_app(app: &LoadedApp) -> Vec<Diagnostic> {
    check_app_on(app, None)
}

/// [`check_app`] for running the app on `engine` (`start --engine`) instead of the
/// config's engine: the engine checks are that engine's.
pub fn check_app_on(app: &LoadedApp, engine: Option<EngineKind>) -> Vec<Diagnostic> {
    let mut diags = app.diagnostics.clone();
    if let Some(doc) = &app.bpmn {
        if let Some(process) = doc.main_process() {
            diags.extend(graph::check_process(doc, process));
        }
        if let Some(config) = &app.config {
            diags.extend(refs::check(config, doc));
            diags.extend(hooks::check(config, doc));
            diags.extend(guarantees::check(config, doc));
            diags.extend(conditions::check(Some(config), doc));
            diags.extend(rules::check(config, doc));
            diags.extend(llm::check(config, doc.main_process()));
            let engine = engine.unwrap_or(config.engine.kind);
            diags.extend(engine::check_for(config, doc, engine));
        }
    } else if let Some(config) = &app.config {
        // No model: the checks that need none still run.
        diags.extend(refs::check_without_model(config));
        diags.extend(llm::check(config, None));
    }
    sort(&mut diags);
    diags
}

/// Every problem in a BPMN model on its own (`validate model.bpmn`).
pub fn check_model(doc: &Document) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for process in &doc.processes {
        if process.nodes.is_empty() {
            continue;
        }
        diags.extend(graph::check_process(doc, process));
    }
    diags.extend(engine::check_model(doc));
    diags.extend(conditions::check(None, doc));
    sort(&mut diags);
    diags
}

/// Errors first, then by file and position, so output is stable.
fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| {
        let pos = d.labels.first().map(|l| l.span.offset).unwrap_or(0);
        (d.severity, d.file_name(), pos)
    });
}

/// Counts of errors and warnings.
pub fn tally(diags: &[Diagnostic]) -> (usize, usize) {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    (errors, diags.len() - errors)
}
