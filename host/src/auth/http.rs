//! The HTTP side of authentication: [`protect`] wraps a door's router so every request but the
//! public ones carries a verified [`Caller`] in its extensions, and serves the RFC 9728
//! protected-resource metadata the MCP authorization spec points clients to.
//!
//! | path | who may |
//! |---|---|
//! | `/healthz`, `/.well-known/agent-card.json`, `/.well-known/oauth-protected-resource[/…]` | anyone |
//! | `/`, `/console/assets/…` (the web console's page and files: no data) | anyone |
//! | `/metrics` | an identity holding the metrics scope (else 403, `insufficient_scope`) |
//! | `/console/api/…` (the web console's data) | an identity holding the console scope (else 403, `insufficient_scope`) |
//! | everything else (`/a2e`, `/mcp`, `/a2a`) | any authenticated identity; what it may *run* is decided at admission |
//!
//! No or a bad credential is HTTP 401 with `WWW-Authenticate: Bearer
//! resource_metadata="BASE/.well-known/oauth-protected-resource"` (plus `error="invalid_token"`
//! when one was presented, RFC 6750 §3) — the same answer for a wrong key, a revoked key and
//! every kind of bad token, so a prober learns nothing; the log and the audit trail say which.
//! `/a2e` gets its 401 body as an A2E `unauthorized` answer.
//!
//! Not here: verifying credentials (`super::Access`), deciding per skill (the core).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use secrecy::SecretString;
use serde_json::json;

use super::audit::AuditRecord;
use super::{Access, AuthFailure, Caller, KeyRefusal};
use skillet_protocol::{ErrorCode, Message, ProtocolError, SkillCallResponse};

/// Where the protected-resource metadata is served (RFC 9728 §3).
pub(crate) const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Where the web console's data routes live: behind the console scope (`crate::console` mounts
/// them here; the paths are this layer's, so it needs nothing of the console).
pub const CONSOLE_API_PREFIX: &str = "/console/api/";

/// Where the web console's page assets live: public (they carry no data).
pub const CONSOLE_ASSETS_PREFIX: &str = "/console/assets/";

/// Paths anyone may read.
fn is_public(path: &str) -> bool {
    matches!(path, "/" | "/healthz" | "/.well-known/agent-card.json")
        || path.starts_with(CONSOLE_ASSETS_PREFIX)
        || path == RESOURCE_METADATA_PATH
        || path.starts_with("/.well-known/oauth-protected-resource/")
}

/// `router` with every non-public request authenticated by `access`, plus the metadata routes.
/// `base_url` is where this server listens (`http://ADDR`); the metadata's `resource` and the
/// challenge's link name `[auth] public_url` when set, else the origin a trusted proxy
/// forwarded (`crate::forwarded`), else `base_url`.
pub(crate) fn protect(router: Router, access: Arc<Access>, base_url: String) -> Router {
    let base = base_url.trim_end_matches('/').to_owned();
    let metadata = {
        let access = Arc::clone(&access);
        let base = base.clone();
        move |request: Request| {
            let body = access.resource_metadata(&public_base(&access, &base, &request));
            async move { axum::Json(body).into_response() }
        }
    };
    let mcp_metadata = {
        let access = Arc::clone(&access);
        let base = base.clone();
        move |request: Request| {
            let resource = format!("{}/mcp", public_base(&access, &base, &request));
            let body = access.resource_metadata(&resource);
            async move { axum::Json(body).into_response() }
        }
    };
    router
        .route(RESOURCE_METADATA_PATH, get(metadata))
        .route(&format!("{RESOURCE_METADATA_PATH}/mcp"), get(mcp_metadata))
        .layer(axum::middleware::from_fn(move |request, next| {
            guard(Arc::clone(&access), base.clone(), request, next)
        }))
}

/// The base URL clients know this server by (see [`protect`]).
fn public_base(access: &Access, listening: &str, request: &Request) -> String {
    if let Some(url) = access.public_url() {
        return url.trim_end_matches('/').to_owned();
    }
    crate::forwarded::client_of(request.extensions())
        .origin
        .unwrap_or_else(|| listening.to_owned())
}

/// The `Authorization: Bearer` credential, if any (the scheme is case-insensitive).
pub(crate) fn bearer(headers: &HeaderMap) -> Option<SecretString> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, credential) = value.trim().split_once(' ')?;
    let credential = credential.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !credential.is_empty())
        .then(|| SecretString::from(credential.to_owned()))
}

async fn guard(access: Arc<Access>, base: String, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    if is_public(&path) {
        return next.run(request).await;
    }
    let base = public_base(&access, &base, &request);
    let client = crate::forwarded::client_of(request.extensions()).addr;
    let caller = match bearer(request.headers()) {
        None => Err(AuthFailure::Missing),
        Some(credential) => access.authenticate(&credential).await,
    };
    let caller = match caller {
        Ok(caller) => caller.with_client(client),
        Err(failure) => {
            // Logged, not written to the audit file: anyone can send these, and the file must not
            // grow at an anonymous sender's pace. A revoked key names a once-trusted holder.
            match &failure {
                AuthFailure::Key(KeyRefusal::Revoked(id)) => {
                    access.audit(
                        &AuditRecord::refused(id, "", "", "refused:revoked_key")
                            .with_client(client),
                    );
                }
                AuthFailure::Missing => {
                    tracing::debug!(target: "skillet::audit", %path, client = ?client, "request refused: no credential");
                }
                other => {
                    tracing::info!(target: "skillet::audit", %path, client = ?client, reason = %other, "request refused: not authenticated");
                }
            }
            return unauthenticated(&base, &path, failure != AuthFailure::Missing);
        }
    };
    if path == "/metrics" && !access.may_read_metrics(&caller) {
        return insufficient_scope(&base, &path, &caller, access.metrics_scope());
    }
    if path.starts_with(CONSOLE_API_PREFIX) && !access.may_use_console(&caller) {
        return insufficient_scope(&base, &path, &caller, access.console_scope());
    }
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// 403 for an identity without the scope a route needs.
fn insufficient_scope(base: &str, path: &str, caller: &Caller, scope: &str) -> Response {
    tracing::warn!(target: "skillet::audit", %path, identity = %caller.id(), %scope, "request refused: missing the scope");
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{base}{RESOURCE_METADATA_PATH}\""
    );
    let mut response = (StatusCode::FORBIDDEN, "insufficient scope\n").into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn unauthenticated(base: &str, path: &str, presented: bool) -> Response {
    let error = if presented {
        ", error=\"invalid_token\""
    } else {
        ""
    };
    let challenge = format!("Bearer resource_metadata=\"{base}{RESOURCE_METADATA_PATH}\"{error}");
    let description = "authentication required: send Authorization: Bearer <API key or token>";
    let body = if path == "/a2e" {
        skillet_protocol::encode(&Message::CallResponse(SkillCallResponse::rejected(
            "",
            "",
            ProtocolError::new(ErrorCode::Unauthorized, description),
        )))
    } else {
        json!({
            "error": if presented { "invalid_token" } else { "unauthorized" },
            "error_description": description,
        })
        .to_string()
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        headers.insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The caller a door's handler sees: the one [`protect`] verified, else [`Caller::Anonymous`]
/// (which runs nothing when access rules exist, and everything when none do).
pub(crate) fn caller_of(extensions: &axum::http::Extensions) -> Caller {
    extensions
        .get::<Caller>()
        .cloned()
        .unwrap_or(Caller::Anonymous)
}

/// The caller of an MCP request: over streamable HTTP, the one [`protect`] put on the HTTP
/// request (rmcp hands its parts to handlers); over stdio (no HTTP request), [`Caller::Local`].
pub(crate) fn caller_of_mcp(extensions: &rmcp::model::Extensions) -> Caller {
    match extensions.get::<axum::http::request::Parts>() {
        Some(parts) => caller_of(&parts.extensions),
        None => Caller::Local,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bearer_scheme_with_a_credential_is_read() {
        let mut headers = HeaderMap::new();
        assert!(bearer(&headers).is_none());
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert!(bearer(&headers).is_none());
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  sk-1 "),
        );
        use secrecy::ExposeSecret;
        assert_eq!(bearer(&headers).unwrap().expose_secret(), "sk-1");
    }
}
