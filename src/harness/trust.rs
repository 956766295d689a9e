//! Provenance: which data a model's judgement may have been steered by.
//!
//! Trusted: the config's variable defaults, conditions, policy rules, scripted and human
//! answers. Untrusted: run inputs (`--var`, `--input`, a scenario's inputs, the variables
//! a run is started with over MCP or A2A) and whatever a model derived from them. A consequential
//! action a model proposes while its context held untrusted data is applied only as
//! `action_permissions.on_untrusted` says (`confirm` by default: a person confirms).
//!
//! The engine records provenance ([`ControlPointContext::untrusted`]): the run's inputs,
//! then, for each variable an answer writes, the [`Taint`] the harness returned with it
//! (none: trusted again, as when a person overwrites a value). The harness judges: a
//! model's answer is untrusted when its context held untrusted data ([`taint`]), and a
//! consequential proposal made on it needs `on_untrusted`. Every variable is in a model's
//! context (the prompt shows them all, and a task's tools may read any), so the untrusted
//! ones it held are the context's.
//!
//! An engine that records no provenance (an external engine with contexts of its own)
//! sends none. The harness then falls back on an over-approximation: every variable whose
//! value differs from its declared default (or that has none) counts as untrusted, so a
//! value a person set counts too; it never under-approximates, since a value equal to its
//! trusted default cannot carry anything the default does not.

use crate::app::FlowConfig;
use crate::bridge::{ControlPointContext, Taint, Variables};
use crate::vocab::{Decider, HookAction};

/// The untrusted variables `ctx` holds, with where each came from, sorted by name: the
/// engine's record, or (when it keeps none) the over-approximation of the module doc.
pub(crate) fn untrusted(config: &FlowConfig, ctx: &ControlPointContext) -> Vec<(String, Taint)> {
    match &ctx.untrusted {
        Some(record) => record
            .iter()
            .filter(|(name, _)| ctx.variables.contains_key(*name))
            .map(|(name, taint)| (name.clone(), taint.clone()))
            .collect(),
        None => over_approximated(config, &ctx.variables),
    }
}

/// Without a provenance record: the variables whose value differs from their declared
/// default (or that have none), sorted.
fn over_approximated(config: &FlowConfig, variables: &Variables) -> Vec<(String, Taint)> {
    let mut out: Vec<(String, Taint)> = variables
        .iter()
        .filter(|(name, value)| {
            config
                .variable(name)
                .is_none_or(|declared| &declared.default != *value)
        })
        .map(|(name, _)| {
            let taint = Taint::input("differs from its default; the engine records no provenance");
            (name.clone(), taint)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The taint of what `decided_by` answered at `what` (`model output on task `X``, ...)
/// while its context held `untrusted`: a model's answer derived from untrusted data, or
/// at a control point that brings outside data in (`external`: a task's
/// `untrusted_outputs`), is untrusted; anything else (no untrusted data, or a condition,
/// rule, static action, scripted answer or person) is not.
pub(crate) fn taint(
    decided_by: Decider,
    untrusted: &[(String, Taint)],
    external: bool,
    what: impl FnOnce() -> String,
) -> Option<Taint> {
    (decided_by == Decider::Model && (external || !untrusted.is_empty())).then(|| Taint {
        source: what(),
        derived_from: untrusted.iter().map(|(name, _)| name.clone()).collect(),
    })
}

/// The hook actions that change what the run does or skips: a model proposing one on
/// untrusted data needs `on_untrusted`. (`continue` and `swap_nodes` run every step.)
pub(crate) fn consequential(action: HookAction) -> bool {
    matches!(
        action,
        HookAction::Terminate
            | HookAction::SkipTo
            | HookAction::SkipNode
            | HookAction::RemoveNode
            | HookAction::AddNode
    )
}

/// The untrusted variables for a message, with where each came from: the first few,
/// then how many more (`` `applicant_name` (from --var), `score` (model output on task
/// `Check credit`, derived from applicant_name) ``).
pub(crate) fn listed(untrusted: &[(String, Taint)]) -> String {
    const SHOWN: usize = 5;
    let mut text = untrusted
        .iter()
        .take(SHOWN)
        .map(|(name, taint)| format!("`{name}` ({taint})"))
        .collect::<Vec<_>>()
        .join(", ");
    if untrusted.len() > SHOWN {
        text.push_str(&format!(" and {} more", untrusted.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::HookAction;

    #[test]
    fn only_run_changing_actions_are_consequential() {
        let yes: Vec<HookAction> = HookAction::ALL
            .into_iter()
            .filter(|a| consequential(*a))
            .collect();
        assert_eq!(
            yes,
            vec![
                HookAction::SkipNode,
                HookAction::SkipTo,
                HookAction::Terminate,
                HookAction::RemoveNode,
                HookAction::AddNode
            ]
        );
    }
}
