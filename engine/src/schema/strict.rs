//! The strict 2020-12 dialect: unknown keywords (the vocabulary walk of `keywords`), bad keyword
//! values (the 2020-12 meta-schema), and the walk that rejects non-local references. Each
//! reports the JSON pointer of the offending keyword or value.

use jsonschema::{Draft, Validator};
use serde_json::{Value, json};

use super::{DIALECT, SchemaError, keywords};

/// The 2020-12 vocabularies, checking keyword values. Because the root carries
/// `$dynamicAnchor: meta`, every `$dynamicRef: "#meta"` inside the vocabulary meta-schemas
/// (subschemas of `properties`, `items`, `$defs`, ...) resolves back here, so the check applies
/// at every depth, not only at the top.
fn strict_meta_schema() -> Value {
    let vocab = |name: &str| json!({ "$ref": format!("https://json-schema.org/draft/2020-12/meta/{name}") });
    json!({
        "$schema": DIALECT,
        "$id": "urn:skillet:strict-2020-12",
        "$dynamicAnchor": "meta",
        "allOf": [
            vocab("core"),
            vocab("applicator"),
            vocab("unevaluated"),
            vocab("validation"),
            vocab("meta-data"),
            vocab("format-annotation"),
            vocab("content"),
        ]
    })
}

pub(super) fn meta_validator() -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .offline()
        .build(&strict_meta_schema())
        .map_err(|e| e.to_string())
}

/// Every strict-dialect violation of `schema`: unknown keywords first (each located at the
/// keyword, found by the vocabulary walk in `keywords`), then bad keyword values (located at
/// the value, found by the meta-schema, each saying what the keyword takes).
pub(super) fn keyword_errors(meta: &Validator, schema: &Value) -> Vec<SchemaError> {
    let mut errors = Vec::new();
    keywords::unknown_keywords(schema, "", &mut errors);
    if meta.is_valid(schema) {
        return errors;
    }
    for error in meta.iter_errors(schema) {
        let pointer = error.instance_path().as_str().to_owned();
        // A value that holds an unknown keyword fails for that keyword alone: say it once.
        if errors
            .iter()
            .any(|known| known.pointer.starts_with(&format!("{pointer}/")))
        {
            continue;
        }
        let reason = match keywords::expected_value(&pointer, schema) {
            Some(expected) => format!("invalid schema: {expected} ({error})"),
            None => format!("invalid schema: {error}"),
        };
        if !errors.iter().any(|e| e.pointer == pointer) {
            errors.push(SchemaError { pointer, reason });
        }
    }
    errors
}

/// Keys whose values are data, not schemas: a `$ref` string inside them is not a reference.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Rejects `$ref`/`$dynamicRef` that are not fragment-only, and `$schema` other than 2020-12.
pub(super) fn check_references(value: &Value, pointer: &str) -> Result<(), SchemaError> {
    check_schema_refs(value, pointer, false)
}

/// Keys whose values map *names* to subschemas: those names are not keywords.
const NAME_MAPS: [&str; 4] = [
    "properties",
    "patternProperties",
    "$defs",
    "dependentSchemas",
];

fn check_schema_refs(value: &Value, pointer: &str, names: bool) -> Result<(), SchemaError> {
    match value {
        Value::Object(map) if names => map.iter().try_for_each(|(name, child)| {
            check_schema_refs(child, &format!("{pointer}/{}", escape_pointer(name)), false)
        }),
        Value::Object(map) => {
            for (key, child) in map {
                let child_pointer = format!("{pointer}/{}", escape_pointer(key));
                match (key.as_str(), child) {
                    ("$ref" | "$dynamicRef", Value::String(target)) if !target.starts_with('#') => {
                        return Err(SchemaError {
                            pointer: child_pointer,
                            reason: format!(
                                "`{key}: {target}` is not a local reference: remote and file \
                                 references are not allowed (only `#...` into this schema)"
                            ),
                        });
                    }
                    ("$schema", Value::String(uri)) if uri.trim_end_matches('#') != DIALECT => {
                        return Err(SchemaError {
                            pointer: child_pointer,
                            reason: format!(
                                "`$schema: {uri}` is not supported: skill schemas are JSON \
                                 Schema 2020-12 ({DIALECT})"
                            ),
                        });
                    }
                    (k, _) if DATA_KEYWORDS.contains(&k) => {}
                    (k, _) => check_schema_refs(child, &child_pointer, NAME_MAPS.contains(&k))?,
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| check_schema_refs(item, &format!("{pointer}/{i}"), false)),
        _ => Ok(()),
    }
}

/// RFC 6901 escaping of one pointer segment.
pub(super) fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}
