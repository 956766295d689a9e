//! What the app's engine can run: on Flowable, the hook actions its adapter can realise
//! and the model elements it can deploy ([`crate::engine::flowable`]).

use crate::app::{EngineKind, FlowConfig};
use crate::bpmn::Document;
use crate::diag::Diagnostic;
use crate::engine::flowable::{UNREALISABLE, augment};

pub fn check(config: &FlowConfig, doc: &Document) -> Vec<Diagnostic> {
    check_for(config, doc, config.engine.kind)
}

/// The checks for running the app on `engine` (which `start --engine` may choose).
pub fn check_for(config: &FlowConfig, doc: &Document, engine: EngineKind) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if engine != EngineKind::Flowable {
        return out;
    }
    let src = &config.source;
    let permissions = &config.permissions;
    let allowed: Vec<String> = UNREALISABLE
        .into_iter()
        .filter(|a| permissions.allows(*a))
        .map(|a| a.to_string())
        .collect();
    // Without hooks no action is ever taken.
    if !allowed.is_empty() && !config.hooks.is_empty() {
        let span = permissions
            .permitted
            .iter()
            .find(|p| UNREALISABLE.contains(&p.value))
            .map(|p| p.span)
            .or(permissions.span)
            .or_else(|| config.hooks.first().map(|h| h.id.span))
            .unwrap_or_default();
        let help = if permissions.permitted.is_empty() {
            format!(
                "list the permitted actions, or add {} to `prohibited_actions`",
                allowed.join(", ")
            )
        } else {
            format!("take {} out of `permitted_actions`", allowed.join(", "))
        };
        out.push(
            Diagnostic::error(
                "engine::flowable_action",
                format!(
                    "on Flowable, hooks cannot take {}: they change the topology of a deployed \
                     process",
                    allowed.join(", ")
                ),
            )
            .at(src, span, "permitted here".to_string())
            .with_help(help),
        );
    }
    if let Some(process) = doc.main_process() {
        for (id, why) in augment::unsupported(process) {
            let span = process
                .node(&id)
                .map(|n| n.span)
                .or_else(|| process.flows.iter().find(|f| f.id == id).map(|f| f.span))
                .unwrap_or(process.span);
            out.push(
                Diagnostic::error(
                    "engine::flowable_model",
                    format!("`{id}` cannot run on Flowable: {why}"),
                )
                .at(&doc.source, span, "here".to_string()),
            );
        }
    }
    out
}
