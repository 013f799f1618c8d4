//! Whether a JSON Schema fits OpenAI's Structured Outputs *strict* subset, so `strict: true`
//! is sent only where the API accepts it (a schema outside the subset with `strict: true` is a
//! 400; without it the API still follows the schema, only without the guarantee).
//!
//! The subset (OpenAI's documentation, "Supported schemas"): the root is an object; every
//! object lists all its properties in `required` and sets `additionalProperties: false`; only
//! the keywords below appear; `anyOf` is allowed below the root, `allOf`/`oneOf`/`not`/
//! conditionals are not. The check is conservative: an unknown keyword means "not strict".
//!
//! Not here: transforming a schema into the subset (optional properties made nullable would
//! change what the engine validates, so the engine's schema is sent as it is, non-strict).

use serde_json::Value;

/// Keywords the strict subset accepts (besides annotations).
const ALLOWED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
];

/// Whether `schema` fits the strict subset.
pub(crate) fn fits_strict_subset(schema: &Value) -> bool {
    let Some(root) = schema.as_object() else {
        return false;
    };
    root.get("type").and_then(Value::as_str) == Some("object")
        && !root.contains_key("anyOf")
        && fits(schema, 0)
}

fn fits(schema: &Value, depth: usize) -> bool {
    // OpenAI allows 10 levels of nesting; deeper is refused.
    if depth > 10 {
        return false;
    }
    let Some(object) = schema.as_object() else {
        // `true`/`false` subschemas are outside the subset.
        return false;
    };
    if object.keys().any(|k| !ALLOWED.contains(&k.as_str())) {
        return false;
    }
    let is_object = match object.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => object.contains_key("properties"),
    };
    if is_object {
        if object.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let properties = object.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = properties {
            if properties.keys().any(|k| !required.contains(&k.as_str())) {
                return false;
            }
            if !properties.values().all(|p| fits(p, depth + 1)) {
                return false;
            }
        }
    }
    let nested = |key: &str| match object.get(key) {
        None => true,
        Some(Value::Array(list)) => list.iter().all(|s| fits(s, depth + 1)),
        Some(Value::Object(map)) if key == "$defs" || key == "definitions" => {
            map.values().all(|s| fits(s, depth + 1))
        }
        Some(single) => fits(single, depth + 1),
    };
    nested("items") && nested("anyOf") && nested("$defs") && nested("definitions")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn closed_objects_with_every_property_required_fit() {
        let schema = json!({
            "type": "object",
            "properties": {
                "total": {"type": "number"},
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": false
                }}
            },
            "required": ["total", "items"],
            "additionalProperties": false
        });
        assert!(fits_strict_subset(&schema));
    }

    #[test]
    fn optional_properties_open_objects_and_one_of_do_not_fit() {
        let optional = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "additionalProperties": false});
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a"]});
        let one_of = json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}},
            "required": ["a"], "additionalProperties": false});
        let not_object = json!({"type": "array", "items": {"type": "string"}});
        let min_length = json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 2}},
            "required": ["a"], "additionalProperties": false});
        for schema in [optional, open, one_of, not_object, min_length] {
            assert!(!fits_strict_subset(&schema), "{schema}");
        }
    }
}
