//! Guarantees at run time: whether one adaptation, applied to a run's live model with
//! the nodes the run has executed, leaves a way to break a guarantee.

use std::collections::BTreeSet;

use super::bits::Bits;
use super::graph::{Graph, Offer};
use super::shape::Shape;
use super::{offers, proof, solve};
use crate::app::{FlowConfig, GuaranteeRule};
use crate::bpmn::Process;

/// An app's guarantees, ready to check adaptations against in its runs.
#[derive(Debug, Clone)]
pub struct Governance {
    guarantees: Vec<(String, GuaranteeRule)>,
    /// Nodes some hook may skip or remove: a run's list of entered nodes does not say
    /// whether they ran, so they never count as executed here.
    unsure: BTreeSet<String>,
}

/// A run's live model: its nodes and flows `(id, source, target)`. Empty: the app's
/// model as it is.
#[derive(Debug, Clone, Default)]
pub struct LiveModel<'a> {
    pub nodes: Vec<&'a str>,
    pub flows: Vec<(&'a str, &'a str, &'a str)>,
}

/// The adaptation a hook asks for on its flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proposed<'a> {
    SkipNode,
    SkipTo(&'a str),
    Swap(&'a str, &'a str),
    Remove(&'a str),
    Add(&'a str),
}

/// Why an adaptation is refused: the guarantee it would break, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breach {
    pub guarantee: String,
    pub why: String,
}

impl Governance {
    /// `None` when the config declares no guarantee.
    pub fn new(config: &FlowConfig, process: &Process) -> Option<Self> {
        if config.guarantees.is_empty() {
            return None;
        }
        let shape = Shape::of(process);
        let offers = offers(config, &shape);
        let graph = Graph::build(shape, &offers);
        let unsure = (0..graph.len())
            .filter(|&p| graph.bypass[p].is_some())
            .map(|p| graph.shape.id(p).to_string())
            .collect();
        Some(Governance {
            guarantees: config
                .guarantees
                .iter()
                .map(|g| (g.id.value.clone(), g.rule.clone()))
                .collect(),
            unsure,
        })
    }

    /// Whether the run of `process` (the app's model, which this was built for) may make
    /// `proposed` on `flow` now: applied to `live`, with the nodes `executed` so far (entered, in any order), no guarantee can break any more
    /// with every later hook answering `continue` (a later adaptation is checked when it
    /// is made). The token goes where the action sends it; other tokens may be just
    /// after any node entered.
    pub fn admits(
        &self,
        process: &Process,
        live: &LiveModel,
        executed: &[String],
        flow: &str,
        proposed: Proposed,
    ) -> Result<(), Breach> {
        let mut shape = if live.nodes.is_empty() {
            Shape::of(process)
        } else {
            Shape::live(process, live.nodes.iter().copied(), &live.flows)
        };
        let Some(mut f) = shape.flow_index(flow) else {
            return Ok(());
        };
        let pos = |shape: &Shape, id: &str| shape.index(id);
        match proposed {
            Proposed::Swap(a, b) => {
                if let (Some(a), Some(b)) = (pos(&shape, a), pos(&shape, b)) {
                    shape.swap(a, b);
                }
            }
            Proposed::Remove(x) => {
                if let Some(x) = pos(&shape, x) {
                    shape.remove(x);
                }
            }
            Proposed::Add(t) if pos(&shape, t).is_none() => {
                shape.insert(f, t);
            }
            _ => {}
        }
        let Some(g) = shape.flow_index(flow) else {
            return Ok(());
        };
        f = g;
        let token = match proposed {
            Proposed::SkipTo(x) => pos(&shape, x),
            _ => Some(shape.flows[f].target),
        };
        let skip = Offer {
            hook: String::new(),
            flow: f,
            skip_node: proposed == Proposed::SkipNode,
            ..Offer::default()
        };
        let graph = Graph::build(shape, &[skip]);
        let shape = &graph.shape;
        let n = graph.len();
        let mut done = Bits::empty(n);
        let entered: BTreeSet<&str> = executed.iter().map(String::as_str).collect();
        for id in &entered {
            if let Some(p) = shape.index(id)
                && !self.unsure.contains(*id)
            {
                done.insert(p);
            }
        }
        let mut at: BTreeSet<usize> = token.into_iter().collect();
        for id in &entered {
            let Some(p) = shape.index(id) else { continue };
            for &g in &shape.out[p] {
                let t = shape.flows[g].target;
                if !entered.contains(shape.id(t)) {
                    at.insert(t);
                }
            }
        }
        let seeds: Vec<(usize, Bits)> = at.into_iter().map(|p| (p, done.clone())).collect();
        let jumped: Vec<usize> = match proposed {
            Proposed::SkipTo(_) => token.into_iter().collect(),
            _ => Vec::new(),
        };
        let sol = solve::solve_from(&graph, &seeds, &shape.start_nodes(None), &jumped);
        for (id, rule) in &self.guarantees {
            if let Err(broken) = proof::check(&graph, &sol, &seeds, rule, None) {
                return Err(Breach {
                    guarantee: id.clone(),
                    why: format!("{}: {}", broken.what, broken.path_text()),
                });
            }
        }
        Ok(())
    }
}
