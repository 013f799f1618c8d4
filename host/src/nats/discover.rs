//! The discover responder of a NATS worker: answers `skill/discover/req` on the discover
//! subject, in a queue group so one worker answers each request, with the skills the request's
//! identity may see (none for an identity that does not verify).
//!
//! Not here: calls (`worker`), who a header names (`identity`), the subject layout (`subjects`).

use async_nats::Client;
use bytes::Bytes;
use futures::StreamExt;

use super::error::NatsError;
use super::identity;
use super::subjects::DISCOVER_QUEUE;
use crate::auth::Caller;
use crate::core::HostCore;
use crate::endpoint::{Endpoint, Request};
use skillet_protocol::{ErrorCode, Message, ProtocolError, SkillCallResponse};

/// Subscribes to `subject` and answers its requests until the returned task is aborted.
pub(super) async fn spawn_responder(
    client: Client,
    subject: String,
    core: HostCore,
) -> Result<tokio::task::JoinHandle<()>, NatsError> {
    let mut requests = client
        .queue_subscribe(subject, DISCOVER_QUEUE.to_owned())
        .await
        .map_err(|e| NatsError::io("subscribe discover", e))?;
    Ok(tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            let Some(reply) = request.reply else {
                continue;
            };
            let answer = match Endpoint::parse_bytes(&request.payload) {
                Ok(Request::Discover(discover)) => {
                    let access = core.access().map(AsRef::as_ref);
                    let headers = request.headers.as_ref();
                    let response = match identity::discover_caller(access, headers).await {
                        Some(caller) => core.discover_as(&caller, &discover),
                        None => {
                            let mut none = core.discover_as(&Caller::Anonymous, &discover);
                            none.skills.clear();
                            none
                        }
                    };
                    Message::DiscoverResponse(response)
                }
                Ok(Request::Call(call)) => Message::CallResponse(SkillCallResponse::rejected(
                    call.id,
                    call.name,
                    ProtocolError::new(
                        ErrorCode::InvalidMessage,
                        "calls go to the JetStream call subjects, not to discover",
                    ),
                )),
                Err(rejection) => Message::CallResponse(*rejection),
            };
            let _ = client
                .publish(reply, Bytes::from(skillet_protocol::encode(&answer)))
                .await;
        }
    }))
}
