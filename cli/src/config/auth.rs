//! `[auth]`: who may reach `serve --http`'s doors and what each may run — API keys (only their
//! SHA-256, in the file or a separate keys file), trusted JWT issuers, what each scope grants,
//! per-identity limits and the audit file.
//!
//! ```toml
//! [auth]
//! audit_file = "audit.jsonl"          # one JSON line per call decision
//! calls_per_minute = 120              # per identity (default: unlimited)
//! max_concurrent_calls = 8            # per identity (default: unlimited)
//! keys_file = "keys.toml"             # more [[api_keys]] (e.g. managed by a secret store)
//!
//! [auth.scopes.summarize]             # what the scope `summarize` grants
//! skills = ["summarize", "summarize-*"]
//! tags = ["text"]
//! llm_override = false
//!
//! [[auth.api_keys]]
//! id = "ci-2026-12"                   # named in audit lines, never the key
//! sha256 = "…64 hex digits…"          # printf %s "$KEY" | sha256sum
//! scopes = ["summarize", "metrics"]
//!
//! [[auth.jwt]]
//! issuer = "https://idp.example.com/"
//! jwks_uri = "https://idp.example.com/.well-known/jwks.json"
//! audience = "https://skillet.example.com"
//! ```
//!
//! Only configuration lives here; the checks are `skillet_host::auth`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use skillet_host::auth::{
    AccessOptions, ApiKey, CallerLimits, DEFAULT_JWT_LEEWAY, Grant, JwtIssuer, MIN_JWKS_REFRESH,
};

/// `[auth]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// API keys by their SHA-256.
    pub api_keys: Vec<ApiKeyEntry>,
    /// A TOML file with more `[[api_keys]]` (read when serving; relative to this file).
    pub keys_file: Option<PathBuf>,
    /// Trusted token issuers.
    pub jwt: Vec<JwtEntry>,
    /// What each scope grants, by scope name.
    pub scopes: BTreeMap<String, ScopeEntry>,
    /// Default calls per minute of each identity.
    pub calls_per_minute: Option<u32>,
    /// Default calls in flight at once of each identity.
    pub max_concurrent_calls: Option<usize>,
    /// Where audit records are appended as JSON lines (relative to this file).
    pub audit_file: Option<PathBuf>,
    /// The scope that may read `/metrics` (default `metrics`).
    pub metrics_scope: Option<String>,
    /// The scope that may use the web console's data routes, `/console/api/` (default
    /// `console`).
    pub console_scope: Option<String>,
    /// This server's public base URL, as callers reach it (behind a proxy, or bound to
    /// `0.0.0.0`): what `WWW-Authenticate` and the protected-resource metadata name.
    pub public_url: Option<String>,
}

/// One `[[auth.api_keys]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyEntry {
    /// The key's name in audit lines and limits.
    pub id: String,
    /// SHA-256 of the key, 64 hex digits. The key itself is never written anywhere.
    #[serde(default)]
    pub sha256: String,
    /// Read only to refuse it without echoing it: a key written here by mistake is an error
    /// that names the field, never the value (a TOML error would quote the line).
    #[serde(default)]
    pub key: Option<secrecy::SecretString>,
    /// Its scopes.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// A revoked key is refused (and named in the audit line).
    #[serde(default)]
    pub revoked: bool,
    /// Its calls per minute (default: `[auth]`'s).
    #[serde(default)]
    pub calls_per_minute: Option<u32>,
    /// Its calls in flight at once (default: `[auth]`'s).
    #[serde(default)]
    pub max_concurrent_calls: Option<usize>,
}

/// One `[[auth.jwt]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JwtEntry {
    /// The `iss` its tokens carry, exactly.
    pub issuer: String,
    /// Its JSON Web Key Set URL.
    pub jwks_uri: String,
    /// The accepted `aud` value(s).
    pub audience: OneOrMany,
    /// Clock skew allowed on `exp`/`nbf`, in seconds (default 30).
    #[serde(default)]
    pub leeway_seconds: Option<u64>,
    /// Shortest time between two fetches of the key set, in seconds (default 10): a token with
    /// an unknown `kid` fetches again only after it.
    #[serde(default)]
    pub jwks_min_refresh_seconds: Option<u64>,
    /// Calls per minute of each subject (default: `[auth]`'s).
    #[serde(default)]
    pub calls_per_minute: Option<u32>,
    /// Calls in flight of each subject (default: `[auth]`'s).
    #[serde(default)]
    pub max_concurrent_calls: Option<usize>,
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// One `[auth.scopes.NAME]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScopeEntry {
    /// Skill names or globs.
    pub skills: Vec<String>,
    /// Skill tags or categories.
    pub tags: Vec<String>,
    /// Whether calls may carry `llm_override` (still subject to `[llm_override]`).
    pub llm_override: bool,
}

/// A keys file: `[[api_keys]]` entries only.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysFile {
    #[serde(default)]
    api_keys: Vec<ApiKeyEntry>,
}

fn limits(per_minute: Option<u32>, concurrent: Option<usize>) -> Option<CallerLimits> {
    (per_minute.is_some() || concurrent.is_some()).then_some(CallerLimits {
        calls_per_minute: per_minute,
        max_concurrent_calls: concurrent,
    })
}

impl AuthConfig {
    /// Resolves relative paths against `base` (the config file's directory).
    pub(crate) fn anchor_paths(&mut self, base: &Path) {
        for path in [&mut self.keys_file, &mut self.audit_file]
            .into_iter()
            .flatten()
        {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
    }

    /// The first problem serde cannot see, as (key, reason).
    pub(crate) fn problem(&self) -> Option<(String, String)> {
        for (name, scope) in &self.scopes {
            if let Err(e) = Grant::new(&scope.skills, &scope.tags, scope.llm_override) {
                return Some((format!("auth.scopes.{name}"), e.to_string()));
            }
        }
        for (i, key) in self.api_keys.iter().enumerate() {
            if key.key.is_some() {
                return Some((
                    format!("auth.api_keys[{i}].key"),
                    "never write a key itself here: write its SHA-256 as `sha256` \
                     (printf %s \"$KEY\" | sha256sum) and remove `key`"
                        .into(),
                ));
            }
            if let Err(e) = ApiKey::new(&key.id, &key.sha256, Vec::new()) {
                return Some((format!("auth.api_keys[{i}].sha256"), e.to_string()));
            }
        }
        for (i, jwt) in self.jwt.iter().enumerate() {
            if jwt.audience.clone().into_vec().is_empty() {
                return Some((
                    format!("auth.jwt[{i}].audience"),
                    "name at least one audience: a token for another service must not work here"
                        .into(),
                ));
            }
        }
        None
    }

    /// The host's access options: the keys file read, every entry converted.
    pub fn access_options(&self) -> Result<AccessOptions, String> {
        let mut entries = self.api_keys.clone();
        if let Some(path) = &self.keys_file {
            // toml's message without its source snippet: the file may hold a key by mistake.
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("[auth] keys_file {}: {e}", path.display()))?;
            let file: KeysFile = toml::from_str(&text)
                .map_err(|e| format!("[auth] keys_file {}: {}", path.display(), e.message()))?;
            if let Some(entry) = file.api_keys.iter().find(|k| k.key.is_some()) {
                return Err(format!(
                    "[auth] keys_file {}: api key {:?} holds the key itself; write its sha256 instead",
                    path.display(),
                    entry.id
                ));
            }
            entries.extend(file.api_keys);
        }
        let api_keys = entries
            .into_iter()
            .map(|k| {
                ApiKey::new(&k.id, &k.sha256, k.scopes)
                    .map(|key| {
                        key.revoked(k.revoked)
                            .with_limits(limits(k.calls_per_minute, k.max_concurrent_calls))
                    })
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<_>, _>>()?;
        let issuers = self
            .jwt
            .iter()
            .map(|j| JwtIssuer {
                issuer: j.issuer.clone(),
                jwks_uri: j.jwks_uri.clone(),
                audiences: j.audience.clone().into_vec(),
                leeway: j
                    .leeway_seconds
                    .map_or(DEFAULT_JWT_LEEWAY, Duration::from_secs),
                limits: limits(j.calls_per_minute, j.max_concurrent_calls),
                min_refresh: j
                    .jwks_min_refresh_seconds
                    .map_or(MIN_JWKS_REFRESH, Duration::from_secs),
            })
            .collect();
        let scopes = self
            .scopes
            .iter()
            .map(|(name, s)| {
                Grant::new(&s.skills, &s.tags, s.llm_override)
                    .map(|g| (name.clone(), g))
                    .map_err(|e| format!("[auth.scopes.{name}] {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AccessOptions {
            api_keys,
            issuers,
            scopes,
            limits: CallerLimits {
                calls_per_minute: self.calls_per_minute,
                max_concurrent_calls: self.max_concurrent_calls,
            },
            audit_file: self.audit_file.clone(),
            metrics_scope: self.metrics_scope.clone(),
            console_scope: self.console_scope.clone(),
            public_url: self.public_url.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn an_auth_section_becomes_access_options_with_paths_anchored_and_keys_file_read() {
        let dir = tempfile::tempdir().unwrap();
        let hash = skillet_host::auth::sha256_hex("k");
        std::fs::write(
            dir.path().join("keys.toml"),
            format!("[[api_keys]]\nid = \"from-file\"\nsha256 = \"{hash}\"\n"),
        )
        .unwrap();
        let text = format!(
            "[auth]\naudit_file = \"a.jsonl\"\nkeys_file = \"keys.toml\"\n\
             [auth.scopes.s]\nskills = [\"x*\"]\n\
             [[auth.api_keys]]\nid = \"inline\"\nsha256 = \"{hash}\"\nscopes = [\"s\"]\n\
             [[auth.jwt]]\nissuer = \"i\"\njwks_uri = \"http://127.0.0.1:1/j\"\naudience = [\"a\", \"b\"]\n"
        );
        let config = Config::from_toml_str(&text, &dir.path().join("skillet.toml")).unwrap();
        let auth = config.auth.unwrap();
        assert_eq!(auth.audit_file, Some(dir.path().join("a.jsonl")));
        let options = auth.access_options().unwrap();
        let ids: Vec<&str> = options.api_keys.iter().map(|k| k.id.as_str()).collect();
        assert_eq!(ids, ["inline", "from-file"]);
        assert_eq!(options.issuers[0].audiences, ["a", "b"]);
        assert_eq!(options.issuers[0].min_refresh, MIN_JWKS_REFRESH);
    }

    #[test]
    fn a_key_itself_a_bad_hash_or_a_bad_glob_is_refused_naming_the_key() {
        let path = Path::new("skillet.toml");
        let inline = "[[auth.api_keys]]\nid = \"x\"\nkey = \"sk-secret\"\n";
        let err = Config::from_toml_str(inline, path).unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(shown.contains("auth.api_keys[0].key"), "{shown}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        let short = "[[auth.api_keys]]\nid = \"x\"\nsha256 = \"abc\"\n";
        let err = Config::from_toml_str(short, path).unwrap_err().to_string();
        assert!(err.contains("auth.api_keys[0].sha256"), "{err}");
        let glob = "[auth.scopes.s]\nskills = [\"a[\"]\n";
        let err = Config::from_toml_str(glob, path).unwrap_err().to_string();
        assert!(err.contains("auth.scopes.s"), "{err}");
    }
}
