//! What the app's engine can run: on Flowable and Kogito, the hook actions their adapters
//! can realise and the model elements the rewrite for them can carry
//! ([`crate::engine::rewrite`]).

use crate::app::{EngineKind, FlowConfig};
use crate::bpmn::Document;
use crate::diag::Diagnostic;
use crate::engine::rewrite::{self, UNREALISABLE};

pub fn check(config: &FlowConfig, doc: &Document) -> Vec<Diagnostic> {
    check_for(config, doc, config.engine.kind)
}

/// The checks for running the app on `engine` (which `start --engine` may choose).
pub fn check_for(config: &FlowConfig, doc: &Document, engine: EngineKind) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let name = match engine {
        EngineKind::Flowable => "Flowable",
        EngineKind::Kogito => "Kogito",
        EngineKind::Native | EngineKind::Mcp => return out,
    };
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
                "engine::unrealisable_action",
                format!(
                    "on {name}, hooks cannot take {}: they change the topology of a deployed \
                     process",
                    allowed.join(", ")
                ),
            )
            .at(src, span, "permitted here".to_string())
            .with_help(help),
        );
    }
    if let Some(process) = doc.main_process() {
        for (id, why) in rewrite::unsupported(process) {
            let span = process
                .node(&id)
                .map(|n| n.span)
                .or_else(|| process.flows.iter().find(|f| f.id == id).map(|f| f.span))
                .unwrap_or(process.span);
            out.push(
                Diagnostic::error(
                    "engine::unsupported_element",
                    format!("`{id}` cannot run on {name}: {why}"),
                )
                .at(&doc.source, span, "here".to_string()),
            );
        }
    }
    out
}
