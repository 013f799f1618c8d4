//! Reading the files a manifest names, under the trust model of seed 003: only the named files,
//! only inside the skill directory, only up to a size cap, and never executed or followed
//! further (no includes, no `$ref` fetching — a schema's references are checked in `schema`).

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// Largest SKILL.md accepted, in bytes.
pub(crate) const MAX_SKILL_MD_BYTES: u64 = 1024 * 1024;
/// Largest asset (schema, provider config) accepted, in bytes.
pub(crate) const MAX_ASSET_BYTES: u64 = 256 * 1024;

/// What is wrong with a file the manifest names, or with its path; the text is the reason a
/// `ManifestError` shows.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum AssetProblem {
    /// The skill directory itself cannot be resolved.
    #[error("cannot resolve the skill directory: {0}")]
    DirUnresolvable(String),
    /// A blank path.
    #[error("asset path is empty")]
    EmptyPath,
    /// An absolute path.
    #[error("asset path {0:?} is absolute; it must be relative to the skill directory")]
    Absolute(String),
    /// A path with `..`.
    #[error("asset path {0:?} contains `..`; it must stay inside the skill directory")]
    ParentDir(String),
    /// The path does not resolve (missing, unreadable).
    #[error("asset {path:?} cannot be read: {why}")]
    Unresolvable {
        /// As named.
        path: String,
        /// The system's reason.
        why: String,
    },
    /// A symlink out of the directory.
    #[error("asset {path:?} resolves outside the skill directory (symlink to {})", real.display())]
    Outside {
        /// As named.
        path: String,
        /// Where it leads.
        real: PathBuf,
    },
    /// Not a regular file.
    #[error("asset {0:?} is not a regular file")]
    NotRegular(String),
    /// The file cannot be opened or read.
    #[error("cannot read: {0}")]
    CannotRead(String),
    /// The file is over its cap.
    #[error("file is larger than the {0}-byte limit")]
    TooLarge(u64),
    /// The file is not UTF-8.
    #[error("file is not UTF-8: {0}")]
    NotUtf8(std::string::FromUtf8Error),
    /// The file is not JSON.
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
}

/// Why an asset could not be used; the caller adds file and location.
#[derive(Debug)]
pub(crate) struct AssetError {
    pub file: PathBuf,
    pub reason: AssetProblem,
    pub line: Option<(usize, usize)>,
    /// The path itself is the problem (outside, absolute, missing), not the file's content.
    pub path_problem: bool,
}

/// A skill directory and its real path (symlinks resolved once per skill, not once per file
/// the manifest names).
pub(crate) struct SkillDir<'a> {
    path: &'a Path,
    real: Result<PathBuf, AssetProblem>,
}

impl<'a> SkillDir<'a> {
    pub(crate) fn new(path: &'a Path) -> SkillDir<'a> {
        let real = path
            .canonicalize()
            .map_err(|e| AssetProblem::DirUnresolvable(e.to_string()));
        SkillDir { path, real }
    }

    /// The directory as given.
    pub(crate) fn path(&self) -> &'a Path {
        self.path
    }

    /// Resolves `relative` inside the directory: relative, no `..`, and — after following
    /// symlinks — still inside it.
    pub(crate) fn resolve(&self, relative: &str) -> Result<PathBuf, AssetProblem> {
        let path = Path::new(relative);
        if relative.trim().is_empty() {
            return Err(AssetProblem::EmptyPath);
        }
        if path.is_absolute() || relative.starts_with('/') || relative.starts_with('\\') {
            return Err(AssetProblem::Absolute(relative.to_owned()));
        }
        for component in path.components() {
            match component {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => return Err(AssetProblem::ParentDir(relative.to_owned())),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(AssetProblem::Absolute(relative.to_owned()));
                }
            }
        }
        let joined = self.path.join(path);
        let real_dir = self.real.as_ref().map_err(Clone::clone)?;
        let real = joined
            .canonicalize()
            .map_err(|e| AssetProblem::Unresolvable {
                path: relative.to_owned(),
                why: e.to_string(),
            })?;
        if !real.starts_with(real_dir) {
            return Err(AssetProblem::Outside {
                path: relative.to_owned(),
                real,
            });
        }
        if !real.is_file() {
            return Err(AssetProblem::NotRegular(relative.to_owned()));
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
            reason: AssetProblem::InvalidJson(e.to_string()),
            line: Some((e.line(), e.column())),
            path_problem: false,
        })
    }
}

/// Reads a UTF-8 file of at most `cap` bytes.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<String, AssetProblem> {
    let bytes = read_capped_bytes(path, cap)?;
    String::from_utf8(bytes).map_err(AssetProblem::NotUtf8)
}

/// [`read_capped`] for any content: the bytes, at most `cap` of them.
pub(crate) fn read_capped_bytes(path: &Path, cap: u64) -> Result<Vec<u8>, AssetProblem> {
    let cannot_read = |e: std::io::Error| AssetProblem::CannotRead(e.to_string());
    let file = std::fs::File::open(path).map_err(cannot_read)?;
    let mut bytes = Vec::new();
    // Read one byte past the cap so an oversized file is detected without reading it all.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > cap {
        return Err(AssetProblem::TooLarge(cap));
    }
    Ok(bytes)
}
