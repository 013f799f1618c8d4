//! [`CallRecorder`]: what the host core tells about every call it answered, for a history
//! (the web console's, `crate::console::history`) — without the core knowing who listens.
//!
//! The core calls [`CallRecorder::record`] once per admitted call, on the call's task, right
//! before the answer goes out; an implementation must not block (hand the record to a queue).
//!
//! Not here: storing records (the console's history), deciding what content to keep (the
//! recorder's own rule).

use std::sync::Arc;

use serde_json::{Map, Value};
use skillet_protocol::{SkillCallRequest, SkillCallResponse};

/// The door a call came through, as a history shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Door {
    /// The web console's page (an A2E call over HTTP carrying `X-Skillet-Console`).
    Console,
    /// A2E, over HTTP (`POST /a2e`) or stdio.
    A2e,
    /// MCP, over HTTP or stdio.
    Mcp,
    /// A2A.
    A2a,
    /// NATS.
    Nats,
}

impl Door {
    /// Every door, in the order a history lists them.
    pub const ALL: [Door; 5] = [Door::Console, Door::A2e, Door::Mcp, Door::A2a, Door::Nats];

    /// Its name as stored and filtered on: `console`, `a2e`, `mcp`, `a2a` or `nats`.
    pub fn as_str(self) -> &'static str {
        match self {
            Door::Console => "console",
            Door::A2e => "a2e",
            Door::Mcp => "mcp",
            Door::A2a => "a2a",
            Door::Nats => "nats",
        }
    }

    /// The door named `name` ([`Door::as_str`]); `None` for any other text.
    pub fn parse(name: &str) -> Option<Door> {
        Door::ALL.into_iter().find(|door| door.as_str() == name)
    }
}

/// One finished call: who asked, what, and the one answer it got.
#[derive(Debug)]
pub struct FinishedCall<'a> {
    /// The call's id (the request's `id`).
    pub req_id: &'a str,
    /// The skill asked for.
    pub skill: &'a str,
    /// The caller's id (`local`, `anonymous` or an identity id; never a secret).
    pub caller: &'a str,
    /// The door it came through; `None` when the door that admitted it did not say.
    pub door: Option<Door>,
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

/// What the core keeps of an admitted call for its recorder until the call answers.
pub(crate) struct PendingRecord {
    recorder: Arc<dyn CallRecorder>,
    arguments: Map<String, Value>,
    model_override: Option<String>,
    caller: String,
    door: Option<Door>,
    started_at: f64,
}

impl PendingRecord {
    /// Keeps what `recorder` will need of `request` (admitted now, from `caller` through
    /// `door`).
    pub(crate) fn new(
        recorder: &Arc<dyn CallRecorder>,
        request: &SkillCallRequest,
        caller: &str,
        door: Option<Door>,
    ) -> PendingRecord {
        PendingRecord {
            recorder: Arc::clone(recorder),
            arguments: request.arguments.clone(),
            model_override: request
                .llm_override
                .as_ref()
                .and_then(|o| o.provider_config.as_ref())
                .and_then(|c| c.get("model"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            caller: caller.to_owned(),
            door,
            started_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        }
    }

    /// Hands the call and its `response` to the recorder.
    pub(crate) fn finish(self, response: &SkillCallResponse) {
        self.recorder.record(FinishedCall {
            req_id: &response.req_id,
            skill: &response.name,
            caller: &self.caller,
            door: self.door,
            arguments: &self.arguments,
            model_override: self.model_override.as_deref(),
            started_at: self.started_at,
            response,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    use crate::core::HostCore;
    use skillet_core::service::SkillService;
    use skillet_protocol::{SkillDiscoverRequest, SkillDiscoverResponse, SkillResult};
    use tokio_util::sync::CancellationToken;

    struct Echo;

    #[async_trait::async_trait]
    impl SkillService for Echo {
        fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse {
            SkillDiscoverResponse::new(&request.id, vec![])
        }

        async fn call(
            &self,
            request: SkillCallRequest,
            _: Option<Arc<dyn skillet_core::events::EventSink>>,
            _: CancellationToken,
        ) -> SkillCallResponse {
            let data = Some(Value::Object(request.arguments.clone()));
            SkillCallResponse::result(
                request.id,
                request.name,
                SkillResult::success(data, None, 1),
            )
        }

        fn agent_card(
            &self,
        ) -> Result<skillet_core::card::AgentCard, skillet_core::card::CardError> {
            Err(skillet_core::card::CardError::NoSkills)
        }
    }

    #[derive(Default)]
    struct Seen(Mutex<Vec<(String, String, String, Value)>>);

    impl CallRecorder for Seen {
        fn record(&self, call: FinishedCall<'_>) {
            self.0.lock().unwrap().push((
                call.req_id.to_owned(),
                call.skill.to_owned(),
                call.caller.to_owned(),
                Value::Object(call.arguments.clone()),
            ));
        }
    }

    #[tokio::test]
    async fn the_core_tells_its_recorder_about_every_answered_call_before_the_answer() {
        let core = HostCore::new(Arc::new(Echo), 4);
        let seen = Arc::new(Seen::default());
        assert!(core.set_recorder(Arc::clone(&seen) as Arc<dyn CallRecorder>));
        assert!(!core.set_recorder(Arc::new(Seen::default())), "set once");
        let scope = core.scope();
        let mut arguments = Map::new();
        arguments.insert("text".into(), Value::from("hi"));
        let request = SkillCallRequest::new("echo", arguments);
        let id = request.id.clone();
        let admitted = scope
            .admit_as(&crate::auth::Caller::Anonymous, &request)
            .unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let observed = Arc::clone(&seen);
        core.spawn_call(admitted, request, None, move |response| {
            // Recorded before the answer goes out.
            let recorded = observed.0.lock().unwrap().len();
            let _ = tx.send((response, recorded));
        });
        let (response, recorded_before_answer) = rx.await.unwrap();
        assert_eq!(recorded_before_answer, 1);
        assert_eq!(response.req_id, id);
        let seen = seen.0.lock().unwrap();
        assert_eq!(
            seen[0],
            (
                id,
                "echo".to_owned(),
                "anonymous".to_owned(),
                serde_json::json!({"text": "hi"})
            )
        );
    }
}
