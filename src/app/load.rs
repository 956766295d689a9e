//! Loading one app: read and decode its flow config, then read and parse the BPMN model
//! it names. Problems become diagnostics; loading never stops at the first one.

use std::fs;
use std::path::{Path, PathBuf};

use crate::bpmn::{self, BpmnError, ParseErrors};
use crate::diag::{Diagnostic, name_list};
use crate::source::SourceFile;

use super::config::FlowConfig;
use super::decode::decode;
use super::registry::AppRef;

/// An app with everything that could be read of it.
#[derive(Debug, Clone)]
pub struct LoadedApp {
    pub name: String,
    pub dir: PathBuf,
    pub config_path: Option<PathBuf>,
    pub config: Option<FlowConfig>,
    pub bpmn_path: Option<PathBuf>,
    pub bpmn: Option<std::sync::Arc<bpmn::Document>>,
    /// Problems found while loading (syntax, types, missing files).
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadedApp {
    /// The process the app runs, when its model was read.
    pub fn process(&self) -> Option<&bpmn::Process> {
        self.bpmn.as_ref()?.main_process()
    }

    /// [`LoadedApp::process`], shared: a run, its harness and its engine hold it without
    /// copying it (a model of 100,000 nodes is tens of megabytes).
    pub fn shared_process(&self) -> Option<std::sync::Arc<bpmn::Process>> {
        self.bpmn.as_ref()?.main_shared().cloned()
    }

    /// What the app's files are, as one lowercase hex SHA-256: over the flow config, the
    /// BPMN model, then every policy file the config names (sorted by path, each once),
    /// each as `{path relative to the app folder}\n{length}\n{bytes}` (a file that
    /// cannot be read as `{path}\nmissing\n`). Read from disk now: a run journals the
    /// digest of what it loaded, so a changed file gives another digest.
    pub fn digest(&self) -> String {
        // Each path named once (resolving symbolic links costs a system call per step).
        let base = absolute(&self.dir);
        let named = |p: PathBuf| (relative_name(&p, &base), p);
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        files.extend(self.config_path.clone().map(named));
        files.extend(self.bpmn_path.clone().map(named));
        if let Some(config) = &self.config {
            let mut policies: Vec<(String, PathBuf)> = config
                .tasks
                .iter()
                .filter_map(|t| t.policy.as_ref())
                .chain(config.gateways.iter().filter_map(|g| g.policy.as_ref()))
                .chain(config.hooks.iter().filter_map(|h| h.policy.as_ref()))
                .map(|p| named(config.resolve(&p.value)))
                .collect();
            policies.sort_by(|a, b| a.0.cmp(&b.0));
            policies.dedup_by(|a, b| a.1 == b.1);
            files.extend(policies);
        }
        let mut context = ring::digest::Context::new(&ring::digest::SHA256);
        for (name, path) in &files {
            context.update(name.as_bytes());
            match crate::source::read_file(path) {
                Ok(bytes) => {
                    context.update(format!("\n{}\n", bytes.len()).as_bytes());
                    context.update(&bytes);
                }
                Err(_) => context.update(b"\nmissing\n"),
            }
        }
        crate::digest::hex(context.finish().as_ref())
    }
}

/// `p` with its symbolic links resolved (as written when it cannot be), tidied.
fn absolute(p: &Path) -> PathBuf {
    tidy(&p.canonicalize().unwrap_or_else(|_| p.to_path_buf()))
}

/// `path` relative to `base` (an [`absolute`] path), with `/` separators (`../` steps
/// when it is outside).
fn relative_name(path: &Path, base: &Path) -> String {
    use std::path::Component;
    let path = absolute(path);
    let p: Vec<Component> = path.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); b.len() - common];
    parts.extend(
        p[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

impl FlowConfig {
    /// The folder relative paths in this config are resolved against.
    pub fn base_dir(&self) -> &Path {
        self.source.path().parent().unwrap_or(Path::new("."))
    }

    /// A path written in this config, resolved (and tidied: `config/../policies/x.md`
    /// becomes `policies/x.md`).
    pub fn resolve(&self, relative: &str) -> PathBuf {
        tidy(&self.base_dir().join(relative))
    }
}

/// Drop `.` and fold `dir/..` pairs without touching the file system.
fn tidy(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

pub fn load_app(app: &AppRef) -> LoadedApp {
    let mut loaded = LoadedApp {
        name: app.name.clone(),
        dir: app.dir.clone(),
        config_path: None,
        config: None,
        bpmn_path: None,
        bpmn: None,
        diagnostics: Vec::new(),
    };
    let config_path = match &app.config {
        Ok(p) => p.clone(),
        Err(d) => {
            loaded.diagnostics.push((**d).clone());
            return loaded;
        }
    };
    loaded.config_path = Some(config_path.clone());
    let text = match crate::source::read_file(&config_path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                loaded.diagnostics.push(
                    Diagnostic::error("config::encoding", format!("the config is not UTF-8: {e}"))
                        .in_path(config_path.display()),
                );
                return loaded;
            }
        },
        Err(e) => {
            loaded.diagnostics.push(
                Diagnostic::error(
                    "app::unreadable",
                    format!("cannot read {}: {e}", config_path.display()),
                )
                .in_path(config_path.display()),
            );
            return loaded;
        }
    };
    let source = SourceFile::new(&config_path, text);
    let (config, diags) = decode(&source);
    loaded.diagnostics.extend(diags);
    let Some(config) = config else { return loaded };

    if let Some(rel) = &config.flow.bpmn_file {
        let path = config.resolve(&rel.value);
        // Anything that exists is opened: a directory or a device is refused by the
        // reader with what it is, not reported missing.
        if path.exists() {
            match bpmn::parse_file(&path) {
                Ok(mut doc) => {
                    loaded.diagnostics.extend(choose_process(&config, &mut doc));
                    loaded.bpmn = Some(std::sync::Arc::new(doc));
                }
                Err(errs) => loaded.diagnostics.extend(bpmn_diagnostics(&errs)),
            }
        } else {
            let others = sibling_models(config.base_dir());
            let help = if others.is_empty() {
                format!("no BPMN file is in {}", config.base_dir().display())
            } else {
                format!(
                    "{} has {}",
                    config.base_dir().display(),
                    name_list(&others, 5)
                )
            };
            loaded.diagnostics.push(
                Diagnostic::error(
                    "app::missing_file",
                    format!("the BPMN file `{}` does not exist", rel.value),
                )
                .at(&source, rel.span, format!("looked for {}", path.display()))
                .with_help(help),
            );
        }
        loaded.bpmn_path = Some(path);
    }
    loaded.config = Some(config);
    loaded
}

/// Choose the process of `doc` the app runs: the one `flow.process` names; else the one
/// whose id is `flow.id` or the engine's process key; else the only runnable one (see
/// [`bpmn::Document::runnable`]). Several runnable processes and no choice is an error
/// naming them, as is a `process:` naming none. The other processes are still checked.
fn choose_process(config: &FlowConfig, doc: &mut bpmn::Document) -> Option<Diagnostic> {
    if let Some(wanted) = &config.flow.process {
        if doc.choose(&wanted.value) {
            return None;
        }
        let all: Vec<&str> = doc.processes.iter().map(|p| p.id.as_str()).collect();
        let help = match crate::diag::did_you_mean(&wanted.value, all.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("the file has {}", name_list(&all, 8)),
        };
        return Some(
            Diagnostic::error(
                "app::unknown_process",
                format!(
                    "the BPMN file `{}` has no process `{}`",
                    doc.source.path().display(),
                    wanted.value
                ),
            )
            .at(
                &config.source,
                wanted.span,
                "not a process id of the model".to_string(),
            )
            .with_help(help),
        );
    }
    let named = [
        config.flow.id.as_ref(),
        config.engine.process_definition_key.as_ref(),
        config.engine.process_id.as_ref(),
    ];
    for key in named.into_iter().flatten() {
        if doc.choose(&key.value) {
            return None;
        }
    }
    let runnable = doc.runnable();
    if runnable.len() < 2 {
        return None;
    }
    let text = &doc.source;
    let listed: Vec<String> = runnable
        .iter()
        .map(|p| format!("`{}` (line {})", p.id, text.line_col(p.span.offset).line))
        .collect();
    let mut d = Diagnostic::error(
        "app::ambiguous_process",
        format!(
            "the BPMN file has {} processes that could run: {}; the config chooses none",
            runnable.len(),
            listed.join(", ")
        ),
    )
    .at(
        text,
        runnable[0].span,
        format!("process `{}`", runnable[0].id),
    );
    for p in &runnable[1..] {
        d = d.also(p.span, format!("process `{}`", p.id));
    }
    Some(d.with_help(format!(
        "name the one to run under `flow:` in {}: `process: {}` (mark the others isExecutable=\"false\" if they are documentation)",
        config.source.path().display(),
        runnable[0].id
    )))
}

/// BPMN-looking files in a folder, for "did you mean" help.
fn sibling_models(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    n.ends_with(".bpmn") || n.ends_with(".bpmn20.xml") || n.ends_with(".bpmn2")
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// One diagnostic per BPMN parse problem, pointing into the model's text.
pub fn bpmn_diagnostics(errs: &ParseErrors) -> Vec<Diagnostic> {
    errs.errors
        .iter()
        .map(|e| {
            let mut d = Diagnostic::error(e.code(), e.to_string());
            match (&errs.text, e.span()) {
                (Some(text), Some(span)) => {
                    d = d.at(text, span, None);
                    if let BpmnError::DuplicateId { first, .. } = e {
                        d = d.also(*first, "first used here");
                    }
                }
                _ => d = d.in_path(&errs.path),
            }
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::registry::app_at;

    fn copy_dir(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                fs::copy(entry.path(), target).unwrap();
            }
        }
    }

    #[test]
    fn the_digest_covers_the_config_the_model_and_the_policies() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("incident_response");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("applications/incident_response"),
            &dir,
        );
        let digest = || load_app(&app_at(&dir)).digest();
        let first = digest();
        assert_eq!(first.len(), 64);
        assert!(first.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(digest(), first, "the same files give the same digest");

        // A policy the config names.
        let policy = dir.join("policies/task-triage.md");
        let text = fs::read_to_string(&policy).unwrap();
        fs::write(&policy, format!("{text}\nOne more rule.\n")).unwrap();
        let changed = digest();
        assert_ne!(changed, first);
        fs::write(&policy, &text).unwrap();
        assert_eq!(digest(), first);

        // A file the config does not name changes nothing; the model does.
        fs::write(dir.join("policies/unused.md"), "not referenced").unwrap();
        assert_eq!(digest(), first);
        let loaded = load_app(&app_at(&dir));
        let model = loaded.bpmn_path.clone().unwrap();
        let xml = fs::read_to_string(&model).unwrap();
        fs::write(&model, format!("{xml}\n")).unwrap();
        assert_ne!(digest(), first);
    }

    #[test]
    fn relative_names_use_slashes_and_climb_out() {
        let base = Path::new("/apps/a");
        assert_eq!(
            relative_name(Path::new("/apps/a/config/c.yaml"), base),
            "config/c.yaml"
        );
        assert_eq!(
            relative_name(Path::new("/apps/a/config/../../shared/p.md"), base),
            "../shared/p.md"
        );
    }
}
