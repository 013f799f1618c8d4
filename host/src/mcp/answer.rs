//! A call's one answer ([`SkillCallResponse`]) as MCP's `tools/call` result.
//!
//! | the call | MCP answer |
//! |---|---|
//! | succeeded | result: `structuredContent` = the validated output (when it is an object), one text block with the output as JSON, and one embedded resource per file the run produced (`artifact:///PATH`, text or base64 `blob` with its MIME type) |
//! | failed while running (`data.success: false`) | result with `isError: true`; the text is `CODE: message`; `_meta` = `{"a2e_code", "retryable"}` |
//! | rejected before running: `schema_violation`, `unauthorized`, busy (`runtime_error`, retryable), … | the same `isError` result, so the calling model can read and correct it |
//! | `unknown_skill` | JSON-RPC error `-32602` (invalid params), as the spec answers an unknown tool |
//!
//! Not here: which tools exist (`tools`) or how a call runs (`handler`).

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonObject, MetaObject};
use serde_json::{Value, json};

use rmcp::model::ResourceContents;
use skillet_protocol::{ErrorCode, ProducedFile, ProtocolError, SkillCallResponse};

/// The URI scheme of a produced file embedded in a result: `artifact:///report.pdf`.
pub(crate) const ARTIFACT_URI_PREFIX: &str = "artifact:///";

/// The `_meta` key carrying the A2E error code of an `isError` result.
pub(crate) const META_A2E_CODE: &str = "a2e_code";

/// Maps a call's answer.
pub(crate) fn tool_result(response: SkillCallResponse) -> Result<CallToolResult, ErrorData> {
    if let Some(error) = response.error {
        return rejection(&error);
    }
    let Some(result) = response.data else {
        return Ok(error_result(
            ErrorCode::RuntimeError,
            "the call ended without a result",
            false,
        ));
    };
    if !result.success {
        let code = result.error_code.unwrap_or(ErrorCode::RuntimeError);
        let message = result
            .error
            .unwrap_or_else(|| "the skill failed".to_owned());
        return Ok(error_result(code, &message, false));
    }
    let files = ProducedFile::from_events(&result.events);
    let output = result.data.or(result.summary).unwrap_or(Value::Null);
    let text = serde_json::to_string(&output).unwrap_or_default();
    let mut content = vec![ContentBlock::text(text)];
    content.extend(files.into_iter().map(embedded));
    let mut answer = CallToolResult::success(content);
    if output.is_object() {
        answer.structured_content = Some(output);
    }
    Ok(answer)
}

/// A produced file as an embedded resource.
fn embedded(file: ProducedFile) -> ContentBlock {
    let uri = format!("{ARTIFACT_URI_PREFIX}{}", file.name);
    let contents = if file.base64 {
        ResourceContents::blob(file.content, uri)
    } else {
        ResourceContents::text(file.content, uri)
    };
    ContentBlock::resource(contents.with_mime_type(file.mime))
}

/// A rejection before execution: `unknown_skill` is a protocol error, the rest tool errors.
pub(crate) fn rejection(error: &ProtocolError) -> Result<CallToolResult, ErrorData> {
    if error.code == ErrorCode::UnknownSkill {
        return Err(ErrorData::invalid_params(
            error.message.clone(),
            Some(json!({ META_A2E_CODE: error.code.as_str() })),
        ));
    }
    Ok(error_result(error.code, &error.message, error.retryable))
}

/// An `isError` result naming the A2E code and message.
pub(crate) fn error_result(code: ErrorCode, message: &str, retryable: bool) -> CallToolResult {
    let mut answer = CallToolResult::error(vec![ContentBlock::text(format!(
        "{}: {message}",
        code.as_str()
    ))]);
    let mut meta = JsonObject::new();
    meta.insert(META_A2E_CODE.into(), json!(code.as_str()));
    meta.insert("retryable".into(), json!(retryable));
    answer.meta = Some(MetaObject(meta));
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_protocol::SkillResult;

    #[test]
    fn a_success_carries_structured_content_and_a_json_text_block() {
        let output = json!({"summary": "ok", "n": 2});
        let response = SkillCallResponse::result(
            "r",
            "s",
            SkillResult::success(Some(output.clone()), None, 5),
        );
        let answer = tool_result(response).unwrap();
        assert_eq!(answer.structured_content, Some(output.clone()));
        assert_eq!(answer.is_error, Some(false));
        let text = serde_json::to_value(&answer.content[0]).unwrap();
        let parsed: Value = serde_json::from_str(text["text"].as_str().unwrap()).unwrap();
        assert_eq!(parsed, output);
    }

    #[test]
    fn produced_files_are_embedded_resources_binary_as_blobs_with_their_mime_type() {
        use skillet_protocol::{EventPayload, SkillEvent};
        let mut result = SkillResult::success(Some(json!({"ok": true})), None, 5);
        result.events = vec![
            SkillEvent::new(
                "r",
                0,
                EventPayload::artifact("out/a.png", "image/png;base64", "iVBO", false),
            ),
            SkillEvent::new(
                "r",
                1,
                EventPayload::artifact("out/a.png", "image/png;base64", "Rw==", true),
            ),
            SkillEvent::new(
                "r",
                2,
                EventPayload::artifact("notes.md", "text/markdown", "# hi", true),
            ),
        ];
        let answer = tool_result(SkillCallResponse::result("r", "s", result)).unwrap();
        let blocks = serde_json::to_value(&answer.content).unwrap();
        assert_eq!(blocks.as_array().unwrap().len(), 3, "{blocks}");
        assert_eq!(
            blocks[1],
            json!({"type": "resource", "resource": {
                "uri": "artifact:///out/a.png", "mimeType": "image/png", "blob": "iVBORw=="}})
        );
        assert_eq!(blocks[2]["resource"]["text"], "# hi");
        assert_eq!(blocks[2]["resource"]["mimeType"], "text/markdown");
    }

    #[test]
    fn an_execution_failure_is_an_error_result_with_the_code_in_meta() {
        let response = SkillCallResponse::result(
            "r",
            "s",
            SkillResult::failure(ErrorCode::SkillError, "ran out of turns", 5),
        );
        let answer = tool_result(response).unwrap();
        assert_eq!(answer.is_error, Some(true));
        let meta = answer.meta.unwrap().0;
        assert_eq!(meta[META_A2E_CODE], "skill_error");
        let text = serde_json::to_value(&answer.content[0]).unwrap();
        assert!(
            text["text"]
                .as_str()
                .unwrap()
                .starts_with("skill_error: ran out of turns")
        );
    }

    #[test]
    fn unknown_skill_is_a_json_rpc_invalid_params_error() {
        let response = SkillCallResponse::rejected(
            "r",
            "nope",
            ProtocolError::new(ErrorCode::UnknownSkill, "no skill \"nope\""),
        );
        let error = tool_result(response).unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    }
}
