//! [`SystemTools`]: the programs a host offers skill scripts besides their interpreter
//! (`[skills.scripts] tools = ["soffice", "pdftoppm"]`), resolved once at start-up.
//!
//! Each entry is a bare name (looked up on the engine's `PATH`) or a path. It is followed to the
//! real program (symlinks by `canonicalize`) and must be executable by the sandbox's uid, as an
//! interpreter must (`interpreters`). A script finds an offered tool by its name on `PATH`: the
//! tools get a directory of symlinks (`name → real program`) that goes first on the script's
//! `PATH`, and each tool's installation directory (the real program's directory, or its parent
//! when that is a `bin`, `sbin` or `program` directory, as LibreOffice's is) is readable in the
//! sandbox — so a tool installed outside the system locations (`/opt/libreoffice/program/
//! soffice`) runs as well as one under `/usr`. So is what the installation's own symlinks
//! point at outside it, three levels down ([`linked_outside`]): Debian's LibreOffice keeps its
//! configuration registry in `/etc/libreoffice/registry` behind
//! `/usr/lib/libreoffice/share/registry` and its extension caches under `/var`, and `soffice`
//! aborts without them.
//!
//! A skill names the tools its scripts need in `metadata.a2e-system-tools`; one the host does not
//! offer (or offers but cannot run) blocks the skill, with the setting to change
//! ([`SystemTools::missing_for`]). A script that fails because a program is missing gets a hint
//! naming it ([`missing_program_hint`]).
//!
//! What this does not do: hide programs. The sandbox's system locations (`/usr`, `/bin`, ...)
//! stay readable, so a script can run `/usr/bin/soffice` whether or not it is listed; listing a
//! tool declares it, resolves it and makes it reachable. A host that must withhold system
//! programs sets `[skills.scripts.sandbox.filesystem] system_read_only = false` and lists what
//! scripts may read. Not here: running scripts (`files::scripts`).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::EnvironmentError;
use super::interpreters::{SandboxUser, check_executable, reachable};

/// One offered tool, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemTool {
    /// As configured (`soffice`, `/opt/libreoffice/program/soffice`).
    pub configured: PathBuf,
    /// The real program: absolute, canonical, executable by the sandbox's uid.
    pub program: PathBuf,
    /// Its installation directory, readable in the sandbox.
    pub install_dir: PathBuf,
    /// What symlinks in the installation point at outside it, readable too.
    pub linked: Vec<PathBuf>,
}

/// Every offered tool, resolved or refused, and the directory scripts find them in.
#[derive(Debug, Default)]
pub struct SystemTools {
    by_name: BTreeMap<String, Result<SystemTool, EnvironmentError>>,
    bin_dir: Option<BinDir>,
}

/// A private directory of symlinks, removed when the host ends.
#[derive(Debug)]
struct BinDir(PathBuf);

impl Drop for BinDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl SystemTools {
    /// Resolves every configured tool for children running as `user` (`None`: as the engine's
    /// own uid) and links the usable ones into a fresh directory. Blocking; call it at
    /// start-up. A tool that cannot be linked is refused with why.
    pub fn resolve(configured: &[PathBuf], user: Option<SandboxUser>) -> Self {
        let mut by_name = BTreeMap::new();
        for entry in configured {
            let Some(name) = entry.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                continue;
            };
            by_name.insert(name, resolve_one(entry, user));
        }
        let mut tools = SystemTools {
            by_name,
            bin_dir: None,
        };
        if tools.by_name.values().any(Result::is_ok) {
            match link_all(&tools.by_name) {
                Ok(dir) => tools.bin_dir = Some(dir),
                Err(why) => {
                    for result in tools.by_name.values_mut() {
                        if result.is_ok() {
                            *result = Err(EnvironmentError::ToolNotLinked(Box::new(why.clone())));
                        }
                    }
                }
            }
        }
        tools
    }

    /// Every configured tool by name, in name order (for `skillet validate --scripts`).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Result<SystemTool, EnvironmentError>)> {
        self.by_name.iter().map(|(n, r)| (n.as_str(), r))
    }

    /// The directory to put first on a script's `PATH` (`None`: no tool is offered).
    pub fn path_dir(&self) -> Option<&Path> {
        self.bin_dir.as_ref().map(|d| d.0.as_path())
    }

    /// What the sandbox must let a script read for the offered tools: the link directory and
    /// each tool's installation directory.
    pub fn read_only(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.path_dir().map(Path::to_path_buf).into_iter().collect();
        for tool in self.by_name.values().flatten() {
            for dir in std::iter::once(&tool.install_dir).chain(&tool.linked) {
                if !dirs.contains(dir) {
                    dirs.push(dir.clone());
                }
            }
        }
        dirs
    }

    /// Of the tools a skill `needs`, the ones its scripts cannot have here, each with why —
    /// empty when the host offers them all.
    pub fn missing_for(&self, needs: &[String]) -> Vec<String> {
        needs
            .iter()
            .filter_map(|name| match self.by_name.get(name) {
                Some(Ok(_)) => None,
                Some(Err(why)) => Some(format!("{name} ({why})")),
                None => Some(format!(
                    "{name} (not offered: add it to `[skills.scripts] tools`)"
                )),
            })
            .collect()
    }
}

fn resolve_one(
    configured: &Path,
    user: Option<SandboxUser>,
) -> Result<SystemTool, EnvironmentError> {
    let bare = configured.components().count() == 1 && !configured.is_absolute();
    let candidate = if bare {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join(configured))
            .find(|p| p.is_file())
            .ok_or_else(|| EnvironmentError::ToolNotFound {
                configured: configured.to_path_buf(),
            })?
    } else {
        configured.to_path_buf()
    };
    let program = candidate
        .canonicalize()
        .map_err(|e| EnvironmentError::Inaccessible {
            path: candidate.clone(),
            source: e.into(),
        })?;
    check_executable(&program, user)?;
    let install_dir = install_dir(&program);
    if let Some(user) = user {
        reachable(&install_dir, user).map_err(|why| EnvironmentError::At {
            path: install_dir.clone(),
            why: Box::new(why),
        })?;
    }
    let linked = linked_outside(&install_dir);
    Ok(SystemTool {
        configured: configured.to_path_buf(),
        program,
        install_dir,
        linked,
    })
}

/// The most symlink targets one installation adds to what the sandbox reads.
const MAX_LINKED: usize = 32;

/// What the symlinks in `install_dir` and the directories two levels under it point at outside
/// it (canonical, at most [`MAX_LINKED`]); nothing for the system prefixes themselves (`/usr`, `/usr/local`),
/// whose links (`/etc/alternatives/...`) are the system's and readable as such.
fn linked_outside(install_dir: &Path) -> Vec<PathBuf> {
    if matches!(install_dir.to_str(), Some("/" | "/usr" | "/usr/local")) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut dirs = vec![(install_dir.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < 2 {
                dirs.push((entry.path(), depth + 1));
            } else if kind.is_symlink()
                && let Ok(target) = entry.path().canonicalize()
                && !target.starts_with(install_dir)
                && !found.contains(&target)
            {
                found.push(target);
                if found.len() == MAX_LINKED {
                    return found;
                }
            }
        }
    }
    found
}

/// The directory a program's files live in: its own directory, or the one above when that is
/// a `bin`, `sbin` or `program` directory (`/opt/libreoffice/program/soffice` →
/// `/opt/libreoffice`).
fn install_dir(program: &Path) -> PathBuf {
    let parent = program.parent().unwrap_or(Path::new("/"));
    let is_bin = parent
        .file_name()
        .is_some_and(|n| matches!(n.to_str(), Some("bin" | "sbin" | "program")));
    match parent.parent() {
        Some(above) if is_bin && above != Path::new("/") => above.to_path_buf(),
        _ => parent.to_path_buf(),
    }
}

/// A fresh directory (mode 0755, so the sandbox's uid can search it) with one symlink per
/// usable tool.
fn link_all(
    tools: &BTreeMap<String, Result<SystemTool, EnvironmentError>>,
) -> Result<BinDir, EnvironmentError> {
    let at = |path: &Path| {
        let path = path.to_path_buf();
        move |e: std::io::Error| EnvironmentError::Inaccessible {
            path,
            source: e.into(),
        }
    };
    let dir = std::env::temp_dir().join(format!("skillet-tools-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir(&dir).map_err(at(&dir))?;
    let dir = BinDir(dir);
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o755)).map_err(at(&dir.0))?;
    for (name, tool) in tools {
        if let Ok(tool) = tool {
            let link = dir.0.join(name);
            std::os::unix::fs::symlink(&tool.program, &link).map_err(at(&link))?;
        }
    }
    Ok(dir)
}

/// A hint for a script that failed because it could not find a program: the program's name
/// from its stderr (Python's `FileNotFoundError: ... 'soffice'`, a shell's `soffice: not
/// found` / `command not found`), when that name is not an offered tool. `None` when stderr
/// shows no such failure.
pub(crate) fn missing_program_hint(stderr: &str, tools: &SystemTools) -> Option<String> {
    let name = missing_program(stderr)?;
    if matches!(tools.by_name.get(&name), Some(Ok(_))) {
        return None;
    }
    Some(format!(
        "the script could not find the program `{name}`: this host does not offer it to \
         scripts (add it to `[skills.scripts] tools`, and install it)"
    ))
}

fn missing_program(stderr: &str) -> Option<String> {
    let valid = |name: &str| {
        !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
    };
    for line in stderr.lines() {
        let line = line.trim();
        // Python: FileNotFoundError: [Errno 2] No such file or directory: 'soffice'
        if line.starts_with("FileNotFoundError:")
            && let Some(rest) = line.split("No such file or directory: ").nth(1)
        {
            let name = rest.trim().trim_matches(|c| c == '\'' || c == '"');
            let name = name.rsplit('/').next().unwrap_or(name);
            if valid(name) {
                return Some(name.to_owned());
            }
        }
        // sh: `sh: 1: soffice: not found`; bash: `line 3: soffice: command not found`.
        for marker in [": command not found", ": not found"] {
            if let Some(head) = line.strip_suffix(marker) {
                let name = head.rsplit(": ").next().unwrap_or(head).trim();
                if valid(name) {
                    return Some(name.to_owned());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_on_path_is_linked_and_an_unknown_one_is_refused_with_the_fix() {
        let tools = SystemTools::resolve(
            &[PathBuf::from("sh"), PathBuf::from("no-such-tool-xyz")],
            None,
        );
        let (_, sh) = tools.entries().find(|(n, _)| *n == "sh").unwrap();
        let sh = sh.as_ref().unwrap();
        assert!(sh.program.is_absolute());
        let dir = tools.path_dir().unwrap().to_path_buf();
        assert_eq!(dir.join("sh").canonicalize().unwrap(), sh.program);
        assert!(tools.read_only().contains(&dir));
        assert_eq!(tools.missing_for(&["sh".into()]), Vec::<String>::new());
        let missing = tools.missing_for(&["no-such-tool-xyz".into(), "soffice".into()]);
        assert!(missing[0].contains("not found on PATH"), "{missing:?}");
        assert!(missing[1].contains("[skills.scripts] tools"), "{missing:?}");
        drop(tools);
        assert!(!dir.exists(), "the link directory goes with the host");
    }

    #[test]
    fn a_program_the_sandbox_uid_cannot_run_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let private = root.path().join("private");
        std::fs::create_dir(&private).unwrap();
        let program = private.join("tool");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o700)).unwrap();
        let nobody = SandboxUser {
            uid: 65534,
            gid: 65534,
        };
        let tools = SystemTools::resolve(std::slice::from_ref(&program), Some(nobody));
        let (_, result) = tools.entries().next().unwrap();
        assert!(result.is_err(), "{result:?}");
        assert!(tools.path_dir().is_none());
    }

    #[test]
    fn what_an_installations_links_point_at_outside_it_is_readable_too() {
        let root = tempfile::tempdir().unwrap();
        let install = root.path().join("office");
        let etc = root.path().join("etc-office");
        std::fs::create_dir_all(install.join("program")).unwrap();
        std::fs::create_dir_all(install.join("share")).unwrap();
        std::fs::create_dir_all(etc.join("registry")).unwrap();
        let program = install.join("program/soffice");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(etc.join("registry"), install.join("share/registry")).unwrap();
        // A link inside the installation adds nothing.
        std::os::unix::fs::symlink(install.join("program"), install.join("bin")).unwrap();
        let tools = SystemTools::resolve(std::slice::from_ref(&program), None);
        let (_, tool) = tools.entries().next().unwrap();
        let tool = tool.as_ref().unwrap();
        let registry = etc.join("registry").canonicalize().unwrap();
        assert_eq!(tool.linked, vec![registry.clone()]);
        assert!(tools.read_only().contains(&registry));
        assert!(linked_outside(Path::new("/usr")).is_empty());
    }

    #[test]
    fn install_dirs_take_the_prefix_above_bin_and_program_dirs() {
        assert_eq!(
            install_dir(Path::new("/opt/libreoffice/program/soffice")),
            Path::new("/opt/libreoffice")
        );
        assert_eq!(
            install_dir(Path::new("/opt/tess/bin/tesseract")),
            Path::new("/opt/tess")
        );
        assert_eq!(install_dir(Path::new("/bin/sh")), Path::new("/bin"));
        assert_eq!(install_dir(Path::new("/srv/tool")), Path::new("/srv"));
    }

    #[test]
    fn missing_programs_are_found_in_python_and_shell_errors_only() {
        let python = "Traceback (most recent call last):\n  File \"x.py\", line 3\n\
                      FileNotFoundError: [Errno 2] No such file or directory: 'soffice'\n";
        assert_eq!(missing_program(python).as_deref(), Some("soffice"));
        assert_eq!(
            missing_program("sh: 1: pdftoppm: not found").as_deref(),
            Some("pdftoppm")
        );
        assert_eq!(
            missing_program("./run.sh: line 3: tesseract: command not found").as_deref(),
            Some("tesseract")
        );
        let file = "FileNotFoundError: [Errno 2] No such file or directory: 'in put.pdf'";
        assert_eq!(missing_program(file), None, "a data file is no program");
        assert_eq!(missing_program("ValueError: bad"), None);
        let tools = SystemTools::resolve(&[PathBuf::from("sh")], None);
        assert!(missing_program_hint("sh: 1: sh: not found", &tools).is_none());
        let hint = missing_program_hint(python, &tools).unwrap();
        assert!(hint.contains("`soffice`") && hint.contains("[skills.scripts] tools"));
    }
}
