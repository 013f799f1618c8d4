//! [`SkillResources`]: what a skill folder offers a run besides its instructions — the files
//! beside `SKILL.md` (listed once at load, name and size, for progressive disclosure) and the
//! `allowed-tools` names mapped onto Skillet's file tools.
//!
//! Nothing here reads a file's content or runs anything: reading during a call is
//! `files::skill_files`, scripts are `files::scripts`. The listing never follows a symlink and
//! skips hidden entries and the files the engine itself uses (`SKILL.md`, `mock-scenario.yaml`,
//! `evals/`, the schema and provider-config assets the manifest names).
//!
//! # `allowed-tools` (Agent Skills, experimental)
//! | name | Skillet tools |
//! |---|---|
//! | `Read`, `Glob`, `Grep`, `LS` | `list_skill_files`, `read_skill_file`, `read_file`, `list_files` |
//! | `Write`, `Edit`, `MultiEdit` | `write_file` (and the reading tools) |
//! | `Bash`, `Bash(...)` | `run_skill_script`, when the host enables scripts |
//!
//! Any other name has no Skillet equivalent: it is reported as a load warning (so `validate`
//! lists it, and `validate --strict` fails on it) and otherwise ignored.

pub use skillet_core::folder::SkillFile;
use std::path::Path;

/// Most files listed per skill (the rest are still readable by path).
pub const MAX_LISTED_FILES: usize = 200;
/// Deepest directory level listed.
const MAX_DEPTH: usize = 8;
/// Files of a skill folder that belong to the engine, never offered to the model.
const ENGINE_FILES: &[&str] = &["SKILL.md", "mock-scenario.yaml"];
/// Folders of a skill folder that belong to the engine: `evals/` holds the expected answers of
/// `skillet eval`, which a model under evaluation must not be shown.
const ENGINE_DIRS: &[&str] = &["evals"];

/// Whether the normalized relative `path` lies in a folder the engine keeps from the model
/// (`evals/`): `read_skill_file` refuses it as the listing leaves it out.
pub(crate) fn in_engine_dir(path: &Path) -> bool {
    path.components()
        .next()
        .is_some_and(|first| ENGINE_DIRS.iter().any(|dir| first.as_os_str() == *dir))
}

/// `allowed-tools`, mapped onto Skillet's tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedTools {
    /// A reading tool was named (`Read`, `Glob`, `Grep`, `LS`).
    pub read: bool,
    /// A writing tool was named (`Write`, `Edit`, `MultiEdit`).
    pub write: bool,
    /// `Bash` was named: bundled scripts, when the host enables them.
    pub scripts: bool,
    /// Names with no Skillet equivalent, as written.
    pub unmapped: Vec<String>,
}

impl AllowedTools {
    /// Maps the `allowed-tools` names.
    pub fn map(names: &[String]) -> AllowedTools {
        let mut allowed = AllowedTools::default();
        for name in names {
            // `Bash(git:*)` restricts Bash to some commands; the bare tool name decides.
            let base = name.split('(').next().unwrap_or(name).trim();
            match base {
                "Read" | "Glob" | "Grep" | "LS" => allowed.read = true,
                "Write" | "Edit" | "MultiEdit" => allowed.write = true,
                "Bash" => allowed.scripts = true,
                _ => allowed.unmapped.push(name.clone()),
            }
        }
        allowed
    }

    /// Whether any name maps to a file tool.
    pub(crate) fn any_file_tool(&self) -> bool {
        self.read || self.write || self.scripts
    }
}

/// What a skill folder offers a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillResources {
    /// The files beside `SKILL.md`, sorted by path, at most [`MAX_LISTED_FILES`].
    pub files: Vec<SkillFile>,
    /// Whether the listing stopped at [`MAX_LISTED_FILES`] files or at the depth limit (eight
    /// directory levels, the skill folder's own included); a cut listing is still readable by path.
    pub listing_cut: bool,
    /// A plain Agent Skills manifest (no `a2a-*`/`a2e-*` key).
    pub plain_agent_skill: bool,
    /// `allowed-tools`, mapped.
    pub allowed: AllowedTools,
}

impl SkillResources {
    /// Whether a call of this skill gets file tools and a workspace: a plain Agent Skill with
    /// files beside `SKILL.md`, or any skill whose `allowed-tools` names a file tool.
    pub(crate) fn uses_files(&self) -> bool {
        (self.plain_agent_skill && !self.files.is_empty()) || self.allowed.any_file_tool()
    }

    /// Whether the folder ships scripts (files under `scripts/`).
    pub fn has_scripts(&self) -> bool {
        self.files.iter().any(|f| f.path.starts_with("scripts/"))
    }
}

/// Lists the files of `dir` a model may read: regular files only (symlinks are not followed),
/// no hidden entries, none of the engine's own files or `excluded` (manifest-named assets).
pub(crate) fn list_files(dir: &Path, excluded: &[String]) -> (Vec<SkillFile>, bool) {
    list_files_upto(dir, excluded, MAX_LISTED_FILES)
}

/// [`list_files`] with another cap on the number of files (the skills extension's manifest
/// allows more than the model's listing).
pub(crate) fn list_files_upto(
    dir: &Path,
    excluded: &[String],
    max_files: usize,
) -> (Vec<SkillFile>, bool) {
    let mut files = Vec::new();
    let mut cut = false;
    let limits = Walk {
        excluded,
        max_files,
    };
    walk(dir, "", 0, &limits, &mut files, &mut cut);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    (files, cut)
}

/// Whether the normalized relative `path` is one the listing shows (before the manifest's
/// `excluded` assets and the caps): no hidden component, not under `evals/`, not one of the
/// engine's own top-level files, not deeper than the listing goes. The one rule behind both
/// the listing and a host serving the listed files by path.
pub(crate) fn is_listed_path(path: &Path) -> bool {
    let parts: Vec<&str> = path
        .components()
        .map(|part| part.as_os_str().to_str().unwrap_or("."))
        .collect();
    let Some((file, dirs)) = parts.split_last() else {
        return false;
    };
    if dirs.len() >= MAX_DEPTH {
        return false;
    }
    dirs.iter()
        .enumerate()
        .all(|(depth, dir)| !withheld_dir(dir, depth))
        && !withheld_file(file, dirs.len())
}

/// A directory the listing does not enter.
fn withheld_dir(name: &str, depth: usize) -> bool {
    name.starts_with('.') || (depth == 0 && ENGINE_DIRS.contains(&name))
}

/// A file the listing leaves out (before the manifest's `excluded` assets).
fn withheld_file(name: &str, depth: usize) -> bool {
    name.starts_with('.') || (depth == 0 && ENGINE_FILES.contains(&name))
}

/// What a walk leaves out and where it stops.
struct Walk<'a> {
    excluded: &'a [String],
    max_files: usize,
}

fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    limits: &Walk<'_>,
    files: &mut Vec<SkillFile>,
    cut: &mut bool,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = format!("{prefix}{name}");
        if kind.is_dir() {
            if withheld_dir(&name, depth) {
                continue;
            }
            if depth + 1 >= MAX_DEPTH {
                *cut = true;
                continue;
            }
            walk(
                &entry.path(),
                &format!("{path}/"),
                depth + 1,
                limits,
                files,
                cut,
            );
        } else if kind.is_file() {
            let excluded = limits.excluded;
            if withheld_file(&name, depth)
                || excluded.iter().any(|e| e.trim_start_matches("./") == path)
            {
                continue;
            }
            if files.len() >= limits.max_files {
                *cut = true;
                return;
            }
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            files.push(SkillFile { path, size });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_tools_map_to_file_tools_and_report_the_rest() {
        let names: Vec<String> = ["Read", "Bash(python3:*)", "Write", "WebFetch"]
            .map(String::from)
            .to_vec();
        let allowed = AllowedTools::map(&names);
        assert!(allowed.read && allowed.write && allowed.scripts);
        assert_eq!(allowed.unmapped, vec!["WebFetch".to_owned()]);
        assert!(!AllowedTools::map(&["Task".into()]).any_file_tool());
    }

    #[test]
    fn listing_skips_engine_files_hidden_entries_and_symlinks() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        for (path, text) in [
            ("SKILL.md", "x"),
            ("mock-scenario.yaml", "x"),
            ("reference.md", "ref"),
            ("scripts/run.py", "print(1)"),
            ("assets/in.schema.json", "{}"),
            (".git/config", "x"),
            ("evals/evals.json", "{}"),
        ] {
            std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
            std::fs::write(dir.join(path), text).unwrap();
        }
        std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
        let (files, cut) = list_files(dir, &["assets/in.schema.json".to_owned()]);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["reference.md", "scripts/run.py"]);
        assert_eq!(files[0].size, 3);
        assert!(!cut);
    }
}
