//! What a model must answer, and how its reply becomes an answer.
//!
//! **Schemas.** [`gateway_schema`], [`hook_schema`] and [`task_schema`] give the JSON
//! schema of each kind of answer. `reason` always comes first (small models decide better
//! when they write a one-sentence check of the policy before choosing), and every choice
//! is an `enum` of exactly what the request offers: the flows, the permitted actions, the
//! allowed targets, the insertable tasks.
//!
//! Strictness (OpenAI's strict mode: every property required, every object
//! `additionalProperties: false`, only supported keywords):
//! - gateways and hooks are strict. Strict mode does not support `maxLength` or
//!   `uniqueItems`, so the schema leaves them out and says the limits in `description`;
//!   the parser enforces them (a long reason is cut, repeated flows count once).
//!   Optional values are required and nullable (`anyOf` with `{"type": "null"}`).
//! - hooks offer `state_updates` only for the variables the hook may set (`may_set`),
//!   each typed by its declared default and nullable: a closed object, so strict. A
//!   reply that sets anything else is re-asked. skip_to never offers the hooked flow's
//!   own target (that is `continue`).
//! - tasks are not strict: output values are untyped, which strict mode cannot express.
//!
//! **Parsing.** [`parse_gateway`], [`parse_hook`] and [`parse_task`] read one JSON object
//! from the reply ([`extract_json`]: plain, fenced or inside prose) and check it against
//! the request. A problem is a short statement (`` `flow` must be one of Flow_a, Flow_b;
//! got "Flow_x" ``) that is sent back to the model when it is re-asked and kept in the
//! journal. Unambiguous slips are accepted (an upper-case action, `choice` for `flow`, a
//! single flow as a string or a one-item list, a task's outputs at the top level); a
//! value outside what was offered never is.

use serde_json::{Map, Value, json};

use super::AnswerSchema;
use crate::bridge::Variables;
use crate::reason::{
    AddTask, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, TaskAnswer, TaskRequest,
};
use crate::vocab::{Decider, HookAction};

/// A reason longer than this (in characters) is cut.
pub const REASON_MAX_CHARS: usize = 500;
/// The length a reason is asked to keep within (below the cut, so a model that overshoots
/// a little loses nothing).
pub const REASON_HINT_CHARS: usize = 400;
/// Values listed in a problem statement before "... (N more)".
const LISTED_VALUES: usize = 25;
/// Characters of an offending value quoted in a problem statement.
const QUOTED_CHARS: usize = 80;
/// Candidate `{` positions tried when looking for JSON inside prose.
const MAX_CANDIDATES: usize = 64;

// ---------------------------------------------------------------------------------------
// What a request offers
// ---------------------------------------------------------------------------------------

/// The actions a hook offers a model: the permitted ones (each once, in order) that it can
/// take now: skip_to and remove_node need an allowed target, swap_nodes two, add_node an
/// insertable task.
pub fn offered_actions(req: &HookRequest) -> Vec<HookAction> {
    let targets = distinct(&target_ids(req)).len();
    let skip_targets = distinct(&skip_target_ids(req)).len();
    let mut offered: Vec<HookAction> = Vec::new();
    for action in &req.permitted {
        let possible = match action {
            HookAction::SkipTo => skip_targets > 0,
            HookAction::RemoveNode => targets > 0,
            HookAction::SwapNodes => targets > 1,
            HookAction::AddNode => !req.insertable_tasks.is_empty(),
            HookAction::Continue | HookAction::SkipNode | HookAction::Terminate => true,
        };
        if possible && !offered.contains(action) {
            offered.push(*action);
        }
    }
    offered
}

fn flow_ids(req: &GatewayRequest) -> Vec<&str> {
    req.flows.iter().map(|f| f.id.as_str()).collect()
}

fn target_ids(req: &HookRequest) -> Vec<&str> {
    req.allowed_targets.iter().map(String::as_str).collect()
}

/// The nodes a skip_to may name: never the hooked flow's own target (that is `continue`).
fn skip_target_ids(req: &HookRequest) -> Vec<&str> {
    req.skip_targets().map(String::as_str).collect()
}

fn insertable_ids(req: &HookRequest) -> Vec<&str> {
    req.insertable_tasks.iter().map(|t| t.id.as_str()).collect()
}

fn offers(actions: &[HookAction], any_of: &[HookAction]) -> bool {
    actions.iter().any(|a| any_of.contains(a))
}

// ---------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------

/// `reason`, the same in every schema.
fn reason_property() -> Value {
    let description = format!(
        "Written first: one sentence on what the policy requires here and which facts \
         decide it (at most {REASON_HINT_CHARS} characters)."
    );
    json!({"type": "string", "maxLength": REASON_HINT_CHARS, "description": description})
}

/// `values` without repeats, in order (an `enum` lists each value once).
fn distinct<'a>(values: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::with_capacity(values.len());
    for v in values {
        if !out.contains(v) {
            out.push(v);
        }
    }
    out
}

fn string_enum(values: &[&str], description: &str) -> Value {
    json!({"type": "string", "enum": distinct(values), "description": description})
}

/// `schema` or null (strict mode's way of saying optional).
fn nullable(schema: Value, description: &str) -> Value {
    json!({"anyOf": [schema, {"type": "null"}], "description": description})
}

/// An object whose every property is required and nothing else is allowed.
fn closed_object(properties: Map<String, Value>) -> Value {
    let required: Vec<&String> = properties.keys().collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of a gateway's answer: `reason`, then `flow` (one of the offered flow ids),
/// or `flows` (one or more of them) for an inclusive gateway. Strict.
pub fn gateway_schema(req: &GatewayRequest) -> AnswerSchema {
    let ids = flow_ids(req);
    let mut properties = Map::new();
    properties.insert("reason".into(), reason_property());
    if req.multiple {
        properties.insert(
            "flows".into(),
            json!({
                "type": "array",
                "items": {"type": "string", "enum": distinct(&ids)},
                "minItems": 1,
                "description": "The ids of the flows to take: one or more, each at most once.",
            }),
        );
    } else {
        properties.insert(
            "flow".into(),
            string_enum(&ids, "The id of the one flow to take."),
        );
    }
    AnswerSchema {
        name: "gateway_choice".into(),
        schema: closed_object(properties),
        strict: true,
    }
}

/// The schema of a hook's answer: `reason`, `action` (one of the offered actions), then
/// only the arguments those actions use: `target` (skip_to / remove_node), `swap`
/// (swap_nodes), `add` (add_node), each one of the offered values or null, and `message`
/// (terminate; a string or null). No `state_updates` (see the module doc). Strict.
pub fn hook_schema(req: &HookRequest) -> AnswerSchema {
    let actions = offered_actions(req);
    let names: Vec<&str> = actions.iter().map(|a| a.as_str()).collect();
    let targets = distinct(&target_ids(req));
    let mut properties = Map::new();
    properties.insert("reason".into(), reason_property());
    properties.insert(
        "action".into(),
        string_enum(&names, "The action to take (only these are permitted)."),
    );
    if offers(&actions, &[HookAction::SkipTo, HookAction::RemoveNode]) {
        // skip_to alone never offers the hooked flow's own target; with remove_node it is
        // in the list for remove_node, and the description says so.
        let (enumerated, description) = if actions.contains(&HookAction::RemoveNode) {
            let description = match &req.flow_target {
                Some(t) if targets.contains(&t.as_str()) => format!(
                    "skip_to / remove_node: the node; null for any other action. skip_to may \
                     not name `{t}` (the flow goes there anyway: that is `continue`)."
                ),
                _ => "skip_to / remove_node: the node; null for any other action.".to_string(),
            };
            (targets.clone(), description)
        } else {
            (
                distinct(&skip_target_ids(req)),
                "skip_to: the node to go to instead; null for any other action.".to_string(),
            )
        };
        properties.insert(
            "target".into(),
            nullable(json!({"type": "string", "enum": enumerated}), &description),
        );
    }
    if actions.contains(&HookAction::SwapNodes) {
        properties.insert(
            "swap".into(),
            nullable(
                json!({
                    "type": "array",
                    "items": {"type": "string", "enum": targets},
                    "minItems": 2,
                    "maxItems": 2,
                }),
                "swap_nodes: the two different nodes to swap; null for any other action.",
            ),
        );
    }
    if actions.contains(&HookAction::AddNode) {
        properties.insert(
            "add".into(),
            nullable(
                json!({"type": "string", "enum": distinct(&insertable_ids(req))}),
                "add_node: the id of the task to insert; null for any other action.",
            ),
        );
    }
    if !req.settable.is_empty() {
        let vars: Map<String, Value> = req
            .settable
            .iter()
            .map(|v| {
                let described = format!(
                    "{} for `{}`, or null to leave it",
                    v.kind.described(),
                    v.name
                );
                (v.name.clone(), nullable(v.kind.schema(), &described))
            })
            .collect();
        properties.insert(
            "state_updates".into(),
            nullable(
                closed_object(vars),
                "The variables the policy says to set with this decision (only these); null \
                 to set none.",
            ),
        );
    }
    if actions.contains(&HookAction::Terminate) {
        properties.insert(
            "message".into(),
            json!({
                "type": ["string", "null"],
                "maxLength": REASON_HINT_CHARS,
                "description": "terminate: a short message saying why; otherwise null.",
            }),
        );
    }
    AnswerSchema {
        name: "hook_decision".into(),
        schema: closed_object(properties),
        strict: true,
    }
}

/// The schema of a task's answer: `reason`, then `outputs`, an object with exactly the
/// declared output keys, each typed as the variable it is mapped to is declared (any JSON
/// value when it is not), or any object when the task declares none. Not strict (untyped
/// values).
pub fn task_schema(req: &TaskRequest) -> AnswerSchema {
    let outputs = if req.outputs.is_empty() {
        json!({
            "type": "object",
            "description": "The task's result, as an object (the task declares no outputs).",
        })
    } else {
        use crate::vocab::VarKind;
        let typed = |k: &String| match req.output_kinds.get(k).copied().unwrap_or(VarKind::Any) {
            VarKind::String => json!({"type": "string"}),
            VarKind::Number => json!({"type": "number"}),
            VarKind::Boolean => json!({"type": "boolean"}),
            VarKind::List => json!({"type": "array"}),
            VarKind::Object => json!({"type": "object"}),
            VarKind::Any => json!({}),
        };
        let properties: Map<String, Value> =
            req.outputs.iter().map(|k| (k.clone(), typed(k))).collect();
        let mut object = closed_object(properties);
        object["description"] = json!(
            "The task's outputs: exactly these keys, each of its type (untyped ones any JSON value)."
        );
        object
    };
    let mut properties = Map::new();
    properties.insert("reason".into(), reason_property());
    properties.insert("outputs".into(), outputs);
    if !req.raises.is_empty() {
        properties.insert(
            "error".into(),
            json!({
                "type": "string",
                "enum": req.raises,
                "description": "Only when the task cannot be done as the policy says: the BPMN \
                    error to raise instead of answering outputs (leave `outputs` out then).",
            }),
        );
    }
    let mut schema = closed_object(properties);
    if !req.raises.is_empty() {
        schema["required"] = json!(["reason"]);
    }
    AnswerSchema {
        name: "task_outputs".into(),
        schema,
        strict: false,
    }
}

// ---------------------------------------------------------------------------------------
// Finding the JSON in a reply
// ---------------------------------------------------------------------------------------

/// The JSON object in a model's reply: the whole reply, else the first fenced block
/// (```` ```json ````) that is one, else the first balanced `{...}` in the prose that
/// parses (strings and escapes respected). A reasoning model's `<think>...</think>`
/// preamble is looked past first. Only objects count.
pub fn extract_json(text: &str) -> Option<Value> {
    match text.rfind("</think>") {
        Some(at) => find_object(&text[at + "</think>".len()..]).or_else(|| find_object(text)),
        None => find_object(text),
    }
}

fn find_object(text: &str) -> Option<Value> {
    parse_object(text)
        .or_else(|| fenced_blocks(text).into_iter().find_map(parse_object))
        .or_else(|| balanced_objects(text).into_iter().find_map(parse_object))
}

fn parse_object(text: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

/// The contents of the ```` ``` ```` fences in `text` (the info string left out).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let Some(close) = body.find("```") else { break };
        blocks.push(&body[..close]);
        rest = &body[close + 3..];
    }
    blocks
}

/// Balanced `{...}` spans of `text`, by start position (strings and escapes respected).
fn balanced_objects(text: &str) -> Vec<&str> {
    text.match_indices('{')
        .take(MAX_CANDIDATES)
        .filter_map(|(start, _)| balanced_end(&text[start..]).map(|end| &text[start..start + end]))
        .collect()
}

/// The length of the balanced object `s` starts with (`s` starts with `{`).
fn balanced_end(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

// ---------------------------------------------------------------------------------------
// Problem statements
// ---------------------------------------------------------------------------------------

/// `A, B, C` (at most [`LISTED_VALUES`], then how many more).
fn one_of(values: &[&str]) -> String {
    if values.is_empty() {
        return "(nothing is offered)".into();
    }
    let mut text = values
        .iter()
        .take(LISTED_VALUES)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if values.len() > LISTED_VALUES {
        text.push_str(&format!(", ... ({} more)", values.len() - LISTED_VALUES));
    }
    text
}

/// An offending value as JSON, cut to a readable length.
fn quoted(v: &Value) -> String {
    cut(&v.to_string(), QUOTED_CHARS)
}

/// `text` cut to `max` characters (an ellipsis marks the cut).
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}...", &text[..at]),
    }
}

/// What is wrong with a model's reply: said back to the model when it is asked again
/// (each names the key and what is offered there), never shown as a decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("the reply is empty: answer with one JSON object")]
    Empty,
    #[error("the reply holds no JSON object: answer with one JSON object and nothing else")]
    NoObject,
    #[error("`{key}` must be a string; got {got}")]
    NotAString { key: String, got: String },
    #[error("`{key}` must be one of {offered}; got {got}")]
    NotOneOf {
        key: String,
        offered: String,
        got: String,
    },
    #[error(
        "missing `reason`: write one sentence on what the policy requires here and \
         which facts decide it (as a JSON string: escape any quotes in it as \\\")"
    )]
    NoReason,
    #[error("missing `{key}`: one of {offered}")]
    Missing { key: &'static str, offered: String },
    #[error("give only `{key}`, not {given}")]
    OnlyOne { key: &'static str, given: String },
    #[error("`{key}` must name {how} of {offered}")]
    NoneChosen {
        key: String,
        how: &'static str,
        offered: String,
    },
    #[error("choose exactly one flow: `{key}` names {n} ({flows}); give one of {offered}")]
    MoreThanOne {
        key: String,
        n: usize,
        flows: String,
        offered: String,
    },
    #[error("`action` must be one of {offered}; got {got} (`{action}` is not permitted here)")]
    NotPermitted {
        offered: String,
        got: String,
        action: HookAction,
    },
    #[error("`{action}` needs `{argument}`: one of {offered}")]
    NeedsArgument {
        action: HookAction,
        argument: &'static str,
        offered: String,
    },
    #[error(
        "`skip_to` may not name {got} (the flow goes there anyway): answer `continue`, or \
         skip_to one of {offered}"
    )]
    SkipToItsTarget { got: String, offered: String },
    #[error("`swap_nodes` needs `swap`: two different nodes of {offered}")]
    NoSwap { offered: String },
    #[error("`swap` must be a list of two different nodes of {offered}; got {got}")]
    SwapNotAPair { offered: String, got: String },
    #[error("`swap` must name two different nodes; got \"{0}\" twice")]
    SwapSame(String),
    #[error("{0}")]
    StateUpdates(String),
    #[error("`state_updates` must be an object (variable: value); got {got}")]
    StateUpdatesNotAnObject { got: String },
    #[error("`error` is not an answer here: answer `outputs`")]
    NoErrorHere,
    #[error("missing `outputs`: an object with the keys {keys}")]
    NoOutputs { keys: String },
    #[error("`outputs` must be an object with the keys {keys}; got {got}")]
    OutputsNotAnObject { keys: String, got: String },
    #[error("`outputs` is missing {missing} (it must hold {keys})")]
    OutputsMissing { missing: String, keys: String },
    #[error("output `{key}` must be {kind}; got {got}")]
    OutputKind {
        key: String,
        kind: &'static str,
        got: String,
    },
}

type Object = Map<String, Value>;

/// The reply's JSON object, or the problem.
fn reply_object(text: &str) -> Result<Object, ReplyError> {
    if text.trim().is_empty() {
        return Err(ReplyError::Empty);
    }
    match extract_json(text) {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(ReplyError::NoObject),
    }
}

/// A free-text value (`reason`, `message`): trimmed, cut to [`REASON_MAX_CHARS`]; empty
/// or null is none.
fn text_of(obj: &Object, key: &str) -> Result<Option<String>, ReplyError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            Ok((!s.is_empty()).then(|| cut(s, REASON_MAX_CHARS)))
        }
        Some(other) => Err(ReplyError::NotAString {
            key: key.to_string(),
            got: quoted(other),
        }),
    }
}

/// A value that must name one of `offered` (trimmed).
fn offered_str<'a>(key: &str, v: &'a Value, offered: &[&str]) -> Result<&'a str, ReplyError> {
    let Value::String(s) = v else {
        return Err(ReplyError::NotOneOf {
            key: key.to_string(),
            offered: one_of(offered),
            got: quoted(v),
        });
    };
    let s = s.trim();
    if offered.contains(&s) {
        Ok(s)
    } else {
        Err(ReplyError::NotOneOf {
            key: key.to_string(),
            offered: one_of(offered),
            got: quoted(&Value::String(s.to_string())),
        })
    }
}

/// An answer that carries its reason.
pub trait Reasoned {
    fn reason(&self) -> Option<&str>;
}

impl Reasoned for GatewayAnswer {
    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

impl Reasoned for HookAnswer {
    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

impl Reasoned for TaskAnswer {
    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

/// A model's answer must say why: one without a `reason` (missing, empty, or lost to a
/// reply that parsed only in part) is re-asked, never recorded without one.
pub fn reasoned<A: Reasoned>(answer: A) -> Result<A, ReplyError> {
    match answer.reason() {
        Some(r) if !r.trim().is_empty() => Ok(answer),
        _ => Err(ReplyError::NoReason),
    }
}

// ---------------------------------------------------------------------------------------
// Gateways
// ---------------------------------------------------------------------------------------

/// A gateway's answer from a reply: `flow` (`choice` is read as `flow`; a one-item list is
/// accepted), or `flows` for an inclusive gateway (a single string is accepted; repeats
/// count once). Every flow must be offered.
pub fn parse_gateway(req: &GatewayRequest, text: &str) -> Result<GatewayAnswer, ReplyError> {
    let obj = reply_object(text)?;
    let offered = flow_ids(req);
    let (key, value) = flow_value(&obj, req.multiple, &offered)?;
    let flows = chosen_flows(key, value, &offered, req.multiple)?;
    Ok(GatewayAnswer {
        flows,
        reason: text_of(&obj, "reason")?,
        decided_by: Decider::Model,
    })
}

/// The key that holds the choice, and its value.
fn flow_value<'a>(
    obj: &'a Object,
    multiple: bool,
    offered: &[&str],
) -> Result<(&'static str, &'a Value), ReplyError> {
    let keys: [&'static str; 3] = if multiple {
        ["flows", "flow", "choice"]
    } else {
        ["flow", "choice", "flows"]
    };
    let present: Vec<(&'static str, &Value)> = keys
        .iter()
        .filter_map(|k| obj.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)))
        .collect();
    match present.as_slice() {
        [] => Err(ReplyError::Missing {
            key: keys[0],
            offered: one_of(offered),
        }),
        [one] => Ok(*one),
        more => {
            let names: Vec<String> = more.iter().map(|(k, _)| format!("`{k}`")).collect();
            Err(ReplyError::OnlyOne {
                key: keys[0],
                given: names.join(" and "),
            })
        }
    }
}

fn chosen_flows(
    key: &str,
    value: &Value,
    offered: &[&str],
    multiple: bool,
) -> Result<Vec<String>, ReplyError> {
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let mut flows: Vec<String> = Vec::new();
    for item in items {
        let id = offered_str(key, item, offered)?;
        if !flows.iter().any(|f| f == id) {
            flows.push(id.to_string());
        }
    }
    match flows.len() {
        0 => Err(ReplyError::NoneChosen {
            key: key.to_string(),
            how: if multiple { "at least one" } else { "one" },
            offered: one_of(offered),
        }),
        1 => Ok(flows),
        n if !multiple => Err(ReplyError::MoreThanOne {
            key: key.to_string(),
            n,
            flows: flows.join(", "),
            offered: one_of(offered),
        }),
        _ => Ok(flows),
    }
}

// ---------------------------------------------------------------------------------------
// Hooks
// ---------------------------------------------------------------------------------------

/// A hook's answer from a reply: `action` (any case) among the offered actions, with its
/// argument: `target` (skip_to, remove_node) among the allowed targets, `swap`
/// (swap_nodes) two different allowed targets, `add` (add_node) an insertable task id
/// (or `{"id": ...}`). Arguments of other actions are ignored. `message` is a string or
/// null; `state_updates`, when present, an object.
pub fn parse_hook(req: &HookRequest, text: &str) -> Result<HookAnswer, ReplyError> {
    let obj = reply_object(text)?;
    let offered = offered_actions(req);
    let action = action_of(&obj, &offered)?;
    let mut answer = HookAnswer::action(action, Decider::Model);
    match action {
        HookAction::SkipTo | HookAction::RemoveNode => {
            answer.target = Some(target_of(req, &obj, action)?);
        }
        HookAction::SwapNodes => answer.swap = Some(swap_of(req, &obj)?),
        HookAction::AddNode => answer.add = Some(AddTask::Insertable(add_of(req, &obj)?)),
        HookAction::Continue | HookAction::SkipNode | HookAction::Terminate => {}
    }
    answer.message = text_of(&obj, "message")?;
    answer.state_updates = state_updates_of(req, &obj)?;
    answer.reason = text_of(&obj, "reason")?;
    Ok(answer)
}

fn action_of(obj: &Object, offered: &[HookAction]) -> Result<HookAction, ReplyError> {
    let names: Vec<&str> = offered.iter().map(|a| a.as_str()).collect();
    let value = match obj.get("action") {
        None | Some(Value::Null) => {
            return Err(ReplyError::Missing {
                key: "action",
                offered: one_of(&names),
            });
        }
        Some(v) => v,
    };
    let parsed = value.as_str().and_then(|s| s.parse::<HookAction>().ok());
    match parsed {
        Some(a) if offered.contains(&a) => Ok(a),
        Some(a) => Err(ReplyError::NotPermitted {
            offered: one_of(&names),
            got: quoted(value),
            action: a,
        }),
        None => Err(ReplyError::NotOneOf {
            key: "action".to_string(),
            offered: one_of(&names),
            got: quoted(value),
        }),
    }
}

fn target_of(req: &HookRequest, obj: &Object, action: HookAction) -> Result<String, ReplyError> {
    let targets = if action == HookAction::SkipTo {
        skip_target_ids(req)
    } else {
        target_ids(req)
    };
    match obj.get("target") {
        None | Some(Value::Null) => Err(ReplyError::NeedsArgument {
            action,
            argument: "target",
            offered: one_of(&targets),
        }),
        Some(v)
            if action == HookAction::SkipTo
                && v.as_str().is_some()
                && v.as_str() == req.flow_target.as_deref() =>
        {
            Err(ReplyError::SkipToItsTarget {
                got: quoted(v),
                offered: one_of(&targets),
            })
        }
        Some(v) => offered_str("target", v, &targets).map(str::to_string),
    }
}

fn swap_of(req: &HookRequest, obj: &Object) -> Result<(String, String), ReplyError> {
    let targets = target_ids(req);
    let value = match obj.get("swap") {
        None | Some(Value::Null) => {
            return Err(ReplyError::NoSwap {
                offered: one_of(&targets),
            });
        }
        Some(v) => v,
    };
    let Some([a, b]) = value.as_array().map(Vec::as_slice) else {
        return Err(ReplyError::SwapNotAPair {
            offered: one_of(&targets),
            got: quoted(value),
        });
    };
    let a = offered_str("swap", a, &targets)?;
    let b = offered_str("swap", b, &targets)?;
    if a == b {
        return Err(ReplyError::SwapSame(a.to_string()));
    }
    Ok((a.to_string(), b.to_string()))
}

fn add_of(req: &HookRequest, obj: &Object) -> Result<String, ReplyError> {
    let tasks = insertable_ids(req);
    let value = match obj.get("add") {
        None | Some(Value::Null) => {
            return Err(ReplyError::NeedsArgument {
                action: HookAction::AddNode,
                argument: "add",
                offered: one_of(&tasks),
            });
        }
        Some(Value::Object(task)) => task.get("id").unwrap_or(&Value::Null),
        Some(v) => v,
    };
    offered_str("add", value, &tasks).map(str::to_string)
}

/// `state_updates`: only the request's settable variables, each of its kind; a null value
/// leaves the variable as it is.
fn state_updates_of(req: &HookRequest, obj: &Object) -> Result<Variables, ReplyError> {
    match obj.get("state_updates") {
        None | Some(Value::Null) => Ok(Variables::new()),
        Some(Value::Object(m)) => {
            let set: Variables = m
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            crate::vocab::check_state_updates(&req.settable, &set)
                .map_err(ReplyError::StateUpdates)?;
            Ok(set)
        }
        Some(other) => Err(ReplyError::StateUpdatesNotAnObject { got: quoted(other) }),
    }
}

// ---------------------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------------------

/// A task's answer from a reply: `outputs` must hold every declared output (other keys
/// are dropped). Accepted too: the declared outputs at the top level, next to `reason`.
/// A task that declares no outputs takes `outputs` as it is (any object), or else the
/// reply's other top-level keys.
pub fn parse_task(req: &TaskRequest, text: &str) -> Result<TaskAnswer, ReplyError> {
    let obj = reply_object(text)?;
    let reason = text_of(&obj, "reason")?;
    if let Some(error) = obj.get("error").filter(|v| !v.is_null()) {
        // Only the codes the task's `raises` offers; a model offered none raises none.
        let offered: Vec<&str> = req.raises.iter().map(String::as_str).collect();
        let code = error.as_str().filter(|c| offered.contains(c));
        let Some(code) = code else {
            return Err(if offered.is_empty() {
                ReplyError::NoErrorHere
            } else {
                ReplyError::NotOneOf {
                    key: "error".to_string(),
                    offered: one_of(&offered),
                    got: quoted(error),
                }
            });
        };
        return Ok(TaskAnswer {
            outputs: Variables::new(),
            reason,
            decided_by: Decider::Model,
            raised: Some(crate::vocab::RaisedError {
                code: code.to_string(),
                message: None,
            }),
        });
    }
    let outputs = outputs_of(req, &obj)?;
    Ok(TaskAnswer {
        outputs,
        reason,
        decided_by: Decider::Model,
        raised: None,
    })
}

fn outputs_of(req: &TaskRequest, obj: &Object) -> Result<Variables, ReplyError> {
    let declared = &req.outputs;
    let keys: Vec<&str> = declared.iter().map(String::as_str).collect();
    let given: &Object = match obj.get("outputs") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => {
            let at_top = !keys.contains(&"reason") && keys.iter().all(|k| obj.contains_key(*k));
            if declared.is_empty() {
                let rest = obj.iter().filter(|(k, _)| k.as_str() != "reason");
                return Ok(rest.map(|(k, v)| (k.clone(), v.clone())).collect());
            }
            if !at_top {
                return Err(ReplyError::NoOutputs {
                    keys: one_of(&keys),
                });
            }
            obj
        }
        Some(other) => {
            return Err(ReplyError::OutputsNotAnObject {
                keys: if keys.is_empty() {
                    "you choose".to_string()
                } else {
                    one_of(&keys)
                },
                got: quoted(other),
            });
        }
    };
    if declared.is_empty() {
        return Ok(given.clone());
    }
    let missing: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| !given.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(ReplyError::OutputsMissing {
            missing: one_of(&missing),
            keys: one_of(&keys),
        });
    }
    // Each output of its declared kind (a wrong one is asked again, not failed).
    for key in declared {
        let (Some(kind), Some(value)) = (req.output_kinds.get(key), given.get(key)) else {
            continue;
        };
        if !kind.admits_output(value) {
            return Err(ReplyError::OutputKind {
                key: key.clone(),
                kind: kind.described(),
                got: quoted(value),
            });
        }
    }
    Ok(declared
        .iter()
        .filter_map(|k| given.get(k).map(|v| (k.clone(), v.clone())))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpmn::GatewayKind;
    use crate::bridge::{ControlPointContext, FlowOption, NewTask};
    use crate::vocab::{Settable, VarKind};
    use proptest::prelude::*;

    fn flow(id: &str) -> FlowOption {
        FlowOption {
            id: id.into(),
            target: format!("T_{id}"),
            ..Default::default()
        }
    }

    fn gateway(multiple: bool) -> GatewayRequest {
        GatewayRequest {
            gateway_id: "G".into(),
            name: None,
            kind: if multiple {
                GatewayKind::Inclusive
            } else {
                GatewayKind::Exclusive
            },
            policy: None,
            condition: None,
            condition_truth: None,
            flows: vec![flow("Flow_a"), flow("Flow_b"), flow("Flow_c")],
            evaluations: vec![],
            multiple,
            escalation: None,
            context: ControlPointContext::default(),
            calls: Default::default(),
            approvers: None,
        }
    }

    fn hook(permitted: &[HookAction]) -> HookRequest {
        HookRequest {
            hook_id: "H".into(),
            flow_id: "F".into(),
            name: None,
            policy: None,
            instruction: None,
            permitted: permitted.to_vec(),
            allowed_targets: vec!["A".into(), "B".into(), "C".into()],
            flow_target: None,
            settable: vec![],
            insertable_tasks: vec![NewTask {
                id: "Review".into(),
                ..Default::default()
            }],
            escalation: None,
            context: ControlPointContext::default(),
            calls: Default::default(),
        }
    }

    fn all_hook() -> HookRequest {
        hook(&HookAction::ALL)
    }

    fn task(outputs: &[&str]) -> TaskRequest {
        TaskRequest {
            raises: Vec::new(),
            task_id: "T".into(),
            name: None,
            agent: None,
            instruction: None,
            policy: None,
            inputs: Variables::new(),
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
            output_kinds: Default::default(),
            context: ControlPointContext::default(),
            calls: Default::default(),
            tools: Default::default(),
        }
    }

    fn keys(schema: &Value) -> Vec<&str> {
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    // -- schemas --------------------------------------------------------------------------

    #[test]
    fn gateway_schema_puts_reason_first_and_enumerates_the_flows() {
        let s = gateway_schema(&gateway(false));
        assert!(s.strict);
        assert_eq!(s.name, "gateway_choice");
        assert_eq!(keys(&s.schema), vec!["reason", "flow"]);
        assert_eq!(s.schema["required"], json!(["reason", "flow"]));
        assert_eq!(s.schema["additionalProperties"], json!(false));
        assert_eq!(
            s.schema["properties"]["flow"]["enum"],
            json!(["Flow_a", "Flow_b", "Flow_c"])
        );
        let m = gateway_schema(&gateway(true));
        assert_eq!(keys(&m.schema), vec!["reason", "flows"]);
        assert_eq!(m.schema["properties"]["flows"]["minItems"], json!(1));
        assert_eq!(
            m.schema["properties"]["flows"]["items"]["enum"],
            json!(["Flow_a", "Flow_b", "Flow_c"])
        );
    }

    /// Keywords OpenAI's strict mode rejects, and the rules it imposes on objects.
    fn assert_strict_compatible(v: &Value) {
        check_strict(&crate::reason::llm::client::strict_subset(v));
    }

    fn check_strict(v: &Value) {
        match v {
            Value::Object(m) => {
                for bad in ["maxLength", "minLength", "uniqueItems", "patternProperties"] {
                    assert!(!m.contains_key(bad), "`{bad}` in strict schema: {v}");
                }
                if m.get("type") == Some(&json!("object")) {
                    assert_eq!(m["additionalProperties"], json!(false), "{v}");
                    let props: Vec<&String> = m["properties"].as_object().unwrap().keys().collect();
                    assert_eq!(m["required"], json!(props), "{v}");
                }
                m.values().for_each(check_strict);
            }
            Value::Array(items) => items.iter().for_each(check_strict),
            _ => {}
        }
    }

    #[test]
    fn strict_schemas_use_only_strict_keywords() {
        for s in [
            gateway_schema(&gateway(false)),
            gateway_schema(&gateway(true)),
        ] {
            assert_strict_compatible(&s.schema);
        }
        let h = hook_schema(&all_hook());
        assert!(h.strict);
        assert_strict_compatible(&h.schema);
    }

    #[test]
    fn a_model_answer_without_a_usable_reason_is_asked_again() {
        let req = hook(&[HookAction::Continue, HookAction::Terminate]);
        for reply in [
            r#"{"action": "continue"}"#,
            r#"{"action": "continue", "reason": "  "}"#,
            r#"{"action": "continue", "reason": null}"#,
        ] {
            let e = parse_hook(&req, reply)
                .and_then(reasoned)
                .unwrap_err()
                .to_string();
            assert!(e.contains("missing `reason`"), "{reply}: {e}");
        }
        // unescaped quotes: not JSON, asked again (never kept with an empty reason)
        let broken = r#"{"reason": "the applicant "Eve" is fine", "action": "continue"}"#;
        assert!(parse_hook(&req, broken).and_then(reasoned).is_err());
        let ok = parse_hook(&req, r#"{"reason": "fine", "action": "continue"}"#)
            .and_then(reasoned)
            .unwrap();
        assert_eq!(ok.reason.as_deref(), Some("fine"));
    }

    #[test]
    fn skip_to_never_offers_the_hooked_flows_own_target() {
        let mut req = hook(&[HookAction::Continue, HookAction::SkipTo]);
        req.flow_target = Some("A".into());
        let s = hook_schema(&req);
        assert_eq!(
            s.schema["properties"]["target"]["anyOf"][0]["enum"],
            json!(["B", "C"])
        );
        let e = parse_hook(&req, r#"{"action": "skip_to", "target": "A"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("the flow goes there anyway"), "{e}");
        // with remove_node offered too, A is listed (for remove_node) and skip_to still
        // may not name it
        let mut req = hook(&[
            HookAction::Continue,
            HookAction::SkipTo,
            HookAction::RemoveNode,
        ]);
        req.flow_target = Some("A".into());
        let s = hook_schema(&req);
        assert_eq!(
            s.schema["properties"]["target"]["anyOf"][0]["enum"],
            json!(["A", "B", "C"])
        );
        assert!(parse_hook(&req, r#"{"action": "skip_to", "target": "A"}"#).is_err());
        assert!(parse_hook(&req, r#"{"action": "remove_node", "target": "A"}"#).is_ok());
        // only the flow's own target left: skip_to is not offered at all
        let mut req = hook(&[HookAction::Continue, HookAction::SkipTo]);
        req.allowed_targets = vec!["A".into()];
        req.flow_target = Some("A".into());
        assert_eq!(offered_actions(&req), vec![HookAction::Continue]);
    }

    #[test]
    fn state_updates_are_offered_typed_and_only_for_what_the_hook_may_set() {
        let mut req = hook(&[HookAction::Continue]);
        let s = hook_schema(&req);
        assert!(!keys(&s.schema).contains(&"state_updates"));
        req.settable = vec![
            Settable {
                name: "ticket_id".into(),
                kind: VarKind::String,
            },
            Settable {
                name: "score".into(),
                kind: VarKind::Number,
            },
        ];
        let s = hook_schema(&req);
        let updates = &s.schema["properties"]["state_updates"]["anyOf"][0];
        assert_eq!(updates["additionalProperties"], json!(false));
        assert_eq!(
            updates["properties"]["ticket_id"]["anyOf"][0],
            json!({"type": "string"})
        );
        assert_eq!(updates["required"], json!(["ticket_id", "score"]));
        let ok = parse_hook(
            &req,
            r#"{"action": "continue", "state_updates": {"ticket_id": "INC-1", "score": null}}"#,
        )
        .unwrap();
        assert_eq!(
            ok.state_updates,
            json!({"ticket_id": "INC-1"}).as_object().unwrap().clone()
        );
        for (reply, problem) in [
            (
                r#"{"action": "continue", "state_updates": {"approved": true}}"#,
                "may set only ticket_id, score; got `approved`",
            ),
            (
                r#"{"action": "continue", "state_updates": {"score": "lots"}}"#,
                "`state_updates.score` must be a number",
            ),
        ] {
            let e = parse_hook(&req, reply).unwrap_err().to_string();
            assert!(e.contains(problem), "{reply}: {e}");
        }
    }

    #[test]
    fn hook_schema_offers_only_the_arguments_of_offered_actions() {
        let s = hook_schema(&all_hook());
        assert_eq!(
            keys(&s.schema),
            vec!["reason", "action", "target", "swap", "add", "message"]
        );
        assert_eq!(
            s.schema["properties"]["action"]["enum"],
            json!([
                "continue",
                "skip_node",
                "skip_to",
                "swap_nodes",
                "terminate",
                "remove_node",
                "add_node"
            ])
        );
        assert_eq!(
            s.schema["properties"]["target"]["anyOf"][0]["enum"],
            json!(["A", "B", "C"])
        );
        assert_eq!(
            s.schema["properties"]["add"]["anyOf"][0]["enum"],
            json!(["Review"])
        );
        let s = hook_schema(&hook(&[HookAction::Continue, HookAction::Terminate]));
        assert_eq!(keys(&s.schema), vec!["reason", "action", "message"]);
        let s = hook_schema(&hook(&[HookAction::Continue, HookAction::SkipNode]));
        assert_eq!(keys(&s.schema), vec!["reason", "action"]);
        // an action that cannot be taken now is not offered
        let mut req = hook(&[
            HookAction::Continue,
            HookAction::SwapNodes,
            HookAction::AddNode,
        ]);
        req.allowed_targets = vec!["A".into()];
        req.insertable_tasks.clear();
        assert_eq!(offered_actions(&req), vec![HookAction::Continue]);
        assert_eq!(keys(&hook_schema(&req).schema), vec!["reason", "action"]);
    }

    #[test]
    fn enums_list_each_value_once() {
        let mut req = hook(&[
            HookAction::Continue,
            HookAction::SkipTo,
            HookAction::SwapNodes,
        ]);
        req.allowed_targets = vec!["A".into(), "A".into()];
        // two entries but one node: nothing to swap
        assert_eq!(
            offered_actions(&req),
            vec![HookAction::Continue, HookAction::SkipTo]
        );
        let s = hook_schema(&req);
        assert_eq!(
            s.schema["properties"]["target"]["anyOf"][0]["enum"],
            json!(["A"])
        );
    }

    #[test]
    fn task_schema_requires_exactly_the_declared_outputs() {
        let s = task_schema(&task(&["score", "summary"]));
        assert!(!s.strict);
        assert_eq!(keys(&s.schema), vec!["reason", "outputs"]);
        let outputs = &s.schema["properties"]["outputs"];
        assert_eq!(outputs["required"], json!(["score", "summary"]));
        assert_eq!(outputs["additionalProperties"], json!(false));
        let free = task_schema(&task(&[]));
        assert_eq!(
            free.schema["properties"]["outputs"]["type"],
            json!("object")
        );
        assert!(
            free.schema["properties"]["outputs"]
                .get("required")
                .is_none()
        );
    }

    /// A task whose `raises` lists codes offers them (only them) as `error`; a model
    /// offered none may not raise one.
    #[test]
    fn a_model_raises_only_the_codes_its_task_offers() {
        let mut req = task(&["receipt"]);
        assert!(
            task_schema(&req).schema["properties"]
                .get("error")
                .is_none()
        );
        let refused = parse_task(&req, r#"{"reason": "declined", "error": "PAYMENT_FAILED"}"#);
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("not an answer here")
        );

        req.raises = vec!["PAYMENT_FAILED".into(), "FRAUD".into()];
        let s = task_schema(&req);
        assert_eq!(
            s.schema["properties"]["error"]["enum"],
            json!(["PAYMENT_FAILED", "FRAUD"])
        );
        assert_eq!(s.schema["required"], json!(["reason"]));
        let a = parse_task(&req, r#"{"reason": "declined", "error": "PAYMENT_FAILED"}"#).unwrap();
        assert_eq!(a.raised.map(|e| e.code).as_deref(), Some("PAYMENT_FAILED"));
        assert!(a.outputs.is_empty());
        let other = parse_task(&req, r#"{"reason": "x", "error": "OTHER"}"#)
            .unwrap_err()
            .to_string();
        assert!(other.contains("`error` must be one of"), "{other}");
        // No error: the outputs are required as before.
        let a = parse_task(
            &req,
            r#"{"reason": "paid", "outputs": {"receipt": "R1"}, "error": null}"#,
        )
        .unwrap();
        assert_eq!(a.raised, None);
        assert!(parse_task(&req, r#"{"reason": "paid"}"#).is_err());
    }

    // -- extraction -----------------------------------------------------------------------

    #[test]
    fn extracts_plain_fenced_and_embedded_json() {
        let want = json!({"flow": "Flow_a"});
        assert_eq!(
            extract_json("  {\"flow\": \"Flow_a\"}\n"),
            Some(want.clone())
        );
        assert_eq!(
            extract_json("Here you go:\n```json\n{\"flow\": \"Flow_a\"}\n```\nDone."),
            Some(want.clone())
        );
        assert_eq!(
            extract_json("```\n{\"flow\": \"Flow_a\"}\n```"),
            Some(want.clone())
        );
        assert_eq!(
            extract_json("I pick {\"flow\": \"Flow_a\"} because {reasons}."),
            Some(want.clone())
        );
        // braces and quotes inside strings do not end the object
        let tricky = r#"Answer: {"reason": "a } and a \" and {", "flow": "Flow_a"} ok"#;
        assert_eq!(
            extract_json(tricky).unwrap()["reason"],
            json!("a } and a \" and {")
        );
        // prose braces that are not JSON are skipped
        assert_eq!(
            extract_json("{not json} then {\"flow\": \"Flow_a\"}"),
            Some(want.clone())
        );
        // a reasoning preamble is looked past
        assert_eq!(
            extract_json("<think>maybe {\"flow\": \"Flow_b\"}?</think>{\"flow\": \"Flow_a\"}"),
            Some(want)
        );
        for none in ["", "no json", "[1, 2]", "\"text\"", "{\"open\": ", "}{"] {
            assert_eq!(extract_json(none), None, "{none}");
        }
    }

    // -- gateways -------------------------------------------------------------------------

    #[test]
    fn gateway_answers_name_an_offered_flow() {
        let req = gateway(false);
        let a =
            parse_gateway(&req, r#"{"reason": "  policy says A  ", "flow": "Flow_a"}"#).unwrap();
        assert_eq!(a.flows, vec!["Flow_a"]);
        assert_eq!(a.reason.as_deref(), Some("policy says A"));
        assert_eq!(a.decided_by, Decider::Model);
        let err = parse_gateway(&req, r#"{"reason": "x", "flow": "Flow_x"}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "`flow` must be one of Flow_a, Flow_b, Flow_c; got \"Flow_x\""
        );
    }

    #[test]
    fn gateway_leniencies() {
        let req = gateway(false);
        for text in [
            r#"{"choice": "Flow_b"}"#,
            r#"{"flow": ["Flow_b"]}"#,
            r#"{"flow": " Flow_b "}"#,
            r#"{"flows": ["Flow_b", "Flow_b"]}"#,
            "```json\n{\"reason\": \"r\", \"flow\": \"Flow_b\"}\n```",
        ] {
            assert_eq!(
                parse_gateway(&req, text).unwrap().flows,
                vec!["Flow_b"],
                "{text}"
            );
        }
        let multi = gateway(true);
        assert_eq!(
            parse_gateway(&multi, r#"{"flows": "Flow_c"}"#)
                .unwrap()
                .flows,
            vec!["Flow_c"]
        );
        assert_eq!(
            parse_gateway(&multi, r#"{"flows": ["Flow_c", "Flow_a", "Flow_c"]}"#)
                .unwrap()
                .flows,
            vec!["Flow_c", "Flow_a"]
        );
    }

    #[test]
    fn gateway_rejections() {
        let req = gateway(false);
        let cases = [
            ("", "the reply is empty"),
            ("I choose Flow_a", "holds no JSON object"),
            (
                r#"{"reason": "x"}"#,
                "missing `flow`: one of Flow_a, Flow_b, Flow_c",
            ),
            (
                r#"{"flow": 3}"#,
                "`flow` must be one of Flow_a, Flow_b, Flow_c; got 3",
            ),
            (r#"{"flow": "flow_a"}"#, "got \"flow_a\""),
            (
                r#"{"flow": ["Flow_a", "Flow_b"]}"#,
                "choose exactly one flow",
            ),
            (r#"{"flow": []}"#, "`flow` must name one of"),
            (
                r#"{"flow": "Flow_a", "choice": "Flow_b"}"#,
                "give only `flow`",
            ),
            (
                r#"{"flow": "Flow_a", "reason": 7}"#,
                "`reason` must be a string",
            ),
        ];
        for (text, want) in cases {
            let err = parse_gateway(&req, text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
        let multi = gateway(true);
        let err = parse_gateway(&multi, r#"{"flows": ["Flow_a", "Nope"]}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "`flows` must be one of Flow_a, Flow_b, Flow_c; got \"Nope\""
        );
        let err = parse_gateway(&multi, r#"{"flows": []}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("at least one"), "{err}");
    }

    #[test]
    fn a_long_reason_is_cut() {
        let long = "x".repeat(2000);
        let text = json!({"reason": long, "flow": "Flow_a"}).to_string();
        let reason = parse_gateway(&gateway(false), &text)
            .unwrap()
            .reason
            .unwrap();
        assert_eq!(reason.chars().count(), REASON_MAX_CHARS + 3);
        let empty = parse_gateway(&gateway(false), r#"{"reason": "  ", "flow": "Flow_a"}"#);
        assert_eq!(empty.unwrap().reason, None);
    }

    // -- hooks ----------------------------------------------------------------------------

    #[test]
    fn hook_answers_with_their_arguments() {
        let mut req = all_hook();
        req.settable = vec![Settable {
            name: "flag".into(),
            kind: VarKind::Boolean,
        }];
        let a = parse_hook(
            &req,
            r#"{"reason": "r", "action": "SKIP_TO", "target": "B"}"#,
        )
        .unwrap();
        assert_eq!(
            (a.action, a.target.as_deref()),
            (HookAction::SkipTo, Some("B"))
        );
        assert_eq!(a.decided_by, Decider::Model);
        let a = parse_hook(&req, r#"{"action": "swap_nodes", "swap": ["C", "A"]}"#).unwrap();
        assert_eq!(a.swap, Some(("C".into(), "A".into())));
        let a = parse_hook(&req, r#"{"action": "add_node", "add": "Review"}"#).unwrap();
        assert_eq!(a.add, Some(AddTask::Insertable("Review".into())));
        let a = parse_hook(&req, r#"{"action": "add_node", "add": {"id": "Review"}}"#).unwrap();
        assert_eq!(a.add, Some(AddTask::Insertable("Review".into())));
        let a = parse_hook(
            &req,
            r#"{"action": "terminate", "message": "fraud", "state_updates": {"flag": true}}"#,
        )
        .unwrap();
        assert_eq!(a.message.as_deref(), Some("fraud"));
        assert_eq!(a.state_updates["flag"], json!(true));
        // arguments of other actions are ignored, whatever they say
        let a = parse_hook(
            &req,
            r#"{"action": "continue", "target": "Nowhere", "swap": 3, "add": "X"}"#,
        )
        .unwrap();
        assert_eq!(a, HookAnswer::action(HookAction::Continue, Decider::Model));
    }

    #[test]
    fn hook_rejections() {
        let req = hook(&[
            HookAction::Continue,
            HookAction::SkipTo,
            HookAction::SwapNodes,
            HookAction::AddNode,
            HookAction::RemoveNode,
        ]);
        let cases = [
            (
                r#"{"reason": "r"}"#,
                "missing `action`: one of continue, skip_to, swap_nodes, add_node, remove_node",
            ),
            (
                r#"{"action": "jump"}"#,
                "`action` must be one of continue, skip_to, swap_nodes, add_node, remove_node; got \"jump\"",
            ),
            (
                r#"{"action": "terminate"}"#,
                "got \"terminate\" (`terminate` is not permitted here)",
            ),
            (r#"{"action": 1}"#, "`action` must be one of"),
            (
                r#"{"action": "skip_to"}"#,
                "`skip_to` needs `target`: one of A, B, C",
            ),
            (
                r#"{"action": "remove_node", "target": null}"#,
                "`remove_node` needs `target`",
            ),
            (
                r#"{"action": "skip_to", "target": "Z"}"#,
                "`target` must be one of A, B, C; got \"Z\"",
            ),
            (
                r#"{"action": "skip_to", "target": ["A"]}"#,
                "`target` must be one of A, B, C; got [\"A\"]",
            ),
            (
                r#"{"action": "swap_nodes"}"#,
                "`swap_nodes` needs `swap`: two different nodes of A, B, C",
            ),
            (
                r#"{"action": "swap_nodes", "swap": ["A"]}"#,
                "`swap` must be a list of two different nodes",
            ),
            (
                r#"{"action": "swap_nodes", "swap": ["A", "B", "C"]}"#,
                "`swap` must be a list",
            ),
            (
                r#"{"action": "swap_nodes", "swap": ["A", "A"]}"#,
                "got \"A\" twice",
            ),
            (
                r#"{"action": "swap_nodes", "swap": ["A", "Z"]}"#,
                "`swap` must be one of A, B, C; got \"Z\"",
            ),
            (
                r#"{"action": "add_node"}"#,
                "`add_node` needs `add`: one of Review",
            ),
            (
                r#"{"action": "add_node", "add": "Invented"}"#,
                "`add` must be one of Review; got \"Invented\"",
            ),
            (
                r#"{"action": "add_node", "add": {"id": "Invented", "instruction": "x"}}"#,
                "got \"Invented\"",
            ),
            (
                r#"{"action": "add_node", "add": {"name": "Review"}}"#,
                "`add` must be one of Review; got null",
            ),
            (
                r#"{"action": "continue", "state_updates": [1]}"#,
                "`state_updates` must be an object",
            ),
            (
                r#"{"action": "continue", "message": {"a": 1}}"#,
                "`message` must be a string",
            ),
        ];
        for (text, want) in cases {
            let err = parse_hook(&req, text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn a_permitted_action_without_anything_to_name_is_not_offered() {
        let mut req = hook(&[HookAction::Continue, HookAction::SkipTo]);
        req.allowed_targets.clear();
        let err = parse_hook(&req, r#"{"action": "skip_to", "target": "A"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not permitted here"), "{err}");
    }

    // -- tasks ----------------------------------------------------------------------------

    #[test]
    fn task_answers_hold_the_declared_outputs() {
        let req = task(&["score", "summary"]);
        let a = parse_task(
            &req,
            r#"{"reason": "r", "outputs": {"summary": "ok", "score": 0.8, "extra": 1}}"#,
        )
        .unwrap();
        assert_eq!(
            Value::Object(a.outputs.clone()),
            json!({"score": 0.8, "summary": "ok"})
        );
        assert_eq!(
            a.outputs.keys().collect::<Vec<_>>(),
            vec!["score", "summary"]
        );
        assert_eq!(a.decided_by, Decider::Model);
        // at the top level (null: not known)
        let a = parse_task(&req, r#"{"reason": "r", "score": 1, "summary": null}"#).unwrap();
        assert_eq!(
            Value::Object(a.outputs),
            json!({"score": 1, "summary": null})
        );
        // an output of another kind than its variable's is asked again
        let mut typed = task(&["score"]);
        typed.output_kinds.insert("score".into(), VarKind::Number);
        let wrong = parse_task(&typed, r#"{"reason": "r", "outputs": {"score": "high"}}"#);
        assert_eq!(
            wrong.unwrap_err().to_string(),
            "output `score` must be a number; got \"high\""
        );
        // no declared outputs: any object
        let free = task(&[]);
        let a = parse_task(&free, r#"{"outputs": {"result": [1]}}"#).unwrap();
        assert_eq!(Value::Object(a.outputs), json!({"result": [1]}));
        let a = parse_task(&free, r#"{"reason": "r", "result": "done"}"#).unwrap();
        assert_eq!(Value::Object(a.outputs), json!({"result": "done"}));
    }

    #[test]
    fn task_rejections() {
        let req = task(&["score", "summary"]);
        let cases = [
            (
                r#"{"reason": "r", "outputs": {"score": 1}}"#,
                "`outputs` is missing summary (it must hold score, summary)",
            ),
            (
                r#"{"reason": "r", "score": 1}"#,
                "missing `outputs`: an object with the keys score, summary",
            ),
            (
                r#"{"outputs": [1, 2]}"#,
                "`outputs` must be an object with the keys score, summary; got [1,2]",
            ),
            (r#"{"outputs": "score=1"}"#, "`outputs` must be an object"),
        ];
        for (text, want) in cases {
            let err = parse_task(&req, text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    // -- whatever the model sends, an answer names only what was offered -----------------

    fn any_value() -> impl Strategy<Value = Value> {
        let word = prop::sample::select(vec![
            "Flow_a",
            "Flow_b",
            "Flow_x",
            " Flow_c ",
            "",
            "A",
            "B",
            "C",
            "Z",
            "Review",
            "Invented",
            "continue",
            "SKIP_TO",
            "skip_to",
            "swap_nodes",
            "remove_node",
            "add_node",
            "terminate",
            "skip_node",
            "jump",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            word.prop_map(|w| json!(w)),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop::sample::select(vec!["id", "flow", "x"]),
                    inner,
                    0..3
                )
                .prop_map(|m| json!(m)),
            ]
        })
    }

    fn any_reply() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
            "reason",
            "flow",
            "flows",
            "choice",
            "action",
            "target",
            "swap",
            "add",
            "message",
            "state_updates",
            "outputs",
        ]);
        prop::collection::btree_map(key, any_value(), 0..6).prop_map(|m| json!(m).to_string())
    }

    proptest! {
        #[test]
        fn ok_answers_name_only_offered_things(text in any_reply(), multiple in any::<bool>()) {
            let req = gateway(multiple);
            if let Ok(a) = parse_gateway(&req, &text) {
                prop_assert!(!a.flows.is_empty());
                prop_assert!(multiple || a.flows.len() == 1);
                for f in &a.flows {
                    prop_assert!(req.flows.iter().any(|o| &o.id == f), "{f}");
                }
            }
            let req = hook(&[HookAction::Continue, HookAction::SkipTo, HookAction::SwapNodes, HookAction::AddNode]);
            if let Ok(a) = parse_hook(&req, &text) {
                prop_assert!(req.permitted.contains(&a.action));
                let allowed = |t: &String| req.allowed_targets.contains(t);
                match a.action {
                    HookAction::SkipTo => prop_assert!(a.target.as_ref().is_some_and(allowed)),
                    _ => prop_assert!(a.target.is_none()),
                }
                match &a.swap {
                    Some((x, y)) => prop_assert!(a.action == HookAction::SwapNodes && x != y && allowed(x) && allowed(y)),
                    None => prop_assert!(a.action != HookAction::SwapNodes),
                }
                match &a.add {
                    Some(t) => prop_assert!(a.action == HookAction::AddNode && t.id() == "Review"),
                    None => prop_assert!(a.action != HookAction::AddNode),
                }
            }
        }
    }
}
