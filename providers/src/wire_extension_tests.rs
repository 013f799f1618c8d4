//! Proof of the "one wire plus one row" claim: a throwaway fourth wire, written here as a
//! provider author would write one, runs through the generic `HttpProvider` against a real
//! mock-llm server, streamed and not, with the shared retry policy. It speaks Ollama's
//! `/api/chat` with its own minimal types (so the server exists), text only.

use http::HeaderMap;
use serde::{Deserialize, Serialize};

use crate::error::ProviderError;
use crate::http_provider::HttpProvider;
use crate::kind::ProviderKind;
use crate::provider::{CallOptions, Provider};
use crate::spec::ProviderSpec;
use crate::transport::{ErrorBody, TrackingSink, parse_error_envelope};
use crate::types::{ChatMessage, ChatRequest, ChatResponse, FinishReason, Usage};
use crate::wire::{Flow, Framing, KindInfo, StreamDecoder, StreamEvent, Wire, WireSettings};

struct TextOnly;

#[derive(Serialize)]
struct Body {
    model: String,
    messages: Vec<Message>,
    stream: bool,
}

#[derive(Serialize)]
struct Message {
    role: &'static str,
    content: String,
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    message: Option<LineMessage>,
    #[serde(default)]
    done: bool,
}

#[derive(Deserialize)]
struct LineMessage {
    #[serde(default)]
    content: String,
}

#[derive(Default)]
struct Decoder {
    text: String,
    done: bool,
}

impl StreamDecoder for Decoder {
    fn event(
        &mut self,
        e: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError> {
        let line: Line =
            serde_json::from_slice(e.data).map_err(|e| ProviderError::malformed(e.to_string()))?;
        if let Some(m) = line.message {
            sink.text(&m.content);
            self.text.push_str(&m.content);
        }
        self.done = line.done;
        Ok(if line.done { Flow::Done } else { Flow::More })
    }

    fn finish(self, sink: &TrackingSink<'_>) -> Result<ChatResponse, ProviderError> {
        if !self.done {
            return Err(ProviderError::truncated("no done line", sink.delivered()));
        }
        Ok(ChatResponse {
            thinking: Vec::new(),
            text: self.text,
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Some(Usage::default()),
            request_id: None,
            reasoning: None,
        })
    }
}

impl Wire for TextOnly {
    const INFO: KindInfo = KindInfo {
        name: "text-only",
        default_base_url: None,
        requires_key: false,
        conventional_key_env: None,
        modes: crate::modes::Capabilities {
            name: "text-only",
            output_ladder: &[crate::modes::OutputMode::Prompted],
            grammar: false,
            strict_subset: false,
            json_modes: false,
            answer_tool: false,
            generic_answer_tool: false,
        },
    };
    const FRAMING: Framing = Framing::Ndjson;
    const PATH: &'static str = "/api/chat";
    type Body<'a> = Body;
    type CallState = ();
    type Decoder = Decoder;

    fn auth_headers(_: WireSettings<'_>, _: &mut HeaderMap) -> Result<(), ProviderError> {
        Ok(())
    }

    fn request(
        spec: WireSettings<'_>,
        request: &ChatRequest,
        _: &crate::modes::TurnPlan,
        stream: bool,
    ) -> (Body, ()) {
        let messages = request
            .messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::User { text } => Some(Message {
                    role: "user",
                    content: text.clone(),
                }),
                _ => None,
            })
            .collect();
        let model = spec.model.to_owned();
        (
            Body {
                model,
                messages,
                stream,
            },
            (),
        )
    }

    fn decode_whole(body: &[u8], _: &()) -> Result<ChatResponse, ProviderError> {
        crate::wire::decode_single(Decoder::default(), body)
    }

    fn decoder(_: &()) -> Decoder {
        Decoder::default()
    }

    fn parse_error(body: &[u8]) -> ErrorBody {
        parse_error_envelope(body)
    }
}

async fn server() -> mock_llm::MockServer {
    let yaml = "rules:\n  - reply: {text: \"from the fourth wire\"}\n";
    let scenario = mock_llm::Scenario::from_yaml_str(yaml).unwrap();
    mock_llm::MockServer::start(mock_llm::MockConfig::default().with_scenario(scenario))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_fourth_wire_runs_through_the_generic_provider_streamed_and_not() {
    let server = server().await;
    // The kind only labels logs and retry notices here; the wire is what speaks.
    let mut spec =
        ProviderSpec::new(ProviderKind::Ollama, "mock-model", Some(&server.base_url())).unwrap();
    spec.retry.initial_backoff = std::time::Duration::from_millis(1);
    let http = crate::transport::build_http_client(false).unwrap();
    let provider = HttpProvider::<TextOnly>::new(spec, http).unwrap();
    let ask = || ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        ..Default::default()
    };

    let whole = provider.chat(ask(), CallOptions::default()).await.unwrap();
    assert_eq!(whole.text, "from the fourth wire");

    let deltas = std::sync::Mutex::new(String::new());
    let sink = |d: &str| deltas.lock().unwrap().push_str(d);
    // A 500 first: the generic provider's retry policy covers the new wire too.
    server.push_fault(mock_llm::Fault::status(500).times(1));
    let streamed = provider
        .chat(ask(), CallOptions::default().with_stream(&sink))
        .await
        .unwrap();
    assert_eq!(streamed.text, "from the fourth wire");
    assert_eq!(*deltas.lock().unwrap(), "from the fourth wire");
    assert_eq!(TextOnly::INFO.name, "text-only");
}
