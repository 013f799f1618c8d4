//! [`FallbackChain`]: a [`Provider`] that sends a turn to the next provider of a list when the
//! one before it could not answer.
//!
//! Each link runs with its own retry policy first. A turn moves on only for a failure another
//! provider may not share: one still marked retryable after the link's retries were spent (an
//! outage, 429s, a server that never answered, a truncated stream that delivered nothing), a
//! context-length refusal, or an exhausted quota. Anything that would fail the same way
//! anywhere — the caller's cancellation, the call's deadline, a bad request, a missing
//! credential — ends the turn with that error. Every link shares the call's one deadline, so
//! a chain never outlives it.
//!
//! Before moving on, the chain tells the call's [`RetryObserver`](crate::RetryObserver)
//! ([`FallbackNotice`]: which link failed, why, and which link gets the turn), so the engine can
//! report it and record which provider answered. What is not here: building the links (the
//! engine resolves them from the host's configuration).

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::{ProviderError, ProviderErrorKind};
use crate::kind::ProviderKind;
use crate::mode_names::OutputMode;
use crate::modes::SchemaDelivery;
use crate::notices::FallbackNotice;
use crate::provider::{CallOptions, Provider};
use crate::types::{ChatRequest, ChatResponse};

/// One provider of a chain, with the name it is reported by.
#[derive(Clone)]
pub struct FallbackLink {
    /// The host's name for it (a `[providers.NAME]` table, or `kind/model`).
    pub name: Arc<str>,
    /// The provider.
    pub provider: Arc<dyn Provider>,
}

/// Providers tried in order for each turn.
pub struct FallbackChain {
    links: Vec<FallbackLink>,
}

impl FallbackChain {
    /// A chain of `primary` then `fallbacks`, in order.
    pub fn new(primary: FallbackLink, fallbacks: Vec<FallbackLink>) -> Self {
        let mut links = Vec::with_capacity(1 + fallbacks.len());
        links.push(primary);
        links.extend(fallbacks);
        FallbackChain { links }
    }

    fn primary(&self) -> &dyn Provider {
        &*self.links[0].provider
    }
}

/// Whether another provider may answer what this one could not.
fn falls_back(error: &ProviderError) -> bool {
    match error.kind {
        ProviderErrorKind::Cancelled => false,
        ProviderErrorKind::ContextTooLong | ProviderErrorKind::QuotaExceeded => true,
        // The call's deadline passing is not retryable; a server that did not answer in time
        // is.
        _ => error.retryable,
    }
}

#[async_trait]
impl Provider for FallbackChain {
    fn kind(&self) -> ProviderKind {
        self.primary().kind()
    }

    fn model(&self) -> &str {
        self.primary().model()
    }

    /// The primary's: a link that takes fewer images refuses a request with them by itself.
    fn image_bytes_limit(&self) -> Option<usize> {
        self.primary().image_bytes_limit()
    }

    /// The primary's when every link carries the schema alike, else `NotEveryTurn`: the run's
    /// instructions are written once, before it is known which link answers.
    fn schema_every_turn(&self, with_tools: bool, hint: Option<OutputMode>) -> SchemaDelivery {
        let primary = self.primary().schema_every_turn(with_tools, hint);
        let alike = self
            .links
            .iter()
            .all(|link| link.provider.schema_every_turn(with_tools, hint) == primary);
        if alike {
            primary
        } else {
            SchemaDelivery::NotEveryTurn
        }
    }

    async fn chat_borrowed(
        &self,
        request: &ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let mut links = self.links.iter().peekable();
        loop {
            let Some(link) = links.next() else {
                unreachable!("a chain has at least its primary");
            };
            let error = match link.provider.chat_borrowed(request, options).await {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            let deadline_passed = options
                .deadline
                .is_some_and(|d| tokio::time::Instant::now() >= d);
            let next = match links.peek() {
                Some(next) if falls_back(&error) && !deadline_passed => next,
                _ => return Err(error),
            };
            let notice = FallbackNotice {
                from: link.name.to_string(),
                to: next.name.to_string(),
                to_model: next.provider.model().to_owned(),
                error_kind: error.kind.clone(),
                status: error.status,
            };
            tracing::info!(from = %notice.from, to = %notice.to, "{notice}");
            if let Some(observer) = options.retry_observer {
                observer.fell_back(&notice);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::notices::{RetryNotice, RetryObserver};
    use crate::types::{ChatMessage, FinishReason};

    /// Fails with `error` or answers `text`.
    struct Fixed {
        model: &'static str,
        result: Result<&'static str, ProviderError>,
        calls: Mutex<u32>,
    }

    #[async_trait]
    impl Provider for Fixed {
        fn kind(&self) -> ProviderKind {
            ProviderKind::OpenaiCompatible
        }
        fn model(&self) -> &str {
            self.model
        }
        async fn chat_borrowed(
            &self,
            _: &ChatRequest,
            _: CallOptions<'_>,
        ) -> Result<ChatResponse, ProviderError> {
            *self.calls.lock().unwrap() += 1;
            self.result.clone().map(|text| ChatResponse {
                text: text.to_owned(),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: None,
                request_id: None,
                reasoning: None,
                thinking: Vec::new(),
            })
        }
    }

    fn link(
        name: &str,
        model: &'static str,
        result: Result<&'static str, ProviderError>,
    ) -> (FallbackLink, Arc<Fixed>) {
        let fixed = Arc::new(Fixed {
            model,
            result,
            calls: Mutex::new(0),
        });
        let provider: Arc<dyn Provider> = fixed.clone();
        (
            FallbackLink {
                name: name.into(),
                provider,
            },
            fixed,
        )
    }

    #[derive(Default)]
    struct Seen(Mutex<Vec<FallbackNotice>>);

    impl RetryObserver for Seen {
        fn retrying(&self, _: &RetryNotice) {}
        fn fell_back(&self, notice: &FallbackNotice) {
            self.0.lock().unwrap().push(notice.clone());
        }
    }

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![ChatMessage::user("hi")],
            ..Default::default()
        }
    }

    fn down() -> ProviderError {
        ProviderError::new(ProviderErrorKind::Unavailable, "down")
            .with_status(500)
            .with_retryable(true)
    }

    #[tokio::test]
    async fn an_outage_moves_the_turn_on_and_the_observer_is_told() {
        let (first, first_calls) = link("primary", "m1", Err(down()));
        let (second, _) = link("backup", "m2", Ok("from backup"));
        let chain = FallbackChain::new(first, vec![second]);
        let seen = Seen::default();
        let options = CallOptions::default().with_retry_observer(&seen);
        let response = chain.chat_borrowed(&request(), options).await.unwrap();
        assert_eq!(response.text, "from backup");
        assert_eq!(*first_calls.calls.lock().unwrap(), 1);
        let seen = seen.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(
            (seen[0].from.as_str(), seen[0].to.as_str()),
            ("primary", "backup")
        );
        assert_eq!(
            seen[0].to_string(),
            "primary failed (HTTP 500, unavailable); the turn goes to fallback backup (m2)"
        );
        assert_eq!(chain.model(), "m1", "the chain is named by its primary");
    }

    #[tokio::test]
    async fn a_context_length_refusal_falls_back_but_a_bad_request_does_not() {
        let too_long = ProviderError::new(ProviderErrorKind::ContextTooLong, "too long");
        let (first, _) = link("small", "m1", Err(too_long));
        let (second, _) = link("large", "m2", Ok("fits"));
        let chain = FallbackChain::new(first, vec![second]);
        let response = chain
            .chat_borrowed(&request(), CallOptions::default())
            .await;
        assert_eq!(response.unwrap().text, "fits");

        let bad = ProviderError::new(ProviderErrorKind::BadRequest, "bad");
        let (first, _) = link("primary", "m1", Err(bad));
        let (second, second_calls) = link("backup", "m2", Ok("never"));
        let chain = FallbackChain::new(first, vec![second]);
        let error = chain
            .chat_borrowed(&request(), CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::BadRequest);
        assert_eq!(*second_calls.calls.lock().unwrap(), 0);
    }

    #[tokio::test]
    async fn the_last_links_error_is_the_turns_when_every_link_fails() {
        let (first, _) = link("a", "m1", Err(down()));
        let last = ProviderError::new(
            ProviderErrorKind::RateLimited { retry_after: None },
            "slow down",
        )
        .with_status(429)
        .with_retryable(true);
        let (second, _) = link("b", "m2", Err(last));
        let chain = FallbackChain::new(first, vec![second]);
        let error = chain
            .chat_borrowed(&request(), CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(error.kind.as_str(), "rate_limited");
    }
}
