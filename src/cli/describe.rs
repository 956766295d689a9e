//! `cuga-flo describe`: what a person sees before a run. Every control point of an app
//! (its tasks, gateways and hooks) with what its config says about it and who decides
//! there, the guarantees every run keeps, and who answers a question (the judgement chain
//! as `start` builds it). Names first, ids after them (dimmed); `--json`: one document.

use clap::Args;

use crate::app::{GatewayMode, TaskMode, load_app};
use crate::run::describe::*;
use crate::vocab::VarKind;

use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The app (a name under the apps folder, an app folder or a flow config)
    #[arg(value_name = "APP")]
    pub app: String,

    /// Print one JSON document instead of the human description
    #[arg(long)]
    pub json: bool,
}

pub fn run(cli: &Cli, args: &DescribeArgs, style: Style) -> Result<Outcome, UsageError> {
    let app = match resolve(&args.app, &cli.apps_dir)? {
        Target::App(app) => app,
        Target::Model(path) => {
            return Err(UsageError::new(format!(
                "{} is a BPMN model on its own; describe needs an app (its flow config)",
                path.display()
            ))
            .with_help("`cuga-flo graph` draws a model's flow"));
        }
    };
    let loaded = load_app(&app);
    let env = |name: &str| std::env::var(name).ok();
    let description = describe(&loaded, &env)?;
    if args.json {
        let text = serde_json::to_string_pretty(&description)
            .map_err(|e| UsageError::new(e.to_string()))?;
        outln!("{text}");
    } else {
        out!("{}", render(&description, style));
    }
    Ok(Outcome::Ok)
}

/// The columns the description wraps at.
const WIDTH: usize = 80;

/// `name id` (the id dimmed), or the id alone.
fn named(e: &Element, style: Style) -> String {
    match &e.name {
        Some(n) => format!("{} {}", style.bold(n), style.dim(&e.id)),
        None => style.bold(&e.id),
    }
}

/// The name alone, else the id.
fn short(e: &Element) -> &str {
    e.name.as_deref().unwrap_or(&e.id)
}

fn line(out: &mut String, head: &str, text: &str, indent: usize) {
    let words: Vec<&str> = text.split(' ').collect();
    for l in crate::view::wrap(head, &words, WIDTH, indent) {
        out.push_str(&l);
        out.push('\n');
    }
}

/// The human description.
pub fn render(d: &Description, style: Style) -> String {
    let mut out = String::new();
    let title = d.name.clone().unwrap_or_else(|| d.app.clone());
    out.push_str(&format!("{} {}\n", style.bold(&title), style.dim(&d.app)));
    if let Some(text) = &d.description {
        line(&mut out, "", text, 0);
    }
    let mut engine = format!("engine {}", d.engine);
    if let Some(url) = &d.engine_url {
        engine.push_str(&format!(" at {url}"));
    }
    line(
        &mut out,
        "",
        &format!("process {} · {engine}", named(&d.process, style)),
        2,
    );

    render_inputs(&mut out, d, style);
    render_tasks(&mut out, d, style);
    render_gateways(&mut out, d, style);
    render_hooks(&mut out, d, style);
    if !d.guarantees.is_empty() {
        out.push_str(&format!("\n{}\n", style.bold("Guarantees")));
        for g in &d.guarantees {
            line(&mut out, &format!("  {}:", style.dim(&g.id)), &g.rule, 6);
        }
    }

    out.push_str(&format!(
        "\n{} {}\n",
        style.bold("Who answers"),
        style.dim("(in this order, as `start` builds it)")
    ));
    for (i, a) in d.judgement.iter().enumerate() {
        let head = format!("  {}. {:<8}", i + 1, a.source);
        let head = if a.active { head } else { style.dim(&head) };
        line(&mut out, &head, &a.detail, 14);
    }
    out
}

/// What a run takes: the declared variables, required ones first.
fn render_inputs(out: &mut String, d: &Description, style: Style) {
    out.push_str(&format!(
        "\n{} {}\n",
        style.bold("Inputs"),
        style.dim("(--var NAME=VALUE, --input FILE)")
    ));
    if d.inputs.is_empty() {
        out.push_str("  none declared (the run takes any variable)\n");
    }
    let mut inputs: Vec<_> = d.inputs.iter().collect();
    inputs.sort_by_key(|i| !i.required);
    for i in inputs {
        let mut default = crate::diag::terminal_safe(&i.default.to_string());
        if default.chars().count() > 40 {
            default = default.chars().take(39).collect::<String>() + "…";
        }
        let mut facts = format!("{} · ", i.kind);
        if i.required {
            facts.push_str(&style.bold("required"));
        } else {
            facts.push_str(&format!("default {default}"));
        }
        if let Some(text) = &i.description {
            facts.push_str(&format!(" · {}", crate::diag::terminal_safe(text)));
        }
        line(out, &format!("  {}:", i.name), &facts, 6);
    }
}

/// The description's tasks.
fn render_tasks(out: &mut String, d: &Description, style: Style) {
    out.push_str(&format!("\n{}\n", style.bold("Tasks")));
    if d.tasks.is_empty() {
        out.push_str("  none\n");
    }
    for t in &d.tasks {
        out.push_str(&format!("  {}\n", named(&t.element, style)));
        let mut facts = vec![match t.mode {
            TaskMode::TaskAgent => "task_agent".to_owned(),
            TaskMode::Native => "native".to_owned(),
        }];
        if !t.configured {
            facts.push("not in the config".to_owned());
        }
        if let Some(a) = &t.agent {
            facts.push(format!("agent {a}"));
        }
        if let Some(a) = &t.agent_type {
            facts.push(format!("agent_type {a}"));
        }
        facts.push(format!("on failure: {}", t.on_failure.as_str()));
        line(out, "    ", &facts.join(" · "), 6);
        policy_line(out, &t.policy);
        if !t.outputs.is_empty() {
            let outs: Vec<String> = t
                .outputs
                .iter()
                .map(|o| {
                    let var = if o.variable == o.output {
                        String::new()
                    } else {
                        format!(" → {}", o.variable)
                    };
                    format!("{}{var} ({}),", o.output, kind(o.kind))
                })
                .collect();
            let mut outs = outs.join(" ");
            outs.pop();
            line(out, "    outputs:", &outs, 6);
        }
        if !t.raises.is_empty() {
            line(out, "    may raise:", &t.raises.join(", "), 6);
        }
        line(out, "    decided by:", &t.decided_by.join(", then "), 6);
        if let Some(max) = t.max_tool_calls {
            line(
                out,
                "    tools:",
                &format!("at most {} per visit", count(max as usize, "call")),
                6,
            );
            for tool in &t.tools {
                line(
                    out,
                    "      ",
                    &format!("{} · confirmed by: {}", tool.tool, tool.confirm),
                    8,
                );
            }
        }
    }
}

/// The description's gateways.
fn render_gateways(out: &mut String, d: &Description, style: Style) {
    out.push_str(&format!("\n{}\n", style.bold("Gateways")));
    if d.gateways.is_empty() {
        out.push_str("  none\n");
    }
    for g in &d.gateways {
        out.push_str(&format!("  {}\n", named(&g.element, style)));
        let mut facts = vec![
            format!("{} gateway", kind_name(g.kind)),
            match g.mode {
                GatewayMode::DecisionAgent => "decision_agent".to_owned(),
                GatewayMode::Native => "native".to_owned(),
            },
        ];
        if g.consequential {
            facts.push("consequential".to_owned());
        }
        facts.push(format!("on failure: {}", g.on_failure.as_str()));
        line(out, "    ", &facts.join(" · "), 6);
        if let Some(c) = &g.condition {
            line(out, "    condition:", c, 6);
        }
        policy_line(out, &g.policy);
        for f in &g.flows {
            let mut text = format!("→ {} {}", short(&f.target), style.dim(&f.id));
            if f.default {
                text.push_str(" (default)");
            }
            if let Some(c) = &f.condition {
                text.push_str(&format!(" when {c}"));
            }
            if let Some(dl) = &f.decision {
                text.push_str(&format!(" — {dl}"));
            }
            line(out, "    ", &text, 8);
        }
        line(out, "    decided by:", &g.decided_by.join(", then "), 6);
    }
}

/// The description's hooks.
fn render_hooks(out: &mut String, d: &Description, style: Style) {
    out.push_str(&format!("\n{}\n", style.bold("Hooks")));
    if d.hooks.is_empty() {
        out.push_str("  none\n");
    }
    for h in &d.hooks {
        let on = match (&h.source, &h.target) {
            (Some(s), Some(t)) => format!("{} → {}", short(s), short(t)),
            _ => format!("on {}", h.flow.as_deref().unwrap_or("?")),
        };
        let mut ids = format!("hook {}", h.id);
        if let Some(f) = h.flow.as_deref().filter(|f| *f != h.id) {
            ids.push_str(&format!(" on {f}"));
        }
        let ids: Vec<String> = ids.split(' ').map(|w| style.dim(w)).collect();
        line(out, &format!("  ⚑ {}", style.bold(&on)), &ids.join(" "), 6);
        if !h.enabled {
            out.push_str("    disabled\n");
        }
        if let Some(i) = &h.instruction {
            line(out, "    ", i, 4);
        }
        policy_line(out, &h.policy);
        let p = &h.permissions;
        line(out, "    may:", &p.actions.join(", "), 6);
        let targets = if p.any_target {
            "any node not yet run".to_owned()
        } else if p.allowed_targets.is_empty() {
            "none".to_owned()
        } else {
            p.allowed_targets
                .iter()
                .map(short)
                .collect::<Vec<_>>()
                .join(", ")
        };
        line(out, "    targets:", &targets, 6);
        if !p.insertable_tasks.is_empty() {
            line(out, "    may insert:", &p.insertable_tasks.join(", "), 6);
        }
        if !p.may_set.is_empty() {
            line(out, "    may set:", &p.may_set.join(", "), 6);
        }
        line(out, "    on failure:", h.on_failure.as_str(), 6);
        line(out, "    decided by:", &h.decided_by.join(", then "), 6);
    }
}

fn policy_line(out: &mut String, p: &Option<PolicyRef>) {
    if let Some(p) = p {
        let rules = match p.rules {
            Some(0) => String::new(),
            Some(n) => format!(" ({})", count(n, "rule")),
            None => " (unreadable: see `validate`)".to_owned(),
        };
        line(out, "    policy:", &format!("{}{rules}", p.path), 6);
    }
}

fn kind(k: VarKind) -> &'static str {
    k.as_str()
}

fn kind_name(k: crate::bpmn::GatewayKind) -> &'static str {
    use crate::bpmn::GatewayKind::*;
    match k {
        Exclusive => "exclusive",
        Parallel => "parallel",
        Inclusive => "inclusive",
        EventBased => "event-based",
        Complex => "complex",
    }
}
