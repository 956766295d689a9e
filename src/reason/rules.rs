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

use serde_json::Value;

use crate::bridge::{BoxFuture, Variables};
use crate::expr::{self, Expr, Truth};
use crate::vocab::{Decider, HookAction};

use super::{
    AddTask, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, Policy, ReasonError, Reasoner,
    TaskAnswer, TaskRequest,
};

/// What a rule decides.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleAction {
    /// A hook action and its arguments (targets for skip_to / remove_node / swap_nodes,
    /// the insertable task id for add_node).
    Hook {
        action: HookAction,
        args: Vec<String>,
    },
    /// A gateway: the flows to take.
    Take(Vec<String>),
}

/// One rule of a policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The line in the policy file (1-based).
    pub line: usize,
    /// The rule as written (trimmed).
    pub text: String,
    pub condition: Expr,
    pub action: RuleAction,
    pub set: Variables,
    pub because: Option<String>,
}

impl Rule {
    /// The nodes a hook rule names in the model (skip_to, remove_node, swap_nodes).
    pub fn node_targets(&self) -> &[String] {
        match &self.action {
            RuleAction::Hook {
                action: HookAction::SkipTo | HookAction::RemoveNode | HookAction::SwapNodes,
                args,
            } => args,
            _ => &[],
        }
    }

    fn hook_answer(&self) -> HookAnswer {
        let mut answer = HookAnswer::action(HookAction::Continue, Decider::Rule);
        if let RuleAction::Hook { action, args } = &self.action {
            answer.action = *action;
            match action {
                HookAction::SkipTo | HookAction::RemoveNode => {
                    answer.target = args.first().cloned()
                }
                HookAction::SwapNodes => {
                    if let [a, b] = args.as_slice() {
                        answer.swap = Some((a.clone(), b.clone()));
                    }
                }
                HookAction::AddNode => answer.add = args.first().cloned().map(AddTask::Insertable),
                HookAction::Terminate => answer.message = self.because.clone(),
                HookAction::Continue | HookAction::SkipNode => {}
            }
        }
        answer.state_updates = self.set.clone();
        answer.reason = Some(self.reason());
        answer
    }

    fn reason(&self) -> String {
        self.because
            .clone()
            .unwrap_or_else(|| format!("rule: {}", self.text))
    }
}

/// A rule that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct RuleError {
    /// The line in the policy file (1-based).
    pub line: usize,
    pub message: String,
}

/// The rules of a policy, in order; every rule that could not be read is an error.
pub fn parse_rules(policy_text: &str) -> Result<Vec<Rule>, Vec<RuleError>> {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    let mut fence: Option<(char, usize, bool)> = None; // (char, length, is a rules block)
    for (i, raw) in policy_text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if let Some((c, n, is_rules)) = fence {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= n && trimmed[run * c.len_utf8()..].trim().is_empty() {
                fence = None;
                continue;
            }
            if !is_rules || trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            match parse_rule(trimmed, line) {
                Ok(r) => rules.push(r),
                Err(message) => errors.push(RuleError { line, message }),
            }
            continue;
        }
        for c in ['`', '~'] {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= 3 {
                let info = trimmed[run..].split_whitespace().next().unwrap_or("");
                fence = Some((c, run, info == "rules"));
            }
        }
    }
    if let Some((_, _, true)) = fence {
        errors.push(RuleError {
            line: policy_text.lines().count().max(1),
            message: "the `rules` block is not closed".into(),
        });
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}

/// The byte offset of the first `keyword` standing as a word outside quotes and brackets.
fn find_keyword(s: &str, keyword: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut quote: Option<u8> = None;
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == q {
                quote = None;
            }
        } else {
            match b {
                b'"' | b'\'' => quote = Some(b),
                b'[' | b'{' | b'(' => depth += 1,
                b']' | b'}' | b')' => depth -= 1,
                _ if depth <= 0
                    && s[i..].starts_with(keyword)
                    && (i == 0 || bytes[i - 1].is_ascii_whitespace())
                    && bytes
                        .get(i + keyword.len())
                        .is_none_or(|c| c.is_ascii_whitespace()) =>
                {
                    return Some(i);
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// Split at top-level commas (outside quotes and brackets).
fn split_commas(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth <= 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn parse_rule(text: &str, line: usize) -> Result<Rule, String> {
    let rest = text
        .strip_prefix("when")
        .filter(|r| r.starts_with(char::is_whitespace))
        .ok_or("a rule starts with `when <condition> then ...`")?;
    let then = find_keyword(rest, "then").ok_or("missing `then <action>` after the condition")?;
    let cond_text = rest[..then].trim();
    if cond_text.is_empty() {
        return Err("missing the condition after `when`".into());
    }
    let condition = expr::parse(cond_text).map_err(|e| format!("bad condition: {e}"))?;
    let mut tail = rest[then + "then".len()..].trim();

    let mut because = None;
    if let Some(at) = find_keyword(tail, "because") {
        let quoted = tail[at + "because".len()..].trim();
        let s: String = serde_json::from_str(quoted)
            .map_err(|_| "`because` takes one double-quoted text: because \"...\"")?;
        because = Some(s);
        tail = tail[..at].trim();
    }
    let mut set = Variables::new();
    if let Some(at) = find_keyword(tail, "set") {
        let assignments = tail[at + "set".len()..].trim();
        if assignments.is_empty() {
            return Err("`set` needs `<var> = <json value>`".into());
        }
        for part in split_commas(assignments) {
            let (var, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{}`: write `<var> = <json value>`", part.trim()))?;
            let var = var.trim();
            if var.is_empty()
                || !var
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!("`{var}` is not a variable name"));
            }
            let value: Value = serde_json::from_str(value.trim()).map_err(|_| {
                format!(
                    "the value of `{var}` is not JSON: `{}` (quote texts: \"...\")",
                    value.trim()
                )
            })?;
            set.insert(var.to_string(), value);
        }
        tail = tail[..at].trim();
    }

    let mut words = tail.split_whitespace();
    let name = words.next().ok_or("missing the action after `then`")?;
    let args_text = tail[name.len()..].trim();
    let action = if name == "take" {
        let flows: Vec<String> = args_text
            .split(',')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        if flows.is_empty() || flows.iter().any(|f| f.contains(char::is_whitespace)) {
            return Err("`take` names flow ids separated by `,`".into());
        }
        if !set.is_empty() {
            return Err("a gateway rule cannot `set` variables".into());
        }
        RuleAction::Take(flows)
    } else {
        let action: HookAction = name.parse().map_err(|()| {
            format!(
                "`{name}` is not an action (`take` or one of {})",
                HookAction::names().collect::<Vec<_>>().join(", ")
            )
        })?;
        let args: Vec<String> = words.map(str::to_string).collect();
        let wanted = match action {
            HookAction::SkipTo | HookAction::RemoveNode | HookAction::AddNode => 1,
            HookAction::SwapNodes => 2,
            _ => 0,
        };
        if args.len() != wanted {
            return Err(format!(
                "`{action}` takes {wanted} node id(s), not {}",
                args.len()
            ));
        }
        RuleAction::Hook { action, args }
    };
    Ok(Rule {
        line,
        text: text.to_string(),
        condition,
        action,
        set,
        because,
    })
}

type Parsed = Arc<Result<Vec<Rule>, Vec<RuleError>>>;

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
                    RuleAction::Hook { .. } => Ok(rule.hook_answer()),
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
