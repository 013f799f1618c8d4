//! Placeholder: filled by the providers issue.
