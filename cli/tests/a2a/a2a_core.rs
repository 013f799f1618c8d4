//! A2A 1.0's core operations on the real `skillet serve --http`, beyond `a2a_serve`:
//! - raw requests: `ListTasks` refusals (page size 0 and out of range, page token, historyLength, status), a
//!   message without `messageId` or `role` (or `ROLE_UNSPECIFIED`), multi-part refusals (two data parts, a URL file part, text
//!   that collides with the data part, bad base64), a missing `A2A-Version` with 1.0 and 0.3
//!   method names, and every error of a streaming method answered as one SSE event — each
//!   request answered exactly once;
//! - the official `a2a-sdk` client (`tests/python/a2a_core_client.py`): a multi-part message
//!   (data + two texts + a file whose bytes reach the call's workspace), `ListTasks` filters,
//!   pages and `historyLength`, and `SubscribeToTask` on an unknown task read as TaskNotFound.
//!
//! The model is the embedded mock-llm. The Python interpreter is found as in `a2a_serve`.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use cli_support::*;
use serve_support::ServeHttp;

struct Server {
    _child: tokio::process::Child,
    base: String,
    mock: String,
    _skills: tempfile::TempDir,
}

/// `file-note`: input `{note?, comment}` (so text fills `comment`), answered by the mock only
/// when the system prompt lists the input file `numbers.csv`.
fn write_file_note(root: &Path) {
    let dir = root.join("file-note");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: file-note\ndescription: Notes about an input file (test skill).\nmetadata:\n  \
         a2a-tags: '[\"test\"]'\n  a2a-input-schema: assets/input.schema.json\n  \
         a2a-output-schema: assets/output.schema.json\n  a2e-max-turns: '1'\n---\n\
         File note: describe the input file.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/input.schema.json"),
        r#"{"type":"object","properties":{"note":{"type":"string"},"comment":{"type":"string"}},"required":["comment"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("mock-scenario.yaml"),
        "rules:\n  - name: file-note\n    when: {system_contains: \"Input files in the workspace: numbers.csv\"}\n    \
         reply: {json: {echo: \"noted\"}}\n",
    )
    .unwrap();
}

async fn spawn_server() -> Server {
    let skills = tempfile::tempdir().unwrap();
    write_file_note(skills.path());
    let served = ServeHttp::new(SKILLET)
        .skills_dir(bundled_skills())
        .skills_dir(skills.path())
        .spawn()
        .await;
    Server {
        _child: served.child,
        base: served.base,
        mock: served.mock.expect("the embedded mock-llm URL is announced"),
        _skills: skills,
    }
}

fn rpc(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Posts to `/a2a`; returns the content type and the JSON-RPC answers in the body (one per SSE
/// `data:` line of a stream, or the one JSON body).
async fn post(server: &Server, version: Option<&str>, body: String) -> (String, Vec<Value>) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/a2a", server.base))
        .header("content-type", "application/json")
        .body(body);
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.unwrap();
    let answers = if content_type.starts_with("text/event-stream") {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    } else {
        vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"))]
    };
    (content_type, answers)
}

fn message(parts: Value) -> Value {
    json!({"messageId": "m1", "role": "ROLE_USER", "metadata": {"skillId": "file-note"}, "parts": parts})
}

#[tokio::test]
async fn every_refusal_of_the_a2a_core_is_answered_once_with_its_code_and_streams_stay_streams() {
    let server = spawn_server().await;
    let v1 = Some("1.0");
    // (name, version, method, params, code)
    let cases: Vec<(&str, Option<&str>, &str, Value, i64)> = vec![
        (
            "page size 101",
            v1,
            "ListTasks",
            json!({"pageSize": 101}),
            -32602,
        ),
        (
            "negative page size",
            v1,
            "ListTasks",
            json!({"pageSize": -1}),
            -32602,
        ),
        (
            "page size 0",
            v1,
            "ListTasks",
            json!({"pageSize": 0}),
            -32602,
        ),
        (
            "no role",
            v1,
            "SendMessage",
            json!({"message": {"messageId": "m-no-role", "metadata": {"skillId": "file-note"}, "parts": [{"text": "x"}]}}),
            -32602,
        ),
        (
            "ROLE_UNSPECIFIED, streaming",
            v1,
            "SendStreamingMessage",
            json!({"message": {"messageId": "m-unspecified", "role": "ROLE_UNSPECIFIED", "metadata": {"skillId": "file-note"}, "parts": [{"text": "x"}]}}),
            -32602,
        ),
        (
            "made-up page token",
            v1,
            "ListTasks",
            json!({"pageToken": "zzz"}),
            -32602,
        ),
        (
            "negative historyLength",
            v1,
            "ListTasks",
            json!({"historyLength": -2}),
            -32602,
        ),
        (
            "unknown status",
            v1,
            "ListTasks",
            json!({"status": "TASK_STATE_BORED"}),
            -32602,
        ),
        (
            "bad timestamp",
            v1,
            "ListTasks",
            json!({"statusTimestampAfter": "yesterday"}),
            -32602,
        ),
        (
            "no messageId",
            v1,
            "SendMessage",
            json!({"message": {"role": "ROLE_USER", "metadata": {"skillId": "file-note"}, "parts": [{"text": "x"}]}}),
            -32602,
        ),
        (
            "empty messageId, streaming",
            v1,
            "SendStreamingMessage",
            json!({"message": {"messageId": "", "role": "ROLE_USER", "metadata": {"skillId": "file-note"}, "parts": [{"text": "x"}]}}),
            -32602,
        ),
        (
            "no parts",
            v1,
            "SendMessage",
            json!({"message": message(json!([]))}),
            -32602,
        ),
        (
            "two data parts",
            v1,
            "SendMessage",
            json!({"message": message(json!([{"data": {"comment": "a"}}, {"data": {}}]))}),
            -32602,
        ),
        (
            "text and data fill the same field",
            v1,
            "SendMessage",
            json!({"message": message(json!([{"data": {"comment": "a"}}, {"text": "b"}]))}),
            -32602,
        ),
        (
            "a file by URL",
            v1,
            "SendMessage",
            json!({"message": message(json!([{"text": "a"}, {"url": "http://169.254.169.254/latest"}]))}),
            -32005,
        ),
        (
            "bad base64",
            v1,
            "SendMessage",
            json!({"message": message(json!([{"text": "a"}, {"raw": "%%%", "filename": "x.bin"}]))}),
            -32602,
        ),
        (
            "0.3 name, no header",
            None,
            "tasks/get",
            json!({"id": "x"}),
            -32009,
        ),
        (
            "1.0 name, explicit 0.3",
            Some("0.3"),
            "GetTask",
            json!({"id": "x"}),
            -32009,
        ),
        (
            "1.0 name, no header: served",
            None,
            "GetTask",
            json!({"id": "no-such-task"}),
            -32001,
        ),
        (
            "subscribe to an unknown task",
            v1,
            "SubscribeToTask",
            json!({"id": "no-such-task"}),
            -32001,
        ),
        (
            "subscribe, no header: served",
            None,
            "SubscribeToTask",
            json!({"id": "no-such-task"}),
            -32001,
        ),
        (
            "subscribe, 0.3",
            Some("0.3"),
            "SubscribeToTask",
            json!({"id": "no-such-task"}),
            -32009,
        ),
        (
            "stream with bad params",
            v1,
            "SendStreamingMessage",
            json!({"message": message(json!([{"data": 5}]))}),
            -32602,
        ),
    ];
    for (i, (name, version, method, params, code)) in cases.into_iter().enumerate() {
        let (content_type, answers) = post(&server, version, rpc(json!(i), method, params)).await;
        assert_eq!(answers.len(), 1, "{name}: answered once: {answers:?}");
        let answer = &answers[0];
        assert_eq!(answer["id"], json!(i), "{name}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{name}: {answer}");
        assert!(answer.get("result").is_none(), "{name}: {answer}");
        if name.contains("role") || name.contains("ROLE") {
            let said = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(
                said.contains("message.role is required"),
                "{name}: {answer}"
            );
        }
        let streaming = matches!(method, "SendStreamingMessage" | "SubscribeToTask");
        assert_eq!(
            content_type.starts_with("text/event-stream"),
            streaming,
            "{name}: {content_type}"
        );
    }
    // A 1.0 name without the header runs, and ListTasks finds the task.
    let send = rpc(
        json!("ok"),
        "SendMessage",
        json!({"message": {"messageId": "m2", "role": "ROLE_USER", "contextId": "ctx-1",
            "metadata": {"skillId": "summarize"}, "parts": [{"data": {"text": "Some text."}}]}}),
    );
    let (_, answers) = post(&server, None, send).await;
    assert_eq!(
        answers[0]["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answers:?}"
    );
    let (_, answers) = post(
        &server,
        None,
        rpc(
            json!("l"),
            "ListTasks",
            json!({"contextId": "ctx-1", "historyLength": 0}),
        ),
    )
    .await;
    let listed = &answers[0]["result"];
    assert_eq!(listed["totalSize"], 1, "{listed}");
    assert_eq!(listed["nextPageToken"], "", "{listed}");
    assert!(listed["tasks"][0].get("history").is_none(), "{listed}");
    assert!(listed["tasks"][0].get("artifacts").is_none(), "{listed}");
}

#[tokio::test]
async fn the_official_a2a_sdk_lists_tasks_and_sends_a_multi_part_message_with_a_file() {
    let Some(python) = python_with("a2a.client") else {
        return;
    };
    let server = spawn_server().await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/a2a_core_client.py");
    let run = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(&server.base)
        .arg(&server.mock)
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the SDK script ends within 300 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "a2a_core_client.py failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for check in ["multi_part", "list_tasks", "subscribe_unknown"] {
        assert!(
            stdout.lines().any(|l| l == format!("OK {check}")),
            "check {check} did not pass:\n{stdout}"
        );
    }
}
