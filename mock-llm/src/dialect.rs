//! Server dialects: a scenario's `dialect` makes the mock answer the way real servers that are
//! not OpenAI do, so every client behaviour against them has an offline test — refusing
//! `response_format: json_schema` as llama-cpp-python does (HTTP 500), refusing tools as
//! Ollama does for models without them (400 "does not support tools"), ignoring `tools` as
//! llama.cpp chat formats without function calling do (the model writes its call as text),
//! omitting usage, wrapping answers in prose or `<think>` blocks, and omitting or repeating
//! tool-call ids. The local-server quirks of issue 54 too: llama.cpp's `400 Failed to parse
//! grammar` on a schema it cannot compile (`refuse_output: ["grammar"]`), a thinking model's
//! JSON left in `reasoning_content` with `content` empty and LM Studio's synthetic reasoning
//! marker in `content` (`wrap`), and parallel calls streamed all at index 0
//! (`tool_call_index`).
//!
//! What is here: the description and the two steps it takes — [`Dialect::refusal`] before a
//! rule is chosen, [`Dialect::shape`] on the reply after. Wire shapes stay in the wire modules.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::reply::{Reply, ToolCall};
use crate::request::{ChatRequest, Endpoint};

/// How the mock's "server" differs from OpenAI's. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dialect {
    /// Structured-output parameters answered with an error: `json_schema` (OpenAI
    /// `response_format.type` or an Ollama `format` schema), `json_object` (or Ollama
    /// `format: "json"`), `tool` (a forced `tool_choice`). `json_schema` is refused with
    /// llama-cpp-python's HTTP 500, the others with a 400 naming the parameter. `grammar`
    /// refuses every request the server would compile into a grammar — a schema in
    /// `response_format` (either type) or a forced `tool_choice` — with llama.cpp's
    /// `400 Failed to parse grammar`.
    #[serde(default)]
    pub refuse_output: Vec<String>,
    /// What the server does with offered tools.
    #[serde(default)]
    pub tools: ToolSupport,
    /// Send no token usage at all.
    #[serde(default)]
    pub omit_usage: bool,
    /// Wrap every text answer.
    #[serde(default)]
    pub wrap: Option<Wrap>,
    /// Tool-call ids as some servers send them.
    #[serde(default)]
    pub tool_call_ids: Option<IdQuirk>,
    /// Streamed tool-call indices as some servers send them.
    #[serde(default)]
    pub tool_call_index: Option<IndexQuirk>,
}

/// Streamed tool-call index quirks (OpenAI wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexQuirk {
    /// Every call of a turn streamed at `index` 0, each opened by its own id and name.
    Zero,
}

/// What a server does with `tools`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSupport {
    /// Native tool calls.
    #[default]
    Native,
    /// Offered tools are dropped unread; a scripted tool call comes back as the text
    /// `{"tool": NAME, "arguments": {...}}`, as a model writes it when told the format.
    Ignore,
    /// A request offering tools gets 400 "… does not support tools" (Ollama's words).
    Refuse,
}

/// A wrapper around text answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wrap {
    /// `Here is the result:\n…\nLet me know if you need anything else.`
    Prose,
    /// `<think>…</think>\n…`
    Think,
    /// The answer in `reasoning_content` (the reply's thinking), `content` empty: LM Studio
    /// and llama.cpp with a thinking model under `response_format`.
    ReasoningContent,
    /// LM Studio's structured output from a reasoning model: the reasoning, then
    /// `__LM_STUDIO_INTERNAL_LSEP_SYNTHETIC_REASONING_END_<hex>__`, then the answer.
    LmStudioMarker,
}

/// Tool-call id quirks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdQuirk {
    /// Every call has an empty id.
    Omit,
    /// Every call is `call_0`, turn after turn.
    Repeat,
}

/// An error answer the dialect gives instead of a reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub status: u16,
    pub code: Option<&'static str>,
    pub message: String,
}

impl Dialect {
    /// The error this server answers `request` (raw `body`) with, if it refuses it.
    pub(crate) fn refusal(&self, request: &ChatRequest, body: &Value) -> Option<Refusal> {
        if self.tools == ToolSupport::Refuse && !request.tools.is_empty() {
            return Some(Refusal {
                status: 400,
                code: None,
                message: format!(
                    "registry.ollama.ai/library/{} does not support tools",
                    request.model
                ),
            });
        }
        let asked = output_parameter(request.endpoint, body)?;
        if self.refuse_output.iter().any(|r| r == "grammar") && compiles_to_grammar(asked, body) {
            return Some(Refusal {
                status: 400,
                code: None,
                message: "Failed to parse grammar".to_owned(),
            });
        }
        if !self.refuse_output.iter().any(|r| r == asked) {
            return None;
        }
        Some(match asked {
            // llama-cpp-python's own words for `json_schema` (its pydantic model knows only
            // `text` and `json_object`), under its HTTP 500.
            "json_schema" => Refusal {
                status: 500,
                code: Some("internal_server_error"),
                message: "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', \
                          'response_format', 'type'), 'msg': \"Input should be 'text' or \
                          'json_object'\", 'input': 'json_schema'}"
                    .to_owned(),
            },
            "json_object" => Refusal {
                status: 400,
                code: None,
                message: "response_format json_object is not supported by this server".to_owned(),
            },
            _ => Refusal {
                status: 400,
                code: None,
                message: "tool_choice is not supported by this server".to_owned(),
            },
        })
    }

    /// Whether offered tools are dropped before a rule is chosen.
    pub(crate) fn ignores_tools(&self) -> bool {
        self.tools == ToolSupport::Ignore
    }

    /// The reply as this server would send it.
    pub(crate) fn shape(&self, mut reply: Reply) -> Reply {
        if self.tools == ToolSupport::Ignore && !reply.tool_calls.is_empty() {
            let calls: Vec<String> = reply.tool_calls.drain(..).map(|c| call_text(&c)).collect();
            reply.text = calls.join("\n");
            reply.finish = crate::reply::Finish::Stop;
        }
        if !reply.text.is_empty() && reply.tool_calls.is_empty() {
            reply.text = match self.wrap {
                Some(Wrap::Prose) => format!(
                    "Here is the result:\n{}\nLet me know if you need anything else.",
                    reply.text
                ),
                Some(Wrap::Think) => format!(
                    "<think>The user wants an answer; I will give it.</think>\n{}",
                    reply.text
                ),
                Some(Wrap::ReasoningContent) => {
                    reply.thinking = Some(std::mem::take(&mut reply.text));
                    String::new()
                }
                Some(Wrap::LmStudioMarker) => format!(
                    "Okay, the user wants an answer. I will give it.\n\
                     __LM_STUDIO_INTERNAL_LSEP_SYNTHETIC_REASONING_END_f4e9a8d2c6b14d0c__{}",
                    reply.text
                ),
                None => reply.text,
            };
        }
        reply.tool_calls_at_index_zero = self.tool_call_index == Some(IndexQuirk::Zero);
        for call in &mut reply.tool_calls {
            match self.tool_call_ids {
                Some(IdQuirk::Omit) => call.id.clear(),
                Some(IdQuirk::Repeat) => call.id = "call_0".to_owned(),
                None => {}
            }
        }
        reply.report_usage = !self.omit_usage;
        reply
    }
}

/// A tool call written as text, the way a model told the prompted format writes it.
fn call_text(call: &ToolCall) -> String {
    json!({"tool": call.name, "arguments": call.arguments.to_wire_value()}).to_string()
}

/// Whether llama.cpp compiles the `asked` parameter of `body` into a grammar: a forced tool
/// choice, a schema, or `json_object` carrying one (`json_object` with none is free JSON).
fn compiles_to_grammar(asked: &str, body: &Value) -> bool {
    matches!(asked, "tool" | "json_schema") || body.pointer("/response_format/schema").is_some()
}

/// Which structured-output parameter a request carries: `json_schema`, `json_object`, `tool`.
fn output_parameter(endpoint: Endpoint, body: &Value) -> Option<&'static str> {
    match endpoint {
        Endpoint::OpenAiChat => {
            if body
                .get("tool_choice")
                .is_some_and(|c| !c.is_null() && c != "auto" && c != "none")
            {
                return Some("tool");
            }
            match body
                .pointer("/response_format/type")
                .and_then(Value::as_str)
            {
                Some("json_schema") => Some("json_schema"),
                Some("json_object") => Some("json_object"),
                _ => None,
            }
        }
        Endpoint::OllamaChat => match body.get("format") {
            Some(Value::Object(_)) => Some("json_schema"),
            Some(Value::String(_)) => Some("json_object"),
            _ => None,
        },
        Endpoint::AnthropicMessages => body.get("tool_choice").map(|_| "tool"),
        Endpoint::GeminiGenerateContent => {
            let config = body.get("generationConfig")?;
            config.get("responseMimeType")?;
            let schema = config
                .get("responseJsonSchema")
                .or(config.get("responseSchema"));
            Some(if schema.is_some() {
                "json_schema"
            } else {
                "json_object"
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::{Arguments, Finish, Usage};

    fn reply(text: &str, calls: Vec<ToolCall>) -> Reply {
        Reply {
            seq: 1,
            model: "m".into(),
            text: text.into(),
            tool_calls: calls,
            finish: Finish::Stop,
            usage: Usage {
                input: 1,
                output: 1,
                cached: None,
                cache_write: None,
                reasoning: None,
            },
            created: 0,
            report_usage: true,
            thinking: None,
            tool_calls_at_index_zero: false,
        }
    }

    #[test]
    fn ignored_tools_come_back_as_call_text_and_wraps_apply_to_answers() {
        let dialect = Dialect {
            tools: ToolSupport::Ignore,
            omit_usage: true,
            ..Dialect::default()
        };
        let call = ToolCall {
            id: "c".into(),
            name: "calculator".into(),
            arguments: Arguments::Json(json!({"expression": "1+1"})),
        };
        let shaped = dialect.shape(reply("", vec![call]));
        assert!(shaped.tool_calls.is_empty());
        assert_eq!(
            shaped.text,
            r#"{"tool":"calculator","arguments":{"expression":"1+1"}}"#
        );
        assert!(!shaped.report_usage);
        let think = Dialect {
            wrap: Some(Wrap::Think),
            ..Dialect::default()
        };
        assert!(think.shape(reply("{}", vec![])).text.starts_with("<think>"));
    }
}
