//! Issue 30: a burst of calls leaves at most `POOL_MAX_IDLE_PER_HOST` keep-alive connections
//! open for reuse (a burst of 200 calls used to leave 200 sockets open for 90 s). Its own test
//! binary: the burst's sockets must not count against another test's memory figures.

mod support;

use serde_json::json;
use skillet_providers::{CallOptions, ProviderKind, ProviderPool};
use support::*;

#[tokio::test]
async fn a_burst_leaves_at_most_the_idle_bound_of_connections_open_for_reuse() {
    use std::time::Duration;
    let scenario = mock_llm::Scenario::from_yaml_str("rules:\n  - reply: {text: ok}\n").unwrap();
    let server = mock_llm::MockServer::start(
        mock_llm::MockConfig::default()
            .with_scenario(scenario)
            .with_latency(Duration::from_millis(200)),
    )
    .await
    .unwrap();
    let provider = ProviderPool::new()
        .provider(&spec(ProviderKind::OpenaiCompatible, &server, json!({})))
        .unwrap();
    let burst = 3 * skillet_providers::POOL_MAX_IDLE_PER_HOST;
    let run_burst = || async {
        let calls = (0..burst).map(|_| provider.chat(ask("hi"), CallOptions::default()));
        for reply in futures::future::join_all(calls).await {
            assert_eq!(reply.unwrap().text, "ok");
        }
    };
    run_burst().await;
    let first = server.connections_accepted();
    assert_eq!(first, burst as u64, "one connection per call in flight");
    // The second burst can reuse only the connections the pool kept idle.
    run_burst().await;
    let opened_again = server.connections_accepted() - first;
    let kept = burst as u64 - opened_again;
    assert!(
        kept <= skillet_providers::POOL_MAX_IDLE_PER_HOST as u64,
        "{kept} idle connections were kept for reuse"
    );
    server.shutdown().await;
}
