//! Durable runs: a [`Checkpoint`] of a manifest skill's run after each completed turn, kept in
//! the host's [`CheckpointStore`] (`skillet-core`'s contract, re-exported), so that a call
//! redelivered to another process continues at the turn it reached instead of paying for every
//! model turn and re-running every tool again.
//!
//! Here: the checkpoint's content and byte format (`format`: versioned, compact JSON, bounded,
//! redacted). Not here: the store trait (`skillet_core::checkpoint`), when the run loop writes
//! and reads checkpoints (`run::durable`).
//!
//! # What a checkpoint holds
//! The skill's name and a SHA-256 of its definition (a skill changed since is not resumed), a
//! SHA-256 of the call (skill name and arguments: a checkpoint of another call under the same id
//! is foreign), the turns completed, the conversation after the system prompt (user, assistant
//! and tool-result messages as the model saw them), the tool calls in flight (asked for by the
//! last turn, not answered yet), whether the answer is due, each turn's token usage, the events
//! so far (their `seq` continues on resume), the last model output and the deadline's remaining
//! budget. It never holds the provider's configuration or credentials, and its text passes
//! through the process's redaction set (`skillet_core::secrets`) before it is written: a secret the
//! config names that a tool or the model quoted is written as `[REDACTED]`. It does hold what
//! `[telemetry] capture_content` keeps off spans — model answers, tool arguments and results —
//! because a run cannot continue without them; a store is as sensitive as the conversation.

pub(crate) mod format;

pub(crate) use format::FORMAT_VERSION;
pub use format::{Checkpoint, CheckpointError, FORMAT};
pub use skillet_core::checkpoint::{CheckpointStore, CheckpointStoreError, MemoryCheckpoints};
