//! `cuga-flo init <app> [--template approval|triage|blank]`: a new app folder that
//! validates and whose scenarios pass, from templates embedded in the binary.
//!
//! The app's name is substituted for `{{app}}` (and a title made of it for `{{title}}`) in
//! every file. The name is checked first (a folder-safe identifier, which is also safe in
//! the BPMN's ids, the YAML and file names), an existing folder is never touched, and the
//! files are written into a temporary folder beside the target that is renamed into place
//! last: either the whole app appears or nothing does.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::app::init::{Template, bad_name, render, write_app};

use super::{Cli, Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The new app's name: its folder under the apps folder (letters, digits, `_` and `-`,
    /// starting with a letter)
    #[arg(value_name = "APP")]
    pub app: String,

    /// What the new app starts from
    #[arg(long, value_enum, default_value_t = TemplateArg::Approval)]
    pub template: TemplateArg,
}

/// The templates `init` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TemplateArg {
    /// A task agent, a hook that screens its answer by rule, and a gateway with a
    /// deterministic condition and a default flow
    Approval,
    /// A task agent, then a gateway reasoned by rules and a model, with three branches
    Triage,
    /// Start, one task agent, end
    Blank,
}

impl From<TemplateArg> for Template {
    fn from(t: TemplateArg) -> Template {
        match t {
            TemplateArg::Approval => Template::Approval,
            TemplateArg::Triage => Template::Triage,
            TemplateArg::Blank => Template::Blank,
        }
    }
}

pub fn run(cli: &Cli, args: &InitArgs, style: Style) -> Result<Outcome, UsageError> {
    if let Some(why) = bad_name(&args.app) {
        return Err(UsageError::new(format!("cannot create app: {why}"))
            .with_help("for example: `cuga-flo init expense_approval`"));
    }
    let target = cli.apps_dir.join(&args.app);
    if std::fs::symlink_metadata(&target).is_ok() {
        eprintln!(
            "{}: {} already exists; nothing was written",
            style.error_word(),
            target.display()
        );
        eprintln!("  help: choose another name, or remove the folder first");
        return Ok(Outcome::Failed);
    }
    let files = render(args.template.into(), &args.app);
    if let Err(e) = write_app(&target, &files) {
        eprintln!(
            "{}: cannot create {}: {e}; nothing was written",
            style.error_word(),
            target.display()
        );
        return Ok(Outcome::Failed);
    }
    outln!(
        "created app `{}` ({} template) in {}",
        args.app,
        Template::from(args.template).name(),
        target.display()
    );
    let mut paths: Vec<&PathBuf> = files.iter().map(|(p, _)| p).collect();
    paths.sort();
    for p in paths {
        outln!("  {}", p.display());
    }
    let dir_flag = if cli.apps_dir == Path::new(crate::app::registry::DEFAULT_APPS_DIR) {
        String::new()
    } else {
        format!(" --apps-dir {}", cli.apps_dir.display())
    };
    outln!("next:");
    outln!("  cuga-flo{dir_flag} validate {}", args.app);
    outln!("  cuga-flo{dir_flag} test {}", args.app);
    Ok(Outcome::Ok)
}
