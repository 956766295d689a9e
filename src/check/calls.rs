//! Call activities that name a process (run as child runs on the native engine): the
//! called process exists (among the other processes of the app's BPMN file and the apps
//! of its apps folder; "did you mean" otherwise), its mappings are plain variables, the
//! calls make no cycle (A calls B calls A). A call activity that passes no variable either way is warned about: nothing
//! passes unless the model says so (docs/validate.md#call-activities).

use std::collections::BTreeSet;

use crate::app::LoadedApp;
use std::path::Path;

use crate::app::called::{apps_dir, callable_keys, find_called};
use crate::bpmn::{Document, Process, call_spec};
use crate::diag::{Diagnostic, did_you_mean};

/// The diagnostics of `app`'s call activities (`process`: the process it runs), the
/// processes they call looked for in `apps_dir` too (`None`: a model on its own, whose
/// calls only reach its other processes).
pub fn check(
    app: &LoadedApp,
    apps_dir: Option<&Path>,
    doc: &Document,
    process: &Process,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let calls: Vec<_> = (process.nodes.iter())
        .filter_map(|n| call_spec(n).map(|s| (n, s)))
        .collect();
    if calls.is_empty() {
        return out;
    }
    let dir = apps_dir;
    for (node, spec) in calls {
        let at = |d: Diagnostic, label: &str| d.at(&doc.source, node.span, label.to_string());
        for why in &spec.unreadable {
            out.push(
                at(
                    Diagnostic::error(
                        "engine::call_activity",
                        format!("call activity `{}`: {why}", node.id),
                    ),
                    "this call activity",
                )
                .with_help("docs/validate.md#call-activities lists the mappings cuga-flo reads"),
            );
        }
        if spec.inputs.is_empty() && spec.outputs.is_empty() {
            out.push(
                at(
                    Diagnostic::warning(
                        "engine::call_activity",
                        format!(
                            "call activity `{}` passes no variable to `{}` and takes none back",
                            node.id, spec.called
                        ),
                    ),
                    "no in or out mapping",
                )
                .with_help(
                    "map variables with <camunda:in source=\"a\" target=\"a\"/> and \
                     <camunda:out .../> (or variables=\"all\"; Zeebe: zeebe:ioMapping)",
                ),
            );
        }
        let found = find_called(dir, app, &spec.called);
        let Some((callee_app, callee)) = found else {
            let keys = callable_keys(dir, app);
            let mut d = at(
                Diagnostic::error(
                    "engine::unknown_called_process",
                    match dir {
                        Some(dir) => format!(
                            "call activity `{}` calls `{}`, which no app of {} and no other \
                             process of this file is",
                            node.id,
                            spec.called,
                            dir.display()
                        ),
                        None => format!(
                            "call activity `{}` calls `{}`, which no other process of this file \
                             is (a model on its own calls no app; put it in an app to call one)",
                            node.id, spec.called
                        ),
                    },
                ),
                "calls an unknown process",
            );
            d = match did_you_mean(&spec.called, keys.iter().map(String::as_str)) {
                Some(close) => d.with_help(format!("did you mean `{close}`?")),
                None => d.with_help(
                    "name an app's `flow.id` or its process id, or another process of this file",
                ),
            };
            out.push(d);
            continue;
        };
        let mut path = vec![process.id.clone(), callee.id.clone()];
        let root = identity(app, process);
        let looped = identity(&callee_app, &callee) == root;
        let found = if looped {
            Some(path.clone())
        } else {
            cycle(
                dir,
                &callee_app,
                &callee,
                &mut path,
                &mut BTreeSet::new(),
                &root,
            )
        };
        if let Some(cycle) = found {
            out.push(
                at(
                    Diagnostic::error(
                        "engine::call_cycle",
                        format!(
                            "call activity `{}` makes a cycle of calls: {}",
                            node.id,
                            cycle.join(" → ")
                        ),
                    ),
                    "calls back into this process",
                )
                .with_help("a process may not call itself, directly or through others"),
            );
        }
    }
    out
}

/// A process as a place: its app's folder and its id (apps may share process ids).
fn identity(app: &LoadedApp, process: &Process) -> String {
    format!("{}#{}", app.dir.display(), process.id)
}

/// A cycle of calls from `process` (in `app`) back to `root`: the process ids on it.
fn cycle(
    dir: Option<&Path>,
    app: &LoadedApp,
    process: &Process,
    path: &mut Vec<String>,
    seen: &mut BTreeSet<String>,
    root: &str,
) -> Option<Vec<String>> {
    if !seen.insert(identity(app, process)) {
        return None;
    }
    for spec in process.nodes.iter().filter_map(call_spec) {
        let Some((next_app, next)) = find_called(dir, app, &spec.called) else {
            continue;
        };
        path.push(next.id.clone());
        if identity(&next_app, &next) == root {
            return Some(path.clone());
        }
        // A called app's own calls reach the apps of its own folder.
        let next_dir = if next_app.dir == app.dir {
            dir
        } else {
            apps_dir(&next_app)
        };
        if let Some(found) = cycle(next_dir, &next_app, &next, path, seen, root) {
            return Some(found);
        }
        path.pop();
    }
    None
}
