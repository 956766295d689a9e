//! Finding apps: an app is a folder with a `config/` sub-folder holding a flow config
//! (`*_config.yaml` with a `flow:` key). A `supervisor*.yaml` beside it may name the flow
//! config explicitly, as in the original project's layout.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::diag::Diagnostic;
use crate::source::SourceFile;

use super::decode::parse_yaml;

/// The default apps folder, relative to the working directory.
pub const DEFAULT_APPS_DIR: &str = "applications";

/// An app found on disk, before loading.
#[derive(Debug, Clone)]
pub struct AppRef {
    pub name: String,
    pub dir: PathBuf,
    /// The flow config, or why none could be found.
    pub config: Result<PathBuf, Box<Diagnostic>>,
}

/// Every app under `apps_dir`, sorted by name.
pub fn discover(apps_dir: &Path) -> io::Result<Vec<AppRef>> {
    let mut apps = Vec::new();
    for entry in fs::read_dir(apps_dir)? {
        let entry = entry?;
        let path = entry.path();
        if path.join("config").is_dir() {
            apps.push(app_at(&path));
        }
    }
    apps.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(apps)
}

/// The app a run's journal names (its name under `apps_dir`, its folder, or its flow
/// config file), if it is there.
pub fn find(app: &str, apps_dir: &Path) -> Option<AppRef> {
    match resolve(app, apps_dir) {
        Ok(Target::App(app)) => Some(app),
        _ => None,
    }
}
/// The app in folder `dir` (which should have a `config/` sub-folder).
pub fn app_at(dir: &Path) -> AppRef {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let config = find_flow_config(dir, &name);
    AppRef {
        name,
        dir: dir.to_path_buf(),
        config,
    }
}

/// An app given by its flow config file directly.
pub fn app_from_config(config: &Path) -> AppRef {
    let config_dir = config.parent().unwrap_or(Path::new("."));
    let dir = if config_dir.file_name().is_some_and(|n| n == "config") {
        config_dir.parent().unwrap_or(config_dir)
    } else {
        config_dir
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| config.display().to_string());
    AppRef {
        name,
        dir: dir.to_path_buf(),
        config: Ok(config.to_path_buf()),
    }
}

fn find_flow_config(dir: &Path, name: &str) -> Result<PathBuf, Box<Diagnostic>> {
    let config_dir = dir.join("config");
    let mut files: Vec<PathBuf> = fs::read_dir(&config_dir)
        .map_err(|e| {
            Diagnostic::error(
                "app::unreadable",
                format!("cannot read {}: {e}", config_dir.display()),
            )
            .in_path(config_dir.display())
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let file_name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };

    if let Some(supervisor) = files.iter().find(|p| {
        let n = file_name(p);
        n.starts_with("supervisor") && (n.ends_with(".yaml") || n.ends_with(".yml"))
    }) && let Some(found) = flow_config_named_by_supervisor(supervisor)?
    {
        return Ok(found);
    }

    let candidates: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            let n = file_name(p);
            (n.ends_with("_config.yaml") || n.ends_with("_config.yml")) && has_flow_key(p)
        })
        .collect();
    let preferred = [format!("{name}_config.yaml"), format!("{name}_config.yml")];
    if let Some(found) = candidates
        .iter()
        .find(|p| preferred.contains(&file_name(p)))
        .or(candidates.first())
    {
        return Ok((*found).clone());
    }
    // The app's own config name, there but not a config: not a regular file, unreadable
    // (say why), or without `flow:` (the decoder says what is wrong, at its line).
    for path in preferred.iter().map(|n| config_dir.join(n)) {
        if fs::symlink_metadata(&path).is_err() {
            continue;
        }
        if let Err(e) = crate::source::read_file(&path) {
            return Err(Box::new(
                Diagnostic::error(
                    "app::unreadable",
                    format!("cannot read {}: {e}", path.display()),
                )
                .in_path(path.display()),
            ));
        }
        return Ok(path);
    }
    Err(Box::new(
        Diagnostic::error(
            "app::no_flow_config",
            format!("no flow config in {}", config_dir.display()),
        )
        .in_path(config_dir.display())
        .with_help(format!(
            "add `{name}_config.yaml` with a `flow:` section (id, name, bpmn_file) to {}",
            config_dir.display()
        )),
    ))
}

/// The flow config a supervisor file points at (`agents[].flow_config`), if any.
fn flow_config_named_by_supervisor(path: &Path) -> Result<Option<PathBuf>, Box<Diagnostic>> {
    let text = crate::source::read_text(path).map_err(|e| {
        Diagnostic::error(
            "app::unreadable",
            format!("cannot read {}: {e}", path.display()),
        )
        .in_path(path.display())
    })?;
    let source = SourceFile::new(path, text);
    let root = parse_yaml(&source)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let agents = root
        .get("agents")
        .and_then(|a| a.as_seq())
        .unwrap_or_default();
    for agent in agents {
        let Some(node) = agent.get("flow_config") else {
            continue;
        };
        let Some(rel) = node.as_str() else { continue };
        let target = base.join(rel);
        if target.is_file() {
            return Ok(Some(target));
        }
        return Err(Box::new(
            Diagnostic::error(
                "app::missing_file",
                format!("the supervisor names flow config `{rel}`, which does not exist"),
            )
            .at(
                &source,
                node.span,
                format!("looked for {}", target.display()),
            )
            .with_help("fix `flow_config:` (it is relative to the supervisor file)"),
        ));
    }
    Ok(None)
}

fn has_flow_key(path: &Path) -> bool {
    // A config that cannot be read as text (not UTF-8, say) is still the app's config when
    // it says `flow:`: loading it then reports what is wrong with it, at the file.
    let Ok(bytes) = crate::source::read_file(path) else {
        return false;
    };
    // A line that starts with the key (bytes are enough: a line break is never part of
    // a broken UTF-8 sequence, and the scan stops at the first match).
    bytes
        .split(|&b| b == b'\n')
        .any(|l| l.starts_with(b"flow:") || l.starts_with(b"\"flow\":"))
}

/// What a command argument names: an app (by name under the apps folder, or by its
/// folder), a flow config file, or a BPMN model on its own.
#[derive(Debug, Clone)]
pub enum Target {
    App(AppRef),
    Model(PathBuf),
}

/// Why an argument names no app or model.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("{arg} is a folder without a `config/` sub-folder, so it is not an app")]
    NotAnApp { arg: String },
    #[error("{arg} is neither a flow config (.yaml) nor a BPMN model (.bpmn, .xml)")]
    NotAFile { arg: String },
    #[error(
        "{arg} is not a regular file (a pipe, socket or device): name an app, its folder, \
         a flow config or a BPMN file"
    )]
    Special { arg: String },
    /// A symbolic link whose target cannot be reached (a loop, a dangling link).
    #[error("{arg} is a symbolic link that cannot be followed")]
    BrokenLink {
        arg: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no app `{arg}` under {}", apps_dir.display())]
    NoApp {
        arg: String,
        apps_dir: PathBuf,
        /// The apps that are there.
        names: Vec<String>,
    },
}

impl crate::diag::Help for ResolveError {
    fn help(&self) -> Option<String> {
        let ResolveError::NoApp { arg, names, .. } = self else {
            return None;
        };
        Some(
            match crate::diag::did_you_mean(arg, names.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None if names.is_empty() => "no apps there; pass --apps-dir DIR, or a path to an \
                                             app folder, config or BPMN file"
                    .to_string(),
                None => format!("available: {}", crate::diag::name_list(names, 20)),
            },
        )
    }
}

/// Resolve one argument naming an app or a model.
pub fn resolve(arg: &str, apps_dir: &Path) -> Result<Target, ResolveError> {
    let path = Path::new(arg);
    if path.is_dir() {
        if path.join("config").is_dir() {
            return Ok(Target::App(app_at(path)));
        }
        if path.file_name().is_some_and(|n| n == "config")
            && let Some(parent) = path.parent().filter(|p| p.join("config").is_dir())
        {
            return Ok(Target::App(app_at(parent)));
        }
        // A name that also happens to be a folder in the working directory.
        if !apps_dir.join(arg).join("config").is_dir() {
            return Err(ResolveError::NotAnApp {
                arg: arg.to_string(),
            });
        }
    } else if path.is_file() {
        let name = arg.to_ascii_lowercase();
        if name.ends_with(".yaml") || name.ends_with(".yml") {
            return Ok(Target::App(app_from_config(path)));
        }
        if name.ends_with(".bpmn") || name.ends_with(".xml") || name.ends_with(".bpmn2") {
            return Ok(Target::Model(path.to_path_buf()));
        }
        return Err(ResolveError::NotAFile {
            arg: arg.to_string(),
        });
    } else if path.exists() {
        return Err(ResolveError::Special {
            arg: arg.to_string(),
        });
    } else if path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
        && let Err(source) = std::fs::metadata(path)
    {
        return Err(ResolveError::BrokenLink {
            arg: arg.to_string(),
            source,
        });
    }
    let dir = apps_dir.join(arg);
    if dir.join("config").is_dir() {
        return Ok(Target::App(app_at(&dir)));
    }
    Err(ResolveError::NoApp {
        arg: arg.to_string(),
        apps_dir: apps_dir.to_path_buf(),
        names: discover(apps_dir)
            .map(|apps| apps.into_iter().map(|a| a.name).collect())
            .unwrap_or_default(),
    })
}
