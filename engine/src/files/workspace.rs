//! [`Workspace`]: the fresh directory one call works in — its input files written first, the
//! files the run produced found at the end, and the directory removed afterwards (unless the
//! host keeps it).
//!
//! Input files come in the call's arguments under the reserved key [`INPUT_FILES_KEY`]:
//! `[{"name": "data.csv", "text": "..."}, {"name": "logo.png", "base64": "..."}]`, within the
//! `[skills.workspace]` limits. Not here: the tools that read and write it (`workspace_tools`),
//! reporting produced files (`artifacts`).

use std::collections::BTreeMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::confine;
use super::error::FileError;
use super::settings::WorkspaceConfig;

pub use skillet_core::folder::INPUT_FILES_KEY;

/// Deepest directory level scanned for produced files.
const MAX_SCAN_DEPTH: usize = 8;

/// One input file of a call, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// Relative path in the workspace.
    pub name: String,
    /// Content.
    pub bytes: Vec<u8>,
}

/// One entry of [`INPUT_FILES_KEY`] for a file named `name`: `{name, text}` when `bytes` are
/// UTF-8, else `{name, base64}` — what a call's start decodes back to the same bytes.
pub fn input_file_value(name: &str, bytes: Vec<u8>) -> Value {
    match String::from_utf8(bytes) {
        Ok(text) => serde_json::json!({"name": name, "text": text}),
        Err(e) => serde_json::json!({
            "name": name,
            "base64": base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
        }),
    }
}

/// Why a call's input files ([`INPUT_FILES_KEY`]) are refused: their shape, a name, an
/// encoding or a limit; `index` is the file's place in the array.
#[derive(Debug, thiserror::Error)]
pub enum InputFilesError {
    /// Not an array.
    #[error("`{INPUT_FILES_KEY}` must be an array of {{name, text}} or {{name, base64}} objects")]
    NotAnArray,
    /// More files than `max_input_files`.
    #[error("`{INPUT_FILES_KEY}` has {count} files; at most {max} are accepted")]
    TooMany {
        /// How many were given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A file without a `name`.
    #[error("{INPUT_FILES_KEY}[{index}]: `name` (a relative path) is required")]
    NoName {
        /// Its place.
        index: usize,
    },
    /// A name that breaks a confinement rule.
    #[error("{INPUT_FILES_KEY}[{index}]: {error}")]
    BadName {
        /// Its place.
        index: usize,
        /// The rule.
        error: FileError,
    },
    /// `base64` that does not decode.
    #[error("{INPUT_FILES_KEY}[{index}]: `base64` is not valid base64 ({error})")]
    BadBase64 {
        /// Its place.
        index: usize,
        /// Why.
        error: base64::DecodeError,
    },
    /// Neither or both of `text` and `base64`.
    #[error("{INPUT_FILES_KEY}[{index}]: give exactly one of `text` or `base64` (a string)")]
    NotOneContent {
        /// Its place.
        index: usize,
    },
    /// A key other than `name`, `text`, `base64`.
    #[error("{INPUT_FILES_KEY}[{index}]: unknown key `{key}`")]
    UnknownKey {
        /// Its place.
        index: usize,
        /// The key.
        key: String,
    },
    /// A file over `max_input_file_bytes`.
    #[error("{INPUT_FILES_KEY}[{index}]: `{name}` has {bytes} bytes; the limit is {max}")]
    FileTooLarge {
        /// Its place.
        index: usize,
        /// Its name.
        name: String,
        /// Its size.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// All files together over `max_input_bytes`.
    #[error("`{INPUT_FILES_KEY}` holds more than {0} bytes in all")]
    TooManyBytes(usize),
    /// The same name twice.
    #[error("{INPUT_FILES_KEY}[{index}]: `{name}` is given twice")]
    Twice {
        /// The second's place.
        index: usize,
        /// The name.
        name: String,
    },
}

/// Takes [`INPUT_FILES_KEY`] out of `arguments` and decodes it. `Err` says what is wrong (shape,
/// name, encoding or a limit), for a rejection of the call.
pub(crate) fn take_input_files(
    arguments: &mut Map<String, Value>,
    config: &WorkspaceConfig,
) -> Result<Vec<InputFile>, InputFilesError> {
    let Some(value) = arguments.remove(INPUT_FILES_KEY) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = value else {
        return Err(InputFilesError::NotAnArray);
    };
    if items.len() > config.max_input_files {
        return Err(InputFilesError::TooMany {
            count: items.len(),
            max: config.max_input_files,
        });
    }
    let mut files: Vec<InputFile> = Vec::with_capacity(items.len());
    let mut total = 0usize;
    for (index, item) in items.iter().enumerate() {
        let name = item["name"]
            .as_str()
            .ok_or(InputFilesError::NoName { index })?;
        let normalized = confine::relative_path(name)
            .map_err(|error| InputFilesError::BadName { index, error })?;
        let name = normalized.to_string_lossy().into_owned();
        let bytes = match (&item["text"], &item["base64"]) {
            (Value::String(text), Value::Null) => text.clone().into_bytes(),
            (Value::Null, Value::String(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .map_err(|error| InputFilesError::BadBase64 { index, error })?,
            _ => return Err(InputFilesError::NotOneContent { index }),
        };
        if let Some(extra) = item.as_object().and_then(|o| {
            o.keys()
                .find(|k| !matches!(k.as_str(), "name" | "text" | "base64"))
        }) {
            let key = extra.clone();
            return Err(InputFilesError::UnknownKey { index, key });
        }
        if bytes.len() > config.max_input_file_bytes {
            return Err(InputFilesError::FileTooLarge {
                index,
                name,
                bytes: bytes.len(),
                max: config.max_input_file_bytes,
            });
        }
        total += bytes.len();
        if total > config.max_input_bytes {
            return Err(InputFilesError::TooManyBytes(config.max_input_bytes));
        }
        if files.iter().any(|f| f.name == name) {
            return Err(InputFilesError::Twice { index, name });
        }
        files.push(InputFile { name, bytes });
    }
    Ok(files)
}

/// A file found in a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceFile {
    /// Relative path, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    modified: Option<SystemTime>,
}

/// One call's working directory. Removed when closed or dropped, unless kept.
#[derive(Debug)]
pub struct Workspace {
    path: PathBuf,
    keep: bool,
    inputs: BTreeMap<String, (u64, Option<SystemTime>)>,
    removed: bool,
}

impl Workspace {
    /// Creates `skillet-ws-<skill>-<uuid>` (mode 0700) under the configured root.
    pub fn create(config: &WorkspaceConfig, skill: &str) -> std::io::Result<Workspace> {
        let root = config.root.clone().unwrap_or_else(std::env::temp_dir);
        let label: String = skill
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(40)
            .collect();
        let path = root.join(format!("skillet-ws-{label}-{}", uuid::Uuid::new_v4()));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Workspace {
            path,
            keep: config.keep,
            inputs: BTreeMap::new(),
            removed: false,
        })
    }

    /// The call's workspace directory: the root every workspace file tool's path is confined to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the call's input files (remembered, so they are not reported as produced unless
    /// the run changes them).
    pub(crate) fn write_inputs(&mut self, inputs: &[InputFile]) -> Result<(), FileError> {
        for input in inputs {
            confine::write_file(&self.path, &input.name, &input.bytes)
                .map_err(|e| FileError::InputFile(Box::new(e)))?;
        }
        for file in self.scan(usize::MAX).0 {
            self.inputs.insert(file.path, (file.size, file.modified));
        }
        Ok(())
    }

    /// The regular files in the workspace (symlinks are not followed), sorted, at most `max`;
    /// and whether there were more.
    pub fn scan(&self, max: usize) -> (Vec<WorkspaceFile>, bool) {
        scan_path(&self.path, max)
    }

    /// The files the run created or changed.
    pub fn produced(&self, max: usize) -> (Vec<WorkspaceFile>, bool) {
        let (files, more) = self.scan(max);
        let produced = files
            .into_iter()
            .filter(|f| self.inputs.get(&f.path) != Some(&(f.size, f.modified)))
            .collect();
        (produced, more)
    }

    /// Removes the directory (unless kept), off the runtime threads, and waits for it.
    pub async fn close(mut self) {
        if self.keep {
            self.removed = true;
            return;
        }
        let path = self.path.clone();
        self.removed = true;
        let removal = tokio::task::spawn_blocking(move || remove(&path)).await;
        if removal.is_err() {
            tracing::warn!(path = %self.path.display(), "workspace removal was interrupted");
        }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        // A call that ended without `close` (cancelled, panicked): remove it anyway.
        if !self.removed && !self.keep {
            remove(&self.path);
        }
    }
}

fn remove(path: &Path) {
    if let Err(e) = std::fs::remove_dir_all(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), error = %e, "workspace not removed");
    }
}

/// The regular files under `dir` (symlinks not followed), sorted, at most `max`; and whether
/// there were more.
pub(crate) fn scan_path(dir: &Path, max: usize) -> (Vec<WorkspaceFile>, bool) {
    let mut files = Vec::new();
    let mut more = false;
    scan_dir(dir, "", 0, max, &mut files, &mut more);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    (files, more)
}

fn scan_dir(
    dir: &Path,
    prefix: &str,
    depth: usize,
    max: usize,
    files: &mut Vec<WorkspaceFile>,
    more: &mut bool,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = format!("{prefix}{name}");
        if kind.is_dir() && depth + 1 < MAX_SCAN_DEPTH {
            scan_dir(
                &entry.path(),
                &format!("{path}/"),
                depth + 1,
                max,
                files,
                more,
            );
        } else if kind.is_file() {
            if files.len() >= max {
                *more = true;
                return;
            }
            let meta = entry.metadata().ok();
            files.push(WorkspaceFile {
                path,
                size: meta.as_ref().map_or(0, std::fs::Metadata::len),
                modified: meta.and_then(|m| m.modified().ok()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(files: Value) -> Map<String, Value> {
        json!({"q": 1, "_files": files})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn input_files_are_taken_out_of_the_arguments_and_decoded() {
        let mut arguments = args(json!([
            {"name": "a.txt", "text": "hi"},
            {"name": "./dir/b.bin", "base64": "AAEC"}
        ]));
        let files = take_input_files(&mut arguments, &WorkspaceConfig::default()).unwrap();
        assert_eq!(arguments.keys().collect::<Vec<_>>(), ["q"]);
        assert_eq!(files[0].bytes, b"hi");
        assert_eq!(
            (files[1].name.as_str(), files[1].bytes.as_slice()),
            ("dir/b.bin", &[0u8, 1, 2][..])
        );
    }

    #[test]
    fn bad_input_files_are_refused_with_the_reason() {
        let config = WorkspaceConfig {
            max_input_file_bytes: 4,
            ..WorkspaceConfig::default()
        };
        for (files, why) in [
            (json!("x"), "must be an array"),
            (json!([{"text": "x"}]), "`name`"),
            (json!([{"name": "../x", "text": "x"}]), "`..`"),
            (json!([{"name": "/etc/x", "text": "x"}]), "absolute"),
            (json!([{"name": "x", "base64": "***"}]), "not valid base64"),
            (
                json!([{"name": "x", "text": "a", "base64": "AA=="}]),
                "exactly one",
            ),
            (json!([{"name": "x", "text": "12345"}]), "the limit is 4"),
            (
                json!([{"name": "x", "text": "1"}, {"name": "x", "text": "2"}]),
                "twice",
            ),
            (
                json!([{"name": "x", "text": "1", "mode": 7}]),
                "unknown key",
            ),
        ] {
            let err = take_input_files(&mut args(files.clone()), &config)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{files}: {err}");
        }
    }

    #[tokio::test]
    async fn produced_files_exclude_unchanged_inputs_and_close_removes_the_directory() {
        let root = tempfile::tempdir().unwrap();
        let config = WorkspaceConfig {
            root: Some(root.path().to_owned()),
            ..WorkspaceConfig::default()
        };
        let mut ws = Workspace::create(&config, "demo").unwrap();
        let input = InputFile {
            name: "in.txt".into(),
            bytes: b"x".to_vec(),
        };
        ws.write_inputs(&[input]).unwrap();
        std::fs::create_dir(ws.path().join("out")).unwrap();
        std::fs::write(ws.path().join("out/report.csv"), "a,b").unwrap();
        let (produced, more) = ws.produced(10);
        assert_eq!(
            produced.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            ["out/report.csv"]
        );
        assert!(!more);
        let path = ws.path().to_owned();
        ws.close().await;
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }
}
