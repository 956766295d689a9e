//! What a message or signal catch waits for, in every engine whose waits cuga-flo
//! journals (the native one; cuga-flo working Flowable's and Kogito's): its signature
//! (message or signal, and its name) and the correlation value its message is matched by.

use serde_json::Value;

use crate::bpmn::{EventDefinition, NodeKind, TaskKind};
use crate::journal::event::CatchKind;
use crate::semantics::topology::LiveNode;

/// What a catching or throwing element waits for or sends: a message or a signal, and
/// its name.
pub(crate) fn signature(node: &LiveNode) -> Option<(CatchKind, String)> {
    let definitions = node.kind.event_definitions();
    let kind = if matches!(node.kind, NodeKind::Task(TaskKind::Receive))
        || definitions.contains(&EventDefinition::Message)
    {
        CatchKind::Message
    } else if definitions.contains(&EventDefinition::Signal) {
        CatchKind::Signal
    } else {
        return None;
    };
    let name = node
        .event_ref
        .as_ref()
        .map(|r| r.name.clone().unwrap_or_else(|| r.reference.clone()))
        .or_else(|| node.name.clone())
        .unwrap_or_else(|| node.id.clone());
    Some((kind, name))
}

/// The correlation value of a catch waiting for a message (`event_ref`: the message it
/// waits for) whose message has a correlation key (a FEEL expression such as `= orderId`,
/// read in `variables` when the wait begins): a string as it is, any other value as JSON;
/// `None` for a message without a key, or a signal. `Err` when the key cannot be read or
/// has no value (Camunda 8 stops the instance with an incident there; the run fails).
/// What every engine whose waits cuga-flo journals computes (the native one, and
/// cuga-flo for Kogito).
pub fn correlation_over(
    event_ref: Option<&crate::bpmn::EventRef>,
    kind: CatchKind,
    variables: &dyn crate::expr::Variables,
) -> Result<Option<String>, CorrelationError> {
    let Some(key) = event_ref
        .and_then(|r| r.correlation_key.as_deref())
        .filter(|_| kind == CatchKind::Message)
    else {
        return Ok(None);
    };
    let expr = crate::expr::parse(key).map_err(|source| CorrelationError::NotAnExpression {
        key: key.to_string(),
        source: Box::new(source),
    })?;
    match expr.value(variables) {
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Ok(Some(other.to_string())),
        None => Err(CorrelationError::NoValue {
            key: key.to_string(),
            reads: expr.variables().join(", "),
        }),
    }
}

/// Why a message's correlation key gives no value (the run fails, as Camunda 8 stops
/// the instance with an incident there).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CorrelationError {
    #[error("its correlation key `{key}` is not an expression: {source}")]
    NotAnExpression {
        key: String,
        source: Box<crate::expr::ExprError>,
    },
    #[error("its correlation key `{key}` has no value (is {reads} set?)")]
    NoValue { key: String, reads: String },
}
