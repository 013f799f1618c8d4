//! OTLP trace export: where spans go when telemetry is on, and how export stays off the call path.
//!
//! - **Transport**: OTLP over HTTP with protobuf bodies (`/v1/traces`), sent by the project's one
//!   HTTP stack — a `reqwest` 0.13 client with rustls ([`ReqwestExporterClient`] implements
//!   `opentelemetry-http`'s `HttpClient`; the exporter's own `reqwest` feature would pull a
//!   second reqwest). gRPC is not offered: it needs `tonic`, a second HTTP stack.
//! - **Never blocking a call**: spans go to the SDK's batch processor (a bounded queue drained
//!   by its own thread); a full queue drops spans instead of waiting. Each export request runs
//!   on the host's Tokio runtime with a timeout, so a collector that is down or slow costs a
//!   failed export, never a stalled call.
//! - **Counting losses**: spans of a failed export are counted in
//!   `skillet_otel_spans_dropped_total` ([`super::metrics`]).
//!
//! Configuration: `[telemetry]` first, then the standard `OTEL_EXPORTER_OTLP_ENDPOINT` /
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`
//! (and `OTEL_EXPORTER_OTLP_HEADERS`). Neither set: no exporter, no OpenTelemetry layer.
//!
//! Not here: which spans exist (`run::spans`), trace-context continuation (`propagation`).

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, SpanData, SpanExporter,
};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::registry::LookupSpan;

use super::TelemetryConfig;
use super::metrics;

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

/// Whether export is on, and to where: the configured endpoint, else the `OTEL_*` variables.
pub fn endpoint(config: &TelemetryConfig) -> Option<String> {
    if config.disabled {
        return None;
    }
    if let Some(base) = &config.otlp_endpoint {
        return Some(traces_url(base));
    }
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if let Some(url) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Some(url);
    }
    var("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| traces_url(&base))
}

fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// Starts the exporter when [`endpoint`] says so, and returns the `tracing` layer that feeds it
/// (only the engine's spans, no log events: events may quote content). `runtime` runs the export
/// requests. Errors name the bad setting.
pub fn start<S>(
    config: &TelemetryConfig,
    runtime: tokio::runtime::Handle,
) -> Result<Option<(SpanLayer<S>, OtlpExport)>, String>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    let Some(url) = endpoint(config) else {
        return Ok(None);
    };
    let client = ReqwestExporterClient::new(runtime)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(url.clone())
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| format!("OTLP exporter for {url}: {e}"))?;
    let processor = BatchSpanProcessor::builder(CountingExporter(exporter))
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_max_queue_size(QUEUE_SPANS)
                .with_scheduled_delay(Duration::from_millis(500))
                .build(),
        )
        .build();
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
        .with_filter(
            filter_fn(|meta| meta.is_span() && meta.target().starts_with("skillet_engine"))
                // Lets `debug!`/`trace!` callsites everywhere stay statically disabled.
                .with_max_level_hint(tracing::Level::INFO),
        )
        .boxed();
    Ok(Some((layer, OtlpExport { provider })))
}

/// Counts the spans of exports that failed (collector down, refused, timed out).
#[derive(Debug)]
struct CountingExporter<E>(E);

impl<E: SpanExporter> SpanExporter for CountingExporter<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len() as u64;
        let result = self.0.export(batch).await;
        if result.is_err() {
            metrics::get().otel_spans_dropped.inc_by(spans);
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.0.set_resource(resource);
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
    /// A client with connect and total timeouts, running requests on `runtime`.
    pub fn new(runtime: tokio::runtime::Handle) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .timeout(EXPORT_TIMEOUT)
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
