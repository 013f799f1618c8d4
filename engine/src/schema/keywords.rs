//! The keywords of JSON Schema 2020-12 as data: which exist, where a keyword's value is itself a
//! schema (so the walk goes on there), and what value each one takes. From that table come the
//! two messages an author reads most: an unknown keyword, named at its own pointer with the
//! keyword it was probably meant to be (`minLenght` → "did you mean `minLength`?"), and a bad
//! value ("`maxLength` takes a non-negative integer").
//!
//! Why a walk of our own rather than the meta-schema's `unevaluatedProperties`: when one
//! subschema fails, the meta-schema drops the annotations of every applicator around it, so a
//! typo under `properties` also reports the valid `additionalProperties` beside it as
//! "unevaluated" — the author would be told to delete a keyword that is right. The walk knows
//! the vocabulary and reports only the keyword that is wrong.
//!
//! Not here: checking keyword *values* (the strict meta-schema in `strict`), references and
//! cycles (`strict`, `cycles`).

use serde_json::Value;

use super::SchemaError;

/// Every 2020-12 keyword (core, applicator, unevaluated, validation, meta-data, format,
/// content) with the kind of value it takes.
const KEYWORDS: &[(&str, Takes)] = &[
    ("$schema", Takes::Uri),
    ("$id", Takes::Uri),
    ("$ref", Takes::Uri),
    ("$anchor", Takes::Name),
    ("$dynamicRef", Takes::Uri),
    ("$dynamicAnchor", Takes::Name),
    ("$vocabulary", Takes::Object),
    ("$comment", Takes::Text),
    ("$defs", Takes::SchemaMap),
    ("prefixItems", Takes::SchemaList),
    ("items", Takes::Schema),
    ("contains", Takes::Schema),
    ("additionalProperties", Takes::Schema),
    ("properties", Takes::SchemaMap),
    ("patternProperties", Takes::SchemaMap),
    ("dependentSchemas", Takes::SchemaMap),
    ("propertyNames", Takes::Schema),
    ("if", Takes::Schema),
    ("then", Takes::Schema),
    ("else", Takes::Schema),
    ("allOf", Takes::SchemaList),
    ("anyOf", Takes::SchemaList),
    ("oneOf", Takes::SchemaList),
    ("not", Takes::Schema),
    ("unevaluatedItems", Takes::Schema),
    ("unevaluatedProperties", Takes::Schema),
    ("type", Takes::TypeName),
    ("const", Takes::Any),
    ("enum", Takes::Array),
    ("multipleOf", Takes::PositiveNumber),
    ("maximum", Takes::Number),
    ("exclusiveMaximum", Takes::Number),
    ("minimum", Takes::Number),
    ("exclusiveMinimum", Takes::Number),
    ("maxLength", Takes::Count),
    ("minLength", Takes::Count),
    ("pattern", Takes::Regex),
    ("maxItems", Takes::Count),
    ("minItems", Takes::Count),
    ("uniqueItems", Takes::Bool),
    ("maxContains", Takes::Count),
    ("minContains", Takes::Count),
    ("maxProperties", Takes::Count),
    ("minProperties", Takes::Count),
    ("required", Takes::Names),
    ("dependentRequired", Takes::Object),
    ("title", Takes::Text),
    ("description", Takes::Text),
    ("default", Takes::Any),
    ("deprecated", Takes::Bool),
    ("readOnly", Takes::Bool),
    ("writeOnly", Takes::Bool),
    ("examples", Takes::Array),
    ("format", Takes::Text),
    ("contentEncoding", Takes::Text),
    ("contentMediaType", Takes::Text),
    ("contentSchema", Takes::Schema),
];

/// What a keyword's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Schema,
    SchemaList,
    SchemaMap,
    Uri,
    Name,
    Text,
    Regex,
    Object,
    Array,
    Names,
    Bool,
    Any,
    Number,
    PositiveNumber,
    Count,
    TypeName,
}

impl Takes {
    fn describe(self) -> &'static str {
        match self {
            Takes::Schema => "a schema (an object or a boolean)",
            Takes::SchemaList => "a non-empty array of schemas",
            Takes::SchemaMap => "an object whose values are schemas",
            Takes::Uri => "a URI reference (a string)",
            Takes::Name => "a plain name (a string)",
            Takes::Text | Takes::Regex => "a string",
            Takes::Object => "an object",
            Takes::Array => "an array",
            Takes::Names => "an array of unique strings",
            Takes::Bool => "a boolean",
            Takes::Any => "any JSON value",
            Takes::Number => "a number",
            Takes::PositiveNumber => "a number greater than 0",
            Takes::Count => "a non-negative integer",
            Takes::TypeName => {
                "one of \"string\", \"number\", \"integer\", \"boolean\", \"object\", \"array\", \
                 \"null\", or an array of them"
            }
        }
    }
}

fn takes(keyword: &str) -> Option<Takes> {
    KEYWORDS
        .iter()
        .find(|(name, _)| *name == keyword)
        .map(|(_, takes)| *takes)
}

/// Every keyword of `schema` (at `pointer`) that 2020-12 does not define, each at its own
/// pointer, in document order. Property names (under `properties`, `$defs`, ...) and data
/// (`const`, `enum`, `default`, `examples`) are not keywords and are not looked at.
pub(super) fn unknown_keywords(schema: &Value, pointer: &str, found: &mut Vec<SchemaError>) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        let at = format!("{pointer}/{}", super::strict::escape_pointer(key));
        match takes(key) {
            None => found.push(SchemaError {
                pointer: at,
                reason: unknown_keyword_reason(key),
            }),
            Some(Takes::Schema) => unknown_keywords(value, &at, found),
            Some(Takes::SchemaList) => {
                if let Value::Array(items) = value {
                    for (i, item) in items.iter().enumerate() {
                        unknown_keywords(item, &format!("{at}/{i}"), found);
                    }
                }
            }
            Some(Takes::SchemaMap) => {
                if let Value::Object(entries) = value {
                    for (name, item) in entries {
                        let name = super::strict::escape_pointer(name);
                        unknown_keywords(item, &format!("{at}/{name}"), found);
                    }
                }
            }
            Some(_) => {}
        }
    }
}

/// The reason an unknown keyword is refused: the 2020-12 spelling of an older keyword, or the
/// closest known keyword when one is near.
fn unknown_keyword_reason(keyword: &str) -> String {
    let hint = match keyword {
        "definitions" => " (2020-12 uses `$defs`)".to_owned(),
        "dependencies" => " (2020-12 uses `dependentRequired` / `dependentSchemas`)".to_owned(),
        "$recursiveRef" | "$recursiveAnchor" => {
            " (2020-12 uses `$dynamicRef` / `$dynamicAnchor`)".to_owned()
        }
        "additionalItems" => " (2020-12 uses `prefixItems` + `items`)".to_owned(),
        "nullable" => " (an OpenAPI keyword; use `\"type\": [\"string\", \"null\"]`)".to_owned(),
        _ => closest_keyword(keyword)
            .map(|near| format!("; did you mean `{near}`?"))
            .unwrap_or_default(),
    };
    format!("unknown or unsupported JSON Schema 2020-12 keyword `{keyword}`{hint}")
}

/// The known keyword nearest to `word` (case ignored, at most two edits, fewer for short
/// words), if one is near enough to be what the author meant.
fn closest_keyword(word: &str) -> Option<&'static str> {
    let lower = word.to_ascii_lowercase();
    let allowed = if word.len() <= 4 { 1 } else { 2 };
    KEYWORDS
        .iter()
        .map(|(name, _)| (*name, edit_distance(&lower, &name.to_ascii_lowercase())))
        .filter(|(_, distance)| *distance <= allowed)
        .min_by_key(|(_, distance)| *distance)
        .map(|(name, _)| name)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbours (`minLenght` is one swap from `minLength`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// What the keyword at the end of `pointer` takes, for a bad-value message (`None` when the
/// pointer does not end at a keyword, e.g. inside an `enum` list).
pub(super) fn expected_value(pointer: &str, schema: &Value) -> Option<String> {
    let keyword = pointer
        .rsplit('/')
        .next()?
        .replace("~1", "/")
        .replace("~0", "~");
    let takes = takes(&keyword)?;
    let found = schema.pointer(pointer);
    let mut text = format!("`{keyword}` takes {}", takes.describe());
    if let Some(found) = found {
        text.push_str(&format!(", found {}", kind_of(found)));
    }
    if keyword == "items" && found.is_some_and(Value::is_array) {
        text.push_str(" (the array form of `items` is pre-2020-12: use `prefixItems`)");
    }
    Some(text)
}

fn kind_of(value: &Value) -> String {
    let text = value.to_string();
    let shown: String = text.chars().take(40).collect();
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    if shown.len() < text.len() {
        format!("{kind} ({shown}…)")
    } else {
        format!("{kind} ({shown})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_name_the_keyword_meant() {
        assert_eq!(closest_keyword("minLenght"), Some("minLength"));
        assert_eq!(closest_keyword("requried"), Some("required"));
        assert_eq!(closest_keyword("MaxItems"), Some("maxItems"));
        assert_eq!(closest_keyword("propertes"), Some("properties"));
        assert_eq!(closest_keyword("x-internal"), None);
        assert_eq!(closest_keyword("foo"), None);
    }

    #[test]
    fn a_bad_value_says_what_the_keyword_takes_and_what_it_found() {
        let schema = serde_json::json!({"properties": {"a": {"maxLength": "ten"}}});
        let text = expected_value("/properties/a/maxLength", &schema).unwrap();
        assert_eq!(
            text,
            "`maxLength` takes a non-negative integer, found a string (\"ten\")"
        );
        assert_eq!(expected_value("/enum/0", &schema), None);
    }
}
