//! The telemetry a host opts into, through the real binary: message content on spans only with
//! `[telemetry] capture_content = true` (and the credential still never), the `[telemetry]`
//! endpoint winning over `OTEL_EXPORTER_OTLP_ENDPOINT`, JSON log lines with `--log-format json`
//! (no ANSI colour on a pipe), and the token usage `skillet run` prints and returns.

use crate::telemetry_support;

use std::process::Stdio;

use opentelemetry_proto::tonic::common::v1::any_value;
use serde_json::{Value, json};

use telemetry_support::*;

const TRACE: &str = "5bf92f3577b34da6a3ce929d0e0e4737";

#[tokio::test]
async fn capture_content_records_answers_and_tool_io_from_the_configured_endpoint() {
    let (otlp, received) = start_collector().await;
    // The environment names a dead collector; the file's endpoint must win.
    let (_reserved, closed) = refusing_port();
    let closed = format!("http://{closed}");
    let server = serve_with_telemetry(
        &closed,
        &format!("[telemetry]\notlp_endpoint = \"{otlp}\"\ncapture_content = true\n"),
    )
    .await;
    let metadata = json!({"traceparent": format!("00-{TRACE}-00f067aa0ba902b7-01")});
    let response = post_call(&server.base, tally_call("k1", metadata), None).await;
    assert_eq!(response["data"]["success"], true, "{response}");

    let spans = wait_for_spans(&received, TRACE, 6).await;
    let mut chats: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat"))
        .collect();
    chats.sort_by_key(|s| int_attr(s, "skillet.turn"));
    assert!(
        str_attr(chats[2], "gen_ai.output.messages").contains(CONTENT_CANARY),
        "the final answer is on the last chat span"
    );
    let mut tools: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool"))
        .collect();
    tools.sort_by_key(|s| int_attr(s, "skillet.turn"));
    assert!(str_attr(tools[0], "gen_ai.tool.call.arguments").contains("2 + 3"));
    assert!(str_attr(tools[0], "gen_ai.tool.call.result").contains('5'));
    for raw in received.raw() {
        let text = String::from_utf8_lossy(&raw);
        assert!(
            !text.contains(CANARY_KEY),
            "the credential is never content"
        );
    }
}

fn skillet_run(args: &[&str]) -> std::process::Output {
    skillet_run_with(args, &[])
}

fn skillet_run_with(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let cwd = tempfile::tempdir().unwrap();
    let skills = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
    std::process::Command::new(SKILLET)
        .current_dir(cwd.path())
        .args(args)
        .arg("--skills-dir")
        .arg(skills)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_CONFIG")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

const SUMMARIZE: [&str; 4] = ["run", "summarize", "--args", r#"{"text":"Rust is fast."}"#];

#[test]
fn log_format_json_writes_one_json_object_per_log_line_without_colour() {
    let output = skillet_run(&[&["--log-format", "json", "-v"][..], &SUMMARIZE].concat());
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains('\u{1b}'), "no ANSI escapes on a pipe");
    let logs: Vec<Value> = stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert!(!logs.is_empty(), "-v logs something: {stderr}");
    for log in &logs {
        assert!(log["timestamp"].is_string(), "{log}");
        assert!(log["level"].is_string(), "{log}");
        assert!(log["fields"]["message"].is_string(), "{log}");
    }
    // stdout still carries only the result.
    let stdout: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(stdout["summary"].is_string());
}

#[test]
fn log_format_rejects_an_unknown_format() {
    let output = skillet_run(&[&["--log-format", "xml"][..], &SUMMARIZE].concat());
    assert!(!output.status.success());
}

#[test]
fn run_prints_the_token_usage_and_returns_it_per_turn() {
    let text = skillet_run(&SUMMARIZE);
    assert!(text.status.success());
    let stderr = String::from_utf8(text.stderr).unwrap();
    let line = stderr
        .lines()
        .find(|l| l.starts_with("skillet: tokens: "))
        .unwrap_or_else(|| panic!("a usage line: {stderr}"));
    assert!(line.ends_with("over 1 turn"), "{line}");

    let json = skillet_run(&[&SUMMARIZE[..], &["--json"]].concat());
    let response: Value = serde_json::from_slice(&json.stdout).unwrap();
    let usage = &response["data"]["usage"];
    let turns = usage["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{usage}");
    assert_eq!(usage["input_tokens"], turns[0]["input_tokens"]);
    assert_eq!(usage["output_tokens"], turns[0]["output_tokens"]);
    assert!(usage["input_tokens"].as_u64().unwrap() > 0);
    assert!(
        usage.get("cost").is_none(),
        "no price configured, no estimate"
    );
    assert!(
        line.contains(&format!(
            "{} in + {} out",
            usage["input_tokens"], usage["output_tokens"]
        )),
        "{line}"
    );
}

#[tokio::test]
async fn run_flushes_its_spans_to_the_collector_before_exiting() {
    let (otlp, received) = start_collector().await;
    let output = tokio::task::spawn_blocking(move || {
        skillet_run_with(
            &SUMMARIZE,
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.as_str())],
        )
    })
    .await
    .unwrap();
    assert!(output.status.success());
    // The process has exited: whatever it exported is already here.
    let names: Vec<String> = received.spans().into_iter().map(|s| s.name).collect();
    assert!(
        names.iter().any(|n| n == "invoke_agent summarize"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("chat ")), "{names:?}");
}

/// The `invoke_agent` span's events of a tally call whose request carries the provider's key,
/// as (name, content) in order; and every raw export body.
async fn transcript_events(extra_toml: &str, trace: &str) -> (Vec<(String, String)>, Vec<String>) {
    let (otlp, received) = start_collector().await;
    let server = serve_with_telemetry(&otlp, extra_toml).await;
    let metadata = json!({"traceparent": format!("00-{trace}-00f067aa0ba902b7-01")});
    let mut call = tally_call("k-events", metadata);
    call["arguments"]["text"] = json!(format!("{CONTENT_CANARY} two and three, key {CANARY_KEY}"));
    let response = post_call(&server.base, call, None).await;
    assert_eq!(response["data"]["success"], true, "{response}");
    let spans = wait_for_spans(&received, trace, 6).await;
    let run = spans
        .iter()
        .find(|s| s.name.starts_with("invoke_agent"))
        .expect("the call's span");
    let events = run
        .events
        .iter()
        .map(|event| {
            let content = match attr(&event.attributes, "content") {
                Some(any_value::Value::StringValue(s)) => s.clone(),
                other => panic!("{}: content is not a string: {other:?}", event.name),
            };
            (event.name.clone(), content)
        })
        .collect();
    let raw = received
        .raw()
        .iter()
        .map(|body| String::from_utf8_lossy(body).into_owned())
        .collect();
    (events, raw)
}

#[tokio::test]
async fn capture_content_puts_each_transcript_entry_on_the_call_span_redacted() {
    let (events, raw) = transcript_events(
        "[telemetry]\ncapture_content = true\n",
        "6cf92f3577b34da6a3ce929d0e0e4738",
    )
    .await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    // Turn 1 sends the system prompt and the request; each turn's answer; each tool result.
    assert_eq!(
        names,
        [
            "gen_ai.system.message",
            "gen_ai.user.message",
            "gen_ai.assistant.message",
            "gen_ai.tool.message",
            "gen_ai.assistant.message",
            "gen_ai.tool.message",
            "gen_ai.assistant.message",
        ],
        "{events:#?}"
    );
    let (_, system) = &events[0];
    assert!(system.contains("You tally numbers"), "{system}");
    assert!(
        system.contains("[REDACTED]"),
        "the key in the request is redacted: {system}"
    );
    assert!(
        events[6].1.contains(&format!("{CONTENT_CANARY} five")),
        "{events:#?}"
    );
    for body in raw {
        assert!(
            !body.contains(CANARY_KEY),
            "the credential is never exported"
        );
    }
}

#[tokio::test]
async fn without_capture_content_the_call_span_has_no_transcript_events() {
    let (events, raw) = transcript_events("", "7df92f3577b34da6a3ce929d0e0e4739").await;
    assert!(events.is_empty(), "{events:#?}");
    for body in raw {
        assert!(
            !body.contains(CONTENT_CANARY),
            "no content without the opt-in"
        );
    }
}
