//! Strict JSON Schema 2020-12: skill input/output schemas compiled once at load, validated per
//! call.
//!
//! What "strict" means here (DEPENDENCIES.md lists the traps of the `jsonschema` crate):
//! - **Unknown keywords are load errors.** The crate ignores keywords it does not know, so a typo
//!   (`"requried"`) would silently accept everything. Every schema is walked against the
//!   2020-12 vocabulary (`keywords`: which keywords exist and which take subschemas), and each
//!   unknown keyword is reported at its own pointer (`/properties/age/minimun`) with the keyword
//!   it was probably meant to be ("did you mean `minimum`?"). Pre-2020-12 keywords
//!   (`definitions`, `dependencies`, `$recursiveRef`) are unknown too, with their 2020-12
//!   spelling: `$defs`, `dependentRequired`/`dependentSchemas`, `$dynamicRef`. Keyword values
//!   are then checked against the 2020-12 meta-schema, each bad one reported with what the
//!   keyword takes (`maxLength` takes a non-negative integer); array-form `items` is refused
//!   there, pointing to `prefixItems`.
//! - **No remote or file references.** `$ref`/`$dynamicRef` must be fragment-only (`#/$defs/x`,
//!   `#anchor`); anything else (`https://…`, `file:…`, `other.json`) is a load error located at the
//!   `$ref`. The validator is also built `offline()` so nothing can be fetched even if a
//!   reference slipped through. `$schema`, when present, must name 2020-12.
//! - **`format` is asserted**, not just annotated (`"format": "email"` rejects `"x"`), and an
//!   unknown format name is a load error rather than a silent pass.
//! - **All violations** are reported, each with instance path, schema path and message.
//! - **No reference cycles that never reach a constraint** (`{"$ref": "#"}`, `$defs/a ↔
//!   $defs/b`): a load error naming the cycle (`cycles`). Recursion that descends into a property
//!   or item (a tree) is fine.
//!
//! An empty schema `{}` (or `true`) means "no constraint"; `CompiledSchema::is_unconstrained`
//! tells the run loop it may skip validation (e.g. no JSON repair turn for free-form output).
//!
//! [`SchemaCache`] (`cache`) compiles each distinct document once during a load and hands the
//! same compilation to every skill that declares it; the strict meta-schema is built once per
//! process.
//!
//! Not here: where schemas come from (the manifest's asset files, see `skill`).

use std::sync::LazyLock;

use jsonschema::{Draft, Validator};
use serde_json::Value;
use skillet_providers::SharedJson;

mod cache;
mod cycles;
mod keywords;
mod strict;

pub use cache::SchemaCache;

#[cfg(test)]
mod tests;

/// A schema compiled once, validated many times; `Send + Sync`, share it in an `Arc`.
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    /// The document, shared with every request offering it, with its compact JSON text written
    /// once (on first use) and shared by the clones.
    source: SharedJson,
    /// What a model is shown: the document without its top-level `$schema` and `$comment`
    /// (words for validators and people, not for a model), shared with `source` when it has
    /// neither.
    for_models: SharedJson,
    /// Whether the schema has words a grammar cannot convey (`description`, `title`,
    /// `examples` on any subschema).
    has_words: bool,
    validator: std::sync::Arc<Validator>,
    unconstrained: bool,
}

/// Why a schema was rejected at load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", if pointer.is_empty() { "(schema root)" } else { pointer.as_str() })]
pub struct SchemaError {
    /// JSON pointer into the schema document of the offending keyword (`""` = the root).
    pub pointer: String,
    /// What is wrong.
    pub reason: String,
}

pub use skillet_core::schema::Violation;

/// The 2020-12 dialect URI, with and without the empty fragment.
const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

static STRICT_META: LazyLock<Result<Validator, String>> = LazyLock::new(strict::meta_validator);

impl CompiledSchema {
    /// Checks `schema` against the strict dialect and compiles it.
    pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        match schema {
            Value::Object(_) | Value::Bool(_) => {}
            other => {
                return Err(SchemaError {
                    pointer: String::new(),
                    reason: format!("a schema must be an object or a boolean, found {other}"),
                });
            }
        }
        strict::check_references(schema, "")?;
        cycles::check_reference_cycles(schema)?;
        let meta = STRICT_META.as_ref().map_err(|e| SchemaError {
            pointer: String::new(),
            reason: format!("internal: strict meta-schema failed to build: {e}"),
        })?;
        if let Some(first) = strict::keyword_errors(meta, schema).into_iter().next() {
            return Err(first);
        }
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .offline()
            .build(schema)
            .map_err(|e| SchemaError {
                pointer: e.instance_path().as_str().to_owned(),
                reason: e.to_string(),
            })?;
        let unconstrained = match schema {
            Value::Bool(b) => *b,
            Value::Object(map) => map.keys().all(|k| k == "$schema" || k == "$comment"),
            _ => false,
        };
        let source = SharedJson::new(schema.clone());
        let for_models = match schema {
            Value::Object(map) if map.contains_key("$schema") || map.contains_key("$comment") => {
                let mut shown = map.clone();
                // `retain` keeps the order the author wrote (`remove` would swap the last in).
                shown.retain(|keyword, _| keyword != "$schema" && keyword != "$comment");
                SharedJson::new(Value::Object(shown))
            }
            _ => source.clone(),
        };
        Ok(CompiledSchema {
            source,
            for_models,
            has_words: has_words(schema),
            validator: std::sync::Arc::new(validator),
            unconstrained,
        })
    }

    /// A schema that accepts everything (`{}`).
    pub fn unconstrained() -> CompiledSchema {
        CompiledSchema::compile(&Value::Object(Default::default()))
            .expect("the empty schema always compiles")
    }

    /// Validates `instance`, returning every violation (never just the first).
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<Violation>> {
        if self.unconstrained {
            return Ok(());
        }
        let violations: Vec<Violation> = self
            .validator
            .iter_errors(instance)
            .map(|e| Violation {
                instance_path: e.instance_path().as_str().to_owned(),
                schema_path: e.schema_path().as_str().to_owned(),
                message: e.to_string(),
            })
            .collect();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(violations)
        }
    }

    /// Whether `instance` is valid (faster than [`validate`](Self::validate) when the reasons
    /// are not needed).
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.unconstrained || self.validator.is_valid(instance)
    }

    /// Whether this schema constrains nothing (`{}` or `true`).
    pub(crate) fn is_unconstrained(&self) -> bool {
        self.unconstrained
    }

    /// The schema document as written.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// The document a model is shown, as compact JSON text (written once per compilation, then
    /// shared): what a prompt showing the schema embeds. Without the top-level `$schema` and
    /// `$comment`.
    pub fn text(&self) -> &str {
        self.for_models.json_text().get()
    }

    /// The document a model is shown, shared (a reference count, no copy): what a request
    /// offering it to a model holds.
    pub(crate) fn shared_source(&self) -> SharedJson {
        self.for_models.clone()
    }

    /// Whether the schema has words a grammar cannot convey to a model: a `description`,
    /// `title` or `examples` on any subschema.
    pub(crate) fn has_words(&self) -> bool {
        self.has_words
    }

    /// Whether `self` and `other` are one compilation shared (a [`SchemaCache`] hands out the
    /// same validator for identical documents), not merely equal documents.
    pub fn shares_compilation_with(&self, other: &CompiledSchema) -> bool {
        std::sync::Arc::ptr_eq(&self.validator, &other.validator)
    }
}

/// Whether `schema` has a `description`, `title` or `examples` on any subschema. Property names
/// and `enum`/`const`/`default` values are data, not words about the schema.
fn has_words(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.iter().any(|(keyword, value)| match keyword.as_str() {
            "description" | "title" | "examples" => true,
            "enum" | "const" | "default" => false,
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                value
                    .as_object()
                    .is_some_and(|named| named.values().any(has_words))
            }
            _ => has_words(value),
        }),
        Value::Array(items) => items.iter().any(has_words),
        _ => false,
    }
}
