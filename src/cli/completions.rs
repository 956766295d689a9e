//! `cuga-flo completions <shell>`: shell completion scripts from the same clap model the
//! parser uses, so they never drift. The repo keeps generated copies in `completions/`
//! (a test checks they are current).

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, Outcome, UsageError};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: &CompletionsArgs) -> Result<Outcome, UsageError> {
    out!("{}", script(args.shell));
    Ok(Outcome::Ok)
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "cuga-flo", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}
