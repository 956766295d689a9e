//! The `hooks` section: where a hook sits, its type and what it may do.

use super::super::config::*;
use super::super::yaml::{Node, Value};
use super::reader::Cx;

pub(crate) const HOOK_KEYS: &[&str] = &[
    "id",
    "type",
    "location",
    "policy",
    "action",
    "message",
    "condition",
    "enabled",
    "instruction",
    "human_consultation",
    "allowed_targets",
    "insertable_tasks",
    "may_set",
    "llm",
    "on_failure",
    "deadline",
    "on_timeout",
];

impl Cx<'_> {
    pub(super) fn hooks(&mut self, node: &Node) -> Vec<HookConfig> {
        let items = self.seq(node, "`hooks`");
        let mut hooks = Vec::with_capacity(items.len());
        hooks.extend(items.iter().filter_map(|item| self.hook(item)));
        hooks
    }

    fn hook(&mut self, node: &Node) -> Option<HookConfig> {
        let f = self.fields(node, "a hook", HOOK_KEYS);
        let location = self.opt_string(&f, "location", "a hook");
        let id = self
            .opt_string(&f, "id", "a hook")
            .or_else(|| location.clone());
        let Some(id) = id else {
            self.error(
                "config::missing_key",
                node.span,
                "hook has neither `id` nor `location`".into(),
                "which sequence flow does this hook guard?",
                Some("add `location: <sequenceFlow id>`".into()),
            );
            return None;
        };
        let what = format!("hook `{}`", id.value);
        if location.is_none() {
            self.error(
                "config::missing_key",
                node.span,
                format!("{what} has no `location`"),
                "which sequence flow does this hook guard?",
                Some("add `location: <sequenceFlow id>`; hooks sit on sequence flows".into()),
            );
        }
        let kind = self.opt_string(&f, "type", &what);
        if let Some(k) = &kind {
            match k.value.as_str() {
                "edge" => {}
                "pre_edge" => self.warn(
                    "config::legacy",
                    k.span,
                    format!("{what}: `type: pre_edge` is a legacy spelling; it is read as `edge`"),
                    "legacy type",
                    Some(
                        "write `type: edge` (the original project silently dropped such hooks)"
                            .into(),
                    ),
                ),
                other => self.error(
                    "config::unknown_hook_type",
                    k.span,
                    format!("{what} has unknown type `{other}`"),
                    "unknown type",
                    Some("hooks are `type: edge` (they sit on a sequence flow)".into()),
                ),
            }
        }
        let action = f.get("action").and_then(|n| self.action_spec(n, &what));
        let enabled = self.opt_bool(&f, "enabled", &what).is_none_or(|b| b.value);
        // `allowed_targets: any` opts in to offering every node a target may be.
        let (allowed_targets, any_target) = match f.get("allowed_targets") {
            Some(n) if matches!(&n.value, Value::Str { text, .. } if text == "any") => {
                (Vec::new(), Some(n.span))
            }
            Some(n) => (self.string_list(n, "`allowed_targets`"), None),
            None => (Vec::new(), None),
        };
        let insertable_tasks = f
            .get("insertable_tasks")
            .map(|n| {
                let items = self.seq(n, "`insertable_tasks`");
                items
                    .iter()
                    .filter_map(|i| self.task_spec(i, &what))
                    .collect()
            })
            .unwrap_or_default();
        Some(HookConfig {
            kind,
            location,
            policy: self.opt_string(&f, "policy", &what),
            action,
            message: self.opt_string(&f, "message", &what),
            condition: self.opt_string(&f, "condition", &what),
            enabled,
            instruction: self.opt_string(&f, "instruction", &what),
            human_consultation: self.opt_string(&f, "human_consultation", &what),
            targets_declared: f.get("allowed_targets").is_some(),
            allowed_targets,
            any_target,
            may_set: f
                .get("may_set")
                .map(|n| self.string_list(n, "`may_set`"))
                .unwrap_or_default(),
            insertable_tasks,
            llm: f.get("llm").map(|n| self.element_llm(n, &what)),
            on_failure: self.on_failure(
                &f,
                &what,
                &[OnFailure::Ask, OnFailure::Continue, OnFailure::Fail],
            ),
            deadline: self.deadline(&f, &what),
            span: node.span,
            id,
        })
    }
}
