//! A2A push notifications on the real `skillet serve --http`, with a webhook receiver inside
//! the test (axum on 127.0.0.1, allowed by `[a2a] push_allow` with `private = true`):
//! - a task created with `taskPushNotificationConfig` has its updates POSTed to the webhook as
//!   `StreamResponse` bodies (`application/a2a+json`) carrying the config's token and
//!   authentication, ending with the completed status, within seconds;
//! - `Create`/`Get`/`List`/`DeleteTaskPushNotificationConfig` per A2A 1.0 (credentials never read
//!   back); a URL outside the allowlist, or an allowed origin whose host is loopback without
//!   `private = true`, is refused when the config is made, saying why;
//! - a webhook that keeps failing is retried, then the failure is in the task's metadata and in
//!   `/metrics`;
//! - with `[a2a] push` off (the default) the card says `pushNotifications: false` and every
//!   push method is `-32003`.

use crate::cli_support;
use crate::serve_support;

use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use cli_support::*;
use serve_support::ServeHttp;

/// One POST the webhook received: its path, headers and JSON body.
#[derive(Debug)]
struct Received {
    path: String,
    headers: HeaderMap,
    body: Value,
}

/// A webhook on 127.0.0.1: `/ok/…` answers 200, `/fail/…` 500; every POST is reported.
async fn webhook() -> (String, mpsc::UnboundedReceiver<Received>) {
    let (sender, received) = mpsc::unbounded_channel();
    let app = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: HeaderMap, body: axum::body::Bytes| {
            let sender = sender.clone();
            async move {
                let path = uri.path().to_owned();
                let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let status = if path.starts_with("/fail") {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                };
                let _ = sender.send(Received {
                    path,
                    headers,
                    body,
                });
                status
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, received)
}

struct Server {
    _child: tokio::process::Child,
    base: String,
    _skills: tempfile::TempDir,
    _cwd: tempfile::TempDir,
}

/// `skillet serve --http` with `slow-echo` (valid answer after 800 ms) and `[a2a]` `config`.
async fn spawn_server(config: &str) -> Server {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "slow-echo", 800, "{json: {echo: \"hello\"}}");
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        format!("[a2a]\n{config}\n"),
    )
    .unwrap();
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

async fn rpc(server: &Server, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new()
        .post(format!("{}/a2a", server.base))
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn message(id: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "metadata": {"skillId": "slow-echo"},
           "parts": [{"data": {"text": "hi"}}]})
}

/// Receives POSTs until one carries the task's terminal status (at most `within`).
async fn until_terminal(
    received: &mut mpsc::UnboundedReceiver<Received>,
    within: Duration,
) -> Vec<Received> {
    let mut posts = Vec::new();
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let post = tokio::time::timeout_at(deadline, received.recv())
            .await
            .unwrap_or_else(|_| panic!("no terminal status within {within:?}: {posts:#?}"))
            .expect("the webhook is up");
        let state = post.body["statusUpdate"]["status"]["state"].clone();
        posts.push(post);
        if state == "TASK_STATE_COMPLETED" || state == "TASK_STATE_FAILED" {
            return posts;
        }
    }
}

#[tokio::test]
async fn a_tasks_updates_reach_an_allowed_webhook_with_its_token_and_credentials() {
    let (hook, mut received) = webhook().await;
    let server = spawn_server(&format!(
        "push = true\npush_allow = [{{origin = \"{hook}/ok\", private = true}}]"
    ))
    .await;
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["capabilities"]["pushNotifications"], true, "{card}");

    let config = json!({"url": format!("{hook}/ok/task"), "token": "tok-123",
                        "authentication": {"scheme": "Bearer", "credentials": "s3cret"}});
    let started = std::time::Instant::now();
    let answer = rpc(
        &server,
        "SendMessage",
        json!({"message": message("m1"),
               "configuration": {"returnImmediately": true, "taskPushNotificationConfig": config}}),
    )
    .await;
    let task_id = answer["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {answer}"))
        .to_owned();
    let posts = until_terminal(&mut received, Duration::from_secs(10)).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        posts[0].body["task"]["id"],
        task_id.as_str(),
        "{:?}",
        posts[0]
    );
    for post in &posts {
        assert_eq!(post.path, "/ok/task");
        let header = |name: &str| post.headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(header("x-a2a-notification-token"), Some("tok-123"));
        assert_eq!(header("authorization"), Some("Bearer s3cret"));
        assert_eq!(header("content-type"), Some("application/a2a+json"));
        let object = post.body.as_object().unwrap();
        assert_eq!(object.len(), 1, "one StreamResponse payload: {}", post.body);
        let kind = object.keys().next().unwrap();
        assert!(
            ["task", "statusUpdate", "artifactUpdate"].contains(&kind.as_str()),
            "{kind}"
        );
    }
    let last = &posts.last().unwrap().body["statusUpdate"];
    assert_eq!(last["taskId"], task_id.as_str());
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");

    // The config methods: the config made with the message is listed, without credentials.
    let listed = rpc(
        &server,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    let configs = listed["result"]["configs"].as_array().unwrap().clone();
    assert_eq!(configs.len(), 1, "{listed}");
    assert_eq!(configs[0]["url"], format!("{hook}/ok/task"));
    assert_eq!(configs[0]["authentication"], json!({"scheme": "Bearer"}));
    assert!(!listed.to_string().contains("s3cret"), "{listed}");

    let created = rpc(
        &server,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "second", "url": format!("{hook}/ok/second")}),
    )
    .await;
    assert_eq!(created["result"]["id"], "second", "{created}");
    assert_eq!(created["result"]["taskId"], task_id.as_str());
    // A new config gets the task as it is now (here: completed).
    let first = tokio::time::timeout(Duration::from_secs(5), received.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.path, "/ok/second");
    assert_eq!(
        first.body["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let got = rpc(
        &server,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "second"}),
    )
    .await;
    assert_eq!(got["result"]["url"], format!("{hook}/ok/second"), "{got}");
    for _ in 0..2 {
        let deleted = rpc(
            &server,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "second"}),
        )
        .await;
        assert_eq!(deleted["result"], json!({}), "idempotent: {deleted}");
    }
    let gone = rpc(
        &server,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "second"}),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32001, "{gone}");
    let unknown = rpc(
        &server,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": "no-such-task"}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32001, "{unknown}");
}

#[tokio::test]
async fn a_webhook_outside_the_allowlist_or_on_a_private_address_is_refused_when_configured() {
    let (hook, _received) = webhook().await;
    let port = hook.rsplit(':').next().unwrap();
    // `localhost` is allowed as an origin, but not its loopback address.
    let server = spawn_server(&format!(
        "push = true\npush_allow = [{{origin = \"{hook}/ok\", private = true}}, \"http://localhost:{port}\"]"
    ))
    .await;
    let answer = rpc(&server, "SendMessage", json!({"message": message("m1")})).await;
    let task_id = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    let cases = [
        ("https://attacker.example/hook", "push_allow"),
        (&format!("{hook}/elsewhere") as &str, "push_allow"),
        ("http://169.254.169.254/latest/meta-data", "push_allow"),
        (&format!("http://localhost:{port}/hook"), "private = true"),
        ("file:///etc/passwd", "http(s)"),
    ];
    for (url, says) in cases {
        let refused = rpc(
            &server,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "url": url}),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32602, "{url}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{url}: {message}");
    }
    // The same refusal for a message that carries the config: no task is made.
    let refused = rpc(
        &server,
        "SendMessage",
        json!({"message": message("m2"),
               "configuration": {"taskPushNotificationConfig": {"url": "https://attacker.example/h"}}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let listed = rpc(&server, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 1, "{listed}");
}

#[tokio::test]
async fn a_failing_webhook_is_retried_then_counted_in_the_task_metadata_and_metrics() {
    let (hook, mut received) = webhook().await;
    let server = spawn_server(&format!(
        "push = true\npush_allow = [{{origin = \"{hook}\", private = true}}]"
    ))
    .await;
    let answer = rpc(&server, "SendMessage", json!({"message": message("m1")})).await;
    let task_id = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    rpc(
        &server,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "url": format!("{hook}/fail")}),
    )
    .await;
    // The one update (the finished task) is tried 4 times.
    for attempt in 1..=4 {
        let post = tokio::time::timeout(Duration::from_secs(10), received.recv())
            .await
            .unwrap_or_else(|_| panic!("attempt {attempt} not made"))
            .unwrap();
        assert_eq!(post.body["task"]["id"], task_id.as_str());
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let task = loop {
        let task = rpc(&server, "GetTask", json!({"id": task_id})).await;
        if task["result"]["metadata"]["pushDeliveryFailures"] == 1
            || std::time::Instant::now() > deadline
        {
            break task;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let metadata = &task["result"]["metadata"];
    assert_eq!(metadata["pushDeliveryFailures"], 1, "{task}");
    let why = metadata["pushLastFailure"].as_str().unwrap_or_default();
    assert!(why.contains("HTTP 500 after 4 attempt"), "{why}");
    let metrics = reqwest::get(format!("{}/metrics", server.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(r#"skillet_a2a_push_deliveries_total{outcome="failed"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn with_push_off_by_default_the_card_says_so_and_push_methods_are_refused() {
    let server = spawn_server("").await;
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["capabilities"]["pushNotifications"], false, "{card}");
    let refused = rpc(
        &server,
        "SendMessage",
        json!({"message": message("m1"),
               "configuration": {"taskPushNotificationConfig": {"url": "https://h.example/x"}}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
    for method in [
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    ] {
        let refused = rpc(&server, method, json!({"taskId": "t", "id": "c"})).await;
        assert_eq!(refused["error"]["code"], -32003, "{method}: {refused}");
    }
}
