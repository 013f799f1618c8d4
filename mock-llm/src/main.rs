//! The `mock-llm` binary.
fn main() {}
