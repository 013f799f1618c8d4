//! MCP 2026-07-28 on the real `skillet serve` (issue 53 items 1 and 7), driven with raw
//! JSON-RPC over streamable HTTP and over stdio, beside the `initialize` era it must leave as
//! it was:
//! - the methods 2026-07-28 removed (`initialize`, `ping`, `logging/setLevel`,
//!   `resources/subscribe`, `resources/unsubscribe`) are `404` with `-32601` on a request of
//!   that revision, whatever their params, and are served on an `initialize` session;
//! - `subscriptions/listen` acknowledges the filter it accepted first, tags every notification
//!   with the listen request's id, and sends only the kinds and URIs asked for; one beyond
//!   `[server] mcp_max_streams` open ones is ended at once, gracefully;
//! - a 2026-07-28 call sends log notifications only when its `_meta` names a `logLevel`, and
//!   only at that level or more severe;
//! - `DELETE /mcp` answers 204, a missing resource's error carries `data.uri`, and `skills/get`
//!   of a `SKILL.md` below a skill says skills are not nested.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

use cli_support::{SKILLET, StdioChild, write_skill};
use serve_support::{HttpServer, ServeHttp, jsonrpc_messages as messages};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// The `_meta` every 2026-07-28 request carries, plus `extra` keys.
fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-revision-2026", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

/// `params` with the 2026-07-28 `_meta` added.
fn with_meta(mut params: Value, extra: Value) -> Value {
    params["_meta"] = meta(extra);
    params
}

/// The echo skills `alpha` and `beta`.
fn skills_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for name in ["alpha", "beta"] {
        write_skill(root.path(), name, 0, "{json: {echo: \"hello\"}}");
    }
    root
}

async fn serve(skills: &Path, cwd: &Path, watch: bool) -> HttpServer {
    let config = if watch {
        "[skills]\nwatch = true\n"
    } else {
        ""
    };
    serve_with(skills, cwd, config).await
}

/// `serve --http` on `skills` with `config` as its `skillet.toml`.
async fn serve_with(skills: &Path, cwd: &Path, config: &str) -> HttpServer {
    std::fs::write(cwd.join("skillet.toml"), config).unwrap();
    ServeHttp::new(SKILLET)
        .cwd(cwd)
        .skills_dir(skills)
        .spawn()
        .await
}

/// A 2026-07-28 request as its transport sends it: the revision's headers (`Mcp-Method`,
/// `Mcp-Name` where the method names something, `MCP-Protocol-Version`), no session.
fn modern_request(
    server: &HttpServer,
    id: u64,
    method: &str,
    params: &Value,
) -> reqwest::RequestBuilder {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", server.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", method)
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
    let name = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    request
}

/// The HTTP status and every message of a 2026-07-28 request's answer.
async fn modern(server: &HttpServer, id: u64, method: &str, params: Value) -> (u16, Vec<Value>) {
    let response = modern_request(server, id, method, &params)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, messages(&response.text().await.unwrap()))
}

/// The answer (not a notification) with `id` among `messages`.
fn answer(messages: &[Value], id: u64) -> &Value {
    messages
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer {id} in {messages:?}"))
}

/// One `initialize`-era session over HTTP.
struct LegacySession {
    url: String,
    id: String,
}

impl LegacySession {
    async fn open(server: &HttpServer) -> LegacySession {
        let url = format!("{}/mcp", server.base);
        let response = reqwest::Client::new()
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": LEGACY, "capabilities": {},
                           "clientInfo": {"name": "legacy", "version": "0"}}
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "initialize on the initialize era");
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let init = messages(&response.text().await.unwrap());
        assert_eq!(answer(&init, 0)["result"]["protocolVersion"], LEGACY);
        let session = LegacySession { url, id };
        let status = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
            .status();
        assert_eq!(status, 202, "initialized");
        session
    }

    async fn post(&self, message: &Value) -> reqwest::Response {
        reqwest::Client::new()
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", LEGACY)
            .json(message)
            .send()
            .await
            .unwrap()
    }

    /// The answer to `method` with `params` (id 1).
    async fn rpc(&self, method: &str, params: Value) -> Value {
        let text = self
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .await
            .text()
            .await
            .unwrap();
        answer(&messages(&text), 1).clone()
    }
}

#[tokio::test]
async fn removed_methods_are_404_method_not_found_on_a_2026_request_and_served_on_the_initialize_era()
 {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), false).await;
    let file = json!({"uri": "skill://alpha/SKILL.md"});
    let removed = [
        (
            "initialize",
            json!({"protocolVersion": MODERN, "capabilities": {},
                              "clientInfo": {"name": "c", "version": "0"}}),
        ),
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "debug"})),
        ("resources/subscribe", file.clone()),
        ("resources/unsubscribe", file.clone()),
    ];
    for (n, (method, params)) in removed.iter().enumerate() {
        let id = 500 + n as u64;
        // Well-formed params, and only `_meta` (as the official suite sends them).
        for params in [
            with_meta(params.clone(), json!({})),
            json!({"_meta": meta(json!({}))}),
        ] {
            let (status, answers) = modern(&server, id, method, params).await;
            let error = &answer(&answers, id)["error"];
            assert_eq!(
                (status, error["code"].as_i64()),
                (404, Some(-32601)),
                "{method} on a 2026-07-28 request: {answers:?}"
            );
            // rmcp refuses `ping` itself, in its own words.
            if *method != "ping" {
                assert!(
                    error["message"].as_str().unwrap().contains("2026-07-28"),
                    "{error}"
                );
            }
        }
    }

    // The initialize era is served as before.
    let session = LegacySession::open(&server).await;
    for (method, params) in [
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "debug"})),
        ("resources/subscribe", file.clone()),
        ("resources/unsubscribe", file),
    ] {
        let answer = session.rpc(method, params).await;
        assert_eq!(
            answer["result"],
            json!({}),
            "{method} on the initialize era: {answer}"
        );
    }
}

#[tokio::test]
async fn over_stdio_a_2026_ping_or_initialize_is_method_not_found_and_the_session_goes_on() {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let mut command = Command::new(SKILLET);
    command
        .current_dir(cwd.path())
        .arg("--skills-dir")
        .arg(skills.path())
        .args(["serve", "--mcp"]);
    let mut server = StdioChild::from_command(command);
    let line = |id: u64, method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    // Before any lifecycle, rmcp itself would answer a ping.
    server
        .send(&line(0, "ping", json!({"_meta": meta(json!({}))})))
        .await;
    let refused = server.recv().await.expect("an answer to ping");
    assert_eq!(refused["id"], 0);
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    server
        .send(&line(
            1,
            "initialize",
            with_meta(
                json!({"protocolVersion": MODERN, "capabilities": {},
                       "clientInfo": {"name": "c", "version": "0"}}),
                json!({}),
            ),
        ))
        .await;
    let refused = server.recv().await.expect("an answer to initialize");
    assert_eq!(refused["id"], 1);
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    // The server is still there, on the 2026-07-28 lifecycle.
    server
        .send(&line(2, "tools/list", json!({"_meta": meta(json!({}))})))
        .await;
    let listed = server.recv().await.expect("an answer to tools/list");
    assert_eq!(listed["id"], 2, "{listed}");
    assert_eq!(
        listed["result"]["tools"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
    server
        .send(&line(
            3,
            "logging/setLevel",
            with_meta(json!({"level": "debug"}), json!({})),
        ))
        .await;
    let refused = server.recv().await.expect("an answer to logging/setLevel");
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

#[tokio::test]
async fn log_notifications_on_a_2026_call_follow_the_log_level_in_its_meta() {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), false).await;
    let call =
        |extra: Value| with_meta(json!({"name": "alpha", "arguments": {"text": "hi"}}), extra);
    let logs = |answers: &[Value]| -> Vec<String> {
        answers
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| m["params"]["level"].as_str().unwrap_or_default().to_owned())
            .collect()
    };

    let (_, answers) = modern(&server, 1, "tools/call", call(json!({}))).await;
    assert!(answer(&answers, 1)["result"].is_object(), "{answers:?}");
    assert_eq!(logs(&answers), Vec::<String>::new(), "no logLevel, no logs");

    let (_, answers) = modern(
        &server,
        2,
        "tools/call",
        call(json!({"io.modelcontextprotocol/logLevel": "debug"})),
    )
    .await;
    assert!(answer(&answers, 2)["result"].is_object(), "{answers:?}");
    assert!(!logs(&answers).is_empty(), "logLevel debug: {answers:?}");

    let (_, answers) = modern(
        &server,
        3,
        "tools/call",
        call(json!({"io.modelcontextprotocol/logLevel": "error"})),
    )
    .await;
    assert!(answer(&answers, 3)["result"].is_object(), "{answers:?}");
    let below_error: Vec<String> = logs(&answers)
        .into_iter()
        .filter(|level| !["error", "critical", "alert", "emergency"].contains(&level.as_str()))
        .collect();
    assert_eq!(below_error, Vec::<String>::new(), "logLevel error");
}

/// Reads the open SSE `response` into `text` until `done` holds for every message read so far
/// (or 30 s pass); returns them all.
async fn read_until(
    response: &mut reqwest::Response,
    text: &mut String,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let read = messages(text);
        if done(&read) {
            return read;
        }
        match tokio::time::timeout_at(deadline, response.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            _ => return read,
        }
    }
}

#[tokio::test]
async fn subscriptions_listen_acknowledges_first_and_sends_only_the_tagged_changes_it_asked_for() {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), true).await;
    let params = with_meta(
        json!({"notifications": {
            "toolsListChanged": true,
            "resourceSubscriptions": ["skill://alpha/SKILL.md", "skill://beta/SKILL.md",
                                      "file:///etc/passwd"],
        }}),
        json!({}),
    );
    let mut stream = modern_request(&server, 77, "subscriptions/listen", &params)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let mut text = String::new();
    let acked = read_until(&mut stream, &mut text, |read| !read.is_empty()).await;
    let ack = &acked[0];
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{acked:?}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        77
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true,
               "resourceSubscriptions": ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]}),
        "the accepted filter: no file:// URI"
    );

    // An edit of alpha changes its tool (and prompt) and its SKILL.md.
    let skill_md = skills.path().join("alpha/SKILL.md");
    let edited = std::fs::read_to_string(&skill_md)
        .unwrap()
        .replace("Echoes its text back", "Echoes its text back, edited");
    std::fs::write(&skill_md, edited).unwrap();
    let heard = read_until(&mut stream, &mut text, |read| {
        read.iter()
            .any(|m| m["method"] == "notifications/tools/list_changed")
            && read
                .iter()
                .any(|m| m["method"] == "notifications/resources/updated")
    })
    .await;
    let notices: Vec<&Value> = heard.iter().skip(1).collect();
    assert!(
        notices
            .iter()
            .any(|m| m["method"] == "notifications/tools/list_changed"),
        "{heard:?}"
    );
    let updated: Vec<&Value> = notices
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .map(|m| &m["params"]["uri"])
        .collect();
    assert_eq!(updated, [&json!("skill://alpha/SKILL.md")], "{heard:?}");
    for notice in &notices {
        assert_eq!(
            notice["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 77,
            "every notification is tagged: {notice}"
        );
        let method = notice["method"].as_str().unwrap_or_default();
        assert!(
            method != "notifications/prompts/list_changed"
                && method != "notifications/resources/list_changed",
            "a kind the filter did not ask for: {notice}"
        );
    }
}

#[tokio::test]
async fn a_listen_stream_beyond_the_stream_cap_is_acknowledged_and_ended_at_once() {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = serve_with(skills.path(), cwd.path(), "[server]\nmcp_max_streams = 1\n").await;
    let params = with_meta(
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    let mut held = modern_request(&server, 1, "subscriptions/listen", &params)
        .send()
        .await
        .unwrap();
    let mut held_text = String::new();
    let acked = read_until(&mut held, &mut held_text, |read| !read.is_empty()).await;
    assert_eq!(
        acked[0]["method"],
        "notifications/subscriptions/acknowledged"
    );

    let mut over = modern_request(&server, 2, "subscriptions/listen", &params)
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    let read = read_until(&mut over, &mut text, |read| {
        read.iter().any(|m| m["id"] == 2)
    })
    .await;
    assert_eq!(
        read[0]["method"], "notifications/subscriptions/acknowledged",
        "{read:?}"
    );
    assert_eq!(
        answer(&read, 2)["result"]["resultType"],
        "complete",
        "ended gracefully: {read:?}"
    );
    drop(held);
}

#[tokio::test]
async fn deleting_ones_own_session_answers_204_and_ends_it() {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), false).await;
    let session = LegacySession::open(&server).await;
    let closed = reqwest::Client::new()
        .delete(&session.url)
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", LEGACY)
        .send()
        .await
        .unwrap();
    assert_eq!(
        closed.status(),
        204,
        "the MCP SDKs take 200 or 204 as terminated"
    );
    let after = session
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert_eq!(after.status(), 404, "the session is gone");
}

#[tokio::test]
async fn a_missing_resource_names_its_uri_and_a_nested_skill_md_is_refused_as_not_nested() {
    let skills = skills_root();
    std::fs::create_dir_all(skills.path().join("alpha/sub")).unwrap();
    std::fs::write(
        skills.path().join("alpha/sub/SKILL.md"),
        "---\nname: sub\n---\n",
    )
    .unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), false).await;
    let missing = "skill://alpha/nothing-here.md";

    let session = LegacySession::open(&server).await;
    let legacy = session.rpc("resources/read", json!({"uri": missing})).await;
    assert_eq!(legacy["error"]["code"], -32002, "{legacy}");
    assert_eq!(legacy["error"]["data"]["uri"], missing, "{legacy}");

    let (_, answers) = modern(
        &server,
        4,
        "resources/read",
        with_meta(json!({"uri": missing}), json!({})),
    )
    .await;
    let error = &answer(&answers, 4)["error"];
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(error["data"]["uri"], missing, "{error}");

    let nested = "skill://alpha/sub/SKILL.md";
    let (_, answers) = modern(
        &server,
        5,
        "skills/get",
        with_meta(json!({"uri": nested}), json!({})),
    )
    .await;
    let error = &answer(&answers, 5)["error"];
    assert_eq!(error["code"], -32602, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("not nested") && message.contains("skill://alpha/SKILL.md"),
        "{message}"
    );
    assert_eq!(error["data"]["uri"], nested, "{error}");
}
