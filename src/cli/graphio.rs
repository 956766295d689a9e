//! `cuga-flo graph export` and `cuga-flo graph import`: an app's process as RDF (Turtle,
//! TriG, N-Quads), and an RDF graph (cuga-flo's export or an AgentFLOW process definition)
//! as a runnable app. The mapping is the library's (`graph`); this is the command line.

use std::path::{Path, PathBuf};

use clap::{Subcommand, ValueEnum};

use crate::app::load_app;
use crate::app::registry::app_at;
use crate::graph::{self, Format, GraphError};
use crate::source::SourceFile;

use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Subcommand)]
pub enum GraphAction {
    /// Write an app's process as RDF (sBPMN/AgentFLOW vocabulary; conditions as RDF 1.2
    /// annotations on `agentflow:nextTask` edges), with its flow config and policies
    #[command(
        after_help = "Examples:\n  cuga-flo graph export loan_approval\n  cuga-flo graph \
        export loan_approval --format trig -o loan.trig"
    )]
    Export {
        /// The app (a name under the apps folder, an app folder or a flow config)
        #[arg(value_name = "APP")]
        app: String,

        /// The serialisation
        #[arg(long, value_enum, default_value = "turtle")]
        format: RdfFormat,

        /// Write to FILE instead of stdout
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Make a runnable app (BPMN, flow config, policies) from an RDF graph: Turtle, TriG
    /// (.trig) or N-Quads (.nq)
    #[command(after_help = "Examples:\n  cuga-flo graph import loan.ttl --out \
        applications/loan_copy\n  cuga-flo graph import definitions.ttl --out \
        applications/sim_activation --force")]
    Import {
        /// The graph file
        #[arg(value_name = "FILE")]
        file: PathBuf,

        /// The app folder to create (its name is the app's name)
        #[arg(long, value_name = "DIR")]
        out: PathBuf,

        /// Replace the folder if it exists
        #[arg(long)]
        force: bool,
    },
    /// Run a SPARQL query against graph mode's store of an app (all its runs) or of one
    /// run. An endpoint is asked directly; the embedded in-memory store is rebuilt from the
    /// journals
    #[command(
        after_help = "Examples:\n  cuga-flo graph query loan_approval 'SELECT ?run ?status \
        WHERE { ?i agentflow:processStatus ?status; cf:runId ?run }'\n  cuga-flo graph query \
        20261201T21 'SELECT * WHERE { ?s ?p ?o }' --json"
    )]
    Query {
        /// The app (its runs' graphs), or a run id (or a unique prefix or suffix of it)
        #[arg(value_name = "APP|RUN")]
        target: String,

        /// The SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE); the usual prefixes
        /// (rdf, rdfs, xsd, sbpmnc, sbpmnp, agentflow, cf) are declared
        #[arg(value_name = "SPARQL")]
        sparql: String,

        /// SPARQL 1.1 JSON results instead of a table
        #[arg(long)]
        json: bool,

        /// Where runs are kept
        #[arg(long, value_name = "DIR", default_value = crate::journal::store::DEFAULT_BASE)]
        run_dir: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RdfFormat {
    /// Turtle with RDF 1.2 `{| |}` annotations (read by RDF 1.2 and RDF-star tools)
    Turtle,
    /// TriG: the same, in a named graph
    Trig,
    /// N-Quads: annotations as reifiers with triple terms (RDF 1.2 readers only)
    Nquads,
}

pub fn run(cli: &Cli, action: &GraphAction, style: Style) -> Result<Outcome, UsageError> {
    match action {
        GraphAction::Export {
            app,
            format,
            output,
        } => export(cli, app, *format, output.as_ref()),
        GraphAction::Import { file, out, force } => import(file, out, *force, style),
        GraphAction::Query {
            target,
            sparql,
            json,
            run_dir,
        } => super::graphquery::query(cli, target, &with_prefixes(sparql), *json, run_dir),
    }
}

fn export(
    cli: &Cli,
    app: &str,
    format: RdfFormat,
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
    let text = exported.write(match format {
        RdfFormat::Turtle => Format::Turtle,
        RdfFormat::Trig => Format::TriG,
        RdfFormat::Nquads => Format::NQuads,
    });
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

fn import(file: &Path, out: &Path, force: bool, style: Style) -> Result<Outcome, UsageError> {
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
    let imported = match graph::import(&source, &name) {
        Ok(i) => i,
        Err(diagnostics) => {
            for d in &diagnostics {
                eprint!("{}", style.diagnostic(d));
            }
            return Ok(Outcome::Failed);
        }
    };
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
fn with_prefixes(sparql: &str) -> String {
    let mut out = String::new();
    for (p, ns) in crate::graph::vocab::PREFIXES {
        out.push_str(&format!("PREFIX {p}: <{ns}>\n"));
    }
    out.push_str(sparql);
    out
}
