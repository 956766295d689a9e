//! Guarantees checked against the analysis, and the counter-example when one fails: the
//! adaptations and the path of a run that breaks it.

use std::collections::VecDeque;

use super::bits::Bits;
use super::graph::{Adaptation, Graph};
use super::solve::Solution;
use crate::app::GuaranteeRule;

/// One step of a counter-example's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub node: String,
    /// The adaptation that brought the token here (a jump, an insertion), if any.
    pub by: Option<Adaptation>,
    /// The adaptation that let the token pass this node without executing it (skipped
    /// or removed), if it did.
    pub passed: Option<Adaptation>,
}

/// Why a guarantee does not hold: what a run does, under which adaptations, along which
/// path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// What the run does that the guarantee forbids.
    pub what: String,
    /// The adaptations the run makes, in order (none: the model alone breaks it).
    pub adaptations: Vec<Adaptation>,
    pub path: Vec<Step>,
}

impl Broken {
    /// The path as `A → B ⇢ C` (`⇢`: moved by an adaptation), nodes passed without
    /// running them in brackets; a long path keeps its ends and the steps around each
    /// adaptation, with `…` for the rest.
    pub fn path_text(&self) -> String {
        let len = self.path.len();
        let mut keep = vec![len <= 12; len];
        for (i, step) in self.path.iter().enumerate() {
            if i == 0 || i + 1 == len || step.by.is_some() || step.passed.is_some() {
                for k in keep
                    .iter_mut()
                    .take((i + 2).min(len))
                    .skip(i.saturating_sub(1))
                {
                    *k = true;
                }
            }
        }
        let mut out = String::new();
        let mut skipped = false;
        for (i, step) in self.path.iter().enumerate() {
            if !keep[i] {
                skipped = true;
                continue;
            }
            if i > 0 {
                if std::mem::take(&mut skipped) {
                    out.push_str(" → …");
                }
                out.push_str(if step.by.is_some() { " ⇢ " } else { " → " });
            }
            match &step.passed {
                Some(a) => {
                    let how = match a.action {
                        crate::vocab::HookAction::RemoveNode => "removed",
                        crate::vocab::HookAction::SkipNode => "skipped",
                        _ => "passed",
                    };
                    out.push_str(&format!("[{} {how}]", step.node));
                }
                None => out.push_str(&step.node),
            }
        }
        out
    }

    /// One sentence: what happens, under which adaptations, along which path.
    pub fn explain(&self) -> String {
        let how = if self.adaptations.is_empty() {
            "with no adaptation at all".to_string()
        } else {
            let list: Vec<String> = self.adaptations.iter().map(|a| a.to_string()).collect();
            format!("when {}", list.join(", then "))
        };
        format!("{} {how}: {}", self.what, self.path_text())
    }

    /// The hooks whose adaptations the run makes, in order, once each.
    pub fn hooks(&self) -> Vec<&str> {
        let mut hooks: Vec<&str> = Vec::new();
        for a in &self.adaptations {
            if !hooks.contains(&a.hook.as_str()) {
                hooks.push(&a.hook);
            }
        }
        hooks
    }
}

/// Check one guarantee. Names the graph does not know are skipped (`validate` reports
/// them).
pub(crate) fn check(
    graph: &Graph,
    sol: &Solution,
    seeds: &[(usize, Bits)],
    rule: &GuaranteeRule,
    plain: Option<&Solution>,
) -> Result<(), Broken> {
    let shape = &graph.shape;
    let pos = |id: &str| shape.index(id);
    match rule {
        GuaranteeRule::OnlyAfter { reach, after } => {
            let Some(n) = pos(&reach.value) else {
                return Ok(());
            };
            for r in graph.positions(n).into_iter().filter(|&r| sol.reached[r]) {
                for y in after.iter().filter_map(|y| pos(&y.value)) {
                    for q in graph.positions(y) {
                        if sol.entry[r].contains(q) {
                            continue;
                        }
                        let what = format!(
                            "a run may reach `{}` before `{}` has been executed",
                            reach.value,
                            shape.id(y)
                        );
                        let mut swaps = graph.swap_chain(y, q);
                        swaps.extend(graph.swap_chain(n, r));
                        return Err(witness(
                            graph,
                            sol,
                            seeds,
                            Some(q),
                            plain,
                            head(what, swaps),
                            |v| v == r,
                        ));
                    }
                }
            }
            Ok(())
        }
        GuaranteeRule::AlwaysVisit(ids) => {
            let ends: Vec<usize> = sol
                .ends
                .iter()
                .copied()
                .filter(|&e| {
                    sol.reached[e]
                        && shape.parent(e).is_none()
                        && !shape.is_terminate_end(e)
                        && !shape.is_error_end(e)
                })
                .collect();
            for y in ids.iter().filter_map(|y| pos(&y.value)) {
                for q in graph.positions(y) {
                    if let Some(&e) = ends.iter().find(|&&e| !sol.exit[e].contains(q)) {
                        let _ = e;
                        let what =
                            format!("a run may complete without executing `{}`", shape.id(y));
                        let swaps = graph.swap_chain(y, q);
                        return Err(witness(
                            graph,
                            sol,
                            seeds,
                            Some(q),
                            plain,
                            head(what, swaps),
                            |v| ends.contains(&v) && !sol.exit[v].contains(q),
                        ));
                    }
                }
            }
            Ok(())
        }
        GuaranteeRule::NeverReach(ids) => {
            for n in ids.iter().filter_map(|id| pos(&id.value)) {
                if let Some(r) = graph.positions(n).into_iter().find(|&r| sol.reached[r]) {
                    let what = format!("a run may reach `{}`", shape.id(n));
                    let swaps = graph.swap_chain(n, r);
                    return Err(witness(
                        graph,
                        sol,
                        seeds,
                        None,
                        plain,
                        head(what, swaps),
                        |v| v == r,
                    ));
                }
            }
            Ok(())
        }
    }
}

/// The counter-example: a path from a seed to a goal position along which `missing` is
/// never certainly executed (every value on the way lacks it), using as few adaptations
/// as it can (a breadth-first search where moves by adaptations cost one), and at least
/// one when `adapted` (the model alone keeps the guarantee, so a path without any would
/// not be a run: it would cross a join without its other branches).
fn witness(
    graph: &Graph,
    sol: &Solution,
    seeds: &[(usize, Bits)],
    missing: Option<usize>,
    plain: Option<&Solution>,
    head: Broken,
    goal: impl Fn(usize) -> bool + Copy,
) -> Broken {
    let Broken {
        what,
        adaptations: swaps,
        ..
    } = head;
    let n = graph.len();
    let adapted = plain.is_some();
    // States: position, and whether an adaptation was made on the way (index + n).
    let need = adapted && swaps.is_empty();
    let start_flag = usize::from(!need);
    let lacks = |bits: &Bits| missing.is_none_or(|q| !bits.contains(q));
    let mut dist = vec![usize::MAX; 2 * n];
    // How each state was reached: (previous state, edge, bypassed the previous).
    let mut back: Vec<Option<(usize, usize, bool)>> = vec![None; 2 * n];
    let mut deque: VecDeque<usize> = VecDeque::new();
    for (s, _) in seeds {
        let state = s + start_flag * n;
        if lacks(&sol.entry[*s]) && dist[state] != 0 {
            dist[state] = 0;
            deque.push_back(state);
        }
    }
    let mut found = None;
    let mut done = vec![false; 2 * n];
    while let Some(state) = deque.pop_front() {
        if std::mem::replace(&mut done[state], true) {
            continue;
        }
        let (u, flag) = (state % n, state / n);
        if flag == 1 && goal(u) {
            found = Some(state);
            break;
        }
        for &e in &graph.out[u] {
            let edge = &graph.edges[e];
            let value = if edge.from_in {
                &sol.entry[u]
            } else {
                &sol.exit[u]
            };
            if !lacks(value) || !lacks(&sol.entry[edge.to]) {
                continue;
            }
            let bypassed = !edge.from_in && graph.bypass[u].is_some() && missing == Some(u);
            let cost = usize::from(edge.cause.is_some()) + usize::from(bypassed);
            let next = edge.to + n * usize::from(flag == 1 || cost > 0);
            let d = dist[state] + cost;
            if d < dist[next] {
                dist[next] = d;
                back[next] = Some((state, e, bypassed));
                if cost == 0 {
                    deque.push_front(next);
                } else {
                    deque.push_back(next);
                }
            }
        }
    }
    if found.is_none()
        && let Some(plain) = plain
    {
        // No single token's path needs an adaptation: the one that breaks the guarantee
        // acts on a parallel branch (the join then releases without it) or inside a
        // sub-process on the way.
        let head = Broken {
            what,
            adaptations: swaps,
            path: Vec::new(),
        };
        let mut broken = witness(graph, sol, seeds, missing, None, head, goal);
        let path: Vec<usize> = broken
            .path
            .iter()
            .filter_map(|s| graph.shape.index(&s.node))
            .collect();
        for c in elsewhere(graph, plain, &path) {
            add_cause(graph, c, &mut broken.adaptations);
        }
        return broken;
    }
    // The positions from the seed to the goal, and the link into each (edge, whether it
    // left the previous position through its bypass).
    let mut chain: Vec<(usize, Option<(usize, bool)>)> = Vec::new();
    let mut at = found;
    while let Some(state) = at {
        chain.push((state % n, back[state].map(|(_, e, b)| (e, b))));
        at = back[state].map(|l| l.0);
        if chain.len() > 2 * n {
            break;
        }
    }
    chain.reverse();
    let mut adaptations = swaps;
    let mut path = Vec::new();
    for (i, &(v, link)) in chain.iter().enumerate() {
        let by = link
            .and_then(|(e, _)| graph.edges[e].cause)
            .map(|c| graph.causes[c].clone());
        let left_by_bypass = chain
            .get(i + 1)
            .and_then(|next| next.1)
            .is_some_and(|(_, b)| b);
        let passed = graph.bypass[v]
            .filter(|_| left_by_bypass)
            .map(|c| graph.causes[c].clone());
        let causes = link
            .and_then(|(e, _)| graph.edges[e].cause)
            .into_iter()
            .chain(graph.bypass[v].filter(|_| left_by_bypass));
        for c in causes {
            add_cause(graph, c, &mut adaptations);
        }
        path.push(Step {
            node: graph.shape.id(v).to_string(),
            by,
            passed,
        });
    }
    // A node passed by an adaptation the run makes anyway (a removal another one needs)
    // is shown passed too.
    for step in &mut path {
        if step.passed.is_none()
            && let Some(c) = graph.shape.index(&step.node).and_then(|v| graph.bypass[v])
            && adaptations.contains(&graph.causes[c])
        {
            step.passed = Some(graph.causes[c].clone());
        }
    }
    Broken {
        what,
        adaptations,
        path,
    }
}

/// Add an adaptation (after those it needs) to a counter-example's list, once.
fn add_cause(graph: &Graph, c: usize, list: &mut Vec<Adaptation>) {
    for &r in &graph.requires[c] {
        add_cause(graph, r, list);
    }
    let a = &graph.causes[c];
    if !list.contains(a) {
        list.push(a.clone());
    }
}

/// The adaptations acting off a token's path: on the parallel branches of a join it
/// crosses (leaving a branch, or entering one from outside: what lets the join release
/// without a branch), and inside the sub-processes it crosses.
fn elsewhere(graph: &Graph, plain: &Solution, path: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    for &v in path {
        if let Some(block) = plain.blocks.get(v).and_then(Option::as_ref) {
            let inside = |p: usize| p == block.split || block.region.contains(&p);
            for e in &graph.edges {
                if let Some(c) = e.cause
                    && inside(e.from) != (inside(e.to) || e.to == v)
                    && !out.contains(&c)
                {
                    out.push(c);
                }
            }
        }
        for label in graph.positions(v) {
            if !graph.shape.is_scope(label) {
                continue;
            }
            let id = graph.shape.id(label);
            for e in &graph.edges {
                if let Some(c) = e.cause
                    && (graph.shape.parent(e.from) == Some(id)
                        || graph.shape.parent(e.to) == Some(id))
                    && !out.contains(&c)
                {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// What a counter-example starts with: what happens, and the swaps that put the nodes
/// concerned where the run meets them.
fn head(what: String, swaps: Vec<Adaptation>) -> Broken {
    Broken {
        what,
        adaptations: swaps,
        path: Vec::new(),
    }
}
