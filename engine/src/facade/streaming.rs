//! [`SkillStream`]: a run on its own task, its events as a [`Stream`] while it runs and its
//! output at the end ([`SkillStream::finish`]). Dropping the stream before `finish` cancels the
//! run; [`SkillStream::cancel`] does it explicitly.
//!
//! The events are the call's live events in order (`seq` from 0 without gaps; the model's text
//! as `artifact` chunks), the same ones the output collects. The stream ends when the call has
//! answered, so `finish` after the last event returns at once.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::answer::execute;
use super::error::SkillError;
use super::output::SkillOutput;
use crate::events::EventSink;
use crate::protocol::{ErrorCode, SkillCallRequest, SkillEvent};
use crate::run::Executor;

/// A running skill call: a `Stream` of its events, then its result. See the module docs.
///
/// ```
/// # async fn demo(skillet: skillet_engine::Skillet) -> Result<(), skillet_engine::SkillError> {
/// use futures::StreamExt;
///
/// let mut run = skillet.run_streaming("summarize", serde_json::json!({"text": "..."}));
/// while let Some(event) = run.next().await {
///     println!("{} {:?}", event.seq, event.payload);
/// }
/// let output = run.finish().await?;
/// # let _ = output; Ok(()) }
/// ```
#[must_use = "dropping the stream cancels the run"]
pub struct SkillStream {
    events: mpsc::UnboundedReceiver<SkillEvent>,
    answer: Option<JoinHandle<Result<SkillOutput, SkillError>>>,
    cancel: CancellationToken,
    skill: String,
}

impl std::fmt::Debug for SkillStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillStream")
            .field("skill", &self.skill)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// Forwards live events into the stream's channel until the call has answered.
struct ChannelSink {
    sender: Mutex<Option<mpsc::UnboundedSender<SkillEvent>>>,
}

impl EventSink for ChannelSink {
    fn emit(&self, event: &SkillEvent) {
        let sender = self.sender.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(sender) = sender.as_ref() {
            // A dropped stream cancels the run; until then its receiver is open.
            let _ = sender.send(event.clone());
        }
    }
}

impl ChannelSink {
    /// Ends the stream, even if a clone of the sink outlives the call somewhere.
    fn close(&self) {
        self.sender.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

impl SkillStream {
    pub(crate) fn start(
        executor: Executor,
        request: SkillCallRequest,
        cancel: CancellationToken,
        problem: Option<SkillError>,
    ) -> SkillStream {
        let (sender, events) = mpsc::unbounded_channel();
        let skill = request.name.clone();
        let token = cancel.clone();
        let answer = tokio::spawn(async move {
            if let Some(problem) = problem {
                return Err(problem);
            }
            let sink = Arc::new(ChannelSink {
                sender: Mutex::new(Some(sender)),
            });
            let live: Arc<dyn EventSink> = sink.clone();
            let answer = execute(&executor, request, Some(live), token).await;
            sink.close();
            answer
        });
        SkillStream {
            events,
            answer: Some(answer),
            cancel,
            skill,
        }
    }

    /// Cancels the run: it stops at once (the provider request and tools are dropped) and
    /// [`Self::finish`] returns [`SkillError::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Waits for the run's output (the events not yet read stay in it too).
    pub async fn finish(mut self) -> Result<SkillOutput, SkillError> {
        let Some(answer) = self.answer.take() else {
            return Err(self.lost("the run's answer was already taken"));
        };
        match answer.await {
            Ok(answer) => answer,
            Err(e) => Err(self.lost(&format!("the run's task ended without an answer: {e}"))),
        }
    }

    fn lost(&self, message: &str) -> SkillError {
        SkillError::Internal {
            skill: self.skill.clone(),
            code: ErrorCode::RuntimeError,
            message: message.to_owned(),
        }
    }
}

impl Stream for SkillStream {
    type Item = SkillEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<SkillEvent>> {
        self.events.poll_recv(cx)
    }
}

impl Drop for SkillStream {
    fn drop(&mut self) {
        if self.answer.is_some() {
            self.cancel.cancel();
        }
    }
}
