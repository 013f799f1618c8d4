//! Telemetry a door and the engine share: the Prometheus registry both count into
//! (`metrics`), W3C trace-context continuation from callers (`propagation`), and the call
//! metadata key naming the authenticated caller.
//!
//! Not here: the run loop's spans and price tables (the engine's `run::spans`,
//! `telemetry::pricing`), exporting spans over OTLP and the log format (the `skillet` binary),
//! the `GET /metrics` route (`skillet-host`'s `metrics_route`).

pub mod metrics;
pub mod propagation;

/// The call metadata key naming who asked for the call (an identity id, never a secret): set
/// only by the host core after authentication, recorded as the call span's `enduser.id`.
pub const CALLER_METADATA_KEY: &str = "skillet.caller";
