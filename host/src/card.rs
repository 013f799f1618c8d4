//! The A2A Agent Card as the host serves it: the service's typed card (built from the registry
//! and checked against the A2A rules a client relies on — seed `001`: at least one skill, every
//! skill with non-empty `tags`, the default modes present — by the engine's `skill::a2a`),
//! completed with where this host listens, and written as JSON only by the HTTP handler.
//!
//! The HTTP answer is cacheable ([`card_response`]): `Cache-Control: public, max-age=300` and an
//! `ETag` (a hash of the exact body), so a client revalidates with `If-None-Match` and gets
//! `304 Not Modified` with no body while the card is unchanged (a hot reload that changes the
//! skills changes the tag). An answer without a valid card is `no-store` and has no tag.
//!
//! Building and checking the card is not done here; this module only adds the transport's URL
//! and writes the answer.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use skillet_core::card::{AgentCard, AgentInterface, CardError};

/// How long a client may use a fetched card without asking again.
pub(crate) const CARD_CACHE_CONTROL: &str = "public, max-age=300";

/// The `protocolBinding` this host advertises for its `POST /a2e` endpoint. A2A v1.0 leaves the
/// binding an open string; the core bindings (`JSONRPC`, `GRPC`, `HTTP+JSON`) are A2A itself,
/// which this endpoint does not speak, so it names the protocol it does speak.
pub(crate) const A2E_BINDING: &str = "A2E";

/// Returns `card` with its A2E interface at `a2e_url` when the card names no usable interface
/// yet (none, or only ones without a URL) and `a2e_url` is known.
pub(crate) fn complete_card(mut card: AgentCard, a2e_url: Option<&str>) -> AgentCard {
    let Some(url) = a2e_url else {
        return card;
    };
    if card.supported_interfaces.iter().all(|i| i.url.is_empty()) {
        card.supported_interfaces
            .retain(|i| i.protocol_binding != A2E_BINDING);
        card.supported_interfaces.insert(
            0,
            AgentInterface {
                url: url.to_owned(),
                protocol_binding: A2E_BINDING.to_owned(),
                protocol_version: "1.0".to_owned(),
            },
        );
    }
    card
}

/// The card as the HTTP handler writes it: the card's JSON, or `{"error": "agent card: …"}`
/// when there is no valid card (the only place a card becomes JSON on the way out).
pub(crate) fn card_json(card: Result<AgentCard, CardError>) -> serde_json::Value {
    match card.map(serde_json::to_value) {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => serde_json::json!({"error": format!("agent card: {e}")}),
        Err(e) => serde_json::json!({"error": format!("agent card: {e}")}),
    }
}

/// The HTTP answer for `card` to a request with `request_headers`: the card's JSON with
/// `Cache-Control` and `ETag`, or `304` with no body when `If-None-Match` names the current tag.
pub(crate) fn card_response(
    card: Result<AgentCard, CardError>,
    request_headers: &HeaderMap,
) -> Response {
    let valid = card.is_ok();
    let body = card_json(card).to_string();
    if !valid {
        let mut response = Response::new(Body::from(body));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return response;
    }
    let tag = entity_tag(body.as_bytes());
    let unchanged = request_headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| names_tag(v, &tag));
    let mut response = if unchanged {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        let mut response = Response::new(Body::from(body));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CARD_CACHE_CONTROL),
    );
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    response
}

/// A strong entity tag for `body`: the first 128 bits of its SHA-256, quoted.
fn entity_tag(body: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, body);
    let hex: String = digest.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("\"{hex}\"")
}

/// Whether an `If-None-Match` value (`*` or a list of tags, weak or strong) names `tag`; the
/// comparison is weak (RFC 9110 §13.1.2).
fn names_tag(if_none_match: &str, tag: &str) -> bool {
    if_none_match.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == tag
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_core::card::AgentSkill;

    fn card(url: &str) -> AgentCard {
        AgentCard::builder("n", "d", "1")
            .interface(url, A2E_BINDING, "1.0")
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
            .unwrap()
    }

    #[test]
    fn the_a2e_interface_is_added_only_when_the_card_names_none() {
        let completed = complete_card(card(""), Some("http://127.0.0.1:1/a2e"));
        assert_eq!(
            completed.supported_interfaces[0].url,
            "http://127.0.0.1:1/a2e"
        );
        assert_eq!(completed.supported_interfaces.len(), 1);
        let own = card("https://mine");
        assert_eq!(complete_card(own.clone(), Some("http://other")), own);
    }

    #[test]
    fn a_card_that_cannot_be_made_is_written_as_an_error() {
        let value = card_json(Err(CardError::NoSkills));
        assert_eq!(
            value["error"],
            "agent card: an Agent Card needs at least one skill"
        );
        assert_eq!(card_json(Ok(card("u")))["skills"][0]["id"], "s");
    }

    #[test]
    fn if_none_match_names_the_tag_in_any_of_its_forms() {
        let tag = entity_tag(b"{}");
        assert!(names_tag(&tag, &tag));
        assert!(names_tag(&format!("\"other\", W/{tag}"), &tag));
        assert!(names_tag("*", &tag));
        assert!(!names_tag("\"other\"", &tag));
        assert_ne!(entity_tag(b"{}"), entity_tag(b"{ }"));
    }
}
