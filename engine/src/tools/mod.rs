//! Placeholder: filled by the loop issue.
