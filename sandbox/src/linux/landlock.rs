//! Landlock rulesets for children, built in the parent with the `landlock` crate.
//!
//! The ruleset is created here (it allocates and opens path descriptors) and only its descriptor
//! crosses the fork: the child calls `landlock_restrict_self` on it (see `limits.rs`). Best effort
//! by ABI: rights the kernel does not know are dropped by the crate, so the same code yields the
//! strongest confinement each kernel offers.
//!
//! Rules: the working directory and `read_write` paths get every right; system and `read_only`
//! paths get read and execute; with the network denied, TCP bind/connect are handled with no rule
//! (denied, ABI 4+); signals and abstract Unix sockets are scoped to the child's domain (ABI 6+),
//! so a child cannot signal the engine or reach its abstract sockets.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use crate::error::SandboxError;
use crate::policy::FilesystemPolicy;

/// The newest ABI whose rights we ask for; older kernels get the subset they know.
const TARGET_ABI: ABI = ABI::V9;

/// System locations granted read+execute when `system_read_only` is on (missing ones skipped).
const SYSTEM_READ_ONLY: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    // Public tables programs read at start-up: Python's `mimetypes` (openpyxl, python-docx
    // and others fail to import without it) and fontconfig's configuration.
    "/etc/mime.types",
    "/etc/fonts",
    "/dev/urandom",
    "/dev/random",
];

/// Device files any program may write to harmlessly.
const SYSTEM_READ_WRITE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Paths with the rights they get, resolved from a policy plus the working directory and program.
#[derive(Debug, Default)]
pub(crate) struct FilesystemRules {
    read_only: Vec<PathBuf>,
    read_write: Vec<PathBuf>,
}

impl FilesystemRules {
    /// Resolves `policy` for a child working in `workdir` and running `program`.
    /// Paths the policy names explicitly must exist; built-in system paths are skipped if absent.
    pub(crate) fn resolve(
        policy: &FilesystemPolicy,
        workdir: &Path,
        program: &Path,
    ) -> Result<Self, SandboxError> {
        let mut rules = FilesystemRules::default();
        if policy.system_read_only {
            rules.read_only.extend(existing(SYSTEM_READ_ONLY));
            rules.read_write.extend(existing(SYSTEM_READ_WRITE));
        }
        for path in &policy.read_only {
            rules.read_only.push(must_exist(path)?);
        }
        for path in &policy.read_write {
            rules.read_write.push(must_exist(path)?);
        }
        rules.read_only.push(program.to_path_buf());
        rules.read_write.push(workdir.to_path_buf());
        Ok(rules)
    }

    /// Creates the ruleset and returns its descriptor, or `None` when the kernel has no Landlock.
    pub(crate) fn create_ruleset(
        &self,
        deny_network: bool,
    ) -> Result<Option<OwnedFd>, SandboxError> {
        let fs_all = AccessFs::from_all(TARGET_ABI);
        let mut ruleset = Ruleset::default()
            .handle_access(fs_all)
            .map_err(landlock_error)?;
        if deny_network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(TARGET_ABI))
                .map_err(landlock_error)?;
        }
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(landlock_error)?;
        let mut created = ruleset.create().map_err(landlock_error)?;
        for (paths, access) in [
            (&self.read_only, AccessFs::from_read(TARGET_ABI)),
            (&self.read_write, fs_all),
        ] {
            for path in paths {
                let fd = PathFd::new(path).map_err(|e| SandboxError::Landlock {
                    detail: format!("open {}: {e}", path.display()),
                })?;
                created = created
                    .add_rule(PathBeneath::new(fd, rights_for(path, access)))
                    .map_err(landlock_error)?;
            }
        }
        Ok(created.into())
    }
}

/// Directory-only rights are invalid on a file rule; keep those a file can have.
fn rights_for(path: &Path, access: BitFlags<AccessFs>) -> BitFlags<AccessFs> {
    if path.is_dir() {
        access
    } else {
        access & AccessFs::from_file(TARGET_ABI)
    }
}

fn existing(paths: &[&str]) -> impl Iterator<Item = PathBuf> {
    paths.iter().map(PathBuf::from).filter(|p| p.exists())
}

fn must_exist(path: &Path) -> Result<PathBuf, SandboxError> {
    path.canonicalize().map_err(|e| SandboxError::Policy {
        detail: format!("filesystem path {}: {e}", path.display()),
    })
}

fn landlock_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Landlock {
        detail: e.to_string(),
    }
}
