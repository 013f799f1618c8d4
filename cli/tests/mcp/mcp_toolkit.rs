//! MCP toolkits against real child processes of the in-tree `mcp-test-server` (located by
//! `mcp_support::test_server`): calls and result mapping, crash and restart, timeouts and
//! cancellation, tool-list changes, `available_tools`, environment and cwd of the child,
//! streamable HTTP with headers from the environment, failure statuses and skill blocking.

use crate::mcp_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_support::test_server;
use std::time::Duration;

use serde_json::{Value, json};
use skillet_engine::deadline::Deadline;
use skillet_engine::events::EventEmitter;
use skillet_engine::skill::{Registry, load_skill_dir};
use skillet_engine::tools::{
    Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, Toolkit, ToolkitStatus,
};
use skillet_protocol::{EventPayload, SkillStatus};
use skillet_toolkits::mcp::{McpToolkit, McpToolkitConfig};
use tokio_util::sync::CancellationToken;

/// Config for the test server over stdio, with extra TOML lines.
fn stdio_config(extra: &str) -> McpToolkitConfig {
    let text = format!(
        "command = {:?}\n{extra}",
        test_server().display().to_string()
    );
    toml::from_str(&text).expect("valid test config")
}

fn ctx(timeout: Duration) -> (ToolContext, EventEmitter) {
    let events = EventEmitter::collecting("req-1");
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        deadline: Deadline::after(timeout),
        events: events.clone(),
        call_id: "call-1".into(),
    };
    (ctx, events)
}

fn tool(toolkit: &McpToolkit, name: &str) -> Arc<dyn Tool> {
    toolkit
        .tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("tool {name} not offered"))
}

fn names(toolkit: &McpToolkit) -> Vec<String> {
    toolkit
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

async fn call(toolkit: &McpToolkit, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let (ctx, _) = ctx(Duration::from_secs(30));
    tool(toolkit, name).call(args, ctx).await
}

/// Polls `check` until it holds (the change is asynchronous; this bounds the wait only).
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}

#[tokio::test]
async fn calling_mcp_tools_maps_text_structured_error_and_image_results() {
    let toolkit = McpToolkit::new("testkit", stdio_config(""));
    assert_eq!(toolkit.status(), ToolkitStatus::Idle);
    toolkit.start().await.unwrap();
    assert_eq!(toolkit.status(), ToolkitStatus::Ready);
    assert!(names(&toolkit).contains(&"echo".to_owned()));

    let echo = call(&toolkit, "echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(echo, ToolOutput::text("hello"));

    let sum = call(&toolkit, "add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(sum, ToolOutput::json(json!({"sum": 3})));

    let failed = call(&toolkit, "fail", json!({})).await.unwrap();
    assert!(failed.is_error);
    assert_eq!(failed.to_text(), "the tool failed on purpose");

    let protocol_error = call(&toolkit, "echo", json!({})).await.unwrap_err();
    assert!(
        matches!(&protocol_error, ToolError::Failed(m) if m.contains("text")),
        "{protocol_error:?}"
    );

    let (ctx, events) = ctx(Duration::from_secs(30));
    let image = tool(&toolkit, "image").call(json!({}), ctx).await.unwrap();
    assert!(
        image.to_text().contains("artifact image-call-1-1"),
        "{image:?}"
    );
    let (collected, _) = events.take_collected();
    assert!(matches!(
        &collected[0].payload,
        EventPayload::Artifact { name, mime, is_final: true, .. }
            if name == "image-call-1-1" && mime == "image/png"
    ));

    toolkit.shutdown().await;
    assert_eq!(toolkit.status(), ToolkitStatus::Stopped);
    let after = call_after_shutdown(&toolkit).await;
    assert!(matches!(after, Err(ToolError::Unavailable(_))), "{after:?}");
}

async fn call_after_shutdown(toolkit: &McpToolkit) -> Result<ToolOutput, ToolError> {
    // Tools handed out before shutdown stay callable objects; they report the toolkit is gone.
    let echo = toolkit.tools().into_iter().find(|t| t.name() == "echo");
    let (ctx, _) = ctx(Duration::from_secs(5));
    match echo {
        Some(echo) => echo.call(json!({"text": "x"}), ctx).await,
        None => Err(ToolError::Unavailable("no tools after shutdown".into())),
    }
}

#[tokio::test]
async fn server_crashing_mid_call_fails_that_call_and_is_restarted() {
    let toolkit = McpToolkit::new("testkit", stdio_config(""));
    toolkit.start().await.unwrap();

    let crashed = call(&toolkit, "crash", json!({})).await.unwrap_err();
    assert!(
        matches!(&crashed, ToolError::Unavailable(m) if m.contains("stopped during the call")),
        "{crashed:?}"
    );

    // The next call waits for the restart and succeeds on the new process.
    let echo = call(&toolkit, "echo", json!({"text": "again"}))
        .await
        .unwrap();
    assert_eq!(echo, ToolOutput::text("again"));
    assert_eq!(toolkit.status(), ToolkitStatus::Ready);
    toolkit.shutdown().await;
}

#[tokio::test]
async fn slow_tool_hits_its_timeout_and_the_server_is_told_to_cancel() {
    let toolkit = McpToolkit::new("testkit", stdio_config("timeout_seconds = 0.3"));
    toolkit.start().await.unwrap();

    let slow = call(&toolkit, "slow", json!({"ms": 60_000}))
        .await
        .unwrap_err();
    assert!(
        matches!(&slow, ToolError::Failed(m) if m.contains("timed out after 300ms")),
        "{slow:?}"
    );

    // A call whose own deadline comes first ends there, and says so.
    let (short, _) = ctx(Duration::from_millis(100));
    let cut = tool(&toolkit, "slow")
        .call(json!({"ms": 60_000}), short)
        .await;
    assert!(
        matches!(&cut, Err(ToolError::Failed(m)) if m.contains("before the call's deadline")),
        "{cut:?}"
    );

    // The abandoned requests were cancelled on the server; the server stays usable.
    eventually(
        "the server counts one notifications/cancelled",
        async || {
            let counted = call(&toolkit, "cancellations", json!({})).await.unwrap();
            counted.content["count"].as_u64().unwrap_or(0) >= 1
        },
    )
    .await;
    assert_eq!(toolkit.status(), ToolkitStatus::Ready);
    toolkit.shutdown().await;
}

#[tokio::test]
async fn cancelling_a_call_returns_cancelled_and_cancels_the_mcp_request() {
    let toolkit = McpToolkit::new("testkit", stdio_config(""));
    toolkit.start().await.unwrap();
    let (ctx, _) = ctx(Duration::from_secs(60));
    let cancel = ctx.cancel.clone();
    let slow = tool(&toolkit, "slow");
    let running = tokio::spawn(async move { slow.call(json!({"ms": 60_000}), ctx).await });
    // Cancel once the request is certainly on its way (the server counts it when cancelled).
    tokio::time::sleep(Duration::from_millis(200)).await;
    cancel.cancel();
    assert_eq!(running.await.unwrap(), Err(ToolError::Cancelled));
    eventually("the server counts the cancellation", async || {
        let counted = call(&toolkit, "cancellations", json!({})).await.unwrap();
        counted.content["count"].as_u64().unwrap_or(0) >= 1
    })
    .await;
    toolkit.shutdown().await;
}

#[tokio::test]
async fn tool_list_changes_are_followed_and_odd_names_are_offered_safely() {
    let toolkit = McpToolkit::new("testkit", stdio_config(""));
    toolkit.start().await.unwrap();
    assert!(!names(&toolkit).contains(&"late.tool".to_owned()));

    call(&toolkit, "toggle_tools", json!({})).await.unwrap();
    eventually("late.tool is listed", async || {
        names(&toolkit).contains(&"late.tool".to_owned())
    })
    .await;

    // The registry offers it under a provider-safe name and maps that back to the MCP name.
    let mut registry = ToolRegistry::new();
    registry.register_toolkit(toolkit.clone()).unwrap();
    let set = registry.resolve(&[], &["testkit".into()]);
    let resolved = set.lookup("late_tool").expect("offered as late_tool");
    assert_eq!(resolved.tool.name(), "late.tool");
    let (ctx, _) = ctx(Duration::from_secs(30));
    let ran = resolved.tool.call(json!({}), ctx).await.unwrap();
    assert_eq!(ran, ToolOutput::text("late tool ran"));

    call(&toolkit, "toggle_tools", json!({})).await.unwrap();
    eventually("late.tool is gone", async || {
        !names(&toolkit).contains(&"late.tool".to_owned())
    })
    .await;
    toolkit.shutdown().await;
}

#[tokio::test]
async fn tools_outside_available_tools_are_never_offered() {
    let toolkit = McpToolkit::new(
        "testkit",
        stdio_config(r#"available_tools = ["echo", "add", "not-on-server"]"#),
    );
    toolkit.start().await.unwrap();
    let mut offered = names(&toolkit);
    offered.sort();
    assert_eq!(offered, ["add", "echo"]);

    // Still true after the server changes its list (late.tool is not allowed either).
    let mut registry = ToolRegistry::new();
    registry.register_toolkit(toolkit.clone()).unwrap();
    let set = registry.resolve(&[], &["testkit".into()]);
    assert!(set.lookup("crash").is_none());
    assert_eq!(set.tools().len(), 2);
    toolkit.shutdown().await;
}

#[tokio::test]
async fn stdio_children_get_only_allowed_environment_and_the_configured_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    // Cargo sets CARGO_PKG_NAME and CARGO_MANIFEST_DIR for this test process.
    let toolkit = McpToolkit::new(
        "testkit",
        stdio_config(&format!(
            "env = [\"CARGO_PKG_NAME\"]\ncwd = {:?}",
            cwd.display().to_string()
        )),
    );
    toolkit.start().await.unwrap();
    let allowed = call(&toolkit, "env", json!({"name": "CARGO_PKG_NAME"})).await;
    assert_eq!(allowed.unwrap(), ToolOutput::text("skillet"));
    let withheld = call(&toolkit, "env", json!({"name": "CARGO_MANIFEST_DIR"})).await;
    assert_eq!(withheld.unwrap(), ToolOutput::text("<unset>"));
    let seen_cwd = call(&toolkit, "cwd", json!({})).await.unwrap();
    assert_eq!(seen_cwd, ToolOutput::text(cwd.display().to_string()));
    toolkit.shutdown().await;
}

#[tokio::test]
async fn unstartable_servers_are_failed_with_the_reason() {
    let missing = McpToolkit::new(
        "ghost",
        toml::from_str(r#"command = "/nonexistent/mcp-server""#).unwrap(),
    );
    let err = missing.start().await.unwrap_err();
    assert_eq!(err.toolkit, "ghost");
    assert!(err.reason.contains("cannot start"), "{err}");
    assert!(matches!(missing.status(), ToolkitStatus::Failed(r) if r.contains("cannot start")));
    assert!(missing.tools().is_empty());

    let exits = McpToolkit::new(
        "quitter",
        stdio_config(r#"args = ["--exit-at-start", "7"]"#),
    );
    let err = exits.start().await.unwrap_err();
    assert!(err.reason.contains("handshake"), "{err}");
    assert!(!exits.status().is_usable());

    // A call reports the toolkit as unavailable instead of hanging.
    missing.shutdown().await;
    exits.shutdown().await;
}

#[tokio::test]
async fn first_use_toolkit_connects_on_its_first_call() {
    let toolkit = McpToolkit::new("lazy", stdio_config(r#"connect = "first-use""#));
    assert_eq!(toolkit.status(), ToolkitStatus::Idle);
    assert!(toolkit.status().is_usable());
    // Asking for tools starts the server; they appear once it is up.
    let _ = toolkit.tools();
    eventually("the lazy toolkit is ready", async || {
        toolkit.status() == ToolkitStatus::Ready
    })
    .await;
    let echo = call(&toolkit, "echo", json!({"text": "lazy"}))
        .await
        .unwrap();
    assert_eq!(echo, ToolOutput::text("lazy"));
    toolkit.shutdown().await;
}

#[tokio::test]
async fn streamable_http_server_gets_secret_headers_from_the_environment() {
    // The server demands `x-api-key: skillet`; the client reads it from CARGO_PKG_NAME,
    // which cargo sets for this test process.
    let mut server = tokio::process::Command::new(test_server())
        .args([
            "--http",
            "127.0.0.1:0",
            "--require-header",
            "x-api-key=skillet",
        ])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let url = lines
        .next_line()
        .await
        .unwrap()
        .expect("server prints its URL");

    let config = |header: &str| -> McpToolkitConfig {
        toml::from_str(&format!("url = {url:?}\nheaders = {{ {header} }}")).unwrap()
    };
    let good = McpToolkit::new(
        "remote",
        config(r#""X-Api-Key" = { env = "CARGO_PKG_NAME" }"#),
    );
    good.start().await.unwrap();
    let echo = call(&good, "echo", json!({"text": "over http"}))
        .await
        .unwrap();
    assert_eq!(echo, ToolOutput::text("over http"));
    good.shutdown().await;

    let wrong = McpToolkit::new("remote", config(r#""X-Api-Key" = "wrong""#));
    assert!(wrong.start().await.is_err());
    wrong.shutdown().await;

    let unset = McpToolkit::new(
        "remote",
        config(r#""X-Api-Key" = { env = "SKILLET_TEST_SURELY_UNSET_VAR" }"#),
    );
    let err = unset.start().await.unwrap_err();
    assert!(
        err.reason
            .contains("SKILLET_TEST_SURELY_UNSET_VAR is not set"),
        "{err}"
    );
    unset.shutdown().await;
    server.kill().await.unwrap();
}

/// Writes a skill that declares `toolkits` and returns its directory.
fn skill_declaring(root: &Path, toolkits: &str) -> PathBuf {
    let dir = root.join("uses-kit");
    std::fs::create_dir_all(&dir).unwrap();
    let md = format!(
        "---\nname: uses-kit\ndescription: Uses an MCP toolkit.\nmetadata:\n  a2e-toolkits: '{toolkits}'\n---\nUse the tools.\n"
    );
    std::fs::write(dir.join("SKILL.md"), md).unwrap();
    dir
}

fn resolve(skills: &Registry, tools: &ToolRegistry) -> Arc<skillet_engine::skill::RegisteredSkill> {
    skills.resolve_dependencies(&|t| tools.has_tool(t), &|k| {
        tools.toolkit_status(k).is_some_and(|s| s.is_usable())
    });
    skills.get("uses-kit").unwrap()
}

#[tokio::test]
async fn skill_is_blocked_while_its_toolkit_is_missing_or_down_and_published_once_it_is_up() {
    let root = tempfile::tempdir().unwrap();
    let skills = Registry::new();
    skills
        .register(
            load_skill_dir(
                &skill_declaring(root.path(), r#"["testkit"]"#),
                skillet_engine::skill::SkillSource::Project,
            )
            .unwrap(),
        )
        .unwrap();

    // Not configured at all.
    let mut tools = ToolRegistry::new();
    let skill = resolve(&skills, &tools);
    assert_eq!(skill.status, SkillStatus::Blocked);
    assert_eq!(skill.blockers.missing_toolkits, ["testkit"]);

    // Configured, but its server cannot start (the binary is not there yet).
    let bin_dir = tempfile::tempdir().unwrap();
    let server_path = bin_dir.path().join("late-server");
    let toolkit = McpToolkit::new(
        "testkit",
        toml::from_str(&format!(
            "command = {:?}",
            server_path.display().to_string()
        ))
        .unwrap(),
    );
    tools.register_toolkit(toolkit.clone()).unwrap();
    assert!(!tools.start_toolkits().await.is_empty());
    assert_eq!(resolve(&skills, &tools).status, SkillStatus::Blocked);

    // The server appears; the supervisor's next retry brings the toolkit up.
    std::os::unix::fs::symlink(test_server(), &server_path).unwrap();
    eventually("the toolkit comes up", async || {
        toolkit.status() == ToolkitStatus::Ready
    })
    .await;
    let skill = resolve(&skills, &tools);
    assert_eq!(skill.status, SkillStatus::Published);
    assert!(skill.blockers.missing_toolkits.is_empty());
    tools.shutdown_toolkits().await;
}
