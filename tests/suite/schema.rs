//! `cuga-flo schema config|scenario|answers`: every shipped app's flow config and
//! scenarios, every template of `init`, and a recorded cassette satisfy the schemas, and
//! the schemas refuse what the decoders refuse (unknown keys, wrong types).
//!
//! The schemas are checked with a small validator below (the draft 2020-12 keywords the
//! schemas use), not the `jsonschema` crate: that one brings a regex engine, an HTTP
//! client and a URI resolver to a test that needs none of them. The validator refuses a
//! keyword it does not know, so a schema that grows one fails here until it is supported.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cuga_flo::cli::schema::{SchemaKind, schema};
use serde_json::{Value, json};

/// The problems of `value` under `schema`, each with its JSON path.
fn check(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(s) = schema else {
        if schema == &Value::Bool(false) {
            out.push(format!("{path}: not allowed"));
        }
        return;
    };
    for (key, rule) in s {
        match key.as_str() {
            "$schema" | "$id" | "title" | "description" | "examples" | "default" | "format" => {}
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => panic!("bad type {rule}"),
                };
                let ok = types.iter().any(|t| match *t {
                    "null" => value.is_null(),
                    "boolean" => value.is_boolean(),
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "string" => value.is_string(),
                    "number" => value.is_number(),
                    "integer" => {
                        value.is_i64()
                            || value.is_u64()
                            || value.as_f64().is_some_and(|f| f.fract() == 0.0)
                    }
                    other => panic!("unknown type {other}"),
                });
                if !ok {
                    out.push(format!("{path}: {value} is not {}", types.join(" or ")));
                }
            }
            "enum" => {
                if !rule.as_array().unwrap().contains(value) {
                    out.push(format!("{path}: {value} is not one of {rule}"));
                }
            }
            "const" => {
                if rule != value {
                    out.push(format!("{path}: {value} is not {rule}"));
                }
            }
            "properties" => {
                if let Value::Object(v) = value {
                    for (k, sub) in rule.as_object().unwrap() {
                        if let Some(x) = v.get(k) {
                            check(sub, x, &format!("{path}.{k}"), out);
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Value::Object(v) = value {
                    let known = s.get("properties").and_then(Value::as_object);
                    for (k, x) in v {
                        if known.is_some_and(|p| p.contains_key(k)) {
                            continue;
                        }
                        match rule {
                            Value::Bool(false) => out.push(format!("{path}: unknown key `{k}`")),
                            Value::Bool(true) => {}
                            sub => check(sub, x, &format!("{path}.{k}"), out),
                        }
                    }
                }
            }
            "propertyNames" => {
                if let Value::Object(v) = value {
                    for k in v.keys() {
                        check(rule, &json!(k), &format!("{path}.{k}"), out);
                    }
                }
            }
            "required" => {
                if let Value::Object(v) = value {
                    for k in rule.as_array().unwrap() {
                        if !v.contains_key(k.as_str().unwrap()) {
                            out.push(format!("{path}: `{}` is required", k.as_str().unwrap()));
                        }
                    }
                }
            }
            "minProperties" | "maxProperties" => {
                if let Value::Object(v) = value {
                    let n = rule.as_u64().unwrap() as usize;
                    if (key == "minProperties" && v.len() < n)
                        || (key == "maxProperties" && v.len() > n)
                    {
                        out.push(format!("{path}: {key} {n}"));
                    }
                }
            }
            "items" => {
                if let Value::Array(items) = value {
                    for (i, x) in items.iter().enumerate() {
                        check(rule, x, &format!("{path}[{i}]"), out);
                    }
                }
            }
            "minItems" => {
                if value
                    .as_array()
                    .is_some_and(|a| a.len() < rule.as_u64().unwrap() as usize)
                {
                    out.push(format!("{path}: fewer than {rule} items"));
                }
            }
            "minimum" | "maximum" | "exclusiveMinimum" => {
                if let (Some(x), Some(limit)) = (value.as_f64(), rule.as_f64()) {
                    let ok = match key.as_str() {
                        "minimum" => x >= limit,
                        "maximum" => x <= limit,
                        _ => x > limit,
                    };
                    if !ok {
                        out.push(format!("{path}: {x} breaks {key} {limit}"));
                    }
                }
            }
            "anyOf" | "oneOf" => {
                let passing = rule
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|sub| {
                        let mut o = Vec::new();
                        check(sub, value, path, &mut o);
                        o.is_empty()
                    })
                    .count();
                let ok = if key == "anyOf" {
                    passing > 0
                } else {
                    passing == 1
                };
                if !ok {
                    out.push(format!("{path}: {value} matches {passing} of {key}"));
                }
            }
            other => panic!("the test's validator does not know `{other}` (at {path})"),
        }
    }
}

fn problems(kind: SchemaKind, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(&schema(kind), value, "$", &mut out);
    out
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    cuga_flo::app::yaml::parse(&text)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
        .to_json()
}

/// Every app folder of the repository's own apps and test apps.
fn app_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for parent in ["applications", "tests/fixtures/apps"] {
        for e in std::fs::read_dir(root.join(parent)).unwrap().flatten() {
            if e.path().join("config").is_dir() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The files of `dir` whose names end with one of `suffixes`.
fn files_in(dir: &Path, suffixes: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            suffixes.iter().any(|s| name.ends_with(s))
        })
        .collect();
    out.sort();
    out
}

/// Test apps that hold mistakes on purpose, and the config keys the decoder refuses.
fn decoder_refuses(path: &Path) -> bool {
    let source = cuga_flo::source::SourceFile::new(path, std::fs::read_to_string(path).unwrap());
    let (_, diags) = cuga_flo::app::decode::decode(&source);
    diags.iter().any(|d| {
        matches!(
            d.code,
            "config::unknown_key" | "config::type" | "config::value"
        )
    })
}

#[test]
fn every_shipped_config_satisfies_the_config_schema() {
    let mut checked = 0;
    for app in app_dirs() {
        for config in files_in(&app.join("config"), &["_config.yaml", "_config.yml"]) {
            let found = problems(SchemaKind::Config, &yaml(&config));
            if decoder_refuses(&config) {
                // a test app with mistakes on purpose: the schema refuses it too
                assert!(
                    !found.is_empty(),
                    "{}: the schema accepts it",
                    config.display()
                );
            } else {
                assert!(found.is_empty(), "{}: {found:#?}", config.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 12, "{checked} configs");
}

#[test]
fn every_shipped_scenario_satisfies_the_scenario_schema_and_its_answers_the_answers_schema() {
    let mut checked = 0;
    for app in app_dirs() {
        for scenario in files_in(&app.join("scenarios"), &[".yaml", ".yml"]) {
            let doc = yaml(&scenario);
            let found = problems(SchemaKind::Scenario, &doc);
            assert!(found.is_empty(), "{}: {found:#?}", scenario.display());
            // an answers file is the same `answers:` mapping
            let answers = json!({"answers": doc.get("answers").cloned().unwrap_or(json!({}))});
            let found = problems(SchemaKind::Answers, &answers);
            assert!(found.is_empty(), "{}: {found:#?}", scenario.display());
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} scenarios");
}

#[test]
fn every_template_of_init_satisfies_the_schemas() {
    use cuga_flo::app::init::{Template, render};
    for template in Template::ALL {
        for (path, text) in render(template, "demo") {
            let kind = match path.extension().and_then(|e| e.to_str()) {
                Some("yaml") if path.starts_with("config") => SchemaKind::Config,
                Some("yaml") => SchemaKind::Scenario,
                _ => continue,
            };
            let doc = cuga_flo::app::yaml::parse(&text).unwrap().to_json();
            let found = problems(kind, &doc);
            assert!(
                found.is_empty(),
                "{template:?} {}: {found:#?}",
                path.display()
            );
        }
    }
}

#[test]
fn a_recorded_cassette_satisfies_the_answers_schema() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("cassette.yaml");
    Command::cargo_bin("cuga-flo")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .args([
            "start",
            "incident_response",
            "--scenario",
            "ransomware",
            "--run-dir",
        ])
        .arg(dir.path().join("runs"))
        .arg("--record")
        .arg(&cassette)
        .assert()
        .success();
    let doc = yaml(&cassette);
    assert!(
        doc["answers"].as_object().is_some_and(|a| !a.is_empty()),
        "{doc}"
    );
    let found = problems(SchemaKind::Answers, &doc);
    assert!(found.is_empty(), "{found:#?}\n{doc:#}");
}

#[test]
fn the_schemas_refuse_what_the_decoders_refuse() {
    let config = |extra: Value| {
        let mut doc = json!({"flow": {"id": "x", "bpmn_file": "x.bpmn"}});
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        problems(SchemaKind::Config, &doc)
    };
    assert!(config(json!({})).is_empty());
    assert!(problems(SchemaKind::Config, &json!({"tasks": []}))[0].contains("`flow` is required"));
    assert!(config(json!({"flwo": 1}))[0].contains("unknown key `flwo`"));
    assert!(
        config(json!({"tasks": [{"id": "A", "mode": "agent"}]}))[0].contains("$.tasks[0].mode")
    );
    assert!(!config(json!({"tasks": [{"id": "A", "agent": {"nme": "a"}}]})).is_empty());
    assert!(!config(json!({"gateways": {"G": {"on_failure": "continue"}}})).is_empty());
    assert!(!config(json!({"hooks": [{"location": "f", "on_failure": "default"}]})).is_empty());
    assert!(!config(json!({"action_permissions": {"permitted_actions": ["jump"]}})).is_empty());
    assert!(!config(json!({"llm": {"max_tokens": 0}})).is_empty());
    assert!(
        !config(json!({"llm": {"prompt": "x.j2"}})).is_empty(),
        "an element key at the app"
    );
    assert!(config(json!({"hooks": [{"location": "f", "allowed_targets": "any", "action": {"skip_to": "A"}}]})).is_empty());
    assert!(!config(json!({"hooks": [{"location": "f", "allowed_targets": "all"}]})).is_empty());
    assert!(config(json!({"flow": {"id": "x", "bpmn_file": "x.bpmn", "version": 1.0}})).is_empty());

    let scenario = |doc: Value| problems(SchemaKind::Scenario, &doc);
    assert!(
        scenario(json!({"inputs": {}, "expect": {"status": "completed", "path": ["S"]}}))
            .is_empty()
    );
    assert!(!scenario(json!({"expected": {}})).is_empty());
    assert!(!scenario(json!({"expect": {"status": "done"}})).is_empty());
    assert!(!scenario(json!({"answers": {"T": {"output": {}}}})).is_empty());
    assert!(!scenario(json!({"answers": {"T": []}})).is_empty());
    assert!(scenario(json!({"answers": {"T": [{"outputs": {}}, {"error": "E"}], "G": {"flow": "F"}, "H": {"action": "add_node", "add": {"id": "X", "name": "x"}}}})).is_empty());
    assert!(!problems(SchemaKind::Answers, &json!({"other": 1})).is_empty());
    assert!(
        !problems(
            SchemaKind::Answers,
            &json!({"answers": {"F": {"action": "jump"}}})
        )
        .is_empty()
    );
    assert!(
        problems(
            SchemaKind::Answers,
            &json!({"answers": {"F": {"action": "skip_to", "target": "A"}}})
        )
        .is_empty()
    );
}

#[test]
fn the_command_prints_each_schema_as_json() {
    for (arg, kind) in [
        ("config", SchemaKind::Config),
        ("scenario", SchemaKind::Scenario),
        ("answers", SchemaKind::Answers),
    ] {
        let out = Command::cargo_bin("cuga-flo")
            .unwrap()
            .args(["schema", arg])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let printed: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(printed, schema(kind));
        assert_eq!(
            printed["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
}
