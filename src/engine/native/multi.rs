//! Multi-instance activities: a task, call activity or sub-process with
//! `<multiInstanceLoopCharacteristics>` runs once per item of a collection, or a given
//! number of times, in parallel or one after the other.
//!
//! # The body and its instances
//! The token that reaches the activity (the **body**) waits at it while the activity runs.
//! Entering it evaluates the collection (a variable name, `${...}` or FEEL `= ...`) or
//! the cardinality once; each **instance** is a token of its own at the activity (in the
//! body's scope), entered as any visit of the node: a `node_entered` record with
//! `instance: {loop_counter, instances}`, a control-point call with its own idempotency
//! key (the node's next visit, so instance k of the first run of the activity is visit
//! k), a sub-process instance for a sub-process. Parallel instances are all started at
//! once (in item order) and their calls overlap; a sequential activity starts the next
//! instance when one completes. An activity with no instance to run is entered once
//! (`loop_counter` 0, `instances` 0) and left.
//!
//! # Instance variables
//! Each instance has variables of its own, layered over the process variables in the
//! contexts of the calls it makes (a sub-process instance's inner tasks, gateways and
//! hooks included, nested multi-instance activities innermost last): `loopCounter` (1, 2,
//! ...), `nrOfInstances`, and the element variable holding its item. A variable an
//! instance's task writes stays the instance's when it names one of these or the output
//! element; the others are written to the process as any task's are. The element variable
//! of an untrusted collection is untrusted with the collection's taint.
//!
//! # Completion
//! When an instance completes, its output (the output element evaluated over its
//! variables, else the variables its tasks wrote, as an object) takes its item's place in
//! the output list, and the completion condition, if any, is evaluated over the instance's
//! variables and `nrOfInstances`, `nrOfCompletedInstances`, `nrOfActiveInstances`
//! (Zeebe's `numberOfInstances`, ... too). TRUE ends the activity at once: instances still
//! running are cancelled (their calls abandoned, their parked questions withdrawn) and
//! no further instance starts. Once every instance has completed (or the condition held),
//! the output collection is set (`variables_set`, source `multi-instance <id>`; items of
//! instances that did not complete are null) and the body leaves the activity.
//!
//! # Boundary events
//! Boundary events belong to the whole activity: timers start when the body enters it, an
//! error thrown by an instance (a failed task, an error end event in a sub-process
//! instance) is caught at the activity's boundary with the body as its holder, and an
//! interrupting boundary cancels every instance.

use crate::semantics::instances::{
    Layered, completion_counts, completion_holds, instance_locals, instance_output, roots,
    runs_over,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::run::{Run, Step};
use super::tokens::{At, ROOT, TokenId};
use crate::bpmn::{LoopKind, MultiInstance};
use crate::bridge::{ControlPointContext, ScopedVariables, Taint};
use crate::engine::EngineError;
use crate::journal::Event;
use crate::journal::event::InstanceVisit;
use crate::semantics::topology::LiveNode;

/// The multi-instance activities running, by the token of their body, and their
/// instances, by their token.
#[derive(Debug, Default)]
pub(super) struct Multi {
    bodies: BTreeMap<TokenId, Body>,
    instances: BTreeMap<TokenId, Instance>,
}

/// One running multi-instance activity.
#[derive(Debug)]
struct Body {
    node: String,
    spec: MultiInstance,
    sequential: bool,
    /// The collection's items (`None`: a cardinality).
    items: Option<Vec<Value>>,
    count: u64,
    started: u64,
    completed: u64,
    active: BTreeSet<TokenId>,
    outputs: Vec<Value>,
    /// The collection's taint, given to each instance's element variable.
    item_taint: Option<Taint>,
    /// The taint of what the instances wrote, given to the output collection.
    output_taint: Option<Taint>,
}

/// One instance of a multi-instance activity.
#[derive(Debug)]
struct Instance {
    body: TokenId,
    loop_counter: u64,
    /// Its own variables (`loopCounter`, `nrOfInstances`, the element variable, and what
    /// its tasks wrote to names that are its own).
    locals: Map<String, Value>,
    /// The names that stay the instance's when its tasks write them.
    own: BTreeSet<String>,
    /// Everything its tasks wrote (its output when no output element is named).
    written: Map<String, Value>,
}

/// A multi-instance activity's loop characteristics, if `node` has them.
fn multi_of<'a>(run: &'a Run, node: &str) -> Option<(&'a MultiInstance, bool)> {
    let looping = run.request.process.node(node)?.looping.as_ref()?;
    match looping.kind {
        LoopKind::MultiInstance { sequential } => Some((&looping.multi, sequential)),
        LoopKind::Standard => None,
    }
}

impl Run {
    /// Whether `token`, entering `node`, starts a multi-instance activity (it is not one
    /// of the activity's instances).
    pub(super) fn starts_multi(&self, token: TokenId, node: &str) -> bool {
        !self.multi.instances.contains_key(&token) && multi_of(self, node).is_some()
    }

    /// The instance `token` is, for its `node_entered` record.
    pub(super) fn instance_visit(&self, token: TokenId) -> Option<InstanceVisit> {
        let instance = self.multi.instances.get(&token)?;
        let body = self.multi.bodies.get(&instance.body)?;
        Some(InstanceVisit {
            loop_counter: instance.loop_counter,
            instances: body.count,
        })
    }

    /// The innermost instance `token` runs in (itself, or the sub-process instance it is
    /// in), for the contexts of its calls.
    pub(super) fn innermost_instance(&self, token: TokenId) -> Option<InstanceVisit> {
        let innermost = *self.instance_chain(token).first()?;
        self.instance_visit(innermost)
    }

    /// Whether `token` is an instance of a multi-instance activity.
    pub(super) fn is_instance(&self, token: TokenId) -> bool {
        self.multi.instances.contains_key(&token)
    }

    /// The token that holds the activity for boundary events: the body, for an instance.
    pub(super) fn activity_holder(&self, token: TokenId) -> TokenId {
        self.multi
            .instances
            .get(&token)
            .map_or(token, |instance| instance.body)
    }

    /// The instances whose variables `token` sees, innermost first.
    fn instance_chain(&self, token: TokenId) -> Vec<TokenId> {
        let mut chain = Vec::new();
        if self.multi.instances.contains_key(&token) {
            chain.push(token);
        }
        let mut scope = self.tokens.scope_of(token);
        while scope != ROOT {
            let Some(s) = self.tokens.scope(scope) else {
                break;
            };
            if self.multi.instances.contains_key(&s.parent_token) {
                chain.push(s.parent_token);
            }
            scope = s.parent_scope;
        }
        chain
    }

    /// The variables `token` sees, innermost instance first, the process's last.
    pub(super) fn layers(&self, token: TokenId) -> Vec<&Map<String, Value>> {
        let mut layers: Vec<&Map<String, Value>> = self
            .instance_chain(token)
            .into_iter()
            .filter_map(|t| self.multi.instances.get(&t).map(|i| &i.locals))
            .collect();
        layers.push(&self.variables);
        layers
    }

    /// Give a call made for `token` the variables of the instances it runs in (and the
    /// element variables' taint).
    pub(super) fn with_instance_variables(&self, token: TokenId, ctx: &mut ControlPointContext) {
        let chain = self.instance_chain(token);
        if chain.is_empty() {
            return;
        }
        // The instances' own variables go in a layer over the shared process variables:
        // a call costs the same whatever the size of the collection.
        let mut own = Map::new();
        let mut untrusted = ctx.untrusted.as_deref().cloned();
        for t in chain.iter().rev() {
            let Some(instance) = self.multi.instances.get(t) else {
                continue;
            };
            own.extend(instance.locals.clone());
            let body = self.multi.bodies.get(&instance.body);
            if let (Some(untrusted), Some(body)) = (&mut untrusted, body) {
                for name in instance.locals.keys() {
                    untrusted.remove(name);
                }
                if let (Some(taint), Some(name)) = (&body.item_taint, &body.spec.element_variable) {
                    untrusted.insert(name.clone(), taint.clone());
                }
            }
        }
        ctx.variables = ScopedVariables::scoped(ctx.variables.process().clone(), own);
        ctx.untrusted = untrusted.map(Arc::new);
    }

    /// What a task of `token` wrote: the variables that are its instance's own stay
    /// there; the rest is returned, for the process.
    /// The names of `variables` (written by a task of `token`) that stay its instance's.
    pub(super) fn instance_own_names(
        &self,
        token: TokenId,
        variables: &Map<String, Value>,
    ) -> Vec<String> {
        let chain = self.instance_chain(token);
        let Some(instance) = chain.first().and_then(|t| self.multi.instances.get(t)) else {
            return Vec::new();
        };
        (variables.keys())
            .filter(|name| instance.own.contains(*name))
            .cloned()
            .collect()
    }

    pub(super) fn keep_instance_locals(
        &mut self,
        token: TokenId,
        variables: Map<String, Value>,
        taint: Option<&Taint>,
    ) -> Map<String, Value> {
        let chain = self.instance_chain(token);
        let Some(&innermost) = chain.first() else {
            return variables;
        };
        let Some(instance) = self.multi.instances.get_mut(&innermost) else {
            return variables;
        };
        instance.written.extend(variables.clone());
        let body = instance.body;
        let mut rest = Map::new();
        for (name, value) in variables {
            if instance.own.contains(&name) {
                instance.locals.insert(name, value);
            } else {
                rest.insert(name, value);
            }
        }
        if let (Some(taint), Some(body)) = (taint, self.multi.bodies.get_mut(&body))
            && body.output_taint.is_none()
        {
            body.output_taint = Some(taint.clone());
        }
        rest
    }

    /// The body `token` reaches a multi-instance activity: evaluate what it runs over and
    /// start its instances.
    pub(super) fn enter_multi(
        &mut self,
        token: TokenId,
        live: &LiveNode,
    ) -> Result<(), EngineError> {
        let Some((spec, sequential)) = multi_of(self, &live.id) else {
            return Ok(());
        };
        let spec = spec.clone();
        self.tokens.place(token, At::Node(live.id.clone()));
        let language = spec.language.as_deref();
        let vars = Layered(self.layers(token));
        let (items, count) = match runs_over(&live.id, &spec, &vars) {
            Ok(over) => over,
            Err(why) => {
                self.fail(why.to_string());
                return Ok(());
            }
        };
        let read = spec
            .collection
            .as_deref()
            .map(|c| roots(c, language))
            .unwrap_or_default();
        drop(vars);
        if count > self.budget.saturating_sub(self.steps) {
            self.fail(format!(
                "multi-instance activity `{}` would run {count} instances: more node entries \
                 than the step budget of {} has left",
                live.id, self.budget
            ));
            return Ok(());
        }
        if count == 0 {
            let visit = InstanceVisit {
                loop_counter: 0,
                instances: 0,
            };
            if !self.record_entry(token, live, Some(visit))? {
                return Ok(());
            }
            self.multi
                .bodies
                .insert(token, self.body(live, spec, sequential, items, 0, None));
            return self.finish_body(token);
        }
        let item_taint = self
            .untrusted
            .as_deref()
            .and_then(|u| read.iter().find_map(|name| u.get(name)))
            .cloned();
        let body = self.body(live, spec, sequential, items, count, item_taint);
        self.multi.bodies.insert(token, body);
        self.start_boundary_timers(token, &live.id)?;
        let first = if sequential { 1 } else { count };
        for _ in 0..first {
            self.start_instance(token);
        }
        Ok(())
    }

    fn body(
        &self,
        live: &LiveNode,
        spec: MultiInstance,
        sequential: bool,
        items: Option<Vec<Value>>,
        count: u64,
        item_taint: Option<Taint>,
    ) -> Body {
        Body {
            node: live.id.clone(),
            spec,
            sequential,
            items,
            count,
            started: 0,
            completed: 0,
            active: BTreeSet::new(),
            outputs: vec![Value::Null; usize::try_from(count).unwrap_or(0)],
            item_taint,
            output_taint: None,
        }
    }

    /// Start the body's next instance: a token of its own, entering the activity.
    fn start_instance(&mut self, body_token: TokenId) {
        let scope = self.tokens.scope_of(body_token);
        let Some(body) = self.multi.bodies.get_mut(&body_token) else {
            return;
        };
        body.started += 1;
        let loop_counter = body.started;
        let (locals, own) =
            instance_locals(&body.spec, body.items.as_deref(), body.count, loop_counter);
        let node = body.node.clone();
        let token = self.tokens.add(scope, At::Node(node.clone()));
        body.active.insert(token);
        self.multi.instances.insert(
            token,
            Instance {
                body: body_token,
                loop_counter,
                locals,
                own,
                written: Map::new(),
            },
        );
        self.ready.push_back(Step::Enter { token, node });
    }

    /// `token` leaves its node: when it is an instance, the instance is complete (`true`;
    /// the body goes on when the activity is), else `false`.
    pub(super) fn instance_left(&mut self, token: TokenId) -> Result<bool, EngineError> {
        let Some(instance) = self.multi.instances.get(&token) else {
            return Ok(false);
        };
        let body_token = instance.body;
        let Some(body) = self.multi.bodies.get(&body_token) else {
            self.multi.instances.remove(&token);
            self.tokens.remove(token);
            return Ok(true);
        };
        // The instance's output, over its variables.
        let mut layers = self.layers(token);
        let output = instance_output(&body.spec, &Layered(layers.clone()), &instance.written);
        let active = (body.active.len() as u64).saturating_sub(1);
        let counts = completion_counts(body.count, body.completed + 1, active);
        layers.insert(0, &counts);
        let done = completion_holds(&body.spec, &Layered(layers));
        let node = body.node.clone();
        let loop_counter = instance.loop_counter;
        self.multi.instances.remove(&token);
        self.tokens.remove(token);
        let (output, done) = match (output, done) {
            (Ok(output), Ok(done)) => (output, done),
            (Err(why), _) | (_, Err(why)) => {
                self.fail(format!("multi-instance activity `{node}`: {why}"));
                return Ok(true);
            }
        };
        let Some(body) = self.multi.bodies.get_mut(&body_token) else {
            return Ok(true);
        };
        body.active.remove(&token);
        body.completed += 1;
        if let Some(slot) = usize::try_from(loop_counter - 1)
            .ok()
            .and_then(|i| body.outputs.get_mut(i))
        {
            *slot = output.unwrap_or(Value::Null);
        }
        let all_done = body.completed == body.count;
        let more = body.sequential && body.started < body.count;
        if done && !all_done {
            tracing::debug!(node, loop_counter, "completion condition met");
            self.cancel_instances(body_token, "its completion condition was met")?;
            self.finish_body(body_token)?;
        } else if all_done {
            self.finish_body(body_token)?;
        } else if more {
            self.start_instance(body_token);
        }
        Ok(true)
    }

    /// Every instance of the body has completed (or the completion condition held): set
    /// the output collection and leave the activity.
    fn finish_body(&mut self, body_token: TokenId) -> Result<(), EngineError> {
        let Some(body) = self.multi.bodies.remove(&body_token) else {
            return Ok(());
        };
        if let Some(collection) = &body.spec.output_collection {
            let mut values = Map::new();
            values.insert(collection.clone(), Value::Array(body.outputs));
            self.emit(Event::VariablesSet {
                source: format!("multi-instance {}", body.node),
                values: values.clone(),
                taint: body.output_taint.clone(),
            })?;
            let rest = self.keep_instance_locals(body_token, values, body.output_taint.as_ref());
            self.merge_variables(rest, body.output_taint.as_ref());
        }
        self.leave(body_token, &body.node)
    }

    /// Cancel the instances of the body `body_token` still running (and what runs inside
    /// them): the activity is interrupted or its completion condition held.
    pub(super) fn cancel_instances(
        &mut self,
        body_token: TokenId,
        why: &str,
    ) -> Result<(), EngineError> {
        let Some(body) = self.multi.bodies.get_mut(&body_token) else {
            return Ok(());
        };
        let active = std::mem::take(&mut body.active);
        let node = body.node.clone();
        if active.is_empty() {
            return Ok(());
        }
        for token in active {
            self.multi.instances.remove(&token);
            if let Some(scope) = self.tokens.scope_owned_by(token) {
                let scopes = self.tokens.nested(scope);
                self.tokens.discard(&scopes, scope);
                self.joins.retain(|(s, _), _| !scopes.contains(s));
                self.tokens.close_scope(scope);
            }
            self.tokens.remove(token);
        }
        // Multi-instance activities nested in the cancelled instances.
        let tokens = &self.tokens;
        self.multi.bodies.retain(|t, _| tokens.contains(*t));
        self.multi.instances.retain(|t, _| tokens.contains(*t));
        self.withdraw_orphans(Some(&node), &format!("activity `{node}`: {why}"))
    }

    /// The body `token` holds its activity no more (interrupted): forget it.
    pub(super) fn drop_body(&mut self, token: TokenId) {
        self.multi.bodies.remove(&token);
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Variables;
    use crate::semantics::instances::{evaluate, named_variable, whole};
    use serde_json::json;

    fn vars() -> Map<String, Value> {
        json!({"items": [1, 2, 3], "order": {"lines": ["a"]}, "n": 4, "s": "2"})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn collections_and_cardinalities_in_every_dialect() {
        let v = vars();
        let eval = |t: &str| evaluate(t, None, &v).unwrap();
        assert_eq!(eval("items"), Some(json!([1, 2, 3])));
        assert_eq!(eval("${items}"), Some(json!([1, 2, 3])));
        assert_eq!(eval("#{items}"), Some(json!([1, 2, 3])));
        assert_eq!(eval("= items"), Some(json!([1, 2, 3])));
        assert_eq!(eval("=order.lines"), Some(json!(["a"])));
        assert_eq!(eval("order.lines"), Some(json!(["a"])));
        assert_eq!(eval("3"), Some(json!(3)));
        assert_eq!(eval("${n}"), Some(json!(4)));
        assert_eq!(eval("= n + 1"), Some(json!(5)));
        assert_eq!(eval("missing"), None);
        assert_eq!(whole(&json!(3)), Some(3));
        assert_eq!(whole(&json!("2")), Some(2));
        assert_eq!(whole(&json!(2.5)), None);
        assert_eq!(whole(&json!(-1)), None);
        assert!(evaluate("${items", None, &v).is_err());
        assert_eq!(named_variable("= verdict").as_deref(), Some("verdict"));
        assert_eq!(named_variable("${verdict}").as_deref(), Some("verdict"));
        assert_eq!(named_variable("verdict.score").as_deref(), Some("verdict"));
        assert_eq!(named_variable("= verdict + 1"), None);
    }

    #[test]
    fn layers_find_the_innermost_first() {
        let inner = json!({"x": 1}).as_object().cloned().unwrap();
        let outer = json!({"x": 2, "y": 3}).as_object().cloned().unwrap();
        let layered = Layered(vec![&inner, &outer]);
        assert_eq!(layered.lookup("x"), Some(&json!(1)));
        assert_eq!(layered.lookup("y"), Some(&json!(3)));
        assert_eq!(layered.lookup("z"), None);
    }
}
