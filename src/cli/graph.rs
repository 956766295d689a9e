//! `cuga-flo graph`: an app's (or a BPMN model's) flow as a Mermaid flowchart, a Graphviz
//! digraph, or an indented listing. Nodes are called by their names (their ids when
//! unnamed), drawn by kind (gateways diamonds, events circles, tasks boxes); edges carry
//! their names or conditions; flows with a hook are marked ⚑; boundary events hang off
//! their activity; sub-processes are subgraphs (clusters). Every label is escaped for its
//! format: a model's names are untrusted text and never break the syntax.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::app::load_app;
use crate::view::diagram::{ascii, dot, mermaid};

#[cfg(feature = "graph")]
use super::graphio;
use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  cuga-flo graph loan_approval\n  cuga-flo graph loan_approval --format dot\n  \
    cuga-flo graph export loan_approval -o loan.ttl\n  cuga-flo graph export loan_approval --annotations reified\n  cuga-flo graph import loan.ttl --out applications/loan_copy"
)]
pub struct GraphArgs {
    #[command(subcommand)]
    pub action: Option<GraphAction>,

    /// The app (a name under the apps folder, an app folder or a flow config), or a BPMN
    /// file
    #[arg(value_name = "APP|BPMN", required = true)]
    pub target: Option<String>,

    /// The output format
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: GraphFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// A Mermaid flowchart (renders in GitHub markdown)
    Mermaid,
    /// A Graphviz digraph (`dot -Tsvg`)
    Dot,
    /// An indented listing of the flow, branch by branch
    Ascii,
}

pub fn run(cli: &Cli, args: &GraphArgs, style: Style) -> Result<Outcome, UsageError> {
    if let Some(action) = &args.action {
        #[cfg(feature = "graph")]
        return graph_mode(cli, action, style);
        #[cfg(not(feature = "graph"))]
        {
            let _ = style;
            return Err(without_graph_mode(action));
        }
    }
    let target = args.target.as_deref().unwrap_or_default();
    let (process, hooks) = match resolve(target, &cli.apps_dir)? {
        Target::App(app) => {
            let loaded = load_app(&app);
            let process = loaded.process().cloned().ok_or_else(|| {
                UsageError::new(format!("the model of app `{}` cannot be read", app.name))
                    .with_help(format!("`cuga-flo validate {}` says why", app.name))
            })?;
            let hooks: BTreeSet<String> = (loaded.config.iter())
                .flat_map(|c| c.hooks.iter())
                .filter(|h| h.enabled)
                .filter_map(|h| h.location.as_ref().map(|l| l.value.clone()))
                .collect();
            (process, hooks)
        }
        Target::Model(path) => {
            let doc = crate::bpmn::parse_file(&path).map_err(|e| {
                UsageError::new(format!("{} cannot be read: {e}", path.display()))
                    .with_help(format!("`cuga-flo validate {}` says why", path.display()))
            })?;
            let process = doc
                .main_process()
                .cloned()
                .ok_or_else(|| UsageError::new(format!("{} has no process", path.display())))?;
            (process, BTreeSet::new())
        }
    };
    let text = match args.format {
        GraphFormat::Mermaid => mermaid(&process, &hooks),
        GraphFormat::Dot => dot(&process, &hooks),
        GraphFormat::Ascii => ascii(&process, &hooks),
    };
    out!("{text}");
    Ok(Outcome::Ok)
}

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

        /// How the annotations on conditional edges are written: RDF 1.2 annotations
        /// (`{| |}`), or standard RDF reification (`rdf:Statement` nodes) for RDF 1.1
        /// readers such as rdflib
        #[arg(long, value_enum, default_value = "star")]
        annotations: AnnotationStyle,

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
        #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
        out: PathBuf,

        /// Replace the folder if it exists
        #[arg(long)]
        force: bool,

        /// A folder of Goose recipes (`<name>.yaml`) an AgentFLOW graph's tasks name,
        /// looked in before `recipes/` beside the graph and in the folders above it
        #[arg(long, value_name = "DIR")]
        recipes: Vec<PathBuf>,
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

        #[command(flatten)]
        runs: super::RunDir,
    },
    /// Validate a process graph with SHACL against cuga-flo's process shapes: an app's
    /// export, or a graph file (Turtle, TriG .trig, N-Quads .nq). Exit 1 on a violation
    #[command(
        after_help = "Examples:\n  cuga-flo graph validate loan_approval\n  cuga-flo \
        graph validate definitions.ttl --report\n  cuga-flo graph validate --shapes"
    )]
    Validate {
        /// The app (a name under the apps folder, an app folder or a flow config), or a
        /// graph file
        #[arg(value_name = "APP|FILE", required_unless_present = "shapes")]
        target: Option<String>,

        /// Print the SHACL validation report (Turtle) instead of diagnostics
        #[arg(long, conflicts_with_all = ["json", "data_graph"])]
        report: bool,

        /// Print the results as JSON
        #[arg(long, conflicts_with = "data_graph")]
        json: bool,

        /// Print the data graph that is validated (N-Triples: annotations as RDF
        /// reification), for another SHACL processor
        #[arg(long)]
        data_graph: bool,

        /// Print the shapes (Turtle) and exit
        #[arg(long, conflicts_with_all = ["report", "json", "data_graph"])]
        shapes: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AnnotationStyle {
    /// RDF 1.2 annotations (RDF 1.2 and RDF-star readers: oxigraph, Jena)
    Star,
    /// Standard RDF reification: `rdf:Statement` nodes (any RDF reader)
    Reified,
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

/// `graph export|import|query|validate`.
#[cfg(feature = "graph")]
fn graph_mode(cli: &Cli, action: &GraphAction, style: Style) -> Result<Outcome, UsageError> {
    match action {
        GraphAction::Export {
            app,
            format,
            annotations,
            output,
        } => {
            let format = match format {
                RdfFormat::Turtle => crate::graph::Format::Turtle,
                RdfFormat::Trig => crate::graph::Format::TriG,
                RdfFormat::Nquads => crate::graph::Format::NQuads,
            };
            let annotations = match annotations {
                AnnotationStyle::Star => crate::graph::Annotations::Star,
                AnnotationStyle::Reified => crate::graph::Annotations::Reified,
            };
            graphio::export(cli, app, format, annotations, output.as_ref())
        }
        GraphAction::Import {
            file,
            out,
            force,
            recipes,
        } => graphio::import(file, out, recipes, *force, style),
        GraphAction::Query {
            target,
            sparql,
            json,
            runs,
        } => super::graphquery::query(
            cli,
            target,
            &graphio::with_prefixes(sparql),
            *json,
            &runs.run_dir,
        ),
        GraphAction::Validate {
            target,
            report,
            json,
            data_graph,
            shapes,
        } => {
            if *shapes {
                out!("{}", crate::graph::shacl::SHAPES);
                return Ok(Outcome::Ok);
            }
            let how = graphio::Shown {
                report: *report,
                json: *json,
                data_graph: *data_graph,
            };
            graphio::validate(cli, target.as_deref().unwrap_or_default(), how, style)
        }
    }
}

/// `graph export|import|query|validate` in a build without graph mode.
#[cfg(not(feature = "graph"))]
fn without_graph_mode(action: &GraphAction) -> UsageError {
    let what = match action {
        GraphAction::Export { .. } => "export",
        GraphAction::Import { .. } => "import",
        GraphAction::Query { .. } => "query",
        GraphAction::Validate { .. } => "validate",
    };
    UsageError::new(format!("`graph {what}`: {}", crate::graph::UNAVAILABLE)).with_help(format!(
        "{}; `cuga-flo graph APP` (the flow as Mermaid, dot or text) works without it",
        crate::graph::REBUILD
    ))
}
