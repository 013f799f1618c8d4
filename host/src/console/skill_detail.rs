//! What the skill view shows of a skill beyond its definition, read from its folder (hostile
//! input: every read goes through the engine's [`ServedFolder`] with its confinement and size caps): its `SKILL.md`,
//! its examples (`examples/*.json`, each a JSON object of arguments, offered as "Load example")
//! and the environment its folder declares (Python requirements from `requirements.txt`,
//! `pyproject.toml` and `metadata.a2e-requirements`; Node's `package.json`).
//!
//! Not here: the route (`super::api`), the definition (the core's discover), `a2a-examples`
//! (they are in the definition's metadata already), reading requirements (the engine's, through
//! [`Workbench::environment`]).

use serde::Serialize;
use serde_json::Value;
use skillet_core::folder::ServedFolder;
use skillet_core::workbench::{DeclaredEnvironment, EVALS_FILE, Workbench};

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

/// Reads `folder` of skill `name`, whose definition declares `declared` requirements; the
/// environment through `workbench` (none without one). Blocking.
pub(crate) fn read(
    name: &str,
    folder: &dyn ServedFolder,
    declared: Vec<String>,
    workbench: Option<&dyn Workbench>,
) -> SkillDetail {
    let skill_md = folder
        .read("SKILL.md", MAX_SKILL_MD_BYTES)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let listing = folder.list(MAX_LISTED);
    let mut examples = Vec::new();
    for file in &listing.files {
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
    let environment = workbench
        .map(|workbench| workbench.environment(name, folder.dir(), declared))
        .unwrap_or_default();
    // The listing leaves `evals/` out (its answers are not served): asked of the folder itself,
    // a plain file only (`eval_run` loads it confined).
    let has_evals =
        std::fs::symlink_metadata(folder.dir().join(EVALS_FILE)).is_ok_and(|meta| meta.is_file());
    SkillDetail {
        skill_md,
        examples,
        environment,
        has_evals,
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use skillet_core::folder::{FolderError, FolderListing, SkillFile};
    use skillet_core::workbench::{EvalDocument, EvalsError};

    use super::*;

    /// A folder of test files, listed flat and read without the engine's confinement (what is
    /// tested here is what the skill view does with what a folder serves).
    #[derive(Debug)]
    struct Files {
        dir: PathBuf,
        files: Vec<(&'static str, &'static str)>,
    }

    impl ServedFolder for Files {
        fn dir(&self) -> &Path {
            &self.dir
        }

        fn list(&self, _max_files: usize) -> FolderListing {
            let files = self
                .files
                .iter()
                .map(|(path, text)| SkillFile {
                    path: (*path).to_owned(),
                    size: text.len() as u64,
                })
                .collect();
            FolderListing { files, cut: false }
        }

        fn read(&self, path: &str, _max_bytes: u64) -> Result<Vec<u8>, FolderError> {
            self.files
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, text)| text.as_bytes().to_vec())
                .ok_or_else(|| FolderError::NotFound(path.to_owned()))
        }
    }

    /// Says which requirements it was asked about.
    #[derive(Debug)]
    struct Echo;

    #[async_trait::async_trait]
    impl Workbench for Echo {
        fn environment(&self, name: &str, _: &Path, declared: Vec<String>) -> DeclaredEnvironment {
            DeclaredEnvironment {
                python: declared,
                sources: vec![format!("asked for {name}")],
                ..DeclaredEnvironment::default()
            }
        }

        async fn run_evals(
            &self,
            name: &str,
            _: &Path,
            _: std::sync::Arc<dyn skillet_core::service::SkillService>,
            _: &str,
        ) -> Result<EvalDocument, EvalsError> {
            Err(EvalsError::NoEvals(name.to_owned()))
        }
    }

    fn folder() -> Files {
        Files {
            dir: PathBuf::from("/nonexistent"),
            files: vec![
                ("SKILL.md", "---\nname: x\n---\nHi\n"),
                ("examples/basic.json", r#"{"prompt": "hi"}"#),
                ("examples/list.json", "[1, 2]"),
                ("examples/broken.json", "{"),
                ("examples/deeper/no.json", "{}"),
            ],
        }
    }

    #[test]
    fn examples_are_the_top_level_json_objects_and_the_environment_is_the_workbenchs() {
        let detail = read("x", &folder(), vec!["rich".to_owned()], Some(&Echo));
        assert!(detail.skill_md.unwrap().contains("Hi"));
        assert_eq!(
            detail.examples,
            vec![Example {
                name: "basic.json".to_owned(),
                arguments: serde_json::json!({"prompt": "hi"}),
            }]
        );
        assert_eq!(detail.environment.python, vec!["rich"]);
        assert_eq!(detail.environment.sources, vec!["asked for x"]);
        assert!(!detail.has_evals);
    }

    #[test]
    fn without_a_workbench_no_environment_is_shown() {
        let detail = read("x", &folder(), vec!["rich".to_owned()], None);
        assert_eq!(detail.environment, DeclaredEnvironment::default());
        assert_eq!(detail.examples.len(), 1);
    }
}
