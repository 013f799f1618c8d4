//! [`Match`]: the conditions a scenario rule (or a queued fault) puts on a request, and the test
//! of a [`ChatRequest`] against them. Patterns are compiled once, when the scenario is loaded, so a
//! bad glob or regex is a load error, never a request-time surprise.

use std::collections::BTreeMap;

use globset::{Glob, GlobMatcher};
use regex::Regex;
use serde::Deserialize;

use crate::request::ChatRequest;
use crate::scenario_error::ScenarioError;

/// Conditions on a request; every condition that is set must hold. The empty match matches all.
#[derive(Debug, Clone, Default)]
pub struct Match {
    endpoint: Option<String>,
    model: Option<(String, GlobMatcher)>,
    user_contains: Option<String>,
    user_regex: Option<Regex>,
    system_contains: Option<String>,
    tool: Option<String>,
    tool_results: Option<bool>,
    tool_result_contains: Option<String>,
    turn: Option<u32>,
    structured: Option<bool>,
    stream: Option<bool>,
    headers: BTreeMap<String, String>,
}

impl PartialEq for Match {
    fn eq(&self, other: &Self) -> bool {
        self.endpoint == other.endpoint
            && self.model.as_ref().map(|m| &m.0) == other.model.as_ref().map(|m| &m.0)
            && self.user_contains == other.user_contains
            && self.user_regex.as_ref().map(Regex::as_str)
                == other.user_regex.as_ref().map(Regex::as_str)
            && self.system_contains == other.system_contains
            && self.tool == other.tool
            && self.tool_results == other.tool_results
            && self.tool_result_contains == other.tool_result_contains
            && self.turn == other.turn
            && self.structured == other.structured
            && self.stream == other.stream
            && self.headers == other.headers
    }
}

impl Match {
    /// Matches every request.
    pub fn any() -> Self {
        Match::default()
    }

    /// Endpoint `openai.chat`, or a whole provider: `openai`, `ollama`, `anthropic`.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Model name glob, e.g. `gpt-*`.
    pub fn model(mut self, glob: &str) -> Result<Self, ScenarioError> {
        let matcher = Glob::new(glob)
            .map_err(|e| ScenarioError::Invalid(format!("model glob `{glob}`: {e}")))?
            .compile_matcher();
        self.model = Some((glob.to_owned(), matcher));
        Ok(self)
    }

    /// The last user message contains this text (case-sensitive).
    pub fn user_contains(mut self, text: impl Into<String>) -> Self {
        self.user_contains = Some(text.into());
        self
    }

    /// The last user message matches this regex.
    pub fn user_regex(mut self, pattern: &str) -> Result<Self, ScenarioError> {
        let re = Regex::new(pattern)
            .map_err(|e| ScenarioError::Invalid(format!("user_regex `{pattern}`: {e}")))?;
        self.user_regex = Some(re);
        Ok(self)
    }

    /// The system prompt contains this text.
    pub fn system_contains(mut self, text: impl Into<String>) -> Self {
        self.system_contains = Some(text.into());
        self
    }

    /// A tool of this name is offered.
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        self.tool = Some(name.into());
        self
    }

    /// Tool results are (true) or are not (false) present in the conversation.
    pub fn tool_results(mut self, present: bool) -> Self {
        self.tool_results = Some(present);
        self
    }

    /// Some tool result contains this text.
    pub fn tool_result_contains(mut self, text: impl Into<String>) -> Self {
        self.tool_result_contains = Some(text.into());
        self
    }

    /// The request is this turn: 1 + assistant messages already in the conversation.
    pub fn turn(mut self, turn: u32) -> Self {
        self.turn = Some(turn);
        self
    }

    /// The request asks (true) or does not ask (false) for JSON / schema / forced-tool output.
    pub fn structured(mut self, structured: bool) -> Self {
        self.structured = Some(structured);
        self
    }

    /// The request is (true) or is not (false) streamed.
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = Some(stream);
        self
    }

    /// A header has exactly this value (name case-insensitive).
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.insert(name.to_ascii_lowercase(), value.into());
        self
    }

    /// Whether `req` meets every condition.
    pub fn matches(&self, req: &ChatRequest) -> bool {
        let endpoint = req.endpoint.as_str();
        if let Some(e) = &self.endpoint
            && e != endpoint
            && e != req.endpoint.provider()
        {
            return false;
        }
        if let Some((_, glob)) = &self.model
            && !glob.is_match(&req.model)
        {
            return false;
        }
        let user = req.last_user_text();
        if self
            .user_contains
            .as_ref()
            .is_some_and(|t| !user.contains(t.as_str()))
        {
            return false;
        }
        if self
            .user_regex
            .as_ref()
            .is_some_and(|re| !re.is_match(user))
        {
            return false;
        }
        if self
            .system_contains
            .as_ref()
            .is_some_and(|t| !req.system.contains(t.as_str()))
        {
            return false;
        }
        if self.tool.as_ref().is_some_and(|t| req.tool(t).is_none()) {
            return false;
        }
        if self
            .tool_results
            .is_some_and(|want| want != req.tool_results().next().is_some())
        {
            return false;
        }
        if let Some(t) = &self.tool_result_contains
            && !req.tool_results().any(|r| r.contains(t.as_str()))
        {
            return false;
        }
        if self.turn.is_some_and(|t| t != req.turn()) {
            return false;
        }
        let structured = !matches!(req.output, crate::request::OutputShape::Text);
        if self.structured.is_some_and(|want| want != structured) {
            return false;
        }
        if self.stream.is_some_and(|want| want != req.stream) {
            return false;
        }
        self.headers
            .iter()
            .all(|(name, value)| req.header(name) == Some(value.as_str()))
    }
}

/// The file form of a [`Match`].
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatchSpec {
    endpoint: Option<String>,
    model: Option<String>,
    user_contains: Option<String>,
    user_regex: Option<String>,
    system_contains: Option<String>,
    tool: Option<String>,
    tool_results: Option<bool>,
    tool_result_contains: Option<String>,
    turn: Option<u32>,
    structured: Option<bool>,
    stream: Option<bool>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl TryFrom<MatchSpec> for Match {
    type Error = ScenarioError;

    fn try_from(s: MatchSpec) -> Result<Self, ScenarioError> {
        let mut m = Match::any();
        if let Some(e) = s.endpoint {
            const KNOWN: [&str; 11] = [
                "openai",
                "ollama",
                "anthropic",
                "gemini",
                "gemini.generate_content",
                "openai.chat",
                "openai.models",
                "ollama.chat",
                "ollama.tags",
                "ollama.version",
                "anthropic.messages",
            ];
            if !KNOWN.contains(&e.as_str()) {
                return Err(ScenarioError::Invalid(format!(
                    "unknown endpoint `{e}` (expected one of {})",
                    KNOWN.join(", ")
                )));
            }
            m = m.endpoint(e);
        }
        if let Some(g) = s.model {
            m = m.model(&g)?;
        }
        if let Some(r) = s.user_regex {
            m = m.user_regex(&r)?;
        }
        m.user_contains = s.user_contains;
        m.system_contains = s.system_contains;
        m.tool = s.tool;
        m.tool_results = s.tool_results;
        m.tool_result_contains = s.tool_result_contains;
        m.turn = s.turn;
        m.structured = s.structured;
        m.stream = s.stream;
        for (name, value) in s.headers {
            m = m.header(&name, value);
        }
        Ok(m)
    }
}

impl<'de> Deserialize<'de> for Match {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Match::try_from(MatchSpec::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}
