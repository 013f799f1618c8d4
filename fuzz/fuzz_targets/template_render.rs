//! Fuzz target: a template source and a JSON argument object, split at the first NUL byte.
//! Compiling and rendering never panic; a render of an escape-free source with brace-free
//! string arguments leaves no `{{`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skillet_engine::template::Template;

fuzz_target!(|data: &[u8]| {
    let (source, args) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{}"[..]),
    };
    let Ok(source) = std::str::from_utf8(source) else {
        return;
    };
    let args: Value = serde_json::from_slice(args).unwrap_or(Value::Null);
    let Ok(template) = Template::compile(source) else {
        return;
    };
    if let Ok(out) = template.render(&args) {
        let brace_free = match &args {
            Value::Object(map) => map
                .values()
                .all(|v| matches!(v, Value::String(s) if !s.contains('{'))),
            _ => true,
        };
        if brace_free && !source.contains('\\') {
            assert!(!out.contains("{{"), "{source:?} left braces: {out:?}");
        }
    }
});
