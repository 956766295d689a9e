//! Graph mode in a build without the `graph` cargo feature (`--no-default-features`): the
//! few items the rest of the crate reaches, saying "built without graph mode". An app with
//! a `graph:` block is a `validate` error ([`shacl::check_app`]), so it never runs; a
//! [`abox::GraphRun`] cannot exist (an empty enum), and nothing is read from a graph.

/// Why graph mode is not there.
pub const UNAVAILABLE: &str =
    "this cuga-flo was built without graph mode (the `graph` cargo feature)";

/// How to get it.
pub const REBUILD: &str = "rebuild with the default features (`cargo install cuga-flo`, or `--features graph`), or drop the `graph:` block";

/// What graph mode fails with in this build.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{UNAVAILABLE}")]
    Unavailable,
}

/// Where the graph build keeps its store's error.
pub mod store {
    pub use super::StoreError;
}

pub mod abox {
    use super::StoreError;
    use crate::journal::Record;

    /// A graph-mode run: none in this build.
    pub enum GraphRun {}

    impl GraphRun {
        pub fn apply(&self, _record: &Record) {
            match *self {}
        }
        pub fn replay(&self, _records: &[Record]) {
            match *self {}
        }
        pub fn failed(&self) -> Option<StoreError> {
            match *self {}
        }
    }

    /// No stores in this build.
    #[derive(Default)]
    pub struct Stores;

    /// No served run is written to a graph either.
    pub fn served_graph_run(
        _stores: &Stores,
        loaded: &crate::app::LoadedApp,
        run_id: &str,
    ) -> Result<Option<GraphRun>, StoreError> {
        graph_run(loaded, run_id)
    }

    /// No child run is written to a graph either.
    pub fn child_graph_run(
        _parent: Option<&GraphRun>,
        loaded: &crate::app::LoadedApp,
        run_id: &str,
    ) -> Result<Option<GraphRun>, StoreError> {
        graph_run(loaded, run_id)
    }

    /// No run is written to a graph: an app with a `graph:` block is refused.
    pub fn graph_run(
        loaded: &crate::app::LoadedApp,
        _run_id: &str,
    ) -> Result<Option<GraphRun>, StoreError> {
        match loaded.config.as_ref().and_then(|c| c.graph.as_ref()) {
            Some(_) => Err(StoreError::Unavailable),
            None => Ok(None),
        }
    }
}

pub mod approval {
    use super::StoreError;

    /// A decision found in the run's graph: none in this build.
    pub struct GraphDecision {
        pub approved: bool,
        pub by: Option<String>,
        pub value: String,
    }

    /// Nothing can be read from a graph in this build (none without a `graph:` block).
    pub fn decisions(
        loaded: &crate::app::LoadedApp,
        _run_id: &str,
        _variable: &str,
    ) -> Result<Vec<GraphDecision>, StoreError> {
        match loaded.config.as_ref().and_then(|c| c.graph.as_ref()) {
            Some(_) => Err(StoreError::Unavailable),
            None => Ok(Vec::new()),
        }
    }
}

pub mod shacl {
    use crate::app::LoadedApp;
    use crate::diag::Diagnostic;

    /// A graph-mode app is an error in this build, at its `graph:` block.
    pub fn check_app(app: &LoadedApp) -> Vec<Diagnostic> {
        let Some(config) = app.config.as_ref() else {
            return Vec::new();
        };
        let Some(graph) = &config.graph else {
            return Vec::new();
        };
        vec![
            Diagnostic::error("graph::unavailable", super::UNAVAILABLE)
                .at(&config.source, graph.span, "graph mode".to_string())
                .with_help(super::REBUILD),
        ]
    }
}
