//! Placeholder: filled by the mock-llm issue.
