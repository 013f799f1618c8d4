//! The opening of a call that passed preflight: its link to the checkpoint store and what the
//! store had for it, its event emitter (continuing a checkpoint's events on a resume), its
//! [`RunState`] and its timeout.
//!
//! Why a step of its own: everything here is decided before the run starts and the same for
//! both ways a skill runs, and the resume-only refusal (`durable::not_resumed`) needs it before
//! any of the run is built.
//!
//! Not here: preflight's checks (`call`, `opening`), the run itself (`call_run`), how the call
//! ends (`ending`).

use std::sync::Arc;
use std::time::Duration;

use super::durable::{self, Durable, Loaded};
use super::executor::ExecutorInner;
use super::run_state::RunState;
use crate::events::{EventEmitter, EventSink};
use crate::protocol::SkillCallRequest;
use crate::skill::{Implementation, RegisteredSkill};

/// What a call opened with.
pub(super) struct Opened<'a> {
    /// The call's link to the checkpoint store: only manifest-skill calls a store covers have
    /// one.
    pub(super) durable: Option<Durable<'a>>,
    /// What the store had for the call (`Fresh` without a store).
    pub(super) loaded: Loaded,
    pub(super) events: EventEmitter,
    pub(super) state: RunState,
    /// The call's timeout: the request's, the skill's and the host's cap, no more than what
    /// was left of it at a checkpoint.
    pub(super) timeout: Duration,
    /// Whether the model's text streams: the call asked for it and its live sink, if any,
    /// passes text on.
    pub(super) stream: bool,
}

impl ExecutorInner {
    /// Opens `request`'s call of `skill`: loads its checkpoint, when it has a store, and makes
    /// its events, state and timeout. Events reach `sink` live only when the call streams.
    pub(super) async fn open<'a>(
        &'a self,
        skill: &'a RegisteredSkill,
        request: &'a SkillCallRequest,
        sink: Option<Arc<dyn EventSink>>,
    ) -> Opened<'a> {
        let stream = request.streaming && sink.as_ref().is_none_or(|sink| sink.forwards_text());
        let live = if request.streaming { sink } else { None };
        let durable = match skill.implementation {
            Implementation::Manifest => {
                Durable::for_call(self.checkpoints.as_ref(), skill, request)
            }
            Implementation::Native(_) => None,
        };
        let mut loaded = match &durable {
            Some(durable) => durable.load().await,
            None => Loaded::Fresh,
        };
        let state = RunState::new(
            crate::protocol::transcript_requested(&request.metadata),
            self.capture_content,
        );
        let events = durable::emitter(
            &mut loaded,
            &request.id,
            live,
            self.limits.event_collect_cap,
        );
        let timeout = durable::timeout(
            &loaded,
            self.limits
                .call_timeout(request.timeout, skill.compiled.spec.timeout_seconds),
        );
        Opened {
            durable,
            loaded,
            events,
            state,
            timeout,
            stream,
        }
    }
}
