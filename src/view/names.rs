//! What the stream calls the elements of a run: the BPMN model's names for its nodes, the
//! ends of its sequence flows (a hook is shown on `source → target`), and the model each
//! control point asks (for the spinner). Built from the app when it is at hand, and
//! completed from the journal itself (`node_entered` carries a node's name, `flow_taken`
//! a flow's ends), so `runs show` reads the same without the app.

use std::collections::HashMap;

use crate::app::{FlowConfig, LlmConfig, LoadedApp};
use crate::bpmn::Process;
use crate::journal::{Event, Record};

#[derive(Debug, Clone, Default)]
pub struct Names {
    nodes: HashMap<String, String>,
    flows: HashMap<String, (String, String)>,
    hook_flows: HashMap<String, String>,
    models: HashMap<String, String>,
    default_model: Option<String>,
    /// Per multi-instance node: the instances entered so far, and each activation's first
    /// visit and number of instances.
    instances: HashMap<String, (u64, Vec<(u64, u64)>)>,
}

impl Names {
    /// The names an app's model and config give (empty parts when it does not load).
    pub fn from_app(app: &LoadedApp) -> Names {
        let mut names = Names::default();
        if let Some(process) = app.process() {
            names.add_process(process);
        }
        if let Some(config) = &app.config {
            names.add_config(config);
        }
        names
    }

    pub fn add_process(&mut self, process: &Process) {
        for node in &process.nodes {
            if let Some(name) = node.name.as_deref().map(flat).filter(|n| !n.is_empty()) {
                self.nodes.insert(node.id.clone(), name);
            }
        }
        for flow in &process.flows {
            self.flows
                .insert(flow.id.clone(), (flow.source.clone(), flow.target.clone()));
        }
    }

    pub fn add_config(&mut self, config: &FlowConfig) {
        let model = |llm: &Option<LlmConfig>| {
            llm.as_ref()
                .and_then(|l| l.model.as_ref())
                .map(|m| m.value.clone())
        };
        self.default_model = model(&config.llm);
        for task in &config.tasks {
            if let Some(m) = model(&task.llm) {
                self.models.insert(task.id.value.clone(), m);
            }
        }
        for gateway in &config.gateways {
            if let Some(m) = model(&gateway.llm) {
                self.models.insert(gateway.id.value.clone(), m);
            }
        }
        for hook in &config.hooks {
            if let Some(m) = model(&hook.llm) {
                self.models.insert(hook.id.value.clone(), m);
            }
            if let Some(flow) = &hook.location {
                self.hook_flows
                    .insert(hook.id.value.clone(), flow.value.clone());
            }
        }
    }

    /// Learn what a journal record says about names (never overriding the model's).
    pub fn learn(&mut self, record: &Record) {
        if let Event::NodeEntered {
            node,
            instance: Some(instance),
            ..
        } = &record.event
            && instance.loop_counter > 0
        {
            let (entered, activations) = self.instances.entry(node.clone()).or_default();
            *entered += 1;
            if instance.loop_counter == 1 {
                activations.push((*entered, instance.instances));
            }
        }
        match &record.event {
            Event::NodeEntered {
                node,
                name: Some(name),
                ..
            } => {
                let name = flat(name);
                if !name.is_empty() {
                    self.nodes.entry(node.clone()).or_insert(name);
                }
            }
            Event::FlowTaken {
                flow,
                source,
                target,
                ..
            } => {
                self.flows
                    .entry(flow.clone())
                    .or_insert_with(|| (source.clone(), target.clone()));
            }
            _ => {}
        }
    }

    /// Which instance of a multi-instance task the call with idempotency key `key`
    /// (`<run>:<node>:<visit>`) was: its loop counter and the number of instances. Each
    /// instance entered is one visit of the task.
    pub fn instance_of(&self, node: &str, key: Option<&str>) -> Option<(u64, u64)> {
        let visit: u64 = key?.rsplit_once(':')?.1.parse().ok()?;
        let (_, activations) = self.instances.get(node)?;
        activations
            .iter()
            .rev()
            .find(|(first, n)| *first <= visit && visit < first + n)
            .map(|(first, n)| (visit - first + 1, *n))
    }

    /// A node's (or any element's) name, when it has one.
    pub fn node(&self, id: &str) -> Option<&str> {
        self.nodes.get(id).map(String::as_str)
    }

    /// The ids of a flow's source and target, when known.
    pub fn flow(&self, id: &str) -> Option<(&str, &str)> {
        self.flows.get(id).map(|(s, t)| (s.as_str(), t.as_str()))
    }

    /// The flow a hook sits on, when the config says.
    pub fn hook_flow(&self, hook: &str) -> Option<&str> {
        self.hook_flows.get(hook).map(String::as_str)
    }

    /// The model every control point asks whatever the config says (`CUGA_FLO_LLM_MODEL`:
    /// the operator's word wins).
    pub fn override_model(&mut self, model: String) {
        self.models.clear();
        self.default_model = Some(model);
    }

    /// The model a control point asks (its own `llm.model`, else the app's).
    pub fn model(&self, element: &str) -> Option<&str> {
        self.models
            .get(element)
            .or(self.default_model.as_ref())
            .map(String::as_str)
    }
}

/// Whitespace runs (newlines in a modeler's label) as one space.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::event::InstanceVisit;

    fn entered(node: &str, loop_counter: u64, instances: u64) -> Record {
        Record {
            seq: 1,
            at_ms: 0,
            prev: String::new(),
            event: Event::NodeEntered {
                node: node.into(),
                kind: "userTask".into(),
                name: None,
                token: 1,
                instance: Some(InstanceVisit {
                    loop_counter,
                    instances,
                }),
            },
        }
    }

    /// Each instance entered is one visit: a second activation's visits continue after the
    /// first's, and an activation with no instance counts none.
    #[test]
    fn a_task_call_is_named_by_its_instance() {
        let mut names = Names::default();
        for (k, n) in [(1, 2), (2, 2), (0, 0), (1, 3), (2, 3), (3, 3)] {
            names.learn(&entered("r", k, n));
        }
        let of = |visit: u64| names.instance_of("r", Some(&format!("run:r:{visit}")));
        assert_eq!(of(1), Some((1, 2)));
        assert_eq!(of(2), Some((2, 2)));
        assert_eq!(of(3), Some((1, 3)));
        assert_eq!(of(5), Some((3, 3)));
        assert_eq!(of(6), None);
        assert_eq!(names.instance_of("other", Some("run:other:1")), None);
        assert_eq!(names.instance_of("r", None), None);
    }
}
