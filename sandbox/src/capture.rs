//! Bounded capture of a child's output streams.
//!
//! Two policies: a *head* capture for `run` (the result is the first bytes; more than the limit is
//! a contract breach and ends the run) and a *tail* capture for interactive children's stderr (a
//! log: the newest bytes matter, and the child must never block on a full pipe).

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes captured from one stream, and whether some were dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CapturedOutput {
    /// The bytes kept (at most the stream's limit).
    pub bytes: Vec<u8>,
    /// True when the stream produced more than was kept.
    pub truncated: bool,
}

impl CapturedOutput {
    /// The kept bytes as text, invalid UTF-8 replaced (for logs and error details).
    pub fn to_text_lossy(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// The stream produced more than its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverLimit;

/// Reads `reader` to end into `out`, keeping at most `limit` bytes. Returns [`OverLimit`] as soon
/// as one byte more arrives (with `out` holding the first `limit` bytes, `truncated` set).
/// Read errors end the capture like end-of-file: the child's exit status tells the story.
pub(crate) async fn capture_head<R: AsyncRead + Unpin>(
    mut reader: R,
    limit: usize,
    out: &mut CapturedOutput,
) -> Result<(), OverLimit> {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return Ok(()),
            Ok(n) => n,
        };
        let room = limit.saturating_sub(out.bytes.len());
        if n > room {
            out.bytes.extend_from_slice(&chunk[..room]);
            out.truncated = true;
            return Err(OverLimit);
        }
        out.bytes.extend_from_slice(&chunk[..n]);
    }
}

/// Reads `reader` to end, keeping the newest `limit` bytes.
pub(crate) async fn capture_tail<R: AsyncRead + Unpin>(
    mut reader: R,
    limit: usize,
) -> CapturedOutput {
    let mut out = CapturedOutput::default();
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = reader.read(&mut chunk).await {
        out.bytes.extend_from_slice(&chunk[..n]);
        // Trim only once the buffer is well over the limit, so trimming stays amortised O(1).
        if out.bytes.len() > limit.saturating_mul(2).max(limit + chunk.len()) {
            keep_newest(&mut out, limit);
        }
    }
    keep_newest(&mut out, limit);
    out
}

fn keep_newest(out: &mut CapturedOutput, limit: usize) {
    if out.bytes.len() > limit {
        let excess = out.bytes.len() - limit;
        out.bytes.drain(..excess);
        out.truncated = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn head_capture_stops_at_limit_and_flags_truncation() {
        let data = [b'x'; 100];
        let mut out = CapturedOutput::default();
        assert_eq!(capture_head(&data[..], 10, &mut out).await, Err(OverLimit));
        assert_eq!(out.bytes.len(), 10);
        assert!(out.truncated);
    }

    #[tokio::test]
    async fn head_capture_of_exactly_limit_bytes_is_complete() {
        let data = [b'x'; 10];
        let mut out = CapturedOutput::default();
        assert_eq!(capture_head(&data[..], 10, &mut out).await, Ok(()));
        assert!(!out.truncated);
    }

    #[tokio::test]
    async fn tail_capture_keeps_newest_bytes() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let out = capture_tail(&data[..], 1000).await;
        assert_eq!(out.bytes, data[data.len() - 1000..]);
        assert!(out.truncated);
    }
}
