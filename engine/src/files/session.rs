//! [`FileSupport`] (the host's settings plus the sandbox scripts run in, shared by every call)
//! and [`CallFiles`] (one call's workspace and file tools): what the run loop asks for a call.
//!
//! # Which calls get what
//! A call gets file tools and a workspace when its skill is a plain Agent Skill with files
//! beside `SKILL.md`, when its `allowed-tools` names a file tool (Read, Write, Edit, Glob, Grep,
//! Bash), or when the call passes input files. Then:
//! - `list_skill_files` / `read_skill_file` when the folder has files;
//! - `read_file` / `write_file` / `list_files` on the call's workspace;
//! - `run_skill_script` when the host enabled scripts and the folder has a `scripts/` file.
//!
//! The system prompt gets a "Files" section naming the skill's files (path and size), the input
//! files and the tools. After the run, produced files are reported (`artifacts`) and the
//! workspace removed (unless kept). Native skills get none of this.

use crate::protocol::LogLevel;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Map, Value};
use skillet_sandbox::{ProcessBackend, SandboxBackend};

use super::artifacts;
use super::blocking::FileOps;
use super::error::FileError;
use super::read_budget::ReadBudget;
use super::scripts::{RunSkillScript, ScriptRuntime};
use super::settings::FilesConfig;
use super::skill_files::{ListSkillFiles, ReadSkillFile};
use super::workspace::{InputFile, InputFilesError, Workspace, take_input_files};
use super::workspace_tools::{ListFiles, ReadFile, WriteFile};
use crate::environments::{Environments, Interpreters, SandboxUser, SkillFolder, SystemTools};
use crate::events::EventEmitter;
use crate::skill::CompiledSkill;
use crate::tools::Tool;

/// What the host lets skill runs touch. Cheap to clone.
#[derive(Clone)]
pub struct FileSupport {
    config: Arc<FilesConfig>,
    scripts: Arc<super::settings::ScriptsConfig>,
    backend: Option<Arc<dyn SandboxBackend>>,
    interpreters: Arc<Interpreters>,
    environments: Arc<Environments>,
    system_tools: Arc<SystemTools>,
}

impl std::fmt::Debug for FileSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSupport")
            .field("scripts_enabled", &self.scripts_enabled())
            .field("keep_workspaces", &self.config.workspace.keep)
            .finish_non_exhaustive()
    }
}

impl Default for FileSupport {
    fn default() -> Self {
        FileSupport::new(FilesConfig::default())
    }
}

impl FileSupport {
    /// Support for `config`; scripts (when enabled) run on the Linux process sandbox.
    pub fn new(config: FilesConfig) -> Self {
        let backend = config
            .scripts
            .enabled
            .then(|| Arc::new(ProcessBackend::new()) as Arc<dyn SandboxBackend>);
        FileSupport::with_backend(config, backend)
    }

    /// Support for `config` with scripts on `backend` (`None`: scripts are never offered).
    pub(crate) fn with_backend(
        config: FilesConfig,
        backend: Option<Arc<dyn SandboxBackend>>,
    ) -> Self {
        let backend = backend.filter(|_| config.scripts.enabled);
        let user = backend
            .as_ref()
            .and_then(|b| sandbox_user(b.platform_report(), &config));
        // Resolving runs each interpreter once (outside the sandbox): only when scripts can run.
        let (interpreters, system_tools) = match &backend {
            Some(_) => (
                Interpreters::resolve(&config.scripts.interpreters, user),
                SystemTools::resolve(&config.scripts.tools, user),
            ),
            None => (Interpreters::default(), SystemTools::default()),
        };
        let environments =
            Environments::new(config.environment_options(), interpreters.get("py"), user)
                .with_node(interpreters.get("js"));
        FileSupport {
            scripts: Arc::new(config.scripts.clone()),
            config: Arc::new(config),
            backend,
            interpreters: Arc::new(interpreters),
            environments: Arc::new(environments),
            system_tools: Arc::new(system_tools),
        }
    }

    /// The interpreters scripts run with, as resolved at start-up (empty when scripts are off).
    pub fn interpreters(&self) -> &Interpreters {
        &self.interpreters
    }

    /// The system tools scripts are offered, as resolved at start-up (none when scripts are
    /// off).
    pub fn system_tools(&self) -> &SystemTools {
        &self.system_tools
    }

    /// The skills' Python environments (`crate::environments`).
    pub fn environments(&self) -> &Arc<Environments> {
        &self.environments
    }

    /// The `[skills.*]` file settings this call's file tools were built with.
    pub fn config(&self) -> &FilesConfig {
        &self.config
    }

    /// Whether `run_skill_script` can be offered at all.
    pub fn scripts_enabled(&self) -> bool {
        self.backend.is_some()
    }

    /// Takes the input files out of a call's arguments (see `workspace`).
    pub(crate) fn take_inputs(
        &self,
        arguments: &mut Map<String, Value>,
    ) -> Result<Vec<InputFile>, InputFilesError> {
        take_input_files(arguments, &self.config.workspace)
    }

    fn applies(skill: &CompiledSkill, inputs: &[InputFile]) -> bool {
        skill.dir.is_some() && (skill.resources.uses_files() || !inputs.is_empty())
    }

    fn offers_scripts(&self, skill: &CompiledSkill) -> bool {
        let resources = &skill.resources;
        self.scripts_enabled()
            && resources.has_scripts()
            && (resources.plain_agent_skill || resources.allowed.scripts)
    }

    /// The "Files" section of the system prompt, when the call gets file tools.
    pub(crate) fn prompt_section(
        &self,
        skill: &CompiledSkill,
        inputs: &[InputFile],
    ) -> Option<String> {
        if !Self::applies(skill, inputs) {
            return None;
        }
        let mut text = String::from("## Files\n\n");
        let files = &skill.resources.files;
        if !files.is_empty() {
            text.push_str(
                "These files ship with this skill. Read one with `read_skill_file` when the \
                 instructions point to it (list them with `list_skill_files`):\n",
            );
            for file in files {
                let _ = writeln!(text, "- {} ({} bytes)", file.path, file.size);
            }
            if skill.resources.listing_cut {
                text.push_str("- (more files; list_skill_files shows the first ones)\n");
            }
            text.push('\n');
        }
        text.push_str(
            "You work in a private workspace folder: `read_file`, `write_file` and `list_files` \
             take paths relative to it. Files you write there are returned to the caller.\n",
        );
        if !inputs.is_empty() {
            let names: Vec<String> = inputs
                .iter()
                .map(|f| format!("{} ({} bytes)", f.name, f.bytes.len()))
                .collect();
            let _ = writeln!(text, "Input files in the workspace: {}.", names.join(", "));
        }
        if self.offers_scripts(skill) {
            text.push_str(
                "Run a script of this skill with `run_skill_script` (a path under scripts/, \
                 args, stdin): it runs in a sandbox with the workspace as its working \
                 directory, and files it writes there are returned too.\n",
            );
        }
        Some(text)
    }

    /// Opens the call's files: creates the workspace, writes the input files, makes the tools.
    /// `Ok(None)` when the call gets no file tools.
    pub fn open(
        &self,
        skill: &CompiledSkill,
        inputs: &[InputFile],
    ) -> Result<Option<CallFiles>, FileError> {
        if !Self::applies(skill, inputs) {
            return Ok(None);
        }
        let Some(skill_dir) = skill.dir.clone() else {
            return Ok(None);
        };
        let settings = &self.config.workspace;
        let mut workspace =
            Workspace::create(settings, skill.name()).map_err(FileError::WorkspaceNotCreated)?;
        workspace.write_inputs(inputs)?;
        let dir = workspace.path().to_owned();
        let budget = ReadBudget::new(settings.max_read_bytes_per_call);
        let ops = FileOps::default();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        if !skill.resources.files.is_empty() {
            tools.push(ListSkillFiles::new(
                skill.resources.files.clone(),
                skill.resources.listing_cut,
            ));
            tools.push(ReadSkillFile::new(
                skill_dir.clone(),
                settings.max_read_bytes,
                budget.clone(),
                ops.clone(),
            ));
        }
        tools.push(ReadFile::new(
            dir.clone(),
            settings.max_read_bytes,
            budget,
            ops.clone(),
        ));
        tools.push(WriteFile::new(
            dir.clone(),
            settings.max_write_bytes,
            settings.max_files,
            ops.clone(),
        ));
        tools.push(ListFiles::new(dir.clone(), settings.max_files, ops.clone()));
        if let (true, Some(backend)) = (self.offers_scripts(skill), &self.backend) {
            tools.push(RunSkillScript::new(
                skill_dir,
                SkillFolder::of(skill),
                dir,
                ScriptRuntime {
                    config: Arc::clone(&self.scripts),
                    backend: Arc::clone(backend),
                    interpreters: Arc::clone(&self.interpreters),
                    environments: Arc::clone(&self.environments),
                    system_tools: Arc::clone(&self.system_tools),
                },
            ));
        }
        Ok(Some(CallFiles {
            workspace,
            tools,
            ops,
            config: Arc::clone(&self.config),
        }))
    }
}

/// Who the sandbox runs scripts as, when that is another uid than the engine's (it runs as
/// root and can drop privileges).
fn sandbox_user(
    report: &skillet_sandbox::PlatformReport,
    config: &FilesConfig,
) -> Option<SandboxUser> {
    (report.running_as_root && report.uid_drop.is_available()).then(|| {
        let identity = config.scripts.sandbox.identity;
        SandboxUser {
            uid: identity.uid,
            gid: identity.gid,
        }
    })
}

/// One call's workspace and file tools.
pub struct CallFiles {
    workspace: Workspace,
    tools: Vec<Arc<dyn Tool>>,
    /// The file tools' blocking work (see `blocking`): counted so that the call's end says
    /// when some outlived it.
    ops: FileOps,
    config: Arc<FilesConfig>,
}

impl std::fmt::Debug for CallFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("CallFiles")
            .field("workspace", &self.workspace.path())
            .field("tools", &names)
            .finish()
    }
}

impl CallFiles {
    /// The tools to offer beside the skill's declared ones.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The call's workspace directory, where input files are written and produced files are
    /// collected as artifacts.
    pub fn workspace(&self) -> &std::path::Path {
        self.workspace.path()
    }

    /// Reports the produced files as artifacts, then removes the workspace (unless kept, which
    /// a `log` says with its path). Returns when the directory is gone.
    pub async fn finish(self, events: &EventEmitter) {
        let CallFiles {
            workspace,
            config,
            ops,
            tools: _,
        } = self;
        let outliving = ops.running();
        if outliving > 0 {
            tracing::warn!(
                outliving,
                workspace = %workspace.path().display(),
                "file operations of this call are still running as it ends"
            );
        }
        let emitter = events.clone();
        let reported = tokio::task::spawn_blocking(move || {
            artifacts::report(&workspace, &config.workspace, &emitter);
            if config.workspace.keep {
                emitter.log(
                    LogLevel::Info,
                    format!("workspace kept at {}", workspace.path().display()),
                );
            }
            workspace
        })
        .await;
        // On a panic the workspace was dropped inside the task, which removes it.
        if let Ok(workspace) = reported {
            workspace.close().await;
        }
    }
}
