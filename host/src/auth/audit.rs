//! The audit trail: one record per call decision — admitted calls when they answer (outcome,
//! duration, tokens, cost), refused ones at once — as a structured log line (target
//! `skillet::audit`) and, with `[auth] audit_file`, one JSON object per line in that file.
//!
//! A record names the identity by its id (an API key's `id`, a token's issuer and `sub`) and
//! never holds a secret: nothing here ever sees a key or a token.
//!
//! The file is appended by its own thread, so a slow disk never stalls a runtime worker.
//!
//! Not here: deciding (the core and `super::Access`).

use std::io::Write;
use std::path::Path;
use std::sync::mpsc;

use serde::Serialize;
use serde_json::Value;
use skillet_protocol::SkillCallResponse;

/// One audit record.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    /// When it was decided (RFC 3339, UTC).
    pub ts: String,
    /// Who: an API key id, `ISSUER#SUB` for a token, `local` or `anonymous`.
    pub identity: String,
    /// From where: the client's address (behind a trusted proxy, the one it forwarded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The skill asked for.
    pub skill: String,
    /// The call's id.
    pub req_id: String,
    /// `ok`, `refused:unauthorized`, `refused:rate_limited`, or the answer's error code.
    pub outcome: String,
    /// How long it ran, in milliseconds (admitted calls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Input tokens used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// The cost estimate, when prices are configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Value>,
}

impl AuditRecord {
    /// The record of a call refused before it ran (`outcome`: `refused:…`).
    pub fn refused(identity: &str, skill: &str, req_id: &str, outcome: &str) -> AuditRecord {
        AuditRecord {
            ts: now_rfc3339(),
            identity: identity.to_owned(),
            client: None,
            skill: skill.to_owned(),
            req_id: req_id.to_owned(),
            outcome: outcome.to_owned(),
            duration_ms: None,
            input_tokens: None,
            output_tokens: None,
            cost: None,
        }
    }

    /// The record of an answered call: `ok`, the rejection's code, or the failed run's code.
    pub fn answered(identity: &str, response: &SkillCallResponse) -> AuditRecord {
        let usage = response.data.as_ref().and_then(|d| d.usage.as_ref());
        let outcome = match (&response.data, &response.error) {
            (_, Some(error)) => error.code.as_str().to_owned(),
            (Some(result), None) if result.success => "ok".to_owned(),
            (Some(result), None) => result
                .error_code
                .map_or_else(|| "skill_error".to_owned(), |c| c.as_str().to_owned()),
            (None, None) => "unknown".to_owned(),
        };
        AuditRecord {
            ts: now_rfc3339(),
            identity: identity.to_owned(),
            client: None,
            skill: response.name.clone(),
            req_id: response.req_id.clone(),
            outcome,
            duration_ms: response.data.as_ref().map(|d| d.duration_ms),
            input_tokens: usage.and_then(|u| u.input_tokens),
            output_tokens: usage.and_then(|u| u.output_tokens),
            cost: usage
                .and_then(|u| u.cost.as_ref())
                .and_then(|c| serde_json::to_value(c).ok()),
        }
    }
}

impl AuditRecord {
    /// The record with the client's address.
    pub fn with_client(mut self, client: Option<std::net::IpAddr>) -> AuditRecord {
        self.client = client.map(|addr| addr.to_string());
        self
    }
}

/// Where records go.
#[derive(Debug)]
pub(crate) struct AuditLog {
    file: Option<mpsc::Sender<String>>,
}

impl AuditLog {
    /// Records go to the log and, when `file` is given, appended to it (created if absent).
    pub(crate) fn open(file: Option<&Path>) -> std::io::Result<AuditLog> {
        let Some(path) = file else {
            return Ok(AuditLog { file: None });
        };
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::Builder::new()
            .name("skillet-audit".into())
            .spawn(move || {
                while let Ok(line) = rx.recv() {
                    if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
                        tracing::error!(error = %e, "cannot write the audit file");
                    }
                }
            })?;
        Ok(AuditLog { file: Some(tx) })
    }

    pub(crate) fn record(&self, record: &AuditRecord) {
        tracing::info!(
            target: "skillet::audit",
            identity = %record.identity,
            client = record.client.as_deref(),
            skill = %record.skill,
            req_id = %record.req_id,
            outcome = %record.outcome,
            duration_ms = record.duration_ms,
            input_tokens = record.input_tokens,
            output_tokens = record.output_tokens,
            "call audited"
        );
        if let Some(file) = &self.file {
            let mut line = serde_json::to_string(record).unwrap_or_default();
            line.push('\n');
            let _ = file.send(line);
        }
    }
}

/// Now, RFC 3339 (UTC).
pub(crate) fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
