//! The native engine, read as a specification: processes are small BPMN documents, the
//! harness is a scripted double that answers per element and records every call, and the
//! journal is an in-memory sink.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cuga_flo::bpmn::{self, Process};
use cuga_flo::bridge::{
    Answer, BoxFuture, ControlPointContext, ControlPointError, ControlPoints, FlowAnnotations,
    GatewayDecision, HookDecision, NewTask, TaskOutcome,
};
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::engine::{EngineError, RunOutcome, RunRequest, WorkflowEngine};
use cuga_flo::journal::{Event, EventSink, JournalError, Record};
use cuga_flo::vocab::{
    CallOutcome, ControlPointKind, Decider, HookAction, ModelCall, RunStatus, Taint, TaskStatus,
    Untrusted,
};
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------
// Processes

/// A process from BPMN elements (`body`) and flows written `id: source -> target`, one
/// per line or comma-separated.
fn process(body: &str, flows: &str) -> Arc<Process> {
    let flows: String = flows
        .split([',', '\n'])
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| {
            let (id, ends) = f.split_once(':').expect("`id: source -> target`");
            let (source, target) = ends.split_once("->").expect("`source -> target`");
            format!(
                r#"<sequenceFlow id="{}" sourceRef="{}" targetRef="{}"/>"#,
                id.trim(),
                source.trim(),
                target.trim()
            )
        })
        .collect();
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
  <process id="P" isExecutable="true">
    {body}
    {flows}
  </process>
</definitions>"#
    );
    let doc = bpmn::parse(Path::new("t.bpmn"), xml.as_bytes()).expect("the test BPMN parses");
    Arc::new(doc.main_process().expect("a process").clone())
}

/// s → a → b → e
fn chain() -> Arc<Process> {
    process(
        r#"<startEvent id="s"/><task id="a" name="A"/><task id="b" name="B"/><endEvent id="e"/>"#,
        "f1: s -> a, f2: a -> b, f3: b -> e",
    )
}

/// s → a → b → c → e
fn longer_chain() -> Arc<Process> {
    process(
        r#"<startEvent id="s"/><task id="a"/><task id="b"/><task id="c"/><endEvent id="e"/>"#,
        "f1: s -> a, f2: a -> b, f3: b -> c, f4: c -> e",
    )
}

/// s → split ⇉ (a) and (b1 → b2) → join → c → e
fn parallel() -> Arc<Process> {
    process(
        r#"<startEvent id="s"/><parallelGateway id="split"/>
           <task id="a"/><task id="b1"/><task id="b2"/>
           <parallelGateway id="join"/><task id="c"/><endEvent id="e"/>"#,
        "f1: s -> split, fa: split -> a, fa2: a -> join,
         fb: split -> b1, fb2: b1 -> b2, fb3: b2 -> join,
         f9: join -> c, f10: c -> e",
    )
}

/// The demo `receive_order`: receive, then reserve inventory and generate the invoice in
/// parallel, then end.
fn receive_order() -> Arc<Process> {
    process(
        r#"<startEvent id="start"/><task id="receive" name="Receive Order"/>
           <parallelGateway id="split"/>
           <task id="reserve" name="Reserve Inventory"/><task id="invoice" name="Generate Invoice"/>
           <parallelGateway id="join"/><endEvent id="end"/>"#,
        "f_start: start -> receive, f_check: receive -> split,
         f_r: split -> reserve, f_i: split -> invoice,
         f_rj: reserve -> join, f_ij: invoice -> join, f_end: join -> end",
    )
}

// ---------------------------------------------------------------------------------------
// The scripted harness

#[derive(Debug, Clone)]
struct Call {
    point: &'static str,
    element: String,
    ctx: ControlPointContext,
}

#[derive(Default)]
struct Harness {
    /// Task → the variables it sets.
    sets: BTreeMap<String, Map<String, Value>>,
    /// Task → the taint it marks its variables with.
    taints: BTreeMap<String, Taint>,
    /// Task → the error it fails with.
    fails: BTreeMap<String, String>,
    /// Tasks whose call errs.
    unreachable: BTreeSet<String>,
    /// Tasks answered by a (pretended) model call.
    by_model: BTreeSet<String>,
    /// Gateway → the flows to take at each visit (the last answer repeats).
    routes: BTreeMap<String, Vec<Vec<String>>>,
    visits: Mutex<BTreeMap<String, usize>>,
    /// Hook → its decision (default: continue).
    hooks: BTreeMap<String, HookDecision>,
    /// Element → how long answering takes.
    slow: BTreeMap<String, u64>,
    /// Answer without ever waiting (the other calls yield once first).
    at_once: bool,
    /// Elements whose call panics.
    panics: BTreeSet<String>,
    /// Claim to restore a model summary left out (`restores_unchanged_model`).
    restores_model: bool,
    calls: Mutex<Vec<Call>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

impl Harness {
    fn new() -> Self {
        Harness::default()
    }

    fn sets(mut self, task: &str, variables: Value) -> Self {
        self.sets.insert(task.into(), object(variables));
        self
    }

    fn taints(mut self, task: &str, taint: Taint) -> Self {
        self.taints.insert(task.into(), taint);
        self
    }

    fn fails(mut self, task: &str, error: &str) -> Self {
        self.fails.insert(task.into(), error.into());
        self
    }

    fn unreachable(mut self, task: &str) -> Self {
        self.unreachable.insert(task.into());
        self
    }

    fn by_model(mut self, task: &str) -> Self {
        self.by_model.insert(task.into());
        self
    }

    fn routes(mut self, gateway: &str, flows: &[&str]) -> Self {
        self.routes
            .entry(gateway.into())
            .or_default()
            .push(flows.iter().map(|f| f.to_string()).collect());
        self
    }

    /// The answer for this visit of `gateway`.
    fn route(&self, gateway: &str) -> Option<Vec<String>> {
        let answers = self.routes.get(gateway)?;
        let mut visits = self.visits.lock().unwrap();
        let visit = visits.entry(gateway.into()).or_default();
        *visit += 1;
        answers.get(*visit - 1).or(answers.last()).cloned()
    }

    fn hook(mut self, hook: &str, decision: HookDecision) -> Self {
        self.hooks.insert(hook.into(), decision);
        self
    }

    fn slow(mut self, element: &str, ms: u64) -> Self {
        self.slow.insert(element.into(), ms);
        self
    }

    fn at_once(mut self) -> Self {
        self.at_once = true;
        self
    }

    fn panics(mut self, element: &str) -> Self {
        self.panics.insert(element.into());
        self
    }

    fn restores_model(mut self) -> Self {
        self.restores_model = true;
        self
    }

    async fn seen(&self, point: &'static str, element: &str, ctx: ControlPointContext) {
        self.calls.lock().unwrap().push(Call {
            point,
            element: element.into(),
            ctx,
        });
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        if self.panics.contains(element) {
            panic!("the harness broke at {element}");
        }
        if let Some(ms) = self.slow.get(element) {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
        }
        if !self.at_once {
            tokio::task::yield_now().await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// `point element` for every call, in call order.
    fn call_list(&self) -> Vec<String> {
        self.calls()
            .iter()
            .map(|c| format!("{} {}", c.point, c.element))
            .collect()
    }

    fn call_to(&self, element: &str) -> Call {
        self.calls()
            .into_iter()
            .find(|c| c.element == element)
            .unwrap_or_else(|| panic!("no call for `{element}`"))
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

impl Harness {
    async fn task(
        &self,
        id: String,
        ctx: ControlPointContext,
    ) -> Result<TaskOutcome, ControlPointError> {
        {
            self.seen("execute_task", &id, ctx).await;
            if self.unreachable.contains(&id) {
                return Err(ControlPointError {
                    element: id,
                    message: "the task agent is unreachable".into(),
                    ..ControlPointError::default()
                });
            }
            let failed = self.fails.get(&id).cloned();
            Ok(TaskOutcome {
                error_code: None,
                status: if failed.is_some() {
                    TaskStatus::Failed
                } else {
                    TaskStatus::Completed
                },
                outputs: Map::new(),
                variables: self.sets.get(&id).cloned().unwrap_or_default(),
                decided_by: Decider::Scripted,
                reason: None,
                error: failed,
                calls: if self.by_model.contains(&id) {
                    vec![ModelCall {
                        model: "test-model".into(),
                        attempt: 1,
                        outcome: CallOutcome::Answered,
                        prompt_tokens: None,
                        completion_tokens: None,
                        latency_ms: 1,
                        http_attempts: 1,
                        detail: None,
                        finish_reasons: None,
                    }]
                } else {
                    Vec::new()
                },
                digest: None,
                taint: self.taints.get(&id).cloned(),
            })
        }
    }

    async fn gateway(
        &self,
        id: String,
        ctx: ControlPointContext,
    ) -> Result<GatewayDecision, ControlPointError> {
        {
            self.seen("route_gateway", &id, ctx).await;
            match self.route(&id) {
                Some(flows) => Ok(GatewayDecision {
                    flows,
                    decided_by: Decider::Scripted,
                    reason: Some("scripted".into()),
                    calls: Vec::new(),
                    digest: None,
                }),
                None => Err(ControlPointError {
                    element: id,
                    message: "no route scripted".into(),
                    ..ControlPointError::default()
                }),
            }
        }
    }

    async fn hooked(
        &self,
        id: String,
        ctx: ControlPointContext,
    ) -> Result<HookDecision, ControlPointError> {
        {
            self.seen("evaluate_hook", &id, ctx).await;
            Ok(self
                .hooks
                .get(&id)
                .cloned()
                .unwrap_or_else(|| HookDecision::proceed(Decider::Scripted, None)))
        }
    }
}

impl ControlPoints for Harness {
    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
        let id = element.to_string();
        Box::pin(async move {
            Ok(match kind {
                ControlPointKind::Task => Answer::Task(self.task(id, ctx).await?),
                ControlPointKind::Gateway => Answer::Gateway(self.gateway(id, ctx).await?),
                ControlPointKind::Hook => Answer::Hook(self.hooked(id, ctx).await?),
            })
        })
    }

    fn restores_unchanged_model(&self) -> bool {
        self.restores_model
    }
}

/// A hook decision with `action`, decided by a rule.
fn decide(action: HookAction) -> HookDecision {
    HookDecision {
        action,
        ..HookDecision::proceed(Decider::Rule, Some("policy".to_string()))
    }
}

// ---------------------------------------------------------------------------------------
// The journal

#[derive(Default)]
struct Sink {
    events: Mutex<Vec<Event>>,
    /// Refuse every event after this many.
    capacity: Option<usize>,
    /// How many events had been emitted at each commit.
    commits: Mutex<Vec<usize>>,
}

impl EventSink for Sink {
    fn emit(&self, event: Event) -> Result<Record, JournalError> {
        let mut events = self.events.lock().unwrap();
        if self.capacity.is_some_and(|c| events.len() >= c) {
            return Err(JournalError::Serialize("the disk is full".into()));
        }
        events.push(event.clone());
        Ok(Record {
            seq: events.len() as u64,
            at_ms: 0,
            prev: String::new(),
            event,
        })
    }

    fn commit(&self) -> Result<(), JournalError> {
        let emitted = self.events.lock().unwrap().len();
        self.commits.lock().unwrap().push(emitted);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Running

fn request(process: Arc<Process>, hooks: &[(&str, &str)]) -> RunRequest {
    RunRequest {
        run_id: "run-1".into(),
        process_key: "demo_v1".into(),
        process,
        annotations: FlowAnnotations {
            process_key: "demo_v1".into(),
            hooks: hooks
                .iter()
                .map(|(flow, hook)| (flow.to_string(), hook.to_string()))
                .collect(),
            ..FlowAnnotations::default()
        },
        variables: object(json!({"order_id": "1212"})),
        untrusted: Some(Untrusted::from([(
            "order_id".to_string(),
            Taint::input("from --var"),
        )])),
        resume: None,
        children: None,
        parent: None,
        awaiting: None,
        adopt: None,
        lost_parks: false,
    }
}

struct Ran {
    outcome: RunOutcome,
    events: Vec<Event>,
    /// How many events had been emitted at each commit.
    commits: Vec<usize>,
    harness: Arc<Harness>,
}

async fn go(request: RunRequest, harness: Harness) -> Ran {
    let harness = Arc::new(harness);
    let sink = Arc::new(Sink::default());
    let outcome = NativeEngine
        .run(request, harness.clone(), sink.clone())
        .await
        .expect("the engine runs");
    let events = sink.events.lock().unwrap().clone();
    let commits = sink.commits.lock().unwrap().clone();
    Ran {
        outcome,
        events,
        commits,
        harness,
    }
}

impl Ran {
    fn path(&self) -> Vec<&str> {
        self.outcome.path.iter().map(String::as_str).collect()
    }

    fn status(&self) -> RunStatus {
        self.outcome.status
    }

    fn message(&self) -> &str {
        self.outcome.message.as_deref().unwrap_or("")
    }

    fn count(&self, node: &str) -> usize {
        self.outcome.path.iter().filter(|n| *n == node).count()
    }

    /// Each event in a short form: `entered a`, `took f1`, `task a completed`, ...
    fn trace(&self) -> Vec<String> {
        self.events.iter().map(short).collect()
    }

    fn hook_records(&self) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::HookEvaluated { .. }))
            .collect()
    }

    /// The single `HookEvaluated` record's action, target and rejection.
    fn hooked(&self) -> (HookAction, Option<String>, Option<String>) {
        let records = self.hook_records();
        assert_eq!(records.len(), 1, "{:#?}", self.trace());
        match records[0] {
            Event::HookEvaluated {
                action,
                target,
                rejected,
                ..
            } => (*action, target.clone(), rejected.clone()),
            _ => unreachable!(),
        }
    }

    fn assert_finished_once(&self) {
        let finished = self
            .events
            .iter()
            .filter(|e| matches!(e, Event::RunFinished { .. }))
            .count();
        assert_eq!(finished, 1, "{:#?}", self.trace());
        assert!(matches!(
            self.events.last(),
            Some(Event::RunFinished { .. })
        ));
        assert!(matches!(
            self.events.first(),
            Some(Event::RunStarted { .. })
        ));
    }
}

fn short(event: &Event) -> String {
    match event {
        Event::RunStarted { engine, .. } => format!("started {engine}"),
        Event::NodeEntered { node, .. } => format!("entered {node}"),
        Event::FlowTaken { flow, .. } => format!("took {flow}"),
        Event::TaskFinished { node, status, .. } => format!("task {node} {status:?}"),
        Event::GatewayRouted { node, flows, .. } => format!("routed {node} {}", flows.join("+")),
        Event::HookEvaluated { hook, action, .. } => format!("hook {hook} {action}"),
        Event::TopologyChanged { action, .. } => format!("changed {action}"),
        Event::VariablesSet { source, .. } => format!("set by {source}"),
        Event::RunFinished { status, .. } => format!("finished {status:?}"),
        Event::ModelCalled { node, call, .. } => format!("model {node} {}", call.outcome.as_str()),
        other => other.name().to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Sequences, gateways, sub-processes, events

#[tokio::test]
async fn a_sequence_runs_each_task_in_order_and_emits_events_before_effects() {
    let harness = Harness::new()
        .sets("a", json!({"x": 1}))
        .sets("b", json!({"y": 2}));
    let ran = go(request(chain(), &[]), harness).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "a", "b", "e"]);
    assert_eq!(ran.outcome.steps, 4);
    assert_eq!(
        ran.outcome.variables,
        object(json!({"order_id": "1212", "x": 1, "y": 2}))
    );
    assert_eq!(
        ran.trace(),
        [
            "started native",
            "entered s",
            "took f1",
            "entered a",
            "task a Completed",
            "took f2",
            "entered b",
            "task b Completed",
            "took f3",
            "entered e",
            "finished Completed"
        ]
    );
    // b is asked knowing what a did.
    let b = ran.harness.call_to("b").ctx;
    assert_eq!(b.run_id, "run-1");
    assert_eq!(b.process_key, "demo_v1");
    assert_eq!(b.element_name.as_deref(), Some("B"));
    assert_eq!(b.history.to_vec(), ["s", "a", "b"]);
    assert_eq!(b.variables.get("x"), Some(&json!(1)));
    assert_eq!(b.model().process_id, "P");
    assert_eq!(b.model().nodes.len(), 4);
    assert_eq!(b.model().flows.len(), 3);
    assert_eq!(b.instruction, None);
    ran.assert_finished_once();
}

fn approval() -> Arc<Process> {
    process(
        r#"<startEvent id="s"/><task id="check"/>
           <exclusiveGateway id="g" default="f_no"/>
           <task id="approve"/><task id="reject"/>
           <endEvent id="e1"/><endEvent id="e2"/>
           <sequenceFlow id="f_yes" name="Yes" sourceRef="g" targetRef="approve">
             <conditionExpression>amount &gt; 10</conditionExpression>
           </sequenceFlow>
           <sequenceFlow id="f_no" sourceRef="g" targetRef="reject"/>"#,
        "f1: s -> check, f2: check -> g, f3: approve -> e1, f4: reject -> e2",
    )
}

/// A model's answer is paid for: it is committed as soon as it is applied, before the
/// step it enables is taken (and before that step's own call goes out), whether the
/// answer came at once or after a wait. A deterministic answer waits for the next commit.
#[tokio::test]
async fn an_answer_a_model_was_called_for_is_committed_before_the_next_step() {
    for at_once in [false, true] {
        let mut harness = Harness::new().by_model("a");
        if at_once {
            harness = harness.at_once();
        }
        let ran = go(request(chain(), &[]), harness).await;
        assert_eq!(ran.status(), RunStatus::Completed);
        let trace = ran.trace();
        let at = |short: &str| trace.iter().position(|t| t == short).unwrap();
        let (answered, next) = (at("task a Completed"), at("entered b"));
        assert!(at("model a answered") < answered, "{trace:#?}");
        assert!(
            ran.commits.iter().any(|&c| c > answered && c <= next),
            "at once: {at_once}; commits after {:?} events, a answered at {answered}, b entered at {next}: {trace:#?}",
            ran.commits
        );
    }
    // Without a model call, nothing forces a commit between the two.
    let ran = go(request(chain(), &[]), Harness::new().at_once()).await;
    let trace = ran.trace();
    let at = |short: &str| trace.iter().position(|t| t == short).unwrap();
    let (answered, next) = (at("task a Completed"), at("entered b"));
    assert!(
        !ran.commits.iter().any(|&c| c > answered && c <= next),
        "{:?} {trace:#?}",
        ran.commits
    );
}

#[tokio::test]
async fn an_exclusive_gateway_takes_the_flow_the_harness_chooses() {
    let ran = go(
        request(approval(), &[]),
        Harness::new().routes("g", &["f_no"]),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "check", "g", "reject", "e2"]);
    assert!(ran.trace().contains(&"routed g f_no".to_string()));
    let offered = ran.harness.call_to("g").ctx.flows;
    assert_eq!(offered.len(), 2);
    assert_eq!(offered[0].id, "f_yes");
    assert_eq!(offered[0].target, "approve");
    assert_eq!(offered[0].name.as_deref(), Some("Yes"));
    assert_eq!(offered[0].condition.as_deref(), Some("amount > 10"));
    assert!(!offered[0].is_default);
    assert_eq!(offered[1].condition, None);
    assert!(offered[1].is_default);
}

#[tokio::test]
async fn a_parallel_join_waits_for_both_branches_and_fires_once() {
    // Branch a is slow; branch b has two tasks. The join and what follows run once.
    let ran = go(request(parallel(), &[]), Harness::new().slow("a", 50)).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(
        ran.path(),
        ["s", "split", "a", "b1", "b2", "join", "c", "e"]
    );
    assert_eq!(ran.count("join"), 1);
    assert_eq!(ran.count("c"), 1);
    ran.assert_finished_once();
}

#[tokio::test]
async fn parallel_branches_call_the_harness_concurrently() {
    let harness = Harness::new().slow("a", 100).slow("b1", 100);
    let ran = go(request(parallel(), &[]), harness).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.harness.most_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_inclusive_split_takes_the_chosen_flows_and_its_join_waits_only_for_them() {
    let p = process(
        r#"<startEvent id="s"/><inclusiveGateway id="split"/>
           <task id="a"/><task id="b"/><task id="c"/>
           <inclusiveGateway id="join"/><task id="d"/><endEvent id="e"/>"#,
        "f1: s -> split, fa: split -> a, fb: split -> b, fc: split -> c,
         fa2: a -> join, fb2: b -> join, fc2: c -> join, f9: join -> d, f10: d -> e",
    );
    let harness = Harness::new().routes("split", &["fa", "fc"]).slow("c", 30);
    let ran = go(request(p, &[]), harness).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "split", "a", "c", "join", "d", "e"]);
    assert!(ran.trace().contains(&"routed split fa+fc".to_string()));
}

#[tokio::test]
async fn an_embedded_sub_process_runs_its_content_then_continues() {
    let p = process(
        r#"<startEvent id="s"/>
           <subProcess id="sub">
             <startEvent id="ss"/><task id="x"/><endEvent id="se"/>
             <sequenceFlow id="sf1" sourceRef="ss" targetRef="x"/>
             <sequenceFlow id="sf2" sourceRef="x" targetRef="se"/>
           </subProcess>
           <task id="after"/><endEvent id="e"/>"#,
        "f1: s -> sub, f2: sub -> after, f3: after -> e",
    );
    let ran = go(request(p, &[]), Harness::new()).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "sub", "ss", "x", "se", "after", "e"]);
}

#[tokio::test]
async fn a_terminate_end_event_ends_the_whole_run() {
    let p = process(
        r#"<startEvent id="s"/><parallelGateway id="split"/>
           <task id="a"/><endEvent id="stop"><terminateEventDefinition/></endEvent>
           <task id="b"/><task id="bb"/><endEvent id="e"/>"#,
        "f1: s -> split, fa: split -> a, fa2: a -> stop,
         fb: split -> b, fb2: b -> bb, fb3: bb -> e",
    );
    let ran = go(request(p, &[]), Harness::new().slow("b", 200)).await;

    assert_eq!(ran.status(), RunStatus::Terminated);
    assert_eq!(ran.message(), "terminate end event stop");
    assert!(!ran.path().contains(&"bb"), "{:?}", ran.path());
    ran.assert_finished_once();
}

#[tokio::test]
async fn a_terminate_end_event_in_a_sub_process_ends_only_that_sub_process() {
    let p = process(
        r#"<startEvent id="s"/>
           <subProcess id="sub">
             <startEvent id="ss"/><parallelGateway id="split"/>
             <task id="x"/><endEvent id="stop"><terminateEventDefinition/></endEvent>
             <task id="y"/><task id="y2"/><endEvent id="se"/>
             <sequenceFlow id="sf1" sourceRef="ss" targetRef="split"/>
             <sequenceFlow id="sx" sourceRef="split" targetRef="x"/>
             <sequenceFlow id="sx2" sourceRef="x" targetRef="stop"/>
             <sequenceFlow id="sy" sourceRef="split" targetRef="y"/>
             <sequenceFlow id="sy2" sourceRef="y" targetRef="y2"/>
             <sequenceFlow id="sy3" sourceRef="y2" targetRef="se"/>
           </subProcess>
           <task id="after"/><endEvent id="e"/>"#,
        "f1: s -> sub, f2: sub -> after, f3: after -> e",
    );
    let ran = go(request(p, &[]), Harness::new().slow("y", 200)).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert!(!ran.path().contains(&"y2"), "{:?}", ran.path());
    assert_eq!(&ran.path()[ran.path().len() - 2..], ["after", "e"]);
}

#[tokio::test]
async fn a_loop_is_bounded_by_the_step_budget() {
    let p = process(
        r#"<startEvent id="s"/><task id="a"/><exclusiveGateway id="g"/><endEvent id="e"/>"#,
        "f1: s -> a, f2: a -> g, back: g -> a, out: g -> e",
    );
    let mut req = request(p, &[]);
    req.annotations.step_budget = 5;
    let ran = go(req, Harness::new().routes("g", &["back"])).await;

    assert_eq!(ran.status(), RunStatus::Failed);
    assert_eq!(ran.outcome.steps, 5);
    assert_eq!(ran.path(), ["s", "a", "g", "a", "g"]);
    assert!(
        ran.message().contains("step budget of 5"),
        "{}",
        ran.message()
    );
    assert!(ran.message().contains("`a`"), "{}", ran.message());
    ran.assert_finished_once();
}

#[tokio::test]
async fn a_parallel_block_inside_a_loop_joins_once_per_round() {
    let p = process(
        r#"<startEvent id="s"/><exclusiveGateway id="m"/><parallelGateway id="split"/>
           <task id="a"/><task id="b1"/><task id="b2"/><parallelGateway id="join"/>
           <exclusiveGateway id="again"/><endEvent id="e"/>"#,
        "f1: s -> m, f2: m -> split, fa: split -> a, fb: split -> b1, fb2: b1 -> b2,
         fa2: a -> join, fb3: b2 -> join, f3: join -> again,
         back: again -> m, out: again -> e",
    );
    let harness = Harness::new()
        .routes("again", &["back"])
        .routes("again", &["out"])
        .slow("a", 20);
    let ran = go(request(p, &[]), harness).await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    let round = ["m", "split", "a", "b1", "b2", "join", "again"];
    let mut expected = vec!["s"];
    expected.extend(round);
    expected.extend(round);
    expected.push("e");
    assert_eq!(ran.path(), expected);
}

#[tokio::test]
async fn intermediate_events_pass_and_links_jump_to_their_catch() {
    let p = process(
        r#"<startEvent id="s"/>
           <intermediateCatchEvent id="wait"><timerEventDefinition><timeDuration>PT0.05S</timeDuration></timerEventDefinition></intermediateCatchEvent>
           <intermediateThrowEvent id="go" name="L"><linkEventDefinition/></intermediateThrowEvent>
           <intermediateCatchEvent id="land" name="L"><linkEventDefinition/></intermediateCatchEvent>
           <task id="b"/><endEvent id="e"/>"#,
        "f1: s -> wait, f2: wait -> go, f3: land -> b, f4: b -> e",
    );
    let ran = go(request(p, &[]), Harness::new()).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "wait", "go", "land", "b", "e"]);
}

#[tokio::test]
async fn a_timer_waits_and_one_without_a_time_fails_the_run() {
    let p = process(
        r#"<startEvent id="s"/>
           <intermediateCatchEvent id="wait"><timerEventDefinition><timeDuration>PT0.2S</timeDuration></timerEventDefinition></intermediateCatchEvent>
           <endEvent id="e"/>"#,
        "f1: s -> wait, f2: wait -> e",
    );
    let started = std::time::Instant::now();
    let ran = go(request(p, &[]), Harness::new()).await;
    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert!(started.elapsed() >= std::time::Duration::from_millis(200));
    let fired = ran
        .events
        .iter()
        .filter(|e| matches!(e, Event::TimerFired { node, .. } if node == "wait"))
        .count();
    assert_eq!(fired, 1);

    let p = process(
        r#"<startEvent id="s"/>
           <intermediateCatchEvent id="wait"><timerEventDefinition/></intermediateCatchEvent>
           <endEvent id="e"/>"#,
        "f1: s -> wait, f2: wait -> e",
    );
    let ran = go(request(p, &[]), Harness::new()).await;
    assert_eq!(ran.status(), RunStatus::Failed);
    assert!(
        ran.message().contains("names no timeDuration"),
        "{}",
        ran.message()
    );
}

#[tokio::test]
async fn a_join_that_can_never_fire_fails_the_run_naming_it() {
    // j1 waits for j2 and j2 for j1.
    let p = process(
        r#"<startEvent id="s"/><parallelGateway id="split"/>
           <parallelGateway id="j1"/><parallelGateway id="j2"/><endEvent id="e"/>"#,
        "f1: s -> split, p1: split -> j1, p2: split -> j2,
         j12: j1 -> j2, j21: j2 -> j1",
    );
    let ran = go(request(p, &[]), Harness::new()).await;

    assert_eq!(ran.status(), RunStatus::Failed);
    assert!(ran.message().contains("`j1`"), "{}", ran.message());
    ran.assert_finished_once();
}

// ---------------------------------------------------------------------------------------
// Failures

#[tokio::test]
async fn a_failed_task_fails_the_run() {
    let ran = go(
        request(chain(), &[]),
        Harness::new().fails("b", "out of stock"),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Failed);
    assert_eq!(
        ran.message(),
        "task `b` failed: out of stock (BPMN error TASK_FAILED, not caught)"
    );
    assert_eq!(ran.path(), ["s", "a", "b"]);
    assert!(ran.trace().contains(&"task b Failed".to_string()));
    ran.assert_finished_once();
}

#[tokio::test]
async fn a_task_call_that_errs_fails_the_run() {
    let ran = go(request(chain(), &[]), Harness::new().unreachable("a")).await;

    assert_eq!(ran.status(), RunStatus::Failed);
    assert!(ran.message().contains("`a`"), "{}", ran.message());
    assert!(ran.message().contains("unreachable"), "{}", ran.message());
    assert!(ran.trace().contains(&"task a Failed".to_string()));
}

#[tokio::test]
async fn an_invalid_gateway_answer_fails_the_run() {
    let two = go(
        request(approval(), &[]),
        Harness::new().routes("g", &["f_yes", "f_no"]),
    )
    .await;
    assert_eq!(two.status(), RunStatus::Failed);
    assert!(two.message().contains("`g`"), "{}", two.message());
    assert!(two.message().contains("exactly one"), "{}", two.message());

    let foreign = go(
        request(approval(), &[]),
        Harness::new().routes("g", &["f1"]),
    )
    .await;
    assert_eq!(foreign.status(), RunStatus::Failed);
    assert!(
        foreign.message().contains("not an outgoing flow"),
        "{}",
        foreign.message()
    );
    assert!(!foreign.trace().iter().any(|t| t.starts_with("routed")));

    let unrouted = go(request(approval(), &[]), Harness::new()).await;
    assert_eq!(unrouted.status(), RunStatus::Failed);
    assert!(unrouted.message().contains("`g`"), "{}", unrouted.message());
}

#[tokio::test]
async fn a_journal_that_cannot_be_written_stops_the_run() {
    let sink = Arc::new(Sink {
        capacity: Some(3),
        ..Sink::default()
    });
    let result = NativeEngine
        .run(
            request(chain(), &[]),
            Arc::new(Harness::new()),
            sink.clone(),
        )
        .await;

    assert!(matches!(result, Err(EngineError::Journal(_))), "{result:?}");
    assert_eq!(sink.events.lock().unwrap().len(), 3);
}

// ---------------------------------------------------------------------------------------
// Hooks

#[tokio::test]
async fn a_hook_on_the_start_flow_is_evaluated_before_the_first_task() {
    let ran = go(request(chain(), &[("f1", "h_start")]), Harness::new()).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "a", "b", "e"]);
    assert_eq!(
        ran.harness.call_list(),
        ["evaluate_hook h_start", "execute_task a", "execute_task b"]
    );
    assert_eq!(
        &ran.trace()[..5],
        [
            "started native",
            "entered s",
            "hook h_start continue",
            "took f1",
            "entered a"
        ]
    );
    let ctx = ran.harness.call_to("h_start").ctx;
    let edge = ctx.edge.expect("the edge");
    assert_eq!(
        (edge.id.as_str(), edge.source.as_str(), edge.target.as_str()),
        ("f1", "s", "a")
    );
    assert_eq!(ctx.executed, ["s"]);
    assert_eq!(ctx.element_id, "h_start");
    assert_eq!(ran.hooked(), (HookAction::Continue, None, None));
}

#[tokio::test]
async fn skip_node_enters_the_target_and_records_it_as_skipped() {
    let harness = Harness::new().hook("h", decide(HookAction::SkipNode));
    let ran = go(request(chain(), &[("f1", "h")]), harness).await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "a", "b", "e"]);
    assert_eq!(
        ran.harness.call_list(),
        ["evaluate_hook h", "execute_task b"]
    );
    assert!(ran.events.contains(&Event::TaskFinished {
        node: "a".into(),
        status: TaskStatus::Skipped,
        outputs: Map::new(),
        variables: Map::new(),
        decided_by: Decider::Rule,
        reason: Some("policy".into()),
        error: None,
        error_code: None,
        duration_ms: 0,
        digest: None,
        key: None,
        taint: None,
        own: Vec::new(),
    }));
    assert_eq!(ran.hooked(), (HookAction::SkipNode, Some("a".into()), None));
}

#[tokio::test]
async fn skip_to_an_end_event_ends_the_token_there() {
    let mut skip = decide(HookAction::SkipTo);
    skip.target = Some("e".into());
    let ran = go(
        request(longer_chain(), &[("f2", "h")]),
        Harness::new().hook("h", skip),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "a", "e"]);
    assert!(!ran.trace().contains(&"took f2".to_string()));
    assert_eq!(ran.hooked(), (HookAction::SkipTo, Some("e".into()), None));
}

#[tokio::test]
async fn skip_to_past_a_parallel_split_releases_the_join_downstream() {
    // The demo receive_order: order 1212 skips the split and the invoice.
    let mut skip = decide(HookAction::SkipTo);
    skip.target = Some("reserve".into());
    skip.state_updates = object(json!({"invoice_skipped": true}));
    let ran = go(
        request(receive_order(), &[("f_check", "post_receival_check")]),
        Harness::new().hook("post_receival_check", skip),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.path(), ["start", "receive", "reserve", "join", "end"]);
    assert_eq!(
        ran.outcome.variables.get("invoice_skipped"),
        Some(&json!(true))
    );
    let trace = ran.trace();
    let set = trace
        .iter()
        .position(|t| t == "set by hook post_receival_check");
    let hooked = trace
        .iter()
        .position(|t| t == "hook post_receival_check skip_to");
    // The hook's record (its answer) comes first, then the variables it sets.
    assert!(hooked.is_some() && hooked < set, "{trace:#?}");
    match ran.hook_records()[0] {
        Event::HookEvaluated { state_updates, .. } => {
            assert_eq!(state_updates, &object(json!({"invoice_skipped": true})));
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn remove_node_in_one_branch_still_lets_the_join_fire() {
    let mut remove = decide(HookAction::RemoveNode);
    remove.target = Some("a".into());
    let ran = go(
        request(parallel(), &[("f1", "h")]),
        Harness::new().hook("h", remove),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.path(), ["s", "split", "b1", "b2", "join", "c", "e"]);
    assert_eq!(
        ran.hooked(),
        (HookAction::RemoveNode, Some("a".into()), None)
    );
    assert!(ran.trace().contains(&"changed remove_node".to_string()));
    // The flow into `a` now leads to the join; `a` is gone from the model.
    let model = ran.harness.call_to("c").ctx.model.expect("a model summary");
    assert!(model.nodes.iter().all(|n| n.id != "a"));
    let fa = model.flows.iter().find(|f| f.id == "fa").expect("fa");
    assert_eq!(fa.target, "join");
}

#[tokio::test]
async fn an_action_aimed_at_an_executed_node_is_rejected_and_the_token_continues() {
    let mut back = decide(HookAction::SkipTo);
    back.target = Some("a".into());
    let ran = go(
        request(chain(), &[("f2", "h")]),
        Harness::new().hook("h", back),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "a", "b", "e"]);
    let (action, target, rejected) = ran.hooked();
    assert_eq!((action, target), (HookAction::Continue, None));
    let rejected = rejected.expect("a rejection");
    assert!(rejected.contains("skip_to"), "{rejected}");
    assert!(rejected.contains("`a`"), "{rejected}");
}

#[tokio::test]
async fn swapping_adjacent_tasks_reverses_their_order() {
    let mut swap = decide(HookAction::SwapNodes);
    swap.swap = Some(("a".into(), "b".into()));
    let ran = go(
        request(chain(), &[("f1", "h")]),
        Harness::new().hook("h", swap),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "b", "a", "e"]);
    assert!(ran.trace().contains(&"changed swap_nodes".to_string()));
    match ran.hook_records()[0] {
        Event::HookEvaluated { action, swap, .. } => {
            assert_eq!(*action, HookAction::SwapNodes);
            assert_eq!(swap, &Some(("a".to_string(), "b".to_string())));
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn add_node_inserts_a_task_that_runs_with_its_instruction_before_the_target() {
    let mut add = decide(HookAction::AddNode);
    add.add = Some(NewTask {
        id: "verify".into(),
        name: Some("Verify".into()),
        instruction: Some("double-check the order".into()),
        agent: None,
    });
    let ran = go(
        request(chain(), &[("f2", "h")]),
        Harness::new().hook("h", add),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "a", "verify", "b", "e"]);
    let verify = ran.harness.call_to("verify");
    assert_eq!(verify.point, "execute_task");
    assert_eq!(
        verify.ctx.instruction.as_deref(),
        Some("double-check the order")
    );
    assert_eq!(verify.ctx.element_name.as_deref(), Some("Verify"));
    let taken: Vec<String> = ran
        .trace()
        .into_iter()
        .filter(|t| t.starts_with("took"))
        .collect();
    assert_eq!(
        taken,
        ["took f1", "took f2", "took f2__then__verify", "took f3"]
    );
    // The hook is evaluated once.
    assert_eq!(ran.hook_records().len(), 1);
    match ran.hook_records()[0] {
        Event::HookEvaluated { added, .. } => assert_eq!(added.as_deref(), Some("verify")),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn terminate_ends_the_run_with_the_hooks_message() {
    let mut stop = decide(HookAction::Terminate);
    stop.message = Some("customer cancelled".into());
    let ran = go(
        request(chain(), &[("f2", "h")]),
        Harness::new().hook("h", stop),
    )
    .await;
    assert_eq!(ran.status(), RunStatus::Terminated);
    assert_eq!(ran.message(), "customer cancelled");
    assert_eq!(ran.path(), ["s", "a"]);
    ran.assert_finished_once();

    let ran = go(
        request(chain(), &[("f2", "h")]),
        Harness::new().hook("h", decide(HookAction::Terminate)),
    )
    .await;
    assert_eq!(ran.message(), "terminated by hook h");
}

#[tokio::test]
async fn a_hook_in_one_branch_of_a_split_concerns_that_branch_only() {
    // skip_node on the flow into a skips a; branch b runs as usual.
    let ran = go(
        request(parallel(), &[("fa", "h")]),
        Harness::new().hook("h", decide(HookAction::SkipNode)),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.count("c"), 1);
    let tasks: Vec<String> = ran
        .harness
        .call_list()
        .into_iter()
        .filter(|c| c.starts_with("execute_task"))
        .collect();
    assert_eq!(
        tasks,
        ["execute_task b1", "execute_task b2", "execute_task c"]
    );
}

#[tokio::test]
async fn fail_run_from_the_harness_fails_the_run_after_recording_the_hook() {
    let mut refused = decide(HookAction::Continue);
    refused.denied = Some(HookAction::SkipTo);
    refused.fail_run = true;
    refused.message = Some("skip_to is not permitted".into());
    let ran = go(
        request(chain(), &[("f2", "h")]),
        Harness::new().hook("h", refused),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Failed);
    assert_eq!(ran.message(), "skip_to is not permitted");
    assert_eq!(ran.path(), ["s", "a"]);
    let trace = ran.trace();
    assert_eq!(
        &trace[trace.len() - 2..],
        ["hook h continue", "finished Failed"]
    );
    match ran.hook_records()[0] {
        Event::HookEvaluated { denied, .. } => assert_eq!(*denied, Some(HookAction::SkipTo)),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn a_denied_action_arrives_as_continue_and_is_recorded() {
    let mut denied = decide(HookAction::Continue);
    denied.denied = Some(HookAction::SwapNodes);
    let ran = go(
        request(chain(), &[("f2", "h")]),
        Harness::new().hook("h", denied),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed);
    assert_eq!(ran.path(), ["s", "a", "b", "e"]);
    match ran.hook_records()[0] {
        Event::HookEvaluated {
            action,
            denied,
            rejected,
            ..
        } => {
            assert_eq!(*action, HookAction::Continue);
            assert_eq!(*denied, Some(HookAction::SwapNodes));
            assert_eq!(*rejected, None);
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn skip_to_a_join_waits_there_for_the_other_branches() {
    let mut skip = decide(HookAction::SkipTo);
    skip.target = Some("join".into());
    let ran = go(
        request(parallel(), &[("fa", "h")]),
        Harness::new().hook("h", skip).slow("b2", 30),
    )
    .await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.path(), ["s", "split", "b1", "b2", "join", "c", "e"]);
}

#[tokio::test]
async fn actions_that_do_not_fit_the_topology_are_rejected() {
    // skip_node aimed at a gateway, swap across kinds, remove a node with two exits,
    // add a node whose id exists, skip_to an unknown node.
    let mut swap = decide(HookAction::SwapNodes);
    swap.swap = Some(("a".into(), "join".into()));
    let mut remove = decide(HookAction::RemoveNode);
    remove.target = Some("split".into());
    let mut add = decide(HookAction::AddNode);
    add.add = Some(NewTask {
        id: "c".into(),
        ..NewTask::default()
    });
    let mut skip_to = decide(HookAction::SkipTo);
    skip_to.target = Some("nowhere".into());
    let cases = [
        (decide(HookAction::SkipNode), "not an activity"),
        (swap, "not an activity"),
        (remove, "not an activity"),
        (add, "already exists"),
        (skip_to, "not a node"),
    ];
    for (decision, why) in cases {
        let asked = decision.action;
        let ran = go(
            request(parallel(), &[("f1", "h")]),
            Harness::new().hook("h", decision),
        )
        .await;
        assert_eq!(ran.status(), RunStatus::Completed, "{asked}");
        assert_eq!(ran.count("c"), 1, "{asked}");
        let (action, _, rejected) = ran.hooked();
        assert_eq!(action, HookAction::Continue, "{asked}");
        let rejected = rejected.unwrap_or_default();
        assert!(rejected.contains(why), "{asked}: {rejected}");
        assert!(
            !ran.trace().iter().any(|t| t.starts_with("changed")),
            "{asked}"
        );
    }
}

#[tokio::test]
async fn calls_answered_at_once_run_like_calls_that_wait() {
    for process in [chain(), parallel(), receive_order()] {
        let waiting = go(request(process.clone(), &[]), Harness::new()).await;
        let at_once = go(request(process, &[]), Harness::new().at_once()).await;
        assert_eq!(at_once.status(), RunStatus::Completed);
        assert_eq!(at_once.trace(), waiting.trace());
        assert_eq!(at_once.harness.call_list(), waiting.harness.call_list());
        at_once.assert_finished_once();
    }
}

#[tokio::test]
async fn a_call_that_panics_fails_the_run_whether_or_not_it_waits() {
    for harness in [Harness::new(), Harness::new().at_once()] {
        let ran = go(request(chain(), &[]), harness.panics("b")).await;
        assert_eq!(ran.status(), RunStatus::Failed);
        assert!(
            ran.message()
                .starts_with("the control-point call execute_task `b` did not finish: task")
                && ran
                    .message()
                    .ends_with("panicked with message \"the harness broke at b\""),
            "{}",
            ran.message()
        );
        assert_eq!(ran.path(), ["s", "a", "b"]);
        ran.assert_finished_once();
    }
}

#[tokio::test]
async fn contexts_leave_the_model_out_until_a_hook_changes_the_topology() {
    let mut add = decide(HookAction::AddNode);
    add.add = Some(NewTask {
        id: "verify".into(),
        ..NewTask::default()
    });
    let harness = Harness::new().hook("h", add).restores_model();
    let ran = go(request(chain(), &[("f2", "h")]), harness).await;

    assert_eq!(ran.path(), ["s", "a", "verify", "b", "e"]);
    assert_eq!(ran.harness.call_to("a").ctx.model, None);
    assert_eq!(ran.harness.call_to("h").ctx.model, None);
    let verify = ran.harness.call_to("verify").ctx;
    let model = verify.model.expect("the changed topology's summary");
    assert!(model.nodes.iter().any(|n| n.id == "verify"));
    let b = ran.harness.call_to("b").ctx.model.expect("a summary");
    assert!(
        Arc::ptr_eq(&model, &b),
        "one summary per change of the topology"
    );
    // Without the claim, every context carries the summary.
    let ran = go(request(chain(), &[]), Harness::new()).await;
    assert_eq!(ran.harness.call_to("a").ctx.model().nodes.len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joins_fire_once_on_a_multi_threaded_runtime() {
    for _ in 0..20 {
        let ran = go(request(parallel(), &[]), Harness::new()).await;
        assert_eq!(ran.status(), RunStatus::Completed);
        assert_eq!(ran.count("join"), 1);
        assert_eq!(ran.count("c"), 1);
        assert_eq!(ran.path().len(), 8);
    }
}

#[tokio::test]
async fn an_unsupported_element_fails_the_run_before_anything_runs() {
    let p = process(
        r#"<startEvent id="s"/><choreographyTask id="x"/><endEvent id="e"/>"#,
        "f1: s -> x, f2: x -> e",
    );
    let ran = go(request(p, &[]), Harness::new()).await;

    assert_eq!(ran.status(), RunStatus::Failed);
    assert_eq!(
        ran.message(),
        "`x` cannot run on the native engine: it is a <choreographyTask>, which cannot run"
    );
    assert!(ran.path().is_empty());
    ran.assert_finished_once();
}

#[tokio::test]
async fn an_uncaught_error_end_event_fails_the_run() {
    let p = process(
        r#"<startEvent id="s"/><task id="a"/>
           <endEvent id="boom"><errorEventDefinition/></endEvent>"#,
        "f1: s -> a, f2: a -> boom",
    );
    let ran = go(request(p, &[]), Harness::new()).await;

    assert_eq!(ran.status(), RunStatus::Failed);
    assert_eq!(
        ran.message(),
        "error end event `boom` raised BPMN error (no code), which nothing catches"
    );
    assert_eq!(ran.path(), ["s", "a", "boom"]);
    ran.assert_finished_once();
}

#[tokio::test]
async fn a_message_catch_event_parks_the_run_and_a_conditional_one_is_refused() {
    let model = |definition: &str| {
        process(
            &format!(
                r#"<startEvent id="s"/>
                   <intermediateCatchEvent id="wait"><{definition}/></intermediateCatchEvent>
                   <task id="a"/><endEvent id="e"/>"#
            ),
            "f1: s -> wait, f2: wait -> a, f3: a -> e",
        )
    };
    // A message nothing in the run sends: the run waits for it (delivered from outside).
    let ran = go(
        request(model("messageEventDefinition"), &[]),
        Harness::new(),
    )
    .await;
    assert_eq!(ran.status(), RunStatus::Waiting);
    assert_eq!(ran.path(), ["s", "wait"]);

    let ran = go(
        request(model("conditionalEventDefinition"), &[]),
        Harness::new(),
    )
    .await;
    assert_eq!(ran.status(), RunStatus::Failed);
    assert!(
        ran.message()
            .starts_with("`wait` cannot run on the native engine: it is a conditional catch event"),
        "{}",
        ran.message()
    );
    assert!(ran.path().is_empty());
}

#[tokio::test]
async fn timer_boundary_events_interrupt_or_branch_off_a_slow_task() {
    // Interrupting: the task takes 600 ms, its 100 ms deadline fires first; the task's
    // path is abandoned and the boundary's path runs.
    let model = |cancel: bool| {
        process(
            &format!(
                r#"<startEvent id="s"/>
                   <task id="work"/>
                   <boundaryEvent id="late" attachedToRef="work" cancelActivity="{cancel}">
                     <timerEventDefinition><timeDuration>PT0.1S</timeDuration></timerEventDefinition>
                   </boundaryEvent>
                   <task id="chase"/><endEvent id="done"/><endEvent id="chased"/>"#
            ),
            "f1: s -> work, f2: work -> done, f3: late -> chase, f4: chase -> chased",
        )
    };
    let ran = go(request(model(true), &[]), Harness::new().slow("work", 600)).await;
    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.path(), ["s", "work", "late", "chase", "chased"]);
    assert!(
        !ran.trace().iter().any(|t| t.starts_with("task work")),
        "the interrupted task's answer is dropped: {:#?}",
        ran.trace()
    );

    // Non-interrupting: the boundary's path runs and the task goes on to its own end.
    let ran = go(request(model(false), &[]), Harness::new().slow("work", 600)).await;
    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    let path = ran.path();
    assert_eq!(&path[..3], ["s", "work", "late"]);
    for node in ["chase", "chased", "done"] {
        assert!(path.contains(&node), "{path:?}");
    }
    assert!(ran.trace().iter().any(|t| t == "task work Completed"));

    // A task that answers first cancels its timer.
    let ran = go(request(model(true), &[]), Harness::new()).await;
    assert_eq!(ran.path(), ["s", "work", "done"]);
    let fired = ran
        .events
        .iter()
        .filter(|e| matches!(e, Event::TimerFired { .. }))
        .count();
    assert_eq!(fired, 0);
}

// ---------------------------------------------------------------------------------------
// Provenance: the engine records it (from the request and the answers' taints), the
// harness judges

#[tokio::test]
async fn provenance_is_recorded_from_inputs_and_answers_and_sent_with_each_call() {
    // s → a → b → e: `a` derives `score` from untrusted data; `b` (a person, say)
    // overwrites `order_id` with a trusted value.
    let derived = Taint {
        source: "model output on task `A`".into(),
        derived_from: vec!["order_id".into()],
    };
    let harness = Harness::new()
        .sets("a", json!({"score": 0.9}))
        .taints("a", derived.clone())
        .sets("b", json!({"order_id": "checked"}));
    let ran = go(request(chain(), &[]), harness).await;
    assert_eq!(ran.outcome.status, RunStatus::Completed);

    let untrusted = |element: &str| {
        ran.harness
            .call_to(element)
            .ctx
            .untrusted
            .map(|u| Untrusted::clone(&u))
            .expect("the native engine records provenance")
    };
    // `a` sees the run input; `b` sees it and what `a` derived from it.
    assert_eq!(
        untrusted("a"),
        Untrusted::from([("order_id".into(), Taint::input("from --var"))])
    );
    assert_eq!(
        untrusted("b"),
        Untrusted::from([
            ("order_id".into(), Taint::input("from --var")),
            ("score".into(), derived.clone()),
        ])
    );
    // The journal says so too: the run's inputs, then each task's taint; folded, `b`'s
    // trusted answer made `order_id` trusted again.
    let records: Vec<Record> = ran
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| Record {
            seq: i as u64 + 1,
            at_ms: 0,
            prev: String::new(),
            event: e.clone(),
        })
        .collect();
    let state = cuga_flo::journal::FlowState::fold(records.iter());
    assert_eq!(
        state.untrusted,
        Some(Untrusted::from([("score".into(), derived)]))
    );
}

#[tokio::test]
async fn a_run_without_provenance_sends_none_and_the_harness_over_approximates() {
    let mut req = request(chain(), &[]);
    req.untrusted = None;
    let ran = go(req, Harness::new().sets("a", json!({"score": 1}))).await;
    assert_eq!(ran.outcome.status, RunStatus::Completed);
    assert!(ran.harness.call_to("b").ctx.untrusted.is_none());
}

// ---------------------------------------------------------------------------------------
// Multi-instance activities

/// s → r (parallel, one instance per item of `items`) → e; r's instances write `verdict`,
/// collected into `verdicts`.
fn multi_instance(sequential: bool) -> Arc<Process> {
    process(
        &format!(
            r#"<startEvent id="s"/>
               <userTask id="r">
                 <multiInstanceLoopCharacteristics isSequential="{sequential}">
                   <loopDataInputRef>items</loopDataInputRef>
                   <loopDataOutputRef>verdicts</loopDataOutputRef>
                   <inputDataItem name="item"/>
                   <outputDataItem name="verdict"/>
                 </multiInstanceLoopCharacteristics>
               </userTask>
               <endEvent id="e"/>"#
        ),
        "f1: s -> r, f2: r -> e",
    )
}

fn with_items(mut request: RunRequest, items: Value) -> RunRequest {
    request.variables.insert("items".into(), items);
    request
        .untrusted
        .get_or_insert_with(Untrusted::new)
        .insert("items".into(), Taint::input("from --var"));
    request
}

/// Each instance's call sees its own item and `loopCounter` (the item untrusted as its
/// collection is), with its own idempotency key; parallel instances' calls overlap; what
/// each writes to its output element stays its own and is collected in item order.
#[tokio::test]
async fn parallel_instances_see_their_own_item_and_run_concurrently() {
    let harness = Harness::new()
        .slow("r", 100)
        .sets("r", json!({"verdict": "ok", "seen": true}));
    let request = with_items(request(multi_instance(false), &[]), json!(["a", "b", "c"]));
    let ran = go(request, harness).await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.path(), ["s", "r", "r", "r", "e"]);
    assert_eq!(ran.harness.most_in_flight.load(Ordering::SeqCst), 3);
    let mut seen: Vec<(String, Value, Value, bool)> = ran
        .harness
        .calls()
        .into_iter()
        .map(|c| {
            (
                c.ctx.idempotency_key.clone().unwrap(),
                c.ctx.variables["item"].clone(),
                c.ctx.variables["loopCounter"].clone(),
                c.ctx
                    .untrusted
                    .as_ref()
                    .is_some_and(|u| u.contains_key("item")),
            )
        })
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        [
            ("run-1:r:1".into(), json!("a"), json!(1), true),
            ("run-1:r:2".into(), json!("b"), json!(2), true),
            ("run-1:r:3".into(), json!("c"), json!(3), true),
        ]
    );
    let vars = &ran.outcome.variables;
    assert_eq!(vars["verdicts"], json!(["ok", "ok", "ok"]));
    // `seen` is not the instance's own: it reaches the process; the item never does.
    assert_eq!(vars["seen"], json!(true));
    assert!(!vars.contains_key("item") && !vars.contains_key("verdict"));
    ran.assert_finished_once();
}

/// Sequential instances never overlap: each starts when the one before completes.
#[tokio::test]
async fn sequential_instances_run_one_at_a_time() {
    let harness = Harness::new().slow("r", 20);
    let request = with_items(request(multi_instance(true), &[]), json!([1, 2, 3, 4]));
    let ran = go(request, harness).await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.count("r"), 4);
    assert_eq!(ran.harness.most_in_flight.load(Ordering::SeqCst), 1);
    let items: Vec<Value> = ran
        .harness
        .calls()
        .into_iter()
        .map(|c| c.ctx.variables["item"].clone())
        .collect();
    assert_eq!(items, [json!(1), json!(2), json!(3), json!(4)]);
}

/// A collection that is not a list, or not set, fails the run naming the activity before
/// any instance runs; so does an instance count beyond the step budget.
#[tokio::test]
async fn a_collection_that_is_not_a_list_fails_the_run() {
    for (items, why) in [
        (json!("abc"), "is not a list (it is a string)"),
        (Value::Null, "is not set"),
    ] {
        let request = with_items(request(multi_instance(false), &[]), items);
        let ran = go(request, Harness::new()).await;
        assert_eq!(ran.status(), RunStatus::Failed);
        assert!(
            ran.message().contains("multi-instance activity `r`") && ran.message().contains(why),
            "{}",
            ran.message()
        );
        assert!(ran.harness.calls().is_empty());
    }
    let mut request = with_items(
        request(multi_instance(false), &[]),
        json!((0..50).collect::<Vec<_>>()),
    );
    request.annotations.step_budget = 20;
    let ran = go(request, Harness::new()).await;
    assert_eq!(ran.status(), RunStatus::Failed);
    assert!(
        ran.message().contains("would run 50 instances"),
        "{}",
        ran.message()
    );
}

/// A timer boundary on a multi-instance activity belongs to the whole activity: when it
/// fires it cancels every instance still running, once.
#[tokio::test]
async fn a_timer_boundary_interrupts_every_instance() {
    let p = process(
        r#"<startEvent id="s"/>
           <userTask id="r">
             <multiInstanceLoopCharacteristics>
               <loopCardinality>3</loopCardinality>
             </multiInstanceLoopCharacteristics>
           </userTask>
           <boundaryEvent id="late" attachedToRef="r">
             <timerEventDefinition><timeDuration>PT0.2S</timeDuration></timerEventDefinition>
           </boundaryEvent>
           <task id="chase"/><endEvent id="e"/><endEvent id="e2"/>"#,
        "f1: s -> r, f2: r -> e, f3: late -> chase, f4: chase -> e2",
    );
    let harness = Harness::new().slow("r", 5_000);
    let ran = go(request(p, &[]), harness).await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.path(), ["s", "r", "r", "r", "late", "chase", "e2"]);
    let scheduled = ran
        .events
        .iter()
        .filter(|e| matches!(e, Event::TimerScheduled { .. }))
        .count();
    assert_eq!(scheduled, 1, "{:#?}", ran.trace());
    assert!(
        !ran.events
            .iter()
            .any(|e| matches!(e, Event::TaskFinished { node, .. } if node == "r")),
        "{:#?}",
        ran.trace()
    );
}

/// A multi-instance sub-process inside another: each inner instance sees its own item and
/// the outer instance's, innermost first.
#[tokio::test]
async fn nested_multi_instance_sub_processes_layer_their_variables() {
    let p = process(
        r#"<startEvent id="s"/>
           <subProcess id="outer">
             <multiInstanceLoopCharacteristics isSequential="true">
               <loopDataInputRef>rows</loopDataInputRef>
               <inputDataItem name="row"/>
             </multiInstanceLoopCharacteristics>
             <startEvent id="os"/>
             <task id="cell">
               <multiInstanceLoopCharacteristics isSequential="true">
                 <loopDataInputRef>row.cells</loopDataInputRef>
                 <inputDataItem name="c"/>
               </multiInstanceLoopCharacteristics>
             </task>
             <endEvent id="oe"/>
             <sequenceFlow id="o1" sourceRef="os" targetRef="cell"/>
             <sequenceFlow id="o2" sourceRef="cell" targetRef="oe"/>
           </subProcess>
           <endEvent id="e"/>"#,
        "f1: s -> outer, f2: outer -> e",
    );
    let mut request = request(p, &[]);
    request.variables.insert(
        "rows".into(),
        json!([{"cells": ["a1", "a2"]}, {"cells": ["b1"]}]),
    );
    let ran = go(request, Harness::new()).await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    let seen: Vec<(Value, Value)> = ran
        .harness
        .calls()
        .into_iter()
        .map(|c| {
            (
                c.ctx.variables["c"].clone(),
                c.ctx.variables["loopCounter"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (json!("a1"), json!(1)),
            (json!("a2"), json!(2)),
            (json!("b1"), json!(1)),
        ]
    );
    let keys: Vec<String> = ran
        .harness
        .calls()
        .into_iter()
        .map(|c| c.ctx.idempotency_key.unwrap())
        .collect();
    assert_eq!(keys, ["run-1:cell:1", "run-1:cell:2", "run-1:cell:3"]);
}

/// An error end event in one instance of a multi-instance sub-process is caught by the
/// boundary of the whole sub-process, which cancels the other instances.
#[tokio::test]
async fn an_error_end_event_in_an_instance_is_caught_at_the_activity() {
    let p = process(
        r#"<startEvent id="s"/>
           <subProcess id="sub">
             <multiInstanceLoopCharacteristics>
               <loopCardinality>3</loopCardinality>
             </multiInstanceLoopCharacteristics>
             <startEvent id="ss"/>
             <exclusiveGateway id="g" default="ok"/>
             <task id="slow"/>
             <endEvent id="bad"><errorEventDefinition/></endEvent>
             <endEvent id="se"/>
             <sequenceFlow id="s1" sourceRef="ss" targetRef="g"/>
             <sequenceFlow id="ok" sourceRef="g" targetRef="slow"/>
             <sequenceFlow id="ko" sourceRef="g" targetRef="bad"/>
             <sequenceFlow id="s2" sourceRef="slow" targetRef="se"/>
           </subProcess>
           <boundaryEvent id="caught" attachedToRef="sub"><errorEventDefinition/></boundaryEvent>
           <task id="after"/><task id="fix"/><endEvent id="e"/><endEvent id="e2"/>"#,
        "f1: s -> sub, f2: sub -> after, f3: after -> e, f4: caught -> fix, f5: fix -> e2",
    );
    // The second instance's gateway takes the error end; the others wait at `slow`.
    let harness = Harness::new()
        .routes("g", &["ok"])
        .routes("g", &["ko"])
        .routes("g", &["ok"])
        .slow("slow", 5_000);
    let ran = go(request(p, &[]), harness).await;

    assert_eq!(ran.status(), RunStatus::Completed, "{}", ran.message());
    assert_eq!(ran.count("fix"), 1);
    assert_eq!(ran.count("after"), 0);
    assert_eq!(ran.count("se"), 0, "{:#?}", ran.trace());
    let thrown: Vec<&Event> = ran
        .events
        .iter()
        .filter(|e| matches!(e, Event::EventThrown { .. }))
        .collect();
    assert_eq!(thrown.len(), 1, "{:#?}", ran.trace());
}
