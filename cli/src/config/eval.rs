//! `[eval]`: the judge model `skillet eval` grades natural-language expectations with.
//!
//! ```toml
//! [eval]
//! judge_provider = "local"   # a [providers.NAME] or a kind; default: the run's provider
//! judge_model = "qwen3:8b"   # default: each run's own model judges it
//! ```
//!
//! `--judge-provider` / `--judge-model` override both. Only configuration lives here; the judge
//! is `skillet_engine::eval::judge` and the command `cli/src/eval.rs`.

use serde::Deserialize;

/// `[eval]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// The provider the judge runs on; `None`: the run's.
    pub judge_provider: Option<String>,
    /// The judge's model; `None` (and no provider): each run's own model.
    pub judge_model: Option<String>,
}
