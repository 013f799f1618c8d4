//! What `skillet validate` says about a skill's Python scripts importing packages nothing
//! declares: the corpus's `pdf` skill imports `pypdf` without a `requirements.txt`, and its
//! script fails in the sandbox with `ModuleNotFoundError` on the first call. A warning (an error
//! with `--strict`) at the script, naming the module and where to declare it.
//!
//! A module is known when it is the interpreter's standard library (asked of the host's
//! `python3` once: `sys.stdlib_module_names`), a module or package of the skill's own folder, or
//! a declared requirement (its normalized name, or an import name its distribution is known by:
//! `PIL` is `pillow`, `yaml` is `pyyaml`, ...). Without a `python3` to ask, nothing is judged.
//! The scan is textual (`import a`, `from a import b` at the start of a line), bounded in files
//! and bytes, and reads nothing outside the skill's folder.
//!
//! Not here: building environments (`validate_scripts`), loading (`validate`).

use std::collections::BTreeSet;
use std::path::Path;

use skillet_engine::environments::{SkillFolder, declared_requirements, parse_requirement};
use skillet_engine::skill::{CompiledSkill, ManifestError};

/// Scripts read per skill, and bytes per script; past them the rest is not judged.
const MAX_SCRIPTS: usize = 200;
const MAX_SCRIPT_BYTES: u64 = 1024 * 1024;

/// Import names whose distribution has another name.
const IMPORT_ALIASES: &[(&str, &str)] = &[
    ("PIL", "pillow"),
    ("yaml", "pyyaml"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("cv2", "opencv-python"),
    ("bs4", "beautifulsoup4"),
    ("sklearn", "scikit-learn"),
    ("fitz", "pymupdf"),
    ("dateutil", "python-dateutil"),
    ("dotenv", "python-dotenv"),
    ("google.genai", "google-genai"),
];

/// The standard library's module names, asked of `python3` (`None`: no interpreter to ask).
pub(super) fn standard_library() -> Option<BTreeSet<String>> {
    let out = std::process::Command::new("python3")
        .args([
            "-I",
            "-c",
            "import sys; print('\\n'.join(sorted(sys.stdlib_module_names)))",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    })
}

/// A warning for each module `compiled`'s Python scripts import that nothing declares.
pub(super) fn undeclared_imports(
    compiled: &CompiledSkill,
    host: Option<&[String]>,
    stdlib: &BTreeSet<String>,
) -> Vec<ManifestError> {
    let Some(dir) = compiled.dir.as_deref() else {
        return Vec::new();
    };
    let scripts = python_files(dir);
    if scripts.is_empty() {
        return Vec::new();
    }
    let declared_names: BTreeSet<String> = declared_requirements(&SkillFolder::of(compiled), host)
        .ok()
        .flatten()
        .map(|requirements| {
            requirements
                .lines
                .iter()
                .filter_map(|line| parse_requirement(line).ok())
                .map(|requirement| normalize(&requirement.name))
                .collect()
        })
        .unwrap_or_default();
    let local: BTreeSet<String> = scripts
        .iter()
        .filter_map(|path| path.file_stem())
        .chain(
            walk_dirs(dir)
                .iter()
                .filter_map(|d| d.file_name())
                .collect::<Vec<_>>(),
        )
        .map(|name| name.to_string_lossy().into_owned())
        .collect();
    let mut found = Vec::new();
    for script in &scripts {
        let Ok(text) = std::fs::read_to_string(script) else {
            continue;
        };
        let mut named = BTreeSet::new();
        for module in imported_modules(&text) {
            let top = module.split('.').next().unwrap_or_default().to_owned();
            let known = stdlib.contains(&top)
                || local.contains(&top)
                || declared_names.contains(&normalize(&top))
                || IMPORT_ALIASES.iter().any(|(import, distribution)| {
                    (module == *import || top == *import)
                        && declared_names.contains(&normalize(distribution))
                });
            if !known && named.insert(top.clone()) {
                let relative = script.strip_prefix(dir).unwrap_or(script);
                let distribution = IMPORT_ALIASES
                    .iter()
                    .find(|(import, _)| *import == top || *import == module)
                    .map_or(top.as_str(), |(_, distribution)| distribution);
                found.push(ManifestError::warning(
                    &dir.join(relative),
                    "import",
                    format!(
                        "imports `{top}`, which no requirement of the skill declares: the \
                         script fails with ModuleNotFoundError in the sandbox. Declare it (e.g. \
                         `{distribution}` in requirements.txt, pyproject.toml or \
                         metadata.a2e-requirements; docs/SKILL_FORMAT.md)"
                    ),
                ));
            }
        }
    }
    found
}

/// The distribution-name normal form (PEP 503, with `_`): `Python-Docx` is `python_docx`.
fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['-', '.'], "_")
}

/// The modules `text` imports at the start of a line (`import a.b, c as d` → `a.b`, `c`;
/// `from a.b import x` → `a.b`; relative imports are the folder's own and skipped).
fn imported_modules(text: &str) -> Vec<String> {
    let mut modules = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split('#').next().unwrap_or_default().split(',') {
                let name = part.split_whitespace().next().unwrap_or_default();
                if is_module_name(name) {
                    modules.push(name.to_owned());
                }
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let name = rest.split_whitespace().next().unwrap_or_default();
            let follows_import = rest.split_whitespace().nth(1) == Some("import");
            if follows_import && is_module_name(name) {
                modules.push(name.to_owned());
            }
        }
    }
    modules
}

fn is_module_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Whether any `.py` file is under `dir` (a skill folder or a root of them), as the scan sees it.
pub(super) fn has_python_scripts(dir: &Path) -> bool {
    !python_files(dir).is_empty()
}

/// The `.py` files under `dir` (symlinks not followed), at most [`MAX_SCRIPTS`], each at most
/// [`MAX_SCRIPT_BYTES`].
fn python_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for folder in std::iter::once(dir.to_owned()).chain(walk_dirs(dir)) {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            let path = entry.path();
            if meta.is_file()
                && meta.len() <= MAX_SCRIPT_BYTES
                && path.extension().is_some_and(|e| e == "py")
                && files.len() < MAX_SCRIPTS
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The folders under `dir` (not following symlinks, skipping hidden ones and `evals/`), at
/// most a few levels deep.
fn walk_dirs(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_owned(), 0)];
    while let Some((folder, depth)) = pending.pop() {
        if depth >= 4 || found.len() >= MAX_SCRIPTS {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_dir = entry.path().symlink_metadata().is_ok_and(|m| m.is_dir());
            if is_dir && !name.starts_with('.') && name != "evals" && name != "__pycache__" {
                found.push(entry.path());
                pending.push((entry.path(), depth + 1));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_lines_name_their_modules() {
        let text = "import os, sys as system\nfrom pypdf import PdfReader\nfrom . import local\n\
                    import PIL.Image  # pillow\n    from yaml import safe_load\nx = 'import nope'\n";
        assert_eq!(
            imported_modules(text),
            ["os", "sys", "pypdf", "PIL.Image", "yaml"]
        );
    }
}
