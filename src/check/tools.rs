//! Task agents' tools against the tool sources the config declares: every `<source>.<tool>`
//! names a declared source and (where it can be known without reaching anything: an
//! OpenAPI document, or `tools.lock.json` for an MCP server) a tool it offers; `confirm:
//! never` is an explicit opt-out and said so; settings that nothing uses are reported.
//! An entry that names no source and no built-in tool (upstream configs list tools the
//! original's agent framework knew) is ignored, with a warning.

use std::collections::BTreeMap;

use crate::app::{Confirm, FlowConfig, ToolSourceKind};
use crate::diag::{Diagnostic, did_you_mean, name_list};
use crate::tools::lock;
use crate::tools::{Known, ToolRef};
use crate::vocab::BUILTIN_TOOLS as BUILTIN;

/// What each source is known to offer without reaching it (`None`: not known): the
/// names of its tools.
fn known_tools(
    config: &FlowConfig,
    out: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Option<Vec<String>>> {
    let src = &config.source;
    let known = Known::of(config);
    if let Some(why) = &known.lock_error {
        out.push(
            Diagnostic::error(
                "tools::lock",
                format!("the tools lock cannot be read: {why}"),
            )
            .with_help("write it again with `cuga-flo tools <app> --lock`, or delete it"),
        );
    }
    for (name, e) in &known.openapi_errors {
        let Some(spec) = config.tool_sources.iter().find_map(|s| match &s.kind {
            ToolSourceKind::OpenApi { spec, .. } if s.name.value == *name => Some(spec),
            _ => None,
        }) else {
            continue;
        };
        out.push(
            Diagnostic::error("tools::openapi", e.to_string())
                .at(src, spec.span, "this document".to_string())
                .with_help("an OpenAPI 3 document (YAML or JSON), relative to the config"),
        );
    }
    (known.sources.into_iter())
        .map(|(name, tools)| {
            (
                name,
                tools.map(|ts| ts.into_iter().map(|t| t.name).collect()),
            )
        })
        .collect()
}

pub(super) fn check(config: &FlowConfig) -> Vec<Diagnostic> {
    let src = &config.source;
    let mut out = Vec::new();
    let known = if config.tool_sources.is_empty() {
        BTreeMap::new()
    } else {
        known_tools(config, &mut out)
    };
    let names: Vec<&str> = config
        .tool_sources
        .iter()
        .map(|s| s.name.value.as_str())
        .collect();
    for s in &config.tool_sources {
        for t in &s.tools {
            if let Some(c) = t.confirm.as_ref().filter(|c| c.value == Confirm::Never) {
                out.push(
                    Diagnostic::warning(
                        "tools::never_confirmed",
                        format!(
                            "calls of `{}.{}` are never confirmed by a person, whatever its annotations say",
                            s.name.value, t.name.value
                        ),
                    )
                    .at(src, c.span, "`confirm: never`".to_string())
                    .with_help("keep it only for a tool whose every call is safe to make unasked"),
                );
            }
            if let Some(Some(tools)) = known.get(&s.name.value)
                && !tools.contains(&t.name.value)
            {
                out.push(unknown_tool(
                    config,
                    &s.name.value,
                    &t.name.value,
                    tools,
                    t.name.span,
                ));
            }
        }
    }
    for task in &config.tasks {
        let Some(agent) = &task.agent else { continue };
        let what = format!("task `{}`", task.id.value);
        let mut sourced = false;
        for entry in &agent.tools {
            match ToolRef::parse(&entry.value) {
                ToolRef::Builtin(name) if BUILTIN.contains(&name) => {}
                ToolRef::Builtin(name) => {
                    let help = if names.contains(&name) {
                        format!("to give the task every tool of `{name}`, write `{name}.*`")
                    } else if config.remote_agents.iter().any(|r| r.name.value == name) {
                        "to delegate the task to this remote agent write `agent_type: <name>`; to consult it write `human_consultation: <name>` on a gateway or hook".to_string()
                    } else {
                        "the built-in tools are `read_variable` (a model reads any process variable by name) and `consult_user` (a model asks a person); a tool source's tools are `<source>.<tool>` (declare sources under `mcp_servers:` or `openapi:`)".to_string()
                    };
                    out.push(
                        Diagnostic::warning(
                            "config::ignored",
                            format!("tool `{}` of {what} is ignored", entry.value),
                        )
                        .at(src, entry.span, "not used".to_string())
                        .with_help(help),
                    );
                }
                r => {
                    let source = r.source().unwrap_or_default();
                    if !names.contains(&source) {
                        if names.is_empty() {
                            out.push(
                                Diagnostic::warning(
                                    "config::ignored",
                                    format!(
                                        "tool `{}` of {what} is ignored: no tool source `{source}` is declared",
                                        entry.value
                                    ),
                                )
                                .at(src, entry.span, "not used".to_string())
                                .with_help("declare the server under `mcp_servers:` (or the API under `openapi:`)"),
                            );
                        } else {
                            let help = match did_you_mean(source, names.iter().copied()) {
                                Some(m) => format!("did you mean `{m}`?"),
                                None => format!(
                                    "the declared tool sources are {}",
                                    name_list(&names, 8)
                                ),
                            };
                            out.push(
                                Diagnostic::error(
                                    "ref::unknown_tool_source",
                                    format!(
                                        "{what} names tool source `{source}`, which is not declared"
                                    ),
                                )
                                .at(src, entry.span, "no such source".to_string())
                                .with_help(help),
                            );
                        }
                        continue;
                    }
                    sourced = true;
                    if let ToolRef::One { tool, .. } = r
                        && let Some(Some(tools)) = known.get(source)
                        && !tools.iter().any(|t| t == tool)
                    {
                        out.push(unknown_tool(config, source, tool, tools, entry.span));
                    }
                }
            }
        }
        out.extend(step_rule_names(config, task, agent));
        if !sourced {
            let unused = [(
                "max_tool_calls",
                agent.max_tool_calls.as_ref().map(|m| m.span),
            )];
            for (key, span) in unused {
                if let Some(span) = span {
                    out.push(
                        Diagnostic::warning(
                            "config::ignored",
                            format!(
                                "`{key}` of {what} is not used: it calls no tool of a tool source"
                            ),
                        )
                        .at(src, span, "not used".to_string()),
                    );
                }
            }
        }
    }
    let unlocked: Vec<&str> = config
        .tool_sources
        .iter()
        .filter(|s| !matches!(s.kind, ToolSourceKind::OpenApi { .. }))
        .filter(|s| matches!(known.get(&s.name.value), Some(None)))
        .map(|s| s.name.value.as_str())
        .collect();
    if !unlocked.is_empty() && out.iter().all(|d| d.code != "tools::lock") {
        let at = config
            .tool_sources
            .iter()
            .find(|s| s.name.value == unlocked[0])
            .map(|s| s.name.span);
        let mut d = Diagnostic::warning(
            "tools::unlocked",
            format!(
                "the tools of {} are not checked: {} is not in {}",
                name_list(&unlocked, 8),
                if unlocked.len() == 1 { "it" } else { "they" },
                lock::FILE
            ),
        )
        .with_help("`cuga-flo tools <app> --lock` lists each server's tools and writes the lock `validate` checks against");
        if let Some(span) = at {
            d = d.at(src, span, "not locked".to_string());
        }
        out.push(d);
    }
    out
}

/// Each name a `pre_execute` rule sets must be one of the task's inputs (its
/// `input_mapping`'s parameters; without one, the config's variables), and each name a
/// `post_execute` rule sets one of its outputs (its `output_mapping`'s keys; without one,
/// the config's variables): anything else would be set and never read.
fn step_rule_names(
    config: &FlowConfig,
    task: &crate::app::TaskConfig,
    agent: &crate::app::AgentConfig,
) -> Vec<Diagnostic> {
    let variables: Vec<&str> = config
        .variables
        .iter()
        .map(|v| v.name.value.as_str())
        .collect();
    fn names<'a>(
        mapping: &'a [(crate::app::Located<String>, crate::app::Located<String>)],
        variables: &[&'a str],
    ) -> Vec<&'a str> {
        if mapping.is_empty() {
            variables.to_vec()
        } else {
            mapping.iter().map(|(k, _)| k.value.as_str()).collect()
        }
    }
    let steps = [
        (
            "pre_execute",
            &agent.pre_execute,
            names(&task.input_mapping, &variables),
            "input",
        ),
        (
            "post_execute",
            &agent.post_execute,
            names(&task.output_mapping, &variables),
            "output",
        ),
    ];
    let mut out = Vec::new();
    for (key, rules, known, kind) in steps {
        for (name, _) in rules.iter().flat_map(|r| &r.set) {
            if known.contains(&name.value.as_str()) {
                continue;
            }
            let help = match did_you_mean(&name.value, known.iter().copied()) {
                Some(m) => format!("did you mean `{m}`?"),
                None if known.is_empty() => format!("task `{}` has no {kind}s", task.id.value),
                None => format!("the task's {kind}s are {}", name_list(&known, 8)),
            };
            out.push(
                Diagnostic::error(
                    "ref::unknown_name",
                    format!(
                        "`{key}` of task `{}` sets `{}`, which is not one of its {kind}s",
                        task.id.value, name.value
                    ),
                )
                .at(&config.source, name.span, format!("not an {kind}"))
                .with_help(help),
            );
        }
    }
    out
}

fn unknown_tool(
    config: &FlowConfig,
    source: &str,
    tool: &str,
    tools: &[String],
    span: crate::source::Span,
) -> Diagnostic {
    let help = match did_you_mean(tool, tools.iter().map(String::as_str)) {
        Some(m) => format!("did you mean `{source}.{m}`?"),
        None if tools.is_empty() => format!("`{source}` offers no tools"),
        None => format!("`{source}` offers {}", name_list(tools, 12)),
    };
    Diagnostic::error(
        "ref::unknown_tool",
        format!("tool source `{source}` offers no tool `{tool}`"),
    )
    .at(&config.source, span, "no such tool".to_string())
    .with_help(help)
}
