//! Reading a response body under limits: a stall (read) timeout between two chunks, a cap on one
//! line or event, and a cap on the whole body. Cuts streamed bodies into NDJSON lines or SSE
//! events and hands each to a callback; reads whole bodies into one buffer.
//!
//! What is not here: what a line or event means (the wires decode them).

use std::time::Duration;

use crate::error::{ProviderError, ProviderErrorKind};
use crate::transport::TrackingSink;
use crate::wire::{Flow, Framing, StreamEvent};

/// Size limits on a response body. A body over a limit fails the attempt with a
/// `MalformedResponse` error naming the limit (not retried: the same request would get the same
/// answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyLimits {
    /// Longest single NDJSON line or SSE event.
    pub max_event_bytes: usize,
    /// Largest whole body, streamed or not.
    pub max_total_bytes: usize,
}

impl Default for BodyLimits {
    fn default() -> Self {
        BodyLimits {
            max_event_bytes: 4 << 20,
            max_total_bytes: 32 << 20,
        }
    }
}

/// A body being read chunk by chunk under a stall timeout and the total cap.
struct Chunks<'a> {
    response: reqwest::Response,
    stall: Duration,
    limits: BodyLimits,
    total: usize,
    /// The body went past the cap: the bytes up to it were handed out, the next read fails.
    over: bool,
    sink: &'a TrackingSink<'a>,
}

impl<'a> Chunks<'a> {
    fn new(
        response: reqwest::Response,
        stall: Duration,
        limits: BodyLimits,
        sink: &'a TrackingSink<'a>,
    ) -> Self {
        Chunks {
            response,
            stall,
            limits,
            total: 0,
            over: false,
            sink,
        }
    }

    /// The next chunk, `None` at the end of the body.
    async fn next(&mut self) -> Result<Option<bytes::Bytes>, ProviderError> {
        if self.over {
            return Err(too_large("the response body", self.limits.max_total_bytes));
        }
        let chunk = match tokio::time::timeout(self.stall, self.response.chunk()).await {
            Err(_) => {
                return Err(ProviderError::new(
                    ProviderErrorKind::Timeout,
                    format!(
                        "no data from the server for {} ms (read_timeout_ms)",
                        self.stall.as_millis()
                    ),
                )
                .with_retryable(!self.sink.delivered()));
            }
            Ok(Err(e)) => {
                let error = ProviderError::from_transport(&e);
                return Err(if error.kind == ProviderErrorKind::Timeout {
                    error.with_retryable(!self.sink.delivered())
                } else {
                    ProviderError::truncated(
                        format!("the body broke off: {}", error.message),
                        self.sink.delivered(),
                    )
                });
            }
            Ok(Ok(chunk)) => chunk,
        };
        let Some(mut chunk) = chunk else {
            return Ok(None);
        };
        // The bytes up to the cap are handed out first and the read after them fails, so a
        // stream that ends within the cap succeeds however the body was cut into reads.
        let room = self.limits.max_total_bytes - self.total;
        if chunk.len() > room {
            chunk.truncate(room);
            self.over = true;
        }
        self.total += chunk.len();
        Ok(Some(chunk))
    }
}

fn too_large(what: &str, limit: usize) -> ProviderError {
    ProviderError::malformed(format!("{what} exceeds the {limit}-byte limit")).with_retryable(false)
}

/// Reads a whole body (for non-streamed answers and error bodies).
pub(crate) async fn read_whole(
    response: reqwest::Response,
    stall: Duration,
    limits: BodyLimits,
) -> Result<Vec<u8>, ProviderError> {
    let sink = TrackingSink::new(None);
    let capacity = response
        .content_length()
        .map_or(0, |n| (n as usize).min(limits.max_total_bytes));
    let mut chunks = Chunks::new(response, stall, limits, &sink);
    let mut body = Vec::with_capacity(capacity);
    while let Some(chunk) = chunks.next().await? {
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads a streamed body and hands every event to `on_event` until it says [`Flow::Done`] or
/// the body ends. Returns whether the callback finished the stream.
pub(crate) async fn read_events(
    response: reqwest::Response,
    stall: Duration,
    limits: BodyLimits,
    framing: Framing,
    sink: &TrackingSink<'_>,
    mut on_event: impl FnMut(StreamEvent<'_>) -> Result<Flow, ProviderError>,
) -> Result<Flow, ProviderError> {
    let mut chunks = Chunks::new(response, stall, limits, sink);
    let mut lines = LineBuffer::default();
    let mut sse = SseEvent::default();
    let mut on_line = |line: &[u8]| -> Result<Flow, ProviderError> {
        match framing {
            Framing::Ndjson if line.iter().all(u8::is_ascii_whitespace) => Ok(Flow::More),
            Framing::Ndjson => on_event(StreamEvent {
                name: "",
                data: line,
            }),
            Framing::Sse => sse.line(line, limits.max_event_bytes, &mut on_event),
        }
    };
    while let Some(chunk) = chunks.next().await? {
        lines.push(&chunk);
        while let Some(line) = lines.next_line() {
            if line.len() > limits.max_event_bytes {
                return Err(too_large("a stream line", limits.max_event_bytes));
            }
            if on_line(line)? == Flow::Done {
                return Ok(Flow::Done);
            }
        }
        if lines.pending() > limits.max_event_bytes {
            return Err(too_large("a stream line", limits.max_event_bytes));
        }
    }
    // A last line without its newline, then the end of a last SSE event.
    let rest = lines.rest();
    if !rest.is_empty() && on_line(rest)? == Flow::Done {
        return Ok(Flow::Done);
    }
    on_line(b"")
}

/// Bytes received but not yet cut into lines.
#[derive(Default)]
struct LineBuffer {
    buffer: Vec<u8>,
    /// Start of the first unconsumed byte.
    start: usize,
    /// Where the search for the next newline resumes.
    scanned: usize,
}

impl LineBuffer {
    fn push(&mut self, chunk: &[u8]) {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        self.buffer.extend_from_slice(chunk);
    }

    /// The next complete line, without its `\n` (or `\r\n`).
    fn next_line(&mut self) -> Option<&[u8]> {
        let offset = self.buffer[self.scanned..]
            .iter()
            .position(|b| *b == b'\n')?;
        let end = self.scanned + offset;
        let line_start = self.start;
        self.start = end + 1;
        self.scanned = self.start;
        let line = &self.buffer[line_start..end];
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// Bytes of the unfinished line, not counting a last `\r` (the line loses it if `\n`
    /// follows), so the line cap does not depend on where the body was cut into reads.
    fn pending(&self) -> usize {
        let rest = &self.buffer[self.start..];
        rest.len() - usize::from(rest.last() == Some(&b'\r'))
    }

    fn rest(&mut self) -> &[u8] {
        let rest = &self.buffer[self.start..];
        rest.strip_suffix(b"\r").unwrap_or(rest)
    }
}

/// One SSE event being assembled from its lines.
#[derive(Default)]
struct SseEvent {
    name: String,
    data: Vec<u8>,
    has_data: bool,
}

impl SseEvent {
    fn line(
        &mut self,
        line: &[u8],
        max_event_bytes: usize,
        on_event: &mut impl FnMut(StreamEvent<'_>) -> Result<Flow, ProviderError>,
    ) -> Result<Flow, ProviderError> {
        if line.is_empty() {
            if !self.has_data {
                self.name.clear();
                return Ok(Flow::More);
            }
            let flow = on_event(StreamEvent {
                name: &self.name,
                data: &self.data,
            });
            self.name.clear();
            self.data.clear();
            self.has_data = false;
            return flow;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(0) => return Ok(Flow::More), // a comment
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.name = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
                if self.data.len() > max_event_bytes {
                    return Err(too_large("a stream event", max_event_bytes));
                }
            }
            _ => {} // id, retry and unknown fields
        }
        Ok(Flow::More)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &[&[u8]]) -> Vec<(String, String)> {
        let mut lines = LineBuffer::default();
        let mut sse = SseEvent::default();
        let mut out = Vec::new();
        let mut record = |e: StreamEvent<'_>| {
            out.push((
                e.name.to_owned(),
                String::from_utf8_lossy(e.data).into_owned(),
            ));
            Ok(Flow::More)
        };
        for chunk in input {
            lines.push(chunk);
            while let Some(line) = lines.next_line() {
                sse.line(line, 1 << 20, &mut record).unwrap();
            }
        }
        out
    }

    #[test]
    fn sse_events_are_assembled_across_chunk_boundaries() {
        let got = events(&[
            b"event: a\nda",
            b"ta: {\"x\":1}\r\n\r\n: comment\n",
            b"data: one\ndata: two\n\n",
        ]);
        assert_eq!(
            got,
            vec![
                ("a".to_owned(), "{\"x\":1}".to_owned()),
                (String::new(), "one\ntwo".to_owned())
            ]
        );
    }

    #[test]
    fn an_sse_event_over_the_cap_fails_with_a_clear_error() {
        let mut sse = SseEvent::default();
        let mut ignore = |_: StreamEvent<'_>| Ok(Flow::More);
        let error = sse.line(b"data: 0123456789", 8, &mut ignore).unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::MalformedResponse);
        assert!(error.message.contains("8-byte limit"), "{error}");
    }
}
