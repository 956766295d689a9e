//! BPMN XML → [`Document`], in three steps:
//!
//! 1. [`decode`] (in `encoding.rs`): the bytes are transcoded to UTF-8 up front (byte order mark, else the
//!    XML declaration's `encoding`, else UTF-8), so every [`Span`] is a byte range of the
//!    text kept in [`Document::source`].
//! 2. [`Walker`]: one streaming pass with quick-xml's `NsReader`. Elements are matched by
//!    namespace URI and local name (any prefix); elements without a namespace count as
//!    BPMN. A stack of [`Frame`]s says where the children of each open element go.
//! 3. [`check_refs`]: the cross-reference checks that need the whole model.
//!
//! A document that is not well-formed XML gets exactly one error, the first problem in
//! the text (as any XML processor reports it); otherwise every model problem is reported.

use foldhash::{HashMap, HashMapExt, HashSet};
use std::borrow::Cow;
use std::path::Path;

use quick_xml::escape::{resolve_predefined_entity, unescape};
use quick_xml::events::attributes::AttrError;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::{QName, ResolveResult};
use quick_xml::reader::NsReader;

use super::encoding::{decode, first_illegal_char, is_xml_char};
use super::{
    BpmnError, Condition, Document, EventDefinition, EventRef, Flow, GatewayKind, Lane, LoopKind,
    Looping, MessageFlow, MultiInstance, Node, NodeKind, ParseErrors, Participant, Process,
    Property, SubProcessKind, TaskKind, Timer, TimerKind,
};
use crate::source::{SourceFile, Span};

/// The BPMN 2.0 model namespace.
const BPMN_NS: &str = "http://www.omg.org/spec/BPMN/20100524/MODEL";

const TASK_KINDS: [TaskKind; 8] = [
    TaskKind::Task,
    TaskKind::User,
    TaskKind::Service,
    TaskKind::Script,
    TaskKind::Send,
    TaskKind::Receive,
    TaskKind::Manual,
    TaskKind::BusinessRule,
];

const GATEWAY_KINDS: [GatewayKind; 5] = [
    GatewayKind::Exclusive,
    GatewayKind::Parallel,
    GatewayKind::Inclusive,
    GatewayKind::EventBased,
    GatewayKind::Complex,
];

const EVENT_DEFINITIONS: [(&str, EventDefinition); 10] = [
    ("messageEventDefinition", EventDefinition::Message),
    ("timerEventDefinition", EventDefinition::Timer),
    ("errorEventDefinition", EventDefinition::Error),
    ("signalEventDefinition", EventDefinition::Signal),
    ("escalationEventDefinition", EventDefinition::Escalation),
    ("compensateEventDefinition", EventDefinition::Compensate),
    ("conditionalEventDefinition", EventDefinition::Conditional),
    ("linkEventDefinition", EventDefinition::Link),
    ("cancelEventDefinition", EventDefinition::Cancel),
    ("terminateEventDefinition", EventDefinition::Terminate),
];

/// Flow nodes of the BPMN namespace kept as [`NodeKind::Unsupported`].
const UNSUPPORTED_NODES: [&str; 4] = [
    "choreographyTask",
    "subChoreography",
    "callChoreography",
    "implicitThrowEvent",
];

/// Parse BPMN bytes; `path` names the file in errors and in [`Document::source`].
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Document, ParseErrors> {
    let failure = |text: Option<SourceFile>, mut errors: Vec<BpmnError>| {
        errors.sort_by_key(|e| e.span().map(|s| s.offset));
        ParseErrors {
            path: path.display().to_string(),
            text,
            errors,
        }
    };
    let decoded = decode(bytes).map_err(|e| failure(None, vec![e]))?;
    let source = SourceFile::new(path, decoded.text);
    let walked = Walker::new(source.text(), empty_document(&source, decoded.label)).run();

    let fatal = [
        decoded.malformed,
        first_illegal_char(source.text()),
        walked.fatal,
    ]
    .into_iter()
    .flatten()
    .min_by_key(|e| e.span().map_or(0, |s| s.offset));
    if let Some(fatal) = fatal {
        return Err(failure(Some(source), vec![fatal]));
    }
    let mut errors = walked.errors;
    let mut document = walked.document;
    errors.extend(resolve_event_refs(&mut document, &walked.event_targets));
    errors.extend(check_refs(&document));
    if errors.is_empty() {
        Ok(document)
    } else {
        Err(failure(Some(source), errors))
    }
}

/// Read and parse a BPMN file.
pub fn parse_file(path: &Path) -> Result<Document, ParseErrors> {
    match crate::source::read_file(path) {
        Ok(bytes) => parse(path, &bytes),
        Err(e) => Err(ParseErrors {
            path: path.display().to_string(),
            text: None,
            errors: vec![BpmnError::Io {
                path: path.display().to_string(),
                message: e.to_string(),
            }],
        }),
    }
}

fn empty_document(source: &SourceFile, encoding: String) -> Document {
    Document {
        source: source.clone(),
        encoding,
        id: None,
        target_namespace: None,
        exporter: None,
        exporter_version: None,
        expression_language: None,
        processes: Vec::new(),
        participants: Vec::new(),
        message_flows: Vec::new(),
        chosen: None,
    }
}

// ---------------------------------------------------------------------------------------
// Step 2: the walk
// ---------------------------------------------------------------------------------------

/// What an open element is, for the parser: where its children and text go. Indices are
/// into `Document::processes` and the process's `nodes` / `flows` / `lanes`.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// Content not looked at: other namespaces, DI, unknown or unused BPMN elements.
    Skip,
    Definitions,
    /// `<collaboration>` or `<choreography>`: participants and message flows.
    Collaboration,
    Process(usize),
    Node(usize, usize),
    Flow(usize, usize),
    LaneSet(usize),
    Lane(usize, usize),
    /// An element whose character data is wanted.
    Text(TextUse),
    /// `<timerEventDefinition>` of a node.
    Timer(usize, usize),
    /// `<extensionElements>`: kept as raw XML from this byte offset to its end tag.
    Extension(Owner, usize),
    /// `<multiInstanceLoopCharacteristics>` of a node.
    Loop(usize, usize),
    /// `<extensionElements>` of a node's multi-instance loop characteristics (Zeebe's
    /// `loopCharacteristics` is read from here).
    LoopExtension(usize, usize),
    /// A `<message>` of the document (its index in `message_ids`).
    Message(usize),
    /// The `<extensionElements>` of a `<message>` (Zeebe's `subscription` is read from
    /// here).
    MessageExtension(usize),
}

/// What documentation and extension elements belong to.
#[derive(Debug, Clone, Copy)]
enum Owner {
    Process(usize),
    Node(usize, usize),
}

/// Where the text of a [`Frame::Text`] element goes.
#[derive(Debug, Clone, Copy)]
enum TextUse {
    Documentation(Owner),
    /// A script task's `<script>`.
    Script(usize, usize),
    Condition(usize, usize),
    FlowNodeRef(usize, usize),
    Timer(usize, usize),
    Loop(usize, usize, LoopText),
}

/// Which text of a multi-instance loop characteristics element.
#[derive(Debug, Clone, Copy)]
enum LoopText {
    Cardinality,
    Input,
    Output,
    Completion,
}

/// An element that is open (its end tag not read yet).
struct Open<'t> {
    frame: Frame,
    /// The qualified name, for the "not closed" error.
    name: &'t str,
    tag: Span,
}

/// A start tag of an element that may be part of the model, resolved: namespace, local
/// name and unescaped attributes, borrowed from the tag (owned only where unescaping or
/// line-end normalisation changed a value).
struct Element<'e> {
    local: &'e str,
    /// In the BPMN model namespace, or in no namespace at all.
    bpmn: bool,
    /// Every attribute as written (qualified name), value unescaped.
    attrs: Vec<(&'e str, Cow<'e, str>)>,
    span: Span,
}

impl Element<'_> {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_ref())
    }

    /// An attribute that is present and not blank, trimmed (ids, references).
    fn reference(&self, name: &str) -> Option<String> {
        let value = self.attr(name)?.trim();
        (!value.is_empty()).then(|| value.to_owned())
    }

    /// An attribute that is present and not empty, as written (names).
    fn text(&self, name: &str) -> Option<String> {
        self.attr(name).filter(|v| !v.is_empty()).map(str::to_owned)
    }

    /// Every attribute, in one allocation.
    fn attribute_map(&self) -> super::Attributes {
        super::Attributes::of_tag(&self.attrs)
    }

    /// An `xsd:boolean` attribute.
    fn boolean(&self, name: &str) -> Option<bool> {
        match self.attr(name)?.trim() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }
}

/// Character data of one element, piece by piece, with where each piece was written.
#[derive(Default)]
struct TextBuf {
    pieces: Vec<Piece>,
}

struct Piece {
    at: Span,
    value: String,
    /// The value is exactly the source text at `at` (text, CDATA), not a reference.
    literal: bool,
}

impl TextBuf {
    /// The trimmed text (line ends normalised) and the span of its source, unless the
    /// text is blank.
    fn finish(self) -> Option<(String, Span)> {
        let mut body = String::new();
        self.pieces.iter().for_each(|p| body.push_str(&p.value));
        let body = trim_xml(&body);
        let is_content = |p: &&Piece| !trim_xml(&p.value).is_empty();
        let first = self.pieces.iter().find(is_content)?;
        let last = self.pieces.iter().rev().find(is_content)?;
        let start = if first.literal {
            let trimmed = first.value.trim_start_matches(is_xml_space);
            first.at.end().saturating_sub(trimmed.len())
        } else {
            first.at.offset
        };
        let end = if last.literal {
            last.at.offset + last.value.trim_end_matches(is_xml_space).len()
        } else {
            last.at.end()
        };
        Some((
            normalize_newlines(body).into_owned(),
            Span::new(start, end.saturating_sub(start)),
        ))
    }
}

/// An `<error>`, `<escalation>`, `<message>` or `<signal>` of the document.
struct EventTarget {
    /// What it defines: an error, escalation, message or signal.
    kind: EventDefinition,
    code: Option<String>,
    name: Option<String>,
    /// A message's correlation key (`<zeebe:subscription correlationKey>`).
    correlation_key: Option<String>,
}

/// What the walk produced.
struct Walked {
    document: Document,
    /// The document's `<error>` and `<escalation>` elements, by id.
    event_targets: HashMap<String, EventTarget>,
    /// Model problems found while walking.
    errors: Vec<BpmnError>,
    /// The first well-formedness error, which stopped the walk.
    fatal: Option<BpmnError>,
}

/// One pass over the XML events, filling a [`Document`].
struct Walker<'t> {
    text: &'t str,
    reader: NsReader<&'t [u8]>,
    doc: Document,
    /// Open elements, innermost last.
    stack: Vec<Open<'t>>,
    /// Text of the innermost [`Frame::Text`] element.
    chars: TextBuf,
    /// The first span of every model id.
    ids: HashMap<String, Span>,
    /// The document's `<error>` and `<escalation>` elements, by id.
    event_targets: HashMap<String, EventTarget>,
    /// The ids of the document's `<message>` elements, for [`Frame::Message`].
    message_ids: Vec<String>,
    errors: Vec<BpmnError>,
    fatal: Option<BpmnError>,
    /// The `<definitions>` start tag, once read.
    definitions: Option<Span>,
    saw_process: bool,
    /// The root element has been closed.
    root_done: bool,
}

impl<'t> Walker<'t> {
    fn new(text: &'t str, doc: Document) -> Self {
        let mut reader = NsReader::from_str(text);
        reader.config_mut().enable_all_checks(true);
        Walker {
            text,
            reader,
            doc,
            stack: Vec::new(),
            chars: TextBuf::default(),
            ids: HashMap::new(),
            event_targets: HashMap::new(),
            message_ids: Vec::new(),
            errors: Vec::new(),
            fatal: None,
            definitions: None,
            saw_process: false,
            root_done: false,
        }
    }

    fn run(mut self) -> Walked {
        while self.fatal.is_none() {
            let start = self.position();
            let event = self.reader.read_event();
            let span = Span::new(start, self.position().saturating_sub(start));
            match event {
                Ok(Event::Start(e)) => self.start_element(&e, span, false),
                Ok(Event::Empty(e)) => self.start_element(&e, span, true),
                Ok(Event::End(_)) => self.end_element(span),
                Ok(Event::Text(t)) => self.characters(&t, span, true),
                Ok(Event::CData(c)) => {
                    let at = Span::new(span.offset + "<![CDATA[".len(), c.len());
                    self.outside_root(span);
                    self.characters(&c, at, true);
                }
                Ok(Event::GeneralRef(r)) => self.reference(&r, span),
                Ok(Event::Decl(_)) if start != 0 => {
                    self.fatal("an XML declaration is allowed only at the start", span);
                }
                Ok(Event::Eof) => {
                    self.end_of_input();
                    break;
                }
                Ok(_) => {}
                Err(err) => {
                    let at = match err {
                        quick_xml::Error::Namespace(_) => start,
                        _ => usize::try_from(self.reader.error_position()).unwrap_or(start),
                    };
                    self.fatal(err.to_string(), Span::new(at.min(self.text.len()), 0));
                }
            }
        }
        Walked {
            document: self.doc,
            event_targets: self.event_targets,
            errors: self.errors,
            fatal: self.fatal,
        }
    }

    fn position(&self) -> usize {
        usize::try_from(self.reader.buffer_position())
            .unwrap_or(usize::MAX)
            .min(self.text.len())
    }

    fn fatal(&mut self, message: impl Into<String>, span: Span) {
        if self.fatal.is_none() {
            self.fatal = Some(BpmnError::NotWellFormed {
                message: message.into(),
                span,
            });
        }
    }

    // --- XML events ---------------------------------------------------------------------

    fn start_element(&mut self, e: &BytesStart<'t>, tag: Span, empty: bool) {
        if self.stack.is_empty() && self.root_done {
            return self.fatal("junk after the root element (a document has one root)", tag);
        }
        let Some((bpmn, local)) = self.resolve(e, tag) else {
            return;
        };
        let wanted = self.may_be_model(bpmn);
        let Some(attrs) = self.attributes(e, tag, wanted) else {
            return;
        };
        let frame = if wanted {
            let el = Element {
                local,
                bpmn,
                attrs,
                span: tag,
            };
            self.frame_for(&el)
        } else {
            Frame::Skip
        };
        if empty {
            self.end_frame(frame, tag.end());
            self.root_done |= self.stack.is_empty();
        } else {
            let name = self.tag_name(e, tag);
            self.stack.push(Open { frame, name, tag });
        }
    }

    /// Whether an element can be part of the model: the root, or a BPMN element whose
    /// parent keeps model children. Everything else (DI, extensions, the content of
    /// skipped elements) only gets the well-formedness checks.
    fn may_be_model(&self, bpmn: bool) -> bool {
        match self.stack.last() {
            None => true,
            Some(Open {
                frame: Frame::LoopExtension(..) | Frame::MessageExtension(..),
                ..
            }) => true,
            Some(open) => {
                bpmn && !matches!(
                    open.frame,
                    Frame::Skip | Frame::Text(_) | Frame::Extension(..)
                )
            }
        }
    }

    /// The qualified name of a start tag, as a slice of the text: the tag's text starts
    /// with `<` and the name follows it.
    fn tag_name(&self, e: &BytesStart<'t>, tag: Span) -> &'t str {
        let start = tag.offset + 1;
        let name = self.text.get(start..start + e.name().into_inner().len());
        debug_assert_eq!(name, Some(e.name().into_inner()));
        name.unwrap_or_default()
    }

    /// quick-xml has checked that the end tag matches the innermost open element.
    fn end_element(&mut self, tag: Span) {
        if let Some(open) = self.stack.pop() {
            self.end_frame(open.frame, tag.offset);
        }
        self.root_done |= self.stack.is_empty();
    }

    /// Text or CDATA content (`literal`: the value is the source text at `at`).
    fn characters(&mut self, value: &str, at: Span, literal: bool) {
        if self.stack.is_empty() && !is_blank(value) {
            self.outside_root(at);
        }
        if let Some(Open {
            frame: Frame::Text(_),
            ..
        }) = self.stack.last()
        {
            let value = value.to_owned();
            self.chars.pieces.push(Piece { at, value, literal });
        }
    }

    /// `&name;` or `&#n;` in content.
    fn reference(&mut self, r: &BytesRef<'t>, at: Span) {
        self.outside_root(at);
        let value = match r.resolve_char_ref() {
            Ok(Some(c)) if is_xml_char(c) => c.to_string(),
            Ok(Some(_)) | Err(_) => {
                return self.fatal(format!("invalid character reference `&{};`", &**r), at);
            }
            Ok(None) => match resolve_predefined_entity(r) {
                Some(value) => value.to_owned(),
                None => return self.fatal(entity_refused(r), at),
            },
        };
        self.characters(&value, at, false);
    }

    /// Content is only allowed inside the root element.
    fn outside_root(&mut self, at: Span) {
        if self.stack.is_empty() {
            self.fatal("text outside the root element", at);
        }
    }

    fn end_of_input(&mut self) {
        if let Some(open) = self.stack.last() {
            let message = format!("element <{}> is not closed", open.name);
            return self.fatal(message, open.tag);
        }
        if !self.root_done {
            return self.fatal("no root element", Span::new(self.text.len(), 0));
        }
        if let Some(span) = self.definitions
            && !self.saw_process
        {
            self.errors.push(BpmnError::NoProcess { span });
        }
    }

    /// Resolve the name of a start tag: whether it is a BPMN element, and its local name.
    /// `None` (after a fatal error) if its prefix is not declared.
    fn resolve<'e>(&mut self, e: &'e BytesStart<'t>, tag: Span) -> Option<(bool, &'e str)> {
        let (ns, local) = self.reader.resolver().resolve_element(e.name());
        let bpmn = match ns {
            ResolveResult::Unbound => true,
            ResolveResult::Bound(ns) => ns.into_inner() == BPMN_NS,
            ResolveResult::Unknown(prefix) => {
                self.fatal(format!("namespace prefix `{prefix}` is not declared"), tag);
                return None;
            }
        };
        Some((bpmn, local.into_inner()))
    }

    /// Check every attribute of a start tag and, if `keep`, return them (else an empty,
    /// unallocated list); `None` (after a fatal error) if one is not well-formed.
    fn attributes<'e>(
        &mut self,
        e: &'e BytesStart<'t>,
        tag: Span,
        keep: bool,
    ) -> Option<Vec<(&'e str, Cow<'e, str>)>> {
        let mut attrs = Vec::new();
        for attr in e.attributes() {
            let attr = match attr {
                Ok(attr) => attr,
                Err(err) => {
                    let at = (tag.offset + 1 + attr_error_offset(&err)).min(tag.end());
                    self.fatal(err.to_string(), Span::new(at, 0));
                    return None;
                }
            };
            let value = match attribute_value(attr.value) {
                Ok(value) => value,
                Err(message) => {
                    self.fatal(message, tag);
                    return None;
                }
            };
            if keep {
                attrs.push((attr.key.into_inner(), value));
            }
        }
        Some(attrs)
    }

    // --- Frames -------------------------------------------------------------------------

    /// Record what `el` is (adding it to the model if it is part of it) and say where its
    /// children go.
    fn frame_for(&mut self, el: &Element) -> Frame {
        let Some(parent) = self.stack.last().map(|open| open.frame) else {
            return self.root(el);
        };
        if let Frame::LoopExtension(p, n) = parent {
            self.loop_extension(p, n, el);
            return Frame::Skip;
        }
        if let Frame::MessageExtension(m) = parent {
            self.message_extension(m, el);
            return Frame::Skip;
        }
        if !el.bpmn {
            return Frame::Skip;
        }
        let local = el.local;
        match parent {
            Frame::Definitions => match local {
                "process" => self.process(el),
                "error" | "escalation" | "signal" => {
                    self.event_target(el);
                    Frame::Skip
                }
                "message" => match self.event_target(el) {
                    Some(id) => {
                        self.message_ids.push(id);
                        Frame::Message(self.message_ids.len() - 1)
                    }
                    None => Frame::Skip,
                },
                "collaboration" | "choreography" => Frame::Collaboration,
                _ => Frame::Skip,
            },
            Frame::Collaboration => {
                match local {
                    "participant" => self.participant(el),
                    "messageFlow" => self.message_flow(el),
                    _ => {}
                }
                Frame::Skip
            }
            Frame::Process(p) => self.scope_child(p, None, Owner::Process(p), el),
            Frame::Node(p, n) => self.node_child(p, n, el),
            Frame::Flow(p, f) if local == "conditionExpression" => self.condition(p, f, el),
            Frame::Timer(p, n) => self.timer_time(p, n, el),
            Frame::Message(m) if local == "extensionElements" => Frame::MessageExtension(m),
            Frame::Loop(p, n) => self.loop_child(p, n, el),
            Frame::LaneSet(p) if local == "lane" => self.lane(p, el),
            Frame::Lane(p, l) => match local {
                "flowNodeRef" => self.text_frame(TextUse::FlowNodeRef(p, l)),
                "childLaneSet" => Frame::LaneSet(p),
                _ => Frame::Skip,
            },
            _ => Frame::Skip,
        }
    }

    /// An element closes: store what was collected for it (`content_end`: the byte offset
    /// where its content ends).
    fn end_frame(&mut self, frame: Frame, content_end: usize) {
        match frame {
            Frame::Text(text_use) => {
                let text = std::mem::take(&mut self.chars).finish();
                self.store_text(text_use, text);
            }
            Frame::Extension(owner, start) => {
                let raw = self.text.get(start..content_end).unwrap_or_default();
                if let Some((_, extension)) = self.owner_slots(owner) {
                    *extension = Some(raw.to_owned());
                }
            }
            _ => {}
        }
    }

    fn text_frame(&mut self, text_use: TextUse) -> Frame {
        self.chars = TextBuf::default();
        Frame::Text(text_use)
    }

    fn store_text(&mut self, text_use: TextUse, text: Option<(String, Span)>) {
        let Some((body, span)) = text else { return };
        match text_use {
            TextUse::Documentation(owner) => {
                if let Some((documentation, _)) = self.owner_slots(owner) {
                    match documentation {
                        Some(existing) => *existing = format!("{existing}\n{body}"),
                        None => *documentation = Some(body),
                    }
                }
            }
            TextUse::Script(p, n) => {
                let node = self.process_mut(p).and_then(|p| p.nodes.get_mut(n));
                if let Some(node) = node {
                    let body = body.trim();
                    node.script = (!body.is_empty()).then(|| body.to_string());
                }
            }
            TextUse::Condition(p, f) => {
                let flow = self.process_mut(p).and_then(|p| p.flows.get_mut(f));
                if let Some(condition) = flow.and_then(|f| f.condition.as_mut()) {
                    condition.body = body;
                    condition.span = span;
                }
            }
            TextUse::Timer(p, n) => {
                let node = self.process_mut(p).and_then(|p| p.nodes.get_mut(n));
                if let Some(timer) = node.and_then(|n| n.timer.as_mut()) {
                    timer.expression = body.trim().to_string();
                }
            }
            TextUse::Loop(p, n, text) => {
                let body = body.trim().to_string();
                if let Some(multi) = self.multi_mut(p, n)
                    && !body.is_empty()
                {
                    let slot = match text {
                        LoopText::Cardinality => &mut multi.cardinality,
                        LoopText::Input => &mut multi.collection,
                        LoopText::Output => &mut multi.output_collection,
                        LoopText::Completion => &mut multi.completion_condition,
                    };
                    *slot = Some(body);
                }
            }
            TextUse::FlowNodeRef(p, l) => {
                if let Some(lane) = self.process_mut(p).and_then(|p| p.lanes.get_mut(l)) {
                    lane.flow_node_refs.push(body);
                }
            }
        }
    }

    // --- Model elements -------------------------------------------------------------------

    fn root(&mut self, el: &Element) -> Frame {
        if !(el.bpmn && el.local == "definitions") {
            self.errors.push(BpmnError::NotBpmn { span: el.span });
            return Frame::Skip;
        }
        self.definitions = Some(el.span);
        self.doc.id = el.reference("id");
        self.doc.target_namespace = el.text("targetNamespace");
        self.doc.exporter = el.text("exporter");
        self.doc.exporter_version = el.text("exporterVersion");
        self.doc.expression_language = el.text("expressionLanguage");
        Frame::Definitions
    }

    fn process(&mut self, el: &Element) -> Frame {
        self.saw_process = true;
        let Some(id) = self.required_id(el) else {
            return Frame::Skip;
        };
        self.doc.processes.push(std::sync::Arc::new(Process {
            id,
            name: el.text("name"),
            is_executable: el.boolean("isExecutable"),
            span: el.span,
            nodes: Vec::new(),
            flows: Vec::new(),
            lanes: Vec::new(),
            properties: Vec::new(),
            extension_elements: None,
            documentation: None,
            ids: Default::default(),
        }));
        Frame::Process(self.doc.processes.len() - 1)
    }

    /// A child of a process or sub-process (`parent`: the sub-process's id).
    fn scope_child(
        &mut self,
        p: usize,
        parent: Option<String>,
        owner: Owner,
        el: &Element,
    ) -> Frame {
        match el.local {
            "documentation" => self.text_frame(TextUse::Documentation(owner)),
            "extensionElements" => Frame::Extension(owner, el.span.end()),
            "laneSet" => Frame::LaneSet(p),
            "sequenceFlow" => self.flow(p, parent, el),
            "multiInstanceLoopCharacteristics" | "standardLoopCharacteristics" => match owner {
                Owner::Node(p, n) => self.looping(p, n, el),
                Owner::Process(_) => Frame::Skip,
            },
            "property" if parent.is_none() => {
                self.property(p, el);
                Frame::Skip
            }
            local => match self.node_kind(local, el) {
                Some(kind) => self.node(p, parent, kind, el),
                None => Frame::Skip,
            },
        }
    }

    /// A child of a flow node: documentation, extension elements, event definitions and,
    /// for sub-processes, nested flow elements.
    fn node_child(&mut self, p: usize, n: usize, el: &Element) -> Frame {
        let owner = Owner::Node(p, n);
        // `errorRef` / `escalationRef`, resolved against the document's `<error>` and
        // `<escalation>` elements once the whole document is read.
        let event_ref = match event_definition(el.local) {
            Some(EventDefinition::Error) => self.qname_ref(el, "errorRef"),
            Some(EventDefinition::Escalation) => self.qname_ref(el, "escalationRef"),
            Some(EventDefinition::Message) => self.qname_ref(el, "messageRef"),
            Some(EventDefinition::Signal) => self.qname_ref(el, "signalRef"),
            _ => None,
        };
        let Some(node) = self.process_mut(p).and_then(|p| p.nodes.get_mut(n)) else {
            return Frame::Skip;
        };
        if let NodeKind::SubProcess(_) = node.kind {
            let parent = Some(node.id.clone());
            return self.scope_child(p, parent, owner, el);
        }
        match el.local {
            "documentation" => self.text_frame(TextUse::Documentation(owner)),
            "extensionElements" => Frame::Extension(owner, el.span.end()),
            "multiInstanceLoopCharacteristics" | "standardLoopCharacteristics" => {
                self.looping(p, n, el)
            }
            "script" if node.kind == NodeKind::Task(TaskKind::Script) => {
                self.text_frame(TextUse::Script(p, n))
            }
            local => {
                if let Some(definition) = event_definition(local)
                    && let Some(definitions) = definitions_mut(&mut node.kind)
                {
                    definitions.push(definition);
                    if let Some(reference) = event_ref {
                        node.event_ref = Some(EventRef {
                            reference,
                            code: None,
                            name: None,
                            correlation_key: None,
                        });
                    }
                    if definition == EventDefinition::Timer {
                        node.timer = Some(Timer {
                            kind: None,
                            expression: String::new(),
                            span: el.span,
                        });
                        return Frame::Timer(p, n);
                    }
                }
                Frame::Skip
            }
        }
    }

    /// An `<error>`, `<escalation>`, `<message>` or `<signal>` of the document: its code
    /// (errors and escalations) and name, by id. Its id, when it has one.
    fn event_target(&mut self, el: &Element) -> Option<String> {
        let id = el.reference("id")?;
        let (kind, code) = match el.local {
            "error" => (EventDefinition::Error, Some("errorCode")),
            "escalation" => (EventDefinition::Escalation, Some("escalationCode")),
            "message" => (EventDefinition::Message, None),
            _ => (EventDefinition::Signal, None),
        };
        self.event_targets.insert(
            id.clone(),
            EventTarget {
                kind,
                code: code
                    .and_then(|code| el.text(code))
                    .map(|c| c.trim().to_string()),
                name: el.text("name"),
                correlation_key: None,
            },
        );
        Some(id)
    }

    /// A child of a `<message>`'s `<extensionElements>`: Camunda 8's `<zeebe:subscription
    /// correlationKey="= orderId"/>` gives the message its correlation key.
    fn message_extension(&mut self, m: usize, el: &Element) {
        if el.local != "subscription" {
            return;
        }
        let key = el
            .text("correlationKey")
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty());
        let target = (self.message_ids.get(m)).and_then(|id| self.event_targets.get_mut(id));
        if let (Some(target), Some(key)) = (target, key) {
            target.correlation_key = Some(key);
        }
    }

    /// Loop characteristics of node `n` (an activity): a multi-instance one's children
    /// are read next.
    fn looping(&mut self, p: usize, n: usize, el: &Element) -> Frame {
        let standard = el.local == "standardLoopCharacteristics";
        let kind = if standard {
            LoopKind::Standard
        } else {
            LoopKind::MultiInstance {
                sequential: el.boolean("isSequential").unwrap_or(false),
            }
        };
        // Camunda 7's, Flowable's and Activiti's attributes, whatever their prefix.
        let extension = |name: &str| {
            el.attrs
                .iter()
                .find(|(key, _)| key.rsplit_once(':').is_some_and(|(_, local)| local == name))
                .map(|(_, v)| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let multi = MultiInstance {
            collection: extension("collection"),
            element_variable: extension("elementVariable"),
            language: self.doc.expression_language.clone(),
            ..MultiInstance::default()
        };
        let Some(node) = self.process_mut(p).and_then(|p| p.nodes.get_mut(n)) else {
            return Frame::Skip;
        };
        node.looping = Some(Looping {
            kind,
            span: el.span,
            multi,
        });
        if standard {
            Frame::Skip
        } else {
            Frame::Loop(p, n)
        }
    }

    fn multi_mut(&mut self, p: usize, n: usize) -> Option<&mut MultiInstance> {
        let node = self.process_mut(p).and_then(|p| p.nodes.get_mut(n))?;
        node.looping.as_mut().map(|l| &mut l.multi)
    }

    /// A child of `<multiInstanceLoopCharacteristics>`.
    fn loop_child(&mut self, p: usize, n: usize, el: &Element) -> Frame {
        let text = match el.local {
            "loopCardinality" => LoopText::Cardinality,
            "loopDataInputRef" => LoopText::Input,
            "loopDataOutputRef" => LoopText::Output,
            "completionCondition" => LoopText::Completion,
            "inputDataItem" | "outputDataItem" => {
                let name = el.reference("name").or_else(|| el.reference("id"));
                if let Some(multi) = self.multi_mut(p, n) {
                    let slot = if el.local == "inputDataItem" {
                        &mut multi.element_variable
                    } else {
                        &mut multi.output_element
                    };
                    if slot.is_none() {
                        *slot = name;
                    }
                }
                return Frame::Skip;
            }
            "extensionElements" => return Frame::LoopExtension(p, n),
            _ => return Frame::Skip,
        };
        if matches!(text, LoopText::Cardinality | LoopText::Completion)
            && let Some(language) = el.text("language")
            && let Some(multi) = self.multi_mut(p, n)
        {
            multi.language = Some(language);
        }
        self.text_frame(TextUse::Loop(p, n, text))
    }

    /// Zeebe's `<zeebe:loopCharacteristics>` (any prefix) in the loop's extension elements.
    fn loop_extension(&mut self, p: usize, n: usize, el: &Element) {
        if el.local != "loopCharacteristics" {
            return;
        }
        let Some(multi) = self.multi_mut(p, n) else {
            return;
        };
        let pairs: [(&str, &mut Option<String>); 4] = [
            ("inputCollection", &mut multi.collection),
            ("inputElement", &mut multi.element_variable),
            ("outputCollection", &mut multi.output_collection),
            ("outputElement", &mut multi.output_element),
        ];
        for (name, slot) in pairs {
            if let Some(value) = el.reference(name) {
                *slot = Some(value);
            }
        }
    }

    fn node(&mut self, p: usize, parent: Option<String>, kind: NodeKind, el: &Element) -> Frame {
        let Some(id) = self.required_id(el) else {
            return Frame::Skip;
        };
        // A receive task names its message by an attribute.
        let event_ref = matches!(kind, NodeKind::Task(TaskKind::Receive))
            .then(|| self.qname_ref(el, "messageRef"))
            .flatten()
            .map(|reference| EventRef {
                reference,
                code: None,
                name: None,
                correlation_key: None,
            });
        let Some(process) = self.process_mut(p) else {
            return Frame::Skip;
        };
        process.nodes.push(Node {
            id,
            name: el.text("name"),
            kind,
            span: el.span,
            parent,
            default_flow: el.reference("default"),
            attributes: el.attribute_map(),
            extension_elements: None,
            documentation: None,
            timer: None,
            looping: None,
            event_ref,
            script: None,
        });
        Frame::Node(p, process.nodes.len() - 1)
    }

    fn flow(&mut self, p: usize, parent: Option<String>, el: &Element) -> Frame {
        let id = match el.reference("id") {
            Some(id) => {
                self.register_id(&id, el.span);
                id
            }
            None => self.synthetic_flow_id(el),
        };
        let source = self.flow_ref(&id, el, "sourceRef");
        let target = self.flow_ref(&id, el, "targetRef");
        let Some(process) = self.process_mut(p) else {
            return Frame::Skip;
        };
        process.flows.push(Flow {
            id,
            name: el.text("name"),
            source,
            target,
            condition: None,
            span: el.span,
            parent,
        });
        Frame::Flow(p, process.flows.len() - 1)
    }

    /// A sequence flow's `sourceRef` / `targetRef` ("" and an error when missing).
    fn flow_ref(&mut self, flow: &str, el: &Element, attribute: &'static str) -> String {
        el.reference(attribute).unwrap_or_else(|| {
            self.errors.push(BpmnError::MissingRef {
                flow: flow.to_owned(),
                attribute,
                span: el.span,
            });
            String::new()
        })
    }

    /// `<timeDuration>`, `<timeDate>` or `<timeCycle>` of a timer definition: its kind now,
    /// its text when it closes.
    fn timer_time(&mut self, p: usize, n: usize, el: &Element) -> Frame {
        let kind = match el.local {
            "timeDuration" => TimerKind::Duration,
            "timeDate" => TimerKind::Date,
            "timeCycle" => TimerKind::Cycle,
            _ => return Frame::Skip,
        };
        let node = self.process_mut(p).and_then(|p| p.nodes.get_mut(n));
        if let Some(timer) = node.and_then(|n| n.timer.as_mut()) {
            timer.kind = Some(kind);
            timer.span = el.span;
        }
        self.text_frame(TextUse::Timer(p, n))
    }

    /// `<conditionExpression>`: recorded now (empty, spanning the element), its text
    /// filled in when it closes.
    fn condition(&mut self, p: usize, f: usize, el: &Element) -> Frame {
        let language = el
            .text("language")
            .or_else(|| self.doc.expression_language.clone());
        if let Some(flow) = self.process_mut(p).and_then(|p| p.flows.get_mut(f)) {
            flow.condition = Some(Condition {
                language,
                body: String::new(),
                span: el.span,
            });
        }
        self.text_frame(TextUse::Condition(p, f))
    }

    fn property(&mut self, p: usize, el: &Element) {
        let id = self.optional_id(el);
        if let Some(process) = self.process_mut(p) {
            process.properties.push(Property {
                id,
                name: el.text("name"),
                item_subject_ref: el.reference("itemSubjectRef"),
            });
        }
    }

    /// A lane, also of a nested `childLaneSet` (all lanes of a process are kept flat).
    fn lane(&mut self, p: usize, el: &Element) -> Frame {
        let id = self.optional_id(el);
        let Some(process) = self.process_mut(p) else {
            return Frame::Skip;
        };
        process.lanes.push(Lane {
            id,
            name: el.text("name"),
            flow_node_refs: Vec::new(),
        });
        Frame::Lane(p, process.lanes.len() - 1)
    }

    fn participant(&mut self, el: &Element) {
        let id = self.optional_id(el);
        self.doc.participants.push(Participant {
            id,
            name: el.text("name"),
            process_ref: self.qname_ref(el, "processRef"),
        });
    }

    fn message_flow(&mut self, el: &Element) {
        let id = self.optional_id(el);
        self.doc.message_flows.push(MessageFlow {
            id,
            name: el.text("name"),
            source: self.qname_ref(el, "sourceRef").unwrap_or_default(),
            target: self.qname_ref(el, "targetRef").unwrap_or_default(),
        });
    }

    // --- Ids and access -------------------------------------------------------------------

    /// The id of an element that must have one (reported when missing).
    fn required_id(&mut self, el: &Element) -> Option<String> {
        let id = el.reference("id");
        match &id {
            Some(id) => self.register_id(id, el.span),
            None => self.errors.push(BpmnError::MissingId {
                tag: el.local.to_owned(),
                span: el.span,
            }),
        }
        id
    }

    /// An id for a sequence flow written without one (the schema allows that, engines
    /// accept it and nothing can refer to such a flow): `source->target`, which no XML id
    /// can be (`>` is not allowed in one), made unique with `#2`, `#3`, ...
    fn synthetic_flow_id(&mut self, el: &Element) -> String {
        let end = |attribute| el.reference(attribute).unwrap_or_default();
        let base = format!("{}->{}", end("sourceRef"), end("targetRef"));
        let mut id = base.clone();
        for n in 2.. {
            if !self.ids.contains_key(&id) {
                break;
            }
            id = format!("{base}#{n}");
        }
        self.ids.insert(id.clone(), el.span);
        id
    }

    /// A reference of type `xsd:QName` (`attachedToRef`, `processRef`, message flow ends).
    /// A prefix bound to the document's `targetNamespace` names an element of this
    /// document, so it is dropped; any other value is kept as written.
    fn qname_ref(&self, el: &Element, attribute: &str) -> Option<String> {
        let value = el.reference(attribute)?;
        let (local, prefix) = QName(&value).decompose();
        let resolved = self.reader.resolver().resolve_prefix(prefix, false);
        match (resolved, &self.doc.target_namespace) {
            (ResolveResult::Bound(ns), Some(target)) if ns.into_inner() == target => {
                Some(local.into_inner().to_owned())
            }
            _ => Some(value),
        }
    }

    /// The id of an element that may lack one ("" then).
    fn optional_id(&mut self, el: &Element) -> String {
        let id = el.reference("id").unwrap_or_default();
        if !id.is_empty() {
            self.register_id(&id, el.span);
        }
        id
    }

    fn register_id(&mut self, id: &str, span: Span) {
        match self.ids.get(id) {
            Some(&first) => self.errors.push(BpmnError::DuplicateId {
                id: id.to_owned(),
                span,
                first,
            }),
            None => {
                self.ids.insert(id.to_owned(), span);
            }
        }
    }

    fn process_mut(&mut self, p: usize) -> Option<&mut Process> {
        self.doc.processes.get_mut(p).map(std::sync::Arc::make_mut)
    }

    /// The documentation and extension-elements fields of an owner.
    fn owner_slots(&mut self, owner: Owner) -> Option<(&mut Option<String>, &mut Option<String>)> {
        match owner {
            Owner::Process(p) => self
                .process_mut(p)
                .map(|p| (&mut p.documentation, &mut p.extension_elements)),
            Owner::Node(p, n) => self
                .process_mut(p)
                .and_then(|p| p.nodes.get_mut(n))
                .map(|n| (&mut n.documentation, &mut n.extension_elements)),
        }
    }

    /// The kind of flow node a BPMN element is, if it is one.
    fn node_kind(&self, local: &str, el: &Element) -> Option<NodeKind> {
        if let Some(&task) = TASK_KINDS.iter().find(|t| t.tag() == local) {
            return Some(NodeKind::Task(task));
        }
        if let Some(&gateway) = GATEWAY_KINDS.iter().find(|g| g.tag() == local) {
            return Some(NodeKind::Gateway(gateway));
        }
        let definitions = Vec::new();
        Some(match local {
            "subProcess" => NodeKind::SubProcess(SubProcessKind::Embedded {
                triggered_by_event: el.boolean("triggeredByEvent").unwrap_or(false),
            }),
            "transaction" => NodeKind::SubProcess(SubProcessKind::Transaction),
            "adHocSubProcess" => NodeKind::SubProcess(SubProcessKind::AdHoc),
            "callActivity" => NodeKind::CallActivity {
                called_element: el.reference("calledElement"),
            },
            "startEvent" => NodeKind::StartEvent {
                definitions,
                interrupting: el.boolean("isInterrupting").unwrap_or(true),
            },
            "endEvent" => NodeKind::EndEvent { definitions },
            "intermediateCatchEvent" => NodeKind::IntermediateCatchEvent { definitions },
            "intermediateThrowEvent" => NodeKind::IntermediateThrowEvent { definitions },
            "boundaryEvent" => NodeKind::BoundaryEvent {
                attached_to: self.qname_ref(el, "attachedToRef").unwrap_or_default(),
                cancel_activity: el.boolean("cancelActivity").unwrap_or(true),
                definitions,
            },
            tag if UNSUPPORTED_NODES.contains(&tag) => NodeKind::Unsupported {
                tag: tag.to_owned(),
            },
            _ => return None,
        })
    }
}

fn event_definition(local: &str) -> Option<EventDefinition> {
    EVENT_DEFINITIONS
        .iter()
        .find(|(tag, _)| *tag == local)
        .map(|&(_, definition)| definition)
}

fn definitions_mut(kind: &mut NodeKind) -> Option<&mut Vec<EventDefinition>> {
    match kind {
        NodeKind::StartEvent { definitions, .. }
        | NodeKind::EndEvent { definitions }
        | NodeKind::IntermediateCatchEvent { definitions }
        | NodeKind::IntermediateThrowEvent { definitions }
        | NodeKind::BoundaryEvent { definitions, .. } => Some(definitions),
        _ => None,
    }
}

/// Where in its tag (counted from the character after `<`) an attribute error is.
fn attr_error_offset(err: &AttrError) -> usize {
    match *err {
        AttrError::ExpectedEq(at)
        | AttrError::ExpectedValue(at)
        | AttrError::UnquotedValue(at)
        | AttrError::ExpectedQuote(at, _)
        | AttrError::Duplicated(at, _) => at,
    }
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn trim_xml(s: &str) -> &str {
    s.trim_matches(is_xml_space)
}

/// Whether text is empty or XML white space only.
fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// XML line-end normalisation: `\r\n` and `\r` become `\n` (no copy when there is no
/// `\r`).
fn normalize_newlines<'s>(s: impl Into<Cow<'s, str>>) -> Cow<'s, str> {
    let s = s.into();
    if s.contains('\r') {
        Cow::Owned(s.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        s
    }
}

/// An attribute value with its references replaced and its line ends normalised,
/// borrowed from the tag unless that changed something; or why it is not well-formed.
fn attribute_value(raw: Cow<'_, str>) -> Result<Cow<'_, str>, String> {
    // One pass settles the usual value, which is used as written.
    if !raw.bytes().any(|b| matches!(b, b'<' | b'&' | b'\r')) {
        return Ok(raw);
    }
    if raw.contains('<') {
        return Err("`<` is not allowed in an attribute value".to_owned());
    }
    let value = match raw {
        Cow::Borrowed(raw) => unescape(raw).map(normalize_newlines),
        Cow::Owned(raw) => unescape(&raw).map(|value| normalize_newlines(value.into_owned())),
    };
    value.map_err(|err| match err {
        quick_xml::escape::EscapeError::UnrecognizedEntity(_, name) => {
            format!("in an attribute value: {}", entity_refused(&name))
        }
        err => format!("in an attribute value: {err}"),
    })
}

/// Why entity `&name;` is refused: the document may declare it in its DTD, but cuga-flo
/// expands only XML's own five (a DTD's entities can expand without bound).
fn entity_refused(name: &str) -> String {
    format!(
        "entity `&{name};` is not one of XML's own (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`): \
         cuga-flo does not expand the entities a DTD declares (they can grow without bound); \
         write the text itself"
    )
}

// ---------------------------------------------------------------------------------------
// Step 3: references
// ---------------------------------------------------------------------------------------

/// Fill in the code and name of every event's `errorRef` / `escalationRef` /
/// `messageRef` / `signalRef`; an error or escalation reference to no `<error>` (or
/// `<escalation>`) of the document is an error. A message or signal reference to none
/// keeps its reference as the name (the message may be defined in an imported file).
fn resolve_event_refs(
    doc: &mut Document,
    targets: &HashMap<String, EventTarget>,
) -> Vec<BpmnError> {
    let mut errors = Vec::new();
    for node in
        (doc.processes.iter_mut()).flat_map(|p| std::sync::Arc::make_mut(p).nodes.iter_mut())
    {
        let Some(event_ref) = node.event_ref.as_mut() else {
            continue;
        };
        let definitions = node.kind.event_definitions();
        let kind = [
            EventDefinition::Error,
            EventDefinition::Escalation,
            EventDefinition::Message,
            EventDefinition::Signal,
        ]
        .into_iter()
        .find(|d| definitions.contains(d))
        .unwrap_or(EventDefinition::Message);
        match targets.get(&event_ref.reference) {
            Some(target) if target.kind == kind => {
                event_ref.code = target.code.clone();
                event_ref.name = target.name.clone();
                event_ref.correlation_key = target.correlation_key.clone();
            }
            _ if matches!(kind, EventDefinition::Message | EventDefinition::Signal) => {}
            _ => errors.push(BpmnError::DanglingEventRef {
                event: node.id.clone(),
                attribute: if kind == EventDefinition::Error {
                    "errorRef"
                } else {
                    "escalationRef"
                },
                target: event_ref.reference.clone(),
                span: node.span,
            }),
        }
    }
    errors
}

/// Sequence flows must connect flow nodes of their process (any nesting level), and
/// boundary events must be attached to an activity of their process.
fn check_refs(doc: &Document) -> Vec<BpmnError> {
    let mut errors = Vec::new();
    for process in &doc.processes {
        let nodes: HashSet<&str> = process.nodes.iter().map(|n| n.id.as_str()).collect();
        let activities: HashSet<&str> = (process.nodes.iter())
            .filter(|n| n.kind.is_activity())
            .map(|n| n.id.as_str())
            .collect();
        for flow in &process.flows {
            for (attribute, target) in [("sourceRef", &flow.source), ("targetRef", &flow.target)] {
                if !target.is_empty() && !nodes.contains(target.as_str()) {
                    errors.push(BpmnError::DanglingRef {
                        flow: flow.id.clone(),
                        attribute,
                        target: target.clone(),
                        span: flow.span,
                    });
                }
            }
        }
        for node in &process.nodes {
            if let NodeKind::BoundaryEvent { attached_to, .. } = &node.kind
                && !activities.contains(attached_to.as_str())
            {
                errors.push(BpmnError::DanglingAttachment {
                    event: node.id.clone(),
                    target: attached_to.clone(),
                    span: node.span,
                });
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(xml: &str) -> Result<Document, ParseErrors> {
        parse(Path::new("test.bpmn"), xml.as_bytes())
    }

    /// A document with a default-namespace `<definitions>` on line 2; `body` starts on
    /// line 3.
    fn doc(body: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <definitions xmlns=\"{BPMN_NS}\" id=\"defs\" expressionLanguage=\"feel\">\n\
             {body}\n</definitions>\n"
        )
    }

    /// Each error as (variant name, line).
    fn errors(xml: &str) -> Vec<(String, usize)> {
        let failure = parse_str(xml).expect_err("the document should be rejected");
        failure
            .errors
            .iter()
            .map(|e| {
                let kind = format!("{e:?}");
                let kind = kind.split([' ', '{', '(']).next().unwrap_or_default();
                let line = match (e.span(), &failure.text) {
                    (Some(span), Some(text)) => text.line_col(span.offset).line,
                    _ => 0,
                };
                (kind.to_owned(), line)
            })
            .collect()
    }

    fn err(kind: &str, line: usize) -> (String, usize) {
        (kind.to_owned(), line)
    }

    const PROCESS: &str = r#"<process id="p" name="P" isExecutable="true">
  <startEvent id="s"/>
  <exclusiveGateway id="g" name="ok?" default="f3"/>
  <userTask id="t" name="Review &amp; approve&#10;now"/>
  <endEvent id="e"><terminateEventDefinition/></endEvent>
  <sequenceFlow id="f1" sourceRef="s" targetRef="g"/>
  <sequenceFlow id="f2" sourceRef="g" targetRef="t">
    <conditionExpression xsi:type="tFormalExpression"
      xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">  <![CDATA[${a < b}]]> </conditionExpression>
  </sequenceFlow>
  <sequenceFlow id="f3" sourceRef="g" targetRef="e"/>
  <sequenceFlow id="f4" sourceRef="t" targetRef="e"/>
</process>"#;

    /// The model without positions, for comparing documents written differently.
    fn shape(doc: &Document) -> String {
        let mut out = String::new();
        for p in &doc.processes {
            out += &format!("process {} {:?} {:?}\n", p.id, p.name, p.is_executable);
            for n in &p.nodes {
                out += &format!(
                    "  node {} {:?} {:?} {:?} {:?} {:?}\n",
                    n.id, n.name, n.kind, n.parent, n.default_flow, n.attributes
                );
            }
            for f in &p.flows {
                let c = f.condition.as_ref().map(|c| (&c.language, &c.body));
                out += &format!("  flow {} {} {} {c:?}\n", f.id, f.source, f.target);
            }
        }
        out
    }

    #[test]
    fn prefixes_and_default_namespace_give_the_same_model() {
        let prefixed = |prefix: &str| {
            // prefix every tag name: `<x` and `</x` where x is a letter
            let mut body = String::new();
            for (i, part) in PROCESS.split('<').enumerate() {
                match part.strip_prefix('/') {
                    _ if i == 0 => body.push_str(part),
                    Some(rest) => body += &format!("</{prefix}:{rest}"),
                    None if part.starts_with(char::is_alphabetic) => {
                        body += &format!("<{prefix}:{part}")
                    }
                    None => body += &format!("<{part}"),
                }
            }
            format!(
                "<{prefix}:definitions xmlns:{prefix}=\"{BPMN_NS}\" expressionLanguage=\"feel\">\
                 {body}</{prefix}:definitions>"
            )
        };
        let default = shape(&parse_str(&doc(PROCESS)).unwrap());
        assert!(default.contains("Review & approve\\nnow"), "{default}");
        assert_eq!(shape(&parse_str(&prefixed("bpmn")).unwrap()), default);
        assert_eq!(shape(&parse_str(&prefixed("bpmn2")).unwrap()), default);
        // no namespace at all is accepted as BPMN too
        let bare = doc(PROCESS).replace(&format!(" xmlns=\"{BPMN_NS}\""), "");
        assert_eq!(shape(&parse_str(&bare).unwrap()), default);
    }

    #[test]
    fn reads_the_process_its_nodes_and_flows() {
        let xml = doc(PROCESS);
        let d = parse_str(&xml).unwrap();
        assert_eq!(d.encoding, "UTF-8");
        assert_eq!(d.id.as_deref(), Some("defs"));
        let p = d.main_process().unwrap();
        assert_eq!((p.nodes.len(), p.flows.len()), (4, 4));
        let g = p.node("g").unwrap();
        assert_eq!(g.kind, NodeKind::Gateway(GatewayKind::Exclusive));
        assert_eq!(g.default_flow.as_deref(), Some("f3"));
        assert_eq!(
            d.source.slice(g.span),
            r#"<exclusiveGateway id="g" name="ok?" default="f3"/>"#
        );
        assert_eq!(d.source.line_col(g.span.offset).line, 5);
        let t = p.node("t").unwrap();
        assert_eq!(t.name.as_deref(), Some("Review & approve\nnow"));
        assert_eq!(&t.attributes["name"], "Review & approve\nnow");
        let e = p.node("e").unwrap();
        assert_eq!(e.kind.event_definitions(), [EventDefinition::Terminate]);
        let c = p.flow("f2").unwrap().condition.as_ref().unwrap();
        assert_eq!(c.body, "${a < b}");
        assert_eq!(c.language.as_deref(), Some("feel"));
        assert_eq!(d.source.slice(c.span), "${a < b}");
        assert!(p.flow("f1").unwrap().condition.is_none());
    }

    #[test]
    fn lookups_by_id_agree_with_a_scan_and_survive_later_changes() {
        let mut p = parse_str(&doc(PROCESS))
            .unwrap()
            .main_process()
            .unwrap()
            .clone();
        for n in &p.nodes {
            assert_eq!(p.node(&n.id).map(|m| &m.id), Some(&n.id));
        }
        for f in &p.flows {
            assert_eq!(p.flow(&f.id).map(|m| &m.id), Some(&f.id));
        }
        assert!(p.node("f1").is_none() && p.flow("g").is_none() && p.node("nope").is_none());
        // the index was built; a list changed afterwards is scanned, never misread
        let mut extra = p.nodes[0].clone();
        extra.id = "late".into();
        p.nodes.insert(0, extra);
        assert_eq!(p.node("late").map(|n| n.id.as_str()), Some("late"));
        assert_eq!(p.node("g").map(|n| n.id.as_str()), Some("g"));
        p.nodes.swap(0, 1);
        assert_eq!(p.node("late").map(|n| n.id.as_str()), Some("late"));
    }

    #[test]
    fn conditions_unescape_entities_and_prefer_their_own_language() {
        let xml = doc(r#"<process id="p"><task id="a"/><task id="b"/>
<sequenceFlow id="f" sourceRef="a" targetRef="b"><conditionExpression language="js">
  x &gt; 1 &amp;&amp; y
</conditionExpression></sequenceFlow>
<sequenceFlow id="g" sourceRef="a" targetRef="b"><conditionExpression/></sequenceFlow></process>"#);
        let d = parse_str(&xml).unwrap();
        let p = &d.processes[0];
        let c = p.flows[0].condition.as_ref().unwrap();
        assert_eq!(
            (c.language.as_deref(), c.body.as_str()),
            (Some("js"), "x > 1 && y")
        );
        assert_eq!(d.source.slice(c.span), "x &gt; 1 &amp;&amp; y");
        let empty = p.flows[1].condition.as_ref().unwrap();
        assert_eq!(empty.body, "");
        assert_eq!(d.source.slice(empty.span), "<conditionExpression/>");
    }

    #[test]
    fn keeps_documentation_extension_elements_properties_and_lanes() {
        let xml = doc(r#"<process id="p">
<documentation>About &lt;p&gt;</documentation>
<extensionElements><x:a xmlns:x="urn:x" v="1"/></extensionElements>
<property id="amount" name="amount" itemSubjectRef="Integer"/>
<laneSet id="ls"><lane id="l1" name="Office"><flowNodeRef>t</flowNodeRef>
  <childLaneSet><lane id="l2"><flowNodeRef> t </flowNodeRef></lane></childLaneSet></lane></laneSet>
<task id="t"><documentation>Do it</documentation><extensionElements/></task>
</process>"#);
        let d = parse_str(&xml).unwrap();
        let p = &d.processes[0];
        assert_eq!(p.documentation.as_deref(), Some("About <p>"));
        assert_eq!(
            p.extension_elements.as_deref(),
            Some(r#"<x:a xmlns:x="urn:x" v="1"/>"#)
        );
        assert_eq!(p.properties[0].item_subject_ref.as_deref(), Some("Integer"));
        let lanes: Vec<_> = p
            .lanes
            .iter()
            .map(|l| (l.id.as_str(), l.flow_node_refs.clone()))
            .collect();
        assert_eq!(
            lanes,
            [("l1", vec!["t".to_owned()]), ("l2", vec!["t".to_owned()])]
        );
        let t = &p.nodes[0];
        assert_eq!(t.documentation.as_deref(), Some("Do it"));
        assert_eq!(t.extension_elements.as_deref(), Some(""));
    }

    #[test]
    fn nested_sub_processes_set_parent() {
        let xml = doc(r#"<process id="p">
<subProcess id="outer"><startEvent id="s1"/>
  <subProcess id="inner" triggeredByEvent="true"><task id="deep"/>
    <sequenceFlow id="fi" sourceRef="deep" targetRef="deep"/></subProcess>
  <sequenceFlow id="fo" sourceRef="s1" targetRef="inner"/>
</subProcess>
<boundaryEvent id="b" attachedToRef="outer" cancelActivity="false"><timerEventDefinition/></boundaryEvent>
<task id="top"/><sequenceFlow id="ft" sourceRef="b" targetRef="deep"/>
</process>"#);
        let d = parse_str(&xml).unwrap();
        let p = &d.processes[0];
        let parent = |id: &str| p.node(id).unwrap().parent.clone();
        assert_eq!(parent("outer"), None);
        assert_eq!(parent("s1").as_deref(), Some("outer"));
        assert_eq!(parent("inner").as_deref(), Some("outer"));
        assert_eq!(parent("deep").as_deref(), Some("inner"));
        assert_eq!(parent("top"), None);
        assert_eq!(p.flow("fi").unwrap().parent.as_deref(), Some("inner"));
        assert_eq!(p.flow("fo").unwrap().parent.as_deref(), Some("outer"));
        assert_eq!(
            p.node("inner").unwrap().kind,
            NodeKind::SubProcess(SubProcessKind::Embedded {
                triggered_by_event: true
            })
        );
        let b = &p.node("b").unwrap().kind;
        assert_eq!(
            *b,
            NodeKind::BoundaryEvent {
                attached_to: "outer".into(),
                cancel_activity: false,
                definitions: vec![EventDefinition::Timer]
            }
        );
        assert_eq!(p.children(Some("outer")).count(), 2);
    }

    /// `messageRef` / `signalRef` (and a receive task's `messageRef`) take the name of the
    /// `<message>` / `<signal>` they name; one naming nothing in the document keeps its
    /// reference (it may be defined in an imported file) and is not an error.
    #[test]
    fn message_and_signal_references_are_resolved() {
        let xml = doc(r#"<process id="p">
<receiveTask id="r" messageRef="m1"/>
<intermediateCatchEvent id="c"><messageEventDefinition messageRef="m1"/></intermediateCatchEvent>
<intermediateThrowEvent id="s"><signalEventDefinition signalRef="s1"/></intermediateThrowEvent>
<intermediateCatchEvent id="x"><messageEventDefinition messageRef="elsewhere"/></intermediateCatchEvent>
</process>
<message id="m1" name="Payment"/>
<signal id="s1" name="Go"/>"#);
        let d = parse_str(&xml).unwrap();
        let p = &d.processes[0];
        let name = |id: &str| {
            let r = p.node(id).unwrap().event_ref.clone().unwrap();
            (r.reference, r.name)
        };
        assert_eq!(name("r"), ("m1".to_string(), Some("Payment".to_string())));
        assert_eq!(name("c"), ("m1".to_string(), Some("Payment".to_string())));
        assert_eq!(name("s"), ("s1".to_string(), Some("Go".to_string())));
        assert_eq!(name("x"), ("elsewhere".to_string(), None));
    }

    /// Camunda 8 gives a `<message>` its correlation key in `<zeebe:subscription>`; every
    /// event naming the message carries it, a message without one has none.
    #[test]
    fn a_zeebe_subscription_gives_the_message_its_correlation_key() {
        let xml = doc(r#"<process id="p">
<intermediateCatchEvent id="c"><messageEventDefinition messageRef="m1"/></intermediateCatchEvent>
<receiveTask id="r" messageRef="m1"/>
<intermediateCatchEvent id="o"><messageEventDefinition messageRef="m2"/></intermediateCatchEvent>
</process>
<message id="m1" name="DocumentRequested"><extensionElements>
  <zeebe:subscription xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" correlationKey=" = documentReferenceId "/>
</extensionElements></message>
<message id="m2" name="Other"><extensionElements><zeebe:taskHeaders xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"/></extensionElements></message>"#);
        let d = parse_str(&xml).unwrap();
        let p = &d.processes[0];
        let key = |id: &str| {
            p.node(id)
                .unwrap()
                .event_ref
                .clone()
                .unwrap()
                .correlation_key
        };
        assert_eq!(key("c").as_deref(), Some("= documentReferenceId"));
        assert_eq!(key("r").as_deref(), Some("= documentReferenceId"));
        assert_eq!(key("o"), None);
    }

    /// `errorRef` / `escalationRef` take the code and name of the element they name,
    /// wherever in the document it is; a definition without a reference catches all.
    #[test]
    fn error_and_escalation_references_are_resolved() {
        let xml = doc(r#"<process id="p">
<task id="t"/>
<boundaryEvent id="b1" attachedToRef="t"><errorEventDefinition errorRef="e1"/></boundaryEvent>
<boundaryEvent id="b2" attachedToRef="t"><errorEventDefinition/></boundaryEvent>
<boundaryEvent id="b3" attachedToRef="t" cancelActivity="false"><escalationEventDefinition escalationRef="x1"/></boundaryEvent>
<endEvent id="end"><errorEventDefinition errorRef="e2"/></endEvent>
</process>
<error id="e1" errorCode=" PAYMENT_FAILED " name="Payment failed"/>
<error id="e2" name="No code"/>
<escalation id="x1" escalationCode="LATE"/>"#);
        let d = parse_str(&xml).unwrap();
        let p = &d.processes[0];
        let r = |id: &str| p.node(id).unwrap().event_ref.clone();
        let one = |reference: &str, code: Option<&str>, name: Option<&str>| {
            Some(EventRef {
                reference: reference.into(),
                code: code.map(Into::into),
                name: name.map(Into::into),
                correlation_key: None,
            })
        };
        assert_eq!(
            r("b1"),
            one("e1", Some("PAYMENT_FAILED"), Some("Payment failed"))
        );
        assert_eq!(r("b2"), None);
        assert_eq!(r("b3"), one("x1", Some("LATE"), None));
        assert_eq!(r("end"), one("e2", None, Some("No code")));
        assert_eq!(r("end").unwrap().label(), "No code");
        assert!(matches!(
            p.node("b3").unwrap().kind,
            NodeKind::BoundaryEvent {
                cancel_activity: false,
                ..
            }
        ));
    }

    /// A reference to no `<error>` (or to an `<escalation>` from an error event) is an
    /// error at the event.
    /// Multi-instance loop characteristics in BPMN's own elements, Camunda 7's and
    /// Flowable's attributes and Zeebe's extension read into one shape.
    #[test]
    fn multi_instance_characteristics_in_every_dialect() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:flowable="http://flowable.org/bpmn" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0">
  <process id="p">
    <userTask id="std">
      <multiInstanceLoopCharacteristics isSequential="true">
        <loopDataInputRef>items</loopDataInputRef>
        <loopDataOutputRef>results</loopDataOutputRef>
        <inputDataItem id="in_1" name="item"/>
        <outputDataItem id="out_1" name="result"/>
        <completionCondition>${nrOfCompletedInstances &gt;= 2}</completionCondition>
      </multiInstanceLoopCharacteristics>
    </userTask>
    <userTask id="cam">
      <multiInstanceLoopCharacteristics camunda:collection="${reviewers}" camunda:elementVariable="reviewer"/>
    </userTask>
    <serviceTask id="flo">
      <multiInstanceLoopCharacteristics flowable:collection="lines" flowable:elementVariable="line">
        <loopCardinality>3</loopCardinality>
      </multiInstanceLoopCharacteristics>
    </serviceTask>
    <subProcess id="zee">
      <multiInstanceLoopCharacteristics>
        <extensionElements>
          <zeebe:loopCharacteristics inputCollection="= orders" inputElement="order" outputCollection="totals" outputElement="= total" />
        </extensionElements>
        <completionCondition xsi:type="tFormalExpression" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">= total &gt; 10</completionCondition>
      </multiInstanceLoopCharacteristics>
      <task id="inner"/>
    </subProcess>
    <task id="plain"><standardLoopCharacteristics/></task>
  </process>
</definitions>"#;
        let doc = parse_str(xml).unwrap();
        let p = doc.main_process().unwrap();
        let multi = |id: &str| {
            let looping = p.node(id).unwrap().looping.clone().unwrap();
            (looping.kind, looping.multi)
        };
        let (kind, std) = multi("std");
        assert_eq!(kind, LoopKind::MultiInstance { sequential: true });
        assert_eq!(std.collection.as_deref(), Some("items"));
        assert_eq!(std.element_variable.as_deref(), Some("item"));
        assert_eq!(std.output_collection.as_deref(), Some("results"));
        assert_eq!(std.output_element.as_deref(), Some("result"));
        assert_eq!(
            std.completion_condition.as_deref(),
            Some("${nrOfCompletedInstances >= 2}")
        );
        let (kind, cam) = multi("cam");
        assert_eq!(kind, LoopKind::MultiInstance { sequential: false });
        assert_eq!(cam.collection.as_deref(), Some("${reviewers}"));
        assert_eq!(cam.element_variable.as_deref(), Some("reviewer"));
        let (_, flo) = multi("flo");
        assert_eq!(flo.collection.as_deref(), Some("lines"));
        assert_eq!(flo.element_variable.as_deref(), Some("line"));
        assert_eq!(flo.cardinality.as_deref(), Some("3"));
        let (_, zee) = multi("zee");
        assert_eq!(zee.collection.as_deref(), Some("= orders"));
        assert_eq!(zee.element_variable.as_deref(), Some("order"));
        assert_eq!(zee.output_collection.as_deref(), Some("totals"));
        assert_eq!(zee.output_element.as_deref(), Some("= total"));
        assert_eq!(zee.completion_condition.as_deref(), Some("= total > 10"));
        assert_eq!(p.node("inner").unwrap().parent.as_deref(), Some("zee"));
        let (kind, plain) = multi("plain");
        assert_eq!(kind, LoopKind::Standard);
        assert!(plain.is_empty());
    }

    #[test]
    fn a_dangling_error_reference_is_an_error() {
        let xml = doc(r#"<process id="p">
<endEvent id="a"><errorEventDefinition errorRef="nope"/></endEvent>
<endEvent id="b"><errorEventDefinition errorRef="x1"/></endEvent>
</process>
<escalation id="x1" escalationCode="LATE"/>"#);
        assert_eq!(
            errors(&xml),
            [err("DanglingEventRef", 4), err("DanglingEventRef", 5)]
        );
    }

    #[test]
    fn collaborations_unsupported_nodes_and_flows_without_id() {
        let xml = format!(
            r#"<definitions xmlns="{BPMN_NS}" xmlns:tns="urn:t" targetNamespace="urn:t">
<collaboration id="c"><participant id="pa" processRef="tns:p"/>
  <messageFlow id="m" sourceRef="pa" targetRef="tns:x"/></collaboration>
<process id="p"><startEvent id="s" isInterrupting="false"><messageEventDefinition/></startEvent>
<choreographyTask id="x"/><sequenceFlow sourceRef="s" targetRef="x"/>
<sequenceFlow sourceRef="s" targetRef="x"/></process></definitions>"#
        );
        let d = parse_str(&xml).unwrap();
        assert_eq!(d.participants[0].process_ref.as_deref(), Some("p"));
        assert_eq!(
            (
                d.message_flows[0].source.as_str(),
                d.message_flows[0].target.as_str()
            ),
            ("pa", "x")
        );
        let p = &d.processes[0];
        assert_eq!(
            p.nodes[1].kind,
            NodeKind::Unsupported {
                tag: "choreographyTask".into()
            }
        );
        assert_eq!(
            p.nodes[0].kind,
            NodeKind::StartEvent {
                definitions: vec![EventDefinition::Message],
                interrupting: false
            }
        );
        let ids: Vec<_> = p.flows.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["s->x", "s->x#2"]);
    }

    #[test]
    fn iso_8859_1_and_windows_1252_are_transcoded() {
        let mut latin1 = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n".to_vec();
        latin1.extend_from_slice(
            doc("<process id=\"p\" name=\"Caf\u{1}\"/>")
                .split_once('\n')
                .unwrap()
                .1
                .as_bytes(),
        );
        let at = latin1.iter().position(|&b| b == 1).unwrap();
        latin1[at] = 0xE9;
        let d = parse(Path::new("l.bpmn"), &latin1).unwrap();
        assert_eq!(
            (d.encoding.as_str(), d.processes[0].name.as_deref()),
            ("ISO-8859-1", Some("Café"))
        );
        assert_eq!(
            d.source.slice(d.processes[0].span),
            "<process id=\"p\" name=\"Café\"/>"
        );

        let cp1252 = [
            b"<?xml version='1.0' encoding='windows-1252'?>".as_slice(),
            format!("<definitions xmlns='{BPMN_NS}'><process id='p' name='").as_bytes(),
            &[0x80, b'5'],
            b"'/></definitions>",
        ]
        .concat();
        let d = parse(Path::new("w.bpmn"), &cp1252).unwrap();
        assert_eq!(d.processes[0].name.as_deref(), Some("€5"));
    }

    #[test]
    fn utf16_with_a_byte_order_mark_is_transcoded() {
        let xml = doc("<process id=\"p\" name=\"Ω\"/>").replace("UTF-8", "UTF-16");
        let mut bytes = vec![0xFF, 0xFE];
        xml.encode_utf16()
            .for_each(|u| bytes.extend_from_slice(&u.to_le_bytes()));
        let d = parse(Path::new("u.bpmn"), &bytes).unwrap();
        assert_eq!(
            (d.encoding.as_str(), d.processes[0].name.as_deref()),
            ("UTF-16", Some("Ω"))
        );
    }

    #[test]
    fn encoding_problems() {
        let unknown = parse_str("<?xml version='1.0' encoding='klingon'?><a/>").unwrap_err();
        assert_eq!(
            unknown.errors,
            [BpmnError::UnknownEncoding("klingon".into())]
        );
        assert!(unknown.text.is_none());
        let utf16 = parse_str("<?xml version='1.0' encoding='UTF-16'?><a/>").unwrap_err();
        assert!(matches!(utf16.errors[..], [BpmnError::BadEncoding { .. }]));

        let mut bytes = doc(PROCESS).into_bytes();
        let at = bytes.windows(6).position(|w| w == b"Review").unwrap();
        bytes[at] = 0xE4;
        let bad = parse(Path::new("bad.bpmn"), &bytes).unwrap_err();
        let [BpmnError::NotWellFormed { message, span }] = &bad.errors[..] else {
            panic!("{:?}", bad.errors)
        };
        assert!(message.contains("0xE4"), "{message}");
        assert_eq!(bad.text.unwrap().line_col(span.offset).line, 6);
    }

    #[test]
    fn xml_errors_are_reported_at_their_line() {
        let mismatched = doc("<process id=\"p\">\n<task id=\"t\">\n</process>");
        assert_eq!(errors(&mismatched), [err("NotWellFormed", 5)]);
        let unclosed = "<definitions>\n<process id='p'>\n<task id='t'>";
        assert_eq!(errors(unclosed), [err("NotWellFormed", 3)]);
        assert_eq!(
            errors("<a>\n<b x='1' x='2'/></a>"),
            [err("NotWellFormed", 2)]
        );
        assert_eq!(errors("<a>\n\n&nbsp;</a>"), [err("NotWellFormed", 3)]);
        assert_eq!(errors("<a/>\n<b/>"), [err("NotWellFormed", 2)]);
        assert_eq!(errors("<a>\n<p:b/></a>"), [err("NotWellFormed", 2)]);
        assert_eq!(errors("<a>\n\u{1}</a>"), [err("NotWellFormed", 2)]);
        assert_eq!(errors(""), [err("NotWellFormed", 1)]);
    }

    #[test]
    fn model_errors_are_reported_at_their_line() {
        let other = "<?xml version='1.0'?>\n<definitions xmlns='urn:not-bpmn'/>";
        assert_eq!(errors(other), [err("NotBpmn", 2)]);
        assert_eq!(errors(&doc("<message id='m'/>")), [err("NoProcess", 2)]);
        assert_eq!(errors(&doc("<process>\n</process>")), [err("MissingId", 3)]);
        let missing = doc(
            "<process id='p'>\n<task/>\n<task id='t'/>\n<sequenceFlow id='f' targetRef='t'/></process>",
        );
        assert_eq!(
            errors(&missing),
            [err("MissingId", 4), err("MissingRef", 6)]
        );
        let attached = doc(
            "<process id='p'><startEvent id='s'/>\n<boundaryEvent id='b' attachedToRef='s'/></process>",
        );
        assert_eq!(errors(&attached), [err("DanglingAttachment", 4)]);
    }

    #[test]
    fn all_reference_problems_are_reported_at_once() {
        let xml = doc("<process id='p'>\n<task id='a'/>\n<task id='a'/>\n\
             <sequenceFlow id='f1' sourceRef='a' targetRef='nowhere'/>\n\
             <sequenceFlow id='f2' sourceRef='ghost' targetRef='a'/>\n\
             <laneSet><lane id='p'/></laneSet></process>\n\
             <process id='q'><task id='b'/>\n<sequenceFlow id='f3' sourceRef='b' targetRef='a'/></process>");
        let expected = [
            err("DuplicateId", 5),
            err("DanglingRef", 6),
            err("DanglingRef", 7),
            err("DuplicateId", 8),
            err("DanglingRef", 10),
        ];
        assert_eq!(errors(&xml), expected);
        let failure = parse_str(&xml).unwrap_err();
        let text = failure.text.as_ref().unwrap();
        let BpmnError::DuplicateId { first, .. } = &failure.errors[0] else {
            panic!()
        };
        assert_eq!(text.line_col(first.offset).line, 4);
        assert!(
            failure
                .first_line()
                .starts_with("test.bpmn:5:1: duplicate id `a`")
        );
    }

    #[test]
    fn parse_file_reports_io_errors() {
        let failure = parse_file(Path::new("/nonexistent/x.bpmn")).unwrap_err();
        assert!(failure.text.is_none());
        assert!(matches!(failure.errors[..], [BpmnError::Io { .. }]));
    }

    /// Spans of errors lie inside the text, on character boundaries.
    fn check_spans(result: Result<Document, ParseErrors>) {
        if let Err(failure) = result {
            assert!(!failure.errors.is_empty());
            if let Some(text) = &failure.text {
                for span in failure.errors.iter().filter_map(BpmnError::span) {
                    assert!(span.end() <= text.text().len(), "{span:?}");
                    assert!(text.text().is_char_boundary(span.offset), "{span:?}");
                    let _ = failure.first_line();
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            check_spans(parse(Path::new("g.bpmn"), &bytes));
        }

        #[test]
        fn damaged_documents_never_panic(cut in 0usize..2000, insert in "[<>&;/=\"' a-z:#é\u{0}-\u{1f}]{0,6}") {
            let mut xml = doc(PROCESS);
            let mut at = cut.min(xml.len());
            while !xml.is_char_boundary(at) {
                at -= 1;
            }
            xml.insert_str(at, &insert);
            check_spans(parse_str(&xml));
            check_spans(parse_str(xml.get(..at).unwrap_or_default()));
        }
    }
}
