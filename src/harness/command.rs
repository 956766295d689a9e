//! Command agents (`agent: {type: command, recipe: FILE, command: [...]}`): a task done by
//! an external CLI, one process per visit, as AgentFLOW runs Goose recipes.
//!
//! - The recipe is read in Goose's format as is: `version`, `title`, `description`,
//!   `instructions` / `prompt`, `parameters` (`key`, `input_type`, `requirement`,
//!   `default`) and `response.json_schema`.
//! - The CLI gets the task's declared parameters only: each `input_mapping` entry
//!   (parameter ← process variable) that the recipe declares, as one `key=value` argument.
//!   No shell runs; the command line is a vector, and a value is never spliced into any
//!   other argument. A parameter the recipe does not declare, or a required one with no
//!   value and no default, fails the task before anything runs.
//! - The default command line is `goose run --recipe {recipe} {params}`; `{recipe}` is the
//!   recipe's path, `{config_dir}` the flow config's folder (what the config's paths are
//!   relative to: an app's own scripts) and the argument `{params}` becomes `--params k=v`
//!   per parameter.
//! - The process runs in its own process group, with stdin closed; past `timeout` (default
//!   5 minutes) the whole group is killed.
//! - Its stdout must hold a JSON object: the whole of it, else a fenced ```` ```json ````
//!   block, else the text from the first `{` to the last `}`. It is checked against the
//!   recipe's `response.json_schema` ([`check_schema`]).
//! - A CLI that cannot start, exits non-zero, times out, prints no JSON object or violates
//!   the schema fails the task with BPMN error `COMMAND_FAILED` and the tail of its
//!   stderr, which an error boundary event can catch like any task failure.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::app::CommandAgent;
use crate::app::recipe::{Recipe, read_recipe};

/// How long a command may run when its agent says nothing.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// How much of stderr a failure quotes (its last lines).
const STDERR_TAIL_LINES: usize = 20;
const STDERR_TAIL_CHARS: usize = 2000;
/// Output beyond this is dropped (a runaway CLI cannot exhaust memory).
const MAX_OUTPUT: usize = 8 << 20;

/// Why a command agent's task failed (it raises COMMAND_FAILED with this message).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("parameter `{key}` is not declared by the recipe {recipe} (it declares: {declared})")]
    Undeclared {
        key: String,
        recipe: String,
        declared: String,
    },
    #[error("the recipe's required parameter `{0}` has no value (map it in input_mapping)")]
    RequiredUnset(String),
    #[error("parameter `{0}` holds a NUL character")]
    Nul(String),
    #[error("the command line is empty")]
    EmptyLine,
    #[error("command `{program}` cannot be started: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    #[error("command `{program}`: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
    /// It ran and failed; `tail` is the end of what it wrote to stderr.
    #[error("command `{program}`{why}{}", with_tail(.tail))]
    Failed {
        program: String,
        why: Failure,
        tail: String,
    },
    #[error("the command agent names no recipe")]
    NoRecipe,
    #[error(transparent)]
    Recipe(#[from] crate::app::recipe::RecipeError),
    #[error("the command could not be waited for: {0}")]
    Join(String),
    #[error("task {task}: {source}")]
    Task {
        task: String,
        source: Box<CommandError>,
    },
}

/// How a command that ran failed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error(" did not finish within {0:?}; its process group was killed")]
    Timeout(Duration),
    #[error(" exited with status {0}")]
    Status(i32),
    #[error(" was killed by a signal")]
    Killed,
    #[error(": {0}")]
    Output(#[source] OutputError),
    #[error(": the output violates the recipe's response.json_schema: {0}")]
    Schema(String),
}

/// Why a command's output holds no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error("the output is empty: no JSON object")]
    Empty,
    #[error("the output holds no JSON object: `{0}`")]
    NoObject(String),
}

/// The stderr tail after a failure's message.
fn with_tail(tail: &str) -> String {
    if tail.is_empty() {
        " (stderr empty)".to_string()
    } else {
        format!("; stderr: {tail}")
    }
}

/// What one run of the command gave.
#[derive(Debug)]
pub struct Ran {
    pub outputs: Map<String, Value>,
    /// The command line as run (parameters included).
    pub argv: Vec<String>,
    pub duration: Duration,
}

/// The command line for `recipe` with `params` (already checked against the recipe).
pub fn command_line(
    agent: &CommandAgent,
    recipe: &Path,
    config_dir: &Path,
    params: &[(String, String)],
) -> Vec<String> {
    let template: Vec<String> = if agent.command.is_empty() {
        ["goose", "run", "--recipe", "{recipe}", "{params}"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        agent.command.iter().map(|c| c.value.clone()).collect()
    };
    let recipe = recipe.display().to_string();
    let config_dir = match config_dir.as_os_str().is_empty() {
        true => ".".to_string(),
        false => config_dir.display().to_string(),
    };
    let mut argv = Vec::new();
    for arg in template {
        if arg == "{params}" {
            for (k, v) in params {
                argv.push("--params".to_string());
                argv.push(format!("{k}={v}"));
            }
        } else {
            argv.push(
                arg.replace("{recipe}", &recipe)
                    .replace("{config_dir}", &config_dir),
            );
        }
    }
    argv
}

/// The parameters the CLI gets: each input the recipe declares, as text (a string as it
/// is, anything else as JSON), then the defaults of declared parameters not given.
pub fn parameters(
    recipe: &Recipe,
    inputs: &Map<String, Value>,
) -> Result<Vec<(String, String)>, CommandError> {
    let mut out = Vec::new();
    for (key, value) in inputs {
        if !recipe.parameters.iter().any(|p| &p.key == key) {
            let declared: Vec<&str> = recipe.parameters.iter().map(|p| p.key.as_str()).collect();
            return Err(CommandError::Undeclared {
                key: key.clone(),
                recipe: recipe.path.display().to_string(),
                declared: if declared.is_empty() {
                    "none".to_string()
                } else {
                    declared.join(", ")
                },
            });
        }
        out.push((key.clone(), text(value)));
    }
    for p in &recipe.parameters {
        if inputs.contains_key(&p.key) {
            continue;
        }
        match &p.default {
            Some(d) => out.push((p.key.clone(), text(d))),
            None if p.required => {
                return Err(CommandError::RequiredUnset(p.key.clone()));
            }
            None => {}
        }
    }
    if let Some((k, _)) = out
        .iter()
        .find(|(k, v)| k.contains('\0') || v.contains('\0'))
    {
        return Err(CommandError::Nul(k.clone()));
    }
    Ok(out)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Run `argv` with `timeout`, parse and check its output. `Err` is the task's failure
/// message (with the stderr tail).
pub fn run(
    argv: &[String],
    timeout: Duration,
    schema: Option<&Value>,
    env: &[(&str, &str)],
) -> Result<Ran, CommandError> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let Some((program, args)) = argv.split_first() else {
        return Err(CommandError::EmptyLine);
    };
    let started = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|source| CommandError::Start {
        program: program.clone(),
        source,
    })?;
    let pgid = child.id() as i32;
    let reader = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 8192];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if buf.len() < MAX_OUTPUT {
                            buf.extend_from_slice(&chunk[..n.min(MAX_OUTPUT - buf.len())]);
                        }
                    }
                }
            }
            buf
        })
    };
    let out = child.stdout.take().map(|s| reader(Box::new(s)));
    let err = child.stderr.take().map(|s| reader(Box::new(s)));
    let deadline = started + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(source) => {
                return Err(CommandError::Wait {
                    program: program.clone(),
                    source,
                });
            }
        }
    };
    // The whole group: what the CLI started must not outlive it (nor hold its pipes).
    // SAFETY: kill(2) with a negative pid signals the process group; no memory involved.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    let status = match status {
        Some(s) => Some(s),
        None => {
            let _ = child.wait();
            None
        }
    };
    let collect = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let stdout = collect(out);
    let stderr = collect(err);
    let tail = stderr_tail(&stderr);
    let failed = |why: Failure| CommandError::Failed {
        program: program.clone(),
        why,
        tail: tail.clone(),
    };
    let Some(status) = status else {
        return Err(failed(Failure::Timeout(timeout)));
    };
    if !status.success() {
        return Err(failed(match status.code() {
            Some(c) => Failure::Status(c),
            None => Failure::Killed,
        }));
    }
    let value = parse_output(&stdout).map_err(|e| failed(Failure::Output(e)))?;
    if let Some(schema) = schema {
        let mut problems = Vec::new();
        check_schema(schema, &value, "$", &mut problems);
        if !problems.is_empty() {
            return Err(failed(Failure::Schema(problems.join("; "))));
        }
    }
    let Value::Object(outputs) = value else {
        unreachable!("parse_output returns objects only")
    };
    Ok(Ran {
        outputs,
        argv: argv.to_vec(),
        duration: started.elapsed(),
    })
}

/// The last lines of `stderr`, on one line each joined by ` | `.
fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let start = lines.len().saturating_sub(STDERR_TAIL_LINES);
    let mut tail = lines[start..].join(" | ");
    if tail.chars().count() > STDERR_TAIL_CHARS {
        let skip = tail.chars().count() - STDERR_TAIL_CHARS;
        tail = format!("…{}", tail.chars().skip(skip).collect::<String>());
    }
    tail
}

/// The JSON object in a CLI's output: all of it, else the first fenced block that holds
/// one (```` ```json ```` or plain ```` ``` ````), else the text from the first `{` to the
/// last `}`.
pub fn parse_output(stdout: &str) -> Result<Value, OutputError> {
    let object = |t: &str| match serde_json::from_str::<Value>(t.trim()) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    };
    if let Some(v) = object(stdout) {
        return Ok(v);
    }
    let mut rest = stdout;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let body = &after[body_start..];
        let Some(close) = body.find("```") else { break };
        if let Some(v) = object(&body[..close]) {
            return Ok(v);
        }
        rest = &body[close + 3..];
    }
    if let (Some(a), Some(b)) = (stdout.find('{'), stdout.rfind('}'))
        && a < b
        && let Some(v) = object(&stdout[a..=b])
    {
        return Ok(v);
    }
    if stdout.trim().is_empty() {
        Err(OutputError::Empty)
    } else {
        Err(OutputError::NoObject(
            stdout.trim().chars().take(120).collect(),
        ))
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Check `value` against the subset of JSON Schema in [`crate::app::recipe::CHECKED`]; each problem is pushed
/// with its path (`$.severity`).
pub fn check_schema(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    let Value::Object(s) = schema else {
        if schema == &Value::Bool(false) {
            problems.push(format!("{at}: not allowed"));
        }
        return;
    };
    if let Some(t) = s.get("type") {
        let wanted: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let actual = type_of(value);
        let ok = wanted
            .iter()
            .any(|w| *w == actual || (*w == "number" && actual == "integer"));
        if !ok {
            problems.push(format!(
                "{at}: expected {}, got {actual}",
                wanted.join(" or ")
            ));
            return;
        }
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.contains(value)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        problems.push(format!("{at}: {value} is not one of {}", list.join(", ")));
    }
    if let Some(c) = s.get("const")
        && c != value
    {
        problems.push(format!("{at}: expected {c}, got {value}"));
    }
    if let Some(x) = value.as_f64() {
        let bound = |k: &str| s.get(k).and_then(Value::as_f64);
        if let Some(m) = bound("minimum").filter(|m| x < *m) {
            problems.push(format!("{at}: {x} is less than {m}"));
        }
        if let Some(m) = bound("maximum").filter(|m| x > *m) {
            problems.push(format!("{at}: {x} is more than {m}"));
        }
        if let Some(m) = bound("exclusiveMinimum").filter(|m| x <= *m) {
            problems.push(format!("{at}: {x} is not more than {m}"));
        }
        if let Some(m) = bound("exclusiveMaximum").filter(|m| x >= *m) {
            problems.push(format!("{at}: {x} is not less than {m}"));
        }
    }
    let count = |k: &str| s.get(k).and_then(Value::as_u64);
    if let Value::String(text) = value {
        let n = text.chars().count() as u64;
        if let Some(m) = count("minLength").filter(|m| n < *m) {
            problems.push(format!("{at}: shorter than {m} characters"));
        }
        if let Some(m) = count("maxLength").filter(|m| n > *m) {
            problems.push(format!("{at}: longer than {m} characters"));
        }
    }
    if let Value::Array(items) = value {
        let n = items.len() as u64;
        if let Some(m) = count("minItems").filter(|m| n < *m) {
            problems.push(format!("{at}: fewer than {m} items"));
        }
        if let Some(m) = count("maxItems").filter(|m| n > *m) {
            problems.push(format!("{at}: more than {m} items"));
        }
        if let Some(item) = s.get("items") {
            for (i, v) in items.iter().enumerate() {
                check_schema(item, v, &format!("{at}[{i}]"), problems);
            }
        }
    }
    if let Value::Object(fields) = value {
        if let Some(Value::Array(required)) = s.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(r) {
                    problems.push(format!("{at}: `{r}` is required"));
                }
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, v) in fields {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => check_schema(ps, v, &format!("{at}.{k}"), problems),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        problems.push(format!("{at}: property `{k}` is not allowed"));
                    }
                    Some(extra @ Value::Object(_)) => {
                        check_schema(extra, v, &format!("{at}.{k}"), problems);
                    }
                    _ => {}
                },
            }
        }
    }
}

/// Run the task's command: the recipe read, the parameters checked, the CLI run off the
/// async runtime.
pub(crate) async fn execute(
    config: &crate::app::FlowConfig,
    agent: &CommandAgent,
    task_id: &str,
    run_id: &str,
    inputs: &Map<String, Value>,
) -> Result<Ran, CommandError> {
    let task = |e: CommandError| CommandError::Task {
        task: task_id.to_string(),
        source: Box::new(e),
    };
    let Some(recipe) = &agent.recipe else {
        return Err(task(CommandError::NoRecipe));
    };
    let recipe = read_recipe(&config.resolve(&recipe.value)).map_err(CommandError::Recipe)?;
    let params = parameters(&recipe, inputs).map_err(task)?;
    let argv = command_line(agent, &recipe.path, config.base_dir(), &params);
    let timeout = agent.timeout.as_ref().map_or(DEFAULT_TIMEOUT, |t| t.value);
    let schema = recipe.schema.clone();
    let task_name = task_id.to_string();
    let run = run_id.to_string();
    tokio::task::spawn_blocking(move || {
        run_blocking(&argv, timeout, schema.as_ref(), &task_name, &run)
    })
    .await
    .map_err(|e| task(CommandError::Join(e.to_string())))?
    .map_err(task)
}

fn run_blocking(
    argv: &[String],
    timeout: Duration,
    schema: Option<&Value>,
    task: &str,
    run_id: &str,
) -> Result<Ran, CommandError> {
    run(
        argv,
        timeout,
        schema,
        &[("CUGA_FLO_TASK", task), ("CUGA_FLO_RUN_ID", run_id)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::recipe::{RecipeParameter, supported};
    use serde_json::json;

    #[test]
    fn fenced_and_embedded_json_is_recovered() {
        assert_eq!(parse_output("{\"a\": 1}\n").unwrap(), json!({"a": 1}));
        let fenced = "Here you go:\n```json\n{\"severity\": \"HIGH\"}\n```\nDone.";
        assert_eq!(parse_output(fenced).unwrap(), json!({"severity": "HIGH"}));
        let plain = "log line\n```\n{\"x\": [1, 2]}\n```";
        assert_eq!(parse_output(plain).unwrap(), json!({"x": [1, 2]}));
        let inline = "result: {\"ok\": true} (end)";
        assert_eq!(parse_output(inline).unwrap(), json!({"ok": true}));
        assert!(parse_output("").is_err());
        assert!(parse_output("[1, 2]").is_err());
        assert!(parse_output("no json {here").is_err());
    }

    #[test]
    fn the_schema_subset_is_checked() {
        let schema = json!({
            "type": "object",
            "required": ["severity", "score"],
            "properties": {
                "severity": {"type": "string", "enum": ["LOW", "HIGH"]},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            },
            "additionalProperties": false,
        });
        assert!(supported(&schema, "$").is_ok());
        let check = |v: Value| {
            let mut p = Vec::new();
            check_schema(&schema, &v, "$", &mut p);
            p
        };
        assert!(check(json!({"severity": "LOW", "score": 0.5})).is_empty());
        assert!(check(json!({"severity": "MID", "score": 0.5}))[0].contains("not one of"));
        assert!(check(json!({"severity": "LOW"}))[0].contains("`score` is required"));
        assert!(check(json!({"severity": "LOW", "score": 2}))[0].contains("more than 1"));
        assert!(check(json!({"severity": "LOW", "score": 0, "x": 1}))[0].contains("not allowed"));
        assert!(
            check(json!({"severity": "LOW", "score": 0, "tags": [1]}))[0].contains("$.tags[0]")
        );
        assert!(supported(&json!({"type": "string", "pattern": "^a"}), "$").is_err());
    }

    #[test]
    fn parameters_are_the_declared_ones_only() {
        let recipe = Recipe {
            path: "r.yaml".into(),
            title: None,
            parameters: vec![
                RecipeParameter {
                    key: "msisdn".into(),
                    required: true,
                    default: None,
                },
                RecipeParameter {
                    key: "region".into(),
                    required: false,
                    default: Some(json!("eu")),
                },
            ],
            schema: None,
        };
        let inputs = |v: Value| v.as_object().unwrap().clone();
        let p = parameters(&recipe, &inputs(json!({"msisdn": "+1 555; rm -rf /"}))).unwrap();
        assert_eq!(
            p,
            vec![
                ("msisdn".to_string(), "+1 555; rm -rf /".to_string()),
                ("region".to_string(), "eu".to_string())
            ]
        );
        // One argument each, never spliced into another.
        let agent = CommandAgent::default();
        let argv = command_line(&agent, Path::new("r.yaml"), Path::new("app/config"), &p);
        assert_eq!(
            argv,
            [
                "goose",
                "run",
                "--recipe",
                "r.yaml",
                "--params",
                "msisdn=+1 555; rm -rf /",
                "--params",
                "region=eu"
            ]
        );
        assert!(parameters(&recipe, &inputs(json!({"other": 1}))).is_err());
        assert!(parameters(&recipe, &inputs(json!({}))).is_err());
    }
}
