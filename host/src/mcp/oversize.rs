//! Lines over `[server] max_message_bytes` on MCP stdio get an answer: [`LineGuard`] cuts such a
//! line where it crosses the limit and puts a short marker line after it, and [`AnswerOversized`]
//! turns the marker into the JSON-RPC error (-32600, with the request's `id`) the client waits for.
//!
//! rmcp's stdio transport drops an over-limit line with a log line and nothing on the wire, so
//! the client's request hung until its own timeout. The limit is kept here, before the
//! transport (`line_transport`) reads:
//! - the guard passes each line through while it is within the limit (memory stays bounded by
//!   the limit, as in rmcp), keeping a copy of the line's first [`HEAD_BYTES`];
//! - at the first byte past the limit it ends the line with `#` (so what rmcp has read of it is
//!   never valid JSON and is ignored as unparsable input — never run), drops the rest up to the
//!   newline, and then emits `{"jsonrpc":"2.0","id":ID,"method":"skillet/oversized",…}`, with
//!   the `id` read from the kept head ([`head_of`]), or without an `id` when none was found;
//! - the transport answers the marker with -32600 "the message exceeds the N-byte limit" (`id`
//!   omitted when unknown, as MCP 2026-07-28 allows for an unreadable request) and never passes
//!   it on. A response or a notification that was too long gets no answer (JSON-RPC answers
//!   neither); it is logged.
//!
//! Not here: what rmcp does with lines within the limit (framing, parsing), the HTTP body limit
//! (`body_check`).

use std::borrow::Cow;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, ReadBuf};

/// The method name of the marker line; a client that sends it itself gets the same error.
const MARKER_METHOD: &str = "skillet/oversized";

/// How much of each line is kept to find the `id` of a line that turns out too long: clients
/// write `jsonrpc`, `id` and `method` first.
const HEAD_BYTES: usize = 4096;

/// How much longer than `max_line_bytes` a line the guard passes can be: room for the cut's `#`
/// and newline, and for a marker line when the limit is tiny. It bounds the transport's line
/// buffer (`line_transport`).
#[cfg(feature = "fuzzing")]
pub const GUARD_SLACK: usize = 512;

/// The longest `id` a marker repeats (longer ones are answered without an `id`), so that a
/// marker always fits in [`GUARD_SLACK`].
const MAX_ID_BYTES: usize = 256;

/// Reads from `inner`, cutting lines longer than `max_line_bytes` (see the module doc).
pub(crate) struct LineGuard<R> {
    inner: R,
    max_line_bytes: usize,
    input: Box<[u8]>,
    start: usize,
    end: usize,
    /// Bytes of the current line passed on (its newline not counted).
    line_len: usize,
    head: Vec<u8>,
    discarding: bool,
    /// What the guard writes before any more input: the cut's `#\n`, then the marker.
    inject: Vec<u8>,
    injected: usize,
}

impl<R> LineGuard<R> {
    /// Guards `inner` with the line limit `max_line_bytes`.
    pub(crate) fn new(inner: R, max_line_bytes: usize) -> Self {
        LineGuard {
            inner,
            max_line_bytes,
            input: vec![0; 16 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
            line_len: 0,
            head: Vec::new(),
            discarding: false,
            inject: Vec::new(),
            injected: 0,
        }
    }

    /// Moves what it can of the buffered input to `out`; stops early at a cut (so that what is
    /// injected comes next) and when `out` is full.
    fn pass_on(&mut self, out: &mut ReadBuf<'_>) {
        while self.start < self.end && out.remaining() > 0 && self.inject.is_empty() {
            let pending = &self.input[self.start..self.end];
            let newline = pending.iter().position(|b| *b == b'\n');
            if self.discarding {
                match newline {
                    Some(at) => {
                        self.start += at + 1;
                        self.discarding = false;
                        self.marker();
                    }
                    None => self.start = self.end,
                }
                continue;
            }
            let line_part = newline.unwrap_or(pending.len());
            let room = self.max_line_bytes - self.line_len;
            if line_part > room {
                // The line crosses the limit here: pass on what fits, then cut.
                let fits = room.min(out.remaining());
                self.take(fits, out);
                if fits == room {
                    self.inject.extend_from_slice(b"#\n");
                    self.discarding = true;
                }
                continue;
            }
            let with_newline = line_part + usize::from(newline.is_some());
            let n = with_newline.min(out.remaining());
            self.take(n, out);
            if newline.is_some() && n == with_newline {
                self.line_len = 0;
                self.head.clear();
            }
        }
    }

    /// Passes `n` buffered bytes of the current line on to `out`.
    fn take(&mut self, n: usize, out: &mut ReadBuf<'_>) {
        let bytes = &self.input[self.start..self.start + n];
        out.put_slice(bytes);
        let keep = HEAD_BYTES.saturating_sub(self.head.len()).min(n);
        self.head.extend_from_slice(&bytes[..keep]);
        self.line_len += bytes.iter().take_while(|b| **b != b'\n').count();
        self.start += n;
    }

    /// Queues the marker line for the line just cut, and starts the next line.
    fn marker(&mut self) {
        let head = head_of(&self.head);
        self.line_len = 0;
        self.head.clear();
        if head.is_response {
            tracing::warn!(
                limit = self.max_line_bytes,
                "an MCP response over the message limit was dropped"
            );
            return;
        }
        let id = head
            .id
            .map(|id| format!(r#""id":{id},"#))
            .unwrap_or_default();
        let marker = format!(
            r#"{{"jsonrpc":"2.0",{id}"method":"{MARKER_METHOD}","params":{{"limit":{}}}}}"#,
            self.max_line_bytes
        );
        self.inject.extend_from_slice(marker.as_bytes());
        self.inject.push(b'\n');
    }

    /// Moves what is queued for injection to `out`.
    fn inject_into(&mut self, out: &mut ReadBuf<'_>) {
        let n = (self.inject.len() - self.injected).min(out.remaining());
        out.put_slice(&self.inject[self.injected..self.injected + n]);
        self.injected += n;
        if self.injected == self.inject.len() {
            self.inject.clear();
            self.injected = 0;
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineGuard<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let before = out.filled().len();
            if !this.inject.is_empty() {
                this.inject_into(out);
            }
            this.pass_on(out);
            if out.filled().len() > before || out.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            if this.start < this.end || !this.inject.is_empty() {
                continue;
            }
            let mut fill = ReadBuf::new(&mut this.input);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut fill))?;
            let read = fill.filled().len();
            if read == 0 {
                return Poll::Ready(Ok(()));
            }
            this.start = 0;
            this.end = read;
        }
    }
}

/// What the first bytes of a line say about it.
#[derive(Debug, Default, PartialEq)]
struct Head {
    /// The top-level `id`, as its JSON text (a number or a string).
    id: Option<String>,
    /// A top-level `result` or `error`: a response, which gets no answer.
    is_response: bool,
}

/// Reads the top-level keys of a JSON object from its first bytes (which may stop anywhere).
fn head_of(bytes: &[u8]) -> Head {
    let mut head = Head::default();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let Some(len) = string_len(&bytes[i..]) else {
                    return head;
                };
                let is_key = depth == 1 && next_non_space(bytes, i + len) == Some(b':');
                if is_key {
                    match &bytes[i + 1..i + len - 1] {
                        b"id" => head.id = value_after_colon(bytes, i + len),
                        b"result" | b"error" => head.is_response = true,
                        _ => {}
                    }
                }
                i += len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    head
}

/// The length of the JSON string starting at `bytes[0]` (a quote), quotes included.
fn string_len(bytes: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn next_non_space(bytes: &[u8], from: usize) -> Option<u8> {
    bytes[from.min(bytes.len())..]
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace())
}

/// The number or string after the `:` that follows a key, as JSON text; `None` for anything else.
fn value_after_colon(bytes: &[u8], from: usize) -> Option<String> {
    let colon = from + bytes[from..].iter().position(|b| *b == b':')?;
    let start = colon
        + 1
        + bytes[colon + 1..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
    let rest = &bytes[start..];
    let len = if rest.first() == Some(&b'"') {
        string_len(rest)?
    } else {
        let len = rest
            .iter()
            .position(|b| !(b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')))?;
        (len > 0).then_some(len)?
    };
    if len > MAX_ID_BYTES {
        return None;
    }
    let text = std::str::from_utf8(&rest[..len]).ok()?;
    match serde_json::from_str::<serde_json::Value>(text).ok()? {
        serde_json::Value::String(_) | serde_json::Value::Number(_) => Some(text.to_owned()),
        _ => None,
    }
}

type Sending = Pin<Box<dyn Future<Output = ()> + Send>>;

/// `inner` (reading through a [`LineGuard`]) with the guard's markers answered (see the module
/// doc). An answer being written is kept in `self`, so a `receive` dropped by rmcp's `select!`
/// resumes it instead of losing it.
pub(crate) struct AnswerOversized<T> {
    inner: T,
    sending: Option<Sending>,
}

impl<T> AnswerOversized<T> {
    /// Wraps a server transport whose input is guarded.
    pub(crate) fn new(inner: T) -> Self {
        AnswerOversized {
            inner,
            sending: None,
        }
    }
}

/// The error for a marker, or `None` for any other message.
fn marker_answer(message: &ClientJsonRpcMessage) -> Option<TxJsonRpcMessage<RoleServer>> {
    let (id, params) = match message {
        ClientJsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CustomRequest(custom) if custom.method == MARKER_METHOD => {
                (Some(request.id.clone()), custom.params.as_ref())
            }
            _ => return None,
        },
        ClientJsonRpcMessage::Notification(notification) => match &notification.notification {
            ClientNotification::CustomNotification(custom) if custom.method == MARKER_METHOD => {
                (None, custom.params.as_ref())
            }
            _ => return None,
        },
        _ => return None,
    };
    let limit = params
        .and_then(|p| p.get("limit"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_default();
    tracing::warn!(limit, "an MCP message over the message limit was refused");
    let error = ErrorData::invalid_request(
        format!(
            "the message exceeds the {limit}-byte limit ([server] max_message_bytes); it was not read"
        ),
        None,
    );
    Some(TxJsonRpcMessage::<RoleServer>::error(error, id))
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for AnswerOversized<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(sending) = self.sending.as_mut() {
                sending.await;
                self.sending = None;
            }
            let message = self.inner.receive().await?;
            match marker_answer(&message) {
                Some(answer) => {
                    let send = self.inner.send(answer);
                    self.sending = Some(Box::pin(async move {
                        if send.await.is_err() {
                            tracing::debug!("the answer to an oversized MCP message was not sent");
                        }
                    }));
                }
                None => return Some(message),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
#[path = "oversize_tests.rs"]
mod tests;
