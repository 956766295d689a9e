//! What a control point is told: the [`ControlPointContext`] of one call.

use super::run::Run;
use crate::bridge::ControlPointContext;

impl Run {
    /// The context of a call about `element_id`: the run, the variables and the path so
    /// far, and the summary of the live topology (shared, not rebuilt per call; left out
    /// while the topology is unchanged if the control points restore it themselves).
    /// Callers add what is specific to the control point (instruction, flows, edge,
    /// executed nodes).
    pub(super) fn context(
        &self,
        element_id: &str,
        element_name: Option<String>,
    ) -> ControlPointContext {
        let left_out = self.model_restored && self.topology.is_unchanged();
        let model = if left_out {
            None
        } else {
            Some(self.topology.summary())
        };
        ControlPointContext {
            run_id: self.request.run_id.clone(),
            process_key: self.request.process_key.clone(),
            element_id: element_id.to_string(),
            element_name,
            variables: self.variables.clone().into(),
            untrusted: self.untrusted.clone(),
            history: self.path.clone(),
            model,
            ..ControlPointContext::default()
        }
    }
}
