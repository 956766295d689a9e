//! What a command argument names: an app (by name under the apps folder, or by its
//! folder), a flow config file, or a BPMN model on its own.

use std::path::{Path, PathBuf};

use crate::app::registry::{self, AppRef, app_at, app_from_config};
use crate::diag::{did_you_mean, name_list};

use super::UsageError;

#[derive(Debug, Clone)]
pub enum Target {
    App(AppRef),
    Model(PathBuf),
}

/// Every app under the apps folder.
pub fn all_apps(apps_dir: &Path) -> Result<Vec<AppRef>, UsageError> {
    registry::discover(apps_dir).map_err(|e| {
        UsageError::new(format!("cannot read the apps folder {}: {e}", apps_dir.display()))
            .with_help("run from a folder that has `applications/`, or pass --apps-dir DIR (or set CUGA_FLO_APPS)")
    })
}

/// Resolve one argument.
pub fn resolve(arg: &str, apps_dir: &Path) -> Result<Target, UsageError> {
    let path = Path::new(arg);
    if path.is_dir() {
        if path.join("config").is_dir() {
            return Ok(Target::App(app_at(path)));
        }
        if path.file_name().is_some_and(|n| n == "config")
            && let Some(parent) = path.parent().filter(|p| p.join("config").is_dir())
        {
            return Ok(Target::App(app_at(parent)));
        }
        // A name that also happens to be a folder in the working directory.
        if !apps_dir.join(arg).join("config").is_dir() {
            return Err(UsageError::new(format!(
                "{arg} is a folder without a `config/` sub-folder, so it is not an app"
            )));
        }
    } else if path.is_file() {
        let name = arg.to_ascii_lowercase();
        if name.ends_with(".yaml") || name.ends_with(".yml") {
            return Ok(Target::App(app_from_config(path)));
        }
        if name.ends_with(".bpmn") || name.ends_with(".xml") || name.ends_with(".bpmn2") {
            return Ok(Target::Model(path.to_path_buf()));
        }
        return Err(UsageError::new(format!(
            "{arg} is neither a flow config (.yaml) nor a BPMN model (.bpmn, .xml)"
        )));
    } else if path.exists() {
        return Err(UsageError::new(format!(
            "{arg} is not a regular file (a pipe, socket or device): name an app, its folder, \
             a flow config or a BPMN file"
        )));
    }
    let dir = apps_dir.join(arg);
    if dir.join("config").is_dir() {
        return Ok(Target::App(app_at(&dir)));
    }
    let names: Vec<String> = registry::discover(apps_dir)
        .map(|apps| apps.into_iter().map(|a| a.name).collect())
        .unwrap_or_default();
    let mut err = UsageError::new(format!("no app `{arg}` under {}", apps_dir.display()));
    err = match did_you_mean(arg, names.iter().map(String::as_str)) {
        Some(s) => err.with_help(format!("did you mean `{s}`?")),
        None if names.is_empty() => err.with_help(
            "no apps there; pass --apps-dir DIR, or a path to an app folder, config or BPMN file",
        ),
        None => err.with_help(format!("available: {}", name_list(&names, 20))),
    };
    Err(err)
}
