//! The must-analysis over the adaptation graph: for every position, the positions
//! certainly executed (entered and completed, not skipped or removed) before a token
//! enters it (`entry`), and when it leaves (`exit`); for every scope, what is certainly
//! executed when it completes. Values start at "everything" and shrink to the greatest
//! fixpoint (an available-expressions analysis): a position is in a value only when it is
//! on every way there.
//!
//! Entry is the intersection over every edge into a position, except at a parallel join
//! paired with a parallel split whose branches provably all arrive ([`Block`]): there it
//! is the union of the branches, as the native engine's join waits for every branch a
//! live token can still take.

use std::collections::VecDeque;

use super::bits::Bits;
use super::graph::{EdgeKind, Graph};
use crate::bpmn::GatewayKind;

/// What the analysis found.
pub(crate) struct Solution {
    pub entry: Vec<Bits>,
    pub exit: Vec<Bits>,
    /// Whether a token may reach each position at all (entered or passed by a bypass).
    pub reached: Vec<bool>,
    /// The positions that end a token (nothing leads on), by scope position (`None`: the
    /// process level).
    pub ends: Vec<usize>,
    /// The parallel joins whose branches all arrive, by join position.
    pub blocks: Vec<Option<Block>>,
}

/// A parallel join whose branches all arrive (see the module docs of
/// [`crate::govern`]): the edges into the join, per branch, and how they combine.
#[derive(Debug)]
pub(crate) struct Block {
    /// The split, and the positions of all its branches.
    pub split: usize,
    pub region: Vec<usize>,
    branches: Vec<Vec<usize>>,
    /// `None`: every branch arrives at every firing (the union); `Some(b)`: tokens may
    /// also enter branch `b` from elsewhere, and only branch `b` is sure to be there.
    only: Option<usize>,
}

pub(crate) fn solve(graph: &Graph, seeds: &[(usize, Bits)]) -> Solution {
    let starts: Vec<usize> = seeds.iter().map(|s| s.0).collect();
    solve_with(graph, seeds, blocks(graph, &starts, &[]))
}

/// [`solve`] from the middle of a run: joins are paired as from the process's start
/// (`starts`), and `foreign` seeds (a token a hook makes jump) count as tokens entering
/// a branch from outside.
pub(crate) fn solve_from(
    graph: &Graph,
    seeds: &[(usize, Bits)],
    starts: &[usize],
    foreign: &[usize],
) -> Solution {
    solve_with(graph, seeds, blocks(graph, starts, foreign))
}

fn solve_with(graph: &Graph, seeds: &[(usize, Bits)], blocks: Vec<Option<Block>>) -> Solution {
    let n = graph.len();
    let ends: Vec<usize> = (0..n).filter(|&p| is_end(graph, p)).collect();
    // Per scope position: the end positions inside it.
    let mut scope_ends: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut hosts: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &e in &ends {
        if let Some(s) = graph.shape.parent(e).and_then(|s| graph.shape.index(s))
            && !graph.shape.is_error_end(e)
        {
            scope_ends[s].push(e);
        }
    }
    for p in 0..n {
        for label in graph.positions(p) {
            if graph.shape.is_scope(label) {
                hosts[label].push(p);
            }
        }
    }
    let has_starts: Vec<bool> = (0..n)
        .map(|p| {
            graph.shape.is_scope(p) && !graph.shape.start_nodes(Some(graph.shape.id(p))).is_empty()
        })
        .collect();
    let mut seed: Vec<Option<&Bits>> = vec![None; n];
    for (p, bits) in seeds {
        seed[*p] = Some(bits);
    }

    let reached = reach(graph, seeds);
    let mut entry = vec![Bits::full(n); n];
    let mut exit = vec![Bits::full(n); n];
    let mut queued = vec![false; n];
    let mut queue: VecDeque<usize> = VecDeque::new();
    // Breadth-first order from the seeds first: few rounds on acyclic parts.
    let mut order: Vec<usize> = Vec::new();
    {
        let mut seen = vec![false; n];
        let mut q: VecDeque<usize> = seeds.iter().map(|s| s.0).collect();
        while let Some(p) = q.pop_front() {
            if std::mem::replace(&mut seen[p], true) {
                continue;
            }
            order.push(p);
            q.extend(graph.out[p].iter().map(|&e| graph.edges[e].to));
        }
    }
    for p in order {
        queued[p] = true;
        queue.push_back(p);
    }

    while let Some(p) = queue.pop_front() {
        queued[p] = false;
        let value = |e: usize, entry: &[Bits], exit: &[Bits]| -> Bits {
            let edge = &graph.edges[e];
            if edge.from_in {
                entry[edge.from].clone()
            } else {
                exit[edge.from].clone()
            }
        };
        let mut new_entry = match &blocks[p] {
            Some(block) => {
                let branch = |b: &Vec<usize>| {
                    let mut acc = Bits::full(n);
                    for &e in b {
                        acc.intersect(&value(e, &entry, &exit));
                    }
                    acc
                };
                match block.only {
                    None => {
                        let mut acc = Bits::empty(n);
                        for b in &block.branches {
                            acc.union(&branch(b));
                        }
                        acc
                    }
                    Some(i) => branch(&block.branches[i]),
                }
            }
            None => {
                let mut acc = Bits::full(n);
                for &e in &graph.inc[p] {
                    acc.intersect(&value(e, &entry, &exit));
                }
                acc
            }
        };
        if let Some(s) = seed[p] {
            new_entry.intersect(s);
        }
        let mut new_exit = Bits::full(n);
        if graph.bypass[p].is_some() {
            new_exit = new_entry.clone();
        } else {
            for label in graph.positions(p) {
                let mut v = new_entry.clone();
                v.insert(p);
                if graph.shape.is_scope(label) && has_starts[label] {
                    // Completed when every token inside has ended (never, with no end).
                    let mut done = Bits::full(n);
                    for &e in &scope_ends[label] {
                        done.intersect(&exit[e]);
                    }
                    v.union(&done);
                }
                new_exit.intersect(&v);
            }
        }
        let changed = new_entry != entry[p] || new_exit != exit[p];
        entry[p] = new_entry;
        exit[p] = new_exit;
        if changed {
            let mut push = |q: usize| {
                if !queued[q] {
                    queued[q] = true;
                    queue.push_back(q);
                }
            };
            for &e in &graph.out[p] {
                push(graph.edges[e].to);
            }
            if let Some(s) = graph.shape.parent(p).and_then(|s| graph.shape.index(s)) {
                for &h in &hosts[s] {
                    push(h);
                }
            }
        }
    }
    Solution {
        entry,
        exit,
        reached,
        ends,
        blocks,
    }
}

/// A position that ends a token: nothing leads on from it.
fn is_end(graph: &Graph, p: usize) -> bool {
    !graph.out[p].iter().any(|&e| {
        matches!(
            graph.edges[e].kind,
            EdgeKind::Flow | EdgeKind::Insert | EdgeKind::Link
        )
    })
}

/// The positions a token may reach from the seeds, by any edge.
fn reach(graph: &Graph, seeds: &[(usize, Bits)]) -> Vec<bool> {
    let mut seen = vec![false; graph.len()];
    let mut todo: Vec<usize> = seeds.iter().map(|s| s.0).collect();
    while let Some(p) = todo.pop() {
        if std::mem::replace(&mut seen[p], true) {
            continue;
        }
        todo.extend(graph.out[p].iter().map(|&e| graph.edges[e].to));
    }
    seen
}

/// Structural edges (no adaptation): what pairs a join with its split.
fn structural(kind: EdgeKind) -> bool {
    matches!(
        kind,
        EdgeKind::Flow | EdgeKind::Link | EdgeKind::Boundary | EdgeKind::Enter
    )
}

/// Immediate dominators over the structural edges from the seeds (Cooper, Harvey and
/// Kennedy); `usize::MAX` for positions not reached, `n` for the virtual root.
fn dominators(graph: &Graph, starts: &[usize]) -> Vec<usize> {
    let n = graph.len();
    let root = n;
    // Reverse post-order by an iterative depth-first walk.
    let mut post = Vec::with_capacity(n + 1);
    let mut seen = vec![false; n + 1];
    let succ = |p: usize| -> Vec<usize> {
        if p == root {
            starts.to_vec()
        } else {
            graph.out[p]
                .iter()
                .filter(|&&e| structural(graph.edges[e].kind))
                .map(|&e| graph.edges[e].to)
                .collect()
        }
    };
    let mut stack: Vec<(usize, Vec<usize>)> = vec![(root, succ(root))];
    seen[root] = true;
    while let Some((p, mut rest)) = stack.pop() {
        if let Some(next) = rest.pop() {
            stack.push((p, rest));
            if !seen[next] {
                seen[next] = true;
                stack.push((next, succ(next)));
            }
        } else {
            post.push(p);
        }
    }
    let mut number = vec![usize::MAX; n + 1];
    for (i, p) in post.iter().enumerate() {
        number[*p] = i;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for e in &graph.edges {
        if structural(e.kind) {
            preds[e.to].push(e.from);
        }
    }
    for s in starts {
        preds[*s].push(root);
    }
    let mut idom = vec![usize::MAX; n + 1];
    idom[root] = root;
    let rpo: Vec<usize> = post.iter().rev().copied().collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().filter(|&&b| b != root) {
            let mut new = usize::MAX;
            for &p in &preds[b] {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    let (mut x, mut y) = (p, new);
                    while x != y {
                        while number[x] < number[y] {
                            x = idom[x];
                        }
                        while number[y] < number[x] {
                            y = idom[y];
                        }
                    }
                    x
                };
            }
            if new != usize::MAX && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom.truncate(n);
    idom
}

/// The parallel joins whose branches all arrive. A join J qualifies when its immediate
/// dominator P is a split that sends a token along every outgoing flow (a parallel
/// gateway, or a node that is not a gateway), in J's scope, and for each outgoing flow of
/// P the branch it starts (everything reachable from it in the adaptation graph before J)
/// is disjoint from the others; is closed (every move out of it leads into it or to J);
/// reaches J along flows from every position; carries one token (no splits but exclusive
/// or event-based ones, no non-interrupting boundary events); and has exactly one flow
/// into J at any time (one flow from the branch, no jumps onto J, no removable position
/// with several flows in). Then each firing of J takes one token from every branch,
/// except that a branch other tokens may enter from outside (a jump into it) may be the
/// only one there: with one such branch J's entry is that branch's; with more, the plain
/// intersection.
fn blocks(graph: &Graph, starts: &[usize], foreign: &[usize]) -> Vec<Option<Block>> {
    let n = graph.len();
    let shape = &graph.shape;
    let idom = dominators(graph, starts);
    let mut out: Vec<Option<Block>> = (0..n).map(|_| None).collect();
    for j in 0..n {
        if shape.gateway(j) != Some(GatewayKind::Parallel) || shape.inc[j].len() < 2 {
            continue;
        }
        let p = idom[j];
        if p >= n || shape.parent(p) != shape.parent(j) || shape.out[p].len() < 2 {
            continue;
        }
        if matches!(
            shape.gateway(p),
            Some(
                GatewayKind::Exclusive
                    | GatewayKind::Inclusive
                    | GatewayKind::EventBased
                    | GatewayKind::Complex
            )
        ) {
            continue;
        }
        out[j] = block(graph, p, j, foreign);
    }
    out
}

fn block(graph: &Graph, p: usize, j: usize, foreign_seeds: &[usize]) -> Option<Block> {
    let n = graph.len();
    let shape = &graph.shape;
    let boundaries = shape.boundaries();
    let starts_branch = |e: usize, o: usize| {
        let edge = &graph.edges[e];
        edge.from == p
            && edge.tag == Some(o)
            && matches!(
                edge.kind,
                EdgeKind::Flow | EdgeKind::Jump | EdgeKind::Insert
            )
    };
    let mut owner: Vec<Option<usize>> = vec![None; n];
    let mut regions: Vec<Vec<usize>> = Vec::new();
    for (b, &o) in shape.out[p].iter().enumerate() {
        let mut region = Vec::new();
        let mut todo: Vec<usize> = graph.out[p]
            .iter()
            .filter(|&&e| starts_branch(e, o))
            .map(|&e| graph.edges[e].to)
            .collect();
        while let Some(u) = todo.pop() {
            if u == j {
                continue;
            }
            if u == p {
                return None;
            }
            match owner[u] {
                Some(x) if x == b => continue,
                Some(_) => return None,
                None => {}
            }
            owner[u] = Some(b);
            region.push(u);
            for &e in &graph.out[u] {
                if graph.edges[e].kind != EdgeKind::Enter {
                    todo.push(graph.edges[e].to);
                }
            }
        }
        regions.push(region);
    }
    // One token per branch, and no way to be stuck short of J.
    for region in &regions {
        for &u in region {
            let choice = matches!(
                shape.gateway(u),
                Some(GatewayKind::Exclusive | GatewayKind::EventBased)
            );
            if shape.out[u].len() >= 2 && !choice {
                return None;
            }
            for label in graph.positions(u) {
                if boundaries
                    .get(shape.id(label))
                    .is_some_and(|bs| bs.iter().any(|(_, interrupting)| !interrupting))
                {
                    return None;
                }
            }
            if graph.removable[u] && shape.inc[u].len() > 1 {
                return None;
            }
        }
    }
    // Every position of a branch reaches J along flows (and insertions).
    let mut to_j = vec![false; n];
    let mut todo = vec![j];
    while let Some(u) = todo.pop() {
        for &e in &graph.inc[u] {
            let edge = &graph.edges[e];
            if matches!(edge.kind, EdgeKind::Flow | EdgeKind::Insert)
                && owner[edge.from].is_some()
                && !std::mem::replace(&mut to_j[edge.from], true)
            {
                todo.push(edge.from);
            }
        }
    }
    if regions.iter().flatten().any(|&u| !to_j[u]) {
        return None;
    }
    // The edges into J, per branch; anything else into J (a jump, a flow from outside)
    // disqualifies it.
    let mut branches: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    for &e in &graph.inc[j] {
        let edge = &graph.edges[e];
        if edge.kind == EdgeKind::Jump {
            return None;
        }
        let b = match owner[edge.from] {
            Some(b) => b,
            None => shape.out[p].iter().position(|&o| starts_branch(e, o))?,
        };
        branches[b].push(e);
    }
    for list in &branches {
        let flows = list
            .iter()
            .filter(|&&e| graph.edges[e].kind == EdgeKind::Flow)
            .count();
        if flows != 1 {
            return None;
        }
    }
    // Closed branches; which ones tokens may enter from outside.
    let mut foreign: Vec<usize> = Vec::new();
    for (b, region) in regions.iter().enumerate() {
        let o = shape.out[p][b];
        for &u in region {
            if foreign_seeds.contains(&u) && !foreign.contains(&b) {
                foreign.push(b);
            }
            for &e in &graph.out[u] {
                let to = graph.edges[e].to;
                if graph.edges[e].kind != EdgeKind::Enter && to != j && owner[to] != Some(b) {
                    return None;
                }
            }
            for &e in &graph.inc[u] {
                let from = graph.edges[e].from;
                if owner[from] != Some(b) && !starts_branch(e, o) && !foreign.contains(&b) {
                    foreign.push(b);
                }
            }
        }
    }
    let only = match foreign.as_slice() {
        [] => None,
        [b] => Some(*b),
        _ => return None,
    };
    Some(Block {
        split: p,
        region: regions.into_iter().flatten().collect(),
        branches,
        only,
    })
}
