//! OTLP trace export: where spans go when telemetry is on, and how export stays off the call path.
//!
//! - **Transport**: OTLP over HTTP with protobuf bodies (`/v1/traces`), sent by the project's one
//!   HTTP stack — a `reqwest` 0.13 client with rustls ([`ReqwestExporterClient`] implements
//!   `opentelemetry-http`'s `HttpClient`; the exporter's own `reqwest` feature would pull a
//!   second reqwest) — or OTLP over gRPC with `opentelemetry-otlp`'s tonic exporter, which runs
//!   on the same hyper 1 / h2 / tower (plaintext only: no TLS features are enabled).
//! - **Never blocking a call**: spans go to the SDK's batch processor (a bounded queue drained
//!   by its own thread); a full queue drops spans instead of waiting. Each export request runs
//!   on the host's Tokio runtime with a timeout, so a collector that is down or slow costs a
//!   failed export, never a stalled call.
//! - **Counting losses**: spans of a failed export are counted in
//!   `skillet_otel_spans_dropped_total` ([`skillet_engine::telemetry::metrics`]).
//! - **Cheap while the collector is down**: after a failed export, export pauses (growing
//!   back-off) and during the pause neither spans nor protobuf are made ([`super::backoff`]).
//!
//! Configuration: `[telemetry]` first, then the standard `OTEL_EXPORTER_OTLP_ENDPOINT` /
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL` /
//! `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (and
//! `OTEL_EXPORTER_OTLP_HEADERS`). Neither set: no exporter, no OpenTelemetry layer.
//!
//! Not here: which spans exist (`run::spans`), trace-context continuation (`propagation`).

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, SpanData, SpanExporter,
};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

use super::admission::{SpanAdmission, SpanGate};
use super::backoff::{ExportPause, PausingExporter};
use super::{OtlpProtocol, TelemetryConfig};

/// How long one export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// Spans buffered before new ones are dropped.
const QUEUE_SPANS: usize = 4096;

/// A running exporter. Dropping it (or [`shutdown`](Self::shutdown)) flushes what is queued, within
/// the export timeout.
#[derive(Debug)]
pub struct OtlpExport {
    provider: SdkTracerProvider,
}

impl OtlpExport {
    /// Flushes and stops the exporter.
    pub fn shutdown(self) {
        let _ = self.provider.shutdown();
    }
}

/// The `tracing` layer feeding the exporter.
pub type SpanLayer<S> = Box<dyn Layer<S> + Send + Sync + 'static>;

/// Where spans go: the transport and the traces URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpDestination {
    /// HTTP/protobuf or gRPC.
    pub protocol: OtlpProtocol,
    /// The traces URL: `{base}/v1/traces` for HTTP, the base itself for gRPC.
    pub url: String,
}

/// Whether export is on, and to where: the file's settings, else the `OTEL_*` variables.
/// `Err` names a protocol that is not supported.
pub fn destination(config: &TelemetryConfig) -> Result<Option<OtlpDestination>, String> {
    if config.disabled {
        return Ok(None);
    }
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let protocol = match config.protocol {
        Some(protocol) => protocol,
        None => match var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        {
            Some(name) => name.parse()?,
            None => OtlpProtocol::default(),
        },
    };
    // The signal path is appended to a base endpoint for HTTP only; gRPC names the service.
    let from_base = |base: &str| match protocol {
        OtlpProtocol::HttpProtobuf => format!("{}/v1/traces", base.trim_end_matches('/')),
        OtlpProtocol::Grpc => base.to_owned(),
    };
    let url = if let Some(base) = &config.otlp_endpoint {
        Some(from_base(base))
    } else if let Some(url) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        Some(url)
    } else {
        var("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| from_base(&base))
    };
    Ok(url.map(|url| OtlpDestination { protocol, url }))
}

/// What [`start`] hands the subscriber: the layer feeding the exporter, the gate to put right
/// above the registry (`super::admission`), and the running exporter.
pub struct Export<S> {
    /// The OpenTelemetry layer (only the engine's spans, no log events: events may quote content).
    pub layer: SpanLayer<S>,
    /// The innermost layer, refusing the spans nobody takes.
    pub gate: SpanGate,
    /// The exporter, to flush at exit.
    pub export: OtlpExport,
}

/// Starts the exporter when [`destination`] says so. `runtime` runs the export requests;
/// `logs` is a copy of the log layer's filter (see `super::admission`). Errors name the bad
/// setting.
pub fn start<S>(
    config: &TelemetryConfig,
    runtime: tokio::runtime::Handle,
    logs: EnvFilter,
) -> Result<Option<Export<S>>, String>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    let Some(OtlpDestination { protocol, url }) = destination(config)? else {
        return Ok(None);
    };
    let failed =
        |e: opentelemetry_otlp::ExporterBuildError| format!("OTLP exporter for {url}: {e}");
    let pause = Arc::new(ExportPause::default());
    let admission = SpanAdmission::new(pause.clone(), Some(logs));
    probe_at_startup(&url, pause.clone(), &runtime);
    let processor = match protocol {
        OtlpProtocol::HttpProtobuf => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(ReqwestExporterClient::new(
                    runtime,
                    url.starts_with("http:"),
                )?)
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(url.clone())
                .with_timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(failed)?;
            batch_processor(PausingExporter::new(exporter, pause.clone()))
        }
        OtlpProtocol::Grpc => {
            // tonic's lazily connecting channel starts its worker task on the runtime.
            let entered = runtime.enter();
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(url.clone())
                .with_timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(failed)?;
            drop(entered);
            let exporter = OnRuntime { exporter, runtime };
            batch_processor(PausingExporter::new(exporter, pause.clone()))
        }
    };
    let mut resource = Resource::builder();
    if let Some(name) = &config.service_name {
        resource = resource.with_service_name(name.clone());
    } else if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("skillet");
    }
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer("skillet");
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_level(false)
        // Async spans are entered on every poll: timing each entry and activating an
        // OpenTelemetry context there (no other OpenTelemetry instrumentation reads it) was
        // most of the layer's CPU cost.
        .with_tracked_inactivity(false)
        .with_context_activation(false)
        .with_filter(admission.otel_filter())
        .boxed();
    Ok(Some(Export {
        layer,
        gate: admission.gate(),
        export: OtlpExport { provider },
    }))
}

/// Opens a pause right away when the collector does not accept connections, so a collector
/// that is down at startup costs no spans from the first call on (instead of only after the
/// first batch failed, 0.5 s later). A reachable collector changes nothing.
fn probe_at_startup(url: &str, pause: Arc<ExportPause>, runtime: &tokio::runtime::Handle) {
    let Some((host, port)) = reqwest::Url::parse(url).ok().and_then(|url| {
        let host = url.host_str()?.trim_matches(['[', ']']).to_owned();
        Some((host, url.port_or_known_default()?))
    }) else {
        return;
    };
    runtime.spawn(async move {
        let connect = tokio::net::TcpStream::connect((host.as_str(), port));
        if !matches!(
            tokio::time::timeout(Duration::from_secs(2), connect).await,
            Ok(Ok(_))
        ) {
            pause.collector_unreachable();
        }
    });
}

/// The SDK's batch processor with a bounded queue, exporting every 0.5 s.
fn batch_processor<E: SpanExporter + 'static>(exporter: E) -> BatchSpanProcessor {
    BatchSpanProcessor::builder(exporter)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_max_queue_size(QUEUE_SPANS)
                .with_scheduled_delay(Duration::from_millis(500))
                .build(),
        )
        .build()
}

/// Runs an exporter that needs a Tokio reactor (tonic's gRPC client) from the batch
/// processor's own thread, which has none: each export is driven on `runtime`.
#[derive(Debug)]
struct OnRuntime<E> {
    exporter: E,
    runtime: tokio::runtime::Handle,
}

impl<E: SpanExporter> SpanExporter for OnRuntime<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        // The processor's thread is outside the runtime, where `block_on` is allowed; the
        // export itself is bounded by the exporter's timeout.
        self.runtime.block_on(self.exporter.export(batch))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.exporter.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.exporter.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.exporter.set_resource(resource);
    }
}

/// `opentelemetry-http`'s client over our `reqwest` 0.13. The batch processor calls it from its
/// own thread, which has no Tokio reactor, so each request is spawned onto `runtime`.
#[derive(Debug, Clone)]
pub struct ReqwestExporterClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl ReqwestExporterClient {
    /// A client with connect and total timeouts, running requests on `runtime`. For a
    /// `plaintext` (`http:`) collector no TLS roots are loaded: reading the platform's
    /// certificates costs more CPU at startup than thousands of spans.
    pub fn new(runtime: tokio::runtime::Handle, plaintext: bool) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .timeout(EXPORT_TIMEOUT);
        if plaintext {
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let client = builder
            .build()
            .map_err(|e| format!("OTLP HTTP client: {e}"))?;
        Ok(ReqwestExporterClient { client, runtime })
    }
}

#[async_trait::async_trait]
impl HttpClient for ReqwestExporterClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move {
            let (parts, body) = request.into_parts();
            let url = parts.uri.to_string();
            let response = client
                .request(parts.method, url)
                .headers(parts.headers)
                .body(body)
                .send()
                .await?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, headers, body))
        });
        let (status, headers, body) = sent.await??;
        let mut response = Response::builder().status(status).body(body)?;
        *response.headers_mut() = headers;
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_names_are_the_standard_ones() {
        assert_eq!("grpc".parse(), Ok(OtlpProtocol::Grpc));
        assert_eq!(" http/protobuf ".parse(), Ok(OtlpProtocol::HttpProtobuf));
        let refused = "http/json".parse::<OtlpProtocol>().unwrap_err();
        assert!(refused.contains("http/json"), "{refused}");
    }

    #[test]
    fn the_file_decides_protocol_and_path() {
        let config = |protocol| TelemetryConfig {
            otlp_endpoint: Some("http://collector:4318/".into()),
            protocol: Some(protocol),
            ..TelemetryConfig::default()
        };
        let http = destination(&config(OtlpProtocol::HttpProtobuf))
            .unwrap()
            .unwrap();
        assert_eq!(http.url, "http://collector:4318/v1/traces");
        let grpc = destination(&config(OtlpProtocol::Grpc)).unwrap().unwrap();
        assert_eq!(
            grpc.url, "http://collector:4318/",
            "gRPC takes the endpoint as is"
        );
        let off = TelemetryConfig {
            disabled: true,
            ..config(OtlpProtocol::Grpc)
        };
        assert_eq!(destination(&off), Ok(None));
    }

    #[tokio::test]
    async fn a_collector_refusing_connections_at_startup_pauses_export() {
        // Bound but not listening: refused, and no concurrent test can take the port meanwhile.
        let reserved = tokio::net::TcpSocket::new_v4().unwrap();
        reserved.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let closed = format!("http://{}", reserved.local_addr().unwrap());
        let pause = Arc::new(ExportPause::default());
        probe_at_startup(&closed, pause.clone(), &tokio::runtime::Handle::current());
        for _ in 0..100 {
            if !pause.admits_call() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the refused connection opened no pause");
    }
}
