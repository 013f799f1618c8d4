//! JSON strings: finding the bytes to escape a 64-bit word at a time, and escaping them
//! exactly as `serde_json` does.
//!
//! Not here: the serializer that calls it (`super`).

/// Bytes with the high bit set in every lane.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// `0x7f` in every lane.
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
/// `0x01` in every lane.
const ONES: u64 = 0x0101_0101_0101_0101;

/// The high bit of every lane of `v` that is zero, and of no other: each lane's low seven bits
/// plus `0x7f` cannot carry into the next lane, so the test is exact lane by lane.
#[inline]
fn zero_lanes(v: u64) -> u64 {
    !(((v & LOW7) + LOW7) | v) & HIGH
}

/// The lanes of `word` (8 bytes, little-endian) that need escaping — below 0x20, `"` or `\` —
/// as their high bits, exactly (no lane is flagged because of its neighbour).
#[inline]
fn escape_mask(word: u64) -> u64 {
    zero_lanes(word & (ONES * 0xe0))
        | zero_lanes(word ^ (ONES * u64::from(b'"')))
        | zero_lanes(word ^ (ONES * u64::from(b'\\')))
}

#[inline]
fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The offset of the first byte at or after `from` that needs escaping: eight bytes at a time,
/// the last few as the (overlapping) last word of the text, a text under eight bytes byte by
/// byte.
#[inline]
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let len = bytes.len();
    let word_at = |at: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(word)
    };
    let mut at = from;
    while at + 8 <= len {
        let mask = escape_mask(word_at(at));
        if mask != 0 {
            return Some(at + (mask.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    if at >= len {
        return None;
    }
    if len < 8 {
        return (at..len).find(|&i| needs_escape(bytes[i]));
    }
    // The last word overlaps bytes already checked: its lanes before `at` are masked off.
    let last = len - 8;
    let mask = escape_mask(word_at(last)) & (u64::MAX << (8 * (at - last)));
    (mask != 0).then(|| last + (mask.trailing_zeros() / 8) as usize)
}

/// Appends `text` as a JSON string, escaped exactly as `serde_json` escapes it: `\"`, `\\`, the
/// short forms `\b \t \n \f \r`, and `\u00xx` (lowercase hex) for the other control characters;
/// everything else, non-ASCII included, as it is, copied in runs.
#[inline]
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    match next_escape(bytes, 0) {
        None => out.extend_from_slice(bytes),
        Some(first) => write_escaped(out, bytes, first),
    }
    out.push(b'"');
}

/// The string's bytes from the first one to escape (`first`) on, escaped.
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8], first: usize) {
    let mut copied = 0;
    let mut next = Some(first);
    while let Some(at) = next {
        out.extend_from_slice(&bytes[copied..at]);
        let byte = bytes[at];
        let short = match byte {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            b'\t' => b't',
            b'\n' => b'n',
            0x0c => b'f',
            b'\r' => b'r',
            _ => 0,
        };
        out.push(b'\\');
        if short != 0 {
            out.push(short);
        } else {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        }
        copied = at + 1;
        next = next_escape(bytes, copied);
    }
    out.extend_from_slice(&bytes[copied..]);
}
