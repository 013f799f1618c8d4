//! Placeholder: filled by the foundation issue.
