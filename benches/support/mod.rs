//! What the run benchmarks share: a generated app and the request for one of its runs.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use cuga_flo::app::{load_app, registry::app_from_config};
use cuga_flo::engine::RunRequest;
use cuga_flo::harness::FlowAgent;
use cuga_flo::reason::NoModel;

/// Write an app (process key `bench_v1`) whose process is start → `n` × `element` → end,
/// under `dir`, and its harness (no model).
pub fn chain(dir: &Path, element: &str, n: usize) -> Arc<FlowAgent> {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\" targetNamespace=\"t\">\n<process id=\"P\" isExecutable=\"true\">\n<startEvent id=\"n0\"/>\n",
    );
    for i in 1..=n {
        xml.push_str(&format!("<{element} id=\"n{i}\"/>\n<sequenceFlow id=\"f{i}\" sourceRef=\"n{}\" targetRef=\"n{i}\"/>\n", i - 1));
    }
    xml.push_str(&format!("<endEvent id=\"end\"/>\n<sequenceFlow id=\"fend\" sourceRef=\"n{n}\" targetRef=\"end\"/>\n</process>\n</definitions>\n"));
    let config_dir = dir.join("bench/config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("model.bpmn"), xml).unwrap();
    std::fs::write(
        config_dir.join("bench_config.yaml"),
        "flow: {id: bench_v1, name: Bench, bpmn_file: model.bpmn}\n",
    )
    .unwrap();
    let loaded = load_app(&app_from_config(&config_dir.join("bench_config.yaml")));
    Arc::new(FlowAgent::new(&loaded, Arc::new(NoModel)).unwrap())
}

/// The request for run number `run` of the app.
pub fn request(agent: &FlowAgent, run: usize) -> RunRequest {
    RunRequest::new(
        format!("run-{run}"),
        "bench_v1".into(),
        Arc::new(agent.process().unwrap().clone()),
        agent.annotations(),
        Default::default(),
        None,
    )
}
