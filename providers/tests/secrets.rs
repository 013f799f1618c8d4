//! Canary test: a credential value never appears in captured tracing output (at TRACE, our
//! crate and every dependency), in error `Display` or `Debug`, or in a serialized or debugged
//! config — across all providers, successes, retries and failures, even when the server echoes
//! the key back in its error message.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mock_llm::Fault;
use secrecy::SecretString;
use serde_json::json;
use skillet_providers::{CallOptions, ProviderKind, ProviderPool};
use support::*;

const HEADER_CANARY: &str = "gw-canary-51c0ffee";

/// A `MakeWriter` that appends everything to one buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

// Single-threaded runtime: every task (client, connection pool, mock server) runs on this
// thread, so the thread-local subscriber below sees all of their events.
#[tokio::test(flavor = "current_thread")]
async fn credential_never_appears_in_logs_errors_or_serialized_config() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let mut texts: Vec<String> = Vec::new();
    for kind in [
        ProviderKind::OpenaiCompatible,
        ProviderKind::Ollama,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
    ] {
        let server = server("rules:\n  - reply: {text: fine}\n").await;
        let mut spec = spec(
            kind,
            &server,
            json!({"read_timeout_ms": 300, "max_attempts": 2}),
        );
        spec = spec
            .with_header("x-gateway-token", SecretString::from(HEADER_CANARY))
            .unwrap();
        texts.push(format!("{spec:?}"));
        texts.push(serde_json::to_string(&spec).unwrap());
        let pool = ProviderPool::new();
        let provider = pool.provider(&spec).unwrap();
        texts.push(format!("{pool:?}"));

        // Success, streamed and not, after a logged retry.
        server.push_fault(Fault::rate_limited(0).times(1));
        provider
            .chat(ask("hi"), CallOptions::default())
            .await
            .unwrap();
        let deltas = Deltas::default();
        provider
            .chat(ask("hi"), CallOptions::default().with_stream(&deltas))
            .await
            .unwrap();

        // Failures, including a server that echoes the key in its error message.
        let faults = [
            Fault::status(401).message(format!("invalid api key {TEST_KEY} for {HEADER_CANARY}")),
            Fault::status(500)
                .message(format!("upstream rejected {TEST_KEY}"))
                .times(2),
            Fault::malformed_body(),
            Fault::stall_after(0).times(2),
            Fault::drop_connection_after(0).times(2),
        ];
        for fault in faults {
            server.push_fault(fault);
            let error = provider
                .chat(ask("hi"), CallOptions::default())
                .await
                .expect_err("fault makes the call fail");
            texts.push(format!("{error}"));
            texts.push(format!("{error:?}"));
        }
        let timeout = tokio::time::timeout(
            Duration::from_secs(5),
            provider.chat(ask("hi"), CallOptions::default()),
        )
        .await;
        assert!(timeout.is_ok(), "provider still answers after the faults");
    }

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The capture works: our own retry logs and the dependencies' logs are in there.
    assert!(
        logs.contains("retrying provider call"),
        "capture is empty or incomplete"
    );
    assert!(logs.contains("provider=\"anthropic\""), "{logs}");
    for canary in [TEST_KEY, HEADER_CANARY] {
        let leaks: Vec<&str> = logs.lines().filter(|l| l.contains(canary)).collect();
        assert!(leaks.is_empty(), "credential leaked into logs: {leaks:#?}");
        for text in &texts {
            assert!(!text.contains(canary), "credential leaked: {text}");
        }
    }
    // The echoed key was scrubbed, not the whole message.
    assert!(
        texts
            .iter()
            .any(|t| t.contains("invalid api key [REDACTED]")),
        "{texts:#?}"
    );
}

/// A one-shot HTTP server that answers every request with `status` and a plain-text `body`,
/// i.e. an error body that is not the API's JSON shape (a proxy's error page).
async fn plain_error_server(status: u16, body: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                // Read the head and the (small) body; the answer does not depend on them.
                let mut buffer = vec![0u8; 64 * 1024];
                let _ = tokio::time::timeout(Duration::from_millis(200), async {
                    while let Ok(n) = socket.read(&mut buffer).await {
                        if n == 0 || buffer[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                            break;
                        }
                    }
                })
                .await;
                let head = format!(
                    "HTTP/1.1 {status} Error\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(body.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    format!("http://{address}")
}

#[tokio::test(flavor = "current_thread")]
async fn keys_echoed_in_error_bodies_and_in_stream_errors_are_redacted() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let mut texts = Vec::new();
    for kind in [
        ProviderKind::OpenaiCompatible,
        ProviderKind::Ollama,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
    ] {
        // A non-JSON error body (kept as text in the error message) echoing the key.
        let base = plain_error_server(400, format!("proxy says: bad key {TEST_KEY}")).await;
        let config = json!({"model": "m", "base_url": base, "max_attempts": 1});
        let credentials = |key: &str| (key == "api_key").then(|| SecretString::from(TEST_KEY));
        let spec = skillet_providers::ProviderSpec::from_llm_config(
            kind.as_str(),
            config.as_object(),
            &credentials,
        )
        .unwrap();
        let provider = ProviderPool::new().provider(&spec).unwrap();
        let error = provider
            .chat(ask("hi"), CallOptions::default())
            .await
            .expect_err("a 400 fails");
        assert!(
            error.to_string().contains("bad key [REDACTED]"),
            "{kind}: {error}"
        );
        texts.push(format!("{error} {error:?}"));

        // An in-stream error event echoing the key, after some text was delivered.
        let server = server("rules:\n  - reply: {text: \"a b c d e f g h\"}\n").await;
        server.push_fault(
            Fault::stream_error_after(2, 529).message(format!("overloaded, key {TEST_KEY}")),
        );
        let provider = ProviderPool::new()
            .provider(&spec_for(kind, &server))
            .unwrap();
        let deltas = Deltas::default();
        let error = provider
            .chat(ask("hi"), CallOptions::default().with_stream(&deltas))
            .await
            .expect_err("the in-stream error fails the call");
        texts.push(format!("{error} {error:?}"));
        assert!(error.to_string().contains("[REDACTED]"), "{kind}: {error}");
    }
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(!logs.contains(TEST_KEY), "key leaked into logs: {logs}");
    for text in texts {
        assert!(!text.contains(TEST_KEY), "key leaked: {text}");
    }
}

fn spec_for(kind: ProviderKind, server: &mock_llm::MockServer) -> skillet_providers::ProviderSpec {
    spec(kind, server, json!({"max_attempts": 1}))
}
