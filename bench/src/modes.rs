//! The ways of running the workload, and the driver that runs N calls at concurrency C
//! through any of them.
//!
//! - `raw` — the parsing floor, what any minimal client must do: the HTTP requests the engine
//!   sends for one call (captured once from a mock journal by [`capture`]), each body built
//!   with `serde_json` from a `Value`, each answer parsed into a `Value`, by a bare `reqwest`
//!   client.
//! - `replay` — the lower floor: the same requests replayed as captured bytes, each answer
//!   read to the end and searched for a substring, nothing encoded or parsed.
//! - `engine` — `Executor::call` in this process.
//! - `wire`, `stdio`, `mcp`, `mcp-http` — through a `skillet serve` child (see `serve`, `mcp`,
//!   `mcp_http`).
//! - `relay`, `stdio-relay`, `mcp-relay` — the transport floors for `wire` (and `mcp-http`),
//!   `stdio` and `mcp`: minimal server children doing the `raw` floor's requests (see `relay`,
//!   `stdio_relay`).
//!
//! Every call's answer is checked (the engine modes: a successful result equal to
//! [`workload::expected_output`]; `raw`, `replay`: three 200 answers, the last carrying the
//! final JSON),
//! so a fast run of failures cannot pass for a fast run.
//!
//! Not here: the `skillet serve` children (`serve`), measurement (`measure`).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mock_llm::{MockConfig, MockServer, Scenario};
use skillet_engine::protocol::SkillCallResponse;
use skillet_engine::service::SkillService;
use tokio_util::sync::CancellationToken;

use crate::workload::{self, SkillFiles};

/// What a driven run produced.
#[derive(Debug)]
pub struct Driven {
    /// Latency of every call (failed ones included), unsorted.
    pub latencies: Vec<Duration>,
    /// How many calls failed.
    pub failures: u64,
    /// The first failure's reason.
    pub first_failure: Option<String>,
    /// Wall time from the first call's start to the last call's end.
    pub wall: Duration,
}

/// Runs `calls` calls of `call(i)` with at most `concurrency` in flight.
pub async fn drive<F, Fut>(calls: u64, concurrency: u64, call: F) -> Driven
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let call = Arc::new(call);
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency.clamp(1, calls.max(1)) {
        let (call, next) = (Arc::clone(&call), Arc::clone(&next));
        workers.spawn(async move {
            let mut latencies = Vec::new();
            let mut failures = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls {
                    break;
                }
                let t0 = Instant::now();
                let outcome = call(i).await;
                latencies.push(t0.elapsed());
                if let Err(reason) = outcome {
                    failures.push(reason);
                }
            }
            (latencies, failures)
        });
    }
    let mut driven = Driven {
        latencies: Vec::with_capacity(usize::try_from(calls).unwrap_or(0)),
        failures: 0,
        first_failure: None,
        wall: Duration::ZERO,
    };
    while let Some(joined) = workers.join_next().await {
        match joined {
            Ok((latencies, failures)) => {
                driven.latencies.extend(latencies);
                driven.failures += failures.len() as u64;
                if driven.first_failure.is_none() {
                    driven.first_failure = failures.into_iter().next();
                }
            }
            Err(e) => {
                driven.failures += 1;
                driven
                    .first_failure
                    .get_or_insert(format!("worker panicked: {e}"));
            }
        }
    }
    driven.wall = started.elapsed();
    driven
}

/// Checks one engine answer: a successful result whose data is the expected output.
pub fn check_response(response: &SkillCallResponse) -> Result<(), String> {
    if let Some(error) = &response.error {
        return Err(format!("rejected: {:?}: {}", error.code, error.message));
    }
    let Some(result) = &response.data else {
        return Err("response without data or error".into());
    };
    if !result.success {
        return Err(format!(
            "failed: {:?}: {}",
            result.error_code,
            result.error.as_deref().unwrap_or("")
        ));
    }
    if result.data.as_ref() != Some(&workload::expected_output()) {
        return Err(format!("unexpected output: {:?}", result.data));
    }
    Ok(())
}

/// One HTTP request of a call, as the engine sent it.
#[derive(Debug, Clone)]
pub struct CapturedRequest {
    /// Request path (`/v1/chat/completions`).
    pub path: String,
    /// The JSON body, serialized in the order it arrived.
    pub body: String,
    /// The same body as a JSON value, for the parsing floor to serialize per call.
    pub value: serde_json::Value,
}

/// Runs one call through the executor against a fresh mock with a full journal and returns the
/// chat requests it made, in order (one per turn).
pub async fn capture(files: &SkillFiles) -> anyhow::Result<Vec<CapturedRequest>> {
    let server = MockServer::start(
        MockConfig::default().with_scenario(Scenario::from_yaml_str(workload::SCENARIO)?),
    )
    .await?;
    let model = workload::ModelEndpoint {
        url: server.base_url(),
        http2: false,
    };
    let executor = workload::executor(files, &model)?;
    let response = executor
        .call(workload::request(), None, CancellationToken::new())
        .await;
    check_response(&response).map_err(|e| anyhow::anyhow!("capture call: {e}"))?;
    let requests: Vec<CapturedRequest> = server
        .journal()
        .into_iter()
        .filter(|entry| entry.endpoint == "openai.chat")
        .map(|entry| CapturedRequest {
            path: entry.path,
            body: entry.body.to_string(),
            value: entry.body,
        })
        .collect();
    server.shutdown().await;
    anyhow::ensure!(
        requests.len() as u64 == workload::TURNS_PER_CALL,
        "the engine made {} model requests for one call, expected {}",
        requests.len(),
        workload::TURNS_PER_CALL
    );
    Ok(requests)
}

/// A bare client with a connection pool as large as the concurrency, like the engine's; with
/// `http2`, one HTTP/2 connection (prior knowledge) carrying every call, as the engine's
/// provider does with `http2_prior_knowledge`.
pub fn http_client(http2: bool) -> anyhow::Result<reqwest::Client> {
    let builder = reqwest::Client::builder().pool_idle_timeout(Duration::from_secs(90));
    let builder = if http2 {
        // The engine's windows (`skillet_providers` transport): room for every answer at once.
        builder
            .http2_prior_knowledge()
            .http2_initial_connection_window_size(64 << 20)
            .http2_initial_stream_window_size(4 << 20)
    } else {
        builder
    };
    Ok(builder.build()?)
}

/// One `replay` call: the captured bytes in order, each answer read to the end.
pub async fn replay_call(
    client: &reqwest::Client,
    base_url: &str,
    requests: &[CapturedRequest],
) -> Result<(), String> {
    let mut last = String::new();
    for request in requests {
        let response = client
            .post(format!("{base_url}{}", request.path))
            .header("content-type", "application/json")
            .bearer_auth("bench-key")
            .body(request.body.clone())
            .send()
            .await
            .map_err(|e| format!("send: {:#}", anyhow::Error::new(e)))?;
        let status = response.status();
        last = response
            .text()
            .await
            .map_err(|e| format!("read body: {:#}", anyhow::Error::new(e)))?;
        if !status.is_success() {
            return Err(format!("HTTP {status}: {last}"));
        }
    }
    // The final answer carries the JSON the engine would validate.
    if !last.contains("42 + 1 = 43") {
        return Err(format!("unexpected final answer: {last}"));
    }
    Ok(())
}

/// One `raw` call, the parsing floor: the model requests of [`raw_turns`], the final answer's
/// JSON compared with the expected output.
pub async fn raw_call(
    client: &reqwest::Client,
    base_url: &str,
    requests: &[CapturedRequest],
) -> Result<(), String> {
    let answer = raw_turns(client, base_url, requests).await?;
    if answer != workload::expected_output() {
        return Err(format!("unexpected final answer: {answer}"));
    }
    Ok(())
}

/// The parsing floor's model requests for one call: each request body serialized from its JSON
/// value, each answer parsed into a `Value`; returns the JSON the final answer's content carries
/// (what the engine would validate).
pub async fn raw_turns(
    client: &reqwest::Client,
    base_url: &str,
    requests: &[CapturedRequest],
) -> Result<serde_json::Value, String> {
    let mut last = serde_json::Value::Null;
    for request in requests {
        let body = serde_json::to_vec(&request.value).map_err(|e| format!("encode: {e}"))?;
        let post = client
            .post(format!("{base_url}{}", request.path))
            .bearer_auth("bench-key")
            .body(body);
        let bytes = post_json(post).await?;
        last = serde_json::from_slice(&bytes).map_err(|e| format!("parse answer: {e}"))?;
    }
    let content = last
        .pointer("/choices/0/message/content")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| format!("final answer has no content: {last}"))?;
    serde_json::from_str(content).map_err(|e| format!("final content: {e}"))
}

/// Sends `post` (URL, body and any auth already set) as JSON and reads the whole answer as
/// bytes, as every client in the bench does (a strict UTF-8 check, where one is needed, is the
/// caller's: `text()` would decode lossily, a byte at a time); a status other than 2xx is an
/// error carrying the body.
pub async fn post_json(
    post: reqwest::RequestBuilder,
) -> Result<impl std::ops::Deref<Target = [u8]>, String> {
    let response = post
        .header("content-type", "application/json")
        .send()
        .await
        .map_err(|e| format!("send: {:#}", anyhow::Error::new(e)))?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| format!("read body: {:#}", anyhow::Error::new(e)))?;
    if !status.is_success() {
        return Err(format!(
            "HTTP {status}: {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    Ok(bytes)
}
