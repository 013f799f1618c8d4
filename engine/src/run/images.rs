//! The images a run shows its model: input files that are images (`_files`, A2A file parts)
//! beside the first user message, and the images tools return (MCP `image` content) after
//! their turn's results — each as a `ChatMessage::Image` the provider's wire puts in its API's
//! image content.
//!
//! An image is recognised by its bytes (PNG, JPEG, GIF, WebP: the types every API takes), not
//! by its name. One the provider is not to be shown — it takes none (`vision = false`) or the
//! image is over its `max_image_bytes` — stays out of the request with a `log` line saying
//! why; the run goes on (an input file is still in the workspace, a tool's image still reached
//! the caller as an artifact).
//!
//! Not here: the wire shapes (`skillet_providers`), taking the files out of the arguments
//! (`files::workspace`).

use base64::Engine as _;
use skillet_providers::{ChatMessage, ImageInput, ImageSource};

use crate::events::EventEmitter;
use crate::files::InputFile;
use crate::protocol::LogLevel;

/// The media types a model may be shown (what OpenAI, Anthropic, Gemini and Ollama all take).
const SHOWN_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The image type `bytes` start with, if they are one of [`SHOWN_TYPES`].
pub(crate) fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

/// The input files that are images, to follow the first user message.
pub(crate) fn input_images(
    inputs: &[InputFile],
    limit: Option<usize>,
    events: &EventEmitter,
) -> Vec<ChatMessage> {
    inputs
        .iter()
        .filter_map(|file| {
            let media_type = sniff_image(&file.bytes)?;
            let what = format!("input file {}", file.name);
            admit(&what, file.bytes.len(), limit, events)?;
            Some(ChatMessage::Image {
                image: ImageInput {
                    media_type: media_type.to_owned(),
                    source: ImageSource::Base64(
                        base64::engine::general_purpose::STANDARD.encode(&file.bytes),
                    ),
                },
            })
        })
        .collect()
}

/// The images tool `tool` returned, to follow its turn's results: those of a type a model may
/// be shown and within `limit`.
pub(crate) fn tool_images(
    tool: &str,
    images: Vec<ImageInput>,
    limit: Option<usize>,
    events: &EventEmitter,
) -> Vec<ChatMessage> {
    images
        .into_iter()
        .filter_map(|image| {
            let what = format!("an image from tool {tool}");
            if !SHOWN_TYPES.contains(&image.media_type.as_str()) {
                events.log(
                    LogLevel::Info,
                    format!(
                        "{what}: not shown to the model ({} is not a type models take)",
                        image.media_type
                    ),
                );
                return None;
            }
            admit(&what, image.decoded_len(), limit, events)?;
            Some(ChatMessage::Image { image })
        })
        .collect()
}

/// `Some` when an image of `bytes` may be shown under `limit`; else logs why not.
fn admit(what: &str, bytes: usize, limit: Option<usize>, events: &EventEmitter) -> Option<()> {
    match limit {
        None => {
            events.log(
                LogLevel::Info,
                format!(
                    "{what}: not shown to the model (its provider takes no images: vision = false)"
                ),
            );
            None
        }
        Some(max) if bytes > max => {
            events.log(
                LogLevel::Warn,
                format!(
                    "{what}: not shown to the model ({bytes} bytes, over its provider's \
                     max_image_bytes of {max})"
                ),
            );
            None
        }
        Some(_) => Some(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];

    fn file(name: &str, bytes: &[u8]) -> InputFile {
        InputFile {
            name: name.into(),
            bytes: bytes.to_vec(),
        }
    }

    /// The emitter's events as text (taking them closes it).
    fn logs(events: &EventEmitter) -> String {
        format!("{:?}", events.take_collected().0)
    }

    #[test]
    fn images_are_known_by_their_bytes_not_their_names() {
        assert_eq!(sniff_image(PNG), Some("image/png"));
        assert_eq!(sniff_image(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff_image(b"GIF89a...."), Some("image/gif"));
        assert_eq!(sniff_image(b"RIFF\x10\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_image(b"just text, named photo.png"), None);
        assert_eq!(
            sniff_image(b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>"),
            None
        );
    }

    #[test]
    fn input_images_become_image_messages_and_other_files_do_not() {
        let events = EventEmitter::collecting("r");
        let shown = input_images(
            &[file("chart.bin", PNG), file("notes.png", b"not an image")],
            Some(1 << 20),
            &events,
        );
        assert_eq!(shown.len(), 1);
        let ChatMessage::Image { image } = &shown[0] else {
            panic!("{shown:?}")
        };
        assert_eq!(image.media_type, "image/png");
        assert_eq!(
            image.source,
            ImageSource::Base64(base64::engine::general_purpose::STANDARD.encode(PNG))
        );
    }

    #[test]
    fn a_provider_without_vision_or_a_too_large_image_keeps_it_out_and_says_why() {
        let events = EventEmitter::collecting("r");
        assert!(input_images(&[file("a.png", PNG)], None, &events).is_empty());
        assert!(logs(&events).contains("vision = false"));
        let events = EventEmitter::collecting("r");
        assert!(input_images(&[file("a.png", PNG)], Some(4), &events).is_empty());
        assert!(logs(&events).contains("over its provider's max_image_bytes of 4"));
    }

    #[test]
    fn tool_images_of_types_models_do_not_take_stay_out() {
        let events = EventEmitter::collecting("r");
        let image = |media_type: &str| ImageInput {
            media_type: media_type.into(),
            source: ImageSource::Base64("QUJD".into()),
        };
        let shown = tool_images(
            "draw",
            vec![image("image/png"), image("image/svg+xml")],
            Some(1 << 20),
            &events,
        );
        assert_eq!(
            shown,
            vec![ChatMessage::Image {
                image: image("image/png")
            }]
        );
        assert!(logs(&events).contains("image/svg+xml is not a type models take"));
    }
}
