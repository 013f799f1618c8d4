//! [`TemplateCache`]: one compilation per distinct template source during a load.
//!
//! A compiled [`Template`] (or its [`TemplateError`]) depends only on the source text, and its
//! positions are relative to that text, so skills with the same body (copies of a skill, a
//! generated family) can share one parse; the caller still places errors in its own SKILL.md.
//! The cache lives as long as its owner (one load of a skills root): nothing here is global.
//!
//! Not here: what a compilation accepts (the `template` module doc).

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Template, TemplateError};

type Outcomes = HashMap<String, Result<Template, TemplateError>>;

/// Compiled templates keyed by source text; `Sync`, so the threads of a parallel load share one.
#[derive(Debug, Default)]
pub struct TemplateCache {
    compiled: Mutex<Outcomes>,
}

impl TemplateCache {
    /// An empty cache.
    pub fn new() -> TemplateCache {
        TemplateCache::default()
    }

    /// [`Template::compile`], once per distinct source: a repeated source gets a copy of the
    /// first outcome.
    pub fn compile(&self, source: &str) -> Result<Template, TemplateError> {
        if let Some(done) = self.lock().get(source) {
            return done.clone();
        }
        // Compiled outside the lock so other sources compile meanwhile.
        let outcome = Template::compile(source);
        self.lock()
            .entry(source.to_owned())
            .or_insert(outcome)
            .clone()
    }

    /// How many distinct sources have been compiled.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing has been compiled yet.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Outcomes> {
        // One insert at a time: a panic cannot leave the map half-written.
        self.compiled.lock().unwrap_or_else(|e| e.into_inner())
    }
}
