//! What a skill's scripts run with: the interpreters (resolved once to programs the sandbox can
//! execute, `interpreters`) and, for a skill that declares Python requirements, its own
//! environment built with `uv` (`requirements`, `build`) — for one that declares Node
//! dependencies (`package.json`), one installed with `npm` (`node`); and the system tools the
//! host offers them (`system_tools`).
//!
//! One environment per distinct requirement set and interpreter, keyed by their SHA-256, in a
//! cache directory ([`Environments::root`]): `[skills] environments_dir`, else
//! `$XDG_CACHE_HOME/skillet/envs` (`~/.cache/skillet/envs`), else — when the sandbox runs
//! children as another uid that cannot enter that directory (root's home is private) —
//! `/var/cache/skillet/envs`. Built outside the sandbox and before the script runs (at
//! `skillet validate --prepare`, at `serve` start, or on a script's first use, which reports
//! progress); scripts then run the environment's interpreter inside the sandbox, with the
//! environment read-only and no network. Builds of one key happen once, also across processes
//! (see `build`); a failure, an [`EnvironmentError`] (`error`), is remembered (`retry`; the
//! skill is `Blocked` with it) for
//! [`RETRY_FIRST`], doubling per consecutive failure up to [`RETRY_MAX`]; after that the next
//! use, or `serve`'s retry pass, builds again — a package index that was down heals itself, and
//! a requirement fixed in the folder is a new key, built on its next use.
//!
//! Its own module because it sits between `skill` (what a skill declares) and `files` (which
//! runs scripts) and talks to a program (`uv`) neither of them knows. Not here: the sandbox
//! (`skillet-sandbox`), running scripts (`files::scripts`).

mod build;
mod error;
mod interpreters;
mod node;
mod node_manifest;
mod pep508;
mod pip;
mod requirements;
mod retry;
mod supply;
mod system_tools;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use error::{CacheStep, EnvironmentError, Shared};
pub use interpreters::{Interpreter, Interpreters, SandboxUser, reachable};
pub use node::{NODE_FLAGS, NodePackage};
pub use node_manifest::ManifestError;
#[cfg(feature = "fuzzing")]
pub use node_manifest::{RegistryManifest, registry_manifest};
pub use pep508::{
    Marker, MarkerOp, MarkerValue, Op, Requirement, RequirementError, Specifier,
    parse as parse_requirement,
};
pub use requirements::{
    REQUIREMENT_FILES, Requirements, SkillFolder, declared as declared_requirements,
};
pub use supply::{Builds, PackageIndex};
pub(crate) use system_tools::missing_program_hint;
pub use system_tools::{SystemTool, SystemTools};

use retry::Failure;

/// How long the first failed build of an environment is remembered before it is tried again.
pub const RETRY_FIRST: Duration = Duration::from_secs(30);
/// The longest a failed build is remembered (the wait doubles per consecutive failure).
pub const RETRY_MAX: Duration = Duration::from_secs(15 * 60);

/// The uv version Skillet is tested with (`mock-llm/tests/python/requirements.txt` pins it).
pub const TESTED_UV_VERSION: &str = "0.13.9";

/// The host's settings for environments (from `[skills]`; see `files::FilesConfig`).
#[derive(Debug, Clone, Default)]
pub struct EnvironmentOptions {
    /// The `uv` program (`None`: `uv` on the engine's `PATH`).
    pub uv: Option<PathBuf>,
    /// Where environments live (`None`: the default in the module doc).
    pub dir: Option<PathBuf>,
    /// The package index uv installs from (`None`: uv's default, PyPI); a secret when it
    /// carries credentials (see `supply`).
    pub package_index: Option<PackageIndex>,
    /// `[skills] builds` (`None`: wheels only for what a folder declares, sdists allowed for
    /// the host's own `[skills.environments.NAME]` lists).
    pub builds: Option<Builds>,
    /// Requirements the host gives a skill by name (they replace the folder's).
    pub skills: BTreeMap<String, Vec<String>>,
}

/// Which ecosystem an environment serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvironmentKind {
    /// `.py` scripts: a virtual environment built with uv.
    Python,
    /// `.js`/`.mjs`/`.cjs` scripts: a `node_modules` installed with npm.
    Node,
}

impl EnvironmentKind {
    /// `Python` / `Node`, for messages.
    pub fn label(self) -> &'static str {
        match self {
            EnvironmentKind::Python => "Python",
            EnvironmentKind::Node => "Node",
        }
    }

    /// The kind of environment a script with this extension runs in, if any.
    pub fn of_extension(extension: &str) -> Option<EnvironmentKind> {
        match extension {
            "py" => Some(EnvironmentKind::Python),
            "js" | "mjs" | "cjs" => Some(EnvironmentKind::Node),
            _ => None,
        }
    }

    /// What is said (a progress event, a console line) as `skill`'s environment of this kind
    /// starts building from `requirements`.
    pub fn build_notice(self, skill: &str, requirements: &Requirements) -> String {
        let lines = requirements.lines.join(", ");
        match self {
            EnvironmentKind::Python => {
                format!("building the Python environment of skill `{skill}` ({lines}) with uv")
            }
            EnvironmentKind::Node => {
                format!("installing the Node packages of skill `{skill}` ({lines}) with npm")
            }
        }
    }
}

/// A built environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// Which kind.
    pub kind: EnvironmentKind,
    /// Its directory (`<root>/<key>`).
    pub dir: PathBuf,
    /// The requirements it was built from (`name@range` lines for Node).
    pub requirements: Requirements,
}

impl Environment {
    /// A Python environment's interpreter, `<dir>/bin/python` (a symlink to the base
    /// interpreter; run it with this path as `argv[0]`, or Python does not find the
    /// environment).
    pub fn python(&self) -> PathBuf {
        self.dir.join("bin/python")
    }

    /// A Node environment's packages.
    pub fn node_modules(&self) -> PathBuf {
        self.dir.join("node_modules")
    }
}

/// Where a skill's environment stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvironmentState {
    /// The skill declares no requirements.
    NotNeeded,
    /// Built and ready.
    Ready(Environment),
    /// Declared, not built yet (it will be on first use).
    NotBuilt {
        /// Which kind.
        kind: EnvironmentKind,
        /// What it will be built from.
        requirements: Requirements,
        /// Where it will be.
        dir: PathBuf,
    },
    /// It cannot be built: why (uv's message, a refused declaration, no uv, no interpreter).
    Failed(EnvironmentError),
}

/// The environments of every skill of a host. Share it in an `Arc`.
#[derive(Debug)]
pub struct Environments {
    options: EnvironmentOptions,
    root: PathBuf,
    python: Result<Interpreter, EnvironmentError>,
    node: Result<Interpreter, EnvironmentError>,
    user: Option<SandboxUser>,
    /// One slot per key: builds of one key in this process wait on each other, and the
    /// outcome (a failure too) is kept.
    slots: Mutex<HashMap<String, Slot>>,
}

/// One key's build outcome (`None`: not attempted in this process yet).
type Slot = Arc<tokio::sync::Mutex<Option<Result<PathBuf, Failure>>>>;

impl Environments {
    /// Environments for `options`, built with `python` (the resolved `py` interpreter), for
    /// children running as `user` (`None`: the engine's uid).
    pub fn new(
        options: EnvironmentOptions,
        python: Option<&Result<Interpreter, EnvironmentError>>,
        user: Option<SandboxUser>,
    ) -> Self {
        let root = options.dir.clone().unwrap_or_else(|| default_root(user));
        if let Some(credential) = options.package_index.as_ref().and_then(|i| i.credential()) {
            crate::secrets::REDACTOR.add(credential);
        }
        let python = python
            .cloned()
            .unwrap_or(Err(EnvironmentError::NoInterpreter { extension: "py" }));
        Environments {
            options,
            root,
            python,
            node: Err(EnvironmentError::NoInterpreter { extension: "js" }),
            user,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The same, with `node` (the resolved `js` interpreter) for skills with Node dependencies.
    pub fn with_node(mut self, node: Option<&Result<Interpreter, EnvironmentError>>) -> Self {
        if let Some(node) = node {
            self.node = node.clone();
        }
        self
    }

    /// The cache directory environments live in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What builds Python environments here: uv when `[skills] uv` names it or it is on
    /// `PATH`, else the interpreter's own venv and pip. A `[skills] uv` that does not exist is
    /// an error (the host asked for that uv).
    pub(crate) fn installer(&self) -> Result<build::Installer, EnvironmentError> {
        match (&self.options.uv, self.uv()) {
            (_, Ok(uv)) => Ok(build::Installer::Uv(uv)),
            (Some(_), Err(why)) => Err(why),
            (None, Err(_)) => Ok(build::Installer::Pip),
        }
    }

    /// What `validate --scripts` says builds environments here.
    pub fn installer_description(&self) -> String {
        match self.installer() {
            Ok(build::Installer::Uv(uv)) => format!("uv: {}", uv.display()),
            Ok(build::Installer::Pip) => {
                "the interpreter's venv and pip (uv is not on PATH)".to_owned()
            }
            Err(why) => why.to_string(),
        }
    }

    /// The `uv` program, or why there is none.
    pub fn uv(&self) -> Result<PathBuf, EnvironmentError> {
        if let Some(uv) = &self.options.uv {
            return if uv.is_file() {
                Ok(uv.clone())
            } else {
                Err(EnvironmentError::UvMissing {
                    configured: uv.clone(),
                })
            };
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join("uv"))
            .find(|p| p.is_file())
            .ok_or(EnvironmentError::UvNotOnPath)
    }

    /// What `skill` needs, the key and the interpreter to build it with (reads its folder).
    fn plan(&self, skill: &SkillFolder) -> Result<Option<Planned>, EnvironmentError> {
        let plan = plan_of(skill, &self.options, &self.python)?;
        if plan.is_some() {
            self.check_root()?;
        }
        Ok(plan)
    }

    /// The sandbox's uid must be able to enter the cache directory to run an environment.
    fn check_root(&self) -> Result<(), EnvironmentError> {
        match self.user {
            Some(user) => {
                reachable(&self.root, user).map_err(|why| EnvironmentError::RootUnreachable {
                    root: self.root.clone(),
                    why: Box::new(why),
                })
            }
            None => Ok(()),
        }
    }

    /// Where `skill`'s environment stands, without building anything.
    pub fn state(&self, skill: &SkillFolder) -> EnvironmentState {
        let (requirements, key, _) = match self.plan(skill) {
            Ok(Some(plan)) => plan,
            Ok(None) => return EnvironmentState::NotNeeded,
            Err(why) => return EnvironmentState::Failed(why),
        };
        self.judged(EnvironmentKind::Python, requirements, &key)
    }

    /// Where `skill`'s Node environment stands, without building anything.
    pub fn node_state(&self, skill: &SkillFolder) -> EnvironmentState {
        let (package, key) = match self.node_plan(skill) {
            Ok(Some(plan)) => plan,
            Ok(None) => return EnvironmentState::NotNeeded,
            Err(why) => return EnvironmentState::Failed(EnvironmentError::Node(Box::new(why))),
        };
        self.judged(EnvironmentKind::Node, package.requirements, &key)
    }

    /// Every environment `skill` declares, with where each stands (empty: none).
    pub fn states(&self, skill: &SkillFolder) -> Vec<EnvironmentState> {
        [self.state(skill), self.node_state(skill)]
            .into_iter()
            .filter(|state| *state != EnvironmentState::NotNeeded)
            .collect()
    }

    fn judged(
        &self,
        kind: EnvironmentKind,
        requirements: Requirements,
        key: &str,
    ) -> EnvironmentState {
        let now = Instant::now();
        if let Some(Err(failure)) = self.remembered(key)
            && !failure.due(now)
        {
            return EnvironmentState::Failed(failure.reason());
        }
        match build::finished(&self.root, key) {
            Some(dir) => EnvironmentState::Ready(Environment {
                kind,
                dir,
                requirements,
            }),
            None => EnvironmentState::NotBuilt {
                kind,
                requirements,
                dir: self.root.join(key),
            },
        }
    }

    fn node_plan(
        &self,
        skill: &SkillFolder,
    ) -> Result<Option<(NodePackage, String)>, EnvironmentError> {
        let Some(package) = node::declared(skill)? else {
            return Ok(None);
        };
        let node = self.node.as_ref().map_err(Clone::clone)?;
        self.check_root()?;
        let key = package.key(&node.program);
        Ok(Some((package, key)))
    }

    /// Makes every remembered failure due now (tests of the retry).
    #[cfg(test)]
    fn expire_failures(&self) {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        for slot in slots.values() {
            if let Ok(mut outcome) = slot.try_lock()
                && let Some(Err(failure)) = outcome.as_mut()
            {
                failure.retry_at = Instant::now();
            }
        }
    }

    fn remembered(&self, key: &str) -> Option<Result<PathBuf, Failure>> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = slots.get(key)?;
        slot.try_lock().ok().and_then(|outcome| outcome.clone())
    }

    /// `skill`'s Python environment, built now if it is not yet (`on_build` is told first,
    /// with what it is built from; it is not called when the environment exists).
    /// `Ok(None)`: the skill needs none.
    pub async fn prepare(
        &self,
        skill: &SkillFolder,
        on_build: &(dyn Fn(&Requirements) + Send + Sync),
    ) -> Result<Option<Environment>, EnvironmentError> {
        // Reading the folder is file I/O: off the runtime's threads.
        let planned = {
            let (skill, options, python) =
                (skill.clone(), self.options.clone(), self.python.clone());
            tokio::task::spawn_blocking(move || plan_of(&skill, &options, &python))
                .await
                .map_err(|e| EnvironmentError::Panicked {
                    what: "reading the requirements",
                    message: e.to_string(),
                })??
        };
        let Some((requirements, key, builds)) = planned else {
            return Ok(None);
        };
        let python = self.python.as_ref().map_err(Clone::clone)?;
        self.check_root()?;
        let installer = self.installer()?;
        let root = self.root.clone();
        let program = python.program.clone();
        let version = python.python_version.clone();
        let index = self.options.package_index.clone();
        let reqs = requirements.clone();
        let build_key = key.clone();
        let build = move || {
            build::build(&build::BuildPlan {
                installer: &installer,
                python: &program,
                python_version: version.as_deref(),
                root: &root,
                key: &build_key,
                requirements: &reqs,
                index: index.as_ref(),
                builds,
            })
        };
        let on_build = || on_build(&requirements);
        self.built_once(
            EnvironmentKind::Python,
            &requirements,
            &key,
            &on_build,
            build,
        )
        .await
        .map(Some)
    }

    /// `skill`'s environment of `kind`, built now if it is not yet ([`Self::prepare`] or
    /// [`Self::prepare_node`]).
    pub async fn prepare_kind(
        &self,
        kind: EnvironmentKind,
        skill: &SkillFolder,
        on_build: &(dyn Fn(&Requirements) + Send + Sync),
    ) -> Result<Option<Environment>, EnvironmentError> {
        match kind {
            EnvironmentKind::Python => self.prepare(skill, on_build).await,
            EnvironmentKind::Node => self.prepare_node(skill, on_build).await,
        }
    }

    /// `skill`'s Node environment, built now with npm if it is not yet (as [`Self::prepare`]).
    pub async fn prepare_node(
        &self,
        skill: &SkillFolder,
        on_build: &(dyn Fn(&Requirements) + Send + Sync),
    ) -> Result<Option<Environment>, EnvironmentError> {
        let planned = {
            let skill = skill.clone();
            tokio::task::spawn_blocking(move || node::declared(&skill))
                .await
                .map_err(|e| EnvironmentError::Panicked {
                    what: "reading package.json",
                    message: e.to_string(),
                })?
                .map_err(|why| EnvironmentError::Node(Box::new(why)))?
        };
        let Some(package) = planned else {
            return Ok(None);
        };
        let node = self
            .node
            .as_ref()
            .map_err(|why| EnvironmentError::Node(Box::new(why.clone())))?;
        self.check_root()?;
        let key = package.key(&node.program);
        let npm = node::npm_for(&node.program)?;
        let root = self.root.clone();
        let (build_key, build_package) = (key.clone(), package.clone());
        let build = move || node::build(&root, &build_key, &build_package, &npm);
        let on_build = || on_build(&package.requirements);
        self.built_once(
            EnvironmentKind::Node,
            &package.requirements,
            &key,
            &on_build,
            build,
        )
        .await
        .map(Some)
    }

    /// Where the scripts of `skill_dir` run from so that they find the Node environment
    /// `environment`'s packages: the skill's folder seen through a link directory under the
    /// root (see `node`). Run them with [`NODE_FLAGS`]; the link directory must be readable in
    /// the sandbox (it is under [`Self::root`]).
    pub fn node_entry(
        &self,
        environment: &Environment,
        skill_dir: &Path,
    ) -> Result<PathBuf, EnvironmentError> {
        node::link_skill(&self.root, &environment.dir, skill_dir)
    }

    /// The environment `key`, built by `build` (on the blocking pool) unless this process
    /// built it, or failed to and the failure is not due again, or another process finished
    /// it; `on_build` is told just before a build.
    async fn built_once(
        &self,
        kind: EnvironmentKind,
        requirements: &Requirements,
        key: &str,
        on_build: &(dyn Fn() + Send + Sync),
        build: impl FnOnce() -> Result<build::Built, EnvironmentError> + Send + 'static,
    ) -> Result<Environment, EnvironmentError> {
        let ready = |dir: PathBuf| Environment {
            kind,
            dir,
            requirements: requirements.clone(),
        };
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(slots.entry(key.to_owned()).or_default())
        };
        let mut outcome = slot.lock().await;
        let previous = match outcome.as_ref() {
            Some(Ok(dir)) => return Ok(ready(dir.clone())),
            Some(Err(failure)) if !failure.due(Instant::now()) => {
                return Err(failure.reason());
            }
            Some(Err(failure)) => Some(failure.clone()),
            None => None,
        };
        if let Some(dir) = build::finished(&self.root, key) {
            *outcome = Some(Ok(dir.clone()));
            return Ok(ready(dir));
        }
        on_build();
        let built = tokio::task::spawn_blocking(build)
            .await
            .map_err(|e| EnvironmentError::Panicked {
                what: "the environment build",
                message: e.to_string(),
            })
            .and_then(|r| r);
        match built {
            Ok(build::Built::Existing(dir) | build::Built::Fresh(dir)) => {
                *outcome = Some(Ok(dir.clone()));
                Ok(ready(dir))
            }
            Err(why) => {
                let failure = Failure::after(previous.as_ref(), why, Instant::now());
                let reason = failure.reason();
                *outcome = Some(Err(failure));
                Err(reason)
            }
        }
    }
}

/// What a Python environment is built from, its key and its build policy.
type Planned = (Requirements, String, Builds);

fn plan_of(
    skill: &SkillFolder,
    options: &EnvironmentOptions,
    python: &Result<Interpreter, EnvironmentError>,
) -> Result<Option<Planned>, EnvironmentError> {
    let host = options.skills.get(&skill.name).map(Vec::as_slice);
    let Some(requirements) = requirements::declared(skill, host)? else {
        return Ok(None);
    };
    let builds = Builds::of(options.builds, host.is_some());
    let python = python.as_ref().map_err(Clone::clone)?;
    let key = requirements.key(&python.program, python.python_version.as_deref(), builds);
    Ok(Some((requirements, key, builds)))
}

/// `$XDG_CACHE_HOME/skillet/envs` (or `~/.cache/...`), unless `user` cannot enter it.
fn default_root(user: Option<SandboxUser>) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let root = cache.join("skillet/envs");
    match user {
        Some(user) if reachable(&root, user).is_err() => PathBuf::from("/var/cache/skillet/envs"),
        _ => root,
    }
}

#[cfg(test)]
mod tests;
