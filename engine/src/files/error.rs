//! [`FileError`]: why a file tool or the engine's own file handling refused or failed — one
//! enum for the `files` module, whose variants name the path and what is wrong with it (a path
//! that would leave its folder, a file that is not a plain file, a write the disk refused, a
//! blocking operation that could not run or did not finish, a workspace at its limit).
//!
//! The text a model reads (what, where, what to do) is written here, in `Display`, and nowhere
//! else: the code paths carry the type, and a tool turns it into text where it answers the model
//! (the `From` for `ToolError` below). Not here: the checks themselves (`confine`, `blocking`, the tools).

use std::path::PathBuf;
use std::time::Duration;

use super::confine::MAX_PATH_CHARS;
use crate::tools::ToolError;

/// Why a file could not be had, read or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A model-supplied path is blank.
    #[error("the path is empty")]
    EmptyPath,
    /// A path over [`MAX_PATH_CHARS`].
    #[error("the path is longer than {MAX_PATH_CHARS} characters")]
    PathTooLong,
    /// A path with a NUL byte.
    #[error("the path contains a NUL byte")]
    NulInPath,
    /// An absolute path (or one starting at `~`).
    #[error("{0:?} is absolute; give a path relative to the folder")]
    Absolute(String),
    /// A path with a `..` component.
    #[error("{0:?} contains `..`; paths must stay inside the folder")]
    ParentDir(String),
    /// A path that normalizes to the folder itself.
    #[error("{0:?} names the folder itself, not a file")]
    NamesFolder(String),
    /// The folder everything must stay in cannot be resolved.
    #[error("the folder cannot be resolved: {0}")]
    FolderUnresolvable(std::io::Error),
    /// Nothing at the path.
    #[error("{0:?} does not exist")]
    Missing(String),
    /// The path, after symlinks, leaves the folder.
    #[error("{0:?} resolves outside the folder; refused")]
    Outside(String),
    /// The path names something other than a regular file (checked on the path).
    #[error("{0:?} is not a regular file")]
    NotRegular(String),
    /// The descriptor opened is a pipe, a socket, a device or a directory.
    #[error("{path:?} is not a regular file ({kind}); refused")]
    NotPlain {
        /// As given.
        path: String,
        /// `a named pipe`, `a socket`, ...
        kind: &'static str,
    },
    /// A file with several hard links (it may be a link to a file outside the folder).
    #[error("{path:?} has {links} hard links; hard-linked files are refused")]
    HardLinked {
        /// As given.
        path: String,
        /// How many.
        links: u64,
    },
    /// A symlink where a write was to go.
    #[error("{0:?} is a symlink; refused")]
    Symlink(String),
    /// A write's path whose every component is a directory: it names no file.
    #[error("{0:?} names no file")]
    NamesNoFile(String),
    /// A component below the folder that is not a real directory.
    #[error("{path:?}: {} is not a directory (symlinks are not followed)", component.display())]
    ParentNotDirectory {
        /// As given.
        path: String,
        /// The component, relative to the folder.
        component: PathBuf,
    },
    /// A missing directory could not be made.
    #[error("{path:?}: cannot create its directory: {source}")]
    CannotCreateDirectory {
        /// As given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The open itself failed.
    #[error("{path:?} cannot be opened: {source}")]
    CannotOpen {
        /// As given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Reading the descriptor's metadata or seeking failed.
    #[error("{path:?}: {source}")]
    Inspect {
        /// As given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Reading failed.
    #[error("{path:?} cannot be read: {source}")]
    CannotRead {
        /// As given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Writing failed.
    #[error("{path:?} cannot be written: {source}")]
    CannotWrite {
        /// As given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A read's offset beyond the file's end.
    #[error("offset {offset} is past the end of {path:?} ({size} bytes)")]
    PastTheEnd {
        /// As given.
        path: String,
        /// As asked.
        offset: u64,
        /// The file's size in bytes.
        size: u64,
    },
    /// A NUL byte in what was read.
    #[error("{0:?} is a binary file; only text files can be read")]
    Binary(String),
    /// Bytes that are not UTF-8.
    #[error("{0:?} is not UTF-8 text; only text files can be read")]
    NotUtf8(String),
    /// A path in `evals/`, which no run may read.
    #[error("{0:?} is in evals/, the skill's eval cases, which a run may not read")]
    InEngineDir(String),
    /// The workspace holds its most files already.
    #[error("the workspace already holds {0} files, its limit")]
    WorkspaceFull(usize),
    /// The call's workspace directory could not be made.
    #[error("cannot create the call's workspace: {0}")]
    WorkspaceNotCreated(std::io::Error),
    /// A call's input file could not be written into its workspace.
    #[error("input file: {0}")]
    InputFile(Box<FileError>),
    /// Every blocking-pool permit of the process is held.
    #[error(
        "the {what} could not start: the host's {max} file operations are all still running; \
         try again later"
    )]
    Busy {
        /// `read`, `write`, `listing`.
        what: &'static str,
        /// The process-wide bound.
        max: usize,
    },
    /// The blocking work panicked or was cancelled.
    #[error("the {0} was interrupted")]
    Interrupted(&'static str),
    /// The blocking work outlived its time and was left running.
    #[error("the {what} did not finish within {} s and was abandoned", after.as_secs())]
    Abandoned {
        /// `read`, `write`, `listing`.
        what: &'static str,
        /// Its time.
        after: Duration,
    },
}

/// Where the model reads it: a failed tool call, with the text above.
impl From<FileError> for ToolError {
    fn from(error: FileError) -> Self {
        ToolError::Failed(error.to_string())
    }
}
