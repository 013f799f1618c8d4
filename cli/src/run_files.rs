//! The files a `skillet run` produced, written where the user asked (`--out DIR`, default the
//! current directory): each whole file the run's `artifact` events carried, decoded from
//! base64 when it was sent so, never overwriting an existing file without `--force`, each
//! written path printed on stderr.
//!
//! A produced file's name is a path inside the run's workspace; it is written under `--out` only
//! when it stays there (no absolute path, no `..`), and through no symlink that would lead out.
//!
//! Not here: how files are produced and streamed (the engine's `files::artifacts`).

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use skillet_protocol::{ProducedFile, SkillEvent};

use super::setup::Console;

/// Writes every file `events` carry under `out`; problems are warnings (the run's answer is
/// already printed and stands).
pub(super) fn write_produced(events: &[SkillEvent], out: &Path, force: bool, console: Console) {
    for file in ProducedFile::from_events(events) {
        match write_one(&file, out, force) {
            Ok(Written::New(path)) => console.notice(format!("wrote {}", path.display())),
            Ok(Written::Replaced(path)) => {
                console.notice(format!("wrote {} (replaced)", path.display()))
            }
            Err(why) => console.warn(format!("produced file {}: {why}", file.name)),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Written {
    New(PathBuf),
    Replaced(PathBuf),
}

fn write_one(file: &ProducedFile, out: &Path, force: bool) -> Result<Written, String> {
    let relative = Path::new(&file.name);
    let safe = relative
        .components()
        .all(|part| matches!(part, Component::Normal(_)));
    if !safe || file.name.is_empty() {
        return Err("not a relative path inside the output directory; not written".to_owned());
    }
    let path = out.join(relative);
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    // Each folder on the way is made here or must be a real folder: a symlink could lead the
    // file (or a folder made for it) anywhere, so none is followed or created through.
    let mut folder = out.to_path_buf();
    let parents: Vec<_> = relative.components().collect();
    for part in &parents[..parents.len().saturating_sub(1)] {
        folder.push(part);
        match std::fs::symlink_metadata(&folder) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "{} is not a folder inside {} (a link or a file); not written",
                    folder.display(),
                    out.display()
                ));
            }
            Err(_) => std::fs::create_dir(&folder)
                .map_err(|e| format!("cannot create {}: {e}", folder.display()))?,
        }
    }
    let existed = std::fs::symlink_metadata(&path).is_ok();
    if existed && !force {
        return Err(format!(
            "{} exists; not overwritten (use --force, or --out DIR for another folder)",
            path.display()
        ));
    }
    let bytes = if file.base64 {
        base64::engine::general_purpose::STANDARD
            .decode(&file.content)
            .map_err(|e| format!("its base64 content does not decode: {e}"))?
    } else {
        file.content.clone().into_bytes()
    };
    if existed {
        // Replace the entry itself, never write through a symlink at that name.
        std::fs::remove_file(&path)
            .map_err(|e| format!("cannot replace {}: {e}", path.display()))?;
    }
    let mut handle = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    handle
        .write_all(&bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(if existed {
        Written::Replaced(path)
    } else {
        Written::New(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, base64: bool, content: &str) -> ProducedFile {
        ProducedFile {
            name: name.into(),
            mime: "text/plain".into(),
            base64,
            content: content.into(),
        }
    }

    #[test]
    fn files_are_written_decoded_and_never_overwritten_without_force() {
        let out = tempfile::tempdir().unwrap();
        let report = file("reports/report.md", false, "# R\n");
        let written = write_one(&report, out.path(), false).unwrap();
        assert_eq!(written, Written::New(out.path().join("reports/report.md")));
        assert_eq!(
            std::fs::read_to_string(out.path().join("reports/report.md")).unwrap(),
            "# R\n"
        );
        let again = write_one(&file("reports/report.md", false, "new"), out.path(), false);
        assert!(again.unwrap_err().contains("--force"));
        assert!(matches!(
            write_one(&file("reports/report.md", false, "new"), out.path(), true),
            Ok(Written::Replaced(_))
        ));
        write_one(&file("logo.bin", true, "iVBORw=="), out.path(), false).unwrap();
        assert_eq!(
            std::fs::read(out.path().join("logo.bin")).unwrap(),
            [0x89, b'P', b'N', b'G']
        );
    }

    #[test]
    fn a_name_that_leaves_the_output_directory_is_not_written() {
        let out = tempfile::tempdir().unwrap();
        for name in ["../x.md", "/etc/x", "a/../../x", ""] {
            assert!(
                write_one(&file(name, false, "x"), out.path(), true).is_err(),
                "{name}"
            );
        }
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), out.path().join("link")).unwrap();
        assert!(write_one(&file("link/x.md", false, "x"), out.path(), true).is_err());
        assert!(!elsewhere.path().join("x.md").exists());
        // Nor is a folder made through the link.
        assert!(write_one(&file("link/sub/x.md", false, "x"), out.path(), true).is_err());
        assert!(!elsewhere.path().join("sub").exists());
    }
}
