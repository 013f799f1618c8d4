//! Sandbox policy: the limits, environment, filesystem view and network access a child gets.
//!
//! Plain data, deserializable from a host's `skillet.toml` (`deny_unknown_fields` everywhere, so a
//! typo is an error rather than a silently ignored limit). Nothing here touches the OS; the backend
//! turns a policy into rlimits, Landlock rules and namespaces (see `process.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

/// Everything a backend needs to know about how to confine one child.
///
/// `Default` is a conservative policy suitable for a JSON-in/JSON-out command tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxPolicy {
    /// Kernel resource limits applied to the child (and inherited by its descendants).
    pub limits: ResourceLimits,
    /// Wall-clock budget for [`crate::SandboxBackend::run`], in milliseconds. Interactive children
    /// use [`crate::InteractiveOptions::max_lifetime`] instead.
    pub timeout_ms: u64,
    /// Bytes of stdout kept; producing more ends the run with
    /// [`crate::Outcome::OutputLimitExceeded`].
    pub stdout_limit_bytes: usize,
    /// Bytes of stderr kept. In `run` mode more ends the run like stdout; an interactive child only
    /// loses the oldest bytes (its stderr is a log, not a result).
    pub stderr_limit_bytes: usize,
    /// The child's environment (it never inherits the engine's wholesale).
    pub env: EnvPolicy,
    /// What the child may see of the filesystem besides its working directory.
    pub filesystem: FilesystemPolicy,
    /// Whether the child may use the network.
    pub network: NetworkAccess,
    /// Who the child runs as when the engine runs as root.
    pub identity: ChildIdentity,
    /// What to do when this platform cannot enforce part of the policy.
    pub enforcement: Enforcement,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        Self {
            limits: ResourceLimits::default(),
            timeout_ms: 30_000,
            stdout_limit_bytes: 4 * 1024 * 1024,
            stderr_limit_bytes: 256 * 1024,
            env: EnvPolicy::default(),
            filesystem: FilesystemPolicy::default(),
            network: NetworkAccess::Deny,
            identity: ChildIdentity::default(),
            enforcement: Enforcement::BestEffort,
        }
    }
}

impl SandboxPolicy {
    /// The wall-clock budget of a `run` call.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

/// Resource limits (`setrlimit(2)`); `None` leaves the engine's own limit in place.
///
/// Soft and hard limits are set to the same value, except CPU time, whose hard limit is one second
/// above the soft one so the child first gets `SIGXCPU` (classified as a timeout) before `SIGKILL`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResourceLimits {
    /// `RLIMIT_AS`: virtual address space in bytes, per process. Hitting it makes allocations
    /// fail, and [`crate::Outcome::OutOfMemory`] is then recognised from stderr. Runtimes that
    /// reserve large virtual ranges up front (JVM, Go, V8) need a generous value.
    pub address_space_bytes: Option<u64>,
    /// Resident memory (RAM, and swap) of the child and all its descendants together, in bytes.
    /// Enforced by a per-child memory cgroup when available: the kernel OOM-kills a child over
    /// it, reported exactly as [`crate::Outcome::OutOfMemory`]. Ignored without memory cgroups.
    pub memory_bytes: Option<u64>,
    /// `RLIMIT_CPU`: CPU seconds across all threads.
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_NOFILE`: open file descriptors.
    pub open_files: Option<u64>,
    /// Processes (and threads). Enforced by the child's own pids cgroup when available, and by
    /// `RLIMIT_NPROC` unless that cgroup holds a child running as the dropped uid (the rlimit
    /// counts every process of the child's uid, and root ignores it: see the crate doc).
    pub processes: Option<u64>,
    /// `RLIMIT_FSIZE`: largest file the child may write, in bytes (exceeding it raises `SIGXFSZ`).
    pub file_size_bytes: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        Self {
            address_space_bytes: Some(1024 * 1024 * 1024),
            memory_bytes: Some(1024 * 1024 * 1024),
            cpu_seconds: Some(60),
            open_files: Some(256),
            processes: Some(64),
            file_size_bytes: Some(64 * 1024 * 1024),
        }
    }
}

/// The child's environment: built from nothing, never inherited wholesale.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvPolicy {
    /// Names of engine environment variables copied into the child when set (an allow-list).
    pub inherit: Vec<String>,
    /// Variables set explicitly; they win over inherited ones. Values may be credentials, so they
    /// are secrets: never logged, never in `Debug`.
    pub set: BTreeMap<String, SecretString>,
    /// Point `HOME` and `TMPDIR` at the working directory unless set explicitly, so well-behaved
    /// programs write inside their confinement.
    pub home_is_workdir: bool,
}

impl EnvPolicy {
    /// `text` with every value this policy sets in the child's environment replaced by
    /// `[REDACTED]`, for quoting what a child printed. Values under four bytes are left (they
    /// would shred ordinary text), and so is `PATH`, which is no secret and would shred every
    /// path a program prints.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (name, value) in &self.set {
            let value = value.expose_secret();
            if value.len() >= 4 && name != "PATH" {
                text = text.replace(value, "[REDACTED]");
            }
        }
        text
    }
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            inherit: vec!["PATH".into(), "LANG".into(), "LC_ALL".into(), "TZ".into()],
            set: BTreeMap::new(),
            home_is_workdir: true,
        }
    }
}

/// Filesystem access besides the working directory (which is always read-write).
///
/// Enforced with Landlock when the kernel supports it; see [`crate::PlatformReport`].
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilesystemPolicy {
    /// Grant read and execute on the usual system locations (`/usr`, `/lib*`, `/bin`, loader and
    /// locale files under `/etc`, `/dev/null`, ...). Locations missing on this machine are skipped.
    pub system_read_only: bool,
    /// Extra paths readable (and executable) by the child. Each must exist.
    pub read_only: Vec<PathBuf>,
    /// Extra paths the child may read and write. Each must exist.
    pub read_write: Vec<PathBuf>,
}

impl Default for FilesystemPolicy {
    fn default() -> Self {
        Self {
            system_read_only: true,
            read_only: Vec::new(),
            read_write: Vec::new(),
        }
    }
}

/// Network access for the child.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkAccess {
    /// No network: a fresh network namespace (only a down loopback) and, with Landlock ABI 4+,
    /// TCP bind/connect denied as well.
    #[default]
    Deny,
    /// The engine's network.
    Allow,
}

/// The unprivileged identity a child runs as when the engine is root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChildIdentity {
    /// User id (default 65534, `nobody`). Need not exist in `/etc/passwd`.
    pub uid: u32,
    /// Group id (default 65534, `nogroup`).
    pub gid: u32,
}

impl Default for ChildIdentity {
    fn default() -> Self {
        Self {
            uid: 65534,
            gid: 65534,
        }
    }
}

/// What to do when the platform cannot enforce part of a policy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Enforcement {
    /// Apply what the platform supports; the gaps are in [`crate::PlatformReport`].
    #[default]
    BestEffort,
    /// Refuse to spawn ([`crate::Outcome::SpawnFailed`]) unless the process limit is enforced
    /// (cgroup or rlimit under an unprivileged uid), Landlock is available, and — when the
    /// network is denied — a network namespace can be created.
    Strict,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_parses_from_toml_with_defaults_for_missing_fields() {
        let policy: SandboxPolicy = toml::from_str(
            r#"
            timeout_ms = 500
            network = "allow"
            [limits]
            processes = 8
            [env]
            inherit = ["PATH"]
            set = { API_KEY = "s3cret" }
            "#,
        )
        .expect("valid policy");
        assert_eq!(policy.timeout(), Duration::from_millis(500));
        assert_eq!(policy.network, NetworkAccess::Allow);
        assert_eq!(policy.limits.processes, Some(8));
        assert_eq!(
            policy.limits.open_files,
            ResourceLimits::default().open_files
        );
        assert!(
            !format!("{policy:?}").contains("s3cret"),
            "secrets must not reach Debug"
        );
    }

    #[test]
    fn policy_with_unknown_field_is_rejected() {
        let err = toml::from_str::<SandboxPolicy>("[limits]\nprocesess = 8\n").unwrap_err();
        assert!(err.to_string().contains("processes"), "{err}");
    }

    #[test]
    fn redact_hides_each_value_set_for_the_child_but_path_and_tiny_values() {
        let mut env = EnvPolicy::default();
        env.set.insert("API_KEY".into(), "sk-canary-123".into());
        env.set.insert("PATH".into(), "/usr/local/bin".into());
        env.set.insert("N".into(), "1".into());
        let printed = "key=sk-canary-123 path=/usr/local/bin/python n=1";
        assert_eq!(
            env.redact(printed),
            "key=[REDACTED] path=/usr/local/bin/python n=1"
        );
    }
}
