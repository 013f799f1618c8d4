//! The `stdio-relay` and `mcp-relay` modes, the transport floors for `stdio` and `mcp`: the
//! least any skill server over a child's pipes must do for the bench call, in a child process
//! as `skillet serve --stdio` / `--mcp` is.
//!
//! The child (`skillet-bench stdio-relay` or `skillet-bench mcp-relay`, this binary again) runs
//! on a multi-thread tokio runtime with one worker, as `skillet serve` does for its stdio
//! transports (`cli/src/runtime.rs`), and reads its stdin and writes its stdout as non-blocking
//! pipes on the event loop, as `skillet serve` does (`cli/src/std_pipes.rs`). It reads lines,
//! parses each into a `serde_json::Value` and runs each call as a task of its own: the `raw`
//! floor's three model requests (the HTTP `relay`'s client set-up, `relay::Floor`), then one
//! answer line, written by a single writer task that serializes whatever answers are queued
//! into one buffer with `serde_json` and writes and flushes it at once (`skillet serve`'s
//! batching, `host/src/stdio.rs`). Answers go out as calls finish, in any order.
//!
//! - **`stdio-relay`** (A2E JSON Lines): each `skill/call/req` line is answered with the real
//!   `skill/call/resp`'s shape and size (the recorded 3-turn answer, its `req_id`s set to the
//!   call's id, as the HTTP `relay` answers), the final model answer's JSON as its output.
//! - **`mcp-relay`** (MCP JSON-RPC lines): `initialize` is answered with a minimal result (the
//!   client's protocol version, `tools` and `logging` capabilities, a server name),
//!   `logging/setLevel` and `ping` with `{}`, notifications are ignored, and each `tools/call`
//!   of the bench skill is answered as `skillet serve --mcp` answers it
//!   (`host/src/mcp/answer.rs`): one text block with the output as JSON, the output as
//!   `structuredContent`, `isError: false`. It sends **no notifications**: a minimal server need
//!   not, while the `mcp` mode at the session's default log level also pays for 8
//!   `notifications/message` per call (`--mcp-log-level warning` leaves them out, for a like
//!   with like comparison).
//!
//! The children are driven by the clients of the modes they are the floors of (`serve`'s
//! `StdioClient`, `mcp`'s `McpClient`, given this child's command), so the client's share is
//! the same and `stdio ÷ stdio-relay`, `mcp ÷ mcp-relay` are what Skillet costs over the least
//! any skill server over pipes must do. The floors make no ids or timestamps per call (a real
//! server does), so they are if anything low.
//!
//! Not here: the clients (`serve`, `mcp`), the model requests and the recorded answer
//! (`relay::Floor`), the HTTP floor (`relay`).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use skillet_engine::protocol::{self, ErrorCode, Message, ProtocolError, SkillCallResponse};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::relay::Floor;
use crate::workload;

/// The protocol a stdio floor speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// A2E JSON Lines, as `skillet serve --stdio` (the `stdio-relay` mode).
    A2e,
    /// MCP JSON-RPC lines, as `skillet serve --mcp` (the `mcp-relay` mode).
    Mcp,
}

/// The runtime of a stdio floor child: multi-threaded with one worker, as `skillet serve`'s
/// stdio transports run.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?)
}

/// `skillet-bench stdio-relay` / `mcp-relay`: serves `dialect` on stdin and stdout for the model
/// at `mock_url` with the captured requests in `requests_file`, until stdin ends and every call
/// read has been answered.
pub async fn serve_child(
    mock_url: String,
    requests_file: &Path,
    http2: bool,
    dialect: Dialect,
) -> anyhow::Result<()> {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let floor = Floor::load(mock_url, requests_file, http2)?;
    // The bench gives its child pipes of its own, so making them non-blocking touches nothing
    // else; a terminal or a file falls back to tokio's blocking-thread stdin and stdout.
    let input: Box<dyn AsyncRead + Send + Unpin> = match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let output: Box<dyn AsyncWrite + Send + Unpin> = match std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    serve_lines(input, output, Arc::new(floor), dialect).await
}

/// What to do with one input line.
#[derive(Debug, PartialEq)]
enum Step {
    /// Write this answer now.
    Answer(Value),
    /// Make the model requests, then answer the call with this id.
    Call(Value),
    /// Nothing to answer (a notification, a blank line).
    Ignore,
}

/// Serves `dialect` on `input` and `output` until `input` ends and every call has been answered.
async fn serve_lines(
    input: impl AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin + Send + 'static,
    floor: Arc<Floor>,
    dialect: Dialect,
) -> anyhow::Result<()> {
    let (answers, queued) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(write_lines(queued, output));
    let mut lines = tokio::io::BufReader::new(input).lines();
    while let Some(line) = lines.next_line().await? {
        let step = match dialect {
            Dialect::A2e => a2e_step(&line),
            Dialect::Mcp => mcp_step(&line),
        };
        match step {
            Step::Answer(answer) => {
                let _ = answers.send(answer);
            }
            Step::Call(id) => {
                let (floor, answers) = (Arc::clone(&floor), answers.clone());
                tokio::spawn(async move {
                    let outcome = floor.turns().await;
                    let _ = answers.send(match dialect {
                        Dialect::A2e => a2e_answer(&floor, &id, outcome),
                        Dialect::Mcp => mcp_answer(id, outcome),
                    });
                });
            }
            Step::Ignore => {}
        }
    }
    // The writer ends once the last call in flight has sent its answer.
    drop(answers);
    writer.await??;
    Ok(())
}

/// Writes the answers sent to it, one per line: whatever is queued is serialized into one
/// buffer, written and flushed at once.
async fn write_lines(
    mut queued: mpsc::UnboundedReceiver<Value>,
    mut output: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    let mut batch = Vec::with_capacity(16 * 1024);
    while let Some(answer) = queued.recv().await {
        batch.clear();
        serde_json::to_writer(&mut batch, &answer)?;
        batch.push(b'\n');
        while let Ok(answer) = queued.try_recv() {
            serde_json::to_writer(&mut batch, &answer)?;
            batch.push(b'\n');
        }
        output.write_all(&batch).await?;
        output.flush().await?;
    }
    Ok(())
}

/// An A2E line: a `skill/call/req` with an id is a call; anything else is answered with a
/// rejection (the bench never sends one).
fn a2e_step(line: &str) -> Step {
    if line.trim().is_empty() {
        return Step::Ignore;
    }
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return Step::Answer(a2e_rejection("", ErrorCode::ParseError, "not JSON"));
    };
    match (
        message.get("type").and_then(Value::as_str),
        message.get("id"),
    ) {
        (Some("skill/call/req"), Some(id @ Value::String(_))) => Step::Call(id.clone()),
        (_, id) => Step::Answer(a2e_rejection(
            id.and_then(Value::as_str).unwrap_or(""),
            ErrorCode::InvalidMessage,
            "this floor answers skill/call/req alone",
        )),
    }
}

/// A call's A2E answer: the recorded answer's shape carrying the output, or a rejection saying
/// why the model requests failed.
fn a2e_answer(floor: &Floor, id: &Value, outcome: Result<Value, String>) -> Value {
    let id = id.as_str().unwrap_or("");
    match outcome {
        Ok(data) => floor.a2e_answer(id, data),
        Err(e) => a2e_rejection(id, ErrorCode::RuntimeError, &e),
    }
}

fn a2e_rejection(id: &str, code: ErrorCode, message: &str) -> Value {
    let response =
        SkillCallResponse::rejected(id, workload::SKILL, ProtocolError::new(code, message));
    serde_json::from_str(&protocol::encode(&Message::CallResponse(response))).unwrap_or_default()
}

/// An MCP line: requests other than `tools/call` answered at once, notifications ignored.
fn mcp_step(line: &str) -> Step {
    if line.trim().is_empty() {
        return Step::Ignore;
    }
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return Step::Answer(rpc_error(&Value::Null, -32700, "Parse error"));
    };
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Step::Ignore; // an answer to a request of ours: we send none
    };
    let Some(id) = message.get("id") else {
        return Step::Ignore; // a notification: `notifications/initialized`, …
    };
    let params = message.get("params").unwrap_or(&Value::Null);
    match method {
        "initialize" => Step::Answer(rpc_result(
            id,
            json!({
                "protocolVersion": params
                    .get("protocolVersion")
                    .cloned()
                    .unwrap_or_else(|| Value::from(crate::mcp::PROTOCOL_VERSION)),
                // `logging` because `logging/setLevel` is answered (the `mcp` mode may send it).
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "skillet-bench-mcp-relay", "version": env!("CARGO_PKG_VERSION")},
            }),
        )),
        "logging/setLevel" | "ping" => Step::Answer(rpc_result(id, json!({}))),
        "tools/call" if params.get("name").and_then(Value::as_str) == Some(workload::SKILL) => {
            Step::Call(id.clone())
        }
        "tools/call" => Step::Answer(rpc_error(id, -32602, "unknown tool")),
        _ => Step::Answer(rpc_error(id, -32601, "Method not found")),
    }
}

/// A `tools/call`'s answer as `skillet serve --mcp` writes it: the output as JSON text and as
/// `structuredContent`; a failure of the model requests as an `isError` result.
fn mcp_answer(id: Value, outcome: Result<Value, String>) -> Value {
    let result = match outcome {
        Ok(output) => {
            let text = serde_json::to_string(&output).unwrap_or_default();
            json!({
                "content": [{"type": "text", "text": text}],
                "structuredContent": output,
                "isError": false,
            })
        }
        Err(e) => json!({
            "content": [{"type": "text", "text": format!("runtime_error: {e}")}],
            "isError": true,
        }),
    };
    rpc_result(&id, result)
}

fn rpc_result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use mock_llm::MockServer;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    use super::*;
    use crate::mcp::McpClient;
    use crate::serve::{self, StdioClient};

    /// A floor in this process over a mock answering `scenario`, speaking `dialect` on the pipes
    /// returned: where to write lines to it and where to read its answers from.
    async fn floor_over(
        scenario: &str,
        dialect: Dialect,
    ) -> (tokio::io::DuplexStream, tokio::io::DuplexStream, MockServer) {
        let (floor, mock) = crate::relay::floor_over_mock(scenario).await;
        let floor = Arc::new(floor);
        let (to_floor, input) = tokio::io::duplex(1 << 16);
        let (output, from_floor) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move { serve_lines(input, output, floor, dialect).await.unwrap() });
        (to_floor, from_floor, mock)
    }

    fn chats(mock: &MockServer) -> usize {
        mock.journal()
            .iter()
            .filter(|e| e.endpoint == "openai.chat")
            .count()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_a2e_floor_answers_the_stdio_client_in_the_real_answers_shape_after_three_turns() {
        let (to_floor, from_floor, mock) = floor_over(workload::SCENARIO, Dialect::A2e).await;
        let client = StdioClient::over(serve::line_writer(to_floor), from_floor);
        let calls: Vec<_> = (0..4)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move { client.call().await })
            })
            .collect();
        for call in calls {
            call.await.unwrap().unwrap();
        }
        assert_eq!(chats(&mock), 12, "three model requests per call");
        mock.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_a2e_floor_sets_the_calls_id_everywhere_and_rejects_other_lines() {
        let (mut to_floor, from_floor, mock) = floor_over(workload::SCENARIO, Dialect::A2e).await;
        to_floor
            .write_all(b"{\"type\":\"skill/call/req\",\"id\":\"c-7\",\"name\":\"bench-calc\"}\n\nnot json\n{\"type\":\"skill/discover/req\",\"id\":\"d-1\"}\n")
            .await
            .unwrap();
        drop(to_floor);
        let mut lines = tokio::io::BufReader::new(from_floor).lines();
        let mut answers = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            answers.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert_eq!(answers.len(), 3, "{answers:?}");
        let call = answers
            .iter()
            .find(|a| a["req_id"] == "c-7" && a["data"].is_object());
        let call = call.expect("the call's answer");
        assert_eq!(call["data"]["data"], workload::expected_output());
        let events = call["data"]["events"].as_array().unwrap();
        assert_eq!(events.len(), 12);
        assert!(events.iter().all(|e| e["req_id"] == "c-7"));
        assert!(call.to_string().len() > 2500, "the recorded answer's size");
        let codes: Vec<&Value> = answers.iter().map(|a| &a["error"]["code"]).collect();
        assert!(codes.contains(&&json!("parse_error")), "{answers:?}");
        assert!(codes.contains(&&json!("invalid_message")), "{answers:?}");
        // Every line it writes is an answer the bench's decoder reads.
        for answer in &answers {
            assert!(protocol::decode(&answer.to_string()).is_ok(), "{answer}");
        }
        mock.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_mcp_floor_answers_the_mcp_client_as_skillet_does_after_three_turns() {
        let (to_floor, from_floor, mock) = floor_over(workload::SCENARIO, Dialect::Mcp).await;
        let client = McpClient::over(serve::line_writer(to_floor), from_floor);
        client.initialize(Some("warning")).await.unwrap();
        for _ in 0..3 {
            client.call().await.unwrap();
        }
        assert_eq!(chats(&mock), 9, "three model requests per call");
        mock.shutdown().await;
    }

    #[test]
    fn the_mcp_floor_answers_requests_and_ignores_notifications() {
        let Step::Answer(init) = mcp_step(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}"#,
        ) else {
            panic!("initialize is answered")
        };
        assert_eq!(init["id"], 0);
        assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(init["result"]["capabilities"]["tools"], json!({}));
        assert!(init["result"]["serverInfo"]["name"].is_string());
        assert_eq!(
            mcp_step(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Step::Ignore
        );
        assert_eq!(mcp_step(""), Step::Ignore);
        assert_eq!(
            mcp_step(
                r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}"#
            ),
            Step::Answer(json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
        );
        assert_eq!(
            mcp_step(
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bench-calc","arguments":{}}}"#
            ),
            Step::Call(json!(2))
        );
        let code = |line: &str| match mcp_step(line) {
            Step::Answer(answer) => answer["error"]["code"].clone(),
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}"#),
            -32602
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#),
            -32601
        );
        assert_eq!(code("not json"), -32700);
    }

    #[test]
    fn the_mcp_floors_tool_result_is_the_one_skillet_writes() {
        let output = workload::expected_output();
        // What `skillet serve --mcp` wrote for this call (protocol 2025-06-18), id and all.
        let skillet = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"result\":43,\"steps\":[\"6 * 7 = 42\",\"42 + 1 = 43\"]}"}],"structuredContent":{"result":43,"steps":["6 * 7 = 42","42 + 1 = 43"]},"isError":false}}"#;
        let answer = mcp_answer(json!(2), Ok(output));
        assert_eq!(serde_json::to_string(&answer).unwrap(), skillet);
        assert_eq!(crate::mcp::check_tool_result(&answer), Ok(()));
        let failed = mcp_answer(json!(3), Err("send: refused".into()));
        assert!(
            crate::mcp::check_tool_result(&failed)
                .unwrap_err()
                .contains("tool error")
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wrong_model_answer_fails_both_floors_checks() {
        let wrong = workload::SCENARIO.replace("result: 43", "result: 44");
        let (to_floor, from_floor, mock) = floor_over(&wrong, Dialect::A2e).await;
        let client = StdioClient::over(serve::line_writer(to_floor), from_floor);
        let error = client.call().await.unwrap_err();
        assert!(error.contains("unexpected output"), "{error}");
        mock.shutdown().await;
        let (to_floor, from_floor, mock) = floor_over(&wrong, Dialect::Mcp).await;
        let client = McpClient::over(serve::line_writer(to_floor), from_floor);
        client.initialize(None).await.unwrap();
        let error = client.call().await.unwrap_err();
        assert!(error.contains("unexpected output"), "{error}");
        mock.shutdown().await;
    }
}
