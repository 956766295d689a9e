//! `cuga-flo completions <shell>`: shell completion scripts from the same clap model the
//! parser uses, so they never drift. The repo keeps generated copies in `completions/`
//! (a test checks they are current, and drives the bash one).
//!
//! Two things are added to clap's scripts: bash's per-subcommand functions are renamed so
//! that they match the labels that dispatch to them (clap_complete mangles a `-` in the
//! binary's name differently in the two places, so options of subcommands never
//! completed), and bash and fish ask the hidden `cuga-flo __complete` for what only the
//! working folder knows: app names, an app's scenarios and run ids.

use std::path::{Path, PathBuf};

use clap::Args;
use clap_complete::Shell;

use super::{Outcome, UsageError};
use crate::journal::store::DEFAULT_BASE;

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

const BIN: &str = "cuga-flo";

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut super::command(), BIN, &mut out);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    match shell {
        Shell::Bash => {
            // Labels read `cuga__subcmd__flo__subcmd__start)` where the dispatcher sets
            // `cuga__flo__subcmd__start`.
            text = text.replace(&BIN.replace('-', "__subcmd__"), &BIN.replace('-', "__"));
            let function = format!("_{}", BIN.replace('-', "__"));
            text = text.replace(
                &format!("complete -F {function} "),
                "complete -F _cuga_flo_dynamic ",
            );
            text.push_str(&format!(
                r#"
# Apps, scenarios and run ids, from the working folder (`cuga-flo __complete`).
_cuga_flo_dynamic() {{
    {function} "$@"
    local cword=$COMP_CWORD cur="${{COMP_WORDS[COMP_CWORD]}}" colon=""
    # bash splits APP:SCENARIO at the colon (COMP_WORDBREAKS): put the word together, and
    # answer with what comes after the colon.
    if [[ "$cur" == ":" ]]; then
        colon="${{COMP_WORDS[cword-1]}}:"; cur=""; cword=$((cword - 1))
    elif (( cword >= 2 )) && [[ "${{COMP_WORDS[cword-1]}}" == ":" ]]; then
        colon="${{COMP_WORDS[cword-2]}}:"; cword=$((cword - 2))
    fi
    [[ "$cur" == -* ]] && return 0
    local IFS=$'\n'
    local dynamic=($("$1" __complete -- "${{COMP_WORDS[@]:1:cword-1}}" 2>/dev/null))
    if (( ${{#dynamic[@]}} )); then
        COMPREPLY=($(compgen -W "${{dynamic[*]}}" -- "$colon$cur"))
        [[ -n "$colon" ]] && COMPREPLY=("${{COMPREPLY[@]#"$colon"}}")
    fi
    return 0
}}
"#
            ));
        }
        Shell::Fish => {
            // `--app` takes an app's name: offer the apps, not file names.
            text = text
                .lines()
                .map(|line| {
                    if line.contains(" -l app ") && line.ends_with(" -r") {
                        format!(
                            "{line} -f -a \"({BIN} __complete -- (commandline -opc)[2..-1] 2>/dev/null)\""
                        )
                    } else {
                        line.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n";
            text.push_str(&format!(
                "\n# Apps, scenarios and run ids, from the working folder (`{BIN} __complete`).\n\
                 complete -c {BIN} -f -a \"({BIN} __complete -- (commandline -opc)[2..-1] 2>/dev/null)\"\n"
            ));
        }
        _ => {}
    }
    text
}

/// The hidden command the scripts call: `cuga-flo __complete -- WORDS…`.
pub const HOOK: &str = "__complete";

/// `cuga-flo __complete -- WORDS…` (the words of the command line before the one being
/// completed, without the program's name): the candidates for the next word, one per
/// line, when it is an app, a scenario or a run id; nothing otherwise (the shell's own
/// completion stands).
pub fn complete(args: &[std::ffi::OsString]) -> Outcome {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .skip_while(|w| w == "--")
        .collect();
    let apps = std::env::var_os("CUGA_FLO_APPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(crate::app::registry::DEFAULT_APPS_DIR));
    for candidate in candidates(&apps, &words) {
        outln!("{candidate}");
    }
    Outcome::Ok
}

/// What may come after `words`.
pub fn candidates(default_apps: &Path, words: &[String]) -> Vec<String> {
    let root = super::command();
    let mut apps_dir = default_apps.to_path_buf();
    let mut run_dir = PathBuf::from(DEFAULT_BASE);
    // The subcommand path (`start`, `runs show`) and the positionals after it.
    let mut path: Vec<String> = Vec::new();
    let mut positionals: Vec<String> = Vec::new();
    let mut command = &root;
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let takes_value = command
                .get_arguments()
                .chain(root.get_arguments())
                .find(|a| a.get_long() == Some(name))
                .is_some_and(|a| a.get_action().takes_values());
            let value = match (inline, takes_value) {
                (Some(v), _) => Some(v),
                (None, true) => {
                    i += 1;
                    match words.get(i) {
                        Some(v) => Some(v.clone()),
                        // The value is the word being completed.
                        None => return option_values(name, &apps_dir, &positionals, &path),
                    }
                }
                (None, false) => None,
            };
            match (name, value) {
                ("apps-dir", Some(v)) => apps_dir = PathBuf::from(v),
                ("run-dir", Some(v)) => run_dir = PathBuf::from(v),
                _ => {}
            }
        } else if !word.starts_with('-') || word == "-" {
            match command.find_subcommand(word) {
                Some(sub) if positionals.is_empty() => {
                    path.push(word.clone());
                    command = sub;
                }
                _ => positionals.push(word.clone()),
            }
        }
        i += 1;
    }
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    match (path.as_slice(), positionals.len()) {
        (["start" | "validate" | "serve" | "describe" | "graph"] | ["kogito", "build"], 0) => {
            app_names(&apps_dir)
        }
        (["test"], _) => {
            let mut out = app_names(&apps_dir);
            for app in app_names(&apps_dir) {
                out.extend(
                    crate::app::scenario::list(&apps_dir.join(&app))
                        .into_iter()
                        .map(|s| format!("{app}:{s}")),
                );
            }
            out
        }
        // Runs with more to do, for the commands that go on with one.
        (["runs", "resume" | "answer" | "cancel" | "message" | "watch"], 0) => {
            let mut ids: Vec<String> = crate::run::listing::summaries(&run_dir)
                .into_iter()
                .filter(|r| r.status.is_open())
                .map(|r| r.id)
                .collect();
            if !ids.is_empty() {
                ids.push("last".into());
            }
            ids
        }
        (["runs", "show" | "replay" | "verify" | "export" | "report"], 0) => {
            let mut ids = super::runs::run_ids_in(&run_dir);
            if !ids.is_empty() {
                ids.push("last".into());
            }
            ids
        }
        _ => Vec::new(),
    }
}

/// Values of option `name` when they are apps or scenarios.
fn option_values(
    name: &str,
    apps_dir: &Path,
    positionals: &[String],
    path: &[String],
) -> Vec<String> {
    match name {
        "scenario" if path.first().is_some_and(|p| p == "start") => positionals
            .first()
            .map(|app| {
                let dir = if Path::new(app).join("config").is_dir() {
                    PathBuf::from(app)
                } else {
                    apps_dir.join(app)
                };
                crate::app::scenario::list(&dir)
            })
            .unwrap_or_default(),
        "app" => app_names(apps_dir),
        _ => Vec::new(),
    }
}

fn app_names(apps_dir: &Path) -> Vec<String> {
    crate::app::registry::discover(apps_dir)
        .map(|apps| apps.into_iter().map(|a| a.name).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn candidates_follow_the_command_line() {
        let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("applications");
        let names = candidates(&apps, &words("start"));
        assert!(names.contains(&"trip_planner".to_owned()), "{names:?}");
        // After the app, nothing dynamic; its scenarios after --scenario.
        assert!(candidates(&apps, &words("start trip_planner")).is_empty());
        assert_eq!(
            candidates(&apps, &words("start trip_planner --scenario")),
            ["agent_plans", "human_plans"]
        );
        assert_eq!(
            candidates(
                &apps,
                &words("start --engine native trip_planner --scenario")
            ),
            ["agent_plans", "human_plans"]
        );
        let targets = candidates(&apps, &words("test trip_planner"));
        assert!(
            targets.contains(&"trip_planner:human_plans".to_owned()),
            "{targets:?}"
        );
        assert!(candidates(&apps, &words("runs list --app")).contains(&"receive_order".to_owned()));
        assert!(candidates(&apps, &words("list")).is_empty());
    }

    /// fish offers app names for `--app` (from `__complete`), not file names.
    #[test]
    fn fish_completes_app_options_with_app_names() {
        let fish = script(Shell::Fish);
        let app_lines: Vec<&str> = fish.lines().filter(|l| l.contains(" -l app ")).collect();
        assert!(app_lines.len() >= 3, "{fish}");
        for line in app_lines {
            assert!(line.contains("-f -a \"(cuga-flo __complete --"), "{line}");
        }
    }
}
