//! `[a2a]`: the A2A 1.0 JSON-RPC binding of `skillet serve --http` — whether it is on, the URL
//! and provider the Agent Card advertises for it, the bounds of its in-memory task store, and
//! push notifications (`push`, `push_allow`: off unless turned on, only to allowed origins).
//!
//! Only configuration lives here; the binding itself is `host::a2a`.

use std::time::Duration;

use serde::Deserialize;

/// Default most tasks kept by the A2A task store.
pub const DEFAULT_MAX_TASKS: usize = 1000;

/// Default most bytes of tasks the A2A task store keeps (their encoded size).
pub const DEFAULT_MAX_TASK_BYTES: usize = 256 * 1024 * 1024;

/// Default time a finished task stays readable (`GetTask`), in seconds.
pub const DEFAULT_TASK_TTL_SECONDS: f64 = 3600.0;

/// `[a2a]`. Every key is optional.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct A2aConfig {
    /// Serve (and advertise on the card) the A2A JSON-RPC binding at `POST /a2a`.
    pub jsonrpc: bool,
    /// Public URL of the JSON-RPC endpoint (default: `http://LISTEN/a2a`).
    pub url: Option<String>,
    /// The card's `provider` (both keys needed to publish it).
    pub provider: Option<A2aProvider>,
    /// Most tasks kept; see the task store's documentation for what happens when it is full.
    pub max_tasks: usize,
    /// Most bytes of tasks kept (each task's encoded size: input, history, artifacts); the
    /// oldest finished tasks are evicted beyond it.
    pub max_task_bytes: usize,
    /// How long a finished task stays readable, in seconds.
    pub task_ttl_seconds: f64,
    /// Send push notifications to client webhooks (only under `push_allow`).
    pub push: bool,
    /// The origins webhooks may be under: `"https://hooks.example.com"`, or
    /// `{ origin = "http://127.0.0.1:9000", private = true }` to allow a private, loopback or
    /// link-local address.
    pub push_allow: Vec<PushAllowEntry>,
}

/// One `push_allow` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PushAllowEntry {
    /// An origin whose host must resolve to public addresses.
    Origin(String),
    /// An origin, and whether its host may resolve to private addresses.
    Table {
        /// `scheme://host[:port][/path]`.
        origin: String,
        /// Allow private, loopback and link-local addresses for this origin's host.
        #[serde(default)]
        private: bool,
    },
}

pub use skillet_host::a2a::A2aProvider;
use skillet_host::a2a::{PushAllow, PushAllowError, PushOptions};

impl Default for A2aConfig {
    fn default() -> Self {
        A2aConfig {
            jsonrpc: true,
            url: None,
            provider: None,
            max_tasks: DEFAULT_MAX_TASKS,
            max_task_bytes: DEFAULT_MAX_TASK_BYTES,
            task_ttl_seconds: DEFAULT_TASK_TTL_SECONDS,
            push: false,
            push_allow: Vec::new(),
        }
    }
}

impl A2aConfig {
    /// The finished-task lifetime (a negative or non-finite value means zero).
    pub fn task_ttl(&self) -> Duration {
        Duration::try_from_secs_f64(self.task_ttl_seconds).unwrap_or(Duration::ZERO)
    }

    /// The push notification options when `push` is on; a bad `push_allow` entry, or `push`
    /// on without any entry, is an error saying what to write.
    pub fn push_options(&self) -> Result<Option<PushOptions>, PushConfigError> {
        if !self.push {
            return Ok(None);
        }
        if self.push_allow.is_empty() {
            return Err(PushConfigError::NoOrigins);
        }
        let allow = self
            .push_allow
            .iter()
            .map(|entry| match entry {
                PushAllowEntry::Origin(origin) => PushAllow::parse(origin, false),
                PushAllowEntry::Table { origin, private } => PushAllow::parse(origin, *private),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(PushOptions { allow }))
    }
}

/// `[a2a] push` cannot be turned on as written.
#[derive(Debug, thiserror::Error)]
pub enum PushConfigError {
    /// `push = true` with an empty `push_allow`.
    #[error(
        "[a2a] push = true needs push_allow: the origins webhooks may be under, e.g. push_allow = [\"https://hooks.example.com\"]"
    )]
    NoOrigins,
    /// A bad entry.
    #[error(transparent)]
    Entry(#[from] PushAllowError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_with_defaults_and_rejects_unknown_keys() {
        let config: A2aConfig = toml::from_str(
            "url = \"https://a/a2a\"\nmax_tasks = 5\n[provider]\norganization = \"O\"\nurl = \"https://o\"\n",
        )
        .unwrap();
        assert!(config.jsonrpc);
        assert_eq!(config.max_tasks, 5);
        assert_eq!(config.task_ttl(), Duration::from_secs(3600));
        assert_eq!(config.provider.unwrap().organization, "O");
        assert!(toml::from_str::<A2aConfig>("bindings = []").is_err());
        let off: A2aConfig = toml::from_str("jsonrpc = false\ntask_ttl_seconds = -1").unwrap();
        assert!(!off.jsonrpc);
        assert_eq!(off.task_ttl(), Duration::ZERO);
    }

    #[test]
    fn push_is_off_by_default_and_needs_valid_origins_when_on() {
        assert!(A2aConfig::default().push_options().unwrap().is_none());
        let on: A2aConfig = toml::from_str(
            "push = true\npush_allow = [\"https://hooks.example.com\", {origin = \"http://127.0.0.1:9\", private = true}]",
        )
        .unwrap();
        assert_eq!(on.push_options().unwrap().unwrap().allow.len(), 2);
        let none: A2aConfig = toml::from_str("push = true").unwrap();
        assert!(matches!(
            none.push_options(),
            Err(PushConfigError::NoOrigins)
        ));
        let bad: A2aConfig =
            toml::from_str("push = true\npush_allow = [\"hooks.example.com\"]").unwrap();
        let error = bad.push_options().unwrap_err().to_string();
        assert!(error.contains("hooks.example.com"), "{error}");
    }
}
