//! The `skillet` command-line interface; everything lives in the `skillet_cli` library.
//! This file only picks the global allocator, mimalloc, and turns transparent huge pages off,
//! both chosen by measurement (many small allocations per call; memory returned to the system
//! in pieces a busy server can reuse), and turns on the
//! providers' mode cache, which only the binary uses (a library embedding the engine, and its
//! tests, never touch the user's cache).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Transparent huge pages off for this process: mimalloc reserves its arenas aligned, and
    // with THP (`always` on many hosts) each touched arena region becomes resident in 2 MiB
    // pages, so a server with many calls in flight holds far more memory than it uses. A
    // kernel without the flag just keeps THP. Linux only: elsewhere there is no such switch.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    skillet_providers::enable_mode_cache();
    skillet_cli::main()
}
