//! Policy rules: every rule of a hook or gateway policy parses; a hook rule's action is
//! permitted and names nodes of the model; a gateway rule takes outgoing flows of its
//! gateway; a rule's condition reads variables that something sets (docs/policies.md).

use std::collections::BTreeSet;

use crate::app::FlowConfig;
use crate::app::rules::{RuleAction, parse_rules};
use crate::bpmn::ProcessIndex;
use crate::diag::{Diagnostic, did_you_mean, name_list, with_article};
use crate::source::{SourceFile, Span, line_starts};
use crate::vocab::{HookAction, VarKind};

/// What a policy decides for.
enum Owner<'a> {
    Hook(&'a crate::app::HookConfig),
    Gateway(&'a str),
}

pub fn check(config: &FlowConfig, main: Option<&ProcessIndex>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(process) = main else {
        return out;
    };
    let mut owners: Vec<(&str, Owner)> = Vec::new();
    for h in &config.hooks {
        if let Some(p) = &h.policy {
            owners.push((p.value.as_str(), Owner::Hook(h)));
        }
    }
    for g in &config.gateways {
        if let Some(p) = &g.policy {
            owners.push((p.value.as_str(), Owner::Gateway(g.id.as_str())));
        }
    }
    // What the rules' conditions read (variable, where), and what their `set`s write.
    let mut reads: Vec<(String, SourceFile, Span)> = Vec::new();
    let mut set_by_rules: BTreeSet<String> = BTreeSet::new();
    for (written, owner) in owners {
        let path = config.resolve(written);
        let Ok(text) = crate::source::read_text(&path) else {
            continue; // refs reports a missing policy
        };
        let file = SourceFile::new(path, text.clone());
        let starts = line_starts(&text);
        let span_of = |line: usize| {
            let start = starts.get(line - 1).copied().unwrap_or(text.len());
            let end = starts.get(line).copied().unwrap_or(text.len());
            let len = text[start..end].trim_end().len();
            Span::new(start, len)
        };
        let rules = match parse_rules(&text) {
            Ok(rules) => rules,
            Err(errors) => {
                for e in errors {
                    out.push(
                        Diagnostic::error(
                            "rules::syntax",
                            format!("bad policy rule: {}", e.message),
                        )
                        .at(
                            &file,
                            span_of(e.line),
                            "this rule".to_string(),
                        ),
                    );
                }
                continue;
            }
        };
        for rule in &rules {
            for var in rule.condition.variables() {
                let root = var.split('.').next().unwrap_or(&var).to_string();
                reads.push((root, file.clone(), span_of(rule.line)));
            }
            set_by_rules.extend(rule.set.keys().cloned());
            let at =
                |d: Diagnostic, label: &str| d.at(&file, span_of(rule.line), label.to_string());
            match (&owner, &rule.action) {
                (Owner::Hook(hook), RuleAction::Hook { action, args }) => {
                    let what = format!("hook `{}`", hook.id.value);
                    if !config.permissions.allows(*action) {
                        out.push(
                            at(
                                Diagnostic::error(
                                    "rules::denied_action",
                                    format!("a rule of {what} takes `{action}`, which `action_permissions` deny"),
                                ),
                                "denied by action_permissions",
                            )
                            .with_help(format!("permit `{action}`, or change the rule")),
                        );
                    }
                    for target in rule.node_targets() {
                        if let Some((code, message, label, help)) =
                            target_problem(hook, process, *action, target)
                        {
                            let d = at(
                                Diagnostic::error(code, format!("a rule of {what} {message}")),
                                label,
                            );
                            out.push(match help {
                                Some(help) => d.with_help(help),
                                None => d,
                            });
                        }
                    }
                    for (var, value) in &rule.set {
                        if let Some((message, help)) = not_settable(config, hook, var, value) {
                            out.push(
                                at(
                                    Diagnostic::error(
                                        "rules::not_settable",
                                        format!("a rule of {what} {message}"),
                                    ),
                                    "the run refuses this `set`",
                                )
                                .with_help(help),
                            );
                        }
                    }
                    if *action == HookAction::AddNode
                        && let Some(id) = args.first()
                        && !hook.insertable_tasks.iter().any(|t| &t.id.value == id)
                    {
                        out.push(at(
                            Diagnostic::error(
                                "rules::unknown_target",
                                format!("a rule of {what} adds `{id}`, which is not one of its `insertable_tasks`"),
                            ),
                            "not insertable",
                        ));
                    }
                }
                (Owner::Gateway(id), RuleAction::Take(flows)) => {
                    for flow in flows {
                        if !process.outgoing(id).iter().any(|f| &f.id == flow) {
                            out.push(at(
                                Diagnostic::error(
                                    "rules::not_outgoing",
                                    format!("a rule of gateway `{id}` takes `{flow}`, which is not one of its outgoing flows"),
                                ),
                                "not an outgoing flow",
                            ));
                        }
                    }
                }
                (Owner::Hook(_), RuleAction::Take(_)) => out.push(at(
                    Diagnostic::error("rules::syntax", "a hook's rule cannot `take` a flow"),
                    "write a hook action",
                )),
                (Owner::Gateway(_), RuleAction::Hook { .. }) => out.push(at(
                    Diagnostic::error("rules::syntax", "a gateway's rule must `take` a flow"),
                    "write `take <flow id>`",
                )),
            }
        }
    }
    out.extend(unset_variables(config, &reads, &set_by_rules));
    out
}

/// Why the run would refuse a hook rule's `set <var> = <value>`, as the harness refuses
/// any answer's `state_updates` ([`crate::vocab::check_state_updates`]): a hook sets only
/// the variables of its `may_set`, each with a value of its declared default's type.
fn not_settable(
    config: &FlowConfig,
    hook: &crate::app::HookConfig,
    var: &str,
    value: &serde_json::Value,
) -> Option<(String, String)> {
    let may_set: Vec<&str> = hook.may_set.iter().map(|v| v.value.as_str()).collect();
    let Some(name) = may_set.iter().find(|n| **n == var) else {
        let help = match did_you_mean(var, may_set.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => {
                format!("add `{var}` to the hook's `may_set` (and declare it under `variables:`)")
            }
        };
        return Some((format!("sets `{var}`, which is not in its `may_set`"), help));
    };
    let kind = config
        .variable(name)
        .map_or(VarKind::Any, |v| VarKind::of(&v.default));
    if kind.admits(value) {
        return None;
    }
    Some((
        format!(
            "sets `{var}` to {value}, but `{var}` holds {}",
            kind.described()
        ),
        format!(
            "its default under `variables:` makes it {}",
            kind.described()
        ),
    ))
}

/// A rule whose condition reads a variable that nothing sets: not declared under
/// `variables:`, written by no task's `output_mapping`, in no hook's `may_set` and set by
/// no rule. Its condition is UNKNOWN in every run, so the rule never decides (a misspelt
/// name, most of the time). One warning per variable.
fn unset_variables(
    config: &FlowConfig,
    reads: &[(String, SourceFile, Span)],
    set_by_rules: &BTreeSet<String>,
) -> Vec<Diagnostic> {
    if reads.is_empty() {
        // No rule reads a variable: nothing to look up (the set below holds every
        // variable and mapping of the config).
        return Vec::new();
    }
    let mut set: BTreeSet<&str> = BTreeSet::new();
    set.extend(config.variables.iter().map(|v| v.name.as_str()));
    set.extend(
        (config.tasks.iter()).flat_map(|t| t.output_mapping.iter().map(|(_, v)| v.as_str())),
    );
    set.extend((config.hooks.iter()).flat_map(|h| h.may_set.iter().map(|v| v.value.as_str())));
    set.extend(set_by_rules.iter().map(String::as_str));
    let mut reported: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::new();
    for (var, file, span) in reads {
        if set.contains(var.as_str()) || !reported.insert(var.as_str()) {
            continue;
        }
        let help = match did_you_mean(var, set.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("declare it with a default: `variables: {{{var}: ...}}`"),
        };
        out.push(
            Diagnostic::warning(
                "rules::unset_variable",
                format!(
                    "a rule reads `{var}`, which nothing sets (not under `variables:`, no task's \
                     `output_mapping`, no hook's `may_set`, no rule's `set`): the rule never decides"
                ),
            )
            .at(file, *span, format!("`{var}` is never set"))
            .with_help(help),
        );
    }
    out
}

/// Why a hook rule's `action target` would be refused at run time, as the hook check
/// there refuses it ([`crate::harness`]): the node must exist, be one the hook may name
/// (`allowed_targets`, or with `allowed_targets: any` any node but start and end
/// events), never a start event for a skip, never the hooked flow's own target (that is
/// `continue`), and an activity for remove_node / swap_nodes.
fn target_problem(
    hook: &crate::app::HookConfig,
    process: &ProcessIndex,
    action: HookAction,
    target: &str,
) -> Option<(&'static str, String, &'static str, Option<String>)> {
    let Some(node) = process.node(target) else {
        let nodes = process.process().nodes.iter().map(|n| n.id.as_str());
        let help = did_you_mean(target, nodes).map(|s| format!("did you mean `{s}`?"));
        return Some((
            "rules::unknown_target",
            format!("names `{target}`, which is not a node of the model"),
            "unknown node",
            help,
        ));
    };
    let kind = with_article(node.kind.tag());
    if action == HookAction::SkipTo && node.kind.is_start_event() {
        return Some((
            "rules::bad_target",
            format!("skips to `{target}`, {kind}: a run cannot restart"),
            "a start event",
            None,
        ));
    }
    if matches!(action, HookAction::RemoveNode | HookAction::SwapNodes) && !node.kind.is_activity()
    {
        return Some((
            "rules::bad_target",
            format!(
                "takes `{action}` on `{target}`, {kind}: only activities can be removed or swapped"
            ),
            "not an activity",
            None,
        ));
    }
    if hook.any_target.is_some() {
        if node.kind.is_start_event() || node.kind.is_end_event() {
            return Some((
                "rules::bad_target",
                format!("names `{target}`, {kind}, which `allowed_targets: any` never offers"),
                "not offered",
                Some(format!(
                    "list `{target}` under the hook's `allowed_targets` to allow it"
                )),
            ));
        }
    } else if !hook.allowed_targets.iter().any(|t| t.value == target) {
        let allowed: Vec<&str> = hook
            .allowed_targets
            .iter()
            .map(|t| t.value.as_str())
            .collect();
        let help = match did_you_mean(target, allowed.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None if allowed.is_empty() => format!(
                "the hook lists no `allowed_targets`; add `allowed_targets: [{target}]` to it"
            ),
            None => format!(
                "its allowed targets are {}; add `{target}` to them to allow it",
                name_list(&allowed, 8)
            ),
        };
        return Some((
            "rules::bad_target",
            format!("names `{target}`, which is not one of its `allowed_targets`"),
            "not an allowed target",
            Some(help),
        ));
    }
    if action == HookAction::SkipTo
        && let Some(location) = &hook.location
        && process
            .flow(&location.value)
            .is_some_and(|f| f.target == target)
    {
        return Some((
            "rules::bad_target",
            format!(
                "skips to `{target}`, where its flow `{}` goes anyway",
                location.value
            ),
            "the flow's own target",
            Some("write `continue` instead".to_string()),
        ));
    }
    None
}
