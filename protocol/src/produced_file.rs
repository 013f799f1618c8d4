//! [`ProducedFile`]: a file a run produced, put back together from its `artifact` events — what a
//! door needs to hand a whole file to a protocol that carries files in the final answer (MCP
//! embedded resources, A2A file parts of a task fetched later).
//!
//! The engine streams a text file as its text and any other file as base64 with `;base64`
//! appended to its MIME type (each chunk a whole number of base64 quanta, so the chunks join into
//! one valid encoding). Only files whose final chunk was seen are returned, and the model's
//! streamed text (artifacts named [`model_text_artifact`]`(turn)`, `turn-1`, ...) is not a file.
//! Not here: emitting
//! the chunks (`skillet-engine`'s `files::artifacts`), decoding base64 (the content stays as
//! sent; a door passes it through).

use crate::event::{EventPayload, SkillEvent};

/// The suffix of an artifact MIME type whose chunks are base64 of binary content.
pub const BASE64_MIME_SUFFIX: &str = ";base64";

/// The name of the `artifact` stream that carries the model's text of `turn` as it streams
/// (`turn-1`, `turn-2`, ...): shown live, never a produced file.
pub fn model_text_artifact(turn: u32) -> String {
    format!("turn-{turn}")
}

/// Whether an `artifact` named `name` is the model's streamed text rather than a file.
pub fn is_model_text_artifact(name: &str) -> bool {
    name.strip_prefix("turn-")
        .is_some_and(|turn| !turn.is_empty() && turn.bytes().all(|b| b.is_ascii_digit()))
}

/// One produced file, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducedFile {
    /// Its path in the workspace (the artifact's name).
    pub name: String,
    /// Its media type, without [`BASE64_MIME_SUFFIX`].
    pub mime: String,
    /// Whether `content` is base64 (binary content) rather than text.
    pub base64: bool,
    /// The chunks joined.
    pub content: String,
}

impl ProducedFile {
    /// Every file the `artifact` events of `events` carry completely, in the order their first
    /// chunk came.
    pub fn from_events(events: &[SkillEvent]) -> Vec<ProducedFile> {
        let mut files: Vec<(ProducedFile, bool)> = Vec::new();
        for event in events {
            let EventPayload::Artifact {
                name,
                mime,
                chunk,
                is_final,
            } = &event.payload
            else {
                continue;
            };
            if is_model_text_artifact(name) {
                continue;
            }
            let open = files
                .iter_mut()
                .find(|(file, finished)| !finished && &file.name == name);
            let (file, finished) = match open {
                Some(entry) => entry,
                None => {
                    let (mime, base64) = match mime.strip_suffix(BASE64_MIME_SUFFIX) {
                        Some(mime) => (mime.to_owned(), true),
                        None => (mime.clone(), false),
                    };
                    files.push((
                        ProducedFile {
                            name: name.clone(),
                            mime,
                            base64,
                            content: String::new(),
                        },
                        false,
                    ));
                    files.last_mut().expect("just pushed")
                }
            };
            file.content.push_str(chunk);
            *finished = *is_final;
        }
        files
            .into_iter()
            .filter_map(|(file, finished)| finished.then_some(file))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(seq: u64, name: &str, mime: &str, text: &str, last: bool) -> SkillEvent {
        SkillEvent::new("r", seq, EventPayload::artifact(name, mime, text, last))
    }

    #[test]
    fn chunks_join_per_file_binary_mime_loses_its_suffix_and_unfinished_files_are_left_out() {
        let events = vec![
            chunk(0, "a.png", "image/png;base64", "iVBO", false),
            chunk(1, "b.md", "text/markdown", "# T", false),
            chunk(2, "a.png", "image/png;base64", "Rw==", true),
            SkillEvent::new("r", 3, EventPayload::progress(50, "half")),
            chunk(4, "b.md", "text/markdown", "itle\n", true),
            chunk(5, "c.txt", "text/plain", "cut off", false),
        ];
        let files = ProducedFile::from_events(&events);
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(
            files[0],
            ProducedFile {
                name: "a.png".into(),
                mime: "image/png".into(),
                base64: true,
                content: "iVBORw==".into(),
            }
        );
        assert_eq!(
            (files[1].content.as_str(), files[1].base64),
            ("# Title\n", false)
        );
    }

    #[test]
    fn the_models_streamed_text_is_not_a_produced_file() {
        let events = vec![
            chunk(0, &model_text_artifact(1), "text/plain", "{\"a\":", false),
            chunk(1, &model_text_artifact(1), "text/plain", "1}", true),
            chunk(2, "turn-notes.txt", "text/plain", "kept", true),
        ];
        let files = ProducedFile::from_events(&events);
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["turn-notes.txt"]);
        assert!(is_model_text_artifact("turn-12"));
        assert!(!is_model_text_artifact("turn-"));
        assert!(!is_model_text_artifact("turn-1.md"));
    }
}
