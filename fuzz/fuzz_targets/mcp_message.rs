//! Fuzz target: one message from an MCP client, decoded as our MCP server decodes it (rmcp's
//! client JSON-RPC message type, then our `tools/call` → A2E call mapping and `_meta` progress
//! token). Nothing panics, and the A2E call a `tools/call` becomes encodes to a wire line that
//! decodes again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillet_host::mcp::fuzzing::{Decoded, decode_client_message};
use skillet_engine::protocol::{Message, decode, encode};

fuzz_target!(|data: &[u8]| {
    if let Decoded::ToolCall { call, .. } = decode_client_message(data) {
        assert!(call.id.starts_with("mcp-") && call.streaming, "{call:?}");
        let line = encode(&Message::CallRequest(*call));
        decode(&line).expect("the A2E call an MCP tools/call becomes decodes again");
    }
});
