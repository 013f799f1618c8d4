//! The stdio transport: one JSON message per line in, one per line out (JSON Lines).
//!
//! Input lines are read in order; each call runs as its own task, so many calls are in flight at
//! once and their events and responses interleave on the output, each correlated by `req_id`.
//! Blank lines are ignored; every other bad line is answered (see `super::endpoint`) and reading
//! goes on. This module only frames lines: admission, duplicate ids, cancellation and the drain
//! are the [`super::core::HostCore`]'s. Only protocol messages are written to the output; logs go to stderr.
//!
//! Ending: at end of input every call in flight finishes and is answered, then [`serve`] returns.
//! When the `shutdown` future completes (the binary wires SIGTERM and SIGINT to it) reading stops
//! and calls in flight get `grace` to finish; then they are cancelled (a cancelled call still
//! answers), and any call that has not answered shortly after is answered with a retryable
//! `runtime_error`. Either way each call gets exactly one response.

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::endpoint::Endpoint;
use skillet_protocol::Message;

/// Default longest input line, in bytes.
pub const DEFAULT_MAX_LINE_BYTES: usize = crate::DEFAULT_MAX_MESSAGE_BYTES;

/// Settings of the stdio transport.
#[derive(Debug, Clone, Copy)]
pub struct StdioOptions {
    /// Longest accepted line; a longer one is answered with `invalid_message` and skipped.
    pub max_line_bytes: usize,
    /// How long calls in flight may run on after a shutdown signal before they are cancelled.
    pub grace: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            grace: Duration::from_secs(10),
        }
    }
}

/// Why [`serve`] stopped reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioEnd {
    /// The input ended.
    Eof,
    /// The shutdown future completed.
    Shutdown,
}

/// Serves A2E over a line-oriented byte stream until end of input or `shutdown`, then answers
/// every call in flight and returns. Errors are I/O errors of the output.
pub async fn serve<R, W>(
    endpoint: Endpoint,
    input: R,
    output: W,
    options: StdioOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<StdioEnd>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, outbound) = mpsc::unbounded_channel::<Message>();
    let writer = tokio::spawn(write_lines(outbound, output));
    let mut reader = BufReader::new(input);
    // One connection: call ids are unique among this connection's calls in flight.
    let scope = endpoint.core().scope().through(crate::record::Door::A2e);
    tokio::pin!(shutdown);

    let end = loop {
        let line = tokio::select! {
            line = read_line(&mut reader, options.max_line_bytes) => line,
            () = &mut shutdown => break StdioEnd::Shutdown,
        };
        let line = match line {
            Ok(Some(line)) => line,
            Ok(None) => break StdioEnd::Eof,
            Err(e) => {
                tracing::warn!(error = %e, "stdin read failed; treating it as end of input");
                break StdioEnd::Eof;
            }
        };
        match line {
            Line::TooLong => {
                let _ = out.send(Message::CallResponse(Endpoint::oversized(
                    options.max_line_bytes,
                )));
            }
            Line::Bytes(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Bytes(bytes) => {
                endpoint.handle_bytes(&scope, &bytes, &out, true);
            }
        }
    };

    tracing::info!(
        ?end,
        in_flight = scope.in_flight(),
        "stdio input closed; finishing calls"
    );
    match end {
        StdioEnd::Eof => endpoint.core().wait_idle().await,
        StdioEnd::Shutdown => endpoint.core().drain(options.grace).await,
    }
    drop(out);
    writer.await.map_err(std::io::Error::other)??;
    Ok(end)
}

/// Largest batch of queued messages written with one write and one flush.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

async fn write_lines<W: AsyncWrite + Unpin>(
    mut outbound: mpsc::UnboundedReceiver<Message>,
    mut output: W,
) -> std::io::Result<()> {
    let mut batch = Vec::with_capacity(4 * 1024);
    while let Some(message) = outbound.recv().await {
        batch.clear();
        skillet_protocol::encode_line_into(&message, &mut batch);
        // Whatever else is already queued goes out with it: one write and one flush for many
        // messages when calls answer at once, and never a wait for more to arrive.
        while batch.len() < WRITE_BATCH_BYTES {
            match outbound.try_recv() {
                Ok(message) => skillet_protocol::encode_line_into(&message, &mut batch),
                Err(_) => break,
            }
        }
        output.write_all(&batch).await?;
        // Flush per batch: a host waits on each answer, not on a buffer filling up.
        output.flush().await?;
        if batch.capacity() > 4 * WRITE_BATCH_BYTES {
            // One huge message must not pin its buffer for the rest of the connection.
            batch = Vec::with_capacity(4 * 1024);
        }
    }
    Ok(())
}

/// One input line.
enum Line {
    /// The line without its terminator.
    Bytes(Vec<u8>),
    /// The line was longer than the limit (its bytes were discarded).
    TooLong,
}

/// Reads one `\n`-terminated line of at most `max` bytes, discarding the rest of a longer one
/// without buffering it. `None` at end of input.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let consumed = found.unwrap_or(buf.len());
        reader.consume(consumed);
        if found.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Line::Bytes(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(line) = read_line(&mut reader, max).await.unwrap() {
            out.push(match line {
                Line::Bytes(b) => String::from_utf8(b).unwrap(),
                Line::TooLong => "<too long>".to_owned(),
            });
        }
        out
    }

    #[tokio::test]
    async fn lines_split_on_newline_and_strip_carriage_returns() {
        assert_eq!(lines(b"ab\r\ncd\nef", 10).await, ["ab", "cd", "ef"]);
    }

    #[tokio::test]
    async fn queued_messages_are_written_as_one_line_each_in_order() {
        let (out, outbound) = mpsc::unbounded_channel();
        let big = "x".repeat(WRITE_BATCH_BYTES);
        let ids = ["a", "b", "c", "d"];
        for (i, id) in ids.iter().enumerate() {
            // A message larger than a whole batch in the middle still goes out whole.
            let text = if i == 2 { big.as_str() } else { "ok" };
            let error = skillet_protocol::ProtocolError::new(
                skillet_protocol::ErrorCode::RuntimeError,
                text,
            );
            let response = skillet_protocol::SkillCallResponse::rejected(*id, "s", error);
            out.send(Message::CallResponse(response)).unwrap();
        }
        drop(out);
        let mut written = Vec::new();
        write_lines(outbound, &mut written).await.unwrap();
        let text = String::from_utf8(written).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), ids.len());
        assert!(text.ends_with('\n'));
        for (line, id) in lines.iter().zip(ids) {
            match skillet_protocol::decode(line).unwrap() {
                Message::CallResponse(response) => assert_eq!(response.req_id, id),
                other => panic!("unexpected {}", other.type_name()),
            }
        }
    }

    #[tokio::test]
    async fn an_overlong_line_is_reported_once_and_the_next_line_survives() {
        assert_eq!(lines(b"0123456789abc\nok\n", 8).await, ["<too long>", "ok"]);
    }
}
