//! What `validate` reports, rule by rule, on small apps written for each rule.

use crate::bench_support;
use crate::support;

use cuga_flo::diag::Severity;
use support::{TestApp, bpmn, linear, summary};

#[test]
fn a_well_formed_app_has_no_findings() {
    let app = TestApp::new(
        &linear(),
        "variables:\n  score: 0.0\ntasks:\n  - id: A\n    agent:\n      name: a\n      system_instruction: Score it\n      policy: ../policies/a.md\n    output_mapping:\n      score: score\nhooks:\n  - id: h\n    location: f2\n    policy: ../policies/h.md\n    allowed_targets: []\n",
    )
    .policy("a.md", "# Score\nReturn {\"score\": 0.5}\n")
    .policy("h.md", "# Hook\nContinue.\n");
    assert!(
        app.diagnostics().is_empty(),
        "{:#?}",
        summary(&app.diagnostics())
    );
}

#[test]
fn a_task_id_missing_from_the_model_is_an_error_with_a_suggestion() {
    let app = TestApp::new(&linear(), "tasks:\n  - id: AA\n    mode: native\n");
    let d = app.only("ref::unknown_id");
    assert_eq!(d.severity, Severity::Error);
    assert!(d.message.contains("task `AA` is not in"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("did you mean `A`?"));
    assert!(
        d.location().unwrap().ends_with("demo_config.yaml:6:9"),
        "{:?}",
        d.location()
    );
}

#[test]
fn a_config_entry_of_the_wrong_kind_says_what_the_element_is() {
    let app = TestApp::new(
        &linear(),
        "tasks:\n  - id: f2\n    mode: native\ngateways:\n  A:\n    mode: native\n",
    );
    let messages: Vec<String> = app.diagnostics().into_iter().map(|d| d.message).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("task `f2` is a sequence flow")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("gateway `A` is a task")),
        "{messages:?}"
    );
}

#[test]
fn gateway_flow_keys_must_be_outgoing_flows_of_that_gateway() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway default=\"f2\"", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", ""),
            ("f3", "G", "B", "${x} > 1"),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let app = TestApp::new(
        &model,
        "variables: {x: 0}\ngateways:\n  G:\n    flows:\n      f4:\n        decision: wrong\n",
    );
    let d = app.only("ref::not_outgoing");
    assert!(
        d.message
            .contains("`f4` is not an outgoing flow of gateway `G`")
    );
    assert_eq!(d.help.as_deref(), Some("did you mean `f2`?"));
}

#[test]
fn hooks_must_sit_on_sequence_flows_one_per_flow() {
    let app = TestApp::new(
        &linear(),
        "hooks:\n  - {id: h1, location: A, action: continue}\n  - {id: h2, location: f2, action: continue}\n  - {id: h3, location: f2, action: continue}\n",
    );
    let on_node = app.only("ref::unknown_id");
    assert!(on_node.message.contains("is a task"), "{}", on_node.message);
    assert!(
        on_node
            .help
            .unwrap()
            .contains("the flows into `A` are `f1`")
    );
    let dup = app.only("hook::duplicate");
    assert!(dup.message.contains("two hooks sit on flow `f2`"));
    assert_eq!(dup.labels.len(), 2, "points at both hooks");
}

#[test]
fn static_hook_actions_must_be_permitted_and_name_suitable_nodes() {
    let app = TestApp::new(
        &linear(),
        "action_permissions:\n  permitted_actions: [continue, skip_to, swap_nodes, add_node]\nhooks:\n  - {location: f1, action: terminate}\n  - {location: f2, action: {skip_to: S}}\n  - {location: f3, action: {swap_nodes: [A, A]}}\n",
    );
    let codes = app.codes();
    assert!(codes.contains(&"hook::denied_action"), "{codes:?}");
    let bad: Vec<String> = app
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "hook::bad_target")
        .map(|d| d.message)
        .collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].contains("skips to start event `S`"));
    assert!(bad[1].contains("swaps `A` with itself"));
}

#[test]
fn an_inserted_task_needs_a_fresh_id() {
    let app = TestApp::new(
        &linear(),
        "hooks:\n  - {location: f2, action: {add_node: {id: B, instruction: review}}}\n",
    );
    let d = app.only("hook::id_taken");
    assert!(
        d.message.contains("already has a task with that id"),
        "{}",
        d.message
    );
}

#[test]
fn an_action_both_permitted_and_prohibited_is_an_error() {
    let app = TestApp::new(
        &linear(),
        "action_permissions:\n  permitted_actions: [continue, skip_to]\n  prohibited_actions: [skip_to]\n",
    );
    let d = app.only("hook::permission_conflict");
    assert_eq!(d.labels.len(), 2);
}

#[test]
fn missing_policy_files_point_at_the_policy_key() {
    let app = TestApp::new(
        &linear(),
        "tasks:\n  - id: A\n    agent:\n      name: a\n      policy: ../policies/nope.md\n",
    );
    let d = app.only("ref::missing_policy");
    assert!(
        d.labels[0]
            .message
            .as_ref()
            .unwrap()
            .contains("demo/policies/nope.md")
    );
}

#[test]
fn undeclared_remote_agents_are_errors_naming_the_declared_ones() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", ""),
            ("f3", "G", "B", ""),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let app = TestApp::new(
        &model,
        "remote_agents:\n  agent0: {url: \"http://127.0.0.1:9\"}\ntasks:\n  - id: A\n    agent: {name: a, agent_type: agent1, system_instruction: x}\ngateways:\n  G:\n    mode: decision_agent\n    human_consultation: agent0\n",
    );
    let d = app.only("ref::unknown_agent");
    assert!(d.message.contains("remote agent `agent1`"));
    assert_eq!(d.help.as_deref(), Some("declared remote agents: `agent0`"));
}

#[test]
fn unreachable_nodes_and_nodes_that_cannot_finish_are_errors() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("task", "A"),
            ("task", "Orphan"),
            ("task", "L1"),
            ("task", "L2"),
            ("exclusiveGateway", "G"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", "${x} == 1"),
            ("f3", "A", "E", ""),
            ("f4", "G", "L1", "${x} != 1"),
            ("f5", "L1", "L2", ""),
            ("f6", "L2", "L1", ""),
            ("f7", "Orphan", "E", ""),
        ],
    );
    let app = TestApp::new(&model, "variables: {x: 0}\n");
    let findings = app.findings();
    let unreachable: Vec<_> = findings
        .iter()
        .filter(|f| f.1 == "graph::unreachable")
        .collect();
    assert_eq!(unreachable.len(), 1, "{findings:?}");
    assert!(unreachable[0].2.contains("`Orphan`"));
    let stuck: Vec<_> = findings
        .iter()
        .filter(|f| f.1 == "graph::no_end")
        .map(|f| f.2.clone())
        .collect();
    // One mistake, one diagnostic: the loop, named by its members.
    assert_eq!(stuck.len(), 1, "{stuck:?}");
    assert!(stuck[0].contains("loop through `L1` and `L2`"), "{stuck:?}");
}

#[test]
fn gateways_with_odd_shapes_are_reported() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("parallelGateway", "PG"),
            ("task", "A"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "PG", ""),
            ("f2", "PG", "A", ""),
            ("f3", "A", "E", ""),
        ],
    );
    let app = TestApp::new(&model, "");
    let d = app.only("graph::gateway_degree");
    assert_eq!(d.severity, Severity::Warning);
    assert!(d.message.contains("neither splits nor joins"));
}

#[test]
fn an_exclusive_split_whose_conditions_can_all_fail_is_a_warning_with_a_witness() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", "${mode} == agent"),
            ("f3", "G", "B", "${mode} == human"),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let app = TestApp::new(&model, "variables: {mode: agent}\n");
    let d = app.only("graph::no_flow_taken");
    assert_eq!(d.severity, Severity::Warning);
    let label = d.labels[0].message.clone().unwrap();
    assert!(label.contains("mode = \"other\""), "{label}");
}

#[test]
fn exhaustive_conditions_or_a_default_flow_silence_the_no_flow_warning() {
    let split = |default: &str, c2: &str, c3: &str| {
        bpmn(
            &[
                ("startEvent", "S"),
                (&*format!("exclusiveGateway {default}"), "G"),
                ("task", "A"),
                ("task", "B"),
                ("endEvent", "E"),
            ],
            &[
                ("f1", "S", "G", ""),
                ("f2", "G", "A", c2),
                ("f3", "G", "B", c3),
                ("f4", "A", "E", ""),
                ("f5", "B", "E", ""),
            ],
        )
    };
    let exhaustive = TestApp::new(
        &split("", "${score} > 0.6", "${score} <= 0.6"),
        "variables: {score: 0.0}\n",
    );
    assert!(
        !exhaustive.codes().contains(&"graph::no_flow_taken"),
        "{:?}",
        exhaustive.findings()
    );
    let defaulted = TestApp::new(
        &split("default=\"f3\"", "${score} > 0.6", ""),
        "variables: {score: 0.0}\n",
    );
    assert!(
        defaulted.diagnostics().is_empty(),
        "{:?}",
        defaulted.findings()
    );
}

#[test]
fn a_condition_that_does_not_parse_is_an_error_at_its_position() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway default=\"f3\"", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", ""),
            ("f3", "G", "B", ""),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let app = TestApp::new(
        &model,
        "variables: {x: 1}\ngateways:\n  G:\n    flows:\n      f2:\n        condition: \"${x} = 1\"\n",
    );
    let d = app.only("expr::syntax");
    assert_eq!(d.severity, Severity::Error);
    assert!(d.help.unwrap().contains("=="), "suggests `==`");
}

#[test]
fn conditions_reading_variables_nothing_sets_are_warned_about() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway default=\"f3\"", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", "${amount} > 10"),
            ("f3", "G", "B", ""),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let app = TestApp::new(&model, "");
    let d = app.only("expr::unset_variable");
    assert!(d.message.contains("`amount`"));
}

#[test]
fn external_engines_require_hook_ids_equal_to_locations_and_a_url() {
    let app = TestApp::new(
        &linear(),
        "workflow_engine:\n  type: flowable\nhooks:\n  - {id: screen, location: f1, action: continue}\n",
    );
    let codes = app.codes();
    assert!(codes.contains(&"config::hook_id"), "{codes:?}");
    assert!(codes.contains(&"config::engine"), "{codes:?}");
}

#[test]
fn a_config_naming_a_missing_model_says_which_models_are_there() {
    let app = TestApp::new(&linear(), "");
    std::fs::rename(
        app.path().join("config/model.bpmn"),
        app.path().join("config/other.bpmn20.xml"),
    )
    .unwrap();
    let d = app.only("app::missing_file");
    assert!(d.message.contains("`model.bpmn` does not exist"));
    assert!(d.help.unwrap().contains("`other.bpmn20.xml`"));
}

#[test]
fn bpmn_errors_surface_with_their_line() {
    let app = TestApp::new(
        &linear().replace("targetRef=\"B\"", "targetRef=\"Nope\""),
        "",
    );
    let d = app.only("bpmn::dangling_ref");
    assert!(
        d.location().unwrap().ends_with("model.bpmn:9:5"),
        "{:?}",
        d.location()
    );
}

#[test]
fn policy_rules_must_parse_and_point_at_their_line() {
    let app = TestApp::new(
        &linear(),
        "hooks:\n  - id: h\n    location: f2\n    policy: ../policies/h.md\n",
    )
    .policy(
        "h.md",
        "# Hook\n\n```rules\nwhen ${x} = 1 then continue\n```\n",
    );
    let d = app.only("rules::syntax");
    assert_eq!(d.severity, Severity::Error);
    assert!(d.message.contains("condition"), "{}", d.message);
    assert!(
        d.location().unwrap().ends_with("h.md:4:1"),
        "{:?}",
        d.location()
    );
}

#[test]
fn policy_rules_name_permitted_actions_known_nodes_and_outgoing_flows() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", ""),
            ("f3", "G", "B", ""),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let app = TestApp::new(
        &model,
        "variables: {x: 0}\naction_permissions:\n  permitted_actions: [continue, skip_to]\ngateways:\n  G:\n    mode: decision_agent\n    policy: ../policies/g.md\nhooks:\n  - id: h\n    location: f1\n    policy: ../policies/h.md\n    allowed_targets: [A]\n",
    )
    .policy(
        "h.md",
        "# Hook\n```rules\nwhen ${x} == 1 then terminate\nwhen ${x} == 2 then skip_to Nowhere\nwhen ${x} == 3 then skip_to A\n```\n",
    )
    .policy("g.md", "# Gateway\n```rules\nwhen ${x} == 1 then take f2, f4\n```\n");
    let codes: Vec<&str> = app
        .diagnostics()
        .iter()
        .filter(|d| d.code.starts_with("rules::"))
        .map(|d| d.code)
        .collect();
    assert_eq!(
        codes,
        [
            "rules::not_outgoing",
            "rules::denied_action",
            "rules::unknown_target"
        ],
        "{:#?}",
        summary(&app.diagnostics())
    );
    assert!(app.only("rules::not_outgoing").message.contains("`f4`"));
}

#[test]
fn a_flowable_app_may_not_permit_actions_that_change_the_topology() {
    let hooks = "hooks:\n  - id: f2\n    location: f2\n    policy: ../policies/h.md\n";
    let engine =
        "workflow_engine:\n  type: flowable\n  url: http://127.0.0.1:8080/flowable-rest/service\n";
    // Everything not prohibited is permitted: swap, remove and add are too.
    let app = TestApp::new(&linear(), &format!("{engine}{hooks}")).policy("h.md", "# Hook\n");
    let d = app.only("engine::unrealisable_action");
    assert_eq!(d.severity, Severity::Error);
    assert!(
        d.message
            .contains("hooks cannot take swap_nodes, remove_node, add_node"),
        "{}",
        d.message
    );
    assert!(d.help.as_deref().unwrap().contains("prohibited_actions"));
    // Listing what Flowable can do is fine; naming one it cannot points at it.
    let fine =
        "action_permissions:\n  permitted_actions: [continue, skip_to, terminate, skip_node]\n";
    let app = TestApp::new(&linear(), &format!("{engine}{hooks}{fine}")).policy("h.md", "# Hook\n");
    assert!(
        !app.codes().contains(&"engine::unrealisable_action"),
        "{:?}",
        app.codes()
    );
    let bad = "action_permissions:\n  permitted_actions: [continue, add_node]\n";
    let app = TestApp::new(&linear(), &format!("{engine}{hooks}{bad}")).policy("h.md", "# Hook\n");
    let d = app.only("engine::unrealisable_action");
    assert!(
        d.location().unwrap().ends_with("demo_config.yaml:13:33"),
        "{:?}",
        d.location()
    );
    // The same app on the native engine may.
    let app = TestApp::new(&linear(), hooks).policy("h.md", "# Hook\n");
    assert!(!app.codes().contains(&"engine::unrealisable_action"));
}

#[test]
fn a_flowable_app_may_not_use_ids_reserved_for_what_cuga_flo_adds() {
    let model = bpmn(
        &[("startEvent", "S"), ("task", "cuga_A"), ("endEvent", "E")],
        &[("f1", "S", "cuga_A", ""), ("f2", "cuga_A", "E", "")],
    );
    let engine =
        "workflow_engine:\n  type: flowable\n  url: http://127.0.0.1:8080/flowable-rest/service\n";
    let app = TestApp::new(&model, engine);
    let d = app.only("engine::unsupported_element");
    assert!(
        d.message.contains("`cuga_A` cannot run on Flowable"),
        "{}",
        d.message
    );
    assert!(
        d.location().unwrap().contains("model.bpmn"),
        "{:?}",
        d.location()
    );
}

/// The generated model of the guarantee benchmark (about 1,000 nodes, 10 reasoned hooks
/// and a static swap) is proven: the guarantee that holds is not reported, the one the
/// first hook breaks is, with that hook.
#[test]
fn guarantees_of_a_thousand_node_model_with_ten_hooks_are_proven() {
    let dir = tempfile::tempdir().unwrap();
    let app = bench_support::guarded(dir.path(), 198, 10);
    assert!(app.process().unwrap().nodes.len() >= 1000);
    assert_eq!(app.config.as_ref().unwrap().hooks.len(), 11);
    let diags = cuga_flo::check::check_app(&app);
    let broken: Vec<_> = diags
        .iter()
        .filter(|d| d.code == "guarantee::broken")
        .collect();
    assert_eq!(broken.len(), 1, "{:#?}", summary(&diags));
    assert!(
        broken[0]
            .message
            .starts_with("guarantee `first_target_always` does not hold"),
        "{}",
        broken[0].message
    );
    let message = &broken[0].message;
    assert!(message.contains("when hook `h0` may"), "{message}");
    assert!(
        message.contains(" → … → "),
        "a long path is shortened: {message}"
    );
}

/// Safe offers: a reasoned hook that may name nodes by permission but lists no
/// `allowed_targets` is told it is offered none, and what `allowed_targets: any` would
/// offer (never start or end events, nor the hooked flow's own target).
#[test]
fn a_reasoned_hook_without_allowed_targets_is_warned_with_what_any_would_offer() {
    let app = TestApp::new(
        &linear(),
        "hooks:\n  - id: h\n    location: f1\n    policy: ../policies/h.md\n",
    )
    .policy("h.md", "# Hook\nContinue.\n");
    let d = app.only("hook::no_targets");
    let help = d.help.unwrap();
    assert!(help.contains("allowed_targets: any"), "{help}");
    assert!(help.contains("`B`"), "{help}");
    assert!(
        !help.contains("`S`") && !help.contains("`E`") && !help.contains("`A`"),
        "{help}"
    );
    // with `allowed_targets: []` (none, on purpose) or a list, nothing is said
    for targets in ["[]", "[B]", "any"] {
        let app = TestApp::new(
            &linear(),
            &format!(
                "hooks:\n  - id: h\n    location: f1\n    policy: ../policies/h.md\n    allowed_targets: {targets}\n"
            ),
        )
        .policy("h.md", "# Hook\nContinue.\n");
        assert!(!app.codes().contains(&"hook::no_targets"), "{targets}");
    }
}

/// `may_set` names declared variables (their defaults type the state updates).
#[test]
fn may_set_names_a_declared_variable() {
    let app = TestApp::new(
        &linear(),
        "variables:\n  ticket_id: \"\"\nhooks:\n  - id: h\n    location: f1\n    policy: ../policies/h.md\n    allowed_targets: []\n    may_set: [ticket_idd]\n",
    )
    .policy("h.md", "# Hook\nContinue.\n");
    let d = app.only("hook::may_set");
    assert!(d.help.unwrap().contains("did you mean `ticket_id`?"));
}

#[test]
fn hook_rule_targets_are_checked_as_the_run_checks_them() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("task", "A"),
            ("task", "B"),
            ("task", "Bravo"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "A", ""),
            ("f2", "A", "B", ""),
            ("f3", "B", "Bravo", ""),
            ("f4", "Bravo", "E", ""),
        ],
    );
    let hooks = |targets: &str| {
        format!(
            "variables: {{x: 0}}\naction_permissions:\n  permitted_actions: [continue, skip_to, remove_node]\nhooks:\n  - id: h\n    location: f2\n    policy: ../policies/h.md\n    allowed_targets: {targets}\n"
        )
    };
    let rules = "# Hook\n```rules\nwhen ${x} == 1 then skip_to S\nwhen ${x} == 2 then skip_to Brav\nwhen ${x} == 3 then skip_to B\nwhen ${x} == 4 then remove_node E\nwhen ${x} == 5 then skip_to Bravo\n```\n";
    let app = TestApp::new(&model, &hooks("[S, Bravo, B, E]")).policy("h.md", rules);
    let found: Vec<String> = app
        .diagnostics()
        .into_iter()
        .filter(|d| d.code.starts_with("rules::"))
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(
        found[0].contains("skips to `S`, a startEvent"),
        "{found:#?}"
    );
    assert!(found[1].starts_with("rules::unknown_target") && found[1].contains("`Brav`"));
    assert!(
        found[2].contains("where its flow `f2` goes anyway"),
        "{found:#?}"
    );
    assert!(found[3].contains("only activities"), "{found:#?}");
    for d in app
        .diagnostics()
        .iter()
        .filter(|d| d.code.starts_with("rules::"))
    {
        assert!(
            d.location().unwrap().contains("h.md:"),
            "{:?}",
            d.location()
        );
    }

    // Outside allowed_targets: an error with "did you mean" among them.
    let app = TestApp::new(&model, &hooks("[Bravo]")).policy(
        "h.md",
        "# Hook\n```rules\nwhen ${x} == 1 then skip_to B\n```\n",
    );
    let d = app.only("rules::bad_target");
    assert_eq!(d.severity, Severity::Error);
    assert!(
        d.message.contains("not one of its `allowed_targets`"),
        "{}",
        d.message
    );
    assert!(
        d.help.as_deref().unwrap_or_default().contains("Bravo"),
        "{:?}",
        d.help
    );

    // `allowed_targets: any` never offers start or end events.
    let app = TestApp::new(&model, &hooks("any")).policy(
        "h.md",
        "# Hook\n```rules\nwhen ${x} == 1 then skip_to E\nwhen ${x} == 2 then skip_to Bravo\n```\n",
    );
    let d = app.only("rules::bad_target");
    assert!(d.message.contains("never offers"), "{}", d.message);
}

#[test]
fn loops_that_nothing_decides_to_leave_are_warned() {
    let nodes = [
        ("startEvent", "S"),
        ("task", "A"),
        ("task", "B"),
        ("endEvent", "E"),
    ];
    // A self-loop beside the way out: both are taken, every time.
    let model = bpmn(
        &nodes,
        &[
            ("f1", "S", "A", ""),
            ("f2", "A", "A", ""),
            ("f3", "A", "B", ""),
            ("f4", "B", "E", ""),
        ],
    );
    let d = TestApp::new(&model, "").only("graph::endless_loop");
    assert_eq!(d.severity, Severity::Warning);
    assert!(
        d.message.contains("`A` flows back to itself"),
        "{}",
        d.message
    );
    // A cycle of two tasks with an exit nobody chooses.
    let model = bpmn(
        &nodes,
        &[
            ("f1", "S", "A", ""),
            ("f2", "A", "B", ""),
            ("f3", "B", "A", ""),
            ("f4", "B", "E", ""),
        ],
    );
    let d = TestApp::new(&model, "").only("graph::endless_loop");
    assert!(
        d.message.contains("`A` and `B`") || d.message.contains("`A`, `B`"),
        "{}",
        d.message
    );
    // A condition on the way back decides: no warning.
    let model = bpmn(
        &nodes,
        &[
            ("f1", "S", "A", ""),
            ("f2", "A", "B", ""),
            ("f3", "B", "A", "${retry} == true"),
            ("f4", "B", "E", "${retry} == false"),
        ],
    );
    let app = TestApp::new(&model, "variables:\n  retry: false\n");
    assert!(
        !app.codes().contains(&"graph::endless_loop"),
        "{:?}",
        app.codes()
    );
    // A loop with no way out at all is graph::no_end, not this warning.
    let model = bpmn(
        &nodes,
        &[
            ("f1", "S", "A", ""),
            ("f2", "A", "B", ""),
            ("f3", "B", "A", ""),
        ],
    );
    let codes = TestApp::new(&model, "").codes();
    assert!(
        codes.contains(&"graph::no_end") && !codes.contains(&"graph::endless_loop"),
        "{codes:?}"
    );
}

/// Two executable processes in one file.
fn two_processes() -> String {
    let one = bpmn(
        &[("startEvent", "S"), ("task", "A"), ("endEvent", "E")],
        &[("f1", "S", "A", ""), ("f2", "A", "E", "")],
    );
    let second = "  <bpmn:process id=\"Second\" isExecutable=\"true\">\n    <bpmn:startEvent id=\"S2\"/>\n    <bpmn:task id=\"T2\"/>\n    <bpmn:task id=\"U2\"/>\n    <bpmn:endEvent id=\"E2\"/>\n    <bpmn:sequenceFlow id=\"g1\" sourceRef=\"S2\" targetRef=\"T2\"/>\n    <bpmn:sequenceFlow id=\"g2\" sourceRef=\"T2\" targetRef=\"U2\"/>\n    <bpmn:sequenceFlow id=\"g3\" sourceRef=\"U2\" targetRef=\"E2\"/>\n    <bpmn:task id=\"Orphan\"/>\n  </bpmn:process>\n";
    one.replace(
        "</bpmn:definitions>",
        &format!("{second}</bpmn:definitions>"),
    )
}

#[test]
fn a_file_with_several_processes_needs_the_config_to_choose() {
    let app = TestApp::new(&two_processes(), "");
    let d = app.only("app::ambiguous_process");
    assert_eq!(d.severity, Severity::Error);
    assert!(
        d.message.contains("`P` (line 3)") && d.message.contains("`Second` (line"),
        "{}",
        d.message
    );
    assert!(
        d.location().unwrap().contains("model.bpmn:3:"),
        "{:?}",
        d.location()
    );
    assert!(d.help.as_deref().unwrap_or_default().contains("process: P"));
    // The other process is still checked: its orphan task is unreachable.
    assert!(
        app.codes().contains(&"graph::unreachable"),
        "{:?}",
        app.codes()
    );

    // Chosen by `process:`: no ambiguity, and the app runs that process.
    let app = TestApp::new(&two_processes(), "").edit_flow("  process: Second\n");
    let loaded = cuga_flo::app::load_app(&cuga_flo::app::registry::app_at(&app.path()));
    assert_eq!(loaded.process().unwrap().id, "Second");
    let codes = app.codes();
    assert!(!codes.contains(&"app::ambiguous_process"), "{codes:?}");
    // `Orphan` (in the process run) is still unreachable.
    assert!(codes.contains(&"graph::unreachable"), "{codes:?}");

    // A typo is an error with "did you mean".
    let app = TestApp::new(&two_processes(), "").edit_flow("  process: Secnd\n");
    let d = app.only("app::unknown_process");
    assert!(
        d.help
            .as_deref()
            .unwrap_or_default()
            .contains("did you mean `Second`"),
        "{:?}",
        d.help
    );

    // A non-executable second process is checked but not chosen.
    let app = TestApp::new(
        &two_processes().replace(
            "id=\"Second\" isExecutable=\"true\"",
            "id=\"Second\" isExecutable=\"false\"",
        ),
        "",
    );
    let loaded = cuga_flo::app::load_app(&cuga_flo::app::registry::app_at(&app.path()));
    assert_eq!(loaded.process().unwrap().id, "P");
    assert!(!app.codes().contains(&"app::ambiguous_process"));
}

/// FEEL conditions take part in the search for values under which no flow is taken, like
/// cuga-flo's own: `=amount > 100` and `=amount < 50` leave `amount = 50` uncovered.
#[test]
fn feel_conditions_are_searched_for_values_that_take_no_flow() {
    let split = |c2: &str, c3: &str| {
        bpmn(
            &[
                ("startEvent", "S"),
                ("exclusiveGateway", "G"),
                ("task", "A"),
                ("task", "B"),
                ("endEvent", "E"),
            ],
            &[
                ("f1", "S", "G", ""),
                ("f2", "G", "A", c2),
                ("f3", "G", "B", c3),
                ("f4", "A", "E", ""),
                ("f5", "B", "E", ""),
            ],
        )
    };
    let gap = TestApp::new(
        &split("=amount > 100", "=amount < 50"),
        "variables: {amount: 0}\n",
    );
    let d = gap.only("graph::no_flow_taken");
    let label = d.labels[0].message.clone().unwrap();
    assert!(label.contains("amount = "), "{label}");
    let covered = TestApp::new(
        &split("=amount > 100", "=amount <= 100"),
        "variables: {amount: 0}\n",
    );
    assert!(covered.diagnostics().is_empty(), "{:?}", covered.findings());
}

/// A consulting gateway's prose `condition` is its question: no finding. A condition
/// with a condition's marks that does not parse is still an error.
#[test]
fn a_consulting_gateways_prose_condition_is_its_question_not_an_error() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", ""),
            ("f3", "G", "B", ""),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let config = |condition: &str, consult: bool| {
        format!(
            "remote_agents:\n  agent0: {{url: \"http://127.0.0.1:9\"}}\nvariables: {{x: 0}}\ngateways:\n  G:\n    mode: decision_agent\n    condition: \"{condition}\"\n{}",
            if consult {
                "    human_consultation: agent0\n"
            } else {
                ""
            }
        )
    };
    let prose = "Ask the user which way: update again, or run the function";
    let asked = TestApp::new(&model, &config(prose, true));
    assert!(
        !asked.codes().iter().any(|c| c.starts_with("expr::")),
        "{:?}",
        asked.findings()
    );
    // Without a person to consult, prose is not a condition.
    let unasked = TestApp::new(&model, &config(prose, false));
    assert!(
        unasked.codes().contains(&"expr::syntax"),
        "{:?}",
        unasked.findings()
    );
    // A mistyped condition stays an error even with a person to consult.
    let typo = TestApp::new(&model, &config("${x} = 1", true));
    assert!(
        typo.codes().contains(&"expr::syntax"),
        "{:?}",
        typo.findings()
    );
}

/// A condition in FEEL that is not marked as FEEL is reported with how to mark it, not
/// with advice to rewrite it in cuga-flo's language.
#[test]
fn unmarked_feel_is_told_how_to_mark_it() {
    let model = bpmn(
        &[
            ("startEvent", "S"),
            ("exclusiveGateway default=\"f3\"", "G"),
            ("task", "A"),
            ("task", "B"),
            ("endEvent", "E"),
        ],
        &[
            ("f1", "S", "G", ""),
            ("f2", "G", "A", "Vacation Approval = \"Approved\""),
            ("f3", "G", "B", ""),
            ("f4", "A", "E", ""),
            ("f5", "B", "E", ""),
        ],
    );
    let app = TestApp::new(&model, "variables: {x: 0}\n");
    let d = app.only("expr::syntax");
    let help = d.help.unwrap_or_default();
    assert!(help.contains("it reads as FEEL"), "{help}");
    assert!(!help.contains("use `==`"), "{help}");
    // Marked, it is FEEL and reads the variable named with a space.
    let marked = model.replace(">Vacation Approval", ">=Vacation Approval");
    assert_ne!(marked, model);
    let app = TestApp::new(&marked, "variables: {\"Vacation Approval\": \"\"}\n");
    assert!(
        !app.codes().iter().any(|c| c.starts_with("expr::")),
        "{:?}",
        app.findings()
    );
    // The variable's name is not an identifier for `${...}`; FEEL names it as written.
    let d = app.only("config::variable_name");
    assert!(
        d.help
            .as_deref()
            .is_some_and(|h| h.contains("FEEL conditions name it as `Vacation Approval`")),
        "{:?}",
        d.help
    );
}

/// A rule whose condition reads a variable nothing sets never decides: a warning, with the
/// close name when there is one. Declared variables, task outputs, `may_set` and other
/// rules' `set`s all count as set.
#[test]
fn rules_reading_variables_nothing_sets_are_warned_about() {
    let app = TestApp::new(
        &linear(),
        "variables: {risk: \"\"}\ntasks:\n  - id: A\n    agent: {name: a, system_instruction: Score it, policy: ../policies/a.md}\n    output_mapping: {score: score}\naction_permissions:\n  permitted_actions: [continue, terminate]\nhooks:\n  - id: h\n    location: f2\n    policy: ../policies/h.md\n    allowed_targets: []\n    may_set: [risk]\n",
    )
    .policy("a.md", "# Score\n")
    .policy(
        "h.md",
        "# Hook\n```rules\nwhen ${riks} == \"high\" then terminate\nwhen ${score} > 0.5 && ${flagged} == true then continue set flagged = true\nwhen ${order.total} > 1 then continue\nwhen ${riks} == \"low\" then continue\nwhen true then continue\n```\n",
    );
    let found: Vec<_> = app
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "rules::unset_variable")
        .collect();
    let summary: Vec<String> = found
        .iter()
        .map(|d| format!("{} {:?} {:?}", d.message, d.help, d.location()))
        .collect();
    assert_eq!(found.len(), 2, "{summary:#?}");
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(found[0].message.contains("`riks`"), "{summary:#?}");
    assert_eq!(found[0].help.as_deref(), Some("did you mean `risk`?"));
    assert!(
        found[0].location().unwrap().ends_with("h.md:3:1"),
        "{summary:#?}"
    );
    // a member path is checked by its root; no close name: declare it
    assert!(found[1].message.contains("`order`"), "{summary:#?}");
    assert!(
        found[1].help.as_deref().unwrap().contains("declare it"),
        "{summary:#?}"
    );
}

/// A hook rule's `set` is checked as the run checks `state_updates`: only the hook's
/// `may_set`, each with a value of its declared default's type.
#[test]
fn hook_rules_set_only_may_set_variables_of_their_type() {
    let app = TestApp::new(
        &linear(),
        "variables: {risk: \"\", flagged: false}\naction_permissions:\n  permitted_actions: [continue]\nhooks:\n  - id: h\n    location: f2\n    policy: ../policies/h.md\n    allowed_targets: []\n    may_set: [risk, flagged]\n",
    )
    .policy(
        "h.md",
        "# Hook\n```rules\nwhen ${risk} == \"a\" then continue set risk = \"b\", flagged = true\nwhen ${risk} == \"b\" then continue set flaged = true\nwhen ${risk} == \"c\" then continue set flagged = \"yes\"\n```\n",
    );
    let found: Vec<_> = app
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "rules::not_settable")
        .collect();
    let summary: Vec<String> = found
        .iter()
        .map(|d| format!("{} {:?} {:?}", d.message, d.help, d.location()))
        .collect();
    assert_eq!(found.len(), 2, "{summary:#?}");
    assert_eq!(found[0].severity, Severity::Error);
    assert!(
        found[0]
            .message
            .contains("`flaged`, which is not in its `may_set`"),
        "{summary:#?}"
    );
    assert_eq!(found[0].help.as_deref(), Some("did you mean `flagged`?"));
    assert!(
        found[0].location().unwrap().ends_with("h.md:4:1"),
        "{summary:#?}"
    );
    assert!(found[1].message.contains("to \"yes\""), "{summary:#?}");
    assert!(
        found[1].location().unwrap().ends_with("h.md:5:1"),
        "{summary:#?}"
    );
}
