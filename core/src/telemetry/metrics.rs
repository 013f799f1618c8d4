//! Prometheus metrics of the process, served as `GET /metrics` (OpenMetrics text) by
//! `skillet serve --http` through `skillet_host::metrics_route::router`.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `skillet_calls_total` | counter | `skill`, `outcome` (`success` or the A2E error code) |
//! | `skillet_calls_in_flight` | gauge | — |
//! | `skillet_call_duration_seconds` | histogram | `skill` |
//! | `skillet_turn_duration_seconds` | histogram | `skill` |
//! | `skillet_tokens_total` | counter | `model`, `direction` (`input`, `output`; `cached_input`, `reasoning` when reported — parts of `input`, `output`) |
//! | `skillet_provider_retries_total` | counter | `provider`, `reason` (the provider error kind) |
//! | `skillet_tool_calls_total` / `skillet_tool_errors_total` | counter | `tool` |
//! | `skillet_admission_refusals_total` | counter | — |
//! | `skillet_otel_spans_dropped_total` | counter | — |
//! | `skillet_a2a_push_deliveries_total` | counter | `outcome` (`delivered`, `failed`, `dropped`) |
//!
//! Label values come from the host's own configuration (skill, tool and model names it
//! serves), never raw caller input: a call of an unknown skill or a model's call of an unknown
//! tool is labelled `unknown`, so a caller cannot grow the label space.
//!
//! One registry per process ([`get`]): the run loop records, the transport serves.
//! Not here: spans (`run::spans`).

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use skillet_providers::Usage;

/// The label standing for a name that is not the host's own.
pub const UNKNOWN: &str = "unknown";

type Labels<const N: usize> = [(&'static str, String); N];
type Histograms = Family<Labels<1>, Histogram, fn() -> Histogram>;

/// Every metric of the process.
#[derive(Debug)]
pub struct Metrics {
    /// Finished calls (answered, rejections included).
    pub calls: Family<Labels<2>, Counter>,
    /// Calls executing now.
    pub in_flight: Gauge,
    /// Wall time of executed calls.
    pub call_duration: Histograms,
    /// Wall time of turns (provider request plus tools).
    pub turn_duration: Histograms,
    /// Tokens reported by providers.
    pub tokens: Family<Labels<2>, Counter>,
    /// Provider responses that reported no token usage (their tokens are unknown, so
    /// `tokens` undercounts by what these used).
    pub usage_unreported: Family<Labels<1>, Counter>,
    /// Provider request retries.
    pub provider_retries: Family<Labels<2>, Counter>,
    /// Tool calls answered.
    pub tool_calls: Family<Labels<1>, Counter>,
    /// Tool calls answered with an error.
    pub tool_errors: Family<Labels<1>, Counter>,
    /// Calls refused because the host was at its concurrent-call limit.
    pub admission_refusals: Counter,
    /// Spans lost because their export failed.
    pub otel_spans_dropped: Counter,
    /// A2A push notifications by outcome.
    pub a2a_push_deliveries: Family<Labels<1>, Counter>,
    registry: Registry,
}

fn duration_histogram() -> Histogram {
    // 10 ms … ~164 s.
    Histogram::new(exponential_buckets(0.01, 2.0, 15))
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("skillet");
        let metrics = Metrics {
            calls: Family::default(),
            in_flight: Gauge::default(),
            call_duration: Family::new_with_constructor(duration_histogram),
            turn_duration: Family::new_with_constructor(duration_histogram),
            tokens: Family::default(),
            usage_unreported: Family::default(),
            provider_retries: Family::default(),
            tool_calls: Family::default(),
            tool_errors: Family::default(),
            admission_refusals: Counter::default(),
            otel_spans_dropped: Counter::default(),
            a2a_push_deliveries: Family::default(),
            registry: Registry::default(),
        };
        registry.register("calls", "Skill calls answered", metrics.calls.clone());
        registry.register(
            "calls_in_flight",
            "Skill calls executing now",
            metrics.in_flight.clone(),
        );
        registry.register(
            "call_duration_seconds",
            "Wall time of executed skill calls",
            metrics.call_duration.clone(),
        );
        registry.register(
            "turn_duration_seconds",
            "Wall time of turns (provider request and tools)",
            metrics.turn_duration.clone(),
        );
        registry.register(
            "tokens",
            "Tokens reported by providers",
            metrics.tokens.clone(),
        );
        registry.register(
            "usage_unreported",
            "Provider responses without token usage (tokens unknown)",
            metrics.usage_unreported.clone(),
        );
        registry.register(
            "provider_retries",
            "Provider request retries",
            metrics.provider_retries.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls answered",
            metrics.tool_calls.clone(),
        );
        registry.register(
            "tool_errors",
            "Tool calls answered with an error",
            metrics.tool_errors.clone(),
        );
        registry.register(
            "admission_refusals",
            "Calls refused at the concurrent-call limit",
            metrics.admission_refusals.clone(),
        );
        registry.register(
            "otel_spans_dropped",
            "Spans lost because their OTLP export failed",
            metrics.otel_spans_dropped.clone(),
        );
        registry.register(
            "a2a_push_deliveries",
            "A2A push notifications: delivered, failed after retries, or dropped from a full queue",
            metrics.a2a_push_deliveries.clone(),
        );
        Metrics {
            registry,
            ..metrics
        }
    }

    /// Counts an answered call.
    pub fn call_answered(&self, skill: &str, outcome: &str) {
        self.calls
            .get_or_create(&[("skill", skill.to_owned()), ("outcome", outcome.to_owned())])
            .inc();
    }

    /// Records an executed call's wall time.
    pub fn call_took(&self, skill: &str, took: Duration) {
        self.call_duration
            .get_or_create(&[("skill", skill.to_owned())])
            .observe(took.as_secs_f64());
    }

    /// Records a turn's wall time.
    pub fn turn_took(&self, skill: &str, took: Duration) {
        self.turn_duration
            .get_or_create(&[("skill", skill.to_owned())])
            .observe(took.as_secs_f64());
    }

    /// Adds the tokens of one provider response.
    pub fn tokens_used(&self, model: &str, usage: &Usage) {
        let counts = [
            ("input", Some(usage.input_tokens)),
            ("output", Some(usage.output_tokens)),
            ("cached_input", usage.cached_input_tokens),
            ("cache_creation_input", usage.cache_creation_input_tokens),
            ("reasoning", usage.reasoning_tokens),
        ];
        for (direction, n) in counts {
            let Some(n) = n else { continue };
            self.tokens
                .get_or_create(&[
                    ("model", model.to_owned()),
                    ("direction", direction.to_owned()),
                ])
                .inc_by(n);
        }
    }

    /// Counts a provider response that reported no usage.
    pub fn usage_unreported(&self, model: &str) {
        self.usage_unreported
            .get_or_create(&[("model", model.to_owned())])
            .inc();
    }

    /// Counts a provider retry.
    pub fn provider_retried(&self, provider: &str, reason: &str) {
        self.provider_retries
            .get_or_create(&[
                ("provider", provider.to_owned()),
                ("reason", reason.to_owned()),
            ])
            .inc();
    }

    /// Counts an answered tool call (and its error).
    pub fn tool_answered(&self, tool: &str, failed: bool) {
        let labels = [("tool", tool.to_owned())];
        self.tool_calls.get_or_create(&labels).inc();
        if failed {
            self.tool_errors.get_or_create(&labels).inc();
        }
    }

    /// The OpenMetrics text of every metric.
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// The process's metrics.
pub fn get() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

/// Counts an A2A push notification by `outcome` (`delivered`, `failed`, `dropped`).
pub fn a2a_push(outcome: &'static str) {
    get()
        .a2a_push_deliveries
        .get_or_create(&[("outcome", outcome.to_owned())])
        .inc();
}

/// Counts a call refused at the concurrent-call limit (for the transports).
pub fn admission_refused() {
    get().admission_refusals.inc();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_names_every_family_with_its_labels() {
        let metrics = Metrics::new();
        metrics.call_answered("s", "success");
        let usage = Usage {
            input_tokens: 3,
            output_tokens: 4,
            reasoning_tokens: Some(2),
            ..Usage::default()
        };
        metrics.tokens_used("m", &usage);
        metrics.tool_answered("calculator", true);
        let text = metrics.render();
        assert!(
            text.contains(r#"skillet_calls_total{skill="s",outcome="success"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"skillet_tokens_total{model="m",direction="output"} 4"#),
            "{text}"
        );
        assert!(
            text.contains(r#"skillet_tokens_total{model="m",direction="reasoning"} 2"#),
            "{text}"
        );
        assert!(
            !text.contains(r#"direction="cached_input""#),
            "not reported, not counted: {text}"
        );
        assert!(
            text.contains(r#"skillet_tool_errors_total{tool="calculator"} 1"#),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
