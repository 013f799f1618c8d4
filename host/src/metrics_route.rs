//! `GET /metrics`: the engine's Prometheus registry (`skillet_core::telemetry::metrics`) in
//! the OpenMetrics text format, as a router to merge into a transport's router.
//!
//! Not here: the metrics themselves (the engine counts them where they happen).

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing;
use skillet_core::telemetry::metrics;

/// A router serving `GET /metrics`, to merge into a transport's router.
pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/metrics", routing::get(serve_metrics))
}

async fn serve_metrics() -> Response {
    let mut response = (StatusCode::OK, metrics::get().render()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}
