//! The A2A 1.0 gRPC binding of the real `skillet serve --http` binary, on the same listener as
//! every other route:
//! - the official `a2a-sdk` Python client restricted to the `GRPC` binding
//!   (`tests/python/a2a_binding_client.py grpc`, on a grpcio channel) finds the interface on the card,
//!   then sends, streams, gets, lists, subscribes to and cancels tasks, and sees A2A errors
//!   mapped back (task not found, not cancelable, invalid params, push notifications refused),
//!   and approves and denies a gated tool call over two turns (`python/a2a_approval_client.py`
//!   with the `GRPC` binding, the skills of `approvals.rs`);
//! - from Rust, raw gRPC over HTTP/2: every error is a gRPC status whose
//!   `grpc-status-details-bin` holds the A2A `ErrorInfo` reason; an unknown method is
//!   `UNIMPLEMENTED`, a message that does not decode `INVALID_ARGUMENT`, an unsupported
//!   `a2a-version` `FAILED_PRECONDITION`, a body that is not gRPC HTTP 415, and a rebinding
//!   `:authority` is refused by the same `Host` rule as every route;
//! - a call past its `grpc-timeout` is `DEADLINE_EXCEEDED` at the deadline (the server keeps
//!   it: the raw client does not);
//! - under `[auth]` the service needs the bearer credential in metadata (401 without), a skill
//!   the key may not run is `PERMISSION_DENIED`, and another identity's task is not found.
//!
//! The model is the embedded mock-llm. The Python interpreter is `$SKILLET_PYTHON` or
//! `<workspace>/.venv/bin/python` with the packages of `mock-llm/tests/python/requirements.txt`
//! (`a2a-sdk` and `grpcio`); without them the SDK test fails when `CI` is set and is skipped
//! loudly otherwise.

use crate::auth_support;
use crate::cli_support;
use crate::sdk_binding::{self, spawn_server};
use crate::serve_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use prost::Message as _;

use auth_support::{AuthServer, Jwks, KEY_A, KEY_ONE_AT_A_TIME};
use cli_support::*;
use serve_support::ServeHttp;

/// The path prefix of every method of the service.
const SERVICE: &str = "/lf.a2a.v1.A2AService";

#[tokio::test]
async fn the_a2a_sdk_grpc_client_sends_streams_gets_lists_subscribes_and_cancels_tasks() {
    let Some(python) = python_with("grpc, a2a.client.transports.grpc") else {
        return;
    };
    sdk_binding::every_check_passes(&python, "grpc").await;
}

#[tokio::test]
async fn the_a2a_sdk_grpc_client_approves_and_denies_a_gated_tool_call_over_two_turns() {
    let Some(python) = python_with("grpc, a2a.client.transports.grpc") else {
        return;
    };
    let skills = tempfile::tempdir().unwrap();
    write_gated_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("skillet.toml"), "").unwrap();
    let server = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .skills_dir(skills.path())
        .spawn()
        .await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/a2a_approval_client.py");
    let run = tokio::process::Command::new(&python)
        .arg(&script)
        .args([server.base.as_str(), "GRPC"])
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("SKILLET_CONFIG")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .expect("the SDK script ends within 180 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "a2a_approval_client.py over gRPC failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for check in ["approve", "deny"] {
        assert!(
            stdout.lines().any(|l| l == format!("OK {check}")),
            "{check}: {stdout}"
        );
    }
}

// The few messages the Rust tests send and read, by their `a2a.proto` and googleapis numbers.

#[derive(Clone, PartialEq, prost::Message)]
struct GetTaskRequest {
    #[prost(string, tag = "2")]
    id: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct SendMessageRequest {
    #[prost(message, optional, tag = "2")]
    message: Option<A2aMessage>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct A2aMessage {
    #[prost(string, tag = "1")]
    message_id: String,
    /// `ROLE_USER` is 1.
    #[prost(int32, tag = "4")]
    role: i32,
    #[prost(message, repeated, tag = "5")]
    parts: Vec<Part>,
    #[prost(message, optional, tag = "6")]
    metadata: Option<Struct>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Part {
    #[prost(string, tag = "1")]
    text: String,
}

/// `google.protobuf.Struct` holding string values only.
#[derive(Clone, PartialEq, prost::Message)]
struct Struct {
    #[prost(btree_map = "string, message", tag = "1")]
    fields: BTreeMap<String, StringValue>,
}

/// `google.protobuf.Value` with its `string_value` set.
#[derive(Clone, PartialEq, prost::Message)]
struct StringValue {
    #[prost(string, tag = "3")]
    string_value: String,
}

/// `google.rpc.Status`.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<Any>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
struct Any {
    #[prost(string, tag = "1")]
    type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

/// `google.rpc.ErrorInfo`.
#[derive(Clone, PartialEq, prost::Message)]
struct ErrorInfo {
    #[prost(string, tag = "1")]
    reason: String,
    #[prost(string, tag = "2")]
    domain: String,
    #[prost(btree_map = "string, string", tag = "3")]
    metadata: BTreeMap<String, String>,
}

/// gRPC codes the tests expect.
const INVALID_ARGUMENT: i32 = 3;
const DEADLINE_EXCEEDED: i32 = 4;
const NOT_FOUND: i32 = 5;
const PERMISSION_DENIED: i32 = 7;
const FAILED_PRECONDITION: i32 = 9;
const UNIMPLEMENTED: i32 = 12;

/// A client speaking HTTP/2 in clear, as gRPC clients do.
fn h2_client() -> reqwest::Client {
    reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap()
}

/// `message` in gRPC's length-prefixed framing (uncompressed).
fn frame(message: &[u8]) -> Vec<u8> {
    let mut body = vec![0];
    body.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    body.extend_from_slice(message);
    body
}

/// What came back from one call: the HTTP status, and for an error answered before any message
/// (gRPC's "trailers-only" form, where the status is in the headers) the status code, its
/// details and their `ErrorInfo`.
#[derive(Debug)]
struct Answer {
    http: u16,
    grpc_status: Option<i32>,
    status: Option<RpcStatus>,
    info: Option<ErrorInfo>,
    body: Vec<u8>,
}

/// Calls `method` with `message` (already encoded) and these metadata entries.
async fn call(
    client: &reqwest::Client,
    base: &str,
    method: &str,
    message: &[u8],
    metadata: &[(&str, &str)],
) -> Answer {
    let mut request = client
        .post(format!("{base}{SERVICE}/{method}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(frame(message));
    for (key, value) in metadata {
        request = request.header(*key, *value);
    }
    let response = request.send().await.unwrap();
    let http = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let grpc_status = header("grpc-status").map(|s| s.parse().unwrap());
    let status = header("grpc-status-details-bin").map(|b64| {
        let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(b64.trim_end_matches('='))
            .unwrap();
        RpcStatus::decode(bytes.as_slice()).unwrap()
    });
    let info = status.as_ref().and_then(|s| {
        s.details
            .iter()
            .find(|d| d.type_url == "type.googleapis.com/google.rpc.ErrorInfo")
            .map(|d| ErrorInfo::decode(d.value.as_slice()).unwrap())
    });
    let body = response.bytes().await.unwrap().to_vec();
    Answer {
        http,
        grpc_status,
        status,
        info,
        body,
    }
}

/// Asserts an A2A error: HTTP 200, this gRPC code, the same code in the details, and an
/// `ErrorInfo` of domain `a2a-protocol.org` with this reason.
fn assert_a2a_error(answer: &Answer, code: i32, reason: &str) {
    assert_eq!(answer.http, 200, "{answer:?}");
    assert_eq!(answer.grpc_status, Some(code), "{answer:?}");
    let status = answer.status.as_ref().expect("grpc-status-details-bin");
    assert_eq!(status.code, code, "{answer:?}");
    assert!(!status.message.is_empty(), "{answer:?}");
    let info = answer.info.as_ref().expect("an ErrorInfo detail");
    assert_eq!(info.reason, reason, "{answer:?}");
    assert_eq!(info.domain, "a2a-protocol.org", "{answer:?}");
}

fn get_task(id: &str) -> Vec<u8> {
    GetTaskRequest { id: id.into() }.encode_to_vec()
}

fn send_to(skill: &str) -> Vec<u8> {
    let metadata = Struct {
        fields: BTreeMap::from([(
            "skillId".to_owned(),
            StringValue {
                string_value: skill.to_owned(),
            },
        )]),
    };
    SendMessageRequest {
        message: Some(A2aMessage {
            message_id: format!("m-{skill}"),
            role: 1,
            parts: vec![Part { text: "hi".into() }],
            metadata: Some(metadata),
        }),
    }
    .encode_to_vec()
}

#[tokio::test]
async fn grpc_errors_are_statuses_with_the_a2a_error_info_and_the_host_rule_holds() {
    let (server, _skills) = spawn_server().await;
    let client = h2_client();
    let base = server.base.as_str();

    let unknown = call(&client, base, "GetTask", &get_task("nope"), &[]).await;
    assert_a2a_error(&unknown, NOT_FOUND, "TASK_NOT_FOUND");
    // A streaming method's error comes as a status before any message.
    let subscribe = call(&client, base, "SubscribeToTask", &get_task("nope"), &[]).await;
    assert_a2a_error(&subscribe, NOT_FOUND, "TASK_NOT_FOUND");
    let cancel = call(&client, base, "CancelTask", &get_task("nope"), &[]).await;
    assert_a2a_error(&cancel, NOT_FOUND, "TASK_NOT_FOUND");
    let empty = call(&client, base, "SendMessage", &[], &[]).await;
    assert_a2a_error(&empty, INVALID_ARGUMENT, "INVALID_PARAMS");
    let card = call(&client, base, "GetExtendedAgentCard", &[], &[]).await;
    assert_a2a_error(
        &card,
        FAILED_PRECONDITION,
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    );
    let old = call(
        &client,
        base,
        "GetTask",
        &get_task("nope"),
        &[("a2a-version", "0.3")],
    )
    .await;
    assert_a2a_error(&old, FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");

    // Failures of the gRPC layer itself: plain statuses.
    let garbage = call(&client, base, "GetTask", b"\xff\xff\xff", &[]).await;
    assert_eq!(
        (garbage.http, garbage.grpc_status),
        (200, Some(INVALID_ARGUMENT)),
        "{garbage:?}"
    );
    // Messages are not compressed: a compressed one is refused, not misread.
    let gzip = call(
        &client,
        base,
        "GetTask",
        &get_task("nope"),
        &[("grpc-encoding", "gzip")],
    )
    .await;
    assert_eq!(
        (gzip.http, gzip.grpc_status),
        (200, Some(UNIMPLEMENTED)),
        "{gzip:?}"
    );
    let method = call(&client, base, "NoSuchMethod", &[], &[]).await;
    assert_eq!(
        (method.http, method.grpc_status),
        (200, Some(UNIMPLEMENTED)),
        "{method:?}"
    );
    let json = client
        .post(format!("{base}{SERVICE}/GetTask"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(json.status().as_u16(), 415);

    // A rebinding name for this server's address is refused before the service.
    let addr: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let rebinding = reqwest::Client::builder()
        .http2_prior_knowledge()
        .resolve("rebind.example", addr)
        .build()
        .unwrap();
    let foreign = call(
        &rebinding,
        &format!("http://rebind.example:{}", addr.port()),
        "GetTask",
        &get_task("nope"),
        &[],
    )
    .await;
    assert_eq!(foreign.http, 403, "{foreign:?}");

    // The service still answers: a task sent over gRPC is read back over gRPC.
    let sent = call(&client, base, "SendMessage", &send_to("summarize"), &[]).await;
    assert_eq!((sent.http, sent.grpc_status), (200, None), "{sent:?}");
    assert!(sent.body.len() > 5 && sent.body[0] == 0, "{sent:?}");
}

/// The server keeps the client's `grpc-timeout` itself (reqwest knows nothing of it): a unary
/// call to a skill slower than it is `DEADLINE_EXCEEDED` at the deadline, and a stream of one
/// ends there instead of with the run.
#[tokio::test]
async fn a_call_past_its_grpc_timeout_ends_deadline_exceeded_at_the_deadline() {
    let (server, _skills) = spawn_server().await;
    let client = h2_client();
    let base = server.base.as_str();
    let timeout = [("grpc-timeout", "300m")];

    let started = std::time::Instant::now();
    let late = call(
        &client,
        base,
        "SendMessage",
        &send_to("slow-echo"),
        &timeout,
    )
    .await;
    assert_eq!(
        (late.http, late.grpc_status),
        (200, Some(DEADLINE_EXCEEDED)),
        "{late:?}"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_millis(1200),
        "{waited:?}"
    );

    let started = std::time::Instant::now();
    let stream = call(
        &client,
        base,
        "SendStreamingMessage",
        &send_to("slow-echo"),
        &timeout,
    )
    .await;
    assert_eq!(stream.http, 200, "{stream:?}");
    assert!(!stream.body.is_empty(), "the task comes first: {stream:?}");
    assert!(
        started.elapsed() < Duration::from_millis(1200),
        "{:?}",
        started.elapsed()
    );

    // Without the header the same call waits for the run.
    let answered = call(&client, base, "SendMessage", &send_to("slow-echo"), &[]).await;
    assert_eq!(
        (answered.http, answered.grpc_status),
        (200, None),
        "{answered:?}"
    );
}

#[tokio::test]
async fn under_auth_the_grpc_service_needs_the_bearer_credential_in_metadata() {
    let jwks = Jwks::serve(vec![]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = h2_client();
    let base = server.server.base.as_str();
    let bearer = |key: &str| format!("Bearer {key}");

    let anonymous = call(&client, base, "SendMessage", &send_to("echo-a"), &[]).await;
    assert_eq!(anonymous.http, 401, "{anonymous:?}");

    let a = bearer(KEY_A);
    let refused = call(
        &client,
        base,
        "SendMessage",
        &send_to("echo-b"),
        &[("authorization", &a)],
    )
    .await;
    assert_a2a_error(&refused, PERMISSION_DENIED, "INVALID_REQUEST");
    assert_eq!(
        refused.info.as_ref().unwrap().metadata["a2eCode"],
        "unauthorized"
    );

    let sent = call(
        &client,
        base,
        "SendMessage",
        &send_to("echo-a"),
        &[("authorization", &a)],
    )
    .await;
    assert_eq!((sent.http, sent.grpc_status), (200, None), "{sent:?}");
    // SendMessageResponse { task: Task { id (1) … } (1) }: the task id is the first string.
    let task_id = task_id_of(&sent.body);
    let own = call(
        &client,
        base,
        "GetTask",
        &get_task(&task_id),
        &[("authorization", &a)],
    )
    .await;
    assert_eq!((own.http, own.grpc_status), (200, None), "{own:?}");
    let other = bearer(KEY_ONE_AT_A_TIME);
    let hidden = call(
        &client,
        base,
        "GetTask",
        &get_task(&task_id),
        &[("authorization", &other)],
    )
    .await;
    assert_a2a_error(&hidden, NOT_FOUND, "TASK_NOT_FOUND");
}

/// The task id of a framed `SendMessageResponse` holding a task.
fn task_id_of(body: &[u8]) -> String {
    #[derive(Clone, PartialEq, prost::Message)]
    struct Task {
        #[prost(string, tag = "1")]
        id: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct SendMessageResponse {
        #[prost(message, optional, tag = "1")]
        task: Option<Task>,
    }
    assert!(body.len() >= 5 && body[0] == 0, "one uncompressed message");
    let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
    let response = SendMessageResponse::decode(&body[5..5 + len]).unwrap();
    let id = response.task.expect("a task").id;
    assert!(!id.is_empty());
    id
}
