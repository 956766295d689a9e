//! Hooks and `action_permissions`: each hook sits on a real sequence flow, one hook per
//! flow; a static action is permitted and names real, suitable nodes; the targets and
//! tasks offered to a reasoned hook exist; no action is both permitted and prohibited.

use std::collections::BTreeMap;

use crate::app::{ActionSpec, FlowConfig, HookAction, HookConfig, Located, TaskSpec};
use crate::bpmn::{Document, NodeKind, Process};
use crate::diag::{Diagnostic, did_you_mean, name_list};

use super::refs::{Want, resolve};

pub fn check(config: &FlowConfig, doc: &Document) -> Vec<Diagnostic> {
    let mut out = permissions(config);
    let Some(process) = doc.main_process() else {
        return out;
    };
    let src = &config.source;

    let mut ids: BTreeMap<&str, &Located<String>> = BTreeMap::new();
    let mut locations: BTreeMap<&str, &Located<String>> = BTreeMap::new();
    for hook in &config.hooks {
        let what = format!("hook `{}`", hook.id.value);
        if let Some(first) = ids.insert(hook.id.as_str(), &hook.id)
            && first.span != hook.id.span
        {
            out.push(
                Diagnostic::error(
                    "hook::duplicate",
                    format!("two hooks are named `{}`", hook.id.value),
                )
                .at(src, hook.id.span, "named again here".to_string())
                .also(first.span, "first named here"),
            );
        }
        if let Some(loc) = &hook.location {
            if let Some(first) = locations.insert(loc.as_str(), loc) {
                out.push(
                    Diagnostic::error(
                        "hook::duplicate",
                        format!("two hooks sit on flow `{}`", loc.value),
                    )
                    .at(src, loc.span, "second hook on this flow".to_string())
                    .also(first.span, "first hook on this flow")
                    .with_help("one hook per flow: merge their policies into one"),
                );
            }
            out.extend(resolve(
                config,
                doc,
                process,
                loc,
                Want::Flow,
                &format!("the location {{id}} of {what}"),
            ));
        }

        match (&hook.policy, &hook.action) {
            (None, None) if hook.enabled => out.push(
                Diagnostic::warning(
                    "hook::inert",
                    format!("{what} has neither a `policy` nor an `action`; it always continues"),
                )
                .at(src, hook.id.span, "does nothing".to_string())
                .with_help(
                    "add `policy:` to reason about the flow, or `action:` for a fixed adaptation",
                ),
            ),
            (Some(_), Some(action)) => out.push(
                Diagnostic::warning(
                    "hook::ignored_action",
                    format!("{what} has a policy, so its static `action` is ignored"),
                )
                .at(src, action.span, "ignored: the policy decides".to_string()),
            ),
            _ => {}
        }

        if let Some(action) = &hook.action {
            let kind = action.value.action();
            if !config.permissions.allows(kind) {
                out.push(
                    Diagnostic::error(
                        "hook::denied_action",
                        format!("{what} always takes `{kind}`, which `action_permissions` deny"),
                    )
                    .at(src, action.span, "denied by action_permissions".to_string())
                    .with_help(format!("permit `{kind}`, or choose another action")),
                );
            }
            out.extend(static_action(config, doc, process, &action.value, &what));
        }

        for target in &hook.allowed_targets {
            out.extend(resolve(
                config,
                doc,
                process,
                target,
                Want::Node,
                &format!("the allowed target {{id}} of {what}"),
            ));
        }
        out.extend(offers(config, process, hook, &what));
        for name in &hook.may_set {
            if config.variable(&name.value).is_none() {
                let declared: Vec<&str> =
                    config.variables.iter().map(|v| v.name.as_str()).collect();
                let help = did_you_mean(&name.value, declared.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| {
                        "declare it under `variables:` with a default (its type is the type of \
                         the values the hook may set)"
                            .to_string()
                    });
                out.push(
                    Diagnostic::error(
                        "hook::may_set",
                        format!(
                            "{what} may set `{}`, which is not a declared variable",
                            name.value
                        ),
                    )
                    .at(src, name.span, "not declared".to_string())
                    .with_help(help),
                );
            }
        }
        if !hook.insertable_tasks.is_empty() && !config.permissions.allows(HookAction::AddNode) {
            out.push(
                Diagnostic::warning(
                    "hook::unusable",
                    format!("{what} offers tasks to insert, but `add_node` is not permitted"),
                )
                .at(src, hook.insertable_tasks[0].span, "never used".to_string()),
            );
        }
        for task in &hook.insertable_tasks {
            out.extend(new_task(config, process, task, &what));
        }
    }
    out
}

/// Safe offers: a reasoned hook whose permissions allow naming a node (skip_to,
/// remove_node, swap_nodes) but which lists no `allowed_targets` is offered none; say so,
/// and what `allowed_targets: any` would offer.
fn offers(
    config: &FlowConfig,
    process: &Process,
    hook: &HookConfig,
    what: &str,
) -> Vec<Diagnostic> {
    let naming: Vec<&str> = [
        HookAction::SkipTo,
        HookAction::RemoveNode,
        HookAction::SwapNodes,
    ]
    .into_iter()
    .filter(|a| config.permissions.allows(*a))
    .map(|a| a.as_str())
    .collect();
    if hook.policy.is_none() || !hook.enabled || naming.is_empty() || hook.targets_declared {
        return Vec::new();
    }
    let flow_target = hook
        .location
        .as_ref()
        .and_then(|l| process.flow(&l.value))
        .map(|f| f.target.as_str());
    let would: Vec<&str> = process
        .nodes
        .iter()
        .filter(|n| !n.kind.is_start_event() && !n.kind.is_end_event())
        .filter(|n| !matches!(n.kind, NodeKind::BoundaryEvent { .. }))
        .map(|n| n.id.as_str())
        .filter(|id| Some(*id) != flow_target)
        .collect();
    vec![
        Diagnostic::warning(
            "hook::no_targets",
            format!(
                "{what} may {} by permission but lists no `allowed_targets`: it is offered no \
                 node to name",
                naming.join(" / ")
            ),
        )
        .at(
            &config.source,
            hook.id.span,
            "offered no targets".to_string(),
        )
        .with_help(format!(
            "list the nodes it may name under `allowed_targets` (`allowed_targets: []` says \
             none on purpose); `allowed_targets: any` would offer every node not yet run: {}",
            name_list(&would, 8)
        )),
    ]
}

/// A static action's parameters name suitable nodes.
fn static_action(
    config: &FlowConfig,
    doc: &Document,
    process: &Process,
    action: &ActionSpec,
    what: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let src = &config.source;
    match action {
        ActionSpec::SkipTo(target) => {
            if let Some(d) = resolve(
                config,
                doc,
                process,
                target,
                Want::Node,
                &format!("the skip_to target {{id}} of {what}"),
            ) {
                out.push(d);
            } else if process
                .node(&target.value)
                .is_some_and(|n| n.kind.is_start_event())
            {
                out.push(
                    Diagnostic::error(
                        "hook::bad_target",
                        format!("{what} skips to start event `{}`", target.value),
                    )
                    .at(
                        src,
                        target.span,
                        "cannot restart the process".to_string(),
                    ),
                );
            }
        }
        ActionSpec::SwapNodes(a, b) => {
            for n in [a, b] {
                out.extend(resolve(
                    config,
                    doc,
                    process,
                    n,
                    Want::Activity,
                    &format!("the node {{id}} swapped by {what}"),
                ));
            }
            if a.value == b.value {
                out.push(
                    Diagnostic::error(
                        "hook::bad_target",
                        format!("{what} swaps `{}` with itself", a.value),
                    )
                    .at(src, b.span, "same node twice".to_string()),
                );
            }
        }
        ActionSpec::RemoveNode(target) => {
            out.extend(resolve(
                config,
                doc,
                process,
                target,
                Want::Activity,
                &format!("the node {{id}} removed by {what}"),
            ));
        }
        ActionSpec::AddNode(task) => out.extend(new_task(config, process, task, what)),
        ActionSpec::Continue | ActionSpec::SkipNode | ActionSpec::Terminate(_) => {}
    }
    out
}

/// A task a hook may insert: a fresh id; a declared agent when it names one.
fn new_task(
    config: &FlowConfig,
    process: &Process,
    task: &TaskSpec,
    what: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let src = &config.source;
    if let Some(existing) = process.node(&task.id.value) {
        let kind = match &existing.kind {
            NodeKind::Unsupported { tag } => tag.as_str(),
            k => k.tag(),
        };
        out.push(
            Diagnostic::error(
                "hook::id_taken",
                format!("{what} would insert task `{}`, but the model already has a {kind} with that id", task.id.value),
            )
            .at(src, task.id.span, "id already used".to_string())
            .with_help("give the inserted task an id of its own"),
        );
    }
    if let Some(agent) = &task.agent
        && config.remote_agent(&agent.value).is_none()
    {
        out.push(
                Diagnostic::error(
                    "ref::unknown_agent",
                    format!("{what} inserts a task for remote agent `{}`, which is not declared under `remote_agents:`", agent.value),
                )
                .at(src, agent.span, "undeclared remote agent".to_string()),
            );
    }
    out
}

/// No action both permitted and prohibited; no action listed twice.
fn permissions(config: &FlowConfig) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let p = &config.permissions;
    let src = &config.source;
    for denied in &p.prohibited {
        if let Some(allowed) = p.permitted.iter().find(|a| a.value == denied.value) {
            out.push(
                Diagnostic::error(
                    "hook::permission_conflict",
                    format!("`{}` is both permitted and prohibited", denied.value),
                )
                .at(src, denied.span, "prohibited here".to_string())
                .also(allowed.span, "permitted here")
                .with_help("keep it in one list only"),
            );
        }
    }
    for list in [&p.permitted, &p.prohibited] {
        for (i, a) in list.iter().enumerate() {
            if let Some(first) = list[..i].iter().find(|b| b.value == a.value) {
                out.push(
                    Diagnostic::warning(
                        "hook::permission_duplicate",
                        format!("`{}` is listed twice", a.value),
                    )
                    .at(src, a.span, "listed again".to_string())
                    .also(first.span, "first listed here"),
                );
            }
        }
    }
    out
}
