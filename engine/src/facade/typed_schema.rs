//! JSON Schemas from Rust types, with `schemars`: [`input_schema_for`] (a typed tool's
//! arguments) and [`output_schema_for`] (a skill's output, when the caller declares its Rust
//! output type with [`SkilletBuilder::output_type`](super::SkilletBuilder::output_type)).
//!
//! Both are JSON Schema 2020-12 for *deserializing* the type, subschemas inlined (recursive types
//! keep `$defs`), without `$schema` and the Rust type's `title`. `schemars` writes `format`
//! values of its own for numbers (`uint32`, `int64`, `double`, ...), which no JSON Schema
//! validator knows and the engine's schema check refuses (an unknown format is a load error
//! there, so that a typo is never a silent pass): they are dropped; the `minimum`/`maximum`
//! bounds beside them stay. Standard formats (`date-time`, `uuid`, `email`, ...) stay.
//!
//! Not here: checking schemas (`schema`), tools (`typed_tool`).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The `format` names of JSON Schema 2020-12 (the format-annotation vocabulary).
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose value is data, not a schema: the walk does not enter them.
const DATA_KEYWORDS: &[&str] = &["const", "enum", "default", "examples"];

/// The input schema [`tool_fn`](super::tool_fn) offers for `T` (see the module doc).
pub fn input_schema_for<T: JsonSchema>() -> Value {
    schema_for::<T>()
}

/// The output schema [`SkilletBuilder::output_type`](super::SkilletBuilder::output_type) gives a
/// skill for `T` (see the module doc): what the model's answer is validated (and repaired)
/// against, so that it decodes as `T`.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Summary {
///     /// One sentence.
///     summary: String,
///     /// At most five.
///     key_points: Vec<String>,
///     words: u32,
/// }
///
/// let schema = skillet_engine::output_schema_for::<Summary>();
/// assert_eq!(schema["required"], serde_json::json!(["summary", "key_points", "words"]));
/// assert_eq!(schema["properties"]["words"]["minimum"], 0);
/// assert!(schema["properties"]["words"].get("format").is_none()); // schemars' "uint32"
/// ```
pub fn output_schema_for<T: JsonSchema>() -> Value {
    schema_for::<T>()
}

fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    drop_unknown_formats(&mut schema);
    schema
}

/// Removes every `format` that is not a 2020-12 format name, at any depth.
fn drop_unknown_formats(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
            {
                object.remove("format");
            }
            for (key, value) in object.iter_mut() {
                if !DATA_KEYWORDS.contains(&key.as_str()) {
                    drop_unknown_formats(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_unknown_formats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;
    use crate::schema::CompiledSchema;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    enum Priority {
        Low,
        High,
    }

    /// Every number type, options, maps, enums, nesting and recursion.
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Everything {
        small: u8,
        count: u32,
        big: i64,
        size: usize,
        ratio: f32,
        precise: f64,
        maybe: Option<u16>,
        tags: Vec<String>,
        scores: BTreeMap<String, f64>,
        priority: Priority,
        #[serde(default)]
        children: Vec<Everything>,
        #[schemars(extend("format" = "date"))]
        due: String,
    }

    #[test]
    fn derived_schemas_pass_the_engines_2020_12_check() {
        for schema in [
            output_schema_for::<Everything>(),
            input_schema_for::<Everything>(),
        ] {
            if let Err(e) = CompiledSchema::compile(&schema) {
                panic!("{}: {}\n{schema:#}", e.pointer, e.reason);
            }
        }
    }

    #[test]
    fn schemars_number_formats_are_dropped_and_standard_ones_kept() {
        let schema = output_schema_for::<Everything>();
        let text = schema.to_string();
        for format in [
            "uint8", "uint32", "int64", "uint", "float", "double", "uint16",
        ] {
            assert!(
                !text.contains(&format!("\"{format}\"")),
                "{format} in {schema:#}"
            );
        }
        assert_eq!(schema["properties"]["due"]["format"], "date");
        assert_eq!(schema["properties"]["small"]["maximum"], 255);
    }

    #[test]
    fn a_derived_output_schema_validates_what_decodes_and_refuses_what_does_not() {
        let compiled = CompiledSchema::compile(&output_schema_for::<Everything>()).unwrap();
        let good = serde_json::json!({
            "small": 1, "count": 2, "big": -3, "size": 4, "ratio": 0.5, "precise": 0.25,
            "maybe": null, "tags": ["a"], "scores": {"x": 1.0}, "priority": "High",
            "children": [], "due": "2026-12-06"
        });
        assert!(compiled.is_valid(&good));
        assert!(serde_json::from_value::<Everything>(good.clone()).is_ok());
        let mut bad = good;
        bad["small"] = serde_json::json!(300);
        assert!(!compiled.is_valid(&bad));
    }
}
