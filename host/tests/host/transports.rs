//! The stdio and HTTP transports over a real Unix socket pair and a real TCP socket, driven with
//! the fake echo service (`support`): correlation, interleaving, every protocol error,
//! the concurrent-call limit, and end of input / shutdown with calls in flight.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use skillet_host::Endpoint;
use skillet_host::http::{self, HttpOptions};
use skillet_host::stdio::{self, StdioEnd, StdioOptions};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::oneshot;

use super::support::get_json;
use super::support::{EchoService, echo_service};

/// A stdio server on one end of a socket pair; the test talks on the other end.
struct StdioPeer {
    writer: Option<tokio::net::unix::OwnedWriteHalf>,
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    server: tokio::task::JoinHandle<std::io::Result<StdioEnd>>,
    stop: Option<oneshot::Sender<()>>,
}

impl StdioPeer {
    fn start(service: Arc<EchoService>, max_calls: usize, options: StdioOptions) -> Self {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let (their_read, their_write) = theirs.into_split();
        let (stop, stopped) = oneshot::channel::<()>();
        let endpoint = Endpoint::new(service, max_calls);
        let server = tokio::spawn(stdio::serve(
            endpoint,
            their_read,
            their_write,
            options,
            async {
                let _ = stopped.await;
            },
        ));
        let (read, write) = ours.into_split();
        StdioPeer {
            writer: Some(write),
            reader: BufReader::new(read),
            server,
            stop: Some(stop),
        }
    }

    async fn send(&mut self, line: &str) {
        let writer = self.writer.as_mut().expect("input still open");
        writer.write_all(line.as_bytes()).await.unwrap();
        writer.write_all(b"\n").await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(30), self.reader.read_line(&mut line))
            .await
            .expect("an answer within 30 s")
            .unwrap();
        assert!(n > 0, "output closed while an answer was expected");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Reads until a `skill/call/resp` (or discover response) for each of `ids` arrived;
    /// returns every message read, in order.
    async fn recv_answers(&mut self, ids: &[&str]) -> Vec<Value> {
        let mut messages = Vec::new();
        let mut left: Vec<&str> = ids.to_vec();
        while !left.is_empty() {
            let message = self.recv().await;
            let ty = message["type"].as_str().unwrap().to_owned();
            if ty != "skill/event" {
                let req_id = message["req_id"].as_str().unwrap().to_owned();
                left.retain(|id| *id != req_id);
            }
            messages.push(message);
        }
        messages
    }

    fn close_input(&mut self) {
        self.writer = None;
    }

    async fn finish(self) -> StdioEnd {
        tokio::time::timeout(Duration::from_secs(30), self.server)
            .await
            .expect("server ends")
            .unwrap()
            .unwrap()
    }
}

fn call(id: &str, delay_ms: u64, streaming: bool) -> String {
    json!({"type": "skill/call/req", "id": id, "version": "1.0", "ts": 1.0, "name": "echo",
        "arguments": {"delay_ms": delay_ms, "tag": id}, "streaming": streaming})
    .to_string()
}

fn response_for<'a>(messages: &'a [Value], id: &str) -> &'a Value {
    messages
        .iter()
        .find(|m| m["type"] == "skill/call/resp" && m["req_id"] == id)
        .unwrap_or_else(|| panic!("no response for {id}: {messages:#?}"))
}

#[tokio::test]
async fn stdio_interleaved_calls_are_each_answered_once_with_their_events_first() {
    let mut peer = StdioPeer::start(echo_service(), 16, StdioOptions::default());
    peer.send(&call("a", 150, true)).await;
    peer.send(&call("b", 0, true)).await;
    peer.send(&call("c", 50, false)).await;
    peer.send(r#"{"type":"skill/discover/req","id":"d","filter_tags":["echo"]}"#)
        .await;
    let messages = peer.recv_answers(&["a", "b", "c", "d"]).await;

    for id in ["a", "b"] {
        let at = |m: &Value| m["req_id"] == id;
        let response_at = messages
            .iter()
            .position(|m| at(m) && m["type"] == "skill/call/resp")
            .unwrap();
        let event_seqs: Vec<u64> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| at(m) && m["type"] == "skill/event")
            .map(|(i, m)| {
                assert!(i < response_at, "event after the response of {id}");
                m["seq"].as_u64().unwrap()
            })
            .collect();
        assert_eq!(event_seqs, [0, 1], "live events of {id}");
        let response = response_for(&messages, id);
        assert_eq!(response["data"]["success"], true);
        assert_eq!(response["data"]["data"]["tag"], id);
    }
    assert!(
        !messages
            .iter()
            .any(|m| m["type"] == "skill/event" && m["req_id"] == "c"),
        "a non-streaming call sends no live events"
    );
    assert_eq!(
        response_for(&messages, "c")["data"]["events"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let discover = messages.iter().find(|m| m["req_id"] == "d").unwrap();
    assert_eq!(discover["type"], "skill/discover/resp");
    assert_eq!(discover["skills"][0]["name"], "echo");
    let responses = messages
        .iter()
        .filter(|m| m["type"] == "skill/call/resp")
        .count();
    assert_eq!(responses, 3, "exactly one response per call");

    peer.close_input();
    assert_eq!(peer.finish().await, StdioEnd::Eof);
}

#[tokio::test]
async fn stdio_answers_every_bad_line_and_keeps_serving() {
    let options = StdioOptions {
        max_line_bytes: 512,
        ..StdioOptions::default()
    };
    let mut peer = StdioPeer::start(echo_service(), 16, options);
    let long = format!(
        r#"{{"type":"skill/call/req","id":"big","name":"echo","pad":"{}"}}"#,
        "x".repeat(600)
    );
    let cases: Vec<(String, &str, &str)> = vec![
        ("{\"type\": ".into(), "parse_error", ""),
        ("[1,2]".into(), "invalid_message", ""),
        (
            r#"{"type":"skill/explode","id":"u1"}"#.into(),
            "invalid_message",
            "u1",
        ),
        (
            r#"{"id":"t1","name":"echo"}"#.into(),
            "invalid_message",
            "t1",
        ),
        (
            r#"{"type":"skill/call/req","id":"v1","version":"2.0","name":"echo"}"#.into(),
            "version_mismatch",
            "v1",
        ),
        (
            r#"{"type":"skill/call/req","id":"m1"}"#.into(),
            "invalid_message",
            "m1",
        ),
        (
            r#"{"type":"skill/call/req","id":"i1","name":"echo","timeout":"soon"}"#.into(),
            "invalid_message",
            "i1",
        ),
        (
            r#"{"type":"skill/call/resp","id":"r1","req_id":"x"}"#.into(),
            "invalid_message",
            "r1",
        ),
        (long, "invalid_message", ""),
        (
            r#"{"type":"skill/call/req","id":"n1","name":"nope"}"#.into(),
            "unknown_skill",
            "n1",
        ),
    ];
    for (line, code, req_id) in &cases {
        peer.send(line).await;
        let answer = peer.recv().await;
        assert_eq!(answer["type"], "skill/call/resp", "for {line}");
        assert_eq!(answer["error"]["code"], *code, "for {line}: {answer}");
        assert_eq!(answer["error"]["retryable"], false, "for {line}");
        assert!(!answer["error"]["message"].as_str().unwrap().is_empty());
        assert_eq!(answer["req_id"], *req_id, "for {line}");
        assert!(answer.get("data").is_none());
    }
    peer.send("").await; // blank lines are ignored, not answered
    peer.send(&call("ok", 0, false)).await;
    let answer = peer.recv().await;
    assert_eq!(answer["req_id"], "ok");
    assert_eq!(answer["data"]["success"], true);
    peer.close_input();
    peer.finish().await;
}

#[tokio::test]
async fn stdio_eof_with_calls_in_flight_answers_them_all_then_ends() {
    let service = echo_service();
    let mut peer = StdioPeer::start(Arc::clone(&service), 16, StdioOptions::default());
    for id in ["e1", "e2", "e3"] {
        peer.send(&call(id, 300, false)).await;
    }
    peer.close_input();
    let messages = peer.recv_answers(&["e1", "e2", "e3"]).await;
    for id in ["e1", "e2", "e3"] {
        assert_eq!(response_for(&messages, id)["data"]["success"], true);
    }
    assert_eq!(peer.finish().await, StdioEnd::Eof);
    assert_eq!(service.completed.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn stdio_shutdown_lets_calls_finish_within_the_grace_period() {
    let service = echo_service();
    let mut peer = StdioPeer::start(Arc::clone(&service), 16, StdioOptions::default());
    peer.send(&call("g1", 300, false)).await;
    peer.send(&call("g2", 300, false)).await;
    // The discover answer proves both calls were read (and admitted) before the signal.
    peer.send(r#"{"type":"skill/discover/req","id":"sync"}"#)
        .await;
    let _ = peer.recv_answers(&["sync"]).await;
    let _ = peer.stop.take().unwrap().send(());
    let messages = peer.recv_answers(&["g1", "g2"]).await;
    assert_eq!(response_for(&messages, "g1")["data"]["success"], true);
    assert_eq!(response_for(&messages, "g2")["data"]["success"], true);
    assert_eq!(peer.finish().await, StdioEnd::Shutdown);
}

#[tokio::test]
async fn stdio_shutdown_past_the_grace_period_cancels_calls_and_still_answers_them() {
    let service = echo_service();
    let options = StdioOptions {
        grace: Duration::ZERO,
        ..StdioOptions::default()
    };
    let mut peer = StdioPeer::start(Arc::clone(&service), 16, options);
    peer.send(&call("slow", 600_000, false)).await;
    peer.send(r#"{"type":"skill/discover/req","id":"sync"}"#)
        .await;
    let _ = peer.recv_answers(&["sync"]).await;
    let _ = peer.stop.take().unwrap().send(());
    let messages = peer.recv_answers(&["slow"]).await;
    let response = response_for(&messages, "slow");
    assert_eq!(response["data"]["success"], false, "{response}");
    assert_eq!(response["data"]["error"], "cancelled");
    assert_eq!(peer.finish().await, StdioEnd::Shutdown);
    assert_eq!(service.cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn stdio_calls_beyond_the_limit_get_a_retryable_error_at_once() {
    let mut peer = StdioPeer::start(echo_service(), 1, StdioOptions::default());
    peer.send(&call("first", 2000, false)).await;
    peer.send(&call("second", 0, false)).await;
    let messages = peer.recv_answers(&["first", "second"]).await;
    let second = response_for(&messages, "second");
    assert_eq!(second["error"]["code"], "runtime_error");
    assert_eq!(second["error"]["retryable"], true);
    assert_eq!(response_for(&messages, "first")["data"]["success"], true);
    peer.close_input();
    peer.finish().await;
}

// ---------------------------------------------------------------- HTTP

struct HttpPeer {
    base: String,
    client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start_http(service: Arc<EchoService>, max_calls: usize, options: HttpOptions) -> HttpPeer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let endpoint = Endpoint::new(service, max_calls);
    let server = tokio::spawn(http::serve(listener, endpoint, options, async {
        let _ = stopped.await;
    }));
    HttpPeer {
        base,
        client: reqwest::Client::new(),
        stop: Some(stop),
        server,
    }
}

impl HttpPeer {
    async fn post(&self, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}/a2e", self.base))
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        assert_eq!(
            response.headers()["content-type"],
            "application/json",
            "JSON answers are application/json"
        );
        (status, response.json().await.unwrap())
    }

    /// Posts with `Accept: text/event-stream`; returns (event name, parsed data) pairs.
    async fn post_sse(&self, body: String) -> Vec<(String, Value)> {
        let response = self
            .client
            .post(format!("{}/a2e", self.base))
            .header("accept", "text/event-stream")
            .body(body)
            .send()
            .await
            .unwrap();
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let text = response.text().await.unwrap();
        let mut events = Vec::new();
        for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
            let mut name = String::new();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            if !data.is_empty() {
                events.push((name, serde_json::from_str(&data).unwrap()));
            }
        }
        events
    }
}

#[tokio::test]
async fn http_answers_discover_and_calls_as_json_and_interleaves_concurrent_calls() {
    let peer = start_http(echo_service(), 16, HttpOptions::default()).await;
    let (status, discover) = peer
        .post(r#"{"type":"skill/discover/req","id":"sd1","filter_tags":["echo"]}"#)
        .await;
    assert_eq!(status, 200);
    assert_eq!(discover["type"], "skill/discover/resp");
    assert_eq!(discover["req_id"], "sd1");
    assert_eq!(discover["skills"][0]["tags"], json!(["test", "echo"]));

    let calls = (0..6).map(|i| {
        let peer = &peer;
        async move { peer.post(call(&format!("h{i}"), 100 * (6 - i), true)).await }
    });
    let answers = futures::future::join_all(calls).await;
    for (i, (status, answer)) in answers.iter().enumerate() {
        assert_eq!(*status, 200);
        assert_eq!(answer["type"], "skill/call/resp");
        assert_eq!(answer["req_id"], format!("h{i}"));
        assert_eq!(answer["data"]["data"]["tag"], format!("h{i}"));
        assert_eq!(answer["data"]["events"].as_array().unwrap().len(), 2);
    }
    let _ = peer.stop.unwrap().send(());
    peer.server.await.unwrap().unwrap();
}

#[tokio::test]
async fn http_event_stream_sends_events_then_the_final_response() {
    let peer = start_http(echo_service(), 16, HttpOptions::default()).await;
    let events = peer.post_sse(call("s1", 50, true)).await;
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["skill/event", "skill/event", "skill/call/resp"]);
    assert_eq!(events[0].1["seq"], 0);
    assert_eq!(events[1].1["seq"], 1);
    assert_eq!(events[2].1["req_id"], "s1");
    assert_eq!(events[2].1["data"]["success"], true);

    // A protocol error asked for as SSE is one event.
    let events = peer.post_sse("not json".to_owned()).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1["error"]["code"], "parse_error");
}

#[tokio::test]
async fn http_answers_every_protocol_error_with_a_call_response() {
    let options = HttpOptions {
        max_body_bytes: 1024,
        ..HttpOptions::default()
    };
    let peer = start_http(echo_service(), 16, options).await;
    let cases = [
        ("{\"type\": ", 200, "parse_error", ""),
        (
            r#"{"type":"skill/explode","id":"u1"}"#,
            200,
            "invalid_message",
            "u1",
        ),
        (
            r#"{"type":"skill/discover/req","id":"v1","version":"0.9"}"#,
            200,
            "version_mismatch",
            "v1",
        ),
        (
            r#"{"type":"skill/call/req","id":"m1"}"#,
            200,
            "invalid_message",
            "m1",
        ),
        (
            r#"{"type":"skill/call/req","id":"n1","name":"nope"}"#,
            200,
            "unknown_skill",
            "n1",
        ),
    ];
    for (body, status, code, req_id) in cases {
        let (got_status, answer) = peer.post(body).await;
        assert_eq!(got_status, status, "{body}");
        assert_eq!(answer["type"], "skill/call/resp");
        assert_eq!(answer["error"]["code"], code, "{body}");
        assert_eq!(answer["req_id"], req_id, "{body}");
    }
    let (status, answer) = peer.post("x".repeat(4096)).await;
    assert_eq!(status, 413);
    assert_eq!(answer["error"]["code"], "invalid_message");
    let (status, answer) = peer.post(vec![0xffu8, 0xfe]).await;
    assert_eq!(status, 200);
    assert_eq!(answer["error"]["code"], "parse_error");
    let (status, answer) = peer.post(call("after", 0, false)).await;
    assert_eq!((status, &answer["data"]["success"]), (200, &json!(true)));
}

#[tokio::test]
async fn http_beyond_the_call_limit_answers_503_with_a_retryable_error() {
    let peer = start_http(echo_service(), 1, HttpOptions::default()).await;
    let slow = peer.post(call("slow", 3000, false));
    let fast = async {
        // Wait until the slow call holds the only slot.
        loop {
            let health = get_json(&peer.client, format!("{}/healthz", peer.base)).await;
            if health["in_flight"] == 1 {
                break;
            }
            tokio::task::yield_now().await;
        }
        let response = peer
            .client
            .post(format!("{}/a2e", peer.base))
            .body(call("fast", 0, false))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 503);
        assert_eq!(response.headers()["retry-after"], "1");
        response.json::<Value>().await.unwrap()
    };
    let ((status, slow), busy) = tokio::join!(slow, fast);
    assert_eq!(status, 200);
    assert_eq!(slow["data"]["success"], true);
    assert_eq!(busy["error"]["code"], "runtime_error");
    assert_eq!(busy["error"]["retryable"], true);
    assert_eq!(busy["req_id"], "fast");
}

#[tokio::test]
async fn http_serves_the_agent_card_with_its_interface_and_a_health_check() {
    let peer = start_http(echo_service(), 16, HttpOptions::default()).await;
    let card = get_json(
        &peer.client,
        format!("{}/.well-known/agent-card.json", peer.base),
    )
    .await;
    assert!(
        serde_json::from_value::<skillet_core::card::AgentCard>(card.clone()).is_ok(),
        "the served card is a valid A2A card: {card}"
    );
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/a2e", peer.base)
    );
    let health = get_json(&peer.client, format!("{}/healthz", peer.base)).await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["max_concurrent_calls"], 16);
}

#[tokio::test]
async fn http_shutdown_finishes_calls_in_flight_before_stopping() {
    let service = echo_service();
    let mut peer = start_http(Arc::clone(&service), 16, HttpOptions::default()).await;
    let stop = peer.stop.take().unwrap();
    let pending = peer.post(call("inflight", 300, false));
    let trigger = async {
        while service.completed.load(Ordering::SeqCst) == 0 && peer_in_flight(&peer).await == 0 {
            tokio::task::yield_now().await;
        }
        let _ = stop.send(());
    };
    let ((status, answer), ()) = tokio::join!(pending, trigger);
    assert_eq!(status, 200);
    assert_eq!(answer["data"]["success"], true);
    tokio::time::timeout(Duration::from_secs(30), peer.server)
        .await
        .expect("server stops after draining")
        .unwrap()
        .unwrap();
}

async fn peer_in_flight(peer: &HttpPeer) -> u64 {
    let health = get_json(&peer.client, format!("{}/healthz", peer.base)).await;
    health["in_flight"].as_u64().unwrap()
}
