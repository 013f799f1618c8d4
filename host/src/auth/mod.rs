//! Authentication and per-skill authorization for the network doors (A2E over HTTP, MCP over
//! streamable HTTP, A2A, `/metrics`).
//!
//! - [`Caller`] — who sent a request: [`Caller::Local`] (stdio: the parent process is the
//!   identity), [`Caller::Anonymous`] (no credential), or an authenticated [`Identity`];
//! - [`Access`] — the configured identities and what each may run: turns a bearer credential
//!   into a [`Caller`] ([`Access::authenticate`]) and decides ([`Access::may_run`],
//!   [`Access::may_see`]); the host core asks it at admission, so every door uses one check;
//! - `api_key` — API keys, held only as SHA-256;
//! - `jwt` / `jwks` — JWT bearer tokens verified with ring against an issuer's key set;
//! - `grant` — what a scope allows (skill globs, tags, `llm_override`);
//! - `limits` — calls per minute and in flight per identity;
//! - `audit` — one record per call decision (log line and JSON-lines file);
//! - `http` — the axum layer that reads `Authorization: Bearer`, answers 401 with
//!   `WWW-Authenticate`, and the RFC 9728 protected-resource metadata route.
//!
//! Without an [`Access`] (no `[auth]`), every caller may run everything (the loopback default).
//! With one, [`Caller::Anonymous`] may run nothing and [`Caller::Local`] everything.
//!
//! Not here: reading `[auth]` from `skillet.toml` (the `skillet` crate builds [`AccessOptions`]),
//! admission itself (`crate::core`).

pub(crate) mod api_key;
pub(crate) mod audit;
pub(crate) mod grant;
pub(crate) mod http;
pub(crate) mod jwks;
pub(crate) mod jwt;
pub(crate) mod limits;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use serde_json::{Value, json};
use skillet_core::card::AgentCard;
use skillet_protocol::SkillDefinition;

pub use api_key::{ApiKey, KeyRefusal, sha256_hex};
pub use audit::AuditRecord;
pub use grant::{Grant, Permissions};
pub use jwks::MIN_REFRESH as MIN_JWKS_REFRESH;
pub use jwt::DEFAULT_LEEWAY as DEFAULT_JWT_LEEWAY;
pub use jwt::{JwtIssuer, JwtRefusal};
pub use limits::CallerLimits;

use api_key::ApiKeys;
use audit::AuditLog;
use jwt::Verifier;
use limits::{CallerPermit, Limiter};

/// The scope that lets a caller read `GET /metrics` (by default).
pub const DEFAULT_METRICS_SCOPE: &str = "metrics";

/// The scope that lets a caller use the web console's data routes (by default).
pub const DEFAULT_CONSOLE_SCOPE: &str = "console";

/// The name of the card's bearer security scheme.
pub const BEARER_SCHEME: &str = "bearer";

/// Who sent a request.
#[derive(Debug, Clone)]
pub enum Caller {
    /// A trusted local caller (stdio, NATS behind its own permissions): may run everything.
    Local,
    /// No credential was presented.
    Anonymous,
    /// An authenticated identity.
    Identified(Arc<Identity>),
}

impl Caller {
    /// The id audit lines name.
    pub fn id(&self) -> &str {
        match self {
            Caller::Local => "local",
            Caller::Anonymous => "anonymous",
            Caller::Identified(identity) => &identity.id,
        }
    }

    /// The identity whose tasks and stored answers this caller is given: its own under
    /// `[auth]`, `None` (everything, as before `[auth]`) for a caller without one.
    pub fn owner(&self) -> Option<&str> {
        match self {
            Caller::Identified(identity) => Some(&identity.id),
            Caller::Local | Caller::Anonymous => None,
        }
    }

    /// The client address of an identified caller, when known.
    pub fn client(&self) -> Option<std::net::IpAddr> {
        match self {
            Caller::Identified(identity) => identity.client,
            Caller::Local | Caller::Anonymous => None,
        }
    }

    /// The caller with `client` as the address its request came from.
    pub fn with_client(mut self, client: Option<std::net::IpAddr>) -> Caller {
        if let Caller::Identified(identity) = &mut self {
            match Arc::get_mut(identity) {
                Some(identity) => identity.client = client,
                None => {
                    *identity = Arc::new(Identity {
                        id: identity.id.clone(),
                        permissions: identity.permissions.clone(),
                        limits: identity.limits,
                        client,
                    });
                }
            }
        }
        self
    }
}

/// An authenticated caller: its id (never a secret), its permissions and its limits.
#[derive(Debug)]
pub struct Identity {
    /// An API key's `id`, or `ISSUER#SUB` for a token.
    pub id: String,
    /// What its scopes allow.
    pub permissions: Permissions,
    /// Its call limits.
    pub limits: CallerLimits,
    /// Where its request came from (HTTP: the client's address), for the audit trail.
    pub client: Option<std::net::IpAddr>,
}

/// Why a credential was refused. The caller is only ever told "invalid token"; this goes to
/// the log (it holds no secret: a key's id at most).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    /// No `Authorization: Bearer` header.
    #[error("no bearer credential")]
    Missing,
    /// An API key that is not configured, or revoked.
    #[error("API key refused: {0:?}")]
    Key(KeyRefusal),
    /// A JWT that did not verify.
    #[error("token refused: {0}")]
    Token(JwtRefusal),
}

/// Everything [`Access`] is built from.
#[derive(Debug, Clone, Default)]
pub struct AccessOptions {
    /// The API keys.
    pub api_keys: Vec<ApiKey>,
    /// The trusted token issuers.
    pub issuers: Vec<JwtIssuer>,
    /// What each scope allows, by scope name.
    pub scopes: Vec<(String, Grant)>,
    /// Default limits of every identity (keys and issuers may override them).
    pub limits: CallerLimits,
    /// Where audit records are appended, as JSON lines.
    pub audit_file: Option<PathBuf>,
    /// The scope needed for `GET /metrics` (default [`DEFAULT_METRICS_SCOPE`]).
    pub metrics_scope: Option<String>,
    /// The scope needed for the web console's `/console/api/` routes (default
    /// [`DEFAULT_CONSOLE_SCOPE`]).
    pub console_scope: Option<String>,
    /// This server's public base URL (`https://skills.example.com`), the protected-resource
    /// metadata's `resource` and the `WWW-Authenticate` link (default: `http://LISTEN`).
    pub public_url: Option<String>,
}

/// The configured identities and the decisions over them. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct Access {
    keys: ApiKeys,
    verifier: Verifier,
    grants: Vec<(String, Grant)>,
    limits: CallerLimits,
    limiter: Limiter,
    audit: AuditLog,
    metrics_scope: String,
    console_scope: String,
    public_url: Option<String>,
}

impl Access {
    /// Builds the access rules; fails only when the audit file cannot be opened.
    pub fn new(options: AccessOptions) -> std::io::Result<Access> {
        let AccessOptions {
            api_keys,
            issuers,
            scopes,
            limits,
            audit_file,
            metrics_scope,
            console_scope,
            public_url,
        } = options;
        Ok(Access {
            keys: ApiKeys::new(api_keys),
            verifier: Verifier::new(issuers),
            grants: scopes,
            limits,
            limiter: Limiter::default(),
            audit: AuditLog::open(audit_file.as_deref())?,
            metrics_scope: metrics_scope.unwrap_or_else(|| DEFAULT_METRICS_SCOPE.to_owned()),
            console_scope: console_scope.unwrap_or_else(|| DEFAULT_CONSOLE_SCOPE.to_owned()),
            public_url,
        })
    }

    /// The configured public base URL, if any.
    pub fn public_url(&self) -> Option<&str> {
        self.public_url.as_deref()
    }

    /// Whether any identity is configured (no keys and no issuers: nobody gets in).
    pub fn has_identities(&self) -> bool {
        !self.keys.is_empty() || self.verifier.issuers().next().is_some()
    }

    /// The identity a bearer credential proves: a JWT (three dot-separated parts) is verified
    /// against its issuer, anything else is looked up as an API key.
    pub async fn authenticate(&self, credential: &SecretString) -> Result<Caller, AuthFailure> {
        use secrecy::ExposeSecret;
        let text = credential.expose_secret();
        if jwt::looks_like_jwt(text) && self.verifier.issuers().next().is_some() {
            let token = self
                .verifier
                .verify(text)
                .await
                .map_err(AuthFailure::Token)?;
            let issuer = self.verifier.issuer(token.issuer_index);
            let limits = issuer.and_then(|i| i.limits).unwrap_or(self.limits);
            let iss = issuer.map(|i| i.issuer.as_str()).unwrap_or_default();
            return Ok(Caller::Identified(Arc::new(Identity {
                id: format!("{iss}#{}", token.subject),
                permissions: Permissions::from_scopes(
                    token.scopes.iter().map(String::as_str),
                    &self.grants,
                ),
                limits,
                client: None,
            })));
        }
        let key = self.keys.find(credential).map_err(AuthFailure::Key)?;
        Ok(Caller::Identified(Arc::new(Identity {
            id: key.id.clone(),
            permissions: Permissions::from_scopes(
                key.scopes.iter().map(String::as_str),
                &self.grants,
            ),
            limits: key.limits.unwrap_or(self.limits),
            client: None,
        })))
    }

    /// Whether `caller` may run the skill `name` (with an `llm_override` or not); `find` looks
    /// the skill up when its tags are needed to decide. An unknown skill is refused like a
    /// forbidden one unless a name glob of the caller covers the name.
    pub fn may_run(
        &self,
        caller: &Caller,
        name: &str,
        llm_override: bool,
        find: impl FnOnce(&str) -> Option<SkillDefinition>,
    ) -> bool {
        match caller {
            Caller::Local => true,
            Caller::Anonymous => false,
            Caller::Identified(identity) => {
                match identity.permissions.may_run_name(name, llm_override) {
                    Some(decided) => decided,
                    None => find(name)
                        .is_some_and(|def| identity.permissions.may_run(&def, llm_override)),
                }
            }
        }
    }

    /// Whether `caller` may see (discover, list) `skill`.
    pub fn may_see(&self, caller: &Caller, skill: &SkillDefinition) -> bool {
        match caller {
            Caller::Local => true,
            Caller::Anonymous => false,
            Caller::Identified(identity) => identity.permissions.may_run(skill, false),
        }
    }

    /// Whether `caller` may read `GET /metrics`.
    pub fn may_read_metrics(&self, caller: &Caller) -> bool {
        match caller {
            Caller::Local => true,
            Caller::Anonymous => false,
            Caller::Identified(identity) => identity.permissions.has_scope(&self.metrics_scope),
        }
    }

    /// Whether `caller` may use the web console's data routes.
    pub fn may_use_console(&self, caller: &Caller) -> bool {
        match caller {
            Caller::Local => true,
            Caller::Anonymous => false,
            Caller::Identified(identity) => identity.permissions.has_scope(&self.console_scope),
        }
    }

    /// The scope the web console's data routes need.
    pub fn console_scope(&self) -> &str {
        &self.console_scope
    }

    /// The scope `GET /metrics` needs.
    pub fn metrics_scope(&self) -> &str {
        &self.metrics_scope
    }

    /// Room for one call of `caller` under its limits, or how long to wait.
    pub(crate) fn limit(&self, caller: &Caller) -> Result<Option<CallerPermit>, Duration> {
        match caller {
            Caller::Identified(identity) => self
                .limiter
                .acquire(&identity.id, identity.limits)
                .map(Some),
            Caller::Local | Caller::Anonymous => Ok(None),
        }
    }

    /// Writes one audit record.
    pub fn audit(&self, record: &AuditRecord) {
        self.audit.record(record);
    }

    /// The scopes whose grant covers `skill`.
    fn scopes_for(&self, skill: &SkillDefinition) -> Vec<&str> {
        self.grants
            .iter()
            .filter(|(_, g)| g.covers(skill))
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// Every scope a token may carry that means something here.
    pub fn scopes_supported(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self.grants.iter().map(|(n, _)| n.clone()).collect();
        scopes.push(self.metrics_scope.clone());
        scopes.push(self.console_scope.clone());
        scopes.sort();
        scopes.dedup();
        scopes
    }

    /// `card` with its `securitySchemes` (HTTP bearer, plus one OpenID Connect scheme per
    /// issuer), a card-wide bearer requirement, and on each skill the scopes that grant it
    /// (one requirement per scope: any one of them suffices). `skills` are the service's
    /// definitions, matched to the card's skills by A2A id.
    pub fn secure_card(&self, mut card: AgentCard, skills: &[SkillDefinition]) -> AgentCard {
        card.security_schemes.insert(
            BEARER_SCHEME.to_owned(),
            json!({"httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "bearerFormat": "API key or JWT",
                "description": "Authorization: Bearer <API key or access token>"
            }}),
        );
        for (n, issuer) in self.verifier.issuers().enumerate() {
            let name = if n == 0 {
                "oidc".to_owned()
            } else {
                format!("oidc{n}")
            };
            card.security_schemes.insert(
                name,
                json!({"openIdConnectSecurityScheme": {
                    "openIdConnectUrl": format!(
                        "{}/.well-known/openid-configuration",
                        issuer.issuer.trim_end_matches('/')
                    )
                }}),
            );
        }
        card.security_requirements = vec![json!({"schemes": {BEARER_SCHEME: {"list": []}}})];
        for skill in &mut card.skills {
            let Some(def) = skills.iter().find(|d| a2a_id(d) == skill.id) else {
                continue;
            };
            skill.security_requirements = self
                .scopes_for(def)
                .into_iter()
                .map(|scope| json!({"schemes": {BEARER_SCHEME: {"list": [scope]}}}))
                .collect();
        }
        card
    }

    /// The RFC 9728 protected-resource metadata for `resource` (this server's base URL).
    pub fn resource_metadata(&self, resource: &str) -> Value {
        let servers: Vec<&str> = self.verifier.issuers().map(|i| i.issuer.as_str()).collect();
        json!({
            "resource": resource,
            "authorization_servers": servers,
            "scopes_supported": self.scopes_supported(),
            "bearer_methods_supported": ["header"],
            "resource_name": "skillet",
        })
    }
}

/// A skill's A2A card id (its `a2a.id`, else its name).
fn a2a_id(def: &SkillDefinition) -> &str {
    def.metadata
        .as_ref()
        .and_then(|m| m.get("a2a"))
        .and_then(|a| a.get("id"))
        .and_then(Value::as_str)
        .unwrap_or(&def.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access::new(AccessOptions {
            api_keys: vec![ApiKey::new("ci", &sha256_hex("sk-ci"), vec!["echo".into()]).unwrap()],
            scopes: vec![(
                "echo".into(),
                Grant::new(&["echo*".into()], &[], false).unwrap(),
            )],
            ..AccessOptions::default()
        })
        .unwrap()
    }

    #[tokio::test]
    async fn a_key_becomes_its_identity_and_runs_only_its_skills() {
        let access = access();
        let caller = access
            .authenticate(&SecretString::from("sk-ci"))
            .await
            .unwrap();
        assert_eq!(caller.id(), "ci");
        assert!(access.may_run(&caller, "echo", false, |_| None));
        assert!(!access.may_run(&caller, "secret-skill", false, |_| None));
        assert!(
            !access.may_run(&caller, "echo", true, |_| None),
            "no override grant"
        );
        assert!(!access.may_read_metrics(&caller));
        assert!(!access.may_run(&Caller::Anonymous, "echo", false, |_| None));
        assert!(access.may_run(&Caller::Local, "anything", true, |_| None));
    }

    #[tokio::test]
    async fn a_wrong_key_is_refused_and_the_refusal_holds_no_secret() {
        let access = access();
        let err = access
            .authenticate(&SecretString::from("sk-canary-XYZ"))
            .await
            .unwrap_err();
        assert_eq!(err, AuthFailure::Key(KeyRefusal::Unknown));
        assert!(!format!("{err} {err:?}").contains("canary"));
    }
}
