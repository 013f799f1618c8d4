//! The rig peer's copies of Skillet's built-in tools, as rig tools (`PortableTool`).
//!
//! Same names, descriptions, parameter schemas and results as `bench/peers/tools.py` (the
//! PydanticAI and Agents SDK peers' copies), so every system offers the model the same tools and
//! the model sees the same tool results. Not here: the agent and the output types (main.rs,
//! outputs.rs).

use std::sync::{Arc, Mutex};

use rig_core::tool::PortableTool;
use serde::Deserialize;
use serde_json::{Value, json};

/// The names of the tools the model called, in order, shared by every tool of one run.
pub type Called = Arc<Mutex<Vec<String>>>;

fn note(called: &Called, name: &str) {
    if let Ok(mut names) = called.lock() {
        names.push(name.to_owned());
    }
}

/// A tool call the tool refuses, with the reason the model is shown.
#[derive(Debug)]
pub struct ToolError(String);

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolError {}

/// `word_count`: the words, lines and characters of a text.
pub struct WordCount(pub Called);

#[derive(Deserialize)]
pub struct TextArgs {
    text: String,
}

impl PortableTool for WordCount {
    const NAME: &'static str = "word_count";
    type Args = TextArgs;
    type Output = Value;
    type Error = ToolError;

    fn description(&self) -> String {
        "Counts the words, lines and characters of a text.".to_owned()
    }

    fn parameters(&self) -> Value {
        json!({"additionalProperties": false, "properties": {"text": {"type": "string"}},
               "required": ["text"], "type": "object"})
    }

    async fn call(&self, args: TextArgs) -> Result<Value, ToolError> {
        note(&self.0, Self::NAME);
        let text = args.text;
        Ok(
            json!({"words": text.split_whitespace().count(), "lines": text.lines().count(),
                  "characters": text.chars().count()}),
        )
    }
}

/// `calculator`: an arithmetic expression's value.
pub struct Calculator(pub Called);

#[derive(Deserialize)]
pub struct ExpressionArgs {
    expression: String,
}

impl PortableTool for Calculator {
    const NAME: &'static str = "calculator";
    type Args = ExpressionArgs;
    type Output = Value;
    type Error = ToolError;

    fn description(&self) -> String {
        "Evaluates an arithmetic expression (+ - * / % ^, parentheses) and returns the number."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({"additionalProperties": false,
               "properties": {"expression": {"type": "string"}},
               "required": ["expression"], "type": "object"})
    }

    async fn call(&self, args: ExpressionArgs) -> Result<Value, ToolError> {
        note(&self.0, Self::NAME);
        let expression = args.expression;
        let value = evaluate(&expression)
            .map_err(|e| ToolError(format!("cannot evaluate {expression:?}: {e}")))?;
        // Integral results are integers, as Skillet's calculator answers them.
        let result = if value.fract() == 0.0 && value.abs() < 2f64.powi(53) {
            json!(value as i64)
        } else {
            json!(value)
        };
        Ok(json!({"expression": expression, "result": result}))
    }
}

/// The value of `text`: numbers, `+ - * / % ^` (`^` a power, binding tightest, to the right),
/// unary signs and parentheses.
pub fn evaluate(text: &str) -> Result<f64, String> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        at: 0,
    };
    let value = parser.sum()?;
    parser.skip_spaces();
    if parser.at != parser.bytes.len() {
        return Err(format!(
            "unexpected {:?} at byte {}",
            parser.bytes[parser.at] as char, parser.at
        ));
    }
    if !value.is_finite() {
        return Err("the result is not a finite number".to_owned());
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip_spaces(&mut self) {
        while self.bytes.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    fn next_is(&mut self, wanted: u8) -> bool {
        self.skip_spaces();
        if self.bytes.get(self.at) == Some(&wanted) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        loop {
            if self.next_is(b'+') {
                value += self.product()?;
            } else if self.next_is(b'-') {
                value -= self.product()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.power()?;
        loop {
            if self.next_is(b'*') {
                value *= self.power()?;
            } else if self.next_is(b'/') {
                let divisor = self.power()?;
                if divisor == 0.0 {
                    return Err("division by zero".to_owned());
                }
                value /= divisor;
            } else if self.next_is(b'%') {
                let divisor = self.power()?;
                if divisor == 0.0 {
                    return Err("modulo by zero".to_owned());
                }
                value %= divisor;
            } else {
                return Ok(value);
            }
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.next_is(b'^') {
            return Ok(base.powf(self.power()?));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.next_is(b'-') {
            return Ok(-self.unary()?);
        }
        if self.next_is(b'+') {
            return self.unary();
        }
        if self.next_is(b'(') {
            let value = self.sum()?;
            if !self.next_is(b')') {
                return Err("a `(` is not closed".to_owned());
            }
            return Ok(value);
        }
        self.skip_spaces();
        let start = self.at;
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
        {
            self.at += 1;
        }
        std::str::from_utf8(&self.bytes[start..self.at])
            .ok()
            .and_then(|number| number.parse().ok())
            .ok_or_else(|| "only numbers, + - * / % ^ and parentheses are allowed".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn the_calculator_divides_and_keeps_precedence() {
        assert_eq!(evaluate("4 / 8"), Ok(0.5));
        assert_eq!(evaluate("2 + 3 * 2 ^ 2"), Ok(14.0));
        assert_eq!(evaluate("-(1 + 2) % 2"), Ok(-1.0));
        assert!(evaluate("1 / 0").is_err());
        assert!(evaluate("2 +").is_err());
        assert!(evaluate("import os").is_err());
    }
}
