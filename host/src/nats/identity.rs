//! Who sent a NATS call: under `[auth]`, the `Authorization: Bearer <API key or JWT>` header of
//! the call's message, verified by the same [`Access`] as every HTTP door; the call is then
//! admitted with that identity, so its grants, limits and audit record are the ones it would
//! get over HTTP (`CallScope::admit_as`).
//!
//! Without `[auth]` every NATS caller is [`Caller::Local`] (trusted): NATS's own user and
//! account permissions — who may publish on `<prefix>.call.>` — are the wall. With `[auth]`
//! they stay the outer wall, and this is the inner one.
//!
//! A call without the header, or with a credential that does not verify, is answered
//! `unauthorized` on its reply subject and never stored (it must not take the id of a
//! legitimate call). Which check failed goes to the log, never to the caller; no secret goes
//! anywhere.
//!
//! A discover request is answered with the skills its sender may see ([`discover_caller`]):
//! every one without `[auth]`, the identity's under it, none for a sender that does not
//! verify.
//!
//! Not here: the header's transport (`worker`), verifying credentials (`crate::auth`).

use async_nats::HeaderMap;
use secrecy::SecretString;
use skillet_protocol::{ErrorCode, ProtocolError, SkillCallRequest, SkillCallResponse};

use crate::auth::audit::AuditRecord;
use crate::auth::{Access, AuthFailure, Caller, KeyRefusal};

/// The message header carrying the caller's credential (`Bearer <API key or JWT>`).
pub(crate) const AUTHORIZATION_HEADER: &str = "Authorization";

/// The caller of `call` from its message's `headers`: [`Caller::Local`] without access rules,
/// else the verified identity — or the `unauthorized` answer to send.
pub(crate) async fn caller_of(
    access: Option<&Access>,
    headers: Option<&HeaderMap>,
    call: &SkillCallRequest,
) -> Result<Caller, Box<SkillCallResponse>> {
    let Some(access) = access else {
        return Ok(Caller::Local);
    };
    let result = match bearer(headers) {
        None => Err(AuthFailure::Missing),
        Some(credential) => access.authenticate(&credential).await,
    };
    result.map_err(|failure| {
        match &failure {
            AuthFailure::Key(KeyRefusal::Revoked(id)) => {
                access.audit(&AuditRecord::refused(
                    id,
                    &call.name,
                    &call.id,
                    "refused:revoked_key",
                ));
            }
            other => {
                tracing::info!(target: "skillet::audit", req_id = %call.id, skill = %call.name, reason = %other, "NATS call refused: not authenticated");
            }
        }
        Box::new(SkillCallResponse::rejected(
            call.id.clone(),
            call.name.clone(),
            ProtocolError::new(
                ErrorCode::Unauthorized,
                "authentication required: send the header Authorization: Bearer <API key or token>",
            ),
        ))
    })
}

/// The caller of a discover request from its message's `headers`: [`Caller::Local`] without
/// access rules, else the verified identity — `None` when the credential is missing or does
/// not verify (such a sender is shown no skill: a discover answer has no error, and an empty
/// list gives nothing away).
pub(crate) async fn discover_caller(
    access: Option<&Access>,
    headers: Option<&HeaderMap>,
) -> Option<Caller> {
    let Some(access) = access else {
        return Some(Caller::Local);
    };
    let credential = bearer(headers)?;
    match access.authenticate(&credential).await {
        Ok(caller) => Some(caller),
        Err(failure) => {
            tracing::info!(target: "skillet::audit", reason = %failure, "NATS discover refused: not authenticated");
            None
        }
    }
}

/// The `Authorization: Bearer` credential of a message, if any (the scheme is
/// case-insensitive, as over HTTP).
fn bearer(headers: Option<&HeaderMap>) -> Option<SecretString> {
    let value = headers?.get(AUTHORIZATION_HEADER)?.as_str();
    let (scheme, credential) = value.trim().split_once(' ')?;
    let credential = credential.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !credential.is_empty())
        .then(|| SecretString::from(credential.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{AccessOptions, ApiKey, Grant, sha256_hex};

    fn access() -> Access {
        Access::new(AccessOptions {
            api_keys: vec![ApiKey::new("ci", &sha256_hex("sk-ci"), vec!["echo".into()]).unwrap()],
            scopes: vec![(
                "echo".into(),
                Grant::new(&["echo".into()], &[], false).unwrap(),
            )],
            ..AccessOptions::default()
        })
        .unwrap()
    }

    fn call() -> SkillCallRequest {
        serde_json::from_value(serde_json::json!({
            "type": "skill/call/req", "id": "c1", "name": "echo", "arguments": {}
        }))
        .unwrap()
    }

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION_HEADER, value);
        headers
    }

    #[tokio::test]
    async fn without_access_rules_every_nats_caller_is_local() {
        let caller = caller_of(None, None, &call()).await.unwrap();
        assert!(matches!(caller, Caller::Local));
    }

    #[tokio::test]
    async fn a_key_in_the_header_is_its_identity_and_anything_else_is_unauthorized() {
        let access = access();
        let caller = caller_of(Some(&access), Some(&headers("Bearer sk-ci")), &call())
            .await
            .unwrap();
        assert_eq!(caller.id(), "ci");
        for sent in [
            None,
            Some(headers("Bearer sk-CANARY-nats")),
            Some(headers("sk-ci")),
        ] {
            let answer = caller_of(Some(&access), sent.as_ref(), &call())
                .await
                .unwrap_err();
            let error = answer.error.as_ref().unwrap();
            assert_eq!(error.code, ErrorCode::Unauthorized);
            assert_eq!(answer.req_id, "c1");
            assert!(!format!("{answer:?}").contains("CANARY"));
        }
    }
}
