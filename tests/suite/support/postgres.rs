//! A real PostgreSQL for the tests: `tests/postgres/start-server.sh` starts Debian's
//! PostgreSQL binaries as a throwaway cluster (a fresh data directory under `$TMPDIR`,
//! 127.0.0.1 only, one database and user, a random password) and prints `listening URL
//! DATADIR`; the cluster is stopped and its data removed when the value is dropped, or
//! when the test binary exits (the script watches `CUGA_FLO_OWNER_PID`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A PostgreSQL cluster started for a test.
pub struct Postgres {
    /// `postgres://USER:PASSWORD@127.0.0.1:PORT/DATABASE`.
    pub url: String,
    pub data: PathBuf,
}

impl Postgres {
    /// Whether PostgreSQL's binaries are here; when they are not, a test that needs them
    /// is skipped (saying so), unless `CUGA_FLO_REQUIRE_POSTGRES` is set (CI sets it).
    pub fn available(test: &str) -> bool {
        let here = std::env::var_os("POSTGRES_BIN").is_some()
            || std::fs::read_dir("/usr/lib/postgresql")
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok())
                .any(|e| e.path().join("bin/initdb").exists());
        if !here {
            assert!(
                std::env::var_os("CUGA_FLO_REQUIRE_POSTGRES").is_none(),
                "{test}: PostgreSQL's binaries are missing (Debian: apt-get install postgresql)"
            );
            eprintln!(
                "{test}: skipped, PostgreSQL's binaries are missing (Debian: apt-get install postgresql)"
            );
        }
        here
    }

    /// Start a cluster with database (and user) `db`.
    pub fn start(db: &str) -> Postgres {
        let line = super::start_server("tests/postgres/start-server.sh", &[db], &[], "PostgreSQL");
        let (url, data) = line.trim().split_once(' ').expect("URL DATADIR");
        Postgres {
            url: url.to_string(),
            data: PathBuf::from(data),
        }
    }

    /// `host`, `port`, `database`, `user`, `password` of [`Postgres::url`].
    pub fn parts(&self) -> (String, u16, String, String, String) {
        let rest = self.url.strip_prefix("postgres://").expect("postgres://");
        let (auth, rest) = rest.split_once('@').expect("user:password@");
        let (user, password) = auth.split_once(':').expect("user:password");
        let (hostport, db) = rest.split_once('/').expect("/database");
        let (host, port) = hostport.split_once(':').expect("host:port");
        (
            host.to_string(),
            port.parse().expect("a port"),
            db.to_string(),
            user.to_string(),
            password.to_string(),
        )
    }

    /// The JDBC settings Spring Boot reads (`SPRING_DATASOURCE_*`).
    pub fn spring_env(&self) -> Vec<(&'static str, String)> {
        let (host, port, db, user, password) = self.parts();
        vec![
            (
                "SPRING_DATASOURCE_URL",
                format!("jdbc:postgresql://{host}:{port}/{db}"),
            ),
            ("SPRING_DATASOURCE_USERNAME", user),
            ("SPRING_DATASOURCE_PASSWORD", password),
        ]
    }

    /// One value `sql` selects, through `psql` (empty when it selects nothing).
    pub fn value(&self, sql: &str) -> String {
        let out = Command::new(pg_bin().join("psql"))
            .args(["-qAt", "-d", &self.url, "-c", sql])
            .stdin(Stdio::null())
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Stop the server and start it again on the same data (a restart).
    pub fn restart(&self) {
        let bin = pg_bin();
        let mut stop = owner(Command::new(bin.join("pg_ctl")));
        stop.args([
            "-D",
            &self.data.to_string_lossy(),
            "-m",
            "fast",
            "-w",
            "restart",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        assert!(
            stop.status().expect("pg_ctl runs").success(),
            "pg_ctl restart failed"
        );
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(root().join("tests/postgres/stop-server.sh"))
            .arg(&self.data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The newest `/usr/lib/postgresql/*/bin` (or `POSTGRES_BIN`).
fn pg_bin() -> PathBuf {
    if let Ok(bin) = std::env::var("POSTGRES_BIN") {
        return PathBuf::from(bin);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("pg_ctl").exists())
        .collect();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found
        .pop()
        .expect("PostgreSQL's binaries (Debian: apt-get install postgresql)")
}

/// `cmd` as the server's owner: `postgres` when running as root.
fn owner(cmd: Command) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        return cmd;
    }
    let mut wrapped = Command::new("runuser");
    wrapped
        .args(["-u", "postgres", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    wrapped
}
