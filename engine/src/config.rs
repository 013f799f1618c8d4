//! Placeholder: the skillet.toml configuration (issue 6).
