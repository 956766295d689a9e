//! The people who may sign in to the web console: a users file of `name:hash` lines, the
//! hash an argon2id PHC string (as `htpasswd` keeps bcrypt hashes). `cuga-flo users add`
//! writes it; `serve --ui` reads it once at start. A password is never stored, logged or
//! shown, only its hash.

use std::path::{Path, PathBuf};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

/// The users file's name under the run folder (`.cuga-flo/users`) when none is given.
pub const DEFAULT_FILE: &str = "users";

/// The shortest password `users add` accepts.
pub const MIN_PASSWORD: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum UsersError {
    #[error("cannot read the users file {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the users file {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {why}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        why: String,
    },
    #[error("`{0}` is not a user name: letters, digits, `.`, `_`, `-` and `@` only (1 to 64)")]
    BadName(String),
    #[error("the password is too short: at least {MIN_PASSWORD} characters")]
    ShortPassword,
    #[error("cannot hash the password: {0}")]
    Hash(String),
    #[error("no user `{0}` in the users file")]
    NoUser(String),
}

/// Whether `name` is a user name: what an approvers list names, a journal's `by` holds.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b))
}

/// A users file, read.
#[derive(Debug, Clone, Default)]
pub struct Users {
    /// (name, PHC hash), in the file's order.
    entries: Vec<(String, String)>,
}

impl Users {
    /// Read `path`; a missing file is an empty one.
    pub fn read(path: &Path) -> Result<Users, UsersError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Users::default()),
            Err(source) => {
                return Err(UsersError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut entries: Vec<(String, String)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let malformed = |why: String| UsersError::Malformed {
                path: path.to_path_buf(),
                line: i + 1,
                why,
            };
            let Some((name, hash)) = line.split_once(':') else {
                return Err(malformed("expected `name:hash`".into()));
            };
            if !valid_name(name) {
                return Err(malformed(format!("`{name}` is not a user name")));
            }
            if PasswordHash::new(hash).is_err() {
                return Err(malformed(format!(
                    "the hash of `{name}` is not a PHC string (write it with `cuga-flo users add`)"
                )));
            }
            if entries.iter().any(|(n, _)| n == name) {
                return Err(malformed(format!("`{name}` is listed twice")));
            }
            entries.push((name.to_string(), hash.to_string()));
        }
        Ok(Users { entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// Whether `password` is `name`'s. An unknown name costs a hash too, so that the time
    /// taken does not say which names exist.
    pub fn check(&self, name: &str, password: &str) -> bool {
        let argon = argon2::Argon2::default();
        match self.entries.iter().find(|(n, _)| n == name) {
            Some((_, hash)) => PasswordHash::new(hash)
                .is_ok_and(|h| argon.verify_password(password.as_bytes(), &h).is_ok()),
            None => {
                let _ = hash(password);
                false
            }
        }
    }

    /// Add `name` (or replace its password).
    pub fn set(&mut self, name: &str, password: &str) -> Result<(), UsersError> {
        if !valid_name(name) {
            return Err(UsersError::BadName(name.to_string()));
        }
        if password.chars().count() < MIN_PASSWORD {
            return Err(UsersError::ShortPassword);
        }
        let hash = hash(password)?;
        match self.entries.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = hash,
            None => self.entries.push((name.to_string(), hash)),
        }
        Ok(())
    }

    pub fn remove(&mut self, name: &str) -> Result<(), UsersError> {
        let before = self.entries.len();
        self.entries.retain(|(n, _)| n != name);
        if self.entries.len() == before {
            return Err(UsersError::NoUser(name.to_string()));
        }
        Ok(())
    }

    /// Write the file whole (a temporary file renamed over it), readable by its owner only.
    pub fn write(&self, path: &Path) -> Result<(), UsersError> {
        let failed = |source| UsersError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let mut text = String::from(
            "# cuga-flo web console users (`cuga-flo users add NAME`): name:argon2id hash\n",
        );
        for (name, hash) in &self.entries {
            text.push_str(&format!("{name}:{hash}\n"));
        }
        let tmp = path.with_extension("tmp");
        {
            use std::io::Write;
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&tmp).map_err(failed)?;
            file.write_all(text.as_bytes()).map_err(failed)?;
            file.sync_all().map_err(failed)?;
        }
        std::fs::rename(&tmp, path).map_err(failed)
    }
}

/// `password`'s argon2id hash, as a PHC string with a fresh random salt.
fn hash(password: &str) -> Result<String, UsersError> {
    let mut salt = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut salt)
        .map_err(|_| UsersError::Hash("no random salt".into()))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| UsersError::Hash(e.to_string()))?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| UsersError::Hash(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_checked_against_its_hash_and_never_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users");
        let mut users = Users::read(&path).unwrap();
        assert!(users.is_empty());
        users.set("alice", "correct horse").unwrap();
        users.set("bob", "battery staple").unwrap();
        assert!(matches!(
            users.set("eve", "short"),
            Err(UsersError::ShortPassword)
        ));
        assert!(matches!(
            users.set("a b", "long enough"),
            Err(UsersError::BadName(_))
        ));
        users.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("correct horse") && text.contains("alice:$argon2id$"));
        let users = Users::read(&path).unwrap();
        assert!(users.check("alice", "correct horse"));
        assert!(!users.check("alice", "battery staple"));
        assert!(!users.check("nobody", "correct horse"));
        assert_eq!(users.names().collect::<Vec<_>>(), ["alice", "bob"]);
        std::fs::write(&path, "alice:plain\n").unwrap();
        let e = Users::read(&path).unwrap_err().to_string();
        assert!(
            e.ends_with(
                ":1: the hash of `alice` is not a PHC string (write it with `cuga-flo users add`)"
            ),
            "{e}"
        );
    }
}
