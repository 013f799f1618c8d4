//! Provider-safe tool names.
//!
//! OpenAI, Anthropic and Ollama all accept tool names of at most 64 characters from
//! `[a-zA-Z0-9_-]`. Skills and MCP servers use other characters (`fs.read`, `search/web`), so
//! the names offered to a model are *derived*: invalid characters become `_`, long names are cut,
//! and a collision gets a numeric suffix. [`NameMap`] keeps the mapping in both directions so a
//! model's call maps back to exactly one tool.

/// Longest tool name every provider accepts.
pub(crate) const MAX_TOOL_NAME_LEN: usize = 64;

/// Whether `name` is accepted as-is by every provider.
#[cfg(test)] // the tests' oracle for `sanitize`
pub(crate) fn is_provider_safe(name: &str) -> bool {
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
///
/// Built once per call, so it is kept small: the names in tool order, and the tool indices in
/// the order of their names, searched by bisection (no hash table per call).
#[derive(Debug, Clone, Default)]
pub(crate) struct NameMap {
    offered: Vec<String>,
    by_name: Vec<usize>,
}

impl NameMap {
    /// An empty map.
    #[cfg(test)] // the run loop builds its maps with `Default`
    pub(crate) fn new() -> Self {
        NameMap::default()
    }

    /// Room for `additional` more names without growing.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.offered.reserve_exact(additional);
        self.by_name.reserve_exact(additional);
    }

    /// Where `name` is in `by_name`: `Ok` if it is taken, else where it would go.
    fn search(&self, name: &str) -> Result<usize, usize> {
        self.by_name
            .binary_search_by(|&i| self.offered[i].as_str().cmp(name))
    }

    /// Assigns a provider-safe name to the next tool, trying `preferred` candidates in order
    /// (each sanitized) and then numbered variants of the first; returns the name chosen.
    pub(crate) fn assign(&mut self, preferred: &[&str]) -> String {
        let index = self.offered.len();
        let candidates: Vec<String> = preferred.iter().map(|p| sanitize(p)).collect();
        let chosen = candidates
            .iter()
            .find(|c| self.search(c).is_err())
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
                    .find(|c| self.search(c).is_err())
                    .unwrap_or_default()
            });
        let at = self.search(&chosen).unwrap_or_else(|free| free);
        self.offered.push(chosen.clone());
        self.by_name.insert(at, index);
        chosen
    }

    /// The tool index a model's name stands for.
    pub(crate) fn lookup(&self, offered: &str) -> Option<usize> {
        let at = self.search(offered).ok()?;
        self.by_name.get(at).copied()
    }

    /// The offered name of tool `index`.
    #[cfg(test)] // the run loop maps a model's call back with `lookup`
    pub(crate) fn offered(&self, index: usize) -> Option<&str> {
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
        assert_eq!(map.lookup("fs_read_3"), None);
        assert_eq!(map.offered(2), Some("files_fs_read"));
    }

    #[test]
    fn many_names_in_any_order_map_back_to_their_index() {
        let mut map = NameMap::new();
        let names: Vec<String> = (0..200)
            .map(|i| map.assign(&[&format!("t{}", (i * 37) % 100)]))
            .collect();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(map.lookup(name), Some(i), "{name}");
            assert_eq!(map.offered(i), Some(name.as_str()));
        }
        // The second hundred collided with the first and were numbered.
        assert!(names[150].ends_with("_2"), "{}", names[150]);
        assert_eq!(map.lookup("t1000"), None);
    }
}
