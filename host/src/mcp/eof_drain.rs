//! [`DrainAtEof`]: a server transport that, when the client closes its input, keeps the session
//! open until the calls in flight have answered (within the grace period, then cancelled), so
//! their answers are written instead of lost.
//!
//! rmcp ends a session as soon as its transport's `receive` reports the end of input, and drops
//! the transport — the write half with it — while `tools/call` handlers may still be running
//! their model calls: the answers were lost (a host that writes its requests and then closes
//! stdin, as a shell pipe does, got none). Here the transport counts the requests it delivered
//! and the answers it sent, and reports the end of input only when every request is answered
//! (after `grace`, the core's calls are cancelled and answer as such); meanwhile rmcp's loop
//! goes on sending what the handlers answer. A request the client cancels
//! (`notifications/cancelled`) counts as answered when the cancellation is read: rmcp cancels
//! its handler and drops its answer without sending it, so waiting for that answer would hold
//! the end of input for the whole grace period. Counting at the transport, not in the core, also
//! covers a call that was read but not yet admitted when the input ended.
//! `receive` is polled inside rmcp's `select!` and dropped whenever another branch is ready, so
//! the drain is kept in `self` and resumed by the next `receive`, never restarted.
//!
//! Not here: what the session does before `initialize` (`pre_init`), framing (rmcp).

use std::borrow::Cow;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::watch;

use crate::core::{CANCEL_GRACE, HostCore};

type Drain = Pin<Box<dyn Future<Output = ()> + Send>>;

/// `inner`, whose end of input waits for the requests it delivered to be answered (see the
/// module doc).
pub(crate) struct DrainAtEof<T> {
    inner: T,
    core: HostCore,
    grace: Duration,
    open: Arc<OpenRequests>,
    state: State,
}

enum State {
    Reading,
    Draining(Drain),
    Ended,
}

/// The ids of the requests delivered and not yet answered, and their count to wait on.
struct OpenRequests {
    ids: Mutex<HashSet<RequestId>>,
    count: watch::Sender<usize>,
}

impl OpenRequests {
    fn opened(&self, id: &RequestId) {
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        ids.insert(id.clone());
        self.count.send_replace(ids.len());
    }

    fn answered(&self, id: &RequestId) {
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        if ids.remove(id) {
            self.count.send_replace(ids.len());
        }
    }

    async fn all_answered(&self) {
        let mut count = self.count.subscribe();
        let _ = count.wait_for(|open| *open == 0).await;
    }
}

impl<T> DrainAtEof<T> {
    /// Wraps a server transport; `grace` is how long requests in flight may take after the end
    /// of input before the core's calls are cancelled (they then answer as cancelled, within
    /// [`CANCEL_GRACE`]).
    pub(crate) fn new(inner: T, core: HostCore, grace: Duration) -> Self {
        DrainAtEof {
            inner,
            core,
            grace,
            open: Arc::new(OpenRequests {
                ids: Mutex::new(HashSet::new()),
                count: watch::Sender::new(0),
            }),
            state: State::Reading,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for DrainAtEof<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let open = Arc::clone(&self.open);
        let sent = self.inner.send(item);
        async move {
            let result = sent.await;
            if let Some(id) = answers {
                open.answered(&id);
            }
            result
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match &mut self.state {
                State::Reading => match self.inner.receive().await {
                    Some(message) => {
                        match &message {
                            JsonRpcMessage::Request(request) => self.open.opened(&request.id),
                            // rmcp cancels the request this names and drops its answer unsent:
                            // it is as good as answered.
                            JsonRpcMessage::Notification(notification) => {
                                if let ClientNotification::CancelledNotification(cancelled) =
                                    &notification.notification
                                    && let Some(id) = &cancelled.params.request_id
                                {
                                    self.open.answered(id);
                                }
                            }
                            _ => {}
                        }
                        return Some(message);
                    }
                    None => {
                        let (core, grace, open) =
                            (self.core.clone(), self.grace, Arc::clone(&self.open));
                        self.state = State::Draining(Box::pin(async move {
                            if tokio::time::timeout(grace, open.all_answered())
                                .await
                                .is_err()
                            {
                                core.cancel_all();
                                let _ =
                                    tokio::time::timeout(CANCEL_GRACE, open.all_answered()).await;
                            }
                        }));
                    }
                },
                State::Draining(drain) => {
                    drain.await;
                    self.state = State::Ended;
                }
                State::Ended => return None,
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
