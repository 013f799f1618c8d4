//! [`PreInit`]: a server transport that drops the notifications (and stray responses) a client
//! sends before its first request, so that they cannot end the session.
//!
//! rmcp's server takes only requests until the lifecycle starts (`initialize`, `ping`, a
//! discover probe); any other message there fails the handshake, which ended `serve --mcp`
//! (exit 5) when a client's `notifications/cancelled` raced its `initialize`. A notification
//! has no answer, and one sent before `initialize` refers to nothing the server knows, so it
//! is dropped (logged at debug). Once a request other than `ping` or the discover probe has
//! passed, every message goes through untouched. An `initialize` or `ping` naming MCP
//! 2026-07-28 in its `_meta` is answered `-32601` here (that revision removed both: `revision`)
//! and the lifecycle stays unstarted.
//!
//! Not here: the handshake itself (rmcp), the session (`serve`).

use std::borrow::Cow;
use std::future::Future;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::revision;

/// `inner` with the pre-`initialize` filter (see the module doc).
pub(crate) struct PreInit<T> {
    inner: T,
    started: bool,
}

impl<T> PreInit<T> {
    /// Wraps a fresh server transport.
    pub(crate) fn new(inner: T) -> Self {
        PreInit {
            inner,
            started: false,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for PreInit<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = self.inner.receive().await?;
            if self.started {
                return Some(message);
            }
            match &message {
                ClientJsonRpcMessage::Request(request)
                    if removed_before_start(&request.request) =>
                {
                    let method = match request.request {
                        ClientRequest::PingRequest(_) => "ping",
                        _ => "initialize",
                    };
                    let error = ServerJsonRpcMessage::error(
                        revision::removed(method),
                        Some(request.id.clone()),
                    );
                    if self.inner.send(error).await.is_err() {
                        return None;
                    }
                }
                ClientJsonRpcMessage::Request(request) => {
                    self.started = !matches!(
                        request.request,
                        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
                    );
                    return Some(message);
                }
                _ => tracing::debug!("MCP message before initialize dropped"),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// An `initialize` or `ping` naming 2026-07-28 in its `_meta`: rmcp would run the handshake
/// (or answer the ping) before any handler sees it, and that revision removed both.
fn removed_before_start(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::InitializeRequest(_) | ClientRequest::PingRequest(_)
    ) && revision::meta_is_2026(request.get_meta())
}
