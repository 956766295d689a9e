//! A2A 0.3, as a dialect of 1.0: the one place that knows how 0.3's JSON-RPC shapes differ
//! from 1.0's, both ways. The server ([`super::server`]) speaks 1.0 inside and translates
//! at its edge for a 0.3 client; the client ([`super`]) builds 0.3 messages with it.
//!
//! What differs:
//! - methods: `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
//!   `tasks/resubscribe` (1.0: `SendMessage`, `SendStreamingMessage`, `GetTask`,
//!   `CancelTask`, `SubscribeToTask`);
//! - objects say what they are (`kind`: `task`, `message`, `status-update`,
//!   `artifact-update`) where 1.0 wraps them (`{"task": ...}`, `{"statusUpdate": ...}`);
//!   a status update says whether it is the `final` one;
//! - parts: `{"kind": "text", "text"}`, `{"kind": "data", "data"}`, `{"kind": "file",
//!   "file": {"uri" | "bytes", "mimeType", "name"}}` (1.0: `{"text"}`, `{"data",
//!   "mediaType"}`, `{"url" | "raw", "mediaType", "filename"}`);
//! - names: roles `user`/`agent` (1.0 `ROLE_USER`/`ROLE_AGENT`), states `input-required`
//!   (1.0 `TASK_STATE_INPUT_REQUIRED`);
//! - a blocking send: `configuration.blocking` (absent: blocking, as the reference SDKs
//!   do) where 1.0 has `configuration.returnImmediately`.
//!
//! Push notifications and the authenticated extended card are served in neither version.

use serde_json::{Map, Value, json};

use super::state::TaskState;

/// A file part's fields: 0.3's (inside `file`) and 1.0's (on the part), both ways.
const FILE_FIELDS: [(&str, &str); 4] = [
    ("uri", "url"),
    ("bytes", "raw"),
    ("mimeType", "mediaType"),
    ("name", "filename"),
];

/// The 1.0 method a 0.3 method is, when it is one this server serves.
pub fn method(name: &str) -> Option<&'static str> {
    Some(match name {
        "message/send" => "SendMessage",
        "message/stream" => "SendStreamingMessage",
        "tasks/get" => "GetTask",
        "tasks/cancel" => "CancelTask",
        "tasks/resubscribe" => "SubscribeToTask",
        _ => return None,
    })
}

/// Whether `name` is written as a 0.3 method (`noun/verb`), served or not.
pub fn is_v03_method(name: &str) -> bool {
    name.contains('/')
}

/// The methods a 0.3 client may call here, for an error message.
pub const METHODS: &str =
    "message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe";

/// A 0.3 request's params in 1.0's shape: its message, and whether to block.
pub fn params_in(params: &Value) -> Value {
    let mut out = params.clone();
    if let Some(m) = params.get("message") {
        out["message"] = message_in(m);
    }
    if let Some(Value::Object(config)) = params.get("configuration") {
        let mut config = config.clone();
        if let Some(blocking) = config.remove("blocking").and_then(|b| b.as_bool()) {
            config.insert("returnImmediately".into(), json!(!blocking));
        }
        out["configuration"] = Value::Object(config);
    }
    out
}

/// A 0.3 message in 1.0's shape.
pub fn message_in(m: &Value) -> Value {
    let Value::Object(m) = m else {
        return m.clone();
    };
    let mut out = m.clone();
    out.remove("kind");
    if let Some(role) = m.get("role").and_then(Value::as_str) {
        let role = match role {
            "user" => "ROLE_USER",
            "agent" => "ROLE_AGENT",
            other => other,
        };
        out.insert("role".into(), json!(role));
    }
    if let Some(Value::Array(parts)) = m.get("parts") {
        out.insert(
            "parts".into(),
            Value::Array(parts.iter().map(part_in).collect()),
        );
    }
    Value::Object(out)
}

fn part_in(p: &Value) -> Value {
    let Value::Object(p) = p else {
        return p.clone();
    };
    let mut out = Map::new();
    match p.get("kind").and_then(Value::as_str) {
        Some("text") => {
            out.insert("text".into(), p.get("text").cloned().unwrap_or(json!("")));
        }
        Some("data") => {
            out.insert("data".into(), p.get("data").cloned().unwrap_or(Value::Null));
            out.insert("mediaType".into(), json!("application/json"));
        }
        Some("file") => {
            let file = p.get("file").cloned().unwrap_or_default();
            for (from, to) in FILE_FIELDS {
                if let Some(v) = file.get(from) {
                    out.insert(to.into(), v.clone());
                }
            }
        }
        // Already 1.0-shaped, or unknown: as it is.
        _ => return Value::Object(p.clone()),
    }
    if let Some(meta) = p.get("metadata") {
        out.insert("metadata".into(), meta.clone());
    }
    Value::Object(out)
}

/// A 1.0 result (a `SendMessage` reply, a task, a stream event) as 0.3 says it.
pub fn result(v: &Value) -> Value {
    if let Some(t) = v.get("task") {
        return task(t);
    }
    if let Some(m) = v.get("message") {
        return message(m);
    }
    if let Some(u) = v.get("statusUpdate") {
        let mut u = u.clone();
        let state = u
            .pointer("/status/state")
            .and_then(Value::as_str)
            .map_or(TaskState::Unknown, TaskState::parse);
        u["kind"] = json!("status-update");
        u["status"] = status(&u["status"]);
        u["final"] = json!(
            state.is_terminal()
                || state == TaskState::InputRequired
                || state == TaskState::AuthRequired
        );
        return u;
    }
    if let Some(a) = v.get("artifactUpdate") {
        let mut a = a.clone();
        a["kind"] = json!("artifact-update");
        a["artifact"] = artifact(&a["artifact"]);
        return a;
    }
    if v.get("id").is_some() && v.get("status").is_some() {
        return task(v);
    }
    v.clone()
}

fn task(t: &Value) -> Value {
    let mut t = t.clone();
    t["kind"] = json!("task");
    t["status"] = status(&t["status"]);
    for (key, each) in [
        ("artifacts", artifact as fn(&Value) -> Value),
        ("history", message),
    ] {
        if let Some(Value::Array(items)) = t.get(key) {
            t[key] = Value::Array(items.iter().map(each).collect());
        }
    }
    t
}

fn status(s: &Value) -> Value {
    let mut s = s.clone();
    if let Some(state) = s.get("state").and_then(Value::as_str) {
        s["state"] = json!(TaskState::parse(state).as_str());
    }
    if let Some(m) = s.get("message").filter(|m| m.is_object()) {
        s["message"] = message(m);
    }
    s
}

fn artifact(a: &Value) -> Value {
    let mut a = a.clone();
    if let Some(Value::Array(parts)) = a.get("parts") {
        a["parts"] = Value::Array(parts.iter().map(part).collect());
    }
    a
}

/// A 1.0 message as 0.3 says it.
pub fn message(m: &Value) -> Value {
    let mut m = m.clone();
    m["kind"] = json!("message");
    if let Some(role) = m.get("role").and_then(Value::as_str) {
        let role = match role {
            "ROLE_USER" => "user",
            "ROLE_AGENT" => "agent",
            other => other,
        };
        m["role"] = json!(role);
    }
    if let Some(Value::Array(parts)) = m.get("parts") {
        m["parts"] = Value::Array(parts.iter().map(part).collect());
    }
    m
}

fn part(p: &Value) -> Value {
    let Value::Object(p) = p else {
        return p.clone();
    };
    if p.contains_key("kind") {
        return Value::Object(p.clone());
    }
    let mut out = Map::new();
    if let Some(t) = p.get("text") {
        out.insert("kind".into(), json!("text"));
        out.insert("text".into(), t.clone());
    } else if let Some(d) = p.get("data") {
        out.insert("kind".into(), json!("data"));
        out.insert("data".into(), d.clone());
    } else {
        let mut file = Map::new();
        for (to, from) in FILE_FIELDS {
            if let Some(v) = p.get(from) {
                file.insert(to.into(), v.clone());
            }
        }
        out.insert("kind".into(), json!("file"));
        out.insert("file".into(), Value::Object(file));
    }
    if let Some(meta) = p.get("metadata") {
        out.insert("metadata".into(), meta.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_and_its_events_in_0_3_shape() {
        let t = json!({"id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": {"messageId": "m",
                "role": "ROLE_AGENT", "parts": [{"text": "approve?"}]}},
            "artifacts": [{"artifactId": "a", "parts": [{"data": {"x": 1}, "mediaType": "application/json"}]}],
            "history": [{"messageId": "u", "role": "ROLE_USER", "parts": [{"data": {"n": 2}}]}]});
        let out = result(&json!({ "task": t }));
        assert_eq!(out["kind"], "task");
        assert_eq!(out["status"]["state"], "input-required");
        assert_eq!(out["status"]["message"]["kind"], "message");
        assert_eq!(out["status"]["message"]["role"], "agent");
        assert_eq!(
            out["status"]["message"]["parts"][0],
            json!({"kind": "text", "text": "approve?"})
        );
        assert_eq!(
            out["artifacts"][0]["parts"][0],
            json!({"kind": "data", "data": {"x": 1}})
        );
        assert_eq!(out["history"][0]["role"], "user");
        // A task on its own (GetTask, CancelTask) too.
        assert_eq!(result(&t), out);

        let update = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"}}});
        let out = result(&update);
        assert_eq!(out["kind"], "status-update");
        assert_eq!(out["status"]["state"], "working");
        assert_eq!(out["final"], false);
        let done =
            json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}});
        assert_eq!(result(&done)["final"], true);
        let art = json!({"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a",
            "parts": [{"text": "hi"}]}, "append": false, "lastChunk": true}});
        let out = result(&art);
        assert_eq!(out["kind"], "artifact-update");
        assert_eq!(out["artifact"]["parts"][0]["kind"], "text");
    }

    #[test]
    fn a_0_3_request_in_1_0_shape() {
        let p = json!({"message": {"kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": {"a": 1}},
                {"kind": "file", "file": {"uri": "http://x/f", "mimeType": "text/plain", "name": "f"}}]},
            "configuration": {"blocking": false, "historyLength": 2}});
        let out = params_in(&p);
        let m = &out["message"];
        assert!(m.get("kind").is_none());
        assert_eq!(m["role"], "ROLE_USER");
        assert_eq!(m["parts"][0], json!({"text": "hi"}));
        assert_eq!(
            m["parts"][1],
            json!({"data": {"a": 1}, "mediaType": "application/json"})
        );
        assert_eq!(
            m["parts"][2],
            json!({"url": "http://x/f", "mediaType": "text/plain", "filename": "f"})
        );
        assert_eq!(
            out["configuration"],
            json!({"returnImmediately": true, "historyLength": 2})
        );
        // There and back.
        assert_eq!(message(m)["parts"], p["message"]["parts"]);
        assert_eq!(method("message/stream"), Some("SendStreamingMessage"));
        assert_eq!(method("tasks/pushNotificationConfig/set"), None);
        assert!(is_v03_method("tasks/pushNotificationConfig/set"));
        assert!(!is_v03_method("SendMessage"));
    }
}
