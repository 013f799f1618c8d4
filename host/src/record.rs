//! [`CallRecorder`]: what the host core tells about every call it answered, for a history
//! (the web console's, `crate::console::history`) — without the core knowing who listens.
//!
//! The core calls [`CallRecorder::record`] once per admitted call, on the call's task, right
//! before the answer goes out; an implementation must not block (hand the record to a queue).
//!
//! Not here: storing records (the console's history), deciding what content to keep (the
//! recorder's own rule).

use serde_json::{Map, Value};
use skillet_protocol::SkillCallResponse;

/// One finished call: who asked, what, and the one answer it got.
#[derive(Debug)]
pub struct FinishedCall<'a> {
    /// The call's id (the request's `id`).
    pub req_id: &'a str,
    /// The skill asked for.
    pub skill: &'a str,
    /// The caller's id (`local`, `anonymous` or an identity id; never a secret).
    pub caller: &'a str,
    /// The arguments it was called with.
    pub arguments: &'a Map<String, Value>,
    /// The model an `llm_override` asked for, if any.
    pub model_override: Option<&'a str>,
    /// When it was admitted: seconds since the Unix epoch.
    pub started_at: f64,
    /// Its answer.
    pub response: &'a SkillCallResponse,
}

/// Hears about every call the core answered. Must return at once (no I/O on the caller).
pub trait CallRecorder: Send + Sync {
    /// One call answered.
    fn record(&self, call: FinishedCall<'_>);
}
