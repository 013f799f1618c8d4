//! Fuzz target: a JSON Schema document, compiled under the strict dialect; when it compiles, it
//! validates itself and `null` without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skillet_engine::schema::CompiledSchema;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(compiled) = CompiledSchema::compile(&schema) {
        let _ = compiled.validate(&schema);
        let _ = compiled.is_valid(&Value::Null);
    }
});
