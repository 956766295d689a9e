//! An HTTP API described by an OpenAPI 3 document (YAML or JSON): each operation is a
//! tool named by its `operationId` (else `<method>_<path>`), whose arguments are its
//! path, query and header parameters by name and, for a JSON request body, `body`.
//!
//! What a method says about a call: GET, HEAD and OPTIONS change nothing; PUT and DELETE
//! may be repeated (idempotent) and destroy or overwrite; PATCH destroys or overwrites;
//! POST adds (neither). The config's `tools:` may say otherwise per operation.
//!
//! Local `$ref`s (`#/components/...`) are resolved (at most [`MAX_REF_DEPTH`] deep); a
//! reference to another document is refused. A call sends `Authorization: Bearer` from
//! `token_env` when set and `Idempotency-Key`; a response of 400 or more is the tool's
//! error (the model is given it).

use std::path::Path;

use reqwest::Url;
use serde_json::{Map, Value, json};

use super::{ToolError, ToolReply, ToolSpec};
use crate::app::{ToolSourceConfig, ToolSourceKind};
use crate::secret::Secret;

/// How deep `$ref`s are followed.
pub const MAX_REF_DEPTH: usize = 16;
/// The most of a response body read.
const MAX_BODY: usize = 4 * 1024 * 1024;

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "patch", "head", "options"];

/// One operation.
#[derive(Debug, Clone)]
struct Operation {
    spec: ToolSpec,
    method: reqwest::Method,
    /// The path template (`/customers/{id}`).
    path: String,
    /// (name, where): `path`, `query` or `header`.
    params: Vec<(String, String)>,
    /// It takes a JSON body (`body`).
    body: bool,
}

/// A described API and its client.
pub struct Api {
    name: String,
    base: Url,
    token: Option<Secret>,
    client: reqwest::Client,
    operations: Vec<Operation>,
}

impl Api {
    /// Read the document of `config` and prepare the client.
    pub fn open(
        config: &ToolSourceConfig,
        base_dir: &Path,
        env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
    ) -> Result<Api, ToolError> {
        let name = config.name.value.clone();
        let ToolSourceKind::OpenApi {
            spec,
            base_url,
            token_env,
        } = &config.kind
        else {
            return Err(spec_error(&name, "not an OpenAPI source".into()));
        };
        let (doc, operations) = read(&name, &base_dir.join(&spec.value))?;
        let base = match base_url {
            Some(u) => u.value.clone(),
            None => doc
                .pointer("/servers/0/url")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    spec_error(
                        &name,
                        "the document names no server and the config no `base_url`".into(),
                    )
                })?,
        };
        let base = Url::parse(&base)
            .map_err(|e| spec_error(&name, format!("`{base}` is not a base URL: {e}")))?;
        let token = super::bearer_token(&name, token_env.as_ref(), env)?;
        crate::tls::install_provider();
        let connect = config
            .connect_timeout
            .as_ref()
            .map_or(super::DEFAULT_CONNECT_TIMEOUT, |t| t.value);
        let client = reqwest::Client::builder()
            .connect_timeout(connect)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| spec_error(&name, format!("cannot build an HTTP client: {e}")))?;
        Ok(Api {
            name,
            base,
            token,
            client,
            operations,
        })
    }

    pub fn tools(&self) -> Vec<ToolSpec> {
        self.operations.iter().map(|o| o.spec.clone()).collect()
    }

    /// Make the request of operation `tool`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        idempotency_key: &str,
    ) -> Result<ToolReply, ToolError> {
        let Some(op) = self.operations.iter().find(|o| o.spec.name == tool) else {
            return Err(ToolError::UnknownTool {
                server: self.name.clone(),
                tool: tool.to_string(),
                known: String::new(),
            });
        };
        let args = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Ok(ToolReply::new(
                    format!("error: the arguments must be a JSON object, not {other}"),
                    true,
                ));
            }
        };
        let url = match self.url(op, &args) {
            Ok(url) => url,
            Err(problem) => return Ok(ToolReply::new(format!("error: {problem}"), true)),
        };
        let mut request = self
            .client
            .request(op.method.clone(), url)
            .header("Idempotency-Key", idempotency_key)
            .header("Accept", "application/json");
        if let Some(tp) = crate::telemetry::outgoing() {
            request = request.header("traceparent", tp);
        }
        for (name, place) in &op.params {
            if place == "header"
                && let Some(v) = args.get(name)
            {
                request = request.header(name.as_str(), scalar(v));
            }
        }
        if op.body
            && let Some(body) = args.get("body")
        {
            request = request.json(body);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token.expose());
        }
        let qualified = format!("{}.{tool}", self.name);
        let failed = |e: reqwest::Error| ToolError::Call {
            tool: qualified.clone(),
            message: self.redact(super::mcp::plain_error(&e)),
            stderr: String::new(),
        };
        let mut response = request.send().await.map_err(failed)?;
        let status = response.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_BODY {
                break;
            }
        }
        let body = String::from_utf8_lossy(&bytes).into_owned();
        let text = if status.is_success() {
            if body.is_empty() {
                format!("HTTP {}", status.as_u16())
            } else {
                body
            }
        } else {
            format!("HTTP {}: {body}", status.as_u16())
        };
        Ok(ToolReply::new(self.redact(text), status.as_u16() >= 400))
    }

    fn redact(&self, text: String) -> String {
        match &self.token {
            Some(t) => t.redact(&text),
            None => text,
        }
    }

    /// The operation's URL: the base, the path with its parameters (each one segment,
    /// percent-encoded), the query.
    fn url(&self, op: &Operation, args: &Map<String, Value>) -> Result<Url, String> {
        let mut url = self.base.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| format!("`{}` cannot take a path", self.base))?;
            segments.pop_if_empty();
            for part in op.path.split('/').filter(|p| !p.is_empty()) {
                match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                    Some(param) => {
                        let value = args
                            .get(param)
                            .filter(|v| !v.is_null())
                            .ok_or_else(|| format!("path parameter `{param}` is required"))?;
                        segments.push(&scalar(value));
                    }
                    None => {
                        segments.push(part);
                    }
                }
            }
        }
        let query: Vec<(&String, String)> = op
            .params
            .iter()
            .filter(|(_, place)| place == "query")
            .filter_map(|(name, _)| Some((name, scalar(args.get(name).filter(|v| !v.is_null())?))))
            .collect();
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in query {
                pairs.append_pair(name, &value);
            }
        }
        Ok(url)
    }
}

/// The document at `path` and its operations.
fn read(name: &str, path: &Path) -> Result<(Value, Vec<Operation>), ToolError> {
    let text = crate::source::read_text(path)
        .map_err(|e| spec_error(name, format!("{}: {e}", path.display())))?;
    let doc =
        parse_document(&text).map_err(|e| spec_error(name, format!("{}: {e}", path.display())))?;
    let operations =
        operations(name, &doc).map_err(|e| spec_error(name, format!("{}: {e}", path.display())))?;
    Ok((doc, operations))
}

/// The tools of the OpenAPI source `config` (its document read, nothing reached): what
/// `validate` checks a task's `tools:` against.
pub fn specs(config: &ToolSourceConfig, base_dir: &Path) -> Result<Vec<ToolSpec>, ToolError> {
    let ToolSourceKind::OpenApi { spec, .. } = &config.kind else {
        return Ok(Vec::new());
    };
    let (_, ops) = read(&config.name.value, &base_dir.join(&spec.value))?;
    Ok(ops.into_iter().map(|o| o.spec).collect())
}

/// A parameter's value as text (a string as is, anything else as JSON).
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn spec_error(name: &str, message: String) -> ToolError {
    ToolError::Spec {
        server: name.to_string(),
        message,
    }
}

/// What makes an OpenAPI document unusable (each says where).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    #[error("invalid YAML: {0}")]
    Yaml(String),
    #[error("it is not an OpenAPI 3 document (`openapi: {0}`); Swagger 2 is not read")]
    NotOpenApi3(String),
    #[error("it has no `paths`")]
    NoPaths,
    #[error("two operations are named `{0}`")]
    SameName(String),
    #[error("operation `{0}` takes a cookie parameter, which is not sent")]
    Cookie(String),
    #[error("operation `{0}` takes a request body that is not JSON, which is not sent")]
    NotJsonBody(String),
    #[error("`{0}` is not a method")]
    Method(String),
    #[error("`$ref`s nest more than {MAX_REF_DEPTH} deep (a cycle?)")]
    RefDepth,
    #[error("`$ref: {0}` points into another document, which is not read")]
    RemoteRef(String),
    #[error("`$ref: {0}` points at nothing")]
    DanglingRef(String),
    #[error(
        "a schema nests more than {MAX_REF_DEPTH} `$ref`s deep (a recursive schema is not offered)"
    )]
    SchemaDepth,
}

/// A document as JSON: JSON, else YAML.
fn parse_document(text: &str) -> Result<Value, DocumentError> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(v);
    }
    let root = crate::app::yaml::parse(text).map_err(|e| DocumentError::Yaml(e.message))?;
    let value = root.to_json();
    crate::app::yaml::release(root);
    Ok(value)
}

/// The operations of `doc`, in the document's order.
fn operations(source: &str, doc: &Value) -> Result<Vec<Operation>, DocumentError> {
    let version = doc.get("openapi").and_then(Value::as_str).unwrap_or("");
    if !version.starts_with("3.") {
        return Err(DocumentError::NotOpenApi3(version.to_string()));
    }
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return Err(DocumentError::NoPaths);
    };
    let mut out = Vec::new();
    for (path, item) in paths {
        let item = resolve(doc, item, 0)?;
        let shared = item.get("parameters").cloned().unwrap_or(Value::Null);
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let op = resolve(doc, op, 0)?;
            out.push(operation(source, doc, path, method, &op, &shared)?);
        }
    }
    let mut names: Vec<&str> = out.iter().map(|o| o.spec.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(DocumentError::SameName(w[0].to_string()));
    }
    Ok(out)
}

fn operation(
    source: &str,
    doc: &Value,
    path: &str,
    method: &str,
    op: &Value,
    shared: &Value,
) -> Result<Operation, DocumentError> {
    let name = op
        .get("operationId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            let mut n = method.to_string();
            for c in path.chars() {
                n.push(if c.is_ascii_alphanumeric() { c } else { '_' });
            }
            n
        });
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    let mut params = Vec::new();
    let listed = [shared, op.get("parameters").unwrap_or(&Value::Null)];
    for list in listed {
        for p in list.as_array().into_iter().flatten() {
            let p = resolve(doc, p, 0)?;
            let (Some(pname), Some(place)) = (
                p.get("name").and_then(Value::as_str),
                p.get("in").and_then(Value::as_str),
            ) else {
                continue;
            };
            if place == "cookie" {
                return Err(DocumentError::Cookie(name));
            }
            let mut schema = match p.get("schema") {
                Some(s) => inline(doc, s, 0)?,
                None => json!({"type": "string"}),
            };
            if let (Some(d), Value::Object(m)) = (p.get("description"), &mut schema) {
                m.entry("description").or_insert(d.clone());
            }
            if place == "path" || p.get("required").and_then(Value::as_bool) == Some(true) {
                required.push(json!(pname));
            }
            // An operation's own parameter replaces the path item's of the same name.
            params.retain(|(n, w): &(String, String)| !(n == pname && w == place));
            params.push((pname.to_string(), place.to_string()));
            properties.insert(pname.to_string(), schema);
        }
    }
    let mut body = false;
    if let Some(rb) = op.get("requestBody") {
        let rb = resolve(doc, rb, 0)?;
        let content = rb.get("content").and_then(Value::as_object);
        let json_schema = content.and_then(|c| {
            c.iter()
                .find(|(k, _)| k.starts_with("application/json") || k.ends_with("+json"))
                .map(|(_, v)| v.get("schema").cloned().unwrap_or(json!({})))
        });
        match json_schema {
            Some(schema) => {
                body = true;
                properties.insert("body".into(), inline(doc, &schema, 0)?);
                if rb.get("required").and_then(Value::as_bool) == Some(true) {
                    required.push(json!("body"));
                }
            }
            None if content.is_some_and(|c| !c.is_empty()) => {
                return Err(DocumentError::NotJsonBody(name));
            }
            None => {}
        }
    }
    let description = [op.get("summary"), op.get("description")]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(" — ");
    let (read_only, destructive, idempotent) = match method {
        "get" | "head" | "options" => (true, false, true),
        "put" | "delete" => (false, true, true),
        "patch" => (false, true, false),
        _ => (false, false, false),
    };
    let mut schema =
        json!({"type": "object", "properties": properties, "additionalProperties": false});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    Ok(Operation {
        spec: ToolSpec {
            source: source.to_string(),
            name,
            description,
            input_schema: schema,
            read_only,
            destructive,
            idempotent,
            confirm: None,
        },
        method: method
            .to_ascii_uppercase()
            .parse()
            .map_err(|_| DocumentError::Method(method.to_string()))?,
        path: path.to_string(),
        params,
        body,
    })
}

/// `value`, or what its `$ref` points at (followed, at most [`MAX_REF_DEPTH`] times).
fn resolve(doc: &Value, value: &Value, depth: usize) -> Result<Value, DocumentError> {
    match value.get("$ref").and_then(Value::as_str) {
        None => Ok(value.clone()),
        Some(_) if depth >= MAX_REF_DEPTH => Err(DocumentError::RefDepth),
        Some(r) => {
            let target = r
                .strip_prefix('#')
                .ok_or_else(|| DocumentError::RemoteRef(r.to_string()))?;
            let found = doc
                .pointer(target)
                .ok_or_else(|| DocumentError::DanglingRef(r.to_string()))?;
            resolve(doc, found, depth + 1)
        }
    }
}

/// A schema with every local `$ref` inside it replaced by what it points at.
fn inline(doc: &Value, schema: &Value, depth: usize) -> Result<Value, DocumentError> {
    if depth > MAX_REF_DEPTH {
        return Err(DocumentError::SchemaDepth);
    }
    let resolved = resolve(doc, schema, 0)?;
    let followed = resolved != *schema;
    let next = depth + usize::from(followed);
    Ok(match resolved {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| Ok((k, inline(doc, &v, next)?)))
                .collect::<Result<Map<String, Value>, DocumentError>>()?,
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| inline(doc, v, next))
                .collect::<Result<Vec<_>, DocumentError>>()?,
        ),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r##"
openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /customers/{customer_id}/score:
    parameters:
      - {name: customer_id, in: path, required: true, schema: {type: string}}
    get:
      operationId: getCreditScore
      summary: The customer's score
      parameters:
        - {name: verbose, in: query, schema: {type: boolean}}
  /reports:
    post:
      operationId: createReport
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Report"}
  /reports/{id}:
    delete:
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
components:
  schemas:
    Report:
      type: object
      properties: {customer_id: {type: string}, summary: {type: string}}
      required: [customer_id]
"##;

    fn ops() -> Vec<Operation> {
        operations("bureau", &parse_document(DOC).unwrap()).unwrap()
    }

    #[test]
    fn each_operation_is_a_tool_with_its_parameters_and_body() {
        let ops = ops();
        let names: Vec<&str> = ops.iter().map(|o| o.spec.name.as_str()).collect();
        assert_eq!(
            names,
            ["getCreditScore", "createReport", "delete_reports__id_"]
        );
        let score = &ops[0].spec;
        assert!(score.read_only && score.idempotent && !score.destructive);
        assert_eq!(score.input_schema["required"], json!(["customer_id"]));
        assert_eq!(
            score.input_schema["properties"]["verbose"]["type"],
            "boolean"
        );
        let report = &ops[1];
        assert!(report.body && !report.spec.read_only && !report.spec.idempotent);
        assert_eq!(
            report.spec.input_schema["properties"]["body"]["required"],
            json!(["customer_id"]),
            "the $ref is inlined"
        );
        assert!(ops[2].spec.destructive && ops[2].spec.idempotent);
    }

    #[test]
    fn urls_encode_each_path_parameter_as_one_segment() {
        // A client needs the process's TLS provider, whichever test runs first.
        crate::tls::install_provider();
        let api = Api {
            name: "bureau".into(),
            base: Url::parse("http://127.0.0.1:9/api/").unwrap(),
            token: None,
            client: reqwest::Client::new(),
            operations: ops(),
        };
        let args = json!({"customer_id": "a/b c", "verbose": true});
        let url = api
            .url(&api.operations[0], args.as_object().unwrap())
            .unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9/api/customers/a%2Fb%20c/score?verbose=true"
        );
        let missing = api.url(&api.operations[0], &Map::new()).unwrap_err();
        assert!(missing.contains("customer_id"), "{missing}");
    }

    #[test]
    fn documents_it_cannot_use_are_refused_with_the_reason() {
        let swagger = json!({"swagger": "2.0", "paths": {}});
        assert_eq!(
            operations("x", &swagger).unwrap_err(),
            DocumentError::NotOpenApi3(String::new())
        );
        let remote = json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "other.yaml#/p"}]}}}});
        assert_eq!(
            operations("x", &remote).unwrap_err(),
            DocumentError::RemoteRef("other.yaml#/p".into())
        );
        let cyclic = json!({"openapi": "3.0.0", "paths": {"/a": {"$ref": "#/paths/~1a"}}});
        let cycle = operations("x", &cyclic).unwrap_err();
        assert_eq!(cycle, DocumentError::RefDepth);
        assert!(cycle.to_string().contains("deep (a cycle?)"), "{cycle}");
    }
}
