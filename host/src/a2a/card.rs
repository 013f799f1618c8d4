//! The Agent Card with the A2A JSON-RPC binding on it: [`A2aCardService`] wraps the engine's
//! service and completes its card — the JSON-RPC interface first (preferred), the A2E interface
//! kept after it, `capabilities` saying what this binding does (streaming yes; push
//! notifications and the extended card no) and the configured `provider`.
//!
//! Calls and discovery pass through unchanged; only the card differs. Building the skills part
//! of the card is the `skill` module's.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use skillet_engine::events::EventSink;
use skillet_engine::service::SkillService;
use skillet_protocol::{
    SkillCallRequest, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse,
};

/// The card's `provider`: who runs this agent.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct A2aProvider {
    /// The organization's name.
    pub organization: String,
    /// The organization's website.
    pub url: String,
}

/// The `protocolBinding` of the JSON-RPC interface.
pub(crate) const JSONRPC_BINDING: &str = "JSONRPC";

/// The A2A protocol version this binding speaks.
pub(crate) const A2A_PROTOCOL_VERSION: &str = "1.0";

/// A service whose card advertises the A2A JSON-RPC binding at `jsonrpc_url`.
pub struct A2aCardService {
    inner: Arc<dyn SkillService>,
    jsonrpc_url: String,
    provider: Option<A2aProvider>,
}

impl A2aCardService {
    /// Wraps `inner`.
    pub fn new(
        inner: Arc<dyn SkillService>,
        jsonrpc_url: impl Into<String>,
        provider: Option<A2aProvider>,
    ) -> A2aCardService {
        A2aCardService {
            inner,
            jsonrpc_url: jsonrpc_url.into(),
            provider,
        }
    }
}

/// `card` with the JSON-RPC interface first, the capabilities of this binding and `provider`.
/// A card that is an error report (`{"error": ...}`) is returned unchanged.
pub(crate) fn with_jsonrpc(mut card: Value, url: &str, provider: Option<&A2aProvider>) -> Value {
    let Some(object) = card.as_object_mut() else {
        return card;
    };
    if object.contains_key("error") {
        return card;
    }
    let interface = json!({
        "url": url,
        "protocolBinding": JSONRPC_BINDING,
        "protocolVersion": A2A_PROTOCOL_VERSION,
    });
    let mut interfaces = vec![interface];
    if let Some(Value::Array(existing)) = object.remove("supportedInterfaces") {
        interfaces.extend(
            existing.into_iter().filter(|i| {
                i.get("protocolBinding").and_then(Value::as_str) != Some(JSONRPC_BINDING)
            }),
        );
    }
    object.insert("supportedInterfaces".to_owned(), Value::Array(interfaces));
    object.insert(
        "capabilities".to_owned(),
        json!({"streaming": true, "pushNotifications": false, "extendedAgentCard": false}),
    );
    if let Some(provider) = provider {
        object.insert(
            "provider".to_owned(),
            json!({"organization": provider.organization, "url": provider.url}),
        );
    }
    card
}

#[async_trait]
impl SkillService for A2aCardService {
    fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse {
        self.inner.discover(request)
    }

    async fn call(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> SkillCallResponse {
        self.inner.call(request, events, cancel).await
    }

    fn is_runnable(&self, name: &str) -> bool {
        self.inner.is_runnable(name)
    }

    fn agent_card(&self) -> Value {
        with_jsonrpc(
            self.inner.agent_card(),
            &self.jsonrpc_url,
            self.provider.as_ref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jsonrpc_interface_comes_first_and_a2e_stays() {
        let card = json!({"name": "n", "supportedInterfaces": [
            {"url": "http://h/a2e", "protocolBinding": "A2E", "protocolVersion": "1.0"}]});
        let provider = A2aProvider {
            organization: "Org".into(),
            url: "https://org".into(),
        };
        let card = with_jsonrpc(card, "http://h/a2a", Some(&provider));
        assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
        assert_eq!(card["supportedInterfaces"][1]["protocolBinding"], "A2E");
        assert_eq!(card["capabilities"]["pushNotifications"], false);
        assert_eq!(card["provider"]["organization"], "Org");
        let error = json!({"error": "agent card: no skills"});
        assert_eq!(with_jsonrpc(error.clone(), "u", None), error);
    }
}
