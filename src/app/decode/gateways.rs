//! The `gateways` section and the outgoing flows of a gateway.

use super::super::config::*;
use super::super::yaml::Node;
use super::reader::Cx;

pub(crate) const GATEWAY_KEYS: &[&str] = &[
    "mode",
    "condition",
    "policy",
    "flows",
    "human_consultation",
    "agent_type",
    "tools",
    "llm",
    "on_failure",
    "deadline",
    "on_timeout",
    "consequential",
    "approval",
];
pub(crate) const APPROVAL_KEYS: &[&str] = &["timeout", "approvers", "variable"];
pub(crate) const GATEWAY_FLOW_KEYS: &[&str] = &["decision", "condition"];

impl Cx<'_> {
    pub(super) fn gateways(&mut self, node: &Node) -> Vec<GatewayConfig> {
        self.named_entries(
            node,
            "`gateways`",
            "a mapping of gateway ids to settings",
            "a gateway id",
            |cx, id, v| Some(cx.gateway(id, v)),
        )
    }

    fn gateway(&mut self, id: Located<String>, node: &Node) -> GatewayConfig {
        let what = format!("gateway `{}`", id.value);
        let f = self.fields(node, &what, GATEWAY_KEYS);
        if let Some(span) = f.key_span("tools") {
            self.warn(
                "config::ignored",
                span,
                format!("`tools` of {what} is not used"),
                "ignored",
                Some(
                    "gateways decide with their condition, policy and `human_consultation`".into(),
                ),
            );
        }
        let mode_written = self.opt_string(&f, "mode", &what);
        let mode = match &mode_written {
            None => GatewayMode::Native,
            Some(m) => match m.value.as_str() {
                "native" => GatewayMode::Native,
                "decision_agent" => GatewayMode::DecisionAgent,
                _ => {
                    self.unknown_mode("gateway", m, ["decision_agent", "native"]);
                    GatewayMode::Native
                }
            },
        };
        let flows = match f.get("flows") {
            None => Vec::new(),
            Some(n) => self.named_entries(
                n,
                &format!("`flows` of {what}"),
                "a mapping of flow ids",
                "a flow id",
                |cx, fid, v| {
                    let fwhat = format!("flow `{}` of {what}", fid.value);
                    let ff = cx.fields(v, &fwhat, GATEWAY_FLOW_KEYS);
                    Some(GatewayFlow {
                        decision: cx.opt_string(&ff, "decision", &fwhat),
                        condition: cx.opt_string(&ff, "condition", &fwhat),
                        id: fid,
                    })
                },
            ),
        };
        GatewayConfig {
            mode,
            condition: self.opt_string(&f, "condition", &what),
            policy: self.opt_string(&f, "policy", &what),
            flows,
            human_consultation: self.opt_string(&f, "human_consultation", &what),
            agent_type: self.opt_string(&f, "agent_type", &what),
            llm: f.get("llm").map(|n| self.element_llm(n, &what)),
            on_failure: self.on_failure(
                &f,
                &what,
                &[OnFailure::Ask, OnFailure::Fail, OnFailure::Default],
            ),
            deadline: self.deadline(&f, &what),
            consequential: self
                .opt_bool(&f, "consequential", &what)
                .is_some_and(|b| b.value),
            approval: f.get("approval").map(|n| self.approval(n, &what)),
            span: node.span,
            id,
        }
    }

    /// `approval: {timeout, approvers, variable}` (or `approval: true`, every default).
    fn approval(&mut self, node: &Node, owner: &str) -> Approval {
        if matches!(node.value, super::super::yaml::Value::Bool(true)) {
            return Approval {
                span: node.span,
                ..Approval::default()
            };
        }
        let what = format!("the approval of {owner}");
        let f = self.fields(node, &what, APPROVAL_KEYS);
        let approvers = f
            .get("approvers")
            .map(|n| self.string_list(n, "`approvers`"))
            .unwrap_or_default();
        let variable = self.opt_string(&f, "variable", &what);
        if let Some(v) = &variable
            && !(v
                .value
                .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && v.value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            self.error(
                "config::value",
                v.span,
                format!("`variable` of {what} is not a variable name"),
                "not a name",
                Some("e.g. `variable: approval_status`".into()),
            );
        }
        Approval {
            timeout: self.opt_duration(&f, "timeout", &what),
            approvers,
            variable,
            span: node.span,
        }
    }
}
