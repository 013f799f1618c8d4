//! The output of MCP over stdio: a writer that gathers what is written while the previous write
//! is on its way into one write.
//!
//! rmcp writes and flushes every message on its own: a call's progress and log notifications
//! and its result are one `write(2)` each, and one wake-up of the host's reader each. Here a
//! flush hands the bytes to a writer task and returns at once; whatever else is written and
//! flushed before that task's write completes goes out with the next one. Under load that is
//! one write for many messages; a lone message still goes out at once.
//!
//! Order is kept, bytes are never split between writes other than as written, and at most
//! [`MAX_PENDING_BYTES`] wait (past that a write waits for the task: the host reads too slowly).
//! A failed write fails every later write and flush. Dropping or shutting down the writer lets
//! the task write what is left and shut the output down; awaiting its handle waits for that.
//!
//! A [`LineSender`] (from [`CoalescingWriter::lines`]) puts whole JSON lines into the same
//! output without going through rmcp: MCP over stdio writes a call's notifications there as
//! they are emitted (`notify::DirectSink`). rmcp's writes always hand over whole messages and a
//! line is added whole under the same lock, so the two never interleave inside a message. A
//! line is refused, not waited for, once [`MAX_LINE_BACKLOG`] bytes wait or a write waits for
//! room (the host stopped reading: progress and log lines are dropped rather than held in
//! memory, and never keep a result waiting), or once the output is closed or failed.
//!
//! Not here: reading (rmcp's), the session (`serve`), what the lines say (`notify`).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The most bytes waiting for the writer task before a write waits too.
pub(crate) const MAX_PENDING_BYTES: usize = 1 << 20;

/// The most bytes waiting before a [`LineSender`]'s line is refused.
pub(crate) const MAX_LINE_BACKLOG: usize = 2 * MAX_PENDING_BYTES;

/// Where written bytes wait for the writer task.
#[derive(Default)]
struct State {
    pending: Vec<u8>,
    closed: bool,
    failed: Option<io::ErrorKind>,
    /// Writers waiting for room.
    waiting: Vec<Waker>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the writer task: there are bytes, or the writer closed.
    ready: Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The writing end (an [`AsyncWrite`]); see the module docs.
pub(crate) struct CoalescingWriter {
    shared: Arc<Shared>,
}

/// Wraps `output`: returns the writer and the task that writes to `output` (it ends when the
/// writer is dropped or shut down and everything written was written, or on an error).
pub(crate) fn coalescing<W>(mut output: W) -> (CoalescingWriter, JoinHandle<()>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let shared = Arc::new(Shared::default());
    let task_shared = Arc::clone(&shared);
    let task = tokio::spawn(async move {
        let shared = task_shared;
        let mut batch = Vec::new();
        loop {
            let closed = {
                let mut state = shared.lock();
                std::mem::swap(&mut batch, &mut state.pending);
                for waker in state.waiting.drain(..) {
                    waker.wake();
                }
                state.closed
            };
            if batch.is_empty() {
                if closed {
                    let _ = output.shutdown().await;
                    return;
                }
                shared.ready.notified().await;
                continue;
            }
            let written = match output.write_all(&batch).await {
                Ok(()) => output.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                let mut state = shared.lock();
                state.failed = Some(e.kind());
                for waker in state.waiting.drain(..) {
                    waker.wake();
                }
                return;
            }
            batch.clear();
            // One huge message must not keep its buffer for the whole session.
            if batch.capacity() > 2 * MAX_PENDING_BYTES {
                batch = Vec::new();
            }
        }
    });
    (CoalescingWriter { shared }, task)
}

impl CoalescingWriter {
    /// A handle that adds whole lines to this output (see the module docs).
    pub(crate) fn lines(&self) -> LineSender {
        LineSender {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// Adds whole JSON lines to a [`CoalescingWriter`]'s output; clones share it.
#[derive(Clone)]
pub(crate) struct LineSender {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for LineSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineSender")
    }
}

/// Why a line was not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineRefused {
    /// [`MAX_LINE_BACKLOG`] bytes already wait, or a write waits for room: the host is not
    /// reading.
    Backlog,
    /// The output was shut down or failed.
    Closed,
}

impl LineSender {
    /// Adds one line after everything written so far, or refuses it without waiting: `write`
    /// appends the line's JSON (without the newline) to the output's buffer.
    pub(crate) fn send_line(&self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), LineRefused> {
        let mut state = self.shared.lock();
        if state.failed.is_some() || state.closed {
            return Err(LineRefused::Closed);
        }
        // A write of rmcp's waiting for room (a result, say) goes first: lines added meanwhile
        // could keep it waiting.
        if state.pending.len() >= MAX_LINE_BACKLOG || !state.waiting.is_empty() {
            return Err(LineRefused::Backlog);
        }
        write(&mut state.pending);
        state.pending.push(b'\n');
        drop(state);
        self.shared.ready.notify_one();
        Ok(())
    }
}

fn failure(kind: io::ErrorKind) -> io::Error {
    io::Error::new(kind, "the output failed; nothing more can be written")
}

impl AsyncWrite for CoalescingWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.shared.lock();
        if let Some(kind) = state.failed {
            return Poll::Ready(Err(failure(kind)));
        }
        if state.closed {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the output was shut down",
            )));
        }
        // A write larger than the limit still goes in whole once nothing else waits.
        if !state.pending.is_empty() && state.pending.len() + data.len() > MAX_PENDING_BYTES {
            state.waiting.push(cx.waker().clone());
            return Poll::Pending;
        }
        state.pending.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let state = self.shared.lock();
        if let Some(kind) = state.failed {
            return Poll::Ready(Err(failure(kind)));
        }
        drop(state);
        self.shared.ready.notify_one();
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.lock().closed = true;
        self.shared.ready.notify_one();
        Poll::Ready(Ok(()))
    }
}

impl Drop for CoalescingWriter {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::AsyncReadExt;

    use super::*;

    /// An output that counts its writes and can be held shut (every write pending) or failed.
    #[derive(Clone, Default)]
    struct Probe {
        writes: Arc<AtomicUsize>,
        bytes: Arc<Mutex<Vec<u8>>>,
        held: Arc<std::sync::atomic::AtomicBool>,
        broken: Arc<std::sync::atomic::AtomicBool>,
        parked: Arc<Mutex<Option<Waker>>>,
    }

    impl Probe {
        fn release(&self) {
            self.held.store(false, Ordering::SeqCst);
            if let Some(waker) = self.parked.lock().unwrap().take() {
                waker.wake();
            }
        }
    }

    impl AsyncWrite for Probe {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            data: &[u8],
        ) -> Poll<io::Result<usize>> {
            if self.broken.load(Ordering::SeqCst) {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            if self.held.load(Ordering::SeqCst) {
                *self.parked.lock().unwrap() = Some(cx.waker().clone());
                return Poll::Pending;
            }
            self.writes.fetch_add(1, Ordering::SeqCst);
            self.bytes.lock().unwrap().extend_from_slice(data);
            Poll::Ready(Ok(data.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// A line's writer that appends `text` as it is.
    fn json(text: &str) -> impl FnOnce(&mut Vec<u8>) + '_ {
        move |out| out.extend_from_slice(text.as_bytes())
    }

    async fn line(writer: &mut CoalescingWriter, text: &str) {
        writer.write_all(text.as_bytes()).await.unwrap();
        writer.write_all(b"\n").await.unwrap();
        writer.flush().await.unwrap();
    }

    /// A writer whose task holds a first line in a write the output does not take yet.
    async fn stalled() -> (Probe, CoalescingWriter, JoinHandle<()>) {
        let probe = Probe::default();
        probe.held.store(true, Ordering::SeqCst);
        let (mut writer, task) = coalescing(probe.clone());
        line(&mut writer, "in the task's hands").await;
        tokio::task::yield_now().await;
        (probe, writer, task)
    }

    #[tokio::test]
    async fn messages_flushed_while_a_write_is_on_its_way_go_out_together_in_order() {
        let probe = Probe::default();
        probe.held.store(true, Ordering::SeqCst);
        let (mut writer, task) = coalescing(probe.clone());
        line(&mut writer, "first").await;
        // The task now holds "first" in a write the output does not take yet.
        tokio::task::yield_now().await;
        for i in 0..10 {
            line(&mut writer, &format!("queued {i}")).await;
        }
        probe.release();
        drop(writer);
        task.await.unwrap();
        let text = String::from_utf8(probe.bytes.lock().unwrap().clone()).unwrap();
        let expected: Vec<String> = std::iter::once("first".to_owned())
            .chain((0..10).map(|i| format!("queued {i}")))
            .collect();
        assert_eq!(text.lines().collect::<Vec<_>>(), expected);
        assert!(
            probe.writes.load(Ordering::SeqCst) <= 2,
            "{} writes for 11 messages",
            probe.writes.load(Ordering::SeqCst)
        );
    }

    #[tokio::test]
    async fn a_lone_message_goes_out_at_once_through_a_real_pipe() {
        let (near, mut far) = tokio::io::duplex(64);
        let (mut writer, task) = coalescing(near);
        line(&mut writer, "hello").await;
        let mut read = [0u8; 6];
        far.read_exact(&mut read).await.unwrap();
        assert_eq!(&read, b"hello\n");
        writer.shutdown().await.unwrap();
        task.await.unwrap();
        let mut rest = Vec::new();
        far.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "shut down after what was written");
    }

    #[tokio::test]
    async fn a_failed_output_fails_later_writes_and_flushes() {
        let probe = Probe::default();
        probe.broken.store(true, Ordering::SeqCst);
        let (mut writer, task) = coalescing(probe);
        line(&mut writer, "lost").await;
        task.await.unwrap();
        let error = writer.write_all(b"more").await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
        assert!(writer.flush().await.is_err());
    }

    #[tokio::test]
    async fn lines_go_out_whole_between_writes_in_the_order_sent() {
        let probe = Probe::default();
        let (mut writer, task) = coalescing(probe.clone());
        let lines = writer.lines();
        line(&mut writer, "{\"a\":1}").await;
        lines.send_line(json(r#"{"b":2}"#)).unwrap();
        line(&mut writer, "{\"c\":3}").await;
        lines.clone().send_line(json(r#"{"d":4}"#)).unwrap();
        drop(writer);
        task.await.unwrap();
        let text = String::from_utf8(probe.bytes.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"d\":4}\n");
        assert_eq!(
            lines.send_line(json("{}")),
            Err(LineRefused::Closed),
            "a line sent after the writer closed"
        );
    }

    #[tokio::test]
    async fn lines_are_refused_not_held_when_the_host_stops_reading() {
        let (probe, writer, _task) = stalled().await;
        let lines = writer.lines();
        let big = "x".repeat(MAX_PENDING_BYTES / 4);
        let mut sent = 0;
        while lines.send_line(json(&big)).is_ok() {
            sent += 1;
            assert!(sent < 100, "never refused");
        }
        assert_eq!(lines.send_line(json(&big)), Err(LineRefused::Backlog));
        assert!(sent >= 8, "{sent} lines before the backlog limit");
        probe.release();
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while lines.send_line(json("\"again\"")).is_err() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("room again once the host reads");
    }

    #[tokio::test]
    async fn lines_are_refused_while_a_write_waits_for_room() {
        let (probe, mut writer, task) = stalled().await;
        let lines = writer.lines();
        // Below the lines' backlog limit, but the next write of rmcp's has to wait.
        writer
            .write_all(&vec![b'x'; MAX_PENDING_BYTES - 8])
            .await
            .unwrap();
        let result = tokio::spawn(async move {
            writer.write_all(b"the result\n").await.unwrap();
            writer
        });
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while lines.shared.lock().waiting.is_empty() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the result's write waits for room");
        assert_eq!(
            lines.send_line(json("\"progress\"")),
            Err(LineRefused::Backlog)
        );
        probe.release();
        drop(result.await.unwrap());
        task.await.unwrap();
        let bytes = probe.bytes.lock().unwrap().clone();
        assert!(
            bytes.ends_with(b"xxthe result\n"),
            "the result follows what waited"
        );
        assert!(!bytes.windows(8).any(|w| w == b"progress"));
    }

    #[tokio::test]
    async fn a_host_that_does_not_read_makes_writes_wait_past_the_limit() {
        let (probe, mut writer, _task) = stalled().await;
        let chunk = vec![b'x'; MAX_PENDING_BYTES / 2];
        writer.write_all(&chunk).await.unwrap();
        writer.write_all(&chunk).await.unwrap();
        let blocked = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            writer.write_all(b"one more"),
        )
        .await;
        assert!(blocked.is_err(), "the write past the limit waits");
        probe.release();
        tokio::time::timeout(std::time::Duration::from_secs(5), writer.write_all(b"!"))
            .await
            .expect("room once the output takes the bytes")
            .unwrap();
    }
}
