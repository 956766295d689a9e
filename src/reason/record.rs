//! Record and replay. A [`Recorder`] wraps a reasoner (the chain inside the policy rules:
//! what a model, a person or a scenario said) and keeps every answer it gives, in order,
//! with a digest of the request's context. [`Recorder::cassette`] is an answers document
//! in the format [`ScriptedReasoner`](super::ScriptedReasoner) reads (one list entry per
//! visit), so a cassette is also a valid `--answers` file; replayed with digest checking,
//! an answer whose context drifted since recording is refused.
//!
//! The digest covers what should determine an answer: the element id, the variables (keys
//! sorted), the policy text, the instruction and the choices offered. Never run ids,
//! history, timestamps or durations. It is FNV-1a 64 over canonical JSON, hex-encoded.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::bridge::{BoxFuture, Variables};
use crate::journal::{Event, Record};
use crate::vocab::Decider;

use super::tools::{
    AskedCall, CallEnded, OfferedTool, RecordedCall, ResumedTurn, ToolAccess, ToolGate,
};
use super::{
    AddTask, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, Policy, ReasonError, Reasoner,
    TaskAnswer, TaskRequest,
};

/// A request whose context can be digested.
pub trait ContextDigest {
    /// The canonical JSON of what should determine the answer.
    fn canonical(&self) -> Value;
}

impl ContextDigest for TaskRequest {
    fn canonical(&self) -> Value {
        json!({
            "kind": "task",
            "element": self.task_id,
            "variables": variables(&self.context.variables),
            "policy": policy_text(self.policy.as_ref()),
            "instruction": self.instruction.as_ref().or(self.context.instruction.as_ref()),
            "outputs": self.outputs,
        })
    }
}

impl ContextDigest for GatewayRequest {
    fn canonical(&self) -> Value {
        json!({
            "kind": "gateway",
            "element": self.gateway_id,
            "variables": variables(&self.context.variables),
            "policy": policy_text(self.policy.as_ref()),
            "instruction": self.context.instruction,
            "condition": self.condition,
            "flows": self.flows,
            "multiple": self.multiple,
        })
    }
}

impl ContextDigest for HookRequest {
    fn canonical(&self) -> Value {
        json!({
            "kind": "hook",
            "element": self.hook_id,
            "flow": self.flow_id,
            "variables": variables(&self.context.variables),
            "policy": policy_text(self.policy.as_ref()),
            "instruction": self.instruction.as_ref().or(self.context.instruction.as_ref()),
            "permitted": self.permitted,
            "allowed_targets": self.allowed_targets,
            "insertable_tasks": self.insertable_tasks,
        })
    }
}

/// The digest of a request's canonical context: FNV-1a 64 of its canonical JSON (keys
/// sorted recursively), as 16 hex digits.
/// What a cassette keeps of a request's context besides its digest, so that a replay that
/// drifts can say what changed: the canonical context with the policy's text replaced by a
/// digest of it (a policy is long and is the app's, not the run's).
pub fn context_summary<R: ContextDigest + ?Sized>(req: &R) -> Value {
    let mut canonical = req.canonical();
    if let Some(policy) = canonical.get_mut("policy")
        && !policy.is_null()
    {
        let text = policy.to_string();
        *policy = Value::String(format!("digest {:016x}", fnv1a64(text.as_bytes())));
    }
    canonical
}

/// Values in a diff are cut to this many characters.
const DIFF_VALUE_CHARS: usize = 60;

/// The difference between two JSON objects, key by key (nested objects by dotted path).
#[derive(Debug, Default, PartialEq)]
pub struct ContextDiff {
    added: Vec<(String, Value)>,
    removed: Vec<(String, Value)>,
    changed: Vec<(String, Value, Value)>,
}

impl ContextDiff {
    pub fn of(old: &Map<String, Value>, new: &Map<String, Value>) -> ContextDiff {
        let mut diff = ContextDiff::default();
        diff.walk("", old, new);
        diff
    }

    fn walk(&mut self, prefix: &str, old: &Map<String, Value>, new: &Map<String, Value>) {
        let path = |k: &str| {
            if prefix.is_empty() {
                k.to_owned()
            } else {
                format!("{prefix}.{k}")
            }
        };
        for (k, a) in old {
            match new.get(k) {
                None => self.removed.push((path(k), a.clone())),
                Some(b) if a == b => {}
                Some(Value::Object(b)) if a.is_object() => {
                    if let Value::Object(a) = a {
                        self.walk(&path(k), a, b);
                    }
                }
                Some(b) => self.changed.push((path(k), a.clone(), b.clone())),
            }
        }
        for (k, b) in new {
            if !old.contains_key(k) {
                self.added.push((path(k), b.clone()));
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// `~ k: old → new`, `+ k = new`, `- k (was old)`; at most `max`, then a count.
    pub fn lines(&self, max: usize) -> Vec<String> {
        let v = |v: &Value| crate::diag::excerpt(&compact(v), DIFF_VALUE_CHARS);
        let all: Vec<String> = (self.changed.iter())
            .map(|(k, a, b)| format!("~ {k}: {} → {}", v(a), v(b)))
            .chain(self.added.iter().map(|(k, b)| format!("+ {k} = {}", v(b))))
            .chain(
                self.removed
                    .iter()
                    .map(|(k, a)| format!("- {k} (was {})", v(a))),
            )
            .collect();
        let more = all.len().saturating_sub(max);
        let mut out: Vec<String> = all.into_iter().take(max).collect();
        if more > 0 {
            out.push(format!("… and {more} more"));
        }
        out
    }

    pub fn to_json(&self) -> Value {
        let cut = |v: &Value| match v {
            Value::String(s) => Value::String(crate::diag::excerpt(s, 200)),
            other if compact(other).chars().count() > 200 => {
                Value::String(crate::diag::excerpt(&compact(other), 200))
            }
            other => other.clone(),
        };
        json!({
            "added": self.added.iter().map(|(k, b)| (k.clone(), cut(b))).collect::<Map<_, _>>(),
            "removed": self.removed.iter().map(|(k, a)| (k.clone(), cut(a))).collect::<Map<_, _>>(),
            "changed": self.changed.iter()
                .map(|(k, a, b)| (k.clone(), json!({"old": cut(a), "new": cut(b)})))
                .collect::<Map<_, _>>(),
        })
    }
}

/// A value as compact JSON.
fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "?".to_owned())
}

pub fn context_digest<R: ContextDigest + ?Sized>(req: &R) -> String {
    let text = serde_json::to_string(&sorted(req.canonical())).unwrap_or_default();
    format!("{:016x}", fnv1a64(text.as_bytes()))
}

fn variables(vars: &Variables) -> Value {
    Value::Object(vars.clone())
}

fn policy_text(policy: Option<&Policy>) -> Option<&str> {
    policy.map(|p| p.text.as_str())
}

/// The value with every object's keys sorted (serde_json keeps insertion order here).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Keeps every answer its inner reasoner gives, in order, for a cassette.
pub struct Recorder {
    inner: std::sync::Arc<dyn Reasoner>,
    /// (control-point id, answer as written in an answers document, a task's visit), in
    /// answer order.
    entries: Mutex<Vec<(String, Value, Option<u64>)>>,
}

impl Recorder {
    pub fn new(inner: std::sync::Arc<dyn Reasoner>) -> Self {
        Recorder {
            inner,
            entries: Mutex::new(Vec::new()),
        }
    }

    fn push(&self, id: &str, answer: Value, visit: Option<u64>) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id.to_string(), answer, visit));
    }

    /// The answers so far as an answers document: `answers: {<id>: [<answer>, …]}`, one
    /// list entry per visit, in order.
    pub fn cassette(&self) -> Value {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        in_visit_order(entries.clone())
    }

    /// Write the cassette to `path` (JSON, which is also YAML).
    pub fn write(&self, path: &Path) -> Result<(), ReasonError> {
        let mut text = serde_json::to_string_pretty(&self.cassette())
            .map_err(|e| ReasonError::Io(format!("cannot encode the cassette: {e}")))?;
        text.push('\n');
        std::fs::write(path, text)
            .map_err(|e| ReasonError::Io(format!("cannot write {}: {e}", path.display())))
    }
}

/// An answer object with its optional fields left out when empty.
fn answer_object(fields: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect(),
    )
}

/// `decided_by: model` for a model's answer (what a replay needs to keep its provenance);
/// nothing for any other, which a replay answers as scripted.
fn by_model(by: Decider) -> Option<Value> {
    match by {
        Decider::Model => Some(Value::String("model".into())),
        // A remote agent's reply: a replay uses it instead of asking the agent again.
        Decider::Remote => Some(Value::String("remote".into())),
        _ => None,
    }
}

/// A cassette entry with the summary of the context it was recorded in.
fn with_context(mut entry: Value, context: Value) -> Value {
    if let Value::Object(m) = &mut entry {
        m.insert("context".into(), context);
    }
    entry
}

fn task_entry(answer: &TaskAnswer, digest: String) -> Value {
    let shape = match &answer.raised {
        Some(raised) => vec![
            ("error", Some(Value::String(raised.code.clone()))),
            ("message", raised.message.clone().map(Value::String)),
        ],
        None => vec![("outputs", Some(Value::Object(answer.outputs.clone())))],
    };
    answer_object(
        shape
            .into_iter()
            .chain([
                ("reason", answer.reason.clone().map(Value::String)),
                ("decided_by", by_model(answer.decided_by)),
                ("context_digest", Some(Value::String(digest))),
            ])
            .collect(),
    )
}

/// A tool call as a cassette keeps it: what was called, how it ended, and a person's
/// answer when one was asked (what a replay needs to govern it again without calling it).
/// A call of something that was no tool keeps the name it was asked for by.
pub fn tool_entry(
    tool: &str,
    arguments: &Value,
    outcome: crate::journal::event::ToolOutcome,
    result: &str,
    asked_a_person: bool,
) -> Value {
    let tool = match tool.split_once(crate::tools::MODEL_NAME_SEPARATOR) {
        Some((source, name)) if !tool.contains('.') => format!("{source}.{name}"),
        _ => tool.to_string(),
    };
    let confirm = asked_a_person
        .then(|| Value::String(if outcome.called() { "approve" } else { "deny" }.into()));
    answer_object(vec![
        ("tool", Some(Value::String(tool))),
        (
            "arguments",
            Some(match arguments {
                Value::Object(_) => arguments.clone(),
                _ => json!({}),
            }),
        ),
        ("confirm", confirm),
        (
            "recorded",
            Some(json!({"outcome": outcome.as_str(), "result": result})),
        ),
    ])
}

fn gateway_entry(answer: &GatewayAnswer, digest: String) -> Value {
    answer_object(vec![
        ("flows", Some(json!(answer.flows))),
        ("reason", answer.reason.clone().map(Value::String)),
        ("decided_by", by_model(answer.decided_by)),
        ("context_digest", Some(Value::String(digest))),
    ])
}

fn hook_entry(answer: &HookAnswer, digest: String) -> Value {
    let add = answer.add.as_ref().map(|a| match a {
        AddTask::Insertable(id) => Value::String(id.clone()),
        AddTask::New(t) => answer_object(vec![
            ("id", Some(Value::String(t.id.clone()))),
            ("name", t.name.clone().map(Value::String)),
            ("instruction", t.instruction.clone().map(Value::String)),
            ("agent", t.agent.clone().map(Value::String)),
        ]),
    });
    answer_object(vec![
        (
            "action",
            Some(Value::String(answer.action.as_str().to_string())),
        ),
        ("target", answer.target.clone().map(Value::String)),
        ("swap", answer.swap.as_ref().map(|(a, b)| json!([a, b]))),
        ("add", add),
        (
            "state_updates",
            (!answer.state_updates.is_empty()).then(|| Value::Object(answer.state_updates.clone())),
        ),
        ("message", answer.message.clone().map(Value::String)),
        ("reason", answer.reason.clone().map(Value::String)),
        ("decided_by", by_model(answer.decided_by)),
        ("context_digest", Some(Value::String(digest))),
    ])
}

/// Whether a decision came from judgement a replay must supply (not from a condition, a
/// rule, a default or a static action, which decide again by themselves). A fallback
/// (a model that gave no usable answer) is replayed as the decision it fell back to.
fn judged(by: Decider) -> bool {
    matches!(
        by,
        Decider::Model | Decider::Human | Decider::Scripted | Decider::Fallback | Decider::Remote
    )
}

/// A cassette of the judged decisions in a run's journal, in the format [`Recorder`]
/// writes: what `runs replay` answers from. Only decisions that carry the digest of their
/// question are taken (every one a reasoner made does). A hook whose asked action was
/// denied is recorded with the action it asked for, so the replay is denied again.
pub fn cassette_from_journal(records: &[Record]) -> Value {
    // Each task visit's tool calls, in order, by the visit's key.
    let mut calls: std::collections::HashMap<&str, Vec<Value>> = Default::default();
    for r in records {
        if let Event::ToolCalled {
            key,
            tool,
            arguments,
            outcome,
            result,
            by,
            ..
        } = &r.event
        {
            calls.entry(key.as_str()).or_default().push(tool_entry(
                tool,
                arguments,
                *outcome,
                result,
                by.is_some(),
            ));
        }
    }
    let recorder_entries: Vec<(String, Value, Option<u64>)> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::TaskFinished {
                node,
                status,
                outputs,
                decided_by,
                reason,
                error,
                error_code,
                digest: Some(digest),
                key,
                ..
            } if judged(*decided_by) => {
                // An error the answer raised (not one the task raised by failing).
                let raised = error_code
                    .as_ref()
                    .filter(|c| {
                        *status == crate::vocab::TaskStatus::Failed
                            && !crate::vocab::error_code::GENERIC.contains(&c.as_str())
                    })
                    .map(|code| crate::vocab::RaisedError {
                        code: code.clone(),
                        message: error.clone(),
                    });
                let answer = TaskAnswer {
                    outputs: outputs.clone(),
                    reason: reason.clone(),
                    decided_by: *decided_by,
                    raised,
                };
                let visit = key.as_deref().and_then(visit_of_key);
                let mut entry = task_entry(&answer, digest.clone());
                if let Some(calls) = key.as_deref().and_then(|k| calls.remove(k)) {
                    entry["tools"] = Value::Array(calls);
                }
                Some((node.clone(), entry, visit))
            }
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                reason,
                digest: Some(digest),
                ..
            } if judged(*decided_by) => {
                let answer = GatewayAnswer {
                    flows: flows.clone(),
                    reason: reason.clone(),
                    decided_by: *decided_by,
                };
                Some((node.clone(), gateway_entry(&answer, digest.clone()), None))
            }
            Event::HookEvaluated {
                hook,
                action,
                target,
                swap,
                added,
                state_updates,
                decided_by,
                reason,
                message,
                denied,
                digest: Some(digest),
                ..
            } if judged(*decided_by) => {
                let mut answer = HookAnswer::action(denied.unwrap_or(*action), *decided_by);
                answer.target = target.clone();
                answer.swap = swap.clone();
                answer.add = added.clone().map(AddTask::Insertable);
                answer.state_updates = state_updates.clone();
                answer.message = message.clone();
                answer.reason = reason.clone();
                Some((hook.clone(), hook_entry(&answer, digest.clone()), None))
            }
            _ => None,
        })
        .collect();
    in_visit_order(recorder_entries)
}

/// The visit a task's idempotency key `<run>:<element>:<visit>` names.
fn visit_of_key(key: &str) -> Option<u64> {
    key.rsplit_once(':').and_then(|(_, v)| v.parse().ok())
}

/// An answers document from (control point, answer, visit) in answer order: one list per
/// control point, its entries in visit order when every entry knows its visit (a task's
/// instances, or its visits from parallel branches, may answer out of order), else in
/// answer order.
fn in_visit_order(entries: Vec<(String, Value, Option<u64>)>) -> Value {
    /// A control point's answers, each with its visit when known.
    type Answers = Vec<(Option<u64>, Value)>;
    let mut lists: Vec<(String, Answers)> = Vec::new();
    for (id, entry, visit) in entries {
        match lists.iter_mut().find(|(i, _)| *i == id) {
            Some((_, list)) => list.push((visit, entry)),
            None => lists.push((id, vec![(visit, entry)])),
        }
    }
    let mut answers: Map<String, Value> = Map::new();
    for (id, mut list) in lists {
        if list.iter().all(|(v, _)| v.is_some()) {
            list.sort_by_key(|(v, _)| *v);
        }
        let items = list.into_iter().map(|(_, e)| e).collect();
        answers.insert(id, Value::Array(items));
    }
    json!({ "answers": answers })
}

/// A visit's tool gate that keeps each call and how it ended, for the cassette.
struct RecordingGate {
    inner: Arc<dyn ToolGate>,
    calls: Mutex<Vec<Value>>,
}

impl ToolGate for RecordingGate {
    fn offered(&self) -> BoxFuture<'_, Result<Vec<OfferedTool>, ReasonError>> {
        self.inner.offered()
    }

    fn offers(&self, name: &str) -> bool {
        self.inner.offers(name)
    }

    fn max_calls(&self) -> u64 {
        self.inner.max_calls()
    }

    fn resumed(&self) -> Vec<ResumedTurn> {
        self.inner.resumed()
    }

    fn requested<'a>(
        &'a self,
        content: Option<&'a str>,
        calls: &'a [AskedCall],
    ) -> BoxFuture<'a, Result<(), ReasonError>> {
        self.inner.requested(content, calls)
    }

    fn call<'a>(
        &'a self,
        call: &'a AskedCall,
        said: Option<&'a str>,
        recorded: Option<&'a RecordedCall>,
    ) -> BoxFuture<'a, Result<CallEnded, ReasonError>> {
        Box::pin(async move {
            let ended = self.inner.call(call, said, recorded).await?;
            let arguments = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            let entry = tool_entry(
                &ended.tool,
                &arguments,
                ended.outcome,
                &ended.result,
                ended.approved.is_some(),
            );
            (self.calls.lock().unwrap_or_else(|e| e.into_inner())).push(entry);
            Ok(ended)
        })
    }
}

impl Reasoner for Recorder {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn confirm(
        &self,
        req: crate::reason::tools::ConfirmRequest,
    ) -> crate::reason::tools::Confirming<'_> {
        self.inner.confirm(req)
    }

    fn answers_in_advance(&self, req: &TaskRequest) -> bool {
        self.inner.answers_in_advance(req)
    }

    fn task(&self, mut req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            let digest = context_digest(&req);
            let context = context_summary(&req);
            let id = req.task_id.clone();
            let visit = (req.context.idempotency_key.as_deref()).and_then(visit_of_key);
            // The agent's tool calls are kept with its answer.
            let recording = req.tools.gate().map(|inner| {
                Arc::new(RecordingGate {
                    inner: inner.clone(),
                    calls: Mutex::new(Vec::new()),
                })
            });
            if let Some(gate) = &recording {
                req.tools = ToolAccess::new(gate.clone());
            }
            let answer = self.inner.task(req).await?;
            let mut entry = task_entry(&answer, digest);
            if let Some(gate) = recording {
                let calls =
                    std::mem::take(&mut *gate.calls.lock().unwrap_or_else(|e| e.into_inner()));
                if !calls.is_empty() {
                    entry["tools"] = Value::Array(calls);
                }
            }
            self.push(&id, with_context(entry, context), visit);
            Ok(answer)
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            let digest = context_digest(&req);
            let context = context_summary(&req);
            let id = req.gateway_id.clone();
            let answer = self.inner.gateway(req).await?;
            self.push(
                &id,
                with_context(gateway_entry(&answer, digest), context),
                None,
            );
            Ok(answer)
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            let digest = context_digest(&req);
            let context = context_summary(&req);
            let id = req.hook_id.clone();
            let answer = self.inner.hook(req).await?;
            self.push(
                &id,
                with_context(hook_entry(&answer, digest), context),
                None,
            );
            Ok(answer)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_diff_names_added_removed_and_changed_keys() {
        let old = json!({"a": 1, "b": "x", "n": {"p": 1, "q": 2}, "gone": true});
        let new = json!({"a": 2, "b": "x", "n": {"p": 1, "q": 3}, "new": [1]});
        let d = ContextDiff::of(old.as_object().unwrap(), new.as_object().unwrap());
        assert_eq!(
            d.lines(10),
            vec![
                "~ a: 1 → 2",
                "~ n.q: 2 → 3",
                "+ new = [1]",
                "- gone (was true)"
            ]
        );
        assert_eq!(d.to_json()["changed"]["n.q"], json!({"old": 2, "new": 3}));
        assert_eq!(d.lines(1), vec!["~ a: 1 → 2", "… and 3 more"]);
        let long = json!({"t": "y".repeat(500)});
        let d = ContextDiff::of(&Map::new(), long.as_object().unwrap());
        assert!(d.lines(5)[0].chars().count() < 80, "{:?}", d.lines(5));
        assert!(ContextDiff::of(&Map::new(), &Map::new()).is_empty());
    }

    use crate::bridge::ControlPointContext;
    use crate::reason::ScriptedReasoner;
    use std::sync::Arc;

    fn task(id: &str, vars: Variables) -> TaskRequest {
        TaskRequest {
            raises: Vec::new(),
            task_id: id.into(),
            name: None,
            agent: None,
            instruction: Some("do it".into()),
            policy: None,
            inputs: Variables::new(),
            outputs: vec!["score".into()],
            output_kinds: Default::default(),
            context: ControlPointContext {
                run_id: "run-1".into(),
                variables: Arc::new(vars).into(),
                ..ControlPointContext::default()
            },
            calls: Default::default(),
            tools: Default::default(),
        }
    }

    fn vars(v: Value) -> Variables {
        v.as_object().cloned().unwrap()
    }

    /// A task's answers are listed in visit order (parallel instances answer out of
    /// order); without visits, in answer order.
    #[test]
    fn cassette_lists_are_in_visit_order() {
        let entries = vec![
            ("T".to_string(), json!(1), Some(1)),
            ("G".to_string(), json!("g2"), None),
            ("T".to_string(), json!(3), Some(3)),
            ("G".to_string(), json!("g1"), None),
            ("T".to_string(), json!(2), Some(2)),
        ];
        assert_eq!(
            in_visit_order(entries),
            json!({"answers": {"T": [1, 2, 3], "G": ["g2", "g1"]}})
        );
        assert_eq!(visit_of_key("run-1:T:12"), Some(12));
        assert_eq!(visit_of_key("nothing"), None);
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn digest_ignores_key_order_and_run_id_but_not_values() {
        let a = task("T", vars(json!({"x": 1, "y": {"b": 2, "a": 1}})));
        let mut b = task("T", vars(json!({"y": {"a": 1, "b": 2}, "x": 1})));
        b.context.run_id = "run-2".into();
        b.context.history = crate::bridge::History::from(vec!["S".into()]);
        assert_eq!(context_digest(&a), context_digest(&b));
        let c = task("T", vars(json!({"x": 2, "y": {"a": 1, "b": 2}})));
        assert_ne!(context_digest(&a), context_digest(&c));
    }

    #[tokio::test]
    async fn a_cassette_replays_and_refuses_drift() {
        let doc = json!({"answers": {"T": [{"outputs": {"score": 1}}, {"outputs": {"score": 2}}]}});
        let scripted = ScriptedReasoner::from_value(doc, "s").unwrap();
        let recorder = Recorder::new(Arc::new(scripted));
        let req = task("T", vars(json!({"x": 1})));
        recorder.task(req.clone()).await.unwrap();
        recorder.task(req.clone()).await.unwrap();
        let cassette = recorder.cassette();
        assert_eq!(cassette["answers"]["T"].as_array().unwrap().len(), 2);

        let replay = ScriptedReasoner::from_value(cassette.clone(), "c")
            .unwrap()
            .checking_digests();
        assert_eq!(replay.task(req.clone()).await.unwrap().outputs["score"], 1);
        let drifted = task("T", vars(json!({"x": 9})));
        let err = replay.task(drifted.clone()).await.unwrap_err();
        assert!(matches!(err, ReasonError::Invalid { ref element, .. } if element == "T"));
        assert!(err.to_string().contains("drifted"), "{err}");

        // Without checking, the digest is ignored.
        let plain = ScriptedReasoner::from_value(cassette, "c").unwrap();
        assert!(plain.task(drifted).await.is_ok());
    }
}
