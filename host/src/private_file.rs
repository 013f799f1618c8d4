//! Files only the server's user may read: the state database (`[server] state_db`: push
//! webhook tokens and credentials, task histories) and the console's run history (the inputs
//! and transcripts of runs). SQLite creates a database with the process's umask (0644 under
//! most), and its `-wal`/`-shm` files take the database's mode, so the database is created
//! here first, owner-only; a file that already exists keeps its mode (it is the operator's),
//! and a warning names it when others can read it.
//!
//! Not here: what the files hold (`a2a::persist`, `console::history`).

use std::io;
use std::path::Path;

/// Creates `path` (and its directory) readable and writable by this user only when it does
/// not exist; when it does and its mode lets the group or others read or write it, logs one
/// warning saying so and how to fix it. `what` names the file in that warning.
pub(crate) fn prepare(path: &Path, what: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    tracing::warn!(
                        "{what} {} can be read by other users (mode {mode:o}); it holds what \
                         the server keeps private: chmod 600 it",
                        path.display()
                    );
                }
            }
            Err(e) => return Err(e),
        }
    }
    #[cfg(not(unix))]
    let _ = what;
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_file_is_the_owners_only_and_an_old_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("sub/state.sqlite");
        prepare(&new, "state database").unwrap();
        assert_eq!(mode(&new), 0o600);

        let old = dir.path().join("old.sqlite");
        std::fs::write(&old, b"").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        prepare(&old, "state database").unwrap();
        assert_eq!(mode(&old), 0o644);
    }
}
