//! Confining a model-supplied path to one directory (a skill folder, a call's workspace), and
//! reading a text slice of a confined file.
//!
//! A path must be relative, non-empty, at most [`MAX_PATH_CHARS`] characters, without `..`, a
//! root, or a NUL byte. Reads resolve every symlink and must land inside the directory on a
//! regular file. Writes never follow a symlink: every existing component below the directory
//! must be a real directory, the file itself is opened with `O_NOFOLLOW`, and the opened file's
//! real path (from `/proc/self/fd`) is checked again before a byte is written — so a symlink a
//! script plants in the workspace cannot redirect a write outside it.
//!
//! Every open is `O_NONBLOCK`, and the type is checked on the descriptor (`fstat`) before a
//! byte is read or written: a named pipe or a device a script leaves where a file was expected
//! is refused at once, never waited on (an `open(2)` for writing on a pipe without a reader
//! would block its thread forever).
//!
//! Every refusal is a [`FileError`] naming the path, meant for the model. Not here: the tools that use this
//! (`skill_files`, `workspace_tools`).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Component, Path, PathBuf};

use super::error::FileError;

/// Longest path accepted, in characters.
pub const MAX_PATH_CHARS: usize = 512;

/// Checks a model-supplied relative path; returns it normalized (no `.` components).
pub(crate) fn relative_path(path: &str) -> Result<PathBuf, FileError> {
    if path.trim().is_empty() {
        return Err(FileError::EmptyPath);
    }
    if path.chars().count() > MAX_PATH_CHARS {
        return Err(FileError::PathTooLong);
    }
    if path.contains('\0') {
        return Err(FileError::NulInPath);
    }
    if path.starts_with('/') || path.starts_with('\\') || path.starts_with('~') {
        return Err(FileError::Absolute(path.to_owned()));
    }
    let mut normalized = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => normalized.push(part),
            Component::CurDir => {}
            Component::ParentDir => return Err(FileError::ParentDir(path.to_owned())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(FileError::Absolute(path.to_owned()));
            }
        }
    }
    if normalized.as_os_str().is_empty() {
        return Err(FileError::NamesFolder(path.to_owned()));
    }
    Ok(normalized)
}

/// The canonical form of `root` (the directory everything must stay in).
pub(crate) fn canonical_root(root: &Path) -> Result<PathBuf, FileError> {
    root.canonicalize().map_err(FileError::FolderUnresolvable)
}

/// Resolves `path` inside `root` for reading: it must exist, resolve (after symlinks) inside
/// `root`, and be a regular file.
pub(crate) fn existing_file(root: &Path, path: &str) -> Result<PathBuf, FileError> {
    let relative = relative_path(path)?;
    let real_root = canonical_root(root)?;
    let real = root
        .join(&relative)
        .canonicalize()
        .map_err(|_| FileError::Missing(path.to_owned()))?;
    if !real.starts_with(&real_root) {
        return Err(FileError::Outside(path.to_owned()));
    }
    if !real.is_file() {
        return Err(FileError::NotRegular(path.to_owned()));
    }
    Ok(real)
}

/// Whether the open `file` really lives under `real_root` (checked through `/proc/self/fd`).
fn opened_inside(file: &File, real_root: &Path) -> bool {
    let link = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    std::fs::read_link(link).is_ok_and(|real| real.starts_with(real_root))
}

/// Opens a confined file for reading (re-checking where the opened file really is).
pub(crate) fn open_for_read(root: &Path, path: &str) -> Result<File, FileError> {
    let real = existing_file(root, path)?;
    let real_root = canonical_root(root)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&real)
        .map_err(|source| FileError::CannotOpen {
            path: path.to_owned(),
            source,
        })?;
    // The checks above ran on the path; the file opened may have been swapped since.
    refuse_unless_plain_file(&file, path)?;
    if !opened_inside(&file, &real_root) {
        return Err(FileError::Outside(path.to_owned()));
    }
    Ok(file)
}

/// Refuses an open descriptor that is not a regular file (a named pipe, a socket, a device)
/// or that has several hard links (it may be a link to a file outside the folder, which a
/// script can make where the kernel allows it).
fn refuse_unless_plain_file(file: &File, path: &str) -> Result<(), FileError> {
    let meta = file.metadata().map_err(|source| FileError::Inspect {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_file() {
        return Err(FileError::NotPlain {
            path: path.to_owned(),
            kind: kind_name(&meta),
        });
    }
    if meta.nlink() > 1 {
        return Err(FileError::HardLinked {
            path: path.to_owned(),
            links: meta.nlink(),
        });
    }
    Ok(())
}

/// What a non-regular file is, for a refusal.
fn kind_name(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

/// Writes `bytes` to `path` inside `root`, creating missing directories; never follows a
/// symlink (see the module doc). Returns the file's real path.
pub(crate) fn write_file(root: &Path, path: &str, bytes: &[u8]) -> Result<PathBuf, FileError> {
    let relative = relative_path(path)?;
    let real_root = canonical_root(root)?;
    let mut dir = real_root.clone();
    let components: Vec<_> = relative.components().collect();
    let (file_name, parents) = components
        .split_last()
        .ok_or_else(|| FileError::NamesNoFile(path.to_owned()))?;
    for part in parents {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(FileError::ParentNotDirectory {
                    path: path.to_owned(),
                    component: dir.strip_prefix(&real_root).unwrap_or(&dir).to_owned(),
                });
            }
            Err(_) => {
                std::fs::create_dir(&dir).map_err(|source| FileError::CannotCreateDirectory {
                    path: path.to_owned(),
                    source,
                })?;
            }
        }
    }
    let target = dir.join(file_name);
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&target)
        .map_err(|source| {
            let path = path.to_owned();
            match source.raw_os_error() {
                Some(libc::ELOOP) => FileError::Symlink(path),
                // A named pipe with no reader: `O_NONBLOCK` makes the open fail instead of
                // waiting.
                Some(libc::ENXIO) => FileError::NotPlain {
                    path,
                    kind: "a named pipe",
                },
                _ => FileError::CannotWrite { path, source },
            }
        })?;
    refuse_unless_plain_file(&file, path)?;
    if !opened_inside(&file, &real_root) {
        return Err(FileError::Outside(path.to_owned()));
    }
    file.set_len(0)
        .and_then(|()| file.write_all(bytes))
        .map_err(|source| FileError::CannotWrite {
            path: path.to_owned(),
            source,
        })?;
    Ok(target)
}

/// A slice of a text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextSlice {
    /// The text read.
    pub text: String,
    /// Byte offset of the first byte returned.
    pub offset: u64,
    /// The file's size in bytes.
    pub size: u64,
    /// Byte offset after the text; equal to `size` at the end of the file.
    pub next_offset: u64,
}

/// Reads at most `limit` bytes of `file` from byte `offset`, as text. A slice boundary inside a
/// UTF-8 character moves to the character's edge; a NUL byte or invalid UTF-8 means the file
/// is not text, and it is refused.
pub(crate) fn read_text(
    mut file: File,
    path: &str,
    offset: u64,
    limit: usize,
) -> Result<TextSlice, FileError> {
    let inspect = |source| FileError::Inspect {
        path: path.to_owned(),
        source,
    };
    let size = file.metadata().map_err(inspect)?.len();
    if offset > size {
        return Err(FileError::PastTheEnd {
            path: path.to_owned(),
            offset,
            size,
        });
    }
    file.seek(SeekFrom::Start(offset)).map_err(inspect)?;
    let mut bytes = Vec::with_capacity(limit.min(64 * 1024));
    file.take(limit as u64)
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::CannotRead {
            path: path.to_owned(),
            source,
        })?;
    // Skip continuation bytes at the start (the offset fell inside a character).
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0xC0) == 0x80)
        .count();
    let body = &bytes[skip..];
    if body.contains(&0) {
        return Err(FileError::Binary(path.to_owned()));
    }
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        // Cut inside a final character: keep the complete ones.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&body[..e.valid_up_to()])
            .map_err(|_| FileError::NotUtf8(path.to_owned()))?,
        Err(_) => return Err(FileError::NotUtf8(path.to_owned())),
    };
    let start = offset + skip as u64;
    Ok(TextSlice {
        next_offset: start + text.len() as u64,
        text: text.to_owned(),
        offset: start,
        size,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn escaping_paths_are_refused_before_touching_the_disk() {
        for bad in [
            "",
            "  ",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "~/x",
            "a\0b",
            ".",
        ] {
            assert!(relative_path(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            relative_path("./a/b.txt").unwrap(),
            PathBuf::from("a/b.txt")
        );
    }

    #[test]
    fn symlinks_cannot_carry_a_read_or_a_write_outside() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("link"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("dir")).unwrap();
        assert!(
            open_for_read(root.path(), "link")
                .unwrap_err()
                .to_string()
                .contains("outside")
        );
        assert!(
            open_for_read(root.path(), "dir/secret")
                .unwrap_err()
                .to_string()
                .contains("outside")
        );
        assert!(
            write_file(root.path(), "link", b"x")
                .unwrap_err()
                .to_string()
                .contains("symlink")
        );
        assert!(
            write_file(root.path(), "dir/new", b"x")
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).unwrap(),
            "s"
        );
        assert!(!outside.path().join("new").exists());
        std::fs::hard_link(outside.path().join("secret"), root.path().join("hard")).unwrap();
        assert!(
            open_for_read(root.path(), "hard")
                .unwrap_err()
                .to_string()
                .contains("hard links")
        );
        assert!(
            write_file(root.path(), "hard", b"x")
                .unwrap_err()
                .to_string()
                .contains("hard links")
        );
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).unwrap(),
            "s"
        );
        write_file(root.path(), "sub/ok.txt", b"fine").unwrap();
        assert_eq!(
            std::fs::read_to_string(root.path().join("sub/ok.txt")).unwrap(),
            "fine"
        );
    }

    /// Makes a named pipe at `path`.
    pub(crate) fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", path.display());
    }

    #[test]
    fn named_pipes_are_refused_without_waiting_for_a_peer() {
        let root = tempfile::tempdir().unwrap();
        mkfifo(&root.path().join("pipe"));
        // Without `O_NONBLOCK`, this open would wait for a reader forever: it runs on a thread
        // of its own so that a regression fails the test instead of hanging it.
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = root.path().to_owned();
        std::thread::spawn(move || tx.send(write_file(&dir, "pipe", b"x")));
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("write_file on a named pipe must not block")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("named pipe"), "{refused}");
        // With a reader present the open succeeds; the descriptor's type refuses it.
        let reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(root.path().join("pipe"))
            .unwrap();
        let refused = write_file(root.path(), "pipe", b"x")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("named pipe"), "{refused}");
        drop(reader);
        let refused = open_for_read(root.path(), "pipe").unwrap_err().to_string();
        assert!(refused.contains("not a regular file"), "{refused}");
    }

    #[test]
    fn text_slices_respect_character_edges_and_refuse_binary() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("t.txt"), "héllo").unwrap();
        std::fs::write(root.path().join("b.bin"), [0u8, 1, 2]).unwrap();
        let open = |p: &str| open_for_read(root.path(), p).unwrap();
        let slice = read_text(open("t.txt"), "t.txt", 0, 2).unwrap();
        assert_eq!(
            (slice.text.as_str(), slice.next_offset, slice.size),
            ("h", 1, 6)
        );
        let slice = read_text(open("t.txt"), "t.txt", 2, 100).unwrap();
        assert_eq!((slice.text.as_str(), slice.offset), ("llo", 3));
        assert!(
            read_text(open("b.bin"), "b.bin", 0, 10)
                .unwrap_err()
                .to_string()
                .contains("binary")
        );
        assert!(
            read_text(open("t.txt"), "t.txt", 99, 10)
                .unwrap_err()
                .to_string()
                .contains("past the end")
        );
    }
}
