//! Hot reload on the real `skillet serve` (`--watch`, `[skills] watch = true`):
//! - the official `mcp` client, connected over stdio and over streamable HTTP, edits a skill on
//!   disk and hears `tools/list_changed` and `resources/updated` (for its subscription), sees
//!   the new description in `tools/list`, sees an added skill, and sees a broken edit take its
//!   skill out of `tools/list` while the others still run (`python/mcp_reload_client.py`); its
//!   subscriptions to unknown URIs are refused with their codes;
//! - A2E discover reports a broken skill `Blocked` with `load_failed` (its last version kept),
//!   and the A2A Agent Card lists an added skill (read per request), which `SendMessage` runs
//!   (the A2A skill index is rebuilt on each reload);
//! - raw `resources/subscribe` requests to an unknown skill, a missing file and a non-skill URI
//!   are each answered once with their error code.
//!
//! Waiting for a reload is waiting for its observable outcome (a notification, a discover
//! answer), bounded only so a broken build fails instead of hanging. Python is found as in
//! `approvals`; without it the SDK tests fail under `CI` and are skipped loudly otherwise.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use cli_support::*;
use serve_support::{HttpServer, ServeHttp, get_json, post_json};

/// The skills root every test starts from: the echo skills `alpha` and `beta`.
fn skills_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for name in ["alpha", "beta"] {
        write_skill(root.path(), name, 0, "{json: {echo: \"hello\"}}");
    }
    root
}

/// `serve --http` on `skills` with `[skills] watch = true`.
async fn watched_server(skills: &Path, cwd: &Path) -> HttpServer {
    std::fs::write(cwd.join("skillet.toml"), "[skills]\nwatch = true\n").unwrap();
    ServeHttp::new(SKILLET)
        .cwd(cwd)
        .global_args(["--config", &cwd.join("skillet.toml").display().to_string()])
        .skills_dir(skills)
        .spawn()
        .await
}

async fn run_script(python: &Path, args: &[String]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_reload_client.py");
    let run = tokio::process::Command::new(python)
        .arg(&script)
        .args(args)
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("SKILLET_CONFIG")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the client script ends within 300 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "{} failed\nstdout:\n{stdout}\nstderr:\n{stderr}",
        script.display()
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_sdk_hears_skills_edited_on_disk_over_stdio() {
    let Some(python) = python_with("mcp") else {
        return;
    };
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("skillet.toml"), "").unwrap();
    let config = cwd.path().join("skillet.toml").display().to_string();
    let root = skills.path().display().to_string();
    let mut args = vec![
        "--skills".to_owned(),
        root.clone(),
        "--transport".into(),
        "stdio".into(),
        "--skillet".into(),
        SKILLET.into(),
    ];
    for arg in [
        "--config",
        &config,
        "--skills-dir",
        &root,
        "serve",
        "--mcp",
        "--watch",
    ] {
        args.push(format!("--serve-arg={arg}"));
    }
    let stdout = run_script(&python, &args).await;
    for check in ["subscribe:", "edit:", "add:", "break:", "fix:"] {
        assert!(
            stdout.contains(&format!("ok: {check}")),
            "{check}\n{stdout}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_sdk_hears_skills_edited_on_disk_over_http_and_the_card_follows() {
    let Some(python) = python_with("mcp") else {
        return;
    };
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = watched_server(skills.path(), cwd.path()).await;
    let args = vec![
        "--skills".to_owned(),
        skills.path().display().to_string(),
        "--transport".into(),
        "http".into(),
        "--url".into(),
        format!("{}/mcp", server.base),
    ];
    let stdout = run_script(&python, &args).await;
    assert!(stdout.contains("ok: break:"), "{stdout}");
    // The script added `gamma`: the Agent Card, built per request, lists it.
    let card = get_json(
        &reqwest::Client::new(),
        format!("{}/.well-known/agent-card.json", server.base),
    )
    .await;
    let ids: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert!(ids.contains(&"gamma"), "{card}");
    // And A2A runs it: the adapter's skill index was rebuilt on the reload.
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "metadata": {"skillId": "gamma"},
                    "parts": [{"text": "hi"}]}}});
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/a2a", server.base))
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .body(send.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
}

/// Discover over A2E, until `done` holds of the skills (each reload is announced by its
/// outcome, so this is a bounded wait for it, not a timing assertion).
async fn discover_until(server: &HttpServer, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let client = reqwest::Client::new();
    let request = json!({"type": "skill/discover/req", "id": "d1"}).to_string();
    for _ in 0..600 {
        let answer = post_json(&client, format!("{}/a2e", server.base), request.clone()).await;
        let skills = answer["skills"].as_array().cloned().unwrap_or_default();
        if done(&skills) {
            return skills;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the reload never showed in discover");
}

fn skill<'a>(skills: &'a [Value], name: &str) -> Option<&'a Value> {
    skills.iter().find(|s| s["name"] == name)
}

#[tokio::test]
async fn a_broken_edit_is_reported_blocked_with_its_last_version_and_the_others_run() {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = watched_server(skills.path(), cwd.path()).await;
    std::fs::write(
        skills.path().join("alpha/SKILL.md"),
        "---\nname: alpha\n---\nNo description.\n",
    )
    .unwrap();
    let found = discover_until(&server, |skills| {
        skill(skills, "alpha").is_some_and(|s| s["status"] == "Blocked")
    })
    .await;
    let alpha = skill(&found, "alpha").unwrap();
    assert_eq!(alpha["description"], "Echoes its text back (test skill).");
    let why = alpha["metadata"]["load_failed"].as_str().unwrap();
    assert!(why.contains("description"), "{why}");
    assert!(
        alpha["metadata"]["blocked_reason"]
            .as_str()
            .unwrap()
            .starts_with("load: "),
        "{alpha}"
    );
    assert_eq!(skill(&found, "beta").unwrap()["status"], "Published");
    let call = json!({"type": "skill/call/req", "id": "c1", "name": "beta",
                      "arguments": {"text": "hi"}});
    let answer = post_json(
        &reqwest::Client::new(),
        format!("{}/a2e", server.base),
        call.to_string(),
    )
    .await;
    assert_eq!(answer["data"]["data"]["echo"], "hello", "{answer}");
    // Removing a skill's folder removes the skill.
    std::fs::remove_dir_all(skills.path().join("beta")).unwrap();
    discover_until(&server, |skills| skill(skills, "beta").is_none()).await;
}

/// One JSON-RPC message to the `/mcp` of `server` in session `session` (None: initialize);
/// the answer's JSON (the first SSE `data:` line or the JSON body) and its session id.
async fn mcp_post(server: &HttpServer, session: Option<&str>, body: Value) -> (Value, String) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", server.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.unwrap();
    let json = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .unwrap_or_else(|| serde_json::from_str(&text).unwrap_or(Value::Null));
    (json, id)
}

#[tokio::test]
async fn raw_subscriptions_to_what_is_not_a_skill_file_are_each_answered_once_with_their_code() {
    let skills = skills_root();
    let cwd = tempfile::tempdir().unwrap();
    let server = watched_server(skills.path(), cwd.path()).await;
    let (init, session) = mcp_post(
        &server,
        None,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let resources = &init["result"]["capabilities"]["resources"];
    assert_eq!(resources["subscribe"], true, "{init}");
    assert_eq!(resources["listChanged"], true, "{init}");
    mcp_post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    for (id, uri, code) in [
        (1, "skill://nope/SKILL.md", -32002),
        (2, "skill://alpha/missing.md", -32002),
        (3, "skill://alpha/../beta/SKILL.md", -32602),
        (4, "https://example.com/x", -32602),
    ] {
        let (answer, _) = mcp_post(
            &server,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe",
                   "params": {"uri": uri}}),
        )
        .await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], code, "{uri}: {answer}");
    }
    let (answer, _) = mcp_post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe",
               "params": {"uri": "skill://alpha/SKILL.md"}}),
    )
    .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    let (answer, _) = mcp_post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/unsubscribe",
               "params": {"uri": "skill://never/subscribed.md"}}),
    )
    .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
}

/// The "reloaded ..." notices the server printed so far.
fn reload_notices(server: &HttpServer) -> Vec<String> {
    let lines = server.later_lines.lock().unwrap();
    lines
        .iter()
        .filter(|line| line.contains("reloaded "))
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_relative_skills_dir_is_watched_and_one_edit_reloads_once_naming_only_its_skill() {
    // The default layout: `./skills` beside the config, named relatively.
    let cwd = tempfile::tempdir().unwrap();
    let skills = cwd.path().join("skills");
    std::fs::create_dir(&skills).unwrap();
    for name in ["alpha", "beta"] {
        write_skill(&skills, name, 0, "{json: {echo: \"hello\"}}");
    }
    std::fs::write(cwd.path().join("skillet.toml"), "[skills]\nwatch = true\n").unwrap();
    let server = ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .global_args(["--config", "skillet.toml"])
        .skills_dir("skills")
        .spawn()
        .await;
    // Idle: the reload's own reads (and nothing else) happen; no reload may follow.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(reload_notices(&server), Vec::<String>::new(), "idle watch");
    let skill_md = skills.join("alpha/SKILL.md");
    let text = std::fs::read_to_string(&skill_md).unwrap();
    std::fs::write(
        &skill_md,
        text.replace("Echoes its text back", "Echoes its text back, edited"),
    )
    .unwrap();
    discover_until(&server, |skills| {
        skill(skills, "alpha").is_some_and(|s| {
            s["description"]
                .as_str()
                .is_some_and(|d| d.contains("edited"))
        })
    })
    .await;
    // Quiet again for well past the debounce: exactly one reload, naming alpha alone.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let notices = reload_notices(&server);
    assert_eq!(notices.len(), 1, "{notices:#?}");
    assert!(notices[0].contains("changed [alpha]"), "{notices:#?}");
}
