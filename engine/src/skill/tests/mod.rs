//! Loader, registry and A2A projection tests, on real temp directories.

mod a2a_tests;
mod ecosystem_tests;
mod loader_error_tests;
mod loader_tests;
mod parallel_load_tests;
mod registry_tests;

use std::path::{Path, PathBuf};

use super::{CompiledSkill, ManifestError, load_skill_dir};

/// Writes `root/<dir>/SKILL.md` and the given assets; returns the skill directory.
pub(super) fn write_skill(
    root: &Path,
    dir: &str,
    skill_md: &str,
    assets: &[(&str, &str)],
) -> PathBuf {
    let skill_dir = root.join(dir);
    std::fs::create_dir_all(&skill_dir).unwrap();
    std::fs::write(skill_dir.join("SKILL.md"), skill_md).unwrap();
    for (path, text) in assets {
        let file = skill_dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    skill_dir
}

/// A SKILL.md with `name`, a description, the given metadata lines and body.
pub(super) fn manifest(name: &str, metadata: &[&str], body: &str) -> String {
    let mut text = format!("---\nname: {name}\ndescription: A test skill.\n");
    if !metadata.is_empty() {
        text.push_str("metadata:\n");
        for line in metadata {
            text.push_str("  ");
            text.push_str(line);
            text.push('\n');
        }
    }
    text.push_str("---\n");
    text.push_str(body);
    text
}

pub(super) const OBJECT_SCHEMA: &str =
    r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;

pub(super) fn load_ok(dir: &Path) -> CompiledSkill {
    load_skill_dir(dir, crate::skill::SkillSource::Project)
        .unwrap_or_else(|errors| panic!("expected {} to load: {errors:#?}", dir.display()))
}

/// Loads, expects failure, and returns the first *error* (warnings skipped).
pub(super) fn first_error(dir: &Path) -> ManifestError {
    match load_skill_dir(dir, crate::skill::SkillSource::Project) {
        Ok(skill) => panic!(
            "expected {} to fail, loaded {:?}",
            dir.display(),
            skill.name()
        ),
        Err(problems) => problems
            .into_iter()
            .find(ManifestError::is_error)
            .expect("a failed load reports at least one error"),
    }
}

pub(super) fn bundled_skills_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills")
}
