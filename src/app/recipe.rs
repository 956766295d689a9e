//! A command agent's recipe (Goose's format, YAML or JSON): its parameters and the JSON
//! Schema its answer must meet, read as far as running and checking it needs. What the
//! schema may say is a subset ([`CHECKED`]); anything else is refused when the recipe is
//! read, so nothing is left unchecked silently.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A Goose recipe, as far as running it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    pub path: PathBuf,
    pub title: Option<String>,
    pub parameters: Vec<RecipeParameter>,
    /// `response.json_schema`.
    pub schema: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecipeParameter {
    pub key: String,
    /// `requirement: required` (Goose's default is `required` too).
    pub required: bool,
    pub default: Option<Value>,
}

/// Why a recipe cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    #[error("the recipe {} cannot be read", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the recipe {} is not YAML: {message}", .path.display())]
    Yaml { path: PathBuf, message: String },
    /// It is YAML but not a recipe cuga-flo can check: why.
    #[error("{0}")]
    Invalid(String),
}

/// A keyword of a response schema that [`check_schema`] cannot check: where, and which.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    #[error("{0} is not a schema")]
    NotASchema(String),
    #[error("{at}: keyword `{keyword}` is not supported (supported: {})", CHECKED.join(", "))]
    Keyword { at: String, keyword: String },
}

/// Read the recipe at `path` (YAML or JSON, Goose's format).
pub fn read_recipe(path: &Path) -> Result<Recipe, RecipeError> {
    let text = crate::source::read_text(path).map_err(|source| RecipeError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let doc = crate::app::yaml::parse(&text)
        .map_err(|e| RecipeError::Yaml {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
        .to_json();
    let Value::Object(doc) = doc else {
        return Err(RecipeError::Invalid(format!(
            "the recipe {} is not a mapping",
            path.display()
        )));
    };
    if !doc.contains_key("instructions") && !doc.contains_key("prompt") {
        return Err(RecipeError::Invalid(format!(
            "the recipe {} has neither `instructions` nor `prompt`",
            path.display()
        )));
    }
    let mut parameters = Vec::new();
    if let Some(list) = doc.get("parameters") {
        let Value::Array(items) = list else {
            return Err(RecipeError::Invalid(format!(
                "`parameters` of {} is not a list",
                path.display()
            )));
        };
        for p in items {
            let key = p.get("key").and_then(Value::as_str).ok_or_else(|| {
                RecipeError::Invalid(format!("a parameter of {} has no `key`", path.display()))
            })?;
            let requirement = p.get("requirement").and_then(Value::as_str);
            parameters.push(RecipeParameter {
                key: key.to_string(),
                required: !matches!(requirement, Some("optional")),
                default: p.get("default").cloned().filter(|d| !d.is_null()),
            });
        }
    }
    let schema = doc
        .get("response")
        .and_then(|r| r.get("json_schema"))
        .cloned();
    if let Some(s) = &schema {
        supported(s, "$").map_err(|e| {
            RecipeError::Invalid(format!("{}: response.json_schema: {e}", path.display()))
        })?;
    }
    Ok(Recipe {
        path: path.to_path_buf(),
        title: doc.get("title").and_then(Value::as_str).map(str::to_string),
        parameters,
        schema,
    })
}

/// The JSON Schema keywords [`check_schema`] knows; annotations are ignored. A schema with
/// any other keyword is refused when the recipe is read, so nothing is left unchecked
/// silently.
pub const CHECKED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];
pub const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "title",
    "description",
    "default",
    "examples",
    "$comment",
];

/// Whether `schema` uses only keywords [`check_schema`] checks.
pub fn supported(schema: &Value, at: &str) -> Result<(), Unsupported> {
    let Value::Object(map) = schema else {
        return match schema {
            Value::Bool(_) => Ok(()),
            _ => Err(Unsupported::NotASchema(at.to_string())),
        };
    };
    for (k, v) in map {
        if ANNOTATIONS.contains(&k.as_str()) {
            continue;
        }
        if !CHECKED.contains(&k.as_str()) {
            return Err(Unsupported::Keyword {
                at: at.to_string(),
                keyword: k.clone(),
            });
        }
        match k.as_str() {
            "properties" => {
                for (name, s) in v.as_object().into_iter().flatten() {
                    supported(s, &format!("{at}.{name}"))?;
                }
            }
            "items" | "additionalProperties" => supported(v, &format!("{at}[]"))?,
            _ => {}
        }
    }
    Ok(())
}
