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
    /// Remote agents of the app served, for this scenario, by sibling apps (see
    /// [`ServedAgent`]), by the agent's name in the config's `remote_agents`.
    #[serde(default)]
    pub remote_agents: std::collections::BTreeMap<String, ServedAgent>,
}

/// `remote_agents: {<name>: {serve: <app>, answers: {...}}}`: the scenario's run reaches
/// its remote agent `<name>` at a sibling app of the same apps folder, served over A2A on
/// 127.0.0.1 for the run's length; the served app's control points take `answers` (its
/// own scripted answers, as a scenario's), then its policy rules decide, then the caller
/// (an `input-required` question back to the delegating run).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ServedAgent {
    /// The sibling app that plays the agent (a folder name of the apps folder).
    pub serve: String,
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// `file:line:column` of the agent's entry (for errors found when the run starts).
    #[serde(skip)]
    pub at: String,
    /// `file:line:column` of its `serve:` value.
    #[serde(skip)]
    pub serve_at: String,
}

#[derive(Debug, Clone, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub status: Option<RunStatus>,
    /// The exact node path: elements by id or by name.
    pub path: Option<Vec<String>>,
    /// Elements the run must enter (by id or name), in any order, among others.
    #[serde(default)]
    pub visits: Vec<String>,
    /// Elements the run must never enter (by id or name).
    #[serde(default)]
    pub never_visits: Vec<String>,
    /// Variables that must have these values at the end (others may exist).
    #[serde(default)]
    pub variables: Map<String, Value>,
}

/// An element a scenario names, by id or by name, resolved in `process`: its id (the name
/// when no element has it as id or as its one name).
pub fn element_id<'a>(process: Option<&'a crate::bpmn::Process>, wanted: &'a str) -> &'a str {
    let Some(process) = process else {
        return wanted;
    };
    if process.node(wanted).is_some() {
        return wanted;
    }
    let mut named = process
        .nodes
        .iter()
        .filter(|n| n.name.as_deref().map(str::trim) == Some(wanted.trim()));
    match (named.next(), named.next()) {
        (Some(one), None) => one.id.as_str(),
        _ => wanted,
    }
}

/// `` `Name` (id) `` for an element of `process`, or `` `id` ``.
pub fn element_label(process: Option<&crate::bpmn::Process>, id: &str) -> String {
    match process
        .and_then(|p| p.node(id))
        .and_then(|n| n.name.as_deref())
    {
        Some(name) if !name.trim().is_empty() && name.trim() != id => {
            format!("`{}` ({id})", crate::diag::terminal_safe(name.trim()))
        }
        _ => format!("`{id}`"),
    }
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

/// Why a scenario cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The app has no scenario of that name.
    #[error("{0}")]
    Missing(String),
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not a scenario: where (`file:line:col`) and why.
    #[error("{0}")]
    Invalid(String),
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// `test --update`: scenario `name`'s expectations made true of a run that ended with
/// `status` at `path` with `variables` ([`Expectation::updated`]), written back into its
/// file: only its `expect:` block changes, the file replaced whole (written beside it,
/// then renamed over it). The file written.
pub fn update(
    app_dir: &Path,
    name: &str,
    status: RunStatus,
    path: &[String],
    variables: &Map<String, Value>,
) -> Result<PathBuf, ScenarioError> {
    let scenario = load(app_dir, name)?;
    let file = scenario.path.clone();
    let Some(expect) = &scenario.expect else {
        return Err(ScenarioError::Invalid(format!(
            "{}: the scenario expects nothing to update",
            file.display()
        )));
    };
    let text = crate::source::read_text(&file).map_err(|source| ScenarioError::Read {
        path: file.clone(),
        source,
    })?;
    let updated =
        with_expectation(&text, &expect.updated(status, path, variables)).ok_or_else(|| {
            ScenarioError::Invalid(format!("{}: no top-level `expect:` block", file.display()))
        })?;
    let write = |source| ScenarioError::Write {
        path: file.clone(),
        source,
    };
    let tmp = file.with_extension("yaml.updating");
    std::fs::write(&tmp, updated).map_err(write)?;
    std::fs::rename(&tmp, &file).map_err(write)?;
    Ok(file)
}

/// Load scenario `name` of the app in `app_dir`.
pub fn load(app_dir: &Path, name: &str) -> Result<Scenario, ScenarioError> {
    let dir = scenarios_dir(app_dir);
    let path = [
        dir.join(format!("{name}.yaml")),
        dir.join(format!("{name}.yml")),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| {
        let known = list(app_dir);
        ScenarioError::Missing(if known.is_empty() {
            format!("no scenario `{name}`: {} has no scenarios", dir.display())
        } else {
            format!(
                "no scenario `{name}` in {} (there are: {})",
                dir.display(),
                known.join(", ")
            )
        })
    })?;
    load_file(&path, name)
}

/// The keys a scenario file may have.
pub(crate) const SCENARIO_KEYS: &[&str] = &[
    "description",
    "inputs",
    "answers",
    "expect",
    "remote_agents",
];

/// The keys of one entry of a scenario's `remote_agents`.
const SERVED_KEYS: &[&str] = &["serve", "answers"];

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
            "What must come out of the run: its status, its exact path or the elements it visits and never visits (by id or name), final variables.".into(),
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
            "remote_agents" => serde_json::json!({
                "type": "object",
                "description": "Remote agents of the app (names of its `remote_agents`) served for this scenario by sibling apps over A2A on 127.0.0.1.",
                "additionalProperties": {
                    "type": "object",
                    "required": ["serve"],
                    "additionalProperties": false,
                    "properties": {
                        "serve": {"type": "string", "description": "The sibling app (of the same apps folder) that plays the agent."},
                        "answers": {"type": ["object", "null"], "description": "The served app's own answers, by control-point id (as a scenario's `answers`)."},
                    },
                },
            }),
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
pub fn load_file(path: &Path, name: &str) -> Result<Scenario, ScenarioError> {
    let text = crate::source::read_text(path).map_err(|source| ScenarioError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let tree = yaml::parse(&text).map_err(|e| {
        let lc = crate::source::SourceFile::new(path, text.as_str()).line_col(e.span.offset);
        ScenarioError::Invalid(format!(
            "{}:{}:{}: invalid YAML: {}",
            path.display(),
            lc.line,
            lc.column,
            e.message
        ))
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
                return Err(ScenarioError::Invalid(format!(
                    "{}: unknown key `{name}` in a scenario; the keys are {}",
                    at(key.span.offset),
                    SCENARIO_KEYS.join(", ")
                )));
            }
        }
    }
    let mut served_at: Vec<(String, String, String)> = Vec::new();
    if let Some(agents) = tree.get("remote_agents") {
        let yaml::Value::Map(entries) = &agents.value else {
            return Err(ScenarioError::Invalid(format!(
                "{}: `remote_agents` is a mapping: <remote agent>: {{serve: <app>, answers: {{...}}}}",
                at(agents.span.offset)
            )));
        };
        for (key, entry) in entries {
            let agent = key.as_str().unwrap_or_default().to_string();
            let yaml::Value::Map(fields) = &entry.value else {
                return Err(ScenarioError::Invalid(format!(
                    "{}: remote agent `{agent}` is a mapping: {{serve: <app>, answers: {{...}}}}",
                    at(entry.span.offset)
                )));
            };
            for (field, _) in fields {
                let f = field.as_str().unwrap_or_default();
                if !SERVED_KEYS.contains(&f) {
                    return Err(ScenarioError::Invalid(format!(
                        "{}: unknown key `{f}` in remote agent `{agent}`; the keys are {}",
                        at(field.span.offset),
                        SERVED_KEYS.join(", ")
                    )));
                }
            }
            let serve = entry.get("serve").ok_or_else(|| {
                ScenarioError::Invalid(format!(
                    "{}: remote agent `{agent}` needs `serve: <app>` (the sibling app that plays it)",
                    at(key.span.offset)
                ))
            })?;
            served_at.push((agent, at(key.span.offset), at(serve.span.offset)));
        }
    }
    let mut scenario: Scenario = serde_json::from_value(tree.to_json())
        .map_err(|e| ScenarioError::Invalid(format!("{}: {e}", at(tree.span.offset))))?;
    for (agent, key_at, serve_at) in served_at {
        if let Some(s) = scenario.remote_agents.get_mut(&agent) {
            s.at = key_at;
            s.serve_at = serve_at;
        }
    }
    scenario.name = name.to_string();
    scenario.path = path.to_path_buf();
    Ok(scenario)
}

impl Expectation {
    /// What differs between this expectation and a finished run (empty: all met).
    pub fn mismatches(
        &self,
        process: Option<&crate::bpmn::Process>,
        status: Option<RunStatus>,
        path: &[String],
        variables: &Map<String, Value>,
    ) -> Vec<String> {
        let label = |id: &str| element_label(process, id);
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
        if let Some(want) = &self.path {
            let want: Vec<&str> = want.iter().map(|w| element_id(process, w)).collect();
            // The first difference, by name: where the run left the expected path.
            let first = (0..want.len().max(path.len()))
                .find(|&i| want.get(i).copied() != path.get(i).map(String::as_str));
            if let Some(i) = first {
                let step = i + 1;
                out.push(match (want.get(i), path.get(i)) {
                    (Some(w), Some(got)) => format!(
                        "path: step {step} expected {}, got {}",
                        label(w),
                        label(got)
                    ),
                    (Some(w), None) => format!(
                        "path: the run ended after step {}; expected {} next",
                        path.len(),
                        label(w)
                    ),
                    (None, Some(got)) => format!(
                        "path: the run went on past the expected {} steps: step {step} entered {}",
                        want.len(),
                        label(got)
                    ),
                    (None, None) => unreachable!("a difference is at a step one side has"),
                });
            }
        }
        for wanted in &self.visits {
            let id = element_id(process, wanted);
            if !path.iter().any(|p| p == id) {
                out.push(format!("visits: {} was never entered", label(id)));
            }
        }
        for wanted in &self.never_visits {
            let id = element_id(process, wanted);
            if let Some(i) = path.iter().position(|p| p == id) {
                out.push(format!(
                    "never_visits: {} was entered (step {})",
                    label(id),
                    i + 1
                ));
            }
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

impl Expectation {
    /// This expectation made true of a run that ended with `status` at `path` with
    /// `variables`: what it states (a status, a path, the values of the variables it
    /// names) is replaced by what the run did; what it intends (`visits`, `never_visits`)
    /// is kept. A variable the run did not set is dropped.
    pub fn updated(
        &self,
        status: RunStatus,
        path: &[String],
        variables: &Map<String, Value>,
    ) -> Expectation {
        Expectation {
            status: self.status.map(|_| status),
            path: self.path.as_ref().map(|_| path.to_vec()),
            visits: self.visits.clone(),
            never_visits: self.never_visits.clone(),
            variables: (self.variables.keys())
                .filter_map(|k| variables.get(k).map(|v| (k.clone(), v.clone())))
                .collect(),
        }
    }

    /// As an `expect:` block of a scenario file.
    fn to_yaml(&self) -> String {
        let scalar = |text: &str| {
            let plain = !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                && !matches!(
                    text,
                    "true" | "false" | "null" | "yes" | "no" | "on" | "off"
                )
                && text.parse::<f64>().is_err();
            if plain {
                text.to_string()
            } else {
                Value::String(text.to_string()).to_string()
            }
        };
        let list = |items: &[String]| {
            format!(
                "[{}]",
                items
                    .iter()
                    .map(|i| scalar(i))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let mut out = String::from("expect:\n");
        if let Some(status) = self.status {
            out.push_str(&format!("  status: {}\n", name(Some(status))));
        }
        if let Some(path) = &self.path {
            out.push_str("  path:\n");
            for id in path {
                out.push_str(&format!("    - {}\n", scalar(id)));
            }
        }
        if !self.visits.is_empty() {
            out.push_str(&format!("  visits: {}\n", list(&self.visits)));
        }
        if !self.never_visits.is_empty() {
            out.push_str(&format!("  never_visits: {}\n", list(&self.never_visits)));
        }
        if !self.variables.is_empty() {
            out.push_str("  variables:\n");
            for (k, v) in &self.variables {
                out.push_str(&format!("    {}: {v}\n", scalar(k)));
            }
        }
        out
    }
}

/// The text of a scenario file with its `expect:` block replaced by `expect` (the rest of
/// the file, comments included, as it was); `None` when the file has no `expect:` at its
/// top level.
pub fn with_expectation(text: &str, expect: &Expectation) -> Option<String> {
    let tree = yaml::parse(text).ok()?;
    let yaml::Value::Map(entries) = &tree.value else {
        return None;
    };
    let at = entries
        .iter()
        .position(|(k, _)| k.as_str() == Some("expect"))?;
    let line_start = |offset: usize| text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let start = line_start(entries[at].0.span.offset);
    // The block ends where the next top-level key's line starts (or with the file).
    let end = entries
        .get(at + 1)
        .map_or(text.len(), |(next, _)| line_start(next.span.offset));
    Some(format!(
        "{}{}{}",
        &text[..start],
        expect.to_yaml(),
        &text[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Scenario, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yaml");
        std::fs::write(&path, text).unwrap();
        load_file(&path, "s")
            .map_err(|e| crate::diag::chain(&e).replace(&path.display().to_string(), "s.yaml"))
    }

    /// Elements by id or name; the first difference of a path, by name; visits and
    /// never_visits.
    #[test]
    fn expectations_name_elements_and_say_the_first_difference() {
        let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
          <process id="p"><startEvent id="s"/><task id="a" name="Review claim"/>
          <task id="b" name="Pay"/><endEvent id="e"/></process></definitions>"#;
        let doc = crate::bpmn::parse(Path::new("t.bpmn"), xml.as_bytes()).unwrap();
        let process = doc.main_process();
        let path: Vec<String> = ["s", "a", "e"].map(String::from).to_vec();
        let expect = |yaml: &str| -> Vec<String> {
            let e: Expectation =
                serde_json::from_value(crate::app::yaml::parse(yaml).unwrap().to_json()).unwrap();
            e.mismatches(process, Some(RunStatus::Completed), &path, &Map::new())
        };
        assert!(
            expect("path: [s, Review claim, e]\nvisits: [Review claim]\nnever_visits: [Pay]")
                .is_empty()
        );
        assert_eq!(
            expect("path: [s, Pay, e]"),
            ["path: step 2 expected `Pay` (b), got `Review claim` (a)"]
        );
        assert_eq!(
            expect("path: [s, a, b, e]"),
            ["path: step 3 expected `Pay` (b), got `e`"]
        );
        assert_eq!(
            expect("path: [s, a]"),
            ["path: the run went on past the expected 2 steps: step 3 entered `e`"]
        );
        assert_eq!(
            expect("path: [s, a, e, b]"),
            ["path: the run ended after step 3; expected `Pay` (b) next"]
        );
        assert_eq!(
            expect("visits: [Pay, a]\nnever_visits: [Review claim]"),
            [
                "visits: `Pay` (b) was never entered",
                "never_visits: `Review claim` (a) was entered (step 2)"
            ]
        );
    }

    /// `--update`: what an expectation states is replaced by what the run did, its
    /// intent kept, and only the `expect:` block of the file is rewritten.
    #[test]
    fn an_expectation_updated_from_a_run_rewrites_only_its_block() {
        let text = "# kept\ninputs: {a: 1}\nexpect:\n  status: completed\n  path: [s, x, e]\n  visits: [e, \"a b\"]\n  variables:\n    out: 1\n    gone: 2\nanswers: {}  # after\n";
        let tree = crate::app::yaml::parse(text).unwrap();
        let e: Expectation = serde_json::from_value(tree.get("expect").unwrap().to_json()).unwrap();
        let path: Vec<String> = ["s", "a b", "e"].map(String::from).to_vec();
        let vars: Map<String, Value> =
            serde_json::from_value(serde_json::json!({"out": "two\nlines", "other": 3})).unwrap();
        let updated = e.updated(RunStatus::Terminated, &path, &vars);
        let rewritten = with_expectation(text, &updated).unwrap();
        assert_eq!(
            rewritten,
            "# kept\ninputs: {a: 1}\nexpect:\n  status: terminated\n  path:\n    - s\n    - \"a b\"\n    - e\n  visits: [e, \"a b\"]\n  variables:\n    out: \"two\\nlines\"\nanswers: {}  # after\n"
        );
        // It reads back as what was written.
        let tree = crate::app::yaml::parse(&rewritten).unwrap();
        let back: Expectation =
            serde_json::from_value(tree.get("expect").unwrap().to_json()).unwrap();
        assert_eq!(back.path, updated.path);
        assert_eq!(back.variables, updated.variables);
        assert!(
            back.mismatches(None, Some(RunStatus::Terminated), &path, &vars)
                .is_empty()
        );
    }

    #[test]
    fn served_remote_agents_keep_where_they_are_written() {
        let s = load_text(
            "inputs: {a: 1}\nremote_agents:\n  desk:\n    serve: other_app\n    answers:\n      T: {outputs: {x: 1}}\n",
        )
        .unwrap();
        let desk = &s.remote_agents["desk"];
        assert_eq!(desk.serve, "other_app");
        assert!(desk.at.ends_with("/s.yaml:3:3"), "{}", desk.at);
        assert!(desk.serve_at.ends_with("/s.yaml:4:12"), "{}", desk.serve_at);
        assert_eq!(desk.answers["T"]["outputs"]["x"], 1);
        assert!(load_text("inputs: {}\n").unwrap().remote_agents.is_empty());
    }

    #[test]
    fn served_remote_agents_are_checked_at_their_line() {
        let e = load_text("remote_agents:\n  desk: {answers: {}}\n").unwrap_err();
        assert!(
            e.starts_with("s.yaml:2:3: remote agent `desk` needs `serve: <app>`"),
            "{e}"
        );
        let e = load_text("remote_agents:\n  desk: {serve: a, url: x}\n").unwrap_err();
        assert!(e.starts_with("s.yaml:2:20: unknown key `url`"), "{e}");
        let e = load_text("remote_agents: [desk]\n").unwrap_err();
        assert!(
            e.starts_with("s.yaml:1:16: `remote_agents` is a mapping"),
            "{e}"
        );
    }
}
