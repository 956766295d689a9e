//! Scenarios: `applications/<app>/scenarios/<name>.yaml`, a run described in advance —
//! its inputs, the answers its control points get, and what must come out (status, path,
//! final variables). `cuga-flo start <app> --scenario <name>` runs one and checks it.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::yaml;
use crate::vocab::RunStatus;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(skip)]
    pub name: String,
    #[serde(skip)]
    pub path: PathBuf,
    #[serde(default)]
    pub description: Option<String>,
    /// Initial variables (over the config's defaults).
    #[serde(default)]
    pub inputs: Map<String, Value>,
    /// Answers by control-point id (see `reason::scripted`).
    #[serde(default)]
    pub answers: Map<String, Value>,
    #[serde(default)]
    pub expect: Option<Expectation>,
}

#[derive(Debug, Clone, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub status: Option<RunStatus>,
    /// The exact node path.
    pub path: Option<Vec<String>>,
    /// Variables that must have these values at the end (others may exist).
    #[serde(default)]
    pub variables: Map<String, Value>,
}

/// The scenarios folder of an app.
pub fn scenarios_dir(app_dir: &Path) -> PathBuf {
    app_dir.join("scenarios")
}

/// Names of an app's scenarios, sorted.
pub fn list(app_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(scenarios_dir(app_dir))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".yaml")
                        .or_else(|| name.strip_suffix(".yml"))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Load scenario `name` of the app in `app_dir`.
pub fn load(app_dir: &Path, name: &str) -> Result<Scenario, String> {
    let dir = scenarios_dir(app_dir);
    let path = [
        dir.join(format!("{name}.yaml")),
        dir.join(format!("{name}.yml")),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| {
        let known = list(app_dir);
        if known.is_empty() {
            format!("no scenario `{name}`: {} has no scenarios", dir.display())
        } else {
            format!(
                "no scenario `{name}` in {} (there are: {})",
                dir.display(),
                known.join(", ")
            )
        }
    })?;
    load_file(&path, name)
}

/// The keys a scenario file may have.
pub(crate) const SCENARIO_KEYS: &[&str] = &["description", "inputs", "answers", "expect"];

/// The JSON Schema (draft 2020-12) of a scenario file (`cuga-flo schema scenario`);
/// `answers` is the schema of the `answers:` mapping (control-point id → answer), which
/// the reasoner that reads it describes. Its properties are [`SCENARIO_KEYS`]; `expect`
/// is derived from [`Expectation`] itself.
pub fn schema(answers: Value) -> Value {
    let expect = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<Expectation>()
        .to_value();
    let mut expect = expect;
    if let Value::Object(m) = &mut expect {
        m.remove("$schema");
        m.remove("title");
        m.insert(
            "description".into(),
            "What must come out of the run: its status, its exact path, final variables.".into(),
        );
    }
    let types = |key: &str| -> Value {
        match key {
            "description" => {
                serde_json::json!({"type": "string", "description": "What the scenario shows."})
            }
            "inputs" => {
                serde_json::json!({"type": ["object", "null"], "description": "Initial variables, over the config's defaults."})
            }
            "answers" => answers.clone(),
            "expect" => expect.clone(),
            _ => serde_json::json!({}),
        }
    };
    let properties: Map<String, Value> = SCENARIO_KEYS
        .iter()
        .map(|k| (k.to_string(), types(k)))
        .collect();
    serde_json::json!({
        "$schema": crate::app::decode::schema::DRAFT,
        "$id": "urn:cuga-flo:schema:scenario",
        "title": "cuga-flo scenario",
        "description": "A run described in advance: its inputs, the answers its control points get, and what must come out.",
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    })
}

/// Load a scenario file.
pub fn load_file(path: &Path, name: &str) -> Result<Scenario, String> {
    let text = crate::source::read_text(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let tree = yaml::parse(&text).map_err(|e| {
        let lc = crate::source::SourceFile::new(path, text.as_str()).line_col(e.span.offset);
        format!(
            "{}:{}:{}: invalid YAML: {}",
            path.display(),
            lc.line,
            lc.column,
            e.message
        )
    })?;
    let at = |offset: usize| {
        let lc = crate::source::SourceFile::new(path, text.as_str()).line_col(offset);
        format!("{}:{}:{}", path.display(), lc.line, lc.column)
    };
    // Keys first, with their lines (the typed read below knows no positions).
    if let yaml::Value::Map(entries) = &tree.value {
        for (key, _) in entries {
            let name = key.as_str().unwrap_or_default();
            if !SCENARIO_KEYS.contains(&name) {
                return Err(format!(
                    "{}: unknown key `{name}` in a scenario; the keys are {}",
                    at(key.span.offset),
                    SCENARIO_KEYS.join(", ")
                ));
            }
        }
    }
    let mut scenario: Scenario = serde_json::from_value(tree.to_json())
        .map_err(|e| format!("{}: {e}", at(tree.span.offset)))?;
    scenario.name = name.to_string();
    scenario.path = path.to_path_buf();
    Ok(scenario)
}

impl Expectation {
    /// What differs between this expectation and a finished run (empty: all met).
    pub fn mismatches(
        &self,
        status: Option<RunStatus>,
        path: &[String],
        variables: &Map<String, Value>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(want) = self.status
            && status != Some(want)
        {
            out.push(format!(
                "status: expected {}, got {}",
                name(Some(want)),
                name(status)
            ));
        }
        if let Some(want) = &self.path
            && want.as_slice() != path
        {
            out.push(format!(
                "path: expected {}, got {}",
                want.join(" → "),
                path.join(" → ")
            ));
        }
        for (key, want) in &self.variables {
            match variables.get(key) {
                Some(got) if same_value(got, want) => {}
                Some(got) => out.push(format!("variable `{key}`: expected {want}, got {got}")),
                None => out.push(format!(
                    "variable `{key}`: expected {want}, but it is not set"
                )),
            }
        }
        out
    }
}

/// Equal, with numbers compared by value (`1` equals `1.0`).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn name(status: Option<RunStatus>) -> String {
    match status {
        Some(s) => serde_json::to_value(s)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        None => "no end".to_string(),
    }
}
