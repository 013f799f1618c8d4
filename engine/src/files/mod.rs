//! What a skill's run may touch besides the model: the files that ship with the skill, a
//! private workspace per call, and — only when the host allows it — the skill's bundled
//! scripts, run in the sandbox.
//!
//! - [`FileSupport`] / [`CallFiles`] (`session`): which calls get which tools, the "Files"
//!   section of the system prompt, opening and finishing a call's files.
//! - `skill_files`: `list_skill_files`, `read_skill_file` (read-only, confined to the skill).
//! - [`SkillFolder`] (`folder`): a published skill's files as a host serves them to callers
//!   (MCP resources), confined as `read_skill_file` is.
//! - [`Workspace`] (`workspace`): the per-call directory and the call's input files
//!   ([`INPUT_FILES_KEY`]).
//! - `workspace_tools`: `read_file`, `write_file`, `list_files` (confined to the workspace).
//! - `scripts`: `run_skill_script` in `skillet-sandbox`.
//! - `artifacts`: produced files → `artifact` events and a listing `log`.
//! - `confine`: path confinement (every open non-blocking, type checked on the descriptor) and
//!   text slices; `read_budget`: the per-call read cap; `blocking`: the bound on the file
//!   tools' blocking-pool work, per process and per call; `error`: why a file was refused.
//! - [`FilesConfig`] (`settings`): `[skills.workspace]` and `[skills.scripts]`.
//!
//! `docs/SKILL_FORMAT.md` ("Files, workspace and scripts") is the author-facing version and
//! `docs/CONFIG.md` the host's. Not here: loading the listing of a skill's files
//! (`skill::SkillResources`), dispatching tool calls (`run`).

mod artifacts;
mod blocking;
mod confine;
mod error;
mod folder;
mod read_budget;
mod scripts;
mod session;
mod settings;
mod skill_files;
mod workspace;
mod workspace_tools;

pub use confine::MAX_PATH_CHARS;
pub use error::FileError;
pub use folder::{FolderError, FolderListing, SKILL_MD, ServedFolder, SkillFolder};
pub use scripts::SCRIPT_PATH;
pub use session::{CallFiles, FileSupport};
pub use settings::{FilesConfig, ScriptsConfig, SkillEnvironment, WorkspaceConfig};
pub use workspace::{
    INPUT_FILES_KEY, InputFile, InputFilesError, Workspace, WorkspaceFile, input_file_value,
};
