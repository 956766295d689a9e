//! The conformance suite: a table of small BPMN graphs × hook actions × permissions, each
//! with the execution path and the audit records it must produce
//! (`tests/conformance/cases.yaml`, whose header describes the format).
//!
//! Every case runs the whole in-process path: the app is written to a temporary folder
//! and loaded, a [`FlowAgent`] answers with the case's scripted answers, the flow is
//! registered with a [`Registry`], and `run_process` is called over an [`InProcessBridge`]
//! on the engine under test, with a [`MemorySink`] as the journal. The journal is folded
//! into a [`FlowState`] and compared with the case's expectations.
//!
//! The engine is a parameter ([`run_case`], [`run_suite`]): another engine runs the same
//! table by adding a test that passes it. `the_external_engine_conforms` runs it on
//! `tests/interop/engine.py` (an engine written with the official MCP Python SDK) through
//! cuga-flo's [`ExternalEngine`]: each case's run goes over HTTP to that process and its
//! control points come back over HTTP (the venv of `tests/suite/support/python.rs`).
//! `the_flowable_engine_conforms` runs it on a real Flowable server (tests/suite/support/
//! flowable.rs): each case's model is augmented, deployed and worked through Flowable's
//! REST API. `the_kogito_engine_conforms` builds one Kogito service holding every case's
//! process (each under its case's name, its ids prefixed with it: Kogito keys user tasks
//! by node id across a service) and runs the table on it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cuga_flo::app::load_app;
use cuga_flo::app::registry::app_from_config;
use cuga_flo::diag::Severity;
use cuga_flo::engine::WorkflowEngine;
use cuga_flo::engine::external::{ExternalEngine, ExternalSettings};
use cuga_flo::engine::flowable::rest::Endpoint;
use cuga_flo::engine::flowable::{FlowableEngine, FlowableSettings};
use cuga_flo::engine::kogito::augment::{augment, java_identifier};
use cuga_flo::engine::kogito::rest::Endpoint as KogitoEndpoint;
use cuga_flo::engine::kogito::{KogitoEngine, KogitoSettings, project};
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::engine::{EngineError, RunOutcome, RunRequest};
use cuga_flo::harness::FlowAgent;
use cuga_flo::journal::state::HookRecord;
use cuga_flo::journal::store::MemorySink;
use cuga_flo::journal::{Event, FlowState, Record};
use cuga_flo::mcp::{
    BridgeServer, InProcessBridge, RegisteredFlow, Registry, RunProcessArgs, RunProcessResult,
};
use cuga_flo::reason::ScriptedReasoner;
use cuga_flo::vocab::{Decider, HookAction, RunStatus, TaskStatus};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::support::flowable;
use crate::support::kogito;
use crate::support::listener;
use crate::support::python;

const CASES: &str = "tests/conformance/cases.yaml";

/// How long one case may run before it counts as hung.
const CASE_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// The table

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Suite {
    /// Shared models, referenced from the cases with YAML aliases; not read here.
    #[serde(default, rename = "models")]
    _models: Value,
    /// Read one by one, so that an error names its case.
    cases: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    about: String,
    model: Model,
    /// Config YAML appended after the generated `flow:` header.
    #[serde(default)]
    config: String,
    /// Scripted answers (control-point id → answer or list of answers).
    #[serde(default)]
    answers: Map<String, Value>,
    /// Initial variables, over the config's `variables` defaults.
    #[serde(default)]
    inputs: Map<String, Value>,
    /// Replaces the annotations' step budget.
    step_budget: Option<u64>,
    /// Engine name → why that engine cannot run this case.
    #[serde(default)]
    unsupported: BTreeMap<String, String>,
    /// A known defect: the expectation is the correct behaviour, which is not met yet.
    known_bug: Option<String>,
    /// The apps the case's call activities call, by process key (their flow id): each
    /// call runs one as a child run on the native engine ([`CaseChildren`]).
    #[serde(default)]
    called: BTreeMap<String, Called>,
    expect: Expect,
}

/// An app a case's call activity calls.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Called {
    model: Model,
    #[serde(default)]
    config: String,
    #[serde(default)]
    answers: Map<String, Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    /// `[kind, id]`: the element's local name and id.
    #[serde(default)]
    nodes: Vec<Vec<String>>,
    /// `[id, source, target]` or `[id, source, target, condition]`.
    #[serde(default)]
    flows: Vec<Vec<String>>,
    /// BPMN XML written into the process after the nodes and flows: what the table form
    /// cannot say (sub-processes, boundary events, event definitions).
    #[serde(default)]
    xml: String,
    /// BPMN XML written into `<definitions>` after the process (`<error>`, `<escalation>`).
    #[serde(default)]
    definitions: String,
    /// Gateway id → its default flow.
    #[serde(default)]
    default: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    status: RunStatus,
    /// The nodes entered, in order.
    path: Option<Vec<String>>,
    /// The nodes entered, in any order (concurrent branches).
    path_set: Option<Vec<String>>,
    /// Nodes that must never be entered (when the path itself is not determined).
    #[serde(default)]
    not_entered: Vec<String>,
    /// Every hook evaluation, in order.
    #[serde(default)]
    audit: Vec<Audit>,
    /// A subset of the final variables.
    #[serde(default)]
    variables: Map<String, Value>,
    /// Variables that must not be set at the end.
    #[serde(default)]
    unset: Vec<String>,
    /// The tasks recorded as skipped (any order).
    skipped: Option<Vec<String>>,
    message_contains: Option<String>,
    /// Every BPMN error and escalation thrown, in order: `[kind, code, thrower, caught_by]`
    /// (`~` for no code, or nothing catching it).
    /// (Checked when given.)
    throws: Option<Vec<Throw>>,
    /// Every instance of a multi-instance activity entered, in order:
    /// `[node, loop_counter, instances]` (the `node_entered` records' `instance`).
    /// (Checked when given.)
    instances: Option<Vec<(String, u64, u64)>>,
    /// The idempotency keys of the `task_finished` records, in any order, without the run
    /// id (`Review:2`: the second visit of `Review`). (Checked when given.)
    task_keys: Option<Vec<String>>,
    /// Every message and signal received, in order: `[kind, name, catch, thrown_by]`
    /// (`~`: delivered from outside). (Checked when given.)
    received: Option<Vec<Received>>,
    /// Every child run started, in order: `[call activity, key, process key]` (the
    /// `child_started` records; the key without the run id). (Checked when given.)
    children: Option<Vec<(String, String, String)>>,
}

/// `[kind, name, catch, thrown_by]`.
type Received = (String, String, String, Option<String>);

/// `[kind, code, thrower, caught_by]`.
type Throw = (String, Option<String>, String, Option<String>);

/// One expected hook evaluation. `target`, `swap`, `added` and `denied` must match exactly
/// (absent: none recorded); `decided_by` and `reason_contains` are checked when given.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Audit {
    hook: String,
    action: HookAction,
    target: Option<String>,
    swap: Option<(String, String)>,
    added: Option<String>,
    denied: Option<HookAction>,
    /// Whether the engine refused the action (`HookEvaluated.rejected`).
    #[serde(default)]
    rejected: bool,
    decided_by: Option<Decider>,
    reason_contains: Option<String>,
}

fn load_suite() -> Result<Vec<Case>, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(CASES);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let node = cuga_flo::app::yaml::parse(&text).map_err(|e| {
        let line = text[..e.span.offset.min(text.len())].lines().count();
        format!("{CASES}:{line}: {e}")
    })?;
    let suite: Suite =
        serde_json::from_value(node.to_json()).map_err(|e| format!("{CASES}: {e}"))?;
    let mut cases: Vec<Case> = Vec::new();
    for (i, value) in suite.cases.into_iter().enumerate() {
        let name = value
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let case: Case = serde_json::from_value(value)
            .map_err(|e| format!("{CASES}: case {} (`{name}`): {e}", i + 1))?;
        if cases.iter().any(|c| c.name == case.name) {
            return Err(format!("{CASES}: two cases are named `{name}`"));
        }
        if case.expect.path.is_some() && case.expect.path_set.is_some() {
            return Err(format!("{CASES}: case `{name}`: give `path` or `path_set`"));
        }
        cases.push(case);
    }
    // CUGA_FLO_CONFORMANCE_ONLY=a,b: only the cases whose names contain one of these
    // (while working on some; the suite runs whole otherwise).
    if let Ok(only) = std::env::var("CUGA_FLO_CONFORMANCE_ONLY") {
        let only: Vec<&str> = only.split(',').filter(|s| !s.is_empty()).collect();
        cases.retain(|c| only.is_empty() || only.iter().any(|o| c.name.contains(o)));
    }
    Ok(cases)
}

// ---------------------------------------------------------------------------------------
// Running a case

/// Run one case on `engine`: `Err` lists what differed from the expectations.
fn run_case(case: &Case, engine: Arc<dyn WorkflowEngine>) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let config = write_app(dir.path(), case)?;
    let mut called = BTreeMap::new();
    for (key, app) in &case.called {
        let config = write_parts(dir.path(), key, &app.model, &app.config)?;
        called.insert(key.clone(), (config, app.answers.clone()));
    }
    let children = (!called.is_empty()).then(|| {
        Arc::new(CaseChildren {
            called: Arc::new(called),
        }) as Arc<dyn cuga_flo::bridge::child::ChildRuns>
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("no tokio runtime: {e}"))?;
    let (result, records) = runtime.block_on(async {
        tokio::time::timeout(CASE_TIMEOUT, run(case, &config, engine, children))
            .await
            .map_err(|_| format!("the run did not finish within {CASE_TIMEOUT:?}"))?
    })?;
    let diffs = compare(&case.expect, &result, &records);
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("\n"))
    }
}

/// Write the case's app: `<dir>/<case>/config/{model.bpmn, case_config.yaml}` and a
/// one-line policy for every `../policies/<file>` the config names.
fn write_app(dir: &Path, case: &Case) -> Result<PathBuf, String> {
    write_parts(dir, &case.name, &case.model, &case.config)
}

/// Write app `name` (also its flow id) of `model` and `config` under `dir`.
fn write_parts(
    dir: &Path,
    name: &str,
    model: &Model,
    config_text: &str,
) -> Result<PathBuf, String> {
    let app = dir.join(name);
    let io = |e: std::io::Error| format!("cannot write the app: {e}");
    fs::create_dir_all(app.join("config")).map_err(io)?;
    fs::create_dir_all(app.join("policies")).map_err(io)?;
    fs::write(app.join("config/model.bpmn"), bpmn(model)?).map_err(io)?;
    for rest in config_text.split("../policies/").skip(1) {
        let file: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || "._-".contains(*c))
            .collect();
        let text = format!("Decide as case `{name}` scripts it.\n");
        fs::write(app.join("policies").join(file), text).map_err(io)?;
    }
    let config = app.join("config/case_config.yaml");
    let header = format!("flow:\n  id: {name}\n  name: {name}\n  bpmn_file: model.bpmn\n");
    fs::write(&config, header + config_text).map_err(io)?;
    Ok(config)
}

fn bpmn(model: &Model) -> Result<String, String> {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\" targetNamespace=\"t\">\n\
         <process id=\"conformance\" isExecutable=\"true\">\n",
    );
    for node in &model.nodes {
        let [kind, id] = node.as_slice() else {
            return Err(format!("a node is `[kind, id]`, not {node:?}"));
        };
        let default = match model.default.get(id) {
            Some(flow) => format!(" default=\"{flow}\""),
            None => String::new(),
        };
        let _ = writeln!(xml, "  <{kind} id=\"{id}\"{default}/>");
    }
    for flow in &model.flows {
        let (id, source, target, condition) = match flow.as_slice() {
            [id, source, target] => (id, source, target, None),
            [id, source, target, condition] => (id, source, target, Some(condition)),
            _ => {
                return Err(format!(
                    "a flow is `[id, source, target, condition?]`, not {flow:?}"
                ));
            }
        };
        let _ = write!(
            xml,
            "  <sequenceFlow id=\"{id}\" sourceRef=\"{source}\" targetRef=\"{target}\""
        );
        match condition {
            Some(c) => {
                let c = escape(c);
                let _ = writeln!(
                    xml,
                    "><conditionExpression>{c}</conditionExpression></sequenceFlow>"
                );
            }
            None => xml.push_str("/>\n"),
        }
    }
    xml.push_str(&model.xml);
    xml.push_str("</process>\n");
    xml.push_str(&model.definitions);
    xml.push_str("</definitions>\n");
    Ok(xml)
}

/// Load the app, build its harness, register it and call `run_process` over MCP.
async fn run(
    case: &Case,
    config: &Path,
    engine: Arc<dyn WorkflowEngine>,
    children: Option<Arc<dyn cuga_flo::bridge::child::ChildRuns>>,
) -> Result<(RunProcessResult, Vec<Record>), String> {
    let flow = Flow {
        name: &case.name,
        answers: &case.answers,
        inputs: case.inputs.clone(),
        step_budget: case.step_budget,
        run_id: format!("conformance-{}", case.name),
    };
    run_flow(flow, config, engine, children).await
}

/// One run of an app written under a case.
struct Flow<'a> {
    name: &'a str,
    answers: &'a Map<String, Value>,
    inputs: Map<String, Value>,
    step_budget: Option<u64>,
    run_id: String,
}

async fn run_flow(
    case: Flow<'_>,
    config: &Path,
    engine: Arc<dyn WorkflowEngine>,
    children: Option<Arc<dyn cuga_flo::bridge::child::ChildRuns>>,
) -> Result<(RunProcessResult, Vec<Record>), String> {
    let loaded = load_app(&app_from_config(config));
    let errors: Vec<&str> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message.as_str())
        .collect();
    if !errors.is_empty() {
        return Err(format!("the app does not load: {}", errors.join("; ")));
    }
    let process = loaded
        .process()
        .cloned()
        .ok_or("the model has no process")?;
    let mut variables: Map<String, Value> = loaded
        .config
        .iter()
        .flat_map(|c| &c.variables)
        .map(|v| (v.name.value.clone(), v.default.clone()))
        .collect();
    variables.extend(case.inputs.clone());

    let source = format!("conformance case `{}`", case.name);
    let reasoner =
        ScriptedReasoner::from_answers(case.answers.clone(), source).map_err(|e| e.to_string())?;
    let agent = FlowAgent::new(&loaded, Arc::new(reasoner)).map_err(|e| e.to_string())?;
    let mut annotations = agent.annotations();
    if let Some(budget) = case.step_budget {
        annotations.step_budget = budget;
    }
    let registry = Arc::new(Registry::default());
    let process_key = registry.register(RegisteredFlow {
        process_key: agent.config().process_key().to_string(),
        process: Arc::new(process),
        annotations,
        harness: Arc::new(agent),
    });
    let bridge = InProcessBridge::start(BridgeServer::new(registry.clone(), engine, None)).await?;
    let sink = Arc::new(MemorySink::new());
    let run_id = case.run_id.clone();
    registry.attach_sink(&run_id, sink.clone());
    if let Some(children) = children {
        registry.attach_children(&run_id, children);
    }
    let args = RunProcessArgs {
        process_key,
        run_id,
        variables,
        bridge: None,
        adopt: None,
        lost_parks: false,
        untrusted: None,
    };
    let result = bridge.client().run_process(&args).await;
    bridge.shutdown().await;
    let result = result.map_err(|e| format!("run_process failed: {}", e.message))?;
    Ok((result, sink.records()))
}

/// The child runs of a case's call activities: each call runs the called app (written
/// beside the case) on the native engine, with its scripted answers and the call's
/// variables over its config's defaults, as `start` runs a called app of the apps folder.
struct CaseChildren {
    /// Process key → the app's config and its answers.
    called: Arc<CalledApps>,
}

/// Process key → the called app's config and its scripted answers.
type CalledApps = BTreeMap<String, (PathBuf, Map<String, Value>)>;

impl cuga_flo::bridge::child::ChildRuns for CaseChildren {
    fn run_child(
        &self,
        call: cuga_flo::bridge::child::ChildCall,
    ) -> cuga_flo::bridge::BoxFuture<
        'static,
        Result<cuga_flo::bridge::child::ChildOutcome, cuga_flo::bridge::child::ChildError>,
    > {
        let called = self.called.clone();
        Box::pin(async move {
            let (config, answers) = called
                .get(&call.process_key)
                .ok_or_else(|| format!("no app with process key `{}`", call.process_key))?;
            let flow = Flow {
                name: &call.process_key,
                answers,
                inputs: call.variables.clone(),
                step_budget: None,
                run_id: call.run_id.clone(),
            };
            let (result, records) = run_flow(flow, config, Arc::new(NativeEngine::new()), None)
                .await
                .map_err(cuga_flo::bridge::child::ChildError::from)?;
            let state = FlowState::fold(&records);
            Ok(cuga_flo::bridge::child::ChildOutcome {
                run_id: call.run_id,
                status: result.status,
                message: result.message,
                variables: result.variables,
                error_code: uncaught_error(&records, result.status),
                untrusted: state.untrusted,
            })
        })
    }
}

/// The code of the BPMN error a failed run ended with (the last one nothing caught).
fn uncaught_error(records: &[Record], status: RunStatus) -> Option<String> {
    if status != RunStatus::Failed {
        return None;
    }
    records.iter().rev().find_map(|r| match &r.event {
        Event::EventThrown {
            kind: cuga_flo::journal::event::ThrownKind::Error,
            code,
            caught_by: None,
            ..
        } => code.clone(),
        _ => None,
    })
}

// ---------------------------------------------------------------------------------------
// Comparing

fn compare(expect: &Expect, result: &RunProcessResult, records: &[Record]) -> Vec<String> {
    let mut diffs = journal_shape(records);
    let state = FlowState::fold(records);
    // The journal and run_process's answer tell the same story.
    if state.status != Some(result.status) {
        diffs.push(format!(
            "journal: its status is {:?}, run_process answered {:?}",
            state.status, result.status
        ));
    }
    if state.execution_path != result.path {
        diffs.push(format!(
            "journal: its path is {:?}, run_process answered {:?}",
            state.execution_path, result.path
        ));
    }

    if result.status != expect.status {
        diffs.push(format!(
            "status: expected {:?}, got {:?} (message: {})",
            expect.status,
            result.status,
            result.message.as_deref().unwrap_or("none")
        ));
    }
    if let Some(part) = &expect.message_contains {
        let message = result.message.as_deref().unwrap_or("");
        if !message.contains(part.as_str()) {
            diffs.push(format!(
                "message: expected it to contain {part:?}, got {message:?}"
            ));
        }
    }
    let path = &state.execution_path;
    if let Some(want) = &expect.path
        && want != path
    {
        diffs.push(format!(
            "path:\n    expected {want:?}\n    got      {path:?}"
        ));
    }
    if let Some(want) = &expect.path_set
        && sorted(want) != sorted(path)
    {
        diffs.push(format!(
            "path (any order):\n    expected {:?}\n    got      {path:?}",
            sorted(want)
        ));
    }
    for node in &expect.not_entered {
        if path.contains(node) {
            diffs.push(format!("path: `{node}` must not be entered, got {path:?}"));
        }
    }
    let throws: Vec<Throw> = state
        .throws
        .iter()
        .map(|t| {
            (
                t.kind.as_str().to_string(),
                t.code.clone(),
                t.node.clone(),
                t.caught_by.clone(),
            )
        })
        .collect();
    if let Some(want) = &expect.throws
        && *want != throws
    {
        diffs.push(format!(
            "throws:\n    expected {want:?}\n    got      {throws:?}"
        ));
    }
    if let Some(want) = &expect.instances {
        let got: Vec<(String, u64, u64)> = records
            .iter()
            .filter_map(|r| match &r.event {
                Event::NodeEntered {
                    node,
                    instance: Some(i),
                    ..
                } => Some((node.clone(), i.loop_counter, i.instances)),
                _ => None,
            })
            .collect();
        if *want != got {
            diffs.push(format!(
                "instances:\n    expected {want:?}\n    got      {got:?}"
            ));
        }
    }
    if let Some(want) = &expect.task_keys {
        let got: Vec<String> = records
            .iter()
            .filter_map(|r| match &r.event {
                Event::TaskFinished { key: Some(key), .. } => Some(
                    key.split_once(':')
                        .map_or(key.clone(), |(_, k)| k.to_string()),
                ),
                _ => None,
            })
            .collect();
        if sorted(want) != sorted(&got) {
            diffs.push(format!(
                "task keys:\n    expected {want:?}\n    got      {got:?}"
            ));
        }
    }
    let received: Vec<Received> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::MessageReceived {
                kind,
                name,
                node,
                thrown_by,
                ..
            } => Some((
                kind.as_str().to_string(),
                name.clone(),
                node.clone(),
                thrown_by.clone(),
            )),
            _ => None,
        })
        .collect();
    if let Some(want) = &expect.received
        && *want != received
    {
        diffs.push(format!(
            "received:\n    expected {want:?}\n    got      {received:?}"
        ));
    }
    if let Some(want) = &expect.children {
        let got: Vec<(String, String, String)> = records
            .iter()
            .filter_map(|r| match &r.event {
                Event::ChildStarted {
                    node,
                    key,
                    run_id,
                    process_key,
                } => {
                    // The child's id is derived from the call's key.
                    if *run_id != cuga_flo::bridge::child::child_run_id(key) {
                        return Some((
                            node.clone(),
                            format!("{key} (child {run_id})"),
                            process_key.clone(),
                        ));
                    }
                    let key = key
                        .split_once(':')
                        .map_or(key.clone(), |(_, k)| k.to_string());
                    Some((node.clone(), key, process_key.clone()))
                }
                _ => None,
            })
            .collect();
        if *want != got {
            diffs.push(format!(
                "children:\n    expected {want:?}\n    got      {got:?}"
            ));
        }
    }
    if let Some(diff) = compare_audit(&expect.audit, &state.hook_evaluations) {
        diffs.push(diff);
    }
    let vars = &state.process_variables;
    for (name, want) in &expect.variables {
        if vars.get(name) != Some(want) {
            diffs.push(format!(
                "variable `{name}`: expected {want}, got {:?}",
                vars.get(name)
            ));
        }
    }
    for name in &expect.unset {
        if let Some(value) = vars.get(name) {
            diffs.push(format!("variable `{name}`: expected unset, got {value}"));
        }
    }
    if let Some(want) = &expect.skipped {
        let got: Vec<String> = state
            .task_results
            .iter()
            .filter(|(_, runs)| runs.iter().any(|r| r.status == TaskStatus::Skipped))
            .map(|(task, _)| task.clone())
            .collect();
        if sorted(want) != got {
            diffs.push(format!(
                "skipped tasks: expected {:?}, got {got:?}",
                sorted(want)
            ));
        }
    }
    diffs
}

/// What every journal must look like: `RunStarted` first, one `RunFinished`, last.
fn journal_shape(records: &[Record]) -> Vec<String> {
    let mut diffs = Vec::new();
    if !matches!(
        records.first().map(|r| &r.event),
        Some(Event::RunStarted { .. })
    ) {
        diffs.push("journal: the first record is not `run_started`".to_string());
    }
    let finished = records
        .iter()
        .filter(|r| matches!(r.event, Event::RunFinished { .. }))
        .count();
    let last_is_finished = matches!(
        records.last().map(|r| &r.event),
        Some(Event::RunFinished { .. })
    );
    if finished != 1 || !last_is_finished {
        diffs.push(format!(
            "journal: expected one `run_finished`, last; found {finished} (last is finished: {last_is_finished})"
        ));
    }
    diffs
}

fn sorted(items: &[String]) -> Vec<String> {
    let mut items = items.to_vec();
    items.sort();
    items
}

/// `None` when every evaluation matches; otherwise both lists, with the differing
/// entries marked.
fn compare_audit(want: &[Audit], got: &[HookRecord]) -> Option<String> {
    let problems: Vec<(usize, String)> = (0..want.len().max(got.len()))
        .filter_map(|i| match (want.get(i), got.get(i)) {
            (Some(w), Some(g)) => audit_mismatch(w, g).map(|why| (i, why)),
            (Some(_), None) => Some((i, "missing".to_string())),
            (None, Some(_)) => Some((i, "unexpected".to_string())),
            (None, None) => None,
        })
        .collect();
    if problems.is_empty() {
        return None;
    }
    let mut out = String::from("audit:");
    for (i, why) in &problems {
        let _ = write!(out, "\n    [{i}] {why}");
    }
    out.push_str("\n    expected:");
    for w in want {
        let _ = write!(out, "\n      {}", show_expected(w));
    }
    out.push_str("\n    got:");
    for g in got {
        let _ = write!(out, "\n      {}", show_record(g));
    }
    Some(out)
}

fn audit_mismatch(w: &Audit, g: &HookRecord) -> Option<String> {
    let mut why = Vec::new();
    differ(&mut why, "hook", &w.hook, &g.hook);
    differ(&mut why, "action", &w.action, &g.action);
    differ(&mut why, "target", &w.target, &g.target);
    differ(&mut why, "swap", &w.swap, &g.swap);
    differ(&mut why, "added", &w.added, &g.added);
    differ(&mut why, "denied", &w.denied, &g.denied);
    differ(&mut why, "rejected", &w.rejected, &g.rejected.is_some());
    if let Some(by) = &w.decided_by {
        differ(&mut why, "decided_by", by, &g.decided_by);
    }
    let reason = g.reason.as_deref().unwrap_or("");
    if let Some(part) = &w.reason_contains
        && !reason.contains(part.as_str())
    {
        why.push(format!(
            "reason: expected it to contain {part:?}, got {reason:?}"
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

fn differ<T: PartialEq + std::fmt::Debug>(why: &mut Vec<String>, field: &str, want: &T, got: &T) {
    if want != got {
        why.push(format!("{field}: expected {want:?}, got {got:?}"));
    }
}

/// `h: skip_to → C`, `h: continue (denied skip_to)`, `h: swap_nodes A ⇄ B`, ...
fn show(
    hook: &str,
    action: HookAction,
    target: Option<&String>,
    swap: Option<&(String, String)>,
    added: Option<&String>,
    denied: Option<HookAction>,
) -> String {
    let mut s = format!("{hook}: {action}");
    if let Some(t) = target {
        let _ = write!(s, " → {t}");
    }
    if let Some((a, b)) = swap {
        let _ = write!(s, " {a} ⇄ {b}");
    }
    if let Some(n) = added {
        let _ = write!(s, " + {n}");
    }
    if let Some(d) = denied {
        let _ = write!(s, " (denied {d})");
    }
    s
}

fn show_expected(w: &Audit) -> String {
    let s = show(
        &w.hook,
        w.action,
        w.target.as_ref(),
        w.swap.as_ref(),
        w.added.as_ref(),
        w.denied,
    );
    if w.rejected { s + " (rejected)" } else { s }
}

fn show_record(g: &HookRecord) -> String {
    let mut s = show(
        &g.hook,
        g.action,
        g.target.as_ref(),
        g.swap.as_ref(),
        g.added.as_ref(),
        g.denied,
    );
    if let Some(why) = &g.rejected {
        let _ = write!(s, " (rejected: {why})");
    }
    let reason = g.reason.as_deref().unwrap_or("-");
    let _ = write!(s, " [{}: {reason}]", g.decided_by.as_str());
    s
}

// ---------------------------------------------------------------------------------------
// The suite

#[derive(Default)]
struct Report {
    engine: String,
    passed: usize,
    /// Case name and what differed.
    failed: Vec<(String, String)>,
    /// Case name and why the engine cannot run it.
    skipped: Vec<(String, String)>,
    /// Case name, the bug and what differed.
    known_bugs: Vec<(String, String, String)>,
}

/// Run every case on `engine`.
fn run_suite(engine: Arc<dyn WorkflowEngine>) -> Report {
    let mut report = Report {
        engine: engine.name().to_string(),
        ..Report::default()
    };
    let cases = match load_suite() {
        Ok(cases) => cases,
        Err(e) => {
            report.failed.push(("(the table)".into(), e));
            return report;
        }
    };
    for case in &cases {
        if let Some(reason) = case.unsupported.get(engine.name()) {
            report.skipped.push((case.name.clone(), reason.clone()));
            continue;
        }
        match (run_case(case, engine.clone()), &case.known_bug) {
            (Ok(()), None) => report.passed += 1,
            (Err(diff), None) => report
                .failed
                .push((case.name.clone(), with_about(case, diff))),
            (Err(diff), Some(bug)) => {
                report
                    .known_bugs
                    .push((case.name.clone(), bug.clone(), diff));
            }
            (Ok(()), Some(bug)) => report.failed.push((
                case.name.clone(),
                format!("passes although marked `known_bug: {bug}`; remove the mark"),
            )),
        }
    }
    report
}

fn with_about(case: &Case, diff: String) -> String {
    if case.about.is_empty() {
        diff
    } else {
        format!("({})\n{diff}", case.about)
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

impl Report {
    fn summary(&self) -> String {
        let mut out = format!(
            "conformance on `{}`: {} passed, {} failed, {} known bugs, {} unsupported\n",
            self.engine,
            self.passed,
            self.failed.len(),
            self.known_bugs.len(),
            self.skipped.len()
        );
        for (name, reason) in &self.skipped {
            let _ = writeln!(out, "  unsupported `{name}`: {reason}");
        }
        for (name, bug, diff) in &self.known_bugs {
            let _ = writeln!(out, "  known bug `{name}`: {bug}\n{}", indent(diff));
        }
        out
    }

    fn failures(&self) -> String {
        let mut out = format!(
            "{} conformance case(s) failed on `{}`:\n",
            self.failed.len(),
            self.engine
        );
        for (name, diff) in &self.failed {
            let _ = write!(out, "\n✗ {name}\n{}", indent(diff));
        }
        out
    }
}

#[test]
fn the_native_engine_conforms() {
    let report = run_suite(Arc::new(NativeEngine::new()));
    eprintln!("{}", report.summary());
    assert!(report.failed.is_empty(), "{}", report.failures());
}

#[test]
fn the_external_engine_conforms() {
    let journals = tempfile::tempdir().unwrap();
    let engine = listener::Listener::start(
        "engine.py",
        std::process::Command::new(python::python())
            .arg(python::interop_dir().join("engine.py"))
            .args(["--port", "0", "--journal-dir"])
            .arg(journals.path())
            .env("CUGA_FLO_ENGINE_CALL_TIMEOUT", "20")
            .env("PYTHONUNBUFFERED", "1"),
    );
    let settings = ExternalSettings {
        url: engine.url.clone(),
        token: None,
        callback: "127.0.0.1:0".parse().unwrap(),
        connect_timeout: Duration::from_secs(10),
        idle_timeout: Some(Duration::from_secs(20)),
    };
    let report = run_suite(Arc::new(ExternalEngine::new(settings)));
    eprintln!("{}", report.summary());
    assert!(report.failed.is_empty(), "{}", report.failures());
}

#[test]
fn the_flowable_engine_conforms() {
    let server = flowable::shared();
    let [(_, user), (_, password)] = flowable::credentials();
    let settings = FlowableSettings {
        endpoint: Endpoint {
            jobs_url: Endpoint::jobs_url_for(&server.url),
            url: server.url.clone(),
            username: Some(user),
            password: Some(cuga_flo::secret::Secret::new(password)),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(60),
        },
        deploy: true,
        definition_key: None,
        lock: Duration::from_secs(600),
    };
    let report = run_suite(Arc::new(FlowableEngine::new(settings)));
    eprintln!("{}", report.summary());
    assert!(report.failed.is_empty(), "{}", report.failures());
}

/// The Kogito service of every case the engine supports: each case's process under its
/// name, every id prefixed `<case>__`.
fn kogito_service() -> kogito::Kogito {
    let cases = load_suite().expect("the table loads");
    let dir = tempfile::tempdir().unwrap();
    let mut processes = Vec::new();
    for case in cases
        .iter()
        .filter(|c| !c.unsupported.contains_key("kogito"))
    {
        let config = write_app(dir.path(), case).unwrap();
        let loaded = load_app(&app_from_config(&config));
        let process = loaded.process().cloned().expect("the case has a process");
        let agent = FlowAgent::new(
            &loaded,
            Arc::new(
                ScriptedReasoner::from_answers(case.answers.clone(), "kogito build".to_string())
                    .unwrap(),
            ),
        )
        .unwrap();
        let annotations = agent.annotations();
        // Kogito keeps declared variables only: the config's, the inputs, and every name
        // the answers write.
        let mut variables: Vec<String> = loaded
            .config
            .iter()
            .flat_map(|c| &c.variables)
            .map(|v| v.name.value.clone())
            .collect();
        variables.extend(case.inputs.keys().cloned());
        collect_written(&Value::Object(case.answers.clone()), &mut variables);
        variables.sort();
        variables.dedup();
        let key = agent.config().process_key().to_string();
        processes.push(
            augment(
                &process,
                &annotations,
                &key,
                &variables,
                &format!("{key}__"),
            )
            .unwrap_or_else(|e| panic!("{}: {e:?}", case.name)),
        );
    }
    let project_dir = dir.path().join("conformance");
    project::write(&project_dir, "conformance", &processes, 8081).unwrap();
    kogito::Kogito::start(project_dir.to_str().unwrap())
}

/// Every key under `outputs`, `variables` or `state_updates` in the answers.
fn collect_written(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if matches!(k.as_str(), "outputs" | "variables" | "state_updates")
                    && let Value::Object(written) = v
                {
                    out.extend(written.keys().cloned());
                }
                collect_written(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_written(v, out)),
        _ => {}
    }
}

/// Kogito runs each case's process: the process named after the case, ids prefixed.
struct KogitoCases {
    url: String,
}

impl WorkflowEngine for KogitoCases {
    fn name(&self) -> &'static str {
        "kogito"
    }

    fn run(
        &self,
        request: RunRequest,
        control_points: Arc<dyn cuga_flo::bridge::ControlPoints>,
        events: Arc<dyn cuga_flo::journal::EventSink>,
    ) -> cuga_flo::bridge::BoxFuture<'static, Result<RunOutcome, EngineError>> {
        let key = request.process_key.clone();
        let engine = KogitoEngine::new(KogitoSettings {
            endpoint: KogitoEndpoint {
                url: self.url.clone(),
                connect_timeout: Duration::from_secs(10),
                timeout: Duration::from_secs(60),
            },
            process_id: Some(java_identifier(&key)),
            id_prefix: format!("{key}__"),
        });
        engine.run(request, control_points, events)
    }
}

#[test]
fn the_kogito_engine_conforms() {
    let service = kogito_service();
    let report = run_suite(Arc::new(KogitoCases {
        url: service.url.clone(),
    }));
    eprintln!("{}", report.summary());
    assert!(report.failed.is_empty(), "{}", report.failures());
}
