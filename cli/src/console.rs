//! [`Console`]: the human-facing notices on stderr (`skillet: …`) and how much of them `-q`/`-v`
//! let through. Its own module because both the log setup (`logging`) and the command setup
//! (`setup`) need it.
//!
//! Not here: log lines (`logging`), progress display (`progress`).

use std::io::Write;

/// Where human-facing notices go (stderr), and whether they are wanted.
#[derive(Debug, Clone, Copy)]
pub struct Console {
    /// `-q` count.
    pub quiet: u8,
    /// `-v` count.
    pub verbose: u8,
}

impl Console {
    /// Prints `skillet: MESSAGE` on stderr unless `-q`.
    pub fn notice(&self, message: impl std::fmt::Display) {
        if self.quiet == 0 {
            let _ = writeln!(std::io::stderr().lock(), "skillet: {message}");
        }
    }

    /// Prints `skillet: error: MESSAGE` on stderr unless `-qq`.
    pub fn error(&self, message: impl std::fmt::Display) {
        if self.quiet < 2 {
            let _ = writeln!(std::io::stderr().lock(), "skillet: error: {message}");
        }
    }

    /// Prints `skillet: warning: MESSAGE` on stderr unless `-qq`.
    pub fn warn(&self, message: impl std::fmt::Display) {
        if self.quiet < 2 {
            let _ = writeln!(std::io::stderr().lock(), "skillet: warning: {message}");
        }
    }
}
