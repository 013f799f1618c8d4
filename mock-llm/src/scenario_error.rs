//! [`ScenarioError`]: what goes wrong loading or building a scenario, its rules' conditions or a
//! fault description. Its own module so that `scenario`, `matching` and `faults` all depend on it
//! without depending on each other in a loop.

/// Error loading or building a scenario (or a fault description).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// YAML syntax or shape error.
    #[error("scenario YAML: {0}")]
    Yaml(String),
    /// JSON syntax or shape error.
    #[error("scenario JSON: {0}")]
    Json(String),
    /// The file could not be read.
    #[error("scenario file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Well-formed but meaningless (unknown fault kind, bad regex, rule without an answer...).
    #[error("{0}")]
    Invalid(String),
}
