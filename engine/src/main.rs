//! The `skillet` command-line interface; everything lives in `skillet_engine::host::cli`.
//! This file only picks the global allocator: mimalloc, chosen by measurement (BENCHMARKS.md,
//! "2026-12-01: allocator, borrowed request bodies, batched stdio writes").

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    skillet_engine::host::cli::main()
}
