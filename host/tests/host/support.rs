//! A fake [`SkillService`] for the host's tests (no engine anywhere): skill `echo` answers with its arguments
//! after `delay_ms` (emitting a `status` and a `progress` event first), stops early when
//! cancelled, and any other name is `unknown_skill`. It lets the transports be tested over real
//! pipes and sockets independently of the run loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use skillet_core::card::{AgentCard, AgentSkill, CardError};
use skillet_core::events::{EventEmitter, EventSink};
use skillet_core::service::SkillService;
use skillet_protocol::{
    ErrorCode, ProtocolError, SkillCallRequest, SkillCallResponse, SkillDefinition,
    SkillDiscoverRequest, SkillDiscoverResponse, SkillResult,
};
use tokio_util::sync::CancellationToken;

/// The echo service; counts the calls that ran to completion.
#[derive(Default)]
pub struct EchoService {
    pub completed: AtomicUsize,
    pub cancelled: AtomicUsize,
}

pub fn echo_definition() -> SkillDefinition {
    serde_json::from_value(json!({
        "name": "echo", "version": "1.0.0", "description": "Echoes its arguments",
        "triggers": ["echo"], "status": "Published",
        "input_schema": {"type": "object"}, "output_schema": {},
        "when_to_use": "tests", "argument_hint": "anything", "source": "system",
        "category": "testing", "tags": ["test", "echo"]
    }))
    .expect("echo definition")
}

#[async_trait]
impl SkillService for EchoService {
    fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse {
        let skill = echo_definition();
        let tag_ok = request.filter_tags.is_empty()
            || request
                .filter_tags
                .iter()
                .any(|t| skill.tags.as_ref().is_some_and(|tags| tags.contains(t)));
        SkillDiscoverResponse::new(&request.id, if tag_ok { vec![skill] } else { vec![] })
    }

    async fn call(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> SkillCallResponse {
        if request.name != "echo" {
            return SkillCallResponse::rejected(
                &request.id,
                &request.name,
                ProtocolError::new(
                    ErrorCode::UnknownSkill,
                    format!("no skill {:?}", request.name),
                ),
            );
        }
        let emitter = EventEmitter::new(&request.id, events, 100);
        emitter.status("echoing");
        emitter.progress(50, "waiting");
        let delay = request
            .arguments
            .get("delay_ms")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let cancelled = tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(delay)) => false,
            () = cancel.cancelled() => true,
        };
        let (collected, truncated) = emitter.take_collected();
        let mut result = if cancelled {
            self.cancelled.fetch_add(1, Ordering::SeqCst);
            SkillResult::failure(ErrorCode::RuntimeError, "cancelled", delay)
        } else {
            self.completed.fetch_add(1, Ordering::SeqCst);
            SkillResult::success(Some(Value::Object(request.arguments.clone())), None, delay)
        };
        result.events = collected;
        result.truncated = truncated;
        SkillCallResponse::result(&request.id, &request.name, result)
    }

    fn agent_card(&self) -> Result<AgentCard, CardError> {
        // No URL of its own: the transport completes the card with where it listens.
        AgentCard::builder("echo host", "test", "0.1.0")
            .interface("", "A2E", "1.0")
            .default_input_modes(vec!["application/json".into()])
            .skill(AgentSkill {
                id: "echo".into(),
                name: "echo".into(),
                description: "Echoes".into(),
                tags: vec!["test".into()],
                examples: Vec::new(),
                input_modes: Vec::new(),
                output_modes: Vec::new(),
                security_requirements: Vec::new(),
            })
            .build()
    }
}

pub fn echo_service() -> Arc<EchoService> {
    Arc::new(EchoService::default())
}

/// GETs `url` and returns the JSON answer (panics on a transport error or a non-JSON body).
pub async fn get_json(client: &reqwest::Client, url: impl reqwest::IntoUrl) -> Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

/// POSTs `body` to `url` and returns the JSON answer (panics on a transport error or a
/// non-JSON body).
pub async fn post_json(
    client: &reqwest::Client,
    url: impl reqwest::IntoUrl,
    body: impl Into<reqwest::Body>,
) -> Value {
    client
        .post(url)
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
