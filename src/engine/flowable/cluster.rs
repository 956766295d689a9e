//! A Flowable cluster as a worker fleet sees it ([`crate::engine::flowable`]'s side of
//! `worker --engine flowable`): its nodes, tried in order, the next when one stops
//! answering; each app's model deployed once per content; the instances of those
//! deployments that have an external-worker job waiting. What to do with them (take an
//! instance over, resume its run) is the run layer's.

use std::sync::Mutex;

use serde_json::{Map, Value};

use super::rest::Client;
use super::{FlowableSettings, augment, deployed, deployment_name};
use crate::bpmn::Process;
use crate::bridge::FlowAnnotations;
use crate::engine::pull::{PullError, user_variables};

/// The nodes of one Flowable cluster (one database): any of them serves every instance.
pub struct Cluster {
    nodes: Vec<Client>,
    /// The node that answered last.
    current: Mutex<usize>,
}

/// A model deployed on the cluster, and the definitions deployed from its content.
#[derive(Debug)]
pub struct Deployed {
    /// The definition `start` starts (the oldest deployment of this content: workers
    /// deploying at the same moment may each have deployed it).
    pub definition: String,
    key: String,
    /// The deployment name of this content (`cuga-flo KEY HASH`); `None` with `deploy`
    /// off (the definition of `key` found then is the only one served).
    name: Option<String>,
    /// The deployments of this content seen so far, with their definitions.
    known: Mutex<Vec<(String, String)>>,
}

impl Cluster {
    /// The cluster behind `nodes` (each node's settings: URL and credentials).
    pub fn new(nodes: &[FlowableSettings]) -> Result<Cluster, PullError> {
        let nodes = nodes
            .iter()
            .map(|s| Client::new(s.endpoint.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Cluster {
            nodes,
            current: Mutex::new(0),
        })
    }

    fn at(&self) -> usize {
        *self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The URL of the node the cluster is reached through now.
    pub fn url(&self) -> String {
        self.nodes[self.at()].url().to_string()
    }

    fn client(&self) -> &Client {
        &self.nodes[self.at()]
    }

    /// Reach the first node that answers, starting with the one that answered last (the
    /// calls that follow go to it); each node's error when none does.
    pub async fn reach(&self) -> Result<(), Vec<String>> {
        let start = self.at();
        let mut errors = Vec::new();
        for i in 0..self.nodes.len() {
            let at = (start + i) % self.nodes.len();
            match self.nodes[at].ping().await {
                Ok(()) => {
                    if at != start {
                        tracing::warn!("Flowable: working through {}", self.nodes[at].url());
                    }
                    *self.current.lock().unwrap_or_else(|e| e.into_inner()) = at;
                    return Ok(());
                }
                Err(e) => errors.push(format!("{}: {e}", self.nodes[at].url())),
            }
        }
        Err(errors)
    }

    /// Deploy `process` (rewritten for Flowable with `annotations`) unless this content
    /// is deployed already, as `start` deploys it; `settings`: the app's (the definition
    /// key, `deploy`).
    pub async fn deploy(
        &self,
        process: &Process,
        annotations: &FlowAnnotations,
        settings: &FlowableSettings,
    ) -> Result<Deployed, PullError> {
        let key = settings
            .definition_key
            .clone()
            .unwrap_or_else(|| process.id.clone());
        let augmented = augment::augment(process, annotations, &key).map_err(|problems| {
            PullError::Unsupported {
                engine: "Flowable",
                problems,
            }
        })?;
        let (definition, deployment) = deployed(self.client(), settings, &augmented, &key).await?;
        Ok(Deployed {
            known: Mutex::new(
                deployment
                    .as_ref()
                    .map(|d| vec![(d.clone(), definition.clone())])
                    .unwrap_or_default(),
            ),
            name: deployment.map(|_| deployment_name(&key, &augmented.xml)),
            definition,
            key,
        })
    }

    /// The definitions deployed from `model`'s content now (looked up again each time:
    /// another worker may have deployed it too).
    pub async fn definitions(&self, model: &Deployed) -> Result<Vec<String>, PullError> {
        let client = self.client();
        let Some(name) = &model.name else {
            return Ok(vec![model.definition.clone()]);
        };
        let lost = |e| PullError::at("Flowable", client.url(), e);
        let deployments = client.deployments_named(name).await.map_err(lost)?;
        let mut known = model
            .known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for d in deployments {
            if known.iter().any(|(dep, _)| *dep == d) {
                continue;
            }
            if let Some(def) = client
                .definition(&model.key, Some(&d))
                .await
                .map_err(lost)?
            {
                known.push((d, def));
            }
        }
        *model.known.lock().unwrap_or_else(|e| e.into_inner()) = known.clone();
        Ok(known.into_iter().map(|(_, def)| def).collect())
    }

    /// The instances of `model`'s definitions with an external-worker job waiting, each
    /// once: with whether one of its jobs is free (not locked, or its lock ran out by
    /// `now_ms`).
    pub async fn waiting(
        &self,
        model: &Deployed,
        now_ms: u64,
    ) -> Result<Vec<(String, bool)>, PullError> {
        let client = self.client();
        let mut found: Vec<(String, bool)> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        for definition in self.definitions(model).await? {
            let jobs = client
                .instances_with_jobs(&definition, now_ms)
                .await
                .map_err(|e| PullError::at("Flowable", client.url(), e))?;
            for (instance, free) in jobs {
                match index.get(&instance) {
                    Some(&i) => found[i].1 |= free,
                    None => {
                        index.insert(instance.clone(), found.len());
                        found.push((instance, free));
                    }
                }
            }
        }
        Ok(found)
    }

    /// The variables of `instance` (without cuga-flo's own), and the run that drives it
    /// when cuga-flo's `start` started it ([`super::RUN_VARIABLE`]); `None` when it is
    /// gone.
    pub async fn variables(&self, instance: &str) -> Result<Option<Variables>, PullError> {
        let client = self.client();
        match client.variables(instance).await {
            Ok(v) => Ok(Some(Variables {
                driven_by: v
                    .get(super::RUN_VARIABLE)
                    .and_then(Value::as_str)
                    .map(str::to_string),
                variables: user_variables(v),
            })),
            Err(e) if e.status == Some(404) => Ok(None),
            Err(e) => Err(PullError::at("Flowable", client.url(), e)),
        }
    }
}

/// An instance's variables, as a fleet reads them before taking it over.
#[derive(Debug, Clone)]
pub struct Variables {
    /// The process variables, without cuga-flo's own.
    pub variables: Map<String, Value>,
    /// The cuga-flo run that started the instance and drives it, if one did.
    pub driven_by: Option<String>,
}
