//! Conditions: every condition the config or the model holds parses in cuga-flo's
//! condition language (where cuga-flo is the one to evaluate it), conditions name
//! variables that something sets, and an exclusive split without a default flow whose
//! conditions can all fail at once is reported, with values that show it.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use crate::app::{EngineKind, GatewayMode, Located};
use crate::bpmn::{Condition, Document, Flow, GatewayKind, ProcessIndex};
use crate::diag::Diagnostic;
use crate::expr::{self, Expr, ExprError, Language, Truth};
use crate::source::{SourceFile, Span};

use super::index::ConfigIndex;

/// More assignments than this are not tried when looking for a counter-example.
const MAX_ASSIGNMENTS: usize = 20_000;

/// Where a condition was written.
enum Origin<'a> {
    Config(&'a Located<String>),
    Model(&'a Condition),
}

/// The conditions of `processes` (with a config: the main process; without: every
/// process of the model) and of the config.
pub fn check<'a>(
    names: Option<&ConfigIndex>,
    doc: &Document,
    processes: impl IntoIterator<Item = &'a ProcessIndex<'a>>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let config = names.map(|n| n.config);
    let engine = config.map_or(EngineKind::Native, |c| c.engine.kind);
    let mut used: Vec<(Expr, Span, &SourceFile)> = Vec::new();

    if let Some(config) = config {
        for gw in &config.gateways {
            // With `human_consultation`, prose in `condition` is the question to ask.
            if let Some(c) = &gw.condition
                && gw.mode == GatewayMode::DecisionAgent
                && !gw.condition_is_question()
                && let Some(e) = parse_or_report(
                    &config.source,
                    Origin::Config(c),
                    &format!("the condition of gateway `{}`", gw.id.value),
                    true,
                    &mut out,
                )
            {
                used.push((e, c.span, &config.source));
            }
            for flow in &gw.flows {
                if let Some(c) = &flow.condition
                    && let Some(e) = parse_or_report(
                        &config.source,
                        Origin::Config(c),
                        &format!("the condition of flow `{}`", flow.id.value),
                        true,
                        &mut out,
                    )
                {
                    used.push((e, c.span, &config.source));
                }
            }
        }
        for hook in &config.hooks {
            if let Some(c) = &hook.condition
                && let Some(e) = parse_or_report(
                    &config.source,
                    Origin::Config(c),
                    &format!("the guard of hook `{}`", hook.id.value),
                    true,
                    &mut out,
                )
            {
                used.push((e, c.span, &config.source));
            }
        }
    }

    for process in processes {
        for flow in &process.process().flows {
            // An empty <conditionExpression/> is exported by many tools and means none.
            let Some(cond) = flow.condition.as_ref().filter(|c| !c.body.is_empty()) else {
                continue;
            };
            let routing = routing_of(names, flow);
            // A condition the config overrides is never evaluated.
            if routing.overridden {
                continue;
            }
            // Flowable and Kogito evaluate their own models' conditions.
            if engine.is_external_bpm() && config.is_some() {
                continue;
            }
            let what = format!("the condition of flow `{}`", flow.id);
            // Only a decision agent's reasoner can judge a condition cuga-flo cannot
            // evaluate; a model on its own is judged as an app with no gateway config runs
            // it (every split routed by its conditions).
            let must = !routing.decision_agent;
            if let Some(e) =
                parse_or_report(&doc.source, Origin::Model(cond), &what, must, &mut out)
            {
                used.push((e, cond.span, &doc.source));
            }
        }
        // A message's correlation key (Camunda 8's `zeebe:subscription`), read by the
        // native engine when a catch starts waiting; reported at the catching element.
        if !engine.is_external_bpm() {
            for node in &process.process().nodes {
                let Some(r) = &node.event_ref else { continue };
                let Some(key) = &r.correlation_key else {
                    continue;
                };
                if let Err(err) = expr::parse(key) {
                    let what = format!(
                        "the correlation key of message `{}` (caught by `{}`)",
                        r.name.as_deref().unwrap_or(&r.reference),
                        node.id
                    );
                    out.push(expr_diagnostic(
                        &doc.source,
                        node.span,
                        key,
                        &err,
                        &what,
                        true,
                        Some("feel"),
                    ));
                }
            }
        }
        if !engine.is_external_bpm() || config.is_none() {
            for gw in process.process().gateways() {
                if let Some(d) = can_take_no_flow(names, doc, process, gw) {
                    out.push(d);
                }
            }
        }
    }

    if let Some(names) = names {
        out.extend(unset_variables(names, &used));
    }
    out
}

struct Routing {
    /// The config gives this flow a condition of its own.
    overridden: bool,
    /// The flow leaves a gateway a decision agent routes.
    decision_agent: bool,
}

fn routing_of(names: Option<&ConfigIndex>, flow: &Flow) -> Routing {
    let gw = names.and_then(|c| c.gateway(&flow.source));
    Routing {
        overridden: gw.is_some_and(|g| {
            g.flows
                .iter()
                .any(|f| f.id.value == flow.id && f.condition.is_some())
        }),
        decision_agent: gw.is_some_and(|g| g.mode == GatewayMode::DecisionAgent),
    }
}

/// Parse a condition; on failure report it (an error when cuga-flo must evaluate it, a
/// warning when something else can decide).
fn parse_or_report(
    file: &SourceFile,
    origin: Origin,
    what: &str,
    must: bool,
    out: &mut Vec<Diagnostic>,
) -> Option<Expr> {
    let (text, span) = match &origin {
        Origin::Config(l) => (l.value.as_str(), l.span),
        Origin::Model(c) => (c.body.as_str(), c.span),
    };
    let parsed = match &origin {
        Origin::Model(c) => expr::parse_in(text, c.language.as_deref()),
        Origin::Config(_) => expr::parse(text),
    };
    match parsed {
        Ok(e) => Some(e),
        Err(err) => {
            let language = match &origin {
                Origin::Model(c) => c.language.clone(),
                Origin::Config(_) => None,
            };
            out.push(expr_diagnostic(
                file,
                span,
                text,
                &err,
                what,
                must,
                language.as_deref(),
            ));
            None
        }
    }
}

fn expr_diagnostic(
    file: &SourceFile,
    span: Span,
    text: &str,
    err: &ExprError,
    what: &str,
    must: bool,
    language: Option<&str>,
) -> Diagnostic {
    // Point inside the written text when it can be found there (quotes, entities aside).
    let written = file.slice(span);
    let at = match written.find(text) {
        Some(i) => Span::new(
            span.offset + i + err.span.offset.min(text.len()),
            err.span
                .len
                .max(1)
                .min(text.len().saturating_sub(err.span.offset).max(1)),
        ),
        None => span,
    };
    let (code, message) = match (err.language, err.unsupported) {
        (Language::Feel, true) => (
            "expr::feel_unsupported",
            format!(
                "{what} uses FEEL that cuga-flo does not evaluate: {}",
                err.message
            ),
        ),
        (Language::Feel, false) => (
            "expr::syntax",
            format!("{what} is not a valid FEEL expression: {}", err.message),
        ),
        (Language::CugaFlo, _) => (
            "expr::syntax",
            format!("{what} is not a cuga-flo condition: {}", err.message),
        ),
    };
    let mut d = if must {
        Diagnostic::error(code, message)
    } else {
        Diagnostic::warning(code, message)
    };
    d = d.at(file, at, err.message.clone());
    // Unmarked FEEL (a model whose tool writes FEEL without saying so): say how to mark
    // it rather than how to rewrite it.
    let unmarked_feel =
        err.language == Language::CugaFlo && expr::parse_in(text, Some("feel")).is_ok();
    let mut help = match (&err.help, must) {
        _ if unmarked_feel => "it reads as FEEL: mark it as FEEL with a leading `=` (as Camunda 8 \
             writes it) or language=\"https://www.omg.org/spec/DMN/20191111/FEEL/\""
            .to_string(),
        (Some(h), _) => h.clone(),
        (None, true) => "conditions look like `${var} > 0.6 && ${status} == \"open\"`".to_string(),
        (None, false) => "cuga-flo cannot evaluate it natively".to_string(),
    };
    if let Some(lang) = language.filter(|_| err.language != Language::Feel) {
        help.push_str(&format!(" (the condition is written in `{lang}`)"));
    }
    d.with_help(help)
}

/// An exclusive or inclusive split that a native router evaluates, with no default flow,
/// where some values make every condition fail: a run with those values would stop.
fn can_take_no_flow(
    names: Option<&ConfigIndex>,
    doc: &Document,
    process: &ProcessIndex,
    gw: &crate::bpmn::Node,
) -> Option<Diagnostic> {
    let kind = gw.kind.gateway()?;
    if !matches!(kind, GatewayKind::Exclusive | GatewayKind::Inclusive) || gw.default_flow.is_some()
    {
        return None;
    }
    let gw_config = names.and_then(|c| c.gateway(&gw.id));
    if gw_config.is_some_and(|g| g.mode == GatewayMode::DecisionAgent) {
        return None;
    }
    let outgoing = process.outgoing(&gw.id);
    if outgoing.len() < 2 {
        return None;
    }
    let mut exprs = Vec::new();
    for flow in outgoing {
        let configured = gw_config
            .and_then(|g| g.flows.iter().find(|f| f.id.value == flow.id))
            .and_then(|f| f.condition.as_ref());
        let parsed = match configured {
            Some(c) => expr::parse(&c.value),
            None => {
                // An unconditional flow always holds.
                let c = flow.condition.as_ref().filter(|c| !c.body.is_empty())?;
                expr::parse_in(&c.body, c.language.as_deref())
            }
        };
        exprs.push(parsed.ok()?);
    }
    let witness = counter_example(names, &exprs)?;
    let shown: Vec<String> = witness.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    let when = if shown.is_empty() {
        "whatever the variables hold".to_string()
    } else {
        format!("with {}", shown.join(", "))
    };
    Some(
        Diagnostic::warning(
            "graph::no_flow_taken",
            format!("{} `{}` has no default flow, and its conditions can all be false", kind.tag(), gw.id),
        )
        .at(&doc.source, gw.span, Some(format!("{when}, no outgoing flow is taken and the run fails")))
        .with_help(format!(
            "add default=\"<flow id>\" to the gateway (one of {}), or make the conditions cover every case",
            crate::diag::name_list(&outgoing.iter().map(|f| &f.id).collect::<Vec<_>>(), 6)
        )),
    )
}

/// Values for the variables under which no condition is TRUE, if the candidates
/// derived from the conditions' own literals contain any.
fn counter_example(names: Option<&ConfigIndex>, exprs: &[Expr]) -> Option<BTreeMap<String, Value>> {
    let mut candidates: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in exprs {
        for var in e.variables() {
            if var.contains('.') {
                return None; // nested values: out of this simple search's reach
            }
            candidates.entry(var).or_default();
        }
        for c in e.comparisons() {
            let slot = candidates.entry(c.variable.clone()).or_default();
            for lit in &c.literals {
                for v in around(lit) {
                    if !slot.contains(&v) {
                        slot.push(v);
                    }
                }
            }
        }
    }
    for (var, values) in candidates.iter_mut() {
        let declared = names.and_then(|c| c.variable(var)).map(|v| &v.default);
        if let Some(d) = declared.filter(|d| !d.is_null()) {
            values.retain(|v| same_kind(v, d));
        }
        let literal_strings: Vec<String> = values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        if !literal_strings.is_empty() || declared.is_some_and(Value::is_string) {
            let mut other = "other".to_string();
            while literal_strings.contains(&other) {
                other.push('_');
            }
            values.push(Value::String(other));
        }
        if values.is_empty() {
            values.extend([Value::Bool(true), Value::Bool(false)]);
        }
    }
    let names: Vec<&String> = candidates.keys().collect();
    let total = candidates
        .values()
        .try_fold(1usize, |acc, v| acc.checked_mul(v.len().max(1)))?;
    if total > MAX_ASSIGNMENTS {
        return None;
    }
    for i in 0..total {
        let mut rest = i;
        let mut vars = BTreeMap::new();
        for name in &names {
            let values = &candidates[*name];
            vars.insert((*name).clone(), values[rest % values.len()].clone());
            rest /= values.len();
        }
        if exprs.iter().all(|e| e.eval(&vars) != Truth::True) {
            return Some(vars);
        }
    }
    None
}

/// A literal and its neighbours: the values on either side of a boundary.
fn around(v: &Value) -> Vec<Value> {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let mut out = vec![v.clone()];
            if n.is_i64() || n.is_u64() {
                out.extend([Value::from(x as i64 - 1), Value::from(x as i64 + 1)]);
            } else {
                out.extend(
                    [x - 0.01, x + 0.01]
                        .into_iter()
                        .filter_map(|f| serde_json::Number::from_f64(f).map(Value::Number)),
                );
            }
            out
        }
        Value::Bool(_) => vec![Value::Bool(true), Value::Bool(false)],
        other => vec![other.clone()],
    }
}

fn same_kind(a: &Value, b: &Value) -> bool {
    matches!(
        (a, b),
        (Value::Number(_), Value::Number(_))
            | (Value::String(_), Value::String(_))
            | (Value::Bool(_), Value::Bool(_))
            | (Value::Array(_), Value::Array(_))
            | (Value::Object(_), Value::Object(_))
    )
}

/// Variables a condition reads that nothing declares or writes.
fn unset_variables(names: &ConfigIndex, used: &[(Expr, Span, &SourceFile)]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut reported: HashSet<String> = HashSet::new();
    for (e, span, file) in used {
        for var in e.variables() {
            let root = var.split('.').next().unwrap_or(&var).to_string();
            if names.variable(&root).is_some() || names.writes(&root) || reported.contains(&root) {
                continue;
            }
            out.push(
                Diagnostic::warning(
                    "expr::unset_variable",
                    format!("condition reads `{root}`, which is not declared under `variables:` and no task writes it"),
                )
                .at(file, *span, Some(format!("`{root}` is unknown until a run sets it")))
                .with_help(format!("declare it with a default: `variables: {{{root}: ...}}`")),
            );
            reported.insert(root);
        }
    }
    out
}
