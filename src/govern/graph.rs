//! The adaptation graph: one graph over the process's positions that holds every move a
//! token can make in any run any permitted adaptation allows, composed in any order.
//!
//! - **Positions** are the nodes of the model plus the tasks hooks may insert. A swap
//!   changes which node sits at a position, not the positions or flows, so the graph
//!   keeps positions and records, per position, the nodes it may host (its swap class:
//!   the positions linked by the permitted swaps, closed transitively).
//! - **Edges**: every sequence flow; link throw → catch; an activity's entry → its
//!   boundary events; a sub-process's entry → its start nodes; and per hook on flow F
//!   (S → T): `skip_to X` an edge S → X (every position X may sit at), `add_node N` the
//!   edges S → N → T (and between the tasks insertable on F, in any order).
//! - **Bypasses**: a position that `remove_node` may take out, or `skip_node` may skip,
//!   lets the token through without executing it. `skip_node` on F skips whatever F
//!   leads to when the hook fires: T, a task inserted on F, or (T removed) T's
//!   successor, and so on.
//!
//! Over-approximating the moves is what keeps the analysis sound: an edge or bypass
//! that no run can take only makes the must-analysis weaker, never wrong.

use std::collections::{BTreeMap, HashMap};

use super::shape::Shape;
use crate::vocab::HookAction;

/// One adaptation a hook may make: the hook, the action and what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adaptation {
    pub hook: String,
    pub action: HookAction,
    /// The nodes the action names: skip_to, remove_node, add_node and skip_node one (for
    /// skip_node the node skipped), swap_nodes two.
    pub target: Vec<String>,
}

impl std::fmt::Display for Adaptation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "hook `{}` may `{}`", self.hook, self.action)?;
        match self.target.as_slice() {
            [] => Ok(()),
            [one] => write!(f, " `{one}`"),
            [a, b] => write!(f, " `{a}` and `{b}`"),
            more => write!(f, " {}", more.join(", ")),
        }
    }
}

/// What one hook may do, its targets resolved to positions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offer {
    pub hook: String,
    /// The hooked flow (an index into the shape's flows).
    pub flow: usize,
    pub skip_node: bool,
    pub skip_to: Vec<usize>,
    pub remove: Vec<usize>,
    /// Groups of activities any two of which it may swap (one group per scope).
    pub swap: Vec<Vec<usize>>,
    /// Ids of the tasks it may insert.
    pub add: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EdgeKind {
    Flow,
    Link,
    /// An activity's entry → a boundary event attached to a node it may host.
    Boundary,
    /// A sub-process's entry → a start node of the sub-process it may host.
    Enter,
    Jump,
    Insert,
}

#[derive(Debug, Clone)]
pub(crate) struct Edge {
    pub from: usize,
    pub to: usize,
    /// The value carried is the source's entry value (boundary, enter), not its exit.
    pub from_in: bool,
    /// The flow whose traversal the edge is (flows, jumps and insertions).
    pub tag: Option<usize>,
    pub kind: EdgeKind,
    /// The adaptation that makes the move (jumps, insertions).
    pub cause: Option<usize>,
}

#[derive(Debug, Clone)]
pub(crate) struct Graph {
    pub shape: Shape,
    pub edges: Vec<Edge>,
    pub out: Vec<Vec<usize>>,
    pub inc: Vec<Vec<usize>>,
    /// Why a position may be passed without executing it (removed or skipped).
    pub bypass: Vec<Option<usize>>,
    /// Whether a position may be removed (retargeting the flows into it).
    pub removable: Vec<bool>,
    /// Each position's swap class (its representative) and the members of each class.
    class: Vec<usize>,
    members: HashMap<usize, Vec<usize>>,
    /// Permitted swaps: the hook and the activities any two of which it may swap.
    swaps: Vec<(String, Vec<usize>)>,
    pub causes: Vec<Adaptation>,
    /// The adaptations a cause needs first (a skip of a node a flow leads to only once
    /// another node was removed).
    pub requires: Vec<Vec<usize>>,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

impl Graph {
    pub fn build(mut shape: Shape, offers: &[Offer]) -> Self {
        let mut causes: Vec<Adaptation> = Vec::new();
        let mut cause = |hook: &str, action: HookAction, target: Vec<String>| {
            causes.push(Adaptation {
                hook: hook.to_string(),
                action,
                target,
            });
            causes.len() - 1
        };
        // Tasks hooks may insert become positions (one per id).
        let mut inserted: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        let mut added: HashMap<String, usize> = HashMap::new();
        for offer in offers {
            for id in &offer.add {
                let at = match (added.get(id), shape.index(id)) {
                    (Some(&p), _) => p,
                    // A node of the model already: the harness refuses to insert it.
                    (None, Some(_)) => continue,
                    (None, None) => {
                        let parent = shape.flow_scope(offer.flow).map(str::to_string);
                        let p = shape.add_task(id, parent);
                        added.insert(id.clone(), p);
                        p
                    }
                };
                let c = cause(&offer.hook, HookAction::AddNode, vec![id.clone()]);
                inserted.entry(offer.flow).or_default().push((at, c));
            }
        }
        let n = shape.len();

        // Swap classes.
        let mut parent: Vec<usize> = (0..n).collect();
        let mut swaps = Vec::new();
        for offer in offers {
            for group in offer.swap.iter().filter(|g| g.len() >= 2) {
                swaps.push((offer.hook.clone(), group.clone()));
                for &b in &group[1..] {
                    let (ra, rb) = (find(&mut parent, group[0]), find(&mut parent, b));
                    parent[ra] = rb;
                }
            }
        }
        let class: Vec<usize> = (0..n).map(|p| find(&mut parent, p)).collect();
        let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
        for (p, c) in class.iter().enumerate() {
            if *c != p || swaps.iter().any(|(_, g)| g.contains(&p)) {
                members.entry(*c).or_default().push(p);
            }
        }

        let mut graph = Graph {
            out: Vec::new(),
            inc: Vec::new(),
            edges: Vec::new(),
            bypass: vec![None; n],
            removable: vec![false; n],
            class,
            members,
            swaps,
            causes: Vec::new(),
            requires: Vec::new(),
            shape,
        };

        // Removals: every position the node may sit at that has one outgoing flow.
        let mut removals = Vec::new();
        for offer in offers {
            for &x in &offer.remove {
                let c = cause(
                    &offer.hook,
                    HookAction::RemoveNode,
                    vec![graph.shape.id(x).to_string()],
                );
                removals.push((x, c));
            }
        }
        let mut classes_done: Vec<usize> = Vec::new();
        for (x, c) in removals {
            if classes_done.contains(&graph.class[x]) {
                continue;
            }
            classes_done.push(graph.class[x]);
            for q in graph.positions(x) {
                let single = match graph.shape.out[q].as_slice() {
                    [f] => graph.shape.flows[*f].target != q,
                    [] => inserted.values().flatten().any(|(t, _)| *t == q),
                    _ => false,
                };
                if single {
                    graph.removable[q] = true;
                    graph.bypass[q].get_or_insert(c);
                }
            }
        }
        // Skips: whatever the hooked flow may lead to when the hook fires.
        let mut requires: Vec<(usize, Vec<usize>)> = Vec::new();
        for offer in offers.iter().filter(|o| o.skip_node) {
            let mut seen = vec![false; n];
            // Positions with the removals that make the flow lead there.
            let mut todo: Vec<(usize, Vec<usize>)> =
                vec![(graph.shape.flows[offer.flow].target, Vec::new())];
            todo.extend(
                inserted
                    .get(&offer.flow)
                    .into_iter()
                    .flatten()
                    .map(|t| (t.0, vec![t.1])),
            );
            while let Some((p, via)) = todo.pop() {
                if std::mem::replace(&mut seen[p], true) {
                    continue;
                }
                if graph.shape.is_activity(p) && graph.bypass[p].is_none() {
                    let c = cause(
                        &offer.hook,
                        HookAction::SkipNode,
                        vec![graph.shape.id(p).to_string()],
                    );
                    graph.bypass[p] = Some(c);
                    requires.push((c, via.clone()));
                }
                if graph.removable[p]
                    && let Some(r) = graph.bypass[p]
                {
                    let mut next = via.clone();
                    next.push(r);
                    for &g in &graph.shape.out[p] {
                        todo.push((graph.shape.flows[g].target, next.clone()));
                        for t in inserted.get(&g).into_iter().flatten() {
                            let mut with = next.clone();
                            with.push(t.1);
                            todo.push((t.0, with));
                        }
                    }
                }
            }
        }

        // Edges.
        let mut edges = Vec::new();
        let shape = &graph.shape;
        for (i, f) in shape.flows.iter().enumerate() {
            edges.push(Edge {
                from: f.source,
                to: f.target,
                from_in: false,
                tag: Some(i),
                kind: EdgeKind::Flow,
                cause: None,
            });
        }
        let boundaries = shape.boundaries();
        for p in 0..n {
            if shape.is_link_throw(p)
                && let Some(c) = shape.link_catch(p)
            {
                edges.push(Edge {
                    from: p,
                    to: c,
                    from_in: false,
                    tag: None,
                    kind: EdgeKind::Link,
                    cause: None,
                });
            }
            for label in graph.positions(p) {
                for &(b, _) in boundaries.get(shape.id(label)).into_iter().flatten() {
                    edges.push(Edge {
                        from: p,
                        to: b,
                        from_in: true,
                        tag: None,
                        kind: EdgeKind::Boundary,
                        cause: None,
                    });
                }
                if shape.is_scope(label) {
                    for s in shape.start_nodes(Some(shape.id(label))) {
                        edges.push(Edge {
                            from: p,
                            to: s,
                            from_in: true,
                            tag: None,
                            kind: EdgeKind::Enter,
                            cause: None,
                        });
                    }
                }
            }
        }
        for offer in offers {
            let f = offer.flow;
            let source = shape.flows[f].source;
            let mut classes: Vec<usize> = Vec::new();
            for &x in &offer.skip_to {
                if classes.contains(&graph.class[x]) {
                    continue;
                }
                classes.push(graph.class[x]);
                let c = cause(
                    &offer.hook,
                    HookAction::SkipTo,
                    vec![shape.id(x).to_string()],
                );
                for q in graph.positions(x) {
                    edges.push(Edge {
                        from: source,
                        to: q,
                        from_in: false,
                        tag: Some(f),
                        kind: EdgeKind::Jump,
                        cause: Some(c),
                    });
                }
            }
        }
        for (&f, tasks) in &inserted {
            let (source, target) = (shape.flows[f].source, shape.flows[f].target);
            for &(t, c) in tasks {
                edges.push(Edge {
                    from: source,
                    to: t,
                    from_in: false,
                    tag: Some(f),
                    kind: EdgeKind::Insert,
                    cause: Some(c),
                });
                for to in std::iter::once(target).chain(tasks.iter().map(|x| x.0)) {
                    if to != t {
                        edges.push(Edge {
                            from: t,
                            to,
                            from_in: false,
                            tag: None,
                            kind: EdgeKind::Insert,
                            cause: None,
                        });
                    }
                }
            }
        }
        graph.out = vec![Vec::new(); n];
        graph.inc = vec![Vec::new(); n];
        for (i, e) in edges.iter().enumerate() {
            graph.out[e.from].push(i);
            graph.inc[e.to].push(i);
        }
        graph.edges = edges;
        graph.requires = vec![Vec::new(); causes.len()];
        for (c, via) in requires {
            graph.requires[c] = via;
        }
        graph.causes = causes;
        graph
    }

    pub fn len(&self) -> usize {
        self.shape.len()
    }

    /// The positions the node first at `p` may sit at, which are also the nodes position
    /// `p` may host (its swap class; `p` alone when no swap touches it).
    pub fn positions(&self, p: usize) -> Vec<usize> {
        self.members
            .get(&self.class[p])
            .cloned()
            .unwrap_or_else(|| vec![p])
    }

    /// The swaps that take the node first at `from` to position `to` (a path of permitted
    /// swaps; empty when `from == to`).
    pub fn swap_chain(&self, from: usize, to: usize) -> Vec<Adaptation> {
        if from == to {
            return Vec::new();
        }
        let mut back: HashMap<usize, (usize, usize)> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([from]);
        back.insert(from, (from, usize::MAX));
        while let Some(p) = queue.pop_front() {
            if p == to {
                break;
            }
            for (g, (_, group)) in self.swaps.iter().enumerate() {
                if !group.contains(&p) {
                    continue;
                }
                for &y in group {
                    if let std::collections::hash_map::Entry::Vacant(v) = back.entry(y) {
                        v.insert((p, g));
                        queue.push_back(y);
                    }
                }
            }
        }
        let mut chain = Vec::new();
        let mut at = to;
        while at != from {
            let Some(&(prev, g)) = back.get(&at) else {
                break;
            };
            chain.push(Adaptation {
                hook: self.swaps[g].0.clone(),
                action: HookAction::SwapNodes,
                target: vec![
                    self.shape.id(prev).to_string(),
                    self.shape.id(at).to_string(),
                ],
            });
            at = prev;
        }
        chain.reverse();
        chain
    }
}
