//! Provider-safe tool names.
//!
//! OpenAI, Anthropic and Ollama all accept tool names of at most 64 characters from
//! `[a-zA-Z0-9_-]`. Skills and MCP servers use other characters (`fs.read`, `search/web`), so
//! the names offered to a model are *derived*: invalid characters become `_`, long names are cut,
//! and a collision gets a numeric suffix. [`NameMap`] keeps the mapping in both directions so a
//! model's call maps back to exactly one tool.

use std::collections::HashMap;

/// Longest tool name every provider accepts.
pub(crate) const MAX_TOOL_NAME_LEN: usize = 64;

/// Whether `name` is accepted as-is by every provider.
pub fn is_provider_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64 characters;
/// an empty name becomes `tool`.
pub fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME_LEN)
        .collect();
    if out.is_empty() {
        out.push_str("tool");
    }
    out
}

/// A bijection between the names offered to a model and the tools they stand for (by index).
#[derive(Debug, Clone, Default)]
pub struct NameMap {
    by_offered: HashMap<String, usize>,
    offered: Vec<String>,
}

impl NameMap {
    /// An empty map.
    pub fn new() -> Self {
        NameMap::default()
    }

    /// Assigns a provider-safe name to the next tool, trying `preferred` candidates in order
    /// (each sanitized) and then numbered variants of the first; returns the name chosen.
    pub(crate) fn assign(&mut self, preferred: &[&str]) -> String {
        let index = self.offered.len();
        let candidates: Vec<String> = preferred.iter().map(|p| sanitize(p)).collect();
        let chosen = candidates
            .iter()
            .find(|c| !self.by_offered.contains_key(*c))
            .cloned()
            .unwrap_or_else(|| {
                let base = candidates
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "tool".to_owned());
                (2..)
                    .map(|n| {
                        let suffix = format!("_{n}");
                        let keep = MAX_TOOL_NAME_LEN - suffix.len();
                        let cut: String = base.chars().take(keep).collect();
                        format!("{cut}{suffix}")
                    })
                    .find(|c| !self.by_offered.contains_key(c))
                    .unwrap_or_default()
            });
        self.by_offered.insert(chosen.clone(), index);
        self.offered.push(chosen.clone());
        chosen
    }

    /// The tool index a model's name stands for.
    pub fn lookup(&self, offered: &str) -> Option<usize> {
        self.by_offered.get(offered).copied()
    }

    /// The offered name of tool `index`.
    pub fn offered(&self, index: usize) -> Option<&str> {
        self.offered.get(index).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_characters_and_length_are_made_safe() {
        assert_eq!(sanitize("fs.read/file"), "fs_read_file");
        assert_eq!(sanitize(""), "tool");
        let long = "x".repeat(100);
        assert_eq!(sanitize(&long).len(), 64);
        assert!(is_provider_safe(&sanitize("äöü tool")));
    }

    #[test]
    fn collisions_get_suffixes_and_map_back_unambiguously() {
        let mut map = NameMap::new();
        let a = map.assign(&["fs.read"]);
        let b = map.assign(&["fs_read"]);
        let c = map.assign(&["fs_read", "files_fs_read"]);
        let long = "y".repeat(70);
        let d = map.assign(&[&long]);
        let e = map.assign(&[&long]);
        assert_eq!(a, "fs_read");
        assert_eq!(b, "fs_read_2");
        assert_eq!(c, "files_fs_read");
        assert_eq!(e.len(), 64);
        assert!(e.ends_with("_2"));
        for (i, name) in [a, b, c, d, e].iter().enumerate() {
            assert!(is_provider_safe(name), "{name}");
            assert_eq!(map.lookup(name), Some(i));
        }
    }
}
