//! `[server.tls]` on the real `skillet serve --http`, with a certificate authority made by the
//! test (`rcgen`):
//! - a client trusting only that CA reaches A2E, MCP and A2A over https, HTTP/2 chosen by ALPN
//!   and HTTP/1.1 still served; the card and the listening notice name `https://` URLs;
//! - plain HTTP sent to the TLS port gets one `400` saying to use https, and the server goes on;
//! - SIGHUP with a new certificate: new connections get it while an open connection goes on;
//!   a bad key on SIGHUP keeps the previous certificate and the log says why;
//! - the official MCP Python SDK (`tests/python/mcp_tls_client.py`, httpx `verify=` the test
//!   CA) runs a tool over https, and refuses the server without the CA; the official `a2a-sdk`
//!   (`tests/python/a2a_tls_client.py`) resolves the card and runs a task the same way.
//!
//! The Python interpreter is `$SKILLET_PYTHON` or `<workspace>/.venv/bin/python`; without the
//! SDK the Python test fails when `CI` is set and is skipped loudly otherwise.

use crate::cli_support;
use crate::tls_support;

use cli_support::python_with;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use tls_support::*;

fn a2e_call(id: &str) -> String {
    json!({"type": "skill/call/req", "id": id, "name": "echo-a", "arguments": {"text": "hi"}})
        .to_string()
}

async fn call_a2e(client: &reqwest::Client, server: &TlsServer, id: &str) -> reqwest::Version {
    let response = client
        .post(server.url("/a2e"))
        .header("content-type", "application/json")
        .body(a2e_call(id))
        .send()
        .await
        .unwrap();
    let version = response.version();
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["data"]["success"], true, "{body}");
    version
}

#[tokio::test]
async fn a_client_trusting_the_test_ca_reaches_a2e_mcp_and_a2a_over_https() {
    let ca = TestCa::new("skillet test CA");
    let server = TlsServer::start(&ca, "").await;
    assert!(server.server.base.starts_with("https://127.0.0.1:"));

    let h2 = client_trusting(&ca).build().unwrap();
    assert_eq!(
        call_a2e(&h2, &server, "c1").await,
        reqwest::Version::HTTP_2,
        "ALPN chose h2"
    );
    let h1 = client_trusting(&ca).http1_only().build().unwrap();
    assert_eq!(
        call_a2e(&h1, &server, "c2").await,
        reqwest::Version::HTTP_11
    );

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tls-test", "version": "0"}}});
    let response = h2
        .post(server.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(text.contains("\"serverInfo\""), "{text}");

    let card: Value = h2
        .get(server.url("/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let urls: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["url"].as_str())
        .collect();
    // Every URL is https; the gRPC interface is the same listener's `host:port` (TLS there too).
    let authority = server
        .url("")
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_owned();
    assert!(
        !urls.is_empty()
            && urls
                .iter()
                .all(|u| u.starts_with("https://") || *u == authority),
        "{urls:?}"
    );
    let send = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER",
                    "parts": [{"data": {"text": "hi"}}], "metadata": {"skillId": "echo-a"}}}});
    let answer: Value = h2
        .post(server.url("/a2a"))
        .header("A2A-Version", "1.0")
        .json(&send)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );

    // A client with only the system's roots does not trust the test CA.
    let stranger = reqwest::Client::new();
    assert!(stranger.get(server.url("/healthz")).send().await.is_err());
}

#[tokio::test]
async fn plain_http_to_the_tls_port_gets_one_400_and_the_server_goes_on() {
    let ca = TestCa::new("skillet test CA");
    let server = TlsServer::start(&ca, "").await;
    let addr = server.server.base.trim_start_matches("https://").to_owned();

    let mut raw = tokio::net::TcpStream::connect(&addr).await.unwrap();
    raw.write_all(b"POST /a2e HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), raw.read_to_string(&mut answer))
        .await
        .expect("answered and closed")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert_eq!(
        answer.matches("HTTP/1.1").count(),
        1,
        "one answer: {answer}"
    );
    assert!(answer.contains("use https://"), "{answer}");

    // The same through an HTTP client: an answer, not a hang or a protocol error.
    let plain = reqwest::Client::new()
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 400);

    let client = client_trusting(&ca).build().unwrap();
    call_a2e(&client, &server, "after").await;
}

#[tokio::test]
async fn sighup_gives_new_connections_the_new_certificate_and_a_bad_one_keeps_the_old() {
    let old_ca = TestCa::new("old CA");
    let server = TlsServer::start(&old_ca, "").await;
    // One HTTP/2 connection, opened before any reload and kept by the client's pool.
    let open = client_trusting(&old_ca).build().unwrap();
    call_a2e(&open, &server, "before").await;

    // A key that is not a key: refused, the old pair stays, the log says why (no key bytes).
    let dir = server.cwd.path();
    std::fs::write(dir.join("server.key"), "sk-CANARY-tls-reload not a key\n").unwrap();
    server.hang_up();
    server.wait_for_log("TLS certificate not reloaded", 1).await;
    assert!(server.later().contains("server.key"), "{}", server.later());
    assert!(!server.later().contains("CANARY"), "{}", server.later());
    let fresh_old = client_trusting(&old_ca).build().unwrap();
    call_a2e(&fresh_old, &server, "kept").await;

    let new_ca = TestCa::new("new CA");
    new_ca.write_leaf(dir);
    server.hang_up();
    server.wait_for_log("TLS certificate reloaded", 1).await;

    let new_client = client_trusting(&new_ca).build().unwrap();
    call_a2e(&new_client, &server, "new").await;
    let old_client = client_trusting(&old_ca).build().unwrap();
    assert!(
        old_client.get(server.url("/healthz")).send().await.is_err(),
        "a new connection gets the new certificate"
    );
    // The connection opened before both reloads still serves (this client trusts only the
    // old CA, so a new connection would fail).
    call_a2e(&open, &server, "still-open").await;
}

/// Runs the SDK script `script` (`tests/python/`) against `url` trusting `ca_file`, for the
/// skill `echo-a`, and returns the JSON summary it prints last.
async fn sdk_summary(python: &Path, script: &str, url: &str, ca_file: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let run = tokio::process::Command::new(python)
        .arg(&script)
        .arg(url)
        .arg(ca_file)
        .arg("echo-a")
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the SDK script ends within 120 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
}

#[tokio::test]
async fn the_mcp_python_sdk_runs_a_tool_over_https_trusting_the_test_ca() {
    let Some(python) = python_with("mcp.client.streamable_http") else {
        return;
    };
    let ca = TestCa::new("skillet test CA");
    let server = TlsServer::start(&ca, "").await;
    let ca_file = ca.write_pem(server.cwd.path(), "ca.pem");
    let summary = sdk_summary(&python, "mcp_tls_client.py", &server.url("/mcp"), &ca_file).await;
    assert_eq!(summary["tools"], json!(["echo-a"]), "{summary}");
    assert_eq!(summary["is_error"], false, "{summary}");
    assert_eq!(summary["without_ca"], "certificate refused", "{summary}");
}

#[tokio::test]
async fn the_a2a_sdk_resolves_the_card_and_runs_a_task_over_https_trusting_the_test_ca() {
    let Some(python) = python_with("a2a.client") else {
        return;
    };
    let ca = TestCa::new("skillet test CA");
    let server = TlsServer::start(&ca, "").await;
    let ca_file = ca.write_pem(server.cwd.path(), "ca.pem");
    let summary = sdk_summary(&python, "a2a_tls_client.py", &server.server.base, &ca_file).await;
    let jsonrpc = summary["interfaces"]
        .as_array()
        .and_then(|all| all.iter().find(|i| i[0] == "JSONRPC"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert_eq!(
        jsonrpc[1],
        server.url("/a2a"),
        "the card names its https interface: {summary}"
    );
    assert_eq!(summary["state"], "TASK_STATE_COMPLETED", "{summary}");
    assert_eq!(
        summary["get_task_state"], "TASK_STATE_COMPLETED",
        "{summary}"
    );
    assert_eq!(summary["without_ca"], "certificate refused", "{summary}");
}
