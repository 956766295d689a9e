//! The PostgreSQL run store (`--store postgres://…`; [`super::shared`] says what a shared
//! store guarantees and how a host's run folder caches it).
//!
//! Tables (migrations in [`MIGRATIONS`], applied by `cuga-flo store migrate`):
//! - `cuga_flo_runs`: one row per run: its head (`head_seq`, `head_hash`), its last
//!   event's name and, parked on a timer, when it is due;
//! - `cuga_flo_journal`: the lines, `(run_id, seq)` unique, byte for byte as the journal
//!   file holds them (the hash chain is over those bytes);
//! - `cuga_flo_inbox`: deliveries posted to runs a server (`serve`, on any host) holds
//!   parked, claimed by that server, answered through the same row;
//! - `cuga_flo_schema`: the migrations applied.
//!
//! A lease is a session advisory lock on the lease's own connection: a process that dies
//! loses it with its socket, at once. A commit is one statement (the head moves only if
//! it is still the writer's last, and the lines go in with it), so one round trip and one
//! transaction per group commit.
//!
//! The client is tokio-postgres, driven by one runtime thread of its own: the journal is
//! called from synchronous code, some of it on another runtime's threads.

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config, NoTls};

use super::error::JournalError;
use super::event::Event;
use super::shared::{Batch, Lease, SharedStore};

/// The schema's migrations, in order; `cuga_flo_schema` records which were applied.
pub const MIGRATIONS: &[(i32, &str, &str)] = &[(
    1,
    "runs and their journals",
    "CREATE TABLE cuga_flo_runs (
         run_id     text PRIMARY KEY,
         head_seq   bigint NOT NULL,
         head_hash  text NOT NULL,
         last_event text NOT NULL,
         due_ms     bigint,
         created_at timestamptz NOT NULL DEFAULT now(),
         updated_at timestamptz NOT NULL DEFAULT now()
     );
     CREATE TABLE cuga_flo_journal (
         run_id text NOT NULL REFERENCES cuga_flo_runs ON DELETE CASCADE,
         seq    bigint NOT NULL,
         hash   text NOT NULL,
         line   text NOT NULL,
         PRIMARY KEY (run_id, seq)
     );
     CREATE INDEX cuga_flo_runs_waiting ON cuga_flo_runs (due_ms)
         WHERE last_event = 'run_waiting';
     ALTER TABLE cuga_flo_runs ADD COLUMN held_parked_by integer;
     CREATE TABLE cuga_flo_inbox (
         id        bigserial PRIMARY KEY,
         run_id    text NOT NULL REFERENCES cuga_flo_runs ON DELETE CASCADE,
         delivery  text NOT NULL,
         state     text NOT NULL DEFAULT 'posted',
         reply     text,
         posted_at timestamptz NOT NULL DEFAULT now()
     );
     CREATE INDEX cuga_flo_inbox_posted ON cuga_flo_inbox (run_id) WHERE state = 'posted';",
)];

/// The schema version this build reads and writes.
pub fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.0)
}

/// How long a commit (or a read) waits for a store that went away to come back.
const RECONNECT: Duration = Duration::from_secs(30);
/// How many idle connections a process keeps for its next leases.
const IDLE: usize = 16;
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Serializes concurrent `store migrate`s (a transaction advisory lock).
const MIGRATE_LOCK: i64 = 0x6375_6761_666c_6f00;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("`{0}` is not a PostgreSQL URL: {1}")]
    Url(String, String),
    #[error(
        "{0}: TLS to PostgreSQL is not supported (sslmode=require); reach the server on a \
         loopback address or through a tunnel"
    )]
    Tls(String),
    #[error("cannot reach {shown}: {message}")]
    Connect { shown: String, message: String },
    #[error("{shown}: {message}")]
    Query { shown: String, message: String },
    #[error(
        "{shown} is at schema version {at}, this cuga-flo needs {needs}: run `cuga-flo store \
         migrate`"
    )]
    Behind { shown: String, at: i32, needs: i32 },
    #[error(
        "{shown} is at schema version {at}, newer than this cuga-flo knows ({needs}): use a \
         newer cuga-flo"
    )]
    Ahead { shown: String, at: i32, needs: i32 },
}

/// A PostgreSQL run store.
pub struct PgStore {
    config: Config,
    shown: String,
    /// The connection for reads (heads, lines), made when first needed.
    reader: Mutex<Option<Arc<Client>>>,
    /// The runs with deliveries posted, as last read, and when (a server holding many runs
    /// parked looks into each one's inbox every 200 ms: one query answers them all).
    posted: Mutex<Option<(Instant, std::collections::HashSet<String>)>>,
    /// Connections a lease let go of, for the next lease (a sign-in costs a round trip
    /// and a SCRAM proof; a resumed run takes a lease).
    idle: Arc<Mutex<Vec<Arc<Client>>>>,
}

impl PgStore {
    /// The store at `url` (`postgres://USER:PASSWORD@HOST:PORT/DB`), checked: reachable,
    /// its schema this build's.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        let store = PgStore::at(url)?;
        let client = store.connect().map_err(|m| store.connect_error(m))?;
        let at = store.version_on(client.clone())?;
        // The connection checked serves the first lease.
        store.give_back(client);
        let needs = latest();
        if at < needs {
            return Err(StoreError::Behind {
                shown: store.shown,
                at,
                needs,
            });
        }
        if at > needs {
            return Err(StoreError::Ahead {
                shown: store.shown,
                at,
                needs,
            });
        }
        Ok(store)
    }

    /// The store at `url`, unchecked (for `store migrate`).
    pub fn at(url: &str) -> Result<PgStore, StoreError> {
        let mut config: Config = url
            .parse()
            .map_err(|e: tokio_postgres::Error| StoreError::Url(redact(url), e.to_string()))?;
        let shown = shown(&config);
        if config.get_ssl_mode() == SslMode::Require {
            return Err(StoreError::Tls(shown));
        }
        config.ssl_mode(SslMode::Disable);
        // A password kept out of the URL (and so out of `ps` and shell history).
        if config.get_password().is_none()
            && let Ok(password) = std::env::var("PGPASSWORD")
        {
            config.password(password);
        }
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name(format!("cuga-flo pid {}", std::process::id()));
        Ok(PgStore {
            config,
            shown,
            reader: Mutex::new(None),
            posted: Mutex::new(None),
            idle: Arc::new(Mutex::new(Vec::new())),
        })
    }

    /// The schema version applied (0: none).
    pub fn version(&self) -> Result<i32, StoreError> {
        let client = self.connect().map_err(|m| self.connect_error(m))?;
        self.version_on(client)
    }

    fn version_on(&self, client: Arc<Client>) -> Result<i32, StoreError> {
        block(async move {
            let exists: bool = client
                .query_one("SELECT to_regclass('cuga_flo_schema') IS NOT NULL", &[])
                .await?
                .get(0);
            if !exists {
                return Ok(0);
            }
            let row = client
                .query_one("SELECT coalesce(max(version), 0) FROM cuga_flo_schema", &[])
                .await?;
            Ok(row.get(0))
        })
        .map_err(|e: tokio_postgres::Error| self.query_error(&e))
    }

    /// Apply the migrations not applied yet, in one transaction (a concurrent migrator
    /// waits for it): the versions applied now.
    pub fn migrate(&self) -> Result<Vec<(i32, &'static str)>, StoreError> {
        let client = self.connect().map_err(|m| self.connect_error(m))?;
        block(async move {
            client
                .batch_execute(&format!(
                    "BEGIN; SELECT pg_advisory_xact_lock({MIGRATE_LOCK});
                     CREATE TABLE IF NOT EXISTS cuga_flo_schema (
                         version    integer PRIMARY KEY,
                         name       text NOT NULL,
                         applied_at timestamptz NOT NULL DEFAULT now());"
                ))
                .await?;
            let at: i32 = client
                .query_one("SELECT coalesce(max(version), 0) FROM cuga_flo_schema", &[])
                .await?
                .get(0);
            let mut applied = Vec::new();
            for &(version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > at) {
                client.batch_execute(sql).await?;
                client
                    .execute_typed(
                        "INSERT INTO cuga_flo_schema (version, name) VALUES ($1, $2)",
                        &[(&version, Type::INT4), (&name, Type::TEXT)],
                    )
                    .await?;
                applied.push((version, name));
            }
            client.batch_execute("COMMIT").await?;
            Ok(applied)
        })
        .map_err(|e: tokio_postgres::Error| self.query_error(&e))
    }

    /// How many runs the store holds: all, parked, finished.
    pub fn counts(&self) -> Result<(i64, i64, i64), StoreError> {
        let client = self.connect().map_err(|m| self.connect_error(m))?;
        let row = block(async move {
            client
                .query_one(
                    "SELECT count(*), count(*) FILTER (WHERE last_event = 'run_waiting'), \
                     count(*) FILTER (WHERE last_event = 'run_finished') \
                     FROM cuga_flo_runs WHERE head_seq > 0",
                    &[],
                )
                .await
        })
        .map_err(|e| self.query_error(&e))?;
        Ok((row.get(0), row.get(1), row.get(2)))
    }

    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    fn connect(&self) -> Result<Arc<Client>, String> {
        let config = self.config.clone();
        block(async move {
            let (client, connection) = config.connect(NoTls).await.map_err(|e| message(&e))?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!("a run store connection ended: {e}");
                }
            });
            Ok(Arc::new(client))
        })
    }

    /// A connection for a lease: an idle one, or a new one.
    fn pooled(&self) -> Result<Arc<Client>, String> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match idle.filter(|c| !c.is_closed()) {
            Some(client) => Ok(client),
            None => self.connect(),
        }
    }

    /// Keep `client` (holding no lock) for the next lease.
    fn give_back(&self, client: Arc<Client>) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if !client.is_closed() && idle.len() < IDLE {
            idle.push(client);
        }
    }

    /// Let go of lock `key` held on `client`'s session, and keep the connection when that
    /// worked (a connection whose lock could not be let go of is closed: that lets go).
    fn release(&self, client: Arc<Client>, key: i64) {
        let unlocked = {
            let client = client.clone();
            block(async move {
                client
                    .query_typed_one("SELECT pg_advisory_unlock($1)", &[(&key, Type::INT8)])
                    .await
                    .map(|r| r.get::<_, bool>(0))
            })
        };
        if matches!(unlocked, Ok(true)) {
            self.give_back(client);
        }
    }

    fn connect_error(&self, message: String) -> StoreError {
        StoreError::Connect {
            shown: self.shown.clone(),
            message,
        }
    }

    fn query_error(&self, e: &tokio_postgres::Error) -> StoreError {
        StoreError::Query {
            shown: self.shown.clone(),
            message: message(e),
        }
    }

    fn journal_error(&self, message: String) -> JournalError {
        JournalError::Io {
            path: self.shown.clone().into(),
            message,
        }
    }

    /// Run `query` on the reading connection, reconnecting (for up to [`RECONNECT`]) when
    /// the store went away.
    fn read<T, F, Fut>(&self, query: F) -> Result<T, JournalError>
    where
        T: Send + 'static,
        F: Fn(Arc<Client>) -> Fut,
        Fut: Future<Output = Result<T, tokio_postgres::Error>> + Send + 'static,
    {
        let until = Instant::now() + RECONNECT;
        loop {
            let client = {
                let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
                match reader.as_ref().filter(|c| !c.is_closed()) {
                    Some(client) => Ok(client.clone()),
                    None => self.connect().inspect(|c| *reader = Some(c.clone())),
                }
            };
            let failed = match client {
                Ok(client) => match block(query(client)) {
                    Ok(value) => return Ok(value),
                    Err(e) if !is_lost(&e) => return Err(self.journal_error(message(&e))),
                    Err(e) => message(&e),
                },
                Err(message) => message,
            };
            *self.reader.lock().unwrap_or_else(|e| e.into_inner()) = None;
            if Instant::now() >= until {
                return Err(self.journal_error(failed));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl PgStore {
    /// The rows `sql` returns with `params` (typed: one round trip, nothing prepared), on
    /// the reading connection, reconnecting when the store went away ([`PgStore::read`]).
    fn rows(
        &self,
        sql: &'static str,
        params: Vec<Param>,
    ) -> Result<Vec<tokio_postgres::Row>, JournalError> {
        let params = Arc::new(params);
        self.read(move |client| {
            let params = params.clone();
            async move {
                let typed: Vec<(&(dyn ToSql + Sync), Type)> = (params.iter())
                    .map(|(v, t)| (v.as_ref() as &(dyn ToSql + Sync), t.clone()))
                    .collect();
                client.query_typed(sql, &typed).await
            }
        })
    }
}

impl SharedStore for PgStore {
    fn shown(&self) -> String {
        self.shown.clone()
    }

    fn lease(
        &self,
        run_dir: &Path,
        run_id: &str,
        create: bool,
    ) -> Result<Box<dyn Lease>, JournalError> {
        let client = self.pooled().map_err(|m| self.journal_error(m))?;
        let key = lock_key(run_id);
        let id = run_id.to_string();
        let taken = {
            let client = client.clone();
            // One round trip: the lock, and the run's row (claimed, for a new run).
            block(async move {
                let row = if create {
                    client
                        .query_typed_one(
                            "WITH l AS (SELECT pg_try_advisory_lock($1) AS got), \
                             made AS (INSERT INTO cuga_flo_runs \
                                 (run_id, head_seq, head_hash, last_event) \
                                 SELECT $2, 0, '', '' FROM l WHERE l.got \
                                 ON CONFLICT DO NOTHING RETURNING 1) \
                             SELECT (SELECT got FROM l), EXISTS (SELECT 1 FROM made)",
                            &[(&key, Type::INT8), (&id, Type::TEXT)],
                        )
                        .await?
                } else {
                    client
                        .query_typed_one(
                            "SELECT pg_try_advisory_lock($1), \
                             EXISTS (SELECT 1 FROM cuga_flo_runs WHERE run_id = $2)",
                            &[(&key, Type::INT8), (&id, Type::TEXT)],
                        )
                        .await?
                };
                let got: bool = row.get(0);
                Ok((got, !got || row.get::<_, bool>(1)))
            })
            .map_err(|e: tokio_postgres::Error| self.journal_error(message(&e)))?
        };
        match taken {
            (true, true) => Ok(Box::new(PgLease {
                store: PgStore {
                    config: self.config.clone(),
                    shown: self.shown.clone(),
                    reader: Mutex::new(None),
                    posted: Mutex::new(None),
                    idle: self.idle.clone(),
                },
                client,
                key,
                run_dir: run_dir.to_path_buf(),
            })),
            (true, false) if create => {
                self.release(client, key);
                Err(JournalError::Exists(run_dir.to_path_buf()))
            }
            (true, false) => {
                self.release(client, key);
                Err(self.journal_error(format!(
                    "run {run_id} is not in this store (its folder {} was written without \
                     --store)",
                    run_dir.display()
                )))
            }
            (false, _) => {
                self.give_back(client);
                Err(JournalError::Locked {
                    run_dir: run_dir.to_path_buf(),
                    pid: None,
                })
            }
        }
    }

    fn held(&self, run_id: &str) -> Result<bool, JournalError> {
        let key = lock_key(run_id);
        let (class, object) = ((key as u64 >> 32) as u32, key as u64 as u32);
        let rows = self.rows(
            "SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_database d \
             ON d.oid = l.database WHERE l.locktype = 'advisory' AND l.granted \
             AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1 \
             AND d.datname = current_database())",
            vec![param(class, Type::OID), param(object, Type::OID)],
        )?;
        Ok(rows.first().is_some_and(|r| r.get(0)))
    }

    fn heads(&self) -> Result<Vec<(String, u64, String)>, JournalError> {
        let rows = self.rows(
            "SELECT run_id, head_seq, head_hash FROM cuga_flo_runs WHERE head_seq > 0",
            Vec::new(),
        )?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get::<_, i64>(1) as u64, r.get(2)))
            .collect())
    }

    fn head(&self, run_id: &str) -> Result<Option<(u64, String)>, JournalError> {
        let rows = self.rows(
            "SELECT head_seq, head_hash FROM cuga_flo_runs WHERE run_id = $1 AND head_seq > 0",
            vec![text(run_id)],
        )?;
        Ok(rows.first().map(|r| (r.get::<_, i64>(0) as u64, r.get(1))))
    }

    fn hash_at(&self, run_id: &str, seq: u64) -> Result<Option<String>, JournalError> {
        let rows = self.rows(
            "SELECT hash FROM cuga_flo_journal WHERE run_id = $1 AND seq = $2",
            vec![text(run_id), param(seq as i64, Type::INT8)],
        )?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn lines(&self, run_id: &str, after: u64) -> Result<Vec<(u64, Vec<u8>)>, JournalError> {
        let rows = self.rows(
            "SELECT seq, line FROM cuga_flo_journal WHERE run_id = $1 AND seq > $2 ORDER BY seq",
            vec![text(run_id), param(after as i64, Type::INT8)],
        )?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get::<_, i64>(0) as u64,
                    r.get::<_, String>(1).into_bytes(),
                )
            })
            .collect())
    }

    fn hold_parked(&self, run_id: &str, pid: Option<u32>) -> Result<(), JournalError> {
        self.rows(
            "UPDATE cuga_flo_runs SET held_parked_by = $2 WHERE run_id = $1",
            vec![text(run_id), param(pid.map(|p| p as i32), Type::INT4)],
        )?;
        Ok(())
    }

    fn held_parked(&self, run_id: &str) -> Result<Option<u32>, JournalError> {
        let rows = self.rows(
            "SELECT held_parked_by FROM cuga_flo_runs WHERE run_id = $1",
            vec![text(run_id)],
        )?;
        let pid: Option<i32> = rows.first().and_then(|r| r.get(0));
        // A server that died left its word behind, not its lock.
        match pid {
            Some(pid) if self.held(run_id)? => Ok(Some(pid as u32)),
            _ => Ok(None),
        }
    }

    fn post(&self, run_id: &str, delivery: &str) -> Result<i64, JournalError> {
        let rows = self.rows(
            "INSERT INTO cuga_flo_inbox (run_id, delivery) VALUES ($1, $2) RETURNING id",
            vec![text(run_id), text(delivery)],
        )?;
        rows.first()
            .map(|r| r.get(0))
            .ok_or_else(|| self.journal_error("the inbox kept no post".into()))
    }

    fn reply(&self, posted: i64) -> Result<Option<String>, JournalError> {
        let rows = self.rows(
            "DELETE FROM cuga_flo_inbox WHERE id = $1 AND state = 'answered' RETURNING reply",
            vec![param(posted, Type::INT8)],
        )?;
        Ok(rows.first().and_then(|r| r.get(0)))
    }

    fn withdraw(&self, posted: i64) -> Result<bool, JournalError> {
        let rows = self.rows(
            "DELETE FROM cuga_flo_inbox WHERE id = $1 AND state = 'posted' RETURNING id",
            vec![param(posted, Type::INT8)],
        )?;
        Ok(!rows.is_empty())
    }

    fn claim_posted(&self, run_id: &str) -> Result<Vec<(i64, String)>, JournalError> {
        {
            let mut posted = self.posted.lock().unwrap_or_else(|e| e.into_inner());
            let fresh =
                (posted.as_ref()).is_some_and(|(at, _)| at.elapsed() < Duration::from_millis(100));
            if !fresh {
                let rows = self.rows(
                    "SELECT DISTINCT run_id FROM cuga_flo_inbox WHERE state = 'posted'",
                    Vec::new(),
                )?;
                let runs = rows.iter().map(|r| r.get::<_, String>(0)).collect();
                *posted = Some((Instant::now(), runs));
            }
            if !(posted.as_ref()).is_some_and(|(_, runs)| runs.contains(run_id)) {
                return Ok(Vec::new());
            }
        }
        let rows = self.rows(
            "UPDATE cuga_flo_inbox SET state = 'claimed' \
             WHERE run_id = $1 AND state = 'posted' RETURNING id, delivery",
            vec![text(run_id)],
        )?;
        let mut claimed: Vec<(i64, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        claimed.sort_by_key(|c| c.0);
        Ok(claimed)
    }

    fn answer(&self, posted: i64, reply: &str) -> Result<(), JournalError> {
        self.rows(
            "UPDATE cuga_flo_inbox SET state = 'answered', reply = $2 WHERE id = $1",
            vec![param(posted, Type::INT8), text(reply)],
        )?;
        Ok(())
    }

    fn remove(&self, run_id: &str) -> Result<(), JournalError> {
        self.rows(
            "DELETE FROM cuga_flo_runs WHERE run_id = $1",
            vec![text(run_id)],
        )?;
        Ok(())
    }
}

/// A statement's parameter, owned (a statement may be sent again after a reconnection).
type Param = (Box<dyn ToSql + Send + Sync>, Type);

fn param(value: impl ToSql + Send + Sync + 'static, ty: Type) -> Param {
    (Box::new(value), ty)
}

fn text(value: &str) -> Param {
    param(value.to_string(), Type::TEXT)
}

/// A run's lease: the advisory lock on `client`'s session.
struct PgLease {
    store: PgStore,
    client: Arc<Client>,
    key: i64,
    run_dir: std::path::PathBuf,
}

/// Why a commit did not land.
enum Failed {
    /// The store is unreachable: try again on a new connection.
    Lost(String),
    /// The head moved: another writer has the run.
    Fenced(String),
}

const COMMIT: &str = "WITH head AS ( \
        UPDATE cuga_flo_runs SET head_seq = $3, head_hash = $4, last_event = $5, \
               due_ms = $6, updated_at = now() \
        WHERE run_id = $1 AND head_seq = $2 RETURNING run_id) \
    INSERT INTO cuga_flo_journal (run_id, seq, hash, line) \
    SELECT head.run_id, l.seq, l.hash, l.line \
    FROM head, unnest($7::bigint[], $8::text[], $9::text[]) AS l(seq, hash, line)";

impl PgLease {
    fn try_commit(&self, batch: &Batch<'_>) -> Result<(), Failed> {
        let client = self.client.clone();
        let id = batch.run_id.to_string();
        let after = batch.after as i64;
        let (head_seq, head_hash) = match batch.lines.last() {
            Some((seq, hash, _)) => (*seq as i64, hash.clone()),
            None => return Ok(()),
        };
        let last_event = batch.last.event.name().to_string();
        let due = match &batch.last.event {
            Event::RunWaiting { due_ms, .. } => due_ms.map(|d| d as i64),
            _ => None,
        };
        let seqs: Vec<i64> = batch.lines.iter().map(|l| l.0 as i64).collect();
        let hashes: Vec<String> = batch.lines.iter().map(|l| l.1.clone()).collect();
        let mut texts = Vec::with_capacity(batch.lines.len());
        for (seq, _, line) in &batch.lines {
            texts.push(
                String::from_utf8(line.to_vec())
                    .map_err(|_| Failed::Fenced(format!("line {seq} is not UTF-8")))?,
            );
        }
        let count = seqs.len() as u64;
        let written = block(async move {
            client
                .execute_typed(
                    COMMIT,
                    &[
                        (&id, Type::TEXT),
                        (&after, Type::INT8),
                        (&head_seq, Type::INT8),
                        (&head_hash, Type::TEXT),
                        (&last_event, Type::TEXT),
                        (&due, Type::INT8),
                        (&seqs, Type::INT8_ARRAY),
                        (&hashes, Type::TEXT_ARRAY),
                        (&texts, Type::TEXT_ARRAY),
                    ],
                )
                .await
        });
        match written {
            Ok(n) if n == count => Ok(()),
            Ok(_) => Err(Failed::Fenced(format!(
                "run {} moved on in {} since this process last wrote it (record {})",
                batch.run_id, self.store.shown, batch.after
            ))),
            Err(e) if is_lost(&e) => Err(Failed::Lost(message(&e))),
            Err(e) => Err(Failed::Fenced(message(&e))),
        }
    }

    /// After the connection was lost: a new one, on which the run's lock is taken again
    /// when nobody holds it; whether it was, and where the store's head is now.
    fn retake(&mut self) -> Result<(bool, Option<u64>), String> {
        let client = self.store.connect()?;
        let key = self.key;
        let id = super::layout::run_id_of(&self.run_dir);
        let (got, head) = {
            let client = client.clone();
            block(async move {
                let got: bool = client
                    .query_typed_one("SELECT pg_try_advisory_lock($1)", &[(&key, Type::INT8)])
                    .await?
                    .get(0);
                let head = client
                    .query_typed_opt(
                        "SELECT head_seq FROM cuga_flo_runs WHERE run_id = $1",
                        &[(&id, Type::TEXT)],
                    )
                    .await?
                    .map(|r| r.get::<_, i64>(0) as u64);
                Ok((got, head))
            })
            .map_err(|e: tokio_postgres::Error| message(&e))?
        };
        if got {
            self.client = client;
        }
        Ok((got, head))
    }
}

impl Drop for PgLease {
    fn drop(&mut self) {
        self.store.release(self.client.clone(), self.key);
    }
}

impl Lease for PgLease {
    fn commit(&mut self, batch: &Batch<'_>) -> Result<(), JournalError> {
        let run_dir = self.run_dir.clone();
        let fenced = |message: String| JournalError::Fenced {
            run_dir: run_dir.clone(),
            message,
        };
        let until = Instant::now() + RECONNECT;
        let mut lost = match self.try_commit(batch) {
            Ok(()) => return Ok(()),
            Err(Failed::Fenced(m)) => return Err(fenced(m)),
            Err(Failed::Lost(m)) => m,
        };
        let last = batch.lines.last().map_or(batch.after, |l| l.0);
        loop {
            if Instant::now() >= until {
                return Err(self.store.journal_error(format!(
                    "the store stayed unreachable for {} s: {lost}",
                    RECONNECT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
            let (got, head) = match self.retake() {
                Ok(taken) => taken,
                Err(m) => {
                    lost = m;
                    continue;
                }
            };
            if head != Some(batch.after) && head != Some(last) {
                // Another process resumed the run while this one was cut off.
                return Err(fenced(format!(
                    "while the store was unreachable another process wrote the run (its \
                     head is {}, this process wrote {})",
                    head.map_or("gone".to_string(), |h| h.to_string()),
                    batch.after
                )));
            }
            if !got {
                // Held by another process: only looking (a worker's check for runs left
                // behind) or taking the run over (its head moves then, and the next look
                // here says so).
                lost = "the run's lock is held by another process".to_string();
                continue;
            }
            if head == Some(last) {
                // It landed before the connection broke.
                return Ok(());
            }
            tracing::info!("run {}: the store is back; committing again", batch.run_id);
            match self.try_commit(batch) {
                Ok(()) => return Ok(()),
                Err(Failed::Fenced(m)) => return Err(fenced(m)),
                Err(Failed::Lost(m)) => lost = m,
            }
        }
    }
}

/// A run's advisory lock key: the first 64 bits of a hash of its id.
fn lock_key(run_id: &str) -> i64 {
    let hex = super::chain::sha256_hex(format!("cuga-flo run {run_id}").as_bytes());
    u64::from_str_radix(&hex[..16], 16).unwrap_or(0) as i64
}

/// Whether `e` says the connection is gone (rather than that the statement was refused).
fn is_lost(e: &tokio_postgres::Error) -> bool {
    e.is_closed()
        || e.as_db_error().is_none_or(|db| {
            // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, class 08.
            let code = db.code().code();
            code.starts_with("08") || code.starts_with("57P")
        })
}

/// A client error's message, with its database detail (and no URL).
fn message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            text
        }
    }
}

/// The store as shown: `postgres://USER@HOST:PORT/DB`, never its password.
fn shown(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{db}")
}

/// A URL that did not parse, shown without what could be its password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let auth = &url[scheme + 3..at];
            let user = auth.split(':').next().unwrap_or_default();
            format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.chars().take(80).collect(),
    }
}

/// The store's runtime: one thread, for every connection of the process.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cuga-flo-store")
            .enable_all()
            .build()
            .expect("the run store's runtime starts")
    })
}

/// Run `fut` on the store's runtime and wait for it (from any thread, runtime or not).
fn block<T: Send + 'static>(fut: impl Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().expect("the run store's runtime runs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_shown_without_its_password() {
        let store = PgStore::at("postgres://flo:s3cret@127.0.0.1:5433/runs").unwrap();
        assert_eq!(store.shown_url(), "postgres://flo@127.0.0.1:5433/runs");
        assert!(!redact("postgres://flo:s3cret@x/y").contains("s3cret"));
        let err = PgStore::at("postgres://flo:s3cret@127.0.0.1/runs?sslmode=require")
            .err()
            .unwrap();
        assert!(err.to_string().contains("TLS"), "{err}");
        assert!(!err.to_string().contains("s3cret"), "{err}");
        let err = PgStore::at("postgres://flo:s3cret@127.0.0.1:notaport/runs")
            .err()
            .unwrap();
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn lock_keys_differ_by_run() {
        assert_ne!(lock_key("a"), lock_key("b"));
        assert_eq!(lock_key("a"), lock_key("a"));
    }
}
