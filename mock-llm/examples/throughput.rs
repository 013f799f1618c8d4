//! Benchmark (not a test): requests per second for non-streamed and streamed OpenAI chat
//! against an in-process mock-llm on loopback.
//!
//! Reproduce: `cargo run --release -p mock-llm --example throughput -- [SECONDS] [CONCURRENCY]`
//! (defaults: 3 s per phase, 16 concurrent clients).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use mock_llm::{MockConfig, MockServer, Scenario};
use serde_json::json;

const SCENARIO: &str = "rules:\n  - reply: {text: The quick brown fox jumps over the lazy dog.}\n";

async fn phase(url: &str, stream: bool, secs: u64, concurrency: usize) -> anyhow::Result<f64> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .build()?;
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let body = json!({"model":"bench","stream":stream,"messages":[{"role":"user","content":"hi"}]});
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (client, url, body, done) =
            (client.clone(), url.to_owned(), body.clone(), done.clone());
        workers.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let r = client
                    .post(&url)
                    .json(&body)
                    .send()
                    .await?
                    .error_for_status()?;
                let mut bytes = r.bytes_stream();
                while let Some(chunk) = bytes.next().await {
                    chunk?;
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            anyhow::Ok(())
        }));
    }
    let started = Instant::now();
    for w in workers {
        w.await??;
    }
    #[allow(clippy::cast_precision_loss)]
    let rate = done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
    Ok(rate)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().map_or(Ok(3), |s| s.parse())?;
    let concurrency: usize = args.next().map_or(Ok(16), |s| s.parse())?;
    let scenario = Scenario::from_yaml_str(SCENARIO)?;
    let server = MockServer::start(MockConfig::default().with_scenario(scenario)).await?;
    let url = format!("{}/v1/chat/completions", server.base_url());
    let plain = phase(&url, false, secs, concurrency).await?;
    let streamed = phase(&url, true, secs, concurrency).await?;
    server.shutdown().await;
    println!(
        "mock-llm throughput, OpenAI chat on loopback, {concurrency} concurrent clients, {secs} s per phase"
    );
    println!("  non-streaming: {plain:>9.0} requests/s");
    println!("  streaming:     {streamed:>9.0} requests/s (11 SSE frames each)");
    println!(
        "reproduce: cargo run --release -p mock-llm --example throughput -- {secs} {concurrency}"
    );
    Ok(())
}
