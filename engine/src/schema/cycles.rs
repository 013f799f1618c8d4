//! Reference cycles that never reach a constraint: `{"$ref": "#"}`, or `$defs/a → $defs/b →
//! $defs/a`. Following such a loop never looks at any part of the instance, so the validator
//! either recurses forever or gives up and accepts everything; either way the author's intent
//! is lost. They are load errors naming the cycle.
//!
//! A recursive schema that *descends* into the instance on its way round (a tree whose
//! `children` items `$ref` the root) is fine: each round validates a smaller part of the
//! instance. So the graph walked here only has the edges that stay at the same instance
//! location — `$ref`, `$dynamicRef`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
//! `dependentSchemas` — and a cycle in it is the error.
//!
//! Not here: which references are allowed at all (fragment-only; `strict`).

use std::collections::HashMap;

use serde_json::Value;

use super::SchemaError;

/// Keywords whose subschemas apply to the same instance location, as arrays of schemas.
const IN_PLACE_LISTS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
/// ... as single schemas.
const IN_PLACE_SINGLE: [&str; 4] = ["not", "if", "then", "else"];
/// Keys whose values are data, not schemas.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Rejects a reference cycle that never descends into the instance; the error names every
/// step of the cycle as JSON pointers.
pub(super) fn check_reference_cycles(root: &Value) -> Result<(), SchemaError> {
    let mut anchors = HashMap::new();
    let mut nodes = Vec::new();
    collect(root, String::new(), &mut anchors, &mut nodes);
    let mut state: HashMap<String, Visit> = HashMap::new();
    for start in &nodes {
        let mut path = Vec::new();
        if let Some(cycle) = walk(root, &anchors, start, &mut state, &mut path) {
            let shown: Vec<&str> = cycle
                .iter()
                .map(|p| if p.is_empty() { "#" } else { p.as_str() })
                .collect();
            return Err(SchemaError {
                pointer: cycle[0].clone(),
                reason: format!(
                    "reference cycle {} never reaches a constraint (it would accept anything); \
                     break it, or make the recursion descend into a property or item",
                    shown.join(" → ")
                ),
            });
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    InProgress,
    Done,
}

/// Every schema object's pointer, and the pointer of every `$anchor` / `$dynamicAnchor`.
fn collect(
    value: &Value,
    pointer: String,
    anchors: &mut HashMap<String, String>,
    nodes: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            for key in ["$anchor", "$dynamicAnchor"] {
                if let Some(Value::String(name)) = map.get(key) {
                    anchors
                        .entry(name.clone())
                        .or_insert_with(|| pointer.clone());
                }
            }
            nodes.push(pointer.clone());
            for (key, child) in map {
                if DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                collect(child, format!("{pointer}/{}", escape(key)), anchors, nodes);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, format!("{pointer}/{i}"), anchors, nodes);
            }
        }
        _ => {}
    }
}

/// Depth-first search over the in-place edges; returns the cycle (first step repeated at the
/// end) when one is reachable from `at`.
fn walk(
    root: &Value,
    anchors: &HashMap<String, String>,
    at: &str,
    state: &mut HashMap<String, Visit>,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    match state.get(at) {
        Some(Visit::Done) => return None,
        Some(Visit::InProgress) => {
            let from = path.iter().position(|p| p == at).unwrap_or(0);
            let mut cycle = path[from..].to_vec();
            cycle.push(at.to_owned());
            return Some(cycle);
        }
        None => {}
    }
    state.insert(at.to_owned(), Visit::InProgress);
    path.push(at.to_owned());
    for next in in_place_targets(root, anchors, at) {
        if let Some(cycle) = walk(root, anchors, &next, state, path) {
            return Some(cycle);
        }
    }
    path.pop();
    state.insert(at.to_owned(), Visit::Done);
    None
}

/// The schemas that apply at the same instance location as the one at `pointer`.
fn in_place_targets(root: &Value, anchors: &HashMap<String, String>, pointer: &str) -> Vec<String> {
    let Some(Value::Object(map)) = root.pointer(pointer) else {
        return Vec::new();
    };
    let mut targets = Vec::new();
    for key in ["$ref", "$dynamicRef"] {
        if let Some(Value::String(reference)) = map.get(key)
            && let Some(target) = resolve(root, anchors, reference)
        {
            targets.push(target);
        }
    }
    for key in IN_PLACE_LISTS {
        if let Some(Value::Array(items)) = map.get(key) {
            targets.extend((0..items.len()).map(|i| format!("{pointer}/{key}/{i}")));
        }
    }
    for key in IN_PLACE_SINGLE {
        if map.get(key).is_some_and(Value::is_object) {
            targets.push(format!("{pointer}/{key}"));
        }
    }
    if let Some(Value::Object(schemas)) = map.get("dependentSchemas") {
        targets.extend(
            schemas
                .keys()
                .map(|name| format!("{pointer}/dependentSchemas/{}", escape(name))),
        );
    }
    targets
}

/// The pointer a fragment reference (`#`, `#/$defs/a`, `#anchor`) names, if it exists.
/// Non-fragment references were already refused by the strict check.
fn resolve(root: &Value, anchors: &HashMap<String, String>, reference: &str) -> Option<String> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() || fragment.starts_with('/') {
        let pointer = percent_decode(fragment);
        return root.pointer(&pointer).map(|_| pointer);
    }
    anchors.get(fragment).cloned()
}

/// Decodes `%XX` escapes of a URI fragment (a JSON pointer in a `$ref` is URI-encoded).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// RFC 6901 escaping of one pointer segment.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}
