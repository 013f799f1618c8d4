//! A2A tasks across a restart of the real `skillet serve --http`, with `[server] state_db`:
//! - a 4-turn task SIGKILLed while its turn 3 is at the model is resumed by the restarted
//!   server from the checkpoint of turn 2 (mock-llm's journal: turns 1 and 2 requested once),
//!   and the official `a2a-sdk` client's `SubscribeToTask` and `GetTask` after the restart see
//!   it complete with its output (`tests/python/a2a_restart_client.py`);
//! - a task still running when a graceful stop's grace (SIGTERM, `shutdown_grace_seconds`)
//!   runs out is kept, not failed: its open stream ends without a terminal status, the process
//!   exits 0, and the next start resumes it from turn 2's checkpoint to completion;
//! - a task whose arguments held a configured secret is not resumable: after the restart it is
//!   `TASK_STATE_FAILED` saying why, never left working; the canary secret is in no byte of
//!   the database (its WAL included), where `[REDACTED]` stands for it;
//! - a push notification config survives the restart: the resumed task's later updates reach
//!   its webhook with its token, ending with the completed status, and `Get` answers it; a
//!   config whose webhook origin the new `push_allow` no longer lists is dropped, saying so;
//! - a corrupt database file is a clear start-up error (exit code, message naming the file),
//!   not a panic; without `state_db` a restart forgets every task, as before.
//!
//! One in-process mock-llm serves both server processes, so its journal holds every model
//! request of the task. The Python interpreter is found as in `a2a_serve.rs` (skipped loudly
//! without one, a failure under `CI`).

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use mock_llm::{MockConfig, MockServer, Scenario};
use serde_json::{Value, json};

use cli_support::{SKILLET, python_with, sigterm};
use serve_support::{HttpServer, ServeHttp, post_json};

const CANARY: &str = "sk-canary-a2a-restart-7c1d0e";

/// Turn 3 is slow the first time (the server is killed in it) and quick enough after the
/// restart for a client to subscribe before the task ends.
const FOUR_TURNS: &str = r#"
rules:
  - name: t1
    when: { turn: 1 }
    reply: { tool_calls: [{ name: lookup, arguments: { q: "first" } }] }
  - name: t2
    when: { turn: 2 }
    reply: { tool_calls: [{ name: lookup, arguments: { q: "second" } }] }
  - name: t3-killed
    when: { turn: 3 }
    times: 1
    reply: { tool_calls: [{ name: lookup, arguments: { q: "third" } }] }
    timing: { latency_ms: 60000 }
  - name: t3
    when: { turn: 3 }
    reply: { tool_calls: [{ name: lookup, arguments: { q: "third" } }] }
    timing: { latency_ms: 6000 }
  - name: t4
    when: { turn: 4 }
    reply: { json: { result: "done" } }
"#;

/// A skills root with `durable`: four turns over the idempotent `lookup` tool.
fn durable_skills() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("durable");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: durable\ndescription: Looks things up over four turns (test skill).\n\
         metadata:\n  a2a-tags: '[\"test\"]'\n  a2a-input-schema: assets/input.schema.json\n  \
         a2a-output-schema: assets/output.schema.json\n  a2e-tools: '[\"lookup\"]'\n  \
         a2e-max-turns: '6'\n---\nLook it up: {{ text }}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/input.schema.json"),
        r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}"#,
    )
    .unwrap();
    root
}

/// The server's skillet.toml: the shared mock as the model (its key the canary, a secret the
/// config names), `lookup`, and `state_db` when asked.
fn write_config(cwd: &Path, mock: &MockServer, state_db: bool) {
    let state = if state_db {
        "[server]\nstate_db = \"state/tasks.db\"\n\n"
    } else {
        ""
    };
    std::fs::write(
        cwd.join("skillet.toml"),
        format!(
            "{state}[providers.main]\nkind = \"openai-compatible\"\nmodel = \"mock-model\"\n\
             base_url = \"{}/v1\"\napi_key_env = \"A2A_RESTART_KEY\"\n\n[providers.main.options]\n\
             max_attempts = 1\n\n[tools.lookup]\nkind = \"command\"\n\
             description = \"Looks something up\"\nprogram = \"/bin/echo\"\n\
             args = ['{{\"found\": 1}}']\nidempotent = true\n",
            mock.base_url()
        ),
    )
    .unwrap();
}

async fn serve(cwd: &Path, skills: &Path) -> HttpServer {
    ServeHttp::new(SKILLET)
        .env("A2A_RESTART_KEY", CANARY)
        .cwd(cwd)
        .skills_dir(skills)
        .spawn()
        .await
}

async fn mock() -> MockServer {
    let scenario = Scenario::from_yaml_str(FOUR_TURNS).unwrap();
    MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap()
}

/// The turn of each chat request the mock received, in order.
fn turns(mock: &MockServer) -> Vec<usize> {
    mock.journal()
        .into_iter()
        .filter(|e| e.endpoint.ends_with("chat"))
        .map(|e| {
            let messages = e.body["messages"].as_array().cloned().unwrap_or_default();
            1 + messages.iter().filter(|m| m["role"] == "assistant").count()
        })
        .collect()
}

async fn wait_for_turn(mock: &MockServer, turn: usize) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while !turns(mock).contains(&turn) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("turn {turn} never reached the model: {:?}", turns(mock)));
}

async fn kill9(server: &mut HttpServer) {
    server.child.start_kill().unwrap();
    server.child.wait().await.unwrap();
}

/// A JSON-RPC request to `/a2a`; its `result` or `error`.
async fn rpc(base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let client = reqwest::Client::new();
    let answer = client
        .post(format!("{base}/a2a"))
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    answer
        .get("result")
        .or_else(|| answer.get("error"))
        .cloned()
        .unwrap_or(answer)
}

/// A task started with `returnImmediately` (it runs on); its id.
async fn start_task(base: &str, text: &str) -> String {
    let message = json!({
        "messageId": "m1", "role": "ROLE_USER",
        "parts": [{"data": {"text": text}}], "metadata": {"skillId": "durable"}
    });
    let result = rpc(
        base,
        "SendMessage",
        json!({"message": message, "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert_eq!(
        result["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{result}"
    );
    result["task"]["id"].as_str().unwrap().to_owned()
}

async fn task_when_ended(base: &str, id: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(90), async {
        loop {
            let task = rpc(base, "GetTask", json!({"id": id})).await;
            let state = task["status"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if state != "TASK_STATE_WORKING" && state != "TASK_STATE_SUBMITTED" {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the task ends")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_killed_after_turn_2_is_resumed_by_the_restarted_server_and_the_sdk_sees_it_complete()
 {
    let Some(python) = python_with("a2a, httpx") else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/a2a_restart_client.py");
    let mock = mock().await;
    let skills = durable_skills();
    let cwd = tempfile::tempdir().unwrap();
    write_config(cwd.path(), &mock, true);
    let mut first = serve(cwd.path(), skills.path()).await;

    // The official client starts the task.
    let sent = tokio::process::Command::new(&python)
        .arg(&script)
        .args(["send", &first.base, "durable"])
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&sent.stdout);
    assert!(
        sent.status.success(),
        "send failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let task_id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("TASK "))
        .expect("a task id")
        .to_owned();

    // Turn 3 at the model means turn 2's checkpoint is written: kill the server there.
    wait_for_turn(&mock, 3).await;
    kill9(&mut first).await;

    // The client waits for the restarted server (whose port it reads from a file).
    let url_file = cwd.path().join("restarted-url");
    let after = tokio::process::Command::new(&python)
        .arg(&script)
        .arg("after")
        .arg(&url_file)
        .arg(&task_id)
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .output();
    let after = tokio::spawn(after);
    let second = serve(cwd.path(), skills.path()).await;
    let notice = second.startup_lines.join("\n");
    assert!(
        notice.contains("1 resumed, 0 failed"),
        "the restart resumed the task:\n{notice}"
    );
    std::fs::write(&url_file, &second.base).unwrap();

    let out = tokio::time::timeout(Duration::from_secs(180), after)
        .await
        .expect("the SDK script ends")
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "a2a_restart_client.py failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for check in ["subscribe_completed", "get_task_completed"] {
        assert!(
            stdout.lines().any(|l| l == format!("OK {check}")),
            "{check} did not pass:\n{stdout}"
        );
    }
    // Turns 1 and 2 were requested once, before the kill; turn 3 (in flight at the model when
    // the server died) again after it, then turn 4.
    assert_eq!(turns(&mock), vec![1, 2, 3, 3, 4]);
    // ListTasks of the restarted server has it, finished.
    let listed = rpc(&second.base, "ListTasks", json!({})).await;
    let tasks = listed["tasks"].as_array().cloned().unwrap_or_default();
    assert!(
        tasks
            .iter()
            .any(|t| t["id"] == task_id.as_str() && t["status"]["state"] == "TASK_STATE_COMPLETED"),
        "{listed}"
    );
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_running_past_a_graceful_stops_grace_is_kept_and_resumed_by_the_next_start() {
    let mock = mock().await;
    let skills = durable_skills();
    let cwd = tempfile::tempdir().unwrap();
    write_config(cwd.path(), &mock, true);
    let config = cwd.path().join("skillet.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("[server]\n", "[server]\nshutdown_grace_seconds = 1\n"),
    )
    .unwrap();
    let mut first = serve(cwd.path(), skills.path()).await;
    let task_id = start_task(&first.base, "outlive the grace").await;
    wait_for_turn(&mock, 3).await;

    // A client following the task when the server stops.
    let stream = reqwest::Client::new()
        .post(format!("{}/a2a", first.base))
        .header("A2A-Version", "1.0")
        .header("accept", "text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask",
                      "params": {"id": task_id}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    sigterm(first.child.id().unwrap());
    let streamed = tokio::time::timeout(Duration::from_secs(30), stream.text())
        .await
        .expect("the stream ends with the server")
        .unwrap_or_default();
    assert!(streamed.contains("TASK_STATE_WORKING"), "{streamed}");
    for end in [
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_COMPLETED",
    ] {
        assert!(
            !streamed.contains(end),
            "the stream said the task ended: {streamed}"
        );
    }
    let status = tokio::time::timeout(Duration::from_secs(30), first.child.wait())
        .await
        .expect("the server exits after its grace")
        .unwrap();
    assert_eq!(status.code(), Some(0), "a graceful stop exits 0");
    assert_eq!(turns(&mock), vec![1, 2, 3]);

    let second = serve(cwd.path(), skills.path()).await;
    let notice = second.startup_lines.join("\n");
    assert!(
        notice.contains("1 resumed, 0 failed"),
        "the next start resumed the task:\n{notice}"
    );
    let task = task_when_ended(&second.base, &task_id).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    // Turns 1 and 2 were not asked again; turn 3, cut by the stop, was.
    assert_eq!(turns(&mock), vec![1, 2, 3, 3, 4]);
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_holding_a_secret_is_failed_not_resumed_and_the_secret_is_never_in_the_database() {
    let mock = mock().await;
    let skills = durable_skills();
    let cwd = tempfile::tempdir().unwrap();
    write_config(cwd.path(), &mock, true);
    let mut first = serve(cwd.path(), skills.path()).await;
    let task_id = start_task(&first.base, &format!("the key is {CANARY}")).await;
    wait_for_turn(&mock, 3).await;
    kill9(&mut first).await;

    let second = serve(cwd.path(), skills.path()).await;
    let task = task_when_ended(&second.base, &task_id).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    let message = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.starts_with("not resumed after the restart:") && message.contains("secret"),
        "{task}"
    );
    // Nothing was asked of the model after the restart.
    assert_eq!(turns(&mock), vec![1, 2, 3]);
    drop(second);

    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(cwd.path().join("state")).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains(&task_id), "the task is in the database");
    assert!(text.contains("[REDACTED]"), "the secret was redacted");
    assert!(!text.contains(CANARY), "the canary reached the database");
    mock.shutdown().await;
}

#[tokio::test]
async fn a_corrupt_state_db_is_a_clear_start_up_error() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cwd.path().join("state")).unwrap();
    std::fs::write(
        cwd.path().join("state/tasks.db"),
        "this is no SQLite file, just text long enough to be read as one ".repeat(64),
    )
    .unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "[server]\nstate_db = \"state/tasks.db\"\n",
    )
    .unwrap();
    let out = tokio::process::Command::new(SKILLET)
        .args(["serve", "--http", "127.0.0.1:0"])
        .current_dir(cwd.path())
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_CONFIG")
        .env("XDG_STATE_HOME", cwd.path().join(".state"))
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("it exits")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("state_db")
            && stderr.contains("tasks.db")
            && stderr.contains("not a usable SQLite database"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_state_db_a_restart_forgets_its_tasks_as_before() {
    let mock = mock().await;
    let skills = durable_skills();
    let cwd = tempfile::tempdir().unwrap();
    write_config(cwd.path(), &mock, false);
    let mut first = serve(cwd.path(), skills.path()).await;
    let task_id = start_task(&first.base, "in memory").await;
    wait_for_turn(&mock, 3).await;
    assert_eq!(
        rpc(&first.base, "GetTask", json!({"id": task_id})).await["status"]["state"],
        "TASK_STATE_WORKING"
    );
    kill9(&mut first).await;
    let second = serve(cwd.path(), skills.path()).await;
    let answer = rpc(&second.base, "GetTask", json!({"id": task_id})).await;
    assert_eq!(answer["code"], -32001, "{answer}");
    assert!(!cwd.path().join("state").exists());
    // The A2E door is unchanged.
    let discover = post_json(
        &reqwest::Client::new(),
        format!("{}/a2e", second.base),
        json!({"type": "skill/discover/req", "id": "d"}).to_string(),
    )
    .await;
    assert_eq!(discover["type"], "skill/discover/resp");
    mock.shutdown().await;
}

/// A webhook on 127.0.0.1 answering 200; each POST's path, token header and body reported.
async fn webhook() -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<(String, Option<String>, Value)>,
) {
    let (sender, received) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let sender = sender.clone();
            async move {
                let token = headers
                    .get("x-a2a-notification-token")
                    .and_then(|t| t.to_str().ok())
                    .map(str::to_owned);
                let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let _ = sender.send((uri.path().to_owned(), token, body));
                axum::http::StatusCode::OK
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, received)
}

/// [`write_config`] with `state_db`, push on, and `push_allow` the webhook origins `allowed`.
fn write_push_config(cwd: &Path, mock: &MockServer, allowed: &[String]) {
    write_config(cwd, mock, true);
    let entries: Vec<String> = allowed
        .iter()
        .map(|origin| format!("{{origin = \"{origin}\", private = true}}"))
        .collect();
    let mut config = std::fs::read_to_string(cwd.join("skillet.toml")).unwrap();
    config.push_str(&format!(
        "\n[a2a]\npush = true\npush_allow = [{}]\n",
        entries.join(", ")
    ));
    std::fs::write(cwd.join("skillet.toml"), config).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_config_survives_a_restart_and_the_resumed_tasks_updates_reach_its_webhook() {
    let (hook, mut received) = webhook().await;
    let mock = mock().await;
    let skills = durable_skills();
    let cwd = tempfile::tempdir().unwrap();
    let kept = format!("{hook}/kept");
    let gone = format!("{hook}/gone");
    write_push_config(cwd.path(), &mock, &[kept.clone(), gone.clone()]);
    let mut first = serve(cwd.path(), skills.path()).await;
    let task_id = start_task(&first.base, "pushed").await;
    for (id, url, token) in [("c1", &kept, "tok-kept"), ("c2", &gone, "tok-gone")] {
        let config = rpc(
            &first.base,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": id, "url": format!("{url}/hook"), "token": token}),
        )
        .await;
        assert_eq!(config["id"], id, "{config}");
    }
    wait_for_turn(&mock, 3).await;
    kill9(&mut first).await;
    // What was sent before the kill does not count.
    while received.try_recv().is_ok() {}

    write_push_config(cwd.path(), &mock, std::slice::from_ref(&kept));
    let second = serve(cwd.path(), skills.path()).await;
    let notice = second.startup_lines.join("\n");
    assert!(
        notice.contains("c2") && notice.contains("no longer allows"),
        "the config under a dropped origin is dropped, saying so:\n{notice}"
    );
    let config = rpc(
        &second.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c1"}),
    )
    .await;
    assert_eq!(config["url"], format!("{kept}/hook"), "{config}");
    let dropped = rpc(
        &second.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c2"}),
    )
    .await;
    assert_eq!(dropped["code"], -32001, "{dropped}");

    // The resumed task's updates reach the kept webhook, with its token, to the end.
    let completed = tokio::time::timeout(Duration::from_secs(90), async {
        loop {
            let (path, token, body) = received.recv().await.expect("the webhook is up");
            assert_eq!(
                path, "/kept/hook",
                "only the kept config is sent to: {body}"
            );
            assert_eq!(token.as_deref(), Some("tok-kept"));
            let state = body["statusUpdate"]["status"]["state"].clone();
            if state == "TASK_STATE_COMPLETED" {
                return body;
            }
            assert_ne!(state, "TASK_STATE_FAILED", "{body}");
        }
    })
    .await
    .expect("the completed status reaches the webhook after the restart");
    assert_eq!(completed["statusUpdate"]["taskId"], task_id.as_str());
    mock.shutdown().await;
}
