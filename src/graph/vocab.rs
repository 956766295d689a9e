//! The RDF vocabulary of graph mode: sBPMN's classes and properties, AgentFLOW's extension
//! terms, and cuga-flo's own terms for what neither says (element ids, document order,
//! timers, loops, the flow config). One place for every IRI the mapping writes or reads.

/// sBPMN 2.0 classes (lowerCamel BPMN element names: `task`, `exclusiveGateway`, ...).
pub const SBPMNC: &str = "https://sBPMN.github.io/2.0/classes#";
/// sBPMN 2.0 properties.
pub const SBPMNP: &str = "https://sBPMN.github.io/2.0/properties#";
/// AgentFLOW's extension ontology.
pub const AGENTFLOW: &str = "http://example.org/ontology/agentflow#";
/// cuga-flo's terms.
pub const CF: &str = "urn:cuga-flo:vocab#";
pub const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
pub const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
pub const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// The namespaces the first AgentFLOW version used for the same terms (before it moved to
/// the real sBPMN namespaces); read on import as their current equivalents.
pub const LEGACY_SBPMNC: &str = "http://example.org/ontology/sbpmnc#";
pub const LEGACY_SBPMN: &str = "http://example.org/ontology/sbpmn#";

/// The prefixes written at the top of an export, in order.
pub const PREFIXES: [(&str, &str); 7] = [
    ("rdf", RDF),
    ("rdfs", RDFS),
    ("xsd", XSD),
    ("sbpmnc", SBPMNC),
    ("sbpmnp", SBPMNP),
    ("agentflow", AGENTFLOW),
    ("cf", CF),
];

/// The namespace an app's process, nodes and flows are named in.
pub fn app_namespace(app: &str) -> String {
    format!("urn:cuga-flo:app:{}#", safe(app))
}

/// The named graph an app's process definition goes into (TriG).
pub fn definitions_graph(app: &str) -> String {
    format!("urn:cuga-flo:graph:{}:definitions", safe(app))
}

fn safe(app: &str) -> String {
    app.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

macro_rules! terms {
    ($ns:ident: $($name:ident = $local:literal),* $(,)?) => {
        $(pub const $name: (&str, &str) = ($ns, $local);)*
    };
}

// AgentFLOW.
terms!(AGENTFLOW:
    AGENTIC_PROCESS = "AgenticProcess",
    AGENTIC_TASK = "AgenticTask",
    GUARDRAIL_GATEWAY = "GuardrailGateway",
    PARAM_MAPPING = "ParamMapping",
    OUTPUT_MAPPING = "OutputMapping",
    NEXT_TASK = "nextTask",
    RECIPE = "recipe",
    REQUIRES_APPROVAL = "requiresApproval",
    APPROVAL_TIMEOUT = "approvalTimeout",
    VAR_NAME = "varName",
    OPERATOR = "operator",
    THRESHOLD = "threshold",
    IS_DEFAULT = "isDefault",
    HAS_START_EVENT = "hasStartEvent",
    HAS_END_EVENT = "hasEndEvent",
    HAS_TASK = "hasTask",
    HAS_PARAM_MAPPING = "hasParamMapping",
    HAS_OUTPUT_MAPPING = "hasOutputMapping",
    PARAM_SOURCE = "paramSource",
    PARAM_TARGET = "paramTarget",
    OUTPUT_SOURCE = "outputSource",
    OUTPUT_TARGET = "outputTarget",
    ENGINE_VERSION = "engineVersion",
);

// sBPMN.
terms!(SBPMNC: PROCESS = "process");
terms!(SBPMNP:
    ATTACHED_TO_REF = "attachedToRef",
    CANCEL_ACTIVITY = "cancelActivity",
    CALLED_ELEMENT = "calledElement",
    IS_EXECUTABLE = "isExecutable",
);

// RDF, RDFS.
terms!(RDF: TYPE = "type", JSON = "JSON");
terms!(RDFS: LABEL = "label", COMMENT = "comment");

// cuga-flo.
terms!(CF:
    APP = "app",
    MAIN = "main",
    BPMN_ID = "bpmnId",
    ORDER = "order",
    PARENT = "parent",
    CONDITION = "condition",
    CONDITION_LANGUAGE = "conditionLanguage",
    ROUTING_CONDITION = "routingCondition",
    DECISION = "decision",
    EXPRESSION_LANGUAGE = "expressionLanguage",
    TARGET_NAMESPACE = "targetNamespace",
    EVENT_DEFINITION = "eventDefinition",
    INTERRUPTING = "interrupting",
    TRIGGERED_BY_EVENT = "triggeredByEvent",
    EVENT_REF = "eventRef",
    REF = "ref",
    CODE = "code",
    NAME = "name",
    VALUE = "value",
    PREFIX = "prefix",
    URI = "uri",
    NAMESPACE = "namespace",
    TIMER = "timer",
    TIMER_KIND = "timerKind",
    EXPRESSION = "expression",
    LOOP = "loop",
    SEQUENTIAL = "sequential",
    STANDARD_LOOP = "standardLoop",
    COLLECTION = "collection",
    ELEMENT_VARIABLE = "elementVariable",
    CARDINALITY = "cardinality",
    OUTPUT_COLLECTION = "outputCollection",
    OUTPUT_ELEMENT = "outputElement",
    COMPLETION_CONDITION = "completionCondition",
    LANGUAGE = "language",
    ATTRIBUTE = "attribute",
    EXTENSION_ELEMENTS = "extensionElements",
    PROPERTY = "property",
    ITEM_SUBJECT_REF = "itemSubjectRef",
    FLOW_CONFIG = "flowConfig",
    POLICY_FILE = "policyFile",
    PATH = "path",
    TEXT = "text",
    INSTRUCTION = "instruction",
    POLICY = "policy",
    MODE = "mode",
    CONTROL_POINT = "ControlPoint",
    DECISION_MODE = "decisionMode",
    DECLARES_VARIABLE = "declaresVariable",
    VARIABLE_DECLARATION = "VariableDeclaration",
    INITIAL_VALUE = "initialValue",
);

/// The full IRI of a term.
pub fn iri((ns, local): (&str, &str)) -> String {
    format!("{ns}{local}")
}

/// An IRI read from a graph, with AgentFLOW's first namespaces mapped to their current
/// ones (its edge and annotation terms lived under an `sbpmn:` namespace of its own).
pub fn normalize(iri: &str) -> String {
    if let Some(local) = iri.strip_prefix(LEGACY_SBPMNC) {
        return format!("{SBPMNC}{local}");
    }
    if let Some(local) = iri.strip_prefix(LEGACY_SBPMN) {
        return format!("{AGENTFLOW}{local}");
    }
    if let Some(local) = iri.strip_prefix(SBPMNP)
        && matches!(
            local,
            "nextTask" | "varName" | "operator" | "threshold" | "isDefault"
        )
    {
        return format!("{AGENTFLOW}{local}");
    }
    iri.to_owned()
}
