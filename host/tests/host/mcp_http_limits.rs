//! G2 and G3 of issue 30: `/mcp` over streamable HTTP keeps at most `max_sessions` sessions
//! (an `initialize` over the cap closes the longest idle session, or gets HTTP 503 with a
//! JSON-RPC error when none is idle) and holds at most `max_streams_per_session` standalone
//! `GET /mcp` streams per session and `max_streams` in total (503 beyond), while other routes
//! still answer. Driven with plain HTTP requests against the real router on a socket.
//!
//! Not here: the MCP protocol itself (`mcp`, the Python SDK tests).

use std::time::Duration;

use serde_json::{Value, json};
use skillet_host::HostCore;
use skillet_host::mcp::{McpHttpOptions, McpLimits, http_router};
use tokio_util::sync::CancellationToken;

use super::support::echo_service;

/// Serves `/mcp` (and `/healthz`) within `limits` on a loopback port; returns its base URL.
async fn serve(limits: McpLimits) -> (String, CancellationToken) {
    let core = HostCore::new(echo_service(), 8);
    let stop = CancellationToken::new();
    let options = McpHttpOptions {
        max_body_bytes: 1 << 20,
        limits,
    };
    let router = http_router(&core, &options, stop.clone())
        .route("/healthz", axum::routing::get(|| async { "ok" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let until = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(until.cancelled_owned())
            .await
    });
    (url, stop)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// `initialize`; the session id, or the refusal's status and body.
async fn initialize(http: &reqwest::Client, url: &str) -> Result<String, (u16, Value)> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}
    });
    let response = http
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    match session {
        Some(id) if status == 200 => {
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            http.post(format!("{url}/mcp"))
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", &id)
                .header("mcp-protocol-version", "2025-06-18")
                .json(&initialized)
                .send()
                .await
                .unwrap();
            Ok(id)
        }
        _ => Err((status, response.json().await.unwrap_or(Value::Null))),
    }
}

/// Opens a standalone stream; the open response (kept to hold the stream) or its status.
async fn open_stream(
    http: &reqwest::Client,
    url: &str,
    session: &str,
) -> Result<reqwest::Response, u16> {
    let response = http
        .get(format!("{url}/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    match response.status().as_u16() {
        200 => Ok(response),
        status => Err(status),
    }
}

#[tokio::test]
async fn sessions_over_the_cap_evict_idle_ones_first_then_get_503() {
    let (url, stop) = serve(McpLimits {
        max_sessions: 3,
        max_streams: 16,
        max_streams_per_session: 2,
    })
    .await;
    let http = client();
    // Five initializes with three slots: idle sessions make room, nothing grows.
    let mut sessions = Vec::new();
    for _ in 0..5 {
        sessions.push(
            initialize(&http, &url)
                .await
                .expect("an idle session makes room"),
        );
    }
    // The oldest sessions were the ones closed.
    assert_eq!(
        open_stream(&http, &url, &sessions[0]).await.unwrap_err(),
        404,
        "the longest idle session was evicted"
    );
    // Three busy sessions (each holding a stream): the next initialize is refused.
    let mut held = Vec::new();
    for session in &sessions[2..] {
        held.push(
            open_stream(&http, &url, session)
                .await
                .expect("stream opens"),
        );
    }
    let (status, body) = initialize(&http, &url).await.unwrap_err();
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["jsonrpc"], "2.0");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sessions"),
        "{body}"
    );
    // Once a session is idle again, an initialize gets in.
    drop(held.pop());
    let mut admitted = false;
    for _ in 0..200 {
        if initialize(&http, &url).await.is_ok() {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(admitted, "a session freed by its stream's end is evictable");
    stop.cancel();
}

#[tokio::test]
async fn standalone_streams_are_capped_per_session_and_in_total_and_health_still_answers() {
    let (url, stop) = serve(McpLimits {
        max_sessions: 16,
        max_streams: 3,
        max_streams_per_session: 2,
    })
    .await;
    let http = client();
    let a = initialize(&http, &url).await.unwrap();
    let b = initialize(&http, &url).await.unwrap();
    let mut held = vec![
        open_stream(&http, &url, &a).await.unwrap(),
        open_stream(&http, &url, &a).await.unwrap(),
    ];
    assert_eq!(
        open_stream(&http, &url, &a).await.unwrap_err(),
        503,
        "per session"
    );
    held.push(open_stream(&http, &url, &b).await.unwrap());
    assert_eq!(
        open_stream(&http, &url, &b).await.unwrap_err(),
        503,
        "in total"
    );
    // Calls and health checks are a separate budget.
    let health = http.get(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(initialize(&http, &url).await.is_ok());
    // A stream that ends gives its slot back.
    drop(held.pop());
    let mut reopened = false;
    for _ in 0..200 {
        if open_stream(&http, &url, &b)
            .await
            .map(|r| held.push(r))
            .is_ok()
        {
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(reopened);
    stop.cancel();
}

#[test]
fn the_default_stream_budget_leaves_half_the_connections_to_calls() {
    let limits = McpLimits::default().for_connections(1024);
    assert!(limits.max_streams <= 512);
    assert!(limits.max_sessions >= 1);
}
