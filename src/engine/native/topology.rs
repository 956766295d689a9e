//! The live topology of one run: a copy of the process's nodes and flows taken at run
//! start, which hook actions may change (swap, remove, insert). Everything the engine
//! asks about the graph during a run, it asks here, never of the original [`Process`].

use std::collections::{BTreeMap, BTreeSet};

use crate::bpmn::{EventDefinition, NodeKind, Process, SubProcessKind, TaskKind};
use crate::bridge::{EdgeInfo, ModelSummary, NodeInfo};

/// A node of the live topology.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LiveNode {
    pub id: String,
    pub name: Option<String>,
    pub kind: NodeKind,
    /// The sub-process that contains the node; `None` at process level.
    pub parent: Option<String>,
    pub default_flow: Option<String>,
}

/// A sequence flow of the live topology.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LiveFlow {
    pub id: String,
    pub name: Option<String>,
    pub source: String,
    pub target: String,
    /// The condition's body, when the BPMN flow has a non-empty one.
    pub condition: Option<String>,
    pub parent: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Topology {
    process_id: String,
    process_name: Option<String>,
    nodes: Vec<LiveNode>,
    flows: Vec<LiveFlow>,
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
                condition: f
                    .condition
                    .as_ref()
                    .map(|c| c.body.trim().to_string())
                    .filter(|b| !b.is_empty()),
                parent: f.parent.clone(),
            })
            .collect();
        Topology {
            process_id: process.id.clone(),
            process_name: process.name.clone(),
            nodes,
            flows,
        }
    }

    pub fn node(&self, id: &str) -> Option<&LiveNode> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn flow(&self, id: &str) -> Option<&LiveFlow> {
        self.flows.iter().find(|f| f.id == id)
    }

    /// The first element the engine cannot run, if any.
    pub fn unsupported(&self) -> Option<&LiveNode> {
        self.nodes
            .iter()
            .find(|n| matches!(n.kind, NodeKind::Unsupported { .. }))
    }

    /// Whether `id` names a node or a flow (ids share one namespace in BPMN).
    pub fn has_id(&self, id: &str) -> bool {
        self.node(id).is_some() || self.flow(id).is_some()
    }

    pub fn outgoing<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a LiveFlow> + 'a {
        self.flows.iter().filter(move |f| f.source == node)
    }

    pub fn incoming<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a LiveFlow> + 'a {
        self.flows.iter().filter(move |f| f.target == node)
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

    pub fn summary(&self) -> ModelSummary {
        ModelSummary {
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
        }
    }

    /// The flows a token could still traverse, given tokens at `nodes` (about to enter,
    /// inside, or waiting at them) and tokens about to traverse `flows`. Walks forward
    /// over every flow regardless of conditions, and from link throws to their catches.
    pub fn reachable_flows<'a>(
        &'a self,
        nodes: impl IntoIterator<Item = &'a str>,
        flows: impl IntoIterator<Item = &'a str>,
    ) -> BTreeSet<&'a str> {
        let mut out_of: BTreeMap<&str, Vec<&LiveFlow>> = BTreeMap::new();
        for f in &self.flows {
            out_of.entry(f.source.as_str()).or_default().push(f);
        }
        let mut reached = BTreeSet::new();
        let mut queue: Vec<&str> = nodes.into_iter().collect();
        for id in flows {
            if let Some(f) = self.flow(id) {
                reached.insert(f.id.as_str());
                queue.push(f.target.as_str());
            }
        }
        let mut seen = BTreeSet::new();
        while let Some(node) = queue.pop() {
            if !seen.insert(node) {
                continue;
            }
            for f in out_of.get(node).into_iter().flatten() {
                reached.insert(f.id.as_str());
                queue.push(f.target.as_str());
            }
            if let Some(catch) = self
                .node(node)
                .filter(|n| n.is_link_throw())
                .and_then(|n| self.link_catch(n))
            {
                queue.push(catch.id.as_str());
            }
        }
        reached
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
    }

    /// The single successor of `node` and the flow to it, when it has exactly one
    /// outgoing flow.
    pub fn single_successor(&self, node: &str) -> Option<&LiveFlow> {
        let mut out = self.flows.iter().filter(|f| f.source == node);
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
        retargeted
    }

    /// `node`, the nodes nested in it and the boundary events attached to any of them.
    fn removal_set(&self, node: &str) -> BTreeSet<String> {
        let mut gone = BTreeSet::from([node.to_string()]);
        loop {
            let more: Vec<String> = self
                .nodes
                .iter()
                .filter(|n| !gone.contains(&n.id))
                .filter(|n| {
                    n.parent.as_ref().is_some_and(|p| gone.contains(p))
                        || matches!(&n.kind, NodeKind::BoundaryEvent { attached_to, .. } if gone.contains(attached_to))
                })
                .map(|n| n.id.clone())
                .collect();
            if more.is_empty() {
                return gone;
            }
            gone.extend(more);
        }
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
        Some(id)
    }
}

/// The id of the flow ADD_NODE creates from the inserted task `task` on `flow`.
pub(super) fn inserted_flow_id(flow: &str, task: &str) -> String {
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
        Topology {
            process_id: "p".into(),
            process_name: None,
            nodes: ["s", "a", "b", "e"].into_iter().map(task).collect(),
            flows: vec![
                flow("f1", "s", "a"),
                flow("f2", "a", "b"),
                flow("f3", "b", "e"),
            ],
        }
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

    #[test]
    fn reachability_follows_flows_forward() {
        let t = chain();
        let from_b = t.reachable_flows(["b"], []);
        assert_eq!(from_b.into_iter().collect::<Vec<_>>(), ["f3"]);
        let on_f1 = t.reachable_flows([], ["f1"]);
        assert_eq!(on_f1.into_iter().collect::<Vec<_>>(), ["f1", "f2", "f3"]);
    }
}
