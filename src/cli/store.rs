//! `cuga-flo store migrate|status`: the run store a `--store URL` names (a PostgreSQL
//! database several hosts share; [`crate::run::store`]).

use clap::{Args, Subcommand};

use crate::run::store::{self, Status, StoreUrl};

use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Bring the database `--store` names to this build's schema (versioned migrations,
    /// applied once, in one transaction; run it from any one host)
    Migrate {
        /// One JSON document
        #[arg(long)]
        json: bool,
    },
    /// The database's schema version and how many runs it keeps
    Status {
        /// One JSON document
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cli: &Cli, args: &StoreArgs, style: Style) -> Result<Outcome, UsageError> {
    let Some(url) = &cli.store else {
        return Err(UsageError::new("no run store is named")
            .with_help("give --store postgres://USER:PASSWORD@HOST:PORT/DB (or CUGA_FLO_STORE)"));
    };
    let url = StoreUrl::parse(url)?;
    if url == StoreUrl::Files {
        return Err(UsageError::new(
            "the run folder needs no migration: `store` is for a database (--store postgres://…)",
        ));
    }
    let (status, json) = match &args.command {
        StoreCommand::Migrate { json } => (store::migrate(&url, true)?, *json),
        StoreCommand::Status { json } => (store::migrate(&url, false)?, *json),
    };
    if json {
        outln!("{}", to_json(&status));
    } else {
        print(&status, style);
    }
    Ok(if status.version == status.needs {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

fn to_json(status: &Status) -> serde_json::Value {
    serde_json::json!({
        "store": status.shown,
        "version": status.version,
        "needs": status.needs,
        "applied": status.applied.iter().map(|(v, name)| serde_json::json!({"version": v, "name": name})).collect::<Vec<_>>(),
        "runs": status.runs,
        "parked": status.parked,
        "finished": status.finished,
    })
}

fn print(status: &Status, style: Style) {
    for (version, name) in &status.applied {
        outln!("applied {version}: {name}");
    }
    let state = if status.version == status.needs {
        style.green("up to date")
    } else if status.version < status.needs {
        style.red(&format!(
            "behind: this cuga-flo needs {}; run `cuga-flo store migrate`",
            status.needs
        ))
    } else {
        style.red(&format!("newer than this cuga-flo ({})", status.needs))
    };
    outln!(
        "{}: schema version {} ({state}); {} runs: {} parked, {} finished",
        status.shown,
        status.version,
        status.runs,
        status.parked,
        status.finished
    );
}
