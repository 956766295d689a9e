//! Deterministic policy rules, asked before any reasoner. A policy may carry fenced code
//! blocks whose info string is `rules`, one rule per line (blank lines and `#` comments
//! are ignored):
//!
//! ```text
//! when <condition> then <action> [<target>...] [set <var> = <json>[, ...]] [because "<text>"]
//! when <condition> then take <flow>[, <flow>...] [because "<text>"]
//! ```
//!
//! The first rule whose condition is TRUE answers (decided by [`Decider::Rule`]); FALSE and
//! UNKNOWN rules are skipped; when no rule decides, the inner reasoner is asked. Rule
//! answers go through the harness's validation like any other answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::bridge::BoxFuture;
use crate::expr::Truth;
use crate::vocab::{Decider, HookAction};

pub use crate::app::rules::{Rule, RuleAction, RuleError, Variables, parse_rules};

type Parsed = Arc<Result<Vec<Rule>, Vec<RuleError>>>;

use super::{
    AddTask, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, Policy, ReasonError, Reasoner,
    TaskAnswer, TaskRequest,
};

/// A hook rule's answer.
fn hook_answer(rule: &Rule) -> HookAnswer {
    let mut answer = HookAnswer::action(HookAction::Continue, Decider::Rule);
    if let RuleAction::Hook { action, args } = &rule.action {
        answer.action = *action;
        match action {
            HookAction::SkipTo | HookAction::RemoveNode => answer.target = args.first().cloned(),
            HookAction::SwapNodes => {
                if let [a, b] = args.as_slice() {
                    answer.swap = Some((a.clone(), b.clone()));
                }
            }
            HookAction::AddNode => answer.add = args.first().cloned().map(AddTask::Insertable),
            HookAction::Terminate => answer.message = rule.because.clone(),
            HookAction::Continue | HookAction::SkipNode => {}
        }
    }
    answer.state_updates = rule.set.clone();
    answer.reason = Some(rule.reason());
    answer
}

/// Policy rules first, then the inner reasoner.
pub struct Rules {
    inner: Arc<dyn Reasoner>,
    /// Parsed rules, by policy text.
    cache: Mutex<HashMap<String, Parsed>>,
}

impl Rules {
    pub fn new(inner: Arc<dyn Reasoner>) -> Self {
        Rules {
            inner,
            cache: Mutex::new(HashMap::new()),
        }
    }

    fn rules(&self, policy: &Policy) -> Parsed {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(policy.text.clone())
            .or_insert_with(|| Arc::new(parse_rules(&policy.text)))
            .clone()
    }

    /// The first rule of `policy` whose condition is TRUE.
    fn decide(
        &self,
        element: &str,
        policy: Option<&Policy>,
        vars: &Variables,
    ) -> Result<Option<Rule>, ReasonError> {
        let Some(policy) = policy else {
            return Ok(None);
        };
        match &*self.rules(policy) {
            Err(errors) => Err(ReasonError::invalid(
                element,
                format!("policy {} has a bad rule: {}", policy.path, errors[0]),
            )),
            Ok(rules) => Ok(rules
                .iter()
                .find(|r| r.condition.eval(vars) == Truth::True)
                .cloned()),
        }
    }
}

impl Reasoner for Rules {
    fn describe(&self) -> String {
        format!("policy rules, then {}", self.inner.describe())
    }

    fn confirm(
        &self,
        req: crate::reason::tools::ConfirmRequest,
    ) -> crate::reason::tools::Confirming<'_> {
        self.inner.confirm(req)
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        self.inner.task(req)
    }

    fn answers_in_advance(&self, req: &TaskRequest) -> bool {
        self.inner.answers_in_advance(req)
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            let rule = self.decide(&req.gateway_id, req.policy.as_ref(), &req.context.variables)?;
            match rule {
                None => self.inner.gateway(req).await,
                Some(rule) => match &rule.action {
                    RuleAction::Take(flows) => Ok(GatewayAnswer {
                        flows: flows.clone(),
                        reason: Some(rule.reason()),
                        decided_by: Decider::Rule,
                    }),
                    RuleAction::Hook { action, .. } => Err(ReasonError::invalid(
                        &req.gateway_id,
                        format!(
                            "the rule on line {} gives hook action `{action}` to a gateway",
                            rule.line
                        ),
                    )),
                },
            }
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            let rule = self.decide(&req.hook_id, req.policy.as_ref(), &req.context.variables)?;
            match rule {
                None => self.inner.hook(req).await,
                Some(rule) => match &rule.action {
                    RuleAction::Hook { .. } => Ok(hook_answer(&rule)),
                    RuleAction::Take(_) => Err(ReasonError::invalid(
                        &req.hook_id,
                        format!(
                            "the rule on line {} takes a flow, but this is a hook",
                            rule.line
                        ),
                    )),
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpmn::GatewayKind;
    use crate::bridge::ControlPointContext;
    use crate::reason::{NoModel, ScriptedReasoner};
    use serde_json::json;

    const POLICY: &str = "# Screening\n\nProse.\n\n```rules\n# exact cases\nwhen ${applicant_id} == \"4321\" then skip_to Activity_131ar38 set rejection_reason = \"regulatory\", flagged = true\n\nwhen ${applicant_name} == \"\" then terminate because \"no name\"\n```\n\n```json\n{\"action\": \"continue\"}\n```\n";

    fn hook(policy: &str, vars: serde_json::Value) -> HookRequest {
        let context = ControlPointContext {
            variables: Arc::new(vars.as_object().cloned().unwrap_or_default()).into(),
            ..Default::default()
        };
        HookRequest {
            hook_id: "h".into(),
            flow_id: "F".into(),
            name: None,
            policy: Some(Policy {
                path: "p.md".into(),
                text: policy.into(),
            }),
            instruction: None,
            permitted: HookAction::ALL.to_vec(),
            allowed_targets: vec![],
            flow_target: None,
            settable: vec![],
            escalation: None,
            insertable_tasks: vec![],
            context,
            calls: Default::default(),
        }
    }

    #[test]
    fn parses_rules_blocks_only() {
        let rules = parse_rules(POLICY).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].line, 7);
        assert_eq!(
            rules[0].action,
            RuleAction::Hook {
                action: HookAction::SkipTo,
                args: vec!["Activity_131ar38".into()]
            }
        );
        assert_eq!(rules[0].set["rejection_reason"], json!("regulatory"));
        assert_eq!(rules[0].set["flagged"], json!(true));
        assert_eq!(rules[1].because.as_deref(), Some("no name"));
        let g =
            parse_rules("```rules\nwhen ${x} > 1 then take F1, F2 because \"big\"\n```\n").unwrap();
        assert_eq!(
            g[0].action,
            RuleAction::Take(vec!["F1".into(), "F2".into()])
        );
        assert!(parse_rules("no rules here").unwrap().is_empty());
    }

    #[test]
    fn bad_rules_are_errors_with_their_line() {
        let text = "# P\n```rules\nwhen ${x} = 1 then continue\nwhen ${x} == 1 then jump\nwhen ${x} == 1 continue\nwhen ${x} == 1 then skip_to\nwhen ${x} == 1 then continue set y = nope\nwhen ${x} == 1 then terminate because nope\nwhen ${x} == 1 then take\nok\n```\n";
        let errors = parse_rules(text).unwrap_err();
        let lines: Vec<usize> = errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7, 8, 9, 10]);
        assert!(errors[0].message.contains("condition"), "{}", errors[0]);
        assert!(parse_rules("```rules\nwhen ${x} then continue\n").is_err());
        // never panics on odd input
        for s in [
            "```rules\nwhen",
            "```rules\nwhen \"then",
            "```rules\nwhen ${x} then set",
            "```rules\nwhen ${x}}} then take ,,\n```",
        ] {
            let _ = parse_rules(s);
        }
    }

    #[tokio::test]
    async fn the_first_true_rule_answers_and_missing_variables_are_skipped() {
        let rules = Rules::new(Arc::new(NoModel));
        // applicant_id missing: rule 1 is UNKNOWN, skipped; rule 2 is TRUE
        let a = rules
            .hook(hook(POLICY, json!({"applicant_name": ""})))
            .await
            .unwrap();
        assert_eq!(a.action, HookAction::Terminate);
        assert_eq!(a.message.as_deref(), Some("no name"));
        assert_eq!(a.decided_by, Decider::Rule);
        let a = rules
            .hook(hook(
                POLICY,
                json!({"applicant_id": "4321", "applicant_name": "A"}),
            ))
            .await
            .unwrap();
        assert_eq!(a.action, HookAction::SkipTo);
        assert_eq!(a.target.as_deref(), Some("Activity_131ar38"));
        assert_eq!(a.state_updates["flagged"], json!(true));
        assert!(a.reason.unwrap().starts_with("rule: when"));
        // nothing decides: the inner reasoner is asked
        let err = rules.hook(hook(POLICY, json!({}))).await.unwrap_err();
        assert!(matches!(err, ReasonError::NoAnswer { .. }), "{err}");
        assert!(rules.describe().starts_with("policy rules, then "));
    }

    #[tokio::test]
    async fn gateways_take_flows_and_fall_through_to_the_inner_reasoner() {
        let doc = json!({"answers": {"G": {"flow": "F9"}}});
        let inner = ScriptedReasoner::from_value(doc, "s").unwrap();
        let rules = Rules::new(Arc::new(inner));
        let policy = "```rules\nwhen ${x} > 1 then take F1\n```\n";
        let req = |x: serde_json::Value| {
            let context = ControlPointContext {
                variables: Arc::new(json!({ "x": x }).as_object().cloned().unwrap()).into(),
                ..Default::default()
            };
            GatewayRequest {
                gateway_id: "G".into(),
                name: None,
                kind: GatewayKind::Exclusive,
                policy: Some(Policy {
                    path: "g.md".into(),
                    text: policy.into(),
                }),
                condition: None,
                condition_truth: None,
                flows: vec![],
                evaluations: vec![],
                multiple: false,
                escalation: None,
                context,
                calls: Default::default(),
                approvers: None,
            }
        };
        let a = rules.gateway(req(json!(2))).await.unwrap();
        assert_eq!(
            (a.flows, a.decided_by),
            (vec!["F1".to_string()], Decider::Rule)
        );
        let a = rules.gateway(req(json!(0))).await.unwrap();
        assert_eq!(
            (a.flows, a.decided_by),
            (vec!["F9".to_string()], Decider::Scripted)
        );
    }
}
