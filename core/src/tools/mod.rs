//! The contract for what a skill may call: [`Tool`] (one callable with a name, a description
//! and a JSON Schema for its input; [`tool_fn`] makes one from an async closure) and [`Toolkit`]
//! (a named group of tools with a lifecycle, whose list may change while it runs — MCP servers
//! are toolkits, in `skillet-toolkits`).
//!
//! Not here: the registry that resolves a skill's declared tools, the builtin tools and the
//! dispatch of a turn's tool calls (the engine's `tools` and `run`).

mod tool;
mod toolkit;

/// The image type of [`ToolOutput::images`].
pub use skillet_providers::{ImageInput, ImageSource};
pub use tool::{
    FnTool, Tool, ToolContext, ToolError, ToolOutput, idempotent, inline_tool_fn, tool_fn,
};
pub use toolkit::{Toolkit, ToolkitError, ToolkitStatus};
