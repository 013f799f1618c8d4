//! The strict 2020-12 dialect: the meta-schema that rejects unknown keywords, and the walk that
//! rejects non-local references. Both report the JSON pointer of the offending keyword.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Validator};
use serde_json::{Value, json};

use super::{DIALECT, SchemaError};

/// The 2020-12 vocabularies with `unevaluatedProperties: false`. Because the root carries
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
        ],
        "unevaluatedProperties": false
    })
}

pub(super) fn meta_validator() -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .offline()
        .build(&strict_meta_schema())
        .map_err(|e| e.to_string())
}

/// Every strict-dialect violation of `schema`, unknown keywords first (each located at the
/// keyword), then the rest (bad keyword values, located at the value).
pub(super) fn keyword_errors(meta: &Validator, schema: &Value) -> Vec<SchemaError> {
    if meta.is_valid(schema) {
        return Vec::new();
    }
    let mut unknown = Vec::new();
    let mut other = Vec::new();
    for error in meta.iter_errors(schema) {
        let at = error.instance_path().as_str().to_owned();
        match error.kind() {
            ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                for keyword in unexpected {
                    unknown.push(SchemaError {
                        pointer: format!("{at}/{}", escape_pointer(keyword)),
                        reason: unknown_keyword_reason(keyword),
                    });
                }
            }
            _ => other.push(SchemaError {
                pointer: at,
                reason: format!("invalid schema: {error}"),
            }),
        }
    }
    // A keyword whose subschema failed loses its annotations, so the parent reports it as
    // "unevaluated" too (`/properties` when `/properties/age/minimun` is the real culprit, or
    // `/properties/a/type` when `type` has a bad value). Keep only the real culprits.
    let culprit_pointers: Vec<String> = unknown
        .iter()
        .chain(other.iter())
        .map(|e| e.pointer.clone())
        .collect();
    unknown.retain(|candidate| {
        let below = format!("{}/", candidate.pointer);
        let shadowed_by_invalid_value = other.iter().any(|o| o.pointer == candidate.pointer);
        !shadowed_by_invalid_value && !culprit_pointers.iter().any(|p| p.starts_with(&below))
    });
    unknown.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    unknown.dedup();
    other.retain(|o| {
        !unknown
            .iter()
            .any(|u| u.pointer.starts_with(&format!("{}/", o.pointer)))
    });
    unknown.extend(other);
    unknown
}

fn unknown_keyword_reason(keyword: &str) -> String {
    let hint = match keyword {
        "definitions" => " (2020-12 uses `$defs`)",
        "dependencies" => " (2020-12 uses `dependentRequired` / `dependentSchemas`)",
        "$recursiveRef" | "$recursiveAnchor" => " (2020-12 uses `$dynamicRef` / `$dynamicAnchor`)",
        "additionalItems" => " (2020-12 uses `prefixItems` + `items`)",
        "nullable" => " (an OpenAPI keyword; use `\"type\": [\"string\", \"null\"]`)",
        _ => "",
    };
    format!("unknown or unsupported JSON Schema 2020-12 keyword `{keyword}`{hint}")
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
fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}
