//! Tool-call approval on MCP 2026-07-28 on the real `skillet serve` (issue 53 item 2): a gated
//! call is answered with an input-required result (SEP-2322) carrying the approval form, and the
//! client's retry with the answer and the echoed `requestState` resumes the same run:
//! - the official `mcp` client in its 2026-07-28 mode approves, denies (the reason reaches the
//!   model) and declines, over streamable HTTP and stdio
//!   (`python/mcp_approval_client.py --revision 2026-07-28`);
//! - raw JSON-RPC: the question is a form elicitation under `inputRequests.approval`; a retry
//!   without the answer is asked again under the same `requestState`; the answering retry gets
//!   the run's log notifications; an unknown, used or
//!   another call's `requestState` is `-32602` saying to call again without it; a client that
//!   declared no elicitation follows the host policy; the call's deadline passing while the
//!   question waits ends the run, and the retry gets its timeout.
//!
//! The skills are `cli_support::write_gated_skills`' (as in `approvals`, which covers the
//! `initialize` era's `elicitation/create`). Python is found by `cli_support::python_with`;
//! without it the SDK test fails under `CI` and is skipped loudly otherwise.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use cli_support::{SKILLET, python_with, write_gated_skills};
use serve_support::{HttpServer, ServeHttp, jsonrpc_messages};

const MODERN: &str = "2026-07-28";

/// `serve --http` with the gated skills and an empty `skillet.toml` (approvals default: deny).
async fn serve(skills: &Path, cwd: &Path) -> HttpServer {
    std::fs::write(cwd.join("skillet.toml"), "").unwrap();
    ServeHttp::new(SKILLET)
        .cwd(cwd)
        .skills_dir(skills)
        .spawn()
        .await
}

/// A 2026-07-28 `tools/call` of `skill` with `{"text": text}` and `extra` params (a retry's
/// `requestState`, `inputResponses`; `_meta` keys join the request's `_meta`), from a client
/// whose capabilities are `capabilities`; every message of its answer.
async fn call_messages(
    server: &HttpServer,
    id: u64,
    skill: &str,
    text: &str,
    capabilities: Value,
    extra: Value,
) -> Vec<Value> {
    let mut params = json!({
        "name": skill,
        "arguments": {"text": text},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "mcp-approval-2026", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
    });
    if let (Some(params), Value::Object(mut extra)) = (params.as_object_mut(), extra) {
        if let (Some(Value::Object(meta)), Some(Value::Object(more))) =
            (params.get_mut("_meta"), extra.remove("_meta"))
        {
            meta.extend(more);
        }
        params.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", server.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", skill)
        .body(body.to_string())
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    jsonrpc_messages(&response.text().await.unwrap())
}

/// [`call_messages`]' answer (the message with `id`).
async fn call(
    server: &HttpServer,
    id: u64,
    skill: &str,
    text: &str,
    capabilities: Value,
    extra: Value,
) -> Value {
    let messages = call_messages(server, id, skill, text, capabilities, extra).await;
    messages
        .iter()
        .find(|m| m["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no answer {id} in {messages:?}"))
}

fn form_elicitation() -> Value {
    json!({"elicitation": {"form": {}}})
}

/// The `requestState` of an input-required answer asking the approval of `6*7`'s calculator.
fn question_state(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let asked = &result["inputRequests"]["approval"];
    assert_eq!(asked["method"], "elicitation/create", "{answer}");
    assert_eq!(asked["params"]["mode"], "form", "{answer}");
    let schema = &asked["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["approve"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["approve"]));
    let message = asked["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("calculator") && message.contains("6*7"),
        "{message}"
    );
    result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

fn echo(answer: &Value) -> &Value {
    assert!(answer.get("error").is_none(), "{answer}");
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    &answer["result"]["structuredContent"]["echo"]
}

fn assert_invalid_state(answer: &Value) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("requestState") && message.contains("call the tool again"),
        "{message}"
    );
}

#[tokio::test]
async fn a_gated_call_is_asked_by_an_input_required_result_and_the_retry_resumes_the_same_run() {
    let skills = tempfile::tempdir().unwrap();
    write_gated_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path()).await;
    let caps = form_elicitation;

    let first = call(&server, 1, "gated-calc", "6*7", caps(), json!({})).await;
    let state = question_state(&first);

    // A retry without the answer is asked the same question, under the same state.
    let again = call(
        &server,
        2,
        "gated-calc",
        "6*7",
        caps(),
        json!({"requestState": state}),
    )
    .await;
    assert_eq!(question_state(&again), state);

    // Unknown state, or the state for another call: -32602; the question still waits.
    let unknown = json!({"requestState": "not-a-state",
                         "inputResponses": {"approval": {"action": "accept",
                                                          "content": {"approve": true}}}});
    assert_invalid_state(&call(&server, 3, "gated-calc", "6*7", caps(), unknown).await);
    let approve = json!({"requestState": state,
                         "inputResponses": {"approval": {"action": "accept",
                                                          "content": {"approve": true}}}});
    assert_invalid_state(&call(&server, 4, "gated-calc", "1+1", caps(), approve.clone()).await);

    // The answer resumes the run: the tool ran and the model read its result. The run's log
    // notifications now go to the retry, at the level its `_meta` asks.
    let mut logged = approve.clone();
    logged["_meta"] = json!({"io.modelcontextprotocol/logLevel": "info"});
    let messages = call_messages(&server, 5, "gated-calc", "6*7", caps(), logged).await;
    let done = messages.iter().find(|m| m["id"] == 5).expect("the answer");
    assert_eq!(echo(done), "approved", "{done}");
    assert!(
        messages
            .iter()
            .any(|m| m["method"] == "notifications/message"
                && m["params"]["data"]
                    .as_str()
                    .is_some_and(|d| d.contains("approval granted"))),
        "{messages:?}"
    );
    // The state is used up.
    assert_invalid_state(&call(&server, 6, "gated-calc", "6*7", caps(), approve).await);

    // Denied with a reason, in the same way.
    let state = question_state(&call(&server, 7, "gated-calc", "6*7", caps(), json!({})).await);
    let deny = json!({"requestState": state,
                      "inputResponses": {"approval": {"action": "accept",
                          "content": {"approve": false, "reason": "not on prod"}}}});
    let done = call(&server, 8, "gated-calc", "6*7", caps(), deny).await;
    assert_eq!(echo(&done), "denied: not on prod", "{done}");

    // A client that declared no elicitation is not asked: the host policy denies.
    let done = call(&server, 9, "gated-calc", "6*7", json!({}), json!({})).await;
    assert_eq!(echo(&done), "denied by policy", "{done}");
}

#[tokio::test]
async fn the_deadline_passing_while_the_question_waits_ends_the_run_and_the_retry_gets_its_timeout()
{
    let skills = tempfile::tempdir().unwrap();
    write_gated_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path()).await;
    let first = call(
        &server,
        1,
        "gated-slow",
        "6*7",
        form_elicitation(),
        json!({}),
    )
    .await;
    let state = question_state(&first);
    // `gated-slow` has a 2 s deadline.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let approve = json!({"requestState": state,
                         "inputResponses": {"approval": {"action": "accept",
                                                          "content": {"approve": true}}}});
    let late = call(&server, 2, "gated-slow", "6*7", form_elicitation(), approve).await;
    assert_eq!(late["result"]["isError"], true, "{late}");
    assert!(late.to_string().contains("timeout"), "{late}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_sdk_2026_client_approves_and_denies_through_input_required_results() {
    let Some(python) = python_with("mcp.client.client") else {
        return;
    };
    let skills = tempfile::tempdir().unwrap();
    write_gated_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path()).await;
    let args = vec![
        "--revision".to_owned(),
        "2026-07-28".into(),
        "--transport".into(),
        "http".into(),
        "--url".into(),
        format!("{}/mcp", server.base),
    ];
    let stdout = cli_support::run_python_script(&python, "mcp_approval_client.py", &args).await;
    assert!(
        stdout.contains("ok: deny: the reason reached the model"),
        "{stdout}"
    );

    // stdio: the script spawns `skillet serve --mcp` (embedded mock).
    let config = cwd.path().join("skillet.toml").display().to_string();
    let mut args = vec![
        "--revision".to_owned(),
        "2026-07-28".into(),
        "--transport".into(),
        "stdio".into(),
        "--skillet".into(),
        SKILLET.into(),
    ];
    for arg in [
        "--config",
        &config,
        "--skills-dir",
        &skills.path().display().to_string(),
        "serve",
        "--mcp",
    ] {
        args.push(format!("--serve-arg={arg}"));
    }
    let stdout = cli_support::run_python_script(&python, "mcp_approval_client.py", &args).await;
    assert!(stdout.contains("ok: approve: asked once"), "{stdout}");
}
