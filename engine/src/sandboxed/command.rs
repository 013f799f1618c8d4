//! [`CommandTool`]: a host-declared program run once per tool call in the sandbox.
//!
//! The contract: the call's arguments arrive on stdin as one JSON document; the program writes
//! one JSON document on stdout and exits 0. A program that exits non-zero *with* a JSON document
//! on stdout reports a failure of its own (the model sees it as an error result, like MCP's
//! `isError`). Everything else is a [`CommandFailure`] with the A2E code of how the child ended
//! (see the table in the module doc of `sandboxed`), answered to the model as a tool error.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use skillet_sandbox::{Outcome, RunResult, SandboxBackend, SandboxCommand, SandboxPolicy};

use super::config::{CommandToolConfig, SandboxedConfigError};
use super::scratch::ScratchDir;
use super::{outcome_error_code, quote_head, quote_tail};
use crate::deadline::Deadline;
use crate::protocol::ErrorCode;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// Why a command tool call failed: the A2E code and a detail safe to show the model (stderr is
/// quoted with the policy's secrets redacted).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct CommandFailure {
    /// `out_of_memory`, `sandbox_crash`, `timeout` or `skill_error`.
    pub code: ErrorCode,
    /// What happened.
    pub detail: String,
}

/// A program declared in the host's configuration, offered to skills as a tool.
pub struct CommandTool {
    name: String,
    config: CommandToolConfig,
    backend: Arc<dyn SandboxBackend>,
}

impl std::fmt::Debug for CommandTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandTool")
            .field("name", &self.name)
            .field("program", &self.config.program)
            .finish_non_exhaustive()
    }
}

impl CommandTool {
    /// A tool named `name` running `config` on `backend`. Fails when the config breaks a rule
    /// (see [`CommandToolConfig::validate`]) or names a `workdir` that is not a directory.
    pub fn new(
        name: impl Into<String>,
        config: CommandToolConfig,
        backend: Arc<dyn SandboxBackend>,
    ) -> Result<Self, CommandToolError> {
        let name = name.into();
        if name.trim().is_empty() {
            return Err(CommandToolError::EmptyName);
        }
        if let Err(error) = config.validate() {
            return Err(CommandToolError::Invalid { tool: name, error });
        }
        if let Some(dir) = &config.workdir
            && !dir.is_dir()
        {
            let dir = dir.clone();
            return Err(CommandToolError::WorkdirNotADirectory { tool: name, dir });
        }
        Ok(CommandTool {
            name,
            config,
            backend,
        })
    }

    /// The configuration it runs.
    pub fn config(&self) -> &CommandToolConfig {
        &self.config
    }

    /// Runs the program once with `arguments`, ending it at `deadline` at the latest. Dropping
    /// the future kills the child's process group.
    pub async fn execute(
        &self,
        arguments: &Value,
        deadline: Deadline,
    ) -> Result<ToolOutput, CommandFailure> {
        let remaining = deadline.remaining();
        if remaining.is_zero() {
            return Err(self.failure(
                ErrorCode::Timeout,
                "the call's deadline passed before it started".into(),
            ));
        }
        let mut policy = self.config.sandbox.clone();
        let budget_ms = u64::try_from(remaining.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        policy.timeout_ms = policy.timeout_ms.min(budget_ms);
        let scratch;
        let workdir = match &self.config.workdir {
            Some(dir) => dir.as_path(),
            None => {
                scratch = ScratchDir::create(&self.name).map_err(|e| {
                    self.failure(
                        ErrorCode::SandboxCrash,
                        format!("could not create its working directory: {e}"),
                    )
                })?;
                scratch.path()
            }
        };
        let command = SandboxCommand::new(&self.config.program, workdir).args(&self.config.args);
        // Serializing a `Value` cannot fail.
        let stdin = serde_json::to_vec(arguments).unwrap_or_default();
        let result = self.backend.run(&command, &policy, stdin).await;
        tracing::debug!(
            tool = %self.name,
            outcome = %result.outcome,
            elapsed_ms = result.elapsed.as_millis() as u64,
            "command tool finished"
        );
        self.interpret(&result, &policy)
    }

    /// Maps a finished run onto the tool's answer (see the module doc).
    fn interpret(
        &self,
        result: &RunResult,
        policy: &SandboxPolicy,
    ) -> Result<ToolOutput, CommandFailure> {
        let stderr = || {
            let tail = quote_tail(&result.stderr.to_text_lossy(), policy);
            if tail.is_empty() {
                String::new()
            } else {
                format!("; stderr: {tail}")
            }
        };
        match &result.outcome {
            Outcome::Exited { code: 0 } => match parse_document(&result.stdout.bytes) {
                Ok(value) => Ok(ToolOutput::json(value)),
                Err(why) => Err(self.failure(
                    ErrorCode::SkillError,
                    format!(
                        "broke the JSON-out contract: {why}{}",
                        if result.stdout.bytes.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "; stdout starts: {}",
                                quote_head(&result.stdout.to_text_lossy(), policy)
                            )
                        }
                    ),
                )),
            },
            Outcome::Exited { code } => match parse_document(&result.stdout.bytes) {
                // The program answered, and says it failed: the model sees its answer.
                Ok(value) => Ok(ToolOutput {
                    content: value,
                    is_error: true,
                    images: Vec::new(),
                }),
                Err(_) => Err(self.failure(
                    ErrorCode::SandboxCrash,
                    format!(
                        "exited with status {code} without a JSON answer{}",
                        stderr()
                    ),
                )),
            },
            Outcome::TimedOut => Err(self.failure(
                ErrorCode::Timeout,
                format!(
                    "ran past its wall-clock limit of {} ms and was killed",
                    policy.timeout_ms
                ),
            )),
            outcome => {
                let code = outcome_error_code(outcome).unwrap_or(ErrorCode::SandboxCrash);
                Err(self.failure(code, format!("{outcome}{}", stderr())))
            }
        }
    }

    fn failure(&self, code: ErrorCode, what: String) -> CommandFailure {
        CommandFailure {
            code,
            detail: format!("command tool `{}` {what}", self.name),
        }
    }
}

/// Why a command tool cannot be made from its configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandToolError {
    /// The tool's name is blank.
    #[error("command tool name is empty")]
    EmptyName,
    /// Its configuration breaks a rule.
    #[error("command tool `{tool}`: {error}")]
    Invalid {
        /// The tool's name.
        tool: String,
        /// The rule.
        error: SandboxedConfigError,
    },
    /// Its `workdir` is not a directory.
    #[error("command tool `{tool}`: workdir {} is not a directory", dir.display())]
    WorkdirNotADirectory {
        /// The tool's name.
        tool: String,
        /// As configured.
        dir: std::path::PathBuf,
    },
}

/// How a program's stdout broke the JSON-out contract.
#[derive(Debug, thiserror::Error)]
enum DocumentError {
    #[error("it wrote nothing on stdout")]
    Empty,
    #[error("stdout is not one JSON document ({0})")]
    NotJson(serde_json::Error),
}

/// Parses stdout as exactly one JSON document (surrounding whitespace allowed).
fn parse_document(stdout: &[u8]) -> Result<Value, DocumentError> {
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Err(DocumentError::Empty);
    }
    serde_json::from_slice(stdout).map_err(DocumentError::NotJson)
}

#[async_trait]
impl Tool for CommandTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.config.description
    }

    fn input_schema(&self) -> &Value {
        &self.config.input_schema
    }

    fn idempotent(&self) -> bool {
        self.config.idempotent
    }

    async fn call(&self, arguments: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::select! {
            biased;
            // The token also fires at the deadline; then the answer is a timeout, not a cancel.
            () = ctx.cancel.cancelled() => {
                if ctx.deadline.expired() {
                    Err(ToolError::Failed(
                        self.failure(ErrorCode::Timeout, "was stopped at the call's deadline".into())
                            .to_string(),
                    ))
                } else {
                    Err(ToolError::Cancelled)
                }
            }
            result = self.execute(&arguments, ctx.deadline) => {
                result.map_err(|failure| ToolError::Failed(failure.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_must_be_exactly_one_document() {
        assert_eq!(
            parse_document(b" {\"a\":1}\n").unwrap(),
            serde_json::json!({"a": 1})
        );
        assert!(matches!(
            parse_document(b"{\"a\":1}{\"b\":2}"),
            Err(DocumentError::NotJson(_))
        ));
        assert!(matches!(parse_document(b"\n"), Err(DocumentError::Empty)));
    }
}
