//! `skillet toolkits` and the toolkit status in `skillet discover`, with real MCP servers (the
//! in-tree `mcp-test-server`) configured in a real `skillet.toml`.

use crate::cli_support;
use crate::mcp_support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use cli_support::SKILLET;

fn skillet(cwd: &Path, args: &[&str]) -> Output {
    Command::new(SKILLET)
        .current_dir(cwd)
        .args(args)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .output()
        .expect("run skillet")
}

/// A config with one working MCP toolkit at boot, one that connects on first use, and one whose
/// server exits at start; plus a skill that declares the broken one.
fn host_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let server = mcp_support::test_server().display().to_string();
    std::fs::write(
        dir.path().join("skillet.toml"),
        format!(
            r#"
[toolkits.math]
kind = "mcp"
command = "{server}"
available_tools = ["add", "echo"]

[toolkits.lazy]
kind = "mcp"
command = "{server}"
connect = "first-use"

[toolkits.broken]
kind = "mcp"
command = "{server}"
args = ["--exit-at-start", "3"]
startup_timeout_seconds = 5
"#
        ),
    )
    .unwrap();
    let skill = dir.path().join("skills/needs-broken");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: needs-broken\ndescription: Uses the broken toolkit.\nmetadata:\n  \
         a2a-tags: '[\"test\"]'\n  a2e-toolkits: '[\"broken\", \"math\"]'\n---\nDo it.\n",
    )
    .unwrap();
    dir
}

#[test]
fn toolkits_lists_status_and_allowed_tools_of_each_configured_toolkit() {
    let dir = host_dir();
    let out = skillet(dir.path(), &["toolkits", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let kits = doc["toolkits"].as_array().unwrap();
    let by_name = |name: &str| kits.iter().find(|k| k["name"] == name).unwrap().clone();

    let math = by_name("math");
    assert_eq!(math["status"], "ready");
    let mut names: Vec<&str> = math["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["add", "echo"], "only available_tools are listed");
    assert!(math["source"].as_str().unwrap().starts_with("stdio: "));

    assert_eq!(by_name("lazy")["status"], "idle (connects on first use)");
    let broken = by_name("broken");
    assert!(
        broken["status"].as_str().unwrap().starts_with("failed"),
        "{broken}"
    );
    let host_tools: Vec<&str> = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(host_tools.contains(&"calculator"));
    assert!(
        doc["sandbox"]
            .as_str()
            .unwrap()
            .starts_with("sandbox platform:")
    );
}

#[test]
fn discover_shows_a_skill_blocked_by_a_failed_toolkit_with_each_toolkit_status() {
    let dir = host_dir();
    let out = skillet(dir.path(), &["discover"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("needs-broken"), "{text}");
    assert!(text.contains("Blocked"), "{text}");
    assert!(text.contains("toolkits: broken (failed"), "{text}");
    assert!(text.contains("math (ready)"), "{text}");
}
