//! Faults: the ways a real provider misbehaves, as data. A fault is attached to a scenario rule or
//! queued through [`crate::MockServer::push_fault`] / `POST /_mock/faults`, and fires at most
//! `times` times, each time with a seeded `probability`.
//!
//! This module only describes faults and decides whether one fires; rendering a fault onto the
//! wire (error bodies, cut streams) belongs to the provider modules and `delivery`.

use std::time::Duration;

use serde::Deserialize;

use crate::matching::{Match, MatchSpec};
use crate::scenario_error::ScenarioError;

/// What goes wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// An HTTP error status with the provider's own error body.
    Status(StatusFault),
    /// Status 200 with a body that is not JSON.
    MalformedBody,
    /// The stream ends cleanly after this many chunks, without its finish chunk and terminator
    /// (`[DONE]`, `message_stop`, `done:true`). A non-streamed body is cut in half.
    Truncate {
        /// Chunks sent before the end.
        after_chunks: usize,
    },
    /// The stream sends this many chunks and then nothing, keeping the connection open until the
    /// client gives up or the server shuts down. A non-streamed response sends headers only.
    Stall {
        /// Chunks sent before stalling.
        after_chunks: usize,
    },
    /// The connection is cut (no clean end of body) after this many chunks.
    DropConnection {
        /// Chunks sent before the cut.
        after_chunks: usize,
    },
    /// After this many chunks, an in-stream error in the provider's shape (OpenAI `data:
    /// {"error":..}`, Ollama `{"error":..}` line, Anthropic `event: error`), then the end. A
    /// non-streamed request gets the plain status error instead.
    StreamError {
        /// Chunks sent before the error.
        after_chunks: usize,
        /// The error (status chooses the error type; 529 → `overloaded_error`).
        error: StatusFault,
    },
    /// Delays, added to the configured timing; the reply itself is normal.
    Latency {
        /// Before response headers.
        before: Duration,
        /// Before the first stream chunk.
        first_token: Duration,
        /// Between stream chunks.
        per_chunk: Duration,
    },
    /// The reply contains a broken tool call.
    InvalidToolCall(ToolCallProblem),
}

/// An HTTP error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusFault {
    /// Status code (400..=599).
    pub status: u16,
    /// Provider error code/type override, e.g. `insufficient_quota`; otherwise derived from status.
    pub code: Option<String>,
    /// Error message; otherwise a generic one naming the status.
    pub message: Option<String>,
    /// `retry-after` header, seconds.
    pub retry_after_secs: Option<u64>,
    /// `retry-after-ms` header, milliseconds.
    pub retry_after_ms: Option<u64>,
}

/// The error type llama.cpp gives a 503 while its model loads; on the OpenAI wire a status
/// fault with this code is written in llama.cpp's error shape (`code` the status number).
pub const LOADING_CODE: &str = "unavailable_error";

/// How an injected tool call is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallProblem {
    /// Calls a tool the request did not offer (`no_such_tool`).
    UnknownTool,
    /// Calls the first offered tool with arguments that break its schema.
    SchemaViolation,
    /// Calls the first offered tool with arguments that are not JSON.
    NotJson,
}

/// A fault with its firing rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// What goes wrong.
    pub kind: FaultKind,
    /// How many times it may fire. `None`: a rule's fault fires whenever the rule applies; a queued
    /// fault fires once.
    pub times: Option<u32>,
    /// Chance (0..=1) that it fires when it could, drawn from the server's seeded generator.
    pub probability: Option<f64>,
    /// Only requests matching this (queued faults; a rule's fault uses the rule's match).
    pub when: Option<Match>,
}

impl Fault {
    /// A fault of this kind with no limits.
    pub fn new(kind: FaultKind) -> Self {
        Fault {
            kind,
            times: None,
            probability: None,
            when: None,
        }
    }

    /// An error status with the provider's default body.
    pub fn status(status: u16) -> Self {
        Fault::new(FaultKind::Status(StatusFault {
            status,
            code: None,
            message: None,
            retry_after_secs: None,
            retry_after_ms: None,
        }))
    }

    /// 429 rate limit with `retry-after: secs`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Fault::status(429).retry_after_secs(retry_after_secs)
    }

    /// OpenAI's non-retryable 429 `insufficient_quota`.
    pub fn insufficient_quota() -> Self {
        Fault::status(429).code("insufficient_quota")
    }

    /// A server still loading its model, as llama.cpp's `llama-server` answers until the model
    /// is in memory: 503 `{"error": {"code": 503, "message": "Loading model", "type":
    /// "unavailable_error"}}`. With [`Fault::times`] it answers so for the first N requests.
    pub fn loading() -> Self {
        Fault::status(503)
            .code(LOADING_CODE)
            .message("Loading model")
    }

    /// Anthropic-style 529 overloaded.
    pub fn overloaded() -> Self {
        Fault::status(529)
    }

    /// 200 with a body that is not JSON.
    pub fn malformed_body() -> Self {
        Fault::new(FaultKind::MalformedBody)
    }

    /// Stream cut cleanly after `n` chunks, without terminator.
    pub fn truncate_after(n: usize) -> Self {
        Fault::new(FaultKind::Truncate { after_chunks: n })
    }

    /// Stream that goes silent after `n` chunks.
    pub fn stall_after(n: usize) -> Self {
        Fault::new(FaultKind::Stall { after_chunks: n })
    }

    /// Connection cut after `n` chunks.
    pub fn drop_connection_after(n: usize) -> Self {
        Fault::new(FaultKind::DropConnection { after_chunks: n })
    }

    /// An in-stream error (status `status`) after `n` chunks.
    pub fn stream_error_after(n: usize, status: u16) -> Self {
        Fault::new(FaultKind::StreamError {
            after_chunks: n,
            error: StatusFault {
                status,
                code: None,
                message: None,
                retry_after_secs: None,
                retry_after_ms: None,
            },
        })
    }

    /// Delay before the response headers.
    pub fn latency(before: Duration) -> Self {
        Fault::new(FaultKind::Latency {
            before,
            first_token: Duration::ZERO,
            per_chunk: Duration::ZERO,
        })
    }

    /// A broken tool call in the reply.
    pub fn invalid_tool_call(problem: ToolCallProblem) -> Self {
        Fault::new(FaultKind::InvalidToolCall(problem))
    }

    /// Fire at most `n` times.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// Fire with this probability (clamped to 0..=1).
    pub fn probability(mut self, p: f64) -> Self {
        self.probability = Some(p.clamp(0.0, 1.0));
        self
    }

    /// Only for requests matching `when`.
    pub fn when(mut self, when: Match) -> Self {
        self.when = Some(when);
        self
    }

    /// Sets `retry-after` (seconds) on a status fault; no effect on other kinds.
    pub fn retry_after_secs(mut self, secs: u64) -> Self {
        if let FaultKind::Status(s) = &mut self.kind {
            s.retry_after_secs = Some(secs);
        }
        self
    }

    /// Sets `retry-after-ms` on a status fault; no effect on other kinds.
    pub fn retry_after_ms(mut self, ms: u64) -> Self {
        if let FaultKind::Status(s) = &mut self.kind {
            s.retry_after_ms = Some(ms);
        }
        self
    }

    /// Sets the provider error code on a status fault; no effect on other kinds.
    pub fn code(mut self, code: impl Into<String>) -> Self {
        if let FaultKind::Status(s) | FaultKind::StreamError { error: s, .. } = &mut self.kind {
            s.code = Some(code.into());
        }
        self
    }

    /// Sets the error message on a status fault; no effect on other kinds.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        if let FaultKind::Status(s) | FaultKind::StreamError { error: s, .. } = &mut self.kind {
            s.message = Some(message.into());
        }
        self
    }

    /// A short label for the journal, e.g. `status 429` or `truncate after 2`.
    pub fn label(&self) -> String {
        match &self.kind {
            FaultKind::Status(s) => format!("status {}", s.status),
            FaultKind::MalformedBody => "malformed_body".into(),
            FaultKind::Truncate { after_chunks } => format!("truncate after {after_chunks}"),
            FaultKind::Stall { after_chunks } => format!("stall after {after_chunks}"),
            FaultKind::DropConnection { after_chunks } => {
                format!("drop_connection after {after_chunks}")
            }
            FaultKind::StreamError {
                after_chunks,
                error,
            } => {
                format!("stream_error {} after {after_chunks}", error.status)
            }
            FaultKind::Latency { .. } => "latency".into(),
            FaultKind::InvalidToolCall(p) => format!("invalid_tool_call {p:?}"),
        }
    }
}

/// The flat file form of a fault; see the README for each field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FaultSpec {
    kind: String,
    status: Option<u16>,
    code: Option<String>,
    message: Option<String>,
    retry_after: Option<u64>,
    retry_after_ms: Option<u64>,
    after_chunks: Option<usize>,
    ms: Option<u64>,
    first_token_ms: Option<u64>,
    chunk_ms: Option<u64>,
    problem: Option<ToolCallProblem>,
    times: Option<u32>,
    probability: Option<f64>,
    when: Option<MatchSpec>,
}

impl<'de> Deserialize<'de> for Fault {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spec = FaultSpec::deserialize(d)?;
        Fault::try_from(spec).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<FaultSpec> for Fault {
    type Error = ScenarioError;

    fn try_from(s: FaultSpec) -> Result<Self, ScenarioError> {
        let invalid = |m: String| ScenarioError::Invalid(m);
        let status_fault = |status: u16, code: Option<String>| StatusFault {
            status,
            code,
            message: s.message.clone(),
            retry_after_secs: s.retry_after,
            retry_after_ms: s.retry_after_ms,
        };
        let kind = match s.kind.as_str() {
            "status" => {
                let status = s
                    .status
                    .ok_or_else(|| invalid("fault kind `status` needs `status`".into()))?;
                if !(400..=599).contains(&status) {
                    return Err(invalid(format!("fault status {status} is not 400..=599")));
                }
                FaultKind::Status(status_fault(status, s.code.clone()))
            }
            "rate_limit" => FaultKind::Status(status_fault(429, s.code.clone())),
            "insufficient_quota" => {
                FaultKind::Status(status_fault(429, Some("insufficient_quota".into())))
            }
            "overloaded" => FaultKind::Status(status_fault(529, s.code.clone())),
            "loading" => FaultKind::Status(StatusFault {
                message: Some(s.message.clone().unwrap_or_else(|| "Loading model".into())),
                ..status_fault(503, Some(LOADING_CODE.into()))
            }),
            "stream_error" => FaultKind::StreamError {
                after_chunks: s.after_chunks.unwrap_or(1),
                error: status_fault(s.status.unwrap_or(500), s.code.clone()),
            },
            "malformed_body" => FaultKind::MalformedBody,
            "truncate" => FaultKind::Truncate {
                after_chunks: s.after_chunks.unwrap_or(1),
            },
            "stall" => FaultKind::Stall {
                after_chunks: s.after_chunks.unwrap_or(0),
            },
            "drop_connection" => FaultKind::DropConnection {
                after_chunks: s.after_chunks.unwrap_or(0),
            },
            "latency" => FaultKind::Latency {
                before: Duration::from_millis(s.ms.unwrap_or(0)),
                first_token: Duration::from_millis(s.first_token_ms.unwrap_or(0)),
                per_chunk: Duration::from_millis(s.chunk_ms.unwrap_or(0)),
            },
            "invalid_tool_call" => FaultKind::InvalidToolCall(s.problem.ok_or_else(|| {
                invalid(
                    "fault kind `invalid_tool_call` needs `problem`: unknown_tool, \
                     schema_violation or not_json"
                        .into(),
                )
            })?),
            other => {
                return Err(invalid(format!(
                    "unknown fault kind `{other}` (expected status, rate_limit, \
                     insufficient_quota, overloaded, loading, stream_error, malformed_body, truncate, stall, \
                     drop_connection, latency, invalid_tool_call)"
                )));
            }
        };
        if let Some(p) = s.probability
            && !(0.0..=1.0).contains(&p)
        {
            return Err(invalid(format!(
                "fault probability {p} is not within 0..=1"
            )));
        }
        let when = s.when.map(Match::try_from).transpose()?;
        Ok(Fault {
            kind,
            times: s.times,
            probability: s.probability,
            when,
        })
    }
}

/// A small seeded generator (SplitMix64) for fault probabilities: same seed and same request
/// order give the same faults.
#[derive(Debug, Clone)]
pub(crate) struct SeededRng(u64);

impl SeededRng {
    pub(crate) fn new(seed: u64) -> Self {
        SeededRng(seed)
    }

    /// A float in `[0, 1)`.
    pub(crate) fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // 53 random bits → exact float in [0, 1).
        #[allow(clippy::cast_precision_loss)]
        let f = (z >> 11) as f64 / (1u64 << 53) as f64;
        f
    }

    /// Whether an event of probability `p` (None = certain) happens.
    pub(crate) fn chance(&mut self, p: Option<f64>) -> bool {
        match p {
            None => true,
            Some(p) => self.next_f64() < p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_file_form_parses_rate_limit_with_retry_headers() {
        let f: Fault = serde_json::from_str(
            r#"{"kind":"rate_limit","retry_after":2,"retry_after_ms":1500,"times":3}"#,
        )
        .unwrap();
        assert_eq!(f, Fault::rate_limited(2).retry_after_ms(1500).times(3));
    }

    #[test]
    fn fault_file_form_rejects_unknown_kind_and_bad_probability() {
        let e = serde_json::from_str::<Fault>(r#"{"kind":"explode"}"#).unwrap_err();
        assert!(
            e.to_string().contains("unknown fault kind `explode`"),
            "{e}"
        );
        let e = serde_json::from_str::<Fault>(r#"{"kind":"malformed_body","probability":2}"#)
            .unwrap_err();
        assert!(e.to_string().contains("probability"), "{e}");
        let e = serde_json::from_str::<Fault>(r#"{"kind":"status"}"#).unwrap_err();
        assert!(e.to_string().contains("needs `status`"), "{e}");
    }

    #[test]
    fn fault_file_form_loading_is_llama_servers_503_for_the_first_requests() {
        let f: Fault = serde_json::from_str(r#"{"kind":"loading","times":4}"#).unwrap();
        assert_eq!(f, Fault::loading().times(4));
    }

    #[test]
    fn seeded_rng_repeats_for_the_same_seed() {
        let a: Vec<f64> = (0..5)
            .scan(SeededRng::new(7), |r, _| Some(r.next_f64()))
            .collect();
        let b: Vec<f64> = (0..5)
            .scan(SeededRng::new(7), |r, _| Some(r.next_f64()))
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|x| (0.0..1.0).contains(x)));
    }
}
