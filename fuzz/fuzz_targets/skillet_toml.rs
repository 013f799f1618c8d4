//! Fuzz target: a `skillet.toml`, parsed and checked. Parsing never panics.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use skillet_cli::config::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Config::from_toml_str(text, Path::new("/fuzz/skillet.toml"));
});
