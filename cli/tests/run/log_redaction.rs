//! F2 of issue 12: a provider (or a proxy) that echoes a key in an in-stream error must never
//! get it onto the terminal. The `skillet` binary runs a skill against mock-llm serving each
//! provider API with a `stream_error` fault whose message carries the canary key, at every
//! verbosity: stdout and stderr never contain the canary. With the canary as the host's own key
//! (also sent in the request headers), it is redacted everywhere. With a canary the host does
//! not know (an echo of something else), the engine's own error line may quote the provider's
//! message, but no raw provider frame is ever printed (the caps on third-party log targets).
//!
//! Not here: the provider crate's own redaction of error messages (`skillet-providers` tests).

use std::process::Stdio;
use std::time::Duration;

use mock_llm::{MockConfig, MockServer, Scenario};

const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");

/// The host's key, echoed back by the "provider" in its in-stream error.
const CANARY: &str = "sk-canary-f2-0b3e7a91d4";

const VERBOSITIES: [&[&str]; 5] = [&[], &["-q"], &["-v"], &["-vv"], &["-vvv"]];

async fn echoing_provider() -> MockServer {
    let yaml = format!(
        "rules:\n  - fault:\n      kind: stream_error\n      after_chunks: 1\n      status: 400\n      \
         code: invalid_api_key\n      message: \"Incorrect API key provided: {CANARY}. data: {{\\\"key\\\": \\\"{CANARY}\\\"}}\"\n"
    );
    let scenario = Scenario::from_yaml_str(&yaml).expect("scenario parses");
    MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .expect("mock-llm starts")
}

fn write_skill(root: &std::path::Path) -> std::path::PathBuf {
    let dir = root.join("echo-key");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: echo-key\ndescription: Asks the model anything.\nmetadata:\n  \
         a2e-max-turns: '1'\n---\nAnswer briefly.\n",
    )
    .unwrap();
    dir
}

fn write_config(root: &std::path::Path, kind: &str, server: &MockServer) -> std::path::PathBuf {
    let base_url = match kind {
        "openai-compatible" | "openai" => format!("{}/v1", server.base_url()),
        _ => server.base_url(),
    };
    let path = root.join("skillet.toml");
    std::fs::write(
        &path,
        format!(
            "[providers.main]\nkind = \"{kind}\"\nmodel = \"mock-model\"\nbase_url = \"{base_url}\"\n\
             api_key_env = \"CANARY_KEY\"\n\n[providers.main.options]\nmax_attempts = 1\n"
        ),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn a_key_echoed_in_an_in_stream_error_never_reaches_stdout_or_stderr() {
    let server = echoing_provider().await;
    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path());
    let cases = ["openai-compatible", "ollama", "anthropic"]
        .into_iter()
        .flat_map(|kind| [(kind, CANARY), (kind, "sk-host-key-unrelated-0000")]);
    for (kind, host_key) in cases {
        let config = write_config(root.path(), kind, &server);
        for verbosity in VERBOSITIES {
            let before = server.journal().len();
            let run = tokio::process::Command::new(SKILLET)
                .current_dir(root.path())
                .arg("--config")
                .arg(&config)
                .args(verbosity)
                .arg("run")
                .arg(&skill)
                .args(["--args", r#"{"prompt": "hi"}"#])
                .env("CANARY_KEY", host_key)
                .env_remove("RUST_LOG")
                .env_remove("SKILLET_PROVIDER")
                .env_remove("SKILLET_CONFIG")
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output();
            let output = tokio::time::timeout(Duration::from_secs(60), run)
                .await
                .expect("run ends within 60 s")
                .unwrap();
            let known = if host_key == CANARY {
                "known"
            } else {
                "unknown"
            };
            let case = format!("{kind}, {known} key, {verbosity:?}");
            assert!(
                server.journal().len() > before,
                "{case}: the provider was never asked"
            );
            assert!(
                !output.status.success(),
                "{case}: the fault must fail the run"
            );
            for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
                let text = String::from_utf8_lossy(bytes);
                if host_key == CANARY {
                    assert!(
                        !text.contains(CANARY),
                        "{case}: the key leaked on {stream}:\n{text}"
                    );
                }
                let raw_frame = text
                    .lines()
                    .find(|line| line.contains(CANARY) && line.contains("\"error\":"));
                assert!(
                    raw_frame.is_none(),
                    "{case}: a raw provider frame reached {stream}:\n{text}"
                );
            }
        }
    }
    server.shutdown().await;
}

/// A request's own key and header (allowed by `[llm_override]`) are secrets the host never
/// configured: at `-vv` and `-vvv` neither their echo nor the request's headers reach the
/// output of `serve --stdio`.
#[tokio::test]
async fn override_credentials_never_reach_the_output_of_serve_at_high_verbosity() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let server = echoing_provider().await;
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path());
    let base_url = format!("{}/v1", server.base_url());
    let config = root.path().join("skillet.toml");
    std::fs::write(
        &config,
        format!(
            "[providers.main]\nkind = \"openai-compatible\"\nmodel = \"mock-model\"\n\
             base_url = \"{base_url}\"\n\n[llm_override]\nallowed_providers = [\"openai-compatible\"]\n\
             allowed_base_urls = [\"{base_url}\"]\nallowed_models = [\"*\"]\n\
             allow_request_credentials = true\n"
        ),
    )
    .unwrap();
    let header_canary = "hdr-canary-5f0c2e8a71";
    for verbosity in ["-vv", "-vvv"] {
        let mut child = tokio::process::Command::new(SKILLET)
            .current_dir(root.path())
            .arg("--config")
            .arg(&config)
            .arg(verbosity)
            .args(["serve", "--stdio", "--skills-dir"])
            .arg(root.path())
            .env_remove("RUST_LOG")
            .env_remove("SKILLET_PROVIDER")
            .env_remove("SKILLET_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let call = serde_json::json!({
            "type": "skill/call/req", "id": "o1", "name": "echo-key",
            "arguments": {"prompt": "hi"},
            "llm_override": {
                "provider_name": "openai-compatible",
                "provider_credentials": {"api_key": CANARY},
                "provider_config": {
                    "model": "mock-model", "base_url": base_url, "max_attempts": 1,
                    "headers": {"x-gateway-token": header_canary}
                }
            }
        });
        stdin
            .write_all(format!("{call}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = String::new();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
                .await
                .expect("an answer within 60 s")
                .unwrap()
                .expect("output open until the answer");
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("\"skill/call/resp\"") {
                break;
            }
        }
        drop(stdin);
        let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("exits within 60 s")
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(seen.contains("\"req_id\":\"o1\""), "{verbosity}: {seen}");
        for (stream, text) in [("stdout", seen.as_str()), ("stderr", &*stderr)] {
            for canary in [CANARY, header_canary] {
                assert!(
                    !text.contains(canary),
                    "{verbosity}: {canary} leaked on {stream}:\n{text}"
                );
            }
        }
    }
    assert!(
        server.journal().iter().any(|entry| entry
            .headers
            .iter()
            .any(|(name, _)| name == "x-gateway-token")),
        "the override really ran with its header"
    );
    server.shutdown().await;
}
