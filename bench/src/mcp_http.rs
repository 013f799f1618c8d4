//! The `mcp-http` mode: a `skillet serve --http` child driven as a remote MCP host drives its
//! streamable HTTP endpoint (`/mcp`): `initialize` (the answer names the session), the
//! `notifications/initialized` notification, then one `POST /mcp` per bench call with the
//! session's headers, each answer read as the server's event stream until it ends.
//!
//! The client encodes its requests and parses every event's data with `serde_json`, as the
//! floors do; a call passes on the same check as the `mcp` mode's (`mcp::check_tool_result`).
//!
//! Not here: the child itself (`serve::start_http`), the driver (`modes`).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};

use crate::mcp::{PROTOCOL_VERSION, call_params, check_tool_result, initialize_params};
use crate::serve::{self, ServeChild};
use crate::workload::{ModelEndpoint, SkillFiles};

/// The header naming the session (streamable HTTP transport).
const SESSION_HEADER: &str = "mcp-session-id";
/// The header naming the negotiated revision, sent on every request after `initialize`.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// An initialized MCP session with a `skillet serve --http` child's `/mcp` endpoint.
#[derive(Debug, Clone)]
pub struct McpHttpClient {
    client: reqwest::Client,
    url: String,
    session: HeaderValue,
    next_id: Arc<AtomicU64>,
}

/// `skillet serve --http`, with an initialized MCP session on `/mcp`.
pub async fn start(
    skillet: &Path,
    files: &SkillFiles,
    model: &ModelEndpoint,
    max_calls: usize,
) -> anyhow::Result<(ServeChild, McpHttpClient)> {
    let (child, a2e) = serve::start_http(skillet, files, model, max_calls).await?;
    match initialize(&a2e).await {
        Ok(client) => Ok((child, client)),
        Err(e) => {
            let tail = child.stderr_tail();
            child.stop().await;
            anyhow::bail!("MCP over HTTP did not start: {e:#}\nskillet stderr:\n{tail}")
        }
    }
}

/// `initialize` and `notifications/initialized` on the `/mcp` beside `a2e`.
async fn initialize(a2e: &str) -> anyhow::Result<McpHttpClient> {
    let base = a2e
        .strip_suffix("/a2e")
        .ok_or_else(|| anyhow::anyhow!("the A2E URL {a2e} does not end in /a2e"))?;
    // The bench's own requests: HTTP/1.1, as hosts send them (as in `wire`).
    let client = crate::modes::http_client(false)?;
    let url = format!("{base}/mcp");
    let body = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": initialize_params(),
    });
    let response = post(&client, &url, None, &body).await?;
    let session = response
        .headers()
        .get(SESSION_HEADER)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("initialize answered without {SESSION_HEADER}"))?;
    let events = response.bytes().await?;
    let answer = answer_to(&events, 0).map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        answer.get("result").is_some(),
        "MCP initialize was refused: {answer}"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = post(&client, &url, Some(&session), &initialized).await?;
    anyhow::ensure!(
        accepted.status() == reqwest::StatusCode::ACCEPTED,
        "notifications/initialized answered {}",
        accepted.status()
    );
    Ok(McpHttpClient {
        client,
        url,
        session,
        next_id: Arc::new(AtomicU64::new(1)),
    })
}

/// One JSON-RPC message posted to `/mcp`; a status other than 2xx is an error with the body.
async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&HeaderValue>,
    message: &Value,
) -> anyhow::Result<reqwest::Response> {
    let mut request = client
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .body(serde_json::to_vec(message)?);
    if let Some(session) = session {
        request = request
            .header(SESSION_HEADER, session)
            .header(VERSION_HEADER, PROTOCOL_VERSION);
    }
    let response = request.send().await?;
    if !response.status().is_success() {
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        anyhow::bail!("POST /mcp answered {status}: {body}");
    }
    Ok(response)
}

impl McpHttpClient {
    /// One `mcp-http` call: `tools/call` of the bench skill, its result checked.
    pub async fn call(&self) -> Result<(), String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": call_params(),
        });
        let response = post(&self.client, &self.url, Some(&self.session), &message)
            .await
            .map_err(|e| format!("{e:#}"))?;
        let events = response.bytes().await.map_err(|e| format!("read: {e}"))?;
        check_tool_result(&answer_to(&events, id)?)
    }
}

/// The answer to request `id` in an answer body: the event stream's messages (each event's
/// `data` lines joined, as SSE defines), or one JSON message when the server answered JSON.
fn answer_to(body: &[u8], id: u64) -> Result<Value, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("answer is not UTF-8: {e}"))?;
    let is_answer = |m: &Value| m.get("method").is_none() && m.get("id") == Some(&json!(id));
    if let Ok(message) = serde_json::from_str::<Value>(text) {
        return if is_answer(&message) {
            Ok(message)
        } else {
            Err(format!("not the awaited answer: {text}"))
        };
    }
    let mut data = String::new();
    for line in text.lines().chain([""]) {
        if let Some(value) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        } else if line.is_empty() && !data.is_empty() {
            let event = std::mem::take(&mut data);
            if let Ok(message) = serde_json::from_str::<Value>(&event)
                && is_answer(&message)
            {
                return Ok(message);
            }
        }
    }
    Err(format!("no answer to request {id} in: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_found_among_the_events_by_id() {
        let body = concat!(
            "data: \nid: 0/0\nretry: 3000\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\nid: 7/0\n\n",
        );
        let answer = answer_to(body.as_bytes(), 7).unwrap();
        assert_eq!(answer["result"]["ok"], true);
        assert!(
            answer_to(body.as_bytes(), 8)
                .unwrap_err()
                .contains("no answer")
        );
    }

    #[test]
    fn data_split_over_lines_is_joined_and_the_last_event_needs_no_blank_line() {
        let body = "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":3,\"result\":{}}";
        assert_eq!(answer_to(body.as_bytes(), 3).unwrap()["id"], 3);
    }

    #[test]
    fn a_plain_json_answer_is_accepted_and_a_wrong_one_refused() {
        let body = br#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
        assert_eq!(answer_to(body, 2).unwrap()["id"], 2);
        assert!(answer_to(body, 5).unwrap_err().contains("not the awaited"));
        assert!(answer_to(b"\xff", 1).unwrap_err().contains("UTF-8"));
    }
}
