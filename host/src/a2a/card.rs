//! The Agent Card with the A2A bindings on it: [`A2aCardService`] wraps the engine's
//! service and completes its card — the JSON-RPC interface first (preferred), the HTTP+JSON
//! interface (`rest`, at the JSON-RPC URL + `/rest`) second, the gRPC interface (`grpc`, at the
//! JSON-RPC URL's `host:port`, as A2A §4.4.6 asks of gRPC) third, the A2E interface kept after
//! them, `capabilities` saying what this binding does (streaming yes; push
//! notifications when `[a2a] push` is on; the extended card no) and the configured `provider`.
//!
//! Calls and discovery pass through unchanged; only the card differs. Building the skills part
//! of the card is the `skill` module's.

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use skillet_core::card::{AgentCapabilities, AgentCard, AgentInterface, AgentProvider, CardError};
use skillet_core::events::EventSink;
use skillet_core::service::SkillService;
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

/// The `protocolBinding` of the HTTP+JSON (REST) interface.
pub(crate) const REST_BINDING: &str = "HTTP+JSON";

/// The `protocolBinding` of the gRPC interface.
pub(crate) const GRPC_BINDING: &str = "GRPC";

/// The A2A protocol version this binding speaks.
pub(crate) const A2A_PROTOCOL_VERSION: &str = "1.0";

/// A service whose card advertises the A2A JSON-RPC binding at `jsonrpc_url`.
pub struct A2aCardService {
    inner: Arc<dyn SkillService>,
    jsonrpc_url: String,
    provider: Option<A2aProvider>,
    push_notifications: bool,
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
            push_notifications: false,
        }
    }

    /// The card says `capabilities.pushNotifications: on`.
    pub fn with_push_notifications(mut self, on: bool) -> A2aCardService {
        self.push_notifications = on;
        self
    }
}

/// `card` with the JSON-RPC interface first, the HTTP+JSON one at `url` + `/rest` second
/// (where `super::rest` serves it below the JSON-RPC path), the gRPC one at `url`'s
/// `host:port` third (`super::grpc` serves it on the same listener), the capabilities of this
/// binding (push notifications as `push` says) and `provider`.
pub(crate) fn with_jsonrpc(
    mut card: AgentCard,
    url: &str,
    provider: Option<&A2aProvider>,
    push: bool,
) -> AgentCard {
    card.supported_interfaces.retain(|i| {
        ![JSONRPC_BINDING, REST_BINDING, GRPC_BINDING].contains(&i.protocol_binding.as_str())
    });
    let rest_url = format!("{}/rest", url.trim_end_matches('/'));
    let mut interfaces = vec![(url, JSONRPC_BINDING), (rest_url.as_str(), REST_BINDING)];
    let grpc_url = grpc_address(url);
    if let Some(grpc_url) = &grpc_url {
        interfaces.push((grpc_url.as_str(), GRPC_BINDING));
    }
    for (index, (url, binding)) in interfaces.into_iter().enumerate() {
        card.supported_interfaces.insert(
            index,
            AgentInterface {
                url: url.to_owned(),
                protocol_binding: binding.to_owned(),
                protocol_version: A2A_PROTOCOL_VERSION.to_owned(),
            },
        );
    }
    card.capabilities = AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(push),
        extended_agent_card: Some(false),
    };
    if let Some(provider) = provider {
        card.provider = Some(AgentProvider {
            organization: provider.organization.clone(),
            url: provider.url.clone(),
        });
    }
    card
}

/// The gRPC address of the server whose JSON-RPC endpoint is `url`: its `host:port`, the port
/// implied by the scheme when the URL names none. `None` for a URL with no host.
fn grpc_address(url: &str) -> Option<String> {
    let uri: axum::http::Uri = url.parse().ok()?;
    let host = uri.host()?;
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    Some(format!("{host}:{port}"))
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

    async fn call_with_approver(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
        approver: Arc<dyn skillet_core::approval::Approver>,
    ) -> SkillCallResponse {
        self.inner
            .call_with_approver(request, events, cancel, approver)
            .await
    }

    fn is_runnable(&self, name: &str) -> bool {
        self.inner.is_runnable(name)
    }

    fn prompt(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<skillet_core::service::SkillPrompt, skillet_protocol::ProtocolError> {
        self.inner.prompt(name, arguments)
    }

    fn skill_folder(&self, name: &str) -> Option<Arc<dyn skillet_core::folder::ServedFolder>> {
        self.inner.skill_folder(name)
    }

    fn check_input(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), Vec<skillet_core::schema::Violation>> {
        self.inner.check_input(name, arguments)
    }

    fn agent_card(&self) -> Result<AgentCard, CardError> {
        self.inner.agent_card().map(|card| {
            with_jsonrpc(
                card,
                &self.jsonrpc_url,
                self.provider.as_ref(),
                self.push_notifications,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_core::card::AgentSkill;

    #[test]
    fn the_jsonrpc_interface_comes_first_then_http_json_then_grpc_and_a2e_stays() {
        let card = AgentCard::builder("n", "d", "1")
            .interface("http://h/a2e", "A2E", "1.0")
            .skill(AgentSkill {
                id: "s".into(),
                name: "s".into(),
                description: "d".into(),
                tags: vec!["t".into()],
                examples: Vec::new(),
                input_modes: Vec::new(),
                output_modes: Vec::new(),
                security_requirements: Vec::new(),
            })
            .build()
            .unwrap();
        let provider = A2aProvider {
            organization: "Org".into(),
            url: "https://org".into(),
        };
        let card = with_jsonrpc(card, "http://h/a2a", Some(&provider), false);
        let card = serde_json::to_value(card).unwrap();
        assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
        assert_eq!(
            card["supportedInterfaces"][1]["protocolBinding"],
            "HTTP+JSON"
        );
        assert_eq!(card["supportedInterfaces"][1]["url"], "http://h/a2a/rest");
        assert_eq!(card["supportedInterfaces"][2]["protocolBinding"], "GRPC");
        assert_eq!(card["supportedInterfaces"][2]["url"], "h:80");
        assert_eq!(card["supportedInterfaces"][3]["protocolBinding"], "A2E");
        assert_eq!(card["capabilities"]["pushNotifications"], false);
        assert_eq!(card["provider"]["organization"], "Org");
    }

    #[test]
    fn the_grpc_address_is_the_host_and_port_of_the_json_rpc_url() {
        assert_eq!(
            grpc_address("http://127.0.0.1:8080/a2a").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            grpc_address("https://agent.example/a2a").as_deref(),
            Some("agent.example:443")
        );
        assert_eq!(
            grpc_address("http://[::1]:9/a2a").as_deref(),
            Some("[::1]:9")
        );
        assert_eq!(grpc_address("/a2a"), None);
    }
}
