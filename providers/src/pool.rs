//! [`ProviderPool`]: turns a [`ProviderSpec`] into an `Arc<dyn Provider>`, reusing what it can,
//! within a fixed memory bound.
//!
//! Every provider of a pool sends through ONE pooled `reqwest` client, created once: timeouts
//! are applied per request, credentials travel per request, so nothing in a spec needs a
//! client of its own. The one exception is the protocol: specs with `http2_prior_knowledge`
//! share a second client that speaks HTTP/2 from the first byte (at most two, ever). Providers are cached by spec in a least-recently-used cache capped at
//! [`ProviderPool::DEFAULT_CAPACITY`] entries, so request-supplied overrides (each a distinct
//! spec) cannot grow the process without bound. The cache key holds a keyed hash of the
//! secrets, never their text, and a hit is confirmed by comparing the secrets themselves so a
//! hash collision can never hand out another caller's credential.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use secrecy::{ExposeSecret, SecretString};

use crate::error::ProviderError;
use crate::provider::Provider;
use crate::spec::ProviderSpec;
use crate::transport::build_http_client;

/// Builds and caches providers. Cheap to share behind an `Arc`; all methods take `&self`.
pub struct ProviderPool {
    /// Random per pool, so secret hashes mean nothing outside this process.
    hasher: RandomState,
    /// The HTTP clients, built on first use: `[negotiating, HTTP/2 prior knowledge]`.
    http: Mutex<[Option<reqwest::Client>; 2]>,
    /// How many HTTP clients this pool ever built (one per protocol choice in use, forever).
    clients_built: AtomicUsize,
    cache: Mutex<Lru>,
}

/// Everything that distinguishes specs, with secrets reduced to a keyed hash.
#[derive(PartialEq, Eq, Hash, Clone)]
struct CacheKey {
    /// The spec serialized with secrets redacted: covers every non-secret field.
    public: String,
    secrets: u64,
}

struct Cached {
    spec: ProviderSpec,
    provider: Arc<dyn Provider>,
    /// When it was last handed out, in lookups since the pool was made.
    last_used: u64,
}

/// Providers by key; several entries under one key only on a secret-hash collision.
struct Lru {
    capacity: usize,
    entries: HashMap<CacheKey, Vec<Cached>>,
    len: usize,
    clock: u64,
}

impl Lru {
    fn get(&mut self, key: &CacheKey, spec: &ProviderSpec) -> Option<Arc<dyn Provider>> {
        self.clock += 1;
        let now = self.clock;
        let found = self
            .entries
            .get_mut(key)?
            .iter_mut()
            .find(|c| same_secrets(&c.spec, spec))?;
        found.last_used = now;
        Some(found.provider.clone())
    }

    fn insert(&mut self, key: CacheKey, spec: ProviderSpec, provider: Arc<dyn Provider>) {
        if self.len >= self.capacity {
            self.evict_oldest();
        }
        self.clock += 1;
        self.entries.entry(key).or_default().push(Cached {
            spec,
            provider,
            last_used: self.clock,
        });
        self.len += 1;
    }

    /// Drops the least recently used entry. Linear in the cache size, and only on an insert
    /// into a full cache; calls in flight keep their `Arc` to an evicted provider.
    fn evict_oldest(&mut self) {
        let oldest = self
            .entries
            .iter()
            .flat_map(|(k, v)| v.iter().enumerate().map(move |(i, c)| (c.last_used, k, i)))
            .min_by_key(|(used, _, _)| *used)
            .map(|(_, k, i)| (k.clone(), i));
        if let Some((key, index)) = oldest
            && let Some(list) = self.entries.get_mut(&key)
        {
            list.swap_remove(index);
            if list.is_empty() {
                self.entries.remove(&key);
            }
            self.len -= 1;
        }
    }
}

impl Default for ProviderPool {
    fn default() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }
}

impl std::fmt::Debug for ProviderPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderPool")
            .field("http_clients", &self.http_clients_built())
            .field("providers", &self.cached_providers())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl ProviderPool {
    /// How many providers a pool keeps by default.
    pub const DEFAULT_CAPACITY: usize = 256;

    /// An empty pool with the default capacity.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty pool keeping at most `capacity` providers (at least 1).
    pub fn with_capacity(capacity: usize) -> Self {
        ProviderPool {
            hasher: RandomState::new(),
            http: Mutex::new([None, None]),
            clients_built: AtomicUsize::new(0),
            cache: Mutex::new(Lru {
                capacity: capacity.max(1),
                entries: HashMap::new(),
                len: 0,
                clock: 0,
            }),
        }
    }

    /// The provider for `spec`, built on first use.
    pub fn provider(&self, spec: &ProviderSpec) -> Result<Arc<dyn Provider>, ProviderError> {
        let key = self.cache_key(spec);
        if let Some(found) = self.lock_cache().get(&key, spec) {
            return Ok(found);
        }
        let http = self.http_client_for(spec.http2_prior_knowledge)?;
        let provider = spec.kind.build(spec.clone(), http)?;
        let mut cache = self.lock_cache();
        // Another task may have built it meanwhile; keep the first so callers share one.
        if let Some(existing) = cache.get(&key, spec) {
            return Ok(existing);
        }
        cache.insert(key, spec.clone(), provider.clone());
        Ok(provider)
    }

    /// The pool's HTTP client negotiating the protocol, built on first use.
    pub fn http_client(&self) -> Result<reqwest::Client, ProviderError> {
        self.http_client_for(false)
    }

    /// The pool's client for specs with or without `http2_prior_knowledge`, built on first use.
    fn http_client_for(
        &self,
        http2_prior_knowledge: bool,
    ) -> Result<reqwest::Client, ProviderError> {
        let mut clients = self.http.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut clients[usize::from(http2_prior_knowledge)];
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let client = build_http_client(http2_prior_knowledge)?;
        self.clients_built.fetch_add(1, Ordering::Relaxed);
        *slot = Some(client.clone());
        Ok(client)
    }

    /// How many providers are cached now (never more than the capacity).
    pub fn cached_providers(&self) -> usize {
        self.lock_cache().len
    }

    /// The most providers this pool keeps.
    pub fn capacity(&self) -> usize {
        self.lock_cache().capacity
    }

    /// How many HTTP clients this pool has built: 0 before first use, then 1 for its life (2
    /// once a spec with `http2_prior_knowledge` was used too).
    pub fn http_clients_built(&self) -> usize {
        self.clients_built.load(Ordering::Relaxed)
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, Lru> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
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
    spec.kind.build(spec, http)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::kind::ProviderKind;

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
        assert_eq!(pool.http_clients_built(), 1);
    }

    #[test]
    fn different_timeouts_share_the_one_http_client() {
        let pool = ProviderPool::new();
        let mut slow = spec("k1");
        slow.timeouts.read = Duration::from_secs(999);
        slow.timeouts.connect = Duration::from_secs(7);
        pool.provider(&spec("k1")).unwrap();
        pool.provider(&slow).unwrap();
        assert_eq!(pool.cached_providers(), 2);
        assert_eq!(pool.http_clients_built(), 1);
    }

    #[test]
    fn http2_prior_knowledge_specs_share_a_second_client_and_get_their_own_providers() {
        let pool = ProviderPool::new();
        let plain = pool.provider(&spec("k1")).unwrap();
        let mut h2 = spec("k1");
        h2.http2_prior_knowledge = true;
        let multiplexed = pool.provider(&h2).unwrap();
        assert!(!Arc::ptr_eq(&plain, &multiplexed));
        let mut h2_slow = h2.clone();
        h2_slow.timeouts.read = Duration::from_secs(999);
        pool.provider(&h2_slow).unwrap();
        assert_eq!(pool.cached_providers(), 3);
        assert_eq!(pool.http_clients_built(), 2);
    }

    #[test]
    fn the_least_recently_used_provider_is_evicted_at_capacity() {
        let pool = ProviderPool::with_capacity(2);
        let a = pool.provider(&spec("a")).unwrap();
        pool.provider(&spec("b")).unwrap();
        // Touch `a`, so `b` is the oldest when `c` arrives.
        assert!(Arc::ptr_eq(&a, &pool.provider(&spec("a")).unwrap()));
        pool.provider(&spec("c")).unwrap();
        assert_eq!(pool.cached_providers(), 2);
        assert!(Arc::ptr_eq(&a, &pool.provider(&spec("a")).unwrap()));
        let b_again = pool.provider(&spec("b")).unwrap();
        // `b` was rebuilt (a new provider), which evicted `c`, the oldest now.
        assert_eq!(pool.cached_providers(), 2);
        assert!(Arc::ptr_eq(&b_again, &pool.provider(&spec("b")).unwrap()));
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
