//! Answers given in advance: an answers file (`--answers FILE`) or a scenario. The
//! document maps control-point ids to answers:
//!
//! ```yaml
//! answers:
//!   Activity_0oydey5: {outputs: {credit_score: 0.82}, reason: "stable income"}   # a task
//!   Gateway_09ad5fc: {flow: Flow_0ybszcv, reason: "..."}     # a gateway (`flows: [..]` for inclusive)
//!   Flow_0ybszcv: {action: skip_to, target: Activity_131ar38, state_updates: {k: v}}   # a hook
//!   Activity_X: [{outputs: {...}}, {outputs: {...}}]          # one answer per visit, in order
//!   Activity_Pay: {error: PAYMENT_FAILED, message: "card declined"}   # a task raising a BPMN error
//! ```
//!
//! A hook may be keyed by its hook id or by the id of the flow it sits on. A single answer
//! serves every visit; a list serves one visit per entry, and a visit past its end has no
//! answer. Other top-level keys (a scenario's description, variables...) are ignored.
//! Every answer is checked when the document is read: an unknown key or shape is an error
//! naming the answer.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::bridge::{BoxFuture, NewTask, Variables};
use crate::vocab::{Decider, HookAction, RaisedError, error_code};

use super::record::context_digest;
use super::{
    AddTask, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, ReasonError, Reasoner,
    TaskAnswer, TaskRequest,
};

/// Answers given in advance, keyed by control-point id.
#[derive(Debug)]
pub struct ScriptedReasoner {
    source: String,
    answers: HashMap<String, Entry>,
    /// Visits so far, per key (for lists of answers).
    visits: Mutex<HashMap<String, usize>>,
    /// Replay: refuse an answer whose `context_digest` differs from the request's.
    check_digests: bool,
    /// Where each answer's key is written (`file:line:col`), for errors found later.
    positions: HashMap<String, String>,
    /// Answers addressed to the elements of a called process (`<call activity>/<element>`):
    /// not this reasoner's, but its run's child runs'.
    called: Map<String, Value>,
    /// The confirmations given in advance for the scripted tool calls being made now, by
    /// (task, tool).
    confirming: Mutex<HashMap<(String, String), String>>,
}

/// What an app's control points accept, to check answers given in advance against before
/// a run starts (so that a typo in an id, an output or a flow is an error at its line,
/// not an answer nobody asks for or a value that silently changes the route).
#[derive(Debug, Default, Clone)]
pub struct Expected {
    /// Task id → its outputs and each one's type (`None`: any value). Tasks a person or
    /// a model answers only (the config's `task_agent` tasks and insertable tasks).
    pub tasks: HashMap<String, Vec<(String, Option<crate::vocab::VarKind>)>>,
    /// Tasks of the model nothing asks (native pass-throughs): an answer for one is an error.
    pub native_tasks: Vec<String>,
    /// Gateway id → its outgoing flows.
    pub gateways: HashMap<String, Vec<String>>,
    /// Hook ids and the ids of the flows they sit on.
    pub hooks: Vec<String>,
}

/// The answers for one control point.
#[derive(Debug, Clone)]
struct Entry {
    answers: Vec<Answer>,
    /// Each answer's recorded `context_digest` and context summary, when it has them.
    digests: Vec<Option<Recorded>>,
    /// One answer written alone serves every visit; a list serves one visit per entry.
    repeat: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Task {
        outputs: Variables,
        reason: Option<String>,
        raised: Option<RaisedError>,
        by: Decider,
        /// Tool calls the task's agent makes first (through its governed tools).
        tools: Vec<ScriptedCall>,
    },
    Gateway {
        flows: Vec<String>,
        reason: Option<String>,
        by: Decider,
    },
    Hook(HookAnswer),
}

impl Answer {
    fn kind(&self) -> &'static str {
        match self {
            Answer::Task { .. } => "a task answer (`outputs` or `error`)",
            Answer::Gateway { .. } => "a gateway answer (`flow`)",
            Answer::Hook(_) => "a hook answer (`action`)",
        }
    }
}

/// A tool call a scripted task agent makes before it answers: through the task's tools
/// as a model's would be (only the tools the task names, confirmed when they must be,
/// journalled), with a person's confirmation given in advance when one is needed.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// `<source>.<tool>`.
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// A person's answer given in advance, should the call need one: `approve` or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<String>,
    /// How the call ended when it was recorded (a cassette, a replayed journal): the call
    /// is governed as now configured and, where that agrees, answered with this result
    /// instead of being made; where it does not, the replay has drifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<super::tools::RecordedCall>,
}

/// One answer as written.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawAnswer {
    outputs: Option<Map<String, Value>>,
    /// A task answer whose agent calls these tools before it answers (each with its
    /// result journalled); `outputs` (or `error`) is its answer.
    tools: Option<Vec<ScriptedCall>>,
    /// A task answer that raises this BPMN error code instead of answering its outputs.
    error: Option<String>,
    flow: Option<String>,
    flows: Option<Vec<String>>,
    action: Option<String>,
    target: Option<String>,
    swap: Option<Vec<String>>,
    add: Option<RawAdd>,
    state_updates: Option<Map<String, Value>>,
    message: Option<String>,
    reason: Option<String>,
    /// The digest of the context the answer was recorded in (a cassette); checked only
    /// on replay.
    context_digest: Option<String>,
    /// The summary of the context the answer was recorded in (a cassette), to say what
    /// changed when a replay drifts.
    context: Option<Value>,
    /// `model` in a cassette when a model gave the answer: replayed, it keeps a model's
    /// provenance (untrusted when its context was), so a replay decides as the run did.
    decided_by: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum RawAdd {
    Id(String),
    Task(RawTask),
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawTask {
    id: String,
    name: Option<String>,
    instruction: Option<String>,
    agent: Option<String>,
}

/// The JSON Schema of an `answers:` mapping (control-point id → one answer, or a list of
/// answers, one per visit), derived from the answer type the reader deserializes, so the
/// two cannot drift. A scenario's `answers` and an answers file's share it.
pub fn answers_schema() -> Value {
    let mut answer = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<RawAnswer>()
        .to_value();
    // A hook answer's action is one of the hook actions, in lower or upper case (the
    // reader refuses others).
    let mut actions: Vec<Value> = (HookAction::names())
        .flat_map(|n| [Value::from(n), Value::from(n.to_ascii_uppercase())])
        .collect();
    actions.push(Value::Null);
    answer["properties"]["action"]["enum"] = Value::Array(actions);
    if let Value::Object(m) = &mut answer {
        m.remove("$schema");
        m.insert(
            "title".into(),
            "an answer: a task's `outputs` or `error`, a gateway's `flow`/`flows`, a hook's `action`".into(),
        );
    }
    serde_json::json!({
        "type": ["object", "null"],
        "description": "Answers by control-point id (a task, a gateway, a hook by its id or its flow's id): one answer for every visit, or a list with one per visit.",
        "additionalProperties": {
            "anyOf": [answer.clone(), {"type": "array", "minItems": 1, "items": answer}],
        },
    })
}

/// The JSON Schema (draft 2020-12) of an answers file (`--answers FILE`): an `answers:`
/// mapping; other top-level keys are ignored.
pub fn answers_file_schema() -> Value {
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:cuga-flo:schema:answers",
        "title": "cuga-flo answers file",
        "type": "object",
        "properties": {"answers": answers_schema()},
        "required": ["answers"],
    })
}

impl ScriptedReasoner {
    /// Make a scripted agent's tool calls through the task's tools, in order (one turn);
    /// what they came to, for the answer's reason.
    async fn call_tools(
        &self,
        req: &TaskRequest,
        calls: &[ScriptedCall],
    ) -> Result<String, ReasonError> {
        let Some(gate) = req.tools.gate() else {
            return Err(ReasonError::invalid(
                &req.task_id,
                format!(
                    "{}: the answer calls tools, but the task names none of a tool source (`tools:` of its agent)",
                    self.source
                ),
            ));
        };
        gate.offered().await?;
        let asked: Vec<super::tools::AskedCall> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| super::tools::AskedCall {
                id: format!("scripted-{}", i + 1),
                // A recorded call of something that was no tool keeps the name it was
                // asked for by.
                name: match c.tool.split_once('.') {
                    Some((source, tool)) => crate::tools::model_name(source, tool),
                    None => c.tool.clone(),
                },
                arguments: Value::Object(c.arguments.clone()).to_string(),
            })
            .collect();
        // A resumed visit (the run parked mid-way, at a confirmation): the script's turn
        // was journalled before; its calls keep their places and those that ended are not
        // made again. The script must still ask for the same calls.
        match gate.resumed().first() {
            None => gate.requested(None, &asked).await?,
            Some(turn) => {
                let before: Vec<(&str, &str)> = turn
                    .calls
                    .iter()
                    .map(|(c, _)| (c.name.as_str(), c.arguments.as_str()))
                    .collect();
                let now: Vec<(&str, &str)> = asked
                    .iter()
                    .map(|c| (c.name.as_str(), c.arguments.as_str()))
                    .collect();
                if before != now {
                    return Err(ReasonError::invalid(
                        &req.task_id,
                        format!(
                            "{}: the answer's tool calls are not those the run asked for before it stopped",
                            self.source
                        ),
                    ));
                }
            }
        }
        let mut outcomes = Vec::new();
        for (call, asked) in calls.iter().zip(&asked) {
            let key = (req.task_id.clone(), call.tool.clone());
            if let Some(c) = &call.confirm {
                (self.confirming.lock().unwrap_or_else(|e| e.into_inner()))
                    .insert(key.clone(), c.clone());
            }
            let ended = gate.call(asked, None, call.recorded.as_ref()).await;
            (self.confirming.lock().unwrap_or_else(|e| e.into_inner())).remove(&key);
            outcomes.push(format!("{} {}", call.tool, ended?.outcome.as_str()));
        }
        Ok(format!("called {}", outcomes.join(", ")))
    }

    /// Read an answers document (YAML or JSON) from a file.
    pub fn from_file(path: &Path) -> Result<Self, ReasonError> {
        let text = crate::source::read_text(path)
            .map_err(|e| ReasonError::Io(format!("cannot read {}: {e}", path.display())))?;
        // Problems point at `file:line:col`: of the YAML error, else of the answer (or
        // the `answers` key) the message is about.
        let file = crate::source::SourceFile::new(path, text.as_str());
        let at = |offset: usize| {
            let lc = file.line_col(offset);
            format!("answers file {}:{}:{}", path.display(), lc.line, lc.column)
        };
        let node = crate::app::yaml::parse(&text).map_err(|e| ReasonError::Load {
            source_name: at(e.span.offset),
            message: format!("not valid YAML: {}", e.message),
        })?;
        Self::from_value(node.to_json(), format!("answers file {}", path.display()))
            .map_err(|e| match e {
                ReasonError::Load { message, .. } => ReasonError::Load {
                    source_name: at(answer_offset(&node, &message)),
                    message,
                },
                other => other,
            })
            .map(|scripted| scripted.locate(&node, &file))
    }

    /// Read an answers document from YAML (or JSON) text; `source` describes where it
    /// came from.
    pub fn from_text(text: &str, source: impl Into<String>) -> Result<Self, ReasonError> {
        let source = source.into();
        let node = crate::app::yaml::parse(text).map_err(|e| ReasonError::Load {
            source_name: source.clone(),
            message: format!("not valid YAML: {e}"),
        })?;
        Self::from_value(node.to_json(), source)
    }

    /// Build from an answers document already in JSON form; `source` describes where it
    /// came from ("scenario `approve`", "answers file x.yaml").
    pub fn from_value(doc: Value, source: impl Into<String>) -> Result<Self, ReasonError> {
        let source = source.into();
        let load = |message: String| ReasonError::Load {
            source_name: source.clone(),
            message,
        };
        let Value::Object(mut doc) = doc else {
            return Err(load("expected a mapping with an `answers:` key".into()));
        };
        match doc.remove("answers") {
            None => Err(load("there is no `answers:` key".into())),
            Some(Value::Null) => Self::from_answers(Map::new(), source),
            Some(Value::Object(m)) => Self::from_answers(m, source),
            Some(_) => Err(load(
                "`answers` must map control-point ids to answers".into(),
            )),
        }
    }

    /// Build from the `answers:` mapping itself (control-point id → answer or list of
    /// answers), as a scenario holds it.
    pub fn from_answers(
        answers: Map<String, Value>,
        source: impl Into<String>,
    ) -> Result<Self, ReasonError> {
        let source = source.into();
        let load = |message: String| ReasonError::Load {
            source_name: source.clone(),
            message,
        };
        let mut parsed = HashMap::new();
        let mut called = Map::new();
        for (key, value) in answers {
            if key.contains('/') {
                called.insert(key, value);
                continue;
            }
            let entry = match value {
                Value::Array(items) => {
                    if items.is_empty() {
                        return Err(load(format!("answer `{key}`: the list is empty")));
                    }
                    let (list, digests) = items
                        .into_iter()
                        .enumerate()
                        .map(|(i, item)| {
                            parse_answer(item)
                                .map_err(|m| load(format!("answer `{key}` (visit {}): {m}", i + 1)))
                        })
                        .collect::<Result<Vec<_>, _>>()?
                        .into_iter()
                        .unzip();
                    Entry {
                        answers: list,
                        digests,
                        repeat: false,
                    }
                }
                other => {
                    let (answer, digest) =
                        parse_answer(other).map_err(|m| load(format!("answer `{key}`: {m}")))?;
                    Entry {
                        answers: vec![answer],
                        digests: vec![digest],
                        repeat: true,
                    }
                }
            };
            parsed.insert(key, entry);
        }
        Ok(ScriptedReasoner {
            source,
            answers: parsed,
            visits: Mutex::new(HashMap::new()),
            check_digests: false,
            positions: HashMap::new(),
            called,
            confirming: Default::default(),
        })
    }

    /// Where the answers come from ("answers file a.yaml", "answers from scenario `x`").
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The answers addressed to the elements of called processes
    /// (`<call activity>/<element>`), which the run's child runs get.
    pub fn called(&self) -> &Map<String, Value> {
        &self.called
    }

    /// Remember where each answer is written in `path` (a scenario or answers file), so
    /// that [`ScriptedReasoner::check`] points at its line.
    pub fn located_in(self, path: &Path) -> Self {
        let Ok(text) = crate::source::read_text(path) else {
            return self;
        };
        let Ok(root) = crate::app::yaml::parse(&text) else {
            return self;
        };
        let file = crate::source::SourceFile::new(path, text.as_str());
        self.locate(&root, &file)
    }

    /// [`ScriptedReasoner::located_in`] with the file already read and parsed.
    fn locate(mut self, root: &crate::app::yaml::Node, file: &crate::source::SourceFile) -> Self {
        for key in self.answers.keys() {
            let offset = answer_offset(root, &format!("answer `{key}`"));
            let lc = file.line_col(offset);
            self.positions.insert(
                key.clone(),
                format!("{}:{}:{}", file.path().display(), lc.line, lc.column),
            );
        }
        self
    }

    /// The same answers, with no visit counted yet: a reasoner of its own for another
    /// run (or app) from answers read once.
    pub fn unvisited(&self) -> Self {
        ScriptedReasoner {
            source: self.source.clone(),
            answers: self.answers.clone(),
            visits: Mutex::new(HashMap::new()),
            check_digests: self.check_digests,
            positions: self.positions.clone(),
            called: self.called.clone(),
            confirming: Default::default(),
        }
    }

    /// Check every answer against what the app's control points accept: the id is a
    /// control point of the app (with "did you mean"), a task's outputs are declared and
    /// of their variable's type, a gateway's flows leave that gateway. The first problem
    /// is an error at its answer's line.
    pub fn check(&self, expected: &Expected) -> Result<(), ReasonError> {
        // Tasks a hook answer of this document inserts may be answered too.
        let inserted: Vec<&str> = self
            .answers
            .values()
            .flat_map(|e| &e.answers)
            .filter_map(|a| match a {
                Answer::Hook(HookAnswer {
                    add: Some(AddTask::New(t)),
                    ..
                }) => Some(t.id.as_str()),
                _ => None,
            })
            .collect();
        let mut keys: Vec<&String> = self.answers.keys().collect();
        keys.sort_unstable();
        for key in keys {
            let entry = &self.answers[key];
            let problem = if let Some(outputs) = expected.tasks.get(key) {
                entry.answers.iter().find_map(|a| task_problem(a, outputs))
            } else if let Some(flows) = expected.gateways.get(key) {
                entry.answers.iter().find_map(|a| gateway_problem(a, flows))
            } else if expected.hooks.iter().any(|h| h == key) {
                entry.answers.iter().find_map(|a| match a {
                    Answer::Hook(_) => None,
                    other => Some(format!("`{key}` is a hook; this is {}", other.kind())),
                })
            } else if inserted.contains(&key.as_str()) {
                None
            } else if expected.native_tasks.iter().any(|t| t == key) {
                Some(format!(
                    "task `{key}` is a native pass-through (not a `task_agent` in the config): \
                     nothing asks it"
                ))
            } else {
                let known = expected
                    .tasks
                    .keys()
                    .chain(expected.gateways.keys())
                    .chain(&expected.hooks)
                    .map(String::as_str);
                Some(match crate::diag::did_you_mean(key, known) {
                    Some(close) => {
                        format!("`{key}` is no control point of the app; did you mean `{close}`?")
                    }
                    None => format!(
                        "`{key}` is no control point of the app (a task_agent task, a gateway \
                         or a hook, by id)"
                    ),
                })
            };
            if let Some(message) = problem {
                return Err(ReasonError::Load {
                    source_name: self
                        .positions
                        .get(key)
                        .cloned()
                        .unwrap_or_else(|| self.source.clone()),
                    message: format!("answer `{key}`: {message}"),
                });
            }
        }
        Ok(())
    }

    /// Replay: check every answer's recorded `context_digest` against the digest of the
    /// request it answers, and refuse it (naming the control point) on a mismatch.
    pub fn checking_digests(mut self) -> Self {
        self.check_digests = true;
        self
    }

    /// On replay, the error when `recorded` is not the digest of the current context.
    fn check_digest<R: super::record::ContextDigest + ?Sized>(
        &self,
        element: &str,
        recorded: Option<&Recorded>,
        req: &R,
    ) -> Result<(), ReasonError> {
        if !self.check_digests {
            return Ok(());
        }
        let current = context_digest(req);
        match recorded {
            Some(r) if r.digest == current => Ok(()),
            Some(r) => {
                // What changed, when the cassette kept the context; else the digests.
                let now = super::record::context_summary(req);
                let changes = match (
                    r.context.as_ref().and_then(Value::as_object),
                    now.as_object(),
                ) {
                    (Some(before), Some(now)) => {
                        Some(super::record::ContextDiff::of(before, now).lines(12))
                    }
                    _ => None,
                };
                let what = match changes {
                    Some(lines) if !lines.is_empty() => {
                        format!("what changed:\n  {}", lines.join("\n  "))
                    }
                    _ => format!(
                        "recorded digest {}, the run now has {current}: the inputs, policy, \
                         instruction or choices changed",
                        r.digest
                    ),
                };
                Err(ReasonError::invalid(
                    element,
                    format!(
                        "the context drifted since recording ({}); {what}",
                        self.source
                    ),
                ))
            }
            None => Err(ReasonError::invalid(
                element,
                format!(
                    "{} has no `context_digest` for this answer, so the replay cannot check it",
                    self.source
                ),
            )),
        }
    }

    /// The ids that have answers.
    pub fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.answers.keys().map(String::as_str).collect();
        keys.sort_unstable();
        keys
    }

    /// The next answer under the first of `keys` that has one; `element` names the control
    /// point in errors. Visits are counted per run, so a list of answers starts over for
    /// each run a server (`serve`) answers; a call for an instance of a multi-instance task
    /// takes the visit its idempotency key names (`<run>:<element>:<visit>`), so that
    /// parallel instances get their own answers whatever order their calls arrive in.
    fn next(
        &self,
        context: &crate::bridge::ControlPointContext,
        element: &str,
        keys: &[&str],
    ) -> Result<(Answer, Option<Recorded>), ReasonError> {
        let run_id = context.run_id.as_str();
        let Some((key, entry)) = keys.iter().find_map(|k| self.answers.get_key_value(*k)) else {
            return Err(ReasonError::no_answer(
                element,
                format!(
                    "{} has no answer for it (add `{element}:` under `answers:`)",
                    self.source
                ),
            ));
        };
        if entry.repeat {
            return Ok((entry.answers[0].clone(), entry.digests[0].clone()));
        }
        let mut visits = self.visits.lock().unwrap_or_else(|e| e.into_inner());
        let n = visits.entry(format!("{run_id}\u{0}{key}")).or_insert(0);
        // Calls made in the instances of a multi-instance activity: by the visit their key
        // names.
        if context.instance.is_some()
            && let Some(visit) =
                (context.idempotency_key.as_deref()).and_then(|k| visit_of(k, element))
        {
            *n = visit - 1;
        }
        match entry.answers.get(*n) {
            Some(a) => {
                let digest = entry.digests.get(*n).cloned().flatten();
                *n += 1;
                Ok((a.clone(), digest))
            }
            None => Err(ReasonError::no_answer(
                element,
                format!(
                    "{} has {} answer(s) for `{key}`, and this is visit {}",
                    self.source,
                    entry.answers.len(),
                    *n + 1
                ),
            )),
        }
    }

    fn mismatch(&self, element: &str, answer: &Answer, expected: &str) -> ReasonError {
        ReasonError::invalid(
            element,
            format!(
                "{} gives {} for `{element}`, which is {expected}",
                self.source,
                answer.kind()
            ),
        )
    }
}

/// The visit (1, 2, ...) an idempotency key `<run>:<element>:<visit>` names.
fn visit_of(key: &str, element: &str) -> Option<usize> {
    let (rest, visit) = key.rsplit_once(':')?;
    let named = rest
        .strip_suffix(element)
        .is_some_and(|run| run.is_empty() || run.ends_with(':'));
    named
        .then(|| visit.parse().ok())
        .flatten()
        .filter(|v| *v >= 1)
}

/// What a cassette recorded of an answer's context.
#[derive(Debug, Clone, PartialEq)]
struct Recorded {
    digest: String,
    context: Option<Value>,
}

/// An answer and its recorded context digest.
fn parse_answer(value: Value) -> Result<(Answer, Option<Recorded>), String> {
    let mut raw = parse_raw(value)?;
    let context = raw.context.take();
    let recorded = raw
        .context_digest
        .clone()
        .map(|digest| Recorded { digest, context });
    Ok((raw_answer(raw)?, recorded))
}

fn parse_raw(value: Value) -> Result<RawAnswer, String> {
    if !value.is_object() {
        return Err(format!(
            "expected a mapping (`outputs`, `flow`, `flows` or `action`), not {}",
            json_kind(&value)
        ));
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

fn raw_answer(mut raw: RawAnswer) -> Result<Answer, String> {
    let by = match raw.decided_by.as_deref() {
        None | Some("scripted") => Decider::Scripted,
        Some("model") => Decider::Model,
        Some("remote") => Decider::Remote,
        Some(other) => {
            return Err(format!(
                "`decided_by` is `model` (a model's recorded answer), `remote` (a remote \
                 agent's recorded reply) or absent, not `{other}`"
            ));
        }
    };
    if raw.outputs.is_some() && raw.error.is_some() {
        return Err("a task answer has `outputs` or raises an `error`, not both".into());
    }
    let tools = raw.tools.take().unwrap_or_default();
    if !tools.is_empty() && raw.outputs.is_none() && raw.error.is_none() {
        return Err(
            "a task answer that calls `tools` answers `outputs` (or an `error`) too".into(),
        );
    }
    for call in &tools {
        // A recorded call may name what was no tool (it was refused then).
        let one_tool = crate::tools::ToolRef::parse(&call.tool).source().is_some()
            && !call.tool.ends_with(".*");
        if !one_tool && call.recorded.is_none() {
            return Err(format!(
                "`{}` does not name one tool as `<source>.<tool>`",
                call.tool
            ));
        }
        if let Some(c) = &call.confirm
            && crate::app::guardrail::decision_of(c).is_none()
        {
            return Err(format!(
                "`confirm` of `{}` is `approve` or `deny`, not `{c}`",
                call.tool
            ));
        }
    }
    let shapes = [
        raw.outputs.is_some() || raw.error.is_some(),
        raw.flow.is_some() || raw.flows.is_some(),
        raw.action.is_some(),
    ];
    match shapes.iter().filter(|s| **s).count() {
        0 => {
            return Err(
                "say what the answer is: `outputs` or `error` (a task), `flow`/`flows` (a \
                 gateway) or `action` (a hook)"
                    .into(),
            );
        }
        1 => {}
        _ => {
            return Err(
                "an answer has one of `outputs` or `error` (a task), `flow`/`flows` (a \
                 gateway) or `action` (a hook), not several"
                    .into(),
            );
        }
    }
    let hook_only = [
        ("target", raw.target.is_some()),
        ("swap", raw.swap.is_some()),
        ("add", raw.add.is_some()),
        ("state_updates", raw.state_updates.is_some()),
        ("message", raw.message.is_some() && raw.error.is_none()),
    ];
    if raw.action.is_none()
        && let Some((key, _)) = hook_only.iter().find(|(_, set)| *set)
    {
        return Err(format!("`{key}` belongs to hook answers (with `action`)"));
    }
    if let Some(code) = raw.error {
        let code = code.trim().to_string();
        if !error_code::is_valid(&code) {
            return Err(format!(
                "`error` is a BPMN error code (letters, digits, `_`, `-`, `.`, `:`), not `{code}`"
            ));
        }
        return Ok(Answer::Task {
            outputs: Map::new(),
            reason: raw.reason,
            raised: Some(RaisedError {
                code,
                message: raw.message,
            }),
            by,
            tools,
        });
    }
    if let Some(outputs) = raw.outputs {
        return Ok(Answer::Task {
            outputs,
            reason: raw.reason,
            raised: None,
            by,
            tools,
        });
    }
    if raw.flow.is_some() || raw.flows.is_some() {
        let flows = match (raw.flow, raw.flows) {
            (Some(_), Some(_)) => return Err("write `flow` or `flows`, not both".into()),
            (Some(f), None) => vec![f],
            (None, Some(fs)) if fs.is_empty() => return Err("`flows` is empty".into()),
            (None, Some(fs)) => fs,
            (None, None) => unreachable!("checked above"),
        };
        return Ok(Answer::Gateway {
            flows,
            reason: raw.reason,
            by,
        });
    }
    let name = raw.action.unwrap_or_default();
    let action: HookAction = name.parse().map_err(|()| {
        format!(
            "`{name}` is not a hook action (one of {})",
            HookAction::names().collect::<Vec<_>>().join(", ")
        )
    })?;
    let swap = match raw.swap {
        None => None,
        Some(pair) => match <[String; 2]>::try_from(pair) {
            Ok([a, b]) => Some((a, b)),
            Err(_) => return Err("`swap` takes exactly two node ids".into()),
        },
    };
    let add = raw.add.map(|a| match a {
        RawAdd::Id(id) => AddTask::Insertable(id),
        RawAdd::Task(t) => AddTask::New(NewTask {
            id: t.id,
            name: t.name,
            instruction: t.instruction,
            agent: t.agent,
        }),
    });
    let needs = match action {
        HookAction::SkipTo | HookAction::RemoveNode if raw.target.is_none() => Some("target"),
        HookAction::SwapNodes if swap.is_none() => Some("swap"),
        HookAction::AddNode if add.is_none() => Some("add"),
        _ => None,
    };
    if let Some(key) = needs {
        return Err(format!("`{action}` needs `{key}`"));
    }
    Ok(Answer::Hook(HookAnswer {
        action,
        target: raw.target,
        swap,
        add,
        state_updates: raw.state_updates.unwrap_or_default(),
        message: raw.message,
        reason: raw.reason,
        decided_by: by,
    }))
}

/// What is wrong with a task's answer: outputs it does not declare, or of another type.
fn task_problem(
    answer: &Answer,
    declared: &[(String, Option<crate::vocab::VarKind>)],
) -> Option<String> {
    let Answer::Task { outputs, .. } = answer else {
        return Some(format!("this is a task; the answer is {}", answer.kind()));
    };
    if declared.is_empty() {
        return None;
    }
    for (key, value) in outputs {
        let Some((_, kind)) = declared.iter().find(|(k, _)| k == key) else {
            // An output the task does not declare is reported, not written (an answer may
            // say more than asked, or stand for an agent that answers wrongly); one that
            // looks like a declared output the answer lacks is a typo.
            let missing = declared
                .iter()
                .map(|(k, _)| k.as_str())
                .filter(|k| !outputs.contains_key(*k));
            if let Some(close) = crate::diag::did_you_mean(key, missing) {
                return Some(format!(
                    "the task declares no output `{key}`; did you mean `{close}`?"
                ));
            }
            continue;
        };
        if let Some(kind) = kind
            && !kind.admits_output(value)
        {
            return Some(format!(
                "output `{key}` must be {} (its variable's declared default says so); got {value}",
                kind.described()
            ));
        }
    }
    None
}

/// What is wrong with a gateway's answer: a flow that does not leave the gateway.
fn gateway_problem(answer: &Answer, outgoing: &[String]) -> Option<String> {
    let Answer::Gateway { flows, .. } = answer else {
        return Some(format!(
            "this is a gateway; the answer is {}",
            answer.kind()
        ));
    };
    let flow = flows.iter().find(|f| !outgoing.contains(f))?;
    Some(
        match crate::diag::did_you_mean(flow, outgoing.iter().map(String::as_str)) {
            Some(close) => {
                format!("flow `{flow}` does not leave this gateway; did you mean `{close}`?")
            }
            None => format!(
                "flow `{flow}` does not leave this gateway (its flows: {})",
                outgoing.join(", ")
            ),
        },
    )
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

impl Reasoner for ScriptedReasoner {
    fn describe(&self) -> String {
        self.source.clone()
    }

    fn answers_in_advance(&self, req: &TaskRequest) -> bool {
        let id = req.task_id.as_str();
        let Some((key, entry)) = self.answers.get_key_value(id) else {
            return false;
        };
        if !matches!(entry.answers.first(), Some(Answer::Task { .. })) {
            return false;
        }
        if entry.repeat {
            return true;
        }
        // The visit `next` would serve, without counting it.
        let context = &req.context;
        let visits = self.visits.lock().unwrap_or_else(|e| e.into_inner());
        let mut n = visits
            .get(&format!("{}\u{0}{key}", context.run_id))
            .copied()
            .unwrap_or(0);
        if context.instance.is_some()
            && let Some(visit) = (context.idempotency_key.as_deref()).and_then(|k| visit_of(k, id))
        {
            n = visit - 1;
        }
        entry.answers.get(n).is_some()
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            let id = req.task_id.as_str();
            let (answer, digest) = self.next(&req.context, id, &[id])?;
            self.check_digest(id, digest.as_ref(), &req)?;
            match answer {
                Answer::Task {
                    outputs,
                    reason,
                    raised,
                    by,
                    tools,
                } => {
                    let reason = if tools.is_empty() {
                        reason
                    } else {
                        let called = self.call_tools(&req, &tools).await?;
                        Some(match reason {
                            Some(r) => format!("{r} ({called})"),
                            None => called,
                        })
                    };
                    Ok(TaskAnswer {
                        outputs,
                        reason,
                        decided_by: by,
                        raised,
                    })
                }
                other => Err(self.mismatch(id, &other, "a task")),
            }
        })
    }

    fn confirm(&self, req: super::tools::ConfirmRequest) -> super::tools::Confirming<'_> {
        Box::pin(async move {
            let given = (self.confirming.lock().unwrap_or_else(|e| e.into_inner()))
                .get(&(req.task_id.clone(), req.tool.clone()))
                .cloned();
            match given
                .as_deref()
                .and_then(crate::app::guardrail::decision_of)
            {
                Some(approved) => Ok(super::tools::Confirmation {
                    approved,
                    decided_by: Decider::Scripted,
                    by: None,
                    // Where from is the run's reasoner (`run_started`); the model, which is
                    // told this reason with a denial, needs no file path.
                    reason: Some("given in advance".to_string()),
                }),
                None => Err(super::tools::no_confirmation(&req)),
            }
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            let id = req.gateway_id.as_str();
            let (answer, digest) = self.next(&req.context, id, &[id])?;
            self.check_digest(id, digest.as_ref(), &req)?;
            match answer {
                Answer::Gateway { flows, reason, by } => Ok(GatewayAnswer {
                    flows,
                    reason,
                    decided_by: by,
                }),
                other => Err(self.mismatch(id, &other, "a gateway")),
            }
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            let id = req.hook_id.as_str();
            let (answer, digest) = self.next(&req.context, id, &[id, req.flow_id.as_str()])?;
            self.check_digest(id, digest.as_ref(), &req)?;
            match answer {
                Answer::Hook(answer) => Ok(answer),
                other => Err(self.mismatch(id, &other, "a hook")),
            }
        })
    }
}

/// Where in an answers document a load error is: the answer `KEY` the message names,
/// else the `answers` key, else the start.
fn answer_offset(root: &crate::app::yaml::Node, message: &str) -> usize {
    use crate::app::yaml::Value as Y;
    let Y::Map(entries) = &root.value else {
        return root.span.offset;
    };
    let Some((key, value)) = entries.iter().find(|(k, _)| k.as_str() == Some("answers")) else {
        return root.span.offset;
    };
    let named = message
        .strip_prefix("answer `")
        .and_then(|rest| rest.split('`').next());
    if let (Some(name), Y::Map(answers)) = (named, &value.value)
        && let Some((k, _)) = answers.iter().find(|(k, _)| k.as_str() == Some(name))
    {
        return k.span.offset;
    }
    key.span.offset
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpmn::GatewayKind;
    use crate::bridge::ControlPointContext;
    use serde_json::json;

    fn task(id: &str) -> TaskRequest {
        TaskRequest {
            raises: Vec::new(),
            task_id: id.into(),
            name: None,
            agent: None,
            instruction: None,
            policy: None,
            inputs: Variables::new(),
            outputs: vec![],
            output_kinds: Default::default(),
            context: ControlPointContext::default(),
            calls: Default::default(),
            tools: Default::default(),
        }
    }

    /// What a command agent's task asks before running its CLI: an answer for this visit
    /// is there (a single answer: every visit; a list: until it runs out), and asking does
    /// not spend it. A gateway's answer is no task's.
    #[tokio::test]
    async fn an_answer_in_advance_is_seen_without_being_spent() {
        let doc = json!({"answers": {
            "A": {"outputs": {"x": 1}},
            "L": [{"outputs": {"x": 1}}],
            "G": {"flow": "f"},
        }});
        let r = ScriptedReasoner::from_value(doc, "scenario `s`").unwrap();
        assert!(r.answers_in_advance(&task("A")));
        assert!(r.answers_in_advance(&task("L")));
        assert!(r.answers_in_advance(&task("L")));
        assert!(!r.answers_in_advance(&task("G")));
        assert!(!r.answers_in_advance(&task("nothing")));
        r.task(task("L")).await.unwrap();
        assert!(!r.answers_in_advance(&task("L")));
        r.task(task("A")).await.unwrap();
        assert!(r.answers_in_advance(&task("A")));
        let chain = crate::reason::Chain::new(vec![
            std::sync::Arc::new(crate::reason::NoModel),
            std::sync::Arc::new(r),
        ]);
        assert!(chain.answers_in_advance(&task("A")));
        assert!(!crate::reason::NoModel.answers_in_advance(&task("A")));
    }

    /// An answers file read once serves several chains (the apps `serve` serves, a run
    /// and its child runs): each copy counts its own visits; positions stay.
    #[tokio::test]
    async fn an_unvisited_copy_counts_its_own_visits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, "answers:\n  L:\n    - {outputs: {x: 1}}\n").unwrap();
        let r = ScriptedReasoner::from_file(&path).unwrap();
        assert_eq!(
            r.positions.get("L").map(String::as_str),
            Some(format!("{}:2:3", path.display()).as_str())
        );
        let copy = r.unvisited();
        r.task(task("L")).await.unwrap();
        assert!(!r.answers_in_advance(&task("L")));
        assert!(copy.answers_in_advance(&task("L")));
        copy.task(task("L")).await.unwrap();
        assert_eq!(copy.positions, r.positions);
        assert_eq!(copy.source(), r.source());
    }

    fn gateway(id: &str) -> GatewayRequest {
        GatewayRequest {
            gateway_id: id.into(),
            name: None,
            kind: GatewayKind::Exclusive,
            policy: None,
            condition: None,
            condition_truth: None,
            flows: vec![],
            evaluations: vec![],
            multiple: false,
            escalation: None,
            context: ControlPointContext::default(),
            calls: Default::default(),
            approvers: None,
        }
    }

    fn hook(id: &str, flow: &str) -> HookRequest {
        HookRequest {
            hook_id: id.into(),
            flow_id: flow.into(),
            name: None,
            policy: None,
            instruction: None,
            permitted: HookAction::ALL.to_vec(),
            allowed_targets: vec![],
            flow_target: None,
            settable: vec![],
            insertable_tasks: vec![],
            escalation: None,
            context: ControlPointContext::default(),
            calls: Default::default(),
        }
    }

    #[test]
    fn reads_yaml_answers() {
        let text = "answers:\n  T1: {outputs: {score: 0.82}, reason: stable}\n  G1: {flows: [F1, F2]}\n  F9: {action: SKIP_TO, target: T3, state_updates: {why: policy}}\n";
        let r = ScriptedReasoner::from_text(text, "answers file a.yaml").unwrap();
        assert_eq!(r.keys(), vec!["F9", "G1", "T1"]);
        assert_eq!(r.describe(), "answers file a.yaml");
    }

    #[tokio::test]
    async fn a_list_of_answers_starts_over_for_each_run() {
        let doc = serde_json::json!({"answers": {"G": [{"flow": "F1"}, {"flow": "F2"}]}});
        let r = ScriptedReasoner::from_value(doc, "answers").unwrap();
        let in_run = |run: &str| {
            let mut req = gateway("G");
            req.context.run_id = run.to_string();
            req
        };
        let flows = |a: GatewayAnswer| a.flows;
        assert_eq!(flows(r.gateway(in_run("r1")).await.unwrap()), ["F1"]);
        assert_eq!(flows(r.gateway(in_run("r1")).await.unwrap()), ["F2"]);
        assert_eq!(flows(r.gateway(in_run("r2")).await.unwrap()), ["F1"]);
        assert!(r.gateway(in_run("r1")).await.is_err());
    }

    #[tokio::test]
    async fn answers_each_kind() {
        let doc = json!({"answers": {
            "T1": {"outputs": {"score": 0.82}, "reason": "stable"},
            "G1": {"flow": "F1"},
            "F9": {"action": "skip_to", "target": "T3", "state_updates": {"why": "policy"}},
            "H2": {"action": "add_node", "add": {"id": "N", "instruction": "do it"}},
        }});
        let r = ScriptedReasoner::from_value(doc, "scenario `s`").unwrap();
        let t = r.task(task("T1")).await.unwrap();
        assert_eq!(t.outputs["score"], json!(0.82));
        assert_eq!(t.reason.as_deref(), Some("stable"));
        assert_eq!(t.decided_by, Decider::Scripted);
        let g = r.gateway(gateway("G1")).await.unwrap();
        assert_eq!(g.flows, vec!["F1".to_string()]);
        // a hook keyed by its flow id
        let h = r.hook(hook("screen", "F9")).await.unwrap();
        assert_eq!(h.action, HookAction::SkipTo);
        assert_eq!(h.target.as_deref(), Some("T3"));
        assert_eq!(h.state_updates["why"], json!("policy"));
        let h2 = r.hook(hook("H2", "F0")).await.unwrap();
        assert!(matches!(h2.add, Some(AddTask::New(ref t)) if t.id == "N"));
    }

    #[tokio::test]
    async fn a_list_is_one_answer_per_visit_and_a_single_answer_repeats() {
        let doc = json!({"answers": {
            "T1": [{"outputs": {"n": 1}}, {"outputs": {"n": 2}}],
            "T2": {"outputs": {"n": 7}},
        }});
        let r = ScriptedReasoner::from_value(doc, "scenario `s`").unwrap();
        assert_eq!(r.task(task("T1")).await.unwrap().outputs["n"], json!(1));
        assert_eq!(r.task(task("T1")).await.unwrap().outputs["n"], json!(2));
        let err = r.task(task("T1")).await.unwrap_err();
        assert!(
            matches!(&err, ReasonError::NoAnswer { element, help } if element == "T1" && help.contains("visit 3")),
            "{err}"
        );
        for _ in 0..3 {
            assert_eq!(r.task(task("T2")).await.unwrap().outputs["n"], json!(7));
        }
    }

    /// A call for an instance of a multi-instance task gets the answer of the visit its
    /// idempotency key names, in whatever order the calls come.
    #[tokio::test]
    async fn the_idempotency_key_names_the_visit() {
        let doc = json!({"answers": {
            "T1": [{"outputs": {"n": 1}}, {"outputs": {"n": 2}}, {"outputs": {"n": 3}}],
        }});
        let r = ScriptedReasoner::from_value(doc, "scenario `s`").unwrap();
        let keyed = |visit: u32| {
            let mut req = task("T1");
            req.context.idempotency_key = Some(format!("run-1:T1:{visit}"));
            req.context.instance = Some(crate::vocab::InstanceVisit {
                loop_counter: u64::from(visit),
                instances: 3,
            });
            req
        };
        assert_eq!(r.task(keyed(3)).await.unwrap().outputs["n"], json!(3));
        assert_eq!(r.task(keyed(1)).await.unwrap().outputs["n"], json!(1));
        assert_eq!(r.task(keyed(2)).await.unwrap().outputs["n"], json!(2));
        assert!(r.task(keyed(4)).await.is_err());
        assert_eq!(visit_of("r:T1:2", "T1"), Some(2));
        assert_eq!(visit_of("r:XT1:2", "T1"), None);
        assert_eq!(visit_of("r:T1:0", "T1"), None);
        assert_eq!(visit_of("T1", "T1"), None);
    }

    /// `error: CODE` (with an optional `message`) raises a BPMN error instead of answering.
    #[tokio::test]
    async fn a_task_answer_may_raise_a_bpmn_error() {
        let doc = json!({"answers": {
            "Pay": {"error": "PAYMENT_FAILED", "message": "card declined", "reason": "bank said no"},
            "Ship": {"error": "NOT_SHIPPABLE"},
        }});
        let r = ScriptedReasoner::from_value(doc, "scenario `s`").unwrap();
        let pay = r.task(task("Pay")).await.unwrap();
        assert_eq!(
            pay.raised,
            Some(RaisedError {
                code: "PAYMENT_FAILED".into(),
                message: Some("card declined".into())
            })
        );
        assert!(pay.outputs.is_empty());
        assert_eq!(pay.reason.as_deref(), Some("bank said no"));
        let ship = r.task(task("Ship")).await.unwrap();
        assert_eq!(
            ship.raised.map(|e| e.code).as_deref(),
            Some("NOT_SHIPPABLE")
        );
        // Only a task raises an error.
        let err = r.gateway(gateway("Pay")).await.unwrap_err();
        assert!(matches!(err, ReasonError::Invalid { .. }), "{err}");
    }

    #[tokio::test]
    async fn a_missing_answer_names_the_control_point() {
        let r = ScriptedReasoner::from_value(json!({"answers": {}}), "scenario `s`").unwrap();
        let err = r.gateway(gateway("Gateway_1")).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`Gateway_1`"), "{text}");
        assert!(text.contains("scenario `s`"), "{text}");
    }

    #[tokio::test]
    async fn an_answer_of_the_wrong_kind_is_invalid() {
        let r =
            ScriptedReasoner::from_value(json!({"answers": {"G1": {"outputs": {}}}}), "s").unwrap();
        let err = r.gateway(gateway("G1")).await.unwrap_err();
        assert!(matches!(err, ReasonError::Invalid { .. }), "{err}");
    }

    #[test]
    fn bad_shapes_are_load_errors_naming_the_key() {
        let cases = [
            json!({"answers": {"K1": {"outputz": {}}}}),
            json!({"answers": {"K1": {"reason": "only a reason"}}}),
            json!({"answers": {"K1": {"flow": "F", "action": "continue"}}}),
            json!({"answers": {"K1": {"action": "jump"}}}),
            json!({"answers": {"K1": {"action": "skip_to"}}}),
            json!({"answers": {"K1": {"flow": "F", "target": "X"}}}),
            json!({"answers": {"K1": "F1"}}),
            json!({"answers": {"K1": []}}),
            json!({"answers": {"K1": [{"flow": "F"}, 3]}}),
            json!({"answers": {"K1": {"action": "swap_nodes", "swap": ["A"]}}}),
            json!({"answers": {"K1": {"error": "E", "outputs": {}}}}),
            json!({"answers": {"K1": {"error": "not a code"}}}),
            json!({"answers": {"K1": {"error": ""}}}),
            json!({"answers": {"K1": {"outputs": {}, "message": "m"}}}),
        ];
        for doc in cases {
            let err = ScriptedReasoner::from_value(doc.clone(), "answers file a.yaml").unwrap_err();
            let text = err.to_string();
            assert!(text.contains("`K1`"), "{doc}: {text}");
            assert!(text.starts_with("answers file a.yaml"), "{text}");
        }
        assert!(ScriptedReasoner::from_value(json!({"x": 1}), "s").is_err());
        assert!(ScriptedReasoner::from_value(json!([1]), "s").is_err());
    }
}
