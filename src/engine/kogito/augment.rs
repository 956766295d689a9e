//! The rewritten model ([`crate::semantics::rewrite`]) in Kogito's dialect (jBPM on Quarkus,
//! Apache KIE 10): every worker is a **user task** owned by cuga-flo's actor, which
//! cuga-flo finds through the process-management API and completes over REST with every
//! process variable (Kogito sets a mapped output left out of a completion to null, so
//! each worker maps every variable in and out); guards are Java expressions on the
//! routing and hook variables. Kogito never calls cuga-flo, so no control point runs into
//! a callback timeout: a person or a model may take as long as they need.
//!
//! Kogito keeps only declared variables: every variable of the run is declared as a
//! process property (of type `Object`, so any JSON value fits), plus the routing and
//! hook variables (`String`). The process id and the task names are Java identifiers.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::bpmn::Process;
use crate::bridge::FlowAnnotations;
use crate::journal::event::{CatchKind, ThrownKind};
use crate::semantics::dialect::{Dialect, write_scope};
use crate::semantics::rewrite::{
    self, Element, Guard, RFlow, RNode, Rewritten, Thrown, TimerOn, xml_escape,
};
use crate::semantics::topology::Topology;

/// The actor every worker task belongs to (cuga-flo acts as this user).
pub const ACTOR: &str = "cugaflo";

/// The process rewritten for Kogito. With an id prefix, every id in the service is the
/// model's id behind it (Kogito keys user tasks by node id across all the processes of a
/// service, so processes sharing a service need distinct ids).
#[derive(Debug, Clone)]
pub struct Augmented {
    /// Put before every node and flow id in the service.
    pub id_prefix: String,
    /// BPMN 2.0 XML for Kogito's code generation.
    pub xml: String,
    /// The process id (the REST path: `/{process_id}`).
    pub process_id: String,
    /// Worker id → task name (the REST path segment of its work items).
    pub task_names: BTreeMap<String, String>,
    pub rewritten: Rewritten,
}

/// Where a Kogito service keeps its process instances (`kogito build --persistence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Persistence {
    /// In the service's memory: a restart forgets them (Kogito's default).
    #[default]
    Memory,
    /// In PostgreSQL, with Kogito's JDBC persistence add-on: they outlive a restart.
    Postgresql,
}

/// The Java class of the variables of a service with persistence: any JSON value, kept as
/// its text (`templates/Value.java`).
pub const VALUE_CLASS: &str = "org.cugaflo.Value";

/// The variable a service with persistence keeps each instance's path in (the BPMN ids
/// entered, one per line), so that a restarted service still knows it.
pub const TRACE_VARIABLE: &str = "cugaTrace";

/// The variables the correlation keys of the model's messages read, in order.
fn correlation_variables(process: &Process) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let keys =
        (process.nodes.iter()).filter_map(|n| n.event_ref.as_ref()?.correlation_key.as_deref());
    for key in keys {
        let Ok(expr) = crate::expr::parse(key) else {
            continue;
        };
        for name in expr.variables() {
            let name = name.split('.').next().unwrap_or(&name).to_string();
            if !name.starts_with("cuga") && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// A Java identifier made from `text` (invalid characters become `_`).
pub fn java_identifier(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Rewrite `process` for Kogito as process `process_id`, declaring `variables`, with
/// `id_prefix` before every id (empty: the model's ids), for a service that keeps its
/// instances in memory.
pub fn augment(
    process: &Process,
    annotations: &FlowAnnotations,
    process_id: &str,
    variables: &[String],
    id_prefix: &str,
) -> Result<Augmented, Vec<(String, String)>> {
    augment_for(
        process,
        annotations,
        process_id,
        variables,
        id_prefix,
        Persistence::Memory,
    )
}

/// [`augment`], for a service that keeps its instances as `persistence` says. Kogito's
/// persistence stores only variables of types it can map (not `Object`): with a
/// database, the variables are declared as [`VALUE_CLASS`] (any JSON value, kept as its
/// text), the instance's path is kept in the variable [`TRACE_VARIABLE`] (a restarted
/// service knows it), and multi-instance activities, whose collections are Java
/// collections, are refused.
pub fn augment_for(
    process: &Process,
    annotations: &FlowAnnotations,
    process_id: &str,
    variables: &[String],
    id_prefix: &str,
    persistence: Persistence,
) -> Result<Augmented, Vec<(String, String)>> {
    let rewritten = rewrite::rewrite(process, annotations, crate::app::EngineKind::Kogito)?;
    if persistence != Persistence::Memory {
        let refused: Vec<(String, String)> = rewritten
            .roles
            .values()
            .filter_map(|role| match role {
                rewrite::Role::Multi { node, .. } => Some((
                    node.clone(),
                    "a multi-instance activity cannot run on a Kogito service with \
                     persistence yet (its collection is a Java collection, which Kogito's \
                     persistence cannot store); build the service without `--persistence`"
                        .to_string(),
                )),
                _ => None,
            })
            .collect();
        if !refused.is_empty() {
            return Err(refused);
        }
    }
    let process_id = java_identifier(process_id);
    let task_names: BTreeMap<String, String> = rewritten
        .nodes
        .iter()
        .filter(|n| matches!(n.element, Element::Worker | Element::MultiWorker { .. }))
        .map(|n| {
            let name = format!("cp_{}", java_identifier(&format!("{id_prefix}{}", n.id)));
            (n.id.clone(), name)
        })
        .collect();
    // The service's ids; `rewritten` keeps the model's (the adapter translates).
    let mut service = rewritten.clone();
    if !id_prefix.is_empty() {
        let ns = |id: &mut String| *id = format!("{id_prefix}{id}");
        for n in &mut service.nodes {
            ns(&mut n.id);
            if let Some(p) = &mut n.parent {
                ns(p);
            }
            if let Element::Boundary { attached_to, .. }
            | Element::CatchBoundary { attached_to, .. }
            | Element::Timer {
                on: TimerOn::Boundary { attached_to, .. },
                ..
            } = &mut n.element
            {
                ns(attached_to);
            }
        }
        for f in &mut service.flows {
            ns(&mut f.id);
            ns(&mut f.source);
            ns(&mut f.target);
            if let Some(p) = &mut f.parent {
                ns(p);
            }
        }
    }
    // An escalation nothing catches passes (the adapter journals its throw from the
    // path): the service gets a none event there.
    let topology = Topology::from_process(process);
    for (n, model) in service.nodes.iter_mut().zip(&rewritten.nodes) {
        if let Element::Throw { end, thrown } = &n.element
            && thrown.kind == ThrownKind::Escalation
            && rewrite::catcher(&topology, &model.id, thrown, false).is_none()
        {
            n.element = if *end {
                Element::End {
                    terminate_all: None,
                }
            } else {
                Element::Intermediate
            };
        }
    }
    interrupt_as_errors(&mut service, &rewritten, &topology);
    in_scope(&mut service, id_prefix);
    merge_explicitly(&mut service, id_prefix);
    let task_names_by_service_id: BTreeMap<String, String> = task_names
        .iter()
        .map(|(id, name)| (format!("{id_prefix}{id}"), name.clone()))
        .collect();
    let mut declared: Vec<(String, &str)> = variables
        .iter()
        .filter(|v| !v.starts_with("cuga"))
        .map(|v| (v.clone(), "Object"))
        .collect();
    declared.extend(rewritten.variables().into_iter().map(|v| (v, "String")));
    // What the correlation keys of the messages caught read (Camunda 8's `= orderId`):
    // cuga-flo reads it in the instance when a catch starts waiting.
    for name in correlation_variables(process) {
        if !declared.iter().any(|(v, _)| *v == name) {
            declared.push((name, "Object"));
        }
    }
    // A multi-instance task's state ([`rewrite::multi_variables`]) and its instances'
    // loop counters ([`slots`]).
    for role in rewritten.roles.values() {
        if let rewrite::Role::Multi { variable, node, .. } = role {
            // Its output collection, which cuga-flo sets.
            if let Some(collection) = process
                .node(node)
                .and_then(|n| n.looping.as_ref())
                .and_then(|l| l.multi.output_collection.clone())
                && !declared.iter().any(|(v, _)| *v == collection)
            {
                declared.push((collection, "Object"));
            }
            declared.push((variable.clone(), "Object"));
            declared.extend(
                rewrite::multi_variables(variable)
                    .into_iter()
                    .map(|v| (v, "Object")),
            );
            declared.push((slots(variable), "Object"));
        }
    }
    if persistence != Persistence::Memory {
        declared.push((TRACE_VARIABLE.to_string(), "String"));
    }
    let object = match persistence {
        Persistence::Memory => "Object",
        Persistence::Postgresql => VALUE_CLASS,
    };
    let xml = write_xml(
        process,
        &process_id,
        &service,
        &task_names_by_service_id,
        &declared,
        object,
    );
    Ok(Augmented {
        id_prefix: id_prefix.to_string(),
        xml,
        process_id,
        task_names,
        rewritten,
    })
}

/// An escalation end event jBPM delivers to an interrupting boundary event does not stop
/// its sub-process: the end event completes it as well, and the token goes on past it
/// beside the boundary's. An error does stop it, so the service throws such an
/// escalation as an error of its own code (`cuga_escalation__CODE`), which the boundary
/// catches, when every escalation that boundary catches is thrown by an end event.
fn interrupt_as_errors(service: &mut Rewritten, rewritten: &Rewritten, topology: &Topology) {
    let caught_by = |model: &RNode| match &model.element {
        Element::Throw { thrown, .. } if thrown.kind == ThrownKind::Escalation => {
            rewrite::catcher(topology, &model.id, thrown, false)
                .filter(|c| c.interrupting)
                .map(|c| c.boundary)
        }
        _ => None,
    };
    // The boundaries to convert: caught by an interrupting one, thrown by end events only.
    let mut convert: Vec<String> = Vec::new();
    let mut keep: Vec<String> = Vec::new();
    for model in &rewritten.nodes {
        if let Some(boundary) = caught_by(model) {
            match model.element {
                Element::Throw { end: true, .. } => convert.push(boundary),
                _ => keep.push(boundary),
            }
        }
    }
    convert.retain(|b| {
        !keep.contains(b) && rewritten.nodes.iter().any(|n| {
            &n.id == b
                && matches!(&n.element, Element::Boundary { thrown, .. } if thrown.code.is_some())
        })
    });
    for (n, model) in service.nodes.iter_mut().zip(&rewritten.nodes) {
        let as_error = |thrown: &mut Thrown| {
            thrown.kind = ThrownKind::Error;
            thrown.code = Some(format!(
                "cuga_escalation__{}",
                thrown.code.as_deref().unwrap_or_default()
            ));
        };
        match &mut n.element {
            Element::Boundary { thrown, .. } if convert.contains(&model.id) => {
                as_error(thrown);
            }
            Element::Throw { thrown, .. }
                if caught_by(model).is_some_and(|b| convert.contains(&b)) =>
            {
                as_error(thrown);
            }
            _ => {}
        }
    }
}

/// jBPM links a boundary event to its activity, and a flow to its ends, within one scope:
/// a boundary event lies where its activity does, with the flows leaving it. A worker with
/// no outgoing flow (where cuga-flo fails the run) gets an end event after it, since jBPM
/// refuses a task without one.
fn in_scope(service: &mut Rewritten, id_prefix: &str) {
    use crate::semantics::rewrite::PREFIX;
    let scope_of = |service: &Rewritten, id: &str| {
        service
            .nodes
            .iter()
            .find(|n| n.id == id)
            .map(|n| n.parent.clone())
    };
    for i in 0..service.nodes.len() {
        if let Element::Boundary { attached_to, .. }
        | Element::CatchBoundary { attached_to, .. }
        | Element::Timer {
            on: TimerOn::Boundary { attached_to, .. },
            ..
        } = &service.nodes[i].element
            && let Some(parent) = scope_of(service, &attached_to.clone())
        {
            let id = service.nodes[i].id.clone();
            service.nodes[i].parent.clone_from(&parent);
            for f in service.flows.iter_mut().filter(|f| f.source == id) {
                f.parent.clone_from(&parent);
            }
        }
    }
    let dead_ends: Vec<(String, Option<String>)> = service
        .nodes
        .iter()
        .filter(|n| matches!(n.element, Element::Worker | Element::MultiWorker { .. }))
        .filter(|n| !service.flows.iter().any(|f| f.source == n.id))
        .map(|n| (n.id.clone(), n.parent.clone()))
        .collect();
    for (id, parent) in dead_ends {
        let model_id = id.strip_prefix(id_prefix).unwrap_or(&id).to_string();
        let end = format!("{id_prefix}{PREFIX}end__{model_id}");
        service.flows.push(RFlow {
            id: format!("{id_prefix}{PREFIX}ending__{model_id}"),
            source: id,
            target: end.clone(),
            guard: None,
            parent: parent.clone(),
        });
        service.nodes.push(RNode {
            id: end,
            name: None,
            parent,
            element: Element::End {
                terminate_all: None,
            },
        });
    }
}

/// jBPM accepts more than one incoming flow only on gateways, and more than one outgoing
/// flow only on gateways: an implicit merge gets an exclusive gateway before its node, an
/// implicit split a parallel one after it (BPMN's meaning of both).
fn merge_explicitly(service: &mut Rewritten, id_prefix: &str) {
    use crate::semantics::rewrite::{GatewayTag, PREFIX, RFlow};
    let is_gateway = |service: &Rewritten, id: &str| {
        service
            .nodes
            .iter()
            .any(|n| n.id == id && matches!(n.element, Element::Gateway(_)))
    };
    let ids: Vec<(String, Option<String>)> = service
        .nodes
        .iter()
        .map(|n| (n.id.clone(), n.parent.clone()))
        .collect();
    for (id, parent) in ids {
        if is_gateway(service, &id) {
            continue;
        }
        let model_id = id.strip_prefix(id_prefix).unwrap_or(&id).to_string();
        let incoming = service.flows.iter().filter(|f| f.target == id).count();
        if incoming > 1 {
            let merge = format!("{id_prefix}{PREFIX}merge__{model_id}");
            for f in service.flows.iter_mut().filter(|f| f.target == id) {
                f.target = merge.clone();
            }
            service.flows.push(RFlow {
                id: format!("{id_prefix}{PREFIX}merged__{model_id}"),
                source: merge.clone(),
                target: id.clone(),
                guard: None,
                parent: parent.clone(),
            });
            service.nodes.push(RNode {
                id: merge,
                name: None,
                parent: parent.clone(),
                element: Element::Gateway(GatewayTag::Exclusive),
            });
        }
        let outgoing = service.flows.iter().filter(|f| f.source == id).count();
        if outgoing > 1 {
            let split = format!("{id_prefix}{PREFIX}split__{model_id}");
            for f in service.flows.iter_mut().filter(|f| f.source == id) {
                f.source = split.clone();
            }
            service.flows.push(RFlow {
                id: format!("{id_prefix}{PREFIX}splitting__{model_id}"),
                source: id.clone(),
                target: split.clone(),
                guard: None,
                parent: parent.clone(),
            });
            service.nodes.push(RNode {
                id: split,
                name: None,
                parent,
                element: Element::Gateway(GatewayTag::Parallel),
            });
        }
    }
}

/// The variable listing the loop counters (1, 2, ...) of multi-instance task step
/// `variable`'s instances: the collection jBPM's multi-instance activity runs over, so
/// that each instance's user task shows its loop counter ([`SLOT`]).
pub fn slots(variable: &str) -> String {
    format!("{variable}Slots")
}

/// The input of an instance's user task holding its loop counter (a work item
/// parameter).
pub const SLOT: &str = "cugaSlot";

/// An id for an item definition or data input/output (an XML id).
fn xml_id(text: &str) -> String {
    java_identifier(text)
}

/// Every error and escalation code the service's events throw or catch, once.
fn codes(rewritten: &Rewritten) -> Vec<(ThrownKind, String)> {
    let mut codes: Vec<(ThrownKind, String)> = Vec::new();
    for n in &rewritten.nodes {
        if let Element::Throw { thrown, .. }
        | Element::Boundary { thrown, .. }
        | Element::TriggerStart { thrown, .. } = &n.element
            && let Some(code) = &thrown.code
            && !codes.iter().any(|(k, c)| *k == thrown.kind && c == code)
        {
            codes.push((thrown.kind, code.clone()));
        }
    }
    codes
}

/// The jBPM signal a message or signal catch of the service waits for.
pub fn event_type(kind: CatchKind, name: &str) -> String {
    format!("cuga_{}__{name}", kind.as_str())
}

/// The jBPM signal a message or signal event sub-process of the service starts on: not
/// declared as a `<signal>` (jBPM 10.1's code generation takes a declared signal's
/// `structureRef` as the start's trigger name, and refuses it without one: "Signal
/// Trigger information is not complete"); the service's `/cugaflo/deliver` signals it
/// beside [`event_type`].
pub fn start_event_type(kind: CatchKind, name: &str) -> String {
    format!("{}__start", event_type(kind, name))
}

/// The jBPM signal the service's timer event `id` (a service id) waits for: cuga-flo
/// signals it when the timer is due (`/cugaflo/signal`), so that the journal's due time
/// is the one the run keeps to, a run parks on a timer and `runs resume --due` fires it.
pub fn timer_type(id: &str) -> String {
    format!("{TIMER_TYPE}{id}")
}

/// The prefix of [`timer_type`].
pub const TIMER_TYPE: &str = "cuga_timer__";

/// Every message and signal the service's catches wait for, and the timers of its catch
/// and boundary events, once.
fn event_types(rewritten: &Rewritten) -> Vec<String> {
    let mut types: Vec<String> = Vec::new();
    for n in &rewritten.nodes {
        let t = match &n.element {
            Element::Catch { kind, name } | Element::CatchBoundary { kind, name, .. } => {
                event_type(*kind, name)
            }
            Element::Timer {
                on: TimerOn::Catch | TimerOn::Boundary { .. },
                ..
            } => timer_type(&n.id),
            _ => continue,
        };
        if !types.contains(&t) {
            types.push(t);
        }
    }
    types
}

/// The `<error>` without a code that a catch-all error boundary event names (jBPM then
/// catches every code with it).
const CATCH_ALL: &str = "cuga_error__any";

/// The id of the `<error>` or `<escalation>` of `code`.
fn code_id(kind: ThrownKind, code: &str) -> String {
    format!("cuga_{}__{}", kind.as_str(), xml_id(code))
}

/// The event definition of what an event throws or catches (no code: every one).
fn event_definition(thrown: &Thrown) -> String {
    let (tag, attribute) = match thrown.kind {
        ThrownKind::Error => ("errorEventDefinition", "errorRef"),
        ThrownKind::Escalation => ("escalationEventDefinition", "escalationRef"),
    };
    match &thrown.code {
        Some(code) => format!(
            "<bpmn2:{tag} {attribute}=\"{}\"/>",
            code_id(thrown.kind, code)
        ),
        None if thrown.kind == ThrownKind::Error => {
            format!("<bpmn2:{tag} {attribute}=\"{CATCH_ALL}\"/>")
        }
        None => format!("<bpmn2:{tag}/>"),
    }
}

fn write_xml(
    process: &Process,
    process_id: &str,
    rewritten: &Rewritten,
    task_names: &BTreeMap<String, String>,
    declared: &[(String, &str)],
    object: &str,
) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <bpmn2:definitions xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xmlns:bpmn2=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" \
         xmlns:drools=\"http://www.jboss.org/drools\" \
         id=\"_cugaflo_defs\" exporter=\"cuga-flo\" targetNamespace=\"http://www.omg.org/bpmn20\">\n",
    );
    for (ty, java) in [("_ObjectItem", object), ("_StringItem", "String")] {
        let _ = writeln!(
            xml,
            "  <bpmn2:itemDefinition id=\"{ty}\" structureRef=\"{java}\"/>"
        );
    }
    for t in event_types(rewritten) {
        let t = xml_escape(&t);
        let _ = writeln!(xml, "  <bpmn2:signal id=\"{t}\" name=\"{t}\"/>");
    }
    // jBPM wants every error event to name an error: a catch-all names one with no code.
    if rewritten.nodes.iter().any(|n| {
        matches!(&n.element, Element::Boundary { thrown, .. }
            if thrown.kind == ThrownKind::Error && thrown.code.is_none())
    }) {
        let _ = writeln!(xml, "  <bpmn2:error id=\"{CATCH_ALL}\"/>");
    }
    for (kind, code) in codes(rewritten) {
        let (tag, attribute) = match kind {
            ThrownKind::Error => ("error", "errorCode"),
            ThrownKind::Escalation => ("escalation", "escalationCode"),
        };
        let _ = writeln!(
            xml,
            "  <bpmn2:{tag} id=\"{}\" {attribute}=\"{}\"/>",
            code_id(kind, &code),
            xml_escape(&code)
        );
    }
    let name = process
        .name
        .as_deref()
        .map_or_else(|| process_id.to_string(), xml_escape);
    let _ = writeln!(
        xml,
        "  <bpmn2:process id=\"{process_id}\" name=\"{name}\" drools:packageName=\"org.cugaflo\" \
         drools:version=\"1.0\" drools:adHoc=\"false\" isExecutable=\"true\" processType=\"Public\">"
    );
    for (var, java) in declared {
        let _ = writeln!(
            xml,
            "    <bpmn2:property id=\"{}\" itemSubjectRef=\"_{java}Item\" name=\"{}\"/>",
            xml_escape(var),
            xml_escape(var)
        );
    }
    let children = rewritten.scopes();
    // The trace is the service's own: no task reads or writes it.
    let mapped: Vec<(String, &str)> = declared
        .iter()
        .filter(|(v, _)| v != TRACE_VARIABLE)
        .cloned()
        .collect();
    let writer = Writer {
        flows: &rewritten.flows,
        task_names,
        declared: &mapped,
    };
    write_scope(&writer, &mut xml, &children, None, 2);
    xml.push_str("  </bpmn2:process>\n</bpmn2:definitions>\n");
    xml
}

struct Writer<'a> {
    flows: &'a [RFlow],
    task_names: &'a BTreeMap<String, String>,
    declared: &'a [(String, &'a str)],
}

impl Dialect for Writer<'_> {
    fn prefix(&self) -> &'static str {
        "bpmn2:"
    }

    fn terminate(&self, _all: bool) -> String {
        "<bpmn2:terminateEventDefinition/>".to_string()
    }

    fn worker(&self, xml: &mut String, n: &RNode, pad: &str, multi: Option<(bool, &str)>) {
        self.user_task_of(xml, n, pad, multi);
    }

    fn gateway_attributes(&self, n: &RNode) -> String {
        let incoming = self.flows.iter().filter(|f| f.target == n.id).count();
        let outgoing = self.flows.iter().filter(|f| f.source == n.id).count();
        let direction = match (incoming > 1, outgoing > 1) {
            (true, true) => "Mixed",
            (true, false) => "Converging",
            (false, true) => "Diverging",
            (false, false) => "Unspecified",
        };
        format!(" gatewayDirection=\"{direction}\"")
    }

    /// Kogito throws and catches errors and escalations itself. (engine::support refuses
    /// an error start without a code.)
    fn thrown(&self, thrown: &Thrown) -> String {
        event_definition(thrown)
    }

    /// Messages and signals wait as jBPM signals of cuga-flo's own names (cuga-flo
    /// delivers the run's throws: [`event_type`]); a message or signal event sub-process
    /// starts on a signal of cuga-flo's ([`start_event_type`]).
    fn caught(&self, kind: CatchKind, name: &str, start: bool) -> String {
        let signal = if start {
            start_event_type(kind, name)
        } else {
            event_type(kind, name)
        };
        format!(
            "<bpmn2:signalEventDefinition signalRef=\"{}\"/>",
            xml_escape(&signal)
        )
    }

    /// A timer waits for cuga-flo's signal ([`timer_type`]).
    fn timer(&self, n: &RNode, _timer: &crate::bpmn::Timer) -> String {
        format!(
            "<bpmn2:signalEventDefinition signalRef=\"{}\"/>",
            xml_escape(&timer_type(&n.id))
        )
    }

    fn condition(&self, guard: &Guard) -> String {
        format!(
            "<bpmn2:conditionExpression xsi:type=\"bpmn2:tFormalExpression\" language=\"http://www.java.com/java\"><![CDATA[{}]]></bpmn2:conditionExpression>",
            java(guard)
        )
    }
}

impl Writer<'_> {
    /// A user task; `multi`: jBPM's multi-instance activity (`sequential`, its step's
    /// variable) over the loop counters its step set ([`slots`]), each instance's user
    /// task showing its own ([`SLOT`]) and the activity completing early when cuga-flo
    /// found its completion condition true.
    fn user_task_of(&self, xml: &mut String, n: &RNode, pad: &str, multi: Option<(bool, &str)>) {
        let id = xml_escape(&n.id);
        let key = xml_id(&n.id);
        let task_name = &self.task_names[&n.id];
        let name = xml_escape(n.name.as_deref().unwrap_or(&n.id));
        let _ = writeln!(xml, "{pad}<bpmn2:userTask id=\"{id}\" name=\"{name}\">");
        let _ = writeln!(xml, "{pad}  <bpmn2:ioSpecification>");
        let _ = writeln!(
            xml,
            "{pad}    <bpmn2:dataInput id=\"{key}_TaskNameInputX\" drools:dtype=\"Object\" name=\"TaskName\"/>"
        );
        for (var, java) in self.declared {
            let v = xml_id(var);
            let var = xml_escape(var);
            let _ = writeln!(
                xml,
                "{pad}    <bpmn2:dataInput id=\"{key}_{v}_In\" drools:dtype=\"{java}\" itemSubjectRef=\"_{java}Item\" name=\"{var}\"/>"
            );
            let _ = writeln!(
                xml,
                "{pad}    <bpmn2:dataOutput id=\"{key}_{v}_Out\" drools:dtype=\"{java}\" itemSubjectRef=\"_{java}Item\" name=\"{var}\"/>"
            );
        }
        if multi.is_some() {
            let _ = writeln!(
                xml,
                "{pad}    <bpmn2:dataInput id=\"{key}_cugaSlotsX\" name=\"cugaSlots\"/>"
            );
            let _ = writeln!(
                xml,
                "{pad}    <bpmn2:dataInput id=\"{key}_cugaSlotX\" drools:dtype=\"Object\" itemSubjectRef=\"_ObjectItem\" name=\"{SLOT}\"/>"
            );
        }
        let _ = writeln!(xml, "{pad}    <bpmn2:inputSet>");
        let _ = writeln!(
            xml,
            "{pad}      <bpmn2:dataInputRefs>{key}_TaskNameInputX</bpmn2:dataInputRefs>"
        );
        if multi.is_some() {
            let _ = writeln!(
                xml,
                "{pad}      <bpmn2:dataInputRefs>{key}_cugaSlotX</bpmn2:dataInputRefs>"
            );
        }
        for (var, _) in self.declared {
            let v = xml_id(var);
            let _ = writeln!(
                xml,
                "{pad}      <bpmn2:dataInputRefs>{key}_{v}_In</bpmn2:dataInputRefs>"
            );
        }
        let _ = writeln!(xml, "{pad}    </bpmn2:inputSet>");
        let _ = writeln!(xml, "{pad}    <bpmn2:outputSet>");
        for (var, _) in self.declared {
            let v = xml_id(var);
            let _ = writeln!(
                xml,
                "{pad}      <bpmn2:dataOutputRefs>{key}_{v}_Out</bpmn2:dataOutputRefs>"
            );
        }
        let _ = writeln!(xml, "{pad}    </bpmn2:outputSet>");
        let _ = writeln!(xml, "{pad}  </bpmn2:ioSpecification>");
        let _ = writeln!(
            xml,
            "{pad}  <bpmn2:dataInputAssociation><bpmn2:targetRef>{key}_TaskNameInputX</bpmn2:targetRef>\
             <bpmn2:assignment><bpmn2:from xsi:type=\"bpmn2:tFormalExpression\">{task_name}</bpmn2:from>\
             <bpmn2:to xsi:type=\"bpmn2:tFormalExpression\">{key}_TaskNameInputX</bpmn2:to></bpmn2:assignment>\
             </bpmn2:dataInputAssociation>"
        );
        for (var, _) in self.declared {
            let v = xml_id(var);
            let var = xml_escape(var);
            let _ = writeln!(
                xml,
                "{pad}  <bpmn2:dataInputAssociation><bpmn2:sourceRef>{var}</bpmn2:sourceRef><bpmn2:targetRef>{key}_{v}_In</bpmn2:targetRef></bpmn2:dataInputAssociation>"
            );
            let _ = writeln!(
                xml,
                "{pad}  <bpmn2:dataOutputAssociation><bpmn2:sourceRef>{key}_{v}_Out</bpmn2:sourceRef><bpmn2:targetRef>{var}</bpmn2:targetRef></bpmn2:dataOutputAssociation>"
            );
        }
        if let Some((_, variable)) = multi {
            let slot = format!("{variable}Slot");
            let _ = writeln!(
                xml,
                "{pad}  <bpmn2:dataInputAssociation><bpmn2:sourceRef>{}</bpmn2:sourceRef><bpmn2:targetRef>{key}_cugaSlotsX</bpmn2:targetRef></bpmn2:dataInputAssociation>",
                slots(variable)
            );
            let _ = writeln!(
                xml,
                "{pad}  <bpmn2:dataInputAssociation><bpmn2:sourceRef>{slot}</bpmn2:sourceRef><bpmn2:targetRef>{key}_cugaSlotX</bpmn2:targetRef></bpmn2:dataInputAssociation>"
            );
        }
        let _ = writeln!(
            xml,
            "{pad}  <bpmn2:potentialOwner><bpmn2:resourceAssignmentExpression><bpmn2:formalExpression>{ACTOR}</bpmn2:formalExpression></bpmn2:resourceAssignmentExpression></bpmn2:potentialOwner>"
        );
        if let Some((sequential, variable)) = multi {
            let slot = format!("{variable}Slot");
            let [_, _, _, done] = rewrite::multi_variables(variable);
            // A sequential activity starts no further instance once cuga-flo found its
            // completion condition true. (jBPM 10.1 fails when a completion condition
            // cancels parallel instances' user tasks: "processInstance is null"; cuga-flo
            // completes those itself, unasked.)
            let condition = if sequential {
                format!(
                    "\n{pad}    <bpmn2:completionCondition xsi:type=\"bpmn2:tFormalExpression\">{done} == true</bpmn2:completionCondition>"
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                xml,
                "{pad}  <bpmn2:multiInstanceLoopCharacteristics isSequential=\"{sequential}\">\n\
                 {pad}    <bpmn2:loopDataInputRef>{key}_cugaSlotsX</bpmn2:loopDataInputRef>\n\
                 {pad}    <bpmn2:inputDataItem id=\"{slot}\" itemSubjectRef=\"_ObjectItem\" name=\"{slot}\"/>{condition}\n\
                 {pad}  </bpmn2:multiInstanceLoopCharacteristics>"
            );
        }
        let _ = writeln!(xml, "{pad}</bpmn2:userTask>");
    }
}

/// A guard as a Java condition on the routing and hook variables (declared `String`).
fn java(guard: &Guard) -> String {
    match guard {
        Guard::Routed { variable, flow } => {
            format!("return {variable} != null && {variable}.contains(\",{flow},\");")
        }
        Guard::Hooked {
            variable,
            terminate: true,
        } => format!("return \"terminate\".equals({variable});"),
        Guard::Hooked {
            variable,
            terminate: false,
        } => format!("return !\"terminate\".equals({variable});"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::rewrite::Role;

    fn parse(xml: &str) -> Process {
        let doc = crate::bpmn::parse(std::path::Path::new("t.bpmn"), xml.as_bytes()).unwrap();
        doc.main_process().unwrap().clone()
    }

    const MODEL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
        <process id="P"><startEvent id="s"/><task id="a.1"/><exclusiveGateway id="g"/>
          <userTask id="b"/><endEvent id="e1"/><endEvent id="e2"/>
          <sequenceFlow id="f1" sourceRef="s" targetRef="a.1"/>
          <sequenceFlow id="f2" sourceRef="a.1" targetRef="g"/>
          <sequenceFlow id="f3" sourceRef="g" targetRef="b"/>
          <sequenceFlow id="f4" sourceRef="g" targetRef="e2"/>
          <sequenceFlow id="f5" sourceRef="b" targetRef="e1"/>
        </process></definitions>"#;

    #[test]
    fn workers_are_user_tasks_of_cuga_flo_mapping_every_variable() {
        let annotations = FlowAnnotations {
            hooks: [("f1".to_string(), "screen".to_string())].into(),
            ..FlowAnnotations::default()
        };
        let vars = ["score".to_string(), "name".to_string()];
        let aug = augment(&parse(MODEL), &annotations, "loan-app.v1", &vars, "").unwrap();
        assert_eq!(aug.process_id, "loan_app_v1");
        assert_eq!(aug.task_names["a.1"], "cp_a_1");
        let back = parse(&aug.xml);
        assert_eq!(back.id, "loan_app_v1");
        let props: Vec<&str> = back.properties.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(props, ["score", "name", "cugaHook1", "cugaRoute1"]);
        for worker in ["a.1", "b", "cuga_route__g", "cuga_hook__f1"] {
            let node = back
                .node(worker)
                .unwrap_or_else(|| panic!("{worker} missing"));
            assert_eq!(node.kind.tag(), "userTask", "{worker}");
        }
        assert!(
            aug.xml
                .contains("<bpmn2:formalExpression>cugaflo</bpmn2:formalExpression>")
        );
        // Guards are Java, inside CDATA.
        assert!(
            aug.xml.contains(
                "<![CDATA[return cugaRoute1 != null && cugaRoute1.contains(\",f3,\");]]>"
            )
        );
        // Every worker maps every variable out (Kogito nulls an unmapped output).
        assert_eq!(aug.xml.matches("_score_Out\" drools:dtype").count(), 4);
    }

    #[test]
    fn an_id_prefix_renames_every_id_in_the_service_only() {
        let aug = augment(&parse(MODEL), &FlowAnnotations::default(), "p", &[], "c1__").unwrap();
        let back = parse(&aug.xml);
        assert!(back.nodes.iter().all(|n| n.id.starts_with("c1__")));
        assert!(back.flows.iter().all(|f| f.id.starts_with("c1__")));
        assert_eq!(aug.task_names["a.1"], "cp_c1__a_1");
        assert!(aug.rewritten.roles.contains_key("a.1"));
    }

    const ERRORS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
        <error id="ErrPay" errorCode="PAYMENT_FAILED"/>
        <escalation id="Late" escalationCode="LATE"/>
        <escalation id="Slow" escalationCode="SLOW"/>
        <process id="P"><startEvent id="s"/><task id="pay"/><endEvent id="e"/>
          <task id="handle"/><task id="other"/>
          <subProcess id="sub">
            <startEvent id="ss"/>
            <intermediateThrowEvent id="slow"><escalationEventDefinition escalationRef="Slow"/></intermediateThrowEvent>
            <endEvent id="late"><escalationEventDefinition escalationRef="Late"/></endEvent>
            <sequenceFlow id="s1" sourceRef="ss" targetRef="slow"/>
            <sequenceFlow id="s2" sourceRef="slow" targetRef="late"/>
          </subProcess>
          <boundaryEvent id="bcode" attachedToRef="pay"><errorEventDefinition errorRef="ErrPay"/></boundaryEvent>
          <boundaryEvent id="ball" attachedToRef="pay"><errorEventDefinition/></boundaryEvent>
          <boundaryEvent id="besc" attachedToRef="sub"><escalationEventDefinition escalationRef="Late"/></boundaryEvent>
          <sequenceFlow id="f1" sourceRef="s" targetRef="pay"/>
          <sequenceFlow id="f2" sourceRef="pay" targetRef="sub"/>
          <sequenceFlow id="f3" sourceRef="sub" targetRef="e"/>
          <sequenceFlow id="f4" sourceRef="bcode" targetRef="handle"/>
          <sequenceFlow id="f5" sourceRef="ball" targetRef="other"/>
          <sequenceFlow id="f6" sourceRef="besc" targetRef="e"/>
        </process></definitions>"#;

    /// Errors and escalations are Kogito's: boundary events with their codes (a catch-all
    /// names an error without a code), an escalation end event an interrupting boundary
    /// catches thrown as an error of its own code (jBPM would not stop the sub-process),
    /// an escalation nothing catches written as a none event.
    #[test]
    fn error_and_escalation_events_are_written_for_jbpm() {
        let aug = augment(&parse(ERRORS), &FlowAnnotations::default(), "p", &[], "").unwrap();
        let xml = &aug.xml;
        assert!(
            xml.contains(r#"<bpmn2:error id="cuga_error__any"/>"#),
            "{xml}"
        );
        assert!(xml.contains(
            r#"<bpmn2:error id="cuga_error__PAYMENT_FAILED" errorCode="PAYMENT_FAILED"/>"#
        ));
        assert!(xml.contains(
            r#"<bpmn2:boundaryEvent id="bcode" attachedToRef="pay" cancelActivity="true"><bpmn2:errorEventDefinition errorRef="cuga_error__PAYMENT_FAILED"/>"#
        ));
        assert!(xml.contains(
            r#"<bpmn2:boundaryEvent id="ball" attachedToRef="pay" cancelActivity="true"><bpmn2:errorEventDefinition errorRef="cuga_error__any"/>"#
        ));
        // The escalation end event and its interrupting boundary: an error of their own.
        assert!(xml.contains(
            r#"<bpmn2:endEvent id="late"><bpmn2:errorEventDefinition errorRef="cuga_error__cuga_escalation__LATE"/></bpmn2:endEvent>"#
        ));
        assert!(xml.contains(
            r#"<bpmn2:boundaryEvent id="besc" attachedToRef="sub" cancelActivity="true"><bpmn2:errorEventDefinition errorRef="cuga_error__cuga_escalation__LATE"/>"#
        ));
        // Nothing catches SLOW: a none event in the service, a throw in the adapter's model.
        assert!(xml.contains(r#"<bpmn2:intermediateThrowEvent id="slow"/>"#));
        assert!(matches!(
            aug.rewritten
                .nodes
                .iter()
                .find(|n| n.id == "slow")
                .unwrap()
                .element,
            Element::Throw { .. }
        ));
        assert!(parse(xml).node("besc").is_some());
    }

    /// A multi-instance task: cuga-flo's step, then jBPM's multi-instance user task.
    #[test]
    fn multi_instance_tasks_run_over_loop_counters_each_work_item_showing_its_own() {
        let model = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <process id="P"><startEvent id="s"/><endEvent id="e"/>
              <userTask id="r"><multiInstanceLoopCharacteristics isSequential="true">
                <loopDataInputRef>lines</loopDataInputRef><loopDataOutputRef>verdicts</loopDataOutputRef>
                <inputDataItem name="line"/><outputDataItem name="verdict"/>
                <completionCondition>${verdict == 'no'}</completionCondition>
              </multiInstanceLoopCharacteristics></userTask>
              <sequenceFlow id="f1" sourceRef="s" targetRef="r"/>
              <sequenceFlow id="f2" sourceRef="r" targetRef="e"/>
            </process></definitions>"#;
        let vars = ["lines".to_string()];
        let aug = augment(&parse(model), &FlowAnnotations::default(), "p", &vars, "").unwrap();
        let xml = &aug.xml;
        // The step in front of it, then jBPM's multi-instance user task over the slots.
        assert!(matches!(
            aug.rewritten.roles["cuga_multi__r"],
            Role::Multi { .. }
        ));
        assert_eq!(aug.task_names["r"], "cp_r");
        for declared in [
            "cugaMulti1",
            "cugaMulti1Slots",
            "cugaMulti1Done",
            "verdicts",
        ] {
            assert!(
                xml.contains(&format!("<bpmn2:property id=\"{declared}\"")),
                "{declared} not declared:\n{xml}"
            );
        }
        assert!(xml.contains("<bpmn2:multiInstanceLoopCharacteristics isSequential=\"true\">"));
        assert!(xml.contains("<bpmn2:loopDataInputRef>r_cugaSlotsX</bpmn2:loopDataInputRef>"));
        assert!(xml.contains(&format!("name=\"{SLOT}\"")));
        // Sequential: jBPM starts no further instance once cuga-flo found it complete.
        assert!(xml.contains(">cugaMulti1Done == true</bpmn2:completionCondition>"));
        let parallel = model.replace("isSequential=\"true\"", "");
        let aug = augment(
            &parse(&parallel),
            &FlowAnnotations::default(),
            "p",
            &vars,
            "",
        )
        .unwrap();
        assert!(!aug.xml.contains("completionCondition"));
    }

    #[test]
    fn message_event_sub_processes_start_on_an_undeclared_signal_of_cuga_flos() {
        let model = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <message id="M" name="Noted"/>
            <process id="P"><startEvent id="s"/><endEvent id="e"/>
              <intermediateThrowEvent id="t"><messageEventDefinition messageRef="M"/></intermediateThrowEvent>
              <intermediateCatchEvent id="c"><messageEventDefinition messageRef="M"/></intermediateCatchEvent>
              <subProcess id="es" triggeredByEvent="true">
                <startEvent id="ess" isInterrupting="false"><messageEventDefinition messageRef="M"/></startEvent>
                <endEvent id="ee"/><sequenceFlow id="e1" sourceRef="ess" targetRef="ee"/>
              </subProcess>
              <sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
              <sequenceFlow id="f2" sourceRef="t" targetRef="c"/>
              <sequenceFlow id="f3" sourceRef="c" targetRef="e"/>
            </process></definitions>"#;
        let aug = augment(&parse(model), &FlowAnnotations::default(), "p", &[], "").unwrap();
        let xml = &aug.xml;
        assert!(
            xml.contains(r#"<bpmn2:signal id="cuga_message__Noted" name="cuga_message__Noted"/>"#)
        );
        assert!(xml.contains(
            r#"<bpmn2:startEvent id="ess" isInterrupting="false"><bpmn2:signalEventDefinition signalRef="cuga_message__Noted__start"/>"#
        ));
        assert!(!xml.contains(r#"<bpmn2:signal id="cuga_message__Noted__start""#));
    }

    /// Timers wait for cuga-flo's signals (declared for catch and boundary events, not for
    /// an event sub-process's start), and a receive task is a message catch.
    #[test]
    fn timers_and_receive_tasks_wait_for_signals_cuga_flo_raises() {
        let model = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <message id="M" name="Reply"/>
            <process id="P"><startEvent id="s"/><endEvent id="e"/><task id="a"/><endEvent id="e2"/>
              <intermediateCatchEvent id="t"><timerEventDefinition><timeDuration>PT1M</timeDuration></timerEventDefinition></intermediateCatchEvent>
              <boundaryEvent id="b" attachedToRef="a" cancelActivity="false"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
              <receiveTask id="r" messageRef="M"/>
              <subProcess id="es" triggeredByEvent="true">
                <startEvent id="ess"><timerEventDefinition><timeDuration>PT2H</timeDuration></timerEventDefinition></startEvent>
                <endEvent id="ee"/><sequenceFlow id="e1" sourceRef="ess" targetRef="ee"/>
              </subProcess>
              <sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
              <sequenceFlow id="f2" sourceRef="t" targetRef="a"/>
              <sequenceFlow id="f3" sourceRef="a" targetRef="r"/>
              <sequenceFlow id="f4" sourceRef="r" targetRef="e"/>
              <sequenceFlow id="f5" sourceRef="b" targetRef="e2"/>
            </process></definitions>"#;
        let aug = augment(&parse(model), &FlowAnnotations::default(), "p", &[], "x__").unwrap();
        let xml = &aug.xml;
        for declared in [
            "cuga_timer__x__t",
            "cuga_timer__x__b",
            "cuga_message__Reply",
        ] {
            assert!(
                xml.contains(&format!(
                    r#"<bpmn2:signal id="{declared}" name="{declared}"/>"#
                )),
                "{declared}: {xml}"
            );
        }
        assert!(!xml.contains(r#"<bpmn2:signal id="cuga_timer__x__ess""#));
        assert!(xml.contains(
            r#"<bpmn2:intermediateCatchEvent id="x__t"><bpmn2:signalEventDefinition signalRef="cuga_timer__x__t"/>"#
        ));
        assert!(xml.contains(
            r#"<bpmn2:boundaryEvent id="x__b" attachedToRef="x__a" cancelActivity="false"><bpmn2:signalEventDefinition signalRef="cuga_timer__x__b"/>"#
        ));
        assert!(xml.contains(
            r#"<bpmn2:startEvent id="x__ess" isInterrupting="true"><bpmn2:signalEventDefinition signalRef="cuga_timer__x__ess"/>"#
        ));
        assert!(xml.contains(
            r#"<bpmn2:intermediateCatchEvent id="x__r"><bpmn2:signalEventDefinition signalRef="cuga_message__Reply"/>"#
        ));
        assert!(
            !aug.task_names.contains_key("r"),
            "a receive task is no worker"
        );
    }

    /// A boundary event lies in the scope of its activity; a worker where the run fails
    /// (an uncaught error end event) gets an end event after it.
    #[test]
    fn boundary_events_share_their_activitys_scope_and_dead_ends_end() {
        let model = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <error id="Err" errorCode="X"/>
            <process id="P"><startEvent id="s"/><endEvent id="e"/><task id="fix"/>
              <subProcess id="outer"><startEvent id="os"/><task id="t"/>
                <endEvent id="oe"><errorEventDefinition errorRef="Err"/></endEvent>
                <sequenceFlow id="o1" sourceRef="os" targetRef="t"/>
                <sequenceFlow id="o2" sourceRef="t" targetRef="oe"/>
              </subProcess>
              <boundaryEvent id="bt" attachedToRef="t"><errorEventDefinition errorRef="Err"/></boundaryEvent>
              <sequenceFlow id="f1" sourceRef="s" targetRef="outer"/>
              <sequenceFlow id="f2" sourceRef="outer" targetRef="e"/>
              <sequenceFlow id="f3" sourceRef="bt" targetRef="fix"/>
            </process></definitions>"#;
        let aug = augment(&parse(model), &FlowAnnotations::default(), "p", &[], "").unwrap();
        let back = parse(&aug.xml);
        assert_eq!(back.node("bt").unwrap().parent.as_deref(), Some("outer"));
        // `oe`: nothing catches X there (bt is on `t`, which did not raise it).
        assert!(matches!(aug.rewritten.roles["oe"], Role::Uncaught { .. }));
        let ending = back.flows.iter().find(|f| f.source == "oe").unwrap();
        assert_eq!(ending.target, "cuga_end__oe");
    }

    #[test]
    fn java_identifiers() {
        assert_eq!(java_identifier("Process_1s3q83l"), "Process_1s3q83l");
        assert_eq!(java_identifier("1-a.b"), "_1_a_b");
        assert_eq!(java_identifier(""), "_");
    }
}
