//! Saved eval reports: `skillet eval --save` writes each report into the history database
//! (the `console_evals` table, beside `console_runs`), and the console's skill view shows the
//! newest ones side by side per model (`GET /console/api/skills/{name}/evals`).
//!
//! A report is kept as the JSON `skillet eval --json-out` writes ([`EvalDocument`]); the newest
//! [`MAX_SAVED_PER_SKILL`] of each skill are kept, older ones deleted when a new one is saved.
//! The CLI writes with its own connection (it is another process than the server), so the
//! file is opened as the history opens it: WAL, with a busy timeout.
//!
//! Not here: running the evals (the engine's, behind `skillet_core::workbench::Workbench`),
//! the routes (`super::api`).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::params;
use serde::Serialize;
use serde_json::Value;
use skillet_core::workbench::EvalDocument;

use super::history::{History, HistoryError};
use super::history_schema::{SCHEMA, connect};

/// The reports of one skill kept in the database.
pub(crate) const MAX_SAVED_PER_SKILL: i64 = 20;

/// One saved report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SavedEval {
    /// Its row id.
    pub id: i64,
    /// The skill evaluated.
    pub skill: String,
    /// When it was saved (seconds since the Unix epoch).
    pub saved_at: f64,
    /// Whether every run of every model passed.
    pub passed: bool,
    /// The report, as `--json-out` writes it: `models[]` each with its `summary`, `cases[]`
    /// and `runs[]`.
    pub report: Value,
}

/// Saves `report` in the history database at `path` (created when missing); its row id.
pub fn save_eval(path: &Path, report: &EvalDocument) -> Result<i64, HistoryError> {
    let open_error = |message: String| HistoryError::Open {
        path: path.to_path_buf(),
        message,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| open_error(e.to_string()))?;
    }
    let mut conn = connect(path).map_err(open_error)?;
    let query = |e: rusqlite::Error| HistoryError::Query(e.to_string());
    // The history's tables, the evals' among them, whoever opens the file first.
    conn.execute_batch(SCHEMA).map_err(query)?;
    let json =
        serde_json::to_string(&report.report).map_err(|e| HistoryError::Query(e.to_string()))?;
    let saved_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let tx = conn.transaction().map_err(query)?;
    tx.execute(
        "INSERT INTO console_evals (skill, saved_at, passed, report) VALUES (?1, ?2, ?3, ?4)",
        params![report.skill, saved_at, report.passed, json],
    )
    .map_err(query)?;
    let id = tx.last_insert_rowid();
    tx.execute(
        "DELETE FROM console_evals WHERE skill = ?1 AND id NOT IN \
         (SELECT id FROM console_evals WHERE skill = ?1 ORDER BY id DESC LIMIT ?2)",
        params![report.skill, MAX_SAVED_PER_SKILL],
    )
    .map_err(query)?;
    tx.commit().map_err(query)?;
    Ok(id)
}

impl History {
    /// The newest `limit` saved reports of `skill`, newest first.
    pub async fn evals(&self, skill: &str, limit: usize) -> Result<Vec<SavedEval>, HistoryError> {
        let skill = skill.to_owned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |conn| {
            let mut statement = conn.prepare(
                "SELECT id, skill, saved_at, passed, report FROM console_evals \
                 WHERE skill = ?1 ORDER BY id DESC LIMIT ?2",
            )?;
            statement
                .query_map(params![skill, limit], |row| {
                    let report: String = row.get(4)?;
                    Ok(SavedEval {
                        id: row.get(0)?,
                        skill: row.get(1)?,
                        saved_at: row.get(2)?,
                        passed: row.get(3)?,
                        // A row another version wrote and this one cannot read shows as null.
                        report: serde_json::from_str(&report).unwrap_or(Value::Null),
                    })
                })?
                .collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::HistoryLimits;

    /// A report with one entry per model, as `--json-out` writes them.
    fn report(skill: &str, models: &[&str]) -> EvalDocument {
        let models: Vec<Value> = models
            .iter()
            .map(|m| serde_json::json!({"model": m, "summary": {}, "cases": [], "runs": []}))
            .collect();
        EvalDocument {
            skill: skill.to_owned(),
            passed: true,
            report: serde_json::json!({"skill": skill, "passed": true, "models": models}),
        }
    }

    #[tokio::test]
    async fn saved_reports_are_read_back_newest_first_per_skill_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/history.db");
        // The CLI saves before any server opened the file.
        let first = save_eval(&path, &report("summarize", &["mock/a", "mock/b"])).unwrap();
        save_eval(&path, &report("other", &["mock/a"])).unwrap();
        let history = History::open(&path, HistoryLimits::default()).unwrap();
        let saved = history.evals("summarize", 5).await.unwrap();
        assert_eq!(saved.len(), 1);
        assert_eq!(saved[0].id, first);
        assert_eq!(saved[0].skill, "summarize");
        let models: Vec<&str> = saved[0].report["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["model"].as_str().unwrap())
            .collect();
        assert_eq!(models, ["mock/a", "mock/b"]);

        for _ in 0..MAX_SAVED_PER_SKILL + 3 {
            save_eval(&path, &report("summarize", &["mock/c"])).unwrap();
        }
        let saved = history.evals("summarize", 100).await.unwrap();
        assert_eq!(saved.len() as i64, MAX_SAVED_PER_SKILL);
        assert!(saved.windows(2).all(|w| w[0].id > w[1].id), "newest first");
        assert!(saved.iter().all(|s| s.id != first), "the oldest went");
        assert_eq!(history.evals("other", 5).await.unwrap().len(), 1);
        assert!(history.evals("nothing", 5).await.unwrap().is_empty());
    }
}
