//! # skillet-core
//!
//! The contracts the engine, the doors and the toolkits share, so that a door (`skillet-host`)
//! and a toolkit (`skillet-toolkits`) depend on this small crate and `skillet-protocol`, never
//! on the engine that runs skills: the composition root (the `skillet` binary, or a Rust
//! program) wires the engine in behind [`service::SkillService`] and [`workbench::Workbench`].
//!
//! - [`service`]: [`service::SkillService`], what a door hands calls to.
//! - [`events`]: the live events of a call ([`events::EventSink`], [`events::EventEmitter`]).
//! - [`approval`]: who may approve a tool call, and how a door asks a person.
//! - [`deadline`], [`checkpoint`]: a call's time limit; a run's durable checkpoints and their
//!   store.
//! - [`tools`]: what a skill may call ([`tools::Tool`], [`tools::Toolkit`]).
//! - [`folder`], [`manifest`]: a skill folder as a host serves it; `SKILL.md`'s outer shape.
//! - [`card`]: the A2A Agent Card; [`schema`]: how broken input is reported.
//! - [`secrets`], [`telemetry`]: redaction of known secrets; metrics and trace continuation.
//! - [`workbench`]: what a console asks of the engine for a skill's author.
//!
//! Not here: running a skill (`skillet-engine`), the wires to models (`skillet-providers`),
//! the A2E messages (`skillet-protocol`), the doors (`skillet-host`).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub use skillet_protocol as protocol;

pub mod approval;
pub mod card;
pub mod checkpoint;
pub mod deadline;
pub mod events;
pub mod folder;
pub mod manifest;
pub mod schema;
pub mod secrets;
pub mod service;
pub mod telemetry;
pub mod tools;
pub mod workbench;
