//! [`Authoring`]: the engine's side of `skillet_core::workbench::Workbench`, what a console asks
//! for a skill's author outside a call — the environment a folder declares (`environments`)
//! and a run of the skill's evals (`eval`) on the host's model, reported as
//! `skillet eval --json-out` writes it.
//!
//! Not here: the console's routes and the history its reports are saved in (`skillet-host`),
//! the eval runner itself (`eval`).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use skillet_core::workbench::{
    DeclaredEnvironment, EvalDocument, EvalsError, NODE_FILES, Workbench,
};
use tokio_util::sync::CancellationToken;

use crate::environments;
use crate::eval::{self, EvalPlan, EvalReport, ModelTarget};
use crate::service::SkillService;
use crate::skill::{ManifestError, SkillSource, load_skill_dir};

/// The engine's [`Workbench`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Authoring;

#[async_trait]
impl Workbench for Authoring {
    fn environment(&self, name: &str, dir: &Path, declared: Vec<String>) -> DeclaredEnvironment {
        // A plain file at the folder's top, as the loader lists it (no symlink followed).
        let node = NODE_FILES
            .iter()
            .filter(|file| std::fs::symlink_metadata(dir.join(file)).is_ok_and(|m| m.is_file()))
            .map(|file| (*file).to_owned())
            .collect();
        let folder = environments::SkillFolder {
            name: name.to_owned(),
            dir: Some(dir.to_path_buf()),
            declared,
        };
        let mut environment = DeclaredEnvironment {
            node,
            ..DeclaredEnvironment::default()
        };
        match environments::declared_requirements(&folder, None) {
            Ok(Some(found)) => {
                environment.python = found.lines;
                environment.sources = found.sources;
            }
            Ok(None) => {}
            Err(why) => environment.error = Some(why.to_string()),
        }
        environment
    }

    async fn run_evals(
        &self,
        name: &str,
        dir: &Path,
        service: Arc<dyn SkillService>,
        label: &str,
    ) -> Result<EvalDocument, EvalsError> {
        if !dir.join(eval::EVALS_FILE).is_file() {
            return Err(EvalsError::NoEvals(name.to_owned()));
        }
        let invalid = |problems: String| EvalsError::Invalid {
            skill: name.to_owned(),
            problems,
        };
        let lines = |problems: Vec<ManifestError>| {
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        };
        let folder = dir.to_path_buf();
        let (skill, suite) = tokio::task::spawn_blocking(move || {
            let skill = load_skill_dir(&folder, SkillSource::User)?;
            let suite = eval::load_suite(&skill)?;
            Ok::<_, Vec<ManifestError>>((skill, suite))
        })
        .await
        .map_err(|e| invalid(e.to_string()))?
        .map_err(|problems| invalid(lines(problems)))?;
        let plan = EvalPlan {
            skill: skill.name().to_owned(),
            cases: suite.cases,
            repeat: 1,
            concurrency: 1,
            timeout_seconds: 0,
        };
        let targets = [ModelTarget {
            label: label.to_owned(),
            service,
            judge: None,
        }];
        let labels = [label.to_owned()];
        // `run_plan`'s future is not `Send` (a door's must be): it runs on a blocking thread,
        // driven by the runtime's handle.
        let runtime = tokio::runtime::Handle::current();
        let report = tokio::task::spawn_blocking(move || {
            let records = runtime.block_on(eval::run_plan(
                &plan,
                &targets,
                &|_| {},
                &CancellationToken::new(),
            ));
            EvalReport::build(&plan, &labels, records)
        })
        .await
        .map_err(|e| invalid(e.to_string()))?;
        Ok(report.document())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folders_environment_is_its_requirement_files_declared_lines_and_node_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\nname: x\n---\nHi\n").unwrap();
        std::fs::write(dir.path().join("requirements.txt"), "pypdf>=4\n").unwrap();
        std::fs::write(dir.path().join("package.json"), "{}").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("package-lock.json")).unwrap();
        let found = Authoring.environment("x", dir.path(), vec!["rich".to_owned()]);
        assert_eq!(found.python, vec!["pypdf>=4", "rich"]);
        assert_eq!(
            found.node,
            vec!["package.json"],
            "a symlink is not a node file"
        );
        assert!(found.error.is_none());
        let none = Authoring.environment("x", tempfile::tempdir().unwrap().path(), vec![]);
        assert_eq!(none, DeclaredEnvironment::default());
    }

    #[test]
    fn a_bad_requirement_is_the_environments_error() {
        let dir = tempfile::tempdir().unwrap();
        let found = Authoring.environment("x", dir.path(), vec!["not a requirement ;;".to_owned()]);
        assert!(found.error.is_some(), "{found:?}");
    }
}
