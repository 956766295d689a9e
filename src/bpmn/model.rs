//! The BPMN 2.0 model cuga-flo works with: one source of truth for processes, nodes and
//! sequence flows. Produced by [`super::parse`]; read by the checks, the engines and the
//! bridge. Nodes of embedded sub-processes are kept in the same flat list as the
//! top-level nodes, each with the id of the sub-process that contains it (`parent`).

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use crate::source::{SourceFile, Span};

/// A parsed `<definitions>` document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The text that was parsed (UTF-8, after transcoding from the declared encoding).
    pub source: SourceFile,
    /// The encoding the XML declaration named (`UTF-8` when it named none).
    pub encoding: String,
    pub id: Option<String>,
    pub target_namespace: Option<String>,
    /// `definitions@exporter` and `@exporterVersion`, when present.
    pub exporter: Option<String>,
    pub exporter_version: Option<String>,
    /// `definitions@expressionLanguage`, the default language of condition expressions.
    pub expression_language: Option<String>,
    /// Every `<process>` in document order.
    pub processes: Vec<std::sync::Arc<Process>>,
    /// Pools of collaborations (metadata only).
    pub participants: Vec<Participant>,
    /// Message flows between pools (metadata only).
    pub message_flows: Vec<MessageFlow>,
    /// The process chosen to run ([`Document::choose`]), an index into `processes`.
    pub chosen: Option<usize>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Process {
    pub id: String,
    pub name: Option<String>,
    pub is_executable: Option<bool>,
    #[serde(skip)]
    pub span: Span,
    /// All flow nodes, including those nested in sub-processes, in document order.
    pub nodes: Vec<Node>,
    /// All sequence flows, including those nested in sub-processes, in document order.
    pub flows: Vec<Flow>,
    pub lanes: Vec<Lane>,
    /// `<property>` children of the process (the data a Kogito model declares).
    pub properties: Vec<Property>,
    /// Raw XML of `<extensionElements>`, kept as written.
    pub extension_elements: Option<String>,
    pub documentation: Option<String>,
    /// Positions of `nodes` and `flows` by id, built on the first [`Process::node`] or
    /// [`Process::flow`] lookup, so a lookup costs the same at 10 and at 100,000 nodes.
    #[serde(skip)]
    pub ids: IdIndex,
}

/// Where each node and flow of a [`Process`] is in its lists, by id (the first of an id,
/// as a scan would find it). Built once, on first use; a lookup made after the lists
/// changed length (the parser still adding to them) scans instead, so it is never wrong.
#[derive(Debug, Clone, Default)]
pub struct IdIndex(OnceLock<IdPositions>);

#[derive(Debug, Clone)]
struct IdPositions {
    nodes: foldhash::HashMap<Box<str>, usize>,
    flows: foldhash::HashMap<Box<str>, usize>,
    /// The lengths of the lists when the maps were built.
    lens: (usize, usize),
}

impl IdIndex {
    fn positions(&self, process: &Process) -> Option<&IdPositions> {
        let lens = (process.nodes.len(), process.flows.len());
        let built = self.0.get_or_init(|| {
            let mut nodes = foldhash::HashMap::with_capacity_and_hasher(
                process.nodes.len(),
                Default::default(),
            );
            for (i, n) in process.nodes.iter().enumerate() {
                nodes.entry(n.id.as_str().into()).or_insert(i);
            }
            let mut flows = foldhash::HashMap::with_capacity_and_hasher(
                process.flows.len(),
                Default::default(),
            );
            for (i, f) in process.flows.iter().enumerate() {
                flows.entry(f.id.as_str().into()).or_insert(i);
            }
            IdPositions { nodes, flows, lens }
        });
        (built.lens == lens).then_some(built)
    }
}

/// A flow node: activity, event or gateway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Node {
    pub id: String,
    pub name: Option<String>,
    pub kind: NodeKind,
    /// The span of the element's start tag.
    #[serde(skip)]
    pub span: Span,
    /// The id of the sub-process that contains this node; `None` at process level.
    pub parent: Option<String>,
    /// The `default` attribute (gateways, activities).
    pub default_flow: Option<String>,
    /// Every attribute of the element as written (qualified names, e.g. `flowable:class`).
    pub attributes: Attributes,
    /// Raw XML of `<extensionElements>`, kept as written.
    pub extension_elements: Option<String>,
    pub documentation: Option<String>,
    /// A timer event's `<timerEventDefinition>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<super::Timer>,
    /// An activity's `<multiInstanceLoopCharacteristics>` or `<standardLoopCharacteristics>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looping: Option<Looping>,
    /// An error or escalation event's `errorRef` / `escalationRef`, resolved: what it
    /// throws, or what it catches (`None` on a catching event: every error, or every
    /// escalation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_ref: Option<EventRef>,
    /// A script task's `<script>`, as written (trimmed; `None`: no script, or an empty
    /// one). Its language is the `scriptFormat` attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
}

/// The `<error>` or `<escalation>` an event definition refers to (`errorRef`,
/// `escalationRef`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EventRef {
    /// The referenced element's id, as written.
    pub reference: String,
    /// Its `errorCode` / `escalationCode`. A catching event whose reference has no code
    /// catches every code, as one without a reference does.
    pub code: Option<String>,
    /// Its `name`.
    pub name: Option<String>,
    /// A message's correlation key: the expression (FEEL, e.g. `= orderId`) whose value,
    /// taken when a catch starts waiting, a delivery must name (Camunda 8's
    /// `<zeebe:subscription correlationKey>` on the `<message>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_key: Option<String>,
}

impl EventRef {
    /// What a thrown error or escalation is called in messages: its code, else its name,
    /// else the referenced id.
    pub fn label(&self) -> &str {
        self.code
            .as_deref()
            .or(self.name.as_deref())
            .unwrap_or(&self.reference)
    }
}

/// How an activity repeats, as its loop characteristics say.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Looping {
    pub kind: LoopKind,
    /// The loop characteristics element.
    #[serde(skip)]
    pub span: Span,
    /// What a multi-instance activity runs over and collects (empty for a standard loop).
    #[serde(default, skip_serializing_if = "MultiInstance::is_empty")]
    pub multi: MultiInstance,
}

/// What a `<multiInstanceLoopCharacteristics>` says, whichever dialect wrote it: BPMN's
/// own elements (`loopCardinality`, `loopDataInputRef` / `inputDataItem`,
/// `loopDataOutputRef` / `outputDataItem`, `completionCondition`), Camunda 7's, Flowable's
/// and Activiti's `collection` / `elementVariable` attributes, and Zeebe's
/// `zeebe:loopCharacteristics` (`inputCollection`, `inputElement`, `outputCollection`,
/// `outputElement`). Expressions are kept as written (a variable name, `${...}`, or FEEL's
/// `= ...`); the engine evaluates them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MultiInstance {
    /// The list to run one instance per item of: a variable name or an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// The instance-local variable holding the instance's item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_variable: Option<String>,
    /// How many instances, when there is no collection: a number or an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cardinality: Option<String>,
    /// The variable that receives the instances' outputs as a list, in item order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_collection: Option<String>,
    /// What each instance contributes to the output collection: an instance-local
    /// variable name, or an expression over the instance's variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_element: Option<String>,
    /// Ends the activity early once TRUE after an instance completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_condition: Option<String>,
    /// The `language` of the cardinality and completion condition (else the document's
    /// `expressionLanguage`), as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

/// The variables every instance of a multi-instance activity sees (its completion
/// condition too), beside its element variable: the standard names and Zeebe's.
pub const MULTI_INSTANCE_VARIABLES: [&str; 7] = [
    "loopCounter",
    "nrOfInstances",
    "nrOfCompletedInstances",
    "nrOfActiveInstances",
    "numberOfInstances",
    "numberOfCompletedInstances",
    "numberOfActiveInstances",
];

impl MultiInstance {
    pub fn is_empty(&self) -> bool {
        *self == MultiInstance::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopKind {
    /// `<standardLoopCharacteristics>`: the activity repeats while a condition holds.
    Standard,
    /// `<multiInstanceLoopCharacteristics>`: one instance per item or per count.
    MultiInstance { sequential: bool },
}

impl LoopKind {
    pub fn tag(self) -> &'static str {
        match self {
            LoopKind::Standard => "standardLoopCharacteristics",
            LoopKind::MultiInstance { .. } => "multiInstanceLoopCharacteristics",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Task(TaskKind),
    SubProcess(SubProcessKind),
    CallActivity {
        called_element: Option<String>,
    },
    StartEvent {
        definitions: Vec<EventDefinition>,
        interrupting: bool,
    },
    EndEvent {
        definitions: Vec<EventDefinition>,
    },
    IntermediateCatchEvent {
        definitions: Vec<EventDefinition>,
    },
    IntermediateThrowEvent {
        definitions: Vec<EventDefinition>,
    },
    BoundaryEvent {
        attached_to: String,
        cancel_activity: bool,
        definitions: Vec<EventDefinition>,
    },
    Gateway(GatewayKind),
    /// A flow node of the BPMN namespace cuga-flo cannot run (e.g. `choreographyTask`),
    /// kept so that flows touching it are not dangling; `validate` rejects it.
    Unsupported {
        tag: String,
    },
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    Task,
    User,
    Service,
    Script,
    Send,
    Receive,
    Manual,
    BusinessRule,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SubProcessKind {
    /// `<subProcess>`; `triggered_by_event` marks an event sub-process.
    Embedded {
        triggered_by_event: bool,
    },
    Transaction,
    AdHoc,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum GatewayKind {
    Exclusive,
    Parallel,
    Inclusive,
    EventBased,
    Complex,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum EventDefinition {
    Message,
    Timer,
    Error,
    Signal,
    Escalation,
    Compensate,
    Conditional,
    Link,
    Cancel,
    Terminate,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Flow {
    pub id: String,
    pub name: Option<String>,
    pub source: String,
    pub target: String,
    pub condition: Option<Condition>,
    #[serde(skip)]
    pub span: Span,
    /// The id of the sub-process that contains this flow; `None` at process level.
    pub parent: Option<String>,
}

/// A `<conditionExpression>` as written: its language (the element's `language`
/// attribute, else the document's `expressionLanguage`) and its trimmed text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Condition {
    pub language: Option<String>,
    pub body: String,
    /// The span of the expression's text (or of the element when the text is empty).
    #[serde(skip)]
    pub span: Span,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Lane {
    pub id: String,
    pub name: Option<String>,
    pub flow_node_refs: Vec<String>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Property {
    pub id: String,
    pub name: Option<String>,
    pub item_subject_ref: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Participant {
    pub id: String,
    pub name: Option<String>,
    pub process_ref: Option<String>,
}

#[derive(Debug, Clone)]
pub struct MessageFlow {
    pub id: String,
    pub name: Option<String>,
    pub source: String,
    pub target: String,
}

impl TaskKind {
    /// The element's local name (`userTask`, ...).
    pub fn tag(self) -> &'static str {
        match self {
            TaskKind::Task => "task",
            TaskKind::User => "userTask",
            TaskKind::Service => "serviceTask",
            TaskKind::Script => "scriptTask",
            TaskKind::Send => "sendTask",
            TaskKind::Receive => "receiveTask",
            TaskKind::Manual => "manualTask",
            TaskKind::BusinessRule => "businessRuleTask",
        }
    }
}

impl GatewayKind {
    pub fn tag(self) -> &'static str {
        match self {
            GatewayKind::Exclusive => "exclusiveGateway",
            GatewayKind::Parallel => "parallelGateway",
            GatewayKind::Inclusive => "inclusiveGateway",
            GatewayKind::EventBased => "eventBasedGateway",
            GatewayKind::Complex => "complexGateway",
        }
    }
}

impl NodeKind {
    /// The element's local name as it appears in BPMN XML.
    pub fn tag(&self) -> &str {
        match self {
            NodeKind::Task(t) => t.tag(),
            NodeKind::SubProcess(SubProcessKind::Embedded { .. }) => "subProcess",
            NodeKind::SubProcess(SubProcessKind::Transaction) => "transaction",
            NodeKind::SubProcess(SubProcessKind::AdHoc) => "adHocSubProcess",
            NodeKind::CallActivity { .. } => "callActivity",
            NodeKind::StartEvent { .. } => "startEvent",
            NodeKind::EndEvent { .. } => "endEvent",
            NodeKind::IntermediateCatchEvent { .. } => "intermediateCatchEvent",
            NodeKind::IntermediateThrowEvent { .. } => "intermediateThrowEvent",
            NodeKind::BoundaryEvent { .. } => "boundaryEvent",
            NodeKind::Gateway(g) => g.tag(),
            NodeKind::Unsupported { tag } => tag,
        }
    }

    pub fn is_task(&self) -> bool {
        matches!(self, NodeKind::Task(_))
    }

    pub fn is_gateway(&self) -> bool {
        matches!(self, NodeKind::Gateway(_))
    }

    pub fn gateway(&self) -> Option<GatewayKind> {
        match self {
            NodeKind::Gateway(g) => Some(*g),
            _ => None,
        }
    }

    /// Activities: tasks, sub-processes and call activities.
    pub fn is_activity(&self) -> bool {
        matches!(
            self,
            NodeKind::Task(_) | NodeKind::SubProcess(_) | NodeKind::CallActivity { .. }
        )
    }

    pub fn is_start_event(&self) -> bool {
        matches!(self, NodeKind::StartEvent { .. })
    }

    pub fn is_end_event(&self) -> bool {
        matches!(self, NodeKind::EndEvent { .. })
    }

    pub fn event_definitions(&self) -> &[EventDefinition] {
        match self {
            NodeKind::StartEvent { definitions, .. }
            | NodeKind::EndEvent { definitions }
            | NodeKind::IntermediateCatchEvent { definitions }
            | NodeKind::IntermediateThrowEvent { definitions }
            | NodeKind::BoundaryEvent { definitions, .. } => definitions,
            _ => &[],
        }
    }
}

impl Document {
    /// The process an app runs: the one [`Document::choose`] chose, else the only
    /// [`Document::runnable`] process, else the first process that has any flow node,
    /// else the first process.
    pub fn main_process(&self) -> Option<&Process> {
        self.main_shared().map(|p| &**p)
    }

    /// [`Document::main_process`], shared (a run holds it without copying it).
    pub fn main_shared(&self) -> Option<&Arc<Process>> {
        if let Some(chosen) = self.chosen.and_then(|i| self.processes.get(i)) {
            return Some(chosen);
        }
        match self.runnable_shared().as_slice() {
            [only] => Some(*only),
            _ => self
                .processes
                .iter()
                .find(|p| p.is_executable == Some(true) && !p.nodes.is_empty())
                .or_else(|| self.processes.iter().find(|p| !p.nodes.is_empty()))
                .or_else(|| self.processes.first()),
        }
    }

    /// [`Document::runnable`], shared.
    fn runnable_shared(&self) -> Vec<&Arc<Process>> {
        let with_nodes = || self.processes.iter().filter(|p| !p.nodes.is_empty());
        for wanted in [Some(true), None, Some(false)] {
            let found: Vec<&Arc<Process>> =
                with_nodes().filter(|p| p.is_executable == wanted).collect();
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// The processes that could be the one this file runs, in document order: those
    /// marked `isExecutable="true"`; when none is, those that do not say (BPMN leaves
    /// the attribute optional); when every process says `false`, those too, as a single
    /// documented process is still what the file is about. Processes without flow
    /// nodes (a pool's empty black box) never run.
    pub fn runnable(&self) -> Vec<&Process> {
        self.runnable_shared().into_iter().map(|p| &**p).collect()
    }

    /// Make the process `id` the one this file runs; false when there is none.
    pub fn choose(&mut self, id: &str) -> bool {
        self.chosen = self.processes.iter().position(|p| p.id == id);
        self.chosen.is_some()
    }

    /// All nodes of all processes.
    pub fn all_nodes(&self) -> impl Iterator<Item = &Node> {
        self.processes.iter().flat_map(|p| p.nodes.iter())
    }

    /// All sequence flows of all processes.
    pub fn all_flows(&self) -> impl Iterator<Item = &Flow> {
        self.processes.iter().flat_map(|p| p.flows.iter())
    }
}

impl Process {
    /// A display name: the name, else the id.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }

    /// The node `id` (the first, if the id is duplicated).
    pub fn node(&self, id: &str) -> Option<&Node> {
        match self.ids.positions(self) {
            Some(at) => match at.nodes.get(id).map(|&i| &self.nodes[i]) {
                Some(n) if n.id == id => Some(n),
                Some(_) => self.nodes.iter().find(|n| n.id == id),
                None => None,
            },
            None => self.nodes.iter().find(|n| n.id == id),
        }
    }

    /// The sequence flow `id` (the first, if the id is duplicated).
    pub fn flow(&self, id: &str) -> Option<&Flow> {
        match self.ids.positions(self) {
            Some(at) => match at.flows.get(id).map(|&i| &self.flows[i]) {
                Some(f) if f.id == id => Some(f),
                Some(_) => self.flows.iter().find(|f| f.id == id),
                None => None,
            },
            None => self.flows.iter().find(|f| f.id == id),
        }
    }

    pub fn outgoing<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a Flow> + 'a {
        self.flows.iter().filter(move |f| f.source == node)
    }

    pub fn incoming<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a Flow> + 'a {
        self.flows.iter().filter(move |f| f.target == node)
    }

    /// Nodes directly inside `scope` (`None`: the process level).
    pub fn children<'a>(&'a self, scope: Option<&'a str>) -> impl Iterator<Item = &'a Node> + 'a {
        self.nodes
            .iter()
            .filter(move |n| n.parent.as_deref() == scope)
    }

    pub fn tasks(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.kind.is_task())
    }

    pub fn gateways(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.kind.is_gateway())
    }

    pub fn start_events(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.kind.is_start_event())
    }

    pub fn end_events(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.kind.is_end_event())
    }

    /// Boundary events attached to `activity`.
    pub fn boundary_events<'a>(&'a self, activity: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.nodes.iter().filter(move |n| {
            matches!(&n.kind, NodeKind::BoundaryEvent { attached_to, .. } if attached_to == activity)
        })
    }
}

impl Node {
    /// A display name: the name, else the id.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }
}

/// What removing `root` from a process takes with it (REMOVE_NODE, on the engine's live
/// topology and in the guarantee proof alike): `root`, the nodes nested in it at any depth
/// and the boundary events attached to any of them. `nodes` yields each node's id, parent
/// and kind.
pub fn removal_closure<'a, I>(root: &str, nodes: I) -> BTreeSet<String>
where
    I: IntoIterator<Item = (&'a str, Option<&'a str>, &'a NodeKind)> + Clone,
{
    let mut gone = BTreeSet::from([root.to_string()]);
    loop {
        let more: Vec<String> = nodes
            .clone()
            .into_iter()
            .filter(|(id, _, _)| !gone.contains(*id))
            .filter(|(_, parent, kind)| {
                parent.is_some_and(|p| gone.contains(p))
                    || matches!(kind, NodeKind::BoundaryEvent { attached_to, .. } if gone.contains(attached_to))
            })
            .map(|(id, _, _)| id.to_string())
            .collect();
        if more.is_empty() {
            return gone;
        }
        gone.extend(more);
    }
}

/// The attributes of an element as written (qualified names, values unescaped), in the
/// order of their names: one string holding `name NUL value NUL ...` (neither a name nor
/// a value can hold NUL, which is not an XML character), so a node keeps its handful of
/// attributes in one allocation. Serialised as a map.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Attributes(Box<str>);

impl Attributes {
    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Every attribute, ordered by name.
    pub fn iter(&self) -> AttributesIter<'_> {
        AttributesIter(self.0.split('\0'))
    }
}

/// The attributes of an [`Attributes`], ordered by name.
pub struct AttributesIter<'a>(std::str::Split<'a, char>);

impl<'a> Iterator for AttributesIter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let name = self.0.next()?;
        let value = self.0.next()?;
        Some((name, value))
    }
}

impl<'a> IntoIterator for &'a Attributes {
    type Item = (&'a str, &'a str);
    type IntoIter = AttributesIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Attributes {
    /// The attributes of a start tag, as written (a name written twice is not
    /// well-formed XML, so there is none here): one allocation, no list sorted.
    pub(crate) fn of_tag(attrs: &[(&str, std::borrow::Cow<'_, str>)]) -> Self {
        /// Tags with more attributes than this go through [`FromIterator`].
        const MAX: usize = 16;
        if attrs.len() > MAX {
            return attrs.iter().map(|(k, v)| (*k, v.as_ref())).collect();
        }
        let mut order = [0u8; MAX];
        let n = attrs.len();
        for (i, slot) in order.iter_mut().enumerate().take(n) {
            *slot = i as u8;
        }
        let order = &mut order[..n];
        order.sort_unstable_by(|&a, &b| attrs[a as usize].0.cmp(attrs[b as usize].0));
        let len: usize = attrs.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
        let mut text = String::with_capacity(len.saturating_sub(1));
        for &i in order.iter() {
            let (k, v) = &attrs[i as usize];
            if !text.is_empty() {
                text.push('\0');
            }
            text.push_str(k);
            text.push('\0');
            text.push_str(v);
        }
        Attributes(text.into_boxed_str())
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for Attributes {
    /// A later attribute of a name replaces an earlier one (as in a map).
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut pairs: Vec<(K, V)> = iter.into_iter().collect();
        // Stable: of equal names the last one written comes last and is kept.
        pairs.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        let mut text = String::new();
        for (i, (k, v)) in pairs.iter().enumerate() {
            if pairs
                .get(i + 1)
                .is_some_and(|next| next.0.as_ref() == k.as_ref())
            {
                continue;
            }
            if !text.is_empty() {
                text.push('\0');
            }
            text.push_str(k.as_ref());
            text.push('\0');
            text.push_str(v.as_ref());
        }
        Attributes(text.into_boxed_str())
    }
}

impl std::ops::Index<&str> for Attributes {
    type Output = str;

    /// The value of `name`; panics when there is none (as a map's index does).
    fn index(&self, name: &str) -> &str {
        self.get(name)
            .unwrap_or_else(|| panic!("no attribute `{name}`"))
    }
}

impl std::fmt::Debug for Attributes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl serde::Serialize for Attributes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for Attributes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = std::collections::BTreeMap::<String, String>::deserialize(deserializer)?;
        Ok(map.into_iter().collect())
    }
}
