//! The A2A 1.0 JSON-RPC binding of the real `skillet serve --http` binary:
//! - every malformed or unsupported JSON-RPC request gets exactly one JSON-RPC answer with the
//!   right code, and the server (A2E included) keeps serving afterwards;
//! - a full task store refuses new tasks while all run and evicts the oldest finished one;
//!   `[a2a] jsonrpc = false` serves and lists only A2E; SIGTERM lets a streamed task finish;
//! - the Agent Card carries `Cache-Control` (a max-age) and an `ETag`, and a matching
//!   `If-None-Match` is answered 304 with no body;
//! - the official `a2a-sdk` Python client (`tests/python/a2a_client.py`) resolves the card,
//!   sends, streams, gets, subscribes to and cancels tasks, sees unknown skills and bad input
//!   refused, and runs 50 concurrent tasks that each finish once.
//!
//! The model is the embedded mock-llm; its journal (`/_mock/requests`) shows that a cancelled
//! task makes no further provider request. The Python interpreter is `$SKILLET_PYTHON` or
//! `<workspace>/.venv/bin/python` with the packages of `mock-llm/tests/python/requirements.txt`;
//! without one (or without `a2a-sdk`) the SDK test fails when `CI` is set and is skipped loudly
//! otherwise.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use cli_support::*;
use serve_support::{ServeHttp, get_json, post_json};

struct Server {
    child: tokio::process::Child,
    base: String,
    mock: String,
    _skills: tempfile::TempDir,
    _cwd: tempfile::TempDir,
}

/// `skillet serve --http` (body limit 16 KiB, a card provider) with the bundled skills, `slow-echo` (valid answer after 1.5 s),
/// `slow-loop` (two 1.5 s turns whose answers never validate) and `bad-output` (the same, at
/// once).
async fn spawn_server(extra_config: &str) -> Server {
    let skills = tempfile::tempdir().unwrap();
    write_marked_skill(
        skills.path(),
        "slow-echo",
        1500,
        "{json: {echo: \"hello\"}}",
    );
    write_marked_skill(skills.path(), "slow-loop", 1500, "{json: {wrong: 1}}");
    write_marked_skill(skills.path(), "bad-output", 0, "{json: {wrong: 2}}");
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        format!(
            "[server]\nmax_message_bytes = 16384\n\n[a2a]\n{extra_config}\n[a2a.provider]\n\
             organization = \"Skillet Tests\"\nurl = \"https://example.com\"\n"
        ),
    )
    .unwrap();
    let served = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .skills_dir(bundled_skills())
        .skills_dir(skills.path())
        .spawn()
        .await;
    Server {
        child: served.child,
        base: served.base,
        mock: served.mock.expect("the embedded mock-llm URL is announced"),
        _skills: skills,
        _cwd: cwd,
    }
}

/// Posts `body` to `/a2a` with `A2A-Version: version` (none when `None`); returns the status
/// and the one JSON answer (for a streaming method, the one SSE event's).
async fn post(
    client: &reqwest::Client,
    server: &Server,
    version: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let mut request = client
        .post(format!("{}/a2a", server.base))
        .header("content-type", "application/json")
        .body(body);
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    // A streaming method's error is one SSE event holding the JSON-RPC answer.
    let json = text.strip_prefix("data: ").unwrap_or(&text).trim_end();
    let answer: Value = serde_json::from_str(json)
        .unwrap_or_else(|e| panic!("one JSON answer expected ({e}): {text:?}"));
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    (status, answer)
}

/// A bad request: its name, the `A2A-Version` sent, the body, the id and code answered.
type BadCase = (&'static str, Option<&'static str>, Vec<u8>, Value, i64);

fn rpc(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[tokio::test]
async fn every_bad_jsonrpc_request_gets_one_answer_with_its_code_and_the_server_keeps_serving() {
    let server = spawn_server("").await;
    let client = reqwest::Client::new();
    let v1 = Some("1.0");
    let cases: Vec<BadCase> = vec![
        ("not JSON", v1, "{nope".into(), Value::Null, -32700),
        ("not UTF-8", v1, b"\"\xff\"".to_vec(), Value::Null, -32700),
        ("not an object", v1, "42".into(), Value::Null, -32600),
        ("empty batch", v1, "[]".into(), Value::Null, -32600),
        ("batch", v1, format!("[{}]", rpc(json!(1), "GetTask", json!({"id": "x"}))).into(), Value::Null, -32600),
        ("no id", v1, r#"{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}"#.into(), Value::Null, -32600),
        ("wrong jsonrpc", v1, r#"{"jsonrpc":"1.0","id":3,"method":"GetTask"}"#.into(), json!(3), -32600),
        ("method not a string", v1, r#"{"jsonrpc":"2.0","id":"m","method":7}"#.into(), json!("m"), -32600),
        ("unknown method", v1, rpc(json!(4), "tasks/get", json!({})).into(), json!(4), -32601),
        ("params not an object", v1, rpc(json!(5), "GetTask", json!("x")).into(), json!(5), -32602),
        ("params missing", v1, r#"{"jsonrpc":"2.0","id":6,"method":"SendMessage"}"#.into(), json!(6), -32602),
        ("missing task id", v1, rpc(json!(7), "GetTask", json!({})).into(), json!(7), -32602),
        ("message not an object", v1, rpc(json!(8), "SendMessage", json!({"message": 5})).into(), json!(8), -32602),
        ("negative historyLength", v1, rpc(json!(9), "GetTask", json!({"id": "x", "historyLength": -1})).into(), json!(9), -32602),
        ("no skill named", v1, rpc(json!(10), "SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})).into(), json!(10), -32602),
        ("two data parts", v1, rpc(json!(11), "SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "metadata": {"skillId": "summarize"}, "parts": [{"data": {"text": "a"}}, {"data": {"text": "b"}}]}})).into(), json!(11), -32602),
        ("part without content", v1, rpc(json!(23), "SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "metadata": {"skillId": "summarize"}, "parts": [{"mediaType": "text/plain"}]}})).into(), json!(23), -32602),
        ("file part", v1, rpc(json!(12), "SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "metadata": {"skillId": "summarize"}, "parts": [{"url": "https://x/y.pdf"}]}})).into(), json!(12), -32005),
        ("streaming bad params", v1, rpc(json!(13), "SendStreamingMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "metadata": {"skillId": "nope"}, "parts": [{"text": "a"}]}})).into(), json!(13), -32602),
        ("output mode", v1, rpc(json!(22), "SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "metadata": {"skillId": "summarize"}, "parts": [{"text": "a"}]}, "configuration": {"acceptedOutputModes": ["image/png"]}})).into(), json!(22), -32005),
        ("unknown task", v1, rpc(json!(14), "GetTask", json!({"id": "no-such-task"})).into(), json!(14), -32001),
        ("cancel unknown task", v1, rpc(json!(15), "CancelTask", json!({"id": "no-such-task"})).into(), json!(15), -32001),
        ("continue unknown task", v1, rpc(json!(16), "SendMessage", json!({"message": {"messageId": "m", "taskId": "no-such-task", "role": "ROLE_USER", "parts": [{"text": "a"}]}})).into(), json!(16), -32001),
        ("list tasks, page too big", v1, rpc(json!(17), "ListTasks", json!({"pageSize": 1000})).into(), json!(17), -32602),
        ("push config", v1, rpc(json!(18), "CreateTaskPushNotificationConfig", json!({"taskId": "t", "url": "https://h"})).into(), json!(18), -32003),
        ("extended card", v1, rpc(json!(19), "GetExtendedAgentCard", json!({})).into(), json!(19), -32007),
        ("no version, a 0.3 name", None, rpc(json!(20), "tasks/get", json!({"id": "x"})).into(), json!(20), -32009),
        ("no version, a 1.0 name is read as 1.0", None, rpc(json!(24), "GetTask", json!({"id": "no-such-task"})).into(), json!(24), -32001),
        ("version 0.3 named", Some("0.3"), rpc(json!(25), "GetTask", json!({"id": "x"})).into(), json!(25), -32009),
        ("no messageId", v1, rpc(json!(26), "SendMessage", json!({"message": {"role": "ROLE_USER", "metadata": {"skillId": "summarize"}, "parts": [{"text": "a"}]}})).into(), json!(26), -32602),
        ("version 2.0", Some("2.0"), rpc(json!(21), "GetTask", json!({"id": "x"})).into(), json!(21), -32009),
    ];
    for (name, version, body, id, code) in cases {
        let (status, answer) = post(&client, &server, version, body).await;
        assert_eq!(status, 200, "{name}: {answer}");
        assert_eq!(answer["id"], id, "{name}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{name}: {answer}");
        assert!(answer.get("result").is_none(), "{name}: {answer}");
        assert!(
            answer["error"]["data"][0]["@type"]
                .as_str()
                .is_some_and(|t| t.ends_with("google.rpc.ErrorInfo")),
            "{name}: {answer}"
        );
    }
    // A body over the limit (`[server] max_message_bytes` = 16 KiB here): 413, still one
    // JSON-RPC answer.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{{"id":"{}"}}}}"#,
        "x".repeat(32 * 1024)
    );
    let (status, answer) = post(&client, &server, v1, huge).await;
    assert_eq!(status, 413);
    assert_eq!(answer["error"]["code"], -32600);

    // Still serving: a valid call completes, and A2E is unchanged next to it.
    let send = rpc(
        json!("ok"),
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER",
            "metadata": {"skillId": "summarize"}, "parts": [{"data": {"text": "Some text."}}]}}),
    );
    let (_, answer) = post(&client, &server, v1, send).await;
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
    let discover = post_json(
        &client,
        format!("{}/a2e", server.base),
        r#"{"type":"skill/discover/req","id":"d1"}"#,
    )
    .await;
    assert_eq!(discover["type"], "skill/discover/resp");
    let card = get_json(
        &client,
        format!("{}/.well-known/agent-card.json", server.base),
    )
    .await;
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(
        card["supportedInterfaces"][1]["protocolBinding"],
        "HTTP+JSON"
    );
    assert_eq!(card["supportedInterfaces"][2]["protocolBinding"], "GRPC");
    assert_eq!(card["supportedInterfaces"][3]["protocolBinding"], "A2E");
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    assert_eq!(card["provider"]["organization"], "Skillet Tests");
}

#[tokio::test]
async fn the_agent_card_is_cacheable_and_a_matching_if_none_match_gets_304_without_a_body() {
    let server = spawn_server("").await;
    let client = reqwest::Client::new();
    let url = format!("{}/.well-known/agent-card.json", server.base);
    let first = client.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 200);
    let header = |response: &reqwest::Response, name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let cache_control = header(&first, "cache-control").expect("a Cache-Control header");
    assert!(
        cache_control.contains("max-age="),
        "Cache-Control names a max-age: {cache_control}"
    );
    let tag = header(&first, "etag").expect("an ETag header");
    assert!(
        tag.starts_with('"') && tag.ends_with('"'),
        "a strong tag: {tag}"
    );
    let card: Value = first.json().await.unwrap();
    assert_eq!(card["provider"]["organization"], "Skillet Tests");

    let again = client
        .get(&url)
        .header("If-None-Match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(header(&again, "etag").as_deref(), Some(tag.as_str()));
    assert!(again.bytes().await.unwrap().is_empty(), "304 has no body");

    let stale = client
        .get(&url)
        .header("If-None-Match", "\"some-older-card\"")
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 200, "another tag gets the card");
    assert_eq!(header(&stale, "etag").as_deref(), Some(tag.as_str()));
}

fn send_slow_echo(id: i64) -> String {
    rpc(
        json!(id),
        "SendMessage",
        json!({"message": {"messageId": format!("m{id}"), "role": "ROLE_USER",
            "metadata": {"skillId": "slow-echo"}, "parts": [{"text": "hi"}]},
            "configuration": {"returnImmediately": true}}),
    )
}

#[tokio::test]
async fn a_full_task_store_refuses_while_all_run_then_evicts_the_oldest_finished_task() {
    let server = spawn_server("max_tasks = 1").await;
    let client = reqwest::Client::new();
    let v1 = Some("1.0");
    let (_, first) = post(&client, &server, v1, send_slow_echo(1)).await;
    let first_id = first["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        first["result"]["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{first}"
    );
    // The only slot holds a running task: refused, retryable, no task created.
    let (_, refused) = post(&client, &server, v1, send_slow_echo(2)).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("task store full"),
        "{refused}"
    );
    // Once the running task finished, the next task evicts it.
    let subscribe = rpc(json!(3), "SubscribeToTask", json!({"id": first_id}));
    let stream = client
        .post(format!("{}/a2a", server.base))
        .header("A2A-Version", "1.0")
        .body(subscribe)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(stream.contains("TASK_STATE_COMPLETED"), "{stream}");
    let (_, second) = post(&client, &server, v1, send_slow_echo(4)).await;
    assert!(second["result"]["task"]["id"].is_string(), "{second}");
    let get = rpc(json!(5), "GetTask", json!({"id": first_id}));
    let (_, evicted) = post(&client, &server, v1, get).await;
    assert_eq!(evicted["error"]["code"], -32001, "{evicted}");
}

#[tokio::test]
async fn with_jsonrpc_off_only_a2e_is_served_and_listed() {
    let server = spawn_server("jsonrpc = false").await;
    let client = reqwest::Client::new();
    let card = get_json(
        &client,
        format!("{}/.well-known/agent-card.json", server.base),
    )
    .await;
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    assert_eq!(interfaces.len(), 1, "{card}");
    assert_eq!(interfaces[0]["protocolBinding"], "A2E");
    let status = client
        .post(format!("{}/a2a", server.base))
        .header("A2A-Version", "1.0")
        .body(rpc(json!(1), "GetTask", json!({"id": "x"})))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 404);
}

#[tokio::test]
async fn sigterm_with_a_streamed_task_in_flight_ends_its_stream_completed_and_exits_0() {
    let mut server = spawn_server("").await;
    let client = reqwest::Client::new();
    let send = rpc(
        json!("s1"),
        "SendStreamingMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER",
            "metadata": {"skillId": "slow-echo"}, "parts": [{"text": "bye"}]}}),
    );
    let response = client
        .post(format!("{}/a2a", server.base))
        .header("A2A-Version", "1.0")
        .body(send)
        .send()
        .await
        .unwrap();
    // Headers arrive once the task exists and runs; then stop the server.
    sigterm(server.child.id().unwrap());
    let text = response.text().await.unwrap();
    let items: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(items[0]["result"]["task"]["id"].is_string(), "{text}");
    let terminal: Vec<&Value> = items
        .iter()
        .filter(|i| {
            i["result"]["statusUpdate"]["status"]["state"]
                .as_str()
                .is_some_and(|s| s != "TASK_STATE_WORKING")
        })
        .collect();
    assert_eq!(terminal.len(), 1, "{text}");
    assert_eq!(
        terminal[0]["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{text}"
    );
    assert_eq!(
        items.last(),
        Some(terminal[0]),
        "the terminal status ends the stream"
    );
    let status = tokio::time::timeout(Duration::from_secs(60), server.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn the_official_a2a_sdk_sends_streams_gets_subscribes_and_cancels_tasks() {
    let Some(python) = python_with("a2a.client, jsonschema") else {
        return;
    };
    let server = spawn_server("").await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/a2a_client.py");
    let run = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(&server.base)
        .arg(&server.mock)
        .arg(bundled_skills())
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the SDK script ends within 300 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "a2a_client.py failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for check in [
        "card",
        "send_message",
        "get_task",
        "send_streaming_message",
        "subscribe_to_task",
        "cancel_task",
        "failed",
        "unknown_skill",
        "bad_input",
        "fifty_concurrent",
        "version",
    ] {
        assert!(
            stdout.lines().any(|l| l == format!("OK {check}")),
            "check {check} did not pass:\n{stdout}"
        );
    }
}
