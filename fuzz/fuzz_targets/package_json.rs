//! Fuzz target: a skill's `package.json`, rewritten to the manifest npm reads. The rewrite
//! never panics; what it writes holds `dependencies` alone, re-reads to the same set and is
//! its own rewrite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillet_engine::fuzzing::registry_manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(manifest) = registry_manifest(text) else {
        return;
    };
    let doc: serde_json::Value = serde_json::from_str(&manifest.text).expect("JSON");
    let keys: Vec<&String> = doc.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["private", "dependencies"]);
    let again = registry_manifest(&manifest.text).expect("the rewrite is accepted");
    assert_eq!(again, manifest);
});
