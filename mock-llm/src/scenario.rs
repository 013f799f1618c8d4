//! Scenarios: the file format (YAML or JSON) and Rust builder for scripted answers — an ordered
//! list of rules, each a [`Match`] plus a reply, a sequence of replies, and/or a [`Fault`].
//!
//! This module holds the *description*; per-rule use counters and the decision which rule answers
//! live in `dispatch`, conditions in `matching`. The README documents every field.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

pub use crate::dialect::Dialect;
use crate::faults::Fault;
use crate::reply::{Finish, Usage};

pub use crate::matching::Match;
pub use crate::scenario_error::ScenarioError;

/// A whole scenario: rules tried in order, the answer when none applies, and settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Rules, tried in order; the first that applies answers.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Used when no rule applies (its `when` is ignored). Absent: synthesize from the request's
    /// schema, else echo text.
    #[serde(default)]
    pub default: Option<Rule>,
    /// Model names listed by `/v1/models` and `/api/tags` (in addition to the config's).
    #[serde(default)]
    pub models: Vec<String>,
    /// Seed for fault probabilities (overrides the config's).
    #[serde(default)]
    pub seed: Option<u64>,
    /// How this "server" differs from OpenAI's (refusals, ignored tools, omitted usage, ...).
    #[serde(default)]
    pub dialect: Dialect,
}

/// One scripted behaviour.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(try_from = "RuleSpec")]
pub struct Rule {
    /// Name shown in the journal's `matched_rule` (default `rule[INDEX]`).
    pub name: Option<String>,
    /// Conditions on the request.
    pub when: Match,
    /// Replies handed out one per use; the last repeats if `times` allows more uses.
    pub replies: Vec<ReplySpec>,
    /// A fault applied while it has firings left (see [`Fault::times`]).
    pub fault: Option<Fault>,
    /// How many requests this rule answers (default: unlimited, or the number of `replies` when
    /// there are several).
    pub times: Option<u32>,
    /// Delays for this rule's answers (override the server config's).
    pub timing: Option<Timing>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    name: Option<String>,
    #[serde(default)]
    when: Option<Match>,
    reply: Option<ReplySpec>,
    #[serde(default)]
    replies: Vec<ReplySpec>,
    fault: Option<Fault>,
    times: Option<u32>,
    timing: Option<Timing>,
}

impl TryFrom<RuleSpec> for Rule {
    type Error = ScenarioError;

    fn try_from(s: RuleSpec) -> Result<Self, ScenarioError> {
        let label = s.name.clone().unwrap_or_else(|| "unnamed rule".into());
        if s.reply.is_some() && !s.replies.is_empty() {
            return Err(ScenarioError::Invalid(format!(
                "{label}: give either `reply` or `replies`, not both"
            )));
        }
        let mut replies = s.replies;
        if let Some(r) = s.reply {
            replies.push(r);
        }
        if replies.is_empty() && s.fault.is_none() {
            return Err(ScenarioError::Invalid(format!(
                "{label}: needs `reply`, `replies` or `fault`"
            )));
        }
        Ok(Rule {
            name: s.name,
            when: s.when.unwrap_or_default(),
            replies,
            fault: s.fault,
            times: s.times,
            timing: s.timing,
        })
    }
}

/// What a rule answers with. Fields combine: text and tool calls may both be present. An empty
/// spec (or `synthesize: true`) means the default answer for the request.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplySpec {
    /// Text content.
    pub text: Option<String>,
    /// A JSON value sent as the text content (compact serialization).
    pub json: Option<Value>,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallSpec>,
    /// Answer with the default (schema instance or echo) — useful in `replies` sequences.
    #[serde(default)]
    pub synthesize: bool,
    /// Stop reason override (default: `tool_calls` when there are tool calls, else `stop`).
    pub finish: Option<Finish>,
    /// Token counts override (default: estimated at 4 characters a token).
    pub usage: Option<Usage>,
    /// Reasoning the model shows before its answer: an Anthropic `thinking` block (with a
    /// deterministic `signature`, `sig_mock_<seq>`) ahead of the text and tool calls, Ollama's
    /// `message.thinking` (its own first line when streamed); OpenAI does not show it.
    pub thinking: Option<String>,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// Tool name.
    pub name: String,
    /// Arguments: a JSON value, or a string sent verbatim (may be invalid JSON on purpose).
    /// Absent: synthesized from the offered tool's schema.
    pub arguments: Option<Value>,
    /// Call id (default: counter-based).
    pub id: Option<String>,
}

/// Delays applied to an answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "TimingSpec")]
pub struct Timing {
    /// Before response headers.
    pub latency: Duration,
    /// Before the first stream chunk.
    pub first_token: Duration,
    /// Between stream chunks.
    pub per_chunk: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TimingSpec {
    #[serde(default)]
    latency_ms: u64,
    #[serde(default)]
    first_token_ms: u64,
    #[serde(default)]
    chunk_ms: u64,
}

impl From<TimingSpec> for Timing {
    fn from(s: TimingSpec) -> Self {
        Timing {
            latency: Duration::from_millis(s.latency_ms),
            first_token: Duration::from_millis(s.first_token_ms),
            per_chunk: Duration::from_millis(s.chunk_ms),
        }
    }
}

impl Scenario {
    /// An empty scenario: every request gets the default answer.
    pub fn new() -> Self {
        Scenario::default()
    }

    /// Parses YAML (booleans only `true`/`false`, so `on` or `no` stay strings).
    pub fn from_yaml_str(yaml: &str) -> Result<Self, ScenarioError> {
        let options = serde_saphyr::options! { strict_booleans: true };
        serde_saphyr::from_str_with_options(yaml, options)
            .map_err(|e| ScenarioError::Yaml(e.to_string()))
    }

    /// Parses JSON.
    pub fn from_json_str(json: &str) -> Result<Self, ScenarioError> {
        serde_json::from_str(json).map_err(|e| ScenarioError::Json(e.to_string()))
    }

    /// Reads a file: `.json` as JSON, anything else as YAML.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let parsed = if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            Scenario::from_json_str(&text)
        } else {
            Scenario::from_yaml_str(&text)
        };
        parsed.map_err(|e| ScenarioError::Invalid(format!("{}: {e}", path.display())))
    }

    /// Appends `other`'s rules and models; its default and seed win when set.
    pub fn merge(mut self, other: Scenario) -> Self {
        self.rules.extend(other.rules);
        self.models.extend(other.models);
        if other.default.is_some() {
            self.default = other.default;
        }
        if other.seed.is_some() {
            self.seed = other.seed;
        }
        self
    }

    /// Adds a rule at the end.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Sets the answer used when no rule applies.
    pub fn default_rule(mut self, rule: Rule) -> Self {
        self.default = Some(rule);
        self
    }
}

impl Rule {
    /// A named rule matching everything; add conditions with [`Rule::when`].
    pub fn new(name: impl Into<String>) -> Self {
        Rule {
            name: Some(name.into()),
            ..Rule::default()
        }
    }

    /// Sets the conditions.
    pub fn when(mut self, when: Match) -> Self {
        self.when = when;
        self
    }

    /// Adds a reply (several make a sequence).
    pub fn reply(mut self, reply: ReplySpec) -> Self {
        self.replies.push(reply);
        self
    }

    /// Sets the fault.
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Limits the number of uses.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// Sets this rule's delays.
    pub fn timing(mut self, timing: Timing) -> Self {
        self.timing = Some(timing);
        self
    }

    /// How many requests the rule may answer (`None` = unlimited).
    pub(crate) fn limit(&self) -> Option<u32> {
        self.times.or_else(|| {
            (self.replies.len() > 1).then(|| u32::try_from(self.replies.len()).unwrap_or(u32::MAX))
        })
    }
}

impl ReplySpec {
    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        ReplySpec {
            text: Some(text.into()),
            ..ReplySpec::default()
        }
    }

    /// A JSON answer (sent as text content).
    pub fn json(value: Value) -> Self {
        ReplySpec {
            json: Some(value),
            ..ReplySpec::default()
        }
    }

    /// One tool call with these arguments.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        ReplySpec::default().with_tool_call(name, Some(arguments))
    }

    /// The default answer (schema instance or echo).
    pub fn synthesize() -> Self {
        ReplySpec {
            synthesize: true,
            ..ReplySpec::default()
        }
    }

    /// Adds a tool call; `None` arguments are synthesized from the tool's schema.
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: Option<Value>) -> Self {
        self.tool_calls.push(ToolCallSpec {
            name: name.into(),
            arguments,
            id: None,
        });
        self
    }

    /// Overrides the stop reason.
    pub fn finish(mut self, finish: Finish) -> Self {
        self.finish = Some(finish);
        self
    }

    /// Whether this spec asks for the default answer.
    pub(crate) fn is_default(&self) -> bool {
        self.synthesize
            || (self.text.is_none() && self.json.is_none() && self.tool_calls.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_TURNS: &str = r#"
rules:
  - name: plan
    when: { turn: 1, tool: get_weather }
    reply:
      tool_calls:
        - name: get_weather
          arguments: { city: Paris }
  - name: answer
    when: { tool_results: true }
    reply:
      json: { summary: "sunny", temperature_c: 21 }
"#;

    #[test]
    fn yaml_two_turn_scenario_parses() {
        let s = Scenario::from_yaml_str(TWO_TURNS).unwrap();
        assert_eq!(s.rules.len(), 2);
        assert_eq!(s.rules[0].name.as_deref(), Some("plan"));
        assert_eq!(s.rules[0].replies[0].tool_calls[0].name, "get_weather");
        assert_eq!(s.rules[1].when, Match::any().tool_results(true));
    }

    #[test]
    fn unknown_fields_and_answerless_rules_are_rejected() {
        let e = Scenario::from_yaml_str("rules:\n  - whne: {turn: 1}\n    reply: {text: hi}\n")
            .unwrap_err();
        assert!(e.to_string().contains("whne"), "{e}");
        let e = Scenario::from_yaml_str("rules:\n  - name: x\n    when: {turn: 1}\n").unwrap_err();
        assert!(e.to_string().contains("needs `reply`"), "{e}");
        let e = Scenario::from_json_str(r#"{"rules":[{"when":{"user_regex":"("},"reply":{}}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("user_regex"), "{e}");
        let e = Scenario::from_yaml_str("rules:\n  - when: {endpoint: bard}\n    reply: {}\n")
            .unwrap_err();
        assert!(e.to_string().contains("unknown endpoint"), "{e}");
    }

    #[test]
    fn yaml_strict_booleans_keep_words_as_text() {
        let s = Scenario::from_yaml_str("rules:\n  - reply: {text: no}\n").unwrap();
        assert_eq!(s.rules[0].replies[0].text.as_deref(), Some("no"));
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = Scenario::from_file("/nonexistent/scenario.yaml").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/scenario.yaml"), "{e}");
    }

    #[test]
    fn replies_sequence_limits_uses_to_its_length() {
        let r = Rule::new("seq")
            .reply(ReplySpec::text("a"))
            .reply(ReplySpec::text("b"));
        assert_eq!(r.limit(), Some(2));
        assert_eq!(r.clone().times(5).limit(), Some(5));
        assert_eq!(Rule::new("one").reply(ReplySpec::text("a")).limit(), None);
    }
}
