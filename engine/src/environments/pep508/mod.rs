//! One Python requirement, parsed as a PEP 508 requirement (name, extras, version specifiers,
//! environment marker) and written back in one normal form — the only form that reaches the
//! requirements file uv reads.
//!
//! Why a parser rather than a check of the string: a requirements file is a line format with
//! its own options (`-r`, `-e`, `--find-links`, `--index-url`), comments, line continuations and
//! `${VAR}` expansion. A string that is checked but written as it came can carry any of them
//! (a line break, and the next line is an option). Parsed, nothing of the input reaches the file
//! but names, operators, versions and marker values from closed alphabets.
//!
//! Narrower than PEP 508 on purpose: direct references (`name @ URL`), URLs and paths are
//! refused (packages come from the host's index only), and a marker's quoted values may hold
//! only letters, digits, spaces and `._-*+!~=<>,:()`.
//!
//! Not here: where requirements are declared (`requirements`), building (`build`).

use std::fmt;

/// Why a requirement string is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequirementError {
    /// A line break: one entry must be one requirement.
    LineBreak,
    /// Another control character.
    Control,
    /// An option (`-r`, `-e`, `--find-links`, ...).
    Option,
    /// A URL (`https://...`, `git+...`).
    Url,
    /// A local path.
    Path,
    /// A direct reference (`name @ ...`).
    DirectReference,
    /// Not a PEP 508 requirement: what was expected at which character.
    Syntax {
        /// The character offset.
        at: usize,
        /// What was expected there.
        expected: &'static str,
    },
}

impl fmt::Display for RequirementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequirementError::LineBreak => f.write_str(
                "a line break in a requirement is not allowed (one requirement per entry)",
            ),
            RequirementError::Control => f.write_str("a control character is not allowed"),
            RequirementError::Option => f.write_str(
                "options are not supported (the host chooses the package index and the build)",
            ),
            RequirementError::Url | RequirementError::DirectReference => f.write_str(
                "direct references and URLs are not supported (packages come from the host's \
                 index)",
            ),
            RequirementError::Path => f.write_str("local paths are not supported"),
            RequirementError::Syntax { at, expected } => write!(
                f,
                "not a PEP 508 requirement (`name[extras] specifiers; marker`): expected \
                 {expected} at character {at}"
            ),
        }
    }
}

impl std::error::Error for RequirementError {}

/// A version comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// `===`
    Arbitrary,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
    /// `<=`
    LessEqual,
    /// `>=`
    GreaterEqual,
    /// `~=`
    Compatible,
    /// `<`
    Less,
    /// `>`
    Greater,
}

/// Longest first, so `===` is not read as `==` and `=`.
const OPS: [(&str, Op); 8] = [
    ("===", Op::Arbitrary),
    ("==", Op::Equal),
    ("!=", Op::NotEqual),
    ("<=", Op::LessEqual),
    (">=", Op::GreaterEqual),
    ("~=", Op::Compatible),
    ("<", Op::Less),
    (">", Op::Greater),
];

impl Op {
    fn as_str(self) -> &'static str {
        OPS.iter()
            .find(|(_, op)| *op == self)
            .map_or("==", |(s, _)| s)
    }
}

/// `>=5`, `==0.11.4`, `!=1.*`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Specifier {
    /// The operator.
    pub op: Op,
    /// The version (`[A-Za-z0-9._*+!-]`).
    pub version: String,
}

/// An operator of a marker comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerOp {
    /// A version comparison.
    Version(Op),
    /// `in`
    In,
    /// `not in`
    NotIn,
}

/// One side of a marker comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkerValue {
    /// An environment variable (`python_version`, `sys_platform`, ...).
    Variable(&'static str),
    /// A quoted value.
    Literal(String),
}

/// An environment marker (`python_version < "3.13" and sys_platform == "linux"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// `left op right`.
    Compare(MarkerValue, MarkerOp, MarkerValue),
    /// Every one holds (two or more).
    And(Vec<Marker>),
    /// One of them holds (two or more).
    Or(Vec<Marker>),
}

/// The environment variables a marker may name (PEP 508).
const MARKER_VARIABLES: [&str; 12] = [
    "python_full_version",
    "python_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
];

/// A parsed requirement. Its `Display` is the normal form: the name and extras normalized
/// (PEP 503: lower case, runs of `-_.` as one `-`), extras and specifiers sorted, one space
/// around marker words, values in double quotes. Parsing the normal form gives the same value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The normalized project name.
    pub name: String,
    /// The normalized extras, sorted, without duplicates.
    pub extras: Vec<String>,
    /// The version specifiers, sorted, without duplicates.
    pub specifiers: Vec<Specifier>,
    /// The environment marker.
    pub marker: Option<Marker>,
}

impl std::str::FromStr for Requirement {
    type Err = RequirementError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse(text)
    }
}

/// Parses one requirement (surrounding spaces and tabs are ignored).
pub fn parse(text: &str) -> Result<Requirement, RequirementError> {
    if text.contains(['\n', '\r']) {
        return Err(RequirementError::LineBreak);
    }
    if text.chars().any(|c| c.is_control() && c != '\t') {
        return Err(RequirementError::Control);
    }
    let text = text.trim_matches([' ', '\t']);
    if text.starts_with('-') {
        return Err(RequirementError::Option);
    }
    if text.contains("://") {
        return Err(RequirementError::Url);
    }
    if text.starts_with(['.', '/', '~']) || text.contains(['/', '\\']) {
        return Err(RequirementError::Path);
    }
    if text.contains('@') {
        return Err(RequirementError::DirectReference);
    }
    let mut p = Parser { text, pos: 0 };
    let requirement = p.requirement()?;
    p.space();
    if p.pos != text.len() {
        return Err(p.expected("the end of the requirement"));
    }
    Ok(requirement)
}

/// PEP 503's normal form of a name.
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut separator = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            separator = true;
        } else {
            if separator {
                out.push('-');
                separator = false;
            }
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches([' ', '\t']).len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.space();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expected(&self, expected: &'static str) -> RequirementError {
        RequirementError::Syntax {
            at: self.text[..self.pos].chars().count(),
            expected,
        }
    }

    /// `[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?`
    fn identifier(&mut self, what: &'static str) -> Result<&str, RequirementError> {
        self.space();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        let ends_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
        if !ends_ok(word.chars().next()) || !ends_ok(word.chars().last()) {
            return Err(self.expected(what));
        }
        self.pos += len;
        Ok(&self.text[self.pos - len..self.pos])
    }

    fn requirement(&mut self) -> Result<Requirement, RequirementError> {
        let name = normalize(self.identifier("a package name")?);
        let mut extras = Vec::new();
        if self.eat("[") && !self.eat("]") {
            loop {
                extras.push(normalize(self.identifier("an extra's name")?));
                if self.eat("]") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.expected("`,` or `]`"));
                }
            }
        }
        extras.sort();
        extras.dedup();
        let mut specifiers = Vec::new();
        self.space();
        if self.eat("(") {
            self.specifiers(&mut specifiers)?;
            if !self.eat(")") {
                return Err(self.expected("`)`"));
            }
        } else if self.rest().starts_with(['=', '!', '<', '>', '~']) {
            self.specifiers(&mut specifiers)?;
        }
        specifiers.sort();
        specifiers.dedup();
        let marker = if self.eat(";") {
            Some(self.marker_or()?)
        } else {
            None
        };
        Ok(Requirement {
            name,
            extras,
            specifiers,
            marker,
        })
    }

    fn op(&mut self) -> Option<Op> {
        self.space();
        let (token, op) = OPS.iter().find(|(t, _)| self.rest().starts_with(t))?;
        self.pos += token.len();
        Some(*op)
    }

    fn specifiers(&mut self, into: &mut Vec<Specifier>) -> Result<(), RequirementError> {
        loop {
            let op = self
                .op()
                .ok_or_else(|| self.expected("a version operator (`==`, `>=`, ...)"))?;
            self.space();
            let rest = self.rest();
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "._*+!-".contains(c)))
                .unwrap_or(rest.len());
            if len == 0 {
                return Err(self.expected("a version"));
            }
            into.push(Specifier {
                op,
                version: rest[..len].to_owned(),
            });
            self.pos += len;
            if !self.eat(",") {
                return Ok(());
            }
        }
    }

    fn keyword(&mut self, word: &str) -> bool {
        self.space();
        let Some(after) = self.rest().strip_prefix(word) else {
            return false;
        };
        if after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return false;
        }
        self.pos += word.len();
        true
    }

    fn marker_or(&mut self) -> Result<Marker, RequirementError> {
        let mut terms = vec![self.marker_and()?];
        while self.keyword("or") {
            terms.push(self.marker_and()?);
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            Marker::Or(terms)
        })
    }

    fn marker_and(&mut self) -> Result<Marker, RequirementError> {
        let mut terms = vec![self.marker_expr()?];
        while self.keyword("and") {
            terms.push(self.marker_expr()?);
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            Marker::And(terms)
        })
    }

    fn marker_expr(&mut self) -> Result<Marker, RequirementError> {
        if self.eat("(") {
            let inner = self.marker_or()?;
            if !self.eat(")") {
                return Err(self.expected("`)`"));
            }
            return Ok(inner);
        }
        let left = self.marker_value()?;
        let op = if self.keyword("in") {
            MarkerOp::In
        } else if self.keyword("not") {
            if !self.keyword("in") {
                return Err(self.expected("`in` after `not`"));
            }
            MarkerOp::NotIn
        } else {
            MarkerOp::Version(
                self.op()
                    .ok_or_else(|| self.expected("a marker operator"))?,
            )
        };
        let right = self.marker_value()?;
        Ok(Marker::Compare(left, op, right))
    }

    fn marker_value(&mut self) -> Result<MarkerValue, RequirementError> {
        self.space();
        if let Some(quote) = self.peek().filter(|c| matches!(c, '"' | '\'')) {
            let body = &self.rest()[1..];
            let len = body
                .find(|c: char| !(c.is_ascii_alphanumeric() || " ._-*+!~=<>,:()".contains(c)))
                .unwrap_or(body.len());
            if !body[len..].starts_with(quote) {
                self.pos += 1 + len;
                return Err(self.expected(
                    "the closing quote (a marker value holds letters, digits, spaces and \
                     `._-*+!~=<>,:()`)",
                ));
            }
            let value = body[..len].to_owned();
            self.pos += len + 2;
            return Ok(MarkerValue::Literal(value));
        }
        let rest = self.rest();
        let variable = MARKER_VARIABLES.iter().find(|v| {
            rest.starts_with(**v)
                && !rest[v.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        match variable {
            Some(v) => {
                self.pos += v.len();
                Ok(MarkerValue::Variable(v))
            }
            None => Err(self.expected("a marker variable or a quoted value")),
        }
    }
}

impl fmt::Display for Specifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.op.as_str(), self.version)
    }
}

impl fmt::Display for MarkerValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MarkerValue::Variable(v) => f.write_str(v),
            // The alphabet of a value has no quote.
            MarkerValue::Literal(s) => write!(f, "\"{s}\""),
        }
    }
}

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joined = |f: &mut fmt::Formatter<'_>, terms: &[Marker], word: &str| {
            for (i, term) in terms.iter().enumerate() {
                if i > 0 {
                    write!(f, " {word} ")?;
                }
                match term {
                    Marker::Compare(..) => write!(f, "{term}")?,
                    _ => write!(f, "({term})")?,
                }
            }
            Ok(())
        };
        match self {
            Marker::Compare(left, op, right) => {
                let op = match op {
                    MarkerOp::Version(op) => op.as_str(),
                    MarkerOp::In => "in",
                    MarkerOp::NotIn => "not in",
                };
                write!(f, "{left} {op} {right}")
            }
            Marker::And(terms) => joined(f, terms, "and"),
            Marker::Or(terms) => joined(f, terms, "or"),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.extras.is_empty() {
            write!(f, "[{}]", self.extras.join(","))?;
        }
        for (i, specifier) in self.specifiers.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{specifier}")?;
        }
        if let Some(marker) = &self.marker {
            write!(f, "; {marker}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
