//! Helpers for the telemetry tests: a real OTLP/HTTP receiver decoding the protobuf with the
//! official definitions, a 3-turn test skill with two calculator calls scripted in mock-llm,
//! `skillet serve --http` with telemetry on (started through `serve_support`), and readers for
//! exported span attributes.

#![allow(dead_code)]

use crate::serve_support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::routing::post;
use mock_llm::{MockConfig, MockServer, Scenario};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};
use serve_support::ServeHttp;

/// The binary under test.
pub const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");
/// The provider credential: must never appear in an export.
pub const CANARY_KEY: &str = "sk-CANARY-5e1f0c9a7d3b";
/// Text in the arguments and model answers: must not appear unless content capture is on.
pub const CONTENT_CANARY: &str = "CONTENT-CANARY";
/// The model of the test provider.
pub const MODEL: &str = "tally-model";
/// (input, output) tokens mock-llm reports per turn.
pub const TURN_TOKENS: [(i64, i64); 3] = [(101, 11), (202, 22), (303, 33)];

// ---------------------------------------------------------------- the OTLP receiver

/// Every export request received: raw body and decoded.
#[derive(Clone, Default)]
pub struct Received(Arc<Mutex<Vec<(Bytes, ExportTraceServiceRequest)>>>);

impl Received {
    pub fn spans(&self) -> Vec<Span> {
        let exports = self.0.lock().unwrap();
        exports
            .iter()
            .flat_map(|(_, request)| &request.resource_spans)
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| s.spans.clone())
            .collect()
    }

    pub fn resource_attributes(&self) -> Vec<KeyValue> {
        let exports = self.0.lock().unwrap();
        exports
            .iter()
            .flat_map(|(_, request)| &request.resource_spans)
            .filter_map(|r| r.resource.clone())
            .flat_map(|r| r.attributes)
            .collect()
    }

    pub fn raw(&self) -> Vec<Bytes> {
        let exports = self.0.lock().unwrap();
        exports.iter().map(|(raw, _)| raw.clone()).collect()
    }
}

pub async fn start_collector() -> (String, Received) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    start_collector_on(listener).await
}

/// A 127.0.0.1 port that is bound but does not listen: connections to it are refused, and no
/// other test can take it meanwhile (a port picked and closed again could be reused by any
/// concurrent test). `.listen(128)` later turns it into a listener on the same port.
pub fn refusing_port() -> (tokio::net::TcpSocket, String) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let address = socket.local_addr().unwrap().to_string();
    (socket, address)
}

/// [`start_collector`] on `listener` (a [`refusing_port`] that starts listening, say).
pub async fn start_collector_on(listener: tokio::net::TcpListener) -> (String, Received) {
    let received = Received::default();
    let sink = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let sink = sink.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body.clone())
                    .expect("the export is a valid OTLP protobuf");
                sink.0.lock().unwrap().push((body, request));
                (
                    [("content-type", "application/x-protobuf")],
                    ExportTraceServiceResponse::default().encode_to_vec(),
                )
            }
        }),
    );
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, received)
}

/// A running OTLP/gRPC receiver (`tests/python/otlp_grpc_receiver.py`); dropping it stops it.
pub struct GrpcCollector {
    _child: tokio::process::Child,
}

/// Starts the official Python gRPC receiver with `python`; every export it decodes lands in
/// the returned [`Received`], as with [`start_collector`].
pub async fn start_grpc_collector(python: &Path) -> (String, Received, GrpcCollector) {
    use base64::Engine as _;
    use tokio::io::AsyncBufReadExt;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/otlp_grpc_receiver.py");
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the gRPC receiver starts")
        .unwrap()
        .expect("the gRPC receiver printed its port");
    let port = first.strip_prefix("port ").expect("`port N` first");
    let received = Received::default();
    let sink = received.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let raw = Bytes::from(
                base64::engine::general_purpose::STANDARD
                    .decode(line.trim())
                    .expect("base64 from the receiver"),
            );
            let request = ExportTraceServiceRequest::decode(raw.clone())
                .expect("the export is a valid OTLP protobuf");
            sink.0.lock().unwrap().push((raw, request));
        }
    });
    (
        format!("http://127.0.0.1:{port}"),
        received,
        GrpcCollector { _child: child },
    )
}

// ---------------------------------------------------------------- the skill and the server

pub fn write_tally_skill(root: &Path) {
    let dir = root.join("tally");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: tally\ndescription: Adds numbers with the calculator (test skill).\nmetadata:\n  \
         a2a-tags: '[\"test\"]'\n  a2a-input-schema: assets/input.schema.json\n  \
         a2a-output-schema: assets/output.schema.json\n  a2e-tools: '[\"calculator\"]'\n  \
         a2e-max-turns: '4'\n---\nYou tally numbers. The text: {{ text }}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/input.schema.json"),
        r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}"#,
    )
    .unwrap();
}

/// Turn 1 and 2 call the calculator (the second with an expression it rejects), turn 3 answers;
/// every turn reports fixed token counts.
pub fn scenario() -> Scenario {
    scenario_with_usage(["", "", ""])
}

/// [`scenario`] with `extra[turn - 1]` appended to each turn's usage (`, cached: 40`).
pub fn scenario_with_usage(extra: [&str; 3]) -> Scenario {
    let [(i1, o1), (i2, o2), (i3, o3)] = TURN_TOKENS;
    let [e1, e2, e3] = extra;
    Scenario::from_yaml_str(&format!(
        r#"
rules:
  - name: first
    when: {{ system_contains: "You tally", turn: 1 }}
    reply:
      tool_calls: [{{ name: calculator, arguments: {{ expression: "2 + 3" }} }}]
      usage: {{ input: {i1}, output: {o1}{e1} }}
  - name: second
    when: {{ system_contains: "You tally", turn: 2 }}
    reply:
      tool_calls: [{{ name: calculator, arguments: {{ expression: "2 +* {CONTENT_CANARY}" }} }}]
      usage: {{ input: {i2}, output: {o2}{e2} }}
  - name: answer
    when: {{ system_contains: "You tally", turn: 3 }}
    reply:
      json: {{ answer: "{CONTENT_CANARY} five" }}
      usage: {{ input: {i3}, output: {o3}{e3} }}
"#
    ))
    .unwrap()
}

pub struct Served {
    _child: tokio::process::Child,
    pub base: String,
    _cwd: tempfile::TempDir,
    pub mock: MockServer,
}

/// `skillet serve --http` on the tally skill, a mock-llm provider whose key is [`CANARY_KEY`],
/// prices for [`MODEL`], `extra_toml` appended to `skillet.toml`, exporting to `otlp_base`.
pub async fn serve_with_telemetry(otlp_base: &str, extra_toml: &str) -> Served {
    serve_with_provider(otlp_base, "openai-compatible", scenario(), extra_toml).await
}

/// [`serve_with_telemetry`] with a provider of `kind` (`openai-compatible`, `openai`,
/// `anthropic`) answering from `scenario`.
pub async fn serve_with_provider(
    otlp_base: &str,
    kind: &str,
    scenario: Scenario,
    extra_toml: &str,
) -> Served {
    let mock = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    // Anthropic's base URL is the host; the OpenAI ones include `/v1`.
    let base_url = match kind {
        "anthropic" => mock.base_url(),
        _ => format!("{}/v1", mock.base_url()),
    };
    let cwd = tempfile::tempdir().unwrap();
    write_tally_skill(cwd.path());
    std::fs::write(
        cwd.path().join("skillet.toml"),
        format!(
            r#"
default_provider = "m"
skills_dirs = ["."]

[providers.m]
kind = "{kind}"
model = "{MODEL}"
base_url = "{base_url}"
api_key_env = "SKILLET_TEST_CANARY_KEY"
options = {{ initial_backoff_ms = 5, max_backoff_ms = 20 }}

[pricing.{MODEL}]
input_per_million = 1.0
output_per_million = 2.0
currency = "EUR"
{extra_toml}
"#
        ),
    )
    .unwrap();
    let served = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env("SKILLET_TEST_CANARY_KEY", CANARY_KEY)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_base)
        .env("OTEL_SERVICE_NAME", "skillet-under-test")
        .env(
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment.name=test",
        )
        .spawn()
        .await;
    Served {
        _child: served.child,
        base: served.base,
        _cwd: cwd,
        mock,
    }
}

pub async fn post_call(base: &str, body: Value, traceparent: Option<String>) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/a2e"))
        .body(body.to_string());
    if let Some(parent) = traceparent {
        request = request.header("traceparent", parent);
    }
    request.send().await.unwrap().json().await.unwrap()
}

/// The Prometheus text of `{base}/metrics`.
pub async fn metrics_text(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

pub fn tally_call(id: &str, metadata: Value) -> Value {
    json!({"type": "skill/call/req", "id": id, "name": "tally", "streaming": false,
           "arguments": {"text": format!("{CONTENT_CANARY} two and three")},
           "metadata": metadata})
}

// ---------------------------------------------------------------- span helpers

pub fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

pub fn str_attr<'a>(span: &'a Span, key: &str) -> &'a str {
    match attr(&span.attributes, key) {
        Some(any_value::Value::StringValue(s)) => s,
        other => panic!("{}: {key} is not a string: {other:?}", span.name),
    }
}

pub fn int_attr(span: &Span, key: &str) -> i64 {
    match attr(&span.attributes, key) {
        Some(any_value::Value::IntValue(n)) => *n,
        other => panic!("{}: {key} is not an int: {other:?}", span.name),
    }
}

pub fn string_array_attr(span: &Span, key: &str) -> Vec<String> {
    match attr(&span.attributes, key) {
        Some(any_value::Value::ArrayValue(array)) => array
            .values
            .iter()
            .map(|v| match &v.value {
                Some(any_value::Value::StringValue(s)) => s.clone(),
                other => panic!("{key}: not a string element: {other:?}"),
            })
            .collect(),
        other => panic!("{}: {key} is not an array: {other:?}", span.name),
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn status_code(span: &Span) -> i32 {
    span.status.as_ref().map_or(0, |s| s.code)
}

/// Waits until `count` spans of `trace` arrived.
pub async fn wait_for_spans(received: &Received, trace: &str, count: usize) -> Vec<Span> {
    for _ in 0..150 {
        let spans: Vec<Span> = received
            .spans()
            .into_iter()
            .filter(|s| hex(&s.trace_id) == trace)
            .collect();
        if spans.len() >= count {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "fewer than {count} spans of trace {trace} arrived: {:?}",
        received.spans().iter().map(|s| &s.name).collect::<Vec<_>>()
    );
}
