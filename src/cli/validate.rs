//! `cuga-flo validate`: every mistake that can be found before a run, like a compiler:
//! file:line, a snippet and a help line per problem, or JSON.

use std::path::Path;

use clap::Args;
use serde::Serialize;

use crate::app::{LoadedApp, load_app};
use crate::bpmn;
use crate::check::{check_app, check_model, tally};
use crate::diag::{Diagnostic, JsonDiagnostic};

use super::output::count;
use super::target::{Target, all_apps, resolve};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Apps (names under the apps folder, or app folders), flow config files or BPMN files
    #[arg(value_name = "APP|PATH")]
    pub targets: Vec<String>,

    /// Validate every app under the apps folder
    #[arg(long, conflicts_with = "targets")]
    pub all: bool,

    /// Treat warnings as errors
    #[arg(long)]
    pub strict: bool,

    /// Print one JSON document instead of human-readable diagnostics
    #[arg(long)]
    pub json: bool,
}

/// The result of validating one target.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `app` or `model`.
    pub kind: &'static str,
    pub name: String,
    pub path: String,
    pub valid: bool,
    pub errors: usize,
    pub warnings: usize,
    pub diagnostics: Vec<JsonDiagnostic>,
    #[serde(skip)]
    pub raw: Vec<Diagnostic>,
}

pub fn run(cli: &Cli, args: &ValidateArgs, style: Style) -> Result<Outcome, UsageError> {
    // `validate` reads, reports and exits: what it read is freed with the process, not
    // node by node (on a 10,000-node app that was a sixth of its work).
    crate::app::yaml::keep_trees_until_exit();
    let targets: Vec<Target> = if args.all {
        let apps = all_apps(&cli.apps_dir)?;
        if apps.is_empty() {
            return Err(UsageError::new(format!(
                "no apps under {}",
                cli.apps_dir.display()
            )));
        }
        apps.into_iter().map(Target::App).collect()
    } else if args.targets.is_empty() {
        return Err(UsageError::new(
            "name an app, an app folder, a flow config or a BPMN file, or pass --all",
        )
        .with_help("`cuga-flo list` shows the apps"));
    } else {
        args.targets
            .iter()
            .map(|t| resolve(t, &cli.apps_dir))
            .collect::<Result<_, _>>()?
    };

    let reports: Vec<Report> = targets.iter().map(|t| validate(t, args.strict)).collect();
    let (errors, warnings) = reports
        .iter()
        .fold((0, 0), |(e, w), r| (e + r.errors, w + r.warnings));
    let failed = reports.iter().any(|r| !r.valid);

    if args.json {
        let doc = serde_json::json!({
            "valid": !failed,
            "errors": errors,
            "warnings": warnings,
            "targets": reports,
        });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        for report in &reports {
            for d in &report.raw {
                out!("{}", style.diagnostic(d));
                outln!();
            }
            outln!("{}", summary_line(report, style));
        }
        if reports.len() > 1 {
            let verdict = if failed {
                style.red("failed")
            } else {
                style.green("ok")
            };
            outln!(
                "{verdict}: {} checked, {} invalid, {}, {}",
                count(reports.len(), "target"),
                reports.iter().filter(|r| !r.valid).count(),
                count(errors, "error"),
                count(warnings, "warning")
            );
        }
    }
    std::mem::forget(reports);
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

fn summary_line(r: &Report, style: Style) -> String {
    let what = format!("{} `{}`", r.kind, r.name);
    let counts = match (r.errors, r.warnings) {
        (0, 0) => String::new(),
        (0, w) => format!(" ({})", count(w, "warning")),
        (e, 0) => format!(": {}", count(e, "error")),
        (e, w) => format!(": {}, {}", count(e, "error"), count(w, "warning")),
    };
    if r.valid {
        format!("{} {what} is valid{counts}", style.green("✓"))
    } else if r.errors == 0 {
        format!("{} {what} fails --strict{counts}", style.red("✗"))
    } else {
        format!("{} {what} is invalid{counts}", style.red("✗"))
    }
}

/// Validate one target.
pub fn validate(target: &Target, strict: bool) -> Report {
    let (kind, name, path, diags) = match target {
        Target::App(app) => {
            let loaded: LoadedApp = load_app(app);
            let mut diags = check_app(&loaded);
            // Its scenarios, when the app itself reads (else they cannot be judged).
            if !diags.iter().any(Diagnostic::is_error) {
                diags.extend(crate::run::scenario::lint(&loaded));
            }
            // Freed with the process (see `run`).
            std::mem::forget(loaded);
            (
                "app",
                app.name.clone(),
                app.dir.display().to_string(),
                diags,
            )
        }
        Target::Model(path) => (
            "model",
            model_name(path),
            path.display().to_string(),
            validate_model(path),
        ),
    };
    let (errors, warnings) = tally(&diags);
    Report {
        kind,
        name,
        path,
        valid: errors == 0 && !(strict && warnings > 0),
        errors,
        warnings,
        diagnostics: diags.iter().map(Diagnostic::to_json).collect(),
        raw: diags,
    }
}

fn validate_model(path: &Path) -> Vec<Diagnostic> {
    match bpmn::parse_file(path) {
        Ok(doc) => {
            let diags = check_model(&doc);
            // Freed with the process (see `run`).
            std::mem::forget(doc);
            diags
        }
        Err(errs) => crate::app::load::bpmn_diagnostics(&errs),
    }
}

fn model_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
