//! Extension points: `[tools.NAME]` and `[toolkits.NAME]` tables, each typed by its `kind`.
//!
//! These describe tools and toolkits the *host* provides (never a SKILL.md: skills only name
//! what they need). The tables are parsed and checked here so a typo or an unknown `kind` fails
//! at startup with the key named; turning them into running tools is the job of the module
//! that owns each kind (`toolkits` for MCP, the sandbox for command tools). A kind this build
//! cannot run yet is reported at startup, and skills that declare it are `Blocked`.
//!
//! To add a kind: add a variant with its own `deny_unknown_fields` struct, document its keys in
//! `docs/CONFIG.md`, and register the running form in the CLI's tool setup.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// A host-declared tool, by `kind`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ToolConfig {
    /// `kind = "command"`: a program run in the sandbox per call, JSON on stdin → JSON on
    /// stdout.
    Command(CommandToolConfig),
}

impl ToolConfig {
    /// The `kind` as written.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolConfig::Command(_) => "command",
        }
    }

    pub(super) fn anchor_paths(&mut self, base: &Path) {
        match self {
            ToolConfig::Command(c) => {
                anchor_program(&mut c.program, base);
                if let Some(dir) = &mut c.working_dir {
                    anchor_dir(dir, base);
                }
            }
        }
    }
}

/// `[tools.NAME]` with `kind = "command"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandToolConfig {
    /// What the tool does (shown to the model).
    pub description: String,
    /// The program (no shell); relative paths are relative to the config file.
    pub program: PathBuf,
    /// Fixed arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// JSON Schema of the tool's input (inline table).
    #[serde(default)]
    pub input_schema: Option<Value>,
    /// Per-call timeout in seconds.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Environment variables passed through (allow-list of names).
    #[serde(default)]
    pub env: Vec<String>,
    /// Working directory (default: a fresh temporary directory).
    #[serde(default)]
    pub working_dir: Option<PathBuf>,
}

/// When a toolkit connects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolkitStart {
    /// At host startup.
    #[default]
    Boot,
    /// On the first call that needs it.
    FirstUse,
}

/// A host-declared toolkit, by `kind`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ToolkitConfig {
    /// `kind = "mcp-stdio"`: an MCP server spawned as a child process.
    McpStdio(McpStdioToolkitConfig),
    /// `kind = "mcp-http"`: an MCP server over streamable HTTP.
    McpHttp(McpHttpToolkitConfig),
}

impl ToolkitConfig {
    /// The `kind` as written.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolkitConfig::McpStdio(_) => "mcp-stdio",
            ToolkitConfig::McpHttp(_) => "mcp-http",
        }
    }

    pub(super) fn anchor_paths(&mut self, base: &Path) {
        if let ToolkitConfig::McpStdio(c) = self
            && let Some(dir) = &mut c.cwd
        {
            anchor_dir(dir, base);
        }
    }
}

/// `[toolkits.NAME]` with `kind = "mcp-stdio"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpStdioToolkitConfig {
    /// The server program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables passed through to the server (allow-list of names).
    #[serde(default)]
    pub env: Vec<String>,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Only these tools are offered (default: all the server lists).
    #[serde(default)]
    pub available_tools: Option<Vec<String>>,
    /// Per-call timeout in seconds.
    #[serde(default)]
    pub call_timeout_seconds: Option<f64>,
    /// When to connect.
    #[serde(default)]
    pub start: ToolkitStart,
}

/// `[toolkits.NAME]` with `kind = "mcp-http"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpHttpToolkitConfig {
    /// The server's streamable-HTTP URL.
    pub url: String,
    /// Request headers whose values come from environment variables: header → variable name.
    #[serde(default)]
    pub headers_env: BTreeMap<String, String>,
    /// Only these tools are offered (default: all the server lists).
    #[serde(default)]
    pub available_tools: Option<Vec<String>>,
    /// Per-call timeout in seconds.
    #[serde(default)]
    pub call_timeout_seconds: Option<f64>,
    /// When to connect.
    #[serde(default)]
    pub start: ToolkitStart,
}

/// A program given as a bare name is looked up on `PATH`; one with a directory part is
/// relative to the config file.
fn anchor_program(path: &mut PathBuf, base: &Path) {
    if path.is_relative() && path.components().count() > 1 {
        *path = base.join(&*path);
    }
}

fn anchor_dir(path: &mut PathBuf, base: &Path) {
    if path.is_relative() {
        *path = base.join(&*path);
    }
}
