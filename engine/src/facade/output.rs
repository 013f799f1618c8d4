//! [`SkillOutput`]: what a successful [`Skillet`](super::Skillet) run produced — the validated
//! data, its one-line summary, usage, events, timings and (when asked for) its transcript — taken out of the wire
//! `SkillResult` once, so callers never reach three levels into a response.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::SkillError;
use crate::protocol::{SkillEvent, SkillResult, TokenUsage, Transcript};

/// A successful run's output.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillOutput {
    /// The skill that ran.
    pub skill: String,
    /// The output, validated against the skill's output schema when it has one (free-form
    /// output is a JSON string).
    pub data: Value,
    /// One human line about the result (the output's own `summary` field when it has one).
    pub summary: Option<String>,
    /// Token usage, per call and per turn (model-backed skills).
    pub usage: Option<TokenUsage>,
    /// The call's events, `seq` from 0 without gaps.
    pub events: Vec<SkillEvent>,
    /// How long the call took.
    pub duration: Duration,
    /// Model turns used (1 for a Rust-native skill).
    pub turns: u32,
    /// Whether the collected events were cut at the host's cap.
    pub truncated: bool,
    /// The call's request id (as in the events and traces).
    pub request_id: String,
    /// What the run sent to its model and got back, turn by turn, when the call asked for it
    /// ([`Call::transcript`](super::Call::transcript)).
    pub transcript: Option<Transcript>,
}

impl SkillOutput {
    /// The output of a successful wire result.
    pub(crate) fn from_result(skill: &str, request_id: String, result: SkillResult) -> Self {
        let SkillResult {
            success: _,
            data,
            summary,
            truncated,
            error: _,
            error_code: _,
            duration_ms,
            events,
            usage,
            resumed: _,
            transcript,
        } = result;
        let turns = usage
            .as_ref()
            .and_then(|u| u.turns.iter().map(|t| t.turn).max())
            .unwrap_or(1);
        SkillOutput {
            skill: skill.to_owned(),
            data: data.unwrap_or(Value::Null),
            summary: summary.map(|s| match s {
                Value::String(text) => text,
                other => other.to_string(),
            }),
            usage,
            events,
            duration: Duration::from_millis(duration_ms),
            turns,
            truncated,
            request_id,
            transcript: transcript.map(|t| *t),
        }
    }

    /// The data decoded as `T` ([`SkillError::Decode`] when it does not fit).
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, SkillError> {
        T::deserialize(&self.data).map_err(|e| SkillError::Decode {
            skill: self.skill.clone(),
            type_name: std::any::type_name::<T>(),
            error: e.to_string(),
            data: Box::new(self.data.clone()),
        })
    }

    /// Like [`Self::decode`], consuming the output (no copy of the data on success).
    pub fn into_decoded<T: DeserializeOwned>(self) -> Result<T, SkillError> {
        match T::deserialize(&self.data) {
            Ok(value) => Ok(value),
            Err(e) => Err(SkillError::Decode {
                skill: self.skill,
                type_name: std::any::type_name::<T>(),
                error: e.to_string(),
                data: Box::new(self.data),
            }),
        }
    }

    /// The output as text, when it is free-form (a JSON string).
    pub fn text(&self) -> Option<&str> {
        self.data.as_str()
    }
}
