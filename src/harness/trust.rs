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
            .filter(|(name, _)| ctx.variables.contains_key(name))
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
    // A remote agent's outputs come from outside the run, whatever it was sent.
    let remote = decided_by == Decider::Remote;
    (remote || decided_by == Decider::Model && (external || !untrusted.is_empty())).then(|| Taint {
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
    use crate::bridge::Untrusted;
    use crate::vocab::{HookAction, record_provenance};
    use serde_json::json;
    use std::sync::Arc;

    fn ctx(vars: serde_json::Value, record: Option<Untrusted>) -> ControlPointContext {
        ControlPointContext {
            variables: Arc::new(vars.as_object().cloned().unwrap()).into(),
            untrusted: record.map(Arc::new),
            ..ControlPointContext::default()
        }
    }

    fn config() -> FlowConfig {
        let yaml = "flow:\n  id: t\n  bpmn_file: t.bpmn\nvariables:\n  name: \"\"\n  score: 0.0\n";
        let source = crate::source::SourceFile::new("t.yaml", yaml);
        crate::app::decode::decode(&source)
            .0
            .expect("the test config reads")
    }

    #[test]
    fn taint_propagates_through_models_only() {
        let input = vec![("name".to_string(), Taint::input("from --var"))];
        let what = || "model output on task `T`".to_string();
        let t = taint(Decider::Model, &input, false, what).unwrap();
        assert_eq!(t.derived_from, vec!["name".to_string()]);
        assert_eq!(t.to_string(), "model output on task `T`, derived from name");
        // Nothing untrusted in the context: a model's answer is trusted...
        assert_eq!(taint(Decider::Model, &[], false, what), None);
        // ...unless the task brings outside data in.
        let outside = taint(Decider::Model, &[], true, what).unwrap();
        assert!(outside.derived_from.is_empty());
        // Whoever else answers is trusted, whatever the context held.
        for d in [
            Decider::Human,
            Decider::Scripted,
            Decider::Rule,
            Decider::Condition,
            Decider::Static,
            Decider::Timeout,
        ] {
            assert_eq!(taint(d, &input, true, what), None, "{d:?}");
        }
    }

    #[test]
    fn recorded_provenance_propagates_and_a_trusted_overwrite_clears_it() {
        let mut record = Untrusted::new();
        record_provenance(
            &mut record,
            [&"name".to_string()],
            Some(&Taint::input("from --var")),
        );
        let derived = Taint {
            source: "model output on task `T`".into(),
            derived_from: vec!["name".into()],
        };
        record_provenance(&mut record, [&"score".to_string()], Some(&derived));
        assert_eq!(record.len(), 2);
        // A person (no taint) overwrites `name`: trusted again; `score` keeps its taint.
        record_provenance(&mut record, [&"name".to_string()], None);
        assert_eq!(record.keys().collect::<Vec<_>>(), ["score"]);
        assert_eq!(record["score"], derived);
    }

    #[test]
    fn the_engines_record_decides_and_its_absence_over_approximates() {
        let config = config();
        let vars = json!({"name": "Eve", "score": 0.0, "extra": 1});
        // The record: exactly what it says (a variable it names that is not set is left out).
        let record = Untrusted::from([
            ("score".to_string(), Taint::input("from --input")),
            ("gone".to_string(), Taint::input("from --var")),
        ]);
        let got = untrusted(&config, &ctx(vars.clone(), Some(record)));
        assert_eq!(
            got,
            vec![("score".to_string(), Taint::input("from --input"))]
        );
        assert!(untrusted(&config, &ctx(vars.clone(), Some(Untrusted::new()))).is_empty());
        // No record: every value that differs from its default, or has none.
        let names: Vec<String> = untrusted(&config, &ctx(vars, None))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["extra", "name"]);
    }

    #[test]
    fn a_message_names_each_untrusted_variable_and_its_origin() {
        let list: Vec<(String, Taint)> = (0..7)
            .map(|i| (format!("v{i}"), Taint::input("from --var")))
            .collect();
        assert_eq!(listed(&list[..1]), "`v0` (from --var)");
        assert!(listed(&list).ends_with("`v4` (from --var) and 2 more"));
    }

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
