//! W3C trace context from callers, so a host's trace continues into Skillet.
//!
//! A caller puts `traceparent` (and optionally `tracestate`) in the A2E call's `metadata`
//! object; over HTTP the same headers on `POST /a2e` are copied there by the transport
//! ([`TraceHeaders`]) unless the body already carries them, and an MCP `tools/call` carries
//! them in its `_meta` (SEP-414), copied there by [`adopt_from_meta`]. The run loop makes the call's
//! `invoke_agent` span a child of that context (`continue_trace`). A malformed `traceparent`
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

/// The `traceparent`/`tracestate` headers of an HTTP request, taken before its body is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceHeaders(Vec<(&'static str, String)>);

impl TraceHeaders {
    /// The trace-context headers present (and valid UTF-8) in `headers`.
    pub fn from_headers(headers: &http::HeaderMap) -> Self {
        TraceHeaders(
            TRACE_KEYS
                .iter()
                .filter_map(|key| {
                    let value = headers.get(*key)?.to_str().ok()?;
                    Some((*key, value.to_owned()))
                })
                .collect(),
        )
    }

    /// Copies them into a call's `metadata` where the body did not set them itself.
    pub fn adopt_into(self, metadata: &mut Map<String, Value>) {
        for (key, value) in self.0 {
            if !metadata.contains_key(key) {
                metadata.insert(key.to_owned(), Value::String(value));
            }
        }
    }
}

/// Copies the trace-context keys of an MCP request's `_meta` (string values only) into a
/// call's `metadata`, where the call's arguments did not set them.
pub fn adopt_from_meta(meta: &Map<String, Value>, metadata: &mut Map<String, Value>) {
    for key in TRACE_KEYS {
        if let Some(value @ Value::String(_)) = meta.get(key)
            && !metadata.contains_key(key)
        {
            metadata.insert(key.to_owned(), value.clone());
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
        TraceHeaders::from_headers(&headers).adopt_into(&mut metadata);
        assert_eq!(metadata["traceparent"], "from-body");
        assert_eq!(metadata["tracestate"], "k=v");
    }

    #[test]
    fn mcp_meta_trace_keys_are_copied_and_nothing_else() {
        let meta: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "tracestate": 7,
            "progressToken": "p1"
        }))
        .unwrap();
        let mut metadata = Map::new();
        adopt_from_meta(&meta, &mut metadata);
        assert_eq!(
            metadata["traceparent"],
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        );
        assert_eq!(
            metadata.len(),
            1,
            "a non-string tracestate and other keys stay out"
        );
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
