//! Flowable's REST API, as far as the adapter uses it: the process API (`…/service` in
//! the `flowable-rest` application, `…/process-api` in Spring Boot apps) and the external
//! worker job API (`…/external-job-api`). HTTP basic authentication; every error names
//! the call and quotes Flowable's answer (shortened), never the password.

use std::time::Duration;

use reqwest::{Method, RequestBuilder};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::engine::http;
pub use crate::engine::http::RestError;
use crate::journal::event::CatchKind;
use crate::secret::Secret;

/// Where Flowable is and who we are there.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The process API's base URL.
    pub url: String,
    /// The external worker job API's base URL.
    pub jobs_url: String,
    pub username: Option<String>,
    pub password: Option<Secret>,
    pub connect_timeout: Duration,
    /// Each request (a start runs until the first wait state).
    pub timeout: Duration,
}

impl Endpoint {
    /// The job API next to the process API: the last path segment (`service`,
    /// `process-api`) replaced by `external-job-api`.
    pub fn jobs_url_for(url: &str) -> String {
        let url = url.trim_end_matches('/');
        match url.rsplit_once('/') {
            Some((root, last)) if last == "service" || last == "process-api" => {
                format!("{root}/external-job-api")
            }
            _ => format!("{url}/external-job-api"),
        }
    }
}

/// An external worker job handed to this worker.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub id: String,
    pub element_id: String,
    #[serde(default)]
    pub element_name: Option<String>,
    pub process_instance_id: Option<String>,
    /// The execution waiting at the job's activity.
    #[serde(default)]
    pub execution_id: Option<String>,
    /// The process variables, when Flowable sends them with the job.
    #[serde(default)]
    pub variables: Option<Vec<RestVariable>>,
}

/// A variable as Flowable's REST API writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct RestVariable {
    pub name: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub value: Value,
    #[serde(default)]
    pub scope: Option<String>,
}

/// One activity instance of a process instance's history.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    pub id: String,
    pub activity_id: String,
    #[serde(default)]
    pub activity_type: Option<String>,
    #[serde(default)]
    pub start_time: Option<String>,
    /// `None` while the activity is waiting (a worker's job not completed yet).
    #[serde(default)]
    pub end_time: Option<String>,
    #[serde(default)]
    pub execution_id: Option<String>,
}

/// The handler of the timer jobs of timer events (a failed job's retry waits as a timer
/// job of another handler).
const TIMER_HANDLER: &str = "trigger-timer";

/// A timer event's job, waiting for its due time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimerJob {
    pub id: String,
    /// The timer event.
    pub element_id: String,
    pub execution_id: Option<String>,
    /// When it is due (`None`: Flowable gave no date cuga-flo can read).
    pub due_ms: Option<u64>,
}

/// The timestamp of a version-1 UUID (60 bits of 100 ns ticks), `None` for other ids.
fn uuid_v1_time(id: &str) -> Option<u64> {
    let parts: Vec<&str> = id.split('-').collect();
    let [low, mid, high, _, _] = parts.as_slice() else {
        return None;
    };
    if low.len() != 8 || mid.len() != 4 || high.len() != 4 || !high.starts_with('1') {
        return None;
    }
    let low = u64::from_str_radix(low, 16).ok()?;
    let mid = u64::from_str_radix(mid, 16).ok()?;
    let high = u64::from_str_radix(high, 16).ok()? & 0x0fff;
    Some((high << 48) | (mid << 32) | low)
}

/// A client of one Flowable endpoint.
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

    fn request(&self, method: Method, url: String) -> RequestBuilder {
        let request = self.http.request(method, url);
        match &self.endpoint.username {
            Some(user) => {
                request.basic_auth(user, self.endpoint.password.as_ref().map(Secret::expose))
            }
            None => request,
        }
    }

    fn api(&self, method: Method, path: &str) -> RequestBuilder {
        self.request(
            method,
            format!("{}/{path}", self.endpoint.url.trim_end_matches('/')),
        )
    }

    fn jobs(&self, method: Method, path: &str) -> RequestBuilder {
        self.request(
            method,
            format!("{}/{path}", self.endpoint.jobs_url.trim_end_matches('/')),
        )
    }

    async fn send(&self, request: RequestBuilder, what: &str) -> Result<Value, RestError> {
        http::send(request, what, self.endpoint.password.as_ref()).await
    }

    /// Whether Flowable answers (and accepts the credentials).
    pub async fn ping(&self) -> Result<(), RestError> {
        let request = self.api(Method::GET, "repository/process-definitions?size=1");
        self.send(request, "GET repository/process-definitions")
            .await
            .map(drop)
    }

    /// The id of the deployment called `name`, if there is one: the oldest, when
    /// processes deploying at once made several.
    pub async fn deployment_named(&self, name: &str) -> Result<Option<String>, RestError> {
        Ok(self.deployments_named(name).await?.into_iter().next())
    }

    /// The ids of the deployments called `name`, oldest first.
    pub async fn deployments_named(&self, name: &str) -> Result<Vec<String>, RestError> {
        let request = self.api(Method::GET, "repository/deployments").query(&[
            ("name", name),
            ("sort", "deployTime"),
            ("order", "asc"),
            ("size", "100"),
        ]);
        let found = self.send(request, "GET repository/deployments").await?;
        Ok(found["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["id"].as_str().map(str::to_string))
            .collect())
    }

    /// Deploy one BPMN file; the deployment's id.
    pub async fn deploy(&self, name: &str, file: &str, xml: &str) -> Result<String, RestError> {
        let boundary = format!("cuga-flo-{:016x}", fxhash(xml));
        let mut body = Vec::new();
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file}\"\r\n\
                 Content-Type: text/xml\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(xml.as_bytes());
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let request = self
            .api(Method::POST, "repository/deployments")
            .query(&[("deploymentName", name)])
            .header(
                reqwest::header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        let deployed = self.send(request, "POST repository/deployments").await?;
        Ok(deployed["id"].as_str().unwrap_or_default().to_string())
    }

    /// The id of the process definition `key` in a deployment, or of its latest version
    /// (no deployment given).
    pub async fn definition(
        &self,
        key: &str,
        deployment: Option<&str>,
    ) -> Result<Option<String>, RestError> {
        let mut query = vec![("key", key)];
        match deployment {
            Some(d) => query.push(("deploymentId", d)),
            None => query.push(("latest", "true")),
        }
        let request = self
            .api(Method::GET, "repository/process-definitions")
            .query(&query);
        let found = self
            .send(request, "GET repository/process-definitions")
            .await?;
        Ok(found["data"]
            .as_array()
            .and_then(|d| d.first())
            .and_then(|d| d["id"].as_str())
            .map(str::to_string))
    }

    /// Start an instance of the process definition `definition` (an id); its id.
    pub async fn start(
        &self,
        definition: &str,
        business_key: &str,
        variables: &Map<String, Value>,
    ) -> Result<String, RestError> {
        let request = self
            .api(Method::POST, "runtime/process-instances")
            .json(&json!({
                "processDefinitionId": definition,
                "businessKey": business_key,
                "variables": rest_variables(variables),
            }));
        let started = self.send(request, "POST runtime/process-instances").await?;
        started["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| RestError {
                what: "POST runtime/process-instances".into(),
                status: None,
                detail: format!(
                    "the answer has no instance id: {}",
                    http::excerpt(&started.to_string())
                ),
            })
    }

    /// Lock up to `n` jobs of `topic` for `worker`.
    pub async fn acquire(
        &self,
        topic: &str,
        worker: &str,
        n: u32,
        lock: Duration,
    ) -> Result<Vec<Job>, RestError> {
        let request = self.jobs(Method::POST, "acquire/jobs").json(&json!({
            "topic": topic,
            "workerId": worker,
            "numberOfTasks": n,
            "lockDuration": format!("PT{}S", lock.as_secs().max(1)),
        }));
        let jobs = self.send(request, "POST acquire/jobs").await?;
        serde_json::from_value(jobs).map_err(|e| RestError {
            what: "POST acquire/jobs".into(),
            status: None,
            detail: format!("unexpected answer: {e}"),
        })
    }

    /// Give back every job `worker` holds (a resumed run's jobs, locked to the worker of
    /// the process that died, become acquirable at once instead of when their lock ends).
    pub async fn unacquire_all(&self, worker: &str) -> Result<(), RestError> {
        let request = self
            .jobs(Method::POST, "unacquire/jobs")
            .json(&json!({"workerId": worker}));
        self.send(request, "POST unacquire/jobs").await.map(drop)
    }

    /// Give back one job `worker` holds. A job that is gone (its instance ended meanwhile,
    /// e.g. terminated by a hook) has nothing to give back.
    pub async fn unacquire(&self, job: &str, worker: &str) -> Result<(), RestError> {
        let request = self
            .jobs(Method::POST, &format!("unacquire/jobs/{job}"))
            .json(&json!({"workerId": worker}));
        match self.send(request, "POST unacquire/jobs/{id}").await {
            // Flowable 7.2 answers a job that is gone with 404, or with 500 and "Could not
            // find job" when it went while the request was on its way.
            Err(e)
                if e.status == Some(404)
                    || (e.status == Some(500) && e.detail.contains("Could not find job")) =>
            {
                Ok(())
            }
            other => other.map(drop),
        }
    }

    /// The running instance started with `business_key` (cuga-flo's run id), if any.
    pub async fn instance_by_business_key(
        &self,
        business_key: &str,
    ) -> Result<Option<String>, RestError> {
        let request = self
            .api(Method::GET, "runtime/process-instances")
            .query(&[("businessKey", business_key), ("size", "1")]);
        let found = self.send(request, "GET runtime/process-instances").await?;
        Ok(found["data"]
            .as_array()
            .and_then(|d| d.first())
            .and_then(|d| d["id"].as_str())
            .map(str::to_string))
    }

    /// Whether jobs of `topic` wait to be acquired (without locking them): unlocked ones
    /// (a call activity waiting for its parked child run keeps its job locked).
    /// (Flowable's job list takes no topic filter: the instance's jobs, which are all on
    /// its run's topic, are asked for.)
    pub async fn has_jobs(&self, topic: &str, instance: &str) -> Result<bool, RestError> {
        let request = self.jobs(Method::GET, "jobs").query(&[
            ("topic", topic),
            ("processInstanceId", instance),
            ("unlocked", "true"),
            ("size", "1"),
        ]);
        let found = self.send(request, "GET jobs").await?;
        Ok(found["total"].as_u64().unwrap_or(0) > 0)
    }

    /// The instances of `definition` with an external-worker job waiting, each once, in
    /// the order Flowable lists their jobs: with whether one of its jobs is unlocked (or
    /// its lock has run out by `now_ms`). What a worker fleet looks at for work.
    pub async fn instances_with_jobs(
        &self,
        definition: &str,
        now_ms: u64,
    ) -> Result<Vec<(String, bool)>, RestError> {
        const PAGE: usize = 500;
        let mut found: Vec<(String, bool)> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        let mut start = 0;
        loop {
            let request = self.jobs(Method::GET, "jobs").query(&[
                ("processDefinitionId", definition),
                ("sort", "id"),
                ("start", &start.to_string()),
                ("size", &PAGE.to_string()),
            ]);
            let page = self.send(request, "GET jobs").await?;
            let data = page["data"].as_array().cloned().unwrap_or_default();
            for job in &data {
                let Some(instance) = job["processInstanceId"].as_str() else {
                    continue;
                };
                let free = job["lockOwner"].is_null()
                    || job["lockExpirationTime"]
                        .as_str()
                        .and_then(|d| crate::bpmn::parse_date_time(d).ok())
                        .is_some_and(|until| until <= now_ms);
                match index.get(instance) {
                    Some(&i) => found[i].1 |= free,
                    None => {
                        index.insert(instance.to_string(), found.len());
                        found.push((instance.to_string(), free));
                    }
                }
            }
            start += data.len();
            let total = page["total"].as_u64().unwrap_or(0) as usize;
            if data.len() < PAGE || start >= total {
                return Ok(found);
            }
        }
    }

    /// Complete a job with variables (set on the process instance).
    pub async fn complete(
        &self,
        job: &str,
        worker: &str,
        variables: &Map<String, Value>,
    ) -> Result<(), RestError> {
        let request = self
            .jobs(Method::POST, &format!("acquire/jobs/{job}/complete"))
            .json(&json!({"workerId": worker, "variables": rest_variables(variables)}));
        self.send(request, "POST acquire/jobs/{id}/complete")
            .await
            .map(drop)
    }

    /// Complete `job` with a BPMN error of `code`: Flowable delivers it to the boundary
    /// event (or event sub-process) that catches it.
    pub async fn bpmn_error(&self, job: &str, worker: &str, code: &str) -> Result<(), RestError> {
        let request = self
            .jobs(Method::POST, &format!("acquire/jobs/{job}/bpmnError"))
            .json(&json!({"workerId": worker, "errorCode": code, "variables": []}));
        self.send(request, "POST acquire/jobs/{id}/bpmnError")
            .await
            .map(drop)
    }

    /// Set process variables (create or update).
    pub async fn set_variables(
        &self,
        instance: &str,
        variables: &Map<String, Value>,
    ) -> Result<(), RestError> {
        if variables.is_empty() {
            return Ok(());
        }
        let request = self
            .api(
                Method::PUT,
                &format!("runtime/process-instances/{instance}/variables"),
            )
            .json(&rest_variables(variables));
        self.send(request, "PUT runtime/process-instances/{id}/variables")
            .await
            .map(drop)
    }

    /// Give a job back (so that moving its token does not wait for its lock to expire:
    /// an exclusive job locks its instance until it is completed or failed).
    pub async fn release(&self, job: &str, worker: &str) -> Result<(), RestError> {
        let request = self
            .jobs(Method::POST, &format!("acquire/jobs/{job}/fail"))
            .json(&json!({
                "workerId": worker,
                "errorMessage": "moved by cuga-flo",
                "retries": 1,
                "retryTimeout": "PT0S",
            }));
        self.send(request, "POST acquire/jobs/{id}/fail")
            .await
            .map(drop)
    }

    /// Jobs of the instance that Flowable gave up on (a completion it accepted but could
    /// not carry out, retried until no retries were left): their error messages.
    pub async fn failed_jobs(&self, instance: &str) -> Result<Vec<String>, RestError> {
        let mut out = Vec::new();
        for kind in ["deadletter-jobs"] {
            let request = self
                .api(Method::GET, &format!("management/{kind}"))
                .query(&[("processInstanceId", instance), ("size", "10")]);
            let found = self
                .send(request, &format!("GET management/{kind}"))
                .await?;
            for job in found["data"].as_array().into_iter().flatten() {
                if let Some(message) = job["exceptionMessage"].as_str() {
                    let at = job["elementId"].as_str().unwrap_or("?");
                    out.push(format!("at `{at}`: {message}"));
                }
            }
        }
        Ok(out)
    }

    /// Move the tokens at the activities `from` to the activities `to`.
    pub async fn move_tokens(
        &self,
        instance: &str,
        from: &[String],
        to: &[String],
    ) -> Result<(), RestError> {
        let request = self
            .api(
                Method::POST,
                &format!("runtime/process-instances/{instance}/change-state"),
            )
            .json(&json!({"cancelActivityIds": from, "startActivityIds": to}));
        self.send(request, "POST runtime/process-instances/{id}/change-state")
            .await
            .map(drop)
    }

    /// Delete a running instance (ignores one that has ended already).
    pub async fn delete(&self, instance: &str, reason: &str) -> Result<(), RestError> {
        let request = self
            .api(
                Method::DELETE,
                &format!("runtime/process-instances/{instance}"),
            )
            .query(&[("deleteReason", reason)]);
        match self
            .send(request, "DELETE runtime/process-instances/{id}")
            .await
        {
            Err(e) if e.status == Some(404) => Ok(()),
            other => other.map(drop),
        }
    }

    /// The instance's history record: `endTime`, `endActivityId`, `deleteReason`, ...
    pub async fn historic_instance(&self, instance: &str) -> Result<Value, RestError> {
        let request = self.api(
            Method::GET,
            &format!("history/historic-process-instances/{instance}"),
        );
        self.send(request, "GET history/historic-process-instances/{id}")
            .await
    }

    /// The instance's activity instances, in the order they started.
    pub async fn activities(&self, instance: &str) -> Result<Vec<Activity>, RestError> {
        let request = self
            .api(Method::GET, "history/historic-activity-instances")
            .query(&[
                ("processInstanceId", instance),
                ("size", "100000"),
                ("sort", "startTime"),
                ("order", "asc"),
            ]);
        let found = self
            .send(request, "GET history/historic-activity-instances")
            .await?;
        let mut activities: Vec<Activity> =
            serde_json::from_value(found["data"].clone()).map_err(|e| RestError {
                what: "GET history/historic-activity-instances".into(),
                status: None,
                detail: format!("unexpected answer: {e}"),
            })?;
        // Start times tie within a millisecond; Flowable's ids are time-based (version 1)
        // UUIDs from one generator, whose timestamps give the order of creation.
        activities.sort_by(|a, b| match (uuid_v1_time(&a.id), uuid_v1_time(&b.id)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => a.start_time.cmp(&b.start_time),
        });
        Ok(activities)
    }

    /// The instance's variables as they are at the end (from the history).
    pub async fn final_variables(&self, instance: &str) -> Result<Map<String, Value>, RestError> {
        let request = self
            .api(Method::GET, "history/historic-variable-instances")
            .query(&[("processInstanceId", instance), ("size", "100000")]);
        let found = self
            .send(request, "GET history/historic-variable-instances")
            .await?;
        let mut out = Map::new();
        for v in found["data"].as_array().into_iter().flatten() {
            let Some(variable) = v.get("variable") else {
                continue;
            };
            if let Ok(v) = serde_json::from_value::<RestVariable>(variable.clone()) {
                out.insert(v.name.clone(), json_value(&v));
            }
        }
        Ok(out)
    }

    /// The instance's variables now.
    pub async fn variables(&self, instance: &str) -> Result<Map<String, Value>, RestError> {
        let request = self.api(
            Method::GET,
            &format!("runtime/process-instances/{instance}/variables"),
        );
        let found = self
            .send(request, "GET runtime/process-instances/{id}/variables")
            .await?;
        let vars: Vec<RestVariable> = serde_json::from_value(found).unwrap_or_default();
        // The process instance's own variables: Flowable calls their scope `local` here.
        Ok(vars
            .iter()
            .map(|v| (v.name.clone(), json_value(v)))
            .collect())
    }

    /// Jobs of the instance that Flowable's async executor has still to run (a completed
    /// external job continues the process asynchronously; a failed one waits as a timer
    /// job for its retry).
    /// The timer jobs of the model's timer events are not pending: cuga-flo fires them
    /// when they are due ([`Client::timers`]).
    pub async fn pending_jobs(&self, instance: &str) -> Result<u64, RestError> {
        let request = self
            .api(Method::GET, "management/jobs")
            .query(&[("processInstanceId", instance), ("size", "1")]);
        let found = self.send(request, "GET management/jobs").await?;
        let mut total = found["total"].as_u64().unwrap_or(0);
        let request = self
            .api(Method::GET, "management/timer-jobs")
            .query(&[("processInstanceId", instance), ("size", "1000")]);
        let found = self.send(request, "GET management/timer-jobs").await?;
        total += found["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|j| j["handlerType"].as_str() != Some(TIMER_HANDLER))
            .count() as u64;
        Ok(total)
    }

    /// The instance's timers waiting to fire (the timer jobs of its timer events), in
    /// the order they were created.
    pub async fn timers(&self, instance: &str) -> Result<Vec<TimerJob>, RestError> {
        let request = self
            .api(Method::GET, "management/timer-jobs")
            .query(&[("processInstanceId", instance), ("size", "1000")]);
        let found = self.send(request, "GET management/timer-jobs").await?;
        let mut timers: Vec<TimerJob> = found["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|j| j["handlerType"].as_str() == Some(TIMER_HANDLER))
            .filter_map(|j| {
                Some(TimerJob {
                    id: j["id"].as_str()?.to_string(),
                    element_id: j["elementId"].as_str()?.to_string(),
                    execution_id: j["executionId"].as_str().map(str::to_string),
                    due_ms: j["dueDate"]
                        .as_str()
                        .and_then(|d| crate::bpmn::parse_date_time(d).ok()),
                })
            })
            .collect();
        timers.sort_by_key(|t| uuid_v1_time(&t.id));
        Ok(timers)
    }

    /// Fire timer job `job` now: Flowable moves it to the executable jobs, which its
    /// async executor runs at once. `false`: it is gone (fired or cancelled meanwhile).
    pub async fn fire_timer(&self, job: &str) -> Result<bool, RestError> {
        let request = self
            .api(Method::POST, &format!("management/timer-jobs/{job}"))
            .json(&json!({"action": "move"}));
        match self.send(request, "POST management/timer-jobs/{id}").await {
            Ok(_) => Ok(true),
            Err(e) if e.status == Some(404) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every message and signal catch of `instance` waiting now, in the order they
    /// started waiting: `(execution, catching activity, kind, name)`.
    pub async fn all_subscriptions(
        &self,
        instance: &str,
    ) -> Result<Vec<(String, String, CatchKind, String)>, RestError> {
        let mut out = Vec::new();
        for kind in [CatchKind::Message, CatchKind::Signal] {
            let request = self
                .api(Method::GET, "runtime/event-subscriptions")
                .query(&[
                    ("processInstanceId", instance),
                    ("eventType", kind.as_str()),
                    ("size", "1000"),
                ]);
            let found = self
                .send(request, "GET runtime/event-subscriptions")
                .await?;
            for s in found["data"].as_array().into_iter().flatten() {
                let (Some(id), Some(execution), Some(activity), Some(name)) = (
                    s["id"].as_str(),
                    s["executionId"].as_str(),
                    s["activityId"].as_str(),
                    s["eventName"].as_str(),
                ) else {
                    continue;
                };
                out.push((
                    uuid_v1_time(id),
                    (
                        execution.to_string(),
                        activity.to_string(),
                        kind,
                        name.to_string(),
                    ),
                ));
            }
        }
        out.sort_by_key(|(t, _)| *t);
        Ok(out.into_iter().map(|(_, s)| s).collect())
    }

    /// The activities a running instance's executions are at.
    /// The catches of `instance` waiting for the message or signal `name`, in the order
    /// they started waiting: `(subscription's execution, catching activity)`.
    pub async fn subscriptions(
        &self,
        instance: &str,
        kind: CatchKind,
        name: &str,
    ) -> Result<Vec<(String, String)>, RestError> {
        let request = self
            .api(Method::GET, "runtime/event-subscriptions")
            .query(&[
                ("processInstanceId", instance),
                ("eventType", kind.as_str()),
                ("eventName", name),
                ("size", "1000"),
            ]);
        let found = self
            .send(request, "GET runtime/event-subscriptions")
            .await?;
        let mut waiting: Vec<(Option<u64>, String, String, String)> = found["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| {
                let id = s["id"].as_str()?;
                Some((
                    uuid_v1_time(id),
                    s["created"].as_str().unwrap_or_default().to_string(),
                    s["executionId"].as_str()?.to_string(),
                    s["activityId"].as_str()?.to_string(),
                ))
            })
            .collect();
        waiting.sort_by(|a, b| match (a.0, b.0) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => a.1.cmp(&b.1),
        });
        Ok(waiting.into_iter().map(|(_, _, e, a)| (e, a)).collect())
    }

    /// Whether `execution` still runs (a cancelled multi-instance instance's does not).
    pub async fn execution_exists(&self, execution: &str) -> Result<bool, RestError> {
        let request = self.api(Method::GET, &format!("runtime/executions/{execution}"));
        match self.send(request, "GET runtime/executions/{id}").await {
            Ok(_) => Ok(true),
            Err(e) if e.status == Some(404) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The variable `name` as `execution` sees it: its own, else the nearest scope's
    /// around it that has it (`None`: no scope has it).
    pub async fn execution_variable(
        &self,
        execution: &str,
        name: &str,
    ) -> Result<Option<Value>, RestError> {
        let request = self.api(
            Method::GET,
            &format!("runtime/executions/{execution}/variables/{name}"),
        );
        match self
            .send(request, "GET runtime/executions/{id}/variables/{name}")
            .await
        {
            Ok(found) => Ok(serde_json::from_value::<RestVariable>(found)
                .ok()
                .map(|v| json_value(&v))),
            Err(e) if e.status == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deliver the message or signal `name` to the catch waiting in `execution` only.
    pub async fn deliver(
        &self,
        execution: &str,
        kind: CatchKind,
        name: &str,
    ) -> Result<(), RestError> {
        let body = match kind {
            CatchKind::Message => json!({"action": "messageEventReceived", "messageName": name}),
            CatchKind::Signal => json!({"action": "signalEventReceived", "signalName": name}),
        };
        let request = self
            .api(Method::PUT, &format!("runtime/executions/{execution}"))
            .json(&body);
        self.send(request, "PUT runtime/executions/{id}")
            .await
            .map(drop)
    }

    pub async fn waiting_at(&self, instance: &str) -> Result<Vec<String>, RestError> {
        let request = self
            .api(Method::GET, "runtime/executions")
            .query(&[("processInstanceId", instance), ("size", "1000")]);
        let found = self.send(request, "GET runtime/executions").await?;
        Ok(found["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["activityId"].as_str().map(str::to_string))
            .collect())
    }
}

/// Process variables in Flowable's REST form: booleans, integers (long past 32 bits),
/// doubles, strings, `null`, and JSON for lists and objects.
pub fn rest_variables(variables: &Map<String, Value>) -> Vec<Value> {
    variables
        .iter()
        .map(|(name, value)| {
            let kind = match value {
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_i64() || n.is_u64() => {
                    match n.as_i64().map(i32::try_from) {
                        Some(Ok(_)) => "integer",
                        _ => "long",
                    }
                }
                Value::Number(_) => "double",
                Value::String(_) => "string",
                // Flowable takes a null only untyped.
                Value::Null => return json!({"name": name, "value": null}),
                Value::Array(_) | Value::Object(_) => "json",
            };
            json!({"name": name, "type": kind, "value": value})
        })
        .collect()
}

/// Flowable's variables as JSON values (a `json` variable as the JSON it holds).
pub fn from_rest(variables: &[RestVariable]) -> Map<String, Value> {
    variables
        .iter()
        .filter(|v| v.scope.as_deref().is_none_or(|s| s == "global"))
        .map(|v| (v.name.clone(), json_value(v)))
        .collect()
}

fn json_value(v: &RestVariable) -> Value {
    match (v.kind.as_deref(), &v.value) {
        // Some versions write a json variable's value as a string.
        (Some("json"), Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| v.value.clone())
        }
        _ => v.value.clone(),
    }
}

/// A short stable hash (deployment names, multipart boundaries).
pub fn fxhash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_take_flowable_types_and_come_back_as_json() {
        let vars: Map<String, Value> = serde_json::from_value(json!({
            "b": true, "i": 3, "l": 5_000_000_000_i64, "d": 0.5, "s": "x", "n": null,
            "items": [{"sku": "A", "quantity": 2}]
        }))
        .unwrap();
        let rest = rest_variables(&vars);
        let kinds: Vec<Option<&str>> = rest.iter().map(|v| v["type"].as_str()).collect();
        assert_eq!(
            kinds,
            [
                Some("boolean"),
                Some("integer"),
                Some("long"),
                Some("double"),
                Some("string"),
                None,
                Some("json")
            ]
        );
        let back: Vec<RestVariable> = serde_json::from_value(Value::Array(rest)).unwrap();
        assert_eq!(from_rest(&back), vars);
        let stringly = RestVariable {
            name: "j".into(),
            kind: Some("json".into()),
            value: json!("[1,2]"),
            scope: None,
        };
        assert_eq!(json_value(&stringly), json!([1, 2]));
    }

    #[test]
    fn time_based_ids_order_by_their_timestamp() {
        // Same millisecond, different ticks; the low field alone would order them wrongly.
        let a = "ffffffff-ec60-11f1-88fc-02fc00000001";
        let b = "00000001-ec61-11f1-88fc-02fc00000001";
        assert!(uuid_v1_time(a).unwrap() < uuid_v1_time(b).unwrap());
        assert_eq!(uuid_v1_time("d8de94ce-aaaa-4bbb-8ccc-000000000000"), None);
        assert_eq!(uuid_v1_time("42"), None);
    }

    #[test]
    fn the_job_api_sits_next_to_the_process_api() {
        assert_eq!(
            Endpoint::jobs_url_for("http://h:8080/flowable-rest/service/"),
            "http://h:8080/flowable-rest/external-job-api"
        );
        assert_eq!(
            Endpoint::jobs_url_for("http://h:8080/process-api"),
            "http://h:8080/external-job-api"
        );
        assert_eq!(
            Endpoint::jobs_url_for("http://h:8080/api"),
            "http://h:8080/api/external-job-api"
        );
    }
}
