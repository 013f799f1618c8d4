//! Placeholder: filled by the sandbox issue.
