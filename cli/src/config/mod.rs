//! `skillet.toml`: the host's configuration file, parsed once into typed values.
//!
//! Sections (each optional; `docs/CONFIG.md` is the user-facing reference and
//! `skillet.example.toml` a complete example):
//!
//! | table | type | what |
//! |---|---|---|
//! | `skills_dirs` | list of paths | skill roots used when the command line names none |
//! | `default_provider` | string | the `[providers.NAME]` calls run on |
//! | `[providers.NAME]` | [`ProviderEntry`] | models; credentials only as env var *names* |
//! | `[llm_override]` | [`skillet_providers::OverridePolicy`] | what a request's `llm_override` may use (default: nothing) |
//! | `[skill_provider]` | [`skillet_engine::run::SkillProviderPolicy`] | what a skill's own provider settings may choose (default: the model only) |
//! | `[limits]` | [`skillet_engine::run::Limits`] | turns, time, tool and event caps |
//! | `[server]` | [`ServerConfig`] | transport limits: body size, concurrent calls, grace period, listen address |
//! | `[server.tls]` | [`edge::TlsConfig`] | HTTPS for `serve --http`: certificate and key files (reloaded on SIGHUP) |
//! | `[card]` | [`CardConfig`] | how the A2A Agent Card presents this host |
//! | `[a2a]` | [`a2a::A2aConfig`] | the A2A JSON-RPC binding: on/off, public URL, provider, task store bounds |
//! | `[tools.NAME]` | [`ToolConfig`] | host-declared tools by `kind` (`command`) |
//! | `[toolkits.NAME]` | [`ToolkitConfig`] | host-declared toolkits by `kind` (`mcp`) |
//! | `[plugins.NAME]` | [`skillet_engine::sandboxed::PluginConfig`] | out-of-process skill hosts |
//! | `[skills.workspace]`, `[skills.scripts]` | [`skillet_engine::files::FilesConfig`] | per-call workspaces, file-tool caps, bundled scripts (off by default) |
//! | `[telemetry]` | [`crate::telemetry::TelemetryConfig`] | OTLP trace export, content capture |
//! | `[pricing.MODEL]` | [`skillet_engine::telemetry::ModelPrice`] | prices per model for cost estimates |
//! | `[auth]` | [`auth::AuthConfig`] | who may reach the HTTP doors (API keys as SHA-256, JWT issuers), what each scope may run, per-identity limits, the audit file |
//! | `[console]` | [`console::ConsoleConfig`] | the web console of `serve --http` and its run history (SQLite) |
//! | `[approvals]` | [`approvals::ApprovalsConfig`] | tool calls that wait for a person's approval; `default = "deny"` or `"allow"` for doors that cannot ask |
//! | `[nats]` | [`NatsOptions`] | `serve --nats` workers and `call --nats`: server, credentials, stream, delivery |
//!
//! Unknown keys anywhere are errors (a typo never silently keeps a default), and so is an
//! inline credential. Relative paths are resolved against the directory of the file.
//!
//! Not here: choosing the provider for a run from the config plus command-line shortcuts
//! ([`providers::ProviderChoice`]), building the executor (`host::cli`).

pub mod a2a;
pub mod approvals;
pub mod auth;
pub mod console;
pub mod edge;
pub mod eval;
pub mod extensions;
pub mod nats;
pub mod providers;
mod secrets;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use skillet_protocol::LLMConfig;
use skillet_providers::OverridePolicy;

use crate::telemetry::TelemetryConfig;
use skillet_engine::files::FilesConfig;
use skillet_engine::sandboxed::PluginConfig;
use skillet_engine::telemetry::Pricing;

pub use extensions::{ToolConfig, ToolkitConfig};
pub use nats::NatsOptions;
pub use providers::{ProviderChoice, ProviderEntry, ProviderEntryKind, ProviderShortcuts};

use skillet_engine::run::{CardIdentity, Limits, SkillProviderPolicy};

/// The file name looked for in the working directory when `--config` is not given.
pub const DEFAULT_CONFIG_FILE: &str = "skillet.toml";

/// The most async worker threads `[server] worker_threads` (or `TOKIO_WORKER_THREADS`) may ask
/// for: far above any useful count, below what would exhaust the process's threads (where
/// tokio would panic).
pub const MAX_WORKER_THREADS: usize = 1024;

// The `[server]` defaults are the host's own (each adapter owns its defaults; the file format
// only names them).
pub use skillet_host::DEFAULT_MAX_CONCURRENT_CALLS;
pub use skillet_host::DEFAULT_MAX_MESSAGE_BYTES;
pub use skillet_host::mcp::{
    DEFAULT_MAX_SESSIONS as DEFAULT_MCP_MAX_SESSIONS,
    DEFAULT_MAX_STREAMS as DEFAULT_MCP_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_SESSION as DEFAULT_MCP_MAX_STREAMS_PER_SESSION,
};

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Skill roots used when the command line names none (default `./skills`).
    #[serde(default)]
    pub skills_dirs: Vec<PathBuf>,
    /// The provider calls run on; must name a `[providers.NAME]` table. When absent and exactly
    /// one provider is configured, that one; when none is, the embedded mock.
    #[serde(default)]
    pub default_provider: Option<String>,
    /// Configured models by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderEntry>,
    /// What a request's `llm_override` may use; absent: overrides are refused.
    #[serde(default)]
    pub llm_override: Option<OverridePolicy>,
    /// What a skill's own provider settings may choose; default: the model (and sampling) on
    /// the host's provider, never an endpoint or a credential.
    #[serde(default)]
    pub skill_provider: SkillProviderPolicy,
    /// Bounds on every call.
    #[serde(default)]
    pub limits: Limits,
    /// Transport settings.
    #[serde(default)]
    pub server: ServerConfig,
    /// The Agent Card's identity.
    #[serde(default)]
    pub card: CardConfig,
    /// The A2A JSON-RPC binding and its task store.
    #[serde(default)]
    pub a2a: a2a::A2aConfig,
    /// Host-declared tools (see [`ToolConfig`]).
    #[serde(default)]
    pub tools: BTreeMap<String, ToolConfig>,
    /// Host-declared toolkits (see [`ToolkitConfig`]).
    #[serde(default)]
    pub toolkits: BTreeMap<String, ToolkitConfig>,
    /// Out-of-process skill hosts (A2E over a sandboxed child's stdio).
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginConfig>,
    /// What skill runs may touch: `[skills.workspace]`, `[skills.scripts]` (see
    /// [`skillet_engine::files::FilesConfig`]; scripts are off by default).
    #[serde(default)]
    pub skills: FilesConfig,
    /// OpenTelemetry export.
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// Prices per model (cost estimates in results).
    #[serde(default)]
    pub pricing: Pricing,
    /// NATS JetStream workers and callers.
    #[serde(default)]
    pub nats: NatsOptions,
    /// Tool calls that need a person's approval, and the decision when nobody can be asked.
    #[serde(default)]
    pub approvals: approvals::ApprovalsConfig,
    /// Authentication and authorization of the HTTP doors; absent: none (loopback only,
    /// unless `serve --allow-unauthenticated`).
    #[serde(default)]
    pub auth: Option<auth::AuthConfig>,
    /// The web console and its run history.
    #[serde(default)]
    pub console: console::ConsoleConfig,
    /// `skillet eval`'s judge.
    #[serde(default)]
    pub eval: eval::EvalConfig,
    /// The file this was read from (`None`: built-in defaults).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// `[server]`: limits and defaults of the stdio and HTTP transports.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Calls run at once per server; beyond it calls are answered with a retryable
    /// `runtime_error` (HTTP 503) instead of queueing.
    pub max_concurrent_calls: usize,
    /// Largest HTTP request body and longest stdio line, in bytes.
    pub max_message_bytes: usize,
    /// Seconds calls in flight may run on after SIGTERM/SIGINT (or end of input for HTTP)
    /// before they are cancelled.
    pub shutdown_grace_seconds: f64,
    /// Address `serve --http` binds when given none.
    pub http_listen: SocketAddr,
    /// Most open HTTP connections (also clamped below the open-file limit).
    pub max_connections: usize,
    /// Seconds an HTTP/1 client gets to send a request's headers.
    pub header_read_timeout_seconds: f64,
    /// Seconds an HTTP connection may stay open with no request in progress.
    pub idle_timeout_seconds: f64,
    /// Seconds an HTTP request's body may take to arrive after its headers.
    pub body_read_timeout_seconds: f64,
    /// `Host` values every route accepts besides this server's own addresses (`name`,
    /// `name:port`, `*`; `skillet_host::origin_guard`).
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin` values every route accepts besides the request's own site.
    pub allowed_origins: Vec<String>,
    /// The older name of `allowed_hosts` (it applied to `/mcp` alone); merged into it.
    pub mcp_allowed_hosts: Vec<String>,
    /// The older name of `allowed_origins`; merged into it.
    pub mcp_allowed_origins: Vec<String>,
    /// Most MCP sessions `/mcp` keeps (an `initialize` over it closes the longest idle one,
    /// or gets HTTP 503 when none is idle).
    pub mcp_max_sessions: usize,
    /// Most standalone `GET /mcp` streams open at once (at most half of `max_connections`).
    pub mcp_max_streams: usize,
    /// Most standalone `GET /mcp` streams of one session.
    pub mcp_max_streams_per_session: usize,
    /// The async runtime's worker threads (`None` or 0: `TOKIO_WORKER_THREADS` if set, else one
    /// for the stdio transports and one per CPU otherwise; see `host::cli::runtime`).
    pub worker_threads: Option<usize>,
    /// `[server.tls]`: serve `--http` as HTTPS with these files.
    pub tls: Option<edge::TlsConfig>,
    /// Peers (addresses or CIDR ranges) whose `X-Forwarded-For`/`-Proto`/`-Host` are believed.
    pub trusted_proxies: Vec<String>,
    /// The SQLite file that makes `serve --http`'s A2A tasks durable (their state and the
    /// checkpoints of their runs survive a restart); `None`: tasks live in memory only. The
    /// console's history shares it when `[console] history_db` is not set.
    pub state_db: Option<PathBuf>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            shutdown_grace_seconds: 10.0,
            http_listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_connections: 1024,
            header_read_timeout_seconds: 10.0,
            idle_timeout_seconds: 60.0,
            body_read_timeout_seconds: 30.0,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            mcp_allowed_hosts: Vec::new(),
            mcp_allowed_origins: Vec::new(),
            mcp_max_sessions: DEFAULT_MCP_MAX_SESSIONS,
            mcp_max_streams: DEFAULT_MCP_MAX_STREAMS,
            mcp_max_streams_per_session: DEFAULT_MCP_MAX_STREAMS_PER_SESSION,
            worker_threads: None,
            tls: None,
            trusted_proxies: Vec::new(),
            state_db: None,
        }
    }
}

impl ServerConfig {
    /// The shutdown grace period.
    pub fn grace(&self) -> Duration {
        Duration::try_from_secs_f64(self.shutdown_grace_seconds).unwrap_or(Duration::ZERO)
    }

    /// The HTTP header-read timeout.
    pub fn header_read_timeout(&self) -> Duration {
        Duration::try_from_secs_f64(self.header_read_timeout_seconds).unwrap_or(Duration::ZERO)
    }

    /// The HTTP idle-connection timeout.
    pub fn idle_timeout(&self) -> Duration {
        Duration::try_from_secs_f64(self.idle_timeout_seconds).unwrap_or(Duration::ZERO)
    }

    /// The HTTP body-read timeout.
    pub fn body_read_timeout(&self) -> Duration {
        Duration::try_from_secs_f64(self.body_read_timeout_seconds).unwrap_or(Duration::ZERO)
    }

    /// `allowed_hosts` and `allowed_origins`, each with its older `mcp_` list added.
    pub fn allowed_sites(&self) -> (Vec<String>, Vec<String>) {
        let join = |a: &[String], b: &[String]| a.iter().chain(b).cloned().collect();
        (
            join(&self.allowed_hosts, &self.mcp_allowed_hosts),
            join(&self.allowed_origins, &self.mcp_allowed_origins),
        )
    }
}

/// `[card]`: how the A2A Agent Card presents this host. Every key is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CardConfig {
    /// Agent name (default `skillet`).
    pub name: Option<String>,
    /// Agent description.
    pub description: Option<String>,
    /// Agent version (default: this build's version).
    pub version: Option<String>,
    /// Public URL of the A2E endpoint (default: `http://LISTEN/a2e` when serving HTTP).
    pub url: Option<String>,
}

impl CardConfig {
    /// The executor's card identity; `served_url` is used when no `url` is configured.
    pub fn identity(&self, served_url: Option<&str>) -> CardIdentity {
        let mut identity = CardIdentity::default();
        if let Some(name) = &self.name {
            identity.name.clone_from(name);
        }
        if let Some(description) = &self.description {
            identity.description.clone_from(description);
        }
        if let Some(version) = &self.version {
            identity.version.clone_from(version);
        }
        if let Some(url) = self.url.as_deref().or(served_url) {
            identity.url = url.to_owned();
        }
        identity
    }
}

/// Why the configuration could not be used. Messages name the file and the key, never a secret.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read the configuration: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// TOML syntax or shape (the message has the line and column, and the key).
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// Well-formed but unusable.
    #[error("{path}: {key}: {reason}")]
    Invalid {
        /// The file (or `command line`).
        path: String,
        /// The offending key, dotted.
        key: String,
        /// Why.
        reason: String,
    },
}

impl Config {
    /// Parses configuration text; `path` names it in errors and anchors relative paths.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().replace('\n', "\n  "),
        })?;
        config.source = Some(path.to_path_buf());
        let base = path.parent().unwrap_or(Path::new("."));
        config.anchor_paths(base);
        config.check()?;
        Ok(config)
    }

    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Config::from_toml_str(&text, path)
    }

    /// Where this configuration came from, for messages.
    pub fn origin(&self) -> String {
        self.source.as_ref().map_or_else(
            || "built-in defaults".to_owned(),
            |p| p.display().to_string(),
        )
    }

    fn anchor_paths(&mut self, base: &Path) {
        let anchor = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        self.skills_dirs.iter_mut().for_each(anchor);
        self.skills.workspace.root.as_mut().map(anchor);
        for entry in self.providers.values_mut() {
            entry.scenario.as_mut().map(anchor);
        }
        for tool in self.tools.values_mut() {
            tool.anchor_paths(base);
        }
        for toolkit in self.toolkits.values_mut() {
            toolkit.anchor_paths(base);
        }
        for plugin in self.plugins.values_mut() {
            extensions::anchor_plugin(plugin, base);
        }
        self.nats.credentials_file.as_mut().map(anchor);
        self.server.state_db.as_mut().map(anchor);
        if let Some(tls) = &mut self.server.tls {
            tls.anchor_paths(base);
        }
        if let Some(auth) = &mut self.auth {
            auth.anchor_paths(base);
        }
        self.console.anchor_paths(base);
    }

    /// The fallbacks of the provider named `name`, in order, as the executor takes them
    /// (empty when it has none or is not a `[providers.NAME]` table).
    pub fn fallbacks_of(&self, name: &str) -> Vec<(String, LLMConfig)> {
        let Some(entry) = self.providers.get(name) else {
            return Vec::new();
        };
        entry
            .fallback
            .iter()
            .filter_map(|f| {
                let config = self.providers.get(f)?.llm_config()?;
                Some((f.clone(), config))
            })
            .collect()
    }

    /// Cross-field checks serde cannot express.
    fn check(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, reason: String| ConfigError::Invalid {
            path: self.origin(),
            key,
            reason,
        };
        if let Some(name) = &self.default_provider
            && !self.providers.contains_key(name)
        {
            let known: Vec<&str> = self.providers.keys().map(String::as_str).collect();
            return Err(invalid(
                "default_provider".into(),
                format!("names no [providers.{name}] table (configured: {known:?})"),
            ));
        }
        for (name, entry) in &self.providers {
            entry
                .check()
                .map_err(|(key, reason)| invalid(format!("providers.{name}.{key}"), reason))?;
            for fallback in &entry.fallback {
                let reason = match self.providers.get(fallback) {
                    _ if fallback == name => Some("a provider cannot be its own fallback".into()),
                    None => Some(format!("names no [providers.{fallback}] table")),
                    Some(other) if other.kind == ProviderEntryKind::Mock => Some(format!(
                        "[providers.{fallback}] is the mock, not a real provider"
                    )),
                    Some(other) if !other.fallback.is_empty() => Some(format!(
                        "[providers.{fallback}] has fallbacks of its own; chains are one level \
                         (list them all here)"
                    )),
                    Some(_) => None,
                };
                if let Some(reason) = reason {
                    return Err(invalid(format!("providers.{name}.fallback"), reason));
                }
            }
        }
        if !self.server.shutdown_grace_seconds.is_finite()
            || self.server.shutdown_grace_seconds < 0.0
        {
            return Err(invalid(
                "server.shutdown_grace_seconds".into(),
                "expected a non-negative number of seconds".into(),
            ));
        }
        for (key, value) in [
            (
                "server.header_read_timeout_seconds",
                self.server.header_read_timeout_seconds,
            ),
            (
                "server.idle_timeout_seconds",
                self.server.idle_timeout_seconds,
            ),
        ] {
            if !value.is_finite() || value <= 0.0 {
                return Err(invalid(
                    key.into(),
                    "expected a positive number of seconds".into(),
                ));
            }
        }
        if let Err(reason) = skillet_host::TrustedProxies::parse(&self.server.trusted_proxies) {
            return Err(invalid("server.trusted_proxies".into(), reason));
        }
        let (hosts, origins) = self.server.allowed_sites();
        if let Err(e) = skillet_host::origin_guard::AllowedSites::parse(&hosts, &origins) {
            return Err(invalid(
                format!("server.{}", e.setting),
                format!("{:?}: {}", e.entry, e.reason),
            ));
        }
        if let Some((key, reason)) = self.auth.as_ref().and_then(auth::AuthConfig::problem) {
            return Err(invalid(key, reason));
        }
        if let Some((key, reason)) = self.console.problem() {
            return Err(invalid(key, reason));
        }
        if let Some(problem) = self.nats.problems().into_iter().next() {
            let (key, reason) = problem.split_once(": ").unwrap_or(("nats", &problem));
            return Err(invalid(key.to_owned(), reason.to_owned()));
        }
        if self.server.worker_threads.unwrap_or(0) > MAX_WORKER_THREADS {
            return Err(invalid(
                "server.worker_threads".into(),
                format!("expected at most {MAX_WORKER_THREADS} (0 or unset: the default)"),
            ));
        }
        if self.server.max_concurrent_calls == 0
            || self.server.max_message_bytes == 0
            || self.server.max_connections == 0
            || self.server.mcp_max_sessions == 0
            || self.server.mcp_max_streams == 0
            || self.server.mcp_max_streams_per_session == 0
        {
            return Err(invalid(
                "server".into(),
                "max_concurrent_calls, max_message_bytes, max_connections and the mcp_max_* limits must be at least 1"
                    .into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
