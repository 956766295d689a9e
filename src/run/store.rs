//! Where runs are kept (`--store`, `CUGA_FLO_STORE`): the run folder alone (`files`, the
//! default), or a PostgreSQL database that several hosts share, the run folder being each
//! host's cache of it ([`crate::journal::shared`]). Mounted once, before a command reads
//! or writes a run; `cuga-flo store migrate` brings a database to this build's schema.

/// What `--store` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// The run folder (`files`, or nothing).
    Files,
    /// A PostgreSQL database (`postgres://…` or `postgresql://…`).
    Postgres(String),
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "`{0}` is not a run store: give `files` or a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB)"
    )]
    Unknown(String),
    #[error(
        "this cuga-flo was built without PostgreSQL (the `postgres` feature); runs stay in files"
    )]
    NotBuilt,
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(#[from] crate::journal::pg::StoreError),
}

impl crate::diag::Help for StoreError {
    fn help(&self) -> Option<String> {
        #[cfg(feature = "postgres")]
        if let StoreError::Postgres(crate::journal::pg::StoreError::Behind { .. }) = self {
            return Some("cuga-flo store migrate --store URL (once, from any host)".into());
        }
        None
    }
}

impl StoreUrl {
    /// Read `--store`'s value. The text of an unknown value is not shown whole: it may
    /// hold a password.
    pub fn parse(text: &str) -> Result<StoreUrl, StoreError> {
        let text = text.trim();
        if text.is_empty() || text == "files" {
            return Ok(StoreUrl::Files);
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(text.to_string()));
        }
        let shown: String = text
            .split(['@', ':'])
            .next()
            .unwrap_or_default()
            .chars()
            .take(40)
            .collect();
        Err(StoreError::Unknown(shown))
    }
}

/// A database's state, for `store status` and after `store migrate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The database, without its password.
    pub shown: String,
    pub version: i32,
    /// The version this build needs.
    pub needs: i32,
    /// Migrations applied by this call (`store migrate`).
    pub applied: Vec<(i32, &'static str)>,
    pub runs: i64,
    pub parked: i64,
    pub finished: i64,
}

/// Keep this process's runs where `url` says (nothing to do for files): checked now, so
/// that a store that cannot be reached or is not migrated is said before anything runs.
pub fn mount(url: &StoreUrl) -> Result<(), StoreError> {
    match url {
        StoreUrl::Files => Ok(()),
        #[cfg(feature = "postgres")]
        StoreUrl::Postgres(url) => {
            let store = crate::journal::pg::PgStore::open(url)?;
            tracing::info!("runs are kept in {}", store.shown_url());
            crate::journal::shared::mount(Box::new(store));
            Ok(())
        }
        #[cfg(not(feature = "postgres"))]
        StoreUrl::Postgres(_) => Err(StoreError::NotBuilt),
    }
}

/// Apply the migrations `url`'s database lacks (`store migrate`); with `apply` false, only
/// say where it is (`store status`).
pub fn migrate(url: &StoreUrl, apply: bool) -> Result<Status, StoreError> {
    match url {
        StoreUrl::Files => Err(StoreError::Unknown("files".into())),
        #[cfg(feature = "postgres")]
        StoreUrl::Postgres(url) => {
            use crate::journal::pg;
            let store = pg::PgStore::at(url)?;
            let applied = if apply { store.migrate()? } else { Vec::new() };
            let version = store.version()?;
            let (runs, parked, finished) = if version >= 1 {
                store.counts()?
            } else {
                (0, 0, 0)
            };
            Ok(Status {
                shown: store.shown_url().to_string(),
                version,
                needs: pg::latest(),
                applied,
                runs,
                parked,
                finished,
            })
        }
        #[cfg(not(feature = "postgres"))]
        StoreUrl::Postgres(_) => {
            let _ = apply;
            Err(StoreError::NotBuilt)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls() {
        assert_eq!(StoreUrl::parse("files").unwrap(), StoreUrl::Files);
        assert_eq!(StoreUrl::parse("").unwrap(), StoreUrl::Files);
        assert!(matches!(
            StoreUrl::parse("postgresql://u@h/d").unwrap(),
            StoreUrl::Postgres(_)
        ));
        let err = StoreUrl::parse("mysql://u:secret@h/d")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("secret"), "{err}");
    }
}
