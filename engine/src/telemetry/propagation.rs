//! W3C trace context from callers, so a host's trace continues into Skillet.
//!
//! A caller puts `traceparent` (and optionally `tracestate`) in the A2E call's `metadata`
//! object; over HTTP the same headers on `POST /a2e` are copied there by the transport
//! ([`adopt_headers`]) unless the body already carries them. The run loop makes the call's
//! `invoke_agent` span a child of that context ([`continue_trace`]). A malformed `traceparent`
//! is ignored (a new trace starts): outside input never fails a call here.
//!
//! Not here: exporting (`otlp`).

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The trace-context keys, as metadata keys and HTTP header names.
pub const TRACE_KEYS: [&str; 2] = ["traceparent", "tracestate"];

/// Copies `traceparent`/`tracestate` headers into a call's `metadata` where the body did not
/// set them itself.
pub fn adopt_headers(headers: &http::HeaderMap, metadata: &mut Map<String, Value>) {
    for key in TRACE_KEYS {
        if metadata.contains_key(key) {
            continue;
        }
        if let Some(value) = headers.get(key).and_then(|v| v.to_str().ok()) {
            metadata.insert(key.to_owned(), Value::String(value.to_owned()));
        }
    }
}

/// Parents `span` on the caller's trace named in `metadata`, when there is a valid one. Call it
/// before the span is first entered.
pub fn continue_trace(span: &tracing::Span, metadata: &Map<String, Value>) {
    let carrier: HashMap<String, String> = TRACE_KEYS
        .iter()
        .filter_map(|key| {
            let value = metadata.get(*key)?.as_str()?;
            Some(((*key).to_owned(), value.to_owned()))
        })
        .collect();
    if !carrier.contains_key("traceparent") {
        return;
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    if context.span().span_context().is_valid() {
        // Fails only when no OpenTelemetry layer is installed: nothing to continue then.
        let _ = span.set_parent(context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_fill_only_what_the_body_left_out() {
        let mut headers = http::HeaderMap::new();
        headers.insert("traceparent", "00-aa-bb-01".parse().unwrap());
        headers.insert("tracestate", "k=v".parse().unwrap());
        let mut metadata = Map::new();
        metadata.insert("traceparent".into(), Value::String("from-body".into()));
        adopt_headers(&headers, &mut metadata);
        assert_eq!(metadata["traceparent"], "from-body");
        assert_eq!(metadata["tracestate"], "k=v");
    }

    #[test]
    fn a_malformed_traceparent_is_ignored() {
        let mut metadata = Map::new();
        metadata.insert("traceparent".into(), Value::String("not a trace".into()));
        continue_trace(&tracing::Span::none(), &metadata);
        metadata.insert("traceparent".into(), Value::Number(5.into()));
        continue_trace(&tracing::Span::none(), &metadata);
    }
}
