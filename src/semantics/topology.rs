//! The live topology of one run: a copy of the process's nodes and flows taken at run
//! start, which hook actions may change (swap, remove, insert). Everything the engine
//! asks about the graph during a run, it asks here, never of the original [`Process`].

use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::hash::BuildHasher;

use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

use crate::bpmn::{EventDefinition, NodeKind, Process, SubProcessKind, TaskKind};
use crate::bridge::{EdgeInfo, ModelSummary, NodeInfo};

/// A node of the live topology.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiveNode {
    pub id: String,
    pub name: Option<String>,
    pub kind: NodeKind,
    /// The sub-process that contains the node; `None` at process level.
    pub parent: Option<String>,
    pub default_flow: Option<String>,
    /// A timer event's definition.
    pub timer: Option<crate::bpmn::Timer>,
    /// An error or escalation event's `errorRef` / `escalationRef`, resolved.
    pub event_ref: Option<crate::bpmn::EventRef>,
}

/// A sequence flow of the live topology.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiveFlow {
    pub id: String,
    pub name: Option<String>,
    pub source: String,
    pub target: String,
    /// The condition's body, when the BPMN flow has a non-empty one.
    pub condition: Option<String>,
    pub parent: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Topology {
    process_id: String,
    process_name: Option<String>,
    nodes: Vec<LiveNode>,
    flows: Vec<LiveFlow>,
    /// Lookups by id and adjacency, rebuilt after every change.
    index: Index,
    /// Whether a hook action has changed the topology since the run started.
    changed: bool,
    /// The summary control points are given, built on first use after each change.
    summary: OnceCell<Arc<ModelSummary>>,
}

/// Lookups in [`Topology::nodes`] and [`Topology::flows`] by id, source and target, so
/// that finding a node or a flow, or the flows out of or into a node, does not scan the
/// whole graph.
#[derive(Debug, Clone, Default)]
struct Index {
    nodes: Lookup,
    flows: Lookup,
    outgoing: Lookup,
    incoming: Lookup,
    /// Boundary events by the activity they are attached to.
    attached: Lookup,
}

impl Index {
    fn of(nodes: &[LiveNode], flows: &[LiveFlow]) -> Self {
        Index {
            nodes: Lookup::new(nodes, node_id),
            flows: Lookup::new(flows, flow_id),
            outgoing: Lookup::new(flows, flow_source),
            incoming: Lookup::new(flows, flow_target),
            attached: Lookup::new(nodes, attached_to),
        }
    }
}

fn node_id(n: &LiveNode) -> &str {
    &n.id
}

/// The activity a boundary event is attached to; `""` for every other node (never looked
/// up: no activity has an empty id).
fn attached_to(n: &LiveNode) -> &str {
    match &n.kind {
        NodeKind::BoundaryEvent { attached_to, .. } => attached_to,
        _ => "",
    }
}

fn flow_id(f: &LiveFlow) -> &str {
    &f.id
}

fn flow_source(f: &LiveFlow) -> &str {
    &f.source
}

fn flow_target(f: &LiveFlow) -> &str {
    &f.target
}

/// Finds the items of a slice by a string key of theirs without copying the keys: the
/// hash of a key leads to the first item with that hash, and each item to the next one
/// with the same hash (so to every item with that key, in order, and perhaps to others
/// with the same hash, which [`Lookup::find`] skips).
#[derive(Debug, Clone, Default)]
struct Lookup {
    first: HashMap<u64, usize>,
    next: Vec<Option<usize>>,
}

impl Lookup {
    fn new<T>(items: &[T], key: fn(&T) -> &str) -> Self {
        let mut first = HashMap::with_capacity(items.len());
        let mut next = vec![None; items.len()];
        for (i, item) in items.iter().enumerate().rev() {
            next[i] = first.insert(key_hash(key(item)), i);
        }
        Lookup { first, next }
    }

    /// The items whose key is `wanted`, in order (`items` and `key` as given to
    /// [`Lookup::new`]).
    fn find<'a, T>(
        &'a self,
        items: &'a [T],
        key: fn(&T) -> &str,
        wanted: &str,
    ) -> impl Iterator<Item = &'a T> {
        let mut at = self.first.get(&key_hash(wanted)).copied();
        std::iter::from_fn(move || {
            let i = at?;
            at = self.next[i];
            Some(&items[i])
        })
        .filter(move |item| key(item) == wanted)
    }
}

/// The hash a [`Lookup`] files a key under: the same for a key in every lookup of the
/// process (a fixed seed), fast on short ids.
fn key_hash(key: &str) -> u64 {
    foldhash::fast::FixedState::default().hash_one(key)
}

impl LiveNode {
    /// An activity: task, sub-process or call activity.
    pub fn is_activity(&self) -> bool {
        self.kind.is_activity()
    }

    pub fn is_event_subprocess(&self) -> bool {
        matches!(
            self.kind,
            NodeKind::SubProcess(SubProcessKind::Embedded {
                triggered_by_event: true
            })
        )
    }

    /// Whether a token may be sent here by a jump (`skip_to`): not a start event, a
    /// boundary event or an event sub-process, which only events start.
    pub fn is_enterable(&self) -> bool {
        !(self.kind.is_start_event()
            || matches!(self.kind, NodeKind::BoundaryEvent { .. })
            || self.is_event_subprocess())
    }

    fn has_definition(&self, definition: EventDefinition) -> bool {
        self.kind.event_definitions().contains(&definition)
    }

    pub fn is_terminate_end(&self) -> bool {
        self.kind.is_end_event() && self.has_definition(EventDefinition::Terminate)
    }

    pub fn is_link_throw(&self) -> bool {
        matches!(self.kind, NodeKind::IntermediateThrowEvent { .. })
            && self.has_definition(EventDefinition::Link)
    }

    fn is_link_catch(&self) -> bool {
        matches!(self.kind, NodeKind::IntermediateCatchEvent { .. })
            && self.has_definition(EventDefinition::Link)
    }

    /// A task inserted by a hook (ADD_NODE).
    pub fn inserted(id: &str, name: Option<String>, parent: Option<String>) -> Self {
        LiveNode {
            id: id.to_string(),
            name: Some(name.unwrap_or_else(|| id.to_string())),
            kind: NodeKind::Task(TaskKind::Task),
            parent,
            default_flow: None,
            timer: None,
            event_ref: None,
        }
    }
}

impl Topology {
    pub fn from_process(process: &Process) -> Self {
        let nodes = process
            .nodes
            .iter()
            .map(|n| LiveNode {
                id: n.id.clone(),
                name: n.name.clone(),
                kind: n.kind.clone(),
                parent: n.parent.clone(),
                default_flow: n.default_flow.clone(),
                timer: n.timer.clone(),
                event_ref: n.event_ref.clone(),
            })
            .collect();
        let flows = process
            .flows
            .iter()
            .map(|f| LiveFlow {
                id: f.id.clone(),
                name: f.name.clone(),
                source: f.source.clone(),
                target: f.target.clone(),
                condition: EdgeInfo::condition_of(f),
                parent: f.parent.clone(),
            })
            .collect();
        Topology::new(process.id.clone(), process.name.clone(), nodes, flows)
    }

    fn new(
        process_id: String,
        process_name: Option<String>,
        nodes: Vec<LiveNode>,
        flows: Vec<LiveFlow>,
    ) -> Self {
        Topology {
            process_id,
            process_name,
            index: Index::of(&nodes, &flows),
            nodes,
            flows,
            changed: false,
            summary: OnceCell::new(),
        }
    }

    /// After a hook action changed the nodes or flows: rebuild the index, drop the
    /// summary.
    fn changed(&mut self) {
        self.index = Index::of(&self.nodes, &self.flows);
        self.summary = OnceCell::new();
        self.changed = true;
    }

    /// Whether the topology is still the process as the run started it (no hook action
    /// has changed it).
    pub fn is_unchanged(&self) -> bool {
        !self.changed
    }

    pub fn node(&self, id: &str) -> Option<&LiveNode> {
        self.index.nodes.find(&self.nodes, node_id, id).next()
    }

    pub fn flow(&self, id: &str) -> Option<&LiveFlow> {
        self.index.flows.find(&self.flows, flow_id, id).next()
    }

    /// Whether `node` is nested (at any depth) in the sub-process `container`.
    pub fn is_inside(&self, node: &str, container: &str) -> bool {
        let mut at = self.node(node).and_then(|n| n.parent.clone());
        while let Some(parent) = at {
            if parent == container {
                return true;
            }
            at = self.node(&parent).and_then(|n| n.parent.clone());
        }
        false
    }

    /// The timer boundary events attached to `activity`, in document order.
    pub fn boundary_timers(&self, activity: &str) -> impl Iterator<Item = &LiveNode> {
        self.boundary_events(activity)
            .filter(|n| n.has_definition(EventDefinition::Timer))
    }

    /// The boundary events attached to `activity`, in document order.
    pub fn boundary_events(&self, activity: &str) -> impl Iterator<Item = &LiveNode> {
        self.index
            .attached
            .find(&self.nodes, attached_to, activity)
            .filter(|n| matches!(n.kind, NodeKind::BoundaryEvent { .. }))
    }

    /// The boundary event attached to `activity` that catches an error or escalation
    /// (`definition`) with `code`: one whose code is `code` first, else a catch-all (no
    /// reference, or a reference without a code); in document order.
    pub fn catching_boundary(
        &self,
        activity: &str,
        definition: EventDefinition,
        code: Option<&str>,
    ) -> Option<&LiveNode> {
        let attached = || {
            self.boundary_events(activity)
                .filter(move |n| n.has_definition(definition))
        };
        fn caught(n: &LiveNode) -> Option<&str> {
            n.event_ref.as_ref().and_then(|r| r.code.as_deref())
        }
        attached()
            .find(|n| code.is_some() && caught(n) == code)
            .or_else(|| attached().find(|n| caught(n).is_none()))
    }

    /// The nodes directly in `scope` (a sub-process's id; `None`: the process level), in
    /// document order.
    pub fn children<'a>(&'a self, scope: Option<&'a str>) -> impl Iterator<Item = &'a LiveNode> {
        self.nodes
            .iter()
            .filter(move |n| n.parent.as_deref() == scope)
    }

    /// Whether `id` names a node or a flow (ids share one namespace in BPMN).
    pub fn has_id(&self, id: &str) -> bool {
        self.node(id).is_some() || self.flow(id).is_some()
    }

    /// The flows out of `node`, in order.
    pub fn outgoing(&self, node: &str) -> impl Iterator<Item = &LiveFlow> {
        self.index.outgoing.find(&self.flows, flow_source, node)
    }

    /// The flows into `node`, in order.
    pub fn incoming(&self, node: &str) -> impl Iterator<Item = &LiveFlow> {
        self.index.incoming.find(&self.flows, flow_target, node)
    }

    /// A gateway that synchronises tokens: parallel, inclusive or complex, with at least
    /// two incoming flows.
    pub fn is_sync_join(&self, node: &LiveNode) -> bool {
        let syncs = matches!(
            node.kind.gateway(),
            Some(
                crate::bpmn::GatewayKind::Parallel
                    | crate::bpmn::GatewayKind::Inclusive
                    | crate::bpmn::GatewayKind::Complex
            )
        );
        syncs && self.incoming(&node.id).count() >= 2
    }

    /// Where tokens start in `scope` (`None`: the process level): its none start events;
    /// else all its start events; inside a sub-process without start events, its children
    /// that nothing flows into (boundary events, event sub-processes and link catch events
    /// excepted).
    pub fn start_nodes(&self, scope: Option<&str>) -> Vec<String> {
        let children: Vec<&LiveNode> = self
            .nodes
            .iter()
            .filter(|n| n.parent.as_deref() == scope)
            .collect();
        let starts: Vec<&&LiveNode> = children
            .iter()
            .filter(|n| n.kind.is_start_event())
            .collect();
        let none: Vec<String> = starts
            .iter()
            .filter(|n| n.kind.event_definitions().is_empty())
            .map(|n| n.id.clone())
            .collect();
        if !none.is_empty() {
            return none;
        }
        if !starts.is_empty() || scope.is_none() {
            return starts.iter().map(|n| n.id.clone()).collect();
        }
        children
            .iter()
            .filter(|n| {
                n.is_enterable() && !n.is_link_catch() && self.incoming(&n.id).next().is_none()
            })
            .map(|n| n.id.clone())
            .collect()
    }

    /// The link catch event a link throw event continues at: same scope, same name.
    pub fn link_catch(&self, throw: &LiveNode) -> Option<&LiveNode> {
        let name = throw.name.as_deref()?;
        self.nodes.iter().find(|n| {
            n.is_link_catch() && n.parent == throw.parent && n.name.as_deref() == Some(name)
        })
    }

    pub fn edge_info(&self, flow: &LiveFlow) -> EdgeInfo {
        EdgeInfo {
            id: flow.id.clone(),
            source: flow.source.clone(),
            target: flow.target.clone(),
            name: flow.name.clone(),
            condition: flow.condition.clone(),
        }
    }

    /// The summary of the live topology, shared until the topology changes.
    pub fn summary(&self) -> Arc<ModelSummary> {
        self.summary
            .get_or_init(|| {
                Arc::new(ModelSummary {
                    process_id: self.process_id.clone(),
                    process_name: self.process_name.clone(),
                    nodes: self
                        .nodes
                        .iter()
                        .map(|n| NodeInfo {
                            id: n.id.clone(),
                            kind: n.kind.tag().to_string(),
                            name: n.name.clone(),
                        })
                        .collect(),
                    flows: self.flows.iter().map(|f| self.edge_info(f)).collect(),
                })
            })
            .clone()
    }

    /// Which of the flows `wanted` a token could still traverse, given tokens at `nodes`
    /// (about to enter, inside, or waiting at them) and tokens about to traverse `flows`.
    /// Walks forward over every flow regardless of conditions, and from link throws to
    /// their catches, nearest first, stopping as soon as all are found: a join whose
    /// missing branches are on their way costs a few steps, not a walk of the rest of the
    /// model.
    pub fn reaches<'a>(
        &'a self,
        nodes: impl IntoIterator<Item = &'a str>,
        flows: impl IntoIterator<Item = &'a str>,
        wanted: &[&str],
    ) -> BTreeSet<String> {
        let mut found: BTreeSet<String> = BTreeSet::new();
        let mut queue: std::collections::VecDeque<&str> = nodes.into_iter().collect();
        let note = |id: &str, found: &mut BTreeSet<String>| {
            if wanted.contains(&id) {
                found.insert(id.to_string());
            }
        };
        for id in flows {
            if let Some(f) = self.flow(id) {
                note(&f.id, &mut found);
                queue.push_back(f.target.as_str());
            }
        }
        let mut seen = BTreeSet::new();
        while found.len() < wanted.len()
            && let Some(node) = queue.pop_front()
        {
            if !seen.insert(node) {
                continue;
            }
            for f in self.outgoing(node) {
                note(&f.id, &mut found);
                queue.push_back(f.target.as_str());
            }
            if let Some(catch) = self
                .node(node)
                .filter(|n| n.is_link_throw())
                .and_then(|n| self.link_catch(n))
            {
                queue.push_back(catch.id.as_str());
            }
        }
        found
    }

    /// SWAP_NODES: exchange the positions of `a` and `b` by relabelling them in every
    /// flow's ends (adjacent nodes included: `a → b` becomes `b → a`).
    pub fn swap(&mut self, a: &str, b: &str) {
        let relabel = |end: &mut String| {
            if end == a {
                *end = b.to_string();
            } else if end == b {
                *end = a.to_string();
            }
        };
        for f in &mut self.flows {
            relabel(&mut f.source);
            relabel(&mut f.target);
        }
        self.changed();
    }

    /// The single successor of `node` and the flow to it, when it has exactly one
    /// outgoing flow.
    pub fn single_successor(&self, node: &str) -> Option<&LiveFlow> {
        let mut out = self.outgoing(node);
        match (out.next(), out.next()) {
            (Some(f), None) => Some(f),
            _ => None,
        }
    }

    /// REMOVE_NODE: retarget every flow into `node` to its single successor (keeping the
    /// flows' ids), then drop the node, its outgoing flow, anything nested in it or
    /// attached to it, and the flows touching those. Returns the retargeted flows' ids.
    /// The caller has checked that `node` has exactly one outgoing flow.
    pub fn remove(&mut self, node: &str) -> Vec<String> {
        let Some(out) = self.single_successor(node).cloned() else {
            return Vec::new();
        };
        let mut retargeted = Vec::new();
        for f in &mut self.flows {
            if f.target == node && f.id != out.id {
                f.target = out.target.clone();
                retargeted.push(f.id.clone());
            }
        }
        let gone = self.removal_set(node);
        self.nodes.retain(|n| !gone.contains(&n.id));
        self.flows
            .retain(|f| f.id != out.id && !gone.contains(&f.source) && !gone.contains(&f.target));
        self.changed();
        retargeted
    }

    /// `node`, the nodes nested in it and the boundary events attached to any of them.
    fn removal_set(&self, node: &str) -> BTreeSet<String> {
        crate::bpmn::removal_closure(
            node,
            self.nodes
                .iter()
                .map(|n| (n.id.as_str(), n.parent.as_deref(), &n.kind)),
        )
    }

    /// ADD_NODE: put `task` on `flow`: the flow now targets the task, and a new flow
    /// (returned) leads from the task to the flow's former target.
    pub fn insert_on(&mut self, flow: &str, task: LiveNode) -> Option<String> {
        let f = self.flows.iter_mut().find(|f| f.id == flow)?;
        let new_flow = LiveFlow {
            id: inserted_flow_id(flow, &task.id),
            name: None,
            source: task.id.clone(),
            target: std::mem::replace(&mut f.target, task.id.clone()),
            condition: None,
            parent: f.parent.clone(),
        };
        let id = new_flow.id.clone();
        self.nodes.push(task);
        self.flows.push(new_flow);
        self.changed();
        Some(id)
    }
}

/// The id of the flow ADD_NODE creates from the inserted task `task` on `flow`.
pub(crate) fn inserted_flow_id(flow: &str, task: &str) -> String {
    format!("{flow}__then__{task}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str) -> LiveNode {
        LiveNode::inserted(id, None, None)
    }

    fn flow(id: &str, source: &str, target: &str) -> LiveFlow {
        LiveFlow {
            id: id.into(),
            name: None,
            source: source.into(),
            target: target.into(),
            condition: None,
            parent: None,
        }
    }

    /// s → a → b → e
    fn chain() -> Topology {
        Topology::new(
            "p".into(),
            None,
            ["s", "a", "b", "e"].into_iter().map(task).collect(),
            vec![
                flow("f1", "s", "a"),
                flow("f2", "a", "b"),
                flow("f3", "b", "e"),
            ],
        )
    }

    fn ends(t: &Topology) -> Vec<(String, String, String)> {
        t.flows
            .iter()
            .map(|f| (f.id.clone(), f.source.clone(), f.target.clone()))
            .collect()
    }

    fn triple(id: &str, s: &str, t: &str) -> (String, String, String) {
        (id.into(), s.into(), t.into())
    }

    #[test]
    fn swapping_adjacent_nodes_reverses_them() {
        let mut t = chain();
        t.swap("a", "b");
        assert_eq!(
            ends(&t),
            [
                triple("f1", "s", "b"),
                triple("f2", "b", "a"),
                triple("f3", "a", "e")
            ]
        );
    }

    #[test]
    fn removing_a_node_retargets_its_incoming_flows() {
        let mut t = chain();
        assert_eq!(t.remove("a"), ["f1"]);
        assert_eq!(ends(&t), [triple("f1", "s", "b"), triple("f3", "b", "e")]);
        assert!(t.node("a").is_none());
    }

    #[test]
    fn inserting_a_task_splits_the_flow() {
        let mut t = chain();
        assert_eq!(t.insert_on("f2", task("n")).as_deref(), Some("f2__then__n"));
        assert_eq!(
            ends(&t),
            [
                triple("f1", "s", "a"),
                triple("f2", "a", "n"),
                triple("f3", "b", "e"),
                triple("f2__then__n", "n", "b")
            ]
        );
    }

    fn outgoing(t: &Topology, node: &str) -> Vec<String> {
        t.outgoing(node).map(|f| f.id.clone()).collect()
    }

    fn incoming(t: &Topology, node: &str) -> Vec<String> {
        t.incoming(node).map(|f| f.id.clone()).collect()
    }

    #[test]
    fn lookups_follow_changes() {
        let mut t = chain();
        assert_eq!(outgoing(&t, "a"), ["f2"]);
        assert!(t.node("n").is_none());
        t.insert_on("f2", task("n"));
        assert!(t.node("n").is_some());
        assert_eq!(outgoing(&t, "a"), ["f2"]);
        assert_eq!(outgoing(&t, "n"), ["f2__then__n"]);
        assert_eq!(incoming(&t, "b"), ["f2__then__n"]);
        t.swap("a", "b");
        assert_eq!(outgoing(&t, "b"), ["f2"]);
        assert_eq!(incoming(&t, "a"), ["f2__then__n"]);
        assert_eq!(outgoing(&t, "a"), ["f3"]);
        t.remove("n");
        assert!(t.node("n").is_none() && t.flow("f2__then__n").is_none());
        assert_eq!(incoming(&t, "a"), ["f2"]);
        assert!(outgoing(&t, "x").is_empty() && t.flow("x").is_none());
    }

    #[test]
    fn several_flows_between_the_same_nodes_keep_their_order() {
        let t = Topology::new(
            "p".into(),
            None,
            ["g", "a"].into_iter().map(task).collect(),
            vec![flow("f2", "g", "a"), flow("f1", "g", "a")],
        );
        assert_eq!(outgoing(&t, "g"), ["f2", "f1"]);
        assert_eq!(incoming(&t, "a"), ["f2", "f1"]);
    }

    #[test]
    fn the_summary_is_the_process_summary_until_the_topology_changes() {
        let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <process id="P" name="Proc">
              <startEvent id="s"/><exclusiveGateway id="g" default="f2"/>
              <task id="a" name="A"/><task id="b"/><endEvent id="e"/>
              <sequenceFlow id="f0" sourceRef="s" targetRef="g"/>
              <sequenceFlow id="f1" name="yes" sourceRef="g" targetRef="a">
                <conditionExpression>  ${x} == 1 </conditionExpression>
              </sequenceFlow>
              <sequenceFlow id="f2" sourceRef="g" targetRef="b">
                <conditionExpression/>
              </sequenceFlow>
              <sequenceFlow id="f3" sourceRef="a" targetRef="e"/>
              <sequenceFlow id="f4" sourceRef="b" targetRef="e"/>
            </process>
          </definitions>"#;
        let doc = crate::bpmn::parse(std::path::Path::new("t.bpmn"), xml.as_bytes()).unwrap();
        let process = doc.main_process().unwrap();
        let mut t = Topology::from_process(process);
        assert!(t.is_unchanged());
        let summary = t.summary();
        assert_eq!(*summary, ModelSummary::of(process));
        assert!(Arc::ptr_eq(&summary, &t.summary()), "built once");
        t.swap("a", "b");
        assert!(!t.is_unchanged());
        let swapped = t.summary();
        assert_ne!(*swapped, *summary);
        assert_eq!(swapped.flows[1].target, "b");
    }

    #[test]
    fn reachability_follows_flows_forward() {
        let t = chain();
        let all = ["f1", "f2", "f3"];
        let from_b = t.reaches(["b"], [], &all);
        assert_eq!(from_b.into_iter().collect::<Vec<_>>(), ["f3"]);
        let on_f1 = t.reaches([], ["f1"], &all);
        assert_eq!(on_f1.into_iter().collect::<Vec<_>>(), ["f1", "f2", "f3"]);
        // it stops once what is wanted is found
        let near = t.reaches([], ["f1"], &["f1"]);
        assert_eq!(near.into_iter().collect::<Vec<_>>(), ["f1"]);
    }
}
