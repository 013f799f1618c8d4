//! API keys: only their SHA-256 is ever held (in `[auth]` or a keys file), never the key. A
//! presented key is hashed and looked up; a match names the key's `id` (what audit lines and
//! limits use) and its scopes. Rotation is listing the old and the new key side by side;
//! revocation is removing a key or marking it `revoked` (then the audit line names which key
//! was tried).
//!
//! Not here: bearer tokens that are JWTs (`jwt`), what scopes allow (`grant`).

use std::collections::HashMap;

use ring::digest::{SHA256, digest};
use secrecy::{ExposeSecret, SecretString};

use super::limits::CallerLimits;

/// One configured API key.
#[derive(Debug, Clone)]
pub struct ApiKey {
    /// The key's name in audit lines and limits (never the key).
    pub id: String,
    /// SHA-256 of the key's bytes.
    sha256: [u8; 32],
    /// The scopes the key holds.
    pub scopes: Vec<String>,
    /// A revoked key authenticates nobody.
    pub revoked: bool,
    /// Limits of this key's calls (default: `[auth]`'s).
    pub limits: Option<CallerLimits>,
}

/// A `sha256` that is not 64 hex digits.
#[derive(Debug, thiserror::Error)]
#[error(
    "API key {id:?}: sha256 must be 64 hex digits (the SHA-256 of the key, e.g. `printf %s KEY | sha256sum`)"
)]
pub struct KeyHashError {
    id: String,
}

impl ApiKey {
    /// A key named `id` whose SHA-256 is `sha256_hex`.
    pub fn new(
        id: impl Into<String>,
        sha256_hex: &str,
        scopes: Vec<String>,
    ) -> Result<ApiKey, KeyHashError> {
        let id = id.into();
        let Some(sha256) = decode_hex(sha256_hex.trim()) else {
            return Err(KeyHashError { id });
        };
        Ok(ApiKey {
            id,
            sha256,
            scopes,
            revoked: false,
            limits: None,
        })
    }

    /// The same key, revoked or not.
    pub fn revoked(mut self, revoked: bool) -> ApiKey {
        self.revoked = revoked;
        self
    }

    /// The same key with its own limits.
    pub fn with_limits(mut self, limits: Option<CallerLimits>) -> ApiKey {
        self.limits = limits;
        self
    }
}

/// The SHA-256 of `key`, in lowercase hex (what `[auth]` stores).
pub fn sha256_hex(key: &str) -> String {
    digest(&SHA256, key.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Why a presented key was refused (for the log; the caller only learns "invalid token").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRefusal {
    /// No configured key has this hash.
    Unknown,
    /// The key with this id is revoked.
    Revoked(String),
}

/// The configured keys, by hash.
#[derive(Debug, Default)]
pub(crate) struct ApiKeys {
    by_hash: HashMap<[u8; 32], ApiKey>,
}

impl ApiKeys {
    pub(crate) fn new(keys: Vec<ApiKey>) -> ApiKeys {
        ApiKeys {
            by_hash: keys.into_iter().map(|k| (k.sha256, k)).collect(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// The key `presented` is, when it is a configured and unrevoked one. The lookup is by
    /// hash, so its timing says nothing about any configured key's bytes.
    pub(crate) fn find(&self, presented: &SecretString) -> Result<&ApiKey, KeyRefusal> {
        let hash = digest(&SHA256, presented.expose_secret().as_bytes());
        let mut key = [0u8; 32];
        key.copy_from_slice(hash.as_ref());
        match self.by_hash.get(&key) {
            None => Err(KeyRefusal::Unknown),
            Some(k) if k.revoked => Err(KeyRefusal::Revoked(k.id.clone())),
            Some(k) => Ok(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_found_by_its_hash_and_a_revoked_or_unknown_one_is_not() {
        let current = ApiKey::new("new", &sha256_hex("sk-new"), vec!["a".into()]).unwrap();
        let old = ApiKey::new("old", &sha256_hex("sk-old"), vec![])
            .unwrap()
            .revoked(true);
        let keys = ApiKeys::new(vec![current, old]);
        let found = keys.find(&SecretString::from("sk-new")).unwrap();
        assert_eq!(found.id, "new");
        assert_eq!(
            keys.find(&SecretString::from("sk-old")).unwrap_err(),
            KeyRefusal::Revoked("old".into())
        );
        assert_eq!(
            keys.find(&SecretString::from("sk-nope")).unwrap_err(),
            KeyRefusal::Unknown
        );
    }

    #[test]
    fn a_hash_that_is_not_64_hex_digits_is_refused_naming_the_key() {
        let err = ApiKey::new("ci", "abc", vec![]).unwrap_err();
        assert!(err.to_string().contains("\"ci\""), "{err}");
        assert!(ApiKey::new("ci", &"zz".repeat(32), vec![]).is_err());
    }

    #[test]
    fn sha256_hex_matches_sha256sum() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
