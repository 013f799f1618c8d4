//! Fuzz target: one Python requirement string (an entry of `requirements.txt`,
//! `pyproject.toml` or `metadata.a2e-requirements`). Parsing never panics; an accepted
//! requirement's normal form (what the file uv reads holds) is one line without options,
//! URLs, paths or `@`, and parses back to the same requirement.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillet_engine::environments::parse_requirement;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(requirement) = parse_requirement(text) else {
        return;
    };
    let line = requirement.to_string();
    assert!(!line.contains(['\n', '\r', '@', '/', '\\', '#', '$']), "{line:?}");
    assert!(!line.starts_with('-'), "{line:?}");
    let again = parse_requirement(&line).expect("the normal form parses");
    assert_eq!(again, requirement, "{text:?} -> {line:?}");
    assert_eq!(again.to_string(), line);
});
