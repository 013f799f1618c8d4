//! # skillet-toolkits
//!
//! Toolkits the host configures from outside the process: today, MCP servers ([`mcp`]).
//!
//! The traits they implement ([`skillet_engine::tools::Toolkit`], [`skillet_engine::tools::Tool`]) and the registry
//! that offers their tools to a model live in the engine's `tools`; this crate only connects to the outside
//! world and maps it onto those traits.

#![warn(missing_docs)]

pub mod mcp;
