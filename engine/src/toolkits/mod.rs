//! Toolkits the host configures from outside the process: today, MCP servers ([`mcp`]).
//!
//! The traits they implement ([`crate::tools::Toolkit`], [`crate::tools::Tool`]) and the registry
//! that offers their tools to a model live in `tools`; this module only connects to the outside
//! world and maps it onto those traits.

pub mod mcp;
