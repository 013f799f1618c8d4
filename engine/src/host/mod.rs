//! Placeholder: transports and CLI plumbing (issue 6).
