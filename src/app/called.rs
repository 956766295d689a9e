//! The processes call activities call: found by process key among the other processes
//! of the calling app's BPMN file, then among the apps of the folder the calling app is
//! in (an app's `flow.id`, or its process's id). `validate` checks them (check::calls);
//! `start` runs them as child runs (cli::calls).

use std::path::Path;
use std::sync::Arc;

use super::registry::discover;
use super::{LoadedApp, load_app};
use crate::bpmn::Process;

/// The apps folder of `app`: the folder it is in.
pub fn apps_dir(app: &LoadedApp) -> Option<&Path> {
    app.dir.parent()
}

/// The called process: the app whose harness answers it, and the process.
pub fn find_called(
    apps_dir: Option<&Path>,
    caller: &LoadedApp,
    key: &str,
) -> Option<(LoadedApp, Arc<Process>)> {
    let main_id = caller.process().map(|p| p.id.clone());
    if let Some(doc) = &caller.bpmn
        && let Some(p) = doc
            .processes
            .iter()
            .find(|p| p.id == key && Some(&p.id) != main_id.as_ref())
    {
        return Some((caller.clone(), p.clone()));
    }
    for app in discover(apps_dir?).ok()? {
        let loaded = load_app(&app);
        let Some(config) = &loaded.config else {
            continue;
        };
        let Some(process) = loaded.bpmn.as_ref().and_then(|d| d.main_shared()) else {
            continue;
        };
        if config.process_key() == key || process.id == key {
            let process = process.clone();
            return Some((loaded, process));
        }
    }
    None
}

/// Every process key a call activity of `caller` may name (for "did you mean").
pub fn callable_keys(apps_dir: Option<&Path>, caller: &LoadedApp) -> Vec<String> {
    let main_id = caller.process().map(|p| p.id.clone());
    let mut keys: Vec<String> = (caller.bpmn.iter())
        .flat_map(|doc| doc.processes.iter())
        .filter(|p| Some(&p.id) != main_id.as_ref())
        .map(|p| p.id.clone())
        .collect();
    for app in apps_dir
        .map(|d| discover(d).unwrap_or_default())
        .unwrap_or_default()
    {
        let loaded = load_app(&app);
        if let Some(config) = &loaded.config {
            keys.push(config.process_key().to_string());
        }
        if let Some(p) = loaded.process() {
            keys.push(p.id.clone());
        }
    }
    keys.sort();
    keys.dedup();
    keys
}
