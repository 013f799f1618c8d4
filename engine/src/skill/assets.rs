//! Reading the files a manifest names, under the trust model of seed 003: only the named files,
//! only inside the skill directory, only up to a size cap, and never executed or followed
//! further (no includes, no `$ref` fetching — a schema's references are checked in `schema`).

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// Largest SKILL.md accepted, in bytes.
pub const MAX_SKILL_MD_BYTES: u64 = 1024 * 1024;
/// Largest asset (schema, provider config) accepted, in bytes.
pub const MAX_ASSET_BYTES: u64 = 256 * 1024;

/// Why an asset could not be used; the caller adds file and location.
#[derive(Debug)]
pub(crate) struct AssetError {
    pub file: PathBuf,
    pub reason: String,
    pub line: Option<(usize, usize)>,
    /// The path itself is the problem (outside, absolute, missing), not the file's content.
    pub path_problem: bool,
}

/// A skill directory and its real path (symlinks resolved once per skill, not once per file
/// the manifest names).
pub(crate) struct SkillDir<'a> {
    path: &'a Path,
    real: Result<PathBuf, String>,
}

impl<'a> SkillDir<'a> {
    pub(crate) fn new(path: &'a Path) -> SkillDir<'a> {
        let real = path
            .canonicalize()
            .map_err(|e| format!("cannot resolve the skill directory: {e}"));
        SkillDir { path, real }
    }

    /// The directory as given.
    pub(crate) fn path(&self) -> &'a Path {
        self.path
    }

    /// Resolves `relative` inside the directory: relative, no `..`, and — after following
    /// symlinks — still inside it.
    pub(crate) fn resolve(&self, relative: &str) -> Result<PathBuf, String> {
        let path = Path::new(relative);
        if relative.trim().is_empty() {
            return Err("asset path is empty".to_owned());
        }
        if path.is_absolute() || relative.starts_with('/') || relative.starts_with('\\') {
            return Err(format!(
                "asset path {relative:?} is absolute; it must be relative to the skill directory"
            ));
        }
        for component in path.components() {
            match component {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => {
                    return Err(format!(
                        "asset path {relative:?} contains `..`; it must stay inside the skill directory"
                    ));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!(
                        "asset path {relative:?} is absolute; it must be relative to the skill directory"
                    ));
                }
            }
        }
        let joined = self.path.join(path);
        let real_dir = self.real.as_ref().map_err(Clone::clone)?;
        let real = joined
            .canonicalize()
            .map_err(|e| format!("asset {relative:?} cannot be read: {e}"))?;
        if !real.starts_with(real_dir) {
            return Err(format!(
                "asset {relative:?} resolves outside the skill directory (symlink to {})",
                real.display()
            ));
        }
        if !real.is_file() {
            return Err(format!("asset {relative:?} is not a regular file"));
        }
        Ok(joined)
    }

    /// Reads and parses a JSON asset named by the manifest.
    pub(crate) fn read_json(&self, relative: &str) -> Result<Value, AssetError> {
        let path = self.resolve(relative).map_err(|reason| AssetError {
            file: self.path.join(relative),
            reason,
            line: None,
            path_problem: true,
        })?;
        let text = read_capped(&path, MAX_ASSET_BYTES).map_err(|reason| AssetError {
            file: path.clone(),
            reason,
            line: None,
            path_problem: false,
        })?;
        serde_json::from_str(&text).map_err(|e| AssetError {
            file: path.clone(),
            reason: format!("invalid JSON: {e}"),
            line: Some((e.line(), e.column())),
            path_problem: false,
        })
    }
}

/// Reads a UTF-8 file of at most `cap` bytes.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<String, String> {
    let bytes = read_capped_bytes(path, cap)?;
    String::from_utf8(bytes).map_err(|e| format!("file is not UTF-8: {e}"))
}

/// [`read_capped`] for any content: the bytes, at most `cap` of them.
pub(crate) fn read_capped_bytes(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    // Read one byte past the cap so an oversized file is detected without reading it all.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!("file is larger than the {cap}-byte limit"));
    }
    Ok(bytes)
}
