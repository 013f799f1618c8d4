//! What span export does while the collector is unreachable: pause, drop and count, cheaply.
//!
//! Without this, a collector that is down costs every span twice: once to record it (the
//! `tracing` layer, the batch queue) and once to convert and encode its batch to protobuf, only
//! for the POST to fail: encoding batches nobody will receive was a large share of the server's
//! own work while the collector was down.
//!
//! So a failed export (or a refused connection when export starts) opens a **pause**
//! ([`ExportPause`]): 1 s after the first failure, doubling per consecutive failure up to 30 s.
//! During the pause
//! - [`PausingExporter`] drops whole batches **without encoding** them, and
//! - the span layer's filter ([`ExportPause::admits_call`]) does not create call spans at all,
//!   so the layer and the queue cost nothing either;
//!
//! both count what they drop in `skillet_otel_spans_dropped_total`. When a pause ends, **one**
//! call is traced as a probe (the others still are not) and its batch is tried: a success ends
//! the back-off and every call is traced again, a failure doubles the pause. A call whose
//! `invoke_agent` span was not created has none of its spans created (the filter only creates a
//! `chat`/`execute_tool` span under a created parent), so a trace is whole or absent, never torn.
//!
//! Not here: the HTTP transport and the batch processor (`otlp`), the metric itself (`metrics`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use skillet_engine::telemetry::metrics;

/// The pause after the first failed export.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause, reached after six consecutive failures.
const LONGEST_PAUSE: Duration = Duration::from_secs(30);

/// Whether export is paused after failures, shared by the exporter (which opens and ends
/// pauses) and the span filter (which reads it on every span it would create).
#[derive(Debug)]
pub struct ExportPause {
    epoch: Instant,
    /// End of the current pause, in milliseconds since `epoch` (0: not paused).
    until_ms: AtomicU64,
    consecutive_failures: AtomicU32,
    /// Whether the probe call after the current pause has been admitted.
    probe_taken: AtomicBool,
}

impl Default for ExportPause {
    fn default() -> Self {
        ExportPause {
            epoch: Instant::now(),
            until_ms: AtomicU64::new(0),
            consecutive_failures: AtomicU32::new(0),
            probe_taken: AtomicBool::new(false),
        }
    }
}

impl ExportPause {
    /// Whether a call starting now gets spans: always while exports succeed, never during a
    /// pause, and after a pause only the first call (the probe).
    pub fn admits_call(&self) -> bool {
        self.admits_call_at(Instant::now())
    }

    fn admits_call_at(&self, now: Instant) -> bool {
        if self.consecutive_failures.load(Ordering::Relaxed) == 0 {
            return true;
        }
        !self.is_paused_at(now) && !self.probe_taken.swap(true, Ordering::Relaxed)
    }

    /// Whether export is paused now (batches are dropped unencoded).
    pub fn is_paused(&self) -> bool {
        self.is_paused_at(Instant::now())
    }

    fn is_paused_at(&self, now: Instant) -> bool {
        self.millis(now) < self.until_ms.load(Ordering::Relaxed)
    }

    /// The collector refused a connection outside an export (the startup probe): pause as
    /// after a failed export.
    pub fn collector_unreachable(&self) {
        self.failed_at(Instant::now());
    }

    /// An export failed at `now`: pause, longer than last time.
    fn failed_at(&self, now: Instant) {
        let failures = self.consecutive_failures.fetch_add(1, Ordering::Relaxed);
        let pause = FIRST_PAUSE
            .saturating_mul(1 << failures.min(16))
            .min(LONGEST_PAUSE);
        let until = self.millis(now).saturating_add(millis(pause));
        self.until_ms.store(until, Ordering::Relaxed);
        self.probe_taken.store(false, Ordering::Relaxed);
    }

    /// An export succeeded: the collector is back.
    fn succeeded(&self) {
        self.consecutive_failures.store(0, Ordering::Relaxed);
        self.until_ms.store(0, Ordering::Relaxed);
    }

    fn millis(&self, now: Instant) -> u64 {
        millis(now.saturating_duration_since(self.epoch))
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Wraps the OTLP exporter: counts the spans of failed exports, and while [`ExportPause`] says
/// so drops batches without handing them to the exporter (no conversion, no encoding, no POST).
#[derive(Debug)]
pub struct PausingExporter<E> {
    inner: E,
    pause: Arc<ExportPause>,
}

impl<E> PausingExporter<E> {
    /// `inner` guarded by `pause` (share the same `pause` with the span filter).
    pub fn new(inner: E, pause: Arc<ExportPause>) -> Self {
        PausingExporter { inner, pause }
    }
}

impl<E: SpanExporter> SpanExporter for PausingExporter<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len() as u64;
        if self.pause.is_paused() {
            drop(batch);
            metrics::get().otel_spans_dropped.inc_by(spans);
            return Err(OTelSdkError::InternalFailure(
                "collector unreachable: batch dropped during the back-off pause".into(),
            ));
        }
        let result = self.inner.export(batch).await;
        match result {
            Ok(()) => self.pause.succeeded(),
            Err(_) => {
                metrics::get().otel_spans_dropped.inc_by(spans);
                self.pause.failed_at(Instant::now());
            }
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use opentelemetry::trace::{
        SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};

    use super::*;

    #[test]
    fn pauses_double_per_consecutive_failure_up_to_the_longest() {
        let pause = ExportPause::default();
        let start = pause.epoch;
        assert!(!pause.is_paused_at(start));
        let mut expected = Vec::new();
        for _ in 0..8 {
            pause.failed_at(start);
            expected.push(pause.until_ms.load(Ordering::Relaxed));
        }
        assert_eq!(
            expected,
            [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]
        );
        assert!(pause.is_paused_at(start + Duration::from_millis(29_999)));
        assert!(!pause.is_paused_at(start + LONGEST_PAUSE));
        pause.succeeded();
        assert!(!pause.is_paused_at(start));
        pause.failed_at(start);
        assert_eq!(pause.until_ms.load(Ordering::Relaxed), 1_000, "restarts");
    }

    #[test]
    fn after_a_pause_one_probe_call_is_traced_until_the_next_export() {
        let pause = ExportPause::default();
        let start = pause.epoch;
        assert!(pause.admits_call_at(start) && pause.admits_call_at(start));
        pause.failed_at(start);
        assert!(!pause.admits_call_at(start + Duration::from_millis(999)));
        let after = start + FIRST_PAUSE;
        assert!(pause.admits_call_at(after), "the probe");
        assert!(!pause.admits_call_at(after), "only one probe");
        pause.failed_at(after);
        assert!(!pause.admits_call_at(after + Duration::from_millis(1_999)));
        assert!(
            pause.admits_call_at(after + Duration::from_secs(2)),
            "next probe"
        );
        pause.succeeded();
        assert!(pause.admits_call_at(after) && pause.admits_call_at(after));
    }

    /// An exporter that fails (or not) and records how many batches reached it.
    #[derive(Debug, Default)]
    struct Scripted {
        fail: bool,
        batches_seen: Mutex<usize>,
    }

    impl SpanExporter for Scripted {
        async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
            *self.batches_seen.lock().unwrap() += 1;
            if self.fail {
                Err(OTelSdkError::InternalFailure("connection refused".into()))
            } else {
                Ok(())
            }
        }
    }

    fn span() -> SpanData {
        let context = SpanContext::new(
            TraceId::from(1),
            SpanId::from(1),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        );
        SpanData {
            span_context: context,
            parent_span_id: SpanId::INVALID,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: "invoke_agent t".into(),
            start_time: std::time::SystemTime::UNIX_EPOCH,
            end_time: std::time::SystemTime::UNIX_EPOCH,
            attributes: Vec::new(),
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: Default::default(),
        }
    }

    #[tokio::test]
    async fn after_a_failed_export_batches_are_dropped_unencoded_and_counted() {
        let pause = Arc::new(ExportPause::default());
        let exporter = PausingExporter::new(
            Scripted {
                fail: true,
                ..Scripted::default()
            },
            pause.clone(),
        );
        let dropped = || metrics::get().otel_spans_dropped.get();
        let before = dropped();
        assert!(exporter.export(vec![span(), span()]).await.is_err());
        assert!(pause.is_paused());
        assert!(exporter.export(vec![span(), span(), span()]).await.is_err());
        assert_eq!(
            *exporter.inner.batches_seen.lock().unwrap(),
            1,
            "the second batch never reached the exporter"
        );
        // Other tests of this process may count drops too: at least ours.
        assert!(dropped() - before >= 5);
    }

    #[tokio::test]
    async fn a_successful_export_keeps_export_unpaused() {
        let pause = Arc::new(ExportPause::default());
        let exporter = PausingExporter::new(Scripted::default(), pause.clone());
        exporter.export(vec![span()]).await.unwrap();
        exporter.export(vec![span()]).await.unwrap();
        assert!(!pause.is_paused());
        assert_eq!(*exporter.inner.batches_seen.lock().unwrap(), 2);
    }
}
