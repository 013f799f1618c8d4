//! Tests of `HttpProvider`: the generic send, stream and error path every wire runs through,
//! against a real mock-llm server (a wire's own mapping is tested in its folder).

use super::*;
use std::sync::Arc;

use crate::anthropic::Anthropic;
use crate::ollama::Ollama;
use crate::openai::OpenAiCompatible;

async fn server(text: &str) -> mock_llm::MockServer {
    let yaml = format!("rules:\n  - reply: {{text: \"{text}\"}}\n");
    let scenario = mock_llm::Scenario::from_yaml_str(&yaml).unwrap();
    mock_llm::MockServer::start(mock_llm::MockConfig::default().with_scenario(scenario))
        .await
        .unwrap()
}

fn provider<W: Wire>(base: String, limits: BodyLimits) -> HttpProvider<W> {
    let kind = ProviderKind::ALL
        .iter()
        .copied()
        .find(|k| k.as_str() == W::INFO.name)
        .unwrap();
    let mut spec = ProviderSpec::new(kind, "mock-model", Some(&base)).unwrap();
    spec.api_key = Some(secrecy::SecretString::from("k"));
    let http = crate::transport::build_http_client(false).unwrap();
    HttpProvider::<W>::new(spec, http)
        .unwrap()
        .with_limits(limits)
}

async fn error_with<W: Wire>(base: String, limits: BodyLimits, stream: bool) -> ProviderError {
    let p = provider::<W>(base, limits);
    let request = ChatRequest {
        messages: vec![crate::types::ChatMessage::user("hi")],
        ..Default::default()
    };
    let sink = |_: &str| {};
    let options = if stream {
        CallOptions::default().with_stream(&sink)
    } else {
        CallOptions::default()
    };
    p.chat(request, options).await.unwrap_err()
}

/// A server answering 200 with `body` under `content_type` to every request.
async fn raw_server(content_type: &'static str, body: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut buffer).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(body.as_bytes()).await;
            });
        }
    });
    format!("http://{address}")
}

#[tokio::test]
async fn http2_prior_knowledge_to_an_http1_only_server_says_what_is_likely_wrong() {
    let base = raw_server("application/json", "{}".to_owned()).await;
    let error = chat_once(&format!("{base}/v1"), true).await.unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::Unavailable, "{error}");
    assert!(error.message.contains("speaks only HTTP/1.1"), "{error}");
}

/// An HTTP/2 (prior knowledge) server that resets the first `refuse` streams with
/// `REFUSED_STREAM` unread, then answers a chat completion; it counts the streams it saw.
async fn h2_server_refusing(refuse: usize) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let Ok(mut connection) = h2::server::handshake(socket).await else {
                    return;
                };
                while let Some(Ok((request, mut respond))) = connection.accept().await {
                    if count.fetch_add(1, Ordering::SeqCst) < refuse {
                        respond.send_reset(h2::Reason::REFUSED_STREAM);
                        continue;
                    }
                    let mut body = request.into_body();
                    while let Some(Ok(chunk)) = body.data().await {
                        let _ = body.flow_control().release_capacity(chunk.len());
                    }
                    let head = http::Response::builder()
                        .header("content-type", "application/json")
                        .body(())
                        .unwrap();
                    let answer = r#"{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}"#;
                    if let Ok(mut send) = respond.send_response(head, false) {
                        let _ = send.send_data(Bytes::from_static(answer.as_bytes()), true);
                    }
                }
            });
        }
    });
    (format!("http://{address}/v1"), seen)
}

/// One chat request to an OpenAI-compatible `base`, with one attempt (no retries), over
/// HTTP/2 by prior knowledge when `http2`.
async fn chat_once(base: &str, http2: bool) -> Result<ChatResponse, ProviderError> {
    let mut spec = ProviderSpec::new(ProviderKind::OpenaiCompatible, "m", Some(base)).unwrap();
    spec.http2_prior_knowledge = http2;
    spec.retry.max_attempts = 1;
    let http = crate::transport::build_http_client(http2).unwrap();
    let p = HttpProvider::<OpenAiCompatible>::new(spec, http).unwrap();
    let request = ChatRequest {
        messages: vec![crate::types::ChatMessage::user("hi")],
        ..Default::default()
    };
    p.chat(request, CallOptions::default()).await
}

#[tokio::test]
async fn an_http1_request_body_goes_with_its_length_not_chunked() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let head = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buffer = vec![0u8; 64 * 1024];
        let read = socket.read(&mut buffer).await.unwrap();
        let _ = socket
            .write_all(b"HTTP/1.1 500 x\r\ncontent-length: 0\r\n\r\n")
            .await;
        String::from_utf8_lossy(&buffer[..read]).to_ascii_lowercase()
    });
    let _ = chat_once(&base, false).await;
    let head = head.await.unwrap();
    assert!(head.contains("\r\ncontent-length: "), "{head}");
    assert!(!head.contains("transfer-encoding"), "{head}");
}

#[tokio::test]
async fn a_stream_an_http2_server_refused_unread_is_sent_again_at_once() {
    use std::sync::atomic::Ordering;
    let (base, seen) = h2_server_refusing(2).await;
    let started = std::time::Instant::now();
    // One attempt only: the resend of the refused streams alone can make the call succeed.
    let reply = chat_once(&base, true)
        .await
        .expect("resent after REFUSED_STREAM");
    assert_eq!(reply.text, "hello");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "two refusals, then the answer"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "no back-off wait"
    );
    // A server that refuses every stream is not asked forever: the attempt plus two resends.
    let (base, seen) = h2_server_refusing(usize::MAX).await;
    let error = chat_once(&base, true).await.unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::Unavailable, "{error}");
    assert!(error.resend_at_once, "{error}");
    assert!(!error.message.contains("speaks only HTTP/1.1"), "{error}");
    assert_eq!(seen.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_event_or_line_over_the_cap_fails_the_call_clearly_on_every_framing() {
    let small = BodyLimits {
        max_event_bytes: 1024,
        max_total_bytes: 1 << 20,
    };
    let long = "x".repeat(3000);
    let ndjson = raw_server("application/x-ndjson", format!("{long}\n")).await;
    let sse_line = raw_server("text/event-stream", format!("data: {long}\n\n")).await;
    // Many short `data:` lines that add up to one oversized event.
    let sse_event = raw_server("text/event-stream", "data: xxxxxxxx\n".repeat(200) + "\n").await;
    for error in [
        error_with::<Ollama>(ndjson.clone(), small, true).await,
        error_with::<Ollama>(format!("{ndjson}/"), small, true).await,
        error_with::<Anthropic>(sse_line, small, true).await,
        error_with::<OpenAiCompatible>(sse_event, small, true).await,
    ] {
        assert_eq!(error.kind, ProviderErrorKind::MalformedResponse, "{error}");
        assert!(error.message.contains("1024-byte limit"), "{error}");
        assert!(!error.retryable);
    }
}

#[tokio::test]
async fn a_body_over_the_total_cap_fails_streamed_or_not() {
    let many_words = "word ".repeat(400);
    let server = server(many_words.trim()).await;
    let small = BodyLimits {
        max_event_bytes: 1 << 20,
        max_total_bytes: 1500,
    };
    let base = server.base_url();
    for stream in [true, false] {
        for error in [
            error_with::<Ollama>(base.clone(), small, stream).await,
            error_with::<Anthropic>(base.clone(), small, stream).await,
            error_with::<OpenAiCompatible>(format!("{base}/v1"), small, stream).await,
        ] {
            assert_eq!(error.kind, ProviderErrorKind::MalformedResponse, "{error}");
            assert!(error.message.contains("1500-byte limit"), "{error}");
        }
    }
}
