//! The `skillet` command-line interface (see README.md).

fn main() {
    eprintln!("skillet: the command-line interface is not built yet");
    std::process::exit(2);
}
