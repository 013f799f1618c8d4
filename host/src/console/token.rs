//! The console's same-origin token: one random value per process, written into the page it
//! serves (`<meta name="skillet-console-token">`) and required as the `X-Skillet-Console-Token`
//! header on every console request that changes state (any method but `GET`/`HEAD` under
//! `/console/`: deciding an approval today).
//!
//! Why a token on top of the `Host`/`Origin` rule (`crate::origin_guard`): that rule relies on
//! the browser sending `Origin`, and an approval lets a gated tool run — the token makes the
//! decision depend on something only a script of this origin can read. Another site's page
//! cannot read the page (the same-origin policy; a rebinding name is refused by `Host`) and
//! cannot set a custom header on a cross-origin request without a CORS preflight, which this
//! server never grants. The token is not a credential: under `[auth]` the caller still needs its
//! key or token, and the page is public.
//!
//! Not here: the page itself (`super::assets`), who may decide what (`super::approvals`).

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ring::rand::SecureRandom;

/// The header the page sends the token in.
pub(crate) const HEADER: &str = "x-skillet-console-token";

/// One process's console token (32 random bytes, hex).
#[derive(Clone)]
pub(crate) struct ConsoleToken(Arc<str>);

impl std::fmt::Debug for ConsoleToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConsoleToken(..)")
    }
}

impl ConsoleToken {
    /// A fresh random token. Should the system's random source fail, the token is empty and
    /// matches nothing: every state change is then refused (logged as an error), never allowed.
    pub(crate) fn generate() -> ConsoleToken {
        let mut bytes = [0u8; 32];
        if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
            tracing::error!(
                "the console has no same-origin token (the system's random source failed): \
                 its approvals cannot be decided"
            );
            return ConsoleToken("".into());
        }
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        ConsoleToken(hex.into())
    }

    /// The value the page carries.
    pub(crate) fn value(&self) -> &str {
        &self.0
    }

    /// Whether `sent` is this token (compared in constant time).
    pub(crate) fn matches(&self, sent: &[u8]) -> bool {
        let own = self.0.as_bytes();
        !own.is_empty()
            && own.len() == sent.len()
            && own.iter().zip(sent).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

/// `router` with the token required on every request under `/console/` that may change state.
pub(crate) fn require(router: Router, token: ConsoleToken) -> Router {
    router.layer(axum::middleware::from_fn(
        move |request: Request, next: Next| {
            let token = token.clone();
            async move { check(&token, request, next).await }
        },
    ))
}

async fn check(token: &ConsoleToken, request: Request, next: Next) -> Response {
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    if reads || !request.uri().path().starts_with("/console/") {
        return next.run(request).await;
    }
    let sent = request.headers().get(HEADER).map(|v| v.as_bytes());
    if sent.is_some_and(|sent| token.matches(sent)) {
        return next.run(request).await;
    }
    tracing::warn!(target: "skillet::audit", path = %request.uri().path(),
        "console request refused: no or a wrong X-Skillet-Console-Token (reload the page)");
    let body = serde_json::json!({
        "error": "forbidden",
        "message": "this console request needs the page's X-Skillet-Console-Token header; \
                    reload the console page",
    });
    (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex_and_match_only_themselves() {
        let a = ConsoleToken::generate();
        let b = ConsoleToken::generate();
        assert_eq!(a.value().len(), 64);
        assert!(a.value().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.value(), b.value());
        assert!(a.matches(a.value().as_bytes()));
        assert!(!a.matches(b.value().as_bytes()));
        assert!(!a.matches(&a.value().as_bytes()[..63]));
        assert!(!a.matches(b""));
        assert_eq!(format!("{a:?}"), "ConsoleToken(..)");
        assert!(
            !ConsoleToken("".into()).matches(b""),
            "an empty token matches nothing"
        );
    }
}
