//! Who is signed in: sessions kept in memory (a server restart signs everyone out), each
//! a random token in a `Secure; HttpOnly; SameSite=Strict` cookie and its own CSRF token,
//! which every form carries and every POST must send back.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The session cookie's name.
pub const COOKIE: &str = "cuga_flo_session";

/// How long a session lasts without use.
pub const IDLE: Duration = Duration::from_secs(8 * 3600);

/// Sessions open at once; the oldest goes when a new one would pass it.
const MAX_SESSIONS: usize = 10_000;

#[derive(Debug, Clone)]
pub struct Session {
    pub user: String,
    pub csrf: String,
    last: Instant,
}

impl Session {
    /// A session nobody signed in to open (a local user, a proxy's header).
    pub fn new(user: String, csrf: String) -> Session {
        Session {
            user,
            csrf,
            last: Instant::now(),
        }
    }
}

#[derive(Default)]
pub struct Sessions {
    /// By the SHA-256 of the session token (the token itself is never kept).
    open: Mutex<HashMap<String, Session>>,
}

/// A fresh random token: 32 bytes, hex.
pub fn token() -> String {
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .expect("the system's random source");
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(token: &str) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref())
}

/// Whether `a` and `b` are equal, in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl Sessions {
    /// Open a session for `user`: its token (for the cookie).
    pub fn open(&self, user: &str) -> String {
        let token = token();
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        open.retain(|_, s| now.duration_since(s.last) < IDLE);
        if open.len() >= MAX_SESSIONS
            && let Some(oldest) = (open.iter())
                .min_by_key(|(_, s)| s.last)
                .map(|(k, _)| k.clone())
        {
            open.remove(&oldest);
        }
        open.insert(
            digest(&token),
            Session {
                user: user.to_string(),
                csrf: self::token(),
                last: now,
            },
        );
        token
    }

    /// The session of `token`, if open (and now used).
    pub fn get(&self, token: &str) -> Option<Session> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let key = digest(token);
        let session = open.get_mut(&key)?;
        if session.last.elapsed() >= IDLE {
            open.remove(&key);
            return None;
        }
        session.last = Instant::now();
        Some(session.clone())
    }

    pub fn close(&self, token: &str) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.remove(&digest(token));
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|pair| {
        let (k, v) = pair.trim().split_once('=')?;
        (k == name).then_some(v)
    })
}

/// The `Set-Cookie` value of a session token (`None`: the cookie cleared).
pub fn set_cookie(token: Option<&str>) -> String {
    match token {
        Some(t) => format!("{COOKIE}={t}; Path=/; HttpOnly; Secure; SameSite=Strict"),
        None => format!("{COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_its_token_only_and_closes() {
        let sessions = Sessions::default();
        let t = sessions.open("alice");
        let s = sessions.get(&t).unwrap();
        assert_eq!(s.user, "alice");
        assert_eq!(s.csrf.len(), 64);
        assert!(sessions.get(&token()).is_none());
        sessions.close(&t);
        assert!(sessions.get(&t).is_none());
        assert_eq!(
            cookie("a=1; cuga_flo_session=xyz; b=2", COOKIE),
            Some("xyz")
        );
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}
