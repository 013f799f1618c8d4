//! Files between a host and the engine: a published skill's folder as a host serves it
//! ([`ServedFolder`]), the files a call carries in ([`INPUT_FILES_KEY`], [`InputFileDefaults`])
//! and the media type a file is served with ([`mime_for`]).
//!
//! Not here: how a folder is confined and listed (the engine's `files::folder`, which
//! implements [`ServedFolder`]), a run's workspace and the model's file tools (the engine's
//! `files`), the protocol shapes a door serves files in (`skillet-host`).

use std::path::Path;

/// The name of a skill's manifest file, the first entry of every listing.
pub const SKILL_MD: &str = "SKILL.md";

/// The argument key that carries input files; it is taken out of the arguments before they are
/// validated and shown to the model.
pub const INPUT_FILES_KEY: &str = "_files";

/// One file beside `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Path relative to the skill folder, `/`-separated.
    pub path: String,
    /// Size in bytes when the skill was loaded.
    pub size: u64,
}

/// A published skill's folder as a host serves it to callers that run skills themselves (MCP
/// resources, the skills extension, the console): its `SKILL.md` and the files beside it,
/// listed and read by path under the rules the model's own file tools follow. Every method
/// blocks on the file system: a host calls them off its async threads.
pub trait ServedFolder: Send + Sync + std::fmt::Debug {
    /// The folder's directory.
    fn dir(&self) -> &Path;

    /// The files served, `SKILL.md` first, at most `max_files` of them (`SKILL.md` included).
    fn list(&self, max_files: usize) -> FolderListing;

    /// The bytes of the file at `path` (relative, `/`-separated), at most `max_bytes` of them:
    /// a larger file is refused, not cut (a cut file would not match its digest).
    fn read(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, FolderError>;
}

/// The files of a folder: `SKILL.md` first, then the others by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderListing {
    /// The files, each with its size now.
    pub files: Vec<SkillFile>,
    /// Whether the listing stopped at its cap or at the depth limit (eight levels).
    pub cut: bool,
}

/// Why a read of a folder's file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FolderError {
    /// The path is not one a caller may name: absolute, `..`, a NUL byte, under `evals/`,
    /// hidden, resolving outside the folder, not a plain file.
    #[error("{0}")]
    Refused(String),
    /// Nothing is served at the path.
    #[error("{0:?} is not a file of the skill")]
    NotFound(String),
    /// The file is larger than the cap of the read.
    #[error("{path:?} is {size} bytes, more than the {max} bytes served")]
    TooLarge {
        /// The path asked for.
        path: String,
        /// Its size.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// The file could not be read.
    #[error("{0}")]
    Io(String),
}

/// How many input files one call may carry unless the host says otherwise
/// (`[skills.workspace]`): the engine's defaults, and what a door tells a page before it sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputFileDefaults {
    /// Most files (`max_input_files`).
    pub max_files: usize,
    /// Largest file, decoded (`max_input_file_bytes`).
    pub max_file_bytes: usize,
    /// Most bytes of every file together, decoded (`max_input_bytes`).
    pub max_total_bytes: usize,
}

/// The defaults of [`InputFileDefaults`].
pub const DEFAULT_INPUT_FILES: InputFileDefaults = InputFileDefaults {
    max_files: 32,
    max_file_bytes: 4 * 1024 * 1024,
    max_total_bytes: 8 * 1024 * 1024,
};

/// The MIME type for a file name, from its extension.
pub fn mime_for(path: &str, is_text: bool) -> &'static str {
    let extension = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match extension.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "py" => "text/x-python",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        _ if is_text => "text/plain",
        _ => "application/octet-stream",
    }
}
