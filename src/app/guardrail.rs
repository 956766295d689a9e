//! Guardrail gateways: a gateway whose route an approver decides (`approval:` on the
//! gateway in the flow config, or `requiresApproval="true"` on the BPMN element, as
//! `graph import` writes AgentFLOW's `agentflow:GuardrailGateway`). The approver answers
//! APPROVED or DENIED; the value is the gateway's decision variable, and the gateway's own
//! conditions say which flow each value takes. No decision by the timeout: DENIED.
//!
//! This module only resolves a guardrail from the config and the model (which variable,
//! which flow each decision takes, the timeout, the approvers); the harness asks, the
//! journal records, `runs answer` and the graph store answer. docs/graph.md, "Guardrail
//! gateways".

use std::time::Duration;

use serde_json::{Map, Value};

use super::config::{FlowConfig, GatewayConfig};
use crate::bpmn::{GatewayKind, NodeKind, Process};
use crate::expr::{self, Truth};

/// The decision variable when neither the config nor the conditions name one.
pub const DEFAULT_VARIABLE: &str = "approval_status";
/// The timeout when neither the config nor the model gives one (AgentFLOW's `PT1H`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);
pub const APPROVED: &str = "APPROVED";
pub const DENIED: &str = "DENIED";

/// A guardrail gateway, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Guardrail {
    pub gateway: String,
    /// The variable the gateway's conditions test.
    pub variable: String,
    /// No decision by then: DENIED.
    pub timeout: Duration,
    /// Who may approve; empty: anyone.
    pub approvers: Vec<String>,
    /// The flow APPROVED takes.
    pub approve_flow: String,
    /// The flow DENIED takes.
    pub deny_flow: String,
}

impl Guardrail {
    /// The question's view of it (what `runs answer` and the graph store need).
    pub fn ask(&self) -> crate::vocab::ApprovalAsk {
        crate::vocab::ApprovalAsk {
            variable: self.variable.clone(),
            approve_flow: self.approve_flow.clone(),
            deny_flow: self.deny_flow.clone(),
            approvers: self.approvers.clone(),
        }
    }

    /// Whether `who` may approve.
    pub fn admits(&self, who: Option<&str>) -> bool {
        admits(&self.approvers, who)
    }
}

/// Whether `who` is one of `approvers` (anyone when there are none).
pub fn admits(approvers: &[String], who: Option<&str>) -> bool {
    approvers.is_empty() || who.is_some_and(|w| approvers.iter().any(|a| a == w))
}

/// `APPROVED` / `DENIED` from what an approver wrote (`approve`, `approved`, `yes`, `deny`,
/// `denied`, `no`, any case); `None` for anything else.
pub fn decision_of(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "approve" | "approved" | "yes" | "true" => Some(true),
        "deny" | "denied" | "no" | "false" | "reject" | "rejected" => Some(false),
        _ => None,
    }
}

/// The model attribute `local` (`requiresApproval`, `approvalTimeout`) of a node, with
/// any prefix (`cuga:requiresApproval`).
fn model_attribute<'a>(process: &'a Process, node: &str, local: &str) -> Option<&'a str> {
    let node = process.node(node)?;
    node.attributes
        .iter()
        .find(|(k, _)| *k == local || k.rsplit(':').next() == Some(local))
        .map(|(_, v)| v)
}

/// Whether `gateway` is a guardrail: `approval:` in the config, or `requiresApproval`
/// true on the model's element.
pub fn is_guardrail(config: Option<&FlowConfig>, process: &Process, gateway: &str) -> bool {
    config
        .and_then(|c| c.gateway(gateway))
        .is_some_and(|g| g.approval.is_some())
        || model_attribute(process, gateway, "requiresApproval")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true") || v.trim() == "1")
}

/// Every guardrail gateway of `process`, resolved (or why it cannot be).
pub fn all(
    config: Option<&FlowConfig>,
    process: &Process,
) -> Vec<(String, Result<Guardrail, String>)> {
    process
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Gateway(_)))
        .filter(|n| is_guardrail(config, process, &n.id))
        .map(|n| (n.id.clone(), resolve(config, process, &n.id)))
        .collect()
}

/// The guardrail at `gateway`, when it is one: `None` when it is not a guardrail.
pub fn of(
    config: Option<&FlowConfig>,
    process: &Process,
    gateway: &str,
) -> Option<Result<Guardrail, String>> {
    is_guardrail(config, process, gateway).then(|| resolve(config, process, gateway))
}

/// A flow's condition: the config's (`gateways.<id>.flows.<flow>.condition`), else the
/// model's.
fn condition(
    cfg: Option<&GatewayConfig>,
    flow: &crate::bpmn::Flow,
) -> Option<Result<expr::Expr, String>> {
    if let Some(c) = cfg
        .and_then(|g| g.flows.iter().find(|f| f.id.value == flow.id))
        .and_then(|f| f.condition.as_ref())
    {
        return Some(expr::parse(&c.value).map_err(|e| e.to_string()));
    }
    let c = flow
        .condition
        .as_ref()
        .filter(|c| !c.body.trim().is_empty())?;
    Some(expr::parse_in(&c.body, c.language.as_deref()).map_err(|e| e.to_string()))
}

fn resolve(
    config: Option<&FlowConfig>,
    process: &Process,
    gateway: &str,
) -> Result<Guardrail, String> {
    let node = process
        .node(gateway)
        .ok_or_else(|| format!("`{gateway}` is not a node of the model"))?;
    if matches!(node.kind, NodeKind::Gateway(GatewayKind::Parallel)) {
        return Err("a parallel gateway takes every flow: it cannot be a guardrail".into());
    }
    let cfg = config.and_then(|c| c.gateway(gateway));
    let approval = cfg.and_then(|g| g.approval.as_ref());
    let flows: Vec<&crate::bpmn::Flow> = process.outgoing(gateway).collect();
    let mut conditions = Vec::new();
    for f in &flows {
        if node.default_flow.as_deref() == Some(f.id.as_str()) {
            continue;
        }
        match condition(cfg, f) {
            Some(Ok(e)) => conditions.push((f.id.clone(), e)),
            Some(Err(why)) => {
                return Err(format!(
                    "the condition of flow `{}` cannot be read: {why}",
                    f.id
                ));
            }
            None => {}
        }
    }
    let variable = approval
        .and_then(|a| a.variable.as_ref())
        .map(|v| v.value.clone())
        .or_else(|| conditions.iter().flat_map(|(_, e)| e.variables()).next())
        .unwrap_or_else(|| DEFAULT_VARIABLE.to_string());
    let route = |value: &str| -> Result<String, String> {
        let mut vars = Map::new();
        vars.insert(variable.clone(), Value::String(value.to_string()));
        for (id, e) in &conditions {
            match e.eval(&vars) {
                Truth::True => return Ok(id.clone()),
                Truth::False => {}
                Truth::Unknown => {
                    return Err(format!(
                        "the condition `{}` of flow `{id}` tests more than the approval \
                         variable `{variable}`",
                        e.source()
                    ));
                }
            }
        }
        node.default_flow.clone().ok_or_else(|| {
            format!("no flow is taken when `{variable}` is {value}, and there is no default flow")
        })
    };
    let approve_flow = route(APPROVED)?;
    let deny_flow = route(DENIED)?;
    if approve_flow == deny_flow {
        return Err(format!(
            "APPROVED and DENIED both take flow `{approve_flow}`: the conditions must test \
             `{variable}` (e.g. `${{{variable}}} == '{APPROVED}'`, the default flow for the rest)"
        ));
    }
    let timeout = match approval.and_then(|a| a.timeout.as_ref()) {
        Some(t) => t.value,
        None => match model_attribute(process, gateway, "approvalTimeout") {
            Some(text) => super::config::parse_timeout(text)
                .ok_or_else(|| format!("approvalTimeout `{text}` is not a duration"))?,
            None => DEFAULT_TIMEOUT,
        },
    };
    Ok(Guardrail {
        gateway: gateway.to_string(),
        variable,
        timeout,
        approvers: approval
            .map(|a| a.approvers.iter().map(|x| x.value.clone()).collect())
            .unwrap_or_default(),
        approve_flow,
        deny_flow,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_read_in_any_spelling() {
        assert_eq!(decision_of("approve"), Some(true));
        assert_eq!(decision_of(" APPROVED "), Some(true));
        assert_eq!(decision_of("Denied"), Some(false));
        assert_eq!(decision_of("deny"), Some(false));
        assert_eq!(decision_of("maybe"), None);
        assert!(admits(&[], None));
        assert!(admits(&["alice".into()], Some("alice")));
        assert!(!admits(&["alice".into()], Some("bob")));
        assert!(!admits(&["alice".into()], None));
    }
}
