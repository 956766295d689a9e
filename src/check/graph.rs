//! The model as a graph: every node reachable from a start, an end reachable from every
//! node, gateways with a sensible shape, defaults that name real flows, and no element
//! kind cuga-flo cannot run. Each scope (the process, each sub-process) is checked on
//! its own, as BPMN scopes are.

use std::collections::VecDeque;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::bpmn::{
    Document, EventDefinition, Flow, GatewayKind, Node, NodeKind, ProcessIndex, SubProcessKind,
    TaskKind,
};
use crate::diag::{Diagnostic, name_list};

/// Structural problems of one process of `doc`.
pub fn check_process(doc: &Document, index: &ProcessIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let file = &doc.source;
    let process = index.process();

    for node in &process.nodes {
        check_node_shape(doc, index, node, &mut out);
    }

    // Scopes: the process itself and each sub-process.
    let mut scopes: Vec<Option<&str>> = vec![None];
    scopes.extend(
        process
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::SubProcess(_)))
            .map(|n| Some(n.id.as_str())),
    );
    for scope in scopes {
        check_scope(doc, index, scope, &mut out);
    }
    out.extend(super::cycles::check(doc, index));
    out.extend(step_budget(doc, process));

    if process.start_events().all(|n| n.parent.is_some()) {
        out.push(
            Diagnostic::error(
                "graph::no_start",
                format!(
                    "process `{}` has no start event, so it cannot be started",
                    process.id
                ),
            )
            .at(
                file,
                process.span,
                "no startEvent at process level".to_string(),
            )
            .with_help("add a start event and connect it to the first task"),
        );
    }
    out
}

fn at(doc: &Document, node: &Node, d: Diagnostic, label: impl Into<String>) -> Diagnostic {
    d.at(&doc.source, node.span, Some(label.into()))
}

fn check_node_shape(doc: &Document, index: &ProcessIndex, node: &Node, out: &mut Vec<Diagnostic>) {
    let incoming = index.incoming(&node.id);
    let outgoing = index.outgoing(&node.id);
    let id = &node.id;
    match &node.kind {
        NodeKind::Unsupported { tag } => out.push(at(
            doc,
            node,
            Diagnostic::error(
                "graph::unsupported",
                format!("cuga-flo cannot run a `{tag}` (`{id}`)"),
            ),
            "unsupported element",
        )),
        NodeKind::StartEvent { .. } if !incoming.is_empty() => out.push(at(
            doc,
            node,
            Diagnostic::error(
                "graph::start_incoming",
                format!("start event `{id}` has incoming flows"),
            ),
            format!(
                "entered by {}",
                name_list(&incoming.iter().map(|f| &f.id).collect::<Vec<_>>(), 4)
            ),
        )),
        NodeKind::EndEvent { .. } if !outgoing.is_empty() => out.push(at(
            doc,
            node,
            Diagnostic::error(
                "graph::end_outgoing",
                format!("end event `{id}` has outgoing flows"),
            ),
            format!(
                "left by {}",
                name_list(&outgoing.iter().map(|f| &f.id).collect::<Vec<_>>(), 4)
            ),
        )),
        NodeKind::Gateway(kind) => check_gateway(doc, index, node, *kind, incoming, outgoing, out),
        _ => {}
    }

    if let Some(default) = &node.default_flow {
        match outgoing.iter().find(|f| &f.id == default) {
            None => out.push(
                at(
                    doc,
                    node,
                    Diagnostic::error(
                        "graph::bad_default",
                        format!("`{id}` names `{default}` as its default flow, but that is not one of its outgoing flows"),
                    ),
                    "default flow not outgoing",
                )
                .with_help(format!(
                    "its outgoing flows are {}",
                    name_list(&outgoing.iter().map(|f| &f.id).collect::<Vec<_>>(), 6)
                )),
            ),
            Some(flow) if flow.condition.is_some() => out.push(
                Diagnostic::warning(
                    "graph::default_condition",
                    format!("default flow `{default}` has a condition, which is ignored"),
                )
                .at(&doc.source, flow.span, Some("a default flow is taken when no other flow's condition holds".into())),
            ),
            Some(_) => {}
        }
    }
}

fn check_gateway(
    doc: &Document,
    index: &ProcessIndex,
    node: &Node,
    kind: GatewayKind,
    incoming: &[&Flow],
    outgoing: &[&Flow],
    out: &mut Vec<Diagnostic>,
) {
    let id = &node.id;
    let tag = kind.tag();
    if incoming.is_empty() && outgoing.is_empty() {
        out.push(
            at(
                doc,
                node,
                Diagnostic::error(
                    "graph::gateway_degree",
                    format!("{tag} `{id}` is not connected: no sequence flow enters or leaves it"),
                ),
                "disconnected",
            )
            .with_help("connect it with sequence flows, or remove it"),
        );
        return;
    }
    if outgoing.is_empty() {
        out.push(at(
            doc,
            node,
            Diagnostic::error(
                "graph::gateway_degree",
                format!("{tag} `{id}` has no outgoing flow"),
            ),
            "tokens would stop here",
        ));
    }
    if incoming.is_empty() && !instantiates(node) {
        let d = at(
            doc,
            node,
            Diagnostic::error(
                "graph::gateway_degree",
                format!("{tag} `{id}` has no incoming flow"),
            ),
            "nothing enters this gateway",
        );
        out.push(if kind == GatewayKind::EventBased {
            d.with_help("connect it, or add instantiate=\"true\" if its events start the process")
        } else {
            d
        });
    }
    if incoming.len() == 1 && outgoing.len() == 1 {
        out.push(
            at(
                doc,
                node,
                Diagnostic::warning(
                    "graph::gateway_degree",
                    format!("{tag} `{id}` neither splits nor joins"),
                ),
                "one flow in, one flow out",
            )
            .with_help("remove the gateway and connect the flows directly"),
        );
    }
    if incoming.len() > 1 && outgoing.len() > 1 {
        out.push(
            at(
                doc,
                node,
                Diagnostic::warning(
                    "graph::gateway_degree",
                    format!("{tag} `{id}` both joins and splits"),
                ),
                format!("{} in, {} out", incoming.len(), outgoing.len()),
            )
            .with_help("model the join and the split as two gateways so each has one meaning"),
        );
    }
    match kind {
        GatewayKind::Parallel => {
            for flow in outgoing.iter().filter(|f| f.condition.is_some()) {
                out.push(
                    Diagnostic::warning(
                        "graph::parallel_condition",
                        format!("flow `{}` leaves parallel gateway `{id}` with a condition, which is ignored", flow.id),
                    )
                    .at(&doc.source, flow.span, Some("a parallel split takes every flow".into()))
                    .with_help("use an inclusive gateway to take only the flows whose conditions hold"),
                );
            }
            if node.default_flow.is_some() {
                out.push(at(
                    doc,
                    node,
                    Diagnostic::error(
                        "graph::bad_default",
                        format!("parallel gateway `{id}` has a default flow"),
                    ),
                    "a parallel split takes every flow",
                ));
            }
        }
        GatewayKind::EventBased => {
            for flow in outgoing {
                let target = index.node(&flow.target);
                let ok = target.is_some_and(|t| {
                    matches!(
                        t.kind,
                        NodeKind::IntermediateCatchEvent { .. } | NodeKind::Task(TaskKind::Receive)
                    )
                });
                if !ok {
                    out.push(
                        Diagnostic::error(
                            "graph::event_gateway_target",
                            format!(
                                "flow `{}` leaves event-based gateway `{id}` towards `{}`, which is not an intermediate catch event or receive task",
                                flow.id, flow.target
                            ),
                        )
                        .at(&doc.source, flow.span, Some("an event-based gateway waits for one of its events".into())),
                    );
                }
            }
        }
        _ => {}
    }
}

/// Reachability within one scope: from its starts forwards, from its ends backwards.
fn check_scope(
    doc: &Document,
    index: &ProcessIndex,
    scope: Option<&str>,
    out: &mut Vec<Diagnostic>,
) {
    let process = index.process();
    let members = index.children(scope);
    // The activities of an ad-hoc sub-process run in any order: no flow to check.
    let ad_hoc = scope
        .and_then(|s| index.node(s))
        .is_some_and(|n| n.kind == NodeKind::SubProcess(SubProcessKind::AdHoc));
    if members.is_empty() || ad_hoc {
        return;
    }
    let ids: HashSet<&str> = members.iter().map(|n| n.id.as_str()).collect();
    let mut succ: HashMap<&str, Vec<&str>> = HashMap::with_capacity(members.len());
    let mut pred: HashMap<&str, Vec<&str>> = HashMap::with_capacity(members.len());
    let edge =
        |a: &'_ str, b: &'_ str, succ: &mut HashMap<_, Vec<_>>, pred: &mut HashMap<_, Vec<_>>| {
            let (Some(a), Some(b)) = (ids.get(a).copied(), ids.get(b).copied()) else {
                return;
            };
            succ.entry(a).or_insert_with(Vec::new).push(b);
            pred.entry(b).or_insert_with(Vec::new).push(a);
        };
    // The flows between members: those leaving a member towards another.
    for flow in ids.iter().flat_map(|id| index.outgoing(id)) {
        edge(&flow.source, &flow.target, &mut succ, &mut pred);
    }
    // A link throw event continues at the link catch events of the same name.
    let is_link = |n: &Node| n.kind.event_definitions().contains(&EventDefinition::Link);
    let mut catches: HashMap<&str, Vec<&str>> = HashMap::new();
    for c in members
        .iter()
        .filter(|c| matches!(c.kind, NodeKind::IntermediateCatchEvent { .. }) && is_link(c))
    {
        if let Some(name) = &c.name {
            catches.entry(name.as_str()).or_default().push(&c.id);
        }
    }
    for node in members {
        // A boundary event is entered by the activity it is attached to.
        if let NodeKind::BoundaryEvent { attached_to, .. } = &node.kind {
            edge(attached_to, &node.id, &mut succ, &mut pred);
        }
        if matches!(node.kind, NodeKind::IntermediateThrowEvent { .. }) && is_link(node) {
            let targets = node.name.as_deref().and_then(|n| catches.get(n));
            for catch in targets.into_iter().flatten() {
                edge(&node.id, catch, &mut succ, &mut pred);
            }
        }
    }

    let has_start = members.iter().any(|n| n.kind.is_start_event());
    let entries: Vec<&str> = members
        .iter()
        .filter(|n| {
            n.kind.is_start_event()
                || matches!(n.kind, NodeKind::SubProcess(SubProcessKind::Embedded { triggered_by_event: true }))
                // a scope without start events starts at every node nothing flows into
                || (!has_start && scope.is_some() && !pred.contains_key(n.id.as_str())
                    && !matches!(n.kind, NodeKind::BoundaryEvent { .. }))
                // compensation handlers are entered through associations, not flows
                || is_compensation(n)
                // an event-based gateway or a receive task may instantiate the process
                || instantiates(n)
        })
        .map(|n| n.id.as_str())
        .collect();
    let exits: Vec<&str> = members
        .iter()
        .filter(|n| n.kind.is_end_event() || !succ.contains_key(n.id.as_str()))
        .map(|n| n.id.as_str())
        .collect();

    let reached = walk(&entries, &succ);
    let finishing = walk(&exits, &pred);
    let scope_name = scope.map_or_else(
        || format!("process `{}`", process.id),
        |s| format!("sub-process `{s}`"),
    );

    // One diagnostic per mistake: an unreachable region is reported at the element(s)
    // that cut it off, not at every element after them (the boundary events of an
    // unreachable sub-process, the tasks after an orphan gateway); a region that cannot
    // finish is reported once per loop that traps tokens.
    if !entries.is_empty() {
        let unreachable: Vec<&Node> = members
            .iter()
            .copied()
            .filter(|n| !reached.contains(n.id.as_str()))
            .collect();
        for (root, after) in cut_off(&unreachable, &succ, &pred) {
            // A gateway no flow enters is reported by its shape already.
            if root.kind.is_gateway() && index.incoming(&root.id).is_empty() {
                continue;
            }
            let mut help = "connect it with a sequence flow, or remove it".to_string();
            if matches!(
                root.kind,
                NodeKind::Task(TaskKind::Receive) | NodeKind::Gateway(GatewayKind::EventBased)
            ) && scope.is_none()
            {
                help.push_str(" (add instantiate=\"true\" if it is what starts the process)");
            }
            let label = if after.is_empty() {
                "unreachable".to_string()
            } else {
                format!(
                    "unreachable, and so {} after it: {}",
                    if after.len() == 1 {
                        "is the element"
                    } else {
                        "are the elements"
                    },
                    name_list(&after, 4)
                )
            };
            out.push(
                at(
                    doc,
                    root,
                    Diagnostic::error(
                        "graph::unreachable",
                        format!(
                            "`{}` ({}) cannot be reached from a start event of {scope_name}",
                            root.id,
                            root.kind.tag()
                        ),
                    ),
                    label,
                )
                .with_help(help),
            );
        }
    }
    let stuck: HashSet<&str> = members
        .iter()
        .map(|n| n.id.as_str())
        .filter(|id| (entries.is_empty() || reached.contains(id)) && !finishing.contains(id))
        .collect();
    for lp in trapping_loops(members, &stuck, &succ) {
        let first = lp[0];
        let others: Vec<&str> = lp[1..].iter().map(|n| n.id.as_str()).collect();
        let message = if others.is_empty() {
            format!(
                "no path leads from `{}` ({}) to an end of {scope_name}",
                first.id,
                first.kind.tag()
            )
        } else {
            format!(
                "no path leads from the loop through `{}` and {} to an end of {scope_name}",
                first.id,
                name_list(&others, 4)
            )
        };
        out.push(
            at(
                doc,
                first,
                Diagnostic::error("graph::no_end", message),
                "tokens here can never finish",
            )
            .with_help("every loop needs a way out towards an end event"),
        );
    }

    for node in members {
        let id = node.id.as_str();
        let implicit_end = !node.kind.is_end_event()
            && !succ.contains_key(id)
            && !node.kind.is_gateway()
            && !matches!(node.kind, NodeKind::Unsupported { .. });
        // An event sub-process is started by its event, never by flows: BPMN forbids
        // connecting it, so it gets no advice about sequence flows.
        let event_sub_process = matches!(
            node.kind,
            NodeKind::SubProcess(SubProcessKind::Embedded {
                triggered_by_event: true
            })
        );
        if implicit_end
            && node.kind.is_activity()
            && scope.is_none()
            && !is_compensation(node)
            && !event_sub_process
            && reached.contains(id)
        {
            out.push(
                at(
                    doc,
                    node,
                    Diagnostic::warning(
                        "graph::implicit_end",
                        format!("`{id}` has no outgoing flow; its token ends there"),
                    ),
                    "implicit end",
                )
                .with_help("connect it to an end event to make the end explicit"),
            );
        }
    }
}

/// A node that starts its process when its event happens: an event-based gateway or a
/// receive task with `instantiate="true"`.
fn instantiates(node: &Node) -> bool {
    matches!(
        node.kind,
        NodeKind::Task(TaskKind::Receive) | NodeKind::Gateway(GatewayKind::EventBased)
    ) && node
        .attributes
        .get("instantiate")
        .is_some_and(|v| v == "true")
}

/// The unreachable nodes grouped by the node that cuts each group off: every unreachable
/// node nothing unreachable flows into is such a root; a loop no root leads to is rooted
/// at its first node in document order. Each root comes with the ids it makes
/// unreachable too, in document order.
fn cut_off<'a>(
    unreachable: &[&'a Node],
    succ: &HashMap<&'a str, Vec<&'a str>>,
    pred: &HashMap<&'a str, Vec<&'a str>>,
) -> Vec<(&'a Node, Vec<&'a str>)> {
    let set: HashSet<&str> = unreachable.iter().map(|n| n.id.as_str()).collect();
    let mut roots: Vec<&Node> = unreachable
        .iter()
        .copied()
        .filter(|n| {
            !pred
                .get(n.id.as_str())
                .is_some_and(|ps| ps.iter().any(|p| set.contains(p) && *p != n.id))
        })
        .collect();
    let mut covered: HashSet<&str> = HashSet::new();
    let mut groups: Vec<(&Node, HashSet<&str>)> = Vec::new();
    let mut next = 0;
    loop {
        while next < roots.len() {
            let root = roots[next];
            next += 1;
            let mut seen: HashSet<&str> = HashSet::new();
            let mut queue = VecDeque::from([root.id.as_str()]);
            while let Some(n) = queue.pop_front() {
                for &m in succ.get(n).map(Vec::as_slice).unwrap_or_default() {
                    if set.contains(m) && m != root.id && !covered.contains(m) && seen.insert(m) {
                        queue.push_back(m);
                    }
                }
            }
            covered.insert(root.id.as_str());
            covered.extend(seen.iter().copied());
            groups.push((root, seen));
        }
        // What is left is fed only by loops among themselves.
        match unreachable
            .iter()
            .find(|n| !covered.contains(n.id.as_str()))
        {
            Some(n) => roots.push(n),
            None => break,
        }
    }
    let order: HashMap<&str, usize> = unreachable
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut groups: Vec<(&Node, Vec<&str>)> = groups
        .into_iter()
        .map(|(root, seen)| {
            let mut after: Vec<&str> = seen.into_iter().collect();
            after.sort_by_key(|id| order.get(id).copied().unwrap_or(usize::MAX));
            (root, after)
        })
        .collect();
    groups.sort_by_key(|(root, _)| order.get(root.id.as_str()).copied().unwrap_or(usize::MAX));
    groups
}

/// The loops that trap tokens: among the `stuck` nodes (reached, but no end reachable
/// from them), the strongly connected components no edge leaves. Each is listed in
/// document order; the loops in document order of their first node.
fn trapping_loops<'a>(
    members: &[&'a Node],
    stuck: &HashSet<&'a str>,
    succ: &HashMap<&'a str, Vec<&'a str>>,
) -> Vec<Vec<&'a Node>> {
    let nodes: Vec<&Node> = members
        .iter()
        .copied()
        .filter(|n| stuck.contains(n.id.as_str()))
        .collect();
    let next = |n: &'a str| -> Vec<&'a str> {
        succ.get(n)
            .map(|v| v.iter().copied().filter(|m| stuck.contains(m)).collect())
            .unwrap_or_default()
    };
    // Kosaraju, iteratively: finishing order on the graph, then components on its reverse.
    let mut order: Vec<&str> = Vec::new();
    let mut visited: HashSet<&str> = HashSet::new();
    for start in &nodes {
        let start = start.id.as_str();
        if !visited.insert(start) {
            continue;
        }
        let mut stack: Vec<(&str, Vec<&str>)> = vec![(start, next(start))];
        while let Some((n, rest)) = stack.last_mut() {
            match rest.pop() {
                Some(m) => {
                    if visited.insert(m) {
                        let children = next(m);
                        stack.push((m, children));
                    }
                }
                None => {
                    order.push(n);
                    stack.pop();
                }
            }
        }
    }
    let mut reverse: HashMap<&str, Vec<&str>> = HashMap::new();
    for n in &nodes {
        for m in next(n.id.as_str()) {
            reverse.entry(m).or_default().push(n.id.as_str());
        }
    }
    let mut component: HashMap<&str, usize> = HashMap::new();
    let mut count = 0;
    for &n in order.iter().rev() {
        if component.contains_key(n) {
            continue;
        }
        let mut queue = vec![n];
        component.insert(n, count);
        while let Some(x) = queue.pop() {
            for &y in reverse.get(x).map(Vec::as_slice).unwrap_or_default() {
                if !component.contains_key(y) {
                    component.insert(y, count);
                    queue.push(y);
                }
            }
        }
        count += 1;
    }
    // A component is trapping when no edge leaves it.
    let mut leaves = vec![false; count];
    for n in &nodes {
        let c = component[n.id.as_str()];
        if next(n.id.as_str()).iter().any(|m| component[m] != c) {
            leaves[c] = true;
        }
    }
    let mut loops: Vec<Vec<&Node>> = vec![Vec::new(); count];
    for n in &nodes {
        let c = component[n.id.as_str()];
        if !leaves[c] {
            loops[c].push(n);
        }
    }
    let mut loops: Vec<Vec<&Node>> = loops.into_iter().filter(|l| !l.is_empty()).collect();
    let position: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    loops.sort_by_key(|l| position[l[0].id.as_str()]);
    loops
}

fn is_compensation(node: &Node) -> bool {
    node.attributes
        .get("isForCompensation")
        .is_some_and(|v| v == "true")
}

fn walk<'a>(from: &[&'a str], edges: &HashMap<&'a str, Vec<&'a str>>) -> HashSet<&'a str> {
    let mut seen: HashSet<&str> = from.iter().copied().collect();
    let mut queue: VecDeque<&str> = from.iter().copied().collect();
    while let Some(n) = queue.pop_front() {
        for &next in edges.get(n).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    seen
}

/// A process whose every run would spend the default step budget before it could end:
/// the shortest way from a start event to an end at its top level enters more nodes than
/// [`crate::bridge::run::DEFAULT_STEP_BUDGET`] allows (a 100,000-task sequence validated
/// clean and then always failed).
fn step_budget(doc: &Document, process: &crate::bpmn::Process) -> Option<Diagnostic> {
    use std::collections::{HashMap, VecDeque};
    let budget = crate::bridge::run::DEFAULT_STEP_BUDGET;
    if (process.nodes.len() as u64) <= budget {
        return None;
    }
    let mut next: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in process.flows.iter().filter(|f| f.parent.is_none()) {
        next.entry(f.source.as_str())
            .or_default()
            .push(f.target.as_str());
    }
    let mut entered: HashMap<&str, u64> = HashMap::new();
    let mut queue: VecDeque<&str> = VecDeque::new();
    for start in process.start_events().filter(|n| n.parent.is_none()) {
        entered.insert(start.id.as_str(), 1);
        queue.push_back(start.id.as_str());
    }
    let mut shortest: Option<u64> = None;
    while let Some(at) = queue.pop_front() {
        let here = entered[at];
        let outgoing = next.get(at).map(Vec::as_slice).unwrap_or_default();
        if outgoing.is_empty() {
            shortest = Some(shortest.map_or(here, |s| s.min(here)));
            continue;
        }
        for to in outgoing {
            if !entered.contains_key(to) {
                entered.insert(to, here + 1);
                queue.push_back(to);
            }
        }
    }
    let shortest = shortest.filter(|&s| s > budget)?;
    Some(
        Diagnostic::warning(
            "graph::step_budget",
            format!(
                "every run enters at least {shortest} nodes before it can end, more than the \
                 default step budget of {budget}: it would fail unless given a larger one"
            ),
        )
        .in_path(doc.source.path().display())
        .with_help("run it with `--step-budget N` (start, runs resume) larger than that"),
    )
}
