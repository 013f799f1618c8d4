//! What a host's console asks of the engine for a skill's author, beyond running calls: the
//! environment a skill folder declares, and running the skill's evals on the host's model
//! ([`Workbench`], implemented by the engine and handed to the host by the composition root).
//!
//! Not here: how requirements are read and evals run (the engine's `environments` and `eval`),
//! the console's routes and the history the reports are saved in (`skillet-host`'s `console`).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use crate::service::SkillService;

/// Where a skill folder keeps its evals.
pub const EVALS_FILE: &str = "evals/evals.json";

/// The files of a skill folder that declare Node dependencies.
pub const NODE_FILES: [&str; 2] = ["package.json", "package-lock.json"];

/// The environment a skill's folder declares.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DeclaredEnvironment {
    /// Python requirement lines, in normal form.
    pub python: Vec<String>,
    /// Where they were declared (`requirements.txt`, `metadata.a2e-requirements`, ...).
    pub sources: Vec<String>,
    /// Node files found (`package.json`, `package-lock.json`).
    pub node: Vec<String>,
    /// Why a declaration could not be read (the skill is blocked for it).
    pub error: Option<String>,
}

/// An eval report as a host keeps it: the skill, whether every run passed, and the report
/// document `skillet eval --json-out` writes (`models[]` each with `summary`, `cases[]`,
/// `runs[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalDocument {
    /// The skill evaluated.
    pub skill: String,
    /// Whether every run of every model passed.
    pub passed: bool,
    /// The report.
    pub report: Value,
}

/// Why a skill's evals could not be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalsError {
    /// The folder has no `evals/evals.json`.
    #[error(
        "skill `{0}` has no evals: write evals/evals.json in its folder (docs/EVALS.md; `skillet init NAME` scaffolds one)"
    )]
    NoEvals(String),
    /// The skill or its evals file did not load.
    #[error("the evals of `{skill}` did not load: {problems}")]
    Invalid {
        /// The skill.
        skill: String,
        /// Every problem, one per line.
        problems: String,
    },
}

/// The engine's authoring services, as a console uses them.
#[async_trait]
pub trait Workbench: Send + Sync + std::fmt::Debug {
    /// What the folder `dir` of skill `name` declares it needs to run its scripts, with
    /// `declared` its `metadata.a2e-requirements`. Blocking: reads the folder.
    fn environment(&self, name: &str, dir: &Path, declared: Vec<String>) -> DeclaredEnvironment;

    /// Runs the evals of skill `name`, whose folder is `dir`, on `service`, reporting the model
    /// as `label`: each case once, one at a time, with the skill's and the host's limits. The
    /// cases' natural-language expectations are left ungraded (no judge runs here).
    async fn run_evals(
        &self,
        name: &str,
        dir: &Path,
        service: Arc<dyn SkillService>,
        label: &str,
    ) -> Result<EvalDocument, EvalsError>;
}
