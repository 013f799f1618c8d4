//! Fuzz target: a streamed answer as Gemini `streamGenerateContent?alt=sse` events, cut into
//! chunks the fuzzer chooses, through the real provider decoder with its caps (input layout and
//! checks: `stream_input.rs`).
#![no_main]

#[path = "stream_input.rs"]
mod stream_input;

use libfuzzer_sys::fuzz_target;
use skillet_providers::fuzzing::Api;

fuzz_target!(|data: &[u8]| stream_input::check(Api::Gemini, data));
