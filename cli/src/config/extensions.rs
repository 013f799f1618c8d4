//! What the host adds to the engine beyond skill folders: `[tools.NAME]`, `[toolkits.NAME]` and
//! `[plugins.NAME]` tables, each typed by its `kind`.
//!
//! These describe tools, toolkits and out-of-process skill hosts the *host* provides — never a
//! SKILL.md (a skill only names what it needs). The shapes belong to the modules that run them
//! and are re-used here as enum variants, so the file is checked completely at startup:
//!
//! | table | `kind` | shape | runs as |
//! |---|---|---|---|
//! | `[tools.NAME]` | `"command"` | [`skillet_engine::sandboxed::CommandToolConfig`] | a sandboxed program per call (JSON stdin → JSON stdout) |
//! | `[toolkits.NAME]` | `"mcp"` | [`skillet_toolkits::mcp::McpToolkitConfig`] | an MCP server (stdio `command` or streamable-HTTP `url`) |
//! | `[plugins.NAME]` | `"plugin"` (optional) | [`skillet_engine::sandboxed::PluginConfig`] | a sandboxed program speaking A2E on its stdio; its skills join the registry |
//!
//! An unknown `kind` is an error listing the known ones. To add a kind: add a variant here with
//! the running module's config type, document its keys in `docs/CONFIG.md`, and register the
//! running form in `host::cli::setup`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use skillet_engine::sandboxed::{CommandToolConfig, PluginConfig};
use skillet_toolkits::mcp::{McpToolkitConfig, McpTransport};

/// A host-declared tool, by `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ToolConfig {
    /// `kind = "command"`: a program run in the sandbox per call.
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
                if let Some(dir) = &mut c.workdir {
                    anchor_dir(dir, base);
                }
            }
        }
    }
}

/// A host-declared toolkit, by `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ToolkitConfig {
    /// `kind = "mcp"`: an MCP server's tools.
    Mcp(McpToolkitConfig),
}

impl ToolkitConfig {
    /// The `kind` as written.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolkitConfig::Mcp(_) => "mcp",
        }
    }

    pub(super) fn anchor_paths(&mut self, base: &Path) {
        match self {
            ToolkitConfig::Mcp(c) => {
                if let McpTransport::Stdio(server) = &mut c.transport
                    && let Some(dir) = &mut server.cwd
                {
                    anchor_dir(dir, base);
                }
            }
        }
    }
}

/// Relative paths of a plugin are anchored like those of a command tool.
pub(super) fn anchor_plugin(plugin: &mut PluginConfig, base: &Path) {
    anchor_program(&mut plugin.program, base);
    if let Some(dir) = &mut plugin.workdir {
        anchor_dir(dir, base);
    }
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
