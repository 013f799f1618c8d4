//! [`CommandToolConfig`] and [`PluginConfig`]: how a host declares, in `skillet.toml`, the
//! programs Skillet may run in the sandbox — one-shot command tools and long-lived A2E plugins.
//!
//! Only the host's configuration declares programs; a SKILL.md never does (seed 003's trust
//! model: a skill names tools, the host decides what they are). Both types deserialize from a
//! flat table whose name is the table key (`[command_tools.NAME]`, `[plugins.NAME]`), check every
//! rule while parsing (a bad input schema or an empty program is a config error with the key
//! named), and carry a [`SandboxPolicy`] under `sandbox`. Building the running objects is in
//! `command` and `plugin`.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use skillet_sandbox::SandboxPolicy;

use crate::run::ToolApproval;
use crate::schema::{CompiledSchema, SchemaError};

/// Default largest line a plugin may write (an A2E message), in bytes.
pub(super) const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// Default limit on starting a plugin and answering its first `skill/discover/req`.
pub(super) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Default first wait before restarting a plugin that crashed.
pub(super) const DEFAULT_RESTART_BACKOFF_INITIAL: Duration = Duration::from_millis(200);
/// Default longest wait between restarts of a plugin that keeps crashing.
pub(super) const DEFAULT_RESTART_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Why a command tool's or a plugin's configuration breaks a rule; the text names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxedConfigError {
    /// `program` is empty.
    #[error("`program` is empty")]
    EmptyProgram,
    /// A command tool's `description` is blank.
    #[error("`description` is empty; the model needs to know what the tool does")]
    EmptyDescription,
    /// The input schema does not compile.
    #[error("`input_schema`: {0}")]
    InputSchema(SchemaError),
    /// The input schema does not describe an object.
    #[error("`input_schema` must have `type = \"object\"` (tool arguments are an object)")]
    InputSchemaNotObject,
    /// A plugin's `max_line_bytes` under 1024.
    #[error("`max_line_bytes` must be at least 1024")]
    MaxLineBytesTooSmall,
    /// A plugin's `restart_backoff_ms` is zero.
    #[error("`restart_backoff_ms` must be positive")]
    RestartBackoffZero,
    /// A plugin's `startup_timeout_ms` is zero.
    #[error("`startup_timeout_ms` must be positive")]
    StartupTimeoutZero,
    /// The table's `kind` is another kind's.
    #[error("kind is {found:?}, expected {expected:?}")]
    OtherKind {
        /// As written.
        found: String,
        /// `command` or `plugin`.
        expected: &'static str,
    },
}

/// A command tool: a program run once per call in the sandbox, its JSON arguments on stdin and
/// its JSON result on stdout.
///
/// ```toml
/// [command_tools.word_freq]
/// description = "Counts how often each word occurs in a text"
/// program = "/opt/skillet-tools/word-freq"
/// args = ["--json"]
/// env = ["PATH", "LANG"]
/// [command_tools.word_freq.input_schema]
/// type = "object"
/// required = ["text"]
/// properties = { text = { type = "string" } }
/// [command_tools.word_freq.sandbox]
/// timeout_ms = 5000
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawCommandToolConfig")]
pub struct CommandToolConfig {
    /// What the tool does, for the model.
    pub description: String,
    /// The program: an absolute path, a path relative to the engine's working directory, or a
    /// bare name looked up on the engine's `PATH`. Never run through a shell.
    pub program: PathBuf,
    /// Arguments, passed as-is.
    pub args: Vec<String>,
    /// A directory every call runs in (must exist; shared by concurrent calls). `None`: each
    /// call gets a fresh, empty scratch directory that is removed afterwards.
    pub workdir: Option<PathBuf>,
    /// JSON Schema (strict 2020-12 dialect) of the arguments object; `type` must be `"object"`.
    pub input_schema: Value,
    /// How the program is confined. A top-level `env` list replaces `sandbox.env.inherit`.
    pub sandbox: SandboxPolicy,
    /// Whether each call waits for a person's approval (`approval = "always"`; see
    /// `crate::run::approval`).
    pub approval: ToolApproval,
    /// Whether running it twice with the same arguments does what running it once does
    /// (`idempotent = true`; default false): a resumed run runs a call of it that was in flight
    /// when its process died again only then.
    pub idempotent: bool,
}

/// An out-of-process skill host ("plugin"): a long-lived program speaking A2E JSON lines on its
/// stdin/stdout (the seed's `SkillPlugin`, in any language). Its skills join the registry.
///
/// ```toml
/// [plugins.reviewers]
/// program = "/usr/bin/python3"
/// args = ["-m", "reviewers.a2e_plugin"]
/// env = ["PATH", "PYTHONPATH"]
/// skills = ["code_review"]          # optional: register only these
/// [plugins.reviewers.sandbox.limits]
/// address_space_bytes = 2147483648
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawPluginConfig")]
pub struct PluginConfig {
    /// The program (see [`CommandToolConfig::program`]).
    pub program: PathBuf,
    /// Arguments, passed as-is.
    pub args: Vec<String>,
    /// The plugin's directory (must exist). `None`: a fresh scratch directory per plugin
    /// process, removed when the process ends.
    pub workdir: Option<PathBuf>,
    /// When set, only these of the plugin's skills are registered.
    pub skills: Option<Vec<String>>,
    /// Limit on starting the plugin and answering its `skill/discover/req`.
    pub startup_timeout: Duration,
    /// First wait before restarting a crashed plugin; doubles per consecutive crash.
    pub restart_backoff_initial: Duration,
    /// Longest wait between restarts.
    pub restart_backoff_max: Duration,
    /// Largest line (one A2E message) the plugin may write; longer lines break the contract.
    pub max_line_bytes: usize,
    /// How the program is confined (`timeout_ms` does not apply: the plugin lives across
    /// calls, and each call has its own deadline). A top-level `env` list replaces
    /// `sandbox.env.inherit`.
    pub sandbox: SandboxPolicy,
}

impl CommandToolConfig {
    /// A config for `program` with an unconstrained object schema and the default policy.
    pub fn new(program: impl Into<PathBuf>, description: impl Into<String>) -> Self {
        CommandToolConfig {
            description: description.into(),
            program: program.into(),
            args: Vec::new(),
            workdir: None,
            input_schema: serde_json::json!({ "type": "object" }),
            sandbox: SandboxPolicy::default(),
            approval: ToolApproval::Never,
            idempotent: false,
        }
    }

    /// Checks the rules [`Deserialize`] enforces (for configs built in code).
    pub fn validate(&self) -> Result<(), SandboxedConfigError> {
        check_program(&self.program)?;
        if self.description.trim().is_empty() {
            return Err(SandboxedConfigError::EmptyDescription);
        }
        check_input_schema(&self.input_schema)
    }
}

impl PluginConfig {
    /// A config for `program` with the defaults.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        PluginConfig {
            program: program.into(),
            args: Vec::new(),
            workdir: None,
            skills: None,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            restart_backoff_initial: DEFAULT_RESTART_BACKOFF_INITIAL,
            restart_backoff_max: DEFAULT_RESTART_BACKOFF_MAX,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            sandbox: SandboxPolicy::default(),
        }
    }

    /// Checks the rules [`Deserialize`] enforces (for configs built in code).
    pub fn validate(&self) -> Result<(), SandboxedConfigError> {
        check_program(&self.program)?;
        if self.max_line_bytes < 1024 {
            return Err(SandboxedConfigError::MaxLineBytesTooSmall);
        }
        if self.restart_backoff_initial.is_zero() {
            return Err(SandboxedConfigError::RestartBackoffZero);
        }
        if self.startup_timeout.is_zero() {
            return Err(SandboxedConfigError::StartupTimeoutZero);
        }
        Ok(())
    }

    /// Whether skill `name` of the plugin is to be registered.
    pub fn allows(&self, name: &str) -> bool {
        self.skills
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }
}

fn check_program(program: &std::path::Path) -> Result<(), SandboxedConfigError> {
    if program.as_os_str().is_empty() {
        return Err(SandboxedConfigError::EmptyProgram);
    }
    Ok(())
}

fn check_input_schema(schema: &Value) -> Result<(), SandboxedConfigError> {
    CompiledSchema::compile(schema).map_err(SandboxedConfigError::InputSchema)?;
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        _ => Err(SandboxedConfigError::InputSchemaNotObject),
    }
}

/// The TOML shape of a command tool, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCommandToolConfig {
    /// Accepted so the host may hand over the whole table.
    kind: Option<String>,
    description: String,
    program: PathBuf,
    #[serde(default)]
    args: Vec<String>,
    env: Option<Vec<String>>,
    workdir: Option<PathBuf>,
    input_schema: Option<Value>,
    #[serde(default)]
    sandbox: SandboxPolicy,
    #[serde(default)]
    approval: ToolApproval,
    #[serde(default)]
    idempotent: bool,
}

impl TryFrom<RawCommandToolConfig> for CommandToolConfig {
    type Error = SandboxedConfigError;

    fn try_from(raw: RawCommandToolConfig) -> Result<Self, SandboxedConfigError> {
        check_kind(raw.kind.as_deref(), "command")?;
        let mut sandbox = raw.sandbox;
        if let Some(env) = raw.env {
            sandbox.env.inherit = env;
        }
        let config = CommandToolConfig {
            description: raw.description,
            program: raw.program,
            args: raw.args,
            workdir: raw.workdir,
            input_schema: raw
                .input_schema
                .unwrap_or_else(|| serde_json::json!({ "type": "object" })),
            sandbox,
            approval: raw.approval,
            idempotent: raw.idempotent,
        };
        config.validate()?;
        Ok(config)
    }
}

/// The TOML shape of a plugin, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPluginConfig {
    /// Accepted so the host may hand over the whole table.
    kind: Option<String>,
    program: PathBuf,
    #[serde(default)]
    args: Vec<String>,
    env: Option<Vec<String>>,
    workdir: Option<PathBuf>,
    skills: Option<Vec<String>>,
    startup_timeout_ms: Option<u64>,
    restart_backoff_ms: Option<u64>,
    restart_backoff_max_ms: Option<u64>,
    max_line_bytes: Option<usize>,
    #[serde(default)]
    sandbox: SandboxPolicy,
}

impl TryFrom<RawPluginConfig> for PluginConfig {
    type Error = SandboxedConfigError;

    fn try_from(raw: RawPluginConfig) -> Result<Self, SandboxedConfigError> {
        check_kind(raw.kind.as_deref(), "plugin")?;
        let mut sandbox = raw.sandbox;
        if let Some(env) = raw.env {
            sandbox.env.inherit = env;
        }
        let ms =
            |value: Option<u64>, default: Duration| value.map_or(default, Duration::from_millis);
        let config = PluginConfig {
            program: raw.program,
            args: raw.args,
            workdir: raw.workdir,
            skills: raw.skills,
            startup_timeout: ms(raw.startup_timeout_ms, DEFAULT_STARTUP_TIMEOUT),
            restart_backoff_initial: ms(raw.restart_backoff_ms, DEFAULT_RESTART_BACKOFF_INITIAL),
            restart_backoff_max: ms(raw.restart_backoff_max_ms, DEFAULT_RESTART_BACKOFF_MAX),
            max_line_bytes: raw.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
            sandbox,
        };
        config.validate()?;
        Ok(config)
    }
}

fn check_kind(kind: Option<&str>, expected: &'static str) -> Result<(), SandboxedConfigError> {
    match kind {
        Some(found) if found != expected => Err(SandboxedConfigError::OtherKind {
            found: found.to_owned(),
            expected,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tool_parses_with_schema_env_and_sandbox() {
        let config: CommandToolConfig = toml::from_str(
            r#"
            description = "Counts words"
            program = "/opt/wc"
            args = ["--json"]
            env = ["PATH"]
            [input_schema]
            type = "object"
            required = ["text"]
            properties = { text = { type = "string" } }
            [sandbox]
            timeout_ms = 1500
            "#,
        )
        .expect("valid config");
        assert_eq!(config.program, PathBuf::from("/opt/wc"));
        assert_eq!(config.sandbox.env.inherit, vec!["PATH".to_owned()]);
        assert_eq!(config.sandbox.timeout_ms, 1500);
        assert_eq!(config.input_schema["required"][0], "text");
    }

    #[test]
    fn command_tool_with_non_object_schema_is_rejected() {
        let err = toml::from_str::<CommandToolConfig>(
            "description = \"d\"\nprogram = \"/p\"\ninput_schema = { type = \"string\" }\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("type = \"object\""), "{err}");
    }

    #[test]
    fn command_tool_with_unknown_key_is_rejected() {
        let err = toml::from_str::<CommandToolConfig>(
            "description = \"d\"\nprogram = \"/p\"\nshell = true\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("shell"), "{err}");
    }

    #[test]
    fn command_tool_with_invalid_schema_keyword_is_rejected() {
        let err = toml::from_str::<CommandToolConfig>(
            "description = \"d\"\nprogram = \"/p\"\ninput_schema = { type = \"object\", minProperties = \"x\" }\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("input_schema"), "{err}");
    }

    #[test]
    fn plugin_parses_with_defaults_and_skill_allow_list() {
        let config: PluginConfig = toml::from_str(
            "program = \"plug\"\nskills = [\"a\"]\nrestart_backoff_ms = 50\n[sandbox.limits]\nprocesses = 4\n",
        )
        .expect("valid config");
        assert!(config.allows("a"));
        assert!(!config.allows("b"));
        assert_eq!(config.restart_backoff_initial, Duration::from_millis(50));
        assert_eq!(config.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert_eq!(config.sandbox.limits.processes, Some(4));
    }

    #[test]
    fn plugin_with_wrong_kind_or_empty_program_is_rejected() {
        let err = toml::from_str::<PluginConfig>("kind = \"mcp\"\nprogram = \"p\"\n").unwrap_err();
        assert!(err.to_string().contains("expected \"plugin\""), "{err}");
        let err = toml::from_str::<PluginConfig>("program = \"\"\n").unwrap_err();
        assert!(err.to_string().contains("program"), "{err}");
    }
}
