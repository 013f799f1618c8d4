//! Record and replay around a real `skillet run`: the bundled `expense-report` skill (a
//! calculator round trip, then validated JSON) runs once through `mock-llm record` in front of a
//! mock-llm serving the skill's own scenario, and once on a plain mock-llm serving only the
//! recording. Both runs give the same result, and the provider's API key (a canary) is not in
//! the file although the upstream received it.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mock_llm::{MockConfig, MockServer, RecordConfig, Recorder, Scenario};
use serde_json::Value;

const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");
const CANARY: &str = "sk-record-canary-91b2e7";

fn skills() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills")
}

/// `skillet run expense-report --json` against an OpenAI-compatible server at `base`; the
/// parsed `skill/call/resp`.
async fn run_expense_report(dir: &Path, base: &str) -> Value {
    let config = dir.join("skillet.toml");
    std::fs::write(
        &config,
        format!(
            "default_provider = \"rec\"\n\n[providers.rec]\nkind = \"openai-compatible\"\n\
             model = \"recorded-model\"\nbase_url = \"{base}/v1\"\n\
             api_key_env = \"RECORD_TEST_API_KEY\"\n"
        ),
    )
    .unwrap();
    let args = skills().join("expense-report/examples/basic.json");
    let mut command = tokio::process::Command::new(SKILLET);
    command
        .current_dir(dir)
        .arg("--config")
        .arg(&config)
        .arg("--skills-dir")
        .arg(skills())
        .args(["run", "expense-report", "--json", "--args"])
        .arg(format!("@{}", args.display()))
        .env("RECORD_TEST_API_KEY", CANARY)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .expect("the run ends within 120 s")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON answer ({e}): {stdout}\n{stderr}"))
}

/// What must be the same between the recorded run and its replay: the outcome, the data, and
/// per turn the tokens the model reported.
fn outcome(response: &Value) -> Value {
    let data = &response["data"];
    let turns: Vec<Value> = data["usage"]["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| serde_json::json!([t["input_tokens"], t["output_tokens"]]))
        .collect();
    serde_json::json!({
        "success": data["success"],
        "data": data["data"],
        "error_code": data["error_code"],
        "turns": turns,
    })
}

#[tokio::test]
async fn a_recorded_skill_run_replays_to_the_same_result_without_the_api_key() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Scenario::from_file(skills().join("expense-report/mock-scenario.yaml")).unwrap();
    let upstream = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    let out = dir.path().join("expense-report.recorded.yaml");
    let recorder = Recorder::start(RecordConfig::new(upstream.base_url(), &out))
        .await
        .unwrap();
    let recorded = run_expense_report(dir.path(), &recorder.base_url()).await;
    assert_eq!(recorded["data"]["success"], true, "{recorded}");
    assert_eq!(recorded["data"]["data"]["total"], 234.8, "{recorded}");
    let auth = upstream
        .journal()
        .iter()
        .filter(|e| e.endpoint == "openai.chat")
        .count();
    assert_eq!(auth, 2, "two turns reached the upstream");
    recorder.shutdown().await;
    upstream.shutdown().await;

    let file = std::fs::read_to_string(&out).unwrap();
    assert!(!file.contains(CANARY), "the API key was written:\n{file}");
    let replay_scenario = Scenario::from_file(&out).expect("the recording parses");
    assert_eq!(replay_scenario.rules.len(), 2, "{file}");
    let replay = MockServer::start(MockConfig::default().with_scenario(replay_scenario))
        .await
        .unwrap();
    let replayed = run_expense_report(dir.path(), &replay.base_url()).await;
    let matched: Vec<String> = replay
        .journal()
        .into_iter()
        .filter_map(|e| e.matched_rule)
        .collect();
    assert!(
        matched.iter().all(|r| r.starts_with("recorded[")),
        "every turn answered from the recording: {matched:?}"
    );
    let expected = outcome(&recorded);
    assert!(
        expected["turns"][1][0].is_u64(),
        "two turns with usage: {expected}"
    );
    assert_eq!(outcome(&replayed), expected, "{replayed}\n{recorded}");
    replay.shutdown().await;
}
