//! [`LineTransport`]: the transport rmcp's service runs on for MCP over stdio — JSON-RPC lines
//! read from a [`LineGuard`]ed input, written to the session's coalescing output.
//!
//! It takes the place of rmcp's `AsyncRwTransport` for one reason: the line MCP hosts send
//! most, a `tools/call` request, is read in one typed pass (`call_line`). Every other line is
//! decoded by rmcp's own codec (`JsonRpcMessageCodec`), and what is done with a line that does
//! not decode is what `AsyncRwTransport` does: input that is not JSON, or is a notification
//! rmcp ignores for compatibility, is dropped (logged at debug; answering unparsable input can
//! start an error storm with a peer that echoes it, rmcp issue #938); well-formed JSON that is
//! no message is answered with -32600 "Invalid request" without an `id`. Messages go out
//! written by `skillet-json`, one line each, and are flushed one by one into the coalescing
//! output, which gathers them into as few writes as the host's reading allows.
//!
//! Line length is the guard's business: a [`LineGuard`] never passes a line longer than the
//! limit plus its marker's slack (`oversize`), so the line buffer here stays bounded without a
//! check of its own. A line is kept in the transport between reads, so a `receive` cancelled in
//! the middle of one (rmcp polls it inside a `select!`) resumes it.
//!
//! Not here: the answer to an over-long line (`oversize::AnswerOversized`), what happens before
//! `initialize` (`pre_init`) or at the end of input (`eof_drain`), the output (`coalesce`).

use std::borrow::Cow;
use std::future::Future;
use std::io;
use std::sync::Arc;

use bytes::BytesMut;
use rmcp::RoleServer;
use rmcp::model::ErrorData;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio_util::codec::Decoder;

use super::call_line;
use super::coalesce::CoalescingWriter;
use super::oversize::LineGuard;

/// MCP over stdio's transport (see the module docs).
pub(crate) struct LineTransport<R> {
    read: BufReader<LineGuard<R>>,
    /// The line being read; kept across a cancelled `receive`.
    line: Vec<u8>,
    write: Arc<Mutex<Option<CoalescingWriter>>>,
    /// A -32600 is owed for the last line (well-formed JSON, not a message); sent before the
    /// next read, so a cancelled `receive` still sends it.
    invalid_owed: bool,
}

/// What a line turned out to be.
enum Decoded {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do: not JSON, a blank line, or a notification rmcp ignores.
    Dropped,
    /// Well-formed JSON that is no message: answered with -32600.
    Invalid,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    /// A transport reading `input` and writing to `output`.
    pub(crate) fn new(input: LineGuard<R>, output: CoalescingWriter) -> Self {
        LineTransport {
            read: BufReader::new(input),
            line: Vec::new(),
            write: Arc::new(Mutex::new(Some(output))),
            invalid_owed: false,
        }
    }
}

/// Decodes one line (its newline and a `\r` before it already cut off).
fn decode(line: &[u8]) -> Decoded {
    if line.is_empty() {
        return Decoded::Dropped;
    }
    if let Some(message) = call_line::decode(line) {
        return Decoded::Message(Box::new(message));
    }
    let mut framed = BytesMut::with_capacity(line.len() + 1);
    framed.extend_from_slice(line);
    framed.extend_from_slice(b"\n");
    match JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::default().decode(&mut framed) {
        Ok(Some(message)) => Decoded::Message(Box::new(message)),
        // A notification rmcp ignores for compatibility (its codec logs it).
        Ok(None) => Decoded::Dropped,
        Err(JsonRpcMessageCodecError::Serde(e)) => match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                tracing::debug!("ignoring unparsable incoming MCP message: {e}");
                Decoded::Dropped
            }
            serde_json::error::Category::Data | serde_json::error::Category::Io => {
                tracing::debug!("protocol error on incoming MCP message: {e}");
                Decoded::Invalid
            }
        },
        // The codec has no limit of its own here, and reads no I/O.
        Err(e) => {
            tracing::debug!("incoming MCP message not read: {e}");
            Decoded::Dropped
        }
    }
}

/// Writes `message` as one line and flushes it into the output.
async fn write_line(
    write: &Mutex<Option<CoalescingWriter>>,
    message: &TxJsonRpcMessage<RoleServer>,
) -> io::Result<()> {
    let mut bytes = Vec::with_capacity(512);
    skillet_json::to_writer(&mut bytes, message).map_err(io::Error::other)?;
    bytes.push(b'\n');
    let mut output = write.lock().await;
    let Some(output) = output.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            "the MCP transport is closed",
        ));
    };
    output.write_all(&bytes).await?;
    output.flush().await
}

impl<R: AsyncRead + Unpin + Send> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move { write_line(&write, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.invalid_owed {
                let refusal = TxJsonRpcMessage::<RoleServer>::error(
                    ErrorData::invalid_request("Invalid request", None),
                    None,
                );
                if write_line(&self.write, &refusal).await.is_err() {
                    return None;
                }
                self.invalid_owed = false;
            }
            match self.read.read_until(b'\n', &mut self.line).await {
                Ok(0) => return None,
                Ok(_) if self.line.last() != Some(&b'\n') => {
                    // The input ended inside a line: nothing whole to deliver.
                    return None;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::error!("error reading the MCP input: {e}");
                    return None;
                }
            }
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let decoded = decode(line);
            self.line.clear();
            match decoded {
                Decoded::Message(message) => return Some(*message),
                Decoded::Dropped => {}
                Decoded::Invalid => self.invalid_owed = true,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage};
    use serde_json::{Value, json};
    use tokio::io::AsyncReadExt;

    use super::super::coalesce::coalescing;
    use super::*;

    /// A transport over `input`, and what it wrote once closed.
    async fn run(input: &str) -> (Vec<RxJsonRpcMessage<RoleServer>>, Vec<Value>) {
        let (near, mut far) = tokio::io::duplex(1 << 16);
        let (writer, task) = coalescing(near);
        let guard = LineGuard::new(std::io::Cursor::new(input.as_bytes().to_vec()), 1 << 16);
        let mut transport = LineTransport::new(guard, writer);
        let mut messages = Vec::new();
        while let Some(message) = transport.receive().await {
            messages.push(message);
        }
        transport.close().await.unwrap();
        task.await.unwrap();
        let mut text = String::new();
        far.read_to_string(&mut text).await.unwrap();
        let written = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (messages, written)
    }

    fn method_of(message: &ClientJsonRpcMessage) -> String {
        match message {
            JsonRpcMessage::Request(request) => match &request.request {
                ClientRequest::CallToolRequest(_) => "tools/call".into(),
                ClientRequest::ListToolsRequest(_) => "tools/list".into(),
                other => format!("{other:?}"),
            },
            JsonRpcMessage::Notification(n) => match &n.notification {
                ClientNotification::InitializedNotification(_) => "initialized".into(),
                other => format!("{other:?}"),
            },
            other => format!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn lines_become_messages_in_order_and_bad_ones_are_dropped_or_refused() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s"}}"#,
            "\n",
            "not json at all\n",
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\r\n",
            r#"{"jsonrpc":"2.0","method":"notifications/unknown","params":5}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"s","task":{}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"s"}}"#,
        );
        let (messages, written) = run(input).await;
        let methods: Vec<String> = messages.iter().map(method_of).collect();
        assert_eq!(
            methods,
            ["tools/call", "initialized", "tools/list", "tools/call"],
            "the last line has no newline: the input ended inside it"
        );
        assert_eq!(
            written,
            vec![
                json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid request"}})
            ],
            "well-formed JSON that is no message gets -32600 without an id; the rest nothing"
        );
    }

    #[tokio::test]
    async fn sent_messages_are_one_line_each_as_rmcp_writes_them() {
        let (near, mut far) = tokio::io::duplex(1 << 16);
        let (writer, task) = coalescing(near);
        let guard = LineGuard::new(std::io::Cursor::new(Vec::new()), 1024);
        let mut transport = LineTransport::new(guard, writer);
        let result = rmcp::model::CallToolResult::structured(json!({"result": "a \"b\"\n"}));
        let message = TxJsonRpcMessage::<RoleServer>::response(
            rmcp::model::ServerResult::CallToolResult(result),
            rmcp::model::RequestId::Number(7),
        );
        transport.send(message.clone()).await.unwrap();
        transport.close().await.unwrap();
        assert!(transport.send(message.clone()).await.is_err(), "closed");
        task.await.unwrap();
        let mut text = String::new();
        far.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, serde_json::to_string(&message).unwrap() + "\n");
    }
}
