//! Reading what `cuga-flo start` streamed and journalled, to compare runs on different
//! engines (tests/external_engine.rs, tests/flowable.rs).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The JSON stream without what differs between engines and runs by nature: timings,
/// ids, the engine's name, token numbers, `flow_taken` (which only the native engine
/// sees) and the questions' digests (they cover the variables a question saw, which
/// differ when parallel branches interleave differently).
pub fn comparable(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] != "flow_taken")
        .map(|mut e| {
            if let Some(map) = e.as_object_mut() {
                for key in [
                    "seq",
                    "at_ms",
                    "duration_ms",
                    "run_id",
                    "engine",
                    "token",
                    "digest",
                ] {
                    map.remove(key);
                }
            }
            e
        })
        .collect()
}

/// The events of each node or hook, in order. The Python engine moves one token at a
/// time, so the events of parallel branches interleave differently than on the native
/// engine; per element, they must be the same.
pub fn by_element(events: &[Value]) -> BTreeMap<String, Vec<&Value>> {
    let mut map: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for e in events {
        let key = ["node", "hook", "event"]
            .iter()
            .find_map(|k| e[*k].as_str())
            .unwrap_or_default();
        map.entry(key.to_string()).or_default().push(e);
    }
    map
}

/// The one journal under `run_dir`, as JSON records.
pub fn journal(run_dir: &Path) -> Vec<Value> {
    let runs: Vec<PathBuf> = std::fs::read_dir(run_dir.join("runs"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(
        runs.len(),
        1,
        "one run journalled under {}",
        run_dir.display()
    );
    std::fs::read_to_string(runs[0].join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A journal that was closed: `run_started` first, a failed `run_finished` last; its message.
pub fn closed_as_failed(records: &[Value]) -> String {
    assert_eq!(
        records.first().map(|r| &r["event"]),
        Some(&"run_started".into())
    );
    let last = records.last().unwrap();
    assert_eq!(last["event"], "run_finished", "{last:#}");
    assert_eq!(last["status"], "failed", "{last:#}");
    last["message"].as_str().unwrap_or_default().to_string()
}
