//! Putting bytes on the wire with timing and transport faults: whole bodies and chunked streams,
//! delays, clean truncation, stalls and dropped connections.
//!
//! Provider modules decide *what* the bytes are (`Frames`); this module decides *how and when*
//! they are sent. A body stream that yields an error makes hyper abort the connection, which is
//! how a dropped connection is produced.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use tokio_util::sync::CancellationToken;

/// A rendered stream: `body` frames, then `tail` frames (finish marker, usage, terminator) that a
/// truncated stream never sends.
#[derive(Debug, Default)]
pub(crate) struct Frames {
    pub body: Vec<Bytes>,
    pub tail: Vec<Bytes>,
}

/// How the response ends early, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Everything is sent.
    None,
    /// Clean end after this many frames (no tail).
    Truncate(usize),
    /// Silence after this many frames until the client leaves or the server shuts down.
    Stall(usize),
    /// Connection aborted after this many frames.
    Drop(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Clean,
    Stall,
    Drop,
}

/// Stream delays.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pace {
    pub first: Duration,
    pub between: Duration,
}

struct Sender {
    queue: VecDeque<Bytes>,
    sent: usize,
    pace: Pace,
    end: End,
    shutdown: CancellationToken,
    finished: bool,
}

/// Sleeps unless the server shuts down first; returns false on shutdown.
pub(crate) async fn pause(d: Duration, shutdown: &CancellationToken) -> bool {
    if d.is_zero() {
        return true;
    }
    tokio::select! {
        () = tokio::time::sleep(d) => true,
        () = shutdown.cancelled() => false,
    }
}

fn paced_body(frames: Vec<Bytes>, pace: Pace, end: End, shutdown: CancellationToken) -> Body {
    let sender = Sender {
        queue: frames.into(),
        sent: 0,
        pace,
        end,
        shutdown,
        finished: false,
    };
    let stream = futures::stream::unfold(sender, |mut s| async move {
        if s.finished {
            return None;
        }
        if let Some(frame) = s.queue.pop_front() {
            let delay = if s.sent == 0 {
                s.pace.first
            } else {
                s.pace.between
            };
            if !pause(delay, &s.shutdown).await {
                s.finished = true;
                return Some((Err(io::Error::other("mock-llm shutting down")), s));
            }
            s.sent += 1;
            return Some((Ok(frame), s));
        }
        match s.end {
            End::Clean => None,
            End::Stall => {
                s.shutdown.cancelled().await;
                s.finished = true;
                Some((
                    Err(io::Error::other("mock-llm shutting down during a stall")),
                    s,
                ))
            }
            End::Drop => {
                // Let hyper flush the frames already handed over; an error right behind them
                // would make it discard its buffer and the client would see fewer chunks.
                tokio::task::yield_now().await;
                pause(Duration::from_millis(10), &s.shutdown).await;
                s.finished = true;
                Some((
                    Err(io::Error::other("connection dropped by mock-llm fault")),
                    s,
                ))
            }
        }
    });
    Body::from_stream(stream)
}

fn with_type(mut response: Response, content_type: &'static str) -> Response {
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A streamed 200 response.
pub(crate) fn stream(
    content_type: &'static str,
    frames: Frames,
    cut: Cut,
    pace: Pace,
    shutdown: CancellationToken,
) -> Response {
    let Frames { mut body, tail } = frames;
    let end = match cut {
        Cut::None => {
            body.extend(tail);
            End::Clean
        }
        Cut::Truncate(n) => {
            body.truncate(n);
            End::Clean
        }
        Cut::Stall(n) => {
            body.truncate(n);
            End::Stall
        }
        Cut::Drop(n) => {
            body.truncate(n);
            End::Drop
        }
    };
    let mut response = with_type(
        Response::new(paced_body(body, pace, end, shutdown)),
        content_type,
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A whole (non-streamed) response. Truncation sends the first half of the bytes; a stall sends
/// headers only; a drop sends the first half and then aborts.
pub(crate) fn whole(
    status: StatusCode,
    content_type: &'static str,
    bytes: Bytes,
    cut: Cut,
    shutdown: CancellationToken,
) -> Response {
    let half = bytes.slice(..bytes.len() / 2);
    let body = match cut {
        Cut::None => Body::from(bytes),
        Cut::Truncate(_) => Body::from(half),
        Cut::Stall(_) => paced_body(Vec::new(), Pace::default(), End::Stall, shutdown),
        Cut::Drop(_) => paced_body(vec![half], Pace::default(), End::Drop, shutdown),
    };
    let mut response = with_type(Response::new(body), content_type);
    *response.status_mut() = status;
    response
}

/// SSE frame `data: JSON` + blank line.
pub(crate) fn sse_data(json: &serde_json::Value) -> Bytes {
    Bytes::from(format!("data: {json}\n\n"))
}

/// SSE frame with an `event:` line (Anthropic).
pub(crate) fn sse_event(event: &str, json: &serde_json::Value) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {json}\n\n"))
}

/// NDJSON line (Ollama).
pub(crate) fn ndjson(json: &serde_json::Value) -> Bytes {
    Bytes::from(format!("{json}\n"))
}
