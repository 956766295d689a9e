//! The flow config by name, built once per check run, as [`ProcessIndex`] is for the
//! model: what the checks look up once per flow, condition or hook. [`FlowConfig::variable`]
//! and friends scan the lists; over a whole config that is quadratic.
//!
//! [`ProcessIndex`]: crate::bpmn::ProcessIndex

use foldhash::{HashMap, HashMapExt, HashSet};

use crate::app::{FlowConfig, GatewayConfig, Variable};

/// Variables and gateway entries by name, and the variables tasks write. Every answer is
/// what the matching [`FlowConfig`] method gives (the first entry of a name).
#[derive(Debug)]
pub(super) struct ConfigIndex<'a> {
    pub config: &'a FlowConfig,
    variables: HashMap<&'a str, &'a Variable>,
    gateways: HashMap<&'a str, &'a GatewayConfig>,
    /// The targets of every task's `output_mapping`.
    written: HashSet<&'a str>,
    /// The decision variables of guardrail gateways (their approvers set them).
    guardrail_variables: Vec<String>,
}

impl<'a> ConfigIndex<'a> {
    pub fn new(config: &'a FlowConfig) -> Self {
        let mut variables = HashMap::with_capacity(config.variables.len());
        for v in &config.variables {
            variables.entry(v.name.as_str()).or_insert(v);
        }
        let mut gateways = HashMap::with_capacity(config.gateways.len());
        for g in &config.gateways {
            gateways.entry(g.id.as_str()).or_insert(g);
        }
        let written = config
            .tasks
            .iter()
            .flat_map(|t| t.output_mapping.iter().map(|(_, var)| var.as_str()))
            .collect();
        ConfigIndex {
            config,
            variables,
            gateways,
            written,
            guardrail_variables: Vec::new(),
        }
    }

    /// [`FlowConfig::variable`].
    pub fn variable(&self, name: &str) -> Option<&'a Variable> {
        self.variables.get(name).copied()
    }

    /// [`FlowConfig::gateway`].
    pub fn gateway(&self, id: &str) -> Option<&'a GatewayConfig> {
        self.gateways.get(id).copied()
    }

    /// Count as written the variables a run of `process` sets without a task: those of
    /// its multi-instance activities (each instance's element variable and `loopCounter`,
    /// `nrOfInstances`, the counts a completion condition reads, the output collection).
    pub fn add_model_writes(&mut self, process: &'a crate::bpmn::Process) {
        let multi = process
            .nodes
            .iter()
            .filter_map(|n| n.looping.as_ref())
            .filter(|l| matches!(l.kind, crate::bpmn::LoopKind::MultiInstance { .. }))
            .map(|l| &l.multi);
        let mut any = false;
        for m in multi {
            any = true;
            self.written.extend(m.element_variable.as_deref());
            self.written.extend(m.output_collection.as_deref());
        }
        if any {
            self.written.extend(crate::bpmn::MULTI_INSTANCE_VARIABLES);
        }
        // A guardrail gateway's decision variable is its approver's.
        for (_, g) in crate::app::guardrail::all(Some(self.config), process) {
            if let Ok(g) = g {
                self.guardrail_variables.push(g.variable);
            }
        }
    }

    /// Does some task's `output_mapping` write `var`?
    pub fn writes(&self, var: &str) -> bool {
        self.written.contains(var) || self.guardrail_variables.iter().any(|v| v == var)
    }
}
