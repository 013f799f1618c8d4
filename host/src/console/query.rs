//! [`RunFilter`]: the history's query string (`?skill=&outcome=&error_code=&model=&door=&since=
//! &until=&before=&limit=`) parsed once, at the edge, into typed values; anything else (an
//! unknown key, a repeated key, a bad number or outcome) is a [`FilterError`] the route answers
//! with 400 and the reason.
//!
//! Not here: running the query (`super::history`).

use std::collections::BTreeMap;

use crate::record::Door;

/// How a recorded call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and its result is a success.
    Success,
    /// It ran and failed (its result's `error_code` says how).
    Failure,
    /// It was refused before it ran (the answer's `error`).
    Rejected,
}

impl Outcome {
    /// The name stored and accepted in filters.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Rejected => "rejected",
        }
    }

    fn parse(text: &str) -> Option<Outcome> {
        [Outcome::Success, Outcome::Failure, Outcome::Rejected]
            .into_iter()
            .find(|o| o.as_str() == text)
    }
}

/// The filters a list takes.
const KNOWN: [&str; 9] = [
    "skill",
    "outcome",
    "error_code",
    "model",
    "door",
    "since",
    "until",
    "before",
    "limit",
];

/// Default number of runs a list returns.
pub(crate) const DEFAULT_LIMIT: u32 = 50;
/// The most a list returns at once.
pub(crate) const MAX_LIMIT: u32 = 500;

/// Which recorded runs to list (every field optional; all given must match).
#[derive(Debug, Clone, PartialEq)]
pub struct RunFilter {
    /// Exactly this skill.
    pub skill: Option<String>,
    /// This outcome.
    pub outcome: Option<Outcome>,
    /// This error code (`timeout`, `schema_violation`, ...).
    pub error_code: Option<String>,
    /// This model.
    pub model: Option<String>,
    /// Through this door.
    pub door: Option<Door>,
    /// Started at or after (seconds since the Unix epoch).
    pub since: Option<f64>,
    /// Started before.
    pub until: Option<f64>,
    /// Only runs with a smaller id (paging backwards).
    pub before: Option<i64>,
    /// At most this many (1..=[`MAX_LIMIT`]).
    pub limit: u32,
    /// Only runs of these skills — under `[auth]`, the ones the caller may see (set by the
    /// route, never read from the query string; `None`: every skill).
    pub visible_skills: Option<Vec<String>>,
}

impl Default for RunFilter {
    fn default() -> Self {
        RunFilter {
            skill: None,
            outcome: None,
            error_code: None,
            model: None,
            door: None,
            since: None,
            until: None,
            before: None,
            limit: DEFAULT_LIMIT,
            visible_skills: None,
        }
    }
}

/// Why a query string is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(pub String);

impl RunFilter {
    /// Parses `pairs` (the decoded query string, in order).
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Result<RunFilter, FilterError> {
        let mut seen = BTreeMap::new();
        for (key, value) in pairs {
            if seen.insert(key.clone(), value).is_some() {
                return Err(FilterError(format!("`{key}` is given more than once")));
            }
        }
        let mut filter = RunFilter::default();
        for (key, value) in seen {
            let bad = |what: &str| FilterError(format!("`{key}`: expected {what}, got {value:?}"));
            if !KNOWN.contains(&key.as_str()) {
                return Err(FilterError(format!(
                    "unknown filter `{key}` (known: {})",
                    KNOWN.join(", ")
                )));
            }
            // An empty value is no filter (a form's empty field).
            if value.is_empty() {
                continue;
            }
            match key.as_str() {
                "skill" => filter.skill = Some(value.clone()),
                "model" => filter.model = Some(value.clone()),
                "door" => {
                    filter.door = Some(
                        Door::parse(&value)
                            .ok_or_else(|| bad("a door: console, a2e, mcp, a2a or nats"))?,
                    );
                }
                "error_code" => {
                    if !value.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                        return Err(bad("an error code such as `timeout`"));
                    }
                    filter.error_code = Some(value.clone());
                }
                "outcome" => {
                    filter.outcome = Some(
                        Outcome::parse(&value)
                            .ok_or_else(|| bad("success, failure or rejected"))?,
                    );
                }
                "since" | "until" => {
                    let at: f64 = value
                        .parse()
                        .ok()
                        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                        .ok_or_else(|| bad("seconds since the Unix epoch"))?;
                    if key == "since" {
                        filter.since = Some(at);
                    } else {
                        filter.until = Some(at);
                    }
                }
                "before" => {
                    filter.before = Some(
                        value
                            .parse()
                            .ok()
                            .filter(|v: &i64| *v > 0)
                            .ok_or_else(|| bad("a run id"))?,
                    );
                }
                "limit" => {
                    filter.limit = value
                        .parse()
                        .ok()
                        .filter(|v| (1..=MAX_LIMIT).contains(v))
                        .ok_or_else(|| bad(&format!("a number from 1 to {MAX_LIMIT}")))?;
                }
                // Unknown keys were refused above.
                _ => {}
            }
        }
        Ok(filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &[(&str, &str)]) -> Result<RunFilter, FilterError> {
        RunFilter::from_pairs(
            query
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn every_filter_is_read_into_its_type() {
        let filter = parse(&[
            ("skill", "summarize"),
            ("outcome", "failure"),
            ("error_code", "timeout"),
            ("model", "m"),
            ("door", "mcp"),
            ("since", "10"),
            ("until", "20.5"),
            ("before", "7"),
            ("limit", "3"),
        ])
        .unwrap();
        assert_eq!(filter.skill.as_deref(), Some("summarize"));
        assert_eq!(filter.outcome, Some(Outcome::Failure));
        assert_eq!(filter.error_code.as_deref(), Some("timeout"));
        assert_eq!(filter.door, Some(Door::Mcp));
        assert_eq!(filter.since, Some(10.0));
        assert_eq!(filter.until, Some(20.5));
        assert_eq!(filter.before, Some(7));
        assert_eq!(filter.limit, 3);
    }

    #[test]
    fn empty_values_are_no_filter() {
        assert_eq!(
            parse(&[("skill", ""), ("limit", "")]).unwrap(),
            RunFilter::default()
        );
    }

    #[test]
    fn bad_filters_are_refused_with_the_reason() {
        for (query, needle) in [
            (vec![("outcome", "maybe")], "success, failure or rejected"),
            (vec![("limit", "0")], "1 to 500"),
            (vec![("limit", "9999")], "1 to 500"),
            (vec![("since", "yesterday")], "seconds since"),
            (vec![("since", "NaN")], "seconds since"),
            (vec![("before", "-1")], "a run id"),
            (vec![("error_code", "DROP TABLE")], "error code"),
            (vec![("door", "smtp")], "a door: console"),
            (vec![("colour", "red")], "unknown filter `colour`"),
            (vec![("colour", "")], "unknown filter `colour`"),
            (vec![("skill", "a"), ("skill", "b")], "more than once"),
        ] {
            let error = parse(&query).unwrap_err();
            assert!(error.0.contains(needle), "{query:?}: {error}");
        }
    }
}
