//! The schema synthesizer: instances validate (checked by the `jsonschema` crate) for the
//! keywords real output schemas use, and the same schema gives the same instance.

use mock_llm::synthesize;
use serde_json::{Value, json};

fn assert_valid(schema: Value) -> Value {
    let instance = synthesize(&schema);
    let validator = jsonschema::validator_for(&schema).expect("test schema is valid");
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "instance {instance} breaks {schema}: {errors:?}"
    );
    instance
}

#[test]
fn required_properties_enums_and_bounds_validate() {
    let i = assert_valid(json!({
        "type": "object",
        "properties": {
            "status": {"enum": ["open", "closed"]},
            "count": {"type": "integer", "minimum": 10, "maximum": 12},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "even": {"type": "integer", "multipleOf": 4, "minimum": 5},
            "code": {"type": "string", "minLength": 8, "maxLength": 8},
            "flag": {"type": "boolean"},
            "nothing": {"type": "null"},
            "maybe": {"type": ["string", "null"]}
        },
        "required": ["status", "count", "ratio", "even", "code"],
        "additionalProperties": false
    }));
    assert_eq!(i["status"], "open");
    assert_eq!(i["even"], 8);
}

#[test]
fn refs_defs_and_recursion_terminate_and_validate() {
    assert_valid(json!({
        "$defs": {
            "node": {"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }, "required": ["name"]}
        },
        "$ref": "#/$defs/node"
    }));
    assert_valid(json!({
        "definitions": {"id": {"type": "string", "format": "uuid"}},
        "type": "object", "properties": {"id": {"$ref": "#/definitions/id"}}, "required": ["id"]
    }));
}

#[test]
fn arrays_respect_counts_uniqueness_tuples_and_contains() {
    assert_valid(
        json!({"type": "array", "items": {"type": "integer", "maximum": 100}, "minItems": 3, "maxItems": 3, "uniqueItems": true}),
    );
    assert_valid(
        json!({"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 2, "uniqueItems": true}),
    );
    assert_valid(
        json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}),
    );
    assert_valid(
        json!({"type": "array", "contains": {"type": "integer", "minimum": 5}, "items": {"type": "integer"}}),
    );
    assert_valid(json!({"type": "array", "maxItems": 0}));
}

#[test]
fn patterns_and_formats_produce_matching_strings() {
    let i = assert_valid(json!({"type": "object", "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"},
        "ver": {"type": "string", "pattern": "^v\\d+\\.\\d+$", "minLength": 6},
        "when": {"type": "string", "format": "date-time"},
        "mail": {"type": "string", "format": "email"}
    }, "required": ["sku", "ver", "when", "mail"]}));
    assert_eq!(i["when"], "2024-01-01T00:00:00Z");
}

#[test]
fn combinators_merge_all_of_and_pick_a_usable_any_of_branch() {
    assert_valid(json!({"allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer", "minimum": 3}}, "required": ["b"]}
    ]}));
    let i = assert_valid(
        json!({"anyOf": [{"type": "null"}, {"type": "object", "properties": {"x": {"const": 7}}, "required": ["x"]}]}),
    );
    assert_eq!(i, json!({"x": 7}));
    assert_valid(json!({"oneOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]}));
}

#[test]
fn min_properties_add_extra_keys_when_allowed() {
    assert_valid(
        json!({"type": "object", "minProperties": 2, "additionalProperties": {"type": "integer"}}),
    );
}

#[test]
fn same_schema_gives_the_same_instance() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}, "minItems": 2}}, "required": ["a"]});
    assert_eq!(synthesize(&schema), synthesize(&schema));
}

#[test]
fn hostile_schemas_finish_quickly_without_huge_output() {
    let fan_out = json!({"allOf": [{"$ref": "#"}, {"$ref": "#"}], "type": "object"});
    let _ = synthesize(&fan_out);
    let huge = json!({"type": "array", "minItems": 1_000_000_000u64, "items": {"type": "string", "minLength": 1_000_000_000u64}});
    let i = synthesize(&huge);
    assert!(i.to_string().len() < 200_000_000);
    let nested_pattern = json!({"type": "string", "pattern": "^(a{9999}){9999}$"});
    assert!(synthesize(&nested_pattern).as_str().unwrap().len() <= 200_000);
}

#[test]
fn degenerate_schemas_do_not_panic() {
    for s in [
        json!(true),
        json!(false),
        json!(null),
        json!({"$ref": "#/nowhere"}),
        json!({"$ref": "#"}),
        json!({"type": 5}),
    ] {
        let _ = synthesize(&s);
    }
}
