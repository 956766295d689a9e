//! Provenance: which data a model's judgement may have been steered by.
//!
//! Trusted: the config's variable defaults, conditions, policy rules, scripted and human
//! answers. Untrusted: run inputs (`--var`, `--input`, a scenario's inputs, data from
//! messages and remote agents) and whatever a model derived from them. A consequential
//! action a model proposes while its context held untrusted data is applied only as
//! `action_permissions.on_untrusted` says (`confirm` by default: a person confirms).
//!
//! The harness sees the variables, not where each came from, so it counts as untrusted
//! every variable whose value differs from its declared default (or that has none): run
//! inputs and everything set since. That over-approximates (a value a person set counts
//! too) and never under-approximates: a value equal to its trusted default cannot carry
//! anything the default does not.

use crate::app::FlowConfig;
use crate::bridge::Variables;
use crate::vocab::HookAction;

/// The variables of `variables` that may carry untrusted text, sorted.
pub(crate) fn untrusted(config: &FlowConfig, variables: &Variables) -> Vec<String> {
    let mut out: Vec<String> = variables
        .iter()
        .filter(|(name, value)| {
            config
                .variable(name)
                .is_none_or(|declared| &declared.default != *value)
        })
        .map(|(name, _)| name.clone())
        .collect();
    out.sort();
    out
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

/// `names` for a message: the first few, then how many more.
pub(crate) fn listed(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
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
