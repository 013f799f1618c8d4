//! "Run evals" from the skill view: a skill's `evals/evals.json` run on the host's model through
//! the library path `skillet eval --save` takes (`skillet_engine::eval::{load_suite, run_plan,
//! EvalReport}`, then [`save_eval`]), one eval at a time per server ([`EvalSlot`]).
//!
//! The runs go to the host's skill service directly, one at a time, with the skill's and the
//! host's limits; they are not calls of a door (not in the run history). No judge runs here:
//! the cases' natural-language expectations are reported ungraded (`skillet eval` grades them).
//!
//! Not here: the route and who may use it (`super::api`), storing reports (`super::evals`).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skillet_engine::eval::{self, EvalPlan, EvalReport, ModelTarget};
use skillet_engine::service::SkillService;
use skillet_engine::skill::{SkillSource, load_skill_dir};
use tokio_util::sync::CancellationToken;

use super::evals::save_eval;
use super::history::HistoryError;

/// Why an eval could not be run from the console.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EvalRunError {
    /// The skill has no folder this host serves (a native skill, or it was unpublished).
    #[error("skill `{0}` has no folder on this server, so it has no evals to run")]
    NoFolder(String),
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
    /// The report could not be saved.
    #[error(transparent)]
    Save(#[from] HistoryError),
}

/// The one eval a server runs at a time. Clones share it.
#[derive(Debug, Clone, Default)]
pub(crate) struct EvalSlot(Arc<AtomicBool>);

/// Holds the [`EvalSlot`] until dropped.
#[derive(Debug)]
pub(crate) struct EvalTurn(Arc<AtomicBool>);

impl EvalSlot {
    /// Takes the slot; `None` while another eval holds it.
    pub(crate) fn try_take(&self) -> Option<EvalTurn> {
        self.0
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| EvalTurn(Arc::clone(&self.0)))
    }
}

impl Drop for EvalTurn {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Runs the evals of skill `name`, whose folder is `dir`, on `service` (reported as `label`)
/// and saves the report in the history database at `history_db`; the saved report's id.
pub(crate) async fn run_and_save(
    name: &str,
    dir: &Path,
    service: Arc<dyn SkillService>,
    label: &str,
    history_db: &Path,
) -> Result<i64, EvalRunError> {
    if !dir.join(eval::EVALS_FILE).is_file() {
        return Err(EvalRunError::NoEvals(name.to_owned()));
    }
    let invalid = |problems: Vec<skillet_engine::skill::ManifestError>| EvalRunError::Invalid {
        skill: name.to_owned(),
        problems: problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let folder = dir.to_path_buf();
    let (skill, suite) = tokio::task::spawn_blocking(move || {
        let skill = load_skill_dir(&folder, SkillSource::User)?;
        let suite = eval::load_suite(&skill)?;
        Ok::<_, Vec<skillet_engine::skill::ManifestError>>((skill, suite))
    })
    .await
    .map_err(|e| EvalRunError::Invalid {
        skill: name.to_owned(),
        problems: e.to_string(),
    })?
    .map_err(invalid)?;
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
    let at = history_db.to_path_buf();
    // `run_plan`'s future is not `Send` (a route's must be): it runs on a blocking thread,
    // driven by the runtime's handle, and the report is saved there too.
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let records = runtime.block_on(eval::run_plan(
            &plan,
            &targets,
            &|_| {},
            &CancellationToken::new(),
        ));
        save_eval(&at, &EvalReport::build(&plan, &labels, records))
    })
    .await
    .map_err(|e| HistoryError::Query(e.to_string()))?
    .map_err(EvalRunError::Save)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_eval_runs_at_a_time_and_the_slot_frees_when_it_ends() {
        let slot = EvalSlot::default();
        let turn = slot.try_take().expect("a free slot is taken");
        assert!(slot.clone().try_take().is_none(), "a second eval waits");
        drop(turn);
        assert!(slot.try_take().is_some(), "free again once the first ended");
    }
}
