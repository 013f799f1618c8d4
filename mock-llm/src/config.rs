//! [`MockConfig`]: how a server is set up (listen address, scenario, clock, delays, seed), and the
//! [`Clock`] that stamps replies. Runtime state (counters, journal) lives in `server`.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::scenario::{Scenario, Timing};

/// 2024-01-01T00:00:00Z, the default fixed time: replies are byte-identical across runs.
pub const DEFAULT_EPOCH_SECS: u64 = 1_704_067_200;

/// Where reply timestamps come from.
#[derive(Clone)]
pub enum Clock {
    /// Always this Unix time (seconds). The default, for determinism.
    Fixed(u64),
    /// The system clock.
    System,
    /// Any function returning Unix seconds (tests that need time to move).
    Custom(Arc<dyn Fn() -> u64 + Send + Sync>),
}

impl Clock {
    /// Current Unix time in seconds.
    pub fn now_secs(&self) -> u64 {
        match self {
            Clock::Fixed(t) => *t,
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            Clock::Custom(f) => f(),
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::Fixed(DEFAULT_EPOCH_SECS)
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Clock::Fixed(t) => write!(f, "Clock::Fixed({t})"),
            Clock::System => f.write_str("Clock::System"),
            Clock::Custom(_) => f.write_str("Clock::Custom(..)"),
        }
    }
}

/// Server settings. Build with `MockConfig::default().with_...`.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// Address to bind (default `127.0.0.1:0`, an ephemeral loopback port).
    pub listen: SocketAddr,
    /// The scenario to serve.
    pub scenario: Scenario,
    /// Timestamps.
    pub clock: Clock,
    /// Delays for every answer (a rule's `timing` replaces them).
    pub timing: Timing,
    /// Seed for fault probabilities (a scenario's `seed` replaces it).
    pub seed: u64,
    /// Model names listed by `/v1/models` and `/api/tags`, before the scenario's.
    pub models: Vec<String>,
    /// Reject chat requests that carry no credential (`Authorization` or `x-api-key`) with 401.
    pub require_auth: bool,
    /// How many journal entries are kept (oldest dropped first), so long runs stay bounded.
    pub journal_limit: usize,
    /// Largest request body accepted, in bytes (beyond: HTTP 413). Default
    /// [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
}

/// The default [`MockConfig::max_body_bytes`]: 16 MiB, well above a real API's typical request.
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            scenario: Scenario::default(),
            clock: Clock::default(),
            timing: Timing::default(),
            seed: 0,
            models: vec!["mock-model".to_owned()],
            require_auth: false,
            journal_limit: 10_000,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl MockConfig {
    /// Serve this scenario.
    pub fn with_scenario(mut self, scenario: Scenario) -> Self {
        self.scenario = scenario;
        self
    }

    /// Bind this address.
    pub fn with_listen(mut self, listen: SocketAddr) -> Self {
        self.listen = listen;
        self
    }

    /// Use this clock.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Delay every response by `latency` before its headers.
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.timing.latency = latency;
        self
    }

    /// Delay before the first chunk and between chunks of streams.
    pub fn with_stream_delays(mut self, first_token: Duration, per_chunk: Duration) -> Self {
        self.timing.first_token = first_token;
        self.timing.per_chunk = per_chunk;
        self
    }

    /// Seed for fault probabilities.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Keep at most `limit` journal entries (at least 1).
    pub fn with_journal_limit(mut self, limit: usize) -> Self {
        self.journal_limit = limit;
        self
    }

    /// Accept request bodies up to `bytes`.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Require a credential header on chat requests.
    pub fn with_required_auth(mut self, required: bool) -> Self {
        self.require_auth = required;
        self
    }
}
