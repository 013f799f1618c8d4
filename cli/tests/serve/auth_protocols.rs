//! `[auth]` with the official clients on the real `skillet serve --http`:
//! - the MCP Python SDK (`tests/python/mcp_auth_client.py`): an unauthenticated `/mcp` is 401
//!   whose `WWW-Authenticate` the SDK's parser reads a `resource_metadata` URL from, serving
//!   RFC 9728 metadata the SDK's model accepts; a session without a bearer header fails at
//!   `initialize`; with one, `tools/list` lists only the caller's tools and a call of another
//!   is an `unauthorized` error result;
//! - the `a2a-sdk` (`tests/python/a2a_auth_client.py`): the card's `securitySchemes` and each
//!   skill's `securityRequirements` parse with the SDK's types, its `AuthInterceptor` puts the
//!   key on the requests, a skill the key may not run is refused and a client without it gets
//!   HTTP 401;
//! - raw JSON-RPC on `/a2a`: the refusal is `-32600` with `a2eCode: unauthorized`.
//!
//! The Python interpreter is `$SKILLET_PYTHON` or `<workspace>/.venv/bin/python`; without the
//! SDKs the tests fail when `CI` is set and are skipped loudly otherwise.

use crate::auth_support;
use crate::cli_support;

use cli_support::python_with;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use auth_support::*;

/// Runs `script ARGS` and returns its last stdout line as JSON.
async fn run_script(python: &Path, script: &str, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let run = tokio::process::Command::new(python)
        .arg(&script)
        .args(args)
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the SDK script ends within 120 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test]
async fn the_mcp_sdk_is_refused_without_a_bearer_header_and_with_one_sees_and_runs_only_its_tools()
{
    let Some(python) = python_with("mcp.client.auth.utils") else {
        return;
    };
    let jwks = Jwks::serve(vec![]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = reqwest::Client::new();
    let summary = run_script(
        &python,
        "mcp_auth_client.py",
        &[&server.url("/mcp"), KEY_A, "echo-a", "echo-b", ISSUER],
    )
    .await;
    assert_eq!(summary["status_without_token"], 401, "{summary}");
    assert_eq!(
        summary["metadata_scopes"],
        json!(["console", "metrics", "override-a", "run-a", "run-tagged"])
    );
    assert!(
        summary["sdk_without_token"]
            .as_str()
            .unwrap()
            .starts_with("MCPError"),
        "{summary}"
    );
    assert_eq!(
        summary["tools"],
        json!(["echo-a"]),
        "only the caller's tools"
    );
    assert_eq!(summary["allowed_is_error"], false, "{summary}");
    assert_eq!(summary["forbidden_is_error"], true, "{summary}");
    assert!(
        summary["forbidden_text"]
            .as_str()
            .unwrap()
            .starts_with("unauthorized"),
        "{summary}"
    );
    assert_eq!(
        server.model_requests(&client).await,
        1,
        "only the allowed call ran"
    );
}

#[tokio::test]
async fn the_a2a_sdk_reads_the_cards_security_and_its_auth_interceptor_sends_the_key() {
    let Some(python) = python_with("a2a.client.auth.interceptor") else {
        return;
    };
    let jwks = Jwks::serve(vec![]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = reqwest::Client::new();
    let summary = run_script(&python, "a2a_auth_client.py", &[&server.server.base, KEY_A]).await;
    assert_eq!(summary["bearer_scheme"], "Bearer", "{summary}");
    assert_eq!(
        summary["card_requirements"],
        json!([["bearer"]]),
        "{summary}"
    );
    assert_eq!(
        summary["skill_scopes"]["echo-a"],
        json!(["override-a", "run-a"]),
        "{summary}"
    );
    assert_eq!(summary["skill_scopes"]["echo-b"], json!([]), "{summary}");
    assert_eq!(
        summary["allowed_state"], "TASK_STATE_COMPLETED",
        "{summary}"
    );
    let forbidden = summary["forbidden"].as_str().unwrap();
    assert!(forbidden.contains("not authorized"), "{summary}");
    assert!(
        summary["anonymous"].as_str().unwrap().contains("401"),
        "{summary}"
    );
    assert_eq!(
        server.model_requests(&client).await,
        1,
        "only the allowed task ran"
    );
}

#[tokio::test]
async fn an_a2a_message_to_a_skill_the_caller_may_not_run_is_refused_with_a2e_code_unauthorized() {
    let jwks = Jwks::serve(vec![]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = reqwest::Client::new();
    let send = |skill: &str, key: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER",
                        "parts": [{"data": {"text": "hi"}}], "metadata": {"skillId": skill}}}});
        client
            .post(server.url("/a2a"))
            .header("A2A-Version", "1.0")
            .bearer_auth(key)
            .json(&body)
            .send()
    };
    let answer: Value = send("echo-b", KEY_A).await.unwrap().json().await.unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(
        answer["error"]["message"], "not authorized for this call",
        "{answer}"
    );
    let detail = answer["error"]["data"].to_string();
    assert!(detail.contains("unauthorized"), "{answer}");
    let answer: Value = send("echo-a", KEY_A).await.unwrap().json().await.unwrap();
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
    assert_eq!(server.model_requests(&client).await, 1);
    // A task belongs to the identity that started it: its owner lists and reads it; another
    // identity allowed the same skill lists nothing and gets "task not found" for its id.
    let task_id = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    let rpc = |key: &'static str, method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 8, "method": method, "params": params});
        let request = client
            .post(server.url("/a2a"))
            .header("A2A-Version", "1.0")
            .bearer_auth(key)
            .json(&body);
        async move {
            // Streaming methods answer their errors as one SSE event too.
            let text = request.send().await.unwrap().text().await.unwrap();
            let body = text
                .lines()
                .find_map(|l| l.strip_prefix("data:"))
                .unwrap_or(&text);
            serde_json::from_str::<Value>(body.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
        }
    };
    let own = rpc(KEY_A, "ListTasks", json!({})).await;
    let listed: Vec<&str> = own["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{own}"))
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(listed, [task_id.as_str()], "{own}");
    let other = rpc(KEY_ONE_AT_A_TIME, "ListTasks", json!({})).await;
    assert_eq!(other["result"]["tasks"], json!([]), "{other}");
    assert!(!other.to_string().contains(&task_id), "{other}");
    let read = rpc(KEY_A, "GetTask", json!({"id": task_id})).await;
    assert_eq!(read["result"]["id"], task_id.as_str(), "{read}");
    for method in ["GetTask", "SubscribeToTask", "CancelTask"] {
        let refused = rpc(KEY_ONE_AT_A_TIME, method, json!({"id": task_id})).await;
        assert_eq!(refused["error"]["code"], -32001, "{method}: {refused}");
    }
}
