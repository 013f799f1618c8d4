//! [`ProviderPool`]: turns a [`ProviderSpec`] into an `Arc<dyn Provider>`, reusing what it can.
//!
//! Equal specs get the same provider; specs with equal timeouts share one `reqwest` client (and
//! so its connection pool: credentials travel per request, not per client). The cache key
//! holds a keyed hash of the secrets, never their text, and a hit is confirmed by comparing the
//! secrets themselves so a hash collision can never hand out another caller's credential.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};

use secrecy::{ExposeSecret, SecretString};

use crate::anthropic::AnthropicProvider;
use crate::error::ProviderError;
use crate::ollama::OllamaProvider;
use crate::openai::OpenAiProvider;
use crate::provider::Provider;
use crate::spec::{ProviderKind, ProviderSpec, Timeouts};
use crate::transport::build_http_client;

/// Builds and caches providers. Cheap to share behind an `Arc`; all methods take `&self`.
#[derive(Default)]
pub struct ProviderPool {
    /// Random per pool, so secret hashes mean nothing outside this process.
    hasher: RandomState,
    clients: Mutex<HashMap<Timeouts, reqwest::Client>>,
    providers: Mutex<HashMap<CacheKey, Vec<Cached>>>,
}

/// Everything that distinguishes specs, with secrets reduced to a keyed hash.
#[derive(PartialEq, Eq, Hash)]
struct CacheKey {
    /// The spec serialized with secrets redacted: covers every non-secret field.
    public: String,
    secrets: u64,
}

struct Cached {
    spec: ProviderSpec,
    provider: Arc<dyn Provider>,
}

impl std::fmt::Debug for ProviderPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let clients = self.clients.lock().map(|c| c.len()).unwrap_or(0);
        let providers = self
            .providers
            .lock()
            .map(|p| p.values().map(Vec::len).sum::<usize>())
            .unwrap_or(0);
        f.debug_struct("ProviderPool")
            .field("http_clients", &clients)
            .field("providers", &providers)
            .finish()
    }
}

impl ProviderPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// The provider for `spec`, built on first use.
    pub fn provider(&self, spec: &ProviderSpec) -> Result<Arc<dyn Provider>, ProviderError> {
        let key = self.cache_key(spec);
        if let Some(found) = self.lookup(&key, spec) {
            return Ok(found);
        }
        let http = self.http_client(&spec.timeouts)?;
        let provider = build_provider(spec.clone(), http)?;
        let mut providers = self.providers.lock().unwrap_or_else(|p| p.into_inner());
        let entries = providers.entry(key).or_default();
        // Another task may have built it meanwhile; keep the first so callers share one.
        if let Some(existing) = entries.iter().find(|c| same_secrets(&c.spec, spec)) {
            return Ok(existing.provider.clone());
        }
        entries.push(Cached {
            spec: spec.clone(),
            provider: provider.clone(),
        });
        Ok(provider)
    }

    /// The shared HTTP client for these timeouts.
    pub fn http_client(&self, timeouts: &Timeouts) -> Result<reqwest::Client, ProviderError> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = clients.get(timeouts) {
            return Ok(client.clone());
        }
        let client = build_http_client(timeouts)?;
        clients.insert(*timeouts, client.clone());
        Ok(client)
    }

    fn lookup(&self, key: &CacheKey, spec: &ProviderSpec) -> Option<Arc<dyn Provider>> {
        let providers = self.providers.lock().unwrap_or_else(|p| p.into_inner());
        providers
            .get(key)?
            .iter()
            .find(|c| same_secrets(&c.spec, spec))
            .map(|c| c.provider.clone())
    }

    fn cache_key(&self, spec: &ProviderSpec) -> CacheKey {
        let public = serde_json::to_string(spec).unwrap_or_default();
        let secrets = self.hasher.hash_one((
            spec.api_key.as_ref().map(|k| k.expose_secret()),
            spec.headers
                .values()
                .map(|v| v.expose_secret())
                .collect::<Vec<_>>(),
        ));
        CacheKey { public, secrets }
    }
}

fn same_secrets(a: &ProviderSpec, b: &ProviderSpec) -> bool {
    let expose = |s: &SecretString| s.expose_secret().to_owned();
    a.api_key.as_ref().map(expose) == b.api_key.as_ref().map(expose)
        && a.headers.len() == b.headers.len()
        && a.headers
            .iter()
            .zip(&b.headers)
            .all(|((an, av), (bn, bv))| an == bn && av.expose_secret() == bv.expose_secret())
}

/// Builds a provider for `spec` on the given HTTP client, without caching.
pub fn build_provider(
    spec: ProviderSpec,
    http: reqwest::Client,
) -> Result<Arc<dyn Provider>, ProviderError> {
    Ok(match spec.kind {
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => {
            Arc::new(OpenAiProvider::new(spec, http)?)
        }
        ProviderKind::Ollama => Arc::new(OllamaProvider::new(spec, http)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(spec, http)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(key: &str) -> ProviderSpec {
        ProviderSpec::new(
            ProviderKind::OpenaiCompatible,
            "m",
            Some("http://127.0.0.1:1/v1"),
        )
        .unwrap()
        .with_api_key(SecretString::from(key.to_owned()))
    }

    #[test]
    fn equal_specs_share_one_provider() {
        let pool = ProviderPool::new();
        let a = pool.provider(&spec("k1")).unwrap();
        let b = pool.provider(&spec("k1")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn specs_differing_only_in_the_key_get_different_providers_but_one_http_client() {
        let pool = ProviderPool::new();
        let a = pool.provider(&spec("k1")).unwrap();
        let b = pool.provider(&spec("k2")).unwrap();
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(pool.clients.lock().unwrap().len(), 1);
    }

    #[test]
    fn different_timeouts_get_different_http_clients() {
        let pool = ProviderPool::new();
        let mut slow = spec("k1");
        slow.timeouts.read = std::time::Duration::from_secs(999);
        pool.provider(&spec("k1")).unwrap();
        pool.provider(&slow).unwrap();
        assert_eq!(pool.clients.lock().unwrap().len(), 2);
    }

    #[test]
    fn pool_debug_shows_counts_not_keys() {
        let pool = ProviderPool::new();
        pool.provider(&spec("canary-secret-123")).unwrap();
        let text = format!("{pool:?}");
        assert!(!text.contains("canary-secret-123"), "{text}");
        assert!(text.contains("providers: 1"), "{text}");
    }
}
