//! The process's standard input and output as the stdio transports (A2E and MCP) use them.
//!
//! When they are pipes — a host spawned `skillet serve --stdio` — they are read and written as
//! non-blocking pipes on the runtime's event loop. Otherwise (a terminal, a file) they are
//! tokio's `stdin()`/`stdout()`, which hand every read and every write to a blocking thread and
//! back: several futex calls and two thread hand-offs per message, for every message.
//!
//! Non-blocking mode belongs to the open pipe, which the rest of the process shares through
//! descriptors 0 and 1: the [`BlockingAgain`] guard puts blocking mode back when dropped.
//!
//! Not here: framing and protocols (`host::stdio`, `host::mcp`).

use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// Input and output as boxed streams, and the guard that makes descriptors 0 and 1 blocking
/// again. Call within the runtime: the pipes register with its event loop.
pub(crate) fn open() -> (
    Box<dyn AsyncRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
    BlockingAgain,
) {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let input: Option<Box<dyn AsyncRead + Send + Unpin>> = stdin
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
        .ok()
        .map(|pipe| Box::new(pipe) as _);
    let output: Option<Box<dyn AsyncWrite + Send + Unpin>> = stdout
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd)
        .ok()
        .map(|pipe| Box::new(pipe) as _);
    tracing::debug!(
        stdin_pipe = input.is_some(),
        stdout_pipe = output.is_some(),
        "stdio transport streams"
    );
    let guard = BlockingAgain([input.is_some(), output.is_some()]);
    (
        input.unwrap_or_else(|| Box::new(tokio::io::stdin())),
        output.unwrap_or_else(|| Box::new(tokio::io::stdout())),
        guard,
    )
}

/// Makes descriptors 0 / 1 blocking again when dropped, for those [`open`] made non-blocking.
pub(crate) struct BlockingAgain([bool; 2]);

impl Drop for BlockingAgain {
    fn drop(&mut self) {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        for (made_nonblocking, fd) in self.0.iter().zip([stdin.as_fd(), stdout.as_fd()]) {
            if *made_nonblocking {
                make_blocking(fd);
            }
        }
    }
}

/// Clears `O_NONBLOCK`; failing, nothing worse happens than a later blocking write seeing
/// `WouldBlock`, and there is no one left to tell.
fn make_blocking(fd: BorrowedFd<'_>) {
    if let Ok(flags) = fcntl_getfl(fd) {
        let _ = fcntl_setfl(fd, flags - OFlags::NONBLOCK);
    }
}
