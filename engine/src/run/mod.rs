//! Placeholder: the run loop (issue 5).
