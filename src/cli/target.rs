//! What a command argument names: an app (by name under the apps folder, or by its
//! folder), a flow config file, or a BPMN model on its own (see
//! [`crate::app::registry::resolve`]).

use std::path::Path;

use crate::app::registry::{self, AppRef};

pub use crate::app::registry::Target;

use super::UsageError;

/// Every app under the apps folder.
pub fn all_apps(apps_dir: &Path) -> Result<Vec<AppRef>, UsageError> {
    registry::discover(apps_dir).map_err(|e| {
        UsageError::new(format!("cannot read the apps folder {}: {e}", apps_dir.display()))
            .with_help("run from a folder that has `applications/`, or pass --apps-dir DIR (or set CUGA_FLO_APPS)")
    })
}

/// Resolve one argument.
pub fn resolve(arg: &str, apps_dir: &Path) -> Result<Target, UsageError> {
    Ok(registry::resolve(arg, apps_dir)?)
}
