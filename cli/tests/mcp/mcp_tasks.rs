//! The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the real
//! `skillet serve --http` (issue 53 item 3), driven with raw JSON-RPC:
//! - a client that declared the extension gets a skill call as a task at once; `tasks/get`
//!   shows it `working`, then `completed` with the call's result inlined — on a 2026-07-28
//!   request (the capability in its `_meta`) and on an `initialize`-era session (declared at
//!   `initialize`);
//! - `tasks/cancel` acks, the task reads `cancelled` and its run stops (its concurrency slot
//!   frees at once);
//! - without the extension a call is answered as before and `tasks/*` is `-32021`; the methods
//!   the extension dropped (`tasks/result`, `tasks/list`) are `-32601`;
//! - under `[auth]` another identity's task is not found;
//! - with `[server] state_db` a finished task answers `tasks/get` again after a restart (its
//!   owner only), and a task whose call was running when the server was killed reads `failed`
//!   saying why, never `working`.

use crate::auth_support;
use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use auth_support::{AuthServer, Jwks, KEY_A, KEY_ONE_AT_A_TIME, auth_config};
use cli_support::{SKILLET, sigterm, write_skill};
use serve_support::{HttpServer, ServeHttp, jsonrpc_messages as messages};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `serve --http` on `skills` with `config` as its `skillet.toml`.
async fn serve(skills: &Path, cwd: &Path, config: &str) -> HttpServer {
    std::fs::write(cwd.join("skillet.toml"), config).unwrap();
    ServeHttp::new(SKILLET)
        .cwd(cwd)
        .skills_dir(skills)
        .spawn()
        .await
}

/// A 2026-07-28 client; `tasks` says whether its requests declare the extension.
struct Modern<'a> {
    server: &'a HttpServer,
    tasks: bool,
    bearer: Option<&'a str>,
}

impl Modern<'_> {
    /// The answer (`result` or `error` message) to `method` with `params`.
    async fn rpc(&self, method: &str, mut params: Value) -> Value {
        let capabilities = if self.tasks {
            json!({"extensions": {TASKS: {}}})
        } else {
            json!({})
        };
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "mcp-tasks", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
        let mut request = reqwest::Client::new()
            .post(format!("{}/mcp", self.server.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", method)
            .timeout(Duration::from_secs(30))
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
            );
        // The revision's `Mcp-Name`: a tool's name, or the task's id.
        if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
            request = request.header("mcp-name", name);
        }
        if let Some(token) = self.bearer {
            request = request.bearer_auth(token);
        }
        let text = request.send().await.unwrap().text().await.unwrap();
        messages(&text)
            .into_iter()
            .find(|m| m["id"] == 1)
            .unwrap_or_else(|| panic!("no answer to {method}: {text}"))
    }

    async fn call(&self, skill: &str) -> Value {
        self.rpc(
            "tools/call",
            json!({"name": skill, "arguments": {"text": "hi"}}),
        )
        .await
    }

    async fn get(&self, task: &str) -> Value {
        self.rpc("tasks/get", json!({"taskId": task})).await
    }
}

/// Polls `get` until the task's status is terminal (at most 20 s).
async fn settled<F, Fut>(get: F) -> Value
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let start = Instant::now();
    loop {
        let answer = get().await;
        let status = answer["result"]["status"].as_str().unwrap_or_default();
        if ["completed", "failed", "cancelled"].contains(&status) {
            return answer["result"].clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the task never settled: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_2026_skill_call_declaring_tasks_answers_at_once_with_a_task_whose_result_tasks_get_inlines()
 {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "slow", 1500, "{json: {echo: \"hello\"}}");
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), "").await;
    let client = Modern {
        server: &server,
        tasks: true,
        bearer: None,
    };

    let discovered = client.rpc("server/discover", json!({})).await;
    assert!(
        discovered["result"]["capabilities"]["extensions"][TASKS].is_object(),
        "the extension is advertised: {discovered}"
    );

    let started = Instant::now();
    let created = client.call("slow").await;
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "answered before the skill's model replied"
    );
    let task = &created["result"];
    assert_eq!(task["resultType"], "task", "{created}");
    assert_eq!(task["status"], "working");
    assert!(task["createdAt"].as_str().unwrap().starts_with("20"));
    let id = task["taskId"].as_str().unwrap().to_owned();

    let working = client.get(&id).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert!(working["result"].get("result").is_none());

    let done = settled(|| client.get(&id)).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["echo"], "hello");
    assert_eq!(done["result"]["isError"], false);
    assert!(done["ttlMs"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn tasks_cancel_stops_the_running_skill_and_the_task_reads_cancelled() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "stuck", 60_000, "{json: {echo: \"late\"}}");
    write_skill(skills.path(), "quick", 0, "{json: {echo: \"quick\"}}");
    // Each skill's mock rule matches its own instructions only.
    for file in ["SKILL.md", "mock-scenario.yaml"] {
        let path = skills.path().join("quick").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("Echo this text back", "Repeat quickly")).unwrap();
    }
    let cwd = tempfile::tempdir().unwrap();
    // One call at a time: the stuck run holds the only slot until it stops.
    let server = serve(
        skills.path(),
        cwd.path(),
        "[server]\nmax_concurrent_calls = 1\n",
    )
    .await;
    let client = Modern {
        server: &server,
        tasks: true,
        bearer: None,
    };
    let plain = Modern {
        server: &server,
        tasks: false,
        bearer: None,
    };
    let id = client.call("stuck").await["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let running = client.get(&id).await;
    assert_eq!(running["result"]["status"], "working", "{running}");
    let busy = plain.call("quick").await;
    assert_eq!(busy["result"]["isError"], true, "the slot is taken: {busy}");

    let ack = client.rpc("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let cancelled = client.get(&id).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");

    // The run stopped: its slot is free for the next call at once, not after 60 s.
    let start = Instant::now();
    loop {
        let next = plain.call("quick").await;
        if next["result"]["isError"] == false {
            assert_eq!(next["result"]["structuredContent"]["echo"], "quick");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the cancelled run still holds its slot: {next}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // It stays cancelled, and cancelling again is the same ack.
    assert_eq!(client.get(&id).await["result"]["status"], "cancelled");
    let again = client.rpc("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(again["result"], json!({"resultType": "complete"}));
}

#[tokio::test]
async fn without_the_extension_a_call_is_plain_and_tasks_methods_are_refused() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "quick", 0, "{json: {echo: \"quick\"}}");
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), "").await;
    let plain = Modern {
        server: &server,
        tasks: false,
        bearer: None,
    };
    let answer = plain.call("quick").await;
    assert!(answer["result"].get("taskId").is_none(), "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["echo"], "quick");
    let refused = plain.get("any").await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");

    let client = Modern {
        server: &server,
        tasks: true,
        bearer: None,
    };
    let unknown = client.get("no-such-task").await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    for dropped in ["tasks/result", "tasks/list"] {
        let answer = client.rpc(dropped, json!({"taskId": "x"})).await;
        assert_eq!(answer["error"]["code"], -32601, "{dropped}: {answer}");
    }
}

#[tokio::test]
async fn an_initialize_session_that_declared_tasks_gets_its_call_as_a_task() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "slow", 500, "{json: {echo: \"hello\"}}");
    let cwd = tempfile::tempdir().unwrap();
    let server = serve(skills.path(), cwd.path(), "").await;
    let url = format!("{}/mcp", server.base);
    let http = reqwest::Client::new();
    let init = http
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LEGACY,
                       "capabilities": {"extensions": {TASKS: {}}},
                       "clientInfo": {"name": "legacy-tasks", "version": "0"}}
        }))
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let init = messages(&init.text().await.unwrap());
    assert!(
        init[0]["result"]["capabilities"]["extensions"][TASKS].is_object(),
        "{init:?}"
    );
    let rpc = |id: u64, method: &str, params: Value| {
        let request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", LEGACY)
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        async move {
            let text = request.send().await.unwrap().text().await.unwrap();
            messages(&text)
                .into_iter()
                .find(|m| m["id"] == id)
                .unwrap_or(Value::Null)
        }
    };
    rpc(99, "notifications/initialized", json!({})).await;
    let created = rpc(
        1,
        "tools/call",
        json!({"name": "slow", "arguments": {"text": "hi"}}),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let done = settled(|| rpc(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["echo"], "hello");
}

#[tokio::test]
async fn under_auth_another_identitys_task_is_not_found_and_cannot_be_cancelled() {
    let jwks = Jwks::serve(vec![]).await;
    let auth = AuthServer::start(&jwks.url, 60_000).await;
    let owner = Modern {
        server: &auth.server,
        tasks: true,
        bearer: Some(KEY_A),
    };
    let other = Modern {
        server: &auth.server,
        tasks: true,
        bearer: Some(KEY_ONE_AT_A_TIME),
    };
    let created = owner.call("echo-a").await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let theirs = other.get(&id).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    let cancel = other.rpc("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancel["error"]["code"], -32602, "{cancel}");
    assert_eq!(owner.get(&id).await["result"]["status"], "working");
    let ack = owner.rpc("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete");
}

#[tokio::test]
async fn over_stdio_a_session_that_declared_tasks_gets_its_call_as_a_task_and_can_cancel_it() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "stuck", 60_000, "{json: {echo: \"late\"}}");
    let cwd = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(SKILLET);
    command
        .current_dir(cwd.path())
        .arg("--skills-dir")
        .arg(skills.path())
        .args(["serve", "--mcp"]);
    let mut server = cli_support::StdioChild::from_command(command);
    let line = |id: u64, method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    server
        .send(&line(
            0,
            "initialize",
            json!({"protocolVersion": LEGACY,
                   "capabilities": {"extensions": {TASKS: {}}},
                   "clientInfo": {"name": "stdio-tasks", "version": "0"}}),
        ))
        .await;
    let init = server.recv().await.expect("initialize answered");
    assert!(init["result"]["capabilities"]["extensions"][TASKS].is_object());
    server
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
        .await;
    let mut answer = async |id: u64, method: &str, params: Value| {
        server.send(&line(id, method, params)).await;
        loop {
            let message = server.recv().await.expect("an answer");
            if message["id"] == id {
                return message;
            }
        }
    };
    let created = answer(
        1,
        "tools/call",
        json!({"name": "stuck", "arguments": {"text": "hi"}}),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let working = answer(2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    let ack = answer(3, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let cancelled = answer(4, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
}

/// `serve --http` on `skills` in `cwd`, whose `skillet.toml` is already written.
async fn serve_in(skills: &Path, cwd: &Path) -> HttpServer {
    ServeHttp::new(SKILLET)
        .cwd(cwd)
        .skills_dir(skills)
        .spawn()
        .await
}

#[tokio::test]
async fn with_state_db_a_finished_task_answers_its_owner_after_a_restart_and_no_one_else() {
    let jwks = Jwks::serve(vec![]).await;
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        auth_config(&jwks.url, "\n[server]\nstate_db = \"state/tasks.db\"\n"),
    )
    .unwrap();
    let mut first = serve_in(skills.path(), cwd.path()).await;
    let owner = Modern {
        server: &first,
        tasks: true,
        bearer: Some(KEY_A),
    };
    let created = owner.call("echo-a").await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let before = settled(|| owner.get(&id)).await;
    assert_eq!(before["status"], "completed", "{before}");
    sigterm(first.child.id().unwrap());
    assert!(first.child.wait().await.unwrap().success());

    let second = serve_in(skills.path(), cwd.path()).await;
    let owner = Modern {
        server: &second,
        tasks: true,
        bearer: Some(KEY_A),
    };
    let after = owner.get(&id).await;
    assert_eq!(after["result"]["status"], "completed", "{after}");
    assert_eq!(after["result"]["result"]["structuredContent"]["echo"], "a");
    assert_eq!(after["result"]["result"], before["result"]);
    assert_eq!(after["result"]["createdAt"], before["createdAt"]);
    assert!(after["result"]["ttlMs"].as_u64().unwrap() > 0, "{after}");
    let other = Modern {
        server: &second,
        tasks: true,
        bearer: Some(KEY_ONE_AT_A_TIME),
    };
    let theirs = other.get(&id).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
}

#[tokio::test]
async fn with_state_db_a_task_running_when_the_server_was_killed_reads_failed_saying_why() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "stuck", 60_000, "{json: {echo: \"late\"}}");
    let cwd = tempfile::tempdir().unwrap();
    let config = "[server]\nstate_db = \"state/tasks.db\"\n";
    let mut first = serve(skills.path(), cwd.path(), config).await;
    let client = Modern {
        server: &first,
        tasks: true,
        bearer: None,
    };
    let id = client.call("stuck").await["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    assert_eq!(client.get(&id).await["result"]["status"], "working");
    first.child.start_kill().unwrap();
    first.child.wait().await.unwrap();
    // The file keeps push tokens and what callers sent: its owner's only, its WAL too.
    for file in ["state/tasks.db", "state/tasks.db-wal"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(cwd.path().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file}: {mode:o}");
    }

    let second = serve_in(skills.path(), cwd.path()).await;
    let client = Modern {
        server: &second,
        tasks: true,
        bearer: None,
    };
    let after = client.get(&id).await;
    assert_eq!(after["result"]["status"], "failed", "{after}");
    let message = after["result"]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("server stopped") && message.contains("call the tool again"),
        "{after}"
    );
    assert!(
        second
            .startup_lines
            .iter()
            .any(|line| line.contains("MCP tasks are durable") && line.contains("1 failed")),
        "{:?}",
        second.startup_lines
    );
}
