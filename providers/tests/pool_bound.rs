//! F3 (issue 12): a pool fed 10,000 distinct provider specs (request overrides with distinct
//! timeouts) stays bounded: the cache never holds more than its capacity, every provider shares
//! one HTTP client, resident memory does not grow with the number of specs, and providers built
//! late still work.

mod support;

use serde_json::json;
use skillet_providers::{CallOptions, ProviderKind, ProviderPool};
use support::*;

/// Resident set size in bytes, from `/proc/self/statm` (Linux); `None` elsewhere.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[tokio::test]
async fn ten_thousand_distinct_overrides_keep_the_pool_and_memory_flat() {
    let server = server("rules:\n  - reply: {text: ok}\n").await;
    let pool = ProviderPool::new();
    let distinct = |i: u64| {
        spec(
            ProviderKind::OpenaiCompatible,
            &server,
            json!({"read_timeout_ms": 10_000 + i, "connect_timeout_ms": 1_000 + i}),
        )
    };
    // Warm up: the first client, the first connection, allocator arenas.
    for i in 0..(2 * ProviderPool::DEFAULT_CAPACITY as u64) {
        pool.provider(&distinct(i)).unwrap();
    }
    let before = rss_bytes();
    for i in 0..10_000u64 {
        let provider = pool.provider(&distinct(1_000_000 + i)).unwrap();
        if i % 2_500 == 0 {
            let reply = provider.chat(ask("hi"), CallOptions::default()).await;
            assert_eq!(reply.unwrap().text, "ok", "provider {i} works");
        }
        assert!(pool.cached_providers() <= pool.capacity());
    }
    assert_eq!(pool.cached_providers(), ProviderPool::DEFAULT_CAPACITY);
    assert_eq!(
        pool.http_clients_built(),
        1,
        "one client, whatever the timeouts"
    );
    if let (Some(before), Some(after)) = (before, rss_bytes()) {
        let grown = after.saturating_sub(before);
        // Unbounded, 10,000 specs with their own clients grew RSS by over 100 MiB; bounded,
        // the cache's turnover stays in the allocator's noise. The bound is generous on purpose.
        assert!(grown < 24 << 20, "RSS grew by {} KiB", grown >> 10);
    }
}
