//! # skillet-engine
//!
//! Runs *skills* — folders with a `SKILL.md` and JSON Schemas — for agent hosts.
//!
//! The crate is layered so data flows one way: a transport (`host`) decodes an A2E message
//! (`protocol`), looks the skill up (`skill`), and hands the call to the run loop (`run`), which
//! renders the instructions (`template`), validates data (`schema`), talks to a model through
//! `skillet-providers`, and dispatches the tools the skill declared (`tools`, `toolkits`,
//! `sandboxed`). A lower layer never imports a higher one.

pub mod config;
pub mod deadline;
pub mod eval;
pub mod events;
pub mod files;
pub mod handler;
pub mod host;
pub mod protocol;
pub mod run;
pub mod sandboxed;
pub mod schema;
pub mod secrets;
pub mod service;
pub mod skill;
pub mod telemetry;
pub mod template;
pub mod toolkits;
pub mod tools;
