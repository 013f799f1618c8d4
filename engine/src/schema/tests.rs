//! Strict-dialect load errors (with pointers) and all-violations validation.

use serde_json::json;

use super::*;

fn load_error(schema: serde_json::Value) -> SchemaError {
    match CompiledSchema::compile(&schema) {
        Ok(_) => panic!("{schema} should be rejected"),
        Err(e) => e,
    }
}

#[test]
fn unknown_keyword_is_rejected_at_its_pointer() {
    let err = load_error(json!({
        "type": "object",
        "properties": {"age": {"type": "integer", "minimun": 0}}
    }));
    assert_eq!(err.pointer, "/properties/age/minimun");
    assert!(err.reason.contains("`minimun`"), "{}", err.reason);
}

#[test]
fn unknown_keyword_at_root_and_deep_in_defs_and_items() {
    assert_eq!(
        load_error(json!({"type": "object", "requried": ["a"]})).pointer,
        "/requried"
    );
    let err = load_error(json!({
        "$defs": {"item": {"type": "object", "properties": {"x": {"foo": 1}}}},
        "type": "array",
        "items": {"$ref": "#/$defs/item"}
    }));
    assert_eq!(err.pointer, "/$defs/item/properties/x/foo");
    let err = load_error(json!({"type": "array", "items": {"type": "string", "bar": true}}));
    assert_eq!(err.pointer, "/items/bar");
}

#[test]
fn pre_2020_keywords_are_unknown_with_a_hint() {
    let err = load_error(json!({"definitions": {"a": {}}}));
    assert_eq!(err.pointer, "/definitions");
    assert!(err.reason.contains("$defs"), "{}", err.reason);
    let err = load_error(json!({"type": "string", "nullable": true}));
    assert!(err.reason.contains("OpenAPI"), "{}", err.reason);
}

#[test]
fn property_names_that_look_like_keywords_are_fine() {
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"default": {"type": "string"}, "$ref": {"type": "integer"}, "foo": {}}
    }))
    .unwrap();
    assert!(schema.is_valid(&json!({"default": "x", "$ref": 1})));
}

#[test]
fn bad_keyword_value_is_rejected_at_its_pointer() {
    let err = load_error(json!({"properties": {"a": {"type": "strnig"}}}));
    assert_eq!(err.pointer, "/properties/a/type");
}

#[test]
fn remote_ref_is_rejected_at_the_ref() {
    let err = load_error(json!({
        "type": "object",
        "properties": {"a": {"$ref": "https://example.com/schema.json"}}
    }));
    assert_eq!(err.pointer, "/properties/a/$ref");
    assert!(
        err.reason.contains("not a local reference"),
        "{}",
        err.reason
    );
}

#[test]
fn file_and_relative_refs_are_rejected() {
    assert_eq!(
        load_error(json!({"$ref": "file:///etc/passwd"})).pointer,
        "/$ref"
    );
    assert_eq!(
        load_error(json!({"items": {"$ref": "other.json#/x"}})).pointer,
        "/items/$ref"
    );
    assert_eq!(
        load_error(json!({"$dynamicRef": "http://x/y#meta"})).pointer,
        "/$dynamicRef"
    );
}

#[test]
fn ref_like_strings_inside_data_keywords_are_not_references() {
    let schema = CompiledSchema::compile(&json!({
        "const": {"$ref": "https://example.com"},
    }))
    .unwrap();
    assert!(schema.is_valid(&json!({"$ref": "https://example.com"})));
}

#[test]
fn other_dialects_are_rejected() {
    let err = load_error(json!({"$schema": "http://json-schema.org/draft-07/schema#"}));
    assert_eq!(err.pointer, "/$schema");
    CompiledSchema::compile(&json!({"$schema": "https://json-schema.org/draft/2020-12/schema"}))
        .unwrap();
}

#[test]
fn non_schema_values_are_rejected() {
    assert_eq!(load_error(json!("string")).pointer, "");
    assert_eq!(load_error(json!([1])).pointer, "");
}

#[test]
fn local_defs_and_refs_work() {
    let schema = CompiledSchema::compile(&json!({
        "$defs": {"positive": {"type": "number", "exclusiveMinimum": 0}},
        "type": "object",
        "properties": {"amount": {"$ref": "#/$defs/positive"}},
        "required": ["amount"]
    }))
    .unwrap();
    assert!(schema.is_valid(&json!({"amount": 3})));
    let violations = schema.validate(&json!({"amount": -1})).unwrap_err();
    assert_eq!(violations[0].instance_path, "/amount");
}

#[test]
fn several_violations_are_reported_at_once() {
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2},
            "age": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["name", "email"],
        "additionalProperties": false
    }))
    .unwrap();
    let violations = schema
        .validate(&json!({"name": "A", "age": -2, "tags": ["ok", 7], "extra": 1}))
        .unwrap_err();
    let paths: Vec<&str> = violations
        .iter()
        .map(|v| v.instance_path.as_str())
        .collect();
    for expected in ["/name", "/age", "/tags/1", ""] {
        assert!(
            paths.contains(&expected),
            "missing {expected:?} in {violations:#?}"
        );
    }
    assert!(violations.len() >= 5, "{violations:#?}");
    let required = violations
        .iter()
        .find(|v| v.message.contains("email"))
        .unwrap();
    assert_eq!(required.schema_path, "/required");
    let minimum = violations
        .iter()
        .find(|v| v.instance_path == "/age")
        .unwrap();
    assert_eq!(minimum.schema_path, "/properties/age/minimum");
}

#[test]
fn formats_are_asserted() {
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"email": {"format": "email"}, "when": {"format": "date-time"}}
    }))
    .unwrap();
    assert!(schema.is_valid(&json!({"email": "a@example.com", "when": "2024-05-01T10:00:00Z"})));
    let violations = schema
        .validate(&json!({"email": "not-an-email", "when": "yesterday"}))
        .unwrap_err();
    assert_eq!(violations.len(), 2, "{violations:#?}");
}

#[test]
fn unknown_format_is_a_load_error() {
    let err = load_error(json!({"properties": {"p": {"format": "phone-number"}}}));
    assert!(err.reason.contains("phone-number"), "{err}");
}

#[test]
fn empty_schema_means_no_constraint() {
    let schema = CompiledSchema::compile(&json!({})).unwrap();
    assert!(schema.is_unconstrained());
    assert!(schema.validate(&json!({"anything": [1, 2]})).is_ok());
    assert!(
        CompiledSchema::unconstrained()
            .validate(&json!(null))
            .is_ok()
    );
    let never = CompiledSchema::compile(&json!(false)).unwrap();
    assert!(!never.is_unconstrained());
    assert!(never.validate(&json!(1)).is_err());
}

#[test]
fn compiled_schema_is_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CompiledSchema>();
}

#[test]
fn reference_cycles_that_never_reach_a_constraint_are_load_errors_naming_the_cycle() {
    let err = load_error(json!({"$ref": "#"}));
    assert!(err.reason.contains("reference cycle # → #"), "{err}");
    let err = load_error(json!({
        "type": "object",
        "properties": {"amount": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}
    }));
    assert!(
        err.reason
            .contains("/$defs/a → /$defs/b → /$defs/b/allOf/0 → /$defs/a"),
        "{err}"
    );
    let err = load_error(json!({
        "$defs": {"x": {"$anchor": "loop", "not": {"$ref": "#loop"}}},
        "properties": {"p": {"$ref": "#/$defs/x"}}
    }));
    assert!(err.reason.contains("reference cycle"), "{err}");
    // Percent-encoded pointers are followed too.
    let err = load_error(json!({"$defs": {"a b": {"$ref": "#/$defs/a%20b"}}}));
    assert!(err.reason.contains("reference cycle"), "{err}");
}

#[test]
fn recursion_that_descends_into_the_instance_is_a_valid_schema() {
    let tree = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}}
        },
        "required": ["name"]
    }))
    .expect("a tree schema loads");
    assert!(tree.is_valid(&json!({"name": "a", "children": [{"name": "b", "children": []}]})));
    assert!(!tree.is_valid(&json!({"name": "a", "children": [{"children": []}]})));
}

#[test]
fn cache_compiles_each_distinct_document_once_and_shares_it() {
    let cache = SchemaCache::new();
    let doc = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let first = cache.compile(&doc).unwrap();
    let again = cache.compile(&doc.clone()).unwrap();
    assert!(first.shares_compilation_with(&again));
    assert_eq!(cache.len(), 1);

    let other = cache.compile(&json!({"type": "string"})).unwrap();
    assert!(!first.shares_compilation_with(&other));
    assert_eq!(cache.len(), 2);

    // Equal documents compiled without a cache are equal, not shared.
    let uncached = CompiledSchema::compile(&doc).unwrap();
    assert!(!first.shares_compilation_with(&uncached));
    assert_eq!(uncached.source(), first.source());
}

#[test]
fn cache_returns_the_same_error_for_a_repeated_bad_document() {
    let cache = SchemaCache::new();
    let bad = json!({"type": "object", "requried": ["a"]});
    let first = cache.compile(&bad).unwrap_err();
    let again = cache.compile(&bad).unwrap_err();
    assert_eq!(first, again);
    assert_eq!(first, CompiledSchema::compile(&bad).unwrap_err());
    assert_eq!(first.pointer, "/requried");
    assert_eq!(cache.len(), 1);
}

#[test]
fn cached_schemas_still_validate_and_report_every_violation() {
    let cache = SchemaCache::new();
    let doc = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
        "required": ["n", "s"]
    });
    let _warm = cache.compile(&doc).unwrap();
    let shared = cache.compile(&doc).unwrap();
    assert!(shared.is_valid(&json!({"n": 1, "s": "x"})));
    let violations = shared.validate(&json!({"n": "one"})).unwrap_err();
    assert_eq!(violations.len(), 2, "{violations:?}");
}

#[test]
fn a_typo_beside_additional_properties_false_blames_the_typo_and_offers_the_keyword() {
    let err = load_error(json!({
        "type": "object",
        "properties": {"title": {"type": "string", "minLenght": 1}},
        "required": ["title"],
        "additionalProperties": false
    }));
    assert_eq!(err.pointer, "/properties/title/minLenght");
    assert!(
        err.reason.contains("did you mean `minLength`?"),
        "{}",
        err.reason
    );
}

#[test]
fn a_bad_keyword_value_says_what_the_keyword_takes() {
    let err = load_error(json!({
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": "ten"}},
        "additionalProperties": false
    }));
    assert_eq!(err.pointer, "/properties/name/maxLength");
    assert!(
        err.reason
            .contains("`maxLength` takes a non-negative integer, found a string (\"ten\")"),
        "{}",
        err.reason
    );
}

#[test]
fn array_form_items_points_to_prefix_items() {
    let err = load_error(json!({"type": "array", "items": [{"type": "string"}]}));
    assert_eq!(err.pointer, "/items");
    assert!(err.reason.contains("prefixItems"), "{}", err.reason);
}

#[test]
fn a_model_is_shown_the_schema_without_its_dialect_and_words_are_found_on_any_subschema() {
    let compiled = CompiledSchema::compile(&serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "for people",
        "type": "object",
        "properties": {"description": {"type": "string", "enum": ["title"]}}
    }))
    .unwrap();
    assert_eq!(
        compiled.text(),
        r#"{"type":"object","properties":{"description":{"type":"string","enum":["title"]}}}"#
    );
    assert!(
        compiled.source().get("$schema").is_some(),
        "the document as written"
    );
    // A property named `description` and an enum value `title` are data, not words.
    assert!(!compiled.has_words());
    let described = CompiledSchema::compile(&serde_json::json!({
        "type": "object",
        "properties": {"points": {"type": "array", "items": {"type": "string", "description": "one fact"}}}
    }))
    .unwrap();
    assert!(described.has_words());
}
