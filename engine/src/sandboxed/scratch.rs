//! [`ScratchDir`]: a fresh, private working directory for one sandboxed child, removed when
//! dropped (off the runtime threads, since a child may leave many files behind).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// An empty directory under the system temp dir, owned by the engine (the sandbox hands it to
/// the child's uid), removed with its contents on drop.
#[derive(Debug)]
pub(crate) struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates `skillet-<label>-<uuid>` (mode 0700) under the system temp dir.
    pub(crate) fn create(label: &str) -> std::io::Result<Self> {
        let label: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let path = std::env::temp_dir().join(format!("skillet-{label}-{}", uuid::Uuid::new_v4()));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(ScratchDir { path })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let path = std::mem::take(&mut self.path);
        let remove = move || {
            if let Err(e) = std::fs::remove_dir_all(&path) {
                tracing::debug!(path = %path.display(), error = %e, "scratch directory not removed");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(remove)),
            Err(_) => remove(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_dir_is_created_private_and_removed_on_drop() {
        let dir = ScratchDir::create("a/b c").expect("created");
        let path = dir.path().to_owned();
        assert!(path.is_dir());
        assert!(!path.file_name().unwrap().to_string_lossy().contains('/'));
        std::fs::write(path.join("left-behind"), b"x").unwrap();
        drop(dir);
        assert!(!path.exists());
    }
}
