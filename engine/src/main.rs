//! The `skillet` command-line interface; everything lives in `skillet_engine::host::cli`.

fn main() -> std::process::ExitCode {
    skillet_engine::host::cli::main()
}
