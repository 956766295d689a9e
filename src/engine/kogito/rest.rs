//! The REST API of a Kogito service built by `cuga-flo kogito build`: Kogito's generated
//! process endpoints (`/{process}`, `/{process}/{id}`, user-task completion), its
//! process-management add-on (node instances, triggering and cancelling nodes) and the
//! service's own `/cugaflo/trace/{id}` (the path of BPMN ids, how the instance ended and
//! its final variables; Kogito forgets an instance as soon as it ends).

use std::time::Duration;

use reqwest::{Method, RequestBuilder};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::augment::ACTOR;
use crate::engine::http;
pub use crate::engine::http::RestError;

/// Where the service is.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The service's base URL (`http://127.0.0.1:8081`).
    pub url: String,
    pub connect_timeout: Duration,
    /// Each request (a completion returns once the instance has moved on).
    pub timeout: Duration,
}

/// A user task waiting for cuga-flo.
#[derive(Debug, Clone)]
pub struct WorkItem {
    pub id: String,
    pub node_instance_id: String,
    /// The BPMN id of the task.
    pub element_id: String,
    /// Its `TaskName` (the REST path segment).
    pub task_name: String,
    /// The loop counter of an instance of a multi-instance task ([`super::augment::SLOT`]).
    pub slot: Option<u64>,
}

/// What the service's listener knows of an instance.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    /// `active`, `completed`, `aborted` or `error`.
    pub state: String,
    #[serde(default)]
    pub path: Vec<String>,
    #[serde(default)]
    pub end_node: Option<String>,
    #[serde(default)]
    pub terminated: bool,
    #[serde(default)]
    pub variables: Option<Map<String, Value>>,
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: Endpoint,
}

impl Client {
    pub fn new(endpoint: Endpoint) -> Result<Client, http::ClientError> {
        let http = http::client(endpoint.connect_timeout, endpoint.timeout)?;
        Ok(Client { http, endpoint })
    }

    pub fn url(&self) -> &str {
        &self.endpoint.url
    }

    fn at(&self, method: Method, path: &str) -> RequestBuilder {
        let base = self.endpoint.url.trim_end_matches('/');
        self.http.request(method, format!("{base}/{path}"))
    }

    async fn send(&self, request: RequestBuilder, what: &str) -> Result<Value, RestError> {
        http::send(request, what, None).await
    }

    /// The instances of `process` (proves the service serves the process).
    pub async fn ping(&self, process: &str) -> Result<(), RestError> {
        let request = self.at(Method::GET, process);
        self.send(request, &format!("GET /{process}"))
            .await
            .map(drop)
    }

    /// Start an instance; its id.
    pub async fn start(
        &self,
        process: &str,
        business_key: &str,
        variables: &Map<String, Value>,
    ) -> Result<String, RestError> {
        let request = self
            .at(Method::POST, process)
            .query(&[("businessKey", business_key)])
            .json(variables);
        let started = self.send(request, &format!("POST /{process}")).await?;
        started["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| RestError {
                what: format!("POST /{process}"),
                status: None,
                detail: format!(
                    "the answer has no instance id: {}",
                    http::excerpt(&started.to_string())
                ),
            })
    }

    /// The instance's variables now.
    pub async fn variables(
        &self,
        process: &str,
        id: &str,
    ) -> Result<Map<String, Value>, RestError> {
        let request = self.at(Method::GET, &format!("{process}/{id}"));
        let mut vars = match self
            .send(request, &format!("GET /{process}/{{id}}"))
            .await?
        {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        vars.remove("id");
        Ok(vars)
    }

    /// Merge variables into the instance's.
    pub async fn patch(
        &self,
        process: &str,
        id: &str,
        variables: &Map<String, Value>,
    ) -> Result<(), RestError> {
        let request = self
            .at(Method::PATCH, &format!("{process}/{id}"))
            .json(variables);
        self.send(request, &format!("PATCH /{process}/{{id}}"))
            .await
            .map(drop)
    }

    /// The user tasks waiting for cuga-flo.
    pub async fn waiting(&self, process: &str, id: &str) -> Result<Vec<WorkItem>, RestError> {
        let request = self.at(
            Method::GET,
            &format!("management/processes/{process}/instances/{id}/nodeInstances"),
        );
        let found = self
            .send(request, "GET management/.../nodeInstances")
            .await?;
        Ok(found
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| {
                let parameters = &n["parameters"];
                Some(WorkItem {
                    id: n["id"].as_str()?.to_string(),
                    node_instance_id: n["nodeInstanceId"].as_str()?.to_string(),
                    element_id: parameters["UNIQUE_TASK_ID"].as_str()?.to_string(),
                    task_name: parameters["TaskName"]
                        .as_str()
                        .or(n["name"].as_str())?
                        .to_string(),
                    slot: parameters[super::augment::SLOT].as_u64(),
                })
            })
            .collect())
    }

    /// Complete a user task as cuga-flo with every variable (Kogito nulls an output left
    /// out).
    pub async fn complete(
        &self,
        process: &str,
        id: &str,
        item: &WorkItem,
        variables: &Map<String, Value>,
    ) -> Result<(), RestError> {
        let request = self
            .at(
                Method::POST,
                &format!("{process}/{id}/{}/{}", item.task_name, item.id),
            )
            .query(&[("user", ACTOR)])
            .json(variables);
        self.send(
            request,
            &format!("POST /{process}/{{id}}/{}", item.task_name),
        )
        .await
        .map(drop)
    }

    /// A call to one of the service's own endpoints (what Kogito's REST API lacks):
    /// `/cugaflo/{op}/{process}/{id}`, then `/{work item}` when the call is made at one,
    /// with `query`. Its answer.
    async fn own(
        &self,
        method: Method,
        op: &str,
        at: (&str, &str, Option<&WorkItem>),
        query: &[(&str, &str)],
    ) -> Result<Value, RestError> {
        let (process, id, item) = at;
        let (path, what) = match item {
            Some(item) => (
                format!("cugaflo/{op}/{process}/{id}/{}", item.id),
                format!("{method} /cugaflo/{op}/{{process}}/{{id}}/{{workItem}}"),
            ),
            None => (
                format!("cugaflo/{op}/{process}/{id}"),
                format!("{method} /cugaflo/{op}/{{process}}/{{id}}"),
            ),
        };
        let request = self.at(method, &path).query(query);
        self.send(request, &what).await
    }

    /// Raise BPMN error `code` at the user task `item` (jBPM delivers it to the boundary
    /// event or event sub-process catching it).
    pub async fn raise(
        &self,
        process: &str,
        id: &str,
        item: &WorkItem,
        code: &str,
    ) -> Result<(), RestError> {
        self.own(
            Method::POST,
            "error",
            (process, id, Some(item)),
            &[("code", code)],
        )
        .await
        .map(drop)
    }

    /// Deliver jBPM signal `event_type` (a message or signal the run throws at the user
    /// task `item`) to the instance's catches waiting for it; the BPMN ids of those that
    /// were waiting, in the order they started waiting.
    pub async fn deliver(
        &self,
        process: &str,
        id: &str,
        item: &WorkItem,
        event_type: &str,
    ) -> Result<Vec<String>, RestError> {
        let answer = self
            .own(
                Method::POST,
                "deliver",
                (process, id, Some(item)),
                &[("type", event_type)],
            )
            .await?;
        Ok(caught(&answer))
    }

    /// What the instance waits for that cuga-flo delivers (its catches, boundary events
    /// and event sub-process starts waiting for one of cuga-flo's signals): `(node, signal
    /// type)`, service ids.
    pub async fn waits(&self, process: &str, id: &str) -> Result<Vec<(String, String)>, RestError> {
        let answer = self
            .own(Method::GET, "waits", (process, id, None), &[])
            .await?;
        Ok(answer["waits"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| {
                Some((
                    w["node"].as_str()?.to_string(),
                    w["type"].as_str()?.to_string(),
                ))
            })
            .collect())
    }

    /// Signal `event_type` to the instance with no user task to deliver it from (a timer
    /// cuga-flo fires, a message delivered from outside); the nodes that waited for it.
    pub async fn signal(
        &self,
        process: &str,
        id: &str,
        event_type: &str,
    ) -> Result<Vec<String>, RestError> {
        let answer = self
            .own(
                Method::POST,
                "signal",
                (process, id, None),
                &[("type", event_type)],
            )
            .await?;
        Ok(caught(&answer))
    }

    /// Move a token: trigger `node`, then cancel the node instance the token was at.
    pub async fn move_token(
        &self,
        process: &str,
        id: &str,
        from_node_instance: &str,
        to: &str,
    ) -> Result<(), RestError> {
        let base = format!("management/processes/{process}/instances/{id}");
        let request = self.at(Method::POST, &format!("{base}/nodes/{to}"));
        self.send(request, "POST management/.../nodes/{node}")
            .await?;
        let request = self.at(
            Method::DELETE,
            &format!("{base}/nodeInstances/{from_node_instance}"),
        );
        self.send(request, "DELETE management/.../nodeInstances/{id}")
            .await
            .map(drop)
    }

    /// Cancel a node instance (its token ends there).
    pub async fn cancel_node(
        &self,
        process: &str,
        id: &str,
        node_instance: &str,
    ) -> Result<(), RestError> {
        let request = self.at(
            Method::DELETE,
            &format!("management/processes/{process}/instances/{id}/nodeInstances/{node_instance}"),
        );
        self.send(request, "DELETE management/.../nodeInstances/{id}")
            .await
            .map(drop)
    }

    /// Abort a running instance (one that ended already is left alone).
    pub async fn abort(&self, process: &str, id: &str) -> Result<(), RestError> {
        let request = self.at(Method::DELETE, &format!("{process}/{id}"));
        match self
            .send(request, &format!("DELETE /{process}/{{id}}"))
            .await
        {
            Err(e) if e.status == Some(404) => Ok(()),
            other => other.map(drop),
        }
    }

    /// What the service's listener knows of the instance.
    pub async fn trace(&self, id: &str) -> Result<Trace, RestError> {
        let request = self.at(Method::GET, &format!("cugaflo/trace/{id}"));
        let found = self.send(request, "GET /cugaflo/trace/{id}").await?;
        serde_json::from_value(found).map_err(|e| RestError {
            what: "GET /cugaflo/trace/{id}".into(),
            status: None,
            detail: format!("unexpected answer: {e}"),
        })
    }
}

/// The nodes a delivery or signal reached (`{"caught": [...]}`), in the order they started
/// waiting.
fn caught(answer: &Value) -> Vec<String> {
    answer["caught"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}
