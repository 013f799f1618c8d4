//! [`SkillFolder`]: a published skill's folder as a host serves it to callers that run skills
//! themselves (MCP resources and the skills extension) — its `SKILL.md` and the files beside
//! it, listed and read by path.
//!
//! What is served is what the model's own file tools see, under the same rules: the listing is
//! the loader's (`skill::SkillResources`: regular files only, no symlinks, no hidden entries,
//! not `evals/` or the engine's `mock-scenario.yaml`), except that the manifest-named assets
//! (the schemas a frontmatter points at) are part of the skill here, and `SKILL.md` comes
//! first. A read is confined exactly as `read_skill_file` is (`skill_files::open_skill_file`:
//! relative, no `..`, resolving inside the folder onto a plain file with one link, not
//! `evals/`), is limited to paths the listing would show, and is refused over a size cap
//! instead of cut (a cut file would not match its digest).
//!
//! Everything here blocks on the file system: a host calls it off its async threads. Not here:
//! the contract a host reads it through (`skillet_core::folder::ServedFolder`), the protocol
//! shapes (`skillet-host`), the model's file tools (`skill_files`).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::error::FileError;
use super::skill_files::open_skill_file;
use crate::skill::SkillFile;

pub use skillet_core::folder::{FolderError, FolderListing, SKILL_MD, ServedFolder};

/// A published skill's folder, to list and read (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFolder {
    dir: PathBuf,
}

impl SkillFolder {
    /// The folder at `dir` (a loaded skill's directory).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SkillFolder { dir: dir.into() }
    }
}

impl ServedFolder for SkillFolder {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn list(&self, max_files: usize) -> FolderListing {
        let others = max_files.saturating_sub(1);
        let (mut files, cut) = crate::skill::list_files_upto(&self.dir, &[], others);
        let size = std::fs::metadata(self.dir.join(SKILL_MD)).map_or(0, |m| m.len());
        files.insert(
            0,
            SkillFile {
                path: SKILL_MD.to_owned(),
                size,
            },
        );
        FolderListing { files, cut }
    }

    fn read(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, FolderError> {
        let relative = super::confine::relative_path(path).map_err(refused)?;
        if relative.as_os_str() != SKILL_MD && !crate::skill::is_listed_path(&relative) {
            return Err(FolderError::NotFound(path.to_owned()));
        }
        if let Err(e) = std::fs::symlink_metadata(self.dir.join(&relative))
            && e.kind() == std::io::ErrorKind::NotFound
        {
            return Err(FolderError::NotFound(path.to_owned()));
        }
        let file = open_skill_file(&self.dir, path).map_err(refused)?;
        let size = file
            .metadata()
            .map_err(|e| FolderError::Io(format!("{path:?}: {e}")))?
            .len();
        if size > max_bytes {
            return Err(FolderError::TooLarge {
                path: path.to_owned(),
                size,
                max: max_bytes,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| FolderError::Io(format!("{path:?} cannot be read: {e}")))?;
        // It grew between the size check and the read.
        if bytes.len() as u64 > max_bytes {
            return Err(FolderError::TooLarge {
                path: path.to_owned(),
                size: bytes.len() as u64,
                max: max_bytes,
            });
        }
        Ok(bytes)
    }
}

/// A confinement refusal as the folder's public error says it (the text names the path).
fn refused(error: FileError) -> FolderError {
    FolderError::Refused(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (tempfile::TempDir, SkillFolder) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("s");
        for (path, text) in [
            ("SKILL.md", "---\nname: s\n---\nbody"),
            ("reference.md", "ref"),
            ("assets/in.schema.json", "{}"),
            ("mock-scenario.yaml", "rules: []"),
            (".env", "SECRET=1"),
            ("evals/evals.json", "{}"),
        ] {
            std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
            std::fs::write(dir.join(path), text).unwrap();
        }
        std::fs::write(root.path().join("outside"), "secret").unwrap();
        std::os::unix::fs::symlink(root.path().join("outside"), dir.join("link")).unwrap();
        (root, SkillFolder::new(dir))
    }

    #[test]
    fn the_listing_starts_with_skill_md_and_includes_the_manifest_assets() {
        let (_root, folder) = folder();
        let listing = folder.list(512);
        let paths: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "assets/in.schema.json", "reference.md"]);
        assert_eq!(listing.files[0].size, 20);
        assert!(!listing.cut);
        assert!(folder.list(2).cut);
    }

    #[test]
    fn reads_are_confined_like_read_skill_file_and_limited_to_listed_paths() {
        let (_root, folder) = folder();
        assert_eq!(folder.read("reference.md", 100).unwrap(), b"ref");
        assert_eq!(folder.read("./SKILL.md", 100).unwrap().len(), 20);
        for refused in ["../outside", "/etc/passwd", "link", "evals/evals.json"] {
            assert!(
                matches!(
                    folder.read(refused, 100),
                    Err(FolderError::Refused(_) | FolderError::NotFound(_))
                ),
                "{refused}"
            );
        }
        assert!(matches!(
            folder.read("link", 100),
            Err(FolderError::Refused(e)) if e.contains("outside")
        ));
        for unlisted in [".env", "mock-scenario.yaml", "nope.md"] {
            assert!(
                matches!(folder.read(unlisted, 100), Err(FolderError::NotFound(_))),
                "{unlisted}"
            );
        }
        assert!(matches!(
            folder.read("reference.md", 2),
            Err(FolderError::TooLarge {
                size: 3,
                max: 2,
                ..
            })
        ));
    }
}
