//! `cuga-flo tools <app> [--lock] [--json]`: every tool source of an app reached, and what
//! each offers: name, read-only / destructive / idempotent, and who confirms its calls.
//! `--lock` writes `tools.lock.json` beside the flow config, which `validate` checks
//! the tasks' `tools:` against.

use clap::Args;
use serde_json::json;

use crate::app::load_app;
use crate::tools::Toolbox;
use crate::tools::lock::{Lock, VERSION};

use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The app (a name under the apps folder, an app folder or a flow config)
    #[arg(value_name = "APP")]
    pub app: String,
    /// Write `tools.lock.json` beside the flow config (what `validate` checks against)
    #[arg(long)]
    pub lock: bool,
    /// One JSON document: each source with its tools, or why it cannot be reached
    #[arg(long)]
    pub json: bool,
}

pub fn run(cli: &Cli, args: &ToolsArgs, style: Style) -> Result<Outcome, UsageError> {
    let Target::App(app) = resolve(&args.app, &cli.apps_dir)? else {
        return Err(UsageError::new(format!("`{}` is not an app", args.app)));
    };
    let loaded = load_app(&app);
    let Some(config) = loaded.config.as_ref() else {
        return Err(UsageError::new(format!(
            "app `{}` has no flow config that loads",
            loaded.name
        ))
        .with_help(format!("`cuga-flo validate {}` says why", loaded.name)));
    };
    if config.tool_sources.is_empty() {
        return Err(
            UsageError::new(format!("app `{}` declares no tool source", loaded.name)).with_help(
                "declare MCP servers under `mcp_servers:` and HTTP APIs under `openapi:`",
            ),
        );
    }
    let toolbox = Toolbox::of(config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the runtime: {e}")))?;
    let listed = runtime.block_on(toolbox.list());
    let failed = listed.iter().any(|(_, r)| r.is_err());
    if args.json {
        let sources: Vec<_> = listed
            .iter()
            .map(|(name, r)| match r {
                Ok(tools) => json!({"source": name, "tools": tools}),
                Err(e) => json!({"source": name, "error": e.to_string()}),
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "sources": sources })).unwrap_or_default()
        );
    } else {
        for (name, r) in &listed {
            let kind = config.tool_source(name).map_or("", |s| s.kind.as_str());
            outln!("{} {}", style.bold(name), style.dim(&format!("({kind})")));
            match r {
                Ok(tools) if tools.is_empty() => outln!("  offers no tools"),
                Ok(tools) => {
                    for t in tools {
                        let configured = config
                            .tool_source(name)
                            .and_then(|s| s.setting(&t.name))
                            .and_then(|s| s.confirm.as_ref())
                            .map(|c| c.value);
                        let mut spec = t.clone();
                        spec.confirm = configured;
                        let hints = [
                            (t.read_only, "read-only"),
                            (t.destructive, "destructive"),
                            (t.idempotent && !t.read_only, "idempotent"),
                        ]
                        .iter()
                        .filter(|(on, _)| *on)
                        .map(|(_, w)| *w)
                        .collect::<Vec<_>>()
                        .join(", ");
                        let confirm = if spec.needs_confirmation() {
                            "a person confirms each call"
                        } else {
                            "no confirmation"
                        };
                        outln!(
                            "  {name}.{}  {}  {}",
                            crate::diag::printable(&t.name),
                            style.dim(&format!("[{hints}]")),
                            confirm
                        );
                        if !t.description.is_empty() {
                            outln!("      {}", crate::view::short(&t.description, 100));
                        }
                    }
                }
                Err(e) => outln!(
                    "  {} {}",
                    style.red("cannot be reached:"),
                    crate::diag::printable(&e.to_string())
                ),
            }
        }
    }
    if args.lock {
        if failed {
            return Err(UsageError::new(
                "the lock is not written: a tool source cannot be reached",
            )
            .with_help(
                "start it (or set what it needs), then run `cuga-flo tools <app> --lock` again",
            ));
        }
        let lock = Lock {
            version: VERSION,
            sources: listed
                .into_iter()
                .filter_map(|(name, r)| Some((name, r.ok()?)))
                .collect(),
        };
        let path = lock
            .write_beside(config.source.path())
            .map_err(|e| UsageError::new(format!("cannot write the lock: {e}")))?;
        if !args.json {
            outln!("{} wrote {}", style.green("✓"), path.display());
        }
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}
