//! The rewritten model ([`crate::semantics::rewrite`]) in Flowable's dialect: every worker
//! is an **external-worker task** (`flowable:type="external-worker"`) on the instance's own
//! topic (`cuga-flo.${execution.processInstanceId}`, whoever started the instance: cuga-flo
//! or anyone through Flowable's API), whose job cuga-flo acquires over Flowable's REST
//! API, answers through the harness and completes with variables; guards are JUEL expressions on the
//! routing and hook variables. So a Flowable cluster needs no route back to the machine
//! running cuga-flo.
//!
//! Worker tasks are not `exclusive`: acquiring an exclusive job locks the whole instance
//! until the job's continuation has run, which kept the jobs of parallel branches from
//! being acquired (cuga-flo completes one job at a time instead, so continuations do not
//! race at joins).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::bpmn::Process;
use crate::bridge::FlowAnnotations;
use crate::journal::event::CatchKind;
use crate::semantics::dialect::{Dialect, name_attribute, write_scope};
use crate::semantics::rewrite::{self, Element, Guard, RNode, Rewritten, Thrown, xml_escape};

/// The `<error>` and `<escalation>` elements written for the codes the model's events
/// throw and catch: `(kind, code)` → the id cuga-flo gives it (`cuga_error__N`,
/// `cuga_escalation__N`), so that no id of the model can be mistaken for a code.
type Codes = BTreeMap<(&'static str, String), String>;

/// The multi-instance activities of the model: id → (sequential, its step's variable).
type Multis = BTreeMap<String, (bool, String)>;

/// The process rewritten for Flowable.
#[derive(Debug, Clone)]
pub struct Augmented {
    /// BPMN 2.0 XML with Flowable's extensions.
    pub xml: String,
    /// What each worker stands for.
    pub rewritten: Rewritten,
}

/// Rewrite `process` for Flowable under `definition_key`, with the hooks of
/// `annotations`. `Err` lists what cannot run there ([`rewrite::unsupported`]).
pub fn augment(
    process: &Process,
    annotations: &FlowAnnotations,
    definition_key: &str,
) -> Result<Augmented, Vec<(String, String)>> {
    let rewritten = rewrite::rewrite(process, annotations, crate::app::EngineKind::Flowable)?;
    let xml = write_xml(process, definition_key, &rewritten);
    Ok(Augmented { xml, rewritten })
}

fn write_xml(process: &Process, key: &str, rewritten: &Rewritten) -> String {
    let children = rewritten.scopes();
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" \
         xmlns:flowable=\"http://flowable.org/bpmn\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         targetNamespace=\"https://github.com/cuga-project/cuga-flo\">\n",
    );
    let name = process
        .name
        .as_deref()
        .map(|n| format!(" name=\"{}\"", xml_escape(n)))
        .unwrap_or_default();
    let _ = writeln!(
        xml,
        "  <process id=\"{}\"{name} isExecutable=\"true\">",
        xml_escape(key)
    );
    let mut codes = Codes::new();
    for n in &rewritten.nodes {
        let (kind, code) = match &n.element {
            Element::Throw { thrown, .. }
            | Element::Boundary { thrown, .. }
            | Element::TriggerStart { thrown, .. } => match &thrown.code {
                Some(code) => (thrown.kind.as_str(), code),
                None => continue,
            },
            Element::Catch { kind, name }
            | Element::CatchBoundary { kind, name, .. }
            | Element::CatchStart { kind, name, .. } => (kind.as_str(), name),
            _ => continue,
        };
        let next = codes.len() + 1;
        codes
            .entry((kind, code.clone()))
            .or_insert_with(|| format!("{}{kind}__{next}", rewrite::PREFIX));
    }
    // The multi-instance sub-processes: each runs as many instances as its step says.
    let multis: Multis = rewritten
        .roles
        .values()
        .filter_map(|r| match r {
            rewrite::Role::Multi { node, variable, .. } => {
                let sequential = matches!(
                    process
                        .node(node)
                        .and_then(|n| n.looping.as_ref())
                        .map(|l| l.kind),
                    Some(crate::bpmn::LoopKind::MultiInstance { sequential: true })
                );
                Some((node.clone(), (sequential, variable.clone())))
            }
            _ => None,
        })
        .collect();
    let dialect = Flowable {
        codes: &codes,
        multis: &multis,
    };
    write_scope(&dialect, &mut xml, &children, None, 2);
    xml.push_str("  </process>\n");
    for ((kind, code), id) in &codes {
        let code = xml_escape(code);
        let _ = match *kind {
            // Flowable throws no signal or message itself: cuga-flo delivers each to the
            // execution of a catch of the run's own instance (Flowable takes an outside
            // delivery only for a signal of global scope, the default).
            "signal" | "message" => writeln!(xml, "  <{kind} id=\"{id}\" name=\"{code}\"/>"),
            _ => writeln!(xml, "  <{kind} id=\"{id}\" {kind}Code=\"{code}\"/>"),
        };
    }
    xml.push_str("</definitions>\n");
    xml
}

/// Flowable's dialect: the codes' elements and the multi-instance sub-processes.
struct Flowable<'a> {
    codes: &'a Codes,
    multis: &'a Multis,
}

impl Dialect for Flowable<'_> {
    fn prefix(&self) -> &'static str {
        ""
    }

    fn terminate(&self, all: bool) -> String {
        format!("<terminateEventDefinition flowable:terminateAll=\"{all}\"/>")
    }

    fn worker(&self, xml: &mut String, n: &RNode, pad: &str, multi: Option<(bool, &str)>) {
        let id = xml_escape(&n.id);
        let name = name_attribute(n);
        let open = format!(
            "{pad}<serviceTask id=\"{id}\"{name} flowable:type=\"external-worker\" flowable:topic=\"cuga-flo.${{execution.processInstanceId}}\" flowable:exclusive=\"false\""
        );
        let _ = match multi {
            None => writeln!(xml, "{open}/>"),
            // cuga-flo evaluates what the activity runs over and its completion condition
            // (in the step in front of it, and with each instance's answer).
            Some((sequential, variable)) => writeln!(
                xml,
                "{open}>\n{pad}  {}\n{pad}</serviceTask>",
                multi_characteristics(sequential, variable)
            ),
        };
    }

    /// Its reference to the code's element, if any.
    fn thrown(&self, thrown: &Thrown) -> String {
        let kind = thrown.kind.as_str();
        let reference = thrown
            .code
            .as_ref()
            .and_then(|code| self.codes.get(&(kind, code.clone())))
            .map(|id| format!(" {kind}Ref=\"{id}\""))
            .unwrap_or_default();
        format!("<{kind}EventDefinition{reference}/>")
    }

    fn caught(&self, kind: CatchKind, name: &str, _start: bool) -> String {
        let kind = kind.as_str();
        let id = self
            .codes
            .get(&(kind, name.to_string()))
            .cloned()
            .unwrap_or_default();
        format!("<{kind}EventDefinition {kind}Ref=\"{id}\"/>")
    }

    fn timer(&self, _node: &RNode, timer: &crate::bpmn::Timer) -> String {
        timer_definition(timer)
    }

    /// As many instances as cuga-flo's step in front of it says; cuga-flo evaluates the
    /// completion condition where each instance ends.
    fn loop_of(&self, n: &RNode) -> Option<String> {
        let (sequential, variable) = self.multis.get(&n.id)?;
        Some(multi_characteristics(*sequential, variable))
    }

    fn condition(&self, guard: &Guard) -> String {
        format!(
            "<conditionExpression xsi:type=\"tFormalExpression\"><![CDATA[{}]]></conditionExpression>",
            juel(guard)
        )
    }
}

/// A timer's `<timerEventDefinition>` as the model writes it: Flowable evaluates a
/// `${name}` expression itself when the timer starts, as the native engine does.
/// (Flowable counts a month and a year by the calendar where the native engine counts 30
/// and 365 days; cuga-flo fires the timer when Flowable's job says it is due.)
fn timer_definition(timer: &crate::bpmn::Timer) -> String {
    match timer.kind {
        Some(kind) => format!(
            "<timerEventDefinition><{tag}>{}</{tag}></timerEventDefinition>",
            xml_escape(&timer.expression),
            tag = kind.tag()
        ),
        None => "<timerEventDefinition/>".to_string(),
    }
}

/// The loop characteristics of a multi-instance activity whose step sets `variable`:
/// that many instances, ended early when cuga-flo found the completion condition true.
fn multi_characteristics(sequential: bool, variable: &str) -> String {
    let [_, _, _, done] = rewrite::multi_variables(variable);
    format!(
        "<multiInstanceLoopCharacteristics isSequential=\"{sequential}\">\
         <loopCardinality>${{{variable}}}</loopCardinality>\
         <completionCondition>${{{done}}}</completionCondition>\
         </multiInstanceLoopCharacteristics>"
    )
}

/// A guard in Flowable's expression language.
fn juel(guard: &Guard) -> String {
    match guard {
        Guard::Routed { variable, flow } => format!("${{{variable}.contains(',{flow},')}}"),
        Guard::Hooked {
            variable,
            terminate: true,
        } => format!("${{{variable} == 'terminate'}}"),
        Guard::Hooked {
            variable,
            terminate: false,
        } => format!("${{{variable} != 'terminate'}}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::rewrite::Role;

    fn parse(xml: &str) -> Process {
        let doc = crate::bpmn::parse(std::path::Path::new("t.bpmn"), xml.as_bytes()).unwrap();
        doc.main_process().unwrap().clone()
    }

    const MODEL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
        <process id="P"><startEvent id="s"/><task id="a"/><exclusiveGateway id="g" default="f3"/>
          <userTask id="b"/><endEvent id="e1"/><endEvent id="e2"/>
          <sequenceFlow id="f1" sourceRef="s" targetRef="a"/>
          <sequenceFlow id="f2" sourceRef="a" targetRef="g"/>
          <sequenceFlow id="f3" sourceRef="g" targetRef="b"><conditionExpression>${x} &gt; 1</conditionExpression></sequenceFlow>
          <sequenceFlow id="f4" sourceRef="g" targetRef="e2"/>
          <sequenceFlow id="f5" sourceRef="b" targetRef="e1"/>
        </process></definitions>"#;

    #[test]
    fn control_points_become_worker_tasks_and_the_result_parses_back() {
        let process = parse(MODEL);
        let annotations = FlowAnnotations {
            hooks: [("f1".to_string(), "screen".to_string())].into(),
            ..FlowAnnotations::default()
        };
        let aug = augment(&process, &annotations, "P").unwrap();
        let back = parse(&aug.xml);
        let ids: Vec<&str> = back.nodes.iter().map(|n| n.id.as_str()).collect();
        for id in [
            "a",
            "b",
            "cuga_route__g",
            "cuga_hook__f1",
            "cuga_hookgw__f1",
            "cuga_terminate__f1",
        ] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        assert_eq!(aug.rewritten.roles["a"], Role::Task("a".into()));
        assert_eq!(
            aug.rewritten.roles["cuga_route__g"],
            Role::Route {
                gateway: "g".into(),
                variable: "cugaRoute1".into()
            }
        );
        assert!(
            matches!(&aug.rewritten.roles["cuga_hook__f1"], Role::Hook { hook, .. } if hook == "screen")
        );
        // The hooked flow keeps its id and leads to the hook task; the gateway is entered
        // through its routing task; cuga-flo's condition never reaches Flowable.
        let f1 = back.flows.iter().find(|f| f.id == "f1").unwrap();
        assert_eq!(f1.target, "cuga_hook__f1");
        let f2 = back.flows.iter().find(|f| f.id == "f2").unwrap();
        assert_eq!(f2.target, "cuga_route__g");
        let f3 = back.flows.iter().find(|f| f.id == "f3").unwrap();
        assert_eq!(
            f3.condition.as_ref().map(|c| c.body.as_str()),
            Some("${cugaRoute1.contains(',f3,')}")
        );
        assert_eq!(aug.rewritten.entry["g"], "cuga_route__g");
        assert!(aug.xml.contains("flowable:type=\"external-worker\""));
        assert!(!aug.xml.contains("${x}"));
        assert_eq!(aug.rewritten.original("cuga_hook__f1"), None);
        assert_eq!(aug.rewritten.original("b"), Some("b"));
    }

    #[test]
    fn error_events_are_kept_with_their_codes_and_an_uncaught_error_end_is_a_worker() {
        let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
        <process id="P"><startEvent id="s"/>
          <subProcess id="sub"><startEvent id="ss"/><endEvent id="ee"><errorEventDefinition errorRef="E1"/></endEvent>
            <sequenceFlow id="i1" sourceRef="ss" targetRef="ee"/></subProcess>
          <boundaryEvent id="b" attachedToRef="sub"><errorEventDefinition errorRef="E1"/></boundaryEvent>
          <task id="fix"/><endEvent id="e"/><endEvent id="lost"><errorEventDefinition errorRef="E2"/></endEvent>
          <sequenceFlow id="f1" sourceRef="s" targetRef="sub"/>
          <sequenceFlow id="f2" sourceRef="sub" targetRef="lost"/>
          <sequenceFlow id="f3" sourceRef="b" targetRef="fix"/>
          <sequenceFlow id="f4" sourceRef="fix" targetRef="e"/>
        </process>
        <error id="E1" errorCode="CHECK_FAILED"/><error id="E2" errorCode="GONE"/></definitions>"#;
        let aug = augment(&parse(xml), &FlowAnnotations::default(), "P").unwrap();
        assert!(
            aug.xml
                .contains(r#"<error id="cuga_error__1" errorCode="CHECK_FAILED"/>"#),
            "{}",
            aug.xml
        );
        assert!(aug.xml.contains(
            r#"<boundaryEvent id="b" attachedToRef="sub" cancelActivity="true"><errorEventDefinition errorRef="cuga_error__1"/></boundaryEvent>"#
        ));
        assert!(aug.xml.contains(
            r#"<endEvent id="ee"><errorEventDefinition errorRef="cuga_error__1"/></endEvent>"#
        ));
        // Nothing catches `lost`: cuga-flo fails the run there.
        assert_eq!(
            aug.rewritten.roles["lost"],
            Role::Uncaught {
                node: "lost".into(),
                code: Some("GONE".into())
            }
        );
        let back = parse(&aug.xml);
        assert!(back.node("b").is_some() && back.node("lost").is_some());
    }

    #[test]
    fn a_multi_instance_sub_process_is_flowables_with_a_step_in_front_and_a_worker_before_its_end()
    {
        let process = parse(
            r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <process id="P"><startEvent id="s"/>
              <subProcess id="Sub">
                <multiInstanceLoopCharacteristics isSequential="true"><loopDataInputRef>lines</loopDataInputRef><inputDataItem name="line"/></multiInstanceLoopCharacteristics>
                <startEvent id="ss"/><task id="t"/><endEvent id="se"/>
                <sequenceFlow id="i1" sourceRef="ss" targetRef="t"/>
                <sequenceFlow id="i2" sourceRef="t" targetRef="se"/>
              </subProcess>
              <endEvent id="e"/>
              <sequenceFlow id="f1" sourceRef="s" targetRef="Sub"/>
              <sequenceFlow id="f2" sourceRef="Sub" targetRef="e"/>
            </process></definitions>"#,
        );
        let aug = augment(&process, &FlowAnnotations::default(), "P").unwrap();
        assert_eq!(
            aug.rewritten.roles["cuga_multi__Sub"],
            Role::Multi {
                step: "cuga_multi__Sub".into(),
                node: "Sub".into(),
                variable: "cugaMulti1".into()
            }
        );
        assert_eq!(
            aug.rewritten.roles["cuga_instanceend__se"],
            Role::InstanceEnd {
                worker: "cuga_instanceend__se".into(),
                node: "Sub".into(),
                variable: "cugaMulti1".into()
            }
        );
        assert!(
            aug.xml.contains(
                "<subProcess id=\"Sub\">\n      <multiInstanceLoopCharacteristics isSequential=\"true\"><loopCardinality>${cugaMulti1}</loopCardinality><completionCondition>${cugaMulti1Done}</completionCondition></multiInstanceLoopCharacteristics>"
            ),
            "{}",
            aug.xml
        );
        let back = parse(&aug.xml);
        assert!(back.node("Sub").unwrap().looping.is_some());
        let into = |target: &str| -> Vec<String> {
            back.flows
                .iter()
                .filter(|f| f.target == target)
                .map(|f| f.source.clone())
                .collect()
        };
        assert_eq!(into("Sub"), ["cuga_multi__Sub"]);
        assert_eq!(into("cuga_instanceend__se"), ["t"]);
        assert_eq!(into("se"), ["cuga_instanceend__se"]);
        assert_eq!(
            back.node("cuga_instanceend__se").unwrap().parent.as_deref(),
            Some("Sub")
        );
    }

    #[test]
    fn reserved_ids_and_two_start_events_are_refused() {
        let xml = MODEL.replace(
            "<task id=\"a\"/>",
            "<task id=\"a\"/><startEvent id=\"cuga_x\"/>",
        );
        let problems = augment(&parse(&xml), &FlowAnnotations::default(), "P").unwrap_err();
        let text = format!("{problems:?}");
        assert!(text.contains("reserved"), "{text}");
        assert!(text.contains("one start event"), "{text}");
    }

    #[test]
    fn timers_are_kept_as_written_and_a_receive_task_waits_as_a_message_catch() {
        let process = parse(
            r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <message id="M" name="Reply"/>
            <process id="P"><startEvent id="s"/><eventBasedGateway id="g"/>
              <receiveTask id="r" messageRef="M"/>
              <intermediateCatchEvent id="t"><timerEventDefinition><timeDuration>${wait}</timeDuration></timerEventDefinition></intermediateCatchEvent>
              <task id="a"/><endEvent id="e"/>
              <boundaryEvent id="late" attachedToRef="a" cancelActivity="false"><timerEventDefinition><timeDate>2030-01-01T00:00:00Z</timeDate></timerEventDefinition></boundaryEvent>
              <sequenceFlow id="f1" sourceRef="s" targetRef="g"/>
              <sequenceFlow id="f2" sourceRef="g" targetRef="r"/>
              <sequenceFlow id="f3" sourceRef="g" targetRef="t"/>
              <sequenceFlow id="f4" sourceRef="r" targetRef="a"/>
              <sequenceFlow id="f5" sourceRef="t" targetRef="a"/>
              <sequenceFlow id="f6" sourceRef="a" targetRef="e"/>
              <sequenceFlow id="f7" sourceRef="late" targetRef="e"/>
            </process></definitions>"#,
        );
        let aug = augment(&process, &FlowAnnotations::default(), "P").unwrap();
        assert!(
            aug.xml.contains(
                "<intermediateCatchEvent id=\"t\"><timerEventDefinition><timeDuration>${wait}</timeDuration></timerEventDefinition></intermediateCatchEvent>"
            ),
            "{}",
            aug.xml
        );
        assert!(aug.xml.contains("<boundaryEvent id=\"late\" attachedToRef=\"a\" cancelActivity=\"false\"><timerEventDefinition><timeDate>2030-01-01T00:00:00Z</timeDate>"), "{}", aug.xml);
        assert!(
            aug.xml
                .contains("<intermediateCatchEvent id=\"r\"><messageEventDefinition"),
            "{}",
            aug.xml
        );
        // The gateway is Flowable's: it races the catch and the timer.
        assert!(
            aug.xml.contains("<eventBasedGateway id=\"g\"/>"),
            "{}",
            aug.xml
        );
        assert!(!aug.rewritten.roles.contains_key("r"));
        let back = parse(&aug.xml);
        assert!(back.node("t").and_then(|n| n.timer.as_ref()).is_some());
    }
}
