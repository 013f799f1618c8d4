//! Reading a plugin's stdout as lines of bounded length: a child must not be able to make the
//! engine buffer an endless line.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What one [`read_line`] produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineRead {
    /// A line is in the buffer (without its newline).
    Line,
    /// A line longer than the limit was read and dropped; it had this many bytes.
    TooLong(usize),
    /// End of stream (or a read error, which ends the stream just the same).
    Eof,
}

/// Reads the next line into `buf` (cleared first), keeping at most `max` bytes; a longer line is
/// consumed to its end and reported as [`LineRead::TooLong`]. A last line without a newline
/// counts as a line. Not cancel-safe: cancelling loses the partial line.
pub(super) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
    buf: &mut Vec<u8>,
) -> LineRead {
    buf.clear();
    let mut seen = 0usize;
    loop {
        let chunk = match reader.fill_buf().await {
            Ok(chunk) => chunk,
            Err(_) => &[][..],
        };
        if chunk.is_empty() {
            return match seen {
                0 => LineRead::Eof,
                n if n > max => LineRead::TooLong(n),
                _ => LineRead::Line,
            };
        }
        let (part, used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        seen += part.len();
        if seen <= max {
            buf.extend_from_slice(part);
        } else {
            buf.clear();
        }
        reader.consume(used);
        if done {
            if seen > max {
                return LineRead::TooLong(seen);
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return LineRead::Line;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<(LineRead, String)> {
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let read = read_line(&mut reader, max, &mut buf).await;
            out.push((read, String::from_utf8_lossy(&buf).into_owned()));
            if read == LineRead::Eof {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn long_lines_are_dropped_and_the_next_line_still_arrives() {
        let got = lines(b"ok\r\n0123456789abc\nnext\nlast", 8).await;
        assert_eq!(
            got,
            vec![
                (LineRead::Line, "ok".into()),
                (LineRead::TooLong(13), String::new()),
                (LineRead::Line, "next".into()),
                (LineRead::Line, "last".into()),
                (LineRead::Eof, String::new()),
            ]
        );
    }
}
