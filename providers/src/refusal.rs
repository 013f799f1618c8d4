//! Reading a server's "I don't do that": an error answer that refuses the structured-output
//! parameter or native tools the request carried, as opposed to an outage or a bad request.
//!
//! Seen in the field: llama-cpp-python answers `response_format: {type: json_schema}` with an
//! HTTP 500 (or a 422 from its validation) naming `response_format`/`json_object`; Ollama
//! answers 400 `"… does not support tools"`; OpenAI-compatible gateways answer 400 naming
//! `tools`/`tool_choice`/`response_format`. A refusal is never retried as if the server were
//! down: the provider retries the turn once in the next mode (`modes.rs`).
//!
//! Not here: choosing the next mode.

use crate::mode_names::Feature;

/// What one attempt sent that a server could refuse.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sent {
    /// A structured-output parameter (`response_format`, `format`, an answer tool).
    pub structured_output: bool,
    /// Native tools.
    pub tools: bool,
}

/// The feature an error answer (`status`, raw `body`) refuses, if it reads as a refusal of
/// something the request sent.
pub(crate) fn refused_feature(status: u16, body: &[u8], sent: Sent) -> Option<Feature> {
    // 4xx other than auth, rate limits, not-found and size; 500/501 (llama-cpp-python raises).
    let refusing_status = matches!(status, 400 | 415 | 422 | 500 | 501);
    if !refusing_status || !(sent.structured_output || sent.tools) {
        return None;
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(8192)]).to_ascii_lowercase();
    let names_tools = [
        "does not support tools",
        "tool use is not supported",
        "tools are not supported",
        "tool_choice",
        "\"tools\"",
        "'tools'",
        "tools is not supported",
        "function calling",
        "function_call",
    ]
    .iter()
    .any(|needle| text.contains(needle));
    let names_output = [
        "response_format",
        "json_schema",
        "json_object",
        "response format",
        "structured output",
        "\"format\"",
        "'format'",
        "grammar",
        // Gemini: "Function calling with a response mime type: 'application/json' is
        // unsupported".
        "response mime type",
        "responsemimetype",
        "responsejsonschema",
        "responseschema",
    ]
    .iter()
    .any(|needle| text.contains(needle));
    match (
        sent.tools && names_tools,
        sent.structured_output && names_output,
    ) {
        (true, false) => Some(Feature::Tools),
        (false, true) => Some(Feature::StructuredOutput),
        // Both named (e.g. "tools cannot be combined with response_format"): give up the
        // schema mechanism first; tools matter more to the run.
        (true, true) => Some(Feature::StructuredOutput),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Sent = Sent {
        structured_output: true,
        tools: true,
    };

    #[test]
    fn field_refusals_are_read_as_refusals_of_what_was_sent() {
        let ollama =
            br#"{"error":"registry.ollama.ai/library/gemma3:270m does not support tools"}"#;
        assert_eq!(refused_feature(400, ollama, BOTH), Some(Feature::Tools));
        let llama_cpp_python = br#"{"error":{"message":"1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object'","type":"internal_server_error"}}"#;
        assert_eq!(
            refused_feature(500, llama_cpp_python, BOTH),
            Some(Feature::StructuredOutput)
        );
        let combined = br#"{"error":{"message":"Cannot use tools with response_format"}}"#;
        assert_eq!(
            refused_feature(400, combined, BOTH),
            Some(Feature::StructuredOutput)
        );
        let gemini = br#"{"error":{"code":400,"message":"Function calling with a response mime type: 'application/json' is unsupported","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(
            refused_feature(400, gemini, BOTH),
            Some(Feature::StructuredOutput)
        );
    }

    #[test]
    fn outages_and_features_not_sent_are_not_refusals() {
        let down = br#"{"error":{"message":"upstream connect error","type":"server_error"}}"#;
        assert_eq!(refused_feature(500, down, BOTH), None);
        assert_eq!(refused_feature(503, b"response_format", BOTH), None);
        assert_eq!(refused_feature(429, b"tools", BOTH), None);
        let only_tools = Sent {
            structured_output: false,
            tools: true,
        };
        assert_eq!(
            refused_feature(400, b"bad response_format", only_tools),
            None
        );
        assert_eq!(refused_feature(400, b"anything", Sent::default()), None);
    }
}
