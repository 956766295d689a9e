//! Typed decoding of a flow config from its located YAML tree. Every problem becomes a
//! [`Diagnostic`] pointing at the key or value concerned; decoding goes on after a problem
//! so that one run of `validate` reports all of them.
//!
//! [`reader`] holds the generic readers (mappings, strings, lists, unknown keys); each
//! config section has its own module: [`flow`] (`flow`, `workflow_engine`, `variables`,
//! `llm`), [`tasks`], [`gateways`], [`hooks`], [`actions`] (hook actions, tasks to insert,
//! `action_permissions`), [`guarantees`] and [`remote`] (`remote_agents`).

mod actions;
mod flow;
mod gateways;
mod graph;
mod guarantees;
mod hooks;
mod reader;
mod remote;
pub mod schema;
mod tasks;
mod tools;

use crate::diag::Diagnostic;
use crate::source::{SourceFile, Span};

use super::config::*;
use super::yaml::{self, Node, Value};
use reader::Cx;

pub(crate) const ROOT_KEYS: &[&str] = &[
    "flow",
    "workflow_engine",
    "variables",
    "inputs",
    "llm",
    "tasks",
    "gateways",
    "hooks",
    "action_permissions",
    "guarantees",
    "remote_agents",
    "mcp_servers",
    "openapi",
    "questions",
    "graph",
];

/// Decode a flow config. Returns `None` only when the file is not a YAML mapping at all.
pub fn decode(source: &SourceFile) -> (Option<FlowConfig>, Vec<Diagnostic>) {
    let mut cx = Cx {
        file: source,
        diags: Vec::new(),
    };
    let root = match yaml::parse(source.text()) {
        Ok(root) => root,
        Err(e) => {
            let mut d = Diagnostic::error("config::yaml", format!("invalid YAML: {}", e.message))
                .at(source, e.span, "here".to_string());
            if let Some(first) = e.first {
                d = d.also(first, "first defined here");
            }
            return (None, vec![d]);
        }
    };
    let config = cx.root(&root);
    yaml::release(root);
    (config, cx.diags)
}

/// Parse YAML for another purpose (e.g. a supervisor file), reporting syntax errors.
pub fn parse_yaml(source: &SourceFile) -> Result<Node<'_>, Box<Diagnostic>> {
    yaml::parse(source.text()).map_err(|e| {
        Box::new(
            Diagnostic::error("config::yaml", format!("invalid YAML: {}", e.message)).at(
                source,
                e.span,
                "here".to_string(),
            ),
        )
    })
}

impl Cx<'_> {
    fn root(&mut self, root: &Node) -> Option<FlowConfig> {
        if !matches!(root.value, Value::Map(_)) {
            self.error(
                "config::type",
                root.span,
                format!(
                    "a flow config must be a YAML mapping with a `flow:` section, not {}",
                    root.kind()
                ),
                "expected a mapping",
                None,
            );
            return None;
        }
        let f = self.fields(root, "the flow config", ROOT_KEYS);
        let flow = match f.get("flow") {
            Some(node) => self.flow(node),
            None => {
                self.error(
                    "config::missing_key",
                    Span::new(0, 0),
                    "the config has no `flow:` section".to_string(),
                    "expected `flow:` with `id`, `name` and `bpmn_file`",
                    Some("start the file with `flow: {id: my_process_v1, name: \"My process\", bpmn_file: model.bpmn}`".into()),
                );
                FlowSection::default()
            }
        };
        let engine = f
            .get("workflow_engine")
            .map(|n| self.engine(n))
            .unwrap_or_default();
        let variables = f
            .get("variables")
            .map(|n| self.variables(n))
            .unwrap_or_default();
        let inputs = f
            .get("inputs")
            .map(|n| self.inputs(n, &variables))
            .unwrap_or_default();
        let llm = f.get("llm").map(|n| self.llm(n));
        let tasks = f.get("tasks").map(|n| self.tasks(n)).unwrap_or_default();
        let gateways = f
            .get("gateways")
            .map(|n| self.gateways(n))
            .unwrap_or_default();
        let hooks = f.get("hooks").map(|n| self.hooks(n)).unwrap_or_default();
        let permissions = f
            .get("action_permissions")
            .map(|n| self.permissions(n))
            .unwrap_or_default();
        let guarantees = f
            .get("guarantees")
            .map(|n| self.guarantees(n))
            .unwrap_or_default();
        let remote_agents = f
            .get("remote_agents")
            .map(|n| self.remote_agents(n))
            .unwrap_or_default();
        let tool_sources = self.tool_sources(&f);
        let park_questions = self.questions(&f);
        let graph = f.get("graph").map(|n| self.graph(n));
        Some(FlowConfig {
            graph,
            park_questions,
            source: self.file.clone(),
            flow,
            engine,
            variables,
            inputs,
            llm,
            tasks,
            gateways,
            hooks,
            permissions,
            guarantees,
            remote_agents,
            tool_sources,
            ids: Default::default(),
        })
    }
}

impl Cx<'_> {
    /// `questions: terminal | park`: whether a person at the terminal is asked (the
    /// default), or every question for a person parks the run for `runs answer`.
    fn questions(&mut self, f: &reader::Fields) -> bool {
        let Some(text) = self.opt_string(f, "questions", "the flow config") else {
            return false;
        };
        match text.value.as_str() {
            "terminal" => false,
            "park" => true,
            other => {
                self.error(
                    "config::value",
                    text.span,
                    format!("`questions: {other}` is not a choice"),
                    "not a choice",
                    Some("`questions:` is `terminal` (the default) or `park`".to_string()),
                );
                false
            }
        }
    }
}

#[cfg(test)]
mod tests;
