//! `route_gateway`: conditions first, then the default flow, then (for `decision_agent`
//! gateways only) the reasoner.
//!
//! The flows come from the engine with the model's conditions; a condition the config
//! gives a flow (`gateways.<id>.flows.<flow>.condition`) replaces the model's, and the
//! config's `decision` labels are filled in. Default flows' conditions are never evaluated.
//!
//! Exclusive gateways (and event-based ones whose flows have conditions):
//! 1. the first non-default flow (document order) whose condition is TRUE;
//! 2. a `decision_agent` gateway with a gateway-level `condition` and exactly two flows:
//!    TRUE → the non-default flow (the first when neither is default), FALSE → the other;
//! 3. nothing TRUE: a `decision_agent` gateway with an UNKNOWN condition (or no condition
//!    at all) asks the reasoner; else the default flow; else a `decision_agent` asks the
//!    reasoner; else the call fails: no condition holds and there is no default flow.
//!
//! Inclusive (and complex) gateways take every TRUE flow; a `decision_agent` gateway with
//! UNKNOWN conditions asks the reasoner for a non-empty subset (the TRUE flows are kept);
//! nothing TRUE → as above. Event-based gateways without conditions ask the reasoner which
//! event happened first, unless the config says `mode: native`. Parallel gateways take
//! every flow; a single unconditioned flow is taken without asking.
//!
//! The reasoner is offered the flows whose condition is not FALSE (all of them when every
//! one is FALSE); its answer must name offered flows only (exactly one unless the gateway
//! is inclusive), else the call fails. `mode: native` gateways never reason. A model
//! condition that cannot be read counts as UNKNOWN at a `decision_agent` gateway and is
//! an error at a native one (config conditions are parsed when the harness is built).

use crate::app::{GatewayConfig, GatewayMode, OnFailure, OnUntrusted};
use crate::bpmn::GatewayKind;
use crate::bridge::{ControlPointContext, ControlPointError, FlowOption, GatewayDecision};
use crate::expr::{self, Truth};
use crate::reason::{CallLog, FlowTruth, GatewayAnswer, GatewayRequest, ReasonError};
use crate::vocab::Decider;

use super::{FlowAgent, Trace, ask_person, context, cp_error, trust};

/// One evaluated flow condition.
struct Eval {
    index: usize,
    condition: String,
    truth: Truth,
}

pub(crate) async fn route(
    agent: &FlowAgent,
    gateway_id: &str,
    mut ctx: ControlPointContext,
) -> Result<GatewayDecision, ControlPointError> {
    let cfg = agent.config.gateway(gateway_id);
    let process = agent.process();
    let kind = context::gateway_kind(&ctx, process, gateway_id);
    let mut flows = std::mem::take(&mut ctx.flows);
    if flows.is_empty() {
        flows = context::outgoing_flows(&ctx, process, gateway_id);
    }
    if flows.is_empty() {
        return Err(cp_error(gateway_id, "the gateway has no outgoing flow"));
    }
    for f in &mut flows {
        if f.condition.as_deref().is_some_and(|c| c.trim().is_empty()) {
            f.condition = None;
        }
        if let Some(gf) = cfg.and_then(|g| g.flows.iter().find(|x| x.id.value == f.id)) {
            if let Some(c) = &gf.condition {
                f.condition = Some(c.value.clone());
            }
            if let Some(d) = &gf.decision {
                f.decision = Some(d.value.clone());
            }
        }
    }
    ctx.flows = flows.clone();
    if let Some(g) = super::guardrail::of(agent, gateway_id) {
        let g = g.map_err(|why| cp_error(gateway_id, format!("guardrail: {why}")))?;
        return super::guardrail::decide(agent, &g, &flows, ctx).await;
    }
    let reasoning = cfg.is_some_and(|g| g.mode == GatewayMode::DecisionAgent);

    if kind == GatewayKind::Parallel {
        let all = flows.iter().map(|f| f.id.clone()).collect();
        return Ok(decision(
            all,
            Decider::None,
            "a parallel gateway takes every flow",
        ));
    }
    if flows.len() == 1 && flows[0].condition.is_none() {
        return Ok(decision(
            vec![flows[0].id.clone()],
            Decider::None,
            "the only outgoing flow",
        ));
    }

    let mut evals: Vec<Eval> = Vec::new();
    for (index, f) in flows.iter().enumerate() {
        if f.is_default {
            continue;
        }
        let Some(text) = &f.condition else { continue };
        let key = (gateway_id.to_string(), f.id.clone());
        let truth = match agent.conditions.flows.get(&key) {
            Some(e) => e.eval(&ctx.variables),
            None => match expr::parse(text) {
                Ok(e) => e.eval(&ctx.variables),
                // Something else can decide: the condition counts as UNKNOWN.
                Err(_) if reasoning => Truth::Unknown,
                Err(err) => {
                    return Err(cp_error(
                        gateway_id,
                        format!(
                            "the condition of flow `{}` cannot be read: `{text}`: {err}",
                            f.id
                        ),
                    ));
                }
            },
        };
        evals.push(Eval {
            index,
            condition: text.clone(),
            truth,
        });
    }
    let any_unknown = evals.iter().any(|e| e.truth == Truth::Unknown);
    let default = flows.iter().position(|f| f.is_default);
    let multiple = matches!(kind, GatewayKind::Inclusive | GatewayKind::Complex);
    let route = Route {
        agent,
        gateway_id,
        kind,
        multiple,
        flows: &flows,
        evals: &evals,
    };

    if multiple {
        let trues: Vec<usize> = evals
            .iter()
            .filter(|e| e.truth == Truth::True)
            .map(|e| e.index)
            .collect();
        if reasoning && any_unknown {
            return route.ask(ctx, &trues).await;
        }
        if !trues.is_empty() {
            let reason = evals
                .iter()
                .filter(|e| e.truth == Truth::True)
                .map(|e| format!("`{}` is TRUE", e.condition))
                .collect::<Vec<_>>()
                .join("; ");
            let ids = trues.iter().map(|i| flows[*i].id.clone()).collect();
            return Ok(decision(ids, Decider::Condition, reason));
        }
        let no_conditions = evals.is_empty();
        if reasoning && no_conditions {
            return route.ask(ctx, &[]).await;
        }
        return route.fallback(ctx, default, reasoning).await;
    }

    if let Some(e) = evals.iter().find(|e| e.truth == Truth::True) {
        return Ok(decision(
            vec![flows[e.index].id.clone()],
            Decider::Condition,
            format!("`{}` is TRUE", e.condition),
        ));
    }
    // A decision agent's own condition, over exactly two flows.
    let gateway_condition = agent
        .conditions
        .gateways
        .get(gateway_id)
        .filter(|_| reasoning && flows.len() == 2);
    let mut gateway_unknown = false;
    if let Some(e) = gateway_condition {
        let yes = flows.iter().position(|f| !f.is_default).unwrap_or(0);
        match e.eval(&ctx.variables) {
            Truth::True => {
                return Ok(decision(
                    vec![flows[yes].id.clone()],
                    Decider::Condition,
                    format!("`{}` is TRUE", e.source()),
                ));
            }
            Truth::False => {
                return Ok(decision(
                    vec![flows[1 - yes].id.clone()],
                    Decider::Condition,
                    format!("`{}` is FALSE", e.source()),
                ));
            }
            Truth::Unknown => gateway_unknown = true,
        }
    }
    let no_conditions = evals.is_empty() && gateway_condition.is_none();
    let unconfigured_event = kind == GatewayKind::EventBased && cfg.is_none() && no_conditions;
    if (reasoning && (any_unknown || gateway_unknown || no_conditions)) || unconfigured_event {
        return route.ask(ctx, &[]).await;
    }
    route.fallback(ctx, default, reasoning).await
}

struct Route<'a> {
    agent: &'a FlowAgent,
    gateway_id: &'a str,
    kind: GatewayKind,
    multiple: bool,
    flows: &'a [FlowOption],
    evals: &'a [Eval],
}

impl Route<'_> {
    /// Nothing TRUE: the default flow, else the reasoner (decision agents), else an error.
    async fn fallback(
        &self,
        ctx: ControlPointContext,
        default: Option<usize>,
        reasoning: bool,
    ) -> Result<GatewayDecision, ControlPointError> {
        if let Some(d) = default {
            let reason = if self.evals.is_empty() {
                "no condition to evaluate; the default flow".to_string()
            } else {
                format!(
                    "no condition is TRUE ({}); the default flow",
                    self.summary()
                )
            };
            return Ok(decision(
                vec![self.flows[d].id.clone()],
                Decider::Default,
                reason,
            ));
        }
        if reasoning {
            return self.ask(ctx, &[]).await;
        }
        let detail = if self.evals.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.summary())
        };
        Err(cp_error(
            self.gateway_id,
            format!("no condition holds and there is no default flow{detail}"),
        ))
    }

    /// "`a` is FALSE, `b` is UNKNOWN".
    fn summary(&self) -> String {
        self.evals
            .iter()
            .map(|e| format!("`{}` is {}", e.condition, e.truth.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Ask the reasoner among the flows whose condition is not FALSE; `keep` are flows
    /// already chosen by their conditions (inclusive gateways).
    async fn ask(
        &self,
        mut ctx: ControlPointContext,
        keep: &[usize],
    ) -> Result<GatewayDecision, ControlPointError> {
        let gw = self.gateway_id;
        context::fill_model(&mut ctx, self.agent.model());
        let is_false = |i: usize| {
            self.evals
                .iter()
                .any(|e| e.index == i && e.truth == Truth::False)
        };
        let mut offered: Vec<FlowOption> = self
            .flows
            .iter()
            .enumerate()
            .filter(|(i, _)| !is_false(*i))
            .map(|(_, f)| f.clone())
            .collect();
        if offered.is_empty() {
            offered = self.flows.to_vec();
        }
        let cfg = self.agent.config.gateway(gw);
        let req = GatewayRequest {
            gateway_id: gw.to_string(),
            name: context::element_name(&ctx, self.agent.process(), gw),
            kind: self.kind,
            policy: self.agent.policies.gateways.get(gw).cloned(),
            condition: cfg
                .and_then(|g| g.condition.as_ref())
                .map(|c| c.value.clone()),
            condition_truth: self
                .agent
                .conditions
                .gateways
                .get(gw)
                .map(|e| e.eval(&ctx.variables)),
            flows: offered.clone(),
            evaluations: self
                .evals
                .iter()
                .map(|e| FlowTruth {
                    flow: self.flows[e.index].id.clone(),
                    condition: e.condition.clone(),
                    truth: e.truth,
                })
                .collect(),
            multiple: self.multiple,
            escalation: None,
            context: ctx,
            calls: CallLog::default(),
            approvers: None,
        };
        let reasoner = &self.agent.reasoner;
        let policy = cfg
            .and_then(|g| g.on_failure.as_ref())
            .map_or(OnFailure::Ask, |l| l.value);
        let again = req.clone();
        let (result, trace) = Trace::ask(req, async |req| reasoner.gateway(req).await).await;
        let person = async |req: GatewayRequest, why: String| {
            ask_person(req, why, async |r| reasoner.gateway(r).await).await
        };
        let answer = match result {
            Ok(answer) => match (
                self.untrusted_choice(cfg, &answer, &again.context),
                self.agent.config.permissions.on_untrusted,
            ) {
                (None, _) | (Some(_), OnUntrusted::Allow) => answer,
                (Some(why), OnUntrusted::Deny) => {
                    return Err(trace.error(gw, format!("{why} (on_untrusted: deny)")));
                }
                (Some(why), OnUntrusted::Confirm) => {
                    match person(again, format!("confirm: {why}")).await {
                        Ok(Some(answer)) => answer,
                        Ok(None) => {
                            let why = format!(
                                "{why}, and no person can confirm it (on_untrusted: confirm)"
                            );
                            return Err(trace.error(gw, why));
                        }
                        Err(other) => return Err(trace.fail(gw, other)),
                    }
                }
            },
            // Fail-safe: a person decides, or the run waits for one, or it fails.
            Err(e @ ReasonError::Failed { .. }) if policy == OnFailure::Ask => {
                match person(again, e.to_string()).await {
                    Ok(Some(answer)) => answer,
                    Ok(None) => {
                        let why = format!("{e}; no person could decide instead (on_failure: ask)");
                        return Err(trace.error(gw, why));
                    }
                    Err(other) => return Err(trace.fail(gw, other)),
                }
            }
            Err(e @ ReasonError::Failed { .. }) => return self.on_failure(cfg, e, trace),
            Err(e) => return Err(trace.fail(gw, e)),
        };
        let mut decision = self.check_answer(&offered, answer, keep)?;
        decision.calls = trace.calls;
        decision.digest = trace.digest;
        Ok(decision)
    }

    /// Why a model's choice needs `on_untrusted`: the gateway is marked `consequential`
    /// and the model's context held untrusted data; `None` when it does not.
    fn untrusted_choice(
        &self,
        cfg: Option<&GatewayConfig>,
        answer: &GatewayAnswer,
        ctx: &ControlPointContext,
    ) -> Option<String> {
        if answer.decided_by != Decider::Model || !cfg.is_some_and(|g| g.consequential) {
            return None;
        }
        let untrusted = trust::untrusted(&self.agent.config, ctx);
        (!untrusted.is_empty()).then(|| {
            format!(
                "the choice of {} at consequential gateway `{}` was made by a model whose \
                 context held untrusted data: {}",
                answer.flows.join(", "),
                self.gateway_id,
                trust::listed(&untrusted)
            )
        })
    }

    /// The model gave no usable answer: `on_failure: default` takes the default flow;
    /// `fail` fails the call (`ask`, the default, is handled by the caller).
    fn on_failure(
        &self,
        cfg: Option<&GatewayConfig>,
        e: ReasonError,
        trace: Trace,
    ) -> Result<GatewayDecision, ControlPointError> {
        let wanted = cfg.and_then(|g| g.on_failure.as_ref()).map(|l| l.value);
        if wanted == Some(OnFailure::Default) {
            if let Some(default) = self.flows.iter().find(|f| f.is_default) {
                let mut d = decision(
                    vec![default.id.clone()],
                    Decider::Fallback,
                    format!("{e}; on_failure: default takes the default flow"),
                );
                d.calls = trace.calls;
                d.digest = trace.digest;
                return Ok(d);
            }
            return Err(trace.error(
                self.gateway_id,
                format!("{e}; on_failure is `default` but the gateway has no default flow"),
            ));
        }
        Err(trace.error(self.gateway_id, e.to_string()))
    }

    /// The reasoner's answer, checked: it names offered flows only (exactly one unless
    /// the gateway is inclusive).
    fn check_answer(
        &self,
        offered: &[FlowOption],
        answer: GatewayAnswer,
        keep: &[usize],
    ) -> Result<GatewayDecision, ControlPointError> {
        let gw = self.gateway_id;
        let offered_ids: Vec<&str> = offered.iter().map(|f| f.id.as_str()).collect();
        if answer.flows.is_empty() {
            return Err(cp_error(gw, "the answer names no flow"));
        }
        if !self.multiple && answer.flows.len() > 1 {
            return Err(cp_error(
                gw,
                format!(
                    "the answer names {} flows ({}); this gateway takes exactly one",
                    answer.flows.len(),
                    answer.flows.join(", ")
                ),
            ));
        }
        if let Some(bad) = answer
            .flows
            .iter()
            .find(|f| !offered_ids.contains(&f.as_str()))
        {
            return Err(cp_error(
                gw,
                format!(
                    "the answer `{bad}` is not one of the offered flows ({})",
                    offered_ids.join(", ")
                ),
            ));
        }
        // In the model's order, with the flows the conditions chose.
        let chosen: Vec<String> = self
            .flows
            .iter()
            .enumerate()
            .filter(|(i, f)| keep.contains(i) || answer.flows.contains(&f.id))
            .map(|(_, f)| f.id.clone())
            .collect();
        Ok(GatewayDecision {
            flows: chosen,
            decided_by: answer.decided_by,
            reason: answer.reason,
            calls: Vec::new(),
            digest: None,
        })
    }
}

fn decision(flows: Vec<String>, decided_by: Decider, reason: impl Into<String>) -> GatewayDecision {
    GatewayDecision {
        flows,
        decided_by,
        reason: Some(reason.into()),
        calls: Vec::new(),
        digest: None,
    }
}
