//! Each `/mcp` session belongs to the identity that opened it: the middleware
//! [`refuse_other_identities`] records who sent the `initialize` whose answer carried a new
//! `Mcp-Session-Id`, and answers any later request naming that session from another identity
//! (or naming a session it never saw) as rmcp answers an unknown session — HTTP 404 `Not Found:
//! Session not found` (a `DELETE`: 204, closing nothing) — before rmcp or a handler sees it. A
//! `DELETE` of one's own session is answered 204 too (rmcp says 202, which the MCP SDKs log as
//! "Session termination failed": they take 200 or 204).
//!
//! Why 404 and not 403: the MCP transport tells a client that gets 404 for its session to start
//! a new one, which is what a client whose identity changed should do, and the answer is the
//! same as for an id that does not exist, so a guessed or leaked id tells its holder nothing.
//! A refusal of a known session is one `skillet::audit` line naming the identity, never the
//! session id (which is a bearer of the session: logged at debug at most).
//!
//! Without `[auth]` every caller is the same (anonymous) identity, so nothing changes there.
//!
//! Not here: who the caller is (`crate::auth::http`), the session caps (`limits`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::SessionId;

use super::limits::{BoundedSessions, SESSION_HEADER};
use crate::auth::http::caller_of;

/// Which identity opened each live session.
#[derive(Debug, Default)]
pub(crate) struct SessionOwners(Mutex<HashMap<SessionId, Owner>>);

#[derive(Debug)]
struct Owner {
    identity: String,
    bound_at: Instant,
}

impl SessionOwners {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Owner>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `identity` opened session `id`.
    fn bind(&self, id: SessionId, identity: &str) {
        let owner = Owner {
            identity: identity.to_owned(),
            bound_at: Instant::now(),
        };
        self.lock().insert(id, owner);
    }

    /// Whether session `id` was opened by `identity`.
    fn is_owned_by(&self, id: &SessionId, identity: &str) -> Option<bool> {
        self.lock().get(id).map(|owner| owner.identity == identity)
    }

    /// Forgets the sessions that were not `live` when they were looked up at `seen_at` (one
    /// bound since may not have been in that list yet, and is kept).
    pub(crate) fn retain_live(&self, live: &[SessionId], seen_at: Instant) {
        self.lock()
            .retain(|id, owner| owner.bound_at >= seen_at || live.contains(id));
    }

    /// Forgets session `id` (closed).
    pub(crate) fn forget(&self, id: &SessionId) {
        self.lock().remove(id);
    }

    /// Sessions known now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The middleware of `/mcp` that binds sessions to identities (see the module doc).
pub(crate) async fn refuse_other_identities(
    sessions: Arc<BoundedSessions>,
    request: Request,
    next: Next,
) -> Response {
    let caller = caller_of(request.extensions());
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .map(|value| value.to_str().ok().map(|id| SessionId::from(id.to_owned())));
    let Some(named) = named else {
        let response = next.run(request).await;
        if let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            sessions
                .owners()
                .bind(SessionId::from(id.to_owned()), caller.id());
        }
        return response;
    };
    let owned = named.and_then(|id| sessions.owners().is_owned_by(&id, caller.id()));
    match owned {
        Some(true) => {
            let closing = request.method() == http::Method::DELETE;
            let mut response = next.run(request).await;
            // rmcp answers a closed session 202; the MCP SDKs take 200/204 as "terminated" and
            // log anything else as a failure.
            if closing && response.status() == http::StatusCode::ACCEPTED {
                *response.status_mut() = http::StatusCode::NO_CONTENT;
            }
            return response;
        }
        Some(false) => {
            tracing::warn!(target: "skillet::audit", identity = %caller.id(), client = ?caller.client(), "MCP request on a session another identity opened: answered as an unknown session");
        }
        None => {
            tracing::debug!(identity = %caller.id(), "MCP request on a session this server does not know");
        }
    }
    as_unknown_session(request.method())
}

/// What rmcp answers for a session it does not have: 404 `Not Found: Session not found`;
/// for a `DELETE`, 204 as for a session closed (closing an unknown session is no error).
fn as_unknown_session(method: &http::Method) -> Response {
    let (status, body) = match *method {
        http::Method::DELETE => (http::StatusCode::NO_CONTENT, Body::empty()),
        _ => (
            http::StatusCode::NOT_FOUND,
            Body::from("Not Found: Session not found"),
        ),
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_its_openers_and_closed_ones_are_forgotten() {
        let owners = SessionOwners::default();
        let (a, b) = (SessionId::from("a"), SessionId::from("b"));
        owners.bind(a.clone(), "key-one");
        assert_eq!(owners.is_owned_by(&a, "key-one"), Some(true));
        assert_eq!(owners.is_owned_by(&a, "key-two"), Some(false));
        assert_eq!(owners.is_owned_by(&b, "key-one"), None);
        // A listing taken before `b` was bound does not forget it; `a` is gone.
        std::thread::sleep(std::time::Duration::from_millis(2));
        let seen_at = Instant::now();
        owners.bind(b.clone(), "key-two");
        owners.retain_live(&[], seen_at);
        assert_eq!(owners.len(), 1);
        assert_eq!(owners.is_owned_by(&b, "key-two"), Some(true));
        owners.forget(&b);
        assert_eq!(owners.len(), 0);
    }

    #[test]
    fn another_identity_gets_what_an_unknown_session_gets() {
        let refused = as_unknown_session(&http::Method::POST);
        assert_eq!(refused.status(), http::StatusCode::NOT_FOUND);
        let closed = as_unknown_session(&http::Method::DELETE);
        assert_eq!(closed.status(), http::StatusCode::NO_CONTENT);
    }
}
