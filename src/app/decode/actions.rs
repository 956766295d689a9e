//! Hook actions: their names, the action of a hook (with its parameter), the tasks a hook
//! may insert, and `action_permissions`.

use crate::source::Span;

use super::super::config::*;
use super::super::yaml::{Node, Value};
use super::reader::{Cx, did_you_mean_or_list};

pub(crate) const TASK_SPEC_KEYS: &[&str] = &["id", "name", "instruction", "agent"];
pub(crate) const PERMISSION_KEYS: &[&str] = &[
    "permitted_actions",
    "prohibited_actions",
    "on_denied",
    "on_untrusted",
];

impl Cx<'_> {
    fn hook_action(&mut self, text: &str, span: Span, what: &str) -> Option<HookAction> {
        match text.parse::<HookAction>() {
            Ok(a) => Some(a),
            Err(()) => {
                let names: Vec<_> = HookAction::names().collect();
                let help = did_you_mean_or_list(text, &names, 7, "the hook actions");
                self.error(
                    "config::unknown_action",
                    span,
                    format!("{what}: `{text}` is not a hook action"),
                    "unknown action",
                    Some(help),
                );
                None
            }
        }
    }

    pub(super) fn action_spec(&mut self, node: &Node, owner: &str) -> Option<Located<ActionSpec>> {
        let what = format!("the action of {owner}");
        match &node.value {
            Value::Str { text, .. } => {
                let action = self.hook_action(text, node.span, &what)?;
                let spec = match action {
                    HookAction::Continue => ActionSpec::Continue,
                    HookAction::SkipNode => ActionSpec::SkipNode,
                    HookAction::Terminate => ActionSpec::Terminate(None),
                    needs_param => {
                        let form = match needs_param {
                            HookAction::SkipTo => "{skip_to: <node id>}",
                            HookAction::SwapNodes => "{swap_nodes: [<node a>, <node b>]}",
                            HookAction::RemoveNode => "{remove_node: <node id>}",
                            _ => "{add_node: {id: <new task id>, name: ..., instruction: ...}}",
                        };
                        self.error(
                            "config::action_parameter",
                            node.span,
                            format!("{what}: a static `{needs_param}` needs its target"),
                            "target missing",
                            Some(format!("write `action: {form}`")),
                        );
                        return None;
                    }
                };
                Some(Located::new(spec, node.span))
            }
            Value::Map(entries) if entries.len() == 1 => {
                let (key, param) = &entries[0];
                let name = key.as_str().unwrap_or_default();
                let action = self.hook_action(name, key.span, &what)?;
                let spec = match action {
                    HookAction::Continue => ActionSpec::Continue,
                    HookAction::SkipNode => ActionSpec::SkipNode,
                    HookAction::Terminate => {
                        ActionSpec::Terminate(param.scalar_text(self.file.text()))
                    }
                    HookAction::SkipTo => {
                        ActionSpec::SkipTo(self.string(param, "the `skip_to` target")?)
                    }
                    HookAction::RemoveNode => {
                        ActionSpec::RemoveNode(self.string(param, "the `remove_node` target")?)
                    }
                    HookAction::SwapNodes => {
                        let nodes = self.string_list(param, "`swap_nodes`");
                        match <[Located<String>; 2]>::try_from(nodes) {
                            Ok([a, b]) => ActionSpec::SwapNodes(a, b),
                            Err(_) => {
                                self.error(
                                    "config::action_parameter",
                                    param.span,
                                    format!("{what}: `swap_nodes` takes exactly two node ids"),
                                    "expected [<node a>, <node b>]",
                                    None,
                                );
                                return None;
                            }
                        }
                    }
                    HookAction::AddNode => ActionSpec::AddNode(self.task_spec(param, owner)?),
                };
                Some(Located::new(spec, node.span))
            }
            _ => {
                self.type_error(
                    node,
                    &what,
                    "an action name or a one-key mapping such as `{skip_to: <node id>}`",
                );
                None
            }
        }
    }

    pub(super) fn task_spec(&mut self, node: &Node, owner: &str) -> Option<TaskSpec> {
        let what = format!("a task to insert ({owner})");
        let f = self.fields(node, &what, TASK_SPEC_KEYS);
        let Some(id) = self.opt_string(&f, "id", &what) else {
            self.error(
                "config::missing_key",
                node.span,
                format!("{what} has no `id`"),
                "the new task needs an id",
                None,
            );
            return None;
        };
        let spec = TaskSpec {
            name: self.opt_string(&f, "name", &what),
            instruction: self.opt_string(&f, "instruction", &what),
            agent: self.opt_string(&f, "agent", &what),
            span: node.span,
            id,
        };
        if spec.instruction.is_none() && spec.agent.is_none() {
            self.error(
                "config::missing_key",
                node.span,
                format!("{what} has neither `instruction` nor `agent`"),
                "what should the new task do?",
                None,
            );
        }
        Some(spec)
    }

    pub(super) fn permissions(&mut self, node: &Node) -> Permissions {
        let what = "`action_permissions`";
        let f = self.fields(node, what, PERMISSION_KEYS);
        let list = |cx: &mut Self, key: &str| -> Vec<Located<HookAction>> {
            let Some(n) = f.get(key) else {
                return Vec::new();
            };
            let names = cx.string_list(n, &format!("`{key}`"));
            names
                .into_iter()
                .filter_map(|name| {
                    if name.value == "request_user_input" {
                        cx.warn(
                            "config::legacy",
                            name.span,
                            "`request_user_input` is not a hook action; it is ignored".into(),
                            "not an action",
                            Some(
                                "the original project listed it but never used it; remove it"
                                    .into(),
                            ),
                        );
                        return None;
                    }
                    let action = cx.hook_action(&name.value, name.span, &format!("`{key}`"))?;
                    Some(Located::new(action, name.span))
                })
                .collect()
        };
        let permitted = list(self, "permitted_actions");
        let prohibited = list(self, "prohibited_actions");
        let on_denied = match self.opt_string(&f, "on_denied", what) {
            None => OnDenied::Continue,
            Some(v) if v.value == "continue" => OnDenied::Continue,
            Some(v) if v.value == "fail" => OnDenied::Fail,
            Some(v) => {
                self.error(
                    "config::type",
                    v.span,
                    format!(
                        "`on_denied` must be `continue` or `fail`, not `{}`",
                        v.value
                    ),
                    "unknown value",
                    None,
                );
                OnDenied::Continue
            }
        };
        let on_untrusted = match self.opt_string(&f, "on_untrusted", what) {
            None => OnUntrusted::Confirm,
            Some(v) => match [OnUntrusted::Confirm, OnUntrusted::Deny, OnUntrusted::Allow]
                .into_iter()
                .find(|o| o.as_str() == v.value)
            {
                Some(o) => o,
                None => {
                    self.error(
                        "config::type",
                        v.span,
                        format!(
                            "`on_untrusted` must be `confirm`, `deny` or `allow`, not `{}`",
                            v.value
                        ),
                        "unknown value",
                        None,
                    );
                    OnUntrusted::Confirm
                }
            },
        };
        Permissions {
            permitted,
            prohibited,
            on_denied,
            on_untrusted,
            span: Some(node.span),
        }
    }
}
