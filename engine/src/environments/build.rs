//! Building one environment outside the sandbox — with `uv` for Python here, and the
//! once-per-key machinery (`build_once`) every kind shares (Node's `npm` in `node`): the only
//! step of a skill's life that touches the network, and only the package index.
//!
//! Once per key, across processes: the builder holds `<root>/<key>.lock` (an exclusive `flock`)
//! while it looks and builds; a finished environment is renamed into place in one step
//! (`<root>/.building-<key>-<pid>` → `<root>/<key>`) with its marker file
//! ([`MARKER`]) inside, so a reader sees either nothing or a whole environment. A builder that
//! died leaves a `.building-*` directory, removed by the next one (which holds the lock).
//!
//! uv and npm run with a cleared environment (the proxy and TLS variables pass; never the
//! host's `HOME`, `GIT_*`, `SSH_*` or credentials), a private `HOME` under the root
//! (`<root>/.home`: no `~/.netrc`, `~/.gitconfig`, `~/.npmrc` or `~/.config/uv` of the host's
//! user is read) and git told to reach nothing. uv gets `--no-config` (no `uv.toml` decides
//! where packages come from), its own cache under the root, no Python downloads, the host's
//! index through its environment (`UV_DEFAULT_INDEX`: argv is public in `/proc`), and
//! `--only-binary :all:` unless `[skills] builds` allows source distributions (see `supply`).
//! The marker holds the index without its credentials.
//!
//! Not here: which requirements (`requirements`), which interpreter (`interpreters`).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::error::{CacheStep, EnvironmentError};
use super::requirements::Requirements;
use super::supply::{Builds, PackageIndex};

/// The file a finished environment holds: what it was built from (JSON).
pub(crate) const MARKER: &str = "skillet-env.json";

/// The longest a build may take before it is stopped and reported as failed.
const BUILD_TIMEOUT: Duration = Duration::from_secs(900);

/// Variables uv may see from the engine's environment: how to reach the network, nothing about
/// where to fetch from.
const PASSED_VARIABLES: &[&str] = &[
    "PATH",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// What installs a Python environment's packages: uv when the host has it, else the
/// interpreter's own venv and pip (`pip`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Installer {
    /// uv, at this path.
    Uv(PathBuf),
    /// `python -m venv` and `pip`.
    Pip,
}

impl Installer {
    fn name(&self) -> &'static str {
        match self {
            Installer::Uv(_) => "uv",
            Installer::Pip => "pip",
        }
    }
}

/// One build to do.
#[derive(Debug)]
pub(crate) struct BuildPlan<'a> {
    pub installer: &'a Installer,
    pub python: &'a Path,
    pub python_version: Option<&'a str>,
    pub root: &'a Path,
    pub key: &'a str,
    pub requirements: &'a Requirements,
    pub index: Option<&'a PackageIndex>,
    pub builds: Builds,
}

/// What a build found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Built {
    /// Another build (this process's or another's) had finished it.
    Existing(PathBuf),
    /// Built now.
    Fresh(PathBuf),
}

/// The directory of the environment with `key` under `root`, when it is finished.
pub(crate) fn finished(root: &Path, key: &str) -> Option<PathBuf> {
    let dir = root.join(key);
    dir.join(MARKER).is_file().then_some(dir)
}

/// Builds the environment of `plan` unless it exists. Blocking (file lock, uv): run it on the
/// blocking pool.
pub(crate) fn build(plan: &BuildPlan<'_>) -> Result<Built, EnvironmentError> {
    build_once(plan.root, plan.key, |staging| build_into(plan, staging))
}

/// Makes the environment `<root>/<key>` unless it exists: under the key's lock, `fill` makes a
/// whole environment (its marker last) in a staging directory, which is then renamed into
/// place. Shared by every kind of environment (Python here, Node in `node`).
pub(crate) fn build_once(
    root: &Path,
    key: &str,
    fill: impl FnOnce(&Path) -> Result<(), EnvironmentError>,
) -> Result<Built, EnvironmentError> {
    std::fs::create_dir_all(root).map_err(cache(CacheStep::Create, root))?;
    let lock_path = root.join(format!("{key}.lock"));
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(cache(CacheStep::Open, &lock_path))?;
    // `File::lock` is newer than our MSRV; this is the same `flock(2)`.
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| cache(CacheStep::Lock, &lock_path)(e.into()))?;
    if let Some(dir) = finished(root, key) {
        return Ok(Built::Existing(dir));
    }
    remove_abandoned(root, key);
    let staging = root.join(format!(".building-{key}-{}", std::process::id()));
    let result = fill(&staging);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result?;
    let dir = root.join(key);
    // A directory without its marker is a leftover of a build from before markers: replace it.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staging);
        cache(CacheStep::MoveIntoPlace, &dir)(e)
    })?;
    drop(lock);
    Ok(Built::Fresh(dir))
}

/// The error of a cache step on `path`, for `map_err`.
pub(crate) fn cache(
    step: CacheStep,
    path: &Path,
) -> impl FnOnce(std::io::Error) -> EnvironmentError {
    let path = path.to_path_buf();
    move |e| EnvironmentError::Cache {
        step,
        path,
        source: e.into(),
    }
}

fn build_into(plan: &BuildPlan<'_>, staging: &Path) -> Result<(), EnvironmentError> {
    let installed = match plan.installer {
        Installer::Uv(uv) => install_with_uv(plan, uv, staging),
        Installer::Pip => super::pip::build_into(plan, staging),
    };
    installed.map_err(|why| explain_refusal(plan, why))?;
    let marker = serde_json::json!({
        "requirements": plan.requirements.lines,
        "sources": plan.requirements.sources,
        "interpreter": plan.python,
        "python_version": plan.python_version,
        "index": plan.index.map(PackageIndex::without_credentials),
        "builds": plan.builds.as_str(),
        "installer": plan.installer.name(),
    });
    let marker_path = staging.join(MARKER);
    std::fs::write(&marker_path, format!("{marker:#}\n"))
        .map_err(cache(CacheStep::Write, &marker_path))
}

/// An installer's failure and, when wheels-only refused a source build, what to change (the
/// tool's output is already redacted by [`run`]).
fn explain_refusal(plan: &BuildPlan<'_>, why: EnvironmentError) -> EnvironmentError {
    let said = match why.root_cause() {
        EnvironmentError::BuildFailed { output, .. } => output.as_str(),
        _ => "",
    };
    // uv's words, then pip's.
    let refused_build = [
        "no usable wheels",
        "building from source is disabled",
        "Could not find a version that satisfies",
    ]
    .iter()
    .any(|words| said.contains(words));
    match plan.builds {
        Builds::WheelsOnly if refused_build => EnvironmentError::SourceBuildRefused {
            failure: Box::new(why),
            host_list: plan.requirements.sources.iter().any(|s| s.starts_with('[')),
        },
        _ => why,
    }
}

fn install_with_uv(
    plan: &BuildPlan<'_>,
    uv_program: &Path,
    staging: &Path,
) -> Result<(), EnvironmentError> {
    let uv_cache = plan.root.join(".uv-cache");
    let mut venv = uv(uv_program, plan.root, &uv_cache)?;
    venv.arg("venv")
        .arg("--python")
        .arg(plan.python)
        .arg("--relocatable")
        .arg(staging);
    run(venv, "uv venv")?;
    let requirements = staging.join("skillet-requirements.txt");
    std::fs::write(&requirements, plan.requirements.file_text())
        .map_err(cache(CacheStep::Write, &requirements))?;
    let mut install = uv(uv_program, plan.root, &uv_cache)?;
    install
        .args(["pip", "install", "--python"])
        .arg(staging.join("bin/python"));
    if let Some(index) = plan.index {
        install.env("UV_DEFAULT_INDEX", index.expose());
    }
    if plan.builds == Builds::WheelsOnly {
        install.args(["--only-binary", ":all:"]);
    }
    install.arg("-r").arg(&requirements);
    run(install, "uv pip install")
}

/// `program` with a cleared environment but for [`PASSED_VARIABLES`], the private `HOME`
/// `<root>/.home` (made here) and git told to read no configuration and reach nothing.
pub(crate) fn isolated(program: &Path, root: &Path) -> Result<Command, EnvironmentError> {
    let home = root.join(".home");
    std::fs::create_dir_all(&home).map_err(cache(CacheStep::Create, &home))?;
    let mut command = Command::new(program);
    command.env_clear();
    for name in PASSED_VARIABLES {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        // An empty allow-list: git fetches over no protocol.
        .env("GIT_ALLOW_PROTOCOL", "")
        .env("GIT_SSH_COMMAND", "false");
    Ok(command)
}

/// uv with a cleared environment, no user configuration and its cache under the root.
fn uv(program: &Path, root: &Path, cache: &Path) -> Result<Command, EnvironmentError> {
    let mut command = isolated(program, root)?;
    command
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_NO_PROGRESS", "1")
        .arg("--no-config")
        .arg("--quiet")
        .arg("--cache-dir")
        .arg(cache);
    Ok(command)
}

/// Runs `command` to its end (within [`BUILD_TIMEOUT`]); its stderr, redacted, is the error.
pub(crate) fn run(mut command: Command, what: &'static str) -> Result<(), EnvironmentError> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| EnvironmentError::BuildToolStart {
            what,
            program: PathBuf::from(command.get_program()),
            source: e.into(),
        })?;
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(stderr) = stderr.as_mut() {
            let _ = stderr.take(64 * 1024).read_to_string(&mut text);
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > BUILD_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(EnvironmentError::BuildTimeout {
                    what,
                    after: BUILD_TIMEOUT,
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                return Err(EnvironmentError::BuildToolWait {
                    what,
                    source: e.into(),
                });
            }
        }
    };
    let stderr = reader.join().unwrap_or_default();
    if status.success() {
        return Ok(());
    }
    let cut: String = stderr.trim().chars().take(4000).collect();
    Err(EnvironmentError::BuildFailed {
        what,
        status,
        output: crate::secrets::REDACTOR.redact_owned(cut),
    })
}

/// Removes staging directories of builds of `key` that never finished (the caller holds the
/// key's lock, so none of them is in progress).
fn remove_abandoned(root: &Path, key: &str) {
    let prefix = format!(".building-{key}-");
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
