//! The protocol-neutral host core and its A2E adapters on their bad paths: duplicate in-flight
//! ids (stdio and HTTP), a service that panics or never ends still answers exactly once, cancel by
//! id stops only that call.
//! (The HTTP accept loop under an open-file limit is the binary's: `cli/tests/serve/host_serve.rs`.)

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use skillet_core::events::EventSink;
use skillet_core::service::SkillService;
use skillet_host::http::{self, HttpOptions};
use skillet_host::stdio::{self, StdioOptions};
use skillet_host::{ConnectionLimits, Endpoint, HostCore, Refusal};
use skillet_protocol::{
    ErrorCode, SkillCallRequest, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::support::echo_service;
use super::support::{get_json, post_json};

fn call(id: &str, delay_ms: u64) -> String {
    json!({"type": "skill/call/req", "id": id, "name": "echo",
        "arguments": {"delay_ms": delay_ms, "tag": id}, "streaming": false})
    .to_string()
}

async fn recv_line<R: tokio::io::AsyncBufRead + Unpin>(reader: &mut R) -> Value {
    let mut line = String::new();
    let n = tokio::time::timeout(Duration::from_secs(30), reader.read_line(&mut line))
        .await
        .expect("an answer within 30 s")
        .unwrap();
    assert!(n > 0, "output closed while an answer was expected");
    serde_json::from_str(&line).unwrap()
}

#[tokio::test]
async fn stdio_refuses_a_second_call_with_an_id_in_flight_and_accepts_it_once_answered() {
    let service = echo_service();
    let (ours, theirs) = tokio::net::UnixStream::pair().unwrap();
    let (their_read, their_write) = theirs.into_split();
    let endpoint = Endpoint::new(service.clone(), 16);
    let server = tokio::spawn(stdio::serve(
        endpoint,
        their_read,
        their_write,
        StdioOptions::default(),
        std::future::pending(),
    ));
    let (read, mut write) = ours.into_split();
    let mut reader = BufReader::new(read);
    write
        .write_all(format!("{}\n{}\n", call("dup", 400), call("dup", 0)).as_bytes())
        .await
        .unwrap();
    let refusal = recv_line(&mut reader).await;
    assert_eq!(refusal["req_id"], "dup");
    assert_eq!(refusal["error"]["code"], "invalid_message", "{refusal}");
    assert_eq!(refusal["error"]["retryable"], false);
    let first = recv_line(&mut reader).await;
    assert_eq!(first["req_id"], "dup");
    assert_eq!(first["data"]["success"], true, "{first}");
    assert_eq!(
        first["data"]["data"]["delay_ms"], 400,
        "the first call's answer"
    );
    // Once answered, the id is free again.
    write
        .write_all(format!("{}\n", call("dup", 0)).as_bytes())
        .await
        .unwrap();
    let again = recv_line(&mut reader).await;
    assert_eq!(again["data"]["success"], true, "{again}");
    drop(write);
    server.await.unwrap().unwrap();
    assert_eq!(service.completed.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn http_refuses_a_call_whose_id_is_in_flight() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let endpoint = Endpoint::new(echo_service(), 16);
    tokio::spawn(http::serve(
        listener,
        endpoint,
        HttpOptions::default(),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let slow = {
        let client = client.clone();
        let url = format!("{base}/a2e");
        tokio::spawn(async move { post_json(&client, url, call("same", 600)).await })
    };
    // Poll until the slow call is in flight, then send its duplicate.
    for _ in 0..100 {
        let health = get_json(&client, format!("{base}/healthz")).await;
        if health["in_flight"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let response = client
        .post(format!("{base}/a2e"))
        .body(call("same", 0))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let refusal: Value = response.json().await.unwrap();
    assert_eq!(refusal["error"]["code"], "invalid_message", "{refusal}");
    assert_eq!(refusal["req_id"], "same");
    let first = slow.await.unwrap();
    assert_eq!(first["data"]["success"], true, "{first}");
}

/// A service whose calls panic (`panic`) or never end, ignoring cancellation (`hang`).
struct HostileService;

#[async_trait]
impl SkillService for HostileService {
    fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse {
        SkillDiscoverResponse::new(&request.id, vec![])
    }

    async fn call(
        &self,
        request: SkillCallRequest,
        _events: Option<Arc<dyn EventSink>>,
        _cancel: CancellationToken,
    ) -> SkillCallResponse {
        if request.name == "panic" {
            panic!("the service failed");
        }
        std::future::pending().await
    }

    fn agent_card(&self) -> Result<skillet_core::card::AgentCard, skillet_core::card::CardError> {
        Err(skillet_core::card::CardError::NoSkills)
    }
}

fn answer_channel() -> (
    mpsc::UnboundedSender<SkillCallResponse>,
    mpsc::UnboundedReceiver<SkillCallResponse>,
) {
    mpsc::unbounded_channel()
}

#[tokio::test]
async fn a_panicking_service_still_answers_once_and_frees_its_slot() {
    let core = HostCore::new(Arc::new(HostileService), 1);
    let scope = core.scope();
    let (tx, mut rx) = answer_channel();
    let admitted = scope.admit("p1").unwrap();
    core.spawn_call(
        admitted,
        SkillCallRequest::new("panic", Default::default()),
        None,
        move |r| {
            let _ = tx.send(r);
        },
    );
    let answer = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap()
        .expect("an answer");
    let error = answer.error.expect("an error");
    assert_eq!(error.code, ErrorCode::RuntimeError);
    assert!(error.retryable);
    assert!(rx.recv().await.is_none(), "exactly one answer");
    assert_eq!(core.in_flight(), 0);
    assert_eq!(scope.in_flight(), 0);
    assert!(scope.admit("p1").is_ok(), "the id is free again");
}

#[tokio::test]
async fn drain_abandons_a_call_that_ignores_cancellation_and_answers_it_once() {
    let core = HostCore::new(Arc::new(HostileService), 4);
    let (tx, mut rx) = answer_channel();
    let admitted = core.admit_anonymous().unwrap();
    let mut request = SkillCallRequest::new("hang", Default::default());
    request.id = "h1".into();
    core.spawn_call(admitted, request, None, move |r| {
        let _ = tx.send(r);
    });
    tokio::time::timeout(Duration::from_secs(30), core.drain(Duration::ZERO))
        .await
        .expect("drain ends");
    let answer = rx.recv().await.expect("an answer");
    assert_eq!(answer.req_id, "h1");
    assert_eq!(answer.error.unwrap().code, ErrorCode::RuntimeError);
    assert!(rx.recv().await.is_none(), "exactly one answer");
    assert_eq!(core.in_flight(), 0);
}

#[tokio::test]
async fn the_call_limit_refuses_at_once_and_cancel_by_id_stops_only_that_call() {
    let service = echo_service();
    let core = HostCore::new(service.clone(), 2);
    let scope = core.scope();
    let (tx, mut rx) = answer_channel();
    for id in ["a", "b"] {
        let admitted = scope.admit(id).unwrap();
        let mut request = SkillCallRequest::new("echo", Default::default());
        request.id = id.into();
        request.arguments.insert("delay_ms".into(), json!(400));
        let tx = tx.clone();
        core.spawn_call(admitted, request, None, move |r| {
            let _ = tx.send(r);
        });
    }
    assert_eq!(
        scope.admit("c").unwrap_err(),
        Refusal::Busy { max_calls: 2 },
        "beyond the limit"
    );
    assert_eq!(
        core.scope().admit("d").unwrap_err(),
        Refusal::Busy { max_calls: 2 },
        "the limit is shared by every scope"
    );
    assert!(scope.cancel("a"));
    assert!(!scope.cancel("zzz"), "no such call");
    drop(tx);
    let mut answers = Vec::new();
    while let Some(answer) = rx.recv().await {
        answers.push(answer);
    }
    assert_eq!(answers.len(), 2);
    let a = answers.iter().find(|r| r.req_id == "a").unwrap();
    let b = answers.iter().find(|r| r.req_id == "b").unwrap();
    assert!(!a.data.as_ref().unwrap().success, "a was cancelled");
    assert!(b.data.as_ref().unwrap().success, "b ran to the end");
    assert_eq!(service.cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn idle_sockets_beyond_the_connection_cap_do_not_block_new_clients() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = HttpOptions {
        connections: ConnectionLimits {
            max_connections: 8,
            ..ConnectionLimits::default()
        },
        ..HttpOptions::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        Endpoint::new(echo_service(), 4),
        options,
        async {
            let _ = stopped.await;
        },
    ));
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    let health = tokio::time::timeout(
        Duration::from_secs(30),
        reqwest::get(format!("http://{addr}/healthz")),
    )
    .await
    .expect("served despite 40 idle sockets")
    .unwrap();
    assert_eq!(health.status(), 200);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}

/// Serves the echo service over HTTP with these connection limits; returns the address and the
/// stop switch.
async fn http_with_limits(limits: ConnectionLimits) -> (std::net::SocketAddr, oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = HttpOptions {
        connections: limits,
        ..HttpOptions::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(http::serve(
        listener,
        Endpoint::new(echo_service(), 4),
        options,
        async {
            let _ = stopped.await;
        },
    ));
    (addr, stop)
}

/// Reads until the server closes the connection; panics if it stays open for 30 s.
async fn expect_closed_by_server(mut stream: tokio::net::TcpStream) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut received = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut received))
        .await
        .expect("the server closes the connection")
        .ok();
    received
}

#[tokio::test]
async fn a_connection_that_never_sends_a_request_is_closed_after_the_idle_timeout() {
    let (addr, _stop) = http_with_limits(ConnectionLimits {
        idle_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    })
    .await;
    let idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    assert!(expect_closed_by_server(idle).await.is_empty());
}

#[tokio::test]
async fn a_client_that_trickles_its_headers_is_cut_off_by_the_header_read_timeout() {
    let (addr, _stop) = http_with_limits(ConnectionLimits {
        header_read_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    })
    .await;
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // The header block never ends; the connection must not stay open.
    expect_closed_by_server(slow).await;
}

#[tokio::test]
async fn a_keep_alive_connection_is_closed_once_idle_after_its_request() {
    let (addr, _stop) = http_with_limits(ConnectionLimits {
        idle_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    })
    .await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    // The server's own address as Host: any other name is refused (a rebinding guard).
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let received = expect_closed_by_server(stream).await;
    let text = String::from_utf8_lossy(&received);
    assert!(
        text.starts_with("HTTP/1.1 200"),
        "the request was answered before the close: {text}"
    );
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_answered_408_with_an_invalid_message() {
    let (addr, _stop) = http_with_limits(ConnectionLimits {
        body_read_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    })
    .await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request =
        format!("POST /a2e HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 100\r\n\r\n{{\"type\"");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    tokio::time::timeout(Duration::from_secs(30), reader.read_line(&mut status))
        .await
        .expect("an answer within 30 s")
        .unwrap();
    assert!(status.starts_with("HTTP/1.1 408"), "{status}");
    let mut rest = String::new();
    use tokio::io::AsyncReadExt;
    let _ = tokio::time::timeout(Duration::from_secs(30), reader.read_to_string(&mut rest)).await;
    assert!(rest.contains("invalid_message"), "{rest}");
}
