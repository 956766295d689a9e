//! Guardrail gateways (`approval:`, `requiresApproval`): an approver decides the route.
//! The question goes to people only (a model never answers an escalated request): a
//! scenario's or answers file's answer, an answer recorded with `runs answer` (or read
//! from the run's graph, or the timeout's DENIED, which `runs resume` journals), the
//! person at the terminal, else the run parks until one of those comes. Nobody can be
//! asked at all (`--no-park` without a terminal): DENIED, decided by `fallback`.

use crate::app::guardrail::{self, APPROVED, DENIED, Guardrail};
use crate::bridge::{ControlPointContext, ControlPointError, FlowOption, GatewayDecision};
use crate::reason::{CallLog, GatewayRequest, ReasonError};
use crate::vocab::Decider;

use super::{FlowAgent, Trace, context, cp_error};

/// The guardrail at `gateway_id`, when it is one (`flows` as the router offers them).
pub(crate) fn of(agent: &FlowAgent, gateway_id: &str) -> Option<Result<Guardrail, String>> {
    guardrail::of(Some(&agent.config), agent.process()?, gateway_id)
}

/// Ask an approver at guardrail `g`.
pub(crate) async fn decide(
    agent: &FlowAgent,
    g: &Guardrail,
    flows: &[FlowOption],
    mut ctx: ControlPointContext,
) -> Result<GatewayDecision, ControlPointError> {
    let gw = g.gateway.as_str();
    let pick = |id: &str, label: &str| {
        flows.iter().find(|f| f.id == id).cloned().map(|mut f| {
            f.decision = Some(label.to_string());
            f
        })
    };
    let (Some(approve), Some(deny)) =
        (pick(&g.approve_flow, "approve"), pick(&g.deny_flow, "deny"))
    else {
        return Err(cp_error(
            gw,
            format!(
                "the guardrail's flows `{}` and `{}` are not both offered",
                g.approve_flow, g.deny_flow
            ),
        ));
    };
    context::fill_model(&mut ctx, agent.model());
    let who = if g.approvers.is_empty() {
        String::new()
    } else {
        format!(" by one of {}", g.approvers.join(", "))
    };
    let why = format!(
        "approval required{who}: approve ({} = {APPROVED}) or deny ({} = {DENIED}); \
         {DENIED} when nobody decides within {}",
        g.variable,
        g.variable,
        humantime(g.timeout)
    );
    let offered = vec![approve, deny];
    let req = GatewayRequest {
        gateway_id: gw.to_string(),
        name: context::element_name(&ctx, agent.process(), gw),
        kind: context::gateway_kind(&ctx, agent.process(), gw),
        policy: None,
        condition: None,
        condition_truth: None,
        flows: offered.clone(),
        evaluations: Vec::new(),
        multiple: false,
        escalation: Some(why),
        context: ctx,
        calls: CallLog::default(),
        approvers: Some(g.approvers.clone()),
    };
    let (result, trace) = Trace::ask(req, async |req| agent.reasoner.gateway(req).await).await;
    let answer = match result {
        Ok(a) => a,
        Err(ReasonError::NoAnswer { help, .. }) => {
            let mut d = decision(
                g,
                false,
                Decider::Fallback,
                format!("nobody could be asked to approve ({help})"),
            );
            d.digest = trace.digest;
            return Ok(d);
        }
        Err(e) => return Err(trace.fail(gw, e)),
    };
    if answer.decided_by == Decider::Model {
        return Err(trace.error(gw, "a model may not decide a guardrail's approval"));
    }
    let approved = match answer.flows.as_slice() {
        [f] if *f == g.approve_flow => true,
        [f] if *f == g.deny_flow => false,
        other => {
            return Err(trace.error(
                gw,
                format!(
                    "the approval answer names {} (approve: `{}`, deny: `{}`)",
                    if other.is_empty() {
                        "no flow".to_string()
                    } else {
                        other.join(", ")
                    },
                    g.approve_flow,
                    g.deny_flow
                ),
            ));
        }
    };
    let mut reason = match answer.decided_by {
        Decider::Timeout => "no decision by the deadline".to_string(),
        Decider::Human => answer
            .reason
            .clone()
            .unwrap_or_else(|| "decided by a person".to_string()),
        _ => answer.reason.clone().unwrap_or_default(),
    };
    if answer.decided_by == Decider::Human
        && !reason.contains(" by ")
        && let Ok(user) = std::env::var("USER")
    {
        reason = format!("{reason} (by {user})");
    }
    let mut d = decision(g, approved, answer.decided_by, reason);
    d.calls = trace.calls;
    d.digest = trace.digest;
    Ok(d)
}

fn decision(g: &Guardrail, approved: bool, by: Decider, why: String) -> GatewayDecision {
    let (flow, value) = if approved {
        (&g.approve_flow, APPROVED)
    } else {
        (&g.deny_flow, DENIED)
    };
    let why = why.trim();
    GatewayDecision {
        flows: vec![flow.clone()],
        decided_by: by,
        reason: Some(if why.is_empty() {
            format!("{} = {value}", g.variable)
        } else {
            format!("{} = {value}: {why}", g.variable)
        }),
        calls: Vec::new(),
        digest: None,
    }
}

/// `1h`, `10m`, `30s`, `1h30m`.
fn humantime(d: std::time::Duration) -> String {
    let s = d.as_secs();
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if sec > 0 || out.is_empty() {
        out.push_str(&format!("{sec}s"));
    }
    out
}
