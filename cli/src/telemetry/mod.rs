//! Where the run loop's spans and the log lines go: OpenTelemetry traces exported over OTLP
//! (`otlp`, pausing while the collector is unreachable: `backoff`), the `[telemetry]` table and
//! the log formatter choice (`logs`).
//!
//! Not here: the spans themselves and the metrics (the engine's `telemetry`).

pub mod admission;
pub mod backoff;
pub mod logs;
pub mod otlp;

pub use logs::LogFormat;
pub use otlp::OtlpDestination;

use serde::Deserialize;

/// The OTLP transport, named as in `OTEL_EXPORTER_OTLP_PROTOCOL`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum OtlpProtocol {
    /// Protobuf over HTTP (`POST {endpoint}/v1/traces`), the OTLP default.
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// gRPC (`opentelemetry.proto.collector.trace.v1.TraceService/Export`).
    #[serde(rename = "grpc")]
    Grpc,
}

impl std::str::FromStr for OtlpProtocol {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        match value.trim() {
            "http/protobuf" => Ok(OtlpProtocol::HttpProtobuf),
            "grpc" => Ok(OtlpProtocol::Grpc),
            other => Err(format!(
                "OTLP protocol {other:?} is not supported: use \"grpc\" or \"http/protobuf\""
            )),
        }
    }
}

/// `[telemetry]` in `skillet.toml`. Every key is optional; the standard `OTEL_*` variables
/// fill what the file leaves out (see `docs/OBSERVABILITY.md`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// OTLP base endpoint (`http://collector:4318` for HTTP, where `/v1/traces` is appended;
    /// `http://collector:4317` for gRPC). When absent, `OTEL_EXPORTER_OTLP_ENDPOINT` /
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; when neither is set, no traces are exported.
    pub otlp_endpoint: Option<String>,
    /// The OTLP transport (default: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` /
    /// `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`).
    pub protocol: Option<OtlpProtocol>,
    /// `service.name` of the exported resource (default: `OTEL_SERVICE_NAME`, else `skillet`).
    pub service_name: Option<String>,
    /// Record message content (model answers, tool arguments and results) on spans. Off by
    /// default: content may be personal or confidential data.
    pub capture_content: bool,
    /// Send each turn's reasoning (thinking, `reasoning_content`, `<think>`) to the caller as a
    /// `reasoning-N` artifact event. Off by default, for the same reason.
    pub reasoning_events: bool,
    /// Turns exporting off even when the `OTEL_*` variables are set.
    pub disabled: bool,
}
