//! `skillet` serving skills as MCP prompts, completions, `skill://` resources and the skills
//! extension (SEP-2640), driven by the official MCP Python SDK (`mcp`,
//! `tests/python/mcp_skill_content.py`) over stdio (`serve --mcp`) and streamable HTTP (`/mcp`),
//! each on a 2025-11-25 session and on the 2026-07-28 protocol. The script checks prompt
//! arguments and rendering, completion, resource listing and reads (text and binary), every
//! refusal's code, and the extension's frontmatter and SHA-256 manifest against the files.
//!
//! The interpreter is `$SKILLET_PYTHON` or `<workspace>/.venv/bin/python` with
//! `mock-llm/tests/python/requirements.txt`; without it the test fails under `CI` and is skipped
//! loudly otherwise. Nothing here calls a model; the mock only satisfies the provider setup.

#[path = "../../cli/tests/serve_support/mod.rs"]
mod serve_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serve_support::ServeHttp;
use skillet_tests::{MockLlmProcess, binaries, bundled_scenarios, repo_root};
use tokio::process::Command;

fn python() -> Option<PathBuf> {
    let candidate = match std::env::var_os("SKILLET_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join(".venv/bin/python"),
    };
    let has_mcp = std::process::Command::new(&candidate)
        .args(["-c", "import mcp, pydantic"])
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
        "\n==== SKIPPED MCP skill-content test: no $SKILLET_PYTHON / .venv with `mcp` ====\n"
    );
    None
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// `tone-rewrite` (a strict template with an enum argument, files beside it, a binary asset,
/// things that must not be served), `plain-notes` (a plain Agent Skill without an input
/// schema) and `blocked-skill` (needs a tool nobody provides, so it is offered nowhere).
fn write_test_skills(root: &Path) {
    let dir = root.join("tone-rewrite");
    write(
        &dir.join("SKILL.md"),
        b"---\nname: tone-rewrite\ndescription: Rewrite a text in another tone.\nlicense: MIT\n\
          metadata:\n  a2a-input-schema: assets/input.schema.json\n  \
          a2a-output-schema: assets/output.schema.json\n---\n\
          Rewrite `{{ text }}` in a {{ tone }} tone. See reference.md.\n",
    );
    write(
        &dir.join("assets/input.schema.json"),
        br#"{"type":"object","properties":{
            "text":{"type":"string","description":"The text to rewrite."},
            "tone":{"enum":["formal","casual","pirate"],"description":"The tone."},
            "max_words":{"type":"integer","minimum":1}},
            "required":["text","tone"],"additionalProperties":false}"#,
    );
    write(
        &dir.join("assets/output.schema.json"),
        br#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
    );
    write(
        &dir.join("reference.md"),
        "Tones: formal, casual, pirate — ☠.\n".as_bytes(),
    );
    write(
        &dir.join("assets/logo.png"),
        &[0x89, b'P', b'N', b'G', 0, 1, 2, 0xff, 0xfe],
    );
    write(
        &dir.join("evals/evals.json"),
        b"{\"expected\": \"secret answers\"}",
    );
    write(&dir.join("mock-scenario.yaml"), b"rules: []\n");
    write(&dir.join(".secret"), b"hidden");
    write(&root.join("outside.txt"), b"outside the skill");
    std::os::unix::fs::symlink(root.join("outside.txt"), dir.join("leak")).unwrap();

    write(
        &root.join("plain-notes/SKILL.md"),
        b"---\nname: plain-notes\ndescription: Take notes of what you are told.\n---\n\
          Take notes of the request, as a bulleted list.\n",
    );
    write(
        &root.join("blocked-skill/SKILL.md"),
        b"---\nname: blocked-skill\ndescription: Needs a missing tool.\nmetadata:\n  \
          a2e-tools: '[\"no_such_tool\"]'\n---\nNever offered.\n",
    );
}

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
    let script = repo_root().join("tests/python/mcp_skill_content.py");
    let mut command = Command::new(python);
    command
        .arg(script)
        .args(args)
        .current_dir(std::env::temp_dir())
        .env_remove("SKILLET_CONFIG")
        .env_remove("SKILLET_PROVIDER")
        .env("OPENAI_API_KEY", "sk-test-not-a-secret")
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("the MCP client script ends within 3 minutes")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(60).collect();
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "MCP skill-content script failed\n--- stdout\n{stdout}\n--- stderr (tail)\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    print!("{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_python_sdk_reads_prompts_resources_and_skills_over_stdio_and_http() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    write_test_skills(root.path());
    let mock = MockLlmProcess::start(&bundled_scenarios(&["summarize"]))
        .await
        .expect("mock-llm starts");
    let test_skills = root.path().display().to_string();

    let mut args = vec![
        "--transport".to_owned(),
        "stdio".into(),
        "--skillet".into(),
        binaries().0.display().to_string(),
        "--test-skills".into(),
        test_skills.clone(),
    ];
    for arg in global_args(&mock, root.path())
        .into_iter()
        .chain(["serve".into(), "--mcp".into()])
    {
        args.push(format!("--serve-arg={arg}"));
    }
    run_script(&python, &args).await;

    let server = ServeHttp::new(&binaries().0)
        .global_args(global_args(&mock, root.path()))
        .env("OPENAI_API_KEY", "sk-test-not-a-secret")
        .spawn()
        .await;
    let (mut child, base) = (server.child, server.base);
    let args = vec![
        "--transport".to_owned(),
        "http".into(),
        "--url".into(),
        format!("{base}/mcp"),
        "--test-skills".into(),
        test_skills,
    ];
    run_script(&python, &args).await;
    let _ = child.start_kill();
    mock.stop().await;
}

/// Raw JSON-RPC lines to `skillet serve --mcp`: params of the wrong shape for every new method
/// are `-32602`, each request is answered exactly once, and the session goes on (a `ping`
/// after them is answered).
#[tokio::test]
async fn malformed_prompt_resource_and_skill_requests_are_invalid_params_answered_once() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let root = tempfile::tempdir().unwrap();
    write_test_skills(root.path());
    let mock = MockLlmProcess::start(&bundled_scenarios(&["summarize"]))
        .await
        .expect("mock-llm starts");
    let mut child = Command::new(&binaries().0)
        .args(global_args(&mock, root.path()))
        .args(["serve", "--mcp"])
        .env("OPENAI_API_KEY", "sk-test-not-a-secret")
        .env_remove("SKILLET_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |message: serde_json::Value| {
        input
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let malformed = [
        (
            "prompts/get",
            serde_json::json!({"name": "tone-rewrite", "arguments": ["text"]}),
        ),
        ("prompts/get", serde_json::json!({"arguments": {}})),
        ("resources/read", serde_json::json!({})),
        ("resources/read", serde_json::json!({"uri": 7})),
        ("skills/get", serde_json::json!({})),
        (
            "skills/get",
            serde_json::json!({"uri": "skill://tone-rewrite/reference.md"}),
        ),
        (
            "completion/complete",
            serde_json::json!({"argument": {"name": "tone", "value": ""}}),
        ),
        (
            "resources/list",
            serde_json::json!({"cursor": "not-a-cursor"}),
        ),
    ];
    for (id, (method, params)) in malformed.iter().enumerate() {
        send(
            serde_json::json!({"jsonrpc": "2.0", "id": id + 1, "method": method, "params": params}),
        )
        .await;
    }
    send(serde_json::json!({"jsonrpc": "2.0", "id": 99, "method": "ping"})).await;
    let mut answers = Vec::new();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
            if answer.get("id").is_none() {
                continue; // a notification
            }
            answers.push(answer);
            // Reads and lists run off the session's thread, so answers may come in any order.
            if answers.len() == malformed.len() + 2 {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("every request is answered");
    answers.sort_by_key(|a| a["id"].as_u64());
    let ids: Vec<&serde_json::Value> = answers.iter().map(|a| &a["id"]).collect();
    let mut expected: Vec<serde_json::Value> = vec![serde_json::json!(0)];
    expected.extend((1..=malformed.len()).map(|id| serde_json::json!(id)));
    expected.push(serde_json::json!(99));
    assert_eq!(
        ids,
        expected.iter().collect::<Vec<_>>(),
        "each answered once: {answers:?}"
    );
    for (answer, (method, params)) in answers[1..=malformed.len()].iter().zip(&malformed) {
        assert_eq!(
            answer["error"]["code"], -32602,
            "{method} {params}: {answer}"
        );
    }
    let _ = child.start_kill();
    mock.stop().await;
}
