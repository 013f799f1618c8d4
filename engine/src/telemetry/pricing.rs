//! Prices per model and the cost estimate of a call's token usage.
//!
//! Prices are the host's (`[pricing.MODEL]` in `skillet.toml`), in a currency it names, per
//! million tokens; Skillet ships no price list because prices change and differ per contract.
//! A model without a price gets no estimate rather than a wrong one.
//!
//! Not here: counting tokens (the run loop sums what providers report).

use std::collections::BTreeMap;

use serde::Deserialize;

/// `[pricing.MODEL]`: what one million tokens of each kind cost.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Price of one million input (prompt) tokens that were not served from a cache.
    pub input_per_million: f64,
    /// Price of one million output (generated) tokens, reasoning included.
    pub output_per_million: f64,
    /// Price of one million cached input tokens (default: the input price).
    #[serde(default)]
    pub cached_input_per_million: Option<f64>,
    /// ISO 4217 code or any label the host uses (default `USD`).
    #[serde(default = "default_currency")]
    pub currency: String,
}

fn default_currency() -> String {
    "USD".to_owned()
}

/// Prices by model name (the model as sent to the provider, e.g. `gpt-4o-mini`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Pricing {
    models: BTreeMap<String, ModelPrice>,
}

/// What a call's tokens cost by the host's price list.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// The estimate, in `currency`: each kind of token times its price per million.
    pub amount: f64,
    /// The price list's currency.
    pub currency: String,
}

impl Pricing {
    /// A price list from `(model, price)` pairs.
    pub fn new(models: impl IntoIterator<Item = (String, ModelPrice)>) -> Self {
        Pricing {
            models: models.into_iter().collect(),
        }
    }

    /// Whether no model has a price.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The estimate for `model` (None when it has no price). `cached_input` is the part of
    /// `input` served from a cache.
    pub fn cost(&self, model: &str, input: u64, cached_input: u64, output: u64) -> Option<Cost> {
        let price = self.models.get(model)?;
        let cached = cached_input.min(input);
        let per = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
        let amount = per(input - cached, price.input_per_million)
            + per(
                cached,
                price
                    .cached_input_per_million
                    .unwrap_or(price.input_per_million),
            )
            + per(output, price.output_per_million);
        Some(Cost {
            amount,
            currency: price.currency.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices() -> Pricing {
        toml::from_str(
            r#"
            [gpt-test]
            input_per_million = 2.0
            output_per_million = 8.0
            cached_input_per_million = 0.5
            currency = "EUR"
            "#,
        )
        .unwrap()
    }

    #[test]
    fn cost_charges_cached_input_at_its_own_price() {
        let cost = prices()
            .cost("gpt-test", 1_000_000, 500_000, 250_000)
            .unwrap();
        assert!((cost.amount - (1.0 + 0.25 + 2.0)).abs() < 1e-9, "{cost:?}");
        assert_eq!(cost.currency, "EUR");
    }

    #[test]
    fn a_model_without_a_price_gets_no_estimate() {
        assert!(prices().cost("other", 10, 0, 10).is_none());
    }

    #[test]
    fn unknown_price_keys_are_rejected() {
        let bad = toml::from_str::<Pricing>(
            "[m]\ninput_per_million = 1.0\noutput_per_million = 1.0\ninput = 3\n",
        );
        assert!(bad.is_err());
    }
}
