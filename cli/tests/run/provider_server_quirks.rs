//! How `skillet run` copes with local model servers as they really behave, driven through the real
//! `skillet` binary against a real mock-llm on an ephemeral port (issue 54):
//! - a server still loading its model (llama.cpp's `503 Loading model`) is waited for up to the
//!   call's deadline, said once, and still failing at the deadline names the server;
//! - a structured-output mode the server refused (llama-cpp-python's `json_schema`) is
//!   remembered across processes in the cache under `$XDG_CACHE_HOME/skillet/`;
//! - a schema llama.cpp cannot compile (`400 Failed to parse grammar`) steps down to sending no
//!   schema, never through a named `tool_choice`, and the answer is still checked against the
//!   skill's schema.
//!
//! Not here: quirks read at the provider (`skillet-providers`' `server_quirks` tests), the retry
//! policy's own cases (`skillet-providers`' `retry` tests) and the mode
//! ladder (`modes` tests).

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use mock_llm::{MockConfig, MockServer, Scenario};

const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");

/// Variables that could decide a case from the machine's own environment.
const CLEARED_VARS: [&str; 9] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SKILLET_PROVIDER",
    "SKILLET_MODEL",
    "SKILLET_BASE_URL",
    "SKILLET_CONFIG",
    "SKILLET_MODE_CACHE",
    "XDG_CACHE_HOME",
    "RUST_LOG",
];

async fn mock(scenario: &str) -> MockServer {
    let scenario = Scenario::from_json_str(scenario).expect("scenario parses");
    MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .expect("mock-llm starts")
}

/// A skill `say-hi` answering in one turn within `timeout_s`, with an output schema when
/// `schema` is set.
fn write_skill(root: &Path, timeout_s: u32, schema: bool) -> PathBuf {
    let dir = root.join("say-hi");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    let output = if schema {
        std::fs::write(
            dir.join("assets/output.schema.json"),
            r#"{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}"#,
        )
        .unwrap();
        "  a2a-output-schema: assets/output.schema.json\n"
    } else {
        ""
    };
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: say-hi\ndescription: Says hi.\nmetadata:\n  a2e-max-turns: '1'\n  \
             a2e-timeout-seconds: '{timeout_s}'\n{output}---\nSay hi.\n"
        ),
    )
    .unwrap();
    dir
}

/// `skillet run SKILL` against `server` as an OpenAI-compatible server, from `root`, with `env`.
async fn run(root: &Path, skill: &Path, server: &MockServer, env: &[(&str, &Path)]) -> Output {
    let mut command = tokio::process::Command::new(SKILLET);
    command
        .current_dir(root)
        .arg("run")
        .arg(skill)
        .args(["--args", r#"{"prompt": "hi"}"#])
        .args(["--provider", "openai-compatible", "--model", "llama3.2"])
        .args(["--base-url", &format!("{}/v1", server.base_url())])
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for var in CLEARED_VARS {
        command.env_remove(var);
    }
    // Never the machine's own cache, whatever the case sets.
    command.env("HOME", root);
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

#[tokio::test]
async fn a_run_started_while_the_server_loads_its_model_waits_and_succeeds_saying_so_once() {
    // Four loading answers: more than the three attempts a run's retry budget has.
    let server = mock(r#"{"rules": [{"fault": {"kind": "loading", "times": 4}}]}"#).await;
    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path(), 30, false);
    let output = run(root.path(), &skill, &server, &[]).await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    let url = format!("{}/v1", server.base_url());
    let said = format!("the server at {url} is still loading its model; waiting up to");
    assert_eq!(err.matches(&said).count(), 1, "said once: {err}");
    let journal = server.journal();
    assert_eq!(journal.len(), 5, "four loading answers, then the answer");
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_finishes_loading_fails_at_the_deadline_naming_its_url() {
    let server = mock(r#"{"rules": [{"fault": {"kind": "loading"}}]}"#).await;
    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path(), 3, false);
    let start = Instant::now();
    let output = run(root.path(), &skill, &server, &[]).await;
    let took = start.elapsed();
    let err = stderr(&output);
    assert!(!output.status.success(), "{err}");
    let url = format!("{}/v1", server.base_url());
    assert!(
        err.contains(&format!(
            "the server at {url} was still loading its model after"
        )),
        "{err}"
    );
    assert!(err.contains("timeout"), "the run ends as a timeout: {err}");
    assert!(
        took < Duration::from_secs(10),
        "ends at the 3 s deadline, not later: {took:?}"
    );
    assert!(
        server.journal().len() > 3,
        "waited past the retry budget: {err}"
    );
    server.shutdown().await;
}

/// The `response_format.type` of each chat request the server saw from `from` on.
fn output_modes(server: &MockServer, from: usize) -> Vec<String> {
    server
        .journal()
        .into_iter()
        .skip(from)
        .filter(|e| e.endpoint == "openai.chat")
        .map(|e| {
            e.body
                .pointer("/response_format/type")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("none")
                .to_owned()
        })
        .collect()
}

/// llama-cpp-python's server: `json_schema` refused with its HTTP 500.
const REFUSES_JSON_SCHEMA: &str = r#"{"dialect": {"refuse_output": ["json_schema"]}}"#;

#[tokio::test]
async fn a_mode_the_server_refused_is_remembered_so_the_next_run_sends_no_refused_request() {
    let server = mock(REFUSES_JSON_SCHEMA).await;
    let cache = tempfile::tempdir().unwrap();
    let env = [("XDG_CACHE_HOME", cache.path())];

    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path(), 30, true);
    let first = run(root.path(), &skill, &server, &env).await;
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(output_modes(&server, 0), ["json_schema", "json_object"]);
    assert!(stderr(&first).contains("refused structured output mode json_schema"));
    let file = cache.path().join("skillet/modes.json");
    let written = std::fs::read_to_string(&file).expect("the cache file is written");
    assert!(
        written.contains("json_object") && written.contains("llama3.2"),
        "{written}"
    );

    let seen = server.journal().len();
    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path(), 30, true);
    let second = run(root.path(), &skill, &server, &env).await;
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(
        output_modes(&server, seen),
        ["json_object"],
        "the second run starts from the remembered mode"
    );
    assert!(!stderr(&second).contains("refused"), "{}", stderr(&second));
    server.shutdown().await;
}

#[tokio::test]
async fn with_the_mode_cache_off_every_run_learns_the_refusal_again() {
    let server = mock(REFUSES_JSON_SCHEMA).await;
    let cache = tempfile::tempdir().unwrap();
    let off = Path::new("off");
    let env = [
        ("XDG_CACHE_HOME", cache.path()),
        ("SKILLET_MODE_CACHE", off),
    ];
    for run_number in 0..2 {
        let seen = server.journal().len();
        let root = tempfile::tempdir().unwrap();
        let skill = write_skill(root.path(), 30, true);
        let output = run(root.path(), &skill, &server, &env).await;
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(
            output_modes(&server, seen),
            ["json_schema", "json_object"],
            "run {run_number}"
        );
    }
    assert!(!cache.path().join("skillet").exists(), "nothing written");
    server.shutdown().await;
}

/// llama.cpp failing to compile the schema into a grammar: every schema and forced tool choice
/// answered `400 Failed to parse grammar`; `answer` is what the model writes.
fn grammar_failing(answer: &str) -> String {
    format!(
        r#"{{"dialect": {{"refuse_output": ["grammar"]}}, "rules": [{{"reply": {{"json": {answer}}}}}]}}"#
    )
}

/// Each chat request's structured-output mechanism: its `response_format.type`, `tool_choice`,
/// or `none`.
fn mechanisms(server: &MockServer) -> Vec<String> {
    server
        .journal()
        .into_iter()
        .filter(|e| e.endpoint == "openai.chat")
        .map(|e| {
            let format = e.body.pointer("/response_format/type");
            match (format, e.body.get("tool_choice")) {
                (Some(format), _) => format.as_str().unwrap_or("?").to_owned(),
                (None, Some(choice)) => format!("tool_choice {choice}"),
                (None, None) => "none".to_owned(),
            }
        })
        .collect()
}

#[tokio::test]
async fn a_grammar_the_server_cannot_parse_is_dropped_and_the_answer_is_still_checked() {
    let server = mock(&grammar_failing(r#"{"greeting": "hi"}"#)).await;
    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path(), 30, true);
    let output = run(root.path(), &skill, &server, &[]).await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert_eq!(
        mechanisms(&server),
        [
            "json_schema",
            "json_object",
            r#"tool_choice "required""#,
            "none"
        ],
        "down the ladder to no schema on the wire, never a named tool_choice"
    );
    let answer: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the answer is JSON");
    assert_eq!(answer["greeting"], "hi", "{answer}");
    server.shutdown().await;
}

#[tokio::test]
async fn an_answer_sent_without_a_schema_after_a_grammar_refusal_that_breaks_it_fails_the_run() {
    let server = mock(&grammar_failing(r#"{"greeting": 5}"#)).await;
    let root = tempfile::tempdir().unwrap();
    let skill = write_skill(root.path(), 30, true);
    let output = run(root.path(), &skill, &server, &[]).await;
    let err = stderr(&output);
    assert!(!output.status.success(), "{err}");
    assert!(
        err.contains("schema_violation") && err.contains("/greeting"),
        "the engine checked the schema-less answer: {err}"
    );
    assert_eq!(mechanisms(&server).last().map(String::as_str), Some("none"));
    server.shutdown().await;
}
