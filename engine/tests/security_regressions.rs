//! Regressions for the hostile-probe findings of issue 12, through the real `skillet` binary
//! (`serve --stdio`, `serve --http`, `run`) with the embedded mock-llm or a recording listener:
//! a JSON array or a duplicated envelope key is `invalid_message` on every transport; a skill's
//! provider settings never carry the host's credential (or a prompt) to an endpoint the host
//! did not allow; a call near `max_message_bytes` runs through the embedded mock.
//!
//! Not here: the codec's own unit tests (`protocol::codec`), the log-redaction canaries
//! (`log_redaction.rs`).

mod cli_support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use cli_support::*;

/// Lines a proxy and Skillet could read differently; each must be refused as `invalid_message`.
const NOT_A_MESSAGE: [&str; 5] = [
    r#"["skill/discover/req"]"#,
    r#"["skill/discover/req","d1","1.0",1716123456.7,[],[]]"#,
    "[1,2,3,4,5]",
    r#"{"type":"skill/call/req","type":"skill/discover/req","id":"dup-type"}"#,
    r#"{"type":"skill/call/req","id":"dup-name","name":"slow-echo","name":"other","arguments":{"text":"x"}}"#,
];

fn assert_refused_as_invalid(line: &str, answer: &Value) {
    assert_eq!(answer["type"], "skill/call/resp", "for {line}: {answer}");
    assert_eq!(
        answer["error"]["code"], "invalid_message",
        "for {line}: {answer}"
    );
    assert!(answer.get("skills").is_none(), "never served: {answer}");
    assert!(answer.get("data").is_none(), "never run: {answer}");
}

#[tokio::test]
async fn stdio_refuses_arrays_and_duplicated_envelope_keys_as_invalid_message() {
    let slow = slow_skills();
    let mut server = StdioChild::spawn(&[slow.path()]);
    for line in NOT_A_MESSAGE {
        server.send(line).await;
        let answer = server.recv().await.expect("an answer");
        assert_refused_as_invalid(line, &answer);
    }
    // The connection survives and still serves a well-formed message.
    server
        .send(r#"{"type":"skill/discover/req","id":"after"}"#)
        .await;
    let answer = server.recv().await.expect("an answer");
    assert_eq!(answer["type"], "skill/discover/resp", "{answer}");
    assert_eq!(answer["req_id"], "after");
    server.close_stdin();
    assert_eq!(server.wait().await, 0);
}

struct HttpChild {
    _child: tokio::process::Child,
    base: String,
    _cwd: tempfile::TempDir,
}

async fn spawn_http(skill_dirs: &[&std::path::Path]) -> HttpChild {
    let cwd = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(SKILLET);
    command
        .current_dir(cwd.path())
        .args(["serve", "--http", "127.0.0.1:0"]);
    for dir in skill_dirs {
        command.arg("--skills-dir").arg(dir);
    }
    let mut child = command
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let line = tokio::time::timeout(Duration::from_secs(60), stderr.next_line())
            .await
            .expect("startup within 60 s")
            .unwrap()
            .expect("stderr open until the server listens");
        if let Some(rest) = line.split("serving A2E on ").nth(1) {
            let url = rest.split_whitespace().next().unwrap();
            break url.trim_end_matches("/a2e").to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    HttpChild {
        _child: child,
        base,
        _cwd: cwd,
    }
}

#[tokio::test]
async fn http_refuses_arrays_and_duplicated_envelope_keys_as_invalid_message() {
    let slow = slow_skills();
    let server = spawn_http(&[slow.path()]).await;
    let client = reqwest::Client::new();
    let a2e = format!("{}/a2e", server.base);
    for line in NOT_A_MESSAGE {
        let response = client.post(&a2e).body(line).send().await.unwrap();
        // A protocol rejection is an A2E answer (HTTP 200), like every other rejection.
        assert_eq!(response.status(), 200, "for {line}");
        let answer: Value = response.json().await.unwrap();
        assert_refused_as_invalid(line, &answer);
    }
    let answer: Value = client
        .post(&a2e)
        .body(json!({"type": "skill/discover/req", "id": "after"}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["type"], "skill/discover/resp", "{answer}");
}
