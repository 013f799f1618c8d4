//! The A2A 1.0 HTTP+JSON (REST) binding of the real `skillet serve --http` binary:
//! - the official `a2a-sdk` Python client restricted to the `HTTP+JSON` binding
//!   (`tests/python/a2a_binding_client.py rest`) finds the interface on the card, then sends, streams,
//!   gets, lists, subscribes to and cancels tasks, and sees A2A errors mapped back (task not
//!   found, not cancelable, invalid params, push notifications refused while off);
//! - from Rust, following the spec: every error is an HTTP status with a `google.rpc.Status`
//!   body carrying the A2A `ErrorInfo` reason — a streaming route's too, before any stream; an
//!   unknown route is 404 and a wrong HTTP method 405; the routes sit behind the same
//!   `Origin` rule as every other route;
//! - under `[auth]` the routes need a credential (401 without), a skill the key may not run is
//!   403 `PERMISSION_DENIED`, and another identity's task is not found.
//!
//! The model is the embedded mock-llm. The Python interpreter is `$SKILLET_PYTHON` or
//! `<workspace>/.venv/bin/python` with the packages of `mock-llm/tests/python/requirements.txt`;
//! without `a2a-sdk` the SDK test fails when `CI` is set and is skipped loudly otherwise.

use crate::auth_support;
use crate::cli_support;
use crate::sdk_binding::{self, spawn_server};

use serde_json::{Value, json};

use auth_support::{AuthServer, Jwks, KEY_A, KEY_ONE_AT_A_TIME};
use cli_support::*;

#[tokio::test]
async fn the_a2a_sdk_rest_client_sends_streams_gets_lists_subscribes_and_cancels_tasks() {
    let Some(python) = python_with("a2a.client.transports.rest") else {
        return;
    };
    sdk_binding::every_check_passes(&python, "rest").await;
}

/// The status, `Content-Type` and JSON body of one answer.
async fn answer(request: reqwest::RequestBuilder) -> (u16, String, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("one JSON body expected ({e}): {text:?}"));
    (status, content_type, body)
}

/// Asserts a `google.rpc.Status` error body with this HTTP status, status name and A2A reason.
fn assert_status(answer: &(u16, String, Value), status: u16, name: &str, reason: &str) {
    let (got, content_type, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(content_type, "application/a2a+json", "{body}");
    let error = &body["error"];
    assert_eq!(error["code"], status, "{body}");
    assert_eq!(error["status"], name, "{body}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    let info = &error["details"][0];
    assert_eq!(
        info["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{body}"
    );
    assert_eq!(info["reason"], reason, "{body}");
    assert_eq!(info["domain"], "a2a-protocol.org", "{body}");
}

#[tokio::test]
async fn rest_errors_are_http_statuses_with_a_google_rpc_status_body_and_the_origin_rule_holds() {
    let (server, _skills) = spawn_server().await;
    let client = reqwest::Client::new();
    let rest = format!("{}/a2a/rest", server.base);

    let card: Value = client
        .get(format!("{}/.well-known/agent-card.json", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    assert_eq!(interfaces[0]["protocolBinding"], "JSONRPC", "{card}");
    assert_eq!(interfaces[1]["protocolBinding"], "HTTP+JSON", "{card}");
    assert_eq!(interfaces[1]["url"], rest.as_str(), "{card}");

    let unknown = answer(client.get(format!("{rest}/tasks/nope"))).await;
    assert_status(&unknown, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    // A streaming route's error comes before any stream: plain JSON, not SSE.
    let subscribe = answer(client.post(format!("{rest}/tasks/nope:subscribe"))).await;
    assert_status(&subscribe, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    let cancel = answer(client.post(format!("{rest}/tasks/nope:cancel"))).await;
    assert_status(&cancel, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    let stream = answer(
        client
            .post(format!("{rest}/message:stream"))
            .header("content-type", "application/a2a+json")
            .body("{not json"),
    )
    .await;
    assert_status(&stream, 400, "INVALID_ARGUMENT", "PARSE_ERROR");
    let no_message = answer(client.post(format!("{rest}/message:send")).json(&json!({}))).await;
    assert_status(&no_message, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
    let page = answer(client.get(format!("{rest}/tasks?pageSize=0"))).await;
    assert_status(&page, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
    let push = answer(
        client
            .post(format!("{rest}/tasks/nope/pushNotificationConfigs"))
            .json(&json!({"url": "https://example.com/hook"})),
    )
    .await;
    assert_status(
        &push,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    );
    let card = answer(client.get(format!("{rest}/extendedAgentCard"))).await;
    assert_status(
        &card,
        400,
        "FAILED_PRECONDITION",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    );
    let old = answer(
        client
            .get(format!("{rest}/tasks"))
            .header("A2A-Version", "0.3"),
    )
    .await;
    assert_status(&old, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED");
    let route = answer(client.get(format!("{rest}/no/such/route"))).await;
    assert_status(&route, 404, "NOT_FOUND", "METHOD_NOT_FOUND");
    let response = client
        .delete(format!("{rest}/message:send"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], 405, "{body}");
    let large = answer(
        client
            .post(format!("{rest}/message:send"))
            .body(vec![b' '; 1024 * 1024 + 1024]),
    )
    .await;
    assert_eq!(large.0, 413, "{}", large.2);
    assert_eq!(large.2["error"]["code"], 413, "{}", large.2);

    // Another site's page may not drive the REST routes.
    let foreign = client
        .get(format!("{rest}/tasks"))
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);

    // The routes answer a real listing afterwards: the server kept serving.
    let (status, _, listing) = answer(client.get(format!("{rest}/tasks"))).await;
    assert_eq!(status, 200, "{listing}");
    assert!(listing["tasks"].is_array(), "{listing}");
}

#[tokio::test]
async fn under_auth_the_rest_routes_need_a_credential_and_keep_tasks_to_their_owner() {
    let jwks = Jwks::serve(vec![]).await;
    let server = AuthServer::start(&jwks.url, 0).await;
    let client = reqwest::Client::new();
    let send = |skill: &str, key: Option<&str>| {
        let body = json!({"message": {"messageId": format!("m-{skill}"), "role": "ROLE_USER",
            "parts": [{"data": {"text": "hi"}}], "metadata": {"skillId": skill}}});
        let request = client
            .post(server.url("/a2a/rest/message:send"))
            .json(&body);
        match key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    };
    let anonymous = send("echo-a", None).send().await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    let refused = answer(send("echo-b", Some(KEY_A))).await;
    assert_status(&refused, 403, "PERMISSION_DENIED", "INVALID_REQUEST");
    assert_eq!(
        refused.2["error"]["details"][0]["metadata"]["a2eCode"], "unauthorized",
        "{}",
        refused.2
    );
    let (status, _, sent) = answer(send("echo-a", Some(KEY_A))).await;
    assert_eq!(status, 200, "{sent}");
    assert_eq!(
        sent["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{sent}"
    );
    let task = sent["task"]["id"].as_str().unwrap();
    let (status, _, own) = answer(
        client
            .get(server.url(&format!("/a2a/rest/tasks/{task}")))
            .bearer_auth(KEY_A),
    )
    .await;
    assert_eq!((status, &own["id"]), (200, &json!(task)), "{own}");
    let other = answer(
        client
            .get(server.url(&format!("/a2a/rest/tasks/{task}")))
            .bearer_auth(KEY_ONE_AT_A_TIME),
    )
    .await;
    assert_status(&other, 404, "NOT_FOUND", "TASK_NOT_FOUND");
}
