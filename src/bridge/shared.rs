//! What the contexts of one run share instead of copying, so that a control point's cost
//! does not grow with the run's length or the size of its variables:
//!
//! - [`History`]: the node ids entered, an append-only log the engine writes and every
//!   context reads up to the length it had when the context was made;
//! - [`ScopedVariables`]: the process variables (shared) with, for a call made inside a
//!   multi-instance activity, the instance's own variables layered over them.
//!
//! On the wire both are what they stand for (a JSON array, a JSON object), so the MCP
//! transport and external engines see plain values.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock, RwLock, RwLockReadGuard};

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::Variables;

// ---------------------------------------------------------------------------------------
// History

/// The ids of the nodes entered so far, in order. Cloning is O(1): a clone shares the log
/// and sees the entries made before it, however many are appended after.
#[derive(Clone, Default)]
pub struct History {
    log: Arc<RwLock<Vec<String>>>,
    len: usize,
}

/// A read view of a [`History`]: the entries it sees, as a slice.
pub struct HistoryView<'a> {
    guard: RwLockReadGuard<'a, Vec<String>>,
    len: usize,
}

impl Deref for HistoryView<'_> {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.guard[..self.len]
    }
}

impl History {
    /// How many entries this history sees.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries, to read as a slice (holds a read lock on the log while alive: do not
    /// keep it across an await).
    pub fn view(&self) -> HistoryView<'_> {
        HistoryView {
            guard: self.log.read().unwrap_or_else(|e| e.into_inner()),
            len: self.len,
        }
    }

    /// The entries as an owned list.
    pub fn to_vec(&self) -> Vec<String> {
        self.view().to_vec()
    }

    /// The entries, owned: the log itself when nothing else shares it (the engine's at
    /// the end of a run), else a copy.
    pub fn into_vec(self) -> Vec<String> {
        let len = self.len;
        match Arc::try_unwrap(self.log) {
            Ok(log) => {
                let mut entries = log.into_inner().unwrap_or_else(|e| e.into_inner());
                entries.truncate(len);
                entries
            }
            Err(log) => History { log, len }.to_vec(),
        }
    }

    /// The most recent entry.
    pub fn last(&self) -> Option<String> {
        self.view().last().cloned()
    }

    /// Append `id`. O(1) when this history is the log's latest (the engine's always is);
    /// an older view gets a log of its own first (copy on write).
    pub fn push(&mut self, id: String) {
        {
            let mut log = self.log.write().unwrap_or_else(|e| e.into_inner());
            if log.len() == self.len {
                log.push(id);
                self.len += 1;
                return;
            }
        }
        let mut own = self.to_vec();
        own.push(id);
        *self = History::from(own);
    }
}

impl From<Vec<String>> for History {
    fn from(entries: Vec<String>) -> History {
        History {
            len: entries.len(),
            log: Arc::new(RwLock::new(entries)),
        }
    }
}

impl PartialEq for History {
    fn eq(&self, other: &History) -> bool {
        (Arc::ptr_eq(&self.log, &other.log) && self.len == other.len)
            || *self.view() == *other.view()
    }
}

impl fmt::Debug for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.view().iter()).finish()
    }
}

impl Serialize for History {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.view().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<History, D::Error> {
        Vec::<String>::deserialize(deserializer).map(History::from)
    }
}

impl JsonSchema for History {
    fn schema_name() -> Cow<'static, str> {
        Vec::<String>::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Vec::<String>::json_schema(generator)
    }
}

// ---------------------------------------------------------------------------------------
// Variables

/// The variables a control point sees: the process variables, shared by every context of
/// the run, and over them (a call inside a multi-instance activity) the instance's own.
/// A name is looked up in the instance's first ([`ScopedVariables::get`],
/// [`crate::expr::Variables`]) at no cost; reading the whole as one map (through
/// [`Deref`]) merges the layers once per context.
#[derive(Clone, Default)]
pub struct ScopedVariables {
    process: Arc<Variables>,
    /// The instance's own variables, shadowing the process's.
    own: Option<Arc<Variables>>,
    /// `process` and `own` merged, made on first use.
    merged: OnceLock<Arc<Variables>>,
}

impl ScopedVariables {
    /// The process variables, with nothing over them.
    pub fn new(process: Arc<Variables>) -> ScopedVariables {
        ScopedVariables {
            process,
            own: None,
            merged: OnceLock::new(),
        }
    }

    /// `own` over the process variables (replacing any layer given before).
    pub fn scoped(process: Arc<Variables>, own: Variables) -> ScopedVariables {
        ScopedVariables {
            process,
            own: (!own.is_empty()).then(|| Arc::new(own)),
            merged: OnceLock::new(),
        }
    }

    /// The process variables under the layer.
    pub fn process(&self) -> &Arc<Variables> {
        &self.process
    }

    /// The instance's own variables, if any.
    pub fn own(&self) -> Option<&Variables> {
        self.own.as_deref()
    }

    /// The value of `name`: the instance's if it has one, else the process's.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.own
            .as_ref()
            .and_then(|own| own.get(name))
            .or_else(|| self.process.get(name))
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

impl Deref for ScopedVariables {
    type Target = Variables;
    fn deref(&self) -> &Variables {
        match &self.own {
            None => &self.process,
            Some(own) => self.merged.get_or_init(|| {
                let mut all = Variables::clone(&self.process);
                all.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
                Arc::new(all)
            }),
        }
    }
}

impl crate::expr::Variables for ScopedVariables {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl From<Arc<Variables>> for ScopedVariables {
    fn from(process: Arc<Variables>) -> ScopedVariables {
        ScopedVariables::new(process)
    }
}

impl From<Variables> for ScopedVariables {
    fn from(process: Variables) -> ScopedVariables {
        ScopedVariables::new(Arc::new(process))
    }
}

impl PartialEq for ScopedVariables {
    fn eq(&self, other: &ScopedVariables) -> bool {
        **self == **other
    }
}

impl fmt::Debug for ScopedVariables {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Variables::fmt(self, f)
    }
}

impl Serialize for ScopedVariables {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Variables::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for ScopedVariables {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ScopedVariables, D::Error> {
        Variables::deserialize(deserializer).map(ScopedVariables::from)
    }
}

impl JsonSchema for ScopedVariables {
    fn schema_name() -> Cow<'static, str> {
        Variables::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Variables::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_history_sees_what_was_entered_before_it_was_taken() {
        let mut engine = History::default();
        engine.push("S".into());
        let seen = engine.clone();
        engine.push("A".into());
        engine.push("B".into());
        assert_eq!(seen.to_vec(), ["S"]);
        assert_eq!(engine.to_vec(), ["S", "A", "B"]);
        assert_eq!(serde_json::to_value(&seen).unwrap(), json!(["S"]));
    }

    #[test]
    fn appending_to_an_older_history_forks_it() {
        let mut engine = History::from(vec!["S".into()]);
        let mut older = engine.clone();
        engine.push("A".into());
        older.push("X".into());
        assert_eq!(engine.to_vec(), ["S", "A"]);
        assert_eq!(older.to_vec(), ["S", "X"]);
        engine.push("B".into());
        assert_eq!(older.to_vec(), ["S", "X"]);
        assert_eq!(engine.to_vec(), ["S", "A", "B"]);
    }

    #[test]
    fn an_instance_layer_shadows_the_process_variables() {
        let process: Variables = serde_json::from_value(json!({"a": 1, "item": "p"})).unwrap();
        let own: Variables =
            serde_json::from_value(json!({"item": "x", "loopCounter": 2})).unwrap();
        let scoped = ScopedVariables::scoped(Arc::new(process), own);
        assert_eq!(scoped.get("item"), Some(&json!("x")));
        assert_eq!(scoped.get("a"), Some(&json!(1)));
        assert_eq!(
            serde_json::to_value(&scoped).unwrap(),
            json!({"a": 1, "item": "x", "loopCounter": 2})
        );
        let back: ScopedVariables = serde_json::from_value(json!({"a": 1})).unwrap();
        assert_eq!(back.get("a"), Some(&json!(1)));
        assert!(back.own().is_none());
    }
}
