//! A worker fleet on Flowable (`cuga-flo worker --engine flowable APP…`): cuga-flo serves
//! the control points of **every** instance of the apps' processes, whoever started it
//! (Flowable's REST API, its UI, a message start, `cuga-flo start`), not only the ones
//! its own `start` created.
//!
//! Each app's model is deployed once per content, as `start` deploys it; the rewritten
//! model puts every control point of an instance on the instance's own topic, so a fleet
//! finds its work by listing the external-worker jobs of those definitions
//! ([`Fleet::look`]). An instance is journalled as a run whose id is Flowable's instance id
//! (`runs list/show/verify/report` work on it): one nobody journals yet is taken over
//! ([`Work::Adopt`]: its variables are the run's untrusted inputs); one whose journal
//! nobody holds while Flowable has work for it (a worker died in it, or Flowable moved it
//! by itself: a timer fired, a message delivered through its API) is resumed
//! ([`Work::Resume`]).
//!
//! **Who works an instance** is decided by the run's journal lock, not by Flowable's job
//! lock: one writer per run, so one worker per instance at a time. A worker that dies
//! lets go of its lock at once; the next look of any worker resumes the run, gives back
//! the jobs the dead one held (they are locked to the run's own worker id, the same in
//! every process) and asks again only what the journal does not hold: a control point's
//! idempotency key (instance, element, visit) finds the first worker's recorded answer.
//! So the fleet's workers must share the run store (a folder on one machine or a shared
//! file system), and failover does not wait for Flowable's lock to run out.
//!
//! A fleet's runs park instead of failing when their Flowable node stops answering
//! ([`crate::engine::RunRequest::lost_parks`]); the next look resumes them through a node
//! that answers ([`Cluster::reach`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::app::registry::AppRef;
use crate::app::{EngineKind, LoadedApp};
use crate::engine::flowable::{Cluster, Deployed, FlowableSettings};
use crate::engine::pull::PullError;
use crate::journal::Event;
use crate::journal::store::{self, JOURNAL_FILE};

use super::plan::{Adoption, RunSpec};

/// Why a fleet cannot serve its apps.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The app cannot run on Flowable (or not at all): each problem.
    #[error("app `{app}` cannot run on Flowable: {}", .problems.join("; "))]
    App { app: String, problems: Vec<String> },
    /// No node of the cluster answers: each node's error.
    #[error("no Flowable node answers: {}", .errors.join("; "))]
    NoNode { errors: Vec<String> },
    /// The deployment or a call failed.
    #[error(transparent)]
    Flowable(#[from] PullError),
    /// What the worker was asked to serve cannot be served: why.
    #[error("{0}")]
    Asked(String),
    /// No node named, and none configured.
    #[error("no Flowable node to serve")]
    NoNodeNamed,
}

impl FleetError {
    /// What to do about it, when there is something to say.
    pub fn help(&self) -> Option<&'static str> {
        matches!(self, FleetError::NoNodeNamed).then_some("give --node URL (or --engine-url URL)")
    }
}

/// One app the fleet serves: its model deployed.
#[derive(Debug)]
pub struct Served {
    pub app: AppRef,
    pub deployed: Deployed,
}

/// Work a look found.
#[derive(Debug)]
pub enum Work {
    /// An instance nobody journals yet: take it over (claimed for this process until the
    /// claim is dropped; drop it once the run has ended or parked).
    Adopt {
        /// Which of [`Fleet::apps`].
        app: usize,
        adoption: Adoption,
        claim: Claim,
    },
    /// A run whose instance has work and whose journal nobody holds: resume it.
    Resume(String),
}

/// The apps a fleet serves on a Flowable cluster.
pub struct Fleet {
    cluster: Cluster,
    apps: Vec<Served>,
    /// Instances a look found that are not the fleet's to take over (another definition's
    /// id, a `start` run's), looked at once.
    refused: Mutex<HashSet<String>>,
}

impl Fleet {
    /// What a fleet serves: the apps `names` names under `apps_dir` (`None`: every app
    /// there whose `workflow_engine` is Flowable), on the cluster's `nodes` (none named:
    /// `engine_url`, else the first app's `workflow_engine.url`).
    pub fn served(
        apps_dir: &Path,
        names: Option<&[String]>,
        nodes: &[String],
        engine_url: Option<&str>,
    ) -> Result<(Vec<AppRef>, Vec<String>), FleetError> {
        use crate::app::registry::{self, Target};
        let apps: Vec<AppRef> = match names {
            None => registry::discover(apps_dir)
                .map_err(|e| FleetError::Asked(format!("cannot list {}: {e}", apps_dir.display())))?
                .into_iter()
                .filter(|app| {
                    crate::app::load_app(app)
                        .config
                        .is_some_and(|c| c.engine.kind == EngineKind::Flowable)
                })
                .collect(),
            Some(names) => {
                let mut apps = Vec::new();
                for name in names {
                    match registry::resolve(name, apps_dir) {
                        Ok(Target::App(app)) => apps.push(app),
                        Ok(Target::Model(path)) => {
                            return Err(FleetError::Asked(format!(
                                "{} is a BPMN model; a worker fleet serves apps",
                                path.display()
                            )));
                        }
                        Err(e) => return Err(FleetError::Asked(e.to_string())),
                    }
                }
                apps
            }
        };
        let Some(first) = apps.first() else {
            return Err(FleetError::Asked(format!(
                "no app under {} runs on Flowable",
                apps_dir.display()
            )));
        };
        let mut nodes = nodes.to_vec();
        if nodes.is_empty() {
            nodes.extend(engine_url.map(str::to_string).or_else(|| {
                crate::app::load_app(first).config.and_then(|c| {
                    crate::engine::engine_url(&c.engine, None, EngineKind::Flowable).ok()
                })
            }));
        }
        if nodes.is_empty() {
            return Err(FleetError::NoNodeNamed);
        }
        Ok((apps, nodes))
    }

    /// Deploy each of `apps` (checked for Flowable; its `workflow_engine` block gives the
    /// credentials and the definition key) through the first of the cluster's `urls`
    /// that answers.
    pub async fn deploy(apps: &[AppRef], urls: &[String]) -> Result<Fleet, FleetError> {
        let mut loaded_apps: Vec<LoadedApp> = Vec::new();
        for app in apps {
            let loaded = crate::app::load_app(app);
            let problems: Vec<String> =
                crate::check::check_app_on(&loaded, Some(EngineKind::Flowable))
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| d.one_line())
                    .collect();
            if !problems.is_empty() {
                return Err(FleetError::App {
                    app: app.name.clone(),
                    problems,
                });
            }
            loaded_apps.push(loaded);
        }
        let Some(first) = loaded_apps.first().and_then(|l| l.config.as_ref()) else {
            return Err(FleetError::NoNode {
                errors: vec!["no app to serve".into()],
            });
        };
        // The nodes, with the first app's credentials (a cluster has one user base).
        let nodes = urls
            .iter()
            .map(|url| FlowableSettings::from_config(&first.engine, Some(url)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| FleetError::NoNode {
                errors: vec![e.to_string()],
            })?;
        let cluster = Cluster::new(&nodes)?;
        cluster
            .reach()
            .await
            .map_err(|errors| FleetError::NoNode { errors })?;
        let mut served = Vec::new();
        for (app, loaded) in apps.iter().zip(&loaded_apps) {
            let problem = |why: String| FleetError::App {
                app: app.name.clone(),
                problems: vec![why],
            };
            let (Some(config), Some(process)) = (loaded.config.as_ref(), loaded.process()) else {
                return Err(problem("no flow config or no process".into()));
            };
            let settings = FlowableSettings::from_config(&config.engine, Some(&cluster.url()))
                .map_err(|e| problem(e.to_string()))?;
            let annotations = crate::harness::annotations(config);
            let deployed = cluster.deploy(process, &annotations, &settings).await?;
            tracing::info!(
                "fleet: serving `{}` as Flowable definition {}",
                app.name,
                deployed.definition
            );
            served.push(Served {
                app: app.clone(),
                deployed,
            });
        }
        Ok(Fleet {
            cluster,
            apps: served,
            refused: Mutex::default(),
        })
    }

    /// The apps served.
    pub fn apps(&self) -> &[Served] {
        &self.apps
    }

    /// The URL of the node the fleet works through now.
    pub fn url(&self) -> String {
        self.cluster.url()
    }

    /// The work Flowable has for the fleet now, for runs journalled under `base`, at most
    /// `most` pieces: each instance of a served model with a job waiting, unless a run of
    /// this process or another holds its journal (or its claim), it has finished, or it
    /// is parked with its job kept (a question for a person: `runs answer` lets it go on,
    /// and the worker's look for due runs resumes it).
    pub async fn look(&self, base: &Path, most: usize) -> Result<Vec<Work>, FleetError> {
        self.cluster
            .reach()
            .await
            .map_err(|errors| FleetError::NoNode { errors })?;
        let now = crate::clock::now_ms();
        let mut work = Vec::new();
        for (i, served) in self.apps.iter().enumerate() {
            for (instance, free) in self.cluster.waiting(&served.deployed, now).await? {
                if work.len() >= most {
                    return Ok(work);
                }
                if let Some(w) = self.work_for(base, i, &instance, free).await? {
                    work.push(w);
                }
            }
        }
        Ok(work)
    }

    /// What to do for `instance` (of app `app`), which has a job waiting (`free`: one not
    /// locked, or whose lock ran out).
    async fn work_for(
        &self,
        base: &Path,
        app: usize,
        instance: &str,
        free: bool,
    ) -> Result<Option<Work>, FleetError> {
        if self.is_refused(instance) {
            return Ok(None);
        }
        if store::check_run_id(instance).is_err() {
            self.refuse(instance, "its id cannot name a run");
            return Ok(None);
        }
        let dir = store::run_dir(base, instance);
        let journal = dir.join(JOURNAL_FILE);
        if !journal.exists() {
            if !free {
                // Locked and never journalled: a worker is taking it over right now.
                return Ok(None);
            }
            // Another worker claimed it, or journalled it since the look.
            let Some(claim) = Claim::take(base, instance) else {
                return Ok(None);
            };
            if journal.exists() {
                return Ok(None);
            }
            // Ended (or deleted) since the look: nothing to take over.
            let Some(read) = self.cluster.variables(instance).await? else {
                return Ok(None);
            };
            // Started by `cuga-flo start`: its own run drives it (and resumes it).
            if let Some(run) = read.driven_by {
                tracing::debug!("fleet: Flowable instance {instance} is driven by run {run}");
                self.refused
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(instance.to_string());
                return Ok(None);
            }
            let variables = read.variables;
            return Ok(Some(Work::Adopt {
                app,
                adoption: Adoption {
                    run_id: instance.to_string(),
                    instance: instance.to_string(),
                    variables,
                },
                claim,
            }));
        }
        // A run of this process, or of another live one: its worker has it.
        if store::hold(&dir).is_err() {
            return Ok(None);
        }
        Ok(match store::last_record(&journal).map(|r| r.event) {
            Some(Event::RunFinished { .. }) => None,
            // Parked with its job kept (a person's answer, a child run): the look for due
            // runs resumes it once it can go on. Flowable freed a job: it moved by itself.
            // A worker stopped (SIGTERM) with the job in hand: taken over at once.
            Some(Event::RunWaiting { reason, .. }) if !free && reason != "interrupted" => None,
            // A worker died in it, or it parked and Flowable moved it since.
            _ => Some(Work::Resume(instance.to_string())),
        })
    }

    fn is_refused(&self, instance: &str) -> bool {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(instance)
    }

    /// Leave `instance` alone from now on, saying why once.
    pub fn refuse(&self, instance: &str, why: &str) {
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        if refused.insert(instance.to_string()) {
            tracing::warn!("fleet: Flowable instance {instance} is left alone: {why}");
        }
    }

    /// The run that takes over an instance of app `app`: journalled under `run_dir`, its
    /// judgement the app's, through the node the fleet works through now, parking when
    /// that node is lost.
    pub fn adoption(
        &self,
        app: usize,
        adoption: Adoption,
        apps_dir: PathBuf,
        run_dir: PathBuf,
    ) -> RunSpec {
        let served = &self.apps[app];
        let mut spec = RunSpec::new(
            served.app.clone(),
            served.app.name.clone(),
            apps_dir,
            run_dir,
        );
        spec.engine = Some(EngineKind::Flowable);
        spec.engine_url = Some(self.url());
        spec.detach = true;
        spec.lost_parks = true;
        spec.adopt = Some(adoption);
        spec
    }
}

/// One process's claim on taking over an instance (`<base>/claims/<id>.lock`, locked
/// while the claim lives, removed when it is dropped): whoever holds it is the only one
/// to create the run's journal. A worker that dies lets go of it. Taken, a claim is
/// checked against the journal again (the previous holder may have created it just
/// before letting go).
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    _file: std::fs::File,
}

impl Claim {
    /// Claim instance `id` for this process, unless another claim holds it.
    pub fn take(base: &Path, id: &str) -> Option<Claim> {
        let dir = base.join("claims");
        std::fs::create_dir_all(&dir).ok()?;
        let path = dir.join(format!("{id}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .ok()?;
        file.try_lock().ok()?;
        Some(Claim { path, _file: file })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
