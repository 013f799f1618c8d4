//! The typed facade (`skillet_engine::Skillet`) end to end: runs against mock-llm over real
//! sockets and against Rust providers in process, every `SkillError` kind, typed input and
//! output, your own providers by name, typed tools with generated schemas, streaming, and the
//! build errors.

#[path = "../support/mod.rs"]
mod support;

mod common;

mod build;
mod errors;
mod in_memory;
mod providers;
mod runs;
mod streaming;
mod typed_tools;
