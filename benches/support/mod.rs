//! What the run benchmarks share: a generated app and the request for one of its runs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
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

/// The shape of a generated model (see [`generated_app`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// start → task × n → end.
    Linear,
    /// start → (exclusive split → two tasks → exclusive join) × n/4 → end; one flow of each
    /// split has a condition, the other is the split's default.
    Xor,
    /// start → (parallel split → two tasks → parallel join) × n/4 → end.
    Parallel,
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Shape::Linear => "linear",
            Shape::Xor => "xor",
            Shape::Parallel => "parallel",
        })
    }
}

/// Write an app that validates clean under `dir`: a model of about `n` flow nodes in
/// `shape`, and a config declaring `variables` variables (at least one), a task entry for
/// every task of the model (each reading `x` and writing variables in turn, so that every
/// variable is written), a native gateway entry for every exclusive split, and a static
/// hook on every tenth flow. Returns the config file's path.
pub fn generated_app(dir: &Path, shape: Shape, n: usize, variables: usize) -> PathBuf {
    use std::fmt::Write;
    let variables = variables.max(1);
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\" targetNamespace=\"t\">\n<process id=\"P\" isExecutable=\"true\">\n<startEvent id=\"start\"/>\n",
    );
    let mut tasks = Vec::new();
    let mut flows = Vec::new();
    let mut splits = Vec::new();
    let mut flow = |xml: &mut String, id: String, source: &str, target: &str, condition: &str| {
        if condition.is_empty() {
            writeln!(
                xml,
                "<sequenceFlow id=\"{id}\" sourceRef=\"{source}\" targetRef=\"{target}\"/>"
            )
            .unwrap();
        } else {
            writeln!(xml, "<sequenceFlow id=\"{id}\" sourceRef=\"{source}\" targetRef=\"{target}\"><conditionExpression>{condition}</conditionExpression></sequenceFlow>").unwrap();
        }
        flows.push(id);
    };
    let mut prev = "start".to_string();
    match shape {
        Shape::Linear => {
            for i in 0..n {
                let t = format!("t{i}");
                writeln!(xml, "<task id=\"{t}\" name=\"Task {i}\"/>").unwrap();
                flow(&mut xml, format!("f{i}"), &prev, &t, "");
                tasks.push(t.clone());
                prev = t;
            }
        }
        Shape::Xor | Shape::Parallel => {
            let (tag, default) = if shape == Shape::Xor {
                ("exclusiveGateway", true)
            } else {
                ("parallelGateway", false)
            };
            for i in 0..n.div_ceil(4) {
                let (s, a, b, j) = (
                    format!("s{i}"),
                    format!("a{i}"),
                    format!("b{i}"),
                    format!("j{i}"),
                );
                let default_attr = if default {
                    format!(" default=\"f{i}b\"")
                } else {
                    String::new()
                };
                writeln!(xml, "<{tag} id=\"{s}\"{default_attr}/>\n<task id=\"{a}\"/>\n<task id=\"{b}\"/>\n<{tag} id=\"{j}\"/>").unwrap();
                flow(&mut xml, format!("f{i}"), &prev, &s, "");
                let condition = if default { "${x} == \"a\"" } else { "" };
                flow(&mut xml, format!("f{i}a"), &s, &a, condition);
                flow(&mut xml, format!("f{i}b"), &s, &b, "");
                flow(&mut xml, format!("f{i}ja"), &a, &j, "");
                flow(&mut xml, format!("f{i}jb"), &b, &j, "");
                tasks.push(a);
                tasks.push(b);
                if default {
                    splits.push(i);
                }
                prev = j;
            }
        }
    }
    xml.push_str("<endEvent id=\"end\"/>\n");
    flow(&mut xml, "fend".into(), &prev, "end", "");
    xml.push_str("</process>\n</definitions>\n");

    let mut yaml = String::from(
        "flow: {id: bench_v1, name: Bench, bpmn_file: model.bpmn}\nvariables:\n  x: \"\"\n",
    );
    for v in 0..variables {
        writeln!(yaml, "  v{v}: \"\"").unwrap();
    }
    yaml.push_str("tasks:\n");
    let per_task = variables.div_ceil(tasks.len().max(1));
    let mut next = 0;
    for (k, t) in tasks.iter().enumerate() {
        writeln!(
            yaml,
            "  - id: {t}\n    mode: task_agent\n    input_mapping: {{x: x}}\n    output_mapping:"
        )
        .unwrap();
        for _ in 0..per_task.max(1) {
            let v = next % variables;
            next += 1;
            writeln!(yaml, "      v{v}: v{v}").unwrap();
        }
        writeln!(
            yaml,
            "    agent: {{name: agent{k}, system_instruction: \"Do {t}.\"}}"
        )
        .unwrap();
    }
    if !splits.is_empty() {
        yaml.push_str("gateways:\n");
        for i in &splits {
            writeln!(yaml, "  s{i}:\n    mode: native\n    flows:\n      f{i}a: {{condition: '${{x}} == \"a\"'}}").unwrap();
        }
    }
    yaml.push_str("action_permissions: {permitted_actions: [continue, skip_node]}\nhooks:\n");
    for (k, f) in flows.iter().step_by(10).enumerate() {
        writeln!(
            yaml,
            "  - id: hook{k}\n    location: {f}\n    action: continue"
        )
        .unwrap();
    }

    let config_dir = dir.join(format!("{shape}_{n}_{variables}/config"));
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("model.bpmn"), xml).unwrap();
    let config = config_dir.join("bench_config.yaml");
    std::fs::write(&config, yaml).unwrap();
    config
}

/// Write an app (process key `guarded_v1`) of about `5 × blocks` nodes under `dir`, and
/// load it: a chain of parallel blocks (split, two tasks, join, then a task), an
/// exclusive loop back over the last ten blocks after every tenth, and `hooks` reasoned
/// hooks spread along it, each allowed to jump to or remove the next block's task, jump
/// into the block after, or insert a task of its own (every action but swap_nodes is
/// permitted), plus one static swap of two tasks near the end. Two guarantees: one that
/// holds (`first_block_first`: the end only after the first block's three tasks, which
/// needs the joins to wait for both branches) and one a hook breaks
/// (`first_target_always`: the first hook may remove its target).
pub fn guarded(dir: &Path, blocks: usize, hooks: usize) -> cuga_flo::app::LoadedApp {
    let mut nodes = String::from("<startEvent id=\"s\"/>\n");
    let mut flows = String::new();
    let mut prev = "s".to_string();
    let mut f = 0;
    let mut flow = |flows: &mut String, from: &str, to: &str| {
        f += 1;
        flows.push_str(&format!(
            "<sequenceFlow id=\"f{f}\" sourceRef=\"{from}\" targetRef=\"{to}\"/>\n"
        ));
        format!("f{f}")
    };
    let mut hooked: Vec<(String, usize)> = Vec::new();
    let spacing = (blocks / hooks.max(1)).max(3);
    for i in 0..blocks {
        for (id, el) in [
            (format!("p{i}"), "parallelGateway"),
            (format!("a{i}"), "task"),
            (format!("b{i}"), "task"),
            (format!("j{i}"), "parallelGateway"),
            (format!("c{i}"), "task"),
        ] {
            nodes.push_str(&format!("<{el} id=\"{id}\"/>\n"));
        }
        let into = flow(&mut flows, &prev, &format!("p{i}"));
        if i > 0 && i % spacing == 0 && hooked.len() < hooks && i + 2 < blocks {
            hooked.push((into, i));
        }
        for branch in ["a", "b"] {
            flow(&mut flows, &format!("p{i}"), &format!("{branch}{i}"));
            flow(&mut flows, &format!("{branch}{i}"), &format!("j{i}"));
        }
        flow(&mut flows, &format!("j{i}"), &format!("c{i}"));
        prev = format!("c{i}");
        if i % 10 == 9 {
            nodes.push_str(&format!("<exclusiveGateway id=\"x{i}\"/>\n"));
            flow(&mut flows, &prev, &format!("x{i}"));
            flow(&mut flows, &format!("x{i}"), &format!("p{}", i - 9));
            prev = format!("x{i}");
        }
    }
    nodes.push_str("<endEvent id=\"e\"/>\n");
    flow(&mut flows, &prev, "e");
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\" targetNamespace=\"t\">\n<process id=\"P\" isExecutable=\"true\">\n{nodes}{flows}</process>\n</definitions>\n"
    );
    let mut yaml = String::from(
        "flow: {id: guarded_v1, name: Guarded, bpmn_file: model.bpmn}\naction_permissions:\n  permitted_actions: [continue, skip_node, skip_to, terminate, remove_node, add_node]\nhooks:\n",
    );
    for (k, (flow_id, i)) in hooked.iter().enumerate() {
        yaml.push_str(&format!(
            "  - id: h{k}\n    location: {flow_id}\n    policy: ../policies/hook.md\n    allowed_targets: [c{i}, a{}]\n    insertable_tasks: [{{id: n{k}, instruction: Check}}]\n",
            i + 1
        ));
    }
    let last = blocks - 1;
    yaml.push_str(&format!(
        "  - id: swap\n    location: f{f}\n    action: {{swap_nodes: [a{last}, b{last}]}}\nguarantees:\n  - id: first_block_first\n    reach: e\n    only_after: [a0, b0, c0]\n  - id: first_target_always\n    always_visit: [c{}]\n",
        hooked.first().map_or(0, |h| h.1)
    ));
    let config_dir = dir.join("guarded/config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::create_dir_all(dir.join("guarded/policies")).unwrap();
    std::fs::write(dir.join("guarded/policies/hook.md"), "# Hook\nDecide.\n").unwrap();
    std::fs::write(config_dir.join("model.bpmn"), xml).unwrap();
    std::fs::write(config_dir.join("guarded_config.yaml"), yaml).unwrap();
    load_app(&app_from_config(&config_dir.join("guarded_config.yaml")))
}

/// Write an app (process key `bench_v1`) whose process is start → one task, multi-instance
/// over the variable `items` (parallel, or sequential), collecting each instance's `result`
/// into `results` → end, under `dir`, and its harness (no model: the task passes through).
pub fn multi_instance(dir: &Path, sequential: bool) -> Arc<FlowAgent> {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\" targetNamespace=\"t\">\n<process id=\"P\" isExecutable=\"true\">\n<startEvent id=\"s\"/>\n<task id=\"Review\"><multiInstanceLoopCharacteristics isSequential=\"{sequential}\"><loopDataInputRef>items</loopDataInputRef><inputDataItem id=\"i\" name=\"item\"/><loopDataOutputRef>results</loopDataOutputRef><outputDataItem id=\"o\" name=\"result\"/></multiInstanceLoopCharacteristics></task>\n<endEvent id=\"e\"/>\n<sequenceFlow id=\"f1\" sourceRef=\"s\" targetRef=\"Review\"/>\n<sequenceFlow id=\"f2\" sourceRef=\"Review\" targetRef=\"e\"/>\n</process>\n</definitions>\n"
    );
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

/// The request for run number `run` of a [`multi_instance`] app over `n` items (each a
/// small object, as a line item would be).
pub fn multi_instance_request(agent: &FlowAgent, run: usize, n: usize) -> RunRequest {
    let items: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"line": i, "description": format!("item {i}"), "amount": i * 10}))
        .collect();
    let mut variables = serde_json::Map::new();
    variables.insert("items".into(), serde_json::Value::Array(items));
    RunRequest::new(
        format!("run-{run}"),
        "bench_v1".into(),
        Arc::new(agent.process().unwrap().clone()),
        agent.annotations(),
        variables,
        None,
    )
}

/// The binary's allocator (src/main.rs), so that what a benchmark measures is what the
/// `cuga-flo` binary does (allocation and page faults were a fifth of `validate`, and the
/// memory of open runs depends on it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
