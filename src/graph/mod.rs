//! Graph mode, step 1: an app's process as RDF and back. [`export`] maps an app (its BPMN
//! process and its flow config's control points) to sBPMN/AgentFLOW resources; [`rdf`]
//! writes them as Turtle or TriG (RDF 1.2 `{| |}` annotations on conditional edges) or
//! N-Quads; [`import`] reads such a graph, or one of AgentFLOW's own, and makes the files of
//! a runnable app ([`write_app`]). The vocabulary is in [`vocab`]; docs/graph.md describes
//! the mapping and its limits.

pub mod bpmn_xml;
pub mod export;
pub mod import;
pub mod rdf;
pub mod vocab;

use std::path::{Path, PathBuf};

pub use export::{Exported, export};
pub use import::{Imported, import};

/// What graph export and import can fail with (besides a graph file's own diagnostics).
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("the model of app `{0}` cannot be read")]
    NoModel(String),
    #[error("`{element}` cannot be exported: {what}")]
    Unsupported { element: String, what: String },
    #[error("the flow config cannot be read: {0}")]
    Config(String),
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{} already exists (use --force to replace it)", .0.display())]
    Exists(PathBuf),
}

/// The serialisations `graph export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Turtle,
    TriG,
    NQuads,
}

impl Exported {
    pub fn write(&self, format: Format) -> String {
        match format {
            Format::Turtle => self.document.to_turtle(&self.prefixes),
            Format::TriG => self.document.to_trig(&self.prefixes, &self.graph),
            Format::NQuads => self.document.to_nquads(&self.graph),
        }
    }
}

/// Write an imported app into `dir` (`config/<name>.bpmn`, `config/<name>_config.yaml`,
/// its policies): into a fresh folder renamed into place, so a failure leaves nothing
/// half-written. An existing `dir` is replaced only with `force`.
pub fn write_app(imported: &Imported, dir: &Path, force: bool) -> Result<(), GraphError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e: std::io::Error| GraphError::Io {
            path,
            message: e.to_string(),
        }
    };
    if dir.exists() && !force {
        return Err(GraphError::Exists(dir.to_path_buf()));
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "app".into());
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let staging = parent.join(format!(".{name}.import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let result = (|| {
        let config = staging.join("config");
        std::fs::create_dir_all(&config).map_err(io(&config))?;
        let bpmn = config.join(format!("{name}.bpmn"));
        std::fs::write(&bpmn, &imported.bpmn).map_err(io(&bpmn))?;
        let yaml = config.join(format!("{name}_config.yaml"));
        std::fs::write(&yaml, &imported.config).map_err(io(&yaml))?;
        for (rel, text) in &imported.policies {
            let path = staging.join(rel);
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p).map_err(io(p))?;
            }
            std::fs::write(&path, text).map_err(io(&path))?;
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io(dir))?;
        }
        std::fs::rename(&staging, dir).map_err(io(dir))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}
