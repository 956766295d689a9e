//! The app's process, rewritten for Flowable so that every judgement comes back to
//! cuga-flo while Flowable moves the tokens.
//!
//! Flowable never calls cuga-flo: every control point is an **external-worker task**
//! (`flowable:type="external-worker"`) on the run's own topic, whose job cuga-flo acquires
//! over Flowable's REST API, answers through the harness and completes with variables.
//! So a Flowable cluster needs no route back to the machine running cuga-flo.
//!
//! - every task (of any kind) and call activity keeps its id and becomes a worker task
//!   (`execute_task`; the native engine asks the harness for every task too);
//! - an exclusive, inclusive, complex or event-based gateway with two or more outgoing
//!   flows gets a worker task `cuga_route__<gw>` in front of it (`route_gateway`), which
//!   sets `cugaRouteN` to `,flow,flow,`; each outgoing flow's condition becomes
//!   `${cugaRouteN.contains(',<flow>,')}` (cuga-flo's own conditions are evaluated by the
//!   harness, never by Flowable's expression language);
//! - a hooked flow `F` (S → T) becomes S → `cuga_hook__F` (worker, `evaluate_hook`) →
//!   `cuga_hookgw__F` → T, with a branch to a terminate end event `cuga_terminate__F`
//!   taken when the hook sets `cugaHookN` to `terminate`. `F` keeps its id (and the
//!   source side), so the hook still fires where the model says;
//! - events: timers, messages and signals do not wait (as on the native engine): catch and
//!   throw events become none intermediate events, start events none start events, end
//!   events none (or terminate) end events; a link throw flows to its catch. Boundary
//!   events and event sub-processes never fire on the native engine and are left out.
//!
//! Worker tasks are not `exclusive`: acquiring an exclusive job locks the whole instance
//! until the job's continuation has run, which kept the jobs of parallel branches from
//! being acquired (cuga-flo completes one job at a time instead, so continuations do not
//! race at joins).
//!
//! [`Augmented::roles`] maps each worker activity back to what it stands for.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use crate::bpmn::{EventDefinition, GatewayKind, Node, NodeKind, Process, SubProcessKind};
use crate::bridge::FlowAnnotations;
use crate::engine::topology::Topology;

/// The prefix of every element and flow cuga-flo adds.
pub const PREFIX: &str = "cuga_";

/// What a worker activity of the augmented model stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A task or call activity of the app's model.
    Task(String),
    /// The routing task in front of a gateway; the variable it sets.
    Route { gateway: String, variable: String },
    /// The task on a hooked flow; the variable it sets.
    Hook {
        hook: String,
        flow: String,
        variable: String,
    },
}

/// The process rewritten for Flowable.
#[derive(Debug, Clone)]
pub struct Augmented {
    /// BPMN 2.0 XML with Flowable's extensions.
    pub xml: String,
    /// The process id (Flowable's process definition key).
    pub definition_key: String,
    /// Worker activity id → role.
    pub roles: HashMap<String, Role>,
    /// Where a token that is sent to a node of the app's model really goes (a routed
    /// gateway's routing task), for `skip_to`.
    pub entry: HashMap<String, String>,
}

impl Augmented {
    /// The id of the app's model this augmented activity id stands for in a run's path:
    /// `None` for what cuga-flo added (routing and hook tasks, hook gateways, the
    /// terminate ends of hooks).
    pub fn original<'a>(&self, activity: &'a str) -> Option<&'a str> {
        (!activity.starts_with(PREFIX)).then_some(activity)
    }
}

impl Augmented {
    /// The activity a token taking the model's flow `flow` arrives at: the hook task of a
    /// hooked flow, the routing task of a routed gateway, else the flow's target.
    pub fn arrival(&self, flow: &crate::bpmn::Flow) -> String {
        let hook = format!("{PREFIX}hook__{}", flow.id);
        if self.roles.contains_key(&hook) {
            return hook;
        }
        self.entry
            .get(&flow.target)
            .cloned()
            .unwrap_or_else(|| flow.target.clone())
    }
}

/// Why a model cannot run on Flowable, per element: `(element id, reason)`.
pub fn unsupported(process: &Process) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut starts = 0;
    for node in &process.nodes {
        if node.id.starts_with(PREFIX) {
            out.push((
                node.id.clone(),
                format!("ids starting with `{PREFIX}` are reserved for what cuga-flo adds"),
            ));
        }
        match &node.kind {
            NodeKind::SubProcess(SubProcessKind::AdHoc) => out.push((
                node.id.clone(),
                "an ad-hoc sub-process runs differently on Flowable".to_string(),
            )),
            NodeKind::Unsupported { tag } => {
                out.push((node.id.clone(), format!("`{tag}` cannot run")));
            }
            NodeKind::StartEvent { .. }
                if node.parent.is_none() && !in_event_subprocess(process, node) =>
            {
                starts += 1;
            }
            _ => {}
        }
    }
    for flow in &process.flows {
        if flow.id.starts_with(PREFIX) {
            out.push((
                flow.id.clone(),
                format!("ids starting with `{PREFIX}` are reserved for what cuga-flo adds"),
            ));
        }
    }
    if starts > 1 {
        out.push((
            process.id.clone(),
            format!("Flowable starts a process at one start event; this one has {starts}"),
        ));
    }
    out
}

fn in_event_subprocess(process: &Process, node: &Node) -> bool {
    let mut parent = node.parent.as_deref();
    while let Some(id) = parent {
        let Some(p) = process.nodes.iter().find(|n| n.id == id) else {
            return false;
        };
        if matches!(
            p.kind,
            NodeKind::SubProcess(SubProcessKind::Embedded {
                triggered_by_event: true
            })
        ) {
            return true;
        }
        parent = p.parent.as_deref();
    }
    false
}

/// A node of the augmented model.
struct ONode {
    id: String,
    name: Option<String>,
    parent: Option<String>,
    element: Element,
}

enum Element {
    Start,
    End { terminate_all: Option<bool> },
    Intermediate,
    Worker,
    Gateway(&'static str),
    SubProcess,
}

struct OFlow {
    id: String,
    source: String,
    target: String,
    condition: Option<String>,
    parent: Option<String>,
}

/// Rewrite `process` for Flowable under `definition_key`, with the hooks of
/// `annotations`. `Err` lists what cannot run there ([`unsupported`]).
pub fn augment(
    process: &Process,
    annotations: &FlowAnnotations,
    definition_key: &str,
) -> Result<Augmented, Vec<(String, String)>> {
    let problems = unsupported(process);
    if !problems.is_empty() {
        return Err(problems);
    }
    // Left out: event sub-processes (and what they contain) and boundary events.
    let dropped: HashSet<&str> = process
        .nodes
        .iter()
        .filter(|n| {
            matches!(n.kind, NodeKind::BoundaryEvent { .. })
                || matches!(
                    n.kind,
                    NodeKind::SubProcess(SubProcessKind::Embedded {
                        triggered_by_event: true
                    })
                )
                || in_event_subprocess(process, n)
        })
        .map(|n| n.id.as_str())
        .collect();

    let mut roles = HashMap::new();
    let mut entry = HashMap::new();
    let mut nodes: Vec<ONode> = Vec::new();
    let mut flows: Vec<OFlow> = process
        .flows
        .iter()
        .filter(|f| !dropped.contains(f.source.as_str()) && !dropped.contains(f.target.as_str()))
        .map(|f| OFlow {
            id: f.id.clone(),
            source: f.source.clone(),
            target: f.target.clone(),
            // cuga-flo's conditions are the harness's business; routed gateways get theirs.
            condition: None,
            parent: f.parent.clone(),
        })
        .collect();
    let outgoing = |flows: &[OFlow], id: &str| -> Vec<String> {
        flows
            .iter()
            .filter(|f| f.source == id)
            .map(|f| f.id.clone())
            .collect()
    };

    let topology = Topology::from_process(process);
    let mut routes = 0;
    for node in &process.nodes {
        if dropped.contains(node.id.as_str()) {
            continue;
        }
        let element = match &node.kind {
            NodeKind::Task(_) | NodeKind::CallActivity { .. } => {
                roles.insert(node.id.clone(), Role::Task(node.id.clone()));
                Element::Worker
            }
            NodeKind::SubProcess(_) => Element::SubProcess,
            NodeKind::StartEvent { .. } => Element::Start,
            NodeKind::EndEvent { definitions } => Element::End {
                terminate_all: definitions
                    .contains(&EventDefinition::Terminate)
                    .then_some(node.parent.is_none()),
            },
            NodeKind::IntermediateCatchEvent { .. } => Element::Intermediate,
            NodeKind::IntermediateThrowEvent { definitions } => {
                if definitions.contains(&EventDefinition::Link)
                    && let Some(live) = topology.node(&node.id)
                    && let Some(catch) = topology.link_catch(live)
                {
                    flows.push(OFlow {
                        id: format!("{PREFIX}link__{}", node.id),
                        source: node.id.clone(),
                        target: catch.id.clone(),
                        condition: None,
                        parent: node.parent.clone(),
                    });
                }
                Element::Intermediate
            }
            NodeKind::Gateway(kind) => {
                let out = outgoing(&flows, &node.id);
                let tag = match kind {
                    GatewayKind::Parallel => "parallelGateway",
                    GatewayKind::Inclusive | GatewayKind::Complex => "inclusiveGateway",
                    GatewayKind::Exclusive | GatewayKind::EventBased => "exclusiveGateway",
                };
                if *kind != GatewayKind::Parallel && out.len() >= 2 {
                    routes += 1;
                    let variable = format!("cugaRoute{routes}");
                    let route = format!("{PREFIX}route__{}", node.id);
                    for f in flows.iter_mut() {
                        if f.target == node.id {
                            f.target = route.clone();
                        }
                        if f.source == node.id {
                            f.condition = Some(format!("${{{variable}.contains(',{},')}}", f.id));
                        }
                    }
                    flows.push(OFlow {
                        id: format!("{PREFIX}routed__{}", node.id),
                        source: route.clone(),
                        target: node.id.clone(),
                        condition: None,
                        parent: node.parent.clone(),
                    });
                    nodes.push(ONode {
                        id: route.clone(),
                        name: node.name.clone(),
                        parent: node.parent.clone(),
                        element: Element::Worker,
                    });
                    roles.insert(
                        route.clone(),
                        Role::Route {
                            gateway: node.id.clone(),
                            variable,
                        },
                    );
                    entry.insert(node.id.clone(), route);
                }
                Element::Gateway(tag)
            }
            NodeKind::BoundaryEvent { .. } | NodeKind::Unsupported { .. } => continue,
        };
        nodes.push(ONode {
            id: node.id.clone(),
            name: node.name.clone(),
            parent: node.parent.clone(),
            element,
        });
    }

    // Hooks, after the routing tasks took over the gateways' incoming flows.
    for (i, (flow_id, hook)) in annotations.hooks.iter().enumerate() {
        let Some(index) = flows.iter().position(|f| &f.id == flow_id) else {
            continue;
        };
        let variable = format!("cugaHook{}", i + 1);
        let task = format!("{PREFIX}hook__{flow_id}");
        let gateway = format!("{PREFIX}hookgw__{flow_id}");
        let terminate = format!("{PREFIX}terminate__{flow_id}");
        let parent = flows[index].parent.clone();
        let target = std::mem::replace(&mut flows[index].target, task.clone());
        for (id, element) in [
            (task.clone(), Element::Worker),
            (gateway.clone(), Element::Gateway("exclusiveGateway")),
            (
                terminate.clone(),
                Element::End {
                    terminate_all: Some(true),
                },
            ),
        ] {
            nodes.push(ONode {
                id,
                name: None,
                parent: parent.clone(),
                element,
            });
        }
        let flow = |id: String, source: &str, target: &str, condition: Option<String>| OFlow {
            id,
            source: source.to_string(),
            target: target.to_string(),
            condition,
            parent: parent.clone(),
        };
        flows.push(flow(
            format!("{PREFIX}hooked__{flow_id}"),
            &task,
            &gateway,
            None,
        ));
        flows.push(flow(
            format!("{PREFIX}continue__{flow_id}"),
            &gateway,
            &target,
            Some(format!("${{{variable} != 'terminate'}}")),
        ));
        flows.push(flow(
            format!("{PREFIX}terminated__{flow_id}"),
            &gateway,
            &terminate,
            Some(format!("${{{variable} == 'terminate'}}")),
        ));
        roles.insert(
            task,
            Role::Hook {
                hook: hook.clone(),
                flow: flow_id.clone(),
                variable,
            },
        );
    }

    let xml = write_xml(process, definition_key, &nodes, &flows);
    Ok(Augmented {
        xml,
        definition_key: definition_key.to_string(),
        roles,
        entry,
    })
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn write_xml(process: &Process, key: &str, nodes: &[ONode], flows: &[OFlow]) -> String {
    let mut children: BTreeMap<Option<&str>, (Vec<&ONode>, Vec<&OFlow>)> = BTreeMap::new();
    for n in nodes {
        children.entry(n.parent.as_deref()).or_default().0.push(n);
    }
    for f in flows {
        children.entry(f.parent.as_deref()).or_default().1.push(f);
    }
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" \
         xmlns:flowable=\"http://flowable.org/bpmn\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         targetNamespace=\"https://github.com/cuga-project/cuga-flo\">\n",
    );
    let name = process
        .name
        .as_deref()
        .map(|n| format!(" name=\"{}\"", escape(n)))
        .unwrap_or_default();
    let _ = writeln!(
        xml,
        "  <process id=\"{}\"{name} isExecutable=\"true\">",
        escape(key)
    );
    write_scope(&mut xml, &children, None, 2);
    xml.push_str("  </process>\n</definitions>\n");
    xml
}

type Scopes<'a> = BTreeMap<Option<&'a str>, (Vec<&'a ONode>, Vec<&'a OFlow>)>;

fn write_scope(xml: &mut String, children: &Scopes, scope: Option<&str>, depth: usize) {
    let pad = "  ".repeat(depth);
    let Some((nodes, flows)) = children.get(&scope) else {
        return;
    };
    for n in nodes {
        let id = escape(&n.id);
        let name = n
            .name
            .as_deref()
            .map(|s| format!(" name=\"{}\"", escape(s)))
            .unwrap_or_default();
        match &n.element {
            Element::Start => {
                let _ = writeln!(xml, "{pad}<startEvent id=\"{id}\"{name}/>");
            }
            Element::End { terminate_all } => match terminate_all {
                None => {
                    let _ = writeln!(xml, "{pad}<endEvent id=\"{id}\"{name}/>");
                }
                Some(all) => {
                    let _ = writeln!(
                        xml,
                        "{pad}<endEvent id=\"{id}\"{name}><terminateEventDefinition flowable:terminateAll=\"{all}\"/></endEvent>"
                    );
                }
            },
            Element::Intermediate => {
                let _ = writeln!(xml, "{pad}<intermediateThrowEvent id=\"{id}\"{name}/>");
            }
            Element::Worker => {
                let _ = writeln!(
                    xml,
                    "{pad}<serviceTask id=\"{id}\"{name} flowable:type=\"external-worker\" flowable:topic=\"${{cugaTopic}}\" flowable:exclusive=\"false\"/>"
                );
            }
            Element::Gateway(tag) => {
                let _ = writeln!(xml, "{pad}<{tag} id=\"{id}\"{name}/>");
            }
            Element::SubProcess => {
                let _ = writeln!(xml, "{pad}<subProcess id=\"{id}\"{name}>");
                write_scope(xml, children, Some(n.id.as_str()), depth + 1);
                let _ = writeln!(xml, "{pad}</subProcess>");
            }
        }
    }
    for f in flows {
        let open = format!(
            "{pad}<sequenceFlow id=\"{}\" sourceRef=\"{}\" targetRef=\"{}\"",
            escape(&f.id),
            escape(&f.source),
            escape(&f.target)
        );
        match &f.condition {
            Some(c) => {
                let _ = writeln!(
                    xml,
                    "{open}><conditionExpression xsi:type=\"tFormalExpression\"><![CDATA[{c}]]></conditionExpression></sequenceFlow>"
                );
            }
            None => {
                let _ = writeln!(xml, "{open}/>");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(xml: &str) -> Process {
        let doc = crate::bpmn::parse(std::path::Path::new("t.bpmn"), xml.as_bytes()).unwrap();
        doc.main_process().unwrap().clone()
    }

    const MODEL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
        <process id="P"><startEvent id="s"/><task id="a"/><exclusiveGateway id="g" default="f3"/>
          <userTask id="b"/><endEvent id="e1"/><endEvent id="e2"/>
          <sequenceFlow id="f1" sourceRef="s" targetRef="a"/>
          <sequenceFlow id="f2" sourceRef="a" targetRef="g"/>
          <sequenceFlow id="f3" sourceRef="g" targetRef="b"><conditionExpression>${x} &gt; 1</conditionExpression></sequenceFlow>
          <sequenceFlow id="f4" sourceRef="g" targetRef="e2"/>
          <sequenceFlow id="f5" sourceRef="b" targetRef="e1"/>
        </process></definitions>"#;

    #[test]
    fn control_points_become_worker_tasks_and_the_result_parses_back() {
        let process = parse(MODEL);
        let annotations = FlowAnnotations {
            hooks: [("f1".to_string(), "screen".to_string())].into(),
            ..FlowAnnotations::default()
        };
        let aug = augment(&process, &annotations, "P").unwrap();
        let back = parse(&aug.xml);
        let ids: Vec<&str> = back.nodes.iter().map(|n| n.id.as_str()).collect();
        for id in [
            "a",
            "b",
            "cuga_route__g",
            "cuga_hook__f1",
            "cuga_hookgw__f1",
            "cuga_terminate__f1",
        ] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        assert_eq!(aug.roles["a"], Role::Task("a".into()));
        assert_eq!(
            aug.roles["cuga_route__g"],
            Role::Route {
                gateway: "g".into(),
                variable: "cugaRoute1".into()
            }
        );
        assert!(matches!(&aug.roles["cuga_hook__f1"], Role::Hook { hook, .. } if hook == "screen"));
        // The hooked flow keeps its id and leads to the hook task; the gateway is entered
        // through its routing task; cuga-flo's condition never reaches Flowable.
        let f1 = back.flows.iter().find(|f| f.id == "f1").unwrap();
        assert_eq!(f1.target, "cuga_hook__f1");
        let f2 = back.flows.iter().find(|f| f.id == "f2").unwrap();
        assert_eq!(f2.target, "cuga_route__g");
        let f3 = back.flows.iter().find(|f| f.id == "f3").unwrap();
        assert_eq!(
            f3.condition.as_ref().map(|c| c.body.as_str()),
            Some("${cugaRoute1.contains(',f3,')}")
        );
        assert_eq!(aug.entry["g"], "cuga_route__g");
        assert!(aug.xml.contains("flowable:type=\"external-worker\""));
        assert!(!aug.xml.contains("${x}"));
        assert_eq!(aug.original("cuga_hook__f1"), None);
        assert_eq!(aug.original("b"), Some("b"));
    }

    #[test]
    fn reserved_ids_and_two_start_events_are_refused() {
        let xml = MODEL.replace(
            "<task id=\"a\"/>",
            "<task id=\"a\"/><startEvent id=\"cuga_x\"/>",
        );
        let problems = augment(&parse(&xml), &FlowAnnotations::default(), "P").unwrap_err();
        let text = format!("{problems:?}");
        assert!(text.contains("reserved"), "{text}");
        assert!(text.contains("one start event"), "{text}");
    }
}
