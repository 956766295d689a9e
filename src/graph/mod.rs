//! Graph mode, step 1: an app's process as RDF and back. [`export`] maps an app (its BPMN
//! process and its flow config's control points) to sBPMN/AgentFLOW resources; [`rdf`]
//! writes them as Turtle or TriG (RDF 1.2 `{| |}` annotations on conditional edges) or
//! N-Quads; [`import`] reads such a graph, or one of AgentFLOW's own, and makes the files of
//! a runnable app ([`write_app`]). The vocabulary is in [`vocab`]; docs/graph.md describes
//! the mapping and its limits.

pub mod abox;
pub mod approval;
pub mod bpmn_xml;
pub mod export;
mod file;
pub mod import;
pub mod rdf;
pub mod shacl;
pub mod store;
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

/// How `graph export` writes the annotations on conditional edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Annotations {
    /// RDF 1.2 annotations: `{| |}` in Turtle and TriG, reifiers with triple terms in
    /// N-Quads (RDF 1.2 and RDF-star readers).
    #[default]
    Star,
    /// Standard RDF reification (`rdf:Statement` nodes), for RDF 1.1 readers such as
    /// rdflib; `graph import` reads it back.
    Reified,
}

impl Exported {
    pub fn write(&self, format: Format) -> String {
        self.write_as(format, Annotations::Star)
    }

    /// The export in `format`, its annotations written as `annotations` says.
    pub fn write_as(&self, format: Format, annotations: Annotations) -> String {
        let reified;
        let document = match annotations {
            Annotations::Star => &self.document,
            Annotations::Reified => {
                reified = self.document.reified();
                &reified
            }
        };
        match format {
            Format::Turtle => document.to_turtle(&self.prefixes),
            Format::TriG => document.to_trig(&self.prefixes, &self.graph),
            Format::NQuads => document.to_nquads(&self.graph),
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

#[cfg(test)]
mod tests {
    use super::export::comparison;
    use super::import::{local_name, to_yaml};
    use super::rdf::{Document, named, string};
    use oxrdf::Term;
    use serde_json::json;

    #[test]
    fn a_single_comparison_becomes_var_operator_threshold() {
        let c = |s: &str| {
            comparison(s, None).map(|(v, op, t)| {
                let t = match t {
                    Term::Literal(l) => format!("{}^^{}", l.value(), l.datatype().as_str()),
                    other => other.to_string(),
                };
                (v, op, t)
            })
        };
        let xsd = "http://www.w3.org/2001/XMLSchema#";
        assert_eq!(
            c("${credit_score} > 0.6"),
            Some(("credit_score".into(), ">", format!("0.6^^{xsd}decimal")))
        );
        // The literal on the left: the operator turns round.
        assert_eq!(
            c("10 <= ${n}"),
            Some(("n".into(), ">=", format!("10^^{xsd}integer")))
        );
        assert_eq!(
            c("${tier} == 'gold'"),
            Some(("tier".into(), "==", format!("gold^^{xsd}string")))
        );
        // Not one comparison of a variable with a literal: only the text is kept.
        assert_eq!(c("${a} > 1 && ${b} < 2"), None);
        assert_eq!(c("${a} == ${b}"), None);
        assert_eq!(c("${order.total} > 5"), None);
        assert_eq!(c("${x} in ['a', 'b']"), None);
        assert_eq!(c("= x > 1"), None);
    }

    #[test]
    fn generated_yaml_reads_back_as_the_same_tree() {
        let tree = json!({
            "flow": {"name": "Quotes \" and \\ and\nnewlines: #not a comment", "id": "x"},
            "variables": {"n": 0.0, "ok": false, "none": null, "list": [], "map": {}},
            "tasks": [{"id": "T", "input_mapping": {"a b": "c"}}, "plain", [1, 2]],
            "yes": "no",
        });
        let text = to_yaml(&tree);
        let back = crate::app::yaml::parse(&text).unwrap().to_json();
        assert_eq!(back, tree, "{text}");
    }

    #[test]
    fn local_names_are_xml_names() {
        assert_eq!(local_name("http://example.org/instances/Task_A"), "Task_A");
        assert_eq!(local_name("urn:cuga-flo:app:x#Task%20B"), "Task_B");
        assert_eq!(local_name("urn:x#1st"), "_1st");
        assert_eq!(local_name("urn:x#%C3%A9t%C3%A9%zz"), "été_zz");
    }

    #[test]
    fn the_turtle_writer_escapes_what_it_must() {
        let mut d = Document::default();
        let s = named("urn:cuga-flo:app:x#a");
        let weird = "tab\t quote\" backslash\\ newline\n bell\u{7} ünïcode";
        d.add(s.clone(), named("urn:p#q"), string(weird));
        d.annotated(
            s.clone(),
            named("urn:p#next"),
            // Not a prefixed name (a trailing dot): written as an IRI.
            named("urn:cuga-flo:app:x#odd.id."),
            vec![(named("urn:p#note"), string("x |} y"))],
        );
        let prefixes = vec![("app".to_string(), "urn:cuga-flo:app:x#".to_string())];
        let ttl = d.to_turtle(&prefixes);
        let read: Vec<oxrdf::Triple> = oxttl::TurtleParser::new()
            .for_slice(&ttl)
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e}\n{ttl}"));
        // The two statements, the annotation's reifier and its one statement.
        assert_eq!(read.len(), 4, "{ttl}");
        assert_eq!(d.triples().len(), 4);
        assert!(read.iter().any(|t| t.object == string(weird)), "{ttl}");
        assert!(read.iter().any(|t| t.object == string("x |} y")), "{ttl}");
    }
}
