//! Guarantees: every node a guarantee names exists (in the model, or as a task a hook may
//! insert), and each guarantee is proven under every adaptation the hooks are permitted
//! ([`crate::govern`]); a guarantee that does not hold is an error with the run that
//! breaks it.

use crate::app::{FlowConfig, GuaranteeRule};
use crate::bpmn::{Document, Process};
use crate::diag::{Diagnostic, did_you_mean, name_list};
use crate::govern;

pub fn check(config: &FlowConfig, doc: &Document) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(process) = doc.main_process() else {
        return out;
    };
    if config.guarantees.is_empty() {
        return out;
    }
    let mut provable = Vec::new();
    for (i, g) in config.guarantees.iter().enumerate() {
        let unknown = govern::unknown_names(config, process, &g.rule);
        for id in &unknown {
            out.push(unknown_node(config, process, &g.id.value, id));
        }
        provable.push(unknown.is_empty());
        if let GuaranteeRule::OnlyAfter { reach, after } = &g.rule
            && let Some(same) = after.iter().find(|a| a.value == reach.value)
        {
            out.push(
                Diagnostic::warning(
                    "guarantee::trivial",
                    format!(
                        "guarantee `{}` asks `{}` to run before itself",
                        g.id.value, reach.value
                    ),
                )
                .at(&config.source, same.span, "the node it reaches".to_string()),
            );
            provable[i] = false;
        }
    }
    for ((g, result), ok) in config
        .guarantees
        .iter()
        .zip(govern::prove(config, process))
        .zip(provable)
    {
        let Err(broken) = result else { continue };
        if !ok {
            continue;
        }
        let label = match broken.hooks().as_slice() {
            [] => "the model alone breaks it".to_string(),
            [h] => format!("broken by hook `{h}`"),
            hooks => format!(
                "broken by hooks {}",
                hooks
                    .iter()
                    .map(|h| format!("`{h}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let help = if broken.adaptations.is_empty() {
            "the process itself allows this run (gateway conditions are not read): change the \
             model, or state the guarantee the process keeps"
                .to_string()
        } else {
            "narrow what the hooks may do (`action_permissions`, their `allowed_targets` or \
             `insertable_tasks`), or state the guarantee the process keeps"
                .to_string()
        };
        out.push(
            Diagnostic::error(
                "guarantee::broken",
                format!(
                    "guarantee `{}` does not hold: {}",
                    g.id.value,
                    broken.explain()
                ),
            )
            .at(&config.source, g.id.span, label)
            .with_help(help),
        );
    }
    out
}

fn unknown_node(
    config: &FlowConfig,
    process: &Process,
    guarantee: &str,
    id: &crate::app::Located<String>,
) -> Diagnostic {
    let candidates: Vec<&str> = process
        .nodes
        .iter()
        .map(|n| n.id.as_str())
        .chain(
            config
                .hooks
                .iter()
                .flat_map(|h| h.insertable_tasks.iter().map(|t| t.id.value.as_str())),
        )
        .collect();
    let help = match did_you_mean(&id.value, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!(
            "the flow nodes of process `{}` are {}",
            process.id,
            name_list(&candidates, 8)
        ),
    };
    Diagnostic::error(
        "ref::unknown_id",
        format!(
            "guarantee `{guarantee}` names `{}`, which is not a node of the process nor a task a hook may insert",
            id.value
        ),
    )
    .at(&config.source, id.span, "no flow node with this id".to_string())
    .with_help(help)
}
