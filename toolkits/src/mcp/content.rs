//! Mapping an MCP `CallToolResult` onto the engine's [`ToolOutput`] and `artifact` events.
//!
//! - `structuredContent` becomes the JSON result (MCP servers repeat it as text for old clients,
//!   so the text blocks are then redundant);
//! - otherwise text blocks (and the text of embedded text resources) are the result, joined by
//!   blank lines; a single block stays a plain string;
//! - images, audio and binary resources each become one `artifact` event (its `chunk` is the
//!   base64 data as MCP delivered it, `mime` its media type) and the model sees a one-line note
//!   naming the artifact; images are also handed on as [`ToolOutput::images`], which the run
//!   shows a model that takes images (audio and blobs are not sent to the model);
//! - `isError: true` becomes [`ToolOutput::is_error`].

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use skillet_core::events::EventEmitter;
use skillet_core::tools::{ImageInput, ImageSource, ToolOutput};

/// Maps `result` of MCP tool `tool` for model call `call_id`, emitting its binary parts as
/// artifacts through `events`.
pub(crate) fn to_tool_output(
    tool: &str,
    call_id: &str,
    result: CallToolResult,
    events: &EventEmitter,
) -> ToolOutput {
    let is_error = result.is_error == Some(true);
    let mut texts = Vec::new();
    let mut artifacts = 0usize;
    let mut images = Vec::new();
    let mut emit_artifact = |kind: &str, mime: &str, data: String| -> String {
        artifacts += 1;
        let name = format!("{tool}-{call_id}-{artifacts}");
        events.artifact(&name, mime, data, true);
        format!("[{kind} {mime} sent to the caller as artifact {name}]")
    };
    for block in result.content {
        match block {
            ContentBlock::Text(text) => texts.push(text.text),
            ContentBlock::Image(image) => {
                let (mime_type, data) = (image.mime_type.clone(), image.data.clone());
                texts.push(emit_artifact("image", &image.mime_type, image.data));
                images.push(ImageInput {
                    media_type: mime_type,
                    source: ImageSource::Base64(data),
                });
            }
            ContentBlock::Audio(audio) => {
                texts.push(emit_artifact("audio", &audio.mime_type, audio.data));
            }
            ContentBlock::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents { text, .. } => texts.push(text),
                ResourceContents::BlobResourceContents {
                    mime_type, blob, ..
                } => {
                    let mime = mime_type.unwrap_or_else(|| "application/octet-stream".into());
                    texts.push(emit_artifact("resource", &mime, blob));
                }
                // A content kind newer than this mapping: the model still sees it, as JSON.
                other => texts.push(serde_json::to_string(&other).unwrap_or_default()),
            },
            ContentBlock::ResourceLink(link) => {
                texts.push(format!("[resource {}: {}]", link.name, link.uri));
            }
            other => texts.push(serde_json::to_string(&other).unwrap_or_default()),
        }
    }
    let content = match result.structured_content {
        Some(structured) if artifacts == 0 => structured,
        _ if texts.len() == 1 => Value::String(texts.remove(0)),
        _ => Value::String(texts.join("\n\n")),
    };
    ToolOutput {
        content,
        is_error,
        images,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;
    use serde_json::json;

    use super::*;
    use skillet_protocol::EventPayload;

    #[test]
    fn single_text_block_is_a_plain_string() {
        let events = EventEmitter::collecting("r");
        let out = to_tool_output(
            "echo",
            "c1",
            CallToolResult::success(vec![ContentBlock::text("hi")]),
            &events,
        );
        assert_eq!(out, ToolOutput::text("hi"));
    }

    #[test]
    fn structured_content_wins_over_its_text_copy() {
        let events = EventEmitter::collecting("r");
        let out = to_tool_output(
            "add",
            "c1",
            CallToolResult::structured(json!({"sum": 3})),
            &events,
        );
        assert_eq!(out, ToolOutput::json(json!({"sum": 3})));
    }

    #[test]
    fn is_error_results_are_error_outputs() {
        let events = EventEmitter::collecting("r");
        let out = to_tool_output(
            "fail",
            "c1",
            CallToolResult::error(vec![ContentBlock::text("no")]),
            &events,
        );
        assert_eq!(out, ToolOutput::error("no"));
    }

    #[test]
    fn images_become_artifact_events_and_a_note_for_the_model() {
        let events = EventEmitter::collecting("r");
        let out = to_tool_output(
            "draw",
            "c7",
            CallToolResult::success(vec![
                ContentBlock::image("QUJD", "image/png"),
                ContentBlock::text("drawn"),
            ]),
            &events,
        );
        let text = out.to_text();
        assert!(text.contains("artifact draw-c7-1"), "{text}");
        assert!(text.ends_with("drawn"), "{text}");
        let (collected, _) = events.take_collected();
        assert_eq!(
            collected[0].payload,
            EventPayload::artifact("draw-c7-1", "image/png", "QUJD", true)
        );
        // Handed on for a model that takes images.
        assert_eq!(
            out.images,
            vec![ImageInput {
                media_type: "image/png".into(),
                source: ImageSource::Base64("QUJD".into()),
            }]
        );
    }
}
