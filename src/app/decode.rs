//! Typed decoding of a flow config from its located YAML tree. Every problem becomes a
//! [`Diagnostic`] pointing at the key or value concerned; decoding goes on after a problem
//! so that one run of `validate` reports all of them.

use crate::diag::{Diagnostic, did_you_mean, name_list};
use crate::source::{SourceFile, Span};

use super::config::*;
use super::yaml::{self, Node, Value};

const ROOT_KEYS: &[&str] = &[
    "flow",
    "workflow_engine",
    "variables",
    "llm",
    "tasks",
    "gateways",
    "hooks",
    "action_permissions",
    "remote_agents",
];
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
const TASK_KEYS: &[&str] = &[
    "id",
    "mode",
    "agent",
    "instruction",
    "policy",
    "tool",
    "input_mapping",
    "output_mapping",
];
const AGENT_KEYS: &[&str] = &[
    "name",
    "system_instruction",
    "policy",
    "agent_type",
    "tools",
];
const GATEWAY_KEYS: &[&str] = &[
    "mode",
    "condition",
    "policy",
    "flows",
    "human_consultation",
    "agent_type",
    "tools",
];
const GATEWAY_FLOW_KEYS: &[&str] = &["decision", "condition"];
const HOOK_KEYS: &[&str] = &[
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
];
const TASK_SPEC_KEYS: &[&str] = &["id", "name", "instruction", "agent"];
const PERMISSION_KEYS: &[&str] = &["permitted_actions", "prohibited_actions", "on_denied"];
const REMOTE_AGENT_KEYS: &[&str] = &["url", "protocol", "timeout", "auth"];

/// Keys people write that mean something else in this schema.
const KNOWN_MISTAKES: &[(&str, &str)] = &[
    (
        "process_variables",
        "the initial variables go under `variables:`",
    ),
    (
        "engine",
        "the engine is configured under `workflow_engine:`",
    ),
    (
        "permissions",
        "hook permissions go under `action_permissions:`",
    ),
    ("permitted", "write `permitted_actions:`"),
    ("prohibited", "write `prohibited_actions:`"),
];

/// Decode a flow config. Returns `None` only when the file is not a YAML mapping at all.
pub fn decode(source: &SourceFile) -> (Option<FlowConfig>, Vec<Diagnostic>) {
    let mut cx = Cx {
        file: source,
        diags: Vec::new(),
    };
    let root = match yaml::parse(source.text()) {
        Ok(root) => root,
        Err(e) => {
            let mut d = Diagnostic::error("config::yaml", format!("invalid YAML: {}", e.message))
                .at(source, e.span, "here".to_string());
            if let Some(first) = e.first {
                d = d.also(first, "first defined here");
            }
            return (None, vec![d]);
        }
    };
    let config = cx.root(&root);
    (config, cx.diags)
}

/// Parse YAML for another purpose (e.g. a supervisor file), reporting syntax errors.
pub fn parse_yaml(source: &SourceFile) -> Result<Node, Box<Diagnostic>> {
    yaml::parse(source.text()).map_err(|e| {
        Box::new(
            Diagnostic::error("config::yaml", format!("invalid YAML: {}", e.message)).at(
                source,
                e.span,
                "here".to_string(),
            ),
        )
    })
}

struct Cx<'f> {
    file: &'f SourceFile,
    diags: Vec<Diagnostic>,
}

/// The entries of a mapping, with null values treated as absent.
struct Fields<'n> {
    entries: &'n [(Node, Node)],
}

impl<'n> Fields<'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
            .filter(|v| !v.is_null())
    }

    fn key_span(&self, key: &str) -> Option<Span> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, _)| k.span)
    }
}

const EMPTY: &[(Node, Node)] = &[];

impl<'f> Cx<'f> {
    fn error(
        &mut self,
        code: &'static str,
        span: Span,
        message: String,
        label: &str,
        help: Option<String>,
    ) {
        let mut d = Diagnostic::error(code, message).at(self.file, span, label.to_string());
        d.help = help;
        self.diags.push(d);
    }

    fn warn(
        &mut self,
        code: &'static str,
        span: Span,
        message: String,
        label: &str,
        help: Option<String>,
    ) {
        let mut d = Diagnostic::warning(code, message).at(self.file, span, label.to_string());
        d.help = help;
        self.diags.push(d);
    }

    fn type_error(&mut self, node: &Node, what: &str, expected: &str) {
        self.error(
            "config::type",
            node.span,
            format!("{what} must be {expected}, not {}", node.kind()),
            &format!("expected {expected}"),
            None,
        );
    }

    /// The entries of a mapping (null reads as empty); anything else is a type error.
    fn entries<'n>(&mut self, node: &'n Node, what: &str, expected: &str) -> &'n [(Node, Node)] {
        match &node.value {
            Value::Map(entries) => entries.as_slice(),
            Value::Null => EMPTY,
            _ => {
                self.type_error(node, what, expected);
                EMPTY
            }
        }
    }

    /// The fields of a mapping; unknown keys are warned about (with a suggestion).
    fn fields<'n>(&mut self, node: &'n Node, what: &str, known: &[&str]) -> Fields<'n> {
        let entries = self.entries(node, what, "a mapping");
        for (key, _) in entries {
            let Some(name) = key.as_str() else {
                self.error(
                    "config::type",
                    key.span,
                    format!("keys of {what} must be strings"),
                    "not a string",
                    None,
                );
                continue;
            };
            if known.contains(&name) {
                continue;
            }
            let help = KNOWN_MISTAKES
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, h)| h.to_string())
                .or_else(|| {
                    did_you_mean(name, known.iter().copied())
                        .map(|s| format!("did you mean `{s}`?"))
                })
                .or_else(|| Some(format!("the keys of {what} are {}", name_list(known, 12))));
            self.warn(
                "config::unknown_key",
                key.span,
                format!("unknown key `{name}` in {what}; it is ignored"),
                "unknown key",
                help,
            );
        }
        Fields { entries }
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<Located<String>> {
        match node.scalar_text(self.file.text()) {
            Some(text) => Some(Located::new(text, node.span)),
            None => {
                self.type_error(node, what, "a string");
                None
            }
        }
    }

    fn opt_string(&mut self, f: &Fields, key: &str, what: &str) -> Option<Located<String>> {
        let node = f.get(key)?;
        self.string(node, &format!("`{key}` of {what}"))
    }

    fn opt_bool(&mut self, f: &Fields, key: &str, what: &str) -> Option<Located<bool>> {
        let node = f.get(key)?;
        match node.value {
            Value::Bool(b) => Some(Located::new(b, node.span)),
            _ => {
                self.type_error(node, &format!("`{key}` of {what}"), "true or false");
                None
            }
        }
    }

    fn opt_number(&mut self, f: &Fields, key: &str, what: &str) -> Option<Located<f64>> {
        let node = f.get(key)?;
        match node.value {
            Value::Int(i) => Some(Located::new(i as f64, node.span)),
            Value::Float(x) if x.is_finite() => Some(Located::new(x, node.span)),
            _ => {
                self.type_error(node, &format!("`{key}` of {what}"), "a number");
                None
            }
        }
    }

    fn string_list(&mut self, node: &Node, what: &str) -> Vec<Located<String>> {
        match &node.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|n| self.string(n, &format!("an item of {what}")))
                .collect(),
            Value::Null => Vec::new(),
            _ => {
                self.type_error(node, what, "a list");
                Vec::new()
            }
        }
    }

    /// A mapping of string to string (`input_mapping`, `output_mapping`).
    fn string_map(&mut self, node: &Node, what: &str) -> Vec<(Located<String>, Located<String>)> {
        let entries = self.entries(node, what, "a mapping of names");
        entries
            .iter()
            .filter_map(|(k, v)| {
                Some((
                    self.string(k, what)?,
                    self.string(v, &format!("a value of {what}"))?,
                ))
            })
            .collect()
    }

    fn root(&mut self, root: &Node) -> Option<FlowConfig> {
        if !matches!(root.value, Value::Map(_)) {
            self.error(
                "config::type",
                root.span,
                format!(
                    "a flow config must be a YAML mapping with a `flow:` section, not {}",
                    root.kind()
                ),
                "expected a mapping",
                None,
            );
            return None;
        }
        let f = self.fields(root, "the flow config", ROOT_KEYS);
        let flow = match f.get("flow") {
            Some(node) => self.flow(node),
            None => {
                self.error(
                    "config::missing_key",
                    Span::new(0, 0),
                    "the config has no `flow:` section".to_string(),
                    "expected `flow:` with `id`, `name` and `bpmn_file`",
                    Some("start the file with `flow: {id: my_process_v1, name: \"My process\", bpmn_file: model.bpmn}`".into()),
                );
                FlowSection::default()
            }
        };
        let engine = f
            .get("workflow_engine")
            .map(|n| self.engine(n))
            .unwrap_or_default();
        let variables = f
            .get("variables")
            .map(|n| self.variables(n))
            .unwrap_or_default();
        let llm = f.get("llm").map(|n| self.llm(n));
        let tasks = f.get("tasks").map(|n| self.tasks(n)).unwrap_or_default();
        let gateways = f
            .get("gateways")
            .map(|n| self.gateways(n))
            .unwrap_or_default();
        let hooks = f.get("hooks").map(|n| self.hooks(n)).unwrap_or_default();
        let permissions = f
            .get("action_permissions")
            .map(|n| self.permissions(n))
            .unwrap_or_default();
        let remote_agents = f
            .get("remote_agents")
            .map(|n| self.remote_agents(n))
            .unwrap_or_default();
        Some(FlowConfig {
            source: self.file.clone(),
            flow,
            engine,
            variables,
            llm,
            tasks,
            gateways,
            hooks,
            permissions,
            remote_agents,
        })
    }

    fn flow(&mut self, node: &Node) -> FlowSection {
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

    fn engine(&mut self, node: &Node) -> EngineConfig {
        let what = "`workflow_engine`";
        let f = self.fields(node, what, ENGINE_KEYS);
        let kind_written = self.opt_string(&f, "type", what);
        let kind = match kind_written.as_ref().map(|k| k.value.as_str()) {
            None | Some("native") | Some("langgraph") => EngineKind::Native,
            Some("flowable") => EngineKind::Flowable,
            Some("kogito") => EngineKind::Kogito,
            Some("mcp") => EngineKind::Mcp,
            Some(other) => {
                let help = did_you_mean(other, EngineKind::NAMES)
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| {
                        format!("the engines are {}", name_list(&EngineKind::NAMES, 5))
                    });
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
        let password = self.opt_string(&f, "password", what);
        if let Some(p) = &password {
            self.warn(
                "config::secret",
                p.span,
                "a password is written into the config file".into(),
                "secret in a file that is shared and committed",
                Some(
                    "put it in an environment variable and name that variable with `password_env:`"
                        .into(),
                ),
            );
        }
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

    fn variables(&mut self, node: &Node) -> Vec<Variable> {
        let entries = self.entries(node, "`variables`", "a mapping of names to default values");
        entries
            .iter()
            .filter_map(|(k, v)| {
                let name = self.string(k, "a variable name")?;
                Some(Variable {
                    name,
                    default: v.to_json(),
                })
            })
            .collect()
    }

    fn llm(&mut self, node: &Node) -> LlmConfig {
        let what = "`llm`";
        let f = self.fields(node, what, LLM_KEYS);
        let api_key = self.opt_string(&f, "api_key", what);
        if let Some(k) = &api_key {
            self.warn(
                "config::secret",
                k.span,
                "an API key is written into the config file".into(),
                "secret in a file that is shared and committed",
                Some(
                    "put it in an environment variable and name that variable with `api_key_env:`"
                        .into(),
                ),
            );
        }
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

    fn seq<'n>(&mut self, node: &'n Node, what: &str) -> &'n [Node] {
        match &node.value {
            Value::Seq(items) => items,
            Value::Null => &[],
            _ => {
                self.type_error(node, what, "a list");
                &[]
            }
        }
    }

    fn tasks(&mut self, node: &Node) -> Vec<TaskConfig> {
        let items = self.seq(node, "`tasks`");
        items.iter().filter_map(|item| self.task(item)).collect()
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
        let mode = match mode_written.as_ref().map(|m| m.value.as_str()) {
            Some("task_agent") => TaskMode::TaskAgent,
            Some("native") => TaskMode::Native,
            Some("tool") => {
                let span = mode_written.as_ref().map_or(node.span, |m| m.span);
                self.warn(
                    "config::legacy",
                    span,
                    "`mode: tool` is a legacy spelling; it is read as `native`".into(),
                    "legacy mode",
                    Some("write `mode: native`".into()),
                );
                TaskMode::Native
            }
            None if agent.is_some() => TaskMode::TaskAgent,
            None => TaskMode::Native,
            Some(other) => {
                let span = mode_written.as_ref().map_or(node.span, |m| m.span);
                let help = did_you_mean(other, ["task_agent", "native"])
                    .map_or("the modes are `task_agent` and `native`".to_string(), |s| {
                        format!("did you mean `{s}`?")
                    });
                self.error(
                    "config::unknown_mode",
                    span,
                    format!("unknown task mode `{other}`"),
                    "unknown mode",
                    Some(help),
                );
                TaskMode::Native
            }
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
            .map(|n| self.string_map(n, &format!("`input_mapping` of {what}")))
            .unwrap_or_default();
        let output_mapping = f
            .get("output_mapping")
            .map(|n| self.string_map(n, &format!("`output_mapping` of {what}")))
            .unwrap_or_default();
        Some(TaskConfig {
            tool: self.opt_string(&f, "tool", &what),
            id,
            mode,
            mode_written,
            agent,
            instruction,
            policy,
            input_mapping,
            output_mapping,
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
        AgentConfig {
            name: self.opt_string(&f, "name", &what),
            system_instruction: self.opt_string(&f, "system_instruction", &what),
            policy: self.opt_string(&f, "policy", &what),
            agent_type: self.opt_string(&f, "agent_type", &what),
            tools,
            span: node.span,
        }
    }

    fn gateways(&mut self, node: &Node) -> Vec<GatewayConfig> {
        let entries = self.entries(node, "`gateways`", "a mapping of gateway ids to settings");
        entries
            .iter()
            .filter_map(|(k, v)| {
                let id = self.string(k, "a gateway id")?;
                Some(self.gateway(id, v))
            })
            .collect()
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
        let mode = match mode_written.as_ref().map(|m| m.value.as_str()) {
            None | Some("native") => GatewayMode::Native,
            Some("decision_agent") => GatewayMode::DecisionAgent,
            Some(other) => {
                let span = mode_written.as_ref().map_or(node.span, |m| m.span);
                let help = did_you_mean(other, ["decision_agent", "native"]).map_or(
                    "the modes are `decision_agent` and `native`".to_string(),
                    |s| format!("did you mean `{s}`?"),
                );
                self.error(
                    "config::unknown_mode",
                    span,
                    format!("unknown gateway mode `{other}`"),
                    "unknown mode",
                    Some(help),
                );
                GatewayMode::Native
            }
        };
        let flows = match f.get("flows") {
            None => Vec::new(),
            Some(n) => {
                let entries =
                    self.entries(n, &format!("`flows` of {what}"), "a mapping of flow ids");
                entries
                    .iter()
                    .filter_map(|(k, v)| {
                        let fid = self.string(k, "a flow id")?;
                        let fwhat = format!("flow `{}` of {what}", fid.value);
                        let ff = self.fields(v, &fwhat, GATEWAY_FLOW_KEYS);
                        Some(GatewayFlow {
                            decision: self.opt_string(&ff, "decision", &fwhat),
                            condition: self.opt_string(&ff, "condition", &fwhat),
                            id: fid,
                        })
                    })
                    .collect()
            }
        };
        GatewayConfig {
            mode,
            condition: self.opt_string(&f, "condition", &what),
            policy: self.opt_string(&f, "policy", &what),
            flows,
            human_consultation: self.opt_string(&f, "human_consultation", &what),
            agent_type: self.opt_string(&f, "agent_type", &what),
            span: node.span,
            id,
        }
    }

    fn hooks(&mut self, node: &Node) -> Vec<HookConfig> {
        let items = self.seq(node, "`hooks`");
        items.iter().filter_map(|item| self.hook(item)).collect()
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
        let allowed_targets = f
            .get("allowed_targets")
            .map(|n| self.string_list(n, "`allowed_targets`"))
            .unwrap_or_default();
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
            allowed_targets,
            insertable_tasks,
            span: node.span,
            id,
        })
    }

    fn hook_action(&mut self, text: &str, span: Span, what: &str) -> Option<HookAction> {
        match text.parse::<HookAction>() {
            Ok(a) => Some(a),
            Err(()) => {
                let help = did_you_mean(text, HookAction::names())
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| {
                        format!(
                            "the hook actions are {}",
                            name_list(&HookAction::names().collect::<Vec<_>>(), 7)
                        )
                    });
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

    fn action_spec(&mut self, node: &Node, owner: &str) -> Option<Located<ActionSpec>> {
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

    fn task_spec(&mut self, node: &Node, owner: &str) -> Option<TaskSpec> {
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

    fn permissions(&mut self, node: &Node) -> Permissions {
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
        Permissions {
            permitted,
            prohibited,
            on_denied,
            span: Some(node.span),
        }
    }

    fn remote_agents(&mut self, node: &Node) -> Vec<RemoteAgent> {
        let entries = self.entries(
            node,
            "`remote_agents`",
            "a mapping of agent names to settings",
        );
        entries
            .iter()
            .filter_map(|(k, v)| {
                let name = self.string(k, "a remote agent name")?;
                let what = format!("remote agent `{}`", name.value);
                let f = self.fields(v, &what, REMOTE_AGENT_KEYS);
                let url = self.opt_string(&f, "url", &what);
                if url.is_none() {
                    self.error(
                        "config::missing_key",
                        v.span,
                        format!("{what} has no `url`"),
                        "where is the agent?",
                        Some("add `url: http://127.0.0.1:<port>` (the A2A agent card is read from it)".into()),
                    );
                }
                let protocol = self.opt_string(&f, "protocol", &what);
                if let Some(p) = protocol.as_ref().filter(|p| p.value != "a2a") {
                    self.error(
                        "config::unknown_protocol",
                        p.span,
                        format!("{what} uses protocol `{}`; only `a2a` is supported", p.value),
                        "unknown protocol",
                        None,
                    );
                }
                let timeout_secs = self.opt_number(&f, "timeout", &what);
                if let Some(t) = timeout_secs.as_ref().filter(|t| t.value < 0.0) {
                    self.error("config::type", t.span, format!("`timeout` of {what} is negative"), "must be ≥ 0", None);
                }
                let mut auth_keys = Vec::new();
                if let Some(auth) = f.get("auth") {
                    for (k, val) in auth.as_map().unwrap_or_default() {
                        let Some(key) = self.string(k, "an auth key") else { continue };
                        let secret = matches!(key.value.as_str(), "token" | "password" | "api_key" | "secret");
                        if secret && val.as_str().is_some_and(|s| !s.is_empty()) {
                            self.warn(
                                "config::secret",
                                val.span,
                                format!("{what}: a secret (`{}`) is written into the config file", key.value),
                                "secret in a file that is shared and committed",
                                Some(format!("put it in an environment variable and write `{}_env: <VAR>`", key.value)),
                            );
                        }
                        auth_keys.push(key);
                    }
                }
                Some(RemoteAgent {
                    name,
                    url,
                    protocol,
                    timeout_secs,
                    auth_keys,
                    span: v.span,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_str(text: &str) -> (Option<FlowConfig>, Vec<Diagnostic>) {
        decode(&SourceFile::new("t.yaml", text))
    }

    #[test]
    fn a_minimal_config_decodes_cleanly() {
        let (cfg, diags) = decode_str("flow:\n  id: p1\n  name: P\n  bpmn_file: m.bpmn\n");
        assert!(diags.is_empty(), "{diags:?}");
        let cfg = cfg.unwrap();
        assert_eq!(cfg.process_key(), "p1");
        assert_eq!(cfg.engine.kind, EngineKind::Native);
    }

    #[test]
    fn unknown_keys_warn_with_a_suggestion() {
        let (_, diags) = decode_str("flow:\n  id: p\n  bpmn_file: m.bpmn\nvariabels:\n  x: 1\n");
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].code, "config::unknown_key");
        assert_eq!(diags[0].help.as_deref(), Some("did you mean `variables`?"));
    }

    #[test]
    fn upstream_silent_drops_are_reported() {
        let text = "flow: {id: p, bpmn_file: m.bpmn}\nhooks:\n  - id: h1\n    type: pre_edge\n    location: F1\n  - id: h2\n    location: F2\n    action: jump\n  - id: h3\n";
        let (cfg, diags) = decode_str(text);
        let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            [
                "config::legacy",
                "config::unknown_action",
                "config::missing_key"
            ]
        );
        assert_eq!(cfg.unwrap().hooks.len(), 3);
    }

    #[test]
    fn parameterised_actions_decode() {
        let text = "flow: {id: p, bpmn_file: m.bpmn}\nhooks:\n  - {location: F1, action: {skip_to: T9}}\n  - {location: F2, action: {swap_nodes: [A, B]}}\n  - {location: F3, action: {add_node: {id: N, instruction: do it}}}\n  - {location: F4, action: skip_to}\n";
        let (cfg, diags) = decode_str(text);
        let cfg = cfg.unwrap();
        assert!(
            matches!(&cfg.hooks[0].action.as_ref().unwrap().value, ActionSpec::SkipTo(t) if t.value == "T9")
        );
        assert!(
            matches!(&cfg.hooks[1].action.as_ref().unwrap().value, ActionSpec::SwapNodes(a, b) if a.value == "A" && b.value == "B")
        );
        assert!(
            matches!(&cfg.hooks[2].action.as_ref().unwrap().value, ActionSpec::AddNode(t) if t.id.value == "N")
        );
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, "config::action_parameter");
    }

    #[test]
    fn permissions_accept_upstream_names_and_flag_the_rest() {
        let text = "flow: {id: p, bpmn_file: m.bpmn}\naction_permissions:\n  permitted_actions: [continue, SKIP_TO, request_user_input, skipto]\n  prohibited_actions: [swap_nodes]\n";
        let (cfg, diags) = decode_str(text);
        let p = cfg.unwrap().permissions;
        assert!(p.allows(HookAction::Continue) && p.allows(HookAction::SkipTo));
        assert!(!p.allows(HookAction::SwapNodes) && !p.allows(HookAction::Terminate));
        let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["config::legacy", "config::unknown_action"]);
        assert_eq!(diags[1].help.as_deref(), Some("did you mean `skip_to`?"));
    }

    #[test]
    fn secrets_in_the_file_are_flagged_and_types_checked() {
        let text = "flow: {id: p, bpmn_file: m.bpmn}\nworkflow_engine:\n  type: flowable\n  password: test\n  callback_port: high\n";
        let (cfg, diags) = decode_str(text);
        assert_eq!(cfg.unwrap().engine.kind, EngineKind::Flowable);
        let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["config::type", "config::secret"]);
    }

    #[test]
    fn mappings_keep_their_entries_without_unknown_key_noise() {
        let text = "flow: {id: p, bpmn_file: m.bpmn}\ntasks:\n  - id: T1\n    agent: {name: a}\n    output_mapping: {score: credit_score}\n";
        let (cfg, diags) = decode_str(text);
        assert!(diags.is_empty(), "{diags:?}");
        let task = &cfg.unwrap().tasks[0];
        assert_eq!(task.mode, TaskMode::TaskAgent);
        assert_eq!(task.output_mapping[0].1.value, "credit_score");
    }
}
