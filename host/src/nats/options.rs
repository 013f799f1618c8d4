//! `NatsOptions`: how a NATS JetStream worker (`serve --nats`) and client (`call --nats`) reach
//! the server — URL, credentials (a `.creds` file, or a token read from a named environment
//! variable, never inline), the stream, consumer and result-bucket names, and the delivery
//! settings of the worker pool. The binary reads it from `skillet.toml`'s `[nats]` table.
//!
//! Not here: connecting (`connect`), the subjects (`subjects`), the worker or the client.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// `[nats]`. Every key is optional; the command line's `--nats URL` overrides `url`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NatsOptions {
    /// The server, `nats://HOST:PORT` (default `nats://127.0.0.1:4222`).
    pub url: String,
    /// A NATS `.creds` file (JWT + NKey seed); relative to the config file.
    pub credentials_file: Option<PathBuf>,
    /// The NAME of the environment variable holding an auth token (the token itself never goes
    /// in the file).
    pub token_env: Option<String>,
    /// The NAME of the environment variable holding the API key or JWT a client (`call --nats`)
    /// sends in each call's `Authorization: Bearer` header, for workers under `[auth]`.
    pub bearer_env: Option<String>,
    /// The JetStream stream holding calls (subjects `<subject_prefix>.call.<skill>`).
    pub stream: String,
    /// The durable pull consumer all workers share.
    pub consumer: String,
    /// The JetStream key-value bucket keeping each request's one answer.
    pub results_bucket: String,
    /// The first token of every subject (default `skillet`).
    pub subject_prefix: String,
    /// Calls one worker runs at once; also the consumer's `max_ack_pending` unless
    /// `max_ack_pending` is set.
    pub concurrency: usize,
    /// The consumer's `max_ack_pending`: calls handed out and not yet acked across ALL workers
    /// sharing the consumer (default: `concurrency`).
    pub max_ack_pending: Option<i64>,
    /// Seconds the server waits for an ack (or an in-progress ack) before redelivering.
    pub ack_wait_seconds: f64,
    /// Deliveries a call may use; a call delivered more often is answered with
    /// `runtime_error` instead of being run again.
    pub max_deliveries: i64,
    /// Seconds a stored answer is kept for callers that reconnect.
    pub result_ttl_seconds: u64,
    /// Seconds within which a second submission with the same request id is dropped.
    pub duplicate_window_seconds: u64,
    /// An inline `token` is refused (named in the error, its value never read or echoed).
    #[serde(default)]
    token: Option<serde::de::IgnoredAny>,
}

impl Default for NatsOptions {
    fn default() -> Self {
        NatsOptions {
            url: "nats://127.0.0.1:4222".into(),
            credentials_file: None,
            token_env: None,
            bearer_env: None,
            stream: "SKILLET_CALLS".into(),
            consumer: "skillet-workers".into(),
            results_bucket: "skillet-results".into(),
            subject_prefix: "skillet".into(),
            concurrency: 16,
            max_ack_pending: None,
            ack_wait_seconds: 30.0,
            max_deliveries: 3,
            result_ttl_seconds: 24 * 3600,
            duplicate_window_seconds: 120,
            token: None,
        }
    }
}

impl NatsOptions {
    /// The ack wait (at least 100 ms).
    pub(crate) fn ack_wait(&self) -> Duration {
        Duration::try_from_secs_f64(self.ack_wait_seconds)
            .unwrap_or(Duration::from_secs(30))
            .max(Duration::from_millis(100))
    }

    /// How long answers are kept.
    pub(crate) fn result_ttl(&self) -> Duration {
        Duration::from_secs(self.result_ttl_seconds.max(1))
    }

    /// How long JetStream remembers a call id to drop a republished duplicate (at least 1 s).
    pub(crate) fn duplicate_window(&self) -> Duration {
        Duration::from_secs(self.duplicate_window_seconds.max(1))
    }

    /// The consumer's `max_ack_pending`.
    pub fn max_ack_pending(&self) -> i64 {
        self.max_ack_pending
            .unwrap_or(self.concurrency.max(1) as i64)
            .max(1)
    }

    /// What is wrong with the values, if anything (`key: reason`).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.token.is_some() {
            problems.push(
                "nats.token: an inline token is refused; put it in an environment variable and name it in token_env"
                    .to_owned(),
            );
        }
        if self.concurrency == 0 {
            problems.push("nats.concurrency: must be at least 1".to_owned());
        }
        if self.max_deliveries < 1 {
            problems.push("nats.max_deliveries: must be at least 1".to_owned());
        }
        if !self.ack_wait_seconds.is_finite() || self.ack_wait_seconds <= 0.0 {
            problems.push("nats.ack_wait_seconds: must be a positive number".to_owned());
        }
        let token_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        for (key, value) in [
            ("stream", &self.stream),
            ("consumer", &self.consumer),
            ("results_bucket", &self.results_bucket),
            ("subject_prefix", &self.subject_prefix),
        ] {
            if !token_ok(value) {
                problems.push(format!(
                    "nats.{key}: {value:?} must be letters, digits, '-' or '_'"
                ));
            }
        }
        problems
    }
}
