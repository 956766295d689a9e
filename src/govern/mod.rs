//! Guarantees (`guarantees:` in a flow config), proven on the BPMN model under every
//! adaptation the hooks are permitted, and checked again for each adaptation in a run.
//!
//! # What is proven
//! - `reach: N, only_after: [Y…]`: whenever a run reaches N (a token enters it; a node
//!   skipped by `skip_node` is entered, a removed one is not), every Y has been executed
//!   (entered and completed, not skipped, not removed) before.
//! - `always_visit: [Y…]`: every run that completes has executed every Y (a run a hook or
//!   a terminate end event terminates does not complete, nor does a failed one).
//! - `never_reach: N`: no run reaches N.
//!
//! # How ([`graph`], [`solve`], [`proof`])
//! Gateway conditions and hook guards are ignored: every outgoing flow may be taken,
//! every hook may fire or not, each time a token crosses its flow. What each hook may do
//! is what the harness accepts from it: with a `policy`, every action
//! `action_permissions` allow, with the targets it offers (`allowed_targets`, or with
//! `allowed_targets: any` every node but start and end events; none otherwise) and the
//! tasks it may insert (`insertable_tasks`); without one, its static `action`, when
//! permitted. The adaptation graph holds every move those adaptations allow, composed in
//! any order and any number of times (several hooks in one run, a hook firing again in a
//! loop, swaps and removals that outlast the hook). A must-analysis over it computes,
//! for every position, what is certainly executed before it is entered; a guarantee holds
//! when those values say so. Over-approximating the moves keeps the proof sound (an
//! impossible move only weakens the values). Terminate ends a run, so it never breaks
//! any of these guarantees.
//!
//! Parallel joins: the native engine fires a join once every incoming flow has a token
//! or can no longer be reached by a live token (the dead-branch release). The analysis
//! takes the union of the branches only for a join paired with a split whose branches
//! provably all arrive (see [`solve`]); elsewhere, the intersection.
//!
//! # Imprecision
//! The proof may fail for a guarantee every real run keeps: conditions are not read, a
//! swap's node is assumed to be at any position of its swap class, a position a hook may
//! skip or remove counts as never executed, joins outside a clean split/join pair
//! combine by intersection, and a sub-process completes with what all its ends share.
//!
//! # At run time ([`Governance::admits`])
//! The harness asks, for each adaptation it would accept: applied to the run's live
//! model, with the nodes executed so far, can the run still reach a node too early,
//! complete without a node, or reach a forbidden one (further hooks answering
//! `continue`; each later adaptation is checked when it is made)? Nodes a hook may skip
//! do not count as executed there (the harness cannot tell them apart), and the token's
//! parallel siblings are taken to be anywhere just after a node already entered.

mod bits;
mod graph;
mod live;
mod proof;
mod shape;
mod solve;
#[cfg(test)]
mod tests;

use crate::app::{ActionSpec, FlowConfig, GuaranteeRule, HookAction};
use crate::bpmn::Process;

pub use graph::Adaptation;
pub use live::{Breach, Governance, LiveModel, Proposed};
pub use proof::{Broken, Step};

use bits::Bits;
use graph::{Graph, Offer};
use shape::Shape;

/// Prove every guarantee of `config` on `process`: one result per guarantee, in order.
/// A guarantee naming a node the model does not have (nor a hook inserts) is not
/// checked here (`validate` reports the name).
pub fn prove(config: &FlowConfig, process: &Process) -> Vec<Result<(), Broken>> {
    if config.guarantees.is_empty() {
        return Vec::new();
    }
    let shape = Shape::of(process);
    // The model alone first: a guarantee it breaks needs no adaptation to break, and one
    // it keeps is broken only by a run that adapts.
    let plain = Graph::build(shape.clone(), &[]);
    let plain_seeds = roots(&plain);
    let plain_sol = solve::solve(&plain, &plain_seeds);
    let offers = offers(config, &shape);
    let graph = Graph::build(shape, &offers);
    let seeds = roots(&graph);
    let sol = solve::solve(&graph, &seeds);
    config
        .guarantees
        .iter()
        .map(|g| {
            proof::check(&plain, &plain_sol, &plain_seeds, &g.rule, None)?;
            proof::check(&graph, &sol, &seeds, &g.rule, Some(&plain_sol))
        })
        .collect()
}

/// Where runs start, with nothing executed.
fn roots(graph: &Graph) -> Vec<(usize, Bits)> {
    graph
        .shape
        .start_nodes(None)
        .into_iter()
        .map(|p| (p, Bits::empty(graph.len())))
        .collect()
}

/// What each enabled hook may do, as the harness accepts it.
fn offers(config: &FlowConfig, shape: &Shape) -> Vec<Offer> {
    let allows = |a: HookAction| config.permissions.allows(a);
    let mut out = Vec::new();
    for hook in config.hooks.iter().filter(|h| h.enabled) {
        let Some(f) = hook
            .location
            .as_ref()
            .and_then(|l| shape.flow_index(&l.value))
        else {
            continue;
        };
        let scope = shape.flow_scope(f);
        let target = shape.flows[f].target;
        let in_scope = |p: usize| shape.parent(p) == scope;
        let mut offer = Offer {
            hook: hook.id.value.clone(),
            flow: f,
            ..Offer::default()
        };
        if hook.policy.is_some() {
            let any = hook.any_target.is_some();
            let targets: Vec<usize> = if any {
                (0..shape.len())
                    .filter(|&p| !shape.kind(p).is_start_event() && !shape.kind(p).is_end_event())
                    .collect()
            } else {
                hook.allowed_targets
                    .iter()
                    .filter_map(|t| shape.index(&t.value))
                    .collect()
            };
            offer.skip_node = allows(HookAction::SkipNode);
            if allows(HookAction::SkipTo) {
                offer.skip_to = targets
                    .iter()
                    .copied()
                    .filter(|&x| in_scope(x) && shape.is_enterable(x) && !(any && x == target))
                    .collect();
            }
            let activities: Vec<usize> = targets
                .iter()
                .copied()
                .filter(|&x| shape.is_activity(x))
                .collect();
            if allows(HookAction::RemoveNode) {
                offer.remove = activities.clone();
            }
            if allows(HookAction::SwapNodes) {
                offer.swap = swap_groups(shape, &activities);
            }
            if allows(HookAction::AddNode) {
                offer.add = hook
                    .insertable_tasks
                    .iter()
                    .map(|t| t.id.value.clone())
                    .collect();
            }
        } else if let Some(action) = &hook.action
            && allows(action.value.action())
        {
            match &action.value {
                ActionSpec::SkipNode => offer.skip_node = true,
                ActionSpec::SkipTo(t) => {
                    offer.skip_to = shape
                        .index(&t.value)
                        .filter(|&x| in_scope(x) && shape.is_enterable(x))
                        .into_iter()
                        .collect();
                }
                ActionSpec::RemoveNode(t) => {
                    offer.remove = shape
                        .index(&t.value)
                        .filter(|&x| shape.is_activity(x))
                        .into_iter()
                        .collect();
                }
                ActionSpec::SwapNodes(a, b) => {
                    let pair: Vec<usize> = [a, b]
                        .iter()
                        .filter_map(|x| shape.index(&x.value))
                        .filter(|&x| shape.is_activity(x))
                        .collect();
                    offer.swap = swap_groups(shape, &pair);
                }
                ActionSpec::AddNode(task) => offer.add = vec![task.id.value.clone()],
                ActionSpec::Continue | ActionSpec::Terminate(_) => {}
            }
        }
        out.push(offer);
    }
    out
}

/// The activities any two of which may be swapped: one group per scope (the engine swaps
/// two activities of one scope only).
fn swap_groups(shape: &Shape, activities: &[usize]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
    for &a in activities {
        let scope = shape.parent(a);
        match groups.iter_mut().find(|g| g.0 == scope) {
            Some(g) if !g.1.contains(&a) => g.1.push(a),
            Some(_) => {}
            None => groups.push((scope, vec![a])),
        }
    }
    groups
        .into_iter()
        .map(|g| g.1)
        .filter(|g| g.len() >= 2)
        .collect()
}

/// The rule's node ids the model (or a hook's insertable tasks) does not know.
pub fn unknown_names<'a>(
    config: &FlowConfig,
    process: &Process,
    rule: &'a GuaranteeRule,
) -> Vec<&'a crate::app::Located<String>> {
    rule.names()
        .into_iter()
        .filter(|id| process.node(&id.value).is_none() && !insertable(config, &id.value))
        .collect()
}

/// Whether some hook may insert a task with this id.
pub fn insertable(config: &FlowConfig, id: &str) -> bool {
    config.hooks.iter().any(|h| {
        h.insertable_tasks.iter().any(|t| t.id.value == id)
            || matches!(&h.action, Some(a) if matches!(&a.value, ActionSpec::AddNode(t) if t.id.value == id))
    })
}
