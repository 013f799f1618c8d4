use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

use super::*;

/// Hands its input out `step` bytes at a time, as a pipe may.
struct Trickle {
    data: Vec<u8>,
    at: usize,
    step: usize,
}

impl AsyncRead for Trickle {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self
            .step
            .min(self.data.len() - self.at)
            .min(out.remaining());
        let at = self.at;
        out.put_slice(&self.data[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

/// What rmcp would read through the guard, with `step`-byte input reads and `out`-byte buffers.
async fn guarded(input: &str, limit: usize, step: usize, out: usize) -> String {
    let source = Trickle {
        data: input.as_bytes().to_vec(),
        at: 0,
        step,
    };
    let mut guard = LineGuard::new(source, limit);
    let mut all = Vec::new();
    let mut buf = vec![0; out];
    loop {
        let n = guard.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        all.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(all).unwrap()
}

const MARKER_7: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"skillet/oversized","params":{"limit":40}}"#;

#[tokio::test]
async fn lines_within_the_limit_pass_unchanged_whatever_the_read_sizes() {
    let input =
        "{\"id\":1}\n\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\nno newline at the end";
    for (step, out) in [(1, 1), (3, 2), (5, 64), (4096, 4096), (7, 3)] {
        assert_eq!(
            guarded(input, 40, step, out).await,
            input,
            "step {step}, out {out}"
        );
    }
}

#[tokio::test]
async fn a_line_of_exactly_the_limit_passes() {
    let line = format!("{{\"id\":1,\"p\":\"{}\"}}", "x".repeat(40 - 15));
    assert_eq!(line.len(), 40);
    let input = format!("{line}\n");
    assert_eq!(guarded(&input, 40, 9, 5).await, input);
}

#[tokio::test]
async fn a_long_line_is_cut_marked_and_the_next_line_still_passes() {
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"pad":"{}"}}}}"#,
        "y".repeat(100)
    );
    let input = format!("{long}\n{{\"id\":8}}\n");
    let expected = format!("{}#\n{MARKER_7}\n{{\"id\":8}}\n", &long[..40]);
    for (step, out) in [(1, 1), (3, 7), (11, 2), (4096, 4096), (40, 40), (41, 39)] {
        assert_eq!(
            guarded(&input, 40, step, out).await,
            expected,
            "step {step}, out {out}"
        );
    }
}

#[tokio::test]
async fn two_long_lines_in_a_row_get_two_markers() {
    let long = |id: u32| {
        format!(
            r#"{{"id":{id},"method":"x","params":"{}"}}"#,
            "z".repeat(60)
        )
    };
    let input = format!("{}\n{}\n", long(7), long(9));
    let out = guarded(&input, 40, 13, 17).await;
    assert_eq!(out.matches("skillet/oversized").count(), 2, "{out}");
    assert!(out.contains(r#""id":9,"#), "{out}");
}

#[tokio::test]
async fn a_long_response_gets_no_marker_and_a_long_line_without_id_a_marker_without_id() {
    let response = format!(
        r#"{{"jsonrpc":"2.0","id":3,"result":{{"p":"{}"}}}}"#,
        "r".repeat(80)
    );
    let out = guarded(&format!("{response}\n"), 40, 4096, 4096).await;
    assert!(!out.contains("skillet/oversized"), "{out}");
    assert!(out.ends_with("#\n"), "{out}");

    let notification = format!(
        r#"{{"jsonrpc":"2.0","method":"n","params":"{}"}}"#,
        "n".repeat(80)
    );
    let out = guarded(&format!("{notification}\n"), 40, 4096, 4096).await;
    let marker = out.lines().last().unwrap();
    assert_eq!(
        marker,
        r#"{"jsonrpc":"2.0","method":"skillet/oversized","params":{"limit":40}}"#
    );
}

#[test]
fn the_head_reads_only_top_level_keys() {
    let head = |s: &str| head_of(s.as_bytes());
    assert_eq!(
        head(r#"{"jsonrpc":"2.0","id":12,"method":"m"#)
            .id
            .as_deref(),
        Some("12")
    );
    assert_eq!(
        head(r#"{ "id" : "a\"b" , "#).id.as_deref(),
        Some(r#""a\"b""#)
    );
    assert_eq!(head(r#"{"params":{"id":5},"method":"m""#).id, None);
    assert_eq!(head(r#"{"method":"m","p":"\"id\":5"#).id, None);
    assert_eq!(head(r#"{"id":{"x":1}}"#).id, None, "an object is not an id");
    assert_eq!(
        head(r#"{"id":12"#).id,
        None,
        "a number cut by the head is not known"
    );
    assert!(head(r#"{"jsonrpc":"2.0","id":1,"error":{"#).is_response);
    assert!(!head(r#"{"params":{"result":1}"#).is_response);
    let long_id = format!(r#"{{"id":"{}","#, "i".repeat(MAX_ID_BYTES));
    assert_eq!(head(&long_id).id, None, "an id too long to repeat");
}
