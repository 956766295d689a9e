//! Guardrail gateways and command agents: a guardrail whose approve and deny routes
//! cannot be told apart from its conditions, and a command agent whose recipe cannot be
//! read or does not declare a parameter the task maps.

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
        let recipe_file = match crate::harness::command::read_recipe(&config.resolve(&recipe.value))
        {
            Ok(r) => r,
            Err(why) => {
                out.push(Diagnostic::error("command::recipe", why).at(
                    &config.source,
                    recipe.span,
                    "recipe".to_string(),
                ));
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
        for p in recipe_file
            .parameters
            .iter()
            .filter(|p| p.required && p.default.is_none())
        {
            if !task.input_mapping.iter().any(|(k, _)| k.value == p.key) {
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
