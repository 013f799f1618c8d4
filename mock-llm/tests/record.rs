//! Record mode through mock-llm itself as the upstream: for each API, streamed and not, the
//! answers a recorded session got come back byte for byte when the recording is replayed;
//! credentials and `--redact-env` values never reach the file; a dead or failing upstream gives
//! the client a clear error and leaves the recording as it was; custom credential headers
//! (`x-auth-token`, `--redact-header`) are never written and the upstream's userinfo is never
//! echoed (issue 48).

mod common;

use std::io::BufRead;
use std::process::{Command, Stdio};

use mock_llm::{Fault, MockConfig, MockServer, RecordConfig, Recorder, Scenario};
use serde_json::{Value, json};

const CANARY: &str = "sk-canary-7f3a9c1e";

const TWO_TURNS: &str = r#"
rules:
  - name: plan
    when: { turn: 1, tool: calculator }
    reply:
      thinking: "I should add the numbers."
      tool_calls:
        - name: calculator
          arguments: { expression: "2 + 2" }
      usage: { input: 40, output: 9, cached: 32 }
  - name: answer
    when: { tool_result_contains: "4" }
    reply:
      text: "The sum is 4."
      usage: { input: 55, output: 5 }
"#;

/// The two requests of a tool round trip in `endpoint`'s own shape.
fn conversation(endpoint: &str, stream: bool) -> (String, [Value; 2]) {
    let tool = json!({"type": "object", "properties": {"expression": {"type": "string"}}});
    match endpoint {
        "anthropic" => {
            let tools = json!([{"name": "calculator", "input_schema": tool}]);
            let first = json!({"model": "claude-x", "max_tokens": 100, "stream": stream,
                "tools": tools, "messages": [{"role": "user", "content": "add 2 and 2"}]});
            let second = json!({"model": "claude-x", "max_tokens": 100, "stream": stream,
                "tools": tools, "messages": [
                    {"role": "user", "content": "add 2 and 2"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_mock_0001",
                        "name": "calculator", "input": {"expression": "2 + 2"}}]},
                    {"role": "user", "content": [{"type": "tool_result",
                        "tool_use_id": "toolu_mock_0001", "content": "4"}]}]});
            ("/v1/messages".into(), [first, second])
        }
        "ollama" => {
            let tools = json!([{"type": "function", "function": {"name": "calculator", "parameters": tool}}]);
            let first = json!({"model": "llama-x", "stream": stream, "tools": tools,
                "messages": [{"role": "user", "content": "add 2 and 2"}]});
            let second = json!({"model": "llama-x", "stream": stream, "tools": tools, "messages": [
                {"role": "user", "content": "add 2 and 2"},
                {"role": "assistant", "content": "", "tool_calls": [{"function":
                    {"name": "calculator", "arguments": {"expression": "2 + 2"}}}]},
                {"role": "tool", "content": "4"}]});
            ("/api/chat".into(), [first, second])
        }
        _ => {
            let tools = json!([{"type": "function", "function": {"name": "calculator", "parameters": tool}}]);
            let usage = json!({"include_usage": true});
            let first = json!({"model": "gpt-x", "stream": stream, "stream_options": usage,
                "tools": tools, "messages": [{"role": "user", "content": "add 2 and 2"}]});
            let second = json!({"model": "gpt-x", "stream": stream, "stream_options": usage,
                "tools": tools, "messages": [
                {"role": "user", "content": "add 2 and 2"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_mock_0001",
                    "type": "function", "function": {"name": "calculator",
                    "arguments": "{\"expression\":\"2 + 2\"}"}}]},
                {"role": "tool", "tool_call_id": "call_mock_0001", "content": "4"}]});
            ("/v1/chat/completions".into(), [first, second])
        }
    }
}

/// POSTs with credentials in every form a client may send them.
async fn post_with_credentials(url: &str, body: &Value) -> (u16, String) {
    let r = common::http()
        .post(format!("{url}?key={CANARY}"))
        .bearer_auth(CANARY)
        .header("x-api-key", CANARY)
        .header("x-goog-api-key", CANARY)
        .header("api-key", CANARY)
        .json(body)
        .send()
        .await
        .expect("request sent");
    (r.status().as_u16(), r.text().await.expect("body read"))
}

#[tokio::test]
async fn every_api_streamed_or_not_replays_byte_for_byte_and_no_credential_is_written() {
    for endpoint in ["openai", "anthropic", "ollama"] {
        for stream in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir
                .path()
                .join(if stream { "rec.json" } else { "rec.yaml" });
            let upstream = common::start(TWO_TURNS).await;
            let recorder = Recorder::start(RecordConfig::new(upstream.base_url(), &out))
                .await
                .expect("recorder starts");
            let (path, requests) = conversation(endpoint, stream);
            let mut recorded = Vec::new();
            for body in &requests {
                let (status, text) =
                    post_with_credentials(&format!("{}{path}", recorder.base_url()), body).await;
                assert_eq!(status, 200, "{endpoint} stream={stream}: {text}");
                recorded.push(text);
            }
            // The upstream saw the credentials: they are forwarded.
            let seen = upstream.journal();
            assert_eq!(seen.len(), 2);
            assert_eq!(recorder.recorded().await, 2);
            recorder.shutdown().await;
            upstream.shutdown().await;

            let file = std::fs::read_to_string(&out).unwrap();
            assert!(
                !file.contains(CANARY),
                "{endpoint}: credential written:\n{file}"
            );
            let scenario = Scenario::from_file(&out).expect("the recording parses");
            assert_eq!(scenario.rules.len(), 2, "{file}");
            assert!(
                recorded[0].contains("calculator") && recorded[1].contains("sum "),
                "{endpoint}: {recorded:?}"
            );

            let replay = MockServer::start(MockConfig::default().with_scenario(scenario))
                .await
                .unwrap();
            for (body, expected) in requests.iter().zip(&recorded) {
                let (status, text) =
                    post_with_credentials(&format!("{}{path}", replay.base_url()), body).await;
                assert_eq!(status, 200);
                assert_eq!(&text, expected, "{endpoint} stream={stream}, file:\n{file}");
            }
            replay.shutdown().await;
        }
    }
}

#[tokio::test]
async fn values_of_redact_env_variables_never_reach_the_file() {
    let secret = "canary-env-value-5d1e";
    let upstream = common::start(&format!(
        "rules:\n  - reply: {{ text: \"the key is {secret}\" }}\n"
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec.yaml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .args(["record", "--upstream", &upstream.base_url(), "--out"])
        .arg(&out)
        .args(["--redact-env", "RECORD_TEST_CANARY"])
        .env("RECORD_TEST_CANARY", secret)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "tell me"}]});
    let (status, _, text) = common::post(&format!("{base}/v1/chat/completions"), &body).await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200);
    assert!(
        text.contains(secret),
        "the client gets the answer unchanged"
    );
    let file = std::fs::read_to_string(&out).unwrap();
    assert!(!file.contains(secret), "{file}");
    assert!(file.contains("the key is [REDACTED]"), "{file}");
    upstream.shutdown().await;
}

#[tokio::test]
async fn a_dead_or_failing_upstream_gives_a_clear_error_and_keeps_the_recording_intact() {
    let upstream = common::start("rules:\n  - reply: { text: first answer }\n").await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec.yaml");
    let recorder = Recorder::start(RecordConfig::new(upstream.base_url(), &out))
        .await
        .unwrap();
    let url = format!("{}/v1/chat/completions", recorder.base_url());
    let body = |q: &str| json!({"model": "m", "messages": [{"role": "user", "content": q}]});
    let (status, _, _) = common::post(&url, &body("one")).await;
    assert_eq!(status, 200);
    let before = std::fs::read_to_string(&out).unwrap();

    // A 500 is passed through, not recorded.
    upstream.push_fault(Fault::status(500));
    let (status, _, text) = common::post(&url, &body("two")).await;
    assert_eq!(status, 500, "{text}");
    assert!(text.contains("500"), "{text}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);

    // Nothing listening: 502 in the API's error shape, naming the upstream.
    let dead = upstream.base_url();
    upstream.shutdown().await;
    let (status, _, text) = common::post(&url, &body("three")).await;
    assert_eq!(status, 502, "{text}");
    let error: Value = serde_json::from_str(&text).expect("a JSON error body");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&dead) && message.contains("did not answer"),
        "{text}"
    );

    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    let scenario = Scenario::from_file(&out).unwrap();
    assert_eq!(scenario.rules.len(), 1);
    assert_eq!(
        scenario.rules[0].replies[0].text.as_deref(),
        Some("first answer")
    );
    recorder.shutdown().await;
}

#[tokio::test]
async fn an_upstream_that_is_not_a_url_or_an_unwritable_file_fails_at_start() {
    let e = Recorder::start(RecordConfig::new("localhost:8080", "x.yaml"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("http://"), "{e}");
    let e = Recorder::start(RecordConfig::new(
        "http://127.0.0.1:9",
        "/nonexistent-dir/rec.yaml",
    ))
    .await
    .unwrap_err();
    assert!(e.to_string().contains("/nonexistent-dir/rec.yaml"), "{e}");
}

/// Spawns `mock-llm record` with `args` (stderr to `log`); its address, from its first line.
fn spawn_recorder(
    args: &[&str],
    out: &std::path::Path,
    log: &std::path::Path,
) -> (std::process::Child, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .arg("record")
        .args(args)
        .arg("--out")
        .arg(out)
        .env("MOCK_LLM_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (child, base, line)
}

/// Issue 48: a custom credential header (named like one, or with `--redact-header`) echoed by
/// the upstream is not written; the upstream still receives it.
#[tokio::test]
async fn custom_credential_headers_and_redact_header_values_never_reach_the_file() {
    let (token, tenant) = ("canary-x-auth-token-4c1d", "canary-tenant-pass-9e2f");
    let upstream = common::start(&format!(
        "rules:\n  - reply: {{ text: \"token {token} tenant {tenant}\" }}\n"
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec.yaml");
    let log = dir.path().join("record.log");
    let (mut child, base, _) = spawn_recorder(
        &[
            "--upstream",
            &upstream.base_url(),
            "--redact-header",
            "X-Tenant-Pass",
        ],
        &out,
        &log,
    );
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "tell me"}]});
    let answer = common::http()
        .post(format!("{base}/v1/chat/completions"))
        .header("x-auth-token", token)
        .header("x-tenant-pass", tenant)
        .json(&body)
        .send()
        .await
        .expect("request sent");
    assert_eq!(answer.status().as_u16(), 200);
    let text = answer.text().await.unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        text.contains(token) && text.contains(tenant),
        "the client gets the answer unchanged: {text}"
    );
    let seen = upstream.journal();
    assert!(!seen.is_empty(), "the upstream was asked");
    let file = std::fs::read_to_string(&out).unwrap();
    for secret in [token, tenant] {
        assert!(!file.contains(secret), "{secret} written:\n{file}");
    }
    assert!(
        file.contains("token [REDACTED] tenant [REDACTED]"),
        "{file}"
    );
    upstream.shutdown().await;
}

/// Issue 48: the upstream's userinfo (`user:password@`) is named by no message: not the
/// startup line, not the 502 a dead upstream gives, not the log, not the file.
#[tokio::test]
async fn the_upstream_userinfo_is_never_echoed() {
    let password = "canary-userinfo-pw-7a3b";
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let upstream = format!("http://recorder-user:{password}@127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec.yaml");
    let log = dir.path().join("record.log");
    let (mut child, base, first_line) = spawn_recorder(&["--upstream", &upstream], &out, &log);
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = common::post(&format!("{base}/v1/chat/completions"), &body).await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 502, "{text}");
    assert!(
        text.contains(&format!("http://127.0.0.1:{port}")) && text.contains("did not answer"),
        "the 502 still names the upstream: {text}"
    );
    let log = std::fs::read_to_string(&log).unwrap();
    let file = std::fs::read_to_string(&out).unwrap();
    for (what, seen) in [
        ("startup line", &first_line),
        ("502 body", &text),
        ("log", &log),
        ("file", &file),
    ] {
        assert!(
            !seen.contains(password) && !seen.contains("recorder-user"),
            "the userinfo is in the {what}:\n{seen}"
        );
    }
    let refused = Recorder::start(RecordConfig::new(
        format!("ftp://recorder-user:{password}@host"),
        dir.path().join("x.yaml"),
    ))
    .await
    .unwrap_err()
    .to_string();
    assert!(!refused.contains(password), "{refused}");
}
