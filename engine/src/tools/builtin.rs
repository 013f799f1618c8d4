//! Small deterministic tools the `skillet` binary registers so the bundled skills run out of the
//! box: `calculator` (arithmetic on an expression) and `word_count`.
//!
//! They are ordinary [`Tool`]s built with [`inline_tool_fn`] (pure
//! computation: they run on the call's own task), and double as examples of writing one.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Tool, ToolError, ToolOutput, inline_tool_fn};

/// All built-in tools.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![calculator(), word_count()]
}

/// `calculator`: evaluates `+ - * / % ^`, parentheses, unary minus and decimal numbers.
pub fn calculator() -> Arc<dyn Tool> {
    inline_tool_fn(
        "calculator",
        "Evaluates an arithmetic expression (+ - * / % ^, parentheses) and returns the number.",
        json!({
            "type": "object",
            // The pattern says what the evaluator reads, so a grammar-constrained server can
            // only produce arithmetic here.
            "properties": {"expression": {
                "type": "string",
                "minLength": 1,
                "maxLength": 4096,
                "pattern": "^[0-9+*/%^(). -]+$"
            }},
            "required": ["expression"],
            "additionalProperties": false
        }),
        |args, _ctx| async move {
            let expression = args["expression"].as_str().unwrap_or_default();
            let value = evaluate(expression).map_err(|e| ToolError::Failed(e.to_string()))?;
            Ok(ToolOutput::json(
                json!({"expression": expression, "result": value}),
            ))
        },
    )
}

/// `word_count`: counts the words, lines and characters of a text.
pub(crate) fn word_count() -> Arc<dyn Tool> {
    inline_tool_fn(
        "word_count",
        "Counts the words, lines and characters of a text.",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        }),
        |args, _ctx| async move {
            let text = args["text"].as_str().unwrap_or_default();
            Ok(ToolOutput::json(json!({
                "words": text.split_whitespace().count(),
                "lines": text.lines().count(),
                "characters": text.chars().count(),
            })))
        },
    )
}

/// Why an expression cannot be evaluated; the text is the tool error the model reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ExpressionError {
    /// A character the grammar does not expect there (positions count characters, spaces
    /// left out).
    #[error("unexpected {found:?} at position {position}")]
    Unexpected { found: char, position: usize },
    /// An opening parenthesis never closed.
    #[error("expected ')' at position {0}")]
    Unclosed(usize),
    /// Digits and dots that make no number (`1..2`).
    #[error("bad number {0:?}")]
    BadNumber(String),
    /// The expression stops where an operand is expected.
    #[error("unexpected end of expression")]
    UnexpectedEnd,
    /// Parentheses or signs deeper than the parser follows.
    #[error("expression nested too deeply")]
    TooDeep,
    /// Infinity or NaN.
    #[error("the result is not a finite number (division by zero?)")]
    NotFinite,
}

/// Evaluates an arithmetic expression; the result is a JSON number (integral results are
/// integers).
pub(crate) fn evaluate(expression: &str) -> Result<Value, ExpressionError> {
    let mut parser = Parser {
        chars: expression.chars().filter(|c| !c.is_whitespace()).collect(),
        pos: 0,
        depth: 0,
    };
    let value = parser.sum()?;
    if parser.pos != parser.chars.len() {
        return Err(ExpressionError::Unexpected {
            found: parser.chars[parser.pos],
            position: parser.pos,
        });
    }
    if !value.is_finite() {
        return Err(ExpressionError::NotFinite);
    }
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        Ok(json!(value as i64))
    } else {
        Ok(json!((value * 1e9).round() / 1e9))
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 64;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn sum(&mut self) -> Result<f64, ExpressionError> {
        let mut acc = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let rhs = self.product()?;
            acc = if op == '+' { acc + rhs } else { acc - rhs };
        }
        Ok(acc)
    }

    fn product(&mut self) -> Result<f64, ExpressionError> {
        let mut acc = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.pos += 1;
            let rhs = self.power()?;
            acc = match op {
                '*' => acc * rhs,
                '/' => acc / rhs,
                _ => acc % rhs,
            };
        }
        Ok(acc)
    }

    fn power(&mut self) -> Result<f64, ExpressionError> {
        let base = self.unary()?;
        if self.peek() == Some('^') {
            self.pos += 1;
            let exponent = self.power()?;
            return Ok(base.powf(exponent));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, ExpressionError> {
        match self.peek() {
            Some('-') => {
                self.pos += 1;
                self.nested(|p| p.unary()).map(|v| -v)
            }
            Some('+') => {
                self.pos += 1;
                self.nested(|p| p.unary())
            }
            _ => self.atom(),
        }
    }

    fn nested(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<f64, ExpressionError>,
    ) -> Result<f64, ExpressionError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExpressionError::TooDeep);
        }
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn atom(&mut self) -> Result<f64, ExpressionError> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let v = self.nested(|p| p.sum())?;
                if self.peek() != Some(')') {
                    return Err(ExpressionError::Unclosed(self.pos));
                }
                self.pos += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.pos;
                while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '.') {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                text.parse::<f64>()
                    .map_err(|_| ExpressionError::BadNumber(text))
            }
            Some(found) => Err(ExpressionError::Unexpected {
                found,
                position: self.pos,
            }),
            None => Err(ExpressionError::UnexpectedEnd),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_follows_precedence() {
        assert_eq!(evaluate("1 + 2 * 3").unwrap(), json!(7));
        assert_eq!(evaluate("(1 + 2) * 3").unwrap(), json!(9));
        assert_eq!(evaluate("2 ^ 3 ^ 2").unwrap(), json!(512));
        assert_eq!(evaluate("-4 + 10 / 4").unwrap(), json!(-1.5));
        assert_eq!(evaluate("12.5 + 7.25 + 80").unwrap(), json!(99.75));
    }

    #[test]
    fn bad_expressions_are_errors_not_panics() {
        for bad in ["", "1 +", "(1", "1 / 0", "abc", "1..2", &"(".repeat(1000)] {
            assert!(evaluate(bad).is_err(), "{bad}");
        }
    }
}
