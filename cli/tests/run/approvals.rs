//! Human approval of tool calls on the real `skillet serve`, every protocol:
//! - A2E (`/a2e`), which cannot ask: `[approvals] default` denies (the model reads the denial)
//!   or allows, and the result's events carry the request and the decision as `status` events
//!   with a `detail`;
//! - A2A raw requests: a gated call pauses its task in `TASK_STATE_INPUT_REQUIRED` with a data
//!   part naming the tool and its arguments; a message with the `taskId` approves or denies it;
//!   continuing an unknown task (`-32001`), a task that does not wait (`-32004`) and a malformed
//!   decision (`-32602`, the task keeps waiting) are each answered once; the deadline passing
//!   while the task waits fails it with `timeout`;
//! - the official `a2a-sdk` client drives a multi-turn approval (`python/a2a_approval_client.py`);
//! - the official `mcp` client approves, denies and declines by elicitation on stdio and
//!   streamable HTTP, and a client without elicitation gets the host policy
//!   (`python/mcp_approval_client.py --revision legacy`).
//!
//! The gated skill `gated-calc` calls the built-in `calculator` (its `a2e-approval` gates it);
//! the embedded mock-llm answers from what the tool call returned. Python is found as in
//! `a2a_core`; without it the SDK tests fail under `CI` and are skipped loudly otherwise.

use crate::cli_support;
use crate::serve_support;

use std::time::Duration;

use serde_json::{Value, json};

use cli_support::*;
use serve_support::{ServeHttp, post_json};

struct Server {
    _child: tokio::process::Child,
    base: String,
    _skills: tempfile::TempDir,
    _cwd: tempfile::TempDir,
}

/// `skillet serve --http` with the gated skills and `config` as its `skillet.toml`.
async fn spawn_server(config: &str) -> Server {
    let skills = tempfile::tempdir().unwrap();
    write_gated_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("skillet.toml"), config).unwrap();
    let served = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .skills_dir(skills.path())
        .spawn()
        .await;
    Server {
        _child: served.child,
        base: served.base,
        _skills: skills,
        _cwd: cwd,
    }
}

async fn a2e_call(server: &Server, skill: &str) -> Value {
    let request = json!({"type": "skill/call/req", "id": "c1", "name": skill,
                         "arguments": {"text": "6*7"}});
    post_json(
        &reqwest::Client::new(),
        format!("{}/a2e", server.base),
        request.to_string(),
    )
    .await
}

/// The `detail`s of a result's `status` events.
fn approval_details(response: &Value) -> Vec<Value> {
    response["data"]["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == "status")
        .filter_map(|e| e["data"].get("detail").cloned())
        .collect()
}

#[tokio::test]
async fn a2e_cannot_ask_so_the_host_policy_denies_or_allows_and_says_so_in_events() {
    let deny = spawn_server("").await;
    let response = a2e_call(&deny, "gated-calc").await;
    assert_eq!(
        response["data"]["data"],
        json!({"echo": "denied by policy"}),
        "{response}"
    );
    let details = approval_details(&response);
    assert_eq!(details.len(), 2, "{response}");
    assert_eq!(details[0]["approval"], "requested");
    assert_eq!(details[0]["tool"], "calculator");
    assert_eq!(details[0]["arguments"], json!({"expression": "6*7"}));
    assert_eq!(details[1]["approval"], "denied");
    assert_eq!(details[1]["by"], "policy");

    let allow = spawn_server("[approvals]\ndefault = \"allow\"\n").await;
    let response = a2e_call(&allow, "gated-calc").await;
    assert_eq!(
        response["data"]["data"],
        json!({"echo": "approved"}),
        "{response}"
    );
    let details = approval_details(&response);
    assert_eq!(details[1]["approval"], "approved", "{response}");
    assert_eq!(details[1]["by"], "policy");
}

/// Posts one JSON-RPC request to `/a2a`; returns every answer it got (one JSON body, or every
/// SSE event of a stream).
async fn a2a(server: &Server, method: &str, params: Value) -> Vec<Value> {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let response = reqwest::Client::new()
        .post(format!("{}/a2a", server.base))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let stream = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let text = response.text().await.unwrap();
    if stream {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    } else {
        vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"))]
    }
}

/// The one answer of a request, which must be a result.
async fn a2a_result(server: &Server, method: &str, params: Value) -> Value {
    let answers = a2a(server, method, params).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert!(answers[0].get("error").is_none(), "{}", answers[0]);
    answers[0]["result"].clone()
}

/// The one answer of a request, which must be the error `code`.
async fn a2a_refused(server: &Server, method: &str, params: Value, code: i64) -> String {
    let answers = a2a(server, method, params).await;
    assert_eq!(answers.len(), 1, "answered once: {answers:?}");
    assert_eq!(answers[0]["error"]["code"], code, "{}", answers[0]);
    assert!(answers[0].get("result").is_none());
    answers[0]["error"]["message"].as_str().unwrap().to_owned()
}

/// A new task's first message (each with its own `messageId`: the same id again would be
/// answered with the first task).
fn first_message(skill: &str) -> Value {
    static SENT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    json!({"message": {"messageId": format!("m1-{n}"), "role": "ROLE_USER", "metadata": {"skillId": skill},
                       "parts": [{"data": {"text": "6*7"}}]}})
}

fn reply(task_id: &str, decision: Value) -> Value {
    json!({"message": {"messageId": "m2", "role": "ROLE_USER", "taskId": task_id,
                       "parts": [{"text": "my decision"}, {"data": decision}]}})
}

#[tokio::test]
async fn an_a2a_task_waits_in_input_required_and_a_message_with_its_task_id_continues_it() {
    let server = spawn_server("").await;
    // A blocking SendMessage answers once the task waits.
    let task =
        a2a_result(&server, "SendMessage", first_message("gated-calc")).await["task"].clone();
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    let id = task["id"].as_str().unwrap().to_owned();
    let question = &task["status"]["message"];
    assert_eq!(question["role"], "ROLE_AGENT");
    let data = question["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|p| p.get("data"))
        .expect("a data part");
    assert_eq!(data["approval"]["tool"], "calculator", "{question}");
    assert_eq!(data["approval"]["arguments"], json!({"expression": "6*7"}));

    // Refusals, each answered once; the task keeps waiting through them.
    a2a_refused(
        &server,
        "SendMessage",
        reply("no-such-task", json!({"approve": true})),
        -32001,
    )
    .await;
    for malformed in [json!({"approve": "yes"}), json!({"reason": "no approve"})] {
        a2a_refused(&server, "SendMessage", reply(&id, malformed), -32602).await;
    }
    let no_data = json!({"message": {"messageId": "m3", "role": "ROLE_USER", "taskId": id,
                                     "parts": [{"text": "yes please"}]}});
    a2a_refused(&server, "SendMessage", no_data, -32602).await;
    let waiting = a2a_result(&server, "GetTask", json!({"id": id})).await;
    assert_eq!(waiting["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    // Approve: the run goes on to the end; the reply is in the history.
    let done =
        a2a_result(&server, "SendMessage", reply(&id, json!({"approve": true}))).await["task"]
            .clone();
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        done["artifacts"][0]["parts"][0]["data"],
        json!({"echo": "approved"})
    );
    let history = done["history"].as_array().unwrap();
    assert!(
        history.iter().any(|m| m["messageId"] == "m2"),
        "{history:?}"
    );
    // A finished task takes no more messages.
    a2a_refused(
        &server,
        "SendMessage",
        reply(&id, json!({"approve": true})),
        -32004,
    )
    .await;

    // Deny with a reason, over a stream: the stream of the first message ends when the task
    // waits; the reply's stream runs to the end.
    let first = a2a(&server, "SendStreamingMessage", first_message("gated-calc")).await;
    let last = &first.last().unwrap()["result"];
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{first:?}"
    );
    let id = last["statusUpdate"]["taskId"].as_str().unwrap().to_owned();
    let rest = a2a(
        &server,
        "SendStreamingMessage",
        reply(&id, json!({"approve": false, "reason": "not on prod"})),
    )
    .await;
    let end = &rest.last().unwrap()["result"]["statusUpdate"];
    assert_eq!(end["status"]["state"], "TASK_STATE_COMPLETED", "{rest:?}");
    let task = a2a_result(&server, "GetTask", json!({"id": id})).await;
    let output = task["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["artifactId"] == "output")
        .expect("the output artifact");
    assert_eq!(
        output["parts"][0]["data"],
        json!({"echo": "denied: not on prod"})
    );
}

#[tokio::test]
async fn the_deadline_passing_while_a_task_waits_fails_it_with_timeout() {
    let server = spawn_server("").await;
    let params = json!({"message": first_message("gated-slow")["message"],
                        "configuration": {"returnImmediately": true}});
    let task = a2a_result(&server, "SendMessage", params).await["task"].clone();
    let id = task["id"].as_str().unwrap().to_owned();
    let mut last = Value::Null;
    for _ in 0..600 {
        last = a2a_result(&server, "GetTask", json!({"id": id})).await;
        let state = last["status"]["state"].as_str().unwrap_or_default();
        if state == "TASK_STATE_FAILED" || state == "TASK_STATE_COMPLETED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["status"]["state"], "TASK_STATE_FAILED", "{last}");
    assert_eq!(last["metadata"]["a2eCode"], "timeout", "{last}");
    a2a_refused(
        &server,
        "SendMessage",
        reply(&id, json!({"approve": true})),
        -32004,
    )
    .await;
}

#[tokio::test]
async fn the_official_a2a_sdk_drives_a_multi_turn_approval() {
    let Some(python) = python_with("a2a.client") else {
        return;
    };
    let server = spawn_server("").await;
    let stdout = run_python_script(
        &python,
        "a2a_approval_client.py",
        std::slice::from_ref(&server.base),
    )
    .await;
    for check in ["approve", "deny"] {
        assert!(
            stdout.lines().any(|l| l == format!("OK {check}")),
            "{check}: {stdout}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_sdk_approves_and_denies_by_elicitation_on_stdio_and_http() {
    let Some(python) = python_with("mcp") else {
        return;
    };
    let skills = tempfile::tempdir().unwrap();
    write_gated_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("skillet.toml"), "").unwrap();
    let config = cwd.path().join("skillet.toml").display().to_string();
    // stdio: the script spawns `skillet serve --mcp` (embedded mock).
    let mut args = vec![
        "--revision".to_owned(),
        "legacy".into(),
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
    let stdout = run_python_script(&python, "mcp_approval_client.py", &args).await;
    assert!(
        stdout.contains("ok: deny: the reason reached the model"),
        "{stdout}"
    );

    let server = spawn_server("").await;
    let args = vec![
        "--revision".to_owned(),
        "legacy".into(),
        "--transport".into(),
        "http".into(),
        "--url".into(),
        format!("{}/mcp", server.base),
    ];
    let stdout = run_python_script(&python, "mcp_approval_client.py", &args).await;
    assert!(
        stdout.contains("ok: no elicitation capability: the host policy denied"),
        "{stdout}"
    );
}
