//! Telemetry's data side: the GenAI semantic-conventions version the run loop's spans follow,
//! W3C trace-context continuation from callers (`propagation`), Prometheus metrics
//! (`metrics`) and price tables for cost estimates (`pricing`).
//!
//! The spans themselves are opened by the run loop (`run::spans`) following the OpenTelemetry
//! GenAI semantic conventions; this module does not decide where they go. Nothing here runs a
//! call, and nothing here is needed for one: with telemetry off every function is a cheap no-op.
//!
//! Not here: exporting spans over OTLP, the log format and the `[telemetry]`/`[pricing]` file
//! sections (the `skillet` binary's `telemetry` and `config`), the `GET /metrics` route
//! (`skillet-host`'s `metrics_route`).

pub mod metrics;
pub mod pricing;
pub mod propagation;

pub use pricing::{ModelPrice, Pricing, TokenCounts};

/// The call metadata key naming who asked for the call (an identity id, never a secret): set
/// only by the host core after authentication, recorded as the call span's `enduser.id`.
pub const CALLER_METADATA_KEY: &str = "skillet.caller";

/// The version of the OpenTelemetry GenAI semantic conventions the spans follow.
pub const GENAI_SEMCONV_VERSION: &str = "1.37.0";
