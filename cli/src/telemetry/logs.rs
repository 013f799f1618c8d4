//! The log line format on stderr: human text (ANSI colour only when the caller says so: the CLI
//! decides from the terminal and `NO_COLOR`) or one JSON object per line for log shippers
//! (`--log-format json`).
//!
//! Not here: which logs are wanted (the CLI's filter), span export (`otlp`).

use tracing_subscriber::Layer;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::registry::LookupSpan;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (timestamp, level, fields, current span).
    Json,
}

/// The stderr formatting layer for `format`, writing through `writer` (the CLI passes one that
/// redacts the host's secrets). Text is coloured only when `ansi`.
pub fn stderr_layer<S, W>(
    format: LogFormat,
    ansi: bool,
    writer: W,
) -> Box<dyn Layer<S> + Send + Sync + 'static>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_target(false);
    match format {
        LogFormat::Text => layer.with_ansi(ansi).boxed(),
        LogFormat::Json => layer
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .boxed(),
    }
}
