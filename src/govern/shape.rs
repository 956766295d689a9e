//! The graph a proof is about: the process's nodes (positions) and sequence flows, taken
//! from the BPMN model, or from a run's live model (which hook actions may have changed).
//! Edits mirror what the native engine does to its live topology (`engine::topology`):
//! swap relabels flow ends, remove retargets the flows into a node to its successor,
//! insert splits a flow.

use std::collections::HashMap;

use crate::bpmn::{EventDefinition, GatewayKind, NodeKind, Process, SubProcessKind, TaskKind};

#[derive(Debug, Clone)]
pub(crate) struct SNode {
    pub id: String,
    pub kind: NodeKind,
    /// The sub-process that contains the node; `None` at process level.
    pub parent: Option<String>,
    pub name: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct SFlow {
    pub id: String,
    pub source: usize,
    pub target: usize,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Shape {
    pub nodes: Vec<SNode>,
    pub flows: Vec<SFlow>,
    ids: HashMap<String, usize>,
    flow_ids: HashMap<String, usize>,
    pub out: Vec<Vec<usize>>,
    pub inc: Vec<Vec<usize>>,
}

impl Shape {
    pub fn of(process: &Process) -> Self {
        let nodes = process
            .nodes
            .iter()
            .map(|n| SNode {
                id: n.id.clone(),
                kind: n.kind.clone(),
                parent: n.parent.clone(),
                name: n.name.clone(),
            })
            .collect();
        let flows = process
            .flows
            .iter()
            .map(|f| (f.id.as_str(), f.source.as_str(), f.target.as_str()));
        Shape::build(nodes, flows)
    }

    /// A run's live model: its node ids and flows, with what the BPMN model knows of each
    /// node (kind, scope); a node the model does not know is a task a hook inserted, in
    /// the scope of the nodes it is linked to.
    pub fn live<'a>(
        process: &Process,
        nodes: impl IntoIterator<Item = &'a str>,
        flows: &[(&'a str, &'a str, &'a str)],
    ) -> Self {
        let mut list: Vec<SNode> = Vec::new();
        let mut unknown = Vec::new();
        for id in nodes {
            match process.node(id) {
                Some(n) => list.push(SNode {
                    id: n.id.clone(),
                    kind: n.kind.clone(),
                    parent: n.parent.clone(),
                    name: n.name.clone(),
                }),
                None => {
                    unknown.push(list.len());
                    list.push(SNode {
                        id: id.to_string(),
                        kind: NodeKind::Task(TaskKind::Task),
                        parent: None,
                        name: None,
                    });
                }
            }
        }
        for i in unknown {
            let id = list[i].id.clone();
            let neighbour = flows.iter().find_map(|(_, s, t)| {
                let other = if *s == id {
                    *t
                } else if *t == id {
                    *s
                } else {
                    return None;
                };
                process.node(other).map(|n| n.parent.clone())
            });
            list[i].parent = neighbour.flatten();
        }
        Shape::build(list, flows.iter().copied())
    }

    fn build<'a>(
        nodes: Vec<SNode>,
        flows: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Self {
        let ids: HashMap<String, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.clone(), i))
            .collect();
        let flows = flows
            .into_iter()
            .filter_map(|(id, s, t)| {
                Some(SFlow {
                    id: id.to_string(),
                    source: *ids.get(s)?,
                    target: *ids.get(t)?,
                })
            })
            .collect();
        let mut shape = Shape {
            nodes,
            flows,
            ids,
            ..Shape::default()
        };
        shape.reindex();
        shape
    }

    fn reindex(&mut self) {
        self.ids = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.clone(), i))
            .collect();
        self.flow_ids = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id.clone(), i))
            .collect();
        self.out = vec![Vec::new(); self.nodes.len()];
        self.inc = vec![Vec::new(); self.nodes.len()];
        for (i, f) in self.flows.iter().enumerate() {
            self.out[f.source].push(i);
            self.inc[f.target].push(i);
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn index(&self, id: &str) -> Option<usize> {
        self.ids.get(id).copied()
    }

    pub fn flow_index(&self, id: &str) -> Option<usize> {
        self.flow_ids.get(id).copied()
    }

    pub fn id(&self, p: usize) -> &str {
        &self.nodes[p].id
    }

    /// A node with no flows yet (a task a hook may insert), in `parent`'s scope.
    pub fn add_task(&mut self, id: &str, parent: Option<String>) -> usize {
        self.nodes.push(SNode {
            id: id.to_string(),
            kind: NodeKind::Task(TaskKind::Task),
            parent,
            name: None,
        });
        self.ids.insert(id.to_string(), self.nodes.len() - 1);
        self.out.push(Vec::new());
        self.inc.push(Vec::new());
        self.nodes.len() - 1
    }

    pub fn kind(&self, p: usize) -> &NodeKind {
        &self.nodes[p].kind
    }

    pub fn parent(&self, p: usize) -> Option<&str> {
        self.nodes[p].parent.as_deref()
    }

    /// The scope a flow's target is in (hook targets must be in it).
    pub fn flow_scope(&self, f: usize) -> Option<&str> {
        self.parent(self.flows[f].target)
    }

    pub fn is_activity(&self, p: usize) -> bool {
        self.kind(p).is_activity()
    }

    /// An embedded sub-process or transaction whose children a token enters.
    pub fn is_scope(&self, p: usize) -> bool {
        matches!(
            self.kind(p),
            NodeKind::SubProcess(
                SubProcessKind::Embedded {
                    triggered_by_event: false
                } | SubProcessKind::Transaction
            )
        )
    }

    /// What `skip_to` may name: not a start event, a boundary event or an event
    /// sub-process.
    pub fn is_enterable(&self, p: usize) -> bool {
        !(self.kind(p).is_start_event()
            || matches!(self.kind(p), NodeKind::BoundaryEvent { .. })
            || matches!(
                self.kind(p),
                NodeKind::SubProcess(SubProcessKind::Embedded {
                    triggered_by_event: true
                })
            ))
    }

    fn has_definition(&self, p: usize, d: EventDefinition) -> bool {
        self.kind(p).event_definitions().contains(&d)
    }

    pub fn is_terminate_end(&self, p: usize) -> bool {
        self.kind(p).is_end_event() && self.has_definition(p, EventDefinition::Terminate)
    }

    pub fn is_error_end(&self, p: usize) -> bool {
        self.kind(p).is_end_event() && self.has_definition(p, EventDefinition::Error)
    }

    pub fn is_link_throw(&self, p: usize) -> bool {
        matches!(self.kind(p), NodeKind::IntermediateThrowEvent { .. })
            && self.has_definition(p, EventDefinition::Link)
    }

    fn is_link_catch(&self, p: usize) -> bool {
        matches!(self.kind(p), NodeKind::IntermediateCatchEvent { .. })
            && self.has_definition(p, EventDefinition::Link)
    }

    pub fn gateway(&self, p: usize) -> Option<GatewayKind> {
        self.kind(p).gateway()
    }

    /// The link catch event a link throw continues at: same scope, same name.
    pub fn link_catch(&self, p: usize) -> Option<usize> {
        let name = self.nodes[p].name.as_deref()?;
        (0..self.len()).find(|&c| {
            self.is_link_catch(c)
                && self.nodes[c].parent == self.nodes[p].parent
                && self.nodes[c].name.as_deref() == Some(name)
        })
    }

    /// The boundary events attached to `p`'s node, with whether each interrupts.
    pub fn boundaries(&self) -> HashMap<&str, Vec<(usize, bool)>> {
        let mut map: HashMap<&str, Vec<(usize, bool)>> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if let NodeKind::BoundaryEvent {
                attached_to,
                cancel_activity,
                ..
            } = &n.kind
            {
                map.entry(attached_to.as_str())
                    .or_default()
                    .push((i, *cancel_activity));
            }
        }
        map
    }

    /// Where tokens start in `scope` (as the native engine's `start_nodes`): its none
    /// start events; else all its start events; inside a sub-process without start
    /// events, its children that nothing flows into.
    pub fn start_nodes(&self, scope: Option<&str>) -> Vec<usize> {
        let children: Vec<usize> = (0..self.len())
            .filter(|&p| self.parent(p) == scope)
            .collect();
        let starts: Vec<usize> = children
            .iter()
            .copied()
            .filter(|&p| self.kind(p).is_start_event())
            .collect();
        let none: Vec<usize> = starts
            .iter()
            .copied()
            .filter(|&p| self.kind(p).event_definitions().is_empty())
            .collect();
        if !none.is_empty() {
            return none;
        }
        if !starts.is_empty() || scope.is_none() {
            return starts;
        }
        children
            .into_iter()
            .filter(|&p| self.is_enterable(p) && !self.is_link_catch(p) && self.inc[p].is_empty())
            .collect()
    }

    /// SWAP_NODES: exchange `a` and `b` in every flow's ends.
    pub fn swap(&mut self, a: usize, b: usize) {
        for f in &mut self.flows {
            for end in [&mut f.source, &mut f.target] {
                if *end == a {
                    *end = b;
                } else if *end == b {
                    *end = a;
                }
            }
        }
        self.reindex();
    }

    /// REMOVE_NODE: the flows into `x` lead to its single successor; `x`, its outgoing
    /// flow and anything nested in it or attached to it are gone.
    pub fn remove(&mut self, x: usize) {
        let [out] = self.out[x].as_slice() else {
            return;
        };
        let (out, succ) = (*out, self.flows[*out].target);
        for (i, f) in self.flows.iter_mut().enumerate() {
            if f.target == x && i != out {
                f.target = succ;
            }
        }
        let gone = crate::bpmn::removal_closure(
            &self.nodes[x].id,
            self.nodes
                .iter()
                .map(|n| (n.id.as_str(), n.parent.as_deref(), &n.kind)),
        );
        let keep: Vec<bool> = self.nodes.iter().map(|n| !gone.contains(&n.id)).collect();
        let mut renumber = vec![usize::MAX; self.nodes.len()];
        let mut next = 0;
        for (i, k) in keep.iter().enumerate() {
            if *k {
                renumber[i] = next;
                next += 1;
            }
        }
        let flows = std::mem::take(&mut self.flows);
        self.flows = flows
            .into_iter()
            .enumerate()
            .filter(|(i, f)| *i != out && keep[f.source] && keep[f.target])
            .map(|(_, mut f)| {
                f.source = renumber[f.source];
                f.target = renumber[f.target];
                f
            })
            .collect();
        let nodes = std::mem::take(&mut self.nodes);
        self.nodes = nodes
            .into_iter()
            .zip(keep)
            .filter_map(|(n, k)| k.then_some(n))
            .collect();
        self.reindex();
    }

    /// ADD_NODE: task `id` on flow `f` (which now leads to it), a new flow from it to
    /// `f`'s former target.
    pub fn insert(&mut self, f: usize, id: &str) -> usize {
        let parent = self.parent(self.flows[f].target).map(str::to_string);
        let t = self.add_task(id, parent);
        let old = std::mem::replace(&mut self.flows[f].target, t);
        let flow_id = format!("{}__then__{id}", self.flows[f].id);
        self.flows.push(SFlow {
            id: flow_id,
            source: t,
            target: old,
        });
        self.reindex();
        t
    }
}
