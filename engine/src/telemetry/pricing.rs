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
    /// Price of one million cached input tokens, read from the cache (default: the input
    /// price).
    #[serde(default)]
    pub cached_input_per_million: Option<f64>,
    /// Price of one million input tokens written to the cache (Anthropic charges writes above
    /// the input price; default: the input price).
    #[serde(default)]
    pub cache_write_input_per_million: Option<f64>,
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

/// The tokens of one response, as priced: `cache_read` and `cache_write` are parts of `input`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// Prompt tokens, cached ones included.
    pub input: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write: u64,
    /// Generated tokens.
    pub output: u64,
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

    /// The estimate for `model` (None when it has no price).
    pub fn cost(&self, model: &str, tokens: TokenCounts) -> Option<Cost> {
        let price = self.models.get(model)?;
        let read = tokens.cache_read.min(tokens.input);
        let written = tokens.cache_write.min(tokens.input - read);
        let per = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
        let or_input = |p: Option<f64>| p.unwrap_or(price.input_per_million);
        let amount = per(tokens.input - read - written, price.input_per_million)
            + per(read, or_input(price.cached_input_per_million))
            + per(written, or_input(price.cache_write_input_per_million))
            + per(tokens.output, price.output_per_million);
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

    fn tokens(input: u64, cache_read: u64, cache_write: u64, output: u64) -> TokenCounts {
        TokenCounts {
            input,
            cache_read,
            cache_write,
            output,
        }
    }

    #[test]
    fn cost_charges_cached_input_at_its_own_price() {
        let cost = prices()
            .cost("gpt-test", tokens(1_000_000, 500_000, 0, 250_000))
            .unwrap();
        assert!((cost.amount - (1.0 + 0.25 + 2.0)).abs() < 1e-9, "{cost:?}");
        assert_eq!(cost.currency, "EUR");
    }

    #[test]
    fn cache_writes_cost_their_own_price_or_else_the_input_price() {
        let mut list = prices();
        // 400k uncached, 500k read, 100k written, no output.
        let counts = tokens(1_000_000, 500_000, 100_000, 0);
        let at_input = list.cost("gpt-test", counts).unwrap().amount;
        assert!((at_input - (0.8 + 0.25 + 0.2)).abs() < 1e-9, "{at_input}");
        list.models
            .get_mut("gpt-test")
            .unwrap()
            .cache_write_input_per_million = Some(2.5);
        let priced = list.cost("gpt-test", counts).unwrap().amount;
        assert!((priced - (0.8 + 0.25 + 0.25)).abs() < 1e-9, "{priced}");
    }

    #[test]
    fn a_model_without_a_price_gets_no_estimate() {
        assert!(prices().cost("other", tokens(10, 0, 0, 10)).is_none());
    }

    #[test]
    fn unknown_price_keys_are_rejected() {
        let bad = toml::from_str::<Pricing>(
            "[m]\ninput_per_million = 1.0\noutput_per_million = 1.0\ninput = 3\n",
        );
        assert!(bad.is_err());
    }
}
