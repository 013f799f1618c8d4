//! An issuer's JSON Web Key Set: fetched over HTTP (the workspace's reqwest, rustls), parsed
//! into public keys [`ring`] verifies with, cached, and fetched again when a token names a key
//! id (`kid`) the cache does not have — at most once per [`MIN_REFRESH`] (the issuer's
//! `min_refresh`), so a flood of tokens
//! with made-up `kid`s cannot turn into a flood of requests to the issuer.
//!
//! Keys: `RSA` (`n`, `e`), `EC` P-256 / P-384 (`x`, `y`), `OKP` Ed25519 (`x`). Keys marked
//! `"use": "enc"` and kinds ring cannot verify with are skipped.
//!
//! Not here: the token itself and its claims (`jwt`).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

/// The shortest time between two fetches of one issuer's key set.
pub const MIN_REFRESH: Duration = Duration::from_secs(10);

/// How long a fetched key set is used before it is fetched again anyway.
const MAX_AGE: Duration = Duration::from_secs(3600);

/// Largest key set accepted, in bytes.
const MAX_JWKS_BYTES: usize = 256 * 1024;

/// A public key from a key set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PublicKey {
    /// RSA modulus and exponent (big-endian).
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// A P-256 point, uncompressed (`04 || x || y`).
    P256(Vec<u8>),
    /// A P-384 point, uncompressed.
    P384(Vec<u8>),
    /// An Ed25519 public key.
    Ed25519(Vec<u8>),
}

/// One key with the algorithm it is restricted to, if any.
#[derive(Debug, Clone)]
pub(crate) struct Jwk {
    pub(crate) kid: Option<String>,
    pub(crate) alg: Option<String>,
    pub(crate) key: PublicKey,
}

#[derive(Deserialize)]
struct JwkSetWire {
    keys: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct JwkWire {
    kty: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    alg: Option<String>,
    #[serde(default, rename = "use")]
    use_: Option<String>,
    #[serde(default)]
    crv: Option<String>,
    #[serde(default)]
    n: Option<String>,
    #[serde(default)]
    e: Option<String>,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    y: Option<String>,
}

fn b64(field: Option<&String>) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(field?.trim_end_matches('=')).ok()
}

impl Jwk {
    fn from_wire(wire: JwkWire) -> Option<Jwk> {
        if wire.use_.as_deref().is_some_and(|u| u != "sig") {
            return None;
        }
        let key = match (wire.kty.as_str(), wire.crv.as_deref()) {
            ("RSA", _) => PublicKey::Rsa {
                n: b64(wire.n.as_ref())?,
                e: b64(wire.e.as_ref())?,
            },
            ("EC", Some(crv @ ("P-256" | "P-384"))) => {
                let (x, y) = (b64(wire.x.as_ref())?, b64(wire.y.as_ref())?);
                let len = if crv == "P-256" { 32 } else { 48 };
                if x.len() != len || y.len() != len {
                    return None;
                }
                let mut point = vec![0x04];
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                if crv == "P-256" {
                    PublicKey::P256(point)
                } else {
                    PublicKey::P384(point)
                }
            }
            ("OKP", Some("Ed25519")) => PublicKey::Ed25519(b64(wire.x.as_ref())?),
            _ => return None,
        };
        Some(Jwk {
            kid: wire.kid,
            alg: wire.alg,
            key,
        })
    }
}

/// Parses a key set, skipping keys it cannot use.
pub(crate) fn parse_jwks(bytes: &[u8]) -> Result<Vec<Jwk>, String> {
    let set: JwkSetWire =
        serde_json::from_slice(bytes).map_err(|e| format!("not a JWK set: {e}"))?;
    Ok(set
        .keys
        .into_iter()
        .filter_map(|k| serde_json::from_value::<JwkWire>(k).ok())
        .filter_map(Jwk::from_wire)
        .collect())
}

struct Cached {
    keys: Vec<Jwk>,
    fetched: Option<Instant>,
}

/// One issuer's key set, fetched on demand.
pub(crate) struct JwksCache {
    uri: String,
    min_refresh: Duration,
    client: reqwest::Client,
    cached: Mutex<Cached>,
    /// Held while fetching, so concurrent misses fetch once.
    fetching: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for JwksCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksCache").field("uri", &self.uri).finish()
    }
}

impl JwksCache {
    pub(crate) fn new(uri: String, client: reqwest::Client, min_refresh: Duration) -> JwksCache {
        JwksCache {
            uri,
            min_refresh,
            client,
            cached: Mutex::new(Cached {
                keys: Vec::new(),
                fetched: None,
            }),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The keys a token with `kid` may be signed with: the one with that id, or (for a token
    /// naming none) every key. Fetches when the cache has no match and may refresh.
    pub(crate) async fn keys_for(&self, kid: Option<&str>) -> Result<Vec<Jwk>, String> {
        if let Some(found) = self.lookup(kid) {
            return Ok(found);
        }
        let _fetching = self.fetching.lock().await;
        // Another task may have fetched while this one waited.
        if let Some(found) = self.lookup(kid) {
            return Ok(found);
        }
        let fetched = self.fetch().await;
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        // A failed fetch counts as one too (the old keys stay): an issuer that is down is not
        // asked again for every token.
        cached.fetched = Some(Instant::now());
        match fetched {
            Ok(keys) => cached.keys = keys,
            Err(e) if cached.keys.is_empty() => return Err(e),
            Err(e) => {
                tracing::warn!(uri = %self.uri, error = %e, "JWKS refresh failed; keeping the cached keys")
            }
        }
        drop(cached);
        Ok(self.lookup(kid).unwrap_or_default())
    }

    /// The matching cached keys, or `None` to fetch first: never fetched, stale, or no match
    /// and the last fetch is at least `min_refresh` old (an unknown `kid`: keys rotated).
    fn lookup(&self, kid: Option<&str>) -> Option<Vec<Jwk>> {
        let cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        let age = cached.fetched.map(|t| t.elapsed())?;
        if age > MAX_AGE {
            return None;
        }
        let found: Vec<Jwk> = cached
            .keys
            .iter()
            .filter(|k| kid.is_none() || k.kid.as_deref() == kid)
            .cloned()
            .collect();
        if found.is_empty() && age >= self.min_refresh {
            return None;
        }
        Some(found)
    }

    async fn fetch(&self) -> Result<Vec<Jwk>, String> {
        let mut response = self
            .client
            .get(&self.uri)
            .send()
            .await
            .map_err(|e| format!("fetching the key set {}: {e}", self.uri))?;
        if !response.status().is_success() {
            return Err(format!(
                "fetching the key set {}: HTTP {}",
                self.uri,
                response.status()
            ));
        }
        let too_large = || format!("the key set {} is over {MAX_JWKS_BYTES} bytes", self.uri);
        if response
            .content_length()
            .is_some_and(|n| n > MAX_JWKS_BYTES as u64)
        {
            return Err(too_large());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("reading the key set {}: {e}", self.uri))?
        {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_JWKS_BYTES {
                return Err(too_large());
            }
        }
        let keys = parse_jwks(&bytes)?;
        tracing::debug!(uri = %self.uri, keys = keys.len(), "fetched JWKS");
        Ok(keys)
    }
}

/// Shared by every issuer's cache (cheap to clone: one connection pool).
pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_every_supported_kind_parse_and_others_are_skipped() {
        let x = URL_SAFE_NO_PAD.encode([1u8; 32]);
        let set = serde_json::json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "a", "x": x, "y": x},
            {"kty": "RSA", "kid": "b", "n": "AQAB", "e": "AQAB"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "c", "x": x},
            {"kty": "EC", "crv": "P-256", "kid": "enc", "use": "enc", "x": x, "y": x},
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "EC", "crv": "P-256", "kid": "short", "x": "AQ", "y": "AQ"}
        ]});
        let keys = parse_jwks(set.to_string().as_bytes()).unwrap();
        let kids: Vec<_> = keys.iter().filter_map(|k| k.kid.as_deref()).collect();
        assert_eq!(kids, ["a", "b", "c"]);
        assert!(matches!(&keys[0].key, PublicKey::P256(p) if p.len() == 65 && p[0] == 4));
    }
}
