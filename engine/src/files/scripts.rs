//! `run_skill_script(path, args?, stdin?)`: runs a file under the skill's `scripts/` through the
//! interpreter the host configured for its extension, inside `skillet-sandbox`, with the call's
//! workspace as working directory and the skill folder readable. Offered only when the host set
//! `[skills.scripts] enabled = true`.
//!
//! What the model gets back:
//! - the script ran and exited (any status): `{exit_status, stdout, stderr}` (each stream cut at
//!   `max_output_bytes`, secrets the policy hands the child redacted); a non-zero status is an
//!   error result, the run goes on;
//! - the sandbox ended it: a tool error starting with the A2E code of how it ended —
//!   `timeout:` (wall clock, CPU limit, the call's deadline), `out_of_memory:`, `sandbox_crash:`
//!   (a signal, or it could not start), `skill_error:` (output over the sandbox's cap);
//! - the request itself is wrong (not under `scripts/`, escaping, unknown extension, too many
//!   arguments): a tool error saying so, nothing runs.
//!
//! A script's environment is the sandbox policy's, with a fixed [`SCRIPT_PATH`] as `PATH`
//! unless the host sets one — after the directory of the system tools the host offers
//! (`[skills.scripts] tools`, `environments::SystemTools`), whose installations are readable. A
//! script that exits non-zero because a program was not found gets a `hint` naming it.
//!
//! The interpreter is the one resolved at start-up for the extension
//! (`environments::Interpreters`); one the sandbox cannot run is a tool error naming it and the
//! setting that fixes it. A `.py` script of a skill with Python requirements runs with its
//! environment's interpreter (`environments::Environments`, built on first use with a
//! `progress` event if it is not yet), the environment readable, nothing else added.
//!
//! Not here: the sandbox (`skillet-sandbox`), the host's settings (`settings`), building
//! environments (`environments`).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use skillet_sandbox::{Outcome, RunResult, SandboxBackend, SandboxCommand, SandboxPolicy};

use super::confine;
use super::error::FileError;
use super::settings::ScriptsConfig;
use crate::deadline::Deadline;
use crate::environments::{
    EnvironmentError, EnvironmentKind, Environments, Interpreters, SkillFolder, SystemTools,
    missing_program_hint,
};
use crate::events::EventEmitter;
use crate::protocol::ErrorCode;
use crate::sandboxed::outcome_error_code;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// The `PATH` a script gets unless the host sets one (`[skills.scripts.sandbox.env] set`):
/// the system's directories, never the host's own `PATH` (which may name its virtualenvs, its
/// home, its own tools).
pub const SCRIPT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The folder of a skill scripts must be in.
pub(crate) const SCRIPTS_DIR: &str = "scripts/";

/// What every script call of a host shares: the settings, the sandbox, the interpreters and
/// the environments.
pub(crate) struct ScriptRuntime {
    pub config: Arc<ScriptsConfig>,
    pub backend: Arc<dyn SandboxBackend>,
    pub interpreters: Arc<Interpreters>,
    pub environments: Arc<Environments>,
    pub system_tools: Arc<SystemTools>,
}

/// The tool, bound to one skill folder and one call's workspace.
pub(crate) struct RunSkillScript {
    skill_dir: PathBuf,
    folder: SkillFolder,
    workspace: PathBuf,
    config: Arc<ScriptsConfig>,
    backend: Arc<dyn SandboxBackend>,
    interpreters: Arc<Interpreters>,
    environments: Arc<Environments>,
    system_tools: Arc<SystemTools>,
    schema: Value,
    description: String,
}

/// Why a script did not run, or ended without an exit status; the text is the tool error the
/// model reads, led by the A2E code where one applies.
#[derive(Debug, thiserror::Error)]
enum ScriptError {
    /// The path breaks a confinement rule.
    #[error(transparent)]
    Path(#[from] FileError),
    /// The path is outside `scripts/`.
    #[error("{0:?} is not under {SCRIPTS_DIR}; only bundled scripts run")]
    NotAScript(String),
    /// The script's interpreter cannot run in the sandbox.
    #[error("{}: {path:?} cannot run: {why}", ErrorCode::SandboxCrash)]
    InterpreterUnusable {
        path: String,
        why: Box<EnvironmentError>,
    },
    /// No interpreter for the script's extension.
    #[error(
        "{path:?}: no interpreter is configured for `.{extension}` files (known: {})",
        known.join(", ")
    )]
    NoInterpreter {
        path: String,
        extension: String,
        known: Vec<String>,
    },
    /// The skill's environment could not be built.
    #[error(
        "{}: {path:?} cannot run: the skill's {kind} environment could not be built: {why}",
        ErrorCode::RuntimeError
    )]
    EnvironmentNotBuilt {
        path: String,
        kind: &'static str,
        why: Box<EnvironmentError>,
    },
    /// The script cannot be reached through its Node environment's link directory.
    #[error("{}: {path:?} cannot run: {why}", ErrorCode::RuntimeError)]
    NoNodeEntry { path: String, why: NodeEntryProblem },
    /// The call's deadline had passed before the script started.
    #[error("{}: the call's deadline passed before it started", ErrorCode::Timeout)]
    DeadlinePassed,
    /// The script ended without an exit status (killed, crashed, timed out).
    #[error("{code}: script {path:?} {what}{tail}")]
    Ended {
        code: ErrorCode,
        path: String,
        /// How it ended.
        what: String,
        /// `; stderr: ...`, or empty.
        tail: String,
    },
}

/// Why a Node script has no entry in its environment's link directory.
#[derive(Debug, thiserror::Error)]
enum NodeEntryProblem {
    #[error("the skill's folder: {0}")]
    SkillFolder(std::io::Error),
    #[error("not inside {}", .0.display())]
    NotInside(PathBuf),
    #[error(transparent)]
    Environment(Box<EnvironmentError>),
}

/// What a script runs: the command and the extra paths the sandbox must let it read.
struct Prepared {
    command: SandboxCommand,
    read_only: Vec<PathBuf>,
}

impl RunSkillScript {
    pub(crate) fn new(
        skill_dir: PathBuf,
        folder: SkillFolder,
        workspace: PathBuf,
        runtime: ScriptRuntime,
    ) -> Arc<Self> {
        let ScriptRuntime {
            config,
            backend,
            interpreters,
            environments,
            system_tools,
        } = runtime;
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": confine::MAX_PATH_CHARS,
                         "description": "The script, e.g. scripts/convert.py"},
                "args": {"type": "array", "items": {"type": "string", "maxLength": 4096},
                         "maxItems": config.max_args,
                         "description": "Command-line arguments (paths are relative to the workspace)"},
                "stdin": {"type": "string", "maxLength": config.max_stdin_bytes,
                          "description": "Text sent to the script's standard input"}
            },
            "required": ["path"],
            "additionalProperties": false
        });
        let extensions: Vec<&str> = interpreters.extensions().collect();
        let description = format!(
            "Runs a script that ships with this skill (under scripts/; extensions: {}) in a \
             sandbox, with your workspace as its working directory. Returns its exit status, \
             stdout and stderr; files it writes in the workspace are returned to the caller.",
            extensions.join(", ")
        );
        Arc::new(RunSkillScript {
            skill_dir,
            folder,
            workspace,
            config,
            backend,
            interpreters,
            environments,
            system_tools,
            schema,
            description,
        })
    }

    /// The interpreter and the script's real path, or why it cannot run. A `.py` script of a
    /// skill with requirements gets its environment (built now if it is not yet).
    async fn command(
        &self,
        path: &str,
        args: &[String],
        events: &EventEmitter,
    ) -> Result<Prepared, ScriptError> {
        let relative = confine::relative_path(path)?;
        if !relative.starts_with(SCRIPTS_DIR.trim_end_matches('/')) {
            return Err(ScriptError::NotAScript(path.to_owned()));
        }
        let script = confine::existing_file(&self.skill_dir, path)?;
        let extension = script
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        let interpreter = match self.interpreters.get(extension) {
            Some(Ok(interpreter)) => interpreter,
            Some(Err(why)) => {
                return Err(ScriptError::InterpreterUnusable {
                    path: path.to_owned(),
                    why: Box::new(why.clone()),
                });
            }
            None => {
                return Err(ScriptError::NoInterpreter {
                    path: path.to_owned(),
                    extension: extension.to_owned(),
                    known: self.interpreters.extensions().map(str::to_owned).collect(),
                });
            }
        };
        let mut read_only = interpreter.read_only.clone();
        let command = SandboxCommand::new(&interpreter.program, &self.workspace);
        let Some(kind) = EnvironmentKind::of_extension(extension) else {
            return Ok(Prepared {
                command: command.arg(script).args(args),
                read_only,
            });
        };
        let on_build = |requirements: &crate::environments::Requirements| {
            let notice = kind.build_notice(&self.folder.name, requirements);
            events.progress(events.last_progress(), notice);
        };
        let environment = self
            .environments
            .prepare_kind(kind, &self.folder, &on_build)
            .await
            .map_err(|why| ScriptError::EnvironmentNotBuilt {
                path: path.to_owned(),
                kind: kind.label(),
                why: Box::new(why),
            })?;
        let Some(environment) = environment else {
            return Ok(Prepared {
                command: command.arg(script).args(args),
                read_only,
            });
        };
        let command = match kind {
            EnvironmentKind::Python => {
                let python = environment.python();
                SandboxCommand::new(&python, &self.workspace)
                    .arg0(python.as_os_str())
                    .arg(script)
            }
            EnvironmentKind::Node => {
                let entry = self.node_entry(&environment, &script, path)?;
                read_only.push(self.environments.root().join("links"));
                command.args(crate::environments::NODE_FLAGS).arg(entry)
            }
        };
        read_only.push(environment.dir);
        Ok(Prepared {
            command: command.args(args),
            read_only,
        })
    }

    /// `script` seen through the link directory that gives it its Node environment.
    fn node_entry(
        &self,
        environment: &crate::environments::Environment,
        script: &std::path::Path,
        path: &str,
    ) -> Result<PathBuf, ScriptError> {
        let cannot = |why| ScriptError::NoNodeEntry {
            path: path.to_owned(),
            why,
        };
        let skill_dir = self
            .skill_dir
            .canonicalize()
            .map_err(|e| cannot(NodeEntryProblem::SkillFolder(e)))?;
        let relative = script
            .strip_prefix(&skill_dir)
            .map_err(|_| cannot(NodeEntryProblem::NotInside(skill_dir.clone())))?;
        let entry = self
            .environments
            .node_entry(environment, &skill_dir)
            .map_err(|why| cannot(NodeEntryProblem::Environment(Box::new(why))))?;
        Ok(entry.join(relative))
    }

    async fn execute(
        &self,
        arguments: &Value,
        deadline: Deadline,
        events: &EventEmitter,
    ) -> Result<ToolOutput, ScriptError> {
        let path = arguments["path"].as_str().unwrap_or_default();
        let args: Vec<String> = arguments["args"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let stdin = arguments["stdin"]
            .as_str()
            .unwrap_or_default()
            .as_bytes()
            .to_vec();
        let Prepared { command, read_only } = self.command(path, &args, events).await?;
        let remaining = deadline.remaining();
        if remaining.is_zero() {
            return Err(ScriptError::DeadlinePassed);
        }
        let mut policy = self.config.sandbox.clone();
        let budget_ms = u64::try_from(remaining.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        policy.timeout_ms = policy.timeout_ms.min(budget_ms);
        if let Ok(dir) = self.skill_dir.canonicalize() {
            policy.filesystem.read_only.push(dir);
        }
        policy.filesystem.read_only.extend(read_only);
        policy
            .filesystem
            .read_only
            .extend(self.system_tools.read_only());
        let search_path = match self.system_tools.path_dir() {
            Some(tools) => format!("{}:{SCRIPT_PATH}", tools.display()),
            None => SCRIPT_PATH.to_owned(),
        };
        policy
            .env
            .set
            .entry("PATH".to_owned())
            .or_insert_with(|| search_path.into());
        let result = self.backend.run(&command, &policy, stdin).await;
        tracing::debug!(script = path, outcome = %result.outcome, "skill script finished");
        self.interpret(path, &result, &policy)
    }

    fn interpret(
        &self,
        path: &str,
        result: &RunResult,
        policy: &SandboxPolicy,
    ) -> Result<ToolOutput, ScriptError> {
        let max = self.config.max_output_bytes;
        let stream = |bytes: &skillet_sandbox::CapturedOutput| {
            let (text, cut) = cut_text(policy.env.redact(&bytes.to_text_lossy()), max);
            (text, cut || bytes.truncated)
        };
        let (stdout, stdout_cut) = stream(&result.stdout);
        let (stderr, stderr_cut) = stream(&result.stderr);
        match &result.outcome {
            Outcome::Exited { code } => {
                let mut content = json!({
                    "exit_status": code,
                    "stdout": stdout,
                    "stderr": stderr,
                    "stdout_truncated": stdout_cut,
                    "stderr_truncated": stderr_cut,
                });
                if *code != 0
                    && let Some(hint) = missing_program_hint(&stderr, &self.system_tools)
                {
                    content["hint"] = Value::String(hint);
                }
                Ok(ToolOutput {
                    content,
                    is_error: *code != 0,
                    images: Vec::new(),
                })
            }
            outcome => {
                let code = outcome_error_code(outcome).unwrap_or(ErrorCode::SandboxCrash);
                let what = match outcome {
                    Outcome::TimedOut => format!(
                        "ran past its wall-clock limit of {} ms and was killed",
                        policy.timeout_ms
                    ),
                    other => other.to_string(),
                };
                let tail = crate::sandboxed::quote_tail(&stderr, policy);
                let tail = if tail.is_empty() {
                    String::new()
                } else {
                    format!("; stderr: {tail}")
                };
                Err(ScriptError::Ended {
                    code,
                    path: path.to_owned(),
                    what,
                    tail,
                })
            }
        }
    }
}

/// `text` cut to at most `max` bytes at a character boundary; whether it was cut.
fn cut_text(mut text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

#[async_trait]
impl Tool for RunSkillScript {
    fn name(&self) -> &str {
        "run_skill_script"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, arguments: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => {
                if ctx.deadline.expired() {
                    Err(ToolError::Failed(format!(
                        "{}: the script was stopped at the call's deadline", ErrorCode::Timeout
                    )))
                } else {
                    Err(ToolError::Cancelled)
                }
            }
            result = self.execute(&arguments, ctx.deadline, &ctx.events) => {
                result.map_err(|e| ToolError::Failed(e.to_string()))
            }
        }
    }
}
