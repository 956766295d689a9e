//! Model settings: prompt templates that cannot be read or compiled, `on_failure` that
//! cannot happen, model settings on control points that never ask a model, and `llm:`
//! blocks that name no model.

use crate::app::prompt::Templates;
use crate::app::{FlowConfig, GatewayMode, Located, OnFailure, PromptPaths, TaskMode};
use crate::bpmn::ProcessIndex;
use crate::diag::Diagnostic;

/// Every finding about model settings; `process` (when the model was read) lets
/// `on_failure: default` be checked against the gateway's default flow.
pub fn check(config: &FlowConfig, process: Option<&ProcessIndex>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let src = &config.source;
    if let Some(llm) = &config.llm {
        templates(config, &llm.prompts, &mut out);
        if llm.model.is_none() {
            out.push(
                Diagnostic::warning("llm::no_model", "the `llm:` block names no model")
                    .at(src, llm.span, "no `model:`".to_string())
                    .with_help(
                        "write `model: <name>`, or set CUGA_FLO_LLM_MODEL when you start a run",
                    ),
            );
        }
    }
    for t in &config.tasks {
        if let Some(llm) = &t.llm {
            templates(config, &llm.prompts, &mut out);
            if t.mode == TaskMode::Native {
                never_asked(
                    config,
                    llm.span,
                    &format!("task `{}` is native", t.id.value),
                    &mut out,
                );
            }
        }
    }
    for g in &config.gateways {
        if let Some(llm) = &g.llm {
            templates(config, &llm.prompts, &mut out);
            if g.mode == GatewayMode::Native {
                never_asked(
                    config,
                    llm.span,
                    &format!("gateway `{}` is native", g.id.value),
                    &mut out,
                );
            }
        }
        if let (Some(of), Some(process)) = (&g.on_failure, process)
            && of.value == OnFailure::Default
            && process
                .node(&g.id.value)
                .is_some_and(|n| n.default_flow.is_none())
        {
            out.push(
                Diagnostic::error(
                    "llm::no_default_flow",
                    format!(
                        "gateway `{}` falls back to its default flow, but it has none",
                        g.id.value
                    ),
                )
                .at(src, of.span, "no default flow to take".to_string())
                .with_help("mark one outgoing flow as the gateway's default in the model, or write `on_failure: fail`"),
            );
        }
    }
    for h in &config.hooks {
        if let Some(llm) = &h.llm {
            templates(config, &llm.prompts, &mut out);
            if h.policy.is_none() {
                never_asked(
                    config,
                    llm.span,
                    &format!("hook `{}` has no policy", h.id.value),
                    &mut out,
                );
            }
        }
    }
    out
}

fn never_asked(
    config: &FlowConfig,
    span: crate::source::Span,
    why: &str,
    out: &mut Vec<Diagnostic>,
) {
    out.push(
        Diagnostic::warning(
            "config::ignored",
            format!("{why}, so its `llm:` settings are never used"),
        )
        .at(&config.source, span, "never asks a model".to_string()),
    );
}

/// Every template file named: readable, and a template minijinja compiles.
fn templates(config: &FlowConfig, paths: &PromptPaths, out: &mut Vec<Diagnostic>) {
    let named: [(&Option<Located<String>>, usize); 4] = [
        (&paths.task, 0),
        (&paths.gateway, 1),
        (&paths.hook, 2),
        (&paths.own, 1),
    ];
    for (path, slot) in named {
        let Some(path) = path else { continue };
        let full = config.resolve(&path.value);
        let text = match crate::source::read_text(&full) {
            Ok(t) => t,
            Err(e) => {
                out.push(
                    Diagnostic::error(
                        "llm::template",
                        format!("the prompt template cannot be read: {e}"),
                    )
                    .at(
                        &config.source,
                        path.span,
                        format!("looked for {}", full.display()),
                    )
                    .with_help("template paths are relative to the config file"),
                );
                continue;
            }
        };
        let source = Some((full.display().to_string(), text));
        let mut sources = [None, None, None];
        sources[slot] = source;
        let [task, gateway, hook] = sources;
        if let Err(e) = Templates::with_overrides(task, gateway, hook) {
            out.push(
                Diagnostic::error("llm::template", format!("the prompt template does not compile: {e}"))
                    .at(&config.source, path.span, "this template".to_string())
                    .with_help("templates are minijinja (Jinja2); see docs/config.md for the names they can use"),
            );
        }
    }
}
