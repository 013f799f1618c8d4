//! A fallback chain from `skillet.toml`, driven through the real `skillet` binary against two
//! mock-llm servers on ephemeral ports: the default provider answers HTTP 500 until its retries
//! are spent, the turn goes to its `fallback`, and the printed `skill/call/resp` names the
//! provider that answered.

use std::process::Stdio;
use std::time::Duration;

use mock_llm::{Fault, MockConfig, MockServer, Scenario};
use serde_json::Value;

const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");

async fn mock(text: &str) -> MockServer {
    let yaml =
        format!("rules:\n  - reply: {{ text: \"{text}\", usage: {{ input: 7, output: 3 }} }}\n");
    let scenario = Scenario::from_yaml_str(&yaml).unwrap();
    MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .expect("mock-llm starts")
}

#[tokio::test]
async fn the_default_provider_failing_hands_the_turn_to_its_configured_fallback() {
    let primary = mock("from primary").await;
    let backup = mock("from backup").await;
    primary.push_fault(Fault::status(500).times(100));
    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join("say-hi");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: say-hi\ndescription: Says hi.\n---\nSay hi.\n",
    )
    .unwrap();
    let config = root.path().join("skillet.toml");
    std::fs::write(
        &config,
        format!(
            r#"default_provider = "primary"

[providers.primary]
kind = "openai-compatible"
model = "primary-model"
base_url = "{}/v1"
fallback = ["backup"]

[providers.primary.options]
max_attempts = 2
initial_backoff_ms = 1

[providers.backup]
kind = "ollama"
model = "backup-model"
base_url = "{}"
"#,
            primary.base_url(),
            backup.base_url()
        ),
    )
    .unwrap();
    let mut command = tokio::process::Command::new(SKILLET);
    command
        .current_dir(root.path())
        .arg("run")
        .arg(&skill)
        .arg("--config")
        .arg(&config)
        .args(["--args", r#"{"prompt": "hi"}"#, "--json"])
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("run ends within 60 s")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let response: Value = serde_json::from_str(stdout.trim()).expect("one JSON response");
    let data = &response["data"];
    assert_eq!(data["success"], true, "{response}");
    assert_eq!(data["data"], "from backup", "{response}");
    assert_eq!(
        data["usage"]["turns"][0]["provider"], "backup",
        "{response}"
    );
    assert_eq!(
        data["usage"]["turns"][0]["model"], "backup-model",
        "{response}"
    );
    let primary_calls = primary
        .journal()
        .into_iter()
        .filter(|e| e.endpoint.ends_with("chat"))
        .count();
    assert_eq!(primary_calls, 2, "the primary's two attempts came first");
    primary.shutdown().await;
    backup.shutdown().await;
}
