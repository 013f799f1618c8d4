//! Strict instruction templates: a SKILL.md body compiled once at load, rendered per call.
//!
//! The contract (seed 003, "Template grammar"):
//! - `{{ name }}` and dotted `{{ user.name }}` placeholders, whitespace allowed inside the braces;
//!   a numeric segment indexes an array (`{{ items.0 }}`).
//! - `\{{` is a literal `{{` (so `\{{ name }}` renders as the text `{{ name }}`).
//! - A missing variable is a [`RenderError`] naming the dotted path and the placeholder's
//!   line/column — never an empty string.
//! - Values render without HTML escaping: strings as they are, numbers and booleans in their JSON
//!   spelling, `null` as `null`, objects and arrays as compact JSON.
//! - Helpers (`{{ len x }}`), blocks (`{{#each}}`), partials (`{{> p}}`), triple-stash
//!   (`{{{ x }}}`, `{{& x}}`), comments (`{{! x }}`), decorators, raw blocks, whitespace control
//!   (`{{~ x ~}}`) and handlebars paths (`this`, `../x`, `@root`, `a/b`, `[a b]`) are rejected
//!   **at compile time** with their line/column ([`TemplateError`]).
//!
//! Parsing is done by the `handlebars` crate (its grammar, escapes and positions); the parsed
//! element list is then walked and everything but raw text and plain path expressions is
//! rejected. Rendering does *not* go through handlebars' renderer: its `null` → `""`,
//! `[object]` output and helper-shadowing are exactly what the contract forbids, so a compiled
//! [`Template`] is a flat list of text and placeholder segments rendered directly. That makes a
//! render one pass over the segments with no locks and no allocation besides the output
//! (`Template: Send + Sync`, share it in an `Arc`).
//!
//! [`TemplateCache`] (`cache`) compiles each distinct source once during a load of many skills.
//!
//! Not here: deciding *whether* a body is a template (that is the manifest's `a2e-template`
//! key, see `skill`), and argument validation (that is `schema`).

use std::fmt;
use std::sync::LazyLock;

use handlebars::template::{Parameter, Template as HbsTemplate, TemplateElement};
use serde_json::Value;

mod cache;
#[cfg(test)]
mod tests;

pub use cache::TemplateCache;

/// A compiled instruction template: text and placeholders, immutable and cheap to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    segments: Vec<Segment>,
    literal_len: usize,
    literal: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Text(String),
    Placeholder(Placeholder),
}

/// One `{{ a.b }}` in a template: its path and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// The dotted path as written, without whitespace (`user.name`).
    pub path: String,
    segments: Vec<String>,
    /// 1-based line of the opening `{{`.
    pub line: usize,
    /// 1-based column (in characters) of the opening `{{`.
    pub column: usize,
}

/// Why a template source was rejected at compile time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {reason}")]
pub struct TemplateError {
    /// 1-based line of the offending construct (of the error, for syntax errors).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong, and what is allowed instead.
    pub reason: String,
}

/// Why a render failed: a placeholder's path does not resolve in the arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("missing variable `{path}` at line {line}, column {column}: {reason}")]
pub struct RenderError {
    /// The placeholder's dotted path (`user.name`).
    pub path: String,
    /// 1-based line of the placeholder.
    pub line: usize,
    /// 1-based column of the placeholder, in characters.
    pub column: usize,
    /// Which part of the path did not resolve.
    pub reason: String,
}

const ALLOWED: &str = "only `{{ name }}` and `{{ a.b }}` placeholders are allowed in a skill \
                       template (write `\\{{` for a literal `{{`)";

/// `{{`, optional whitespace, a dotted path, optional whitespace, `}}` — nothing else.
static PLACEHOLDER: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}")
        .expect("placeholder regex is valid")
});

impl Template {
    /// Compiles a template source, rejecting everything but text and `{{ a.b }}` placeholders.
    pub fn compile(source: &str) -> Result<Template, TemplateError> {
        if !source.contains("{{") {
            // No `{{`, so no expression and no escape: the parse would be one raw string.
            let mut segments = Vec::new();
            push_text(&mut segments, source);
            return Ok(Template::from_segments(segments, false));
        }
        let parsed = HbsTemplate::compile(source).map_err(|e| {
            let (line, column) = e.pos().unwrap_or((1, 1));
            TemplateError {
                line,
                column,
                reason: syntax_reason(e.reason().to_string()),
            }
        })?;
        let lines = LineIndex::new(source);
        let mut segments = Vec::with_capacity(parsed.elements.len());
        for (i, element) in parsed.elements.iter().enumerate() {
            let (line, column) = parsed.mapping.get(i).map(|m| (m.0, m.1)).unwrap_or((1, 1));
            let reject = |what: String| TemplateError {
                line,
                column,
                reason: format!("{what} is not allowed: {ALLOWED}"),
            };
            match element {
                TemplateElement::RawString(text) => push_text(&mut segments, text),
                TemplateElement::Expression(helper) => {
                    if !helper.params.is_empty() || !helper.hash.is_empty() {
                        return Err(reject(format!(
                            "helper call `{}`",
                            parameter_name(&helper.name)
                        )));
                    }
                    let text = lines.tail(source, line, column);
                    let caps = PLACEHOLDER.captures(text).filter(|c| {
                        // `this` is handlebars' context keyword, not an argument name.
                        c[1].split('.').next() != Some("this")
                    });
                    let Some(caps) = caps else {
                        let shown: String =
                            text.chars().take_while(|c| *c != '\n').take(40).collect();
                        return Err(reject(format!("expression `{shown}`")));
                    };
                    let path = caps[1].to_owned();
                    let parts = path.split('.').map(str::to_owned).collect();
                    segments.push(Segment::Placeholder(Placeholder {
                        path,
                        segments: parts,
                        line,
                        column,
                    }));
                }
                TemplateElement::HtmlExpression(_) => {
                    return Err(reject("triple-stash `{{{ }}}` / `{{& }}`".to_owned()));
                }
                TemplateElement::HelperBlock(helper) => {
                    return Err(reject(format!(
                        "block `{{{{#{}}}}}`",
                        parameter_name(&helper.name)
                    )));
                }
                TemplateElement::PartialExpression(_) | TemplateElement::PartialBlock(_) => {
                    return Err(reject("partial `{{> }}`".to_owned()));
                }
                TemplateElement::DecoratorExpression(_) | TemplateElement::DecoratorBlock(_) => {
                    return Err(reject("decorator `{{* }}`".to_owned()));
                }
                TemplateElement::Comment(_) => {
                    return Err(reject("comment `{{! }}`".to_owned()));
                }
                other => return Err(reject(format!("construct {other:?}"))),
            }
        }
        Ok(Template::from_segments(segments, false))
    }

    /// A template that is the text itself: no placeholders, `{{` has no meaning, nothing can
    /// fail. Used for bodies that are plain instructions rather than templates.
    pub fn literal(text: &str) -> Template {
        let mut segments = Vec::new();
        push_text(&mut segments, text);
        Template::from_segments(segments, true)
    }

    fn from_segments(segments: Vec<Segment>, literal: bool) -> Template {
        let literal_len = segments
            .iter()
            .map(|s| match s {
                Segment::Text(t) => t.len(),
                Segment::Placeholder(_) => 0,
            })
            .sum();
        Template {
            segments,
            literal_len,
            literal,
        }
    }

    /// Whether this template was built with [`Template::literal`].
    pub fn is_literal(&self) -> bool {
        self.literal
    }

    /// The placeholders in source order.
    pub fn placeholders(&self) -> impl Iterator<Item = &Placeholder> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Placeholder(p) => Some(p),
            Segment::Text(_) => None,
        })
    }

    /// Renders the template with `arguments` (normally the call's argument object).
    pub fn render(&self, arguments: &Value) -> Result<String, RenderError> {
        let mut out = String::with_capacity(self.literal_len + 16 * self.segments.len());
        for segment in &self.segments {
            match segment {
                Segment::Text(text) => out.push_str(text),
                Segment::Placeholder(p) => write_value(&mut out, p.resolve(arguments)?),
            }
        }
        Ok(out)
    }
}

impl Placeholder {
    fn resolve<'v>(&self, root: &'v Value) -> Result<&'v Value, RenderError> {
        let mut current = root;
        for (depth, segment) in self.segments.iter().enumerate() {
            let next = match current {
                Value::Object(map) => map.get(segment),
                Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            current = match next {
                Some(value) => value,
                None => return Err(self.missing(depth, current)),
            };
        }
        Ok(current)
    }

    fn missing(&self, depth: usize, parent: &Value) -> RenderError {
        let segment = &self.segments[depth];
        let reason = if depth == 0 {
            format!("the arguments have no `{segment}`")
        } else {
            let parent_path = self.segments[..depth].join(".");
            match parent {
                Value::Object(_) => format!("`{parent_path}` has no key `{segment}`"),
                Value::Array(items) => {
                    format!("`{parent_path}` is an array of {} items", items.len())
                }
                other => format!("`{parent_path}` is {}, not an object", json_kind(other)),
            }
        };
        RenderError {
            path: self.path.clone(),
            line: self.line,
            column: self.column,
            reason,
        }
    }
}

impl fmt::Display for Template {
    /// Shows the template source form (text with `{{ path }}` placeholders, `{{` in text
    /// escaped), which compiles back to an equal template.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for segment in &self.segments {
            match segment {
                Segment::Text(t) if self.literal => f.write_str(t)?,
                Segment::Text(t) => f.write_str(&t.replace("{{", "\\{{"))?,
                Segment::Placeholder(p) => write!(f, "{{{{ {} }}}}", p.path)?,
            }
        }
        Ok(())
    }
}

fn push_text(segments: &mut Vec<Segment>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Segment::Text(previous)) = segments.last_mut() {
        previous.push_str(text);
    } else {
        segments.push(Segment::Text(text.to_owned()));
    }
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => out.push_str(s),
        // Numbers, booleans, null, objects and arrays: compact JSON is exactly the contract.
        other => out.push_str(&other.to_string()),
    }
}

pub use skillet_core::schema::json_kind;

fn parameter_name(p: &Parameter) -> String {
    match p {
        Parameter::Name(n) => n.clone(),
        Parameter::Path(path) => format!("{path:?}"),
        other => format!("{other:?}"),
    }
}

/// Handlebars' syntax errors list grammar rules; say what a skill author needs instead.
fn syntax_reason(raw: String) -> String {
    let first_line = raw.lines().next().unwrap_or("invalid syntax").trim();
    format!(
        "invalid template syntax ({first_line}); an unterminated or malformed `{{{{`? {ALLOWED}"
    )
}

/// Maps handlebars' 1-based (line, character column) positions back to byte offsets.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(source: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The source from (line, column) to the end.
    fn tail<'s>(&self, source: &'s str, line: usize, column: usize) -> &'s str {
        let start = self
            .starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(source.len());
        let rest = &source[start..];
        let offset = rest
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(rest.len(), |(i, _)| i);
        &rest[offset..]
    }
}
