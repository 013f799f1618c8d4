//! `skillet` as an MCP server, driven by the official MCP Python SDK (`mcp`,
//! `tests/python/mcp_client.py`) over stdio (`serve --mcp`) and over streamable HTTP (`/mcp` on
//! `serve --http`), against the `mock-llm` binary as an OpenAI-compatible provider (its journal
//! proves cancellation stops provider work). The script checks initialize, tools/list schemas,
//! progress per turn, structuredContent against outputSchema, a schema-breaking input, an
//! unknown tool, a failing skill, logging levels, cancellation and 50 concurrent calls, and on
//! the 2026-07-28 protocol opt-in logging (`logLevel` in `_meta`) and `subscriptions/listen`;
//! the SDK ends each HTTP session without logging a failed termination.
//!
//! The interpreter is `$SKILLET_PYTHON` or `<workspace>/.venv/bin/python` with
//! `mock-llm/tests/python/requirements.txt` installed. Without it (or without `mcp`) the test
//! fails when `CI` is set and is skipped loudly otherwise. The `Origin` check needs no Python.

// Shared with the engine's tests: the `skillet serve --http` builder.
#[path = "../../cli/tests/serve_support/mod.rs"]
mod serve_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serve_support::{ServeHttp, post_json};
use skillet_tests::{MockLlmProcess, binaries, bundled_scenarios, repo_root};
use tokio::process::Command;

fn python() -> Option<PathBuf> {
    let candidate = match std::env::var_os("SKILLET_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join(".venv/bin/python"),
    };
    let has_mcp = std::process::Command::new(&candidate)
        .args(["-c", "import mcp, jsonschema, httpx"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_mcp {
        return Some(candidate);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but no Python with the `mcp` package: set SKILLET_PYTHON or install \
         mock-llm/tests/python/requirements.txt into .venv"
    );
    eprintln!(
        "\n==== SKIPPED MCP Python SDK test: no $SKILLET_PYTHON / .venv with `mcp` ====\n\
         ==== python3 -m venv .venv && .venv/bin/pip install -r mock-llm/tests/python/requirements.txt ====\n"
    );
    None
}

/// Test skills: `slow-loop` (every turn answers invalid output after 1.5 s, up to 5 turns),
/// `always-fails` (one turn, invalid output) and `blocked-skill` (needs a tool nobody provides).
fn write_test_skills(root: &Path) -> Vec<PathBuf> {
    let skill = |name: &str, turns: u32, latency_ms: u64, extra: &str| {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Test skill {name}.\nmetadata:\n  \
                 a2a-input-schema: assets/input.schema.json\n  \
                 a2a-output-schema: assets/output.schema.json\n  \
                 a2e-max-turns: '{turns}'\n{extra}---\nTest skill {name}: answer about {{{{ text }}}}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("assets/input.schema.json"),
            r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("assets/output.schema.json"),
            r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"],"additionalProperties":false}"#,
        )
        .unwrap();
        let scenario = dir.join("mock-scenario.yaml");
        std::fs::write(
            &scenario,
            format!(
                "rules:\n  - name: {name}\n    when: {{system_contains: \"Test skill {name}:\"}}\n    \
                 reply: {{json: {{wrong: 1}}}}\n    timing: {{latency_ms: {latency_ms}}}\n"
            ),
        )
        .unwrap();
        scenario
    };
    vec![
        skill("slow-loop", 5, 1500, ""),
        skill("always-fails", 1, 0, ""),
        skill("blocked-skill", 1, 0, "  a2e-tools: '[\"no_such_tool\"]'\n"),
    ]
}

fn scenarios(test_skills: &[PathBuf]) -> Vec<PathBuf> {
    let mut all = bundled_scenarios(&["summarize", "code-review", "expense-report"]);
    all.extend(test_skills.iter().cloned());
    all
}

/// The `skillet` arguments before the command: both skill roots and the mock as provider.
fn global_args(mock: &MockLlmProcess, test_root: &Path) -> Vec<String> {
    vec![
        "--skills-dir".into(),
        repo_root().join("skills").display().to_string(),
        "--skills-dir".into(),
        test_root.display().to_string(),
        "--provider".into(),
        "openai-compatible".into(),
        "--model".into(),
        "mock-model".into(),
        "--base-url".into(),
        format!("{}/v1", mock.url),
    ]
}

async fn run_script(python: &Path, args: &[String]) {
    let script = repo_root().join("tests/python/mcp_client.py");
    let mut command = Command::new(python);
    command
        .arg(script)
        .args(args)
        .current_dir(std::env::temp_dir())
        .env_remove("SKILLET_CONFIG")
        .env_remove("SKILLET_PROVIDER")
        .env("OPENAI_API_KEY", "sk-test-not-a-secret")
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .expect("the MCP client script ends within 5 minutes")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "MCP client script failed\n--- stdout\n{stdout}\n--- stderr (tail)\n{}",
        tail(&stderr, 60)
    );
    // The SDK logs any answer to its closing `DELETE /mcp` but 200/204 as a failure.
    assert!(
        !stderr.contains("Session termination failed"),
        "the SDK could not end its session\n--- stderr (tail)\n{}",
        tail(&stderr, 60)
    );
    print!("{stdout}");
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// `skillet ... serve --http 127.0.0.1:0` as a child; returns it and `http://ADDR`.
async fn spawn_http(args: &[String]) -> (tokio::process::Child, String) {
    let server = ServeHttp::new(&binaries().0)
        .global_args(args)
        .env("OPENAI_API_KEY", "sk-test-not-a-secret")
        .spawn()
        .await;
    (server.child, server.base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_python_sdk_drives_skillet_over_stdio_and_streamable_http() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let test_skills = write_test_skills(root.path());
    let skills = repo_root().join("skills").display().to_string();

    // stdio: the script spawns `skillet ... serve --mcp`.
    let mock = MockLlmProcess::start(&scenarios(&test_skills))
        .await
        .expect("mock-llm starts");
    let mut args = vec![
        "--transport".to_owned(),
        "stdio".into(),
        "--skillet".into(),
        binaries().0.display().to_string(),
        "--skills".into(),
        skills.clone(),
        "--mock".into(),
        mock.url.clone(),
    ];
    for arg in global_args(&mock, root.path())
        .into_iter()
        .chain(["serve".into(), "--mcp".into()])
    {
        args.push(format!("--serve-arg={arg}"));
    }
    run_script(&python, &args).await;
    // MCP has no notification for model text, so calls (with and without a progressToken)
    // ask the model for whole answers: a stream nobody reads would only cost.
    let journal = mock.journal().await.expect("the mock's journal");
    let chats: Vec<&serde_json::Value> = journal
        .iter()
        .filter(|entry| entry["endpoint"] == "openai.chat")
        .collect();
    assert!(!chats.is_empty(), "{journal:?}");
    let streamed = chats
        .iter()
        .filter(|entry| entry["body"]["stream"] == true)
        .count();
    assert_eq!(streamed, 0, "of {} model requests", chats.len());
    mock.stop().await;

    // streamable HTTP: one `serve --http` process also serving /a2e.
    let mock = MockLlmProcess::start(&scenarios(&test_skills))
        .await
        .expect("mock-llm starts");
    let (mut server, base) = spawn_http(&global_args(&mock, root.path())).await;
    let args = vec![
        "--transport".to_owned(),
        "http".into(),
        "--url".into(),
        format!("{base}/mcp"),
        "--skills".into(),
        skills,
        "--mock".into(),
        mock.url.clone(),
    ];
    run_script(&python, &args).await;
    let a2e = post_json(
        &reqwest::Client::new(),
        format!("{base}/a2e"),
        r#"{"type":"skill/discover/req","id":"d1"}"#,
    )
    .await;
    assert_eq!(
        a2e["type"], "skill/discover/resp",
        "the same process still serves A2E"
    );
    let _ = server.start_kill();
    mock.stop().await;
}

#[tokio::test]
async fn mcp_over_http_refuses_foreign_origins_and_oversized_bodies() {
    let root = tempfile::tempdir().unwrap();
    let test_skills = write_test_skills(root.path());
    let mock = MockLlmProcess::start(&scenarios(&test_skills))
        .await
        .expect("mock-llm starts");
    let (mut server, base) = spawn_http(&global_args(&mock, root.path())).await;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}
    })
    .to_string();
    let client = reqwest::Client::new();
    let post = |origin: Option<&str>, body: String| {
        let mut request = client
            .post(format!("{base}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let foreign = post(Some("http://evil.example"), initialize.clone())
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403, "a foreign Origin is refused");
    let local = post(Some(&base), initialize.clone()).await.unwrap();
    assert_eq!(local.status(), 200, "a loopback Origin is accepted");
    assert!(
        local.headers().contains_key("mcp-session-id"),
        "a session id is issued"
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2 * 1024 * 1024)
    );
    let oversized = post(None, huge).await.unwrap();
    assert_eq!(
        oversized.status(),
        413,
        "a body over max_message_bytes is refused"
    );
    let _ = server.start_kill();
    mock.stop().await;
}
