//! [`Limits`]: the host's bounds on every call (turns, time, tools, events, tokens), and how a
//! call's effective turn limit and deadline are derived from them.
//!
//! The host's `skillet.toml` fills a `Limits` (every field has a default, so a partial table is
//! fine; unknown keys are rejected so a typo does not silently keep a default). Durations are
//! written as seconds, fractions allowed (`tool_timeout = 2.5`).
//!
//! Not here: enforcing the limits. The executor owns the deadline, `dispatch` the tool bounds,
//! the turn loop the turn and token budgets, `budget` the cost cap and the per-tool call
//! counts; a provider's requests and tokens per minute are the provider's own
//! (`provider_config` `requests_per_minute` / `tokens_per_minute`, enforced in
//! `skillet-providers` before every attempt, because only the provider sees its retries and
//! every call that shares it).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::deadline::Deadline;
use crate::events::DEFAULT_COLLECT_CAP;

/// Bounds applied to every call an executor runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Turns allowed when the skill sets no `max_turns`.
    pub default_max_turns: u32,
    /// No skill runs more turns than this, whatever it asks for.
    pub max_turns_cap: u32,
    /// No call runs longer than this, whatever the request or skill asks for.
    #[serde(with = "seconds")]
    pub timeout_cap: Duration,
    /// How many tool calls of one turn run at the same time.
    pub tool_concurrency: usize,
    /// Longest a single tool call may run (the call's deadline still applies).
    #[serde(with = "seconds")]
    pub tool_timeout: Duration,
    /// Tool output longer than this (UTF-8 bytes) is cut, with a marker, before the model
    /// sees it.
    pub max_tool_output_bytes: usize,
    /// Most events collected into `SkillResult.events`; past it `truncated` is set.
    pub event_collect_cap: usize,
    /// When set, a call stops with `skill_error` once its input + output tokens reach this;
    /// checked before each provider request.
    pub token_budget: Option<u64>,
    /// The same tool called with the same arguments this many times in a row is not run again:
    /// the model is told so and asked for its final answer (once, while a turn remains); a
    /// model that still repeats it stops the call with `skill_error` ("tool loop"). 0 disables
    /// the check.
    pub tool_loop_threshold: u32,
    /// Longest a terminal hook may run before it is abandoned.
    #[serde(with = "seconds")]
    pub hook_timeout: Duration,
    /// The most a call may cost, in USD by `[pricing]`; fails closed (see `budget`): a call
    /// whose model has no USD price is refused, a run whose cost becomes unknown stops. A
    /// skill's `a2e-max-cost-usd` may set a smaller cap.
    #[serde(deserialize_with = "positive_usd")]
    pub max_cost_usd: Option<f64>,
    /// Most calls of a tool (by name) in one run (`[limits.max_tool_calls] search = 3`); a call
    /// over it is answered with a tool error and not run.
    pub max_tool_calls: BTreeMap<String, u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            default_max_turns: 8,
            max_turns_cap: 32,
            timeout_cap: Duration::from_secs(600),
            tool_concurrency: 8,
            tool_timeout: Duration::from_secs(30),
            max_tool_output_bytes: 32 * 1024,
            event_collect_cap: DEFAULT_COLLECT_CAP,
            token_budget: None,
            tool_loop_threshold: 3,
            hook_timeout: Duration::from_secs(5),
            max_cost_usd: None,
            max_tool_calls: BTreeMap::new(),
        }
    }
}

impl Limits {
    /// The turn limit of a call: the skill's `max_turns`, else the host default, never above
    /// the cap and never below 1.
    pub fn max_turns(&self, skill_max_turns: Option<u32>) -> u32 {
        skill_max_turns
            .unwrap_or(self.default_max_turns)
            .min(self.max_turns_cap)
            .max(1)
    }

    /// The wall-clock budget of a call: the smallest of the request's `timeout`, the skill's
    /// `timeout_seconds` and the host cap. A request `timeout` of 0 means "no limit of its own"
    /// (the skill's and the host's still apply); so does a skill `timeout_seconds` of 0.
    pub fn call_timeout(&self, request_timeout_s: u64, skill_timeout_s: Option<u64>) -> Duration {
        let mut timeout = self.timeout_cap;
        for seconds in [Some(request_timeout_s), skill_timeout_s]
            .into_iter()
            .flatten()
            .filter(|s| *s > 0)
        {
            timeout = timeout.min(Duration::from_secs(seconds));
        }
        timeout
    }

    /// The deadline of a call starting now; see [`Limits::call_timeout`].
    pub fn call_deadline(&self, request_timeout_s: u64, skill_timeout_s: Option<u64>) -> Deadline {
        Deadline::after(self.call_timeout(request_timeout_s, skill_timeout_s))
    }

    /// The effective tool concurrency (at least 1).
    pub fn tool_concurrency(&self) -> usize {
        self.tool_concurrency.max(1)
    }
}

/// A cost cap: a finite amount above zero.
fn positive_usd<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let usd = f64::deserialize(d)?;
    if usd.is_finite() && usd > 0.0 {
        Ok(Some(usd))
    } else {
        Err(serde::de::Error::custom(format!(
            "expected an amount above 0, got {usd}"
        )))
    }
}

/// Durations as (fractional) seconds in configuration files.
mod seconds {
    use super::*;

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(|_| {
            serde::de::Error::custom(format!(
                "expected a non-negative number of seconds, got {secs}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_toml_keeps_defaults_for_the_rest() {
        let limits: Limits = toml::from_str("tool_timeout = 2.5\ntoken_budget = 1000").unwrap();
        assert_eq!(limits.tool_timeout, Duration::from_millis(2500));
        assert_eq!(limits.token_budget, Some(1000));
        assert_eq!(
            limits.default_max_turns,
            Limits::default().default_max_turns
        );
    }

    #[test]
    fn unknown_key_and_negative_duration_are_rejected() {
        assert!(toml::from_str::<Limits>("max_turn = 3").is_err());
        assert!(toml::from_str::<Limits>("timeout_cap = -1").is_err());
        assert!(toml::from_str::<Limits>("max_cost_usd = 0").is_err());
        assert!(toml::from_str::<Limits>("max_cost_usd = -0.5").is_err());
    }

    #[test]
    fn cost_cap_and_tool_call_limits_read_from_toml() {
        let limits: Limits =
            toml::from_str("max_cost_usd = 0.05\n[max_tool_calls]\nsearch = 3").unwrap();
        assert_eq!(limits.max_cost_usd, Some(0.05));
        assert_eq!(limits.max_tool_calls.get("search"), Some(&3));
    }

    #[test]
    fn max_turns_takes_the_skill_value_within_the_cap() {
        let limits = Limits {
            default_max_turns: 5,
            max_turns_cap: 10,
            ..Limits::default()
        };
        assert_eq!(limits.max_turns(None), 5);
        assert_eq!(limits.max_turns(Some(7)), 7);
        assert_eq!(limits.max_turns(Some(50)), 10);
        assert_eq!(limits.max_turns(Some(0)), 1);
    }

    #[test]
    fn call_timeout_is_the_smallest_of_request_skill_and_cap() {
        let limits = Limits {
            timeout_cap: Duration::from_secs(100),
            ..Limits::default()
        };
        assert_eq!(limits.call_timeout(60, None), Duration::from_secs(60));
        assert_eq!(limits.call_timeout(60, Some(20)), Duration::from_secs(20));
        assert_eq!(limits.call_timeout(600, None), Duration::from_secs(100));
        assert_eq!(limits.call_timeout(0, Some(0)), Duration::from_secs(100));
    }
}
