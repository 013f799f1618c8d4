//! The standard environment behind the `--provider KIND` shortcuts, driven through the real
//! `skillet` binary against a real mock-llm on an ephemeral port: `OPENAI_BASE_URL` +
//! `OPENAI_API_KEY`, `ANTHROPIC_BASE_URL` + `ANTHROPIC_API_KEY` and `OLLAMA_HOST` (in the forms
//! the Ollama CLI accepts) each decide where the call goes and with which key; `--base-url`
//! still wins; `--provider ollama` without `--model` lists the server's models, or names the URL
//! where nothing answers and `ollama serve`.
//!
//! Not here: the parsing of every `OLLAMA_HOST` form (`skillet-providers`' `from_env` tests).

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use mock_llm::{MockConfig, MockServer};

const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");

/// Every variable these tests set, removed from each child first so the machine's own
/// environment cannot decide a case.
const STANDARD_VARS: [&str; 9] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_HOST",
    "SKILLET_PROVIDER",
    "SKILLET_MODEL",
    "SKILLET_CONFIG",
    "RUST_LOG",
];

async fn mock(require_auth: bool) -> MockServer {
    let mut config = MockConfig::default().with_required_auth(require_auth);
    config.models = vec!["llama3.2".into(), "qwen3:8b".into()];
    MockServer::start(config).await.expect("mock-llm starts")
}

fn write_skill(root: &Path) -> PathBuf {
    let dir = root.join("say-hi");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: say-hi\ndescription: Says hi.\nmetadata:\n  a2e-max-turns: '1'\n---\n\
         Say hi.\n",
    )
    .unwrap();
    dir
}

/// `skillet run say-hi` from an empty directory with `args` and `env` (and nothing else of the
/// standard environment).
async fn run(args: &[&str], env: &[(&str, String)]) -> Output {
    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path());
    let mut command = tokio::process::Command::new(SKILLET);
    command
        .current_dir(root.path())
        .arg("run")
        .arg(&skill)
        .args(["--args", r#"{"prompt": "hi"}"#])
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for var in STANDARD_VARS {
        command.env_remove(var);
    }
    for (var, value) in env {
        command.env(var, value);
    }
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("run ends within 60 s")
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The endpoints of the chat requests the server saw, with whether each carried a credential.
fn chats(server: &MockServer) -> Vec<(String, bool)> {
    server
        .journal()
        .into_iter()
        .filter(|e| e.endpoint.ends_with(".chat") || e.endpoint == "anthropic.messages")
        .map(|e| {
            let keyed = e
                .headers
                .iter()
                .any(|(name, _)| name == "authorization" || name == "x-api-key");
            (e.endpoint, keyed)
        })
        .collect()
}

fn a_free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn ollama_host_in_every_form_the_ollama_cli_accepts_decides_where_the_call_goes() {
    let server = mock(false).await;
    let port = server.addr().port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("http://127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!(":{port}"),
        format!("0.0.0.0:{port}"),
    ] {
        server.reset();
        let output = run(
            &["--provider", "ollama", "--model", "llama3.2"],
            &[("OLLAMA_HOST", host.clone())],
        )
        .await;
        assert!(
            output.status.success(),
            "OLLAMA_HOST={host}: {}",
            stderr(&output)
        );
        assert_eq!(
            chats(&server),
            [("ollama.chat".to_owned(), false)],
            "OLLAMA_HOST={host}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn openai_base_url_and_key_reach_both_openai_kinds() {
    let server = mock(true).await;
    let base = format!("{}/v1", server.base_url());
    for kind in ["openai", "openai-compatible"] {
        server.reset();
        let output = run(
            &["--provider", kind, "--model", "llama3.2"],
            &[
                ("OPENAI_BASE_URL", base.clone()),
                ("OPENAI_API_KEY", "sk-test-env-key".into()),
            ],
        )
        .await;
        assert!(output.status.success(), "{kind}: {}", stderr(&output));
        assert_eq!(chats(&server), [("openai.chat".to_owned(), true)], "{kind}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn openai_compatible_goes_without_a_key_when_none_is_set() {
    let server = mock(false).await;
    let output = run(
        &["--provider", "openai-compatible", "--model", "llama3.2"],
        &[("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))],
    )
    .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(chats(&server), [("openai.chat".to_owned(), false)]);
    server.shutdown().await;
}

#[tokio::test]
async fn anthropic_base_url_and_key_are_honoured() {
    let server = mock(true).await;
    let output = run(
        &["--provider", "anthropic", "--model", "claude-test"],
        &[
            ("ANTHROPIC_BASE_URL", server.base_url()),
            ("ANTHROPIC_API_KEY", "sk-ant-test-env-key".into()),
        ],
    )
    .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(chats(&server), [("anthropic.messages".to_owned(), true)]);
    server.shutdown().await;
}

#[tokio::test]
async fn base_url_on_the_command_line_wins_over_the_environment() {
    let server = mock(false).await;
    let nowhere = a_free_port();
    let output = run(
        &[
            "--provider",
            "ollama",
            "--model",
            "llama3.2",
            "--base-url",
            &server.base_url(),
        ],
        // Not even parsed: `--base-url` decides.
        &[("OLLAMA_HOST", format!("127.0.0.1:{nowhere}"))],
    )
    .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(chats(&server), [("ollama.chat".to_owned(), false)]);
    server.shutdown().await;
}

#[tokio::test]
async fn ollama_without_a_model_lists_the_models_the_server_has() {
    let server = mock(false).await;
    let port = server.addr().port();
    let output = run(
        &["--provider", "ollama"],
        &[("OLLAMA_HOST", format!("127.0.0.1:{port}"))],
    )
    .await;
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{text}");
    assert!(text.contains("--model"), "{text}");
    assert!(text.contains(&format!("http://127.0.0.1:{port}")), "{text}");
    assert!(text.contains("llama3.2, qwen3:8b"), "{text}");
    assert!(chats(&server).is_empty(), "no chat without a model");
    server.shutdown().await;
}

#[tokio::test]
async fn ollama_without_a_model_and_nothing_listening_names_the_url_and_ollama_serve() {
    let port = a_free_port();
    let output = run(
        &["--provider", "ollama"],
        &[("OLLAMA_HOST", format!("127.0.0.1:{port}"))],
    )
    .await;
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{text}");
    assert!(
        text.contains(&format!("http://127.0.0.1:{port}/api/tags")),
        "{text}"
    );
    assert!(text.contains("ollama serve"), "{text}");
}

#[tokio::test]
async fn an_unusable_ollama_host_is_a_setup_error_naming_the_variable() {
    let output = run(
        &["--provider", "ollama", "--model", "llama3.2"],
        &[("OLLAMA_HOST", "127.0.0.1:99999".into())],
    )
    .await;
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{text}");
    assert!(text.contains("OLLAMA_HOST"), "{text}");
    assert!(text.contains("99999"), "{text}");
}
