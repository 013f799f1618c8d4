//! A skill's Python requirements: where they are declared, how they are checked, and the key
//! of the environment they make.
//!
//! Sources, all that are present, together: the host's `[skills.environments.NAME] python`
//! (which, when set, replaces what the folder declares: the host knows its machine), else the
//! folder's `requirements.txt`, `pyproject.toml` `[project] dependencies` and
//! `metadata.a2e-requirements`. Each entry is one PEP 508 requirement (`pypdf>=5`,
//! `pdfplumber==0.11.4`, `lxml; python_version < "3.13"`), parsed by `pep508` and kept in its
//! normal form — the file uv reads is written from that form, never from the raw string. What
//! would send the build anywhere but the host's package index is refused with the source that
//! declared it: a line break (a second line could be an option), options (`-r`, `-e`,
//! `--find-links`, ...), direct references (`name @ ...`), URLs and local paths.
//!
//! Not here: the grammar (`pep508`), building (`build`), the interpreter (`interpreters`).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::EnvironmentError;
use super::pep508;
use super::supply::Builds;
use crate::skill::CompiledSkill;

/// What the requirements of one skill are read from: its name, folder and
/// `metadata.a2e-requirements`. Small; a script call carries one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFolder {
    /// The skill's name (the key of `[skills.environments.NAME]`).
    pub name: String,
    /// Its folder (`None`: a programmatic skill, nothing to read).
    pub dir: Option<std::path::PathBuf>,
    /// `metadata.a2e-requirements`.
    pub declared: Vec<String>,
}

impl SkillFolder {
    /// The folder of `skill`.
    pub fn of(skill: &CompiledSkill) -> Self {
        SkillFolder {
            name: skill.name().to_owned(),
            dir: skill.dir.clone(),
            declared: skill.requirements.clone(),
        }
    }
}

/// The files of a skill folder that declare requirements, in the order they are read.
pub const REQUIREMENT_FILES: [&str; 2] = ["requirements.txt", "pyproject.toml"];

/// A set of requirement lines: in normal form, de-duplicated, sorted (so the same set written two
/// ways builds one environment), with where it was declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirements {
    /// The lines, sorted.
    pub lines: Vec<String>,
    /// Where they came from (`requirements.txt`, `[skills.environments.pdf]`, ...).
    pub sources: Vec<String>,
}

impl Requirements {
    /// The environment's key: the SHA-256 of the interpreter (its path and version), the
    /// build policy and the lines, in hex.
    pub fn key(&self, interpreter: &Path, version: Option<&str>, builds: Builds) -> String {
        let mut hash = Sha256::new();
        hash.update(b"skillet-env-v2\n");
        hash.update(builds.as_str().as_bytes());
        hash.update(b"\n");
        hash.update(interpreter.as_os_str().as_encoded_bytes());
        hash.update(b"\n");
        hash.update(version.unwrap_or_default().as_bytes());
        hash.update(b"\n");
        for line in &self.lines {
            hash.update(line.as_bytes());
            hash.update(b"\n");
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The lines as a `requirements.txt`.
    pub fn file_text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}

/// The requirements of `skill`: `host` (the host's list for it) when set, else what its folder
/// declares. Each entry is parsed as one PEP 508 requirement and kept in its normal form (see
/// `pep508`), so the file uv reads holds nothing else. `Ok(None)`: it needs no environment.
/// `Err`: a declaration is unreadable or refused, with the source that declared it (the skill
/// is then `Blocked` with this reason).
pub fn declared(
    skill: &SkillFolder,
    host: Option<&[String]>,
) -> Result<Option<Requirements>, EnvironmentError> {
    let mut entries: Vec<(String, String)> = Vec::new();
    if let Some(host) = host {
        let source = format!("[skills.environments.{}]", skill.name);
        entries.extend(host.iter().map(|line| (source.clone(), line.clone())));
    } else {
        if let Some(dir) = skill.dir.as_deref() {
            from_folder(dir, &mut entries)?;
        }
        entries.extend(
            skill
                .declared
                .iter()
                .map(|line| ("metadata.a2e-requirements".to_owned(), line.clone())),
        );
    }
    let mut lines = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    for (source, entry) in &entries {
        if entry.trim_matches([' ', '\t']).is_empty() {
            continue;
        }
        let requirement = pep508::parse(entry).map_err(|reason| EnvironmentError::Requirement {
            declared_in: source.clone(),
            entry: entry.clone(),
            reason,
        })?;
        lines.push(requirement.to_string());
        if !sources.contains(source) {
            sources.push(source.clone());
        }
    }
    lines.sort();
    lines.dedup();
    if lines.is_empty() {
        return Ok(None);
    }
    Ok(Some(Requirements { lines, sources }))
}

fn from_folder(dir: &Path, entries: &mut Vec<(String, String)>) -> Result<(), EnvironmentError> {
    let read = |name: &'static str| read_declaration(dir, name, 256 * 1024);
    if let Some(text) = read("requirements.txt")? {
        entries.extend(
            text.lines()
                .map(|line| line.split(" #").next().unwrap_or_default())
                .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
                .map(|line| ("requirements.txt".to_owned(), line.to_owned())),
        );
    }
    if let Some(text) = read("pyproject.toml")? {
        let doc: toml::Table = text.parse().map_err(EnvironmentError::Pyproject)?;
        if let Some(deps) = doc.get("project").and_then(|p| p.get("dependencies")) {
            let deps = deps
                .as_array()
                .ok_or(EnvironmentError::PyprojectDependencies)?;
            for dep in deps {
                let dep = dep
                    .as_str()
                    .ok_or(EnvironmentError::PyprojectDependencies)?;
                entries.push(("pyproject.toml".to_owned(), dep.to_owned()));
            }
        }
    }
    Ok(())
}

/// The text of the declaration file `name` in `dir`: `None` when there is none; refused when
/// it is not a regular file (a symlink could point anywhere) or over `max` bytes.
pub(crate) fn read_declaration(
    dir: &Path,
    name: &'static str,
    max: u64,
) -> Result<Option<String>, EnvironmentError> {
    let path = dir.join(name);
    match std::fs::symlink_metadata(&path) {
        Err(_) => Ok(None),
        Ok(meta) if !meta.is_file() => Err(EnvironmentError::NotRegularFile { file: name }),
        Ok(meta) if meta.len() > max => Err(EnvironmentError::TooLarge { file: name, max }),
        Ok(_) => {
            std::fs::read_to_string(&path)
                .map(Some)
                .map_err(|e| EnvironmentError::Unreadable {
                    file: name,
                    source: e.into(),
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_in(dir: &Path, extra_metadata: &str) -> SkillFolder {
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {}\ndescription: A test skill.\n{extra_metadata}---\nDo it.\n",
                dir.file_name().unwrap().to_string_lossy()
            ),
        )
        .unwrap();
        SkillFolder::of(
            &crate::skill::load_skill_dir(dir, crate::skill::SkillSource::Project).expect("loads"),
        )
    }

    fn folder() -> (tempfile::TempDir, std::path::PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("pdf");
        std::fs::create_dir(&dir).unwrap();
        (root, dir)
    }

    #[test]
    fn every_folder_source_counts_and_the_set_is_sorted_and_deduplicated() {
        let (_root, dir) = folder();
        std::fs::write(
            dir.join("requirements.txt"),
            "# tools\npypdf>=5  # pdf\n\nreportlab\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("pyproject.toml"),
            "[project]\nname = \"x\"\ndependencies = [\"pypdf>=5\", \"pdfplumber\"]\n",
        )
        .unwrap();
        let skill = skill_in(&dir, "metadata:\n  a2e-requirements: '[\"defusedxml\"]'\n");
        let reqs = declared(&skill, None).unwrap().expect("has requirements");
        assert_eq!(
            reqs.lines,
            ["defusedxml", "pdfplumber", "pypdf>=5", "reportlab"]
        );
        assert_eq!(
            reqs.sources,
            [
                "requirements.txt",
                "pyproject.toml",
                "metadata.a2e-requirements"
            ]
        );
    }

    #[test]
    fn the_hosts_list_replaces_the_folders() {
        let (_root, dir) = folder();
        std::fs::write(dir.join("requirements.txt"), "pypdf\n").unwrap();
        let skill = skill_in(&dir, "");
        let host = vec!["pypdf>=5".to_owned(), "pdfplumber".to_owned()];
        let reqs = declared(&skill, Some(&host)).unwrap().unwrap();
        assert_eq!(reqs.lines, ["pdfplumber", "pypdf>=5"]);
        assert_eq!(reqs.sources, ["[skills.environments.pdf]"]);
    }

    #[test]
    fn the_key_depends_on_the_set_not_its_spelling_and_on_the_interpreter_and_builds() {
        const W: Builds = Builds::WheelsOnly;
        let (_root, dir) = folder();
        std::fs::write(dir.join("requirements.txt"), "b\na\n").unwrap();
        let one = declared(&skill_in(&dir, ""), None).unwrap().unwrap();
        std::fs::write(dir.join("requirements.txt"), "a\n  b\na\n").unwrap();
        let two = declared(&skill_in(&dir, ""), None).unwrap().unwrap();
        let py = Path::new("/usr/bin/python3.11");
        assert_eq!(
            one.key(py, Some("3.11.2"), W),
            two.key(py, Some("3.11.2"), W)
        );
        assert_ne!(
            one.key(py, Some("3.11.2"), W),
            one.key(py, Some("3.12.0"), W)
        );
        assert_ne!(one.key(py, None, W), one.key(py, None, Builds::AllowSdist));
        assert_eq!(one.key(py, None, W).len(), 64);
    }

    #[test]
    fn lines_that_would_leave_the_index_are_refused() {
        for bad in [
            "--index-url https://evil.example/simple",
            "-r other.txt",
            "pkg @ https://evil.example/pkg.whl",
            "git+https://example.com/x.git",
            "./local",
        ] {
            let (_root, dir) = folder();
            std::fs::write(dir.join("requirements.txt"), format!("{bad}\n")).unwrap();
            let err = declared(&skill_in(&dir, ""), None).unwrap_err().to_string();
            assert!(err.starts_with("requirements.txt: "), "{bad}: {err}");
        }
    }

    #[test]
    fn a_newline_in_a2e_requirements_cannot_smuggle_an_option_into_the_file() {
        let (_root, dir) = folder();
        let mut skill = skill_in(&dir, "");
        skill.declared = vec!["evilpkg\n--find-links /dir".to_owned()];
        let err = declared(&skill, None).unwrap_err().to_string();
        assert!(err.starts_with("metadata.a2e-requirements: "), "{err}");
        assert!(err.contains("line break"), "{err}");
        skill.declared = vec!["pkg\r\n-e /tmp/evil".to_owned()];
        assert!(declared(&skill, None).is_err());
    }

    #[test]
    fn a_newline_in_a_pyproject_dependency_is_refused_naming_pyproject() {
        let (_root, dir) = folder();
        std::fs::write(
            dir.join("pyproject.toml"),
            "[project]\nname = \"x\"\ndependencies = [\"ok\", \"evil\\n--index-url http://e/s\"]\n",
        )
        .unwrap();
        let err = declared(&skill_in(&dir, ""), None).unwrap_err().to_string();
        assert!(err.starts_with("pyproject.toml: "), "{err}");
        assert!(err.contains("line break"), "{err}");
    }

    #[test]
    fn a_refused_host_requirement_names_the_hosts_table() {
        let (_root, dir) = folder();
        let host = vec!["pkg @ file:x".to_owned()];
        let err = declared(&skill_in(&dir, ""), Some(&host))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("[skills.environments.pdf]: "), "{err}");
    }

    #[test]
    fn the_file_uv_reads_is_written_from_the_parsed_form() {
        let (_root, dir) = folder();
        std::fs::write(
            dir.join("requirements.txt"),
            "PyPDF >= 5\t\nlxml ; python_version<'3.13'\n",
        )
        .unwrap();
        let reqs = declared(&skill_in(&dir, ""), None).unwrap().unwrap();
        assert_eq!(
            reqs.file_text(),
            "lxml; python_version < \"3.13\"\npypdf>=5\n"
        );
        for line in reqs.file_text().lines() {
            assert_eq!(pep508::parse(line).unwrap().to_string(), line);
        }
    }

    #[test]
    fn a_folder_without_requirements_needs_no_environment() {
        let (_root, dir) = folder();
        assert_eq!(declared(&skill_in(&dir, ""), None).unwrap(), None);
    }
}
