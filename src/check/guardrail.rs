//! Guardrail gateways and command agents: a guardrail whose approve and deny routes
//! cannot be told apart from its conditions, and a command agent whose recipe cannot be
//! read, does not declare a parameter the task maps (or, for a task with no
//! `input_mapping`, a variable the process declares), or needs a parameter not given.

use crate::app::FlowConfig;
use crate::bpmn::{Document, ProcessIndex};
use crate::diag::Diagnostic;

pub fn check(
    config: &FlowConfig,
    doc: &Document,
    process: Option<&ProcessIndex>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(index) = process {
        let process = index.process();
        for (id, g) in crate::app::guardrail::all(Some(config), process) {
            let Err(why) = g else { continue };
            let message = format!("guardrail gateway `{id}`: {why}");
            let d = match config.gateway(&id).and_then(|g| g.approval.as_ref()) {
                Some(a) => Diagnostic::error("guardrail::routes", message).at(
                    &config.source,
                    a.span,
                    "approval".to_string(),
                ),
                None => {
                    let span = process.node(&id).map(|n| n.span).unwrap_or_default();
                    Diagnostic::error("guardrail::routes", message).at(
                        &doc.source,
                        span,
                        "requiresApproval".to_string(),
                    )
                }
            };
            out.push(d.with_help(
                "give the approve flow a condition on the decision variable, e.g. \
                 `${approval_status} == 'APPROVED'`, and make the deny flow the default",
            ));
        }
    }
    for task in &config.tasks {
        let Some(cmd) = task.agent.as_ref().and_then(|a| a.command.as_ref()) else {
            continue;
        };
        let Some(recipe) = &cmd.recipe else { continue };
        let recipe_file = match crate::app::recipe::read_recipe(&config.resolve(&recipe.value)) {
            Ok(r) => r,
            Err(why) => {
                out.push(
                    Diagnostic::error("command::recipe", crate::diag::chain(&why)).at(
                        &config.source,
                        recipe.span,
                        "recipe".to_string(),
                    ),
                );
                continue;
            }
        };
        for (param, _) in &task.input_mapping {
            if !recipe_file.parameters.iter().any(|p| p.key == param.value) {
                out.push(
                    Diagnostic::error(
                        "command::parameter",
                        format!(
                            "task `{}` passes `{}`, which its recipe does not declare",
                            task.id.value, param.value
                        ),
                    )
                    .at(
                        &config.source,
                        param.span,
                        "not a recipe parameter".to_string(),
                    )
                    .with_help("declare it under the recipe's `parameters`, or drop the mapping"),
                );
            }
        }
        // No `input_mapping`: the task passes every process variable as a parameter
        // (src/harness/task.rs), so each variable the config declares (present from the
        // start) must be one the recipe declares, and the recipe's required parameters are
        // met by the variables of their names.
        let passes_all = task.input_mapping.is_empty();
        if passes_all {
            let undeclared: Vec<&str> = (config.variables.iter())
                .map(|v| v.name.value.as_str())
                .filter(|v| !recipe_file.parameters.iter().any(|p| p.key == *v))
                .collect();
            if !undeclared.is_empty() {
                let quoted: Vec<String> = undeclared.iter().map(|v| format!("`{v}`")).collect();
                let declared: Vec<&str> = (recipe_file.parameters.iter())
                    .map(|p| p.key.as_str())
                    .collect();
                out.push(
                    Diagnostic::error(
                        "command::inputs",
                        format!(
                            "task `{}` has no input_mapping, so its command gets every process \
                             variable as a parameter, and its recipe does not declare {}: \
                             the task would fail when it runs",
                            task.id.value,
                            quoted.join(", ")
                        ),
                    )
                    .at(&config.source, task.id.span, "no input_mapping".to_string())
                    .with_help(if declared.is_empty() {
                        "declare the inputs the command needs under the recipe's `parameters` \
                         and map them in the task's input_mapping"
                            .to_string()
                    } else {
                        format!(
                            "map the recipe's parameters ({}) in the task's input_mapping, \
                             e.g. `input_mapping: {{{}: <variable>}}`",
                            declared.join(", "),
                            declared[0]
                        )
                    }),
                );
            }
        }
        for p in recipe_file
            .parameters
            .iter()
            .filter(|p| p.required && p.default.is_none())
        {
            let given = match passes_all {
                true => config.variables.iter().any(|v| v.name.value == p.key),
                false => task.input_mapping.iter().any(|(k, _)| k.value == p.key),
            };
            if !given {
                out.push(
                    Diagnostic::error(
                        "command::parameter",
                        format!(
                            "task `{}` does not map the recipe's required parameter `{}`",
                            task.id.value, p.key
                        ),
                    )
                    .at(&config.source, cmd.span, "command agent".to_string())
                    .with_help(format!("add `{}: <variable>` to its input_mapping", p.key)),
                );
            }
        }
    }
    out
}
