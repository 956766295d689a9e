//! Lookups into one [`Process`] by id, built in one pass over its nodes and flows: what
//! the static checks (and the engines' support tables) ask of a process once per node,
//! flow or config entry. [`Process::node`] and friends scan the lists; over a whole model
//! that is quadratic, through the index it is linear.
//!
//! The index borrows the process, so it cannot outlive a change to it: build it where the
//! process is read, not kept.

use foldhash::{HashMap, HashMapExt};

use super::model::{Flow, Node, Process};

/// Nodes and flows of one process by id, flows by source and target, nodes by scope.
/// Every answer is what the matching [`Process`] method gives, in the same order (the
/// first node or flow of an id, document order within a list).
#[derive(Debug)]
pub struct ProcessIndex<'a> {
    process: &'a Process,
    nodes: HashMap<&'a str, &'a Node>,
    flows: HashMap<&'a str, &'a Flow>,
    outgoing: HashMap<&'a str, Vec<&'a Flow>>,
    incoming: HashMap<&'a str, Vec<&'a Flow>>,
    /// The nodes at process level, and those of each sub-process.
    top_level: Vec<&'a Node>,
    children: HashMap<&'a str, Vec<&'a Node>>,
}

impl<'a> ProcessIndex<'a> {
    pub fn new(process: &'a Process) -> Self {
        let mut nodes = HashMap::with_capacity(process.nodes.len());
        let mut top_level = Vec::new();
        let mut children: HashMap<&str, Vec<&Node>> = HashMap::new();
        for node in &process.nodes {
            nodes.entry(node.id.as_str()).or_insert(node);
            match node.parent.as_deref() {
                None => top_level.push(node),
                Some(parent) => children.entry(parent).or_default().push(node),
            }
        }
        let mut flows = HashMap::with_capacity(process.flows.len());
        // Sized for every node up front: a large model's maps are not rehashed as they grow.
        let mut outgoing: HashMap<&str, Vec<&Flow>> = HashMap::with_capacity(process.nodes.len());
        let mut incoming: HashMap<&str, Vec<&Flow>> = HashMap::with_capacity(process.nodes.len());
        for flow in &process.flows {
            flows.entry(flow.id.as_str()).or_insert(flow);
            outgoing.entry(flow.source.as_str()).or_default().push(flow);
            incoming.entry(flow.target.as_str()).or_default().push(flow);
        }
        ProcessIndex {
            process,
            nodes,
            flows,
            outgoing,
            incoming,
            top_level,
            children,
        }
    }

    /// The process indexed.
    pub fn process(&self) -> &'a Process {
        self.process
    }

    /// [`Process::node`].
    pub fn node(&self, id: &str) -> Option<&'a Node> {
        self.nodes.get(id).copied()
    }

    /// [`Process::flow`].
    pub fn flow(&self, id: &str) -> Option<&'a Flow> {
        self.flows.get(id).copied()
    }

    /// [`Process::outgoing`].
    pub fn outgoing(&self, node: &str) -> &[&'a Flow] {
        self.outgoing.get(node).map_or(&[], Vec::as_slice)
    }

    /// [`Process::incoming`].
    pub fn incoming(&self, node: &str) -> &[&'a Flow] {
        self.incoming.get(node).map_or(&[], Vec::as_slice)
    }

    /// [`Process::children`]: the nodes directly inside `scope` (`None`: the process level).
    pub fn children(&self, scope: Option<&str>) -> &[&'a Node] {
        match scope {
            None => &self.top_level,
            Some(scope) => self.children.get(scope).map_or(&[], Vec::as_slice),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_process_does() {
        let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
<process id="P">
<startEvent id="s"/>
<subProcess id="sub"><startEvent id="s2"/><task id="in"/><endEvent id="e2"/>
<sequenceFlow id="g1" sourceRef="s2" targetRef="in"/><sequenceFlow id="g2" sourceRef="in" targetRef="e2"/></subProcess>
<exclusiveGateway id="x"/><task id="a"/><task id="b"/><endEvent id="e"/>
<sequenceFlow id="f1" sourceRef="s" targetRef="sub"/><sequenceFlow id="f2" sourceRef="sub" targetRef="x"/>
<sequenceFlow id="f3" sourceRef="x" targetRef="a"/><sequenceFlow id="f4" sourceRef="x" targetRef="b"/>
<sequenceFlow id="f5" sourceRef="a" targetRef="e"/><sequenceFlow id="f6" sourceRef="b" targetRef="e"/>
</process></definitions>"#;
        let doc = crate::bpmn::parse(std::path::Path::new("m.bpmn"), xml.as_bytes()).unwrap();
        let p = &doc.processes[0];
        let index = ProcessIndex::new(p);
        let ids = |flows: &[&Flow]| flows.iter().map(|f| f.id.clone()).collect::<Vec<_>>();
        for node in &p.nodes {
            let id = node.id.as_str();
            assert_eq!(index.node(id).map(|n| &n.id), p.node(id).map(|n| &n.id));
            assert_eq!(
                ids(index.outgoing(id)),
                ids(&p.outgoing(id).collect::<Vec<_>>())
            );
            assert_eq!(
                ids(index.incoming(id)),
                ids(&p.incoming(id).collect::<Vec<_>>())
            );
        }
        for flow in &p.flows {
            assert_eq!(index.flow(&flow.id).map(|f| &f.id), Some(&flow.id));
        }
        for scope in [None, Some("sub"), Some("a")] {
            let mine: Vec<_> = index.children(scope).iter().map(|n| &n.id).collect();
            let theirs: Vec<_> = p.children(scope).map(|n| &n.id).collect();
            assert_eq!(mine, theirs);
        }
        assert!(index.node("nope").is_none() && index.flow("f1").is_some());
        assert_eq!(ids(index.outgoing("x")), ["f3", "f4"]);
    }
}
