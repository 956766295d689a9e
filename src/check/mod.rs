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
//! - [`calls`]: call activities (the called process, its mappings, cycles of calls).
//!
//! Every check is linear (or n log n) in the size of the model and the config: ids are
//! looked up through one [`ProcessIndex`] per process and one [`index::ConfigIndex`],
//! both built once per run here, never by scanning the lists.

mod calls;
mod conditions;
mod cycles;
mod engine;
mod graph;
mod guarantees;
mod guardrail;
mod hooks;
mod index;
mod llm;
mod refs;
mod rules;
mod tools;

use std::path::Path;

use crate::app::{EngineKind, LoadedApp};
use crate::bpmn::{Document, ProcessIndex};
use crate::diag::{Diagnostic, Severity};

use index::ConfigIndex;

/// Every problem in an app: what loading found, then the checks that loading made possible.
pub fn check_app(app: &LoadedApp) -> Vec<Diagnostic> {
    check_app_on(app, None)
}

/// [`check_app`] for running the app on `engine` (`start --engine`) instead of the
/// config's engine: the engine checks are that engine's.
pub fn check_app_on(app: &LoadedApp, engine: Option<EngineKind>) -> Vec<Diagnostic> {
    let mut diags = app.diagnostics.clone();
    if let Some(doc) = &app.bpmn {
        // When the config's choice of process failed (reported by loading), no process is
        // the app's: each is checked on its own, none against the config.
        let unchosen = (app.diagnostics.iter())
            .any(|d| matches!(d.code, "app::ambiguous_process" | "app::unknown_process"));
        let main = doc
            .main_process()
            .filter(|_| !unchosen)
            .map(ProcessIndex::new);
        if let Some(process) = &main {
            diags.extend(graph::check_process(doc, process));
        }
        // The file's other processes are not run but are checked on their own, as
        // `validate model.bpmn` checks them.
        let others: Vec<ProcessIndex> = (doc.processes.iter())
            .filter(|p| !p.nodes.is_empty())
            .filter(|p| {
                !main
                    .as_ref()
                    .is_some_and(|m| std::ptr::eq(m.process(), &***p))
            })
            .map(|p| ProcessIndex::new(p))
            .collect();
        for process in &others {
            diags.extend(graph::check_process(doc, process));
        }
        diags.extend(conditions::check(None, doc, others.iter()));
        if let Some(config) = &app.config {
            let mut index = ConfigIndex::new(config);
            if let Some(main) = &main {
                index.add_model_writes(main.process());
            }
            let main = main.as_ref();
            diags.extend(refs::check(config, doc, main));
            diags.extend(hooks::check(&index, doc, main));
            diags.extend(guarantees::check(config, doc));
            diags.extend(conditions::check(Some(&index), doc, main));
            diags.extend(rules::check(config, main));
            diags.extend(llm::check(config, main));
            diags.extend(tools::check(config));
            diags.extend(guardrail::check(config, doc, main));
            let engine = engine.unwrap_or(config.engine.kind);
            diags.extend(engine::check_for(config, doc, main, engine));
            if engine == EngineKind::Native
                && let Some(main) = main
            {
                let dir = crate::app::called::apps_dir(app);
                diags.extend(calls::check(app, dir, doc, main.process()));
            }
            // Graph mode: the process graph against the SHACL process shapes.
            diags.extend(crate::graph::shacl::check_app(app));
        }
    } else if let Some(config) = &app.config {
        // No model: the checks that need none still run.
        diags.extend(refs::check_without_model(config));
        diags.extend(llm::check(config, None));
        diags.extend(tools::check(config));
    }
    sort(&mut diags);
    diags
}

/// Every problem in a BPMN model on its own (`validate model.bpmn`).
pub fn check_model(doc: &Document) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let processes: Vec<ProcessIndex> = doc.processes.iter().map(|p| ProcessIndex::new(p)).collect();
    for process in &processes {
        if process.process().nodes.is_empty() {
            continue;
        }
        diags.extend(graph::check_process(doc, process));
    }
    let main = doc
        .main_process()
        .and_then(|m| processes.iter().find(|p| std::ptr::eq(p.process(), m)));
    diags.extend(engine::check_model(doc, main));
    diags.extend(conditions::check(None, doc, processes.iter()));
    // Its call activities, as an app's are checked: on its own, a model's calls reach only
    // its other processes.
    if let Some(main) = main {
        let path = doc.source.path();
        let app = LoadedApp {
            name: (path.file_stem()).map_or_else(String::new, |s| s.to_string_lossy().into()),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            config_path: None,
            config: None,
            bpmn_path: Some(path.to_path_buf()),
            bpmn: Some(std::sync::Arc::new(doc.clone())),
            diagnostics: Vec::new(),
        };
        diags.extend(calls::check(&app, None, doc, main.process()));
    }
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
