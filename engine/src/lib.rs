//! # skillet-engine
//!
//! Runs *skills* — folders with a `SKILL.md` and JSON Schemas — for agent hosts.
//!
//! The crate is layered so data flows one way: a caller (a transport of `skillet-host`, the
//! `skillet` binary, or a Rust program) hands an A2E call ([`protocol`], re-exported from
//! `skillet-protocol`) to the run loop ([`run`]) through [`service::SkillService`]; the loop looks
//! the skill up ([`skill`]), renders the instructions ([`template`]), validates data
//! ([`schema`]), talks to a model through `skillet-providers`, and dispatches the tools the skill
//! declared ([`tools`], [`files`], [`sandboxed`]). A lower layer never imports a higher one.
//!
//! Not here: transports and their protocols (`skillet-host`), toolkits reached over MCP
//! (`skillet-toolkits`), the command line and `skillet.toml` (`skillet`).

pub use skillet_protocol as protocol;

pub mod deadline;
pub mod eval;
pub mod events;
pub mod files;
pub mod handler;
pub mod run;
pub mod sandboxed;
pub mod schema;
pub mod secrets;
pub mod service;
pub mod skill;
pub mod telemetry;
pub mod template;
pub mod tools;
