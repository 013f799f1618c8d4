//! Which of the engine's spans are built while traces are exported, and where that is decided so
//! that a refused span costs nothing.
//!
//! **The rule** ([`SpanAdmission::admits`]): a call's root span (`invoke_agent`) is built unless
//! export is backing off ([`super::backoff::ExportPause`]); every other engine span only under a
//! built one, so an untraced call stays wholly untraced. A refused span is counted in
//! `skillet_otel_spans_dropped_total`.
//!
//! **Where it is applied.** A per-layer filter that returns `false` for a callsite it called
//! "sometimes" does not stop `tracing-subscriber`'s registry from building the span: the registry
//! builds every span that reaches it and each per-layer-filtered layer then skips it. The span's
//! enters, exits, records and close still go through every filtered layer, each looking the span
//! up (measured: ~90 registry lookups per refused call, +12 µs of server CPU per turn over HTTP).
//! Only a layer's own `enabled` (a "global" filter) can refuse a span outright. So:
//! - when the log layer does not want an engine span (the default `warn`), the rule is applied
//!   by [`SpanGate`], the innermost layer, which refuses the span for the whole stack: nothing is
//!   built, nothing is looked up per poll;
//! - when the log layer wants it (`-v`, `RUST_LOG=info`), the gate lets it through and the
//!   OpenTelemetry layer's own filter ([`SpanAdmission::otel_filter`]) applies the rule, so the
//!   log lines keep their span context.
//!
//! For any one span exactly one of the two decides: both ask a copy of the log layer's filter
//! (built from the same settings) whether it wants the span. A log filter with span directives
//! (`RUST_LOG='[invoke_agent]=debug'`) depends on span state the copy does not track, so with
//! one the gate lets every span through.
//!
//! Not here: the pause itself (`backoff`), the exporter (`otlp`).

use std::sync::Arc;

use tracing::subscriber::Interest;
use tracing::{Metadata, Subscriber};
use tracing_subscriber::filter::{LevelFilter, dynamic_filter_fn};
use tracing_subscriber::layer::{Context, Filter};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{EnvFilter, Layer};

use super::backoff::ExportPause;
use skillet_engine::telemetry::metrics;

/// The root span of a call (`run::spans::invoke_agent`).
const CALL_SPAN: &str = "invoke_agent";
/// The target prefix of the engine's spans (the only ones exported).
const ENGINE_TARGET: &str = "skillet_engine";

/// Whether `meta` is one of the engine's spans (the only callsites traces are made of).
fn is_engine_span(meta: &Metadata<'_>) -> bool {
    meta.is_span() && meta.target().starts_with(ENGINE_TARGET)
}

/// The admission rule, shared by [`SpanGate`] and the OpenTelemetry layer's filter.
#[derive(Debug, Clone)]
pub struct SpanAdmission {
    pause: Arc<ExportPause>,
    /// A copy of the log layer's filter (`None`: assume the logs want every span).
    logs: Option<Arc<EnvFilter>>,
}

impl SpanAdmission {
    /// The rule for an exporter paused by `pause`, next to a log layer filtered by a filter
    /// equal to `logs` (a copy built from the same settings; `None`: no log layer is known).
    pub fn new(pause: Arc<ExportPause>, logs: Option<EnvFilter>) -> Self {
        let logs = logs.filter(|filter| !filter.to_string().contains('['));
        SpanAdmission {
            pause,
            logs: logs.map(Arc::new),
        }
    }

    /// Whether the log layer wants the span `meta` (then it is built anyway and the
    /// OpenTelemetry layer's filter decides; else the gate does).
    fn logs_take<S>(&self, meta: &Metadata<'_>, cx: &Context<'_, S>) -> bool
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        self.logs
            .as_ref()
            .is_none_or(|logs| logs.enabled(meta, cx.clone()))
    }

    /// The rule: `under_traced_span` says whether the current span is one this rule admitted.
    fn admits(&self, meta: &Metadata<'_>, under_traced_span: impl FnOnce() -> bool) -> bool {
        let admitted = if meta.name() == CALL_SPAN {
            self.pause.admits_call()
        } else {
            under_traced_span()
        };
        if !admitted {
            metrics::get().otel_spans_dropped.inc();
        }
        admitted
    }

    /// The innermost layer of the stack, refusing the spans the rule refuses when no log line
    /// can want them.
    pub fn gate(&self) -> SpanGate {
        SpanGate {
            admission: self.clone(),
        }
    }

    /// The OpenTelemetry layer's filter: engine spans only (no events, no other crate's spans,
    /// each callsite told once), and the rule for the spans the gate let through for the logs.
    pub fn otel_filter<S>(&self) -> impl Filter<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let admission = self.clone();
        dynamic_filter_fn(move |meta, cx: &Context<'_, S>| {
            if !is_engine_span(meta) {
                return false;
            }
            if !admission.logs_take(meta, cx) {
                // The gate applied the rule: whatever reaches this layer was admitted.
                return true;
            }
            // `cx` is this layer's view: its current span is one this layer took.
            admission.admits(meta, || cx.lookup_current().is_some())
        })
        // Lets `debug!`/`trace!` callsites everywhere stay statically disabled.
        .with_max_level_hint(LevelFilter::INFO)
        .with_callsite_filter(|meta| {
            if is_engine_span(meta) {
                Interest::sometimes()
            } else {
                Interest::never()
            }
        })
    }
}

/// A global filter for the engine's spans alone (see the module docs); every other callsite is
/// left to the filtered layers above it. Put it first, right above the registry.
#[derive(Debug)]
pub struct SpanGate {
    admission: SpanAdmission,
}

impl<S> Layer<S> for SpanGate
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if is_engine_span(meta) {
            Interest::sometimes()
        } else {
            // Right above the registry, "always" defers to the filtered layers' sum.
            Interest::always()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>, cx: Context<'_, S>) -> bool {
        if !is_engine_span(meta) || self.admission.logs_take(meta, &cx) {
            return true;
        }
        // Every engine span alive here was admitted by this gate (the logs take none).
        self.admission.admits(meta, || {
            cx.lookup_current()
                .is_some_and(|span| is_engine_span(span.metadata()))
        })
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        // The most verbose span it passes; the layers above add their own levels.
        Some(LevelFilter::INFO)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    /// Counts the spans and events it is shown, and the spans the registry holds.
    #[derive(Default)]
    struct Seen {
        spans: Mutex<Vec<String>>,
        enters: AtomicUsize,
        events: AtomicUsize,
    }

    struct Recorder(Arc<Seen>);

    impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _: &tracing::Id,
            _: Context<'_, S>,
        ) {
            self.0
                .spans
                .lock()
                .unwrap()
                .push(attrs.metadata().name().to_owned());
        }
        fn on_enter(&self, _: &tracing::Id, _: Context<'_, S>) {
            self.0.enters.fetch_add(1, Ordering::Relaxed);
        }
        fn on_event(&self, _: &tracing::Event<'_>, _: Context<'_, S>) {
            self.0.events.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// One call's spans as the engine makes them: the root, a child entered under it, an event.
    /// Returns whether the root and the child were built at all.
    fn one_call() -> (bool, bool) {
        // The target must be the engine's: these spans are made in this test's module, so name it.
        let root = tracing::info_span!(target: "skillet_engine::run::spans", "invoke_agent");
        let _in_root = root.enter();
        let child = tracing::info_span!(target: "skillet_engine::run::spans", "chat");
        let _in_child = child.enter();
        tracing::warn!("a warning");
        (!root.is_disabled(), !child.is_disabled())
    }

    /// The stack `init_tracing` builds: gate, log layer at `logs`, OpenTelemetry layer.
    fn with_stack(logs: &str, pause: Arc<ExportPause>, f: impl FnOnce()) -> (Arc<Seen>, Arc<Seen>) {
        let admission = SpanAdmission::new(pause, Some(EnvFilter::new(logs)));
        let (log_seen, otel_seen) = (Arc::new(Seen::default()), Arc::new(Seen::default()));
        let subscriber = tracing_subscriber::registry()
            .with(admission.gate())
            .with(Recorder(log_seen.clone()).with_filter(EnvFilter::new(logs)))
            .with(Recorder(otel_seen.clone()).with_filter(admission.otel_filter()));
        tracing::subscriber::with_default(subscriber, f);
        (log_seen, otel_seen)
    }

    #[test]
    fn a_paused_export_builds_no_span_when_the_logs_want_none() {
        let pause = Arc::new(ExportPause::default());
        pause.collector_unreachable();
        let mut built = None;
        let (logs, otel) = with_stack("warn,rmcp=info", pause, || built = Some(one_call()));
        // Not built at all: no registry entry, so nothing to look up on each poll.
        assert_eq!(built, Some((false, false)));
        assert!(otel.spans.lock().unwrap().is_empty());
        assert_eq!(otel.enters.load(Ordering::Relaxed), 0);
        // The log layer still gets its warning.
        assert_eq!(logs.events.load(Ordering::Relaxed), 1);
        assert!(logs.spans.lock().unwrap().is_empty());
    }

    #[test]
    fn an_exporting_stack_builds_the_calls_spans_for_the_exporter_alone() {
        let mut built = None;
        let (logs, otel) = with_stack("warn", Arc::default(), || built = Some(one_call()));
        assert_eq!(built, Some((true, true)));
        assert_eq!(*otel.spans.lock().unwrap(), ["invoke_agent", "chat"]);
        assert_eq!(otel.enters.load(Ordering::Relaxed), 2);
        assert_eq!(
            otel.events.load(Ordering::Relaxed),
            0,
            "events are never exported"
        );
        assert!(logs.spans.lock().unwrap().is_empty());
        assert_eq!(logs.events.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn verbose_logs_keep_their_spans_while_the_exporter_skips_them() {
        let pause = Arc::new(ExportPause::default());
        pause.collector_unreachable();
        let mut built = None;
        let (logs, otel) = with_stack("skillet_engine=info,warn", pause, || {
            built = Some(one_call())
        });
        assert_eq!(
            built,
            Some((true, true)),
            "built for the log lines' context"
        );
        assert_eq!(*logs.spans.lock().unwrap(), ["invoke_agent", "chat"]);
        assert!(
            otel.spans.lock().unwrap().is_empty(),
            "paused: not exported"
        );
        assert_eq!(otel.enters.load(Ordering::Relaxed), 0);
    }
}
