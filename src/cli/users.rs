//! `cuga-flo users add|remove|list`: the people who may sign in to the web console
//! (`serve --ui`), kept in a users file of argon2id hashes ([`crate::web::users`]).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::web::users::{DEFAULT_FILE, Users};

use super::{Outcome, Style, UsageError};

#[derive(Debug, Args)]
pub struct UsersArgs {
    #[command(subcommand)]
    pub command: UsersCommand,
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Add a person (or set a new password): asked at the terminal without echo, or read
    /// from standard input's first line (--password-stdin)
    Add {
        /// Their name: what an app's approvers list and a journal's `by` say
        name: String,
        /// Read the password from standard input's first line
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        file: UsersFile,
    },
    /// Remove a person
    Remove {
        name: String,
        #[command(flatten)]
        file: UsersFile,
    },
    /// List the people who may sign in
    List {
        #[command(flatten)]
        file: UsersFile,
    },
}

#[derive(Debug, Args)]
pub struct UsersFile {
    /// The users file [default: <run-dir>/users]
    #[arg(long, value_name = "FILE")]
    pub users: Option<PathBuf>,
    #[command(flatten)]
    pub runs: super::RunDir,
}

impl UsersFile {
    fn path(&self) -> PathBuf {
        self.users
            .clone()
            .unwrap_or_else(|| self.runs.run_dir.join(DEFAULT_FILE))
    }
}

fn usage(e: impl std::fmt::Display) -> UsageError {
    UsageError::new(e.to_string())
}

pub fn run(args: &UsersArgs, style: Style) -> Result<Outcome, UsageError> {
    match &args.command {
        UsersCommand::Add {
            name,
            password_stdin,
            file,
        } => {
            let path = file.path();
            let mut users = Users::read(&path).map_err(usage)?;
            let password = password(*password_stdin)?;
            let new = !users.names().any(|n| n == name);
            users.set(name, &password).map_err(usage)?;
            users.write(&path).map_err(usage)?;
            outln!(
                "{} {} `{name}` in {}",
                style.green("✓"),
                if new { "added" } else { "new password for" },
                path.display()
            );
        }
        UsersCommand::Remove { name, file } => {
            let path = file.path();
            let mut users = Users::read(&path).map_err(usage)?;
            users.remove(name).map_err(usage)?;
            users.write(&path).map_err(usage)?;
            outln!(
                "{} removed `{name}` from {}",
                style.green("✓"),
                path.display()
            );
        }
        UsersCommand::List { file } => {
            let users = Users::read(&file.path()).map_err(usage)?;
            if users.is_empty() {
                outln!("no users in {}", file.path().display());
            }
            for name in users.names() {
                outln!("{name}");
            }
        }
    }
    Ok(Outcome::Ok)
}

/// The new password: asked twice at the terminal without echo, or standard input's first
/// line.
fn password(from_stdin: bool) -> Result<String, UsageError> {
    use std::io::IsTerminal;
    if from_stdin || !std::io::stdin().is_terminal() {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| UsageError::new(format!("cannot read the password: {e}")))?;
        return Ok(line.trim_end_matches(['\r', '\n']).to_string());
    }
    let term = console::Term::stderr();
    let ask = |prompt: &str| -> Result<String, UsageError> {
        let _ = term.write_str(prompt);
        term.read_secure_line()
            .map_err(|e| UsageError::new(format!("cannot read the password: {e}")))
    };
    let first = ask("password: ")?;
    let again = ask("again: ")?;
    if first != again {
        return Err(UsageError::new(
            "the two passwords differ; nothing was written",
        ));
    }
    Ok(first)
}
