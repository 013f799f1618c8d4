//! The assets a manifest names, as values: `a2a-input-schema` / `a2a-output-schema` compiled
//! (through the load's [`SchemaCache`]), and `a2a-provider-config` read as a JSON object that
//! carries no credentials. Each problem is located at the key in SKILL.md (a bad path) or in
//! the asset itself (bad content).
//!
//! Not here: reading files under the trust model (`assets`), assembling the skill (`loader`).

use std::path::Path;

use serde_json::{Map, Value};

use super::assets::{AssetError, SkillDir};
use super::error::ManifestError;
use super::frontmatter::Entry;
use super::keys::DeclaredKeys;
use crate::schema::{CompiledSchema, SchemaCache};

fn asset_problem(e: AssetError, location: String, skill_md: &Path, entry: &Entry) -> ManifestError {
    if e.path_problem {
        // The path itself is the problem: point at the key in SKILL.md.
        return ManifestError::error(skill_md, location, e.reason.to_string())
            .at(entry.line, entry.column);
    }
    let problem = ManifestError::error(&e.file, location, e.reason.to_string());
    match e.line {
        Some((line, column)) => problem.at(line, column),
        None => problem,
    }
}

pub(super) fn schema_asset(
    skill_dir: &SkillDir<'_>,
    skill_md: &Path,
    key: &str,
    declared: &Option<(String, Entry)>,
    schemas: &SchemaCache,
    problems: &mut Vec<ManifestError>,
) -> Option<CompiledSchema> {
    let (relative, entry) = declared.as_ref()?;
    let location = format!("metadata.{key}");
    let value = match skill_dir.read_json(relative) {
        Ok(v) => v,
        Err(e) => {
            problems.push(asset_problem(e, location, skill_md, entry));
            return None;
        }
    };
    match schemas.compile(&value) {
        Ok(schema) => Some(schema),
        Err(e) => {
            problems.push(ManifestError::error(
                &skill_dir.path().join(relative),
                format!("{location}#{}", e.pointer),
                e.reason,
            ));
            None
        }
    }
}

pub(super) fn provider_config_asset(
    skill_dir: &SkillDir<'_>,
    skill_md: &Path,
    keys: &DeclaredKeys,
    problems: &mut Vec<ManifestError>,
) -> Option<Map<String, Value>> {
    let (relative, entry) = keys.provider_config.as_ref()?;
    let location = "metadata.a2a-provider-config".to_owned();
    let value = match skill_dir.read_json(relative) {
        Ok(v) => v,
        Err(e) => {
            problems.push(asset_problem(e, location, skill_md, entry));
            return None;
        }
    };
    let file = skill_dir.path().join(relative);
    let Value::Object(config) = value else {
        problems.push(ManifestError::error(
            &file,
            location,
            "the provider config must be a JSON object",
        ));
        return None;
    };
    if let Some(pointer) = find_credential(&Value::Object(config.clone()), "") {
        problems.push(ManifestError::error(
            &file,
            format!("{location}#{pointer}"),
            "credentials do not belong in a skill: configure them on the host (a key naming an \
             environment variable, ending in `_env`, is fine)",
        ));
        return None;
    }
    Some(config)
}

/// The pointer of the first key that looks like a credential value.
fn find_credential(value: &Value, pointer: &str) -> Option<String> {
    const MARKERS: [&str; 7] = [
        "api_key",
        "apikey",
        "api-key",
        "secret",
        "password",
        "token",
        "authorization",
    ];
    match value {
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let here = format!("{pointer}/{k}");
            let lower = k.to_ascii_lowercase();
            let looks_secret = MARKERS.iter().any(|m| lower.contains(m))
                && !lower.ends_with("_env")
                && !lower.contains("max_tokens");
            if looks_secret {
                Some(here)
            } else {
                find_credential(v, &here)
            }
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_credential(v, &format!("{pointer}/{i}"))),
        _ => None,
    }
}
