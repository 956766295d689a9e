//! `cuga-flo graph export` and `cuga-flo graph import`: an app's process as RDF (Turtle,
//! TriG, N-Quads), and an RDF graph (cuga-flo's export or an AgentFLOW process definition)
//! as a runnable app. The mapping is the library's (`graph`); this is the command line.

use std::path::{Path, PathBuf};

use crate::app::load_app;
use crate::app::registry::app_at;
use crate::graph::{self, Format, GraphError, shacl};
use crate::source::SourceFile;

use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};

pub(super) fn export(
    cli: &Cli,
    app: &str,
    format: Format,
    annotations: graph::Annotations,
    output: Option<&PathBuf>,
) -> Result<Outcome, UsageError> {
    let Target::App(app) = resolve(app, &cli.apps_dir)? else {
        return Err(
            UsageError::new(format!("`{app}` is a BPMN file, not an app"))
                .with_help("graph export exports an app: its model and its flow config"),
        );
    };
    let loaded = load_app(&app);
    let exported = graph::export(&loaded).map_err(|e| {
        let help = match e {
            GraphError::NoModel(_) => format!("`cuga-flo validate {}` says why", app.name),
            _ => "docs/graph.md lists what graph export carries".to_owned(),
        };
        UsageError::new(e.to_string()).with_help(help)
    })?;
    let text = exported.write_as(format, annotations);
    match output {
        Some(path) => {
            std::fs::write(path, text)
                .map_err(|e| UsageError::new(format!("cannot write {}: {e}", path.display())))?;
            tracing::info!(app = %app.name, file = %path.display(), "exported");
        }
        None => out!("{text}"),
    }
    Ok(Outcome::Ok)
}

pub(super) fn import(
    file: &Path,
    out: &Path,
    recipes: &[PathBuf],
    force: bool,
    style: Style,
) -> Result<Outcome, UsageError> {
    let text = crate::source::read_text(file)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", file.display())))?;
    let source = SourceFile::new(file.to_path_buf(), text);
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && n != "." && n != "..")
        .ok_or_else(|| UsageError::new(format!("`{}` names no app folder", out.display())))?;
    if out.exists() && !force {
        return Err(UsageError::new(format!("{} already exists", out.display()))
            .with_help("pass --force to replace it, or choose another --out"));
    }
    let imported = match graph::import(&source, &name, recipes) {
        Ok(i) => i,
        Err(diagnostics) => {
            for d in &diagnostics {
                eprint!("{}", style.diagnostic(d));
            }
            return Ok(Outcome::Failed);
        }
    };
    for d in &imported.warnings {
        eprint!("{}", style.diagnostic(d));
    }
    graph::write_app(&imported, out, force).map_err(|e| UsageError::new(e.to_string()))?;
    // What the app's own loading finds (a model the engine cannot read, a config that
    // does not decode) is reported like `validate` would, pointing into the new files.
    let loaded = load_app(&app_at(out));
    let errors: Vec<_> = loaded.diagnostics.iter().filter(|d| d.is_error()).collect();
    for d in &loaded.diagnostics {
        eprint!("{}", style.diagnostic(d));
    }
    if !errors.is_empty() {
        return Ok(Outcome::Failed);
    }
    outln!(
        "imported {} into {} ({} nodes, {} flows{})",
        file.display(),
        out.display(),
        imported.process.nodes.len(),
        imported.process.flows.len(),
        if imported.policies.is_empty() {
            String::new()
        } else {
            format!(", {} policy files", imported.policies.len())
        }
    );
    Ok(Outcome::Ok)
}

/// The query with the vocabulary's prefixes declared first (those it declares itself win:
/// a later PREFIX of the same name replaces the earlier).
pub(super) fn with_prefixes(sparql: &str) -> String {
    let mut out = String::new();
    for (p, ns) in crate::graph::vocab::PREFIXES {
        out.push_str(&format!("PREFIX {p}: <{ns}>\n"));
    }
    out.push_str(sparql);
    out
}

/// What `graph validate` prints.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shown {
    pub report: bool,
    pub json: bool,
    pub data_graph: bool,
}

fn is_graph_file(target: &str) -> bool {
    let path = Path::new(target);
    path.is_file()
        && matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("ttl" | "trig" | "nq" | "nquads")
        )
}

pub(super) fn validate(
    cli: &Cli,
    target: &str,
    how: Shown,
    style: Style,
) -> Result<Outcome, UsageError> {
    let (name, data, report, diagnostics) = if is_graph_file(target) {
        let path = PathBuf::from(target);
        let text = crate::source::read_text(&path)
            .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
        let source = SourceFile::new(path, text);
        match shacl::check_file(&source) {
            Ok(v) => (target.to_owned(), v.data, v.report, v.diagnostics),
            Err(diagnostics) => {
                for d in &diagnostics {
                    eprint!("{}", style.diagnostic(d));
                }
                return Ok(Outcome::Failed);
            }
        }
    } else {
        let Target::App(app) = resolve(target, &cli.apps_dir)? else {
            return Err(UsageError::new(format!(
                "`{target}` is a BPMN file, not an app or a graph file"
            ))
            .with_help("graph validate takes an app or a Turtle, TriG or N-Quads file"));
        };
        let loaded = load_app(&app);
        let exported = graph::export(&loaded).map_err(|e| {
            UsageError::new(e.to_string())
                .with_help(format!("`cuga-flo validate {}` says why", app.name))
        })?;
        let data = shacl::lower(&exported.document.triples());
        let report = shacl::validate_process(&data)
            .map_err(|e| UsageError::new(format!("SHACL validation failed: {e}")))?;
        let mut diagnostics = shacl::check_app_report(&loaded, &exported, &data, &report);
        diagnostics.sort_by_key(|d| d.location());
        (app.name, data, report, diagnostics)
    };
    if how.data_graph {
        for t in &data {
            outln!("{t} .");
        }
        return Ok(Outcome::Ok);
    }
    if how.report {
        out!("{}", report.to_turtle());
    } else if how.json {
        let results: Vec<_> = (report.results.iter())
            .map(|r| {
                serde_json::json!({
                    "focus": shacl::term_text(&r.focus),
                    "path": r.path.as_ref().map(shacl::term_text),
                    "value": r.value.as_ref().map(shacl::term_text),
                    "shape": shacl::term_text(&r.shape),
                    "component": r.component.as_str(),
                    "severity": r.severity.as_str(),
                    "message": r.message,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "conforms": report.conforms,
            "results": results,
            "diagnostics": diagnostics.iter().map(|d| d.to_json()).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        for d in &diagnostics {
            out!("{}", style.diagnostic(d));
            outln!();
        }
        let violations = report.violations().count();
        if report.conforms {
            outln!(
                "{} `{name}` conforms to the process shapes",
                style.green("✓")
            );
        } else {
            outln!(
                "{} `{name}` {}: {}, {}",
                if violations > 0 {
                    style.red("✗")
                } else {
                    style.green("✓")
                },
                if violations > 0 {
                    "does not conform to the process shapes"
                } else {
                    "conforms, with warnings"
                },
                super::output::count(violations, "violation"),
                super::output::count(report.results.len() - violations, "warning"),
            );
        }
    }
    Ok(if report.violations().next().is_some() {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}
