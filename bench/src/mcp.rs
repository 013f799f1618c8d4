//! The `mcp` mode: a `skillet serve --mcp` child driven as an MCP host drives it — JSON-RPC
//! lines over its stdin and stdout: `initialize`, `notifications/initialized`, then one
//! `tools/call` per bench call (no `progressToken`; the session's default log level unless
//! `--mcp-log-level` sets one), answers routed to their callers by id, notifications read and
//! dropped.
//!
//! The client encodes its requests and parses every line it reads with `serde_json`, as the
//! floors do; a call passes when its result is not `isError` and its `structuredContent` is the
//! expected output.
//!
//! [`start`] takes the child's command, so the `mcp-relay` floor's child (`stdio_relay`) is
//! driven by the very code that drives `skillet serve --mcp`.
//!
//! Not here: the child itself (`serve::start_piped`), the driver (`modes`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};

use crate::serve::{self, ServeChild};
use crate::workload;

/// The MCP revision the client asks for (rmcp answers with the one it speaks).
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// An MCP session with a stdio child (`skillet serve --mcp`, or the `mcp-relay` floor).
#[derive(Debug, Clone)]
pub struct McpClient {
    lines: mpsc::UnboundedSender<String>,
    waiters: Waiters,
    next_id: Arc<AtomicU64>,
}

/// Starts `command` (`skillet serve --mcp`, or the `mcp-relay` floor) as `serve::start_piped`
/// does and initializes the session (then `logging/setLevel` with `log_level`, if given);
/// returns the child and a client for it.
pub async fn start(
    command: Command,
    log_level: Option<&str>,
) -> anyhow::Result<(ServeChild, McpClient)> {
    let (child, lines, stdout) = serve::start_piped(command)?;
    let client = McpClient::over(lines, stdout);
    match tokio::time::timeout(Duration::from_secs(30), client.initialize(log_level)).await {
        Ok(Ok(())) => Ok((child, client)),
        Ok(Err(e)) => {
            let tail = child.stderr_tail();
            child.stop().await;
            anyhow::bail!("{e:#}\nthe child's stderr:\n{tail}");
        }
        Err(_) => {
            child.stop().await;
            anyhow::bail!("the MCP child did not finish initializing within 30 s");
        }
    }
}

impl McpClient {
    /// A client sending its lines to `lines` and reading the server's from `answers` (the
    /// child's stdout): answers routed to their callers by id, the rest dropped.
    pub(crate) fn over(
        lines: mpsc::UnboundedSender<String>,
        answers: impl AsyncRead + Unpin + Send + 'static,
    ) -> McpClient {
        let waiters: Waiters = Arc::default();
        let routed = Arc::clone(&waiters);
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(answers).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                // Requests and notifications from the server carry a method; answers do not.
                if message.get("method").is_some() {
                    continue;
                }
                let Some(id) = message.get("id").and_then(Value::as_u64) else {
                    continue;
                };
                let waiter = routed.lock().ok().and_then(|mut w| w.remove(&id));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(message);
                }
            }
            // The child is gone: callers still waiting see their sender dropped.
            if let Ok(mut w) = routed.lock() {
                w.clear();
            }
        });
        McpClient {
            lines,
            waiters,
            next_id: Arc::new(AtomicU64::new(0)),
        }
    }

    /// `initialize`, `notifications/initialized`, then `logging/setLevel` with `log_level`.
    pub(crate) async fn initialize(&self, log_level: Option<&str>) -> anyhow::Result<()> {
        let answer = self
            .request("initialize", initialize_params())
            .await
            .map_err(|e| anyhow::anyhow!("MCP initialize failed: {e}"))?;
        anyhow::ensure!(
            answer.get("result").is_some(),
            "MCP initialize was refused: {answer}"
        );
        self.notify("notifications/initialized")?;
        if let Some(level) = log_level {
            let answer = self
                .request("logging/setLevel", json!({ "level": level }))
                .await
                .map_err(|e| anyhow::anyhow!("logging/setLevel: {e}"))?;
            anyhow::ensure!(
                answer.get("result").is_some(),
                "logging/setLevel {level} was refused: {answer}"
            );
        }
        Ok(())
    }

    /// Sends a request and waits for its answer (a `result` or an `error`).
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = serde_json::to_string(&json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params,
        }))
        .map_err(|e| format!("encode: {e}"))?;
        let (tx, rx) = oneshot::channel();
        self.waiters
            .lock()
            .map_err(|_| "waiter table poisoned".to_owned())?
            .insert(id, tx);
        self.lines
            .send(line)
            .map_err(|_| "the child's stdin is closed".to_owned())?;
        rx.await
            .map_err(|_| "the child ended before answering".to_owned())
    }

    fn notify(&self, method: &str) -> anyhow::Result<()> {
        let line = serde_json::to_string(&json!({"jsonrpc": "2.0", "method": method}))?;
        self.lines
            .send(line)
            .map_err(|_| anyhow::anyhow!("the child's stdin is closed"))
    }

    /// One `mcp` call: `tools/call` of the bench skill, its result checked.
    pub async fn call(&self) -> Result<(), String> {
        let answer = self.request("tools/call", call_params()).await?;
        check_tool_result(&answer)
    }
}

/// The bench client's `initialize` params (both MCP modes).
pub(crate) fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "skillet-bench", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// The `tools/call` params of one bench call (both MCP modes).
pub(crate) fn call_params() -> Value {
    json!({"name": workload::SKILL, "arguments": workload::arguments()})
}

/// A `tools/call` answer passes when it is a result, not `isError`, whose `structuredContent`
/// is the expected output.
pub(crate) fn check_tool_result(answer: &Value) -> Result<(), String> {
    let Some(result) = answer.get("result") else {
        return Err(format!("tools/call failed: {answer}"));
    };
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Err(format!("tool error: {result}"));
    }
    if result.get("structuredContent") != Some(&workload::expected_output()) {
        return Err(format!("unexpected output: {result}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_successful_result_with_the_expected_output_passes() {
        let output = workload::expected_output();
        let good = json!({"id": 1, "result": {"structuredContent": output, "isError": false}});
        assert_eq!(check_tool_result(&good), Ok(()));
        let refused = json!({"id": 1, "error": {"code": -32602, "message": "unknown tool"}});
        assert!(check_tool_result(&refused).unwrap_err().contains("failed"));
        let failed = json!({"id": 1, "result": {"content": [], "isError": true}});
        assert!(
            check_tool_result(&failed)
                .unwrap_err()
                .contains("tool error")
        );
        let wrong = json!({"id": 1, "result": {"structuredContent": {"result": 44}}});
        assert!(
            check_tool_result(&wrong)
                .unwrap_err()
                .contains("unexpected")
        );
    }
}
