//! What the skill view shows of a skill beyond its definition, read from its folder (hostile
//! input: every read goes through [`SkillFolder`]'s confinement and size caps): its `SKILL.md`,
//! its examples (`examples/*.json`, each a JSON object of arguments, offered as "Load example")
//! and the environment its folder declares (Python requirements from `requirements.txt`,
//! `pyproject.toml` and `metadata.a2e-requirements`; Node's `package.json`).
//!
//! Not here: the route (`super::api`), the definition (the core's discover), `a2a-examples`
//! (they are in the definition's metadata already).

use serde::Serialize;
use serde_json::Value;
use skillet_engine::files::SkillFolder;

/// The largest `SKILL.md` the skill view shows.
const MAX_SKILL_MD_BYTES: u64 = 256 * 1024;

/// The largest example file read.
const MAX_EXAMPLE_BYTES: u64 = 64 * 1024;

/// The most examples offered.
const MAX_EXAMPLES: usize = 20;

/// The most files of a folder looked through for examples and environment files.
const MAX_LISTED: usize = 500;

/// One example: its file and the arguments it holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Example {
    /// Its file name (`basic.json`).
    pub name: String,
    /// The arguments (a JSON object, `_files` included when it has some).
    pub arguments: Value,
}

/// The environment a skill's folder declares.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub(crate) struct DeclaredEnvironment {
    /// Python requirement lines, in normal form.
    pub python: Vec<String>,
    /// Where they were declared (`requirements.txt`, `metadata.a2e-requirements`, ...).
    pub sources: Vec<String>,
    /// Node files found (`package.json`, `package-lock.json`).
    pub node: Vec<String>,
    /// Why a declaration could not be read (the skill is blocked for it).
    pub error: Option<String>,
}

/// Everything the skill view reads from a folder.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub(crate) struct SkillDetail {
    /// `SKILL.md` (lossy UTF-8), `None` when it could not be read.
    pub skill_md: Option<String>,
    /// The examples, by file name.
    pub examples: Vec<Example>,
    /// What the folder declares.
    pub environment: DeclaredEnvironment,
    /// Whether it has `evals/evals.json` (the skill view offers "Run evals").
    pub has_evals: bool,
}

/// Reads `folder` of skill `name`, whose definition declares `declared` requirements. Blocking.
pub(crate) fn read(name: &str, folder: &SkillFolder, declared: Vec<String>) -> SkillDetail {
    let skill_md = folder
        .read("SKILL.md", MAX_SKILL_MD_BYTES)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let listing = folder.list(MAX_LISTED);
    let mut examples = Vec::new();
    let mut node = Vec::new();
    for file in &listing.files {
        if skillet_engine::environments::NODE_FILES.contains(&file.path.as_str()) {
            node.push(file.path.clone());
        }
        let Some(example) = file
            .path
            .strip_prefix("examples/")
            .filter(|rest| rest.ends_with(".json") && !rest.contains('/'))
        else {
            continue;
        };
        if examples.len() >= MAX_EXAMPLES || file.size > MAX_EXAMPLE_BYTES {
            continue;
        }
        let parsed = folder
            .read(&file.path, MAX_EXAMPLE_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .filter(Value::is_object);
        if let Some(arguments) = parsed {
            examples.push(Example {
                name: example.to_owned(),
                arguments,
            });
        }
    }
    let requirements = skillet_engine::environments::SkillFolder {
        name: name.to_owned(),
        dir: Some(folder.dir().to_path_buf()),
        declared,
    };
    let mut environment = DeclaredEnvironment {
        node,
        ..DeclaredEnvironment::default()
    };
    match skillet_engine::environments::declared_requirements(&requirements, None) {
        Ok(Some(found)) => {
            environment.python = found.lines;
            environment.sources = found.sources;
        }
        Ok(None) => {}
        Err(why) => environment.error = Some(why.to_string()),
    }
    // The listing leaves `evals/` out (its answers are not served): asked of the folder itself,
    // a plain file only (`eval_run` loads it confined).
    let has_evals = std::fs::symlink_metadata(folder.dir().join(skillet_engine::eval::EVALS_FILE))
        .is_ok_and(|meta| meta.is_file());
    SkillDetail {
        skill_md,
        examples,
        environment,
        has_evals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_and_requirements_are_read_from_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\nname: x\n---\nHi\n").unwrap();
        std::fs::create_dir_all(dir.path().join("examples/deeper")).unwrap();
        std::fs::write(
            dir.path().join("examples/basic.json"),
            r#"{"prompt": "hi"}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("examples/list.json"), "[1, 2]").unwrap();
        std::fs::write(dir.path().join("examples/broken.json"), "{").unwrap();
        std::fs::write(dir.path().join("examples/deeper/no.json"), "{}").unwrap();
        std::fs::write(dir.path().join("requirements.txt"), "pypdf>=4\n").unwrap();
        let detail = read("x", &SkillFolder::new(dir.path()), vec!["rich".to_owned()]);
        assert!(detail.skill_md.unwrap().contains("Hi"));
        assert_eq!(
            detail.examples,
            vec![Example {
                name: "basic.json".to_owned(),
                arguments: serde_json::json!({"prompt": "hi"}),
            }]
        );
        assert_eq!(detail.environment.python, vec!["pypdf>=4", "rich"]);
        assert!(detail.environment.error.is_none());
    }

    #[test]
    fn a_folder_declaring_nothing_has_no_environment() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\nname: x\n---\n").unwrap();
        let detail = read("x", &SkillFolder::new(dir.path()), vec![]);
        assert_eq!(detail.environment, DeclaredEnvironment::default());
        assert!(detail.examples.is_empty());
    }
}
