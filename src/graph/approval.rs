//! Guardrail approvals written into a run's graph by an external tool (as AgentFLOW's
//! `make approve` does): a SPARQL `INSERT DATA` into the run's ABox graph of
//!
//! ```turtle
//! <urn:cuga-flo:run:<run-id>#instance> agentflow:hasVariable [
//!     a agentflow:ProcessVariable ; agentflow:varName "approval_status" ;
//!     agentflow:varValue "APPROVED" ; cf:decidedBy "alice" ] .
//! ```
//!
//! [`decisions`] reads it back when the parked run is resumed; `runs resume` journals it as
//! the approver's answer (the journal stays the source of truth). Only a store that
//! outlives the run (an endpoint, the embedded store on disk) can carry one.

use oxrdf::Term;

use super::abox::{run_graph, run_namespace};
use super::store::{self, Answer, StoreError};
use super::vocab as v;

/// A decision found in the run's graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphDecision {
    /// APPROVED (true) or DENIED (false).
    pub approved: bool,
    /// Who decided (`cf:decidedBy`), when the tool said.
    pub by: Option<String>,
    /// The value as written.
    pub value: String,
}

/// Every decision (APPROVED or DENIED, any case) written for `variable` into run
/// `run_id`'s graph. None when the app's store does not outlive its runs (the embedded
/// store in memory) or the app has no `graph:` block.
pub fn decisions(
    loaded: &crate::app::LoadedApp,
    run_id: &str,
    variable: &str,
) -> Result<Vec<GraphDecision>, StoreError> {
    let Some(config) = loaded.config.as_ref().and_then(|c| c.graph.as_ref()) else {
        return Ok(Vec::new());
    };
    if config.store == crate::app::GraphBackend::Embedded && config.path.is_none() {
        return Ok(Vec::new());
    }
    let dir = loaded
        .config_path
        .as_ref()
        .and_then(|p| p.parent())
        .unwrap_or(&loaded.dir);
    let store = store::open(config, dir)?;
    let name = variable.replace('\\', "\\\\").replace('"', "\\\"");
    let query = format!(
        "PREFIX agentflow: <{af}>\nPREFIX cf: <{cf}>\n\
         SELECT ?value ?by WHERE {{ GRAPH <{g}> {{\n  <{i}instance> agentflow:hasVariable ?v .\n  \
         ?v agentflow:varName ?name ; agentflow:varValue ?value .\n  \
         FILTER(STR(?name) = \"{name}\")\n  OPTIONAL {{ ?v cf:decidedBy ?by }}\n}} }}",
        af = v::AGENTFLOW,
        cf = v::CF,
        g = run_graph(&loaded.name, run_id),
        i = run_namespace(run_id),
    );
    let Answer::Solutions { variables, rows } = store.query(&query, None)? else {
        return Ok(Vec::new());
    };
    let col = |n: &str| variables.iter().position(|x| x == n);
    let (Some(vi), bi) = (col("value"), col("by")) else {
        return Ok(Vec::new());
    };
    let text = |t: &Option<Term>| match t {
        Some(Term::Literal(l)) => Some(l.value().to_string()),
        Some(Term::NamedNode(n)) => Some(n.as_str().to_string()),
        _ => None,
    };
    let mut found = Vec::new();
    for row in &rows {
        let Some(value) = row.get(vi).and_then(text) else {
            continue;
        };
        let approved = match value.trim().to_ascii_uppercase().as_str() {
            "APPROVED" | "APPROVE" => true,
            "DENIED" | "DENY" => false,
            _ => continue,
        };
        let by = bi.and_then(|b| row.get(b)).and_then(text);
        found.push(GraphDecision {
            approved,
            by,
            value,
        });
    }
    Ok(found)
}
