//! App → RDF: the process an app runs as sBPMN/AgentFLOW resources (one per flow node,
//! typed by its BPMN element), its sequence flows as `agentflow:nextTask` edges annotated
//! with the flow's id, order, condition (full text, and `varName`/`operator`/`threshold`
//! when it is one comparison of a variable with a literal) and `isDefault`; the flow
//! config's control points as typed views on their nodes; the flow config itself (an
//! `rdf:JSON` literal) and the policy files it names, so that an import rebuilds the app.

use std::path::{Path, PathBuf};

use oxrdf::{BlankNode, Literal, NamedNode, Term};
use serde_json::Value;

use super::GraphError;
use super::rdf::{Document, boolean, integer, named, string, term};
use super::vocab as v;
use crate::app::LoadedApp;
use crate::app::config::{FlowConfig, GatewayMode, LlmConfig, TaskMode};
use crate::bpmn::{self, LoopKind, NodeKind, Process};
use crate::expr::{CmpOp, Node as Cond, Operand};

/// A process as a graph, with what a writer needs to print it.
#[derive(Debug, Clone)]
pub struct Exported {
    pub document: Document,
    pub prefixes: Vec<(String, String)>,
    /// The named graph TriG and N-Quads put it in.
    pub graph: String,
}

/// The graph of an app that loaded (its model read; its config when it has one).
pub fn export(app: &LoadedApp) -> Result<Exported, GraphError> {
    let doc = app
        .bpmn
        .as_ref()
        .ok_or_else(|| GraphError::NoModel(app.name.clone()))?;
    let process = doc
        .main_process()
        .ok_or_else(|| GraphError::NoModel(app.name.clone()))?;
    let ns = v::app_namespace(&app.name);
    let mut prefixes: Vec<(String, String)> = v::PREFIXES
        .iter()
        .map(|(p, n)| (p.to_string(), n.to_string()))
        .collect();
    prefixes.push(("app".into(), ns.clone()));
    let mut out = Exporter {
        d: Document::default(),
        ns,
        config: app.config.as_ref(),
    };
    out.process(app, doc, process, true)?;
    // The file's other processes (those a call activity may call in the same file).
    for other in doc
        .processes
        .iter()
        .filter(|p| p.id != process.id && !p.nodes.is_empty())
    {
        out.process(app, doc, other, false)?;
    }
    Ok(Exported {
        document: out.d,
        prefixes,
        graph: v::definitions_graph(&app.name),
    })
}

struct Exporter<'a> {
    d: Document,
    ns: String,
    config: Option<&'a FlowConfig>,
}

/// The BPMN attributes the typed mapping already says (not repeated as `cf:attribute`).
const TYPED_ATTRIBUTES: [&str; 9] = [
    "id",
    "name",
    "default",
    "attachedToRef",
    "cancelActivity",
    "isInterrupting",
    "triggeredByEvent",
    "calledElement",
    "messageRef",
];

impl Exporter<'_> {
    fn node_iri(&self, id: &str) -> NamedNode {
        named(format!("{}{}", self.ns, iri_safe(id)))
    }

    fn process(
        &mut self,
        app: &LoadedApp,
        doc: &bpmn::Document,
        process: &Process,
        main: bool,
    ) -> Result<(), GraphError> {
        let p = self.node_iri(&process.id);
        let d = &mut self.d;
        d.add(p.clone(), term(v::TYPE), term(v::AGENTIC_PROCESS));
        d.add(p.clone(), term(v::TYPE), term(v::PROCESS));
        if main {
            d.add(p.clone(), term(v::MAIN), boolean(true));
        }
        let label = self
            .config
            .filter(|_| main)
            .and_then(|c| c.flow.name.as_ref().map(|n| n.value.clone()))
            .or_else(|| process.name.clone());
        if let Some(label) = label {
            d.add(p.clone(), term(v::LABEL), string(label));
        }
        d.add(p.clone(), term(v::BPMN_ID), string(&process.id));
        d.add(p.clone(), term(v::APP), string(&app.name));
        if let Some(name) = &process.name {
            d.add(p.clone(), term(v::NAME), string(name));
        }
        if let Some(e) = process.is_executable {
            d.add(p.clone(), term(v::IS_EXECUTABLE), boolean(e));
        }
        if let Some(lang) = doc.expression_language.as_ref().filter(|_| main) {
            d.add(p.clone(), term(v::EXPRESSION_LANGUAGE), string(lang));
        }
        if let Some(tns) = doc.target_namespace.as_ref().filter(|_| main) {
            d.add(p.clone(), term(v::TARGET_NAMESPACE), string(tns));
        }
        if let Some(text) = &process.documentation {
            d.add(p.clone(), term(v::COMMENT), string(text));
        }
        if let Some(x) = &process.extension_elements {
            d.add(p.clone(), term(v::EXTENSION_ELEMENTS), string(x));
        }
        let declared = if main {
            namespaces(doc.source.text())
        } else {
            Vec::new()
        };
        for (prefix, uri) in declared {
            let b = d.blank();
            d.add(p.clone(), term(v::NAMESPACE), b.clone());
            d.add(b.clone(), term(v::PREFIX), string(prefix));
            d.add(b, term(v::URI), string(uri));
        }
        for prop in &process.properties {
            let b = d.blank();
            d.add(p.clone(), term(v::PROPERTY), b.clone());
            d.add(b.clone(), term(v::BPMN_ID), string(&prop.id));
            if let Some(n) = &prop.name {
                d.add(b.clone(), term(v::NAME), string(n));
            }
            if let Some(r) = &prop.item_subject_ref {
                d.add(b, term(v::ITEM_SUBJECT_REF), string(r));
            }
        }
        for node in &process.nodes {
            let n = self.node_iri(&node.id);
            let link = match &node.kind {
                NodeKind::StartEvent { .. } if node.parent.is_none() => v::HAS_START_EVENT,
                NodeKind::EndEvent { .. } if node.parent.is_none() => v::HAS_END_EVENT,
                _ => v::HAS_TASK,
            };
            self.d.add(p.clone(), term(link), n);
        }
        for (i, node) in process.nodes.iter().enumerate() {
            self.node(process, node, i)?;
        }
        for (i, flow) in process.flows.iter().enumerate() {
            self.flow(process, flow, i);
        }
        if let Some(config) = self.config.filter(|_| main) {
            self.config(&p, app, config)?;
        }
        Ok(())
    }

    fn node(
        &mut self,
        process: &Process,
        node: &bpmn::Node,
        order: usize,
    ) -> Result<(), GraphError> {
        if let NodeKind::Unsupported { tag } = &node.kind {
            return Err(GraphError::Unsupported {
                element: node.id.clone(),
                what: format!("`{tag}` (an element cuga-flo cannot run)"),
            });
        }
        let n = self.node_iri(&node.id);
        let d = &mut self.d;
        d.add(
            n.clone(),
            term(v::TYPE),
            named(format!("{}{}", v::SBPMNC, node.kind.tag())),
        );
        d.add(n.clone(), term(v::BPMN_ID), string(&node.id));
        d.add(n.clone(), term(v::ORDER), integer(order as i64));
        if let Some(name) = &node.name {
            d.add(n.clone(), term(v::LABEL), string(name));
        }
        if let Some(parent) = &node.parent {
            let parent = self.node_iri(parent);
            self.d.add(n.clone(), term(v::PARENT), parent);
        }
        let d = &mut self.d;
        if let Some(text) = &node.documentation {
            d.add(n.clone(), term(v::COMMENT), string(text));
        }
        match &node.kind {
            NodeKind::StartEvent { interrupting, .. } if !interrupting => {
                d.add(n.clone(), term(v::INTERRUPTING), boolean(false));
            }
            NodeKind::BoundaryEvent {
                attached_to,
                cancel_activity,
                ..
            } => {
                let target = named(format!("{}{}", self.ns, iri_safe(attached_to)));
                d.add(n.clone(), term(v::ATTACHED_TO_REF), target);
                d.add(
                    n.clone(),
                    term(v::CANCEL_ACTIVITY),
                    boolean(*cancel_activity),
                );
            }
            NodeKind::SubProcess(bpmn::SubProcessKind::Embedded {
                triggered_by_event: true,
            }) => d.add(n.clone(), term(v::TRIGGERED_BY_EVENT), boolean(true)),
            NodeKind::CallActivity {
                called_element: Some(called),
            } => d.add(n.clone(), term(v::CALLED_ELEMENT), string(called)),
            _ => {}
        }
        for def in node.kind.event_definitions() {
            let tag = format!("{}EventDefinition", event_definition_name(*def));
            d.add(
                n.clone(),
                term(v::EVENT_DEFINITION),
                named(format!("{}{tag}", v::SBPMNC)),
            );
        }
        if let Some(r) = &node.event_ref {
            let b = d.blank();
            d.add(n.clone(), term(v::EVENT_REF), b.clone());
            d.add(b.clone(), term(v::REF), string(&r.reference));
            if let Some(code) = &r.code {
                d.add(b.clone(), term(v::CODE), string(code));
            }
            if let Some(name) = &r.name {
                d.add(b, term(v::NAME), string(name));
            }
        }
        if let Some(t) = &node.timer {
            let b = d.blank();
            d.add(n.clone(), term(v::TIMER), b.clone());
            if let Some(kind) = t.kind {
                d.add(b.clone(), term(v::TIMER_KIND), string(kind.tag()));
            }
            d.add(b, term(v::EXPRESSION), string(&t.expression));
        }
        if let Some(l) = &node.looping {
            let b = d.blank();
            d.add(n.clone(), term(v::LOOP), b.clone());
            match l.kind {
                LoopKind::Standard => d.add(b.clone(), term(v::STANDARD_LOOP), boolean(true)),
                LoopKind::MultiInstance { sequential } => {
                    d.add(b.clone(), term(v::SEQUENTIAL), boolean(sequential))
                }
            }
            let m = &l.multi;
            for (t, value) in [
                (v::COLLECTION, &m.collection),
                (v::ELEMENT_VARIABLE, &m.element_variable),
                (v::CARDINALITY, &m.cardinality),
                (v::OUTPUT_COLLECTION, &m.output_collection),
                (v::OUTPUT_ELEMENT, &m.output_element),
                (v::COMPLETION_CONDITION, &m.completion_condition),
                (v::LANGUAGE, &m.language),
            ] {
                if let Some(value) = value {
                    d.add(b.clone(), term(t), string(value));
                }
            }
        }
        for (name, value) in &node.attributes {
            if TYPED_ATTRIBUTES.contains(&name) || name.starts_with("xmlns") {
                continue;
            }
            let b = d.blank();
            d.add(n.clone(), term(v::ATTRIBUTE), b.clone());
            d.add(b.clone(), term(v::NAME), string(name));
            d.add(b, term(v::VALUE), string(value));
        }
        if let Some(x) = &node.extension_elements {
            d.add(n.clone(), term(v::EXTENSION_ELEMENTS), string(x));
        }
        self.control_point(process, node, &n);
        Ok(())
    }

    /// The config's view of a node: agentic tasks, their recipe (the agent), instruction,
    /// policy and mappings; decision gateways, their condition and policy.
    fn control_point(&mut self, process: &Process, node: &bpmn::Node, n: &NamedNode) {
        // A guardrail gateway (docs/graph.md, "Guardrail gateways"): AgentFLOW's class,
        // its approval flag and timeout.
        if let Some(Ok(g)) = crate::app::guardrail::of(self.config, process, &node.id) {
            let d = &mut self.d;
            d.add(n.clone(), term(v::TYPE), term(v::GUARDRAIL_GATEWAY));
            d.add(n.clone(), term(v::REQUIRES_APPROVAL), boolean(true));
            d.add(
                n.clone(),
                term(v::APPROVAL_TIMEOUT),
                Term::Literal(oxrdf::Literal::new_typed_literal(
                    format!("PT{}S", g.timeout.as_secs()),
                    oxrdf::NamedNode::new_unchecked(format!("{}dayTimeDuration", v::XSD)),
                )),
            );
        }
        let Some(config) = self.config else { return };
        let d = &mut self.d;
        if let Some(task) = config.tasks.iter().find(|t| t.id.value == node.id) {
            d.add(n.clone(), term(v::TYPE), term(v::CONTROL_POINT));
            let mode = match task.mode {
                TaskMode::TaskAgent => "task_agent",
                TaskMode::Native => "native",
            };
            d.add(n.clone(), term(v::MODE), string(mode));
            if task.mode == TaskMode::TaskAgent {
                d.add(n.clone(), term(v::TYPE), term(v::AGENTIC_TASK));
                let recipe = task
                    .agent
                    .as_ref()
                    .and_then(|a| a.name.as_ref())
                    .map(|n| n.value.clone())
                    .unwrap_or_else(|| node.id.clone());
                d.add(n.clone(), term(v::RECIPE), string(recipe));
            }
            if let Some(i) = &task.instruction {
                d.add(n.clone(), term(v::INSTRUCTION), string(&i.value));
            }
            if let Some(p) = &task.policy {
                d.add(n.clone(), term(v::POLICY), string(&p.value));
            }
            for (from, to) in &task.input_mapping {
                let b = d.blank();
                d.add(n.clone(), term(v::HAS_PARAM_MAPPING), b.clone());
                d.add(b.clone(), term(v::TYPE), term(v::PARAM_MAPPING));
                d.add(b.clone(), term(v::PARAM_SOURCE), string(&to.value));
                d.add(b, term(v::PARAM_TARGET), string(&from.value));
            }
            for (from, to) in &task.output_mapping {
                let b = d.blank();
                d.add(n.clone(), term(v::HAS_OUTPUT_MAPPING), b.clone());
                d.add(b.clone(), term(v::TYPE), term(v::OUTPUT_MAPPING));
                d.add(b.clone(), term(v::OUTPUT_SOURCE), string(&from.value));
                d.add(b, term(v::OUTPUT_TARGET), string(&to.value));
            }
        }
        if let Some(gw) = config.gateways.iter().find(|g| g.id.value == node.id) {
            d.add(n.clone(), term(v::TYPE), term(v::CONTROL_POINT));
            let mode = match gw.mode {
                GatewayMode::DecisionAgent => "decision_agent",
                GatewayMode::Native => "native",
            };
            d.add(n.clone(), term(v::DECISION_MODE), string(mode));
            if let Some(c) = &gw.condition {
                d.add(n.clone(), term(v::CONDITION), string(&c.value));
            }
            if let Some(p) = &gw.policy {
                d.add(n.clone(), term(v::POLICY), string(&p.value));
            }
        }
    }

    fn flow(&mut self, process: &Process, flow: &bpmn::Flow, order: usize) {
        let s = self.node_iri(&flow.source);
        let t = self.node_iri(&flow.target);
        let mut ann: Vec<(NamedNode, Term)> = vec![
            (term(v::BPMN_ID), string(&flow.id)),
            (term(v::ORDER), integer(order as i64)),
        ];
        if let Some(name) = &flow.name {
            ann.push((term(v::LABEL), string(name)));
        }
        // What routes along this edge: the config's condition for the flow, else the
        // model's, else (a decision gateway with a gateway-level condition and two flows)
        // the gateway's condition on its non-default flow.
        let gateway = self
            .config
            .and_then(|c| c.gateways.iter().find(|g| g.id.value == flow.source));
        let config_flow = gateway.and_then(|g| g.flows.iter().find(|f| f.id.value == flow.id));
        let config_condition = config_flow
            .and_then(|f| f.condition.as_ref())
            .map(|c| c.value.clone());
        let gateway_condition = gateway
            .filter(|g| g.mode == GatewayMode::DecisionAgent && !g.condition_is_question())
            .and_then(|g| g.condition.as_ref())
            .filter(|_| {
                let out: Vec<&bpmn::Flow> = process.outgoing(&flow.source).collect();
                let default = process
                    .node(&flow.source)
                    .and_then(|n| n.default_flow.as_deref());
                let taken_when_true = out
                    .iter()
                    .find(|f| Some(f.id.as_str()) != default)
                    .map(|f| f.id.as_str());
                out.len() == 2 && taken_when_true == Some(flow.id.as_str())
            })
            .map(|c| c.value.clone());
        let effective = config_condition
            .clone()
            .map(|c| (c, None))
            .or_else(|| {
                flow.condition
                    .as_ref()
                    .map(|c| (c.body.clone(), c.language.clone()))
            })
            .or_else(|| gateway_condition.clone().map(|c| (c, None)));
        if let Some((text, language)) = &effective
            && let Some((var, op, threshold)) = comparison(text, language.as_deref())
        {
            ann.push((term(v::VAR_NAME), string(var)));
            ann.push((term(v::OPERATOR), string(op)));
            ann.push((term(v::THRESHOLD), threshold));
        }
        if let Some(c) = &flow.condition {
            ann.push((term(v::CONDITION), string(&c.body)));
            if let Some(lang) = &c.language {
                ann.push((term(v::CONDITION_LANGUAGE), string(lang)));
            }
        }
        if let Some(c) = config_condition.or(gateway_condition) {
            ann.push((term(v::ROUTING_CONDITION), string(c)));
        }
        if let Some(d) = config_flow.and_then(|f| f.decision.as_ref()) {
            ann.push((term(v::DECISION), string(&d.value)));
        }
        let is_default = process
            .node(&flow.source)
            .is_some_and(|n| n.default_flow.as_deref() == Some(flow.id.as_str()));
        let source_branches = process.outgoing(&flow.source).count() > 1;
        if is_default || effective.is_some() || source_branches {
            ann.push((term(v::IS_DEFAULT), boolean(is_default)));
        }
        self.d.annotated(s, term(v::NEXT_TASK), t, ann);
    }

    fn config(
        &mut self,
        p: &NamedNode,
        app: &LoadedApp,
        config: &FlowConfig,
    ) -> Result<(), GraphError> {
        let tree = crate::app::yaml::parse(config.source.text())
            .map_err(|e| GraphError::Config(e.to_string()))?
            .to_json();
        let text = serde_json::to_string(&tree).unwrap_or_default();
        self.d.add(
            p.clone(),
            term(v::FLOW_CONFIG),
            Literal::new_typed_literal(text, term(v::JSON)),
        );
        // The declared variables, typed (a view for queries and the SHACL shapes).
        for var in &config.variables {
            let b = self.d.blank();
            self.d.add(p.clone(), term(v::DECLARES_VARIABLE), b.clone());
            self.d
                .add(b.clone(), term(v::TYPE), term(v::VARIABLE_DECLARATION));
            self.d
                .add(b.clone(), term(v::VAR_NAME), string(var.name.value.clone()));
            self.d
                .add(b, term(v::INITIAL_VALUE), typed_value(&var.default));
        }
        for (written, path) in policy_files(config) {
            let text = crate::source::read_text(&path).map_err(|e| GraphError::Io {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let b: BlankNode = self.d.blank();
            self.d.add(p.clone(), term(v::POLICY_FILE), b.clone());
            self.d.add(b.clone(), term(v::PATH), string(written));
            self.d.add(b, term(v::TEXT), string(text));
        }
        let _ = app;
        Ok(())
    }
}

/// A JSON value as a typed literal: strings `xsd:string`, booleans `xsd:boolean`,
/// integers `xsd:integer`, other numbers `xsd:decimal` (`xsd:double` with an exponent);
/// `null`, lists and objects `rdf:JSON`.
pub fn typed_value(value: &Value) -> Term {
    let xsd = |local: &str| NamedNode::new_unchecked(format!("{}{local}", v::XSD));
    match value {
        Value::String(s) => string(s.clone()),
        Value::Bool(b) => boolean(*b),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            Literal::new_typed_literal(n.to_string(), xsd("integer")).into()
        }
        Value::Number(n) => {
            let text = n.to_string();
            let datatype = if text.contains(['e', 'E']) {
                "double"
            } else {
                "decimal"
            };
            Literal::new_typed_literal(text, xsd(datatype)).into()
        }
        other => Literal::new_typed_literal(
            serde_json::to_string(other).unwrap_or_default(),
            term(v::JSON),
        )
        .into(),
    }
}

/// Every file the config names (policies, prompt templates, command agents' recipes and
/// the `{config_dir}/...` files their command lines name, tool sources' OpenAPI documents
/// and stdio servers' scripts) that exists: as written, and resolved; each once, in the
/// order met.
pub fn policy_files(config: &FlowConfig) -> Vec<(String, PathBuf)> {
    fn llm<'a>(l: &'a Option<LlmConfig>, out: &mut Vec<&'a str>) {
        if let Some(l) = l.as_ref() {
            let p = &l.prompts;
            out.extend(
                [&p.task, &p.gateway, &p.hook, &p.own]
                    .into_iter()
                    .flatten()
                    .map(|x| x.as_str()),
            );
        }
    }
    let mut written: Vec<&str> = Vec::new();
    llm(&config.llm, &mut written);
    // Files a command agent names: its recipe, and what its command line reads from the
    // app (an argument `{config_dir}/...`: the app's own scripts).
    let mut command_files: Vec<(&str, String)> = Vec::new();
    for t in &config.tasks {
        written.extend(t.policy.as_ref().map(|p| p.as_str()));
        llm(&t.llm, &mut written);
        if let Some(c) = t.agent.as_ref().and_then(|a| a.command.as_ref()) {
            written.extend(c.recipe.as_ref().map(|r| r.value.as_str()));
            for arg in &c.command {
                if let Some(rest) = arg.value.strip_prefix("{config_dir}/") {
                    command_files.push((arg.value.as_str(), rest.to_owned()));
                }
            }
        }
    }
    for g in &config.gateways {
        written.extend(g.policy.as_ref().map(|p| p.as_str()));
        llm(&g.llm, &mut written);
    }
    for h in &config.hooks {
        written.extend(h.policy.as_ref().map(|p| p.as_str()));
    }
    // Files the tool sources read: an OpenAPI document, and what a stdio server's command
    // line names in the app (its script: the arguments after the program, resolved in the
    // config's folder; a program keeps no execute bit through a graph, so is not carried).
    for source in &config.tool_sources {
        match &source.kind {
            crate::app::ToolSourceKind::OpenApi { spec, .. } => written.push(spec.value.as_str()),
            crate::app::ToolSourceKind::McpStdio {
                command, cwd: None, ..
            } => written.extend(
                command
                    .iter()
                    .skip(1)
                    .map(|a| a.value.as_str())
                    .filter(|a| !a.starts_with('-') && !Path::new(a).is_absolute()),
            ),
            _ => {}
        }
    }
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for w in written {
        if out.iter().any(|(x, _)| x == w) {
            continue;
        }
        let path = config.resolve(w);
        if path.is_file() {
            out.push((w.to_owned(), path));
        }
    }
    for (w, rest) in command_files {
        if out.iter().any(|(x, _)| x == w) {
            continue;
        }
        let path = config.resolve(&rest);
        if path.is_file() {
            out.push((w.to_owned(), path));
        }
    }
    out
}

/// A condition that is one comparison of a variable with a literal, as AgentFLOW's edge
/// annotations say it: the variable, the operator and the threshold (a number stays a
/// number; anything else is a string).
pub fn comparison(body: &str, language: Option<&str>) -> Option<(String, &'static str, Term)> {
    let expr = crate::expr::parse_in(body, language).ok()?;
    let Some(Cond::Compare { left, op, right }) = expr.ast() else {
        return None;
    };
    let (var, literal, op) = match (left, right) {
        (Operand::Var(v), Operand::Literal(l)) => (v, l, *op),
        (Operand::Literal(l), Operand::Var(v)) => (v, l, flip(*op)?),
        _ => return None,
    };
    if var.segments().len() != 1 {
        return None;
    }
    let op = match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::In | CmpOp::NotIn => return None,
    };
    let threshold: Term = match literal {
        Value::String(s) => string(s.clone()),
        Value::Number(n) => Literal::new_typed_literal(
            n.to_string(),
            named(format!(
                "{}{}",
                v::XSD,
                if n.is_f64() { "decimal" } else { "integer" }
            )),
        )
        .into(),
        Value::Bool(b) => boolean(*b),
        _ => return None,
    };
    Some((var.root().to_owned(), op, threshold))
}

fn flip(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::Ne => CmpOp::Ne,
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::In | CmpOp::NotIn => return None,
    })
}

pub fn event_definition_name(def: bpmn::EventDefinition) -> &'static str {
    use bpmn::EventDefinition as E;
    match def {
        E::Message => "message",
        E::Timer => "timer",
        E::Error => "error",
        E::Signal => "signal",
        E::Escalation => "escalation",
        E::Compensate => "compensate",
        E::Conditional => "conditional",
        E::Link => "link",
        E::Cancel => "cancel",
        E::Terminate => "terminate",
    }
}

/// The `xmlns:prefix="uri"` declarations of a document's root element (its first start
/// tag after the prolog), so that prefixed attributes and extension elements keep theirs.
pub fn namespaces(xml: &str) -> Vec<(String, String)> {
    let mut rest = xml;
    // Skip the declaration, comments and processing instructions.
    let tag = loop {
        let Some(at) = rest.find('<') else {
            return Vec::new();
        };
        rest = &rest[at..];
        if rest.starts_with("<?") || rest.starts_with("<!") {
            let end = if rest.starts_with("<!--") {
                rest.find("-->").map(|e| e + 3)
            } else {
                rest.find('>').map(|e| e + 1)
            };
            rest = &rest[end.unwrap_or(rest.len())..];
            continue;
        }
        break &rest[..rest.find('>').unwrap_or(rest.len())];
    };
    let mut out = Vec::new();
    let mut s = tag;
    while let Some(at) = s.find("xmlns:") {
        s = &s[at + 6..];
        let Some(eq) = s.find('=') else { break };
        let prefix = s[..eq].trim().to_owned();
        let after = s[eq + 1..].trim_start();
        let Some(quote) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            break;
        };
        let value = &after[1..];
        let Some(end) = value.find(quote) else { break };
        out.push((prefix, value[..end].to_owned()));
        s = &value[end..];
    }
    out
}

/// An id as the local part of an IRI (BPMN ids are XML NCNames; anything else is
/// percent-encoded).
pub fn iri_safe(id: &str) -> String {
    let mut out = String::new();
    for c in id.chars() {
        if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}
