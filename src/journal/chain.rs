//! The journal's hash chain: each record carries (`prev`) the SHA-256 of the line before
//! it, and the first record the run's anchor, so an edited, inserted or removed line
//! breaks the chain where it happened.

use ring::digest::{Context, SHA256};

/// What the first record's `prev` is computed from: the run and the app it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anchor {
    pub run_id: String,
    /// [`crate::app::LoadedApp::digest`] of the app, when known.
    pub app_digest: Option<String>,
}

impl Anchor {
    pub fn new(run_id: impl Into<String>, app_digest: Option<String>) -> Anchor {
        Anchor {
            run_id: run_id.into(),
            app_digest,
        }
    }

    /// The hash record 1's `prev` holds: SHA-256 of
    /// `"cuga-flo journal v1\n{run_id}\n{app_digest}\n"` (an empty digest when unknown).
    pub fn hash(&self) -> String {
        anchor(&self.run_id, self.app_digest.as_deref())
    }
}

/// The anchor hash of a run (see [`Anchor::hash`]).
pub fn anchor(run_id: &str, app_digest: Option<&str>) -> String {
    sha256_hex(
        format!(
            "cuga-flo journal v1\n{run_id}\n{}\n",
            app_digest.unwrap_or("")
        )
        .as_bytes(),
    )
}

/// The hash of one journal line (its bytes without the newline): the next record's `prev`.
pub fn line_hash(line: &[u8]) -> String {
    sha256_hex(line)
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut context = Context::new(&SHA256);
    context.update(bytes);
    hex(context.finish().as_ref())
}

pub use crate::digest::hex;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_inputs() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_anchor_covers_the_run_and_the_app() {
        let a = anchor("r1", Some("d"));
        assert_eq!(a, sha256_hex(b"cuga-flo journal v1\nr1\nd\n"));
        assert_eq!(
            anchor("r1", None),
            sha256_hex(b"cuga-flo journal v1\nr1\n\n")
        );
        assert_ne!(a, anchor("r2", Some("d")));
        assert_eq!(Anchor::new("r1", Some("d".into())).hash(), a);
    }
}
