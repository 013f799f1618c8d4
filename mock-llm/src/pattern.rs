//! A small generator of strings matching a regular expression, for JSON Schema `pattern`s.
//!
//! It understands the subset schemas use in practice (literals, classes, `\d \w \s`, groups,
//! alternation, quantifiers, anchors) and gives up (returns `None`) on the rest (back-references,
//! look-around, Unicode properties). The caller verifies every candidate with the `regex` crate,
//! so a wrong guess costs a fallback, never an invalid instance.

/// A parsed pattern node.
#[derive(Debug, Clone)]
enum Node {
    /// One of these characters (the first is used).
    Char(char),
    /// A character class: any char for which the set test holds.
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
    /// Alternatives (the first is used).
    Alt(Vec<Vec<Node>>),
    /// A quantified node.
    Repeat {
        node: Box<Node>,
        min: usize,
        max: Option<usize>,
    },
}

/// Generates a string for `pattern`, repeating open-ended quantifiers about `reps` times.
pub(crate) fn generate(pattern: &str, reps: usize) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut pos = 0;
    let seq = parse_alt(&chars, &mut pos, 0)?;
    if pos != chars.len() {
        return None;
    }
    let mut out = String::new();
    emit(&seq, reps, &mut out)?;
    Some(out)
}

fn parse_alt(c: &[char], pos: &mut usize, depth: usize) -> Option<Node> {
    if depth > 32 {
        return None;
    }
    let mut branches = vec![Vec::new()];
    while *pos < c.len() {
        match c[*pos] {
            '|' => {
                *pos += 1;
                branches.push(Vec::new());
            }
            ')' => break,
            _ => {
                let atom = parse_atom(c, pos, depth)?;
                let atom = parse_quantifier(c, pos, atom)?;
                if let Some(b) = branches.last_mut() {
                    b.push(atom);
                }
            }
        }
    }
    Some(Node::Alt(branches))
}

fn parse_atom(c: &[char], pos: &mut usize, depth: usize) -> Option<Node> {
    let ch = c[*pos];
    *pos += 1;
    Some(match ch {
        '^' | '$' => Node::Alt(vec![Vec::new()]),
        '.' => Node::Char('a'),
        '(' => {
            if c.get(*pos) == Some(&'?') {
                // Only non-capturing groups; look-around and named groups give up.
                if c.get(*pos + 1) == Some(&':') {
                    *pos += 2;
                } else {
                    return None;
                }
            }
            let inner = parse_alt(c, pos, depth + 1)?;
            if c.get(*pos) != Some(&')') {
                return None;
            }
            *pos += 1;
            inner
        }
        '[' => parse_class(c, pos)?,
        '\\' => parse_escape(c, pos)?,
        '*' | '+' | '?' | '{' | ')' => return None,
        other => Node::Char(other),
    })
}

fn class_of_escape(e: char) -> Option<(Vec<(char, char)>, bool)> {
    let digits = vec![('0', '9')];
    let word = vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
    let space = vec![(' ', ' '), ('\t', '\t'), ('\n', '\n')];
    Some(match e {
        'd' => (digits, false),
        'D' => (digits, true),
        'w' => (word, false),
        'W' => (word, true),
        's' => (space, false),
        'S' => (space, true),
        _ => return None,
    })
}

fn parse_escape(c: &[char], pos: &mut usize) -> Option<Node> {
    let e = *c.get(*pos)?;
    *pos += 1;
    if let Some((ranges, negated)) = class_of_escape(e) {
        return Some(Node::Class { ranges, negated });
    }
    match e {
        'n' => Some(Node::Char('\n')),
        't' => Some(Node::Char('\t')),
        'b' | 'B' => Some(Node::Alt(vec![Vec::new()])),
        e if e.is_ascii_alphanumeric() => None,
        e => Some(Node::Char(e)),
    }
}

fn parse_class(c: &[char], pos: &mut usize) -> Option<Node> {
    let mut negated = false;
    if c.get(*pos) == Some(&'^') {
        negated = true;
        *pos += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let ch = *c.get(*pos)?;
        *pos += 1;
        if ch == ']' && !first {
            break;
        }
        first = false;
        let lo = if ch == '\\' {
            let e = *c.get(*pos)?;
            *pos += 1;
            if let Some((rs, neg)) = class_of_escape(e) {
                if neg {
                    return None;
                }
                ranges.extend(rs);
                continue;
            }
            match e {
                'n' => '\n',
                't' => '\t',
                e if e.is_ascii_alphanumeric() => return None,
                e => e,
            }
        } else {
            ch
        };
        if c.get(*pos) == Some(&'-') && c.get(*pos + 1).is_some_and(|n| *n != ']') {
            let hi = c[*pos + 1];
            if hi == '\\' {
                return None;
            }
            *pos += 2;
            ranges.push((lo, hi));
        } else {
            ranges.push((lo, lo));
        }
    }
    Some(Node::Class { ranges, negated })
}

fn parse_quantifier(c: &[char], pos: &mut usize, atom: Node) -> Option<Node> {
    let (min, max) = match c.get(*pos) {
        Some('*') => (0, None),
        Some('+') => (1, None),
        Some('?') => (0, Some(1)),
        Some('{') => {
            let close = c[*pos..].iter().position(|&x| x == '}')? + *pos;
            let body: String = c[*pos + 1..close].iter().collect();
            let (lo, hi) = match body.split_once(',') {
                None => {
                    let n = body.trim().parse().ok()?;
                    (n, Some(n))
                }
                Some((lo, hi)) => {
                    let lo = lo.trim().parse().ok()?;
                    let hi = if hi.trim().is_empty() {
                        None
                    } else {
                        Some(hi.trim().parse().ok()?)
                    };
                    (lo, hi)
                }
            };
            *pos = close;
            (lo, hi)
        }
        _ => return Some(atom),
    };
    *pos += 1;
    // Lazy and possessive suffixes change nothing for generation.
    if matches!(c.get(*pos), Some('?') | Some('+')) {
        *pos += 1;
    }
    Some(Node::Repeat {
        node: Box::new(atom),
        min,
        max,
    })
}

/// Longest string generated; patterns like `(a{9999}){9999}` give up instead.
const MAX_LEN: usize = 10_000;

fn emit(node: &Node, reps: usize, out: &mut String) -> Option<()> {
    if out.len() > MAX_LEN {
        return None;
    }
    match node {
        Node::Char(ch) => out.push(*ch),
        Node::Class {
            ranges,
            negated: false,
        } => out.push(ranges.first()?.0),
        Node::Class {
            ranges,
            negated: true,
        } => {
            let pick = ['a', 'x', 'A', '0', '_', '-', ' ', '~']
                .into_iter()
                .find(|ch| !ranges.iter().any(|(lo, hi)| lo <= ch && ch <= hi))?;
            out.push(pick);
        }
        Node::Alt(branches) => {
            for n in branches.first()? {
                emit(n, reps, out)?;
            }
        }
        Node::Repeat { node, min, max } => {
            let count = reps.max(*min).min(max.unwrap_or(usize::MAX)).min(10_000);
            for _ in 0..count {
                emit(node, reps, out)?;
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pattern: &str) {
        let re = regex::Regex::new(pattern).unwrap();
        let s = generate(pattern, 1).unwrap_or_else(|| panic!("no string for {pattern}"));
        assert!(re.is_match(&s), "{s:?} does not match {pattern}");
    }

    #[test]
    fn generated_strings_match_common_schema_patterns() {
        for p in [
            r"^[A-Z]{3}-\d{4}$",
            r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$",
            r"^(?:red|green|blue)$",
            r"^\+?[0-9]{7,15}$",
            r"^[^@\s]+$",
            r"^v\d+(\.\d+){2}$",
            r"abc",
        ] {
            check(p);
        }
    }

    #[test]
    fn unsupported_syntax_gives_up() {
        assert_eq!(generate(r"(?=x)x", 1), None);
        assert_eq!(generate(r"(a)\1", 1), None);
        assert_eq!(generate(r"\p{L}+", 1), None);
    }
}
