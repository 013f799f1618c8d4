//! Fuzz target: a mock-llm scenario file, parsed as YAML and as JSON. Parsing never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mock_llm::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Scenario::from_yaml_str(text);
    let _ = Scenario::from_json_str(text);
});
