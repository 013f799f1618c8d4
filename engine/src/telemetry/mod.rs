//! Telemetry's data side: the GenAI semantic-conventions version the run loop's spans follow,
//! W3C trace-context continuation from callers and Prometheus metrics (`propagation`,
//! `metrics`: `skillet-core`'s, re-exported) and price tables for cost estimates (`pricing`).
//!
//! The spans themselves are opened by the run loop (`run::spans`) following the OpenTelemetry
//! GenAI semantic conventions; this module does not decide where they go. Nothing here runs a
//! call, and nothing here is needed for one: with telemetry off every function is a cheap no-op.
//!
//! Not here: exporting spans over OTLP, the log format and the `[telemetry]`/`[pricing]` file
//! sections (the `skillet` binary's `telemetry` and `config`), the `GET /metrics` route
//! (`skillet-host`'s `metrics_route`).

mod pricing;

pub use skillet_core::telemetry::{metrics, propagation};

pub use pricing::{Cost, ModelPrice, Pricing, TokenCounts};

/// The version of the OpenTelemetry GenAI semantic conventions the spans follow.
pub const GENAI_SEMCONV_VERSION: &str = "1.37.0";
