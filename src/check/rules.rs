//! Policy rules: every rule of a hook or gateway policy parses; a hook rule's action is
//! permitted and names nodes of the model; a gateway rule takes outgoing flows of its
//! gateway.

use crate::app::FlowConfig;
use crate::bpmn::ProcessIndex;
use crate::diag::Diagnostic;
use crate::reason::rules::{RuleAction, parse_rules};
use crate::source::{SourceFile, Span, line_starts};
use crate::vocab::HookAction;

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
                        if process.node(target).is_none() {
                            out.push(at(
                                Diagnostic::error(
                                    "rules::unknown_target",
                                    format!("a rule of {what} names `{target}`, which is not a node of the model"),
                                ),
                                "unknown node",
                            ));
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
    out
}
