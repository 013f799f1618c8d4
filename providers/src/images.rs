//! What a provider accepts of a request's images ([`ImageSettings`]: `vision`,
//! `max_image_bytes` in `provider_config`), and the check that refuses the rest before anything
//! is sent, as [`ProviderErrorKind::UnsupportedInput`]: images to a model declared not to take
//! them, an image over the size limit, an image URL to an API that takes bytes only (Ollama).
//!
//! How an image goes on each API's wire is each wire's (`ChatMessage::Image`: OpenAI
//! `image_url` data URLs, Anthropic `image` blocks, Ollama `images`, Gemini `inlineData` /
//! `fileData`).

use serde::Serialize;

use crate::error::{ProviderError, ProviderErrorKind};
use crate::types::{ChatMessage, ChatRequest, ImageSource};

/// The default `max_image_bytes`: 20 MiB decoded, OpenAI's and Gemini's inline limit
/// (Anthropic's is 5 MB an image: set it lower there to refuse before sending).
pub const DEFAULT_MAX_IMAGE_BYTES: u32 = 20 << 20;

/// A provider's image settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ImageSettings {
    /// Whether the model takes images (`vision`, default `true`: the API decides).
    pub vision: bool,
    /// The largest image, in decoded bytes (`max_image_bytes`).
    pub max_image_bytes: u32,
}

impl Default for ImageSettings {
    fn default() -> Self {
        ImageSettings {
            vision: true,
            max_image_bytes: DEFAULT_MAX_IMAGE_BYTES,
        }
    }
}

impl ImageSettings {
    /// `Ok` when every image of `request` may be sent to `model`; else why not. Requests
    /// without images pass after one scan of the messages.
    pub(crate) fn check(
        &self,
        request: &ChatRequest,
        model: &str,
        takes_urls: bool,
    ) -> Result<(), ProviderError> {
        let refuse =
            |message: String| ProviderError::new(ProviderErrorKind::UnsupportedInput, message);
        for message in &request.messages {
            let ChatMessage::Image { image } = message else {
                continue;
            };
            if !self.vision {
                return Err(refuse(format!(
                    "model {model} is declared not to take images (vision = false in its provider's options)"
                )));
            }
            let size = image.decoded_len();
            if size > self.max_image_bytes as usize {
                return Err(refuse(format!(
                    "an image of about {size} bytes is over this provider's limit of {} (max_image_bytes)",
                    self.max_image_bytes
                )));
            }
            if matches!(image.source, ImageSource::Url(_)) && !takes_urls {
                return Err(refuse(
                    "this API takes images as bytes only, not by URL: send the image's data"
                        .to_owned(),
                ));
            }
        }
        Ok(())
    }
}
