//! The prover on small models: for each adaptation kind (and compositions of two hooks),
//! a config where a guarantee holds and one where it breaks, with the counter-example.

use super::*;
use crate::app::decode::decode;
use crate::source::SourceFile;

/// A process from a compact spec: nodes `id:kind` (start, task, xor, and, or, end, term,
/// sub(parent) nesting as `id:task@sub`), flows `id:source>target`.
fn process(nodes: &str, flows: &str) -> Process {
    let mut xml = String::from(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"><process id="P">"#,
    );
    let mut subs: Vec<(String, String)> = Vec::new();
    let mut top = String::new();
    for spec in nodes.split_whitespace() {
        let (id, rest) = spec.split_once(':').unwrap();
        let (kind, parent) = match rest.split_once('@') {
            Some((k, p)) => (k, Some(p)),
            None => (rest, None),
        };
        let el = match kind {
            "start" => format!(r#"<startEvent id="{id}"/>"#),
            "task" => format!(r#"<task id="{id}"/>"#),
            "xor" => format!(r#"<exclusiveGateway id="{id}"/>"#),
            "and" => format!(r#"<parallelGateway id="{id}"/>"#),
            "or" => format!(r#"<inclusiveGateway id="{id}"/>"#),
            "end" => format!(r#"<endEvent id="{id}"/>"#),
            "term" => format!(r#"<endEvent id="{id}"><terminateEventDefinition/></endEvent>"#),
            "sub" => format!(r#"<subProcess id="{id}">{{{id}}}</subProcess>"#),
            other => panic!("kind {other}"),
        };
        match parent {
            Some(p) => subs.push((p.to_string(), el)),
            None => top.push_str(&el),
        }
    }
    let mut sub_flows: Vec<(String, String)> = Vec::new();
    for spec in flows.split_whitespace() {
        let (id, rest) = spec.split_once(':').unwrap();
        let (ends, parent) = match rest.split_once('@') {
            Some((e, p)) => (e, Some(p)),
            None => (rest, None),
        };
        let (s, t) = ends.split_once('>').unwrap();
        let el = format!(r#"<sequenceFlow id="{id}" sourceRef="{s}" targetRef="{t}"/>"#);
        match parent {
            Some(p) => sub_flows.push((p.to_string(), el)),
            None => top.push_str(&el),
        }
    }
    for (p, el) in subs.iter().chain(&sub_flows) {
        let hole = format!("{{{p}}}");
        top = top.replace(&hole, &format!("{el}{hole}"));
    }
    for (p, _) in &subs {
        top = top.replace(&format!("{{{p}}}"), "");
    }
    xml.push_str(&top);
    xml.push_str("</process></definitions>");
    let doc = crate::bpmn::parse(std::path::Path::new("t.bpmn"), xml.as_bytes()).unwrap();
    doc.main_process().unwrap().clone()
}

fn config(yaml: &str) -> FlowConfig {
    let text = format!("flow: {{id: t, bpmn_file: t.bpmn}}\n{yaml}");
    let (config, diags) = decode(&SourceFile::new("t.yaml", text));
    assert!(diags.is_empty(), "{diags:?}");
    config.unwrap()
}

/// The verdict on the config's one guarantee.
fn verdict(p: &Process, yaml: &str) -> Result<(), Broken> {
    let c = config(yaml);
    let mut all = prove(&c, p);
    assert_eq!(all.len(), 1);
    all.remove(0)
}

fn a(hook: &str, action: HookAction, target: &[&str]) -> Adaptation {
    Adaptation {
        hook: hook.into(),
        action,
        target: target.iter().map(|t| t.to_string()).collect(),
    }
}

fn nodes(b: &Broken) -> Vec<&str> {
    b.path.iter().map(|s| s.node.as_str()).collect()
}

/// s → a → b → c → e
fn chain() -> Process {
    process(
        "s:start a:task b:task c:task e:end",
        "f0:s>a f1:a>b f2:b>c f3:c>e",
    )
}

fn permit(actions: &str) -> String {
    format!("action_permissions: {{permitted_actions: [{actions}]}}\n")
}

use HookAction::*;

#[test]
fn the_model_alone_keeps_a_sequence_and_breaks_an_exclusive_bypass() {
    let p = chain();
    assert_eq!(
        verdict(&p, "guarantees: [{id: g, reach: c, only_after: [a, b]}]"),
        Ok(())
    );
    let p = process(
        "s:start x:xor a:task m:xor e:end",
        "f0:s>x f1:x>a f2:x>m f3:a>m f4:m>e",
    );
    let b = verdict(&p, "guarantees: [{id: g, always_visit: [a]}]").unwrap_err();
    assert!(b.adaptations.is_empty());
    assert_eq!(nodes(&b), ["s", "x", "m", "e"]);
}

#[test]
fn skip_to() {
    let p = chain();
    let hook = |targets: &str| {
        format!(
            "{}hooks: [{{id: h, location: f0, policy: p.md, allowed_targets: [{targets}]}}]\nguarantees: [{{id: g, reach: c, only_after: [a]}}]\n",
            permit("skip_to")
        )
    };
    assert_eq!(verdict(&p, &hook("a")), Ok(()));
    let b = verdict(&p, &hook("a, b")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["b"])]);
    assert_eq!(nodes(&b), ["s", "b", "c"]);
    assert!(b.path[1].by.is_some() && b.path[2].by.is_none());
    assert_eq!(b.path_text(), "s ⇢ b → c");
}

#[test]
fn without_allowed_targets_a_hook_offers_none_unless_any() {
    let p = chain();
    let yaml = |targets: &str| {
        format!(
            "{}hooks: [{{id: h, location: f0, policy: p.md{targets}}}]\nguarantees: [{{id: g, reach: c, only_after: [a]}}]\n",
            permit("skip_to, remove_node, swap_nodes")
        )
    };
    assert_eq!(verdict(&p, &yaml("")), Ok(()));
    let b = verdict(&p, &yaml(", allowed_targets: any")).unwrap_err();
    assert_eq!(b.adaptations.len(), 1);
    assert_eq!(b.adaptations[0].hook, "h");
}

#[test]
fn skip_node() {
    let p = chain();
    let yaml = |flow: &str| {
        format!(
            "{}hooks: [{{id: h, location: {flow}, policy: p.md}}]\nguarantees: [{{id: g, reach: c, only_after: [a]}}]\n",
            permit("skip_node")
        )
    };
    assert_eq!(verdict(&p, &yaml("f1")), Ok(()));
    let b = verdict(&p, &yaml("f0")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipNode, &["a"])]);
    assert_eq!(nodes(&b), ["s", "a", "b", "c"]);
    assert_eq!(b.path_text(), "s → [a skipped] → b → c");
}

#[test]
fn a_skipped_node_is_reached() {
    let p = chain();
    let yaml = format!(
        "{}hooks: [{{id: h, location: f1, action: skip_node}}]\nguarantees: [{{id: g, never_reach: b}}]\n",
        permit("skip_node")
    );
    let b = verdict(&p, &yaml).unwrap_err();
    assert!(b.adaptations.is_empty(), "reached with or without the skip");
}

#[test]
fn remove_node() {
    let p = chain();
    let yaml = |target: &str| {
        format!(
            "{}hooks: [{{id: h, location: f0, policy: p.md, allowed_targets: [{target}]}}]\nguarantees: [{{id: g, always_visit: [b]}}]\n",
            permit("remove_node")
        )
    };
    assert_eq!(verdict(&p, &yaml("c")), Ok(()));
    let b = verdict(&p, &yaml("b")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", RemoveNode, &["b"])]);
    assert_eq!(nodes(&b), ["s", "a", "b", "c", "e"]);
    assert_eq!(b.path_text(), "s → a → [b removed] → c → e");
}

#[test]
fn swap_nodes() {
    let p = chain();
    let yaml = |targets: &str| {
        format!(
            "{}hooks: [{{id: h, location: f0, policy: p.md, allowed_targets: [{targets}]}}]\nguarantees: [{{id: g, reach: b, only_after: [a]}}]\n",
            permit("swap_nodes")
        )
    };
    assert_eq!(verdict(&p, &yaml("b, c")), Ok(()));
    let b = verdict(&p, &yaml("a, b")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SwapNodes, &["b", "a"])]);
    assert_eq!(nodes(&b), ["s", "a"], "b runs where a was");
}

#[test]
fn add_node() {
    let p = chain();
    let yaml = |rule: &str| {
        format!(
            "{}hooks: [{{id: h, location: f1, policy: p.md, insertable_tasks: [{{id: n, instruction: x}}]}}]\nguarantees: [{rule}]\n",
            permit("add_node")
        )
    };
    assert_eq!(
        verdict(&p, &yaml("{id: g, reach: n, only_after: [a]}")),
        Ok(())
    );
    let b = verdict(&p, &yaml("{id: g, reach: c, only_after: [n]}")).unwrap_err();
    assert!(b.adaptations.is_empty(), "n is not always inserted");
    let b = verdict(&p, &yaml("{id: g, never_reach: n}")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", AddNode, &["n"])]);
    assert_eq!(nodes(&b), ["s", "a", "n"]);
    let b = verdict(&p, &yaml("{id: g, reach: n, only_after: [b]}")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", AddNode, &["n"])]);
}

/// s → and-split → (a | b) → and-join → e
fn parallel() -> Process {
    process(
        "s:start p:and a:task b:task j:and e:end",
        "f0:s>p f1:p>a f2:p>b f3:a>j f4:b>j f5:j>e",
    )
}

#[test]
fn terminate_never_breaks_a_guarantee() {
    // A hook that may terminate a branch: the run ends terminated, the join never fires
    // without that branch (a branch that merely died would release it).
    let p = parallel();
    for rule in [
        "{id: g, always_visit: [a, b]}",
        "{id: g, reach: e, only_after: [a, b]}",
    ] {
        let yaml = format!(
            "{}hooks: [{{id: h, location: f1, policy: p.md}}, {{id: k, location: f3, action: terminate}}]\nguarantees: [{rule}]\n",
            permit("terminate")
        );
        assert_eq!(verdict(&p, &yaml), Ok(()), "{rule}");
    }
    // The same branch ended by skip_to an end event releases the join without it.
    let p = process(
        "s:start p:and a:task b:task j:and e:end x:end",
        "f0:s>p f1:p>a f2:p>b f3:a>j f4:b>j f5:j>e",
    );
    let yaml = format!(
        "{}hooks: [{{id: h, location: f1, policy: p.md, allowed_targets: [x]}}]\nguarantees: [{{id: g, reach: e, only_after: [a]}}]\n",
        permit("skip_to, terminate")
    );
    let b = verdict(&p, &yaml).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["x"])]);
}

#[test]
fn a_parallel_join_waits_for_every_branch_unless_one_can_be_left() {
    let p = parallel();
    assert_eq!(
        verdict(&p, "guarantees: [{id: g, reach: e, only_after: [a, b]}]"),
        Ok(())
    );
    // A jump from before the split into one branch: the join releases without the other,
    // but the branch jumped into is always there.
    let p = process(
        "s:start r:task p:and a:task b:task j:and e:end",
        "f0:s>r f9:r>p f1:p>a f2:p>b f3:a>j f4:b>j f5:j>e",
    );
    let yaml = |targets: &str, rule: &str| {
        format!(
            "{}hooks: [{{id: h, location: f9, policy: p.md, allowed_targets: [{targets}]}}]\nguarantees: [{rule}]\n",
            permit("skip_to")
        )
    };
    assert_eq!(
        verdict(&p, &yaml("a", "{id: g, always_visit: [r, a]}")),
        Ok(())
    );
    let b = verdict(&p, &yaml("a", "{id: g, always_visit: [b]}")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["a"])]);
    assert_eq!(nodes(&b), ["s", "r", "a", "j", "e"]);
    // Jumps into both branches: neither is sure.
    let b = verdict(&p, &yaml("a, b", "{id: g, always_visit: [a]}")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["b"])]);
    assert_eq!(nodes(&b), ["s", "r", "b", "j", "e"]);
}

#[test]
fn a_branch_that_may_leave_releases_the_join() {
    // A hook inside a branch may jump out of it, to the end: the join may fire without
    // the branch.
    let p = process(
        "s:start p:and a:task b:task j:and e:end x:task",
        "f0:s>p f1:p>a f2:p>b f3:a>j f4:b>j f5:j>x f6:x>e",
    );
    let yaml = format!(
        "{}hooks: [{{id: h, location: f1, policy: p.md, allowed_targets: [e]}}]\nguarantees: [{{id: g, reach: x, only_after: [a]}}]\n",
        permit("skip_to")
    );
    let b = verdict(&p, &yaml).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["e"])]);
}

#[test]
fn two_hooks_composed_swap_then_skip() {
    // h swaps a and b; k skips whatever f2 leads to (b's place, where a may now be).
    let p = chain();
    let yaml = |k: &str| {
        format!(
            "{}hooks:\n  - {{id: h, location: f0, action: {{swap_nodes: [a, b]}}}}\n  - {{id: k, location: {k}, action: skip_node}}\nguarantees: [{{id: g, always_visit: [a]}}]\n",
            permit("swap_nodes, skip_node")
        )
    };
    // k on f2 skips the node at c's place: swapping a and b never puts a there.
    assert_eq!(verdict(&p, &yaml("f2")), Ok(()));
    let b = verdict(&p, &yaml("f1")).unwrap_err();
    assert_eq!(
        b.adaptations,
        [a("h", SwapNodes, &["a", "b"]), a("k", SkipNode, &["b"])]
    );
    assert_eq!(b.hooks(), ["h", "k"]);
    assert_eq!(b.path_text(), "s → a → [b skipped] → c → e");
}

#[test]
fn two_hooks_composed_remove_then_skip() {
    // h removes b; then k's flow (a → b) leads to c, and skipping it skips c.
    let p = chain();
    let yaml = |h_target: &str| {
        format!(
            "{}hooks:\n  - {{id: h, location: f0, policy: p.md, allowed_targets: [{h_target}]}}\n  - {{id: k, location: f1, action: skip_node}}\nguarantees: [{{id: g, always_visit: [c]}}]\n",
            permit("remove_node, skip_node")
        )
    };
    assert_eq!(verdict(&p, &yaml("a")), Ok(()));
    let b = verdict(&p, &yaml("b")).unwrap_err();
    assert_eq!(
        b.adaptations,
        [a("h", RemoveNode, &["b"]), a("k", SkipNode, &["c"])]
    );
    assert_eq!(b.path_text(), "s → a → [b removed] → [c skipped] → e");
}

#[test]
fn two_hooks_composed_jumps() {
    // Each jump alone keeps `reach e only_after [b]`... no: h jumps a → c (past b) only
    // when k first inserts nothing; here h may jump to c, k may jump from c's flow to e.
    let p = chain();
    let yaml = |h: &str| {
        format!(
            "{}hooks:\n  - {{id: h, location: f0, policy: p.md, allowed_targets: [{h}]}}\n  - {{id: k, location: f2, policy: p.md, allowed_targets: [e]}}\nguarantees: [{{id: g, reach: e, only_after: [a]}}]\n",
            permit("skip_to")
        )
    };
    assert_eq!(verdict(&p, &yaml("a")), Ok(()));
    let b = verdict(&p, &yaml("b")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["b"])]);
    assert_eq!(b.path_text(), "s ⇢ b → c → e");
}

#[test]
fn static_actions_count_and_denied_ones_do_not() {
    let p = chain();
    let yaml = |permitted: &str| {
        format!(
            "{}hooks: [{{id: h, location: f0, action: {{skip_to: c}}}}]\nguarantees: [{{id: g, reach: c, only_after: [b]}}]\n",
            permit(permitted)
        )
    };
    assert_eq!(verdict(&p, &yaml("continue")), Ok(()));
    let b = verdict(&p, &yaml("skip_to")).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["c"])]);
}

#[test]
fn loops_and_subprocesses() {
    // A loop back before a: a is still always before c.
    let p = process(
        "s:start a:task x:xor c:task e:end",
        "f0:s>a f1:a>x f2:x>a f3:x>c f4:c>e",
    );
    assert_eq!(
        verdict(&p, "guarantees: [{id: g, reach: c, only_after: [a]}]"),
        Ok(())
    );
    // What a sub-process runs is executed when it completes.
    let p = process(
        "s:start sp:sub i:start@sp t:task@sp ie:end@sp c:task e:end",
        "f0:s>sp g0:i>t@sp g1:t>ie@sp f1:sp>c f2:c>e",
    );
    assert_eq!(
        verdict(&p, "guarantees: [{id: g, reach: c, only_after: [t, sp]}]"),
        Ok(())
    );
    let yaml = format!(
        "{}hooks: [{{id: h, location: g0, policy: p.md, allowed_targets: [ie]}}]\nguarantees: [{{id: g, reach: c, only_after: [t]}}]\n",
        permit("skip_to")
    );
    let b = verdict(&p, &yaml).unwrap_err();
    assert_eq!(b.adaptations, [a("h", SkipTo, &["ie"])]);
}

#[test]
fn at_run_time_an_adaptation_is_checked_against_the_run_so_far() {
    let p = process(
        "s:start r:task p:and a:task b:task j:and e:end",
        "f0:s>r f9:r>p f1:p>a f2:p>b f3:a>j f4:b>j f5:j>e",
    );
    let c = config(&format!(
        "{}hooks: [{{id: h, location: f9, policy: p.md, allowed_targets: [a, b]}}]\nguarantees: [{{id: g, always_visit: [r, a]}}]\n",
        permit("skip_to")
    ));
    let gov = Governance::new(&c, &p).unwrap();
    let executed = ["s".to_string(), "r".to_string()];
    let live = LiveModel::default();
    assert_eq!(
        gov.admits(&p, &live, &executed, "f9", Proposed::SkipTo("a")),
        Ok(())
    );
    let breach = gov
        .admits(&p, &live, &executed, "f9", Proposed::SkipTo("b"))
        .unwrap_err();
    assert_eq!(breach.guarantee, "g");
    assert!(
        breach.why.contains("without executing `a`"),
        "{}",
        breach.why
    );
}
