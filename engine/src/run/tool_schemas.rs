//! [`ToolSchemaCache`]: tool input schemas compiled once and reused by every call.
//!
//! Tools registered directly are compiled when the executor is built, into a map that is never
//! written again (read without any lock). Toolkit tools can appear and change while a toolkit runs
//! (an MCP server's `tools/list`), so they are compiled on first use into a read-mostly map and
//! recompiled only when their schema document changes.
//!
//! Tool schemas come from the host and from MCP servers, not from skill authors, so they are
//! compiled leniently (the draft their `$schema` names, unknown keywords ignored) — but still
//! offline: a remote `$ref` is never fetched. Not here: the strict skill schemas (`schema`).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use jsonschema::Validator;
use serde_json::Value;
use skillet_providers::SharedJson;

use crate::tools::{ResolvedTool, Tool, ToolRegistry, ToolSource};

/// A compiled tool schema, or why the tool's schema does not compile. Cloning is two reference
/// counts: a lookup per tool call copies no schema.
#[derive(Clone)]
pub(crate) struct ToolSchema {
    source: SharedJson,
    validator: Result<Arc<Validator>, String>,
    /// The tool it was compiled from, kept alive so that the same tool object (and the same
    /// schema document inside it) is recognised by identity instead of compared by value.
    compiled_from: Arc<dyn Tool>,
}

impl ToolSchema {
    fn compile(tool: &Arc<dyn Tool>) -> ToolSchema {
        let source = tool.input_schema();
        let validator = jsonschema::options()
            .offline()
            .build(source)
            .map(Arc::new)
            .map_err(|e| e.to_string());
        ToolSchema {
            source: SharedJson::new(source.clone()),
            validator,
            compiled_from: Arc::clone(tool),
        }
    }

    /// Whether this compilation is of `tool`'s current schema: the same tool object handing
    /// out the same document (no comparison needed), or an equal document.
    fn is_of(&self, tool: &Arc<dyn Tool>) -> bool {
        let schema = tool.input_schema();
        (Arc::ptr_eq(&self.compiled_from, tool)
            && std::ptr::eq(self.compiled_from.input_schema(), schema))
            || *self.source.value() == *schema
    }

    /// The schema document, shared with every request that offers the tool (its JSON text is
    /// written once per compilation, not per request).
    pub(crate) fn source(&self) -> &SharedJson {
        &self.source
    }

    /// Checks `arguments`; `Err` lists every violation as `path: message` lines (or says that
    /// the tool's own schema is broken).
    pub(crate) fn check(&self, arguments: &Value) -> Result<(), Vec<String>> {
        let validator = match &self.validator {
            Ok(v) => v,
            Err(e) => return Err(vec![format!("the tool's input schema is invalid: {e}")]),
        };
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .map(|e| {
                let path = e.instance_path().as_str().to_owned();
                let at = if path.is_empty() {
                    "(root)".to_owned()
                } else {
                    path
                };
                format!("{at}: {e}")
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// Compiled input schemas of the tools an executor can offer.
#[derive(Default)]
pub(crate) struct ToolSchemaCache {
    registered: HashMap<String, ToolSchema>,
    toolkit: RwLock<HashMap<(String, String), ToolSchema>>,
}

impl ToolSchemaCache {
    /// Compiles the schemas of every tool registered directly in `registry`.
    pub(crate) fn for_registry(registry: &ToolRegistry) -> Self {
        let registered = registry
            .tools()
            .map(|t| (t.name().to_owned(), ToolSchema::compile(t)))
            .collect();
        ToolSchemaCache {
            registered,
            toolkit: RwLock::default(),
        }
    }

    /// The compiled schema of `tool`, compiling (once) when it is not cached or changed.
    pub(crate) fn get(&self, tool: &ResolvedTool) -> ToolSchema {
        let kit = match &tool.source {
            ToolSource::Direct => {
                if let Some(cached) = self.registered.get(tool.tool.name())
                    && cached.is_of(&tool.tool)
                {
                    return cached.clone();
                }
                // Not registered at build time (a registry replaced later): compile once into
                // the dynamic map under an empty toolkit name.
                String::new()
            }
            ToolSource::Toolkit(kit) => kit.clone(),
        };
        let key = (kit, tool.tool.name().to_owned());
        {
            let map = self.toolkit.read().unwrap_or_else(|p| p.into_inner());
            if let Some(cached) = map.get(&key)
                && cached.is_of(&tool.tool)
            {
                return cached.clone();
            }
        }
        let compiled = ToolSchema::compile(&tool.tool);
        self.toolkit
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, compiled.clone());
        compiled
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::{ToolOutput, tool_fn};

    fn tool(schema: Value) -> Arc<dyn Tool> {
        tool_fn("lookup", "looks up", schema, |_, _| async {
            Ok(ToolOutput::text("ok"))
        })
    }

    fn resolved(tool: &Arc<dyn Tool>) -> ResolvedTool {
        ResolvedTool {
            offered_name: "lookup".into(),
            tool: Arc::clone(tool),
            source: ToolSource::Toolkit("kit".into()),
        }
    }

    fn same_compilation(a: &ToolSchema, b: &ToolSchema) -> bool {
        match (&a.validator, &b.validator) {
            (Ok(a), Ok(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    #[test]
    fn a_tool_is_compiled_once_and_again_only_when_its_schema_changes() {
        let cache = ToolSchemaCache::default();
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let first = tool(schema.clone());
        let compiled = cache.get(&resolved(&first));
        assert!(compiled.check(&json!({"q": "x"})).is_ok());
        // The same tool object: recognised by identity.
        assert!(same_compilation(&compiled, &cache.get(&resolved(&first))));
        // A new object (a toolkit's list changed) with an equal schema: still the same one.
        let equal = tool(schema);
        assert!(same_compilation(&compiled, &cache.get(&resolved(&equal))));
        // A new object with another schema: compiled again, and its rules apply.
        let changed = tool(json!({"type": "object", "properties": {"q": {"type": "integer"}}}));
        let recompiled = cache.get(&resolved(&changed));
        assert!(!same_compilation(&compiled, &recompiled));
        assert!(recompiled.check(&json!({"q": "x"})).is_err());
        assert_eq!(
            recompiled.source().value()["properties"]["q"]["type"],
            "integer"
        );
    }
}
