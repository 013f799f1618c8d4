//! When a run writes and reads its checkpoints (the executor's
//! [`CheckpointStore`](crate::checkpoint::CheckpointStore), when it has one and it covers the
//! call): the run loop calls in at two places of a turn, and a call starts from a checkpoint
//! when one of its id is stored.
//!
//! - **Written**: after a turn's model answer asked for tools, before they run (the calls are
//!   *in flight*), and after each completed turn (tools answered, or a repair asked for). A
//!   checkpoint over the store's bound is not written: the stored one is removed and a `log`
//!   says so once — such a run is not durable from then on. A store that fails is logged and
//!   the run goes on.
//! - **Read**, before the first turn: a checkpoint of this call (same skill, same arguments,
//!   same skill definition) continues the run — its turns are not sent to the model again, its
//!   tool results are not produced again, its events are kept and `seq` goes on, the deadline
//!   is what was left of it. Tool calls in flight are run again only when their tool is
//!   [idempotent](crate::tools::Tool::idempotent); every other one is answered with a tool error
//!   saying it may or may not have happened. A checkpoint that is corrupt, foreign or of
//!   another call is refused (a `log` warning says why) and the run starts at turn 1; so does a
//!   checkpoint of a skill whose definition changed since.
//! - **Finished**: when the call has its result the store is told (most remove the checkpoint).
//! - **Resume only**: a call the store marks [`CheckpointStore::resume_only`] (a task a
//!   restarted server found running) is never started again at turn 1: without a checkpoint it
//!   can continue from, it fails with a `runtime_error` saying why, before any model request.
//!
//! Not here: the format (`crate::checkpoint`), the turn itself (`agent`), the loop's side —
//! a checkpoint made of its state, one restored into it (`checkpointing`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::checkpoint::format::{CheckpointParts, call_hash, definition_hash};
use crate::checkpoint::{Checkpoint, CheckpointError, CheckpointStore};
use crate::events::{EventEmitter, EventSink};
use crate::protocol::{LogLevel, SkillCallRequest};
use crate::skill::RegisteredSkill;

/// One call's link to the store.
pub(crate) struct Durable<'a> {
    store: &'a dyn CheckpointStore,
    key: &'a str,
    /// The skill, its definition's hash and the call's hash, as a checkpoint names them.
    pub(super) skill: &'a str,
    pub(super) definition: String,
    pub(super) call: String,
    max_bytes: usize,
    /// Set once a checkpoint outgrew the bound: nothing more is written.
    stopped: AtomicBool,
}

/// What the store had for a call.
pub(crate) enum Loaded {
    /// Nothing: the run starts at turn 1.
    Fresh,
    /// A checkpoint of this call.
    Resume(Box<Checkpoint>),
    /// Something that cannot be resumed, and why (the run starts at turn 1).
    Refused(String),
}

impl<'a> Durable<'a> {
    /// The link for a manifest-skill call, when the executor has a store that covers it.
    pub(crate) fn for_call(
        store: Option<&'a Arc<dyn CheckpointStore>>,
        skill: &'a RegisteredSkill,
        request: &'a SkillCallRequest,
    ) -> Option<Self> {
        let store = store.map(Arc::as_ref).filter(|s| s.covers(request))?;
        Some(Durable {
            store,
            key: &request.id,
            skill: skill.compiled.name(),
            definition: definition_hash(&skill.compiled.to_wire()),
            call: call_hash(&request.name, &request.arguments),
            max_bytes: store.max_bytes(),
            stopped: AtomicBool::new(false),
        })
    }

    /// Reads and judges the call's stored checkpoint.
    pub(crate) async fn load(&self) -> Loaded {
        let bytes = match self.store.load(self.key).await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Loaded::Fresh,
            Err(e) => {
                tracing::warn!(req_id = %self.key, error = %e, "cannot read the call's checkpoint; starting at turn 1");
                return Loaded::Refused(format!("checkpoint not read ({e})"));
            }
        };
        let refused = |why: String| {
            tracing::warn!(req_id = %self.key, reason = %why, "checkpoint refused; starting at turn 1");
            Loaded::Refused(format!("checkpoint refused, starting at turn 1: {why}"))
        };
        let checkpoint = match Checkpoint::decode(&bytes) {
            Ok(checkpoint) => checkpoint,
            Err(e) => return refused(e.to_string()),
        };
        if checkpoint.skill != self.skill || checkpoint.call != self.call {
            return refused(
                CheckpointError::OtherCall(format!(
                    "written for skill `{}` with other arguments",
                    checkpoint.skill.chars().take(64).collect::<String>()
                ))
                .to_string(),
            );
        }
        if checkpoint.definition != self.definition {
            return refused(format!(
                "skill `{}` changed since its checkpoint of turn {} was written",
                self.skill, checkpoint.turn
            ));
        }
        Loaded::Resume(Box::new(checkpoint))
    }

    /// Writes `parts`, unless over the bound (then removes the stored one, once).
    pub(super) async fn save(&self, parts: &CheckpointParts<'_>, events: &EventEmitter) {
        if self.stopped.load(Ordering::Relaxed) {
            return;
        }
        let bytes = parts.encode();
        let result = if bytes.len() > self.max_bytes {
            self.stopped.store(true, Ordering::Relaxed);
            let why = format!(
                "the checkpoint of turn {} is {} bytes, over the bound of {}: no more checkpoints for this call",
                parts.turn,
                bytes.len(),
                self.max_bytes
            );
            tracing::warn!(req_id = %self.key, "{why}");
            events.log(LogLevel::Warn, why);
            self.store.remove(self.key).await
        } else {
            self.store.save(self.key, bytes).await
        };
        if let Err(e) = result {
            tracing::warn!(req_id = %self.key, error = %e, "checkpoint not written; the run goes on");
        }
    }

    /// Tells the store the call has its result.
    pub(crate) async fn finished(&self) {
        if let Err(e) = self.store.finished(self.key).await {
            tracing::debug!(req_id = %self.key, error = %e, "checkpoint not removed");
        }
    }
}

/// Why a call its store marks [resume-only](CheckpointStore::resume_only) is not run: it has
/// no checkpoint, a refused one, or is not checkpointed at all (`None`: run it).
pub(crate) fn not_resumed(
    store: Option<&Arc<dyn CheckpointStore>>,
    request: &SkillCallRequest,
    loaded: &Loaded,
) -> Option<String> {
    store.filter(|s| s.covers(request) && s.resume_only(request))?;
    match loaded {
        Loaded::Resume(_) => None,
        Loaded::Refused(why) => Some(format!(
            "not resumed after the restart: {}",
            why.replace(", starting at turn 1", "")
        )),
        Loaded::Fresh => Some(
            "not resumed after the restart: no checkpoint of this call was written (it had not \
             completed a turn, or its skill is not checkpointed); it was not started again"
                .to_owned(),
        ),
    }
}

/// The call's event emitter: a new one, or one continuing the checkpoint's events.
pub(crate) fn emitter(
    loaded: &mut Loaded,
    req_id: &str,
    live: Option<Arc<dyn EventSink>>,
    collect_cap: usize,
) -> EventEmitter {
    match loaded {
        Loaded::Resume(checkpoint) => EventEmitter::resumed(
            req_id,
            live,
            collect_cap,
            std::mem::take(&mut checkpoint.events),
        ),
        Loaded::Fresh | Loaded::Refused(_) => EventEmitter::new(req_id, live, collect_cap),
    }
}

/// The call's timeout: no more than what was left of it at the checkpoint.
pub(crate) fn timeout(loaded: &Loaded, timeout: std::time::Duration) -> std::time::Duration {
    match loaded {
        Loaded::Resume(checkpoint) => {
            timeout.min(std::time::Duration::from_millis(checkpoint.remaining_ms))
        }
        Loaded::Fresh | Loaded::Refused(_) => timeout,
    }
}

/// The text of the tool error answered for a non-idempotent call that was in flight.
pub(crate) fn interrupted_call_error(name: &str) -> String {
    format!(
        "the run was interrupted while `{name}` was running, and the tool is not marked \
         idempotent, so it was not run again: it may or may not have happened. Check its \
         effect before calling it again."
    )
}
