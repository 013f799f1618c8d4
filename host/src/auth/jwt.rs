//! JWT bearer tokens (RFC 7519, JWS compact form) verified with [`ring`] against the issuer's
//! key set (`jwks`).
//!
//! A token is accepted only when: its header's `alg` is an asymmetric one ring verifies
//! (`RS256/384/512`, `PS256/384/512`, `ES256`, `ES384`, `EdDSA`; never `none` or an HMAC), its
//! `iss` is a configured issuer, its signature verifies with a key of that issuer's set (the
//! one its `kid` names), `exp` is present and not passed, `nbf` (when present) has come — both
//! with the issuer's clock skew — and `aud` (a string or a list) names one of the issuer's
//! audiences. Scopes come from `scope` (space-separated, RFC 8693) or `scp` (a list or a
//! string); the identity is the `sub` claim.
//!
//! Not here: the key set's fetching and caching (`jwks`), API keys (`api_key`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde::Deserialize;
use serde_json::Value;

use super::jwks::{Jwk, JwksCache, PublicKey};
use super::limits::CallerLimits;

/// Default clock skew allowed on `exp` and `nbf`.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// Largest token accepted, in bytes.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// A trusted token issuer.
#[derive(Debug, Clone)]
pub struct JwtIssuer {
    /// The `iss` value its tokens carry, exactly.
    pub issuer: String,
    /// Where its JSON Web Key Set is served.
    pub jwks_uri: String,
    /// The `aud` values accepted (at least one must be in the token's `aud`).
    pub audiences: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
    /// Limits of each subject's calls (default: `[auth]`'s).
    pub limits: Option<CallerLimits>,
    /// The shortest time between two fetches of its key set (default
    /// [`super::jwks::MIN_REFRESH`]): a token naming an unknown `kid` fetches again only after it.
    pub min_refresh: Duration,
}

/// Why a token was refused (for the log; the caller only learns "invalid token").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtRefusal {
    /// Not three base64url parts with JSON header and claims.
    #[error("malformed token")]
    Malformed,
    /// `alg` is not one this host verifies.
    #[error("unsupported algorithm {0:?}")]
    Algorithm(String),
    /// `iss` is not a configured issuer.
    #[error("untrusted issuer")]
    Issuer,
    /// No key of the issuer's set verifies the signature.
    #[error("bad signature")]
    Signature,
    /// The issuer's key set could not be fetched.
    #[error("key set unavailable: {0}")]
    KeySet(String),
    /// `exp` is missing or passed.
    #[error("expired")]
    Expired,
    /// `nbf` has not come.
    #[error("not yet valid")]
    NotYetValid,
    /// `aud` names none of the issuer's audiences.
    #[error("wrong audience")]
    Audience,
    /// `sub` is missing.
    #[error("no subject")]
    Subject,
}

/// What a verified token says.
#[derive(Debug, Clone)]
pub(crate) struct VerifiedToken {
    pub(crate) issuer_index: usize,
    pub(crate) subject: String,
    pub(crate) scopes: Vec<String>,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

#[derive(Deserialize)]
struct Claims {
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    aud: Option<Value>,
    #[serde(default)]
    exp: Option<f64>,
    #[serde(default)]
    nbf: Option<f64>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Value>,
}

/// Whether `token` has the shape of a JWS (three dot-separated parts), as opposed to an API
/// key.
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

/// The configured issuers with their key sets.
#[derive(Debug)]
pub(crate) struct Verifier {
    issuers: Vec<(JwtIssuer, JwksCache)>,
}

impl Verifier {
    pub(crate) fn new(issuers: Vec<JwtIssuer>) -> Verifier {
        let client = super::jwks::http_client();
        Verifier {
            issuers: issuers
                .into_iter()
                .map(|i| {
                    let cache = JwksCache::new(i.jwks_uri.clone(), client.clone(), i.min_refresh);
                    (i, cache)
                })
                .collect(),
        }
    }

    pub(crate) fn issuers(&self) -> impl Iterator<Item = &JwtIssuer> {
        self.issuers.iter().map(|(i, _)| i)
    }

    pub(crate) fn issuer(&self, index: usize) -> Option<&JwtIssuer> {
        self.issuers.get(index).map(|(i, _)| i)
    }

    /// Verifies `token` (see the module docs).
    pub(crate) async fn verify(&self, token: &str) -> Result<VerifiedToken, JwtRefusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(JwtRefusal::Malformed);
        }
        let mut parts = token.split('.');
        let (Some(h), Some(c), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwtRefusal::Malformed);
        };
        let header: Header = decode_json(h)?;
        let claims: Claims = decode_json(c)?;
        let signature = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| JwtRefusal::Malformed)?;
        let algorithm = Algorithm::parse(&header.alg)?;
        let iss = claims.iss.as_deref().ok_or(JwtRefusal::Issuer)?;
        let (index, (issuer, keys)) = self
            .issuers
            .iter()
            .enumerate()
            .find(|(_, (i, _))| i.issuer == iss)
            .ok_or(JwtRefusal::Issuer)?;
        let candidates = keys
            .keys_for(header.kid.as_deref())
            .await
            .map_err(JwtRefusal::KeySet)?;
        let signed = &token.as_bytes()[..h.len() + 1 + c.len()];
        let verified = candidates
            .iter()
            .filter(|k| k.alg.as_deref().is_none_or(|a| a == header.alg))
            .any(|k| algorithm.verify(k, signed, &signature));
        if !verified {
            return Err(JwtRefusal::Signature);
        }
        check_claims(&claims, issuer, now_seconds())?;
        Ok(VerifiedToken {
            issuer_index: index,
            subject: claims.sub.clone().ok_or(JwtRefusal::Subject)?,
            scopes: scopes(&claims),
        })
    }
}

fn decode_json<T: serde::de::DeserializeOwned>(part: &str) -> Result<T, JwtRefusal> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| JwtRefusal::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| JwtRefusal::Malformed)
}

fn now_seconds() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn check_claims(claims: &Claims, issuer: &JwtIssuer, now: f64) -> Result<(), JwtRefusal> {
    let leeway = issuer.leeway.as_secs_f64();
    match claims.exp {
        Some(exp) if now <= exp + leeway => {}
        _ => return Err(JwtRefusal::Expired),
    }
    if claims.nbf.is_some_and(|nbf| now + leeway < nbf) {
        return Err(JwtRefusal::NotYetValid);
    }
    let audiences: Vec<&str> = match &claims.aud {
        Some(Value::String(a)) => vec![a.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences
        .iter()
        .any(|a| issuer.audiences.iter().any(|want| want == a))
    {
        return Err(JwtRefusal::Audience);
    }
    Ok(())
}

fn scopes(claims: &Claims) -> Vec<String> {
    let mut out: Vec<String> = claims
        .scope
        .as_deref()
        .unwrap_or_default()
        .split_ascii_whitespace()
        .map(str::to_owned)
        .collect();
    match &claims.scp {
        Some(Value::String(s)) => out.extend(s.split_ascii_whitespace().map(str::to_owned)),
        Some(Value::Array(list)) => {
            out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        _ => {}
    }
    out
}

/// The signature algorithms accepted.
#[derive(Debug, Clone, Copy)]
enum Algorithm {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
    EdDsa,
}

impl Algorithm {
    fn parse(alg: &str) -> Result<Algorithm, JwtRefusal> {
        Ok(match alg {
            "RS256" => Algorithm::Rs256,
            "RS384" => Algorithm::Rs384,
            "RS512" => Algorithm::Rs512,
            "PS256" => Algorithm::Ps256,
            "PS384" => Algorithm::Ps384,
            "PS512" => Algorithm::Ps512,
            "ES256" => Algorithm::Es256,
            "ES384" => Algorithm::Es384,
            "EdDSA" => Algorithm::EdDsa,
            other => return Err(JwtRefusal::Algorithm(other.to_owned())),
        })
    }

    fn verify(self, jwk: &Jwk, message: &[u8], sig: &[u8]) -> bool {
        use signature as s;
        let rsa = |params: &'static s::RsaParameters| match &jwk.key {
            PublicKey::Rsa { n, e } => RsaPublicKeyComponents { n, e }
                .verify(params, message, sig)
                .is_ok(),
            _ => false,
        };
        match (self, &jwk.key) {
            (Algorithm::Rs256, _) => rsa(&s::RSA_PKCS1_2048_8192_SHA256),
            (Algorithm::Rs384, _) => rsa(&s::RSA_PKCS1_2048_8192_SHA384),
            (Algorithm::Rs512, _) => rsa(&s::RSA_PKCS1_2048_8192_SHA512),
            (Algorithm::Ps256, _) => rsa(&s::RSA_PSS_2048_8192_SHA256),
            (Algorithm::Ps384, _) => rsa(&s::RSA_PSS_2048_8192_SHA384),
            (Algorithm::Ps512, _) => rsa(&s::RSA_PSS_2048_8192_SHA512),
            (Algorithm::Es256, PublicKey::P256(point)) => {
                UnparsedPublicKey::new(&s::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, sig)
                    .is_ok()
            }
            (Algorithm::Es384, PublicKey::P384(point)) => {
                UnparsedPublicKey::new(&s::ECDSA_P384_SHA384_FIXED, point)
                    .verify(message, sig)
                    .is_ok()
            }
            (Algorithm::EdDsa, PublicKey::Ed25519(key)) => UnparsedPublicKey::new(&s::ED25519, key)
                .verify(message, sig)
                .is_ok(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issuer() -> JwtIssuer {
        JwtIssuer {
            issuer: "https://idp".into(),
            jwks_uri: "http://127.0.0.1:1/jwks".into(),
            audiences: vec!["skillet".into()],
            leeway: Duration::from_secs(30),
            limits: None,
            min_refresh: super::super::jwks::MIN_REFRESH,
        }
    }

    fn claims(value: Value) -> Claims {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn exp_nbf_and_aud_are_checked_with_the_skew() {
        let i = issuer();
        let ok = claims(serde_json::json!({"exp": 1000.0, "aud": ["x", "skillet"]}));
        assert_eq!(check_claims(&ok, &i, 1020.0), Ok(()));
        assert_eq!(check_claims(&ok, &i, 1031.0), Err(JwtRefusal::Expired));
        let no_exp = claims(serde_json::json!({"aud": "skillet"}));
        assert_eq!(check_claims(&no_exp, &i, 0.0), Err(JwtRefusal::Expired));
        let early = claims(serde_json::json!({"exp": 9999.0, "nbf": 1100.0, "aud": "skillet"}));
        assert_eq!(
            check_claims(&early, &i, 1000.0),
            Err(JwtRefusal::NotYetValid)
        );
        assert_eq!(check_claims(&early, &i, 1080.0), Ok(()));
        let other = claims(serde_json::json!({"exp": 9999.0, "aud": "other"}));
        assert_eq!(check_claims(&other, &i, 0.0), Err(JwtRefusal::Audience));
    }

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let c = claims(serde_json::json!({"scope": "a b", "scp": ["c"]}));
        assert_eq!(scopes(&c), ["a", "b", "c"]);
        let c = claims(serde_json::json!({"scp": "d e"}));
        assert_eq!(scopes(&c), ["d", "e"]);
    }

    #[test]
    fn none_and_hmac_are_refused_before_any_key_is_looked_at() {
        assert!(matches!(
            Algorithm::parse("none"),
            Err(JwtRefusal::Algorithm(_))
        ));
        assert!(matches!(
            Algorithm::parse("HS256"),
            Err(JwtRefusal::Algorithm(_))
        ));
    }

    #[tokio::test]
    async fn a_token_from_an_unconfigured_issuer_is_refused_without_fetching() {
        let v = Verifier::new(vec![issuer()]);
        let part = |v: Value| URL_SAFE_NO_PAD.encode(v.to_string());
        let token = format!(
            "{}.{}.{}",
            part(serde_json::json!({"alg": "ES256"})),
            part(serde_json::json!({"iss": "https://evil", "exp": 9e12})),
            URL_SAFE_NO_PAD.encode([0u8; 64])
        );
        assert_eq!(v.verify(&token).await.unwrap_err(), JwtRefusal::Issuer);
        assert_eq!(v.verify("a.b").await.unwrap_err(), JwtRefusal::Malformed);
    }
}
