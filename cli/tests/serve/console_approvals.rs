//! Tool-call approvals decided from the web console, over raw HTTP on the real `skillet serve
//! --http` (the browser test, `console_browser.rs`, clicks the same buttons):
//! - a run posted to `POST /a2e` with the console's `X-Skillet-Console` header parks its gated
//!   tool call; `GET /console/api/approvals` lists it (tool, redacted arguments, waiting time)
//!   and `POST /console/api/approvals/ID` approves it or denies it with a reason, which reaches
//!   the run (its events and the model's answer); a run without the header still follows
//!   `[approvals] default`;
//! - every bad decision is one answer: not JSON (415), a malformed body (400), an unknown id,
//!   a second decision, or the id of a run that stopped waiting (its deadline passed) (404);
//! - under `[auth]` only the identity that started the run sees and decides it (another one
//!   with the console scope gets 404), and a caller without the console scope is never asked
//!   here (its call follows the host's policy).
//!
//! The gated skills call the built-in `calculator` (their `a2e-approval` gates it) on the
//! embedded mock-llm, which answers from what the tool call returned.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;

use serde_json::{Value, json};

use cli_support::SKILLET;
use serve_support::{HttpServer, ServeHttp};

/// `gated-calc` (marker `Gated calc:`) and `gated-slow` (the same with a 2 s deadline).
fn write_gated_skills(root: &Path) {
    for (name, marker, timeout) in [
        ("gated-calc", "Gated calc:", 60),
        ("gated-slow", "Gated slow:", 2),
    ] {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Computes with a gated calculator (test skill).\n\
                 metadata:\n  a2a-input-schema: assets/input.schema.json\n  \
                 a2a-output-schema: assets/output.schema.json\n  \
                 a2e-tools: '[\"calculator\"]'\n  a2e-approval: '[\"calculator\"]'\n  \
                 a2e-max-turns: '3'\n  a2e-timeout-seconds: '{timeout}'\n---\n\
                 {marker} compute {{{{ text }}}} with the calculator.\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("assets/input.schema.json"),
            r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("assets/output.schema.json"),
            r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"],"additionalProperties":false}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("mock-scenario.yaml"),
            format!(
                "rules:\n\
                 \x20 - name: {name}-approved\n    when: {{system_contains: \"{marker}\", tool_result_contains: \"result\"}}\n    reply: {{json: {{echo: approved}}}}\n\
                 \x20 - name: {name}-reason\n    when: {{system_contains: \"{marker}\", tool_result_contains: \"not on prod\"}}\n    reply: {{json: {{echo: \"denied: not on prod\"}}}}\n\
                 \x20 - name: {name}-policy\n    when: {{system_contains: \"{marker}\", tool_result_contains: \"policy denied\"}}\n    reply: {{json: {{echo: denied by policy}}}}\n\
                 \x20 - name: {name}-call\n    when: {{system_contains: \"{marker}\", tool_results: false}}\n    reply: {{tool_calls: [{{name: calculator, arguments: {{expression: \"6*7\"}}}}]}}\n"
            ),
        )
        .unwrap();
    }
}

async fn serve(config: &str) -> (HttpServer, tempfile::TempDir, tempfile::TempDir) {
    let skills = tempfile::tempdir().unwrap();
    write_gated_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("skillet.toml"), config).unwrap();
    let server = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .skills_dir(skills.path())
        .spawn()
        .await;
    (server, skills, cwd)
}

/// One run's SSE stream, read message by message.
struct Run {
    response: reqwest::Response,
    buffer: String,
}

impl Run {
    /// Posts a streaming call of `skill` as the console's page does (`console`: with its header).
    async fn start(base: &str, key: Option<&str>, id: &str, skill: &str, console: bool) -> Run {
        let body = json!({"type": "skill/call/req", "id": id, "name": skill,
                          "arguments": {"text": "6*7"}, "streaming": true});
        let mut request = reqwest::Client::new()
            .post(format!("{base}/a2e"))
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body.to_string());
        if console {
            request = request.header("x-skillet-console", "1");
        }
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        Run {
            response,
            buffer: String::new(),
        }
    }

    /// The next A2E message, `None` at the end of the stream.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(cut) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..cut + 2).collect();
                let data: Vec<&str> = frame
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !data.is_empty() {
                    return Some(serde_json::from_str(&data.join("\n")).unwrap());
                }
                continue;
            }
            let chunk = self.response.chunk().await.unwrap()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Reads until the status event whose `detail.approval` is `what`; returns its detail.
    async fn until_approval(&mut self, what: &str) -> Value {
        while let Some(message) = self.next().await {
            let detail = &message["data"]["detail"];
            if message["kind"] == "status" && detail["approval"] == what {
                return detail.clone();
            }
            assert_ne!(
                message["type"], "skill/call/resp",
                "answered first: {message}"
            );
        }
        panic!("the stream ended before approval {what}");
    }

    /// Reads to the answer.
    async fn answer(mut self) -> Value {
        while let Some(message) = self.next().await {
            if message["type"] == "skill/call/resp" {
                return message;
            }
        }
        panic!("the stream ended without an answer");
    }
}

async fn pending(base: &str, key: Option<&str>) -> Vec<Value> {
    let mut request = reqwest::Client::new().get(format!("{base}/console/api/approvals"));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["approvals"].as_array().unwrap().clone()
}

/// Waits until `req_id`'s question is listed to `key`'s identity (the run parks it right after
/// its `requested` event).
async fn listed(base: &str, key: Option<&str>, req_id: &str) -> Value {
    loop {
        if let Some(found) = pending(base, key)
            .await
            .into_iter()
            .find(|a| a["req_id"] == req_id)
        {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn decide(
    base: &str,
    key: Option<&str>,
    id: &str,
    content_type: &str,
    body: &str,
) -> (u16, Value) {
    let client = reqwest::Client::new();
    // The page's same-origin token (`console::token`), as its script sends it.
    let page = client.get(format!("{base}/")).send().await.unwrap();
    let page = page.text().await.unwrap();
    let marker = "name=\"skillet-console-token\" content=\"";
    let token = page.split(marker).nth(1).and_then(|t| t.split('"').next());
    let mut request = client
        .post(format!("{base}/console/api/approvals/{id}"))
        .header("content-type", content_type)
        .header("x-skillet-console-token", token.expect("the page's token"))
        .body(body.to_owned());
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

const JSON: &str = "application/json";

#[tokio::test]
async fn a_console_run_waits_for_the_page_which_approves_or_denies_with_a_reason() {
    let (server, _skills, _cwd) = serve("").await;
    let base = server.base.as_str();

    // Denied from the page, with a reason the model reads.
    let mut run = Run::start(base, None, "deny-1", "gated-calc", true).await;
    let requested = run.until_approval("requested").await;
    assert_eq!(requested["tool"], "calculator");
    let question = listed(base, None, "deny-1").await;
    assert_eq!(question["skill"], "gated-calc");
    assert_eq!(question["tool"], "calculator");
    assert_eq!(question["call_id"], requested["call_id"]);
    assert_eq!(question["arguments"], json!({"expression": "6*7"}));
    assert!(question["waiting_ms"].is_u64(), "{question}");
    let id = question["id"].as_str().unwrap();

    // Bad decisions: each one answer, and the question still waits.
    let (status, body) = decide(base, None, id, "text/plain", r#"{"decision":"approve"}"#).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (415, Some("unsupported_media_type"))
    );
    for bad in [
        r#"{"decision":"maybe"}"#,
        "not json",
        r#"{"decision":"deny","x":1}"#,
    ] {
        let (status, body) = decide(base, None, id, JSON, bad).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad_request")),
            "{bad}"
        );
    }
    let (status, body) = decide(
        base,
        None,
        "0123456789abcdef",
        JSON,
        r#"{"decision":"approve"}"#,
    )
    .await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
    assert_eq!(pending(base, None).await.len(), 1, "still waiting");

    let (status, body) = decide(
        base,
        None,
        id,
        JSON,
        r#"{"decision":"deny","reason":"not on prod"}"#,
    )
    .await;
    assert_eq!((status, &body["decision"]), (200, &json!("deny")), "{body}");
    let (status, _) = decide(base, None, id, JSON, r#"{"decision":"approve"}"#).await;
    assert_eq!(status, 404, "a question is decided once");
    let denied = run.until_approval("denied").await;
    assert_eq!(
        (&denied["by"], &denied["reason"]),
        (&json!("caller"), &json!("not on prod"))
    );
    let answer = run.answer().await;
    assert_eq!(
        answer["data"]["data"],
        json!({"echo": "denied: not on prod"}),
        "{answer}"
    );
    assert!(pending(base, None).await.is_empty());

    // Approved from the page: the tool runs.
    let mut run = Run::start(base, None, "approve-1", "gated-calc", true).await;
    run.until_approval("requested").await;
    let id = listed(base, None, "approve-1").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = decide(base, None, &id, JSON, r#"{"decision":"approve"}"#).await;
    assert_eq!(status, 200);
    assert_eq!(run.until_approval("approved").await["by"], "caller");
    let answer = run.answer().await;
    assert_eq!(
        answer["data"]["data"],
        json!({"echo": "approved"}),
        "{answer}"
    );

    // Without the header the host's policy decides, as before.
    let run = Run::start(base, None, "plain-1", "gated-calc", false).await;
    let answer = run.answer().await;
    assert_eq!(
        answer["data"]["data"],
        json!({"echo": "denied by policy"}),
        "{answer}"
    );
}

#[tokio::test]
async fn a_question_whose_run_stopped_waiting_is_gone_and_its_id_is_not_found() {
    let (server, _skills, _cwd) = serve("").await;
    let base = server.base.as_str();
    let mut run = Run::start(base, None, "slow-1", "gated-slow", true).await;
    run.until_approval("requested").await;
    let id = listed(base, None, "slow-1").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Nobody answers: the 2 s deadline counts the wait and ends the run.
    let answer = run.answer().await;
    assert_eq!(answer["data"]["error_code"], "timeout", "{answer}");
    assert!(pending(base, None).await.is_empty());
    let (status, body) = decide(base, None, &id, JSON, r#"{"decision":"approve"}"#).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
}

const OPERATOR: &str = "sk-console-operator-7f1d";
const COLLEAGUE: &str = "sk-console-colleague-2b9e";
const RUNNER: &str = "sk-console-runner-5c3a";

#[tokio::test]
async fn under_auth_only_the_identity_that_started_the_run_sees_and_decides_it() {
    let sha = skillet_host::auth::sha256_hex;
    let config = format!(
        "[auth.scopes.run]\nskills = [\"*\"]\n\n\
         [[auth.api_keys]]\nid = \"operator\"\nsha256 = \"{}\"\nscopes = [\"run\", \"console\"]\n\n\
         [[auth.api_keys]]\nid = \"colleague\"\nsha256 = \"{}\"\nscopes = [\"run\", \"console\"]\n\n\
         [[auth.api_keys]]\nid = \"runner\"\nsha256 = \"{}\"\nscopes = [\"run\"]\n",
        sha(OPERATOR),
        sha(COLLEAGUE),
        sha(RUNNER)
    );
    let (server, _skills, _cwd) = serve(&config).await;
    let base = server.base.as_str();

    let mut run = Run::start(base, Some(OPERATOR), "op-1", "gated-calc", true).await;
    run.until_approval("requested").await;
    let id = listed(base, Some(OPERATOR), "op-1").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        pending(base, Some(COLLEAGUE)).await.is_empty(),
        "not listed to another identity"
    );
    let (status, _) = decide(
        base,
        Some(COLLEAGUE),
        &id,
        JSON,
        r#"{"decision":"approve"}"#,
    )
    .await;
    assert_eq!(status, 404, "another identity cannot decide it");
    let (status, _) = decide(base, Some(RUNNER), &id, JSON, r#"{"decision":"approve"}"#).await;
    assert_eq!(status, 403, "the console's routes need the console scope");
    let (status, _) = decide(base, None, &id, JSON, r#"{"decision":"approve"}"#).await;
    assert_eq!(status, 401);
    let (status, _) = decide(base, Some(OPERATOR), &id, JSON, r#"{"decision":"approve"}"#).await;
    assert_eq!(status, 200);
    let answer = run.answer().await;
    assert_eq!(
        answer["data"]["data"],
        json!({"echo": "approved"}),
        "{answer}"
    );

    // A caller that could never open the console is not asked there.
    let run = Run::start(base, Some(RUNNER), "runner-1", "gated-calc", true).await;
    let answer = run.answer().await;
    assert_eq!(
        answer["data"]["data"],
        json!({"echo": "denied by policy"}),
        "{answer}"
    );
}
