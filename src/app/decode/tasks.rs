//! The `tasks` section and the agent of a task.

use super::super::config::*;
use super::super::yaml::Node;
use super::reader::Cx;

pub(crate) const TASK_KEYS: &[&str] = &[
    "id",
    "mode",
    "agent",
    "instruction",
    "policy",
    "tool",
    "input_mapping",
    "output_mapping",
    "llm",
    "on_failure",
    "deadline",
    "on_timeout",
    "raises",
    "untrusted_outputs",
];
pub(crate) const AGENT_KEYS: &[&str] = &[
    "name",
    "system_instruction",
    "policy",
    "agent_type",
    "tools",
    "max_tool_calls",
    "pre_execute",
    "post_execute",
    "type",
    "recipe",
    "command",
    "timeout",
];

impl Cx<'_> {
    pub(super) fn tasks(&mut self, node: &Node) -> Vec<TaskConfig> {
        let items = self.seq(node, "`tasks`");
        // Sized up front: a large config's list of tasks is not copied as it grows.
        let mut tasks = Vec::with_capacity(items.len());
        tasks.extend(items.iter().filter_map(|item| self.task(item)));
        tasks
    }

    fn task(&mut self, node: &Node) -> Option<TaskConfig> {
        let f = self.fields(node, "a task", TASK_KEYS);
        let Some(id) = self.opt_string(&f, "id", "a task") else {
            self.error(
                "config::missing_key",
                node.span,
                "task entry has no `id`".into(),
                "which BPMN task is this?",
                Some("add `id: <BPMN task id>`".into()),
            );
            return None;
        };
        let what = format!("task `{}`", id.value);
        let agent = f.get("agent").map(|n| self.agent(n, &what));
        let mode_written = self.opt_string(&f, "mode", &what);
        let mode = match &mode_written {
            None if agent.is_some() => TaskMode::TaskAgent,
            None => TaskMode::Native,
            Some(m) => match m.value.as_str() {
                "task_agent" => TaskMode::TaskAgent,
                "native" => TaskMode::Native,
                "tool" => {
                    self.warn(
                        "config::legacy",
                        m.span,
                        "`mode: tool` is a legacy spelling; it is read as `native`".into(),
                        "legacy mode",
                        Some("write `mode: native`".into()),
                    );
                    TaskMode::Native
                }
                _ => {
                    self.unknown_mode("task", m, ["task_agent", "native"]);
                    TaskMode::Native
                }
            },
        };
        let legacy_instruction = self.opt_string(&f, "instruction", &what);
        let legacy_policy = self.opt_string(&f, "policy", &what);
        let instruction = agent
            .as_ref()
            .and_then(|a| a.system_instruction.clone())
            .or(legacy_instruction);
        let policy = agent
            .as_ref()
            .and_then(|a| a.policy.clone())
            .or(legacy_policy);
        let input_mapping = f
            .get("input_mapping")
            .map(|n| self.string_map(n, || format!("`input_mapping` of {what}")))
            .unwrap_or_default();
        let output_mapping = f
            .get("output_mapping")
            .map(|n| self.string_map(n, || format!("`output_mapping` of {what}")))
            .unwrap_or_default();
        let raises = f
            .get("raises")
            .map(|n| self.string_list(n, &format!("`raises` of {what}")))
            .unwrap_or_default();
        for code in &raises {
            if !crate::vocab::error_code::is_valid(&code.value) {
                self.error(
                    "config::type",
                    code.span,
                    format!("`{}` is not a BPMN error code", code.value),
                    "an error code",
                    Some("use letters, digits, `_`, `-`, `.` and `:` (e.g. PAYMENT_FAILED)".into()),
                );
            }
        }
        Some(TaskConfig {
            tool: self.opt_string(&f, "tool", &what),
            raises,
            id,
            mode,
            mode_written,
            agent,
            instruction,
            policy,
            input_mapping,
            output_mapping,
            llm: f.get("llm").map(|n| self.element_llm(n, &what)),
            on_failure: self.on_failure(&f, &what, &[OnFailure::Fail]),
            deadline: self.deadline(&f, &what),
            untrusted_outputs: self
                .opt_bool(&f, "untrusted_outputs", &what)
                .is_some_and(|b| b.value),
            span: node.span,
        })
    }

    fn agent(&mut self, node: &Node, owner: &str) -> AgentConfig {
        let what = format!("the agent of {owner}");
        let f = self.fields(node, &what, AGENT_KEYS);
        let tools = f
            .get("tools")
            .map(|n| self.string_list(n, "`tools`"))
            .unwrap_or_default();
        let command = self.command_agent(&f, node, &what);
        AgentConfig {
            command,
            name: self.opt_string(&f, "name", &what),
            system_instruction: self.opt_string(&f, "system_instruction", &what),
            policy: self.opt_string(&f, "policy", &what),
            agent_type: self.opt_string(&f, "agent_type", &what),
            tools,
            max_tool_calls: self.opt_count(&f, "max_tool_calls", &what, 1),
            pre_execute: f
                .get("pre_execute")
                .map(|n| self.step_rules(n, &format!("`pre_execute` of {what}")))
                .unwrap_or_default(),
            post_execute: f
                .get("post_execute")
                .map(|n| self.step_rules(n, &format!("`post_execute` of {what}")))
                .unwrap_or_default(),
            span: node.span,
        }
    }

    /// `type: command` with its `recipe`, `command` and `timeout`.
    fn command_agent(
        &mut self,
        f: &super::reader::Fields,
        node: &Node,
        what: &str,
    ) -> Option<CommandAgent> {
        let kind = self.opt_string(f, "type", what);
        let recipe = self.opt_string(f, "recipe", what);
        let command = f
            .get("command")
            .map(|n| self.string_list(n, "`command`"))
            .unwrap_or_default();
        let timeout = self.opt_duration(f, "timeout", what);
        match kind.as_ref().map(|k| k.value.as_str()) {
            Some("command") => {}
            Some(other) => {
                let span = kind.as_ref().map_or(node.span, |k| k.span);
                self.error(
                    "config::value",
                    span,
                    format!("unknown agent type `{other}` of {what}"),
                    "unknown type",
                    Some(
                        "`type: command` runs an external CLI; leave `type` out for a model".into(),
                    ),
                );
                return None;
            }
            None => {
                for key in ["recipe", "command", "timeout"] {
                    if let Some(span) = f.key_span(key) {
                        self.error(
                            "config::value",
                            span,
                            format!("`{key}` of {what} needs `type: command`"),
                            "not used",
                            Some("add `type: command`".into()),
                        );
                    }
                }
                return None;
            }
        }
        if recipe.is_none() {
            self.error(
                "config::missing_key",
                node.span,
                format!("{what} runs a command but names no `recipe`"),
                "which recipe?",
                Some("add `recipe: ../recipes/<name>.yaml` (a Goose recipe)".into()),
            );
        }
        Some(CommandAgent {
            recipe,
            command,
            timeout,
            span: node.span,
        })
    }
}
