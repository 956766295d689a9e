//! Secrets (API keys, bearer tokens): held in a [`Secret`], which never prints, so that
//! a secret reaches no log, prompt, journal or message by accident.

use std::fmt;

/// A secret value. `Debug` and `Display` print `***`; [`Secret::expose`] is for the one
/// place that sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

/// The operating system gave no random bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operating system gave no random bytes")]
pub struct NoRandom;

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// A fresh random token: 32 bytes from the operating system, as 64 hex digits.
    pub fn random() -> Result<Secret, NoRandom> {
        use ring::rand::{SecureRandom, SystemRandom};
        let mut bytes = [0u8; 32];
        SystemRandom::new().fill(&mut bytes).map_err(|_| NoRandom)?;
        Ok(Secret(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The value, for the one place that sends it (an `Authorization` header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `presented` is this secret, compared in a time that depends only on the
    /// presented length (a bearer token checked by a server).
    pub fn matches(&self, presented: &str) -> bool {
        let (presented, expected) = (presented.as_bytes(), self.0.as_bytes());
        if expected.is_empty() {
            return false;
        }
        let mut diff = presented.len() ^ expected.len();
        for (i, byte) in presented.iter().enumerate() {
            diff |= usize::from(byte ^ expected[i % expected.len()]);
        }
        std::hint::black_box(diff) == 0
    }

    /// `text` with every occurrence of the secret replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "***")
    }
}

/// `text` with the credentials of every URL in it (`scheme://user:password@host`) shown as
/// `***`: a URL is never shown, logged or journalled with its userinfo.
/// `text` with the credential of every HTTP authorization it quotes (`Bearer <token>`,
/// `Basic <credentials>`) replaced by `***`: what a server that echoes a request's
/// headers in its error would otherwise put in a journal or a log.
pub fn redact_authorizations(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let next = ["bearer", "basic"]
            .iter()
            .filter_map(|scheme| lower[at..].find(scheme).map(|i| (at + i, scheme.len())))
            .min();
        let Some((start, len)) = next else { break };
        let after = start + len;
        // The scheme, then whitespace (or `:`/`=` and quotes), then the credential.
        let gap = text[after..]
            .find(|c: char| !(c.is_whitespace() || matches!(c, ':' | '=' | '"' | '\'')))
            .map_or(text.len(), |i| after + i);
        let end = text[gap..]
            .find(|c: char| {
                !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '+' | '/' | '=' | '-'))
            })
            .map_or(text.len(), |i| gap + i);
        let word_start = start == 0 || !text.as_bytes()[start - 1].is_ascii_alphanumeric();
        if word_start && gap > after && end - gap >= 4 {
            out.push_str(&text[at..gap]);
            out.push_str("***");
        } else {
            out.push_str(&text[at..end.max(after)]);
        }
        at = end.max(after);
    }
    out.push_str(&text[at.min(text.len())..]);
    out
}

pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| {
                matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '"' || c == '\''
            })
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                out.push_str("***");
                out.push_str(&authority[userinfo_end..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// A URL without its userinfo (`http://user:pw@host/x` → `http://host/x`): what a journal
/// keeps so that a resume can reach the same place, never the credentials (a resume takes
/// them again from `--engine-url` or the environment).
pub fn without_userinfo(url: &str) -> String {
    let Some(at) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, after) = url.split_at(at + 3);
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    match after[..end].rfind('@') {
        Some(userinfo_end) => format!("{scheme}{}", &after[userinfo_end + 1..]),
        None => url.to_string(),
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_journalled_url_has_no_userinfo() {
        assert_eq!(
            super::without_userinfo("http://user:SECRET@127.0.0.1:1/mcp?x=a@b"),
            "http://127.0.0.1:1/mcp?x=a@b"
        );
        assert_eq!(super::without_userinfo("http://h/p"), "http://h/p");
        assert_eq!(super::without_userinfo("not a url"), "not a url");
    }

    use super::*;

    #[test]
    fn secrets_never_print_and_random_ones_differ() {
        let a = Secret::random().unwrap();
        let b = Secret::random().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 64);
        assert_eq!(format!("{a} {a:?}"), "*** ***");
        assert_eq!(a.redact(&format!("token={}", a.expose())), "token=***");
    }
}

#[cfg(test)]
mod url_tests {
    use super::redact_urls;

    #[test]
    fn userinfo_never_shows() {
        assert_eq!(
            redact_urls("model `m` at http://user:sk-secret@127.0.0.1:8080/v1 failed"),
            "model `m` at http://***@127.0.0.1:8080/v1 failed"
        );
        assert_eq!(
            redact_urls("https://key@h/x https://h2/y"),
            "https://***@h/x https://h2/y"
        );
        assert_eq!(redact_urls("http://host:80/v1"), "http://host:80/v1");
        assert_eq!(redact_urls("no url"), "no url");
    }
}
