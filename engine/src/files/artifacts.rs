//! Reporting the files a run produced in its workspace: one `artifact` event stream per file
//! (`{name, mime, chunk, final}`), then one `log` line listing every produced file — both are
//! also collected into `SkillResult.events`.
//!
//! A text (UTF-8) file is sent as its text, cut into chunks at character boundaries; any other
//! file as base64, with `;base64` appended to its MIME type, in chunks of whole base64 quanta
//! (so each decodes alone and they join into one encoding). Files larger than
//! `artifact_max_bytes` are listed but not streamed (a host that needs them keeps the
//! workspace). An empty file is one empty final chunk.

use crate::protocol::{BASE64_MIME_SUFFIX, LogLevel};
use std::io::Read;

use base64::Engine as _;

use super::confine;
use super::error::FileError;
use super::settings::WorkspaceConfig;
use super::workspace::Workspace;
use crate::events::EventEmitter;

pub(crate) use skillet_core::folder::mime_for;

/// Emits the produced files of `workspace` as artifacts and a listing `log`; returns how many
/// files were reported.
pub(crate) fn report(
    workspace: &Workspace,
    config: &WorkspaceConfig,
    events: &EventEmitter,
) -> usize {
    let (produced, more) = workspace.produced(config.max_files);
    if produced.is_empty() {
        return 0;
    }
    let mut listed = Vec::with_capacity(produced.len());
    for file in &produced {
        if file.size > config.artifact_max_bytes {
            listed.push(format!(
                "{} ({} bytes, not streamed: over the {}-byte artifact limit)",
                file.path, file.size, config.artifact_max_bytes
            ));
            continue;
        }
        // Read through the confinement checks: a produced "file" may be a hard link out.
        let read = confine::open_for_read(workspace.path(), &file.path).and_then(|mut f| {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)
                .map(|_| bytes)
                .map_err(|source| FileError::CannotRead {
                    path: file.path.clone(),
                    source,
                })
        });
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(why) => {
                listed.push(format!("{} (not returned: {why})", file.path));
                continue;
            }
        };
        let mime = stream(
            &file.path,
            bytes,
            config.artifact_chunk_bytes.max(4),
            events,
        );
        listed.push(format!("{} ({mime}, {} bytes)", file.path, file.size));
    }
    events.log(
        LogLevel::Info,
        format!(
            "files produced: {}{}",
            listed.join("; "),
            if more {
                "; (more files not listed)"
            } else {
                ""
            }
        ),
    );
    produced.len()
}

/// A base64 chunk size: whole 4-character quanta, so every chunk decodes on its own and the
/// chunks join into one valid encoding (`ProducedFile`).
fn base64_chunk(chunk_bytes: usize) -> usize {
    (chunk_bytes / 4 * 4).max(4)
}

/// Streams one file as artifact chunks; returns the MIME type used.
fn stream(name: &str, bytes: Vec<u8>, chunk_bytes: usize, events: &EventEmitter) -> String {
    let (mime, text, chunk_bytes) = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => (mime_for(name, true).to_owned(), text, chunk_bytes),
        Ok(text) => (
            format!("{}{BASE64_MIME_SUFFIX}", mime_for(name, false)),
            base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
            base64_chunk(chunk_bytes),
        ),
        Err(e) => (
            format!("{}{BASE64_MIME_SUFFIX}", mime_for(name, false)),
            base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            base64_chunk(chunk_bytes),
        ),
    };
    let mut rest = text.as_str();
    loop {
        let mut end = chunk_bytes.min(rest.len());
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (chunk, tail) = rest.split_at(end);
        events.artifact(name, &mime, chunk, tail.is_empty());
        if tail.is_empty() {
            break;
        }
        rest = tail;
    }
    mime
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::EventPayload;

    #[test]
    fn text_is_chunked_at_char_edges_and_binary_is_base64() {
        let events = EventEmitter::new("r", None, 100);
        assert_eq!(
            stream("a.md", "ééé".as_bytes().to_vec(), 5, &events),
            "text/markdown"
        );
        assert_eq!(
            stream("b.png", vec![0xff, 0, 1], 4, &events),
            "image/png;base64"
        );
        assert_eq!(stream("empty.txt", Vec::new(), 4, &events), "text/plain");
        let (collected, _) = events.take_collected();
        let chunks: Vec<(String, bool)> = collected
            .into_iter()
            .filter_map(|e| match e.payload {
                EventPayload::Artifact {
                    chunk, is_final, ..
                } => Some((chunk, is_final)),
                _ => None,
            })
            .collect();
        let expected = [("éé", false), ("é", true), ("/wAB", true), ("", true)];
        assert_eq!(chunks, expected.map(|(c, f)| (c.to_owned(), f)).to_vec());
    }

    #[test]
    fn binary_chunks_are_whole_base64_quanta_and_join_back_to_the_file() {
        let events = EventEmitter::new("r", None, 100);
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        // 41 is not a multiple of 4: the chunks are 40 characters each, every one decodable.
        stream("blob.bin", bytes.clone(), 41, &events);
        let (collected, _) = events.take_collected();
        let chunks: Vec<String> = collected
            .iter()
            .filter_map(|e| match &e.payload {
                EventPayload::Artifact { chunk, .. } => Some(chunk.clone()),
                _ => None,
            })
            .collect();
        let engine = base64::engine::general_purpose::STANDARD;
        assert!(
            chunks
                .iter()
                .all(|c| c.len() % 4 == 0 && engine.decode(c).is_ok())
        );
        let file = &crate::protocol::ProducedFile::from_events(&collected)[0];
        assert_eq!(
            (file.mime.as_str(), file.base64),
            ("application/octet-stream", true)
        );
        assert_eq!(engine.decode(&file.content).unwrap(), bytes);
    }
}
