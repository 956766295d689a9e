//! `cuga-flo man [--dir DIR]`: the man pages (roff), from the same clap model the parser
//! uses, so they never drift: `cuga-flo.1` for the command and one page per subcommand
//! (`cuga-flo-start.1`, `cuga-flo-runs-list.1`, ...). The repo keeps generated copies in
//! `man/` (a test checks they are current).

use std::path::PathBuf;

use clap::Args;

use super::{Outcome, UsageError};

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page (the command's and each subcommand's) into this folder instead of
    /// printing the command's page
    #[arg(short = 'o', long = "output", alias = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Every man page: (file name, roff text), the command's first.
pub fn pages() -> Vec<(String, String)> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, String)>) {
        let man = clap_mangen::Man::new(cmd.clone()).manual("cuga-flo manual");
        let mut text = Vec::new();
        // Rendering into memory cannot fail.
        let _ = man.render(&mut text);
        out.push((
            man.get_filename(),
            String::from_utf8_lossy(&text).into_owned(),
        ));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out);
        }
    }
    let mut cmd = super::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out);
    out
}

pub fn run(args: &ManArgs) -> Result<Outcome, UsageError> {
    let pages = pages();
    match &args.dir {
        None => {
            out!("{}", pages[0].1);
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| UsageError::new(format!("cannot create {}: {e}", dir.display())))?;
            for (name, text) in &pages {
                let path = dir.join(name);
                std::fs::write(&path, text).map_err(|e| {
                    UsageError::new(format!("cannot write {}: {e}", path.display()))
                })?;
            }
            outln!("wrote {} man pages to {}", pages.len(), dir.display());
        }
    }
    Ok(Outcome::Ok)
}
