//! The expressions of a multi-instance activity (its collection, cardinality, output
//! element), read the same way by every engine and by `validate`: a variable path, or an
//! expression in cuga-flo's language (`${...}`) or FEEL (`= ...`); and the names that stay
//! an instance's own.

use std::collections::BTreeSet;

use serde_json::Value;

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

/// The value of a multi-instance expression: a variable path, or an expression in
/// cuga-flo's language (`${...}`) or FEEL (`= ...`). `Ok(None)`: missing, null or unknown.
pub fn evaluate(
    text: &str,
    language: Option<&str>,
    vars: &dyn Variables,
) -> Result<Option<Value>, String> {
    let text = text.trim();
    if let Some(path) = plain_path(text) {
        return Ok(path.resolve(vars).filter(|v| !v.is_null()).cloned());
    }
    expr::parse_in(text, language)
        .map(|e| e.value(vars))
        .map_err(|e| e.message)
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
