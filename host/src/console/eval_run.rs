//! "Run evals" from the skill view: a skill's `evals/evals.json` run on the host's model through
//! the engine's [`Workbench`] (the library path `skillet eval --save` takes), then saved
//! ([`save_eval`]), one eval at a time per server ([`EvalSlot`]).
//!
//! The runs go to the host's skill service directly, one at a time, with the skill's and the
//! host's limits; they are not calls of a door (not in the run history). No judge runs here:
//! the cases' natural-language expectations are reported ungraded (`skillet eval` grades them).
//!
//! Not here: the route and who may use it (`super::api`), storing reports (`super::evals`),
//! running the evals (the engine's, behind [`Workbench`]).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skillet_core::service::SkillService;
use skillet_core::workbench::{EvalsError, Workbench};

use super::evals::save_eval;
use super::history::HistoryError;

/// Why an eval could not be run from the console.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EvalRunError {
    /// The skill has no folder this host serves (a native skill, or it was unpublished).
    #[error("skill `{0}` has no folder on this server, so it has no evals to run")]
    NoFolder(String),
    /// This host runs no evals (it was built without the engine's workbench).
    #[error("this server does not run evals")]
    NoWorkbench,
    /// The folder has no evals, or they did not load.
    #[error(transparent)]
    Evals(#[from] EvalsError),
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

/// Runs the evals of skill `name`, whose folder is `dir`, on `service` through `workbench`
/// (reported as `label`) and saves the report in the history database at `history_db`; the
/// saved report's id.
pub(crate) async fn run_and_save(
    workbench: &dyn Workbench,
    name: &str,
    dir: &Path,
    service: Arc<dyn SkillService>,
    label: &str,
    history_db: &Path,
) -> Result<i64, EvalRunError> {
    let document = workbench.run_evals(name, dir, service, label).await?;
    let at = history_db.to_path_buf();
    tokio::task::spawn_blocking(move || save_eval(&at, &document))
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
