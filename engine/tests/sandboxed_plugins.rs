//! Out-of-process skills against a real misbehaving A2E plugin (`plugin-test-child`): discover
//! through the proxy, streaming calls, many calls in flight, and every failure mapped onto its
//! code while the engine — and, where the contract allows, the plugin — keeps serving.

mod sandboxed_support;

use std::sync::Arc;
use std::time::Duration;

use sandboxed_support::{backend, handler_context, plugin_child, test_policy};
use serde_json::{Value, json};
use skillet_engine::handler::HandlerError;
use skillet_engine::protocol::{ErrorCode, EventPayload};
use skillet_engine::sandboxed::{PluginConfig, PluginError, PluginHost};
use skillet_engine::skill::{Implementation, Registry};

fn config(start_mode: &str) -> PluginConfig {
    let mut config = PluginConfig::new(plugin_child());
    config.args = vec![start_mode.to_owned()];
    config.sandbox = test_policy();
    config.restart_backoff_initial = Duration::from_millis(20);
    config.max_line_bytes = 1 << 20;
    config
}

async fn start() -> Arc<PluginHost> {
    PluginHost::start("testplug", config("normal"), backend())
        .await
        .expect("plugin starts")
}

async fn call(host: &PluginHost, skill: &str, arguments: Value) -> Result<Value, HandlerError> {
    host.call(
        skill,
        arguments,
        handler_context(&format!("req-{skill}"), Duration::from_secs(60)),
    )
    .await
}

fn code(result: Result<Value, HandlerError>) -> (ErrorCode, String) {
    match result {
        Err(HandlerError::Coded { code, message }) => (code, message),
        other => panic!("expected a coded failure, got {other:?}"),
    }
}

#[tokio::test]
async fn discover_through_the_proxy_registers_every_skill_as_native() {
    let host = start().await;
    let names: Vec<&str> = host.skills().iter().map(|s| s.name.as_str()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"crash"),
        "{names:?}"
    );
    let echo = host.skills().iter().find(|s| s.name == "echo").unwrap();
    assert_eq!(
        echo.tools, None,
        "plugin-side tools must not block the skill"
    );
    assert_eq!(echo.metadata.as_ref().unwrap()["plugin"], "testplug");

    let registry = Registry::new();
    assert!(host.register_into(&registry).is_empty());
    let registered = registry.get("echo").expect("registered");
    let Implementation::Native(handler) = &registered.implementation else {
        panic!("plugin skills register as native skills");
    };
    let ctx = handler_context("via-registry", Duration::from_secs(60));
    let data = handler
        .run(json!({"events": 1, "x": 1}), ctx)
        .await
        .expect("call works");
    assert_eq!(data["echo"]["x"], 1);
}

#[tokio::test]
async fn skill_allow_list_limits_what_is_registered() {
    let mut config = config("normal");
    config.skills = Some(vec!["echo".into()]);
    let host = PluginHost::start("only-echo", config, backend())
        .await
        .expect("starts");
    let names: Vec<&str> = host.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["echo"]);
}

#[tokio::test]
async fn streaming_call_forwards_the_plugins_events_in_order() {
    let host = start().await;
    let ctx = handler_context("stream-1", Duration::from_secs(60));
    let events = ctx.events.clone();
    let data = host
        .call("echo", json!({"events": 5}), ctx)
        .await
        .expect("succeeds");
    assert_eq!(data["echo"], json!({"events": 5}));
    let (collected, truncated) = events.take_collected();
    assert!(!truncated);
    let seqs: Vec<u64> = collected.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4]);
    let messages: Vec<String> = collected
        .iter()
        .map(|e| match &e.payload {
            EventPayload::Progress { message, .. } => message.clone(),
            other => panic!("unexpected event {other:?}"),
        })
        .collect();
    assert_eq!(messages, ["step 0", "step 1", "step 2", "step 3", "step 4"]);
    assert!(collected.iter().all(|e| e.req_id == "stream-1"));
}

#[tokio::test]
async fn crash_mid_call_is_sandbox_crash_and_the_next_call_gets_a_new_process() {
    let host = start().await;
    let first_pid = host.pid().await.expect("running");
    let (code, message) = code(call(&host, "crash", json!({})).await);
    assert_eq!(code, ErrorCode::SandboxCrash, "{message}");
    assert!(message.contains("signal 6"), "{message}");
    assert!(
        message.contains("aborting mid-call"),
        "stderr is quoted: {message}"
    );

    let data = call(&host, "echo", json!({"events": 0}))
        .await
        .expect("restarted");
    assert_ne!(
        data["pid"],
        json!(first_pid),
        "a new process serves the next call"
    );
}

#[tokio::test]
async fn unbounded_allocation_mid_call_is_out_of_memory() {
    let host = start().await;
    let (code, message) = code(call(&host, "allocate", json!({})).await);
    assert_eq!(code, ErrorCode::OutOfMemory, "{message}");
    call(&host, "echo", json!({}))
        .await
        .expect("restarted after OOM");
}

#[tokio::test]
async fn segfault_and_exit_mid_call_are_sandbox_crash() {
    let host = start().await;
    let (segv, message) = code(call(&host, "segfault", json!({})).await);
    assert_eq!(segv, ErrorCode::SandboxCrash, "{message}");
    assert!(message.contains("signal 11"), "{message}");
    let (exit, message) = code(call(&host, "exit", json!({"code": 0})).await);
    assert_eq!(
        exit,
        ErrorCode::SandboxCrash,
        "leaving mid-call is a crash even with status 0: {message}"
    );
}

#[tokio::test]
async fn hang_ends_at_the_deadline_as_timeout_and_the_stuck_plugin_is_replaced() {
    let host = start().await;
    let first_pid = host.pid().await.expect("running");
    let ctx = handler_context("hang-1", Duration::from_millis(500));
    let (code, message) = code(host.call("hang", json!({}), ctx).await);
    assert_eq!(code, ErrorCode::Timeout, "{message}");
    let data = call(&host, "echo", json!({}))
        .await
        .expect("served by a new process");
    assert_ne!(data["pid"], json!(first_pid));
}

#[tokio::test]
async fn garbage_line_is_skill_error_and_the_connection_stays_up() {
    let host = start().await;
    let pid = host.pid().await.expect("running");
    let (code, message) = code(call(&host, "garbage", json!({})).await);
    assert_eq!(code, ErrorCode::SkillError, "{message}");
    assert!(
        message.contains("not JSON") && message.contains("Traceback"),
        "{message}"
    );
    let data = call(&host, "echo", json!({}))
        .await
        .expect("same process serves on");
    assert_eq!(data["pid"], json!(pid));
}

#[tokio::test]
async fn ill_typed_answer_fails_only_the_call_it_names() {
    let host = start().await;
    let slow = call(&host, "slow", json!({"ms": 1500}));
    let broken = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        call(&host, "wrong_type", json!({})).await
    };
    let (slow, broken) = tokio::join!(slow, broken);
    let (code, message) = code(broken);
    assert_eq!(code, ErrorCode::SkillError, "{message}");
    assert!(message.contains("invalid message"), "{message}");
    assert_eq!(
        slow.expect("the other call is unaffected"),
        json!({"slept": 1500})
    );
}

#[tokio::test]
async fn answer_without_data_or_error_is_skill_error() {
    let host = start().await;
    let (code, message) = code(call(&host, "no_payload", json!({})).await);
    assert_eq!(code, ErrorCode::SkillError);
    assert!(message.contains("neither `data` nor `error`"), "{message}");
}

#[tokio::test]
async fn line_over_the_limit_is_skill_error_and_the_connection_stays_up() {
    let host = start().await;
    let pid = host.pid().await.expect("running");
    let (code, message) = code(call(&host, "huge_line", json!({"bytes": 2_000_000})).await);
    assert_eq!(code, ErrorCode::SkillError, "{message}");
    assert!(message.contains("over the 1048576-byte limit"), "{message}");
    let data = call(&host, "echo", json!({}))
        .await
        .expect("same process serves on");
    assert_eq!(data["pid"], json!(pid));
}

#[tokio::test]
async fn plugin_reported_failures_keep_their_codes() {
    let host = start().await;
    let (failed, message) = code(call(&host, "fail", json!({})).await);
    assert_eq!(failed, ErrorCode::SkillError);
    assert!(message.contains("asked to fail"), "{message}");
    let (rejected, message) = code(call(&host, "reject", json!({})).await);
    assert_eq!(rejected, ErrorCode::Unauthorized);
    assert!(message.contains("not for you"), "{message}");
    let (unknown, _) = code(call(&host, "no-such-skill", json!({})).await);
    assert_eq!(unknown, ErrorCode::UnknownSkill);
}

#[tokio::test]
async fn concurrent_calls_are_answered_by_req_id_out_of_order() {
    let host = start().await;
    let long = call(&host, "slow", json!({"ms": 800}));
    let short = call(&host, "slow", json!({"ms": 50}));
    let echo = host.call(
        "echo",
        json!({"tag": "e"}),
        handler_context("req-slow", Duration::from_secs(60)),
    );
    let (long, short, echo) = tokio::join!(long, short, echo);
    assert_eq!(long.unwrap(), json!({"slept": 800}));
    assert_eq!(short.unwrap(), json!({"slept": 50}));
    assert_eq!(
        echo.unwrap()["echo"]["tag"],
        "e",
        "same req_id in flight twice is told apart"
    );
}

#[tokio::test]
async fn crash_answers_every_call_in_flight() {
    let host = start().await;
    let long = call(&host, "slow", json!({"ms": 30_000}));
    let crash = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        call(&host, "crash", json!({})).await
    };
    let (long, crash) = tokio::join!(long, crash);
    assert_eq!(code(long).0, ErrorCode::SandboxCrash);
    assert_eq!(code(crash).0, ErrorCode::SandboxCrash);
}

#[tokio::test]
async fn plugin_that_cannot_start_is_a_start_error() {
    let err = PluginHost::start("dead", config("crash-on-start"), backend())
        .await
        .unwrap_err();
    assert!(matches!(err, PluginError::Start { .. }), "{err}");
    let err = PluginHost::start("noisy", config("garbage-discover"), backend())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");
}

#[tokio::test]
async fn failed_restarts_back_off_and_fail_fast_past_the_deadline() {
    let workdir = tempfile::tempdir().expect("tempdir");
    let mut config = config("crash-after-first-start");
    config.workdir = Some(workdir.path().to_owned());
    config.restart_backoff_initial = Duration::from_millis(50);
    config.restart_backoff_max = Duration::from_secs(600);
    let host = PluginHost::start("flaky", config, backend())
        .await
        .expect("first start works");
    assert_eq!(
        code(call(&host, "crash", json!({})).await).0,
        ErrorCode::SandboxCrash
    );
    // Restart 1 (after 50 ms) crashes at start.
    let (restart, message) = code(call(&host, "echo", json!({})).await);
    assert_eq!(restart, ErrorCode::SandboxCrash);
    assert!(message.contains("could not be restarted"), "{message}");
    // Keep failing until the backoff outgrows a short deadline: then the call fails at once.
    let mut message = String::new();
    for _ in 0..12 {
        let ctx = handler_context("quick", Duration::from_secs(2));
        message = code(host.call("echo", json!({}), ctx).await).1;
        if message.contains("after this call's deadline") {
            break;
        }
    }
    assert!(message.contains("after this call's deadline"), "{message}");
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_an_invalid_request() {
    let host = start().await;
    let err = call(&host, "echo", json!([1, 2])).await.unwrap_err();
    assert!(matches!(err, HandlerError::InvalidRequest(_)), "{err:?}");
}
