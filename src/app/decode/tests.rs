use super::*;

fn decode_str(text: &str) -> (Option<FlowConfig>, Vec<Diagnostic>) {
    decode(&SourceFile::new("t.yaml", text))
}

#[test]
fn a_minimal_config_decodes_cleanly() {
    let (cfg, diags) = decode_str("flow:\n  id: p1\n  name: P\n  bpmn_file: m.bpmn\n");
    assert!(diags.is_empty(), "{diags:?}");
    let cfg = cfg.unwrap();
    assert_eq!(cfg.process_key(), "p1");
    assert_eq!(cfg.engine.kind, EngineKind::Native);
}

#[test]
fn unknown_keys_warn_with_a_suggestion() {
    let (_, diags) = decode_str("flow:\n  id: p\n  bpmn_file: m.bpmn\nvariabels:\n  x: 1\n");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].code, "config::unknown_key");
    assert_eq!(diags[0].help.as_deref(), Some("did you mean `variables`?"));
}

#[test]
fn upstream_silent_drops_are_reported() {
    let text = "flow: {id: p, bpmn_file: m.bpmn}\nhooks:\n  - id: h1\n    type: pre_edge\n    location: F1\n  - id: h2\n    location: F2\n    action: jump\n  - id: h3\n";
    let (cfg, diags) = decode_str(text);
    let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            "config::legacy",
            "config::unknown_action",
            "config::missing_key"
        ]
    );
    assert_eq!(cfg.unwrap().hooks.len(), 3);
}

#[test]
fn parameterised_actions_decode() {
    let text = "flow: {id: p, bpmn_file: m.bpmn}\nhooks:\n  - {location: F1, action: {skip_to: T9}}\n  - {location: F2, action: {swap_nodes: [A, B]}}\n  - {location: F3, action: {add_node: {id: N, instruction: do it}}}\n  - {location: F4, action: skip_to}\n";
    let (cfg, diags) = decode_str(text);
    let cfg = cfg.unwrap();
    assert!(
        matches!(&cfg.hooks[0].action.as_ref().unwrap().value, ActionSpec::SkipTo(t) if t.value == "T9")
    );
    assert!(
        matches!(&cfg.hooks[1].action.as_ref().unwrap().value, ActionSpec::SwapNodes(a, b) if a.value == "A" && b.value == "B")
    );
    assert!(
        matches!(&cfg.hooks[2].action.as_ref().unwrap().value, ActionSpec::AddNode(t) if t.id.value == "N")
    );
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, "config::action_parameter");
}

#[test]
fn permissions_accept_upstream_names_and_flag_the_rest() {
    let text = "flow: {id: p, bpmn_file: m.bpmn}\naction_permissions:\n  permitted_actions: [continue, SKIP_TO, request_user_input, skipto]\n  prohibited_actions: [swap_nodes]\n";
    let (cfg, diags) = decode_str(text);
    let p = cfg.unwrap().permissions;
    assert!(p.allows(HookAction::Continue) && p.allows(HookAction::SkipTo));
    assert!(!p.allows(HookAction::SwapNodes) && !p.allows(HookAction::Terminate));
    let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["config::legacy", "config::unknown_action"]);
    assert_eq!(diags[1].help.as_deref(), Some("did you mean `skip_to`?"));
}

#[test]
fn secrets_in_the_file_are_flagged_and_types_checked() {
    let text = "flow: {id: p, bpmn_file: m.bpmn}\nworkflow_engine:\n  type: flowable\n  password: test\n  callback_port: high\n";
    let (cfg, diags) = decode_str(text);
    assert_eq!(cfg.unwrap().engine.kind, EngineKind::Flowable);
    let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["config::type", "config::secret"]);
}

#[test]
fn mappings_keep_their_entries_without_unknown_key_noise() {
    let text = "flow: {id: p, bpmn_file: m.bpmn}\ntasks:\n  - id: T1\n    agent: {name: a}\n    output_mapping: {score: credit_score}\n";
    let (cfg, diags) = decode_str(text);
    assert!(diags.is_empty(), "{diags:?}");
    let task = &cfg.unwrap().tasks[0];
    assert_eq!(task.mode, TaskMode::TaskAgent);
    assert_eq!(task.output_mapping[0].1.value, "credit_score");
}

#[test]
fn lookups_by_id_find_the_first_entry_as_a_scan_would() {
    let mut text = String::from("flow: {id: p, bpmn_file: m.bpmn}\nvariables:\n");
    for i in 0..40 {
        text.push_str(&format!("  v{i}: {i}\n"));
    }
    text.push_str("tasks:\n");
    for i in 0..30 {
        text.push_str(&format!("  - id: t{i}\n    instruction: \"first {i}\"\n"));
    }
    text.push_str("  - id: t7\n    instruction: second\ngateways:\n");
    for i in 0..20 {
        text.push_str(&format!("  g{i}:\n    mode: native\n"));
    }
    text.push_str("hooks:\n");
    for i in 0..25 {
        text.push_str(&format!(
            "  - id: h{i}\n    location: f{i}\n    action: continue\n"
        ));
    }
    text.push_str("  - id: again\n    location: f3\n    action: continue\n");
    let (cfg, _) = decode_str(&text);
    let cfg = cfg.unwrap();
    for _ in 0..2 {
        let t7 = cfg.task("t7").unwrap();
        assert_eq!(t7.instruction.as_ref().unwrap().value, "first 7");
        assert!(cfg.task("t30").is_none());
        assert_eq!(cfg.gateway("g19").unwrap().id.value, "g19");
        assert!(cfg.gateway("g20").is_none());
        assert_eq!(cfg.hook_on("f3").unwrap().id.value, "h3");
        assert!(cfg.hook_on("f99").is_none());
        assert_eq!(cfg.variable("v39").unwrap().default, serde_json::json!(39));
        assert!(cfg.variable("x").is_none());
    }
    // A config changed after the first lookup is scanned, never misread.
    let mut changed = cfg.clone();
    changed.tasks.remove(7);
    assert_eq!(
        changed
            .task("t7")
            .unwrap()
            .instruction
            .as_ref()
            .unwrap()
            .value,
        "second"
    );
}
