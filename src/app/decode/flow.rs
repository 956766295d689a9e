//! The `flow`, `workflow_engine`, `variables` and `llm` sections.

use super::super::config::*;
use super::super::yaml::{Node, Value};
use super::reader::{Cx, did_you_mean_or_list};

const FLOW_KEYS: &[&str] = &[
    "name",
    "id",
    "version",
    "bpmn_file",
    "description",
    "agent_type",
];
const ENGINE_KEYS: &[&str] = &[
    "type",
    "url",
    "username",
    "password",
    "password_env",
    "deploy",
    "process_definition_key",
    "process_id",
    "callback_host",
    "callback_port",
];
const LLM_KEYS: &[&str] = &[
    "provider",
    "model",
    "temperature",
    "base_url",
    "api_key_env",
    "api_key",
];

impl Cx<'_> {
    pub(super) fn flow(&mut self, node: &Node) -> FlowSection {
        let what = "`flow`";
        let f = self.fields(node, what, FLOW_KEYS);
        let section = FlowSection {
            name: self.opt_string(&f, "name", what),
            id: self.opt_string(&f, "id", what),
            version: self.opt_string(&f, "version", what),
            bpmn_file: self.opt_string(&f, "bpmn_file", what),
            description: self.opt_string(&f, "description", what),
            agent_type: self.opt_string(&f, "agent_type", what),
            span: node.span,
        };
        if section.id.is_none() && section.name.is_none() {
            self.warn(
                "config::missing_key",
                node.span,
                "`flow` has neither `id` nor `name`; the process key defaults to `process`".into(),
                "no process key",
                Some("add `id: <process key>`".into()),
            );
        }
        if section.bpmn_file.is_none() {
            self.error(
                "config::missing_key",
                node.span,
                "`flow` has no `bpmn_file`".into(),
                "expected `bpmn_file: <model>.bpmn`",
                Some("name the BPMN model, relative to this file".into()),
            );
        }
        section
    }

    pub(super) fn engine(&mut self, node: &Node) -> EngineConfig {
        let what = "`workflow_engine`";
        let f = self.fields(node, what, ENGINE_KEYS);
        let kind_written = self.opt_string(&f, "type", what);
        let kind = match kind_written.as_ref().map(|k| k.value.as_str()) {
            None | Some("native") | Some("langgraph") => EngineKind::Native,
            Some("flowable") => EngineKind::Flowable,
            Some("kogito") => EngineKind::Kogito,
            Some("mcp") => EngineKind::Mcp,
            Some(other) => {
                let help = did_you_mean_or_list(other, &EngineKind::NAMES, 5, "the engines");
                let span = kind_written.as_ref().map_or(node.span, |k| k.span);
                self.error(
                    "config::unknown_engine",
                    span,
                    format!("unknown workflow engine `{other}`"),
                    "unknown engine",
                    Some(help),
                );
                EngineKind::Native
            }
        };
        let port = f.get("callback_port").and_then(|n| match n.value {
            Value::Int(p) if (1..=65535).contains(&p) => Some(Located::new(p as u16, n.span)),
            _ => {
                self.type_error(n, "`callback_port`", "a port number (1-65535)");
                None
            }
        });
        let password = self.opt_secret(&f, "password", what, "a password");
        EngineConfig {
            kind,
            kind_written,
            url: self.opt_string(&f, "url", what),
            username: self.opt_string(&f, "username", what),
            password,
            password_env: self.opt_string(&f, "password_env", what),
            deploy: self.opt_bool(&f, "deploy", what),
            process_definition_key: self.opt_string(&f, "process_definition_key", what),
            process_id: self.opt_string(&f, "process_id", what),
            callback_host: self.opt_string(&f, "callback_host", what),
            callback_port: port,
            span: Some(node.span),
        }
    }

    pub(super) fn variables(&mut self, node: &Node) -> Vec<Variable> {
        self.named_entries(
            node,
            "`variables`",
            "a mapping of names to default values",
            "a variable name",
            |_, name, v| {
                Some(Variable {
                    name,
                    default: v.to_json(),
                })
            },
        )
    }

    pub(super) fn llm(&mut self, node: &Node) -> LlmConfig {
        let what = "`llm`";
        let f = self.fields(node, what, LLM_KEYS);
        let api_key = self.opt_secret(&f, "api_key", what, "an API key");
        LlmConfig {
            provider: self.opt_string(&f, "provider", what),
            model: self.opt_string(&f, "model", what),
            temperature: self.opt_number(&f, "temperature", what),
            base_url: self.opt_string(&f, "base_url", what),
            api_key_env: self.opt_string(&f, "api_key_env", what),
            api_key,
            span: node.span,
        }
    }
}
