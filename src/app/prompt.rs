//! The prompt templates a model is asked with: the built-in ones (`prompts/*.jinja`) or
//! an app's own (`llm.prompt_templates`), compiled with minijinja, each defining the
//! blocks `system` and `user`. Compiled here, as the app is authored (`validate` refuses
//! one that does not compile); [`crate::reason::llm::prompt`] builds each control
//! point's context and renders them.

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::{Map, Value};

const TASK_TEMPLATE: &str = include_str!("prompts/task.jinja");
const GATEWAY_TEMPLATE: &str = include_str!("prompts/gateway.jinja");
const HOOK_TEMPLATE: &str = include_str!("prompts/hook.jinja");

/// The two messages a control point is asked with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub system: String,
    pub user: String,
}

/// A template that does not compile or render: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct PromptError {
    /// The template's path (`<built-in>/task.jinja` for the built-in ones).
    pub path: String,
    /// 1-based.
    pub line: usize,
    pub message: String,
}

/// The kinds of control point, one template each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Task,
    Gateway,
    Hook,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Task, Kind::Gateway, Kind::Hook];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Task => "task",
            Kind::Gateway => "gateway",
            Kind::Hook => "hook",
        }
    }

    fn builtin(self) -> (String, String) {
        let source = match self {
            Kind::Task => TASK_TEMPLATE,
            Kind::Gateway => GATEWAY_TEMPLATE,
            Kind::Hook => HOOK_TEMPLATE,
        };
        (
            format!("<built-in>/{}.jinja", self.name()),
            source.to_string(),
        )
    }
}

/// The compiled prompt templates (built-in or the app's own).
#[derive(Debug, Clone)]
pub struct Templates {
    env: Environment<'static>,
    /// Each kind's template path, for messages (by [`Kind`] order).
    paths: [String; 3],
}

impl Templates {
    /// The built-in templates.
    pub fn builtin() -> Templates {
        Templates::with_overrides(None, None, None)
            .unwrap_or_else(|e| panic!("the built-in prompt templates are broken: {e}"))
    }

    /// The built-in templates with some replaced: each override is `(path, source)`, the
    /// path being used in messages only. Every template is compiled now and must define
    /// `{% block system %}` and `{% block user %}`.
    pub fn with_overrides(
        task: Option<(String, String)>,
        gateway: Option<(String, String)>,
        hook: Option<(String, String)>,
    ) -> Result<Templates, PromptError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_syntax(syntax());
        let mut paths: [String; 3] = Default::default();
        for (kind, given) in Kind::ALL.into_iter().zip([task, gateway, hook]) {
            let (path, source) = given.unwrap_or_else(|| kind.builtin());
            env.add_template_owned(kind.name(), source)
                .map_err(|e| prompt_error(&path, &e))?;
            check_blocks(&env, kind, &path)?;
            paths[kind as usize] = path;
        }
        Ok(Templates { env, paths })
    }

    /// The prompt of `kind` over `context` (the control point's request as template
    /// values).
    pub fn render(&self, kind: Kind, context: Map<String, Value>) -> Result<Prompt, PromptError> {
        let path = &self.paths[kind as usize];
        let fail = |e: minijinja::Error| prompt_error(path, &e);
        let template = self.env.get_template(kind.name()).map_err(fail)?;
        let context = template_value(&Value::Object(context));
        let mut captured = template.render_captured(context).map_err(fail)?;
        let (system, user) = captured
            .with_state_mut(|state| {
                Ok::<_, minijinja::Error>((
                    state.render_block("system")?,
                    state.render_block("user")?,
                ))
            })
            .map_err(fail)?;
        Ok(Prompt {
            system: system.trim().to_string(),
            user: user.trim().to_string(),
        })
    }
}

/// A JSON value as a template value (null is `none`).
fn template_value(v: &Value) -> minijinja::Value {
    match v {
        Value::Null => minijinja::Value::from(()),
        Value::Bool(b) => minijinja::Value::from(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => minijinja::Value::from(i),
            (None, Some(u)) => minijinja::Value::from(u),
            (None, None) => minijinja::Value::from(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => minijinja::Value::from(s.as_str()),
        Value::Array(items) => items.iter().map(template_value).collect(),
        Value::Object(map) => {
            minijinja::Value::from_pairs(map.iter().map(|(k, v)| (k.as_str(), template_value(v))))
        }
    }
}

fn syntax() -> SyntaxConfig {
    let mut builder = SyntaxConfig::builder();
    builder.trim_blocks(true).lstrip_blocks(true);
    builder
        .build()
        .unwrap_or_else(|e| panic!("the prompt template syntax is broken: {e}"))
}

/// A template must define both blocks. (An empty state renders them with no context, so
/// only a missing block is an error here; anything else depends on the request.)
fn check_blocks(env: &Environment<'static>, kind: Kind, path: &str) -> Result<(), PromptError> {
    let template = env
        .get_template(kind.name())
        .map_err(|e| prompt_error(path, &e))?;
    let mut state = template.new_state();
    for block in ["system", "user"] {
        if let Err(e) = state.render_block(block)
            && e.kind() == minijinja::ErrorKind::UnknownBlock
        {
            return Err(PromptError {
                path: path.to_string(),
                line: 1,
                message: format!(
                    "the template has no `{{% block {block} %}}` (a prompt template defines \
                     the blocks `system` and `user`)"
                ),
            });
        }
    }
    Ok(())
}

fn prompt_error(path: &str, e: &minijinja::Error) -> PromptError {
    let mut message = match e.detail() {
        Some(detail) => format!("{}: {detail}", e.kind()),
        None => e.kind().to_string(),
    };
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        message.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    PromptError {
        path: path.to_string(),
        line: e.line().unwrap_or(1),
        message,
    }
}
