//! Multi-instance sub-processes on Flowable. The rewrite puts cuga-flo's step in front
//! of the sub-process ([`Role::Multi`]: what it runs over, as for a multi-instance
//! task), makes it Flowable's multi-instance sub-process (as many instances as the step
//! says, ended early when cuga-flo sets the step's `…Done`), and puts a worker in front
//! of each of its end events ([`Role::InstanceEnd`]), where an instance ends.
//!
//! Flowable gives each instance's execution its `loopCounter` (from 0), which every job
//! inside the instance sees; the rest of an instance's state is cuga-flo's, in process
//! variables named after the step's ([`instance_variables`]): per item, the variables
//! that are the instance's own (what its tasks wrote to the element variable, the output
//! element, `loopCounter`, ...) and everything its tasks wrote. So a control point inside
//! instance *i* is asked with the process variables under instance *i*'s (`loopCounter`
//! from 1, `nrOfInstances`, the element variable holding item *i*), as on the native
//! engine; what its task writes to the instance's own names stays the instance's, the
//! rest goes to the process. Where the instance ends, its output takes item *i*'s place
//! in the outputs, the completion condition is evaluated over the instance's variables,
//! and the output collection is set once the activity completes
//! ([`MultiTask::instance_ended`], as for a multi-instance task).

use serde_json::{Map, Value};

use super::strip_engine_locals;
use crate::engine::external::Witness;
use crate::engine::pull::{Instance, MultiTask, PullError, user_variables};
use crate::semantics::rewrite::{Rewritten, Role};

/// The variables of multi-instance sub-process step `variable` (`cugaMultiN`) beside
/// [`crate::semantics::rewrite::multi_variables`]: per item, the instance's own variables,
/// and what its tasks wrote.
pub(super) fn instance_variables(variable: &str) -> [String; 2] {
    [format!("{variable}Locals"), format!("{variable}Written")]
}

/// The multi-instance sub-process around worker `element` of the rewritten model, the
/// innermost one (the rewrite allows no other inside it): its id and its step's variable.
pub(super) fn enclosing(rewritten: &Rewritten, element: &str) -> Option<(String, String)> {
    let parent_of = |id: &str| {
        rewritten
            .nodes
            .iter()
            .find(|n| n.id == id)
            .and_then(|n| n.parent.clone())
    };
    let mut at = parent_of(element);
    while let Some(scope) = at {
        let step = rewritten.roles.values().find_map(|r| match r {
            Role::Multi { node, variable, .. } if *node == scope => Some(variable.clone()),
            _ => None,
        });
        if let Some(variable) = step {
            return Some((scope, variable));
        }
        at = parent_of(&scope);
    }
    None
}

/// What the step in front of a multi-instance sub-process sets beside what it sets for a
/// task: an empty state for each of its `count` instances.
pub(super) fn start_state(variable: &str, count: u64) -> Map<String, Value> {
    let empty = vec![Value::Object(Map::new()); usize::try_from(count).unwrap_or(0)];
    instance_variables(variable)
        .into_iter()
        .map(|name| (name, Value::Array(empty.clone())))
        .collect()
}

/// One instance of a multi-instance sub-process, as a job inside it sees it.
pub(super) struct Within {
    /// The sub-process.
    pub node: String,
    multi: MultiTask,
    pub instance: Instance,
    /// The process variables (the user's).
    process: Map<String, Value>,
    /// What its tasks wrote so far.
    written: Map<String, Value>,
    /// The state of every instance (the arrays of [`instance_variables`]).
    locals_all: Vec<Value>,
    written_all: Vec<Value>,
}

impl Within {
    /// Instance `loop_counter` (from 1) of sub-process `node`, from the process
    /// variables with cuga-flo's own (`raw`).
    pub fn new(
        multi: MultiTask,
        node: String,
        raw: &Map<String, Value>,
        loop_counter: u64,
    ) -> Self {
        let mut instance = multi.instance(raw, loop_counter);
        let [locals_var, written_var] = instance_variables(&multi.variable);
        let all = |name: &str| {
            raw.get(name)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let locals_all = all(&locals_var);
        let written_all = all(&written_var);
        let slot = |all: &[Value]| {
            usize::try_from(loop_counter.saturating_sub(1))
                .ok()
                .and_then(|i| all.get(i))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        instance.locals.extend(slot(&locals_all));
        let written = slot(&written_all);
        Within {
            node,
            multi,
            instance,
            process: strip_engine_locals(user_variables(raw.clone())),
            written,
            locals_all,
            written_all,
        }
    }

    /// What a control point inside the instance sees: the process variables under the
    /// instance's.
    pub fn variables(&self) -> Map<String, Value> {
        let mut variables = self.process.clone();
        variables.extend(self.instance.locals.clone());
        variables
    }

    /// A task inside the instance wrote `writes`: what its job completes with (the
    /// instance's own names kept in its state, the rest for the process).
    pub fn wrote(mut self, writes: Map<String, Value>) -> Map<String, Value> {
        let mut set = Map::new();
        self.written.extend(writes.clone());
        for (name, value) in writes {
            if self.instance.own.contains(&name) {
                self.instance.locals.insert(name, value);
            } else {
                set.insert(name, value);
            }
        }
        let index = usize::try_from(self.instance.loop_counter.saturating_sub(1)).unwrap_or(0);
        let own = self
            .instance
            .locals
            .iter()
            .filter(|(name, _)| self.instance.own.contains(*name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let [locals_var, written_var] = instance_variables(&self.multi.variable);
        for (all, value, name) in [
            (&mut self.locals_all, Value::Object(own), locals_var),
            (
                &mut self.written_all,
                Value::Object(self.written.clone()),
                written_var,
            ),
        ] {
            if all.len() <= index {
                all.resize(index + 1, Value::Object(Map::new()));
            }
            all[index] = value;
            set.insert(name, Value::Array(all.clone()));
        }
        set
    }

    /// The instance ends: what its end worker completes with (the outputs, the count of
    /// completed instances, the output collection once the activity completes, and
    /// whether the completion condition ended it).
    pub fn end(self, witness: &Witness) -> Result<Map<String, Value>, PullError> {
        let mut process = self.process;
        process.retain(|name, _| !self.instance.locals.contains_key(name));
        self.multi
            .instance_ended(witness, &self.node, self.instance, &process, &self.written)
    }
}
