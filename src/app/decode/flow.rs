//! The `flow`, `workflow_engine`, `variables` and `llm` sections.

use super::super::config::*;
use super::super::yaml::{Node, Value};
use super::reader::{Cx, Fields, did_you_mean_or_list};

pub(crate) const FLOW_KEYS: &[&str] = &[
    "name",
    "id",
    "version",
    "bpmn_file",
    "process",
    "description",
    "agent_type",
];
pub(crate) const ENGINE_KEYS: &[&str] = &[
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
    "token_env",
    "idle_timeout",
    "connect_timeout",
];
pub(crate) const LLM_KEYS: &[&str] = &[
    "provider",
    "model",
    "temperature",
    "base_url",
    "api_key_env",
    "api_key",
    "max_tokens",
    "seed",
    "response_format",
    "strict",
    "timeout",
    "connect_timeout",
    "retries",
    "max_attempts",
    "max_concurrency",
    "budget",
    "control_point_budget",
    "prompts",
];
/// A control point's `llm:` block: the app's keys that make sense per control point.
pub(crate) const ELEMENT_LLM_KEYS: &[&str] = &[
    "provider",
    "model",
    "temperature",
    "base_url",
    "api_key_env",
    "api_key",
    "max_tokens",
    "seed",
    "response_format",
    "strict",
    "timeout",
    "connect_timeout",
    "retries",
    "max_attempts",
    "budget",
    "prompt",
];
pub(crate) const BUDGET_KEYS: &[&str] = &["calls", "tokens", "seconds"];
pub(crate) const PROMPT_KEYS: &[&str] = &["task", "gateway", "hook"];
/// The providers cuga-flo reaches through the OpenAI chat-completions protocol.
pub const LLM_PROVIDERS: &[&str] = &[
    "openai",
    "openai_compatible",
    "ollama",
    "vllm",
    "llamacpp",
    "litellm",
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
            process: self.opt_string(&f, "process", what),
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
            token_env: self.opt_string(&f, "token_env", what),
            idle_timeout: self.opt_seconds(&f, "idle_timeout", what),
            connect_timeout: self.opt_seconds(&f, "connect_timeout", what),
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

    /// `inputs:`: each a declared variable, with `required` (default false) and a
    /// `description`.
    pub(super) fn inputs(&mut self, node: &Node, variables: &[Variable]) -> Vec<Input> {
        let declared: Vec<&str> = variables.iter().map(|v| v.name.value.as_str()).collect();
        self.named_entries(
            node,
            "`inputs`",
            "a mapping of variable names to {required, description}",
            "a variable name",
            |cx, name, v| {
                let what = format!("input `{}`", name.value);
                let f = cx.fields(v, &what, &["required", "description"]);
                let required = cx.opt_bool(&f, "required", &what).is_some_and(|b| b.value);
                let description = cx.opt_string(&f, "description", &what).map(|d| d.value);
                if !declared.contains(&name.value.as_str()) {
                    let help = did_you_mean_or_list(&name.value, &declared, 8, "the variables");
                    cx.error(
                        "config::input",
                        name.span,
                        format!(
                            "input `{}` is not a declared variable: declare it under `variables:` (its default gives its type)",
                            name.value
                        ),
                        "not a declared variable",
                        Some(help),
                    );
                    return None;
                }
                Some(Input {
                    name,
                    required,
                    description,
                })
            },
        )
    }

    pub(super) fn llm(&mut self, node: &Node) -> LlmConfig {
        let what = "`llm`";
        let f = self.fields(node, what, LLM_KEYS);
        let mut llm = self.llm_fields(&f, what, node);
        llm.control_point_budget = f
            .get("control_point_budget")
            .map(|n| self.budget(n, "`control_point_budget` of `llm`"));
        if let Some(n) = f.get("prompts") {
            let pwhat = "`prompts` of `llm`";
            let pf = self.fields(n, pwhat, PROMPT_KEYS);
            llm.prompts.task = self.opt_string(&pf, "task", pwhat);
            llm.prompts.gateway = self.opt_string(&pf, "gateway", pwhat);
            llm.prompts.hook = self.opt_string(&pf, "hook", pwhat);
        }
        llm
    }

    /// A control point's own `llm:` block.
    pub(super) fn element_llm(&mut self, node: &Node, owner: &str) -> LlmConfig {
        let what = format!("`llm` of {owner}");
        let f = self.fields(node, &what, ELEMENT_LLM_KEYS);
        let mut llm = self.llm_fields(&f, &what, node);
        llm.prompts.own = self.opt_string(&f, "prompt", &what);
        llm
    }

    /// The keys an app's and a control point's `llm:` blocks share.
    fn llm_fields(&mut self, f: &Fields, what: &str, node: &Node) -> LlmConfig {
        let api_key = self.opt_secret(f, "api_key", what, "an API key");
        let provider = self.opt_string(f, "provider", what);
        let base_url = self.opt_string(f, "base_url", what);
        if let Some(p) = &provider
            && !LLM_PROVIDERS.contains(&p.value.as_str())
        {
            let help = format!(
                "cuga-flo speaks the OpenAI chat-completions protocol; the providers it knows are {}. \
                 For another provider, put an OpenAI-compatible gateway (LiteLLM, for one) in front \
                 and write `provider: openai_compatible` with its `base_url`",
                crate::diag::name_list(LLM_PROVIDERS, 8)
            );
            if base_url.is_some() {
                self.warn(
                    "config::llm_provider",
                    p.span,
                    format!("unknown provider `{}`; it is reached as an OpenAI-compatible endpoint at `base_url`", p.value),
                    "unknown provider",
                    Some(help),
                );
            } else {
                self.error(
                    "config::llm_provider",
                    p.span,
                    format!("unknown provider `{}` and no `base_url`", p.value),
                    "unknown provider",
                    Some(help),
                );
            }
        }
        let response_format = self.opt_string(f, "response_format", what);
        if let Some(r) = &response_format
            && crate::vocab::ResponseFormat::parse(&r.value).is_none()
        {
            self.error(
                "config::value",
                r.span,
                format!("unknown response_format `{}`", r.value),
                "unknown format",
                Some(did_you_mean_or_list(
                    &r.value,
                    &crate::vocab::ResponseFormat::NAMES,
                    4,
                    "the formats",
                )),
            );
        }
        LlmConfig {
            provider,
            model: self.opt_string(f, "model", what),
            temperature: self.opt_number(f, "temperature", what),
            base_url,
            api_key_env: self.opt_string(f, "api_key_env", what),
            api_key,
            max_tokens: self.opt_count(f, "max_tokens", what, 1),
            seed: self.opt_count(f, "seed", what, 0),
            response_format,
            strict: self.opt_bool(f, "strict", what),
            timeout: self.opt_seconds(f, "timeout", what),
            connect_timeout: self.opt_seconds(f, "connect_timeout", what),
            retries: self.opt_count(f, "retries", what, 0),
            max_attempts: self.opt_count(f, "max_attempts", what, 1),
            max_concurrency: self.opt_count(f, "max_concurrency", what, 1),
            budget: f
                .get("budget")
                .map(|n| self.budget(n, &format!("`budget` of {what}"))),
            control_point_budget: None,
            prompts: PromptPaths::default(),
            span: node.span,
        }
    }

    fn budget(&mut self, node: &Node, what: &str) -> BudgetConfig {
        let f = self.fields(node, what, BUDGET_KEYS);
        BudgetConfig {
            calls: self.opt_count(&f, "calls", what, 0),
            tokens: self.opt_count(&f, "tokens", what, 0),
            seconds: self.opt_seconds(&f, "seconds", what),
            span: node.span,
        }
    }
}
