//! [`RunBudget`]: what one run may still spend — its cost cap and its per-tool call counts —
//! checked at the two places a run spends: before each provider request and before each tool
//! call.
//!
//! # Cost cap (`[limits] max_cost_usd`, skill `a2e-max-cost-usd`; the smaller applies)
//! The cap fails closed: a cost that cannot be known is treated as over the cap.
//! - **Before the first turn** (preflight, nothing sent): the call's model must have a price in
//!   USD in `[pricing]`; otherwise the call is refused with `runtime_error` (not retryable: the
//!   host's price list has to change), see [`RunBudget::check_priced`].
//! - **Before every later turn**: the turns so far are priced; once they cost the cap or more,
//!   or their cost is unknown (a turn without usage, a model without a USD price — a fallback
//!   that answered, say), the run stops with `skill_error` and the last output, as the token
//!   budget does. The turn that crosses the cap is the last one: its cost is known only after
//!   it ran, so a run can end above its cap by at most one turn.
//!
//! # Tool calls (`[limits.max_tool_calls]`, by tool name)
//! A tool called more often in one run than its limit is not run: the model gets a tool error
//! saying so (it can answer without it), the call is counted as a tool error in the metrics.
//! Calls refused for another reason (unknown tool, bad arguments) do not use up the allowance.
//!
//! Not here: the limits' values (`limits`), the token budget (the turn loop), prices
//! (`telemetry::pricing`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::protocol::{CostEstimate, ErrorCode, ProtocolError, TurnUsage};
use crate::telemetry::{Pricing, TokenCounts};

use super::Limits;

/// The currency the cost cap is in.
const CAP_CURRENCY: &str = "USD";

/// One run's cost cap and tool-call counts.
pub(crate) struct RunBudget<'a> {
    cost_cap: Option<CostCap<'a>>,
    tool_limits: &'a BTreeMap<String, u32>,
    tool_calls: Mutex<HashMap<String, u32>>,
}

struct CostCap<'a> {
    usd: f64,
    /// Which setting the cap came from, for messages.
    source: &'static str,
    pricing: &'a Pricing,
}

impl<'a> RunBudget<'a> {
    /// The budget of a run under `limits` of a skill capped at `skill_cap` (USD).
    pub(crate) fn new(limits: &'a Limits, skill_cap: Option<f64>, pricing: &'a Pricing) -> Self {
        let host = limits
            .max_cost_usd
            .map(|usd| (usd, "[limits] max_cost_usd"));
        let skill = skill_cap.map(|usd| (usd, "the skill's a2e-max-cost-usd"));
        let cost_cap = match (host, skill) {
            (Some(h), Some(s)) => Some(if s.0 < h.0 { s } else { h }),
            (one, other) => one.or(other),
        }
        .map(|(usd, source)| CostCap {
            usd,
            source,
            pricing,
        });
        RunBudget {
            cost_cap,
            tool_limits: &limits.max_tool_calls,
            tool_calls: Mutex::new(HashMap::new()),
        }
    }

    /// Refuses a run whose model has no USD price while a cost cap applies (fail closed).
    pub(crate) fn check_priced(&self, model: &str) -> Result<(), ProtocolError> {
        let Some(cap) = &self.cost_cap else {
            return Ok(());
        };
        match cap.pricing.cost(model, TokenCounts::default()) {
            Some(cost) if cost.currency == CAP_CURRENCY => Ok(()),
            Some(cost) => Err(refusal(format!(
                "{} is {} USD but model `{model}` is priced in {}: the cost cap cannot be \
                 checked, so the call is refused",
                cap.source, cap.usd, cost.currency
            ))),
            None => Err(refusal(format!(
                "{} is {} USD but model `{model}` has no price in [pricing]: the cost cap \
                 cannot be checked, so the call is refused (add [pricing.\"{model}\"])",
                cap.source, cap.usd
            ))),
        }
    }

    /// Before a turn after the first: why the run must stop, if it must.
    pub(crate) fn before_turn(&self, turns: &[TurnUsage]) -> Option<String> {
        let cap = self.cost_cap.as_ref()?;
        if turns.is_empty() {
            return None;
        }
        match estimate_cost(cap.pricing, turns) {
            Some(cost) if cost.currency == CAP_CURRENCY && cost.amount < cap.usd => None,
            Some(cost) if cost.currency == CAP_CURRENCY => Some(format!(
                "cost cap of {} USD ({}) reached after {} turns ({:.6} USD spent)",
                cap.usd,
                cap.source,
                turns.len(),
                cost.amount
            )),
            _ => Some(format!(
                "cost cap of {} USD ({}): the cost of the {} turns so far is unknown (a turn \
                 without usage, or a model without a USD price), so the run stops",
                cap.usd,
                cap.source,
                turns.len()
            )),
        }
    }

    /// Counts a call of `tool`; an error for the model when it is over the tool's limit.
    pub(crate) fn take_tool_call(&self, tool: &str) -> Result<(), String> {
        let Some(&limit) = self.tool_limits.get(tool) else {
            return Ok(());
        };
        let mut calls = self
            .tool_calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let used = calls.entry(tool.to_owned()).or_insert(0);
        if *used >= limit {
            return Err(format!(
                "`{tool}` may be called at most {limit} time{} per run and that is used up; \
                 this call was not run — answer with what you have",
                if limit == 1 { "" } else { "s" }
            ));
        }
        *used += 1;
        Ok(())
    }
}

fn refusal(message: String) -> ProtocolError {
    ProtocolError::new(ErrorCode::RuntimeError, message).with_retryable(false)
}

/// The cost of every turn priced by the host; `None` unless every model used has a price.
pub(super) fn estimate_cost(pricing: &Pricing, turns: &[TurnUsage]) -> Option<CostEstimate> {
    if pricing.is_empty() || turns.is_empty() {
        return None;
    }
    let mut total: Option<CostEstimate> = None;
    for turn in turns {
        // A turn of unknown usage has an unknown cost, and so has the call.
        let cost = pricing.cost(
            &turn.model,
            TokenCounts {
                input: turn.input_tokens?,
                cache_read: turn.cached_input_tokens.unwrap_or(0),
                cache_write: turn.cache_creation_input_tokens.unwrap_or(0),
                output: turn.output_tokens?,
            },
        )?;
        match &mut total {
            None => {
                total = Some(CostEstimate {
                    amount: cost.amount,
                    currency: cost.currency,
                });
            }
            // Prices in different currencies do not add up.
            Some(sum) if sum.currency != cost.currency => return None,
            Some(sum) => sum.amount += cost.amount,
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pricing() -> Pricing {
        toml::from_str(
            r#"
            [priced]
            input_per_million = 1000000.0
            output_per_million = 1000000.0
            [euro]
            input_per_million = 1.0
            output_per_million = 1.0
            currency = "EUR"
            "#,
        )
        .unwrap()
    }

    fn turn(model: &str, tokens: Option<u64>) -> TurnUsage {
        TurnUsage {
            turn: 1,
            model: model.to_owned(),
            input_tokens: tokens,
            output_tokens: tokens,
            ..TurnUsage::default()
        }
    }

    fn capped(usd: f64) -> Limits {
        Limits {
            max_cost_usd: Some(usd),
            ..Limits::default()
        }
    }

    #[test]
    fn an_unpriced_model_is_refused_only_under_a_cap() {
        let pricing = pricing();
        let limits = capped(1.0);
        let budget = RunBudget::new(&limits, None, &pricing);
        let refused = budget.check_priced("unpriced").unwrap_err();
        assert_eq!(refused.code, ErrorCode::RuntimeError);
        assert!(!refused.retryable);
        assert!(refused.message.contains("no price"), "{}", refused.message);
        assert!(budget.check_priced("euro").is_err(), "another currency");
        assert!(budget.check_priced("priced").is_ok());
        let uncapped = Limits::default();
        let budget = RunBudget::new(&uncapped, None, &pricing);
        assert!(budget.check_priced("unpriced").is_ok());
    }

    #[test]
    fn the_smaller_of_host_and_skill_caps_applies_and_stops_once_reached() {
        let pricing = pricing();
        let limits = capped(100.0);
        // One token each way costs 2 USD at this price.
        let budget = RunBudget::new(&limits, Some(3.0), &pricing);
        assert_eq!(budget.before_turn(&[]), None);
        assert_eq!(budget.before_turn(&[turn("priced", Some(1))]), None);
        let stop = budget
            .before_turn(&[turn("priced", Some(1)), turn("priced", Some(1))])
            .unwrap();
        assert!(stop.contains("cost cap of 3 USD"), "{stop}");
        assert!(stop.contains("a2e-max-cost-usd"), "{stop}");
    }

    #[test]
    fn an_unknown_cost_so_far_stops_the_run() {
        let pricing = pricing();
        let limits = capped(100.0);
        let budget = RunBudget::new(&limits, None, &pricing);
        for turns in [vec![turn("priced", None)], vec![turn("unpriced", Some(1))]] {
            let stop = budget.before_turn(&turns).unwrap();
            assert!(stop.contains("unknown"), "{stop}");
        }
    }

    #[test]
    fn a_tool_over_its_limit_is_refused_and_others_are_not_counted() {
        let pricing = Pricing::default();
        let limits = Limits {
            max_tool_calls: [("search".to_owned(), 2)].into_iter().collect(),
            ..Limits::default()
        };
        let budget = RunBudget::new(&limits, None, &pricing);
        assert!(budget.take_tool_call("search").is_ok());
        assert!(budget.take_tool_call("search").is_ok());
        let refused = budget.take_tool_call("search").unwrap_err();
        assert!(refused.contains("at most 2 times per run"), "{refused}");
        for _ in 0..10 {
            assert!(budget.take_tool_call("other").is_ok());
        }
    }
}
