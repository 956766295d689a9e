//! The expressions of a multi-instance activity (its collection, cardinality, output
//! element), read the same way by every engine and by `validate`: a variable path, or an
//! expression in cuga-flo's language (`${...}`) or FEEL (`= ...`); and the names that stay
//! an instance's own.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::bpmn::MultiInstance;
use crate::expr::{self, VarPath, Variables};

/// A plain variable path (`items`, `order.lines`), which names a variable in every dialect.
pub fn plain_path(text: &str) -> Option<VarPath> {
    let first = text.chars().next()?;
    let plain = (first.is_ascii_alphabetic() || first == '_')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !matches!(text, "true" | "false" | "null" | "True" | "False" | "None");
    plain
        .then(|| VarPath::new(text.split('.').map(str::to_string).collect()))
        .flatten()
}

/// The variable an expression is nothing but (`result`, `${result}`, `= result`), if it is.
pub fn named_variable(text: &str) -> Option<String> {
    let text = text.trim();
    let inner = if let Some(feel) = text.strip_prefix('=') {
        feel.trim()
    } else if let Some(juel) = text.strip_prefix("${").or_else(|| text.strip_prefix("#{")) {
        juel.strip_suffix('}')?.trim()
    } else {
        text
    };
    plain_path(inner).map(|p| p.root().to_string())
}

/// Why a multi-instance activity cannot run (the run fails with it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InstanceError {
    #[error(
        "multi-instance activity `{node}`: its collection `{collection}` is not a list (it is {kind})"
    )]
    NotAList {
        node: String,
        collection: String,
        kind: &'static str,
    },
    #[error("multi-instance activity `{node}`: its collection `{collection}` is not set")]
    Unset { node: String, collection: String },
    #[error("multi-instance activity `{node}`: its {what} `{text}` cannot be read: {source}")]
    Unreadable {
        node: String,
        /// `collection` or `cardinality`.
        what: &'static str,
        text: String,
        source: Box<expr::ExprError>,
    },
    #[error(
        "multi-instance activity `{node}`: its cardinality `{cardinality}` is not a whole \
         number of instances"
    )]
    NotWhole { node: String, cardinality: String },
    #[error("multi-instance activity `{node}` names neither a collection nor a cardinality")]
    Neither { node: String },
    /// Its output element cannot be read (the activity is named by the caller).
    #[error("{0}")]
    Output(#[source] Box<expr::ExprError>),
    /// Its completion condition cannot be read.
    #[error("its completion condition `{condition}`: {source}")]
    Completion {
        condition: String,
        source: Box<expr::ExprError>,
    },
}

/// The value of a multi-instance expression: a variable path, or an expression in
/// cuga-flo's language (`${...}`) or FEEL (`= ...`). `Ok(None)`: missing, null or unknown.
pub fn evaluate(
    text: &str,
    language: Option<&str>,
    vars: &dyn Variables,
) -> Result<Option<Value>, expr::ExprError> {
    let text = text.trim();
    if let Some(path) = plain_path(text) {
        return Ok(path.resolve(vars).filter(|v| !v.is_null()).cloned());
    }
    expr::parse_in(text, language).map(|e| e.value(vars))
}

/// Why a multi-instance expression cannot be evaluated (`validate` reports it), if it
/// cannot: a variable path always can.
pub fn unreadable(text: &str, language: Option<&str>) -> Option<String> {
    let text = text.trim();
    if plain_path(text).is_some() {
        return None;
    }
    expr::parse_in(text, language).err().map(|e| e.message)
}

/// The variables an expression reads (their first segments), for provenance.
pub fn roots(text: &str, language: Option<&str>) -> Vec<String> {
    let text = text.trim();
    if let Some(path) = plain_path(text) {
        return vec![path.root().to_string()];
    }
    expr::parse_in(text, language)
        .map(|e| {
            e.variables()
                .iter()
                .map(|p| p.split('.').next().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The names that stay an instance's own when its tasks write them: `loopCounter`,
/// `nrOfInstances`, the element variable and the output element's variable.
pub fn own_names(spec: &MultiInstance) -> BTreeSet<String> {
    let mut own: BTreeSet<String> = ["loopCounter", "nrOfInstances"]
        .into_iter()
        .map(String::from)
        .collect();
    own.extend(spec.element_variable.clone());
    own.extend(spec.output_element.as_deref().and_then(named_variable));
    own
}

/// Variables looked up in layers, the first that holds a name wins.
pub struct Layered<'a>(pub Vec<&'a Map<String, Value>>);

impl Variables for Layered<'_> {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.0.iter().find_map(|m| m.get(name))
    }
}

/// What a multi-instance activity `node` runs over, evaluated over `vars`: its items
/// (`None`: a cardinality) and how many instances. `Err`: why the run fails.
pub fn runs_over(
    node: &str,
    spec: &MultiInstance,
    vars: &dyn Variables,
) -> Result<(Option<Vec<Value>>, u64), InstanceError> {
    let language = spec.language.as_deref();
    if let Some(collection) = &spec.collection {
        let items = match evaluate(collection, language, vars) {
            Ok(Some(Value::Array(items))) => items,
            Ok(Some(other)) => {
                return Err(InstanceError::NotAList {
                    node: node.to_string(),
                    collection: collection.clone(),
                    kind: crate::vocab::kind_of(&other),
                });
            }
            Ok(None) => {
                return Err(InstanceError::Unset {
                    node: node.to_string(),
                    collection: collection.clone(),
                });
            }
            Err(source) => {
                return Err(InstanceError::Unreadable {
                    node: node.to_string(),
                    what: "collection",
                    text: collection.clone(),
                    source: Box::new(source),
                });
            }
        };
        let count = items.len() as u64;
        Ok((Some(items), count))
    } else if let Some(cardinality) = &spec.cardinality {
        match evaluate(cardinality, language, vars).map(|v| v.as_ref().and_then(whole)) {
            Ok(Some(n)) => Ok((None, n)),
            Ok(None) => Err(InstanceError::NotWhole {
                node: node.to_string(),
                cardinality: cardinality.clone(),
            }),
            Err(source) => Err(InstanceError::Unreadable {
                node: node.to_string(),
                what: "cardinality",
                text: cardinality.clone(),
                source: Box::new(source),
            }),
        }
    } else {
        Err(InstanceError::Neither {
            node: node.to_string(),
        })
    }
}

/// The variables of instance `loop_counter` (1, 2, ...) of `count` over `items`
/// (`loopCounter`, `nrOfInstances`, the element variable), and the names that stay the
/// instance's when its tasks write them (those and the output element's variable).
pub fn instance_locals(
    spec: &MultiInstance,
    items: Option<&[Value]>,
    count: u64,
    loop_counter: u64,
) -> (Map<String, Value>, BTreeSet<String>) {
    let mut locals = Map::new();
    locals.insert("loopCounter".into(), Value::from(loop_counter));
    locals.insert("nrOfInstances".into(), Value::from(count));
    if let (Some(items), Some(name)) = (items, &spec.element_variable) {
        let index = usize::try_from(loop_counter.saturating_sub(1)).unwrap_or(usize::MAX);
        let item = items.get(index).cloned().unwrap_or(Value::Null);
        locals.insert(name.clone(), item);
    }
    (locals, own_names(spec))
}

/// An instance's output for the output collection, over its variables `vars`: the output
/// element, else everything its tasks wrote (`written`). `Ok(None)`: no output collection.
pub fn instance_output(
    spec: &MultiInstance,
    vars: &dyn Variables,
    written: &Map<String, Value>,
) -> Result<Option<Value>, InstanceError> {
    match (&spec.output_collection, &spec.output_element) {
        (None, _) => Ok(None),
        (Some(_), Some(element)) => evaluate(element, spec.language.as_deref(), vars)
            .map_err(|e| InstanceError::Output(Box::new(e))),
        (Some(_), None) => Ok(Some(Value::Object(written.clone()))),
    }
}

/// The counts a completion condition reads (the standard names and Zeebe's).
pub fn completion_counts(count: u64, completed: u64, active: u64) -> Map<String, Value> {
    let mut counts = Map::new();
    for (names, value) in [
        (["nrOfInstances", "numberOfInstances"], count),
        (
            ["nrOfCompletedInstances", "numberOfCompletedInstances"],
            completed,
        ),
        (["nrOfActiveInstances", "numberOfActiveInstances"], active),
    ] {
        for name in names {
            counts.insert(name.to_string(), Value::from(value));
        }
    }
    counts
}

/// Whether the completion condition holds over `vars` (none: never). `Err`: why the run
/// fails.
pub fn completion_holds(spec: &MultiInstance, vars: &dyn Variables) -> Result<bool, InstanceError> {
    match &spec.completion_condition {
        None => Ok(false),
        Some(condition) => expr::parse_in(condition, spec.language.as_deref())
            .map(|c| c.eval(vars).is_true())
            .map_err(|source| InstanceError::Completion {
                condition: condition.clone(),
                source: Box::new(source),
            }),
    }
}

/// A whole number of instances from a cardinality's value.
pub fn whole(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}
