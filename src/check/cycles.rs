//! Loops nothing decides to leave. A cycle of sequence flows on which no gateway decides,
//! no flow carries a condition and no boundary event can interrupt sends every token
//! that enters it round forever (a run spends its whole step budget there), even when a
//! flow leaves the cycle: a node's unconditioned outgoing flows are all taken. A cycle
//! from which no end can be reached at all is `graph::no_end` (see [`super::graph`]);
//! this check covers the cycles that do have a way out, but never take it.
//!
//! Each scope (the process, each sub-process) is checked on its own, with strongly
//! connected components found iteratively (Kosaraju), so any model size or nesting is
//! linear time and never deep recursion.

use foldhash::{HashMap, HashSet};

use crate::bpmn::{Document, GatewayKind, Node, NodeKind, ProcessIndex, SubProcessKind, TaskKind};
use crate::diag::{Diagnostic, name_list};

pub fn check(doc: &Document, index: &ProcessIndex) -> Vec<Diagnostic> {
    let process = index.process();
    let mut out = Vec::new();
    let mut scopes: Vec<Option<&str>> = vec![None];
    scopes.extend(
        (process.nodes.iter())
            .filter(|n| {
                matches!(n.kind, NodeKind::SubProcess(_))
                    && n.kind != NodeKind::SubProcess(SubProcessKind::AdHoc)
            })
            .map(|n| Some(n.id.as_str())),
    );
    // Activities something can interrupt.
    let interruptible: HashSet<&str> = (process.nodes.iter())
        .filter_map(|n| match &n.kind {
            NodeKind::BoundaryEvent { attached_to, .. } => Some(attached_to.as_str()),
            _ => None,
        })
        .collect();
    for scope in scopes {
        if scope.is_some_and(|s| interruptible.contains(s)) {
            continue; // a boundary event of the sub-process can end whatever loops in it
        }
        let members = index.children(scope);
        let position: HashMap<&str, usize> = (members.iter().enumerate())
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let succ: Vec<Vec<usize>> = (members.iter())
            .map(|n| {
                (index.outgoing(&n.id).iter())
                    .filter_map(|f| position.get(f.target.as_str()).copied())
                    .collect()
            })
            .collect();
        for component in components(&succ) {
            let cyclic = component.len() > 1 || succ[component[0]].contains(&component[0]);
            if !cyclic {
                continue;
            }
            let in_cycle: HashSet<usize> = component.iter().copied().collect();
            let nodes: Vec<&Node> = component.iter().map(|&i| members[i]).collect();
            let decided = nodes
                .iter()
                .any(|n| decides(n, index) || interruptible.contains(n.id.as_str()));
            let leaves = component
                .iter()
                .any(|&i| succ[i].iter().any(|t| !in_cycle.contains(t)));
            if decided || !leaves {
                continue; // a decision on the loop, or graph::no_end's case
            }
            let first = nodes.iter().min_by_key(|n| n.span.offset).copied();
            let Some(first) = first else { continue };
            let (message, label) = if nodes.len() == 1 {
                (
                    format!(
                        "`{}` flows back to itself with no condition: every token that reaches it loops forever",
                        first.id
                    ),
                    "unconditioned self-loop",
                )
            } else {
                let mut ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
                ids.sort_by_key(|id| index.node(id).map_or(0, |n| n.span.offset));
                (
                    format!(
                        "the loop through {} has no condition, decision or boundary event on it: every token that enters it loops forever",
                        name_list(&ids, 6)
                    ),
                    "loop without a way out",
                )
            };
            out.push(
                Diagnostic::warning("graph::endless_loop", message)
                    .at(&doc.source, first.span, Some(label.to_string()))
                    .with_help(
                        "decide on the loop: an exclusive gateway with a condition, a condition \
                         on the flow back, or a boundary timer",
                    ),
            );
        }
    }
    out
}

/// Whether a token at `node` may leave a loop by a choice: a deciding gateway with more
/// than one way out, a conditioned outgoing flow, a wait for an event, or a parallel join (which waits for
/// tokens from outside rather than looping).
fn decides(node: &Node, index: &ProcessIndex) -> bool {
    // A loop that waits for the world (a message, a timer, a signal) is a listener,
    // ended from outside (an event sub-process, a boundary event of its scope).
    if matches!(
        node.kind,
        NodeKind::IntermediateCatchEvent { .. } | NodeKind::Task(TaskKind::Receive)
    ) {
        return true;
    }
    let outgoing = index.outgoing(&node.id);
    if outgoing.iter().any(|f| f.condition.is_some()) {
        return true;
    }
    match node.kind.gateway() {
        Some(GatewayKind::Parallel) => index.incoming(&node.id).len() > 1,
        Some(_) => outgoing.len() > 1,
        None => false,
    }
}

/// Strongly connected components of the graph `succ` (Kosaraju, iterative).
fn components(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = succ.len();
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (a, targets) in succ.iter().enumerate() {
        for &b in targets {
            pred[b].push(a);
        }
    }
    // Pass 1: finishing order.
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        stack.push((root, 0));
        while let Some((node, next)) = stack.last_mut() {
            if let Some(&t) = succ[*node].get(*next) {
                *next += 1;
                if !seen[t] {
                    seen[t] = true;
                    stack.push((t, 0));
                }
            } else {
                order.push(*node);
                stack.pop();
            }
        }
    }
    // Pass 2: on the reversed graph, in reverse finishing order.
    let mut component = vec![usize::MAX; n];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for &root in order.iter().rev() {
        if component[root] != usize::MAX {
            continue;
        }
        let id = out.len();
        let mut members = vec![root];
        component[root] = id;
        stack.push(root);
        while let Some(node) = stack.pop() {
            for &p in &pred[node] {
                if component[p] == usize::MAX {
                    component[p] = id;
                    members.push(p);
                    stack.push(p);
                }
            }
        }
        out.push(members);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::components;

    #[test]
    fn components_of_a_loop_and_a_tail() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 3
        let succ = vec![vec![1], vec![2], vec![0, 3], vec![3]];
        let mut found: Vec<Vec<usize>> = components(&succ)
            .into_iter()
            .map(|mut c| {
                c.sort();
                c
            })
            .collect();
        found.sort();
        assert_eq!(found, vec![vec![0, 1, 2], vec![3]]);
    }
}
