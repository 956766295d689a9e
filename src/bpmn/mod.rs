//! BPMN 2.0: the model ([`model`]) and its parser ([`parse`]). Imports nothing of the
//! rest of the crate but [`crate::source`].

pub mod call;
mod encoding;
mod index;
mod model;
mod parser;
mod timer;

pub use call::{CallSpec, Mapping, call_spec};
pub use index::ProcessIndex;
pub use model::*;
pub use parser::{parse, parse_file};
pub use timer::{DueError, TimeError, Timer, TimerKind, parse_date_time, parse_duration};

use crate::source::{SourceFile, Span};

/// Why a BPMN document could not be used. A parse reports every problem it finds, not
/// only the first (see [`ParseErrors`]).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum BpmnError {
    #[error("cannot read {path}: {message}")]
    Io { path: String, message: String },
    #[error("the XML declaration names encoding `{0}`, which cuga-flo cannot decode")]
    UnknownEncoding(String),
    #[error("the file is not valid {encoding}: {message}")]
    BadEncoding { encoding: String, message: String },
    #[error("XML is not well-formed: {message}")]
    NotWellFormed { message: String, span: Span },
    #[error(
        "no BPMN <definitions> element (namespace http://www.omg.org/spec/BPMN/20100524/MODEL)"
    )]
    NotBpmn { span: Span },
    #[error("the document has no <process>")]
    NoProcess { span: Span },
    #[error("element without an `id`: <{tag}>")]
    MissingId { tag: String, span: Span },
    #[error("duplicate id `{id}`")]
    DuplicateId { id: String, span: Span, first: Span },
    #[error("sequence flow `{flow}` has no `{attribute}`")]
    MissingRef {
        flow: String,
        attribute: &'static str,
        span: Span,
    },
    #[error(
        "sequence flow `{flow}` has {attribute}=\"{target}\", which is not a flow node of its process"
    )]
    DanglingRef {
        flow: String,
        attribute: &'static str,
        target: String,
        span: Span,
    },
    #[error(
        "boundary event `{event}` is attached to `{target}`, which is not an activity of its process"
    )]
    DanglingAttachment {
        event: String,
        target: String,
        span: Span,
    },
    #[error(
        "event `{event}` has {attribute}=\"{target}\", which is not an <{}> of the document",
        if *attribute == "errorRef" { "error" } else { "escalation" }
    )]
    DanglingEventRef {
        event: String,
        attribute: &'static str,
        target: String,
        span: Span,
    },
}

impl BpmnError {
    /// Where in the (transcoded) text the problem is, when known.
    pub fn span(&self) -> Option<Span> {
        match self {
            BpmnError::Io { .. }
            | BpmnError::UnknownEncoding(_)
            | BpmnError::BadEncoding { .. } => None,
            BpmnError::NotWellFormed { span, .. }
            | BpmnError::NotBpmn { span }
            | BpmnError::NoProcess { span }
            | BpmnError::MissingId { span, .. }
            | BpmnError::DuplicateId { span, .. }
            | BpmnError::MissingRef { span, .. }
            | BpmnError::DanglingRef { span, .. }
            | BpmnError::DanglingAttachment { span, .. }
            | BpmnError::DanglingEventRef { span, .. } => Some(*span),
        }
    }

    /// A stable short code for machines and snapshot tests.
    pub fn code(&self) -> &'static str {
        match self {
            BpmnError::Io { .. } => "bpmn::io",
            BpmnError::UnknownEncoding(_) | BpmnError::BadEncoding { .. } => "bpmn::encoding",
            BpmnError::NotWellFormed { .. } => "bpmn::xml",
            BpmnError::NotBpmn { .. } => "bpmn::not_bpmn",
            BpmnError::NoProcess { .. } => "bpmn::no_process",
            BpmnError::MissingId { .. } => "bpmn::missing_id",
            BpmnError::DuplicateId { .. } => "bpmn::duplicate_id",
            BpmnError::MissingRef { .. } | BpmnError::DanglingRef { .. } => "bpmn::dangling_ref",
            BpmnError::DanglingAttachment { .. } => "bpmn::dangling_attachment",
            BpmnError::DanglingEventRef { .. } => "bpmn::dangling_event_ref",
        }
    }
}

/// Every problem found in one document, with the text they point into (absent when the
/// bytes could not even be decoded).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} in {}", summary(&self.errors), self.path)]
pub struct ParseErrors {
    pub path: String,
    pub text: Option<SourceFile>,
    pub errors: Vec<BpmnError>,
}

fn summary(errors: &[BpmnError]) -> String {
    match errors {
        [one] => one.to_string(),
        many => format!("{} problems", many.len()),
    }
}

impl ParseErrors {
    /// `file:line:col: message` for the first error (used in one-line summaries).
    pub fn first_line(&self) -> String {
        let first = &self.errors[0];
        match (first.span(), &self.text) {
            (Some(span), Some(src)) => {
                let lc = src.line_col(span.offset);
                format!("{}:{}:{}: {}", self.path, lc.line, lc.column, first)
            }
            _ => format!("{}: {}", self.path, first),
        }
    }
}
