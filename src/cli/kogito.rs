//! `cuga-flo kogito build <app>`: generate the Kogito (Apache KIE) service of an app — a
//! Quarkus project with the model rewritten so that every control point is a user task
//! cuga-flo completes ([`crate::engine::kogito`]) — and build it with Maven.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use clap::{Args, Subcommand};

use crate::app::EngineKind;
use crate::engine::kogito::Persistence;
use crate::engine::kogito::{augment, project};
use crate::harness::FlowAgent;
use crate::reason::NoModel;

use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};
use crate::run::chain;

#[derive(Debug, Args)]
pub struct KogitoArgs {
    #[command(subcommand)]
    pub command: KogitoCommand,
}

#[derive(Debug, Subcommand)]
pub enum KogitoCommand {
    /// Generate the app's Kogito service (a Quarkus project) and build it with Maven
    Build(BuildArgs),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The app: a name under the apps folder, an app folder or a flow config file
    #[arg(value_name = "APP|PATH")]
    pub app: String,

    /// Where the project goes (default: .cuga-flo/kogito/<app>)
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// The service's port (default: the port of the config's `workflow_engine.url`, else 8081)
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,

    /// Write the project only; do not run Maven
    #[arg(long)]
    pub no_build: bool,

    /// Where the service keeps its process instances: `memory` (a restart forgets them)
    /// or `postgresql` (Kogito's JDBC persistence; the database from
    /// QUARKUS_DATASOURCE_JDBC_URL, _USERNAME, _PASSWORD when the service starts)
    #[arg(long, value_name = "STORE", value_enum, default_value = "memory")]
    pub persistence: PersistenceArg,
}

/// `--persistence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PersistenceArg {
    Memory,
    Postgresql,
}

impl From<PersistenceArg> for Persistence {
    fn from(p: PersistenceArg) -> Persistence {
        match p {
            PersistenceArg::Memory => Persistence::Memory,
            PersistenceArg::Postgresql => Persistence::Postgresql,
        }
    }
}

pub fn run(cli: &Cli, args: &KogitoArgs, _style: Style) -> Result<Outcome, UsageError> {
    match &args.command {
        KogitoCommand::Build(args) => build(cli, args),
    }
}

fn build(cli: &Cli, args: &BuildArgs) -> Result<Outcome, UsageError> {
    let app = match resolve(&args.app, &cli.apps_dir)? {
        Target::App(app) => app,
        Target::Model(path) => {
            return Err(UsageError::new(format!(
                "{} is a BPMN model; `kogito build` builds an app",
                path.display()
            )));
        }
    };
    let loaded = chain::load_checked(&app).map_err(|errors| {
        UsageError::new(format!(
            "app `{}` does not validate:\n  {}",
            app.name,
            errors.join("\n  ")
        ))
    })?;
    let config = loaded
        .config
        .as_ref()
        .ok_or_else(|| UsageError::new("the app has no flow config"))?;
    let process = loaded
        .process()
        .ok_or_else(|| UsageError::new("the app's BPMN model has no process"))?;
    // Only the hooks and the like are read: no control point is answered here.
    let annotations = FlowAgent::new(&loaded, Arc::new(NoModel))
        .map_err(|e| UsageError::new(e.to_string()))?
        .annotations();
    let engine = &config.engine;
    let process_id = engine
        .process_id
        .as_ref()
        .map_or_else(|| process.id.clone(), |p| p.value.clone());
    let mut variables: Vec<String> = config
        .variables
        .iter()
        .map(|v| v.name.value.clone())
        .collect();
    for p in &process.properties {
        let name = p.name.clone().unwrap_or_else(|| p.id.clone());
        if !variables.contains(&name) {
            variables.push(name);
        }
    }
    let persistence = Persistence::from(args.persistence);
    let augmented = augment::augment_for(
        process,
        &annotations,
        &process_id,
        &variables,
        "",
        persistence,
    )
    .map_err(|problems| {
        let list: Vec<String> = problems
            .iter()
            .map(|(id, why)| format!("`{id}`: {why}"))
            .collect();
        UsageError::new(format!(
            "the model cannot run on Kogito: {}",
            list.join("; ")
        ))
    })?;
    let port = args
        .port
        .or_else(|| {
            (engine.kind == EngineKind::Kogito)
                .then_some(engine.url.as_ref())
                .flatten()
                .and_then(|u| port_of(&u.value))
        })
        .unwrap_or(8081);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(".cuga-flo/kogito").join(&app.name));
    let model = project::write_with(
        &out,
        &app.name,
        std::slice::from_ref(&augmented),
        port,
        persistence,
    )
    .map_err(|e| UsageError::new(format!("cannot write {}: {e}", out.display())))?;
    outln!("wrote {} (model {})", out.display(), model[0].display());
    if args.no_build {
        return Ok(Outcome::Ok);
    }
    let status = Command::new("mvn")
        .args(["-B", "-q", "-DskipTests", "package"])
        .current_dir(&out)
        .status()
        .map_err(|e| {
            UsageError::new(format!("cannot run Maven (`mvn`): {e}"))
                .with_help("install Java 17+ and Maven, or pass --no-build")
        })?;
    if !status.success() {
        eprintln!("mvn package failed in {} ({status})", out.display());
        return Ok(Outcome::Failed);
    }
    outln!(
        "built {}; run it with: java -jar {}",
        out.display(),
        project::runner(&out).display()
    );
    Ok(Outcome::Ok)
}

/// The port of `http://host:port/...`.
fn port_of(url: &str) -> Option<u16> {
    let rest = url.split("://").nth(1)?;
    let authority = rest.split('/').next()?;
    authority.rsplit_once(':')?.1.parse().ok()
}
