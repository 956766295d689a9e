//! The JSON Schema (draft 2020-12) of a flow config, for editors (`cuga-flo schema
//! config`). Every object's properties are the decoder's own key lists (`FLOW_KEYS`,
//! `TASK_KEYS`, ...), so a key the decoder accepts is never missing from the schema and
//! the schema offers no key the decoder refuses; each key's type comes from [`types`]
//! below, and a test checks that every listed key has one.
//!
//! The schema is what an editor can check as you type; `cuga-flo validate` checks the
//! rest (ids against the model, policies, conditions...).

use serde_json::{Value, json};

use super::ROOT_KEYS;
use super::actions::{PERMISSION_KEYS, TASK_SPEC_KEYS};
use super::flow::{
    BUDGET_KEYS, ELEMENT_LLM_KEYS, ENGINE_KEYS, FLOW_KEYS, LLM_KEYS, LLM_PROVIDERS, PROMPT_KEYS,
};
use super::gateways::{APPROVAL_KEYS, GATEWAY_FLOW_KEYS, GATEWAY_KEYS};
use super::graph::{GRAPH_KEYS, GRAPH_STORES};
use super::guarantees::GUARANTEE_KEYS;
use super::hooks::HOOK_KEYS;
use super::remote::REMOTE_AGENT_KEYS;
use super::tasks::{AGENT_KEYS, TASK_KEYS};
use super::tools::{MCP_SERVER_KEYS, OPENAPI_KEYS, STEP_RULE_KEYS, TOOL_SETTING_KEYS};
use crate::app::EngineKind;
use crate::vocab::{HookAction, ResponseFormat};

/// The draft every schema of cuga-flo declares.
pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The objects of a flow config, by name.
#[cfg(test)]
const SECTIONS: &[&str] = &[
    "root",
    "flow",
    "workflow_engine",
    "llm",
    "element_llm",
    "budget",
    "prompts",
    "task",
    "agent",
    "gateway",
    "gateway_flow",
    "approval",
    "hook",
    "task_spec",
    "action_permissions",
    "guarantee",
    "remote_agent",
    "mcp_server",
    "openapi",
    "tool_setting",
    "step_rule",
    "graph",
];

/// The decoder's keys of the object `name`, and the keys' types.
pub(crate) fn keys_and_types(name: &str) -> (&'static [&'static str], Vec<(&'static str, Value)>) {
    match name {
        "root" => (ROOT_KEYS, root_types()),
        "flow" => (FLOW_KEYS, types::flow()),
        "workflow_engine" => (ENGINE_KEYS, types::engine()),
        "llm" => (LLM_KEYS, types::llm(false)),
        "element_llm" => (ELEMENT_LLM_KEYS, types::llm(true)),
        "budget" => (BUDGET_KEYS, types::budget()),
        "prompts" => (PROMPT_KEYS, types::prompts()),
        "task" => (TASK_KEYS, types::task()),
        "agent" => (AGENT_KEYS, types::agent()),
        "gateway" => (GATEWAY_KEYS, types::gateway()),
        "gateway_flow" => (GATEWAY_FLOW_KEYS, types::gateway_flow()),
        "approval" => (APPROVAL_KEYS, types::approval()),
        "hook" => (HOOK_KEYS, types::hook()),
        "task_spec" => (TASK_SPEC_KEYS, types::task_spec()),
        "action_permissions" => (PERMISSION_KEYS, types::permissions()),
        "guarantee" => (GUARANTEE_KEYS, types::guarantee()),
        "remote_agent" => (REMOTE_AGENT_KEYS, types::remote_agent()),
        "mcp_server" => (MCP_SERVER_KEYS, types::mcp_server()),
        "openapi" => (OPENAPI_KEYS, types::openapi()),
        "tool_setting" => (TOOL_SETTING_KEYS, types::tool_setting()),
        "step_rule" => (STEP_RULE_KEYS, types::step_rule()),
        "graph" => (GRAPH_KEYS, types::graph()),
        _ => (&[], Vec::new()),
    }
}

/// An object with exactly the decoder's `keys`, typed from `types` (a key without a type
/// takes any value).
fn object(keys: &[&str], types: &[(&str, Value)], description: &str) -> Value {
    let mut properties = serde_json::Map::new();
    for key in keys {
        let schema = types
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| json!({}));
        properties.insert((*key).to_string(), schema);
    }
    json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "additionalProperties": false,
    })
}

fn section(name: &str) -> Value {
    let (keys, types) = keys_and_types(name);
    object(keys, &types, &description(name))
}

fn description(name: &str) -> String {
    match name {
        "root" => "A cuga-flo flow config (docs/config.md).",
        "flow" => "The process: its key, name and BPMN model.",
        "workflow_engine" => "The engine that runs the model.",
        "llm" => "The model the reasoned control points ask.",
        "element_llm" => "This control point's own model settings.",
        "budget" => "Limits on the model calls.",
        "prompts" => "Prompt templates (minijinja), relative to the config.",
        "task" => "A BPMN task and how it is governed.",
        "agent" => "The agent that does the task.",
        "gateway" => "A BPMN gateway and how it decides.",
        "gateway_flow" => "An outgoing flow of the gateway.",
        "approval" => "A guardrail: an approver decides the gateway's route (docs/graph.md).",
        "hook" => "A hook on a sequence flow: a governed decision between two nodes.",
        "task_spec" => "A task a hook may insert.",
        "action_permissions" => "Which hook actions are permitted.",
        "guarantee" => "What every run keeps, whatever the hooks decide.",
        "remote_agent" => "A remote agent a control point may consult.",
        "mcp_server" => "An MCP server whose tools task agents may call (docs/tools.md).",
        "openapi" => "An HTTP API (OpenAPI 3) whose operations task agents may call as tools.",
        "tool_setting" => "How one tool's calls are governed.",
        "step_rule" => "A rule checked before (pre_execute) or after (post_execute) the agent.",
        "graph" => "Graph mode: the RDF store each run is written into (docs/graph.md).",
        _ => "",
    }
    .to_string()
}

/// A key's value as the decoder reads text: any scalar (`version: 1.0` is the text "1.0").
fn text(description: &str) -> Value {
    json!({"type": ["string", "number", "boolean"], "description": description})
}

fn texts(description: &str) -> Value {
    json!({"type": ["array", "null"], "items": {"type": ["string", "number", "boolean"]}, "description": description})
}

fn choice(values: &[&str], description: &str) -> Value {
    json!({"type": "string", "enum": values, "description": description})
}

fn seconds(description: &str) -> Value {
    json!({"type": "number", "exclusiveMinimum": 0, "maximum": 1.0e9, "description": description})
}

fn count(min: u64, description: &str) -> Value {
    json!({"type": "integer", "minimum": min, "description": description})
}

fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

fn duration() -> Value {
    json!({"type": "string", "description": "an ISO 8601 duration: PT30M, PT24H, P2D"})
}

/// A timeout: an ISO 8601 duration, a number with a unit (30s, 10m, 2h, 1d), or seconds.
fn timeout() -> Value {
    json!({"type": ["string", "number"], "description": "a duration: PT10M, 30s, 10m, 2h, 1d, or a number of seconds"})
}

/// One id, or a list of them.
fn ids(description: &str) -> Value {
    json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], "description": description})
}

fn map_of(values: Value, description: &str) -> Value {
    json!({"type": ["object", "null"], "additionalProperties": values, "description": description})
}

fn list_of(items: Value, description: &str) -> Value {
    json!({"type": ["array", "null"], "items": items, "description": description})
}

/// The hook actions, as the decoder reads them: lower case, or upper case (`SKIP_TO`).
fn actions() -> Vec<String> {
    HookAction::names()
        .flat_map(|n| [n.to_string(), n.to_ascii_uppercase()])
        .collect()
}

fn root_types() -> Vec<(&'static str, Value)> {
    vec![
        ("flow", section("flow")),
        ("workflow_engine", section("workflow_engine")),
        (
            "variables",
            json!({"type": ["object", "null"], "description": "The process variables and their defaults (a default's type is the variable's type)."}),
        ),
        (
            "inputs",
            map_of(
                json!({
                    "type": "object",
                    "additionalProperties": false,
                    "description": "A declared variable as a run input.",
                    "properties": {
                        "required": {"type": "boolean", "description": "A run without it is refused (default false)."},
                        "description": {"type": "string", "description": "What it holds, for whoever starts a run (describe shows it)."}
                    }
                }),
                "What the declared variables mean as run inputs, by variable name.",
            ),
        ),
        ("llm", section("llm")),
        ("tasks", list_of(section("task"), "The governed tasks.")),
        (
            "gateways",
            map_of(section("gateway"), "The governed gateways, by BPMN id."),
        ),
        (
            "hooks",
            list_of(section("hook"), "The hooks on sequence flows."),
        ),
        ("action_permissions", section("action_permissions")),
        (
            "guarantees",
            list_of(section("guarantee"), "What every run keeps."),
        ),
        (
            "remote_agents",
            map_of(section("remote_agent"), "Remote agents, by name."),
        ),
        (
            "mcp_servers",
            map_of(
                section("mcp_server"),
                "MCP servers task agents may call tools of, by name.",
            ),
        ),
        (
            "openapi",
            map_of(
                section("openapi"),
                "HTTP APIs (OpenAPI 3) task agents may call, by name.",
            ),
        ),
        (
            "questions",
            choice(
                &["terminal", "park"],
                "terminal (the default): a person at the terminal is asked; park: every question parks the run",
            ),
        ),
        ("graph", section("graph")),
    ]
}

mod types {
    use super::*;

    pub fn flow() -> Vec<(&'static str, Value)> {
        vec![
            ("name", text("The process's name.")),
            ("id", text("The process key.")),
            ("version", text("The process's version.")),
            ("bpmn_file", text("The BPMN model, relative to this file.")),
            (
                "process",
                text("The id of the <process> to run, when the model has several."),
            ),
            ("description", text("What the process does.")),
            ("agent_type", text("The default agent type.")),
        ]
    }

    pub fn engine() -> Vec<(&'static str, Value)> {
        vec![
            ("type", choice(&EngineKind::NAMES, "The engine.")),
            ("url", text("The engine's URL (flowable, kogito, mcp).")),
            ("username", text("The engine's user.")),
            (
                "password",
                text("The engine's password (prefer password_env)."),
            ),
            (
                "password_env",
                text("The environment variable that holds the password."),
            ),
            (
                "deploy",
                boolean("Upload the model before the first start."),
            ),
            ("process_definition_key", text("The engine's process key.")),
            ("process_id", text("The engine's process id.")),
            ("callback_host", text("The host the engine calls back.")),
            (
                "callback_port",
                json!({"type": "integer", "minimum": 1, "maximum": 65535, "description": "The port the engine calls back."}),
            ),
            (
                "token_env",
                text("The environment variable that holds the bearer token."),
            ),
            ("idle_timeout", seconds("Seconds without progress.")),
            ("connect_timeout", seconds("Seconds to connect.")),
        ]
    }

    pub fn llm(element: bool) -> Vec<(&'static str, Value)> {
        let mut out = vec![
            (
                "provider",
                json!({"type": "string", "description": "An OpenAI-compatible provider; another one needs `base_url`.", "examples": LLM_PROVIDERS}),
            ),
            ("model", text("The model's name.")),
            (
                "temperature",
                json!({"type": "number", "description": "Sampling temperature."}),
            ),
            ("base_url", text("The endpoint's base URL.")),
            (
                "api_key_env",
                text("The environment variable that holds the API key."),
            ),
            ("api_key", text("The API key (prefer api_key_env).")),
            ("max_tokens", count(1, "Most tokens in an answer.")),
            ("seed", count(0, "The sampling seed.")),
            (
                "response_format",
                choice(
                    &ResponseFormat::NAMES,
                    "How a structured answer is asked for.",
                ),
            ),
            ("strict", boolean("Strict JSON schema answers.")),
            ("timeout", seconds("Seconds a request may take.")),
            ("connect_timeout", seconds("Seconds to connect.")),
            ("retries", count(0, "Retries of a failed request.")),
            ("max_attempts", count(1, "Attempts at a usable answer.")),
            ("budget", super::section("budget")),
        ];
        if element {
            out.push((
                "prompt",
                text("This control point's prompt template, relative to the config."),
            ));
        } else {
            out.push((
                "max_concurrency",
                count(1, "Requests to one endpoint at once."),
            ));
            out.push(("control_point_budget", super::section("budget")));
            out.push(("prompts", super::section("prompts")));
        }
        out
    }

    pub fn budget() -> Vec<(&'static str, Value)> {
        vec![
            ("calls", count(0, "Most model calls.")),
            ("tokens", count(0, "Most tokens.")),
            ("seconds", seconds("Most seconds.")),
        ]
    }

    pub fn prompts() -> Vec<(&'static str, Value)> {
        vec![
            ("task", text("The tasks' prompt template.")),
            ("gateway", text("The gateways' prompt template.")),
            ("hook", text("The hooks' prompt template.")),
        ]
    }

    pub fn task() -> Vec<(&'static str, Value)> {
        vec![
            ("id", text("The BPMN task's id.")),
            (
                "mode",
                choice(
                    &["task_agent", "native", "tool"],
                    "task_agent: an agent does it; native: nothing to reason about (tool: legacy for native)",
                ),
            ),
            ("agent", super::section("agent")),
            (
                "instruction",
                text("Legacy: the agent's system_instruction."),
            ),
            ("policy", text("Legacy: the agent's policy.")),
            ("tool", text("A tool the task calls.")),
            (
                "input_mapping",
                map_of(
                    json!({"type": "string"}),
                    "What the agent is given: its input name → a process variable.",
                ),
            ),
            (
                "output_mapping",
                map_of(
                    json!({"type": "string"}),
                    "What the agent answers: its output name → the process variable it sets.",
                ),
            ),
            ("llm", super::section("element_llm")),
            (
                "on_failure",
                choice(&["fail"], "When the agent gives no usable answer."),
            ),
            ("deadline", duration()),
            (
                "on_timeout",
                json!({"description": "The answer given when the deadline passes."}),
            ),
            ("raises", texts("The BPMN error codes the agent may raise.")),
            (
                "untrusted_outputs",
                boolean("The agent's model outputs are untrusted data."),
            ),
        ]
    }

    pub fn agent() -> Vec<(&'static str, Value)> {
        vec![
            ("name", text("The agent's name.")),
            ("system_instruction", text("What the agent is told to do.")),
            (
                "policy",
                text("The markdown policy it follows, relative to the config."),
            ),
            ("agent_type", text("The agent's type.")),
            (
                "tools",
                texts(
                    "The tools it may call: read_variable, consult_user, <server>.<tool> or <server>.*.",
                ),
            ),
            (
                "max_tool_calls",
                count(
                    1,
                    "Tool calls allowed per visit (default 8); one more fails the task with BUDGET_EXHAUSTED.",
                ),
            ),
            (
                "pre_execute",
                list_of(
                    section("step_rule"),
                    "Rules checked before the agent: raise a BPMN error or set inputs.",
                ),
            ),
            (
                "post_execute",
                list_of(
                    section("step_rule"),
                    "Rules checked on the agent's answer: raise a BPMN error or set outputs.",
                ),
            ),
            (
                "type",
                choice(
                    &["command"],
                    "command: the task runs an external CLI (a Goose recipe).",
                ),
            ),
            (
                "recipe",
                text("type: command: the recipe file (Goose format), relative to the config."),
            ),
            (
                "command",
                texts(
                    "type: command: the command line, no shell ({recipe}, {config_dir}, {params}; default: goose run --recipe {recipe} {params}).",
                ),
            ),
            ("timeout", super::timeout()),
        ]
    }

    pub fn approval() -> Vec<(&'static str, Value)> {
        vec![
            ("timeout", super::timeout()),
            (
                "approvers",
                texts("Who may approve (runs answer --by); none: anyone."),
            ),
            (
                "variable",
                text("The variable the gateway's conditions test (default approval_status)."),
            ),
        ]
    }

    pub fn gateway() -> Vec<(&'static str, Value)> {
        vec![
            (
                "mode",
                choice(
                    &["native", "decision_agent"],
                    "native (the default): conditions route; decision_agent: rules, then a model",
                ),
            ),
            (
                "condition",
                text("Tried deterministically first (docs/conditions.md)."),
            ),
            (
                "policy",
                text("The markdown policy, with `rules` (docs/policies.md)."),
            ),
            (
                "flows",
                map_of(
                    super::section("gateway_flow"),
                    "The outgoing flows, by BPMN id.",
                ),
            ),
            (
                "human_consultation",
                text("A remote agent the decision may consult."),
            ),
            ("agent_type", text("The agent's type.")),
            ("tools", texts("Not used by gateways.")),
            ("llm", super::section("element_llm")),
            (
                "on_failure",
                choice(
                    &["ask", "fail", "default"],
                    "When the model gives no usable answer.",
                ),
            ),
            ("deadline", duration()),
            (
                "on_timeout",
                json!({"description": "The answer given when the deadline passes: {flow: <id>}."}),
            ),
            (
                "consequential",
                boolean("A model's choice on untrusted data needs `on_untrusted`."),
            ),
            (
                "approval",
                json!({"description": "A guardrail: an approver decides (true, or {timeout, approvers, variable}).", "anyOf": [{"const": true}, super::section("approval")]}),
            ),
        ]
    }

    pub fn gateway_flow() -> Vec<(&'static str, Value)> {
        vec![
            ("decision", text("The label a reasoner sees.")),
            (
                "condition",
                text("Native routing: replaces the model's condition for this flow."),
            ),
        ]
    }

    pub fn hook() -> Vec<(&'static str, Value)> {
        let action = json!({
            "description": "A static action: continue, skip_node, terminate, or {skip_to: <node>}, {swap_nodes: [a, b]}, {remove_node: <node>}, {add_node: {...}}, {terminate: <reason>}.",
            "anyOf": [
                {"type": "string", "enum": actions()},
                {"type": "object", "minProperties": 1, "maxProperties": 1, "propertyNames": {"enum": actions()}},
            ],
        });
        vec![
            ("id", text("The hook's id (default: its location).")),
            (
                "type",
                choice(&["edge", "pre_edge"], "edge (pre_edge: legacy for edge)"),
            ),
            ("location", text("The sequence flow it sits on.")),
            (
                "policy",
                text("The markdown policy, with `rules` (docs/policies.md)."),
            ),
            ("action", action),
            ("message", text("Recorded with a static action.")),
            (
                "condition",
                text("A guard: the hook decides only when it is TRUE."),
            ),
            ("enabled", boolean("false: the hook is off.")),
            ("instruction", text("Extra words for the reasoner.")),
            (
                "human_consultation",
                text("A remote agent the hook may consult."),
            ),
            (
                "allowed_targets",
                json!({"description": "The nodes a reasoned skip_to / swap_nodes / remove_node may name, or `any`.",
                       "anyOf": [{"const": "any"}, {"type": ["array", "null"], "items": {"type": "string"}}]}),
            ),
            (
                "insertable_tasks",
                list_of(
                    super::section("task_spec"),
                    "The tasks a reasoned add_node may insert.",
                ),
            ),
            (
                "may_set",
                texts("The variables its answers' state_updates may set."),
            ),
            ("llm", super::section("element_llm")),
            (
                "on_failure",
                choice(
                    &["ask", "continue", "fail"],
                    "When the model gives no usable answer.",
                ),
            ),
            ("deadline", duration()),
            (
                "on_timeout",
                json!({"description": "The action taken when the deadline passes: {action: ..., target: ...}."}),
            ),
        ]
    }

    pub fn task_spec() -> Vec<(&'static str, Value)> {
        vec![
            ("id", text("The new task's id.")),
            ("name", text("Its name.")),
            ("instruction", text("What it does.")),
            ("agent", text("The agent that does it.")),
        ]
    }

    pub fn permissions() -> Vec<(&'static str, Value)> {
        let list = |d: &str| json!({"type": ["array", "null"], "items": {"type": "string", "enum": actions()}, "description": d});
        vec![
            (
                "permitted_actions",
                list("Empty: everything not prohibited."),
            ),
            ("prohibited_actions", list("Never permitted.")),
            (
                "on_denied",
                choice(&["continue", "fail"], "What a denied hook answer does."),
            ),
            (
                "on_untrusted",
                choice(
                    &["confirm", "deny", "allow"],
                    "A consequential action a model proposed on untrusted data.",
                ),
            ),
        ]
    }

    pub fn guarantee() -> Vec<(&'static str, Value)> {
        vec![
            ("id", text("Names the guarantee in diagnostics.")),
            ("description", text("What it keeps.")),
            ("reach", ids("Whenever a run reaches this node ...")),
            ("only_after", ids("... these have been executed before.")),
            (
                "always_visit",
                ids("Every run that completes has executed these."),
            ),
            ("never_reach", ids("No run reaches these.")),
        ]
    }

    pub fn remote_agent() -> Vec<(&'static str, Value)> {
        vec![
            ("url", text("The agent's URL.")),
            ("protocol", text("How it is spoken to.")),
            (
                "timeout",
                json!({"type": "number", "description": "Seconds one exchange may take in all (default 90)."}),
            ),
            (
                "connect_timeout",
                json!({"type": "number", "description": "Seconds to open a connection (default 10)."}),
            ),
            (
                "wait",
                json!({"type": ["string", "number"], "description": "How long a run waits live for a delegated task's reply before it parks (runs resume polls the task): PT10M, 30s, 10m, 2h, 1d, or seconds. Absent: the exchange waits up to `timeout`, then cancels."}),
            ),
            (
                "auth",
                json!({
                    "description": "How calls authenticate: the secret is named by environment variable.",
                    "type": "object",
                    "properties": {
                        "type": {"enum": ["bearer", "api_key"]},
                        "token_env": {"type": "string", "description": "bearer: the variable that holds the token."},
                        "header": {"type": "string", "description": "api_key: the header (X-API-Key by default)."},
                        "key_env": {"type": "string", "description": "api_key: the variable that holds the key."}
                    }
                }),
            ),
        ]
    }

    pub fn mcp_server() -> Vec<(&'static str, Value)> {
        vec![
            (
                "command",
                json!({"type": ["array", "string"], "items": {"type": "string"}, "description": "stdio: the server's command line, no shell (relative paths from the config's folder)."}),
            ),
            (
                "env",
                json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "stdio: variables set for the server."}),
            ),
            (
                "pass_env",
                texts(
                    "stdio: variables of cuga-flo's environment passed to the server (nothing else is, but PATH, HOME, LANG and the like).",
                ),
            ),
            (
                "cwd",
                text("stdio: the server's working folder, relative to the config."),
            ),
            ("url", text("streamable HTTP: the server's endpoint.")),
            (
                "token_env",
                text("streamable HTTP: the environment variable that holds its bearer token."),
            ),
            ("timeout", super::timeout()),
            ("connect_timeout", super::timeout()),
            (
                "tools",
                map_of(section("tool_setting"), "Per-tool settings, by tool name."),
            ),
        ]
    }

    pub fn openapi() -> Vec<(&'static str, Value)> {
        vec![
            (
                "spec",
                text("The OpenAPI 3 document (YAML or JSON), relative to the config."),
            ),
            (
                "base_url",
                text("The API's base URL (default: the document's first server)."),
            ),
            (
                "token_env",
                text("The environment variable that holds the API's bearer token."),
            ),
            ("timeout", super::timeout()),
            ("connect_timeout", super::timeout()),
            (
                "tools",
                map_of(
                    section("tool_setting"),
                    "Per-operation settings, by operationId.",
                ),
            ),
        ]
    }

    pub fn tool_setting() -> Vec<(&'static str, Value)> {
        vec![
            (
                "confirm",
                json!({"enum": [true, "always", "never"], "description": "true/always: a person confirms every call; never: nobody does (validate warns). Absent: as the tool's annotations say."}),
            ),
            (
                "idempotent",
                boolean(
                    "Whether a call may be repeated safely (a call in flight at a crash is repeated only then).",
                ),
            ),
        ]
    }

    pub fn step_rule() -> Vec<(&'static str, Value)> {
        vec![
            (
                "when",
                text("The condition (docs/conditions.md) under which the rule applies."),
            ),
            ("raise", text("The BPMN error the task fails with.")),
            (
                "set",
                json!({"type": "object", "description": "Inputs (pre_execute) or outputs (post_execute) to set, with their values."}),
            ),
            ("because", text("Why: journalled with the outcome.")),
        ]
    }

    pub fn graph() -> Vec<(&'static str, Value)> {
        vec![
            (
                "store",
                choice(
                    GRAPH_STORES,
                    "embedded (oxigraph, in the process) or endpoint.",
                ),
            ),
            (
                "path",
                text("The embedded store's folder (on disk; needs the graph-rocksdb feature)."),
            ),
            ("endpoint", text("The SPARQL 1.1 endpoint's base URL.")),
            ("dataset", text("The dataset under the endpoint.")),
            (
                "user_env",
                text("The environment variable that holds the endpoint's user."),
            ),
            (
                "password_env",
                text("The environment variable that holds the endpoint's password."),
            ),
            ("user", text("The endpoint's user (prefer user_env).")),
            (
                "password",
                text("The endpoint's password (prefer password_env)."),
            ),
            (
                "timeout",
                seconds("Seconds one request to the endpoint may take."),
            ),
        ]
    }
}

/// The JSON Schema of a flow config.
pub fn config_schema() -> Value {
    let mut root = section("root");
    if let Value::Object(m) = &mut root {
        m.insert("$schema".into(), json!(DRAFT));
        m.insert("$id".into(), json!("urn:cuga-flo:schema:config"));
        m.insert("title".into(), json!("cuga-flo flow config"));
        m.insert("required".into(), json!(["flow"]));
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_the_decoder_reads_has_a_type_and_no_type_is_for_another_key() {
        for name in SECTIONS {
            let (keys, types) = keys_and_types(name);
            assert!(!keys.is_empty(), "{name}");
            assert!(!description(name).is_empty(), "{name}");
            for key in keys {
                assert!(
                    types.iter().any(|(k, _)| k == key),
                    "`{key}` of {name} has no type in the schema"
                );
            }
            for (key, _) in &types {
                assert!(
                    keys.contains(key),
                    "the schema types `{key}` of {name}, which the decoder does not read"
                );
            }
        }
    }

    #[test]
    fn the_schema_lists_exactly_the_decoders_keys() {
        let schema = config_schema();
        let props = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(props(&schema), ROOT_KEYS);
        assert_eq!(props(&schema["properties"]["flow"]), FLOW_KEYS);
        assert_eq!(props(&schema["properties"]["tasks"]["items"]), TASK_KEYS);
        assert_eq!(
            props(&schema["properties"]["hooks"]["items"]["properties"]["llm"]),
            ELEMENT_LLM_KEYS
        );
        assert_eq!(schema["$schema"], DRAFT);
    }
}
