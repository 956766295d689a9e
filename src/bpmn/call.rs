//! What a call activity calls and which variables go in and out: read from the BPMN
//! attribute `calledElement` (Camunda 7, Flowable, bpmn-js) or Zeebe's
//! `<zeebe:calledElement processId=…>`, and from the mappings of the dialects:
//! `camunda:in` / `camunda:out` and `flowable:in` / `flowable:out` (`source` →
//! `target`, or `variables="all"`), Zeebe's `<zeebe:ioMapping>` inputs and outputs
//! (`source="= name"`), `propagateAllParentVariables` / `propagateAllChildVariables`.
//!
//! **Nothing passes unless the model says so**: a call activity without an `in` mapping
//! gives the called process no variable, one without an `out` mapping takes none back
//! (as Camunda 7 does for `calledElement`; Zeebe would pass everything by default, which
//! cuga-flo asks to be written out: `propagateAllParentVariables="true"`,
//! `propagateAllChildVariables="true"`). What cannot be read as a plain variable
//! (expressions, `sourceExpression`, a dynamic called element) is reported in
//! [`CallSpec::unreadable`] and refused by `validate`.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde_json::{Map, Value};

use super::{Node, NodeKind};

/// Variables passed one way: all of them, and/or pairs source → target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    /// Every variable passes under its own name.
    pub all: bool,
    /// `(source, target)`: the source's variable `source` becomes `target`.
    pub pairs: Vec<(String, String)>,
}

impl Mapping {
    /// Nothing passes.
    pub fn is_empty(&self) -> bool {
        !self.all && self.pairs.is_empty()
    }

    /// Each variable this mapping sets, with the variable it comes from: `(target,
    /// source)` for the names in `from`.
    pub fn sources<'a>(&'a self, from: &'a Map<String, Value>) -> Vec<(&'a str, &'a str)> {
        let mut out: Vec<(&str, &str)> = if self.all {
            from.keys().map(|k| (k.as_str(), k.as_str())).collect()
        } else {
            Vec::new()
        };
        out.extend(self.pairs.iter().map(|(s, t)| (t.as_str(), s.as_str())));
        out
    }

    /// The variables of `from` this mapping passes, under their target names. A source
    /// variable that is not set passes as null (the target is set, as Camunda does).
    pub fn apply(&self, from: &Map<String, Value>) -> Map<String, Value> {
        let mut out = if self.all { from.clone() } else { Map::new() };
        for (source, target) in &self.pairs {
            out.insert(
                target.clone(),
                from.get(source).cloned().unwrap_or(Value::Null),
            );
        }
        out
    }
}

/// A call activity that calls a process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallSpec {
    /// The called process's key (its process id, or the app's `flow.id`).
    pub called: String,
    pub inputs: Mapping,
    pub outputs: Mapping,
    /// What the engine cannot read (each a sentence): `validate` refuses them.
    pub unreadable: Vec<String>,
}

/// The call `node` makes, when it is a call activity that names a process.
pub fn call_spec(node: &Node) -> Option<CallSpec> {
    let NodeKind::CallActivity { called_element } = &node.kind else {
        return None;
    };
    let mut spec = CallSpec::default();
    let mut zeebe_called = None;
    if let Some(xml) = &node.extension_elements {
        read_extensions(xml, &mut spec, &mut zeebe_called);
    }
    let called = called_element.clone().or(zeebe_called)?;
    let called = called.trim().to_string();
    if called.starts_with('=') || called.contains("${") || called.contains("#{") {
        spec.unreadable.push(format!(
            "the called process `{called}` is an expression: cuga-flo calls a process named \
             in the model"
        ));
    }
    spec.called = called;
    Some(spec)
}

fn local(name: &str) -> String {
    match name.rsplit_once(':') {
        Some((_, local)) => local.to_string(),
        None => name.to_string(),
    }
}

fn attrs(el: &BytesStart<'_>) -> Vec<(String, String)> {
    el.attributes()
        .flatten()
        .map(|a| {
            let raw: &str = a.value.as_ref();
            let value = quick_xml::escape::unescape(raw)
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| raw.to_string());
            (local(a.key.as_ref()), value.trim().to_string())
        })
        .collect()
}

fn read_extensions(xml: &str, spec: &mut CallSpec, zeebe_called: &mut Option<String>) {
    let mut reader = Reader::from_str(xml);
    // Inside `<zeebe:ioMapping>`: its `input` and `output` are the call's mappings.
    let mut io_depth: Option<usize> = None;
    let mut depth = 0usize;
    loop {
        let (el, empty) = match reader.read_event() {
            Ok(Event::Start(el)) => (el, false),
            Ok(Event::Empty(el)) => (el, true),
            Ok(Event::End(_)) => {
                depth = depth.saturating_sub(1);
                if io_depth.is_some_and(|d| d > depth) {
                    io_depth = None;
                }
                continue;
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => continue,
        };
        let name = local(el.name().as_ref());
        let attrs = attrs(&el);
        let get = |key: &str| attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        match name.as_str() {
            "calledElement" => {
                *zeebe_called = get("processId").filter(|p| !p.is_empty());
                if get("propagateAllChildVariables").as_deref() == Some("true") {
                    spec.outputs.all = true;
                }
                if get("propagateAllParentVariables").as_deref() == Some("true") {
                    spec.inputs.all = true;
                }
            }
            "ioMapping" if !empty => io_depth = Some(depth + 1),
            "input" | "output" if io_depth.is_some() => {
                let mapping = if name == "input" {
                    &mut spec.inputs
                } else {
                    &mut spec.outputs
                };
                let source = get("source").unwrap_or_default();
                let target = get("target").unwrap_or_default();
                let plain = source.strip_prefix('=').unwrap_or(&source).trim();
                if is_name(plain) && is_name(&target) {
                    mapping.pairs.push((plain.to_string(), target));
                } else {
                    spec.unreadable.push(format!(
                        "the {name} mapping `{source}` → `{target}` is not a plain variable \
                         (`= name`)"
                    ));
                }
            }
            "in" | "out" => {
                let mapping = if name == "in" {
                    &mut spec.inputs
                } else {
                    &mut spec.outputs
                };
                if get("variables").as_deref() == Some("all") {
                    mapping.all = true;
                } else if let Some(expr) = get("sourceExpression") {
                    spec.unreadable.push(format!(
                        "the `{name}` mapping's sourceExpression `{expr}` is an expression: \
                         map a variable with `source`"
                    ));
                } else if let (Some(source), Some(target)) = (get("source"), get("target")) {
                    mapping.pairs.push((source, target));
                } else if get("businessKey").is_none() {
                    spec.unreadable.push(format!(
                        "an `{name}` mapping names no `source` and `target` (nor variables=\"all\")"
                    ));
                }
            }
            _ => {}
        }
        if !empty {
            depth += 1;
        }
    }
}

/// A variable name: letters, digits, `_`, not starting with a digit.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_of(xml: &str) -> Option<CallSpec> {
        let doc = crate::bpmn::parse(
            std::path::Path::new("t.bpmn"),
            format!(
                r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"><process id="p">{xml}</process></definitions>"#
            )
            .as_bytes(),
        )
        .expect("parses");
        let node = doc.processes[0].nodes.iter().find(|n| n.id == "c")?.clone();
        call_spec(&node)
    }

    #[test]
    fn camunda_in_and_out_mappings() {
        let spec = spec_of(
            r#"<callActivity id="c" calledElement="child"><extensionElements>
            <camunda:in source="amount" target="sum"/><camunda:out variables="all"/>
            </extensionElements></callActivity>"#,
        )
        .unwrap();
        assert_eq!(spec.called, "child");
        assert_eq!(spec.inputs.pairs, vec![("amount".into(), "sum".into())]);
        assert!(!spec.inputs.all);
        assert!(spec.outputs.all);
        assert!(spec.unreadable.is_empty());
        let vars = serde_json::json!({"amount": 3, "other": 1});
        let inputs = spec.inputs.apply(vars.as_object().unwrap());
        assert_eq!(Value::Object(inputs), serde_json::json!({"sum": 3}));
    }

    #[test]
    fn zeebe_called_element_and_io_mapping() {
        let spec = spec_of(
            r#"<callActivity id="c"><extensionElements>
            <zeebe:calledElement processId="child" propagateAllChildVariables="false"/>
            <zeebe:ioMapping><zeebe:input source="= amount" target="amount"/>
            <zeebe:output source="=approved" target="ok"/><zeebe:output source="= a + 1" target="b"/></zeebe:ioMapping>
            </extensionElements></callActivity>"#,
        )
        .unwrap();
        assert_eq!(spec.called, "child");
        assert_eq!(spec.inputs.pairs, vec![("amount".into(), "amount".into())]);
        assert_eq!(spec.outputs.pairs, vec![("approved".into(), "ok".into())]);
        assert!(!spec.outputs.all);
        assert_eq!(spec.unreadable.len(), 1, "{:?}", spec.unreadable);
    }

    #[test]
    fn no_mapping_passes_nothing_and_no_called_element_is_no_call() {
        let spec = spec_of(r#"<callActivity id="c" calledElement="child"/>"#).unwrap();
        assert!(spec.inputs.is_empty() && spec.outputs.is_empty());
        assert!(spec_of(r#"<callActivity id="c"/>"#).is_none());
        let dynamic = spec_of(r#"<callActivity id="c" calledElement="${which}"/>"#).unwrap();
        assert_eq!(dynamic.unreadable.len(), 1);
    }
}
