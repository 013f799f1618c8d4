//! [`SchemaCache`]: one compilation per distinct schema document, shared by every skill that
//! declares it.
//!
//! Loading a root of skills compiles the same few schema documents again and again (copies of a
//! skill, a shared `assets/` convention). A compilation — the strict meta-schema check, the
//! reference walks and the validator build — depends only on the document, so its outcome
//! (the [`CompiledSchema`], whose validator sits in an `Arc`, or the [`SchemaError`]) is kept
//! under the document's canonical JSON text and handed out again. Errors are cached too: the
//! caller adds the file and the location, which differ per skill.
//!
//! The cache lives as long as its owner (one load of a skills root); nothing here is global, so
//! a long-running host that reloads skills does not keep old documents alive.
//!
//! Not here: reading schema files (`skill`), what a compilation checks (the `schema` module doc).

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use super::{CompiledSchema, SchemaError};

/// Compiled schemas keyed by document content; `Sync`, so the threads of a parallel load share
/// one.
#[derive(Debug, Default)]
pub struct SchemaCache {
    compiled: Mutex<HashMap<String, Result<CompiledSchema, SchemaError>>>,
}

impl SchemaCache {
    /// An empty cache.
    pub fn new() -> SchemaCache {
        SchemaCache::default()
    }

    /// [`CompiledSchema::compile`], once per distinct document: an identical document gets a
    /// clone of the first outcome (the same validator, shared).
    pub fn compile(&self, schema: &Value) -> Result<CompiledSchema, SchemaError> {
        let key = schema.to_string();
        if let Some(done) = self.lock().get(&key) {
            return done.clone();
        }
        // Compiled outside the lock so other documents compile meanwhile. Two threads that
        // meet the same new document both compile it; the first stored outcome is the one
        // both hand out, so sharing still holds.
        let outcome = CompiledSchema::compile(schema);
        self.lock().entry(key).or_insert(outcome).clone()
    }

    /// How many distinct documents have been compiled.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing has been compiled yet.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, Result<CompiledSchema, SchemaError>>> {
        // A panic while holding the lock cannot leave the map half-written (one insert), so a
        // poisoned lock is still usable.
        self.compiled.lock().unwrap_or_else(|e| e.into_inner())
    }
}
