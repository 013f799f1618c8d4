//! `skillet serve` as a real child process: the seed's wire examples on a bundled skill,
//! interleaved calls, every protocol error, end of input and SIGTERM with calls in flight
//! (stdio), and the same over a real HTTP socket with SSE and the Agent Card. The model is the
//! embedded mock-llm (no provider configured), scripted per skill by `mock-scenario.yaml`.

use crate::cli_support;
use crate::serve_support;

use std::time::Duration;

use serde_json::{Value, json};

use cli_support::*;
use serve_support::{HttpServer, ServeHttp, get_json, post_json};

#[tokio::test]
async fn stdio_answers_the_seed_discover_and_call_examples_for_a_bundled_skill() {
    let skills = bundled_skills();
    let mut server = StdioChild::spawn(&[&skills]);
    server
        .send(r#"{"type":"skill/discover/req","id":"sd1","version":"1.0","ts":1716123456.789,"filter_tags":["coding"],"filter_categories":[]}"#)
        .await;
    let discover = server.recv().await.unwrap();
    assert_eq!(discover["type"], "skill/discover/resp");
    assert_eq!(discover["req_id"], "sd1");
    assert_eq!(discover["version"], "1.0");
    let skills = discover["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1, "only the coding skill: {discover}");
    let review = &skills[0];
    assert_eq!(review["name"], "code-review");
    assert_eq!(review["status"], "Published");
    assert!(
        review["tags"]
            .as_array()
            .unwrap()
            .contains(&json!("coding"))
    );
    assert_eq!(review["input_schema"]["required"], json!(["code"]));
    for field in [
        "version",
        "description",
        "triggers",
        "when_to_use",
        "argument_hint",
        "source",
    ] {
        assert!(!review[field].is_null(), "{field} present");
    }

    server
        .send(&call(
            "sc1",
            "code-review",
            json!({"code": "def add(a, b): return a + b"}),
        ))
        .await;
    let messages = server.recv_answers(&["sc1"]).await;
    assert_events_then_response(&messages, "sc1");
    let first = &messages[0];
    assert_eq!(first["type"], "skill/event");
    assert!(["status", "progress", "log", "artifact"].contains(&first["kind"].as_str().unwrap()));
    let response = response_for(&messages, "sc1");
    assert_eq!(response["name"], "code-review");
    assert_eq!(response["data"]["success"], true, "{response}");
    assert!(response["data"]["data"].is_object());
    assert!(response["data"]["duration_ms"].is_u64());
    assert!(response.get("error").is_none());

    server.close_stdin();
    assert_eq!(server.wait().await, 0);
}

#[tokio::test]
async fn stdio_answers_every_protocol_error_and_rejection_then_still_runs_a_valid_call() {
    let slow = slow_skills();
    let mut server = StdioChild::spawn(&[slow.path()]);
    let cases = [
        ("{\"type\": \"skill/call/req\", ", "parse_error", ""),
        (
            r#"{"type":"skill/teleport","id":"t1"}"#,
            "invalid_message",
            "t1",
        ),
        (
            r#"{"type":"skill/call/req","id":"v1","version":"9.9","name":"slow-echo"}"#,
            "version_mismatch",
            "v1",
        ),
        (
            r#"{"type":"skill/call/req","id":"m1","arguments":{}}"#,
            "invalid_message",
            "m1",
        ),
        (
            r#"{"type":"skill/call/req","id":"i1","name":"slow-echo","streaming":"yes"}"#,
            "invalid_message",
            "i1",
        ),
        (
            r#"{"type":"skill/call/req","id":"u1","name":"no-such-skill"}"#,
            "unknown_skill",
            "u1",
        ),
        (
            r#"{"type":"skill/call/req","id":"s1","name":"slow-echo","arguments":{"text":5,"extra":true}}"#,
            "schema_violation",
            "s1",
        ),
        (
            r#"{"type":"skill/call/req","id":"a1","name":"slow-echo","arguments":{"text":"x"},"llm_override":{"provider_name":"ollama","provider_credentials":{},"provider_config":{"model":"m","base_url":"http://169.254.169.254"}}}"#,
            "unauthorized",
            "a1",
        ),
    ];
    for (line, code, req_id) in cases {
        server.send(line).await;
        let answer = server.recv().await.unwrap();
        assert_eq!(answer["type"], "skill/call/resp", "{line}");
        assert_eq!(answer["error"]["code"], code, "{line} → {answer}");
        assert_eq!(answer["req_id"], req_id, "{line}");
        assert!(answer["error"]["retryable"].is_boolean());
        assert!(
            answer.get("data").is_none(),
            "rejections carry no data: {answer}"
        );
    }
    // The schema violation lists every violation.
    server
        .send(&call("ok", "slow-echo", json!({"text": "hello"})))
        .await;
    let messages = server.recv_answers(&["ok"]).await;
    let response = response_for(&messages, "ok");
    assert_eq!(response["data"]["success"], true, "{response}");
    assert_eq!(response["data"]["data"], json!({"echo": "hello"}));
    server.close_stdin();
    assert_eq!(server.wait().await, 0);
}

#[tokio::test]
async fn stdio_interleaves_concurrent_calls_and_correlates_each_answer() {
    let slow = slow_skills();
    let skills = bundled_skills();
    let mut server = StdioChild::spawn(&[slow.path(), &skills]);
    for id in ["c1", "c2", "c3"] {
        server
            .send(&call(id, "slow-echo", json!({"text": id})))
            .await;
    }
    server
        .send(&call("fast", "summarize", json!({"text": "Rust is fast."})))
        .await;
    server
        .send(r#"{"type":"skill/discover/req","id":"d1"}"#)
        .await;
    let messages = server.recv_answers(&["c1", "c2", "c3", "fast", "d1"]).await;
    for id in ["c1", "c2", "c3", "fast"] {
        assert_events_then_response(&messages, id);
        assert_eq!(response_for(&messages, id)["data"]["success"], true);
    }
    // The discover sent last is answered before the slow calls finish: calls do not block
    // the connection.
    let discover_at = messages.iter().position(|m| m["req_id"] == "d1").unwrap();
    let c1_at = messages
        .iter()
        .position(|m| m["type"] == "skill/call/resp" && m["req_id"] == "c1")
        .unwrap();
    assert!(discover_at < c1_at, "discover waited for a call");
    assert_eq!(
        messages
            .iter()
            .filter(|m| m["type"] == "skill/call/resp")
            .count(),
        4
    );
    server.close_stdin();
    assert_eq!(server.wait().await, 0);
}

#[tokio::test]
async fn stdio_end_of_input_with_calls_in_flight_answers_them_and_exits_0() {
    let slow = slow_skills();
    let mut server = StdioChild::spawn(&[slow.path()]);
    for id in ["e1", "e2", "e3"] {
        server
            .send(&call(id, "slow-echo", json!({"text": id})))
            .await;
    }
    server.close_stdin();
    let messages = server.recv_answers(&["e1", "e2", "e3"]).await;
    for id in ["e1", "e2", "e3"] {
        assert_eq!(response_for(&messages, id)["data"]["success"], true);
    }
    assert_eq!(server.recv().await, None, "nothing after the last answer");
    assert_eq!(server.wait().await, 0);
}

#[tokio::test]
async fn stdio_sigterm_with_calls_in_flight_answers_them_and_exits_0() {
    let slow = slow_skills();
    let mut server = StdioChild::spawn(&[slow.path()]);
    server
        .send(&call("t1", "slow-echo", json!({"text": "a"})))
        .await;
    server
        .send(&call("t2", "slow-echo", json!({"text": "b"})))
        .await;
    // An event of each call proves both are running before the signal.
    let mut messages = Vec::new();
    let mut started = std::collections::HashSet::new();
    while started.len() < 2 {
        let message = server.recv().await.unwrap();
        if message["type"] == "skill/event" {
            started.insert(message["req_id"].as_str().unwrap().to_owned());
        }
        messages.push(message);
    }
    sigterm(server.child.id().unwrap());
    messages.extend(server.recv_answers(&["t1", "t2"]).await);
    for id in ["t1", "t2"] {
        assert_eq!(response_for(&messages, id)["data"]["success"], true);
    }
    assert_eq!(server.wait().await, 0);
}

// ---------------------------------------------------------------- HTTP

/// `skillet serve --http` with these skill roots; asserts the embedded-mock warning.
async fn spawn_http(skill_dirs: &[&std::path::Path]) -> HttpServer {
    let mut builder = ServeHttp::new(SKILLET);
    for dir in skill_dirs {
        builder = builder.skills_dir(dir);
    }
    let server = builder.spawn().await;
    let warned_mock = server
        .startup_lines
        .iter()
        .any(|line| line.contains("warning") && line.contains("embedded mock-llm"));
    assert!(
        warned_mock,
        "serve without a provider warns about the embedded mock"
    );
    server
}

#[tokio::test]
async fn http_serves_discover_calls_sse_card_and_health_from_the_binary() {
    let skills = bundled_skills();
    let server = spawn_http(&[&skills]).await;
    let client = reqwest::Client::new();
    let a2e = format!("{}/a2e", server.base);

    let discover = post_json(&client, &a2e, r#"{"type":"skill/discover/req","id":"sd1","version":"1.0","ts":1716123456.789,"filter_tags":["coding"],"filter_categories":[]}"#).await;
    assert_eq!(discover["req_id"], "sd1");
    assert_eq!(discover["skills"][0]["name"], "code-review");

    let body = call(
        "sc1",
        "code-review",
        json!({"code": "def add(a, b): return a + b"}),
    );
    let json_answer = post_json(&client, &a2e, body.clone()).await;
    assert_eq!(json_answer["type"], "skill/call/resp");
    assert_eq!(json_answer["data"]["success"], true, "{json_answer}");
    assert!(!json_answer["data"]["events"].as_array().unwrap().is_empty());

    let sse = client
        .post(&a2e)
        .header("accept", "text/event-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    assert!(
        sse.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = sse.text().await.unwrap();
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_events_then_response(&messages, "sc1");
    assert_eq!(messages.last().unwrap()["type"], "skill/call/resp");

    let bad = post_json(&client, &a2e, "{oops").await;
    assert_eq!(bad["error"]["code"], "parse_error");

    let card = get_json(
        &client,
        format!("{}/.well-known/agent-card.json", server.base),
    )
    .await;
    let skills = card["skills"].as_array().unwrap();
    assert!(!skills.is_empty());
    for skill in skills {
        assert!(!skill["tags"].as_array().unwrap().is_empty(), "{skill}");
    }
    let review = skills.iter().find(|s| s["id"] == "code-review").unwrap();
    assert_eq!(review["inputModes"], json!(["application/json"]));
    assert_eq!(review["outputModes"], json!(["application/json"]));
    assert!(!card["defaultInputModes"].as_array().unwrap().is_empty());
    assert!(
        card["supportedInterfaces"][0]["url"]
            .as_str()
            .unwrap()
            .starts_with(&server.base)
    );

    let health = get_json(&client, format!("{}/healthz", server.base)).await;
    assert_eq!(health["status"], "ok");
}

#[tokio::test]
async fn http_sigterm_with_a_call_in_flight_answers_it_and_exits_0() {
    let slow = slow_skills();
    let mut server = spawn_http(&[slow.path()]).await;
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{}/a2e", server.base))
        .header("accept", "text/event-stream")
        .body(call("h1", "slow-echo", json!({"text": "bye"})))
        .send()
        .await
        .unwrap();
    // Headers arrive when the call is admitted and running; then stop the server.
    sigterm(server.child.id().unwrap());
    let text = response.text().await.unwrap();
    let last: Value = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .next_back()
        .unwrap();
    assert_eq!(last["type"], "skill/call/resp");
    assert_eq!(last["data"]["success"], true, "{last}");
    let status = tokio::time::timeout(Duration::from_secs(60), server.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn serve_http_stays_online_with_260_idle_sockets_under_a_256_descriptor_limit() {
    let mut server = ServeHttp::new(SKILLET)
        .shell_prefix("ulimit -n 256")
        .skills_dir(bundled_skills())
        .spawn()
        .await;
    let base = server.base.clone();
    let addr = base.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..260 {
        idle.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let client = reqwest::Client::new();
    let health = tokio::time::timeout(
        Duration::from_secs(30),
        client.get(format!("{base}/healthz")).send(),
    )
    .await
    .expect("served within 30 s despite 260 idle sockets")
    .unwrap();
    assert_eq!(health.status(), 200);
    let answer = post_json(
        &client,
        format!("{base}/a2e"),
        r#"{"type":"skill/discover/req","id":"d1"}"#,
    )
    .await;
    assert_eq!(answer["type"], "skill/discover/resp", "{answer}");
    drop(idle);
    let _ = server.child.start_kill();
}
