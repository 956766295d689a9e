//! `cuga-flo list`: the apps under the apps folder, what each runs, and whether it
//! validates. Broken apps are listed with their first error, never skipped.

use clap::Args;
use serde::Serialize;

use crate::app::load_app;
use crate::check::{check_app, tally};

use super::output::count;
use super::target::all_apps;
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The apps as one JSON array (with each one's description and scenarios)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Row {
    name: String,
    path: String,
    process_key: Option<String>,
    engine: Option<String>,
    bpmn_file: Option<String>,
    /// The flow config's `flow.description`.
    description: Option<String>,
    /// The app's scenarios (`scenarios/*.yaml`), by name.
    scenarios: Vec<String>,
    tasks: Option<usize>,
    gateways: Option<usize>,
    hooks: Option<usize>,
    /// The id of the `<process>` a run uses (its counts are `tasks` and `gateways`).
    process: Option<String>,
    valid: bool,
    errors: usize,
    warnings: usize,
    /// The first error, as `file:line:col: message`.
    first_error: Option<String>,
}

pub fn run(cli: &Cli, args: &ListArgs, style: Style) -> Result<Outcome, UsageError> {
    let apps = all_apps(&cli.apps_dir)?;
    let rows: Vec<Row> = apps
        .iter()
        .map(|app| {
            let loaded = load_app(app);
            let diags = check_app(&loaded);
            let (errors, warnings) = tally(&diags);
            // The counts are of the process a run would use; a file whose process the
            // config leaves ambiguous runs none.
            let process = loaded.process().filter(|_| {
                !(diags.iter())
                    .any(|d| matches!(d.code, "app::ambiguous_process" | "app::unknown_process"))
            });
            let config = loaded.config.as_ref();
            Row {
                name: app.name.clone(),
                path: app.dir.display().to_string(),
                process_key: config.map(|c| c.process_key().to_string()),
                engine: config.map(|c| c.engine.kind.to_string()),
                bpmn_file: config
                    .and_then(|c| c.flow.bpmn_file.as_ref())
                    .map(|b| b.value.clone()),
                process: process.map(|p| p.id.clone()),
                description: config
                    .and_then(|c| c.flow.description.as_ref())
                    .map(|d| d.value.clone()),
                scenarios: crate::app::scenario::list(&app.dir),
                tasks: process.map(|p| p.tasks().count()),
                gateways: process.map(|p| p.gateways().count()),
                hooks: config.map(|c| c.hooks.len()),
                valid: errors == 0,
                errors,
                warnings,
                first_error: diags.iter().find(|d| d.is_error()).map(|d| {
                    // Locations relative to the app folder keep the table readable.
                    let prefix = format!("{}/", app.dir.display());
                    let loc = d
                        .location()
                        .map(|l| format!("{}: ", l.strip_prefix(&prefix).unwrap_or(&l)))
                        .unwrap_or_default();
                    format!("{loc}{}", d.message)
                }),
            }
        })
        .collect();

    if args.json {
        outln!("{}", serde_json::to_string(&rows).unwrap_or_default());
        return Ok(Outcome::Ok);
    }
    if rows.is_empty() {
        outln!("no apps under {}", cli.apps_dir.display());
        return Ok(Outcome::Ok);
    }
    let dash = || "-".to_string();
    let num = |n: Option<usize>| n.map_or_else(dash, |n| n.to_string());
    let table: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                r.name.clone(),
                r.process_key.clone().unwrap_or_else(dash),
                r.engine.clone().unwrap_or_else(dash),
                r.bpmn_file.clone().unwrap_or_else(dash),
                num(r.tasks),
                num(r.gateways),
                num(r.hooks),
            ]
        })
        .collect();
    let header = [
        "APP",
        "PROCESS KEY",
        "ENGINE",
        "BPMN",
        "TASKS",
        "GATEWAYS",
        "HOOKS",
    ];
    let mut widths = header.map(str::len);
    for row in &table {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 7]| {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    outln!("{}  STATUS", style.bold(&line(header)));
    for (row, r) in table.iter().zip(&rows) {
        let status = match (&r.first_error, r.warnings) {
            (Some(e), _) => format!(
                "{} ({}) {e}",
                style.red("invalid"),
                count(r.errors, "error")
            ),
            (None, 0) => style.green("valid"),
            (None, w) => format!("{} ({})", style.green("valid"), count(w, "warning")),
        };
        outln!("{}  {status}", line(row.each_ref().map(String::as_str)));
        if !r.scenarios.is_empty() {
            outln!("  scenarios: {}", r.scenarios.join(", "));
        }
    }
    Ok(Outcome::Ok)
}
