//! The client's deadline: gRPC's `grpc-timeout` request header (`1*8DIGIT` and a unit: `H`,
//! `M`, `S`, `m`, `u`, `n`), counted from when the call arrived. A unary method that has not
//! answered by then, and a stream that has not ended, end with `DEADLINE_EXCEEDED`; a header
//! that does not parse is ignored, as tonic's own server ignores it.
//!
//! Not here: what the call runs (`super::Call`). The work a call started is not cancelled by
//! its deadline: an A2A task goes on in the store, as when an HTTP client hangs up.

use std::future::Future;
use std::time::Duration;

use axum::http::HeaderMap;
use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::time::Instant;
use tonic::Status;

/// When the call must have ended, from its `grpc-timeout` header; `None` without one (or with
/// one that does not parse).
pub(super) fn of(headers: &HeaderMap) -> Option<Instant> {
    let value = headers.get("grpc-timeout")?.to_str().ok()?;
    let timeout = parse(value);
    if timeout.is_none() {
        tracing::debug!(
            value,
            "A2A gRPC: a grpc-timeout that does not parse is ignored"
        );
    }
    Some(Instant::now() + timeout?)
}

/// `grpc-timeout`'s value as a duration (the gRPC over HTTP/2 spec: at most eight digits).
fn parse(value: &str) -> Option<Duration> {
    let unit = value.chars().next_back()?;
    let digits = &value[..value.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        'H' => Duration::from_secs(amount * 3600),
        'M' => Duration::from_secs(amount * 60),
        'S' => Duration::from_secs(amount),
        'm' => Duration::from_millis(amount),
        'u' => Duration::from_micros(amount),
        'n' => Duration::from_nanos(amount),
        _ => return None,
    })
}

fn exceeded() -> Status {
    Status::deadline_exceeded(
        "the call's grpc-timeout passed before it ended; a task it started goes on (GetTask reads it)",
    )
}

/// `answer`, or `DEADLINE_EXCEEDED` when `deadline` comes first.
pub(super) async fn within<T>(
    deadline: Option<Instant>,
    answer: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    match deadline {
        None => answer.await,
        Some(deadline) => tokio::time::timeout_at(deadline, answer)
            .await
            .unwrap_or_else(|_| Err(exceeded())),
    }
}

/// `messages` as they come until `deadline`; a stream still open then ends with
/// `DEADLINE_EXCEEDED`.
pub(super) fn end_by(
    deadline: Option<Instant>,
    messages: BoxStream<'static, Result<Vec<u8>, Status>>,
) -> BoxStream<'static, Result<Vec<u8>, Status>> {
    let Some(deadline) = deadline else {
        return messages;
    };
    futures::stream::unfold(Some(messages), move |messages| async move {
        let mut messages = messages?;
        match tokio::time::timeout_at(deadline, messages.next()).await {
            Ok(Some(item)) => Some((item, Some(messages))),
            Ok(None) => None,
            Err(_) => Some((Err(exceeded()), None)),
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_values_parse_by_the_spec() {
        assert_eq!(parse("1S"), Some(Duration::from_secs(1)));
        assert_eq!(parse("250m"), Some(Duration::from_millis(250)));
        assert_eq!(parse("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse("99999999n"), Some(Duration::from_nanos(99_999_999)));
        for bad in [
            "",
            "S",
            "100",
            "123456789S",
            "1s",
            "-1S",
            "1.5S",
            "१S",
            "1१",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_still_open_at_the_deadline_ends_with_deadline_exceeded() {
        let deadline = Some(Instant::now() + Duration::from_millis(100));
        let first = futures::stream::once(async { Ok(vec![1]) });
        let never = futures::stream::pending();
        let mut messages = end_by(deadline, first.chain(never).boxed());
        assert_eq!(messages.next().await.unwrap().unwrap(), vec![1]);
        let end = messages.next().await.unwrap().unwrap_err();
        assert_eq!(end.code(), tonic::Code::DeadlineExceeded);
        assert!(messages.next().await.is_none());

        let finished = futures::stream::iter([Ok(vec![2])]).boxed();
        let mut messages = end_by(deadline, finished);
        assert!(messages.next().await.unwrap().is_ok());
        assert!(messages.next().await.is_none());
    }
}
