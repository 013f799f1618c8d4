//! Fuzz target: one message from an MCP client, decoded as our MCP server decodes it (rmcp's
//! client JSON-RPC message type, or stdio's one-pass read of a plain `tools/call`, which must
//! mean what rmcp reads in the same bytes; then our `tools/call` → A2E call mapping and `_meta`
//! progress token). Nothing panics, and the A2E call a `tools/call` becomes encodes to a wire
//! line that decodes again. The same bytes through stdio's line guard: every line that reaches rmcp is
//! within the limit, a cut line, or a short marker.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillet_host::mcp::fuzzing::{GUARD_SLACK, Decoded, decode_client_message, guard_stdio_input};
use skillet_engine::protocol::{Message, decode, encode};

fuzz_target!(|data: &[u8]| {
    if let Decoded::ToolCall { call, .. } = decode_client_message(data) {
        assert!(call.id.starts_with("mcp-") && call.streaming, "{call:?}");
        let line = encode(&Message::CallRequest(*call));
        decode(&line).expect("the A2E call an MCP tools/call becomes decodes again");
    }
    let limit = usize::from(data.first().copied().unwrap_or(1)).max(1);
    for line in guard_stdio_input(data, limit).split(|b| *b == b'\n') {
        let cut = line.len() == limit + 1 && line.ends_with(b"#");
        let marker = line.windows(17).any(|w| w == b"skillet/oversized") && line.len() <= GUARD_SLACK;
        assert!(line.len() <= limit || cut || marker, "a line of {} bytes passed", line.len());
    }
});
