//! The interpreters scripts run with, resolved once at start-up to a program the sandbox's uid
//! can execute (`[skills.scripts] interpreters`).
//!
//! For each extension: a bare name is looked up on the engine's `PATH` (every match, in order,
//! the first usable one wins and the skipped ones are noted); a path is taken as written. Each
//! candidate is followed to its real program: symlinks by `canonicalize`, and shims (a pyenv,
//! asdf or nodenv shim is a shell script that `exec`s from a private root) by asking the
//! interpreter itself, outside the sandbox, where it is (`sys.executable`, `process.execPath`,
//! `$^X`, `RbConfig.ruby`). Python also reports its version and `sys.base_prefix` (the standard
//! library, which the sandbox must be able to read when it is not under a system directory).
//!
//! Usable means: when the sandbox drops to an unprivileged uid (the engine runs as root), that
//! uid can reach the program — every directory above it searchable, the file executable (and
//! readable, for a script) — and the same for the standard library. A path under a private
//! home (`/root` is mode 0700) is refused with a message naming the setting to change.
//!
//! Not here: running scripts (`files::scripts`), the environments built from a skill's
//! requirements (`build`).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::error::EnvironmentError;

/// How long asking an interpreter where it lives may take (a cold pyenv shim takes ~100 ms).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// One interpreter, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The extension it runs (`py`).
    pub extension: String,
    /// As configured (`python3`, `/usr/bin/python3`).
    pub configured: PathBuf,
    /// The real program: absolute, canonical, executable by the sandbox's uid.
    pub program: PathBuf,
    /// Directories the sandbox must be able to read besides the program (Python's standard
    /// library when it is not under a system directory).
    pub read_only: Vec<PathBuf>,
    /// Python's `major.minor.micro`, for Python interpreters.
    pub python_version: Option<String>,
    /// Candidates passed over on the way, and why (`/root/.pyenv/shims/python3: ...`).
    pub skipped: Vec<String>,
}

/// Who the sandbox runs children as, when that is not the engine's own uid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxUser {
    /// The child's uid.
    pub uid: u32,
    /// The child's gid.
    pub gid: u32,
}

/// Every configured interpreter, resolved or refused.
#[derive(Debug, Clone, Default)]
pub struct Interpreters {
    by_extension: BTreeMap<String, Result<Interpreter, EnvironmentError>>,
}

impl Interpreters {
    /// Resolves every entry of `configured` (extension → name or path) for children running as
    /// `user` (`None`: as the engine's own uid). Blocking: runs each Python/Node/Ruby/Perl
    /// candidate once with a one-line probe, outside the sandbox; call it at start-up.
    pub fn resolve(configured: &BTreeMap<String, PathBuf>, user: Option<SandboxUser>) -> Self {
        let by_extension = configured
            .iter()
            .map(|(ext, program)| (ext.clone(), resolve_one(ext, program, user)))
            .collect();
        Interpreters { by_extension }
    }

    /// The interpreter for `extension`: `None` when none is configured, `Err` with the reason
    /// and the fix when it cannot run in the sandbox.
    pub fn get(&self, extension: &str) -> Option<&Result<Interpreter, EnvironmentError>> {
        self.by_extension.get(extension)
    }

    /// The configured extensions.
    pub fn extensions(&self) -> impl Iterator<Item = &str> {
        self.by_extension.keys().map(String::as_str)
    }

    /// Every entry, in extension order (for `skillet validate --scripts`).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Result<Interpreter, EnvironmentError>)> {
        self.by_extension.iter().map(|(e, r)| (e.as_str(), r))
    }
}

fn resolve_one(
    extension: &str,
    configured: &Path,
    user: Option<SandboxUser>,
) -> Result<Interpreter, EnvironmentError> {
    let bare = configured.components().count() == 1 && !configured.is_absolute();
    let candidates: Vec<PathBuf> = if bare {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join(configured))
            .filter(|p| p.is_file())
            .collect()
    } else {
        vec![configured.to_path_buf()]
    };
    if candidates.is_empty() {
        return Err(EnvironmentError::InterpreterNotFound {
            extension: extension.to_owned(),
            configured: configured.to_path_buf(),
        });
    }
    let mut skipped: Vec<(PathBuf, EnvironmentError)> = Vec::new();
    for candidate in candidates {
        match follow(&candidate, user) {
            Ok((program, read_only, python_version)) => {
                return Ok(Interpreter {
                    extension: extension.to_owned(),
                    configured: configured.to_path_buf(),
                    program,
                    read_only,
                    python_version,
                    skipped: skipped
                        .iter()
                        .map(|(candidate, why)| format!("{}: {why}", candidate.display()))
                        .collect(),
                });
            }
            Err(why) => skipped.push((candidate, why)),
        }
    }
    Err(EnvironmentError::InterpreterUnusable {
        extension: extension.to_owned(),
        configured: configured.to_path_buf(),
        skipped,
    })
}

/// The real program behind `candidate`, the directories it needs, and Python's version.
type Followed = (PathBuf, Vec<PathBuf>, Option<String>);

fn follow(candidate: &Path, user: Option<SandboxUser>) -> Result<Followed, EnvironmentError> {
    let target = candidate
        .canonicalize()
        .map_err(|e| EnvironmentError::Os(e.into()))?;
    let name = target
        .file_name()
        .or_else(|| candidate.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let candidate_name = candidate
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let family = Family::of(&candidate_name).or_else(|| Family::of(&name));
    let (program, read_only, version) = match family {
        Some(Family::Python) => {
            let out = probe(candidate, Family::Python)?;
            let mut lines = out.lines();
            let executable = lines.next().unwrap_or_default();
            let base_prefix = lines.next().unwrap_or_default();
            let version = lines.next().map(str::to_owned);
            let program = real_program(candidate, executable)?;
            let read_only = Path::new(base_prefix)
                .canonicalize()
                .ok()
                .into_iter()
                .collect();
            (program, read_only, version)
        }
        Some(family) if is_script(&target) => {
            let out = probe(candidate, family)?;
            let program = real_program(candidate, out.lines().next().unwrap_or_default())?;
            (program, Vec::new(), None)
        }
        _ => (target, Vec::new(), None),
    };
    check_executable(&program, user)?;
    if let Some(user) = user {
        for dir in &read_only {
            reachable(dir, user).map_err(|why| EnvironmentError::StandardLibrary {
                dir: dir.clone(),
                why: Box::new(why),
            })?;
        }
    }
    Ok((program, read_only, version))
}

/// The canonical form of what an interpreter said its executable is.
fn real_program(candidate: &Path, said: &str) -> Result<PathBuf, EnvironmentError> {
    let said = said.trim();
    if said.is_empty() || !Path::new(said).is_absolute() {
        return Err(EnvironmentError::ExecutableNotSaid {
            candidate: candidate.to_path_buf(),
        });
    }
    Path::new(said)
        .canonicalize()
        .map_err(|e| EnvironmentError::Inaccessible {
            path: said.into(),
            source: e.into(),
        })
}

/// Interpreters Skillet knows how to ask where they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Python,
    Node,
    Ruby,
    Perl,
}

impl Family {
    fn of(name: &str) -> Option<Family> {
        if name.starts_with("python") {
            Some(Family::Python)
        } else if name == "node" || name == "nodejs" {
            Some(Family::Node)
        } else if name.starts_with("ruby") {
            Some(Family::Ruby)
        } else if name.starts_with("perl") {
            Some(Family::Perl)
        } else {
            None
        }
    }

    fn probe_args(self) -> &'static [&'static str] {
        match self {
            Family::Python => &[
                "-I",
                "-c",
                "import sys;print(sys.executable);print(sys.base_prefix);\
                 print('%d.%d.%d' % sys.version_info[:3])",
            ],
            Family::Node => &["-e", "console.log(process.execPath)"],
            Family::Ruby => &["-e", "require 'rbconfig'; puts RbConfig.ruby"],
            Family::Perl => &["-e", "print $^X, qq(\\n)"],
        }
    }
}

/// Runs `candidate` with its family's one-line probe (outside the sandbox, as the engine) and
/// returns its stdout.
fn probe(candidate: &Path, family: Family) -> Result<String, EnvironmentError> {
    let mut child = Command::new(candidate)
        .args(family.probe_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| EnvironmentError::ProbeStart(e.into()))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > PROBE_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(EnvironmentError::ProbeTimeout {
                    after: PROBE_TIMEOUT,
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(EnvironmentError::Os(e.into())),
        }
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_string(&mut stdout);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    if !status.success() {
        let tail: String = stderr.trim().chars().take(300).collect();
        return Err(EnvironmentError::ProbeFailed {
            status,
            stderr: tail,
        });
    }
    Ok(stdout)
}

fn is_script(path: &Path) -> bool {
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"#!"
}

/// The program exists, is a regular executable file, and (when the sandbox drops to `user`)
/// `user` can reach and run it.
pub(super) fn check_executable(
    program: &Path,
    user: Option<SandboxUser>,
) -> Result<(), EnvironmentError> {
    let meta = program
        .metadata()
        .map_err(|e| EnvironmentError::Inaccessible {
            path: program.to_path_buf(),
            source: e.into(),
        })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(EnvironmentError::NotExecutable {
            program: program.to_path_buf(),
        });
    }
    let Some(user) = user else {
        return Ok(());
    };
    if let Some(parent) = program.parent() {
        reachable(parent, user).map_err(|why| EnvironmentError::At {
            path: program.to_path_buf(),
            why: Box::new(why),
        })?;
    }
    let need = if is_script(program) { 0o5 } else { 0o1 };
    if allowed(&meta, user) & need != need {
        return Err(EnvironmentError::NotExecutableBy {
            program: program.to_path_buf(),
            uid: user.uid,
            mode: meta.permissions().mode() & 0o7777,
        });
    }
    Ok(())
}

/// `user` can search every directory from `/` down to `dir` (and `dir` itself): the check a
/// child of the sandbox meets before Landlock's.
pub fn reachable(dir: &Path, user: SandboxUser) -> Result<(), EnvironmentError> {
    let mut path = PathBuf::new();
    for component in dir.components() {
        path.push(component);
        let Ok(meta) = path.metadata() else {
            // Not there yet (a cache directory to be created): its parent decides.
            break;
        };
        if meta.is_dir() && allowed(&meta, user) & 0o1 == 0 {
            return Err(EnvironmentError::Unreachable {
                dir: path,
                uid: user.uid,
                mode: meta.permissions().mode() & 0o7777,
            });
        }
    }
    Ok(())
}

/// The permission bits (rwx as 0o7) `user` gets on a file with `meta`.
fn allowed(meta: &std::fs::Metadata, user: SandboxUser) -> u32 {
    let mode = meta.permissions().mode();
    if user.uid == 0 {
        0o7
    } else if meta.uid() == user.uid {
        (mode >> 6) & 0o7
    } else if meta.gid() == user.gid {
        (mode >> 3) & 0o7
    } else {
        mode & 0o7
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const NOBODY: SandboxUser = SandboxUser {
        uid: 65534,
        gid: 65534,
    };

    fn map(ext: &str, program: &Path) -> BTreeMap<String, PathBuf> {
        BTreeMap::from([(ext.to_owned(), program.to_path_buf())])
    }

    #[test]
    fn a_shell_resolves_to_an_absolute_canonical_program() {
        let resolved = Interpreters::resolve(&map("sh", Path::new("sh")), None);
        let sh = resolved.get("sh").unwrap().as_ref().expect("sh on PATH");
        assert!(sh.program.is_absolute(), "{sh:?}");
        assert_eq!(sh.program, sh.program.canonicalize().unwrap());
    }

    #[test]
    fn a_missing_interpreter_names_the_setting() {
        let resolved = Interpreters::resolve(&map("py", Path::new("no-such-python-xyz")), None);
        let err = resolved
            .get("py")
            .unwrap()
            .as_ref()
            .unwrap_err()
            .to_string();
        assert!(err.contains("[skills.scripts] interpreters"), "{err}");
    }

    #[test]
    fn a_program_under_a_private_directory_is_refused_for_another_uid() {
        let home = tempfile::tempdir().unwrap();
        let private = home.path().join("private");
        std::fs::create_dir(&private).unwrap();
        let program = private.join("tool");
        std::fs::copy("/bin/sh", &program).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mine = own_uid();
        if mine == NOBODY.uid {
            return; // the owner is the sandbox's uid: nothing to refuse
        }
        let resolved = Interpreters::resolve(&map("sh", &program), Some(NOBODY));
        let err = resolved
            .get("sh")
            .unwrap()
            .as_ref()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot enter") && err.contains("private"),
            "{err}"
        );
        assert!(err.contains("interpreters = { sh = "), "{err}");
        // As the engine's own uid (no drop) the same program is fine.
        let resolved = Interpreters::resolve(&map("sh", &program), None);
        assert!(resolved.get("sh").unwrap().is_ok());
    }

    /// The engine's uid, read from a file it just created.
    fn own_uid() -> u32 {
        let file = tempfile::NamedTempFile::new().unwrap();
        file.as_file().metadata().unwrap().uid()
    }
}
