//! `expect.files`: checks of the files a run produced — that one exists, its media type, its
//! size range, a regex over its text, a JSON pointer into it when it is JSON.
//!
//! ```json
//! "expect": {"files": [
//!   {"name": "report.md", "media_type": "text/markdown", "min_bytes": 10, "regex": "Total"},
//!   {"name": "out/summary.json", "pointer": "/total", "equals": 234.8}
//! ]}
//! ```
//!
//! A file's text is its content when it is text, or a binary file's content when it decodes as
//! UTF-8; no text is extracted from other formats (PDF, Office, images), so a `regex` or
//! `pointer` on one fails saying so. Not here: reading the files from the run (`observation`).

use serde::Deserialize;
use serde_json::Value;

use super::check::{ExpectationError, PointerTest, judge_pointer, shown};
use super::observation::{Observation, ObservedFile};

/// What one produced file must be.
#[derive(Debug, Clone)]
pub struct FileExpectation {
    /// Its path in the workspace, as the run reports it (`report.md`, `out/a.json`).
    pub name: String,
    /// Its media type (compared without parameters, case-insensitively).
    pub media_type: Option<String>,
    /// Inclusive lower bound on its size.
    pub min_bytes: Option<u64>,
    /// Inclusive upper bound on its size.
    pub max_bytes: Option<u64>,
    /// A regex its text must match.
    pub regex: Option<regex::Regex>,
    /// A JSON pointer into its content (parsed as JSON) and what the value must be.
    pub pointer: Option<(String, PointerTest)>,
}

/// `expect.files[]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFileExpectation {
    name: String,
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default)]
    min_bytes: Option<u64>,
    #[serde(default)]
    max_bytes: Option<u64>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    pointer: Option<String>,
    #[serde(default, deserialize_with = "present")]
    equals: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    contains: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl RawFileExpectation {
    /// The typed expectation, or what is wrong with it.
    pub(crate) fn compile(self) -> Result<FileExpectation, ExpectationError> {
        if self.name.trim().is_empty() {
            return Err(ExpectationError::NoName);
        }
        if let (Some(min), Some(max)) = (self.min_bytes, self.max_bytes)
            && min > max
        {
            return Err(ExpectationError::SizeRange { min, max });
        }
        let regex = match &self.regex {
            Some(pattern) => {
                Some(
                    regex::Regex::new(pattern).map_err(|error| ExpectationError::Regex {
                        pattern: pattern.clone(),
                        error,
                    })?,
                )
            }
            None => None,
        };
        let pointer = match (self.pointer, self.equals, self.contains) {
            (None, None, None) => None,
            (Some(pointer), Some(value), None) => Some((pointer, PointerTest::Equals(value))),
            (Some(pointer), None, Some(value)) => Some((pointer, PointerTest::Contains(value))),
            (Some(_), None, None) => return Err(ExpectationError::PointerWithoutTest),
            (None, _, _) => return Err(ExpectationError::TestWithoutPointer),
            (Some(_), Some(_), Some(_)) => return Err(ExpectationError::BothTests),
        };
        if let Some((pointer, _)) = &pointer
            && !(pointer.is_empty() || pointer.starts_with('/'))
        {
            return Err(ExpectationError::NotAPointer(pointer.clone()));
        }
        Ok(FileExpectation {
            name: self.name,
            media_type: self.media_type,
            min_bytes: self.min_bytes,
            max_bytes: self.max_bytes,
            regex,
            pointer,
        })
    }
}

impl FileExpectation {
    /// Judges `run`'s produced files: `Err` says what was seen instead.
    pub(crate) fn judge(&self, run: &Observation) -> Result<(), String> {
        let name = &self.name;
        let Some(file) = run.files.iter().find(|f| &f.name == name) else {
            let produced: Vec<&str> = run.files.iter().map(|f| f.name.as_str()).collect();
            return Err(format!(
                "{name} was not produced (files: {})",
                if produced.is_empty() {
                    "none".to_owned()
                } else {
                    produced.join(", ")
                }
            ));
        };
        if let Some(expected) = &self.media_type {
            let essence = |t: &str| t.split(';').next().unwrap_or("").trim().to_lowercase();
            if essence(expected) != essence(&file.media_type) {
                return Err(format!("{name} is {}, not {expected}", file.media_type));
            }
        }
        if self.min_bytes.is_some_and(|min| file.size < min)
            || self.max_bytes.is_some_and(|max| file.size > max)
        {
            return Err(format!(
                "{name} has {} bytes, outside {}..={}",
                file.size,
                self.min_bytes.map_or(String::new(), |n| n.to_string()),
                self.max_bytes.map_or(String::new(), |n| n.to_string()),
            ));
        }
        if let Some(regex) = &self.regex {
            let text = text_of(file)?;
            if !regex.is_match(text) {
                return Err(format!("{name}: no match for {:?}", regex.as_str()));
            }
        }
        if let Some((pointer, test)) = &self.pointer {
            let document: Value = serde_json::from_str(text_of(file)?)
                .map_err(|e| format!("{name} is not JSON: {e}"))?;
            let value = document
                .pointer(pointer)
                .ok_or_else(|| format!("{name} at {}: no value there", shown(pointer)))?;
            judge_pointer(test, value)
                .map_err(|why| format!("{name} at {}: {why}", shown(pointer)))?;
        }
        Ok(())
    }
}

fn text_of(file: &ObservedFile) -> Result<&str, String> {
    file.text.as_deref().ok_or_else(|| {
        format!(
            "{} is binary ({}); no text is extracted from it",
            file.name, file.media_type
        )
    })
}
