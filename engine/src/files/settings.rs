//! The host's `[skills.workspace]` and `[skills.scripts]` settings: what a skill's run may touch
//! and whether its bundled scripts may run. Plain data, read from `skillet.toml`; every key has a
//! default, unknown keys are errors.
//!
//! Not here: using them (`session`, `scripts`), or reading the file (the `skillet` crate's
//! `config`).

use skillet_core::folder::DEFAULT_INPUT_FILES;
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use skillet_sandbox::SandboxPolicy;

/// The `[skills]` table of `skillet.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilesConfig {
    /// The per-call workspace and file-tool limits.
    pub workspace: WorkspaceConfig,
    /// Bundled scripts (off by default).
    pub scripts: ScriptsConfig,
    /// The `uv` program that builds skills' Python environments (default: `uv` on `PATH`).
    pub uv: Option<PathBuf>,
    /// Where the environments live (default: `$XDG_CACHE_HOME/skillet/envs`; see
    /// `crate::environments`).
    pub environments_dir: Option<PathBuf>,
    /// The package index uv installs from (default: uv's, PyPI); the only host a build reaches.
    /// A secret when it carries credentials (never written where a script can read it).
    pub package_index: Option<crate::environments::PackageIndex>,
    /// Whether Python builds may build source distributions (`"wheels-only"` or
    /// `"allow-sdist"`; unset: wheels only for what a skill folder declares).
    pub builds: Option<crate::environments::Builds>,
    /// `[skills.environments.NAME]`: requirements the host gives a skill (they replace what its
    /// folder declares).
    pub environments: BTreeMap<String, SkillEnvironment>,
    /// Whether `skillet serve` watches the skills directories and reloads a skill when its
    /// folder changes (`serve --watch` turns it on too). Read by the `skillet` binary's
    /// watcher; the engine itself never watches.
    pub watch: bool,
}

/// `[skills.environments.NAME]`: one skill's environment, as the host declares it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillEnvironment {
    /// Python requirement specifiers (`["pypdf>=5", "pdfplumber"]`).
    pub python: Vec<String>,
}

impl FilesConfig {
    /// The settings `crate::environments` reads.
    pub fn environment_options(&self) -> crate::environments::EnvironmentOptions {
        crate::environments::EnvironmentOptions {
            uv: self.uv.clone(),
            dir: self.environments_dir.clone(),
            package_index: self.package_index.clone(),
            builds: self.builds,
            skills: self
                .environments
                .iter()
                .map(|(name, env)| (name.clone(), env.python.clone()))
                .collect(),
        }
    }
}

/// `[skills.workspace]`: the directory each call gets, and the caps of the file tools.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceConfig {
    /// Where workspaces are created (default: the system temp directory).
    pub root: Option<PathBuf>,
    /// Keep each workspace after its call (its path is in a `log` event); default: removed.
    pub keep: bool,
    /// Most bytes one `read_file`/`read_skill_file` returns.
    pub max_read_bytes: usize,
    /// Most bytes all reads of one call return together.
    pub max_read_bytes_per_call: u64,
    /// Largest file `write_file` writes, in bytes.
    pub max_write_bytes: usize,
    /// Most files a workspace may hold (writes beyond it are refused).
    pub max_files: usize,
    /// Most input files a call may pass.
    pub max_input_files: usize,
    /// Largest input file (decoded), in bytes.
    pub max_input_file_bytes: usize,
    /// Most bytes all input files of a call may have together (decoded).
    pub max_input_bytes: usize,
    /// Produced files up to this size are streamed as `artifact` chunks; larger ones are only
    /// listed.
    pub artifact_max_bytes: u64,
    /// Size of one `artifact` chunk, in bytes.
    pub artifact_chunk_bytes: usize,
}

impl Default for WorkspaceConfig {
    fn default() -> Self {
        WorkspaceConfig {
            root: None,
            keep: false,
            max_read_bytes: 64 * 1024,
            max_read_bytes_per_call: 4 * 1024 * 1024,
            max_write_bytes: 4 * 1024 * 1024,
            max_files: 256,
            max_input_files: DEFAULT_INPUT_FILES.max_files,
            max_input_file_bytes: DEFAULT_INPUT_FILES.max_file_bytes,
            max_input_bytes: DEFAULT_INPUT_FILES.max_total_bytes,
            artifact_max_bytes: 1024 * 1024,
            artifact_chunk_bytes: 16 * 1024,
        }
    }
}

/// `[skills.scripts]`: running the files under a skill's `scripts/` in the sandbox.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptsConfig {
    /// Offer `run_skill_script` at all (default `false`: a skill folder is data, not trusted
    /// code).
    pub enabled: bool,
    /// Interpreter per file extension (without the dot); a bare name is looked up on `PATH`
    /// (the first match the sandbox can run), shims and symlinks followed to the real program
    /// at start-up (`crate::environments::Interpreters`). Scripts with other extensions are
    /// refused.
    pub interpreters: BTreeMap<String, PathBuf>,
    /// System programs scripts may run besides their interpreter (`soffice`, `pdftoppm`): a
    /// bare name (looked up on the engine's `PATH`) or a path, resolved at start-up
    /// (`crate::environments::SystemTools`). A skill whose `metadata.a2e-system-tools` names
    /// one not offered here is `Blocked`.
    pub tools: Vec<PathBuf>,
    /// Most bytes of stdout and of stderr handed back to the model (each).
    pub max_output_bytes: usize,
    /// Most bytes a script may send on its stdin.
    pub max_stdin_bytes: usize,
    /// Most arguments a script call may pass.
    pub max_args: usize,
    /// The sandbox every script runs in (limits, network, environment); see `skillet-sandbox`.
    /// The workspace is its working directory; the skill folder is added read-only.
    pub sandbox: SandboxPolicy,
    /// Whether each `run_skill_script` call waits for a person's approval
    /// (`approval = "always"`; see `crate::run::approval`).
    pub approval: crate::run::ToolApproval,
}

impl Default for ScriptsConfig {
    fn default() -> Self {
        let interpreters = [
            ("py", "python3"),
            ("sh", "sh"),
            ("bash", "bash"),
            ("js", "node"),
            ("mjs", "node"),
            ("cjs", "node"),
            ("rb", "ruby"),
            ("pl", "perl"),
        ]
        .into_iter()
        .map(|(ext, program)| (ext.to_owned(), PathBuf::from(program)))
        .collect();
        ScriptsConfig {
            enabled: false,
            interpreters,
            tools: Vec::new(),
            max_output_bytes: 32 * 1024,
            max_stdin_bytes: 1024 * 1024,
            max_args: 64,
            sandbox: SandboxPolicy::default(),
            approval: crate::run::ToolApproval::Never,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_off_by_default_and_partial_tables_keep_defaults() {
        let config: FilesConfig = toml::from_str("").unwrap();
        assert!(!config.scripts.enabled);
        let config: FilesConfig = toml::from_str(
            "[scripts]\nenabled = true\ninterpreters = { py = \"/usr/bin/python3\" }\n\
             [scripts.sandbox]\ntimeout_ms = 500\n[workspace]\nkeep = true\n",
        )
        .unwrap();
        assert!(config.scripts.enabled && config.workspace.keep);
        assert_eq!(config.scripts.sandbox.timeout_ms, 500);
        assert_eq!(config.scripts.interpreters.len(), 1);
        assert_eq!(
            config.workspace.max_files,
            WorkspaceConfig::default().max_files
        );
        assert!(toml::from_str::<FilesConfig>("[scripts]\nenable = true").is_err());
        let config: FilesConfig = toml::from_str(
            "uv = \"/opt/uv\"\nenvironments_dir = \"/var/cache/envs\"\n\
             [environments.pdf]\npython = [\"pypdf>=5\", \"pdfplumber\"]\n",
        )
        .unwrap();
        let options = config.environment_options();
        assert_eq!(options.skills["pdf"], ["pypdf>=5", "pdfplumber"]);
        assert_eq!(options.uv.as_deref(), Some(std::path::Path::new("/opt/uv")));
        assert!(toml::from_str::<FilesConfig>("[environments.pdf]\npythn = []").is_err());
    }
}
