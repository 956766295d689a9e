//! Policy documents: markdown the reasoner is given with a control point. Paths are
//! relative to the config file. Each file is read once, when the harness is built; a
//! policy that cannot be read is an error naming its owner and path (the original project
//! only warned and reasoned with an empty policy).
//!
//! Only policies a control point can use are read: those of `task_agent` tasks,
//! `decision_agent` gateways and enabled hooks.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::app::{FlowConfig, GatewayMode, Located, TaskMode};
use crate::reason::Policy;

use super::{HarnessError, Policies};

/// Read every policy the control points of `config` can use.
pub(crate) fn load(config: &FlowConfig) -> Result<Policies, HarnessError> {
    let mut cache: HashMap<PathBuf, String> = HashMap::new();
    let mut out = Policies::default();
    for task in &config.tasks {
        if task.mode == TaskMode::TaskAgent
            && let Some(p) = &task.policy
        {
            let owner = format!("task `{}`", task.id.value);
            out.tasks
                .insert(task.id.value.clone(), read(config, p, &owner, &mut cache)?);
        }
    }
    for gw in &config.gateways {
        if gw.mode == GatewayMode::DecisionAgent
            && let Some(p) = &gw.policy
        {
            let owner = format!("gateway `{}`", gw.id.value);
            out.gateways
                .insert(gw.id.value.clone(), read(config, p, &owner, &mut cache)?);
        }
    }
    for hook in &config.hooks {
        if hook.enabled
            && let Some(p) = &hook.policy
        {
            let owner = format!("hook `{}`", hook.id.value);
            out.hooks
                .insert(hook.id.value.clone(), read(config, p, &owner, &mut cache)?);
        }
    }
    Ok(out)
}

fn read(
    config: &FlowConfig,
    written: &Located<String>,
    owner: &str,
    cache: &mut HashMap<PathBuf, String>,
) -> Result<Policy, HarnessError> {
    let path = config.resolve(&written.value);
    let text = match cache.get(&path) {
        Some(t) => t.clone(),
        None => {
            let t = crate::source::read_text(&path).map_err(|e| HarnessError::Policy {
                owner: owner.to_string(),
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            cache.insert(path.clone(), t.clone());
            t
        }
    };
    Ok(Policy {
        path: path.display().to_string(),
        text,
    })
}
