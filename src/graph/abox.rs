//! A run as RDF (the ABox), written from its journal. [`AboxWriter`] turns each committed
//! journal record into one SPARQL 1.1 UPDATE request on the run's named graph: the process
//! instance and its status, a task instance per node visit (the current ones linked by
//! `agentflow:currentTask`), the variables (latest value on the variable, every value kept
//! in its history), each gateway decision and each transition (`agentflow:followedBy`,
//! plus a `cf:Transition` resource with `transitionedAt`, `triggeredBy` and the evaluated
//! variable and value: SPARQL 1.1 has no annotation syntax). [`GraphRun`] applies them to
//! a [`GraphStore`]; the first failure stops it. IRIs are made from sequence numbers, so the
//! same journal gives the same graph on every store.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use oxrdf::{Literal, NamedNode, Term};
use serde_json::{Map, Value};

use super::store::{GraphStore, StoreError};
use super::vocab::{self as v, AGENTFLOW, CF, RDF, XSD};
use crate::bpmn::Process;
use crate::journal::{Event, Record};
use crate::vocab::RunStatus;

/// The named graph a run's ABox goes into.
pub fn run_graph(app: &str, run_id: &str) -> String {
    format!(
        "urn:cuga-flo:graph:{}:run:{}",
        super::export::iri_safe(app),
        super::export::iri_safe(run_id)
    )
}

/// The namespace a run's resources are named in.
pub fn run_namespace(run_id: &str) -> String {
    format!("urn:cuga-flo:run:{}#", super::export::iri_safe(run_id))
}

/// The journal-to-SPARQL mapping of one run. It keeps what it wrote last (current values,
/// current visits), so every change is an exact `DELETE DATA` / `INSERT DATA`.
#[derive(Debug)]
pub struct AboxWriter {
    graph: String,
    app_ns: String,
    run_ns: String,
    /// The variable each conditional flow compares (`${x} > 1`: `x`).
    flow_vars: HashMap<String, String>,
    /// The variable each governed gateway's condition compares.
    gateway_vars: HashMap<String, String>,
    vars: Map<String, Value>,
    /// The last visit of each node, and its status.
    last_visit: HashMap<String, String>,
    status: HashMap<String, &'static str>,
    /// The visits holding a token now.
    current: HashMap<u64, String>,
    /// A flow taken, waiting for the token's next visit.
    pending: HashMap<u64, Pending>,
    /// Who decided at each gateway's last decision.
    decided: HashMap<String, (String, String)>,
    instance_status: &'static str,
    /// The sequence number of the last record written (`cf:lastSeq` on the instance).
    last_seq: Option<u64>,
}

#[derive(Debug)]
struct Pending {
    from: String,
    source: String,
    flow: String,
    at_ms: u64,
    by: String,
    decision: Option<String>,
}

fn iri(s: &str) -> String {
    format!("<{s}>")
}

fn term(t: (&str, &str)) -> String {
    format!("<{}{}>", t.0, t.1)
}

fn af(local: &str) -> String {
    format!("<{AGENTFLOW}{local}>")
}

fn cf(local: &str) -> String {
    format!("<{CF}{local}>")
}

fn lit(s: &str) -> String {
    Literal::new_simple_literal(s).to_string()
}

fn typed(s: &str, datatype: &str) -> String {
    Term::from(Literal::new_typed_literal(
        s,
        NamedNode::new_unchecked(datatype),
    ))
    .to_string()
}

fn int(n: u64) -> String {
    typed(&n.to_string(), &format!("{XSD}integer"))
}

fn time(at_ms: u64) -> String {
    typed(
        &crate::journal::export::iso8601(at_ms),
        &format!("{XSD}dateTime"),
    )
}

/// A variable's value as a literal: strings, booleans and numbers typed; `null`, lists and
/// objects as `rdf:JSON`.
pub fn value(v: &Value) -> String {
    match v {
        Value::String(s) => lit(s),
        Value::Bool(b) => typed(&b.to_string(), &format!("{XSD}boolean")),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            typed(&n.to_string(), &format!("{XSD}integer"))
        }
        // In their canonical forms: stores that keep values (oxigraph) and stores that keep
        // the text (Jena) then hold the same literal.
        Value::Number(n) => {
            let text = n.to_string();
            if text.contains(['e', 'E']) {
                let f = n.as_f64().unwrap_or_default();
                let e = format!("{f:E}");
                let (mantissa, exp) = e.split_once('E').unwrap_or((&e, "0"));
                let mantissa = if mantissa.contains('.') {
                    mantissa.to_string()
                } else {
                    format!("{mantissa}.0")
                };
                typed(&format!("{mantissa}E{exp}"), &format!("{XSD}double"))
            } else {
                let mut text = text;
                if text.contains('.') {
                    text = text.trim_end_matches('0').trim_end_matches('.').to_string();
                }
                if text == "-0" {
                    text = "0".into();
                }
                typed(&text, &format!("{XSD}decimal"))
            }
        }
        other => typed(&other.to_string(), &format!("{RDF}JSON")),
    }
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "COMPLETED",
        RunStatus::Terminated => "ABORTED",
        RunStatus::Failed => "FAILED",
        RunStatus::Waiting => "WAITING",
        RunStatus::Cancelled => "CANCELLED",
    }
}

/// Triples to insert and to delete, written into one request.
#[derive(Default)]
struct Change {
    delete: String,
    insert: String,
}

impl Change {
    fn add(&mut self, s: &str, p: &str, o: &str) {
        let _ = writeln!(self.insert, "{s} {p} {o} .");
    }
    fn remove(&mut self, s: &str, p: &str, o: &str) {
        let _ = writeln!(self.delete, "{s} {p} {o} .");
    }
}

impl AboxWriter {
    /// The writer of run `run_id` of `app`; `process` and `config` say which variable each
    /// conditional flow (or governed gateway) compares.
    pub fn new(
        app: &str,
        run_id: &str,
        process: Option<&Process>,
        config: Option<&crate::app::FlowConfig>,
    ) -> AboxWriter {
        let var_of = |text: &str, language: Option<&str>| {
            super::export::comparison(text, language).map(|(var, _, _)| var)
        };
        let mut flow_vars = HashMap::new();
        for flow in process.into_iter().flat_map(|p| p.flows.iter()) {
            if let Some(c) = &flow.condition
                && let Some(var) = var_of(&c.body, c.language.as_deref())
            {
                flow_vars.insert(flow.id.clone(), var);
            }
        }
        // A governed gateway's condition (config): the variable of its decision.
        let mut gateway_vars = HashMap::new();
        for g in config.into_iter().flat_map(|c| c.gateways.iter()) {
            if let Some(var) = g.condition.as_ref().and_then(|c| var_of(&c.value, None)) {
                gateway_vars.insert(g.id.value.clone(), var);
            }
            for f in &g.flows {
                if let Some(var) = f.condition.as_ref().and_then(|c| var_of(&c.value, None)) {
                    flow_vars.insert(f.id.value.clone(), var);
                }
            }
        }
        AboxWriter {
            graph: run_graph(app, run_id),
            app_ns: v::app_namespace(app),
            run_ns: run_namespace(run_id),
            flow_vars,
            gateway_vars,
            vars: Map::new(),
            last_visit: HashMap::new(),
            status: HashMap::new(),
            current: HashMap::new(),
            pending: HashMap::new(),
            decided: HashMap::new(),
            instance_status: "RUNNING",
            last_seq: None,
        }
    }

    /// The variable compared when `flow` out of `node` was chosen.
    fn evaluated(&self, node: &str, flow: &str) -> Option<&String> {
        self.flow_vars
            .get(flow)
            .or_else(|| self.gateway_vars.get(node))
    }

    /// The run's named graph.
    pub fn graph(&self) -> &str {
        &self.graph
    }

    fn node(&self, id: &str) -> String {
        iri(&format!("{}{}", self.app_ns, super::export::iri_safe(id)))
    }

    fn res(&self, local: &str) -> String {
        iri(&format!("{}{local}", self.run_ns))
    }

    fn instance(&self) -> String {
        self.res("instance")
    }

    fn set_status(&mut self, c: &mut Change, visit: &str, status: &'static str) {
        if let Some(old) = self.status.insert(visit.to_string(), status) {
            if old == status {
                return;
            }
            c.remove(visit, &af("taskStatus"), &lit(old));
        }
        c.add(visit, &af("taskStatus"), &lit(status));
    }

    fn set_instance_status(&mut self, c: &mut Change, status: &'static str) {
        let inst = self.instance();
        if self.instance_status != status {
            c.remove(&inst, &af("processStatus"), &lit(self.instance_status));
            c.add(&inst, &af("processStatus"), &lit(status));
            self.instance_status = status;
        }
    }

    fn set_vars(
        &mut self,
        c: &mut Change,
        seq: u64,
        at_ms: u64,
        source: &str,
        values: &Map<String, Value>,
    ) {
        let inst = self.instance();
        for (i, (name, new)) in values.iter().enumerate() {
            let var = self.res(&format!("var-{}", super::export::iri_safe(name)));
            match self.vars.get(name) {
                Some(old) if old == new => continue,
                Some(old) => c.remove(&var, &af("varValue"), &value(old)),
                None => {
                    c.add(&var, &term(v::TYPE), &af("ProcessVariable"));
                    c.add(&var, &af("varName"), &lit(name));
                    c.add(&inst, &af("hasVariable"), &var);
                }
            }
            c.add(&var, &af("varValue"), &value(new));
            let entry = self.res(&format!("value-{seq}-{i}"));
            c.add(&entry, &term(v::TYPE), &cf("VariableValue"));
            c.add(&var, &cf("history"), &entry);
            c.add(&entry, &af("varValue"), &value(new));
            c.add(&entry, &cf("setAt"), &time(at_ms));
            c.add(&entry, &cf("setBy"), &lit(source));
            c.add(&entry, &cf("seq"), &int(seq));
            self.vars.insert(name.clone(), new.clone());
        }
    }

    /// Leave the visit holding `token` (if any): completed unless it already has a status.
    fn leave(&mut self, c: &mut Change, visit: &str, at_ms: u64) {
        let inst = self.instance();
        if self.current.values().any(|v| v == visit) {
            c.remove(&inst, &af("currentTask"), visit);
            self.current.retain(|_, v| v != visit);
        }
        if self.status.get(visit) == Some(&"RUNNING") {
            self.set_status(c, visit, "COMPLETED");
            c.add(visit, &af("endTime"), &time(at_ms));
        }
    }

    /// The SPARQL UPDATE request that writes `record` (none when it changes nothing).
    pub fn update(&mut self, record: &Record) -> Option<String> {
        let mut c = Change::default();
        let inst = self.instance();
        let (seq, at) = (record.seq, record.at_ms);
        match &record.event {
            Event::RunStarted {
                run_id,
                app,
                process_id,
                variables,
                parent,
                ..
            } => {
                c.add(&inst, &term(v::TYPE), &af("ProcessInstance"));
                c.add(&inst, &af("instantiatesProcess"), &self.node(process_id));
                c.add(&inst, &af("processStatus"), &lit("RUNNING"));
                c.add(&inst, &cf("runId"), &lit(run_id));
                c.add(&inst, &term(v::APP), &lit(app));
                c.add(&inst, &af("startTime"), &time(at));
                // A child run (a call activity's): linked to the run that called it.
                if let Some(parent) = parent {
                    let parent_inst = iri(&format!("{}instance", run_namespace(&parent.run_id)));
                    c.add(&inst, &cf("parentRun"), &parent_inst);
                    c.add(&inst, &cf("calledBy"), &lit(&parent.node));
                }
                self.instance_status = "RUNNING";
                self.set_vars(&mut c, seq, at, "start", variables);
            }
            Event::ChildStarted { node, run_id, .. } => {
                let child = iri(&format!("{}instance", run_namespace(run_id)));
                c.add(&inst, &cf("childRun"), &child);
                let _ = node;
            }
            Event::NodeEntered {
                node, kind, token, ..
            } => {
                let visit = self.res(&format!("visit-{seq}"));
                c.add(&visit, &term(v::TYPE), &af("TaskInstance"));
                c.add(&visit, &af("instantiatesTask"), &self.node(node));
                c.add(&visit, &af("startTime"), &time(at));
                c.add(&visit, &cf("token"), &int(*token));
                c.add(&visit, &cf("kind"), &lit(kind));
                c.add(&visit, &cf("seq"), &int(seq));
                c.add(&inst, &af("hasTaskInstance"), &visit);
                self.set_status(&mut c, &visit, "RUNNING");
                if let Some(old) = self.current.insert(*token, visit.clone())
                    && old != visit
                    && !self.current.values().any(|v| *v == old)
                {
                    c.remove(&inst, &af("currentTask"), &old);
                }
                c.add(&inst, &af("currentTask"), &visit);
                if let Some(p) = self.pending.remove(token) {
                    c.add(&p.from, &af("followedBy"), &visit);
                    let tr = self.res(&format!("transition-{seq}"));
                    c.add(&tr, &term(v::TYPE), &cf("Transition"));
                    c.add(&tr, &cf("from"), &p.from);
                    c.add(&tr, &cf("to"), &visit);
                    c.add(&tr, &cf("flow"), &self.node(&p.flow));
                    c.add(&tr, &af("transitionedAt"), &time(p.at_ms));
                    c.add(&tr, &af("triggeredBy"), &lit(&p.by));
                    if let Some(d) = &p.decision {
                        c.add(&tr, &cf("decision"), d);
                    }
                    c.add(&tr, &cf("seq"), &int(seq));
                    if let Some(var) = self.evaluated(&p.source, &p.flow) {
                        c.add(&tr, &af("evaluatedVariable"), &lit(var));
                        if let Some(val) = self.vars.get(var) {
                            c.add(&tr, &af("evaluatedValue"), &value(val));
                        }
                    }
                }
                self.last_visit.insert(node.clone(), visit);
            }
            Event::FlowTaken {
                flow,
                source,
                token,
                ..
            } => {
                let from = self.last_visit.get(source).cloned()?;
                let (by, decision) = match self.decided.get(source) {
                    Some((by, d)) => (by.clone(), Some(d.clone())),
                    None => ("engine".to_string(), None),
                };
                self.leave(&mut c, &from, at);
                self.pending.insert(
                    *token,
                    Pending {
                        from,
                        source: source.clone(),
                        flow: flow.clone(),
                        at_ms: at,
                        by,
                        decision,
                    },
                );
            }
            Event::TaskFinished {
                node,
                status,
                outputs,
                variables,
                decided_by,
                reason,
                error,
                ..
            } => {
                if let Some(visit) = self.last_visit.get(node).cloned() {
                    let s = match status {
                        crate::vocab::TaskStatus::Completed => "COMPLETED",
                        crate::vocab::TaskStatus::Skipped => "SKIPPED",
                        crate::vocab::TaskStatus::Failed => "FAILED",
                    };
                    self.set_status(&mut c, &visit, s);
                    c.add(&visit, &af("endTime"), &time(at));
                    c.add(
                        &visit,
                        &af("taskOutput"),
                        &lit(&Value::Object(outputs.clone()).to_string()),
                    );
                    c.add(&visit, &cf("decidedBy"), &lit(decided_by.as_str()));
                    if let Some(r) = reason {
                        c.add(&visit, &cf("reason"), &lit(r));
                    }
                    if let Some(e) = error {
                        c.add(&visit, &cf("error"), &lit(e));
                    }
                }
                let mut values = outputs.clone();
                values.extend(variables.clone());
                self.set_vars(&mut c, seq, at, node, &values);
            }
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                reason,
                ..
            } => {
                let d = self.res(&format!("decision-{seq}"));
                c.add(&d, &term(v::TYPE), &cf("GatewayDecision"));
                c.add(&d, &cf("gateway"), &self.node(node));
                if let Some(visit) = self.last_visit.get(node) {
                    c.add(&d, &cf("visit"), visit);
                    c.add(visit, &cf("decision"), &d);
                }
                c.add(&d, &cf("decidedBy"), &lit(decided_by.as_str()));
                c.add(&d, &cf("decidedAt"), &time(at));
                if let Some(r) = reason {
                    c.add(&d, &cf("reason"), &lit(r));
                }
                for flow in flows {
                    c.add(&d, &cf("chosenFlow"), &self.node(flow));
                    if let Some(var) = self.evaluated(node, flow) {
                        c.add(&d, &af("evaluatedVariable"), &lit(var));
                        if let Some(val) = self.vars.get(var) {
                            c.add(&d, &af("evaluatedValue"), &value(val));
                        }
                    }
                }
                self.decided
                    .insert(node.clone(), (decided_by.as_str().to_string(), d));
            }
            Event::HookEvaluated {
                hook,
                state_updates,
                ..
            } => self.set_vars(&mut c, seq, at, hook, state_updates),
            Event::VariablesSet { source, values, .. } => {
                self.set_vars(&mut c, seq, at, source, values)
            }
            Event::MessageReceived {
                node, variables, ..
            } => self.set_vars(&mut c, seq, at, node, variables),
            Event::QuestionAnswered {
                key,
                decided_by,
                by,
                ..
            } => {
                let a = self.res(&format!("answer-{seq}"));
                c.add(&a, &term(v::TYPE), &cf("Answer"));
                c.add(&a, &cf("question"), &lit(key));
                c.add(&a, &cf("decidedBy"), &lit(decided_by.as_str()));
                if let Some(by) = by {
                    c.add(&a, &cf("by"), &lit(by));
                }
                c.add(&a, &cf("answeredAt"), &time(at));
                c.add(&inst, &cf("answer"), &a);
            }
            Event::RunWaiting { .. } => self.set_instance_status(&mut c, "WAITING"),
            Event::RunResumed { .. } => self.set_instance_status(&mut c, "RUNNING"),
            Event::RunFinished {
                status,
                message,
                variables,
                ..
            } => {
                self.set_vars(&mut c, seq, at, "end", variables);
                let visits: Vec<String> = self.current.values().cloned().collect();
                for visit in visits {
                    self.leave(&mut c, &visit, at);
                }
                self.set_instance_status(&mut c, status_name(*status));
                c.add(&inst, &af("endTime"), &time(at));
                if let Some(m) = message {
                    c.add(&inst, &cf("message"), &lit(m));
                }
            }
            _ => {}
        }
        if c.delete.is_empty() && c.insert.is_empty() {
            return None;
        }
        // How far the store has the journal: where a resumed run takes up.
        if let Some(old) = self.last_seq.replace(seq) {
            c.remove(&inst, &cf("lastSeq"), &int(old));
        }
        c.add(&inst, &cf("lastSeq"), &int(seq));
        let g = iri(&self.graph);
        let mut out = String::new();
        if !c.delete.is_empty() {
            let _ = write!(out, "DELETE DATA {{ GRAPH {g} {{\n{}}} }}", c.delete);
        }
        if !c.insert.is_empty() {
            if !out.is_empty() {
                out.push_str(" ;\n");
            }
            let _ = write!(out, "INSERT DATA {{ GRAPH {g} {{\n{}}} }}", c.insert);
        }
        Some(out)
    }
}

/// A run being written into a store: the TBox first (at `run_started`), then each record.
/// The first failure is kept and nothing more is written.
pub struct GraphRun {
    store: Arc<dyn GraphStore>,
    /// A store that starts empty with each process (the embedded one in memory).
    fresh: bool,
    /// Which store this is (the `graph:` block and the folder it is relative to): a child
    /// run whose app names the same store writes into this one.
    key: String,
    inner: Mutex<RunState>,
}

struct RunState {
    writer: AboxWriter,
    /// The TBox's named graph and Turtle, loaded at `run_started`.
    tbox: Option<(String, String)>,
    failed: Option<StoreError>,
}

impl GraphRun {
    pub fn new(
        store: Arc<dyn GraphStore>,
        fresh: bool,
        writer: AboxWriter,
        tbox: Option<(String, String)>,
    ) -> GraphRun {
        GraphRun {
            store,
            fresh,
            key: String::new(),
            inner: Mutex::new(RunState {
                writer,
                tbox,
                failed: None,
            }),
        }
    }

    pub fn store(&self) -> &Arc<dyn GraphStore> {
        &self.store
    }

    /// Write `record` (unless an earlier write failed).
    pub fn apply(&self, record: &Record) {
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if state.failed.is_some() {
            return;
        }
        let result = (|| {
            if matches!(record.event, Event::RunStarted { .. })
                && let Some((graph, turtle)) = state.tbox.take()
            {
                self.store.put_graph(&graph, &turtle)?;
            }
            match state.writer.update(record) {
                Some(update) => self.store.update(&update),
                None => Ok(()),
            }
        })();
        if let Err(e) = result {
            tracing::error!("graph store: {e}");
            state.failed = Some(e);
        }
    }

    /// Catch up with the records a resumed run wrote before: written again into a store
    /// that starts empty (the embedded one in memory), else only folded into the writer
    /// (the store has them).
    pub fn replay(&self, records: &[Record]) {
        // A store kept between processes has the records up to its `cf:lastSeq`; those
        // after it (an answer journalled by `runs answer`, a timeout) are written now.
        let written = if self.fresh {
            0
        } else {
            match self.last_seq() {
                Ok(n) => n,
                Err(e) => {
                    tracing::error!("graph store: {e}");
                    self.inner.lock().unwrap_or_else(|e| e.into_inner()).failed = Some(e);
                    return;
                }
            }
        };
        for record in records {
            if record.seq > written {
                self.apply(record);
            } else {
                let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                state.tbox = None;
                let _ = state.writer.update(record);
            }
        }
    }

    /// The last record the store has of this run (0: none).
    fn last_seq(&self) -> Result<u64, StoreError> {
        let (graph, inst) = {
            let state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            (iri(state.writer.graph()), state.writer.instance())
        };
        let query = format!(
            "SELECT ?n WHERE {{ GRAPH {graph} {{ {inst} {} ?n }} }}",
            cf("lastSeq")
        );
        match self.store.query(&query, None)? {
            super::store::Answer::Solutions { rows, .. } => Ok(rows
                .iter()
                .filter_map(|r| match r.first() {
                    Some(Some(Term::Literal(l))) => l.value().parse::<u64>().ok(),
                    _ => None,
                })
                .max()
                .unwrap_or(0)),
            _ => Ok(0),
        }
    }

    /// The first failure, if any.
    pub fn failed(&self) -> Option<StoreError> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .failed
            .clone()
    }
}

/// The graph-mode writer of a run of `loaded` (none when its config has no `graph:`): the
/// store opened, the TBox (the app's export) ready to load at `run_started`.
pub fn graph_run(
    loaded: &crate::app::LoadedApp,
    run_id: &str,
) -> Result<Option<GraphRun>, StoreError> {
    child_graph_run(None, loaded, run_id)
}

/// The graph-mode writer of a child run (a call activity's) of `loaded`, whose caller is
/// written by `parent`: none when the called app has no `graph:` block. When it names the
/// caller's store, the child writes into that store (the embedded in-memory one included:
/// its graphs sit beside the caller's); else into its own.
pub fn child_graph_run(
    parent: Option<&GraphRun>,
    loaded: &crate::app::LoadedApp,
    run_id: &str,
) -> Result<Option<GraphRun>, StoreError> {
    let Some(config) = loaded.config.as_ref().and_then(|c| c.graph.as_ref()) else {
        return Ok(None);
    };
    let dir = loaded
        .config_path
        .as_ref()
        .and_then(|p| p.parent())
        .unwrap_or(&loaded.dir);
    let key = store_key(config, dir);
    let store = match parent.filter(|p| p.key == key) {
        Some(p) => p.store.clone(),
        None => super::store::open(config, dir)?,
    };
    let exported = super::export(loaded).map_err(|e| StoreError::Setup(e.to_string()))?;
    let tbox = (
        v::definitions_graph(&loaded.name),
        exported.write(super::Format::Turtle),
    );
    let writer = AboxWriter::new(
        &loaded.name,
        run_id,
        loaded.process(),
        loaded.config.as_ref(),
    );
    let fresh = config.store == crate::app::GraphBackend::Embedded && config.path.is_none();
    let mut run = GraphRun::new(store, fresh, writer, Some(tbox));
    run.key = key;
    Ok(Some(run))
}

/// The stores a server's runs write into, one per `graph:` store (by [`store_key`]): the
/// runs of `serve` share them (an embedded store on disk opens once).
#[derive(Default)]
pub struct Stores(Mutex<std::collections::HashMap<String, Arc<dyn GraphStore>>>);

/// The graph-mode writer of a run of `loaded` started by a server (`serve`, `serve
/// --a2a`): as [`graph_run`], its store taken from `stores` (opened there the first time).
pub fn served_graph_run(
    stores: &Stores,
    loaded: &crate::app::LoadedApp,
    run_id: &str,
) -> Result<Option<GraphRun>, StoreError> {
    let Some(config) = loaded.config.as_ref().and_then(|c| c.graph.as_ref()) else {
        return Ok(None);
    };
    let dir = loaded
        .config_path
        .as_ref()
        .and_then(|p| p.parent())
        .unwrap_or(&loaded.dir);
    let key = store_key(config, dir);
    let store = {
        let mut map = stores.0.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(&key) {
            Some(s) => s.clone(),
            None => {
                let s = super::store::open(config, dir)?;
                map.insert(key.clone(), s.clone());
                s
            }
        }
    };
    let shared = GraphRun {
        store,
        fresh: false,
        key,
        inner: Mutex::new(RunState {
            writer: AboxWriter::new(&loaded.name, "-", None, None),
            tbox: None,
            failed: None,
        }),
    };
    child_graph_run(Some(&shared), loaded, run_id)
}

/// What tells two `graph:` blocks' stores apart: the backend, the endpoint and dataset or
/// the folder on disk (relative to the config's folder), the credentials' variables.
fn store_key(config: &crate::app::GraphConfig, dir: &std::path::Path) -> String {
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        config.store,
        config
            .endpoint
            .as_ref()
            .map(|e| e.value.trim_end_matches('/').to_string()),
        config.dataset.as_ref().map(|d| d.value.clone()),
        config.path.as_ref().map(|p| dir.join(&p.value)),
        config.user_env.as_ref().map(|u| u.value.clone()),
        config.password_env.as_ref().map(|u| u.value.clone()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_written_in_their_canonical_forms() {
        let d = |v: Value| value(&v);
        let xsd = XSD;
        assert_eq!(d(json!(0.0)), format!("\"0\"^^<{xsd}decimal>"));
        assert_eq!(d(json!(0.9)), format!("\"0.9\"^^<{xsd}decimal>"));
        assert_eq!(d(json!(-0.0)), format!("\"0\"^^<{xsd}decimal>"));
        assert_eq!(d(json!(12.50)), format!("\"12.5\"^^<{xsd}decimal>"));
        assert_eq!(d(json!(7)), format!("\"7\"^^<{xsd}integer>"));
        assert_eq!(d(json!(1e300)), format!("\"1.0E300\"^^<{xsd}double>"));
        assert_eq!(d(json!("a\"b")), "\"a\\\"b\"");
        assert_eq!(d(json!(true)), format!("\"true\"^^<{xsd}boolean>"));
        assert_eq!(
            d(json!({"k": [1]})),
            format!("\"{{\\\"k\\\":[1]}}\"^^<{RDF}JSON>")
        );
    }

    fn record(seq: u64, event: Event) -> Record {
        Record {
            seq,
            at_ms: 1_700_000_000_000 + seq,
            prev: String::new(),
            event,
        }
    }

    #[test]
    fn the_latest_value_replaces_the_last_and_the_history_keeps_both() {
        let mut w = AboxWriter::new("app", "r1", None, None);
        let mut values = Map::new();
        values.insert("x".into(), json!(1));
        let first = w
            .update(&record(
                1,
                Event::VariablesSet {
                    source: "a".into(),
                    values: values.clone(),
                    taint: None,
                },
            ))
            .unwrap();
        assert!(!first.contains("DELETE DATA"), "{first}");
        values.insert("x".into(), json!(2));
        let second = w
            .update(&record(
                2,
                Event::VariablesSet {
                    source: "b".into(),
                    values: values.clone(),
                    taint: None,
                },
            ))
            .unwrap();
        assert!(second.contains("DELETE DATA"), "{second}");
        assert!(second.contains("value-2-0"), "{second}");
        // The same value again changes nothing.
        assert!(
            w.update(&record(
                3,
                Event::VariablesSet {
                    source: "c".into(),
                    values,
                    taint: None,
                },
            ))
            .is_none()
        );
        // Every update is valid SPARQL on the embedded store.
        let store = super::super::store::Embedded::memory().unwrap();
        use super::super::store::GraphStore;
        store.update(&first).unwrap();
        store.update(&second).unwrap();
        let answer = store
            .query(
                "SELECT ?v WHERE { ?x <http://example.org/ontology/agentflow#varValue> ?v }",
                None,
            )
            .unwrap();
        match answer {
            super::super::store::Answer::Solutions { rows, .. } => assert_eq!(rows.len(), 3),
            other => panic!("{other:?}"),
        }
    }
}
