//! What the harness reads from a [`ControlPointContext`], falling back on the app's model
//! when the engine's summary is empty (external engines may send none).

use std::sync::Arc;

use crate::bpmn::{GatewayKind, Process};
use crate::bridge::{ControlPointContext, EdgeInfo, FlowOption, ModelSummary};

/// Before a context goes to a reasoner: when the engine sent no model summary, give it
/// the app's model (its [`summary`], built once: `app_model`) so names and targets can be
/// shown.
pub fn fill_model(ctx: &mut ControlPointContext, app_model: Option<&Arc<ModelSummary>>) {
    if ctx.model().nodes.is_empty()
        && let Some(m) = app_model
    {
        ctx.model = Some(m.clone());
    }
}

/// The live model whose nodes are known: the context's summary, else the app's model
/// (`app_model`), else none (an empty summary).
pub fn known_model(
    ctx: &ControlPointContext,
    app_model: Option<&Arc<ModelSummary>>,
) -> Arc<ModelSummary> {
    match (&ctx.model, app_model) {
        (Some(m), _) if !m.nodes.is_empty() => m.clone(),
        (_, Some(m)) => m.clone(),
        _ => Arc::default(),
    }
}

/// The element's name: the context's, else the app's model (a lookup by id), else the
/// live model's summary (a node added while the run went on, which the app's model does
/// not have). A node keeps its name when the run adapts, so the two models agree on
/// every node both have.
pub fn element_name(
    ctx: &ControlPointContext,
    process: Option<&Process>,
    id: &str,
) -> Option<String> {
    if let Some(name) = &ctx.element_name
        && (ctx.element_id.is_empty() || ctx.element_id == id)
    {
        return Some(name.clone());
    }
    if let Some(node) = process.and_then(|p| p.node(id)) {
        return node.name.clone();
    }
    ctx.model()
        .nodes
        .iter()
        .find(|n| n.id == id)
        .and_then(|n| n.name.clone())
}

/// The kind of a gateway: from the app's model, else the context's summary; exclusive when
/// neither knows it.
pub fn gateway_kind(ctx: &ControlPointContext, process: Option<&Process>, id: &str) -> GatewayKind {
    if let Some(kind) = process
        .and_then(|p| p.node(id))
        .and_then(|n| n.kind.gateway())
    {
        return kind;
    }
    let tag = ctx
        .model()
        .nodes
        .iter()
        .find(|n| n.id == id)
        .map(|n| n.kind.as_str());
    match tag {
        Some("inclusiveGateway") => GatewayKind::Inclusive,
        Some("parallelGateway") => GatewayKind::Parallel,
        Some("eventBasedGateway") => GatewayKind::EventBased,
        Some("complexGateway") => GatewayKind::Complex,
        _ => GatewayKind::Exclusive,
    }
}

/// The outgoing flows of a gateway when the engine offered none: from the context's
/// summary, else the app's model.
pub fn outgoing_flows(
    ctx: &ControlPointContext,
    process: Option<&Process>,
    gateway: &str,
) -> Vec<FlowOption> {
    let default = process
        .and_then(|p| p.node(gateway))
        .and_then(|n| n.default_flow.clone());
    let is_default = |id: &str| default.as_deref() == Some(id);
    let from_summary: Vec<FlowOption> = ctx
        .model()
        .flows
        .iter()
        .filter(|f| f.source == gateway)
        .map(|f| FlowOption::of(f, is_default(&f.id)))
        .collect();
    if !from_summary.is_empty() {
        return from_summary;
    }
    process
        .map(|p| {
            p.outgoing(gateway)
                .map(|f| FlowOption::of(&EdgeInfo::of(f), is_default(&f.id)))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::NodeInfo;

    fn node(id: &str, kind: &str) -> NodeInfo {
        NodeInfo {
            id: id.into(),
            kind: kind.into(),
            name: Some(format!("{id} name")),
        }
    }

    fn with_model(nodes: Vec<NodeInfo>, flows: Vec<EdgeInfo>) -> ControlPointContext {
        ControlPointContext {
            model: Some(Arc::new(ModelSummary {
                nodes,
                flows,
                ..ModelSummary::default()
            })),
            ..ControlPointContext::default()
        }
    }

    #[test]
    fn gateway_kind_from_the_context_summary() {
        let ctx = with_model(
            vec![
                node("I", "inclusiveGateway"),
                node("E", "eventBasedGateway"),
                node("P", "parallelGateway"),
            ],
            Vec::new(),
        );
        assert_eq!(gateway_kind(&ctx, None, "I"), GatewayKind::Inclusive);
        assert_eq!(gateway_kind(&ctx, None, "E"), GatewayKind::EventBased);
        assert_eq!(gateway_kind(&ctx, None, "P"), GatewayKind::Parallel);
        assert_eq!(gateway_kind(&ctx, None, "X"), GatewayKind::Exclusive);
    }

    #[test]
    fn outgoing_flows_and_names_from_the_context_summary() {
        let nodes = vec![node("G", "exclusiveGateway"), node("T", "task")];
        let flows = vec![
            EdgeInfo {
                id: "F1".into(),
                source: "G".into(),
                target: "T".into(),
                name: None,
                condition: Some("${x} == 1".into()),
            },
            EdgeInfo {
                id: "F0".into(),
                source: "S".into(),
                target: "G".into(),
                name: None,
                condition: None,
            },
        ];
        let ctx = with_model(nodes, flows);
        let flows = outgoing_flows(&ctx, None, "G");
        assert_eq!(flows.len(), 1);
        assert_eq!(flows[0].condition.as_deref(), Some("${x} == 1"));
        assert_eq!(element_name(&ctx, None, "T").as_deref(), Some("T name"));
        assert_eq!(known_model(&ctx, None).nodes.len(), 2);
        let mut empty = ControlPointContext::default();
        fill_model(&mut empty, None);
        assert!(empty.model().nodes.is_empty());
    }
}
