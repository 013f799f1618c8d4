//! `skillet toolkits [--json]`: the configured toolkits with their status and tools, the tools
//! the host provides directly, and what the sandbox enforces on this platform.

use std::io::Write;

use serde_json::{Value, json};

use super::args::{GlobalArgs, ToolkitsArgs};
use super::exit::{Failure, Outcome};
use super::setup::{self, Console};
use skillet_engine::tools::provider_safe_name;
use skillet_engine::tools::{Tool, ToolkitStatus};

/// Runs the command.
pub async fn toolkits(
    global: &GlobalArgs,
    args: &ToolkitsArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let parts = setup::load_parts(global, console, None).await?;
    let toolkits: Vec<Value> = parts
        .tools
        .toolkits()
        .map(|kit| {
            json!({
                "name": kit.name(),
                "source": kit.describe(),
                "status": status_text(&kit.status()),
                "tools": kit.tools().iter().map(|t| tool_json(t.as_ref())).collect::<Vec<_>>(),
            })
        })
        .collect();
    let tools: Vec<Value> = parts.tools.tools().map(|t| tool_json(t.as_ref())).collect();
    let platform = skillet_sandbox::platform_report().to_string();
    parts.tools.shutdown_toolkits().await;

    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = json!({"toolkits": toolkits, "tools": tools, "sandbox": platform});
        let _ = writeln!(out, "{doc}");
        return Ok(Outcome::Success);
    }
    if toolkits.is_empty() {
        let _ = writeln!(
            out,
            "toolkits: none configured ([toolkits.NAME] in skillet.toml)"
        );
    }
    for kit in &toolkits {
        let _ = writeln!(
            out,
            "toolkit {}  {}  ({})",
            kit["name"].as_str().unwrap_or(""),
            kit["status"].as_str().unwrap_or(""),
            kit["source"].as_str().unwrap_or("")
        );
        print_tools(&mut out, &kit["tools"]);
    }
    let _ = writeln!(out, "tools provided by the host:");
    print_tools(&mut out, &Value::Array(tools));
    let _ = writeln!(out, "{platform}");
    Ok(Outcome::Success)
}

fn status_text(status: &ToolkitStatus) -> String {
    match status {
        ToolkitStatus::Idle => "idle (connects on first use)".to_owned(),
        ToolkitStatus::Starting => "starting".to_owned(),
        ToolkitStatus::Ready => "ready".to_owned(),
        ToolkitStatus::Failed(reason) => format!("failed: {reason}"),
        ToolkitStatus::Stopped => "stopped".to_owned(),
    }
}

fn tool_json(tool: &dyn Tool) -> Value {
    let offered = provider_safe_name(tool.name());
    json!({
        "name": tool.name(),
        "offered_as": offered,
        "description": tool.description().lines().next().unwrap_or(""),
    })
}

fn print_tools(out: &mut impl Write, tools: &Value) {
    for tool in tools.as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or("");
        let offered = tool["offered_as"].as_str().unwrap_or(name);
        let alias = if offered == name {
            String::new()
        } else {
            format!(" (offered as {offered})")
        };
        let _ = writeln!(
            out,
            "    {name}{alias}  {}",
            tool["description"].as_str().unwrap_or("")
        );
    }
}
