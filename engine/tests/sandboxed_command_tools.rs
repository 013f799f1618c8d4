//! Command tools against real misbehaving children (`sandbox-test-child`): each failure reaches
//! the model as a tool error naming its A2E code, and the engine keeps serving other calls.

mod sandboxed_support;

use std::time::Duration;

use serde_json::{Value, json};
use skillet_engine::sandboxed::{CommandTool, CommandToolConfig};
use skillet_engine::tools::{Tool, ToolError, ToolOutput, ToolRegistry};
use skillet_sandbox::{Capability, SandboxPolicy};

use sandboxed_support::{backend, sandbox_child, test_policy, tool_context};

fn tool_with(args: &[&str], policy: SandboxPolicy) -> CommandTool {
    let mut config = CommandToolConfig::new(sandbox_child(), "a test child");
    config.args = args.iter().map(|a| (*a).to_owned()).collect();
    config.sandbox = policy;
    CommandTool::new("child", config, backend()).expect("valid tool")
}

async fn call(args: &[&str]) -> Result<ToolOutput, ToolError> {
    call_with(args, test_policy(), json!({})).await
}

async fn call_with(
    args: &[&str],
    policy: SandboxPolicy,
    arguments: Value,
) -> Result<ToolOutput, ToolError> {
    tool_with(args, policy)
        .call(arguments, tool_context(Duration::from_secs(60)))
        .await
}

fn failure(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::Failed(message)) => message,
        other => panic!("expected a failed tool call, got {other:?}"),
    }
}

#[tokio::test]
async fn well_behaved_tool_gets_arguments_on_stdin_and_answers_json() {
    let output = call_with(
        &["echo-json"],
        test_policy(),
        json!({"text": "hi", "n": [1, 2]}),
    )
    .await
    .expect("tool succeeds");
    assert_eq!(
        output,
        ToolOutput::json(json!({"echo": {"text": "hi", "n": [1, 2]}}))
    );
}

#[tokio::test]
async fn unbounded_allocation_is_out_of_memory() {
    let message = failure(call(&["allocate-unbounded"]).await);
    assert!(
        message.starts_with("out_of_memory: command tool `child`"),
        "{message}"
    );
}

#[tokio::test]
async fn segfault_is_sandbox_crash_naming_the_signal() {
    let message = failure(call(&["segfault"]).await);
    assert!(message.starts_with("sandbox_crash:"), "{message}");
    assert!(message.contains("signal 11"), "{message}");
}

#[tokio::test]
async fn non_zero_exit_without_json_is_sandbox_crash() {
    let message = failure(call(&["exit-code", "7"]).await);
    assert!(message.starts_with("sandbox_crash:"), "{message}");
    assert!(message.contains("status 7"), "{message}");
}

#[tokio::test]
async fn endless_loop_is_a_timeout_at_the_policy_wall_clock() {
    let policy = SandboxPolicy {
        timeout_ms: 500,
        ..test_policy()
    };
    let message = failure(call_with(&["loop-forever"], policy, json!({})).await);
    assert!(message.starts_with("timeout:"), "{message}");
    assert!(message.contains("500 ms"), "{message}");
}

#[tokio::test]
async fn call_deadline_shorter_than_the_policy_ends_the_child_as_timeout() {
    let tool = tool_with(&["sleep", "60000"], test_policy());
    let message = failure(
        tool.call(json!({}), tool_context(Duration::from_millis(300)))
            .await,
    );
    assert!(message.starts_with("timeout:"), "{message}");
}

#[tokio::test]
async fn stdout_that_is_not_json_is_skill_error_quoting_it() {
    let message = failure(call(&["print-huge-output", "2048"]).await);
    assert!(message.starts_with("skill_error:"), "{message}");
    assert!(message.contains("not one JSON document"), "{message}");
    assert!(message.contains("xxxxxxxx"), "{message}");
    assert!(
        message.len() < 1000,
        "the quote is bounded: {} bytes",
        message.len()
    );
}

#[tokio::test]
async fn megabytes_of_output_are_skill_error() {
    let policy = SandboxPolicy {
        stdout_limit_bytes: 64 * 1024,
        ..test_policy()
    };
    let message = failure(call_with(&["print-huge-output", "8388608"], policy, json!({})).await);
    assert!(message.starts_with("skill_error:"), "{message}");
    assert!(message.contains("stdout over its size limit"), "{message}");
}

#[tokio::test]
async fn missing_program_is_sandbox_crash() {
    let config = CommandToolConfig::new("/nonexistent/skillet-tool", "missing");
    let tool = CommandTool::new("missing", config, backend()).expect("valid config");
    let message = failure(
        tool.call(json!({}), tool_context(Duration::from_secs(10)))
            .await,
    );
    assert!(message.starts_with("sandbox_crash:"), "{message}");
    assert!(message.contains("could not start"), "{message}");
}

#[tokio::test]
async fn cancelled_call_stops_the_child_and_reports_cancelled() {
    let tool = tool_with(&["sleep", "600000"], test_policy());
    let ctx = tool_context(Duration::from_secs(600));
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    assert_eq!(tool.call(json!({}), ctx).await, Err(ToolError::Cancelled));
}

#[tokio::test]
async fn engine_keeps_serving_calls_while_another_child_loops() {
    let looping = tool_with(
        &["loop-forever"],
        SandboxPolicy {
            timeout_ms: 3_000,
            ..test_policy()
        },
    );
    let echo = tool_with(&["echo-json"], test_policy());
    let stuck = looping.call(json!({}), tool_context(Duration::from_secs(60)));
    let served = async {
        let mut answers = Vec::new();
        for n in 0..3 {
            answers.push(
                echo.call(json!({"n": n}), tool_context(Duration::from_secs(60)))
                    .await,
            );
        }
        answers
    };
    let (stuck, answers) = tokio::join!(stuck, served);
    assert!(failure(stuck).starts_with("timeout:"));
    for (n, answer) in answers.into_iter().enumerate() {
        assert_eq!(
            answer.expect("served"),
            ToolOutput::json(json!({"echo": {"n": n}}))
        );
    }
}

#[tokio::test]
async fn reading_outside_the_working_directory_is_denied_where_landlock_enforces() {
    let tool_backend = backend();
    if tool_backend.platform_report().landlock_abi.is_none() {
        eprintln!(
            "skipped: no Landlock here ({})",
            tool_backend.platform_report()
        );
        return;
    }
    let secret_dir = tempfile::tempdir().expect("tempdir");
    let secret = secret_dir.path().join("secret.txt");
    std::fs::write(&secret, b"private").unwrap();
    let message = failure(call(&["read-file", secret.to_str().unwrap()]).await);
    // The child reports "denied" (exit 3) rather than a JSON answer.
    assert!(message.starts_with("sandbox_crash:"), "{message}");
    assert!(message.contains("status 3"), "{message}");
}

#[tokio::test]
async fn network_socket_is_denied_when_the_policy_denies_network() {
    let tool_backend = backend();
    if !matches!(
        tool_backend.platform_report().network_namespace,
        Capability::Available { .. }
    ) {
        eprintln!(
            "skipped: no network namespace here ({})",
            tool_backend.platform_report()
        );
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().unwrap().to_string();
    let message = failure(call(&["try-network", &addr]).await);
    assert!(message.starts_with("sandbox_crash:"), "{message}");
    assert!(
        message.contains("status 3"),
        "the connect was denied: {message}"
    );
}

#[test]
fn command_tool_registers_like_any_tool() {
    let mut config = CommandToolConfig::new(sandbox_child(), "echoes its input");
    config.input_schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let tool = CommandTool::new("echo_json", config, backend()).expect("valid tool");
    let mut registry = ToolRegistry::new();
    registry
        .register_tool(std::sync::Arc::new(tool))
        .expect("registered");
    let registered = registry.tool("echo_json").expect("found");
    assert_eq!(registered.description(), "echoes its input");
    assert_eq!(
        registered.input_schema()["properties"]["text"]["type"],
        "string"
    );
}

#[test]
fn workdir_that_does_not_exist_is_refused_at_build() {
    let mut config = CommandToolConfig::new(sandbox_child(), "d");
    config.workdir = Some("/nonexistent/skillet".into());
    let err = CommandTool::new("t", config, backend()).unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");
}
