//! The fuzzing entry (`fuzz/mcp_message`): one message from an MCP client, decoded as our server
//! decodes it — rmcp's client JSON-RPC message type, or stdio's one-pass `tools/call` read
//! (`call_line`), held equal to rmcp's — then, for a `tools/call`, our own mapping
//! onto an A2E call (`handler::skill_call`) and the `_meta` progress token the event
//! forwarder reads; and stdio's line guard (`oversize`) over arbitrary input. Built only with
//! the `fuzzing` feature (the fuzz crate's); not an API.
//!
//! Not here: sessions, admission, running the call (`handler`, `serve`).

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage};

use super::handler;
use skillet_protocol::SkillCallRequest;

/// The most a marker line the stdio guard writes takes (see `guard_stdio_input`).
pub use super::oversize::GUARD_SLACK;

/// What a decoded client message amounts to for us.
#[derive(Debug)]
pub enum Decoded {
    /// Not a JSON-RPC message rmcp accepts from a client.
    Rejected,
    /// A message other than `tools/call` (rmcp answers or routes it).
    Other,
    /// A `tools/call`: the A2E call it becomes, and whether it asked for progress.
    ToolCall {
        /// The call (boxed: it is much larger than the other variants).
        call: Box<SkillCallRequest>,
        /// Whether `_meta.progressToken` was present and valid.
        progress: bool,
    },
}

/// Decodes one client message as stdio's transport does (a plain `tools/call` in one pass,
/// `call_line`; the rest by rmcp), and panics if the one-pass read means anything other than
/// what rmcp reads in the same bytes.
pub fn decode_client_message(bytes: &[u8]) -> Decoded {
    let by_rmcp = serde_json::from_slice::<ClientJsonRpcMessage>(bytes).ok();
    let fast = super::call_line::decode(bytes);
    if let Some(fast) = &fast {
        let rmcp_parts = by_rmcp.as_ref().and_then(super::call_line::call_parts);
        assert!(
            rmcp_parts.is_some() && super::call_line::call_parts(fast) == rmcp_parts,
            "the one-pass tools/call read disagrees with rmcp's"
        );
    }
    let Some(message) = fast.or(by_rmcp) else {
        return Decoded::Rejected;
    };
    let JsonRpcMessage::Request(request) = message else {
        return Decoded::Other;
    };
    let meta = request.request.get_meta().clone();
    let progress = meta.get_progress_token().is_some();
    match request.request {
        ClientRequest::CallToolRequest(call) => Decoded::ToolCall {
            call: Box::new(handler::skill_call(&request.id, &meta, call.params)),
            progress,
        },
        _ => Decoded::Other,
    }
}

/// What rmcp reads of `input` through stdio's line guard with the limit `limit` (at least 1).
/// Every line it yields is within `limit` bytes, or is a cut line (`limit` bytes and `#`), or a
/// marker of at most [`GUARD_SLACK`] bytes.
pub fn guard_stdio_input(input: &[u8], limit: usize) -> Vec<u8> {
    use std::task::{Context, Poll, Waker};
    use tokio::io::{AsyncRead, ReadBuf};
    let mut guard = super::oversize::LineGuard::new(input, limit.max(1));
    let mut cx = Context::from_waker(Waker::noop());
    let mut all = Vec::new();
    let mut buf = [0u8; 97];
    loop {
        let mut out = ReadBuf::new(&mut buf);
        match std::pin::Pin::new(&mut guard).poll_read(&mut cx, &mut out) {
            Poll::Ready(Ok(())) if !out.filled().is_empty() => all.extend_from_slice(out.filled()),
            _ => return all,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_call_becomes_a_streamed_a2e_call_with_its_progress_token_seen() {
        let message = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"t"},"_meta":{"progressToken":"p"}}}"#;
        let Decoded::ToolCall { call, progress } = decode_client_message(message) else {
            panic!("a tools/call decodes as one");
        };
        assert_eq!(call.id, "mcp-7");
        assert_eq!(call.name, "summarize");
        assert_eq!(call.arguments["text"], "t");
        assert!(call.streaming && progress);
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert!(matches!(decode_client_message(list), Decoded::Other));
        assert!(matches!(decode_client_message(b"{"), Decoded::Rejected));
    }

    #[test]
    fn the_stdio_guard_cuts_long_lines_and_keeps_short_ones() {
        let out = guard_stdio_input(b"{\"id\":1,\"x\":\"long line\"}\n{}\n", 8);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "{\"id\":1,#");
        assert!(lines[1].contains("\"id\":1,\"method\":\"skillet/oversized\""));
        assert_eq!(lines[2], "{}");
    }
}
