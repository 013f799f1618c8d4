//! Fuzz target: one A2E wire line. Decoding never panics, and whatever decodes re-encodes to a
//! line that decodes to the same message (decode∘encode is the identity on decoded messages).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillet_engine::protocol::{decode, encode};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(message) = decode(text) {
        let line = encode(&message);
        let again = decode(&line).expect("an encoded message decodes");
        assert_eq!(encode(&again), line, "encode is not stable");
    }
});
