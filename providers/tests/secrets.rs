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
