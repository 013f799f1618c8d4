//! `[console]`: the web console of `skillet serve --http` (the page at `/`) and its run
//! history.
//!
//! ```toml
//! [console]
//! enabled = true            # default: on when serving a loopback address, off elsewhere
//! history = true            # record every run of this server (default true)
//! history_db = "state.db"   # default $XDG_STATE_HOME/skillet/state.db, else ~/.local/state/skillet/state.db
//! max_runs = 1000           # the most runs kept (oldest deleted first)
//! max_age_days = 30         # the longest a run is kept
//! capture_content = false   # keep each run's input and answer (default: [telemetry] capture_content)
//! ```
//!
//! Only configuration lives here; the console is `skillet_host::console`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use skillet_host::console::{DEFAULT_MAX_AGE, DEFAULT_MAX_RUNS, HistoryLimits};

/// `[console]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsoleConfig {
    /// Whether `/` serves the console; `None`: on for a loopback address only.
    pub enabled: Option<bool>,
    /// Whether runs are recorded.
    pub history: bool,
    /// The SQLite file (relative to this file); `None`: the XDG state default.
    pub history_db: Option<PathBuf>,
    /// The most runs kept.
    pub max_runs: u32,
    /// The longest a run is kept, in days.
    pub max_age_days: f64,
    /// Whether a run's input and answer are kept; `None`: `[telemetry] capture_content`.
    pub capture_content: Option<bool>,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        ConsoleConfig {
            enabled: None,
            history: true,
            history_db: None,
            max_runs: DEFAULT_MAX_RUNS,
            max_age_days: DEFAULT_MAX_AGE.as_secs_f64() / 86_400.0,
            capture_content: None,
        }
    }
}

impl ConsoleConfig {
    /// Whether the console is served on a server bound to a loopback address or not.
    pub fn enabled_on(&self, loopback: bool) -> bool {
        self.enabled.unwrap_or(loopback)
    }

    /// The history's bounds.
    pub fn limits(&self) -> HistoryLimits {
        HistoryLimits {
            max_runs: self.max_runs,
            max_age: Duration::from_secs_f64(self.max_age_days * 86_400.0),
        }
    }

    /// The history file: `history_db`, else the XDG state default (`None` when neither
    /// `XDG_STATE_HOME` nor `HOME` is set).
    pub fn history_path(&self) -> Option<PathBuf> {
        self.history_path_beside(None)
    }

    /// The history file when `[server] state_db` is `state_db`: `history_db`, else the state
    /// database (one file for both), else the XDG state default.
    pub fn history_path_beside(&self, state_db: Option<&Path>) -> Option<PathBuf> {
        self.history_db
            .clone()
            .or_else(|| state_db.map(Path::to_path_buf))
            .or_else(|| {
                default_state_db(
                    std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
                    std::env::var_os("HOME").map(PathBuf::from),
                )
            })
    }

    pub(super) fn anchor_paths(&mut self, base: &Path) {
        if let Some(path) = &mut self.history_db
            && path.is_relative()
        {
            *path = base.join(&*path);
        }
    }

    /// A setting serde cannot check: `(key, reason)`.
    pub(super) fn problem(&self) -> Option<(String, String)> {
        if self.max_runs == 0 {
            return Some(("console.max_runs".into(), "expected at least 1".into()));
        }
        if !self.max_age_days.is_finite()
            || self.max_age_days <= 0.0
            || self.max_age_days > 36_500.0
        {
            return Some((
                "console.max_age_days".into(),
                "expected a positive number of days (at most 36500)".into(),
            ));
        }
        None
    }
}

/// `$XDG_STATE_HOME/skillet/state.db`, else `$HOME/.local/state/skillet/state.db` (an empty or
/// relative `XDG_STATE_HOME` is ignored, as the XDG spec says).
pub fn default_state_db(xdg_state_home: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    xdg_state_home
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".local/state")))
        .map(|dir| dir.join("skillet/state.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_db_follows_xdg_then_home() {
        assert_eq!(
            default_state_db(Some("/x/state".into()), Some("/home/u".into())),
            Some(PathBuf::from("/x/state/skillet/state.db"))
        );
        assert_eq!(
            default_state_db(Some("relative".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.local/state/skillet/state.db"))
        );
        assert_eq!(default_state_db(None, None), None);
    }

    #[test]
    fn the_history_shares_the_state_db_unless_history_db_is_set() {
        let state = Path::new("/srv/skillet/state.db");
        let config = ConsoleConfig::default();
        assert_eq!(
            config.history_path_beside(Some(state)),
            Some(state.to_path_buf())
        );
        let own = ConsoleConfig {
            history_db: Some("/srv/history.db".into()),
            ..ConsoleConfig::default()
        };
        assert_eq!(
            own.history_path_beside(Some(state)),
            Some(PathBuf::from("/srv/history.db"))
        );
    }

    #[test]
    fn the_console_is_on_by_default_on_loopback_only() {
        let config = ConsoleConfig::default();
        assert!(config.enabled_on(true));
        assert!(!config.enabled_on(false));
        let forced = ConsoleConfig {
            enabled: Some(true),
            ..ConsoleConfig::default()
        };
        assert!(forced.enabled_on(false));
    }

    #[test]
    fn bad_bounds_are_named() {
        let zero = ConsoleConfig {
            max_runs: 0,
            ..ConsoleConfig::default()
        };
        assert_eq!(zero.problem().unwrap().0, "console.max_runs");
        let negative = ConsoleConfig {
            max_age_days: -1.0,
            ..ConsoleConfig::default()
        };
        assert_eq!(negative.problem().unwrap().0, "console.max_age_days");
    }
}
