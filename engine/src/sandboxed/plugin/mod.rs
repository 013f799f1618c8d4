//! Out-of-process skills: [`PluginHost`] keeps one sandboxed plugin process running, discovers
//! its skills, registers them, and proxies calls to it ([`PluginSkillHandler`]).
//!
//! Lifecycle: [`PluginHost::start`] spawns the plugin and sends `skill/discover/req`; the
//! answer is the skill list registered by [`PluginHost::register_into`]. Every call goes to the
//! current process (many at once, told apart by `req_id`). When the process ends by itself, the
//! calls in flight are answered with how it ended and the next call starts a new one — after a
//! backoff that doubles with each consecutive crash (from `restart_backoff_ms` up to
//! `restart_backoff_max_ms`) and resets with the first well-formed answer. A call whose deadline
//! falls before the next allowed restart fails at once with `sandbox_crash`. Each new process is
//! asked `skill/discover/req` again before it gets calls, so a plugin that cannot start is
//! caught before a call is sent to it.
//!
//! A call abandoned at its deadline or by cancellation with no other call in flight stops the
//! plugin (it is presumed stuck: A2E has no cancel message), without counting as a crash.

mod connection;
mod handler;
mod lines;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::Value;
use skillet_sandbox::SandboxBackend;
use tokio::time::Instant;

use self::connection::Connection;
pub use self::connection::PluginStartError;
pub use self::handler::PluginSkillHandler;
use super::config::{PluginConfig, SandboxedConfigError};
use crate::deadline::Deadline;
use crate::handler::{HandlerContext, HandlerError};
use crate::protocol::{ErrorCode, SkillCallRequest, SkillDefinition};
use crate::skill::{Registry, RegistryError};

/// Why a plugin could not be set up.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginError {
    /// Its configuration breaks a rule.
    #[error("plugin `{plugin}`: {detail}")]
    Config {
        /// The plugin's name.
        plugin: String,
        /// What is wrong.
        detail: String,
    },
    /// Its configuration breaks one of [`PluginConfig`]'s rules.
    #[error("plugin `{plugin}`: {error}")]
    Invalid {
        /// The plugin's name.
        plugin: String,
        /// The rule.
        error: SandboxedConfigError,
    },
    /// It did not start or did not answer `skill/discover/req`.
    #[error("plugin `{plugin}` did not start: {detail}")]
    Start {
        /// The plugin's name.
        plugin: String,
        /// What happened.
        detail: PluginStartError,
    },
}

/// The current process, and when the next restart is allowed.
#[derive(Default)]
struct Slot {
    connection: Option<Arc<Connection>>,
    next_start: Option<Instant>,
}

/// One configured plugin: its process (restarted as needed) and the skills it offers.
pub struct PluginHost {
    name: String,
    config: PluginConfig,
    backend: Arc<dyn SandboxBackend>,
    slot: tokio::sync::Mutex<Slot>,
    /// Consecutive crashes (including failed starts); reset by a well-formed answer.
    failures: Arc<AtomicU32>,
    skills: Vec<SkillDefinition>,
}

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost")
            .field("name", &self.name)
            .field("program", &self.config.program)
            .field(
                "skills",
                &self.skills.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl PluginHost {
    /// Starts plugin `name` on `backend` and discovers its skills (those `config.skills`
    /// allows). Fails when the config breaks a rule, or the plugin does not start or answer
    /// `skill/discover/req` within `startup_timeout`.
    pub async fn start(
        name: impl Into<String>,
        config: PluginConfig,
        backend: Arc<dyn SandboxBackend>,
    ) -> Result<Arc<PluginHost>, PluginError> {
        let name = name.into();
        let config_error = |detail: String| PluginError::Config {
            plugin: name.clone(),
            detail,
        };
        if name.trim().is_empty() {
            return Err(config_error("the plugin name is empty".into()));
        }
        if let Err(error) = config.validate() {
            return Err(PluginError::Invalid {
                plugin: name,
                error,
            });
        }
        if let Some(dir) = &config.workdir
            && !dir.is_dir()
        {
            return Err(config_error(format!(
                "workdir {} is not a directory",
                dir.display()
            )));
        }
        let failures = Arc::new(AtomicU32::new(0));
        let (connection, discovered) =
            start_process(&name, &config, backend.as_ref(), failures.clone())
                .await
                .map_err(|detail| PluginError::Start {
                    plugin: name.clone(),
                    detail,
                })?;
        let skills = discovered
            .into_iter()
            .filter(|skill| config.allows(&skill.name))
            .map(|skill| as_registered(&name, skill))
            .collect();
        Ok(Arc::new(PluginHost {
            name,
            config,
            backend,
            slot: tokio::sync::Mutex::new(Slot {
                connection: Some(Arc::new(connection)),
                next_start: None,
            }),
            failures,
            skills,
        }))
    }

    /// The plugin's name (its key in `skillet.toml`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skills it offers, as they are registered: `tools`/`toolkits` cleared (the plugin
    /// brings its own; the host must not block them) and `metadata.plugin` set to its name.
    pub fn skills(&self) -> &[SkillDefinition] {
        &self.skills
    }

    /// A handler proxying calls of `skill` to this plugin.
    pub fn handler(self: &Arc<Self>, skill: impl Into<String>) -> Arc<PluginSkillHandler> {
        Arc::new(PluginSkillHandler::new(self.clone(), skill.into()))
    }

    /// Registers every skill of [`Self::skills`] as a native skill; returns the refusals
    /// (a name already taken, a definition whose schemas do not compile).
    pub fn register_into(self: &Arc<Self>, registry: &Registry) -> Vec<RegistryError> {
        self.skills
            .iter()
            .filter_map(|skill| {
                registry
                    .register_native(skill.clone(), self.handler(skill.name.clone()))
                    .err()
            })
            .collect()
    }

    /// The current process id, if a process is running.
    pub async fn pid(&self) -> Option<u32> {
        let slot = self.slot.lock().await;
        slot.connection
            .as_ref()
            .filter(|c| c.is_live())
            .and_then(|c| c.pid())
    }

    /// Stops the current process (calls in flight are answered `sandbox_crash`); the next call
    /// starts a new one.
    pub async fn shutdown(&self) {
        if let Some(connection) = self.slot.lock().await.connection.take() {
            connection.stop();
        }
    }

    /// Calls `skill` with `arguments`, forwarding its events into `ctx.events`. Fails with the
    /// plugin's own code, or with `sandbox_crash` / `out_of_memory` / `timeout` / `skill_error`
    /// as the module doc of `sandboxed` lists.
    pub async fn call(
        &self,
        skill: &str,
        arguments: Value,
        ctx: HandlerContext,
    ) -> Result<Value, HandlerError> {
        let Value::Object(arguments) = arguments else {
            return Err(HandlerError::InvalidRequest(
                "plugin skills take a JSON object of arguments".into(),
            ));
        };
        let deadline = ctx.deadline;
        let mut request = SkillCallRequest::new(skill, arguments);
        request.id = ctx.events.req_id().to_owned();
        request.correlation_id = ctx.correlation_id.clone();
        request.timeout = deadline.remaining().as_secs_f64().ceil().max(1.0) as u64;
        request.streaming = true;
        request.llm_override = ctx.llm_override.clone();
        request.metadata = ctx.metadata.clone();
        let work = async {
            let connection = self.connection(deadline).await?;
            connection.call(request, &ctx.events).await
        };
        let timeout = || HandlerError::Coded {
            code: ErrorCode::Timeout,
            message: format!(
                "plugin `{}` did not answer `{skill}` within the call's deadline",
                self.name
            ),
        };
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => Err(if deadline.expired() {
                timeout()
            } else {
                HandlerError::Coded {
                    code: ErrorCode::RuntimeError,
                    message: format!("the call of `{skill}` was cancelled"),
                }
            }),
            result = tokio::time::timeout_at(deadline.instant(), work) => {
                result.unwrap_or_else(|_| Err(timeout()))
            }
        }
    }

    /// The running process, starting a new one (after the backoff) when the last one ended.
    async fn connection(&self, deadline: Deadline) -> Result<Arc<Connection>, HandlerError> {
        let mut slot = self.slot.lock().await;
        if let Some(connection) = &slot.connection {
            if connection.is_live() {
                return Ok(connection.clone());
            }
            // Being stopped by the engine (not yet ended) is a planned end too.
            if let Some(ended) = connection.ended()
                && !ended.planned
            {
                let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                slot.next_start = Some(ended.at + self.backoff(failures));
            }
            slot.connection = None;
        }
        if let Some(at) = slot.next_start
            && at > Instant::now()
        {
            if at > deadline.instant() {
                return Err(crash(format!(
                    "plugin `{}` crashed {} time(s) in a row; its next restart is due after this call's deadline",
                    self.name,
                    self.failures.load(Ordering::Relaxed)
                )));
            }
            tokio::time::sleep_until(at).await;
        }
        match start_process(
            &self.name,
            &self.config,
            self.backend.as_ref(),
            self.failures.clone(),
        )
        .await
        {
            Ok((connection, discovered)) => {
                let missing: Vec<&str> = self
                    .skills
                    .iter()
                    .map(|s| s.name.as_str())
                    .filter(|name| !discovered.iter().any(|d| d.name == *name))
                    .collect();
                if !missing.is_empty() {
                    tracing::warn!(plugin = %self.name, ?missing, "restarted plugin no longer offers some of its registered skills");
                }
                let connection = Arc::new(connection);
                slot.connection = Some(connection.clone());
                slot.next_start = None;
                Ok(connection)
            }
            Err(detail) => {
                let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                slot.next_start = Some(Instant::now() + self.backoff(failures));
                Err(crash(format!(
                    "plugin `{}` could not be restarted: {detail}",
                    self.name
                )))
            }
        }
    }

    /// The wait before restart number `failures` (1-based): doubling, capped.
    fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(20);
        self.config
            .restart_backoff_initial
            .saturating_mul(1 << doublings)
            .min(self.config.restart_backoff_max)
    }
}

/// Spawns a process and asks it for its skills.
async fn start_process(
    name: &str,
    config: &PluginConfig,
    backend: &dyn SandboxBackend,
    failures: Arc<AtomicU32>,
) -> Result<(Connection, Vec<SkillDefinition>), PluginStartError> {
    let connection = Connection::spawn(name, config, backend, failures).await?;
    let skills = connection.discover(config.startup_timeout).await?;
    Ok((connection, skills))
}

/// A discovered definition as the registry gets it.
fn as_registered(plugin: &str, mut skill: SkillDefinition) -> SkillDefinition {
    skill.tools = None;
    skill.toolkits = None;
    skill.file_path = None;
    skill
        .metadata
        .get_or_insert_with(Default::default)
        .insert("plugin".into(), Value::String(plugin.to_owned()));
    skill
}

fn crash(message: String) -> HandlerError {
    HandlerError::Coded {
        code: ErrorCode::SandboxCrash,
        message,
    }
}
