//! Tools and toolkits a skill may use, as the host provides them. The traits are
//! `skillet-core`'s (`skillet_core::tools`), re-exported here.
//!
//! - [`Tool`]: one callable with a name, a description and a JSON Schema for its input.
//!   [`tool_fn`] makes one from an async closure in one line ([`inline_tool_fn`] for short,
//!   non-blocking work that runs on the call's own task).
//!   For typed arguments with a generated input schema, use [`crate::tool_fn`] (the facade's).
//! - [`Toolkit`]: a named group of tools with a lifecycle (start, shutdown) whose tool list may
//!   change while it runs (MCP servers are toolkits).
//! - [`ToolRegistry`]: what the host registered; resolves a skill's declared tools and toolkits
//!   into the [`ToolSet`] offered to the model, with provider-safe names ([`provider_safe_name`]).
//! - [`builtin`]: small deterministic tools the `skillet` binary registers for the bundled skills.
//!
//! Dispatching a turn's tool calls (validation, concurrency, timeouts) is the run loop's job and
//! lives in `run`; this module only describes what can be called.

pub mod builtin;
pub(crate) mod names;
mod registry;

pub use names::sanitize as provider_safe_name;
pub use registry::{RegistryError, ResolvedTool, ToolRegistry, ToolSet, ToolSource};
pub use skillet_core::tools::{
    FnTool, ImageInput, ImageSource, Tool, ToolContext, ToolError, ToolOutput, Toolkit,
    ToolkitError, ToolkitStatus, idempotent, inline_tool_fn, tool_fn,
};
