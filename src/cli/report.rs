//! `cuga-flo runs report <run> -o run.html`: one self-contained HTML page of a journalled
//! run, rendered by [`crate::view::report`].

use std::path::{Path, PathBuf};

use clap::Args;

use crate::view::Names;
use crate::view::report::{Model, render};

use super::{Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run's id (or a unique prefix or suffix of it)
    pub run_id: String,
    #[command(flatten)]
    pub tampered: super::ReadTampered,
    #[command(flatten)]
    pub runs: super::RunDir,
    /// Where to write the page (standard output when not given and it is not a terminal)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The app, when the run's app is not found by its name under the apps folder
    #[arg(long, value_name = "APP|PATH")]
    pub app: Option<String>,
}

pub fn run(apps_dir: &Path, args: &ReportArgs, style: Style) -> Result<Outcome, UsageError> {
    if args.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(
            UsageError::new("the report is an HTML page; it is not written to a terminal")
                .with_help("write it to a file with -o run.html (or pipe it)"),
        );
    }
    let id = crate::run::lookup::find_run(&args.runs.run_dir, &args.run_id)?;
    let records = args.tampered.read(&args.runs.run_dir, &id, style)?;
    let app = match &args.app {
        Some(arg) => match super::target::resolve(arg, apps_dir)? {
            super::target::Target::App(app) => Some(crate::app::load_app(&app)),
            super::target::Target::Model(path) => {
                return Err(
                    UsageError::new(format!("{} is a model, not an app", path.display()))
                        .with_help("give the app's folder or name"),
                );
            }
        },
        None => crate::run::lookup::app_of(apps_dir, &records),
    };
    let names = match &app {
        Some(app) => Names::from_app(app),
        None => Names::default(),
    };
    let model = app.as_ref().and_then(|app| Model::for_run(app, &records));
    let page = render(&id, &records, model.as_ref(), &names);
    match &args.output {
        Some(file) => {
            std::fs::write(file, page)
                .map_err(|e| UsageError::new(format!("cannot write {}: {e}", file.display())))?;
            outln!("report of run {id}: {}", file.display());
        }
        None => out!("{page}"),
    }
    Ok(Outcome::Ok)
}
