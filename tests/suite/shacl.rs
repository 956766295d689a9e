//! Graph mode's SHACL validation: cuga-flo's validator and pyshacl (the oracle, PyPI) agree
//! on a table of process graphs, valid and invalid (each invalid one breaking one rule of
//! the shapes); a graph-mode app that breaks a shape does not validate and does not start,
//! with the diagnostic at the BPMN element's file:line; `graph validate` prints the W3C
//! validation report and the shapes.
#![cfg(feature = "graph")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use crate::support::runs;

use crate::support::python;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cuga(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(args)
        .current_dir(root())
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .output()
        .expect("cuga-flo runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const PREFIXES: &str = "\
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix sbpmnc: <https://sBPMN.github.io/2.0/classes#> .
@prefix sbpmnp: <https://sBPMN.github.io/2.0/properties#> .
@prefix agentflow: <http://example.org/ontology/agentflow#> .
@prefix cf: <urn:cuga-flo:vocab#> .
@prefix ex: <http://example.org/p#> .
";

/// A valid process: start → classify (agentic) → exclusive split (a default) → escalate
/// (agentic) or provision → guardrail approval (merges, splits with a default) → push or
/// end; one typed variable. Each `{NAME}` is replaced by a case (empty when unused).
const BASE: &str = "
ex:P a agentflow:AgenticProcess ;
    agentflow:hasStartEvent ex:Start ;
    agentflow:hasEndEvent ex:End ;
    agentflow:hasTask ex:Classify , ex:Gw , ex:Escalate , ex:Provision , ex:Approve , ex:Push .
ex:Start a sbpmnc:startEvent {START} ; agentflow:nextTask ex:Classify .
ex:Classify a agentflow:AgenticTask ; {RECIPE} ; agentflow:nextTask ex:Gw .
ex:Gw a sbpmnc:exclusiveGateway ;
    agentflow:nextTask ex:Escalate {| agentflow:varName \"severity\" ; agentflow:operator \"==\" ;
        agentflow:threshold \"CRITICAL\" ; agentflow:isDefault false |} ;
    agentflow:nextTask ex:Provision {| agentflow:isDefault {DEFAULT} |} .
ex:Escalate a agentflow:AgenticTask ; agentflow:recipe \"escalate\" ; agentflow:nextTask ex:Approve .
ex:Provision a sbpmnc:serviceTask ; agentflow:nextTask ex:Approve .
ex:Approve a agentflow:GuardrailGateway {GUARD} ;
    agentflow:nextTask ex:Push {| agentflow:varName \"approval_status\" ; agentflow:operator \"==\" ;
        agentflow:threshold \"APPROVED\" |} ;
    agentflow:nextTask ex:End {| agentflow:isDefault true |} .
ex:Push a agentflow:AgenticTask ; agentflow:recipe \"push\" ; agentflow:nextTask ex:End .
ex:End a sbpmnc:endEvent .
ex:Severity a agentflow:ProcessVariable {VAR} .
";

struct Case {
    name: &'static str,
    /// Replacements of the base's slots.
    slots: &'static [(&'static str, &'static str)],
    /// More statements.
    extra: &'static str,
    /// The (focus node's local name, constraint component's local name) results expected;
    /// none for a valid graph.
    expect: &'static [(&'static str, &'static str)],
}

const DEFAULT_SLOTS: [(&str, &str); 5] = [
    ("{START}", ""),
    ("{RECIPE}", "agentflow:recipe \"classify\""),
    ("{DEFAULT}", "true"),
    (
        "{GUARD}",
        "; agentflow:requiresApproval true ; agentflow:approvalTimeout \"PT1H\"^^xsd:dayTimeDuration",
    ),
    (
        "{VAR}",
        "; agentflow:varName \"severity\" ; agentflow:varValue \"LOW\"",
    ),
];

const CASES: &[Case] = &[
    // ── valid ──
    Case {
        name: "valid",
        slots: &[],
        extra: "",
        expect: &[],
    },
    Case {
        name: "valid_boundary_event",
        slots: &[],
        extra: "ex:Timeout a sbpmnc:boundaryEvent ; sbpmnp:attachedToRef ex:Escalate ;
            agentflow:nextTask ex:End . ex:P agentflow:hasTask ex:Timeout .",
        expect: &[],
    },
    Case {
        name: "valid_event_subprocess",
        slots: &[],
        extra: "ex:OnError a sbpmnc:subProcess ; cf:triggeredByEvent true .
            ex:ErrStart a sbpmnc:startEvent ; cf:parent ex:OnError ;
            cf:eventDefinition sbpmnc:errorEventDefinition ; agentflow:nextTask ex:ErrEnd .
            ex:ErrEnd a sbpmnc:endEvent ; cf:parent ex:OnError .
            ex:P agentflow:hasTask ex:OnError , ex:ErrStart , ex:ErrEnd .",
        expect: &[],
    },
    Case {
        name: "valid_guardrail_without_approval",
        slots: &[("{GUARD}", "; agentflow:requiresApproval false")],
        extra: "",
        expect: &[],
    },
    Case {
        name: "valid_typed_values",
        slots: &[("{VAR}", "; agentflow:varName \"severity\" ; agentflow:varValue 3")],
        extra: "ex:Decl a cf:VariableDeclaration ; agentflow:varName \"items\" ;
            cf:initialValue \"[1, 2]\"^^rdf:JSON .
            ex:Flag a agentflow:ProcessVariable ; agentflow:varName \"flag\" ; agentflow:varValue false .
            ex:Score a agentflow:ProcessVariable ; agentflow:varName \"score\" ; agentflow:varValue 0.75 .",
        expect: &[],
    },
    Case {
        name: "valid_subclass_of_agentic_task",
        slots: &[],
        extra: "ex:ReviewTask rdfs:subClassOf agentflow:AgenticTask .
            ex:Review a ex:ReviewTask ; agentflow:recipe \"review\" ; agentflow:nextTask ex:End .
            ex:Push agentflow:nextTask ex:Review .",
        expect: &[],
    },
    Case {
        name: "valid_parallel_split_and_join",
        slots: &[],
        extra: "ex:Fork a sbpmnc:parallelGateway ; agentflow:nextTask ex:A , ex:B .
            ex:A a sbpmnc:task ; agentflow:nextTask ex:Join . ex:B a sbpmnc:task ; agentflow:nextTask ex:Join .
            ex:Join a sbpmnc:parallelGateway ; agentflow:nextTask ex:End .
            ex:Push agentflow:nextTask ex:Fork .",
        expect: &[],
    },
    // Two start events; a timer start alone (a run starts at its start events, triggered
    // or not, as `validate` and the engines have it).
    Case {
        name: "valid_two_start_events",
        slots: &[],
        extra: "ex:Start2 a sbpmnc:startEvent ; agentflow:nextTask ex:Classify .
            ex:P agentflow:hasStartEvent ex:Start2 .",
        expect: &[],
    },
    Case {
        name: "valid_only_a_timer_start",
        slots: &[("{START}", "; cf:eventDefinition sbpmnc:timerEventDefinition")],
        extra: "",
        expect: &[],
    },
    // ── invalid: one rule broken each (a warning for the gateways' two) ──
    Case {
        name: "no_start_event",
        slots: &[],
        extra: "",
        // The start is not linked from the process (see the replacement below).
        expect: &[("P", "QualifiedMinCountConstraintComponent")],
    },
    Case {
        name: "unreachable_task",
        slots: &[],
        extra: "ex:Orphan a sbpmnc:userTask ; agentflow:nextTask ex:End . ex:P agentflow:hasTask ex:Orphan .",
        expect: &[("Orphan", "QualifiedMinCountConstraintComponent")],
    },
    Case {
        name: "unreachable_cycle",
        slots: &[],
        extra: "ex:Loop1 a sbpmnc:task ; agentflow:nextTask ex:Loop2 .
            ex:Loop2 a sbpmnc:task ; agentflow:nextTask ex:Loop1 .",
        expect: &[
            ("Loop1", "QualifiedMinCountConstraintComponent"),
            ("Loop2", "QualifiedMinCountConstraintComponent"),
        ],
    },
    Case {
        name: "gateway_that_neither_splits_nor_merges",
        slots: &[],
        extra: "ex:Pass a sbpmnc:parallelGateway ; agentflow:nextTask ex:End .
            ex:Push agentflow:nextTask ex:Pass .",
        expect: &[("Pass", "OrConstraintComponent")],
    },
    Case {
        name: "gateway_without_outgoing_flow",
        slots: &[],
        extra: "ex:Dead a sbpmnc:inclusiveGateway . ex:Push agentflow:nextTask ex:Dead .",
        expect: &[
            ("Dead", "MinCountConstraintComponent"),
            ("Dead", "OrConstraintComponent"),
        ],
    },
    Case {
        name: "exclusive_split_without_default",
        slots: &[("{DEFAULT}", "false")],
        extra: "",
        expect: &[("Gw", "SPARQLConstraintComponent")],
    },
    Case {
        name: "two_defaults",
        slots: &[],
        extra: "ex:Gw agentflow:nextTask ex:Escalate {| agentflow:isDefault true |} .",
        expect: &[("Gw", "QualifiedMaxCountConstraintComponent")],
    },
    Case {
        name: "agentic_task_without_recipe",
        slots: &[("{RECIPE}", "rdfs:label \"Classify\"")],
        extra: "",
        expect: &[("Classify", "MinCountConstraintComponent")],
    },
    Case {
        name: "agentic_task_with_two_recipes",
        slots: &[("{RECIPE}", "agentflow:recipe \"classify\" , \"classify_v2\"")],
        extra: "",
        expect: &[("Classify", "MaxCountConstraintComponent")],
    },
    Case {
        name: "recipe_not_a_string",
        slots: &[("{RECIPE}", "agentflow:recipe 7")],
        extra: "",
        expect: &[("Classify", "DatatypeConstraintComponent")],
    },
    Case {
        name: "guardrail_without_requires_approval",
        slots: &[(
            "{GUARD}",
            "; agentflow:approvalTimeout \"PT1H\"^^xsd:dayTimeDuration",
        )],
        extra: "",
        expect: &[("Approve", "MinCountConstraintComponent")],
    },
    Case {
        name: "requires_approval_not_a_boolean",
        slots: &[(
            "{GUARD}",
            "; agentflow:requiresApproval \"yes\" ; agentflow:approvalTimeout \"PT1H\"^^xsd:dayTimeDuration",
        )],
        extra: "",
        expect: &[("Approve", "DatatypeConstraintComponent")],
    },
    Case {
        name: "approval_without_timeout",
        slots: &[("{GUARD}", "; agentflow:requiresApproval true")],
        extra: "",
        expect: &[("Approve", "OrConstraintComponent")],
    },
    Case {
        name: "timeout_as_plain_string",
        slots: &[(
            "{GUARD}",
            "; agentflow:requiresApproval true ; agentflow:approvalTimeout \"one hour\"",
        )],
        extra: "",
        expect: &[("Approve", "DatatypeConstraintComponent")],
    },
    Case {
        name: "timeout_ill_formed",
        slots: &[(
            "{GUARD}",
            "; agentflow:requiresApproval true ; agentflow:approvalTimeout \"PT1X\"^^xsd:dayTimeDuration",
        )],
        extra: "",
        expect: &[("Approve", "DatatypeConstraintComponent")],
    },
    Case {
        name: "two_timeouts",
        slots: &[(
            "{GUARD}",
            "; agentflow:requiresApproval true ; agentflow:approvalTimeout \"PT1H\"^^xsd:dayTimeDuration , \"PT2H\"^^xsd:dayTimeDuration",
        )],
        extra: "",
        expect: &[("Approve", "MaxCountConstraintComponent")],
    },
    Case {
        name: "variable_without_name",
        slots: &[("{VAR}", "; agentflow:varValue \"LOW\"")],
        extra: "",
        expect: &[("Severity", "MinCountConstraintComponent")],
    },
    Case {
        name: "variable_value_not_a_literal",
        slots: &[(
            "{VAR}",
            "; agentflow:varName \"severity\" ; agentflow:varValue ex:Low",
        )],
        extra: "",
        expect: &[("Severity", "NodeConstraintComponent")],
    },
    Case {
        name: "variable_with_two_values",
        slots: &[(
            "{VAR}",
            "; agentflow:varName \"severity\" ; agentflow:varValue \"LOW\" , \"HIGH\"",
        )],
        extra: "",
        expect: &[("Severity", "MaxCountConstraintComponent")],
    },
    Case {
        name: "variable_value_of_another_type",
        slots: &[(
            "{VAR}",
            "; agentflow:varName \"severity\" ; agentflow:varValue \"2026-01-01\"^^xsd:date",
        )],
        extra: "",
        expect: &[("Severity", "NodeConstraintComponent")],
    },
    Case {
        name: "declared_initial_value_ill_formed",
        slots: &[],
        extra: "ex:Count a cf:VariableDeclaration ; agentflow:varName \"count\" ;
            cf:initialValue \"many\"^^xsd:integer .",
        expect: &[("Count", "NodeConstraintComponent")],
    },
];

fn graph_of(case: &Case) -> String {
    let mut body = BASE.to_owned();
    if case.name == "no_start_event" {
        body = body.replace("agentflow:hasStartEvent ex:Start ;", "");
    }
    for (slot, value) in case.slots.iter().chain(DEFAULT_SLOTS.iter()) {
        body = body.replace(slot, value);
    }
    format!("{PREFIXES}{body}\n{}\n", case.extra)
}

fn local(iri: &str) -> String {
    iri.rsplit(['#', '/']).next().unwrap_or(iri).to_owned()
}

type Results = BTreeSet<(String, String)>;

/// What cuga-flo says of a graph file: conforms, and its (focus, component) pairs.
/// Whether `graph validate --json` reported a result of severity violation.
fn violated(out: &Output) -> bool {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["results"].as_array().unwrap().iter().any(|r| {
        r["severity"]
            .as_str()
            .is_some_and(|s| s.ends_with("Violation"))
    })
}

fn ours(file: &Path) -> (bool, Results, Output) {
    let out = cuga(&["graph", "validate", file.to_str().unwrap(), "--json"]);
    let doc: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", runs::show(&out)));
    let results = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let focus = r["focus"].as_str().unwrap();
            let focus = if focus.starts_with("_:") {
                "_:b"
            } else {
                focus
            };
            (
                focus.to_owned(),
                r["component"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (doc["conforms"].as_bool().unwrap(), results, out)
}

#[test]
fn cuga_flo_and_pyshacl_agree_on_every_graph() {
    assert!(CASES.len() >= 20);
    let python = python::shacl_python();
    let tmp = TempDir::new().unwrap();
    let shapes = tmp.path().join("shapes.ttl");
    let out = cuga(&["graph", "validate", "--shapes"]);
    assert!(out.status.success(), "{}", runs::show(&out));
    std::fs::write(&shapes, &out.stdout).unwrap();

    let mut data_files = Vec::new();
    let mut ours_all = Vec::new();
    for case in CASES {
        let ttl = tmp.path().join(format!("{}.ttl", case.name));
        std::fs::write(&ttl, graph_of(case)).unwrap();
        let (conforms, results, out) = ours(&ttl);
        // Exit 1 on a violation; 0 when the graph conforms or has only warnings.
        let code = if violated(&out) { 1 } else { 0 };
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}: {}",
            case.name,
            runs::show(&out)
        );
        let found: BTreeSet<(String, String)> = (results.iter())
            .map(|(f, c)| (local(f), local(c)))
            .collect();
        let expected: BTreeSet<(String, String)> = (case.expect.iter())
            .map(|(f, c)| (f.to_string(), c.to_string()))
            .collect();
        assert_eq!(found, expected, "{}:\n{}", case.name, graph_of(case));
        assert_eq!(conforms, case.expect.is_empty(), "{}", case.name);

        let nt = tmp.path().join(format!("{}.nt", case.name));
        let out = cuga(&["graph", "validate", ttl.to_str().unwrap(), "--data-graph"]);
        assert!(out.status.success(), "{}: {}", case.name, runs::show(&out));
        std::fs::write(&nt, &out.stdout).unwrap();
        data_files.push(nt);
        ours_all.push((conforms, results));
    }

    let out = Command::new(python)
        .arg(root().join("tests/interop/shacl_check.py"))
        .arg(&shapes)
        .args(&data_files)
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", runs::show(&out));
    let theirs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(theirs.len(), CASES.len());
    for ((case, (conforms, results)), pyshacl) in CASES.iter().zip(&ours_all).zip(&theirs) {
        let their_results: Results = pyshacl["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r[0].as_str().unwrap().to_owned(),
                    r[1].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            pyshacl["conforms"].as_bool(),
            Some(*conforms),
            "{}: pyshacl {pyshacl}",
            case.name
        );
        assert_eq!(&their_results, results, "{}", case.name);
    }
}

/// AgentFLOW's own demo graphs (its first namespaces and capitalised class names are read
/// as the current ones) conform, and so do the demo apps' exports.
#[test]
fn the_demo_graphs_and_apps_conform() {
    for file in [
        "tests/fixtures/graph/agentflow/sim-activation.definitions.ttl",
        "tests/fixtures/graph/agentflow/git-push-safety.definitions.ttl",
    ] {
        let out = cuga(&["graph", "validate", file]);
        assert!(out.status.success(), "{file}: {}", runs::show(&out));
        assert!(text(&out.stdout).contains("conforms to the process shapes"));
    }
    for app in std::fs::read_dir(root().join("applications"))
        .unwrap()
        .flatten()
    {
        let name = app.file_name().to_string_lossy().into_owned();
        let out = cuga(&["graph", "validate", &name]);
        assert!(out.status.success(), "{name}: {}", runs::show(&out));
    }
}

/// `--report` prints a W3C SHACL validation report: conforms, and each result with its
/// focus node, path, shape, constraint component, severity and message.
#[test]
fn the_report_is_a_shacl_validation_report() {
    let tmp = TempDir::new().unwrap();
    let case = CASES.iter().find(|c| c.name == "two_timeouts").unwrap();
    let ttl = tmp.path().join("g.ttl");
    std::fs::write(&ttl, graph_of(case)).unwrap();
    let out = cuga(&["graph", "validate", ttl.to_str().unwrap(), "--report"]);
    assert_eq!(out.status.code(), Some(1), "{}", runs::show(&out));
    let report = text(&out.stdout);
    let triples: Vec<oxrdf::Triple> = oxttl::TurtleParser::new()
        .for_slice(&report)
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}\n{report}"));
    let sh = |l: &str| format!("http://www.w3.org/ns/shacl#{l}");
    let has = |p: &str, o: &str| {
        triples
            .iter()
            .any(|t| t.predicate.as_str() == sh(p) && t.object.to_string().contains(o))
    };
    assert!(has("conforms", "false"), "{report}");
    assert!(has("focusNode", "http://example.org/p#Approve"), "{report}");
    assert!(has("resultPath", "agentflow#approvalTimeout"), "{report}");
    assert!(
        has("sourceShape", "urn:cuga-flo:shapes#ApprovalTimeoutShape"),
        "{report}"
    );
    assert!(
        has("sourceConstraintComponent", "MaxCountConstraintComponent"),
        "{report}"
    );
    assert!(has("resultSeverity", "Violation"), "{report}");
    assert!(has("resultMessage", "approvalTimeout"), "{report}");

    // A conforming graph: `sh:conforms true` and no result.
    let valid = tmp.path().join("valid.ttl");
    std::fs::write(&valid, graph_of(&CASES[0])).unwrap();
    let out = cuga(&["graph", "validate", valid.to_str().unwrap(), "--report"]);
    assert!(out.status.success(), "{}", runs::show(&out));
    let report = text(&out.stdout);
    assert!(report.contains("sh:conforms true"), "{report}");
    assert!(!report.contains("sh:result"), "{report}");
}

/// A graph file's diagnostics name the focus node, the shape and the constraint, at the
/// line where the node is written.
#[test]
fn a_graph_file_diagnostic_points_at_the_node() {
    let tmp = TempDir::new().unwrap();
    let case = CASES.iter().find(|c| c.name == "unreachable_task").unwrap();
    let ttl = tmp.path().join("g.ttl");
    let graph = graph_of(case);
    std::fs::write(&ttl, &graph).unwrap();
    let line = graph
        .lines()
        .position(|l| l.trim_start().starts_with("ex:Orphan"))
        .unwrap()
        + 1;
    let out = cuga(&["graph", "validate", ttl.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", runs::show(&out));
    let shown = text(&out.stdout);
    assert!(shown.contains(&format!("g.ttl:{line}:")), "{shown}");
    assert!(
        shown.contains("not reachable from a start event"),
        "{shown}"
    );
    assert!(
        shown.contains(
            "ex:Orphan violates cfsh:ReachableShape (sh:QualifiedMinCountConstraintComponent)"
        ),
        "{shown}"
    );
    assert!(shown.contains("does not conform"), "{shown}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// loan_approval under `<tmp>/apps`, its credit gateway without its default flow, with
/// `graph` appended to its flow config.
fn app_without_default(tmp: &Path, graph: &str) -> (PathBuf, usize) {
    let app = tmp.join("apps/loan_approval");
    copy_dir(&root().join("applications/loan_approval"), &app);
    copy_dir(&root().join("policies"), &tmp.join("policies"));
    let config = app.join("config/loan_approval_config.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push('\n');
    text.push_str(graph);
    std::fs::write(&config, text).unwrap();
    let bpmn = app.join("config/loan_approval.bpmn");
    let model = std::fs::read_to_string(&bpmn).unwrap();
    let model = model.replace(" default=\"Flow_1jgea85\"", "");
    let line = model
        .lines()
        .position(|l| l.contains("id=\"Gateway_09ad5fc\""))
        .unwrap()
        + 1;
    std::fs::write(&bpmn, model).unwrap();
    (app, line)
}

/// A graph-mode app is validated against the shapes by `validate` (the diagnostic at the
/// BPMN element, file:line) and before every run: a warning (an exclusive split without a
/// default) is shown and the app runs; a violation (a task nothing leads to) refuses it
/// (`start` exits 2, nothing journalled); the same app without a `graph:` block is not
/// checked against the shapes.
#[test]
fn a_graph_mode_app_is_validated_before_it_runs() {
    let tmp = TempDir::new().unwrap();
    let (app, line) = app_without_default(tmp.path(), "graph:\n  store: embedded\n");
    let app = app.to_str().unwrap();
    let out = cuga(&["validate", app]);
    assert_eq!(out.status.code(), Some(0), "{}", runs::show(&out));
    let shown = text(&out.stdout);
    assert!(
        shown.contains(&format!("loan_approval.bpmn:{line}:")),
        "{shown}"
    );
    assert!(
        shown.contains("SHACL: `Gateway_09ad5fc`: an exclusive split has no default flow"),
        "{shown}"
    );
    assert!(
        shown.contains("app:Gateway_09ad5fc violates cfsh:ExclusiveSplitDefaultShape (sh:SPARQLConstraintComponent)"),
        "{shown}"
    );
    let shacl_of = |app: &str| -> Vec<Value> {
        let out = cuga(&["validate", app, "--json"]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let diags = doc["targets"][0]["diagnostics"].as_array().unwrap().clone();
        diags
            .into_iter()
            .filter(|d| d["code"] == "graph::shacl")
            .collect()
    };
    let shacl = shacl_of(app);
    assert_eq!(shacl.len(), 1, "{shacl:#?}");
    assert_eq!(shacl[0]["line"], line, "{shacl:#?}");
    assert_eq!(shacl[0]["severity"], "warning", "{shacl:#?}");

    // A task nothing leads to breaks a shape: an error, and the run is refused before
    // anything is journalled.
    let bpmn = Path::new(app).join("config/loan_approval.bpmn");
    let model = std::fs::read_to_string(&bpmn).unwrap().replace(
        "</bpmn:process>",
        "  <bpmn:task id=\"Orphan\" name=\"Orphan\" />\n  </bpmn:process>",
    );
    std::fs::write(&bpmn, &model).unwrap();
    let orphan = model
        .lines()
        .position(|l| l.contains("id=\"Orphan\""))
        .unwrap()
        + 1;
    let shacl = shacl_of(app);
    let errors: Vec<&Value> = shacl.iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{shacl:#?}");
    assert_eq!(errors[0]["line"], orphan, "{shacl:#?}");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("not reachable"),
        "{shacl:#?}"
    );
    let runs_dir = tmp.path().join("runs");
    let out = runs::start_scenario(
        Path::new(app),
        "approve",
        &runs_dir,
        &["--engine", "native"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", runs::show(&out));
    assert!(text(&out.stderr).contains("SHACL"), "{}", runs::show(&out));
    assert!(
        text(&out.stderr).contains("cannot run"),
        "{}",
        runs::show(&out)
    );
    assert!(!runs_dir.exists() || std::fs::read_dir(&runs_dir).unwrap().next().is_none());

    // Without graph mode the shapes do not apply.
    let plain = TempDir::new().unwrap();
    let (app, _) = app_without_default(plain.path(), "");
    let out = cuga(&["validate", app.to_str().unwrap(), "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let diags = doc["targets"][0]["diagnostics"].as_array().unwrap();
    assert!(diags.iter().all(|d| d["code"] != "graph::shacl"), "{doc:#}");
}
