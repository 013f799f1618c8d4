//! Image inputs on every API, against mock-llm (which accepts each): the bytes each wire sends
//! (OpenAI `image_url` data URL, Anthropic `image` block with a base64 or URL source, Ollama
//! `images` on the user message, Gemini `inlineData` / `fileData`), and the refusals made before
//! anything is sent (`UnsupportedInput`): a model declared `vision = false`, an image over
//! `max_image_bytes`, an image URL to Ollama, which takes bytes only.

mod support;

use serde_json::{Value, json};
use skillet_providers::{
    CallOptions, ChatMessage, ChatRequest, ImageInput, ImageSource, ProviderErrorKind, ProviderKind,
};
use support::*;

/// A 1×1 PNG, base64.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn with_image(source: ImageSource) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::user("what is in this picture?"),
            ChatMessage::Image {
                image: ImageInput {
                    media_type: "image/png".into(),
                    source,
                },
            },
        ],
        ..Default::default()
    }
}

async fn sent_body(kind: ProviderKind, source: ImageSource) -> Value {
    let server = server("rules:\n  - reply: {text: \"a pixel\"}\n").await;
    let p = provider(kind, &server, json!({}));
    let reply = p
        .chat(with_image(source), CallOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
    assert_eq!(reply.text, "a pixel", "{kind}");
    chat_requests(&server)[0].body.clone()
}

#[tokio::test]
async fn each_api_gets_the_image_as_its_own_image_content() {
    let base64 = || ImageSource::Base64(PIXEL.to_owned());

    let openai = sent_body(ProviderKind::OpenaiCompatible, base64()).await;
    assert_eq!(
        openai["messages"][1],
        json!({"role": "user", "content": [{"type": "image_url",
            "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}}]}),
        "{openai}"
    );

    let anthropic = sent_body(ProviderKind::Anthropic, base64()).await;
    assert_eq!(
        anthropic["messages"][0]["content"],
        json!([
            {"type": "text", "text": "what is in this picture?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
        ]),
        "{anthropic}"
    );

    let ollama = sent_body(ProviderKind::Ollama, base64()).await;
    assert_eq!(
        ollama["messages"][0],
        json!({"role": "user", "content": "what is in this picture?", "images": [PIXEL]}),
        "{ollama}"
    );

    let gemini = sent_body(ProviderKind::Gemini, base64()).await;
    assert_eq!(
        gemini["contents"][0]["parts"],
        json!([
            {"text": "what is in this picture?"},
            {"inlineData": {"mimeType": "image/png", "data": PIXEL}},
        ]),
        "{gemini}"
    );
}

#[tokio::test]
async fn an_image_url_goes_as_a_url_where_the_api_fetches_it() {
    let url = "https://example.com/cat.png";
    let source = || ImageSource::Url(url.to_owned());
    let openai = sent_body(ProviderKind::OpenaiCompatible, source()).await;
    assert_eq!(openai["messages"][1]["content"][0]["image_url"]["url"], url);
    let anthropic = sent_body(ProviderKind::Anthropic, source()).await;
    assert_eq!(
        anthropic["messages"][0]["content"][1]["source"],
        json!({"type": "url", "url": url})
    );
    let gemini = sent_body(ProviderKind::Gemini, source()).await;
    assert_eq!(
        gemini["contents"][0]["parts"][1],
        json!({"fileData": {"mimeType": "image/png", "fileUri": url}})
    );
}

async fn refusal(kind: ProviderKind, extra: Value, source: ImageSource) -> (String, usize) {
    let server = server("rules:\n  - reply: {text: never}\n").await;
    let p = provider(kind, &server, extra);
    let e = p
        .chat(with_image(source), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind, ProviderErrorKind::UnsupportedInput, "{kind}: {e}");
    assert!(!e.retryable);
    (e.to_string(), chat_requests(&server).len())
}

#[tokio::test]
async fn images_the_provider_cannot_take_are_refused_before_sending() {
    for kind in [
        ProviderKind::OpenaiCompatible,
        ProviderKind::Anthropic,
        ProviderKind::Ollama,
        ProviderKind::Gemini,
    ] {
        let base64 = || ImageSource::Base64(PIXEL.to_owned());
        let (message, sent) = refusal(kind, json!({"vision": false}), base64()).await;
        assert!(message.contains("vision = false"), "{kind}: {message}");
        assert_eq!(sent, 0, "{kind}: nothing is sent");

        let (message, sent) = refusal(kind, json!({"max_image_bytes": 16}), base64()).await;
        assert!(message.contains("max_image_bytes"), "{kind}: {message}");
        assert_eq!(sent, 0, "{kind}");
    }
    let url = ImageSource::Url("https://example.com/cat.png".into());
    let (message, sent) = refusal(ProviderKind::Ollama, json!({}), url).await;
    assert!(message.contains("bytes only"), "{message}");
    assert_eq!(sent, 0);
}

#[tokio::test]
async fn a_request_without_images_is_not_refused_by_vision_false() {
    let server = server("rules:\n  - reply: {text: fine}\n").await;
    let p = provider(ProviderKind::Gemini, &server, json!({"vision": false}));
    let r = p.chat(ask("hi"), CallOptions::default()).await.unwrap();
    assert_eq!(r.text, "fine");
}

#[test]
fn unusable_image_settings_are_refused_naming_the_key() {
    for (key, value) in [("vision", json!("yes")), ("max_image_bytes", json!(0))] {
        let config = json!({"model": "m", key: value});
        let e =
            skillet_providers::ProviderSpec::from_llm_config("ollama", config.as_object(), &|_| {
                None
            })
            .unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }
}
