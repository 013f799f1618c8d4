//! The statistics of a set of runs: the pass rate with its 95 % Wilson score interval, median
//! and p95 of turns, tokens and latency, the mean cost, the repair rate and the failure codes.
//!
//! A figure a run did not report (tokens or cost a server sent no usage for, turns of a
//! rejected call) is left out of that figure's statistics, and the number of runs it is
//! computed over is kept beside it: a figure no run reported is `None` (shown `—`), never 0.
//!
//! Why Wilson: with the few runs an eval makes (3, 10), the normal approximation gives
//! intervals outside [0, 1] and a zero-width interval at 0 % or 100 %; Wilson's stays inside
//! and says how little three passes out of three prove (44–100 %).

use std::collections::BTreeMap;

use serde::Serialize;

use super::runner::RunRecord;

/// z for a two-sided 95 % interval.
const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `successes` out of `trials` at normal quantile `z` (1.96 for
/// 95 %); `None` for no trials.
pub(super) fn wilson_interval(successes: u64, trials: u64, z: f64) -> Option<(f64, f64)> {
    if trials == 0 {
        return None;
    }
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = z / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((center - half).max(0.0), (center + half).min(1.0)))
}

/// The `p`-th percentile (0–100) of `sorted` (ascending), interpolated linearly between the
/// closest ranks (the median of an even count is the mean of the middle two); `None` when empty.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = p.clamp(0.0, 100.0) / 100.0 * last as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let weight = position - below as f64;
    Some(sorted[below] + (sorted[above] - sorted[below]) * weight)
}

/// The median and p95 of a figure, and how many runs reported it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// The 50th percentile.
    pub median: f64,
    /// The 95th percentile.
    pub p95: f64,
    /// The runs that reported the figure.
    pub runs: u64,
}

impl Spread {
    /// The spread of `values` (any order); `None` when there are none.
    pub fn of(mut values: Vec<f64>) -> Option<Spread> {
        values.sort_by(f64::total_cmp);
        Some(Spread {
            median: percentile(&values, 50.0)?,
            p95: percentile(&values, 95.0)?,
            runs: values.len() as u64,
        })
    }
}

/// The mean estimated cost of the runs that have one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeanCost {
    /// Mean per run.
    pub amount: f64,
    /// The price list's currency.
    pub currency: String,
    /// How many runs had a cost estimate and went into the mean (runs without one are left
    /// out, not counted as free).
    pub runs: u64,
}

/// The statistics of a set of runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aggregate {
    /// Runs made.
    pub runs: u64,
    /// Runs that passed every check.
    pub passed: u64,
    /// `passed / runs` (0 for no runs).
    pub pass_rate: f64,
    /// The 95 % Wilson score interval of the pass rate, `[low, high]`.
    pub pass_rate_ci95: Option<[f64; 2]>,
    /// Turns per run.
    pub turns: Option<Spread>,
    /// Input + output tokens per run.
    pub tokens: Option<Spread>,
    /// Mean cost per run.
    pub cost: Option<MeanCost>,
    /// Latency per run, in milliseconds.
    pub latency_ms: Option<Spread>,
    /// Share of runs (0–1) in which the model had to repair its final answer at least once.
    pub repair_rate: f64,
    /// How many runs failed with each code (the run's error code for an unexpected outcome,
    /// the check's kind otherwise, `expectation` for an expectation the judge failed and
    /// `ungraded` for one it could not grade; a run counts once per code).
    pub failure_codes: BTreeMap<String, u64>,
    /// The judged expectations over these runs; `None` when none was judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations: Option<ExpectationScore>,
}

/// How many judged expectations passed, over a set of runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ExpectationScore {
    /// Expectations the judge passed.
    pub passed: u64,
    /// Expectations graded or left ungraded (an ungraded one counts as not passed).
    pub total: u64,
    /// `passed / total`.
    pub pass_rate: f64,
}

impl Aggregate {
    /// The statistics of `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> Aggregate {
        let records: Vec<&RunRecord> = records.into_iter().collect();
        let runs = records.len() as u64;
        let passed = records.iter().filter(|r| r.passed).count() as u64;
        let figure = |pick: &dyn Fn(&RunRecord) -> Option<f64>| {
            Spread::of(records.iter().filter_map(|r| pick(r)).collect())
        };
        let mut failure_codes = BTreeMap::new();
        for record in &records {
            let mut codes: Vec<&str> = record.failures.iter().map(|f| f.code.as_str()).collect();
            for grade in record.expectations.iter().filter(|g| !g.passed) {
                codes.push(if grade.graded {
                    "expectation"
                } else {
                    "ungraded"
                });
            }
            codes.sort_unstable();
            codes.dedup();
            for code in codes {
                *failure_codes.entry(code.to_owned()).or_insert(0) += 1;
            }
        }
        let repaired = records.iter().filter(|r| r.observation.repairs > 0).count();
        let (judged_passed, judged) = records
            .iter()
            .map(|r| r.expectation_score())
            .fold((0, 0), |(p, t), (rp, rt)| (p + rp as u64, t + rt as u64));
        Aggregate {
            runs,
            passed,
            pass_rate: if runs == 0 {
                0.0
            } else {
                passed as f64 / runs as f64
            },
            pass_rate_ci95: wilson_interval(passed, runs, Z_95).map(|(lo, hi)| [lo, hi]),
            turns: figure(&|r| r.observation.turns.map(f64::from)),
            tokens: figure(&|r| r.observation.tokens.map(|t| t as f64)),
            cost: mean_cost(&records),
            latency_ms: figure(&|r| Some(r.observation.latency_ms as f64)),
            repair_rate: if runs == 0 {
                0.0
            } else {
                repaired as f64 / runs as f64
            },
            failure_codes,
            expectations: (judged > 0).then(|| ExpectationScore {
                passed: judged_passed,
                total: judged,
                pass_rate: judged_passed as f64 / judged as f64,
            }),
        }
    }
}

/// Over repeated runs of each case (k = the repeats): the share of cases that passed at least
/// once (pass@k), the share that passed every time (pass^k), and the cases with mixed results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repeats {
    /// Runs per case.
    pub k: u32,
    /// Share of cases with at least one passing run.
    pub pass_at_k: f64,
    /// Share of cases whose every run passed.
    pub pass_all_k: f64,
    /// Cases with both passing and failing runs, in case order.
    pub flaky: Vec<String>,
}

impl Repeats {
    /// The figures of `cases` (each case's name and its runs' verdicts); `None` when `k` is 1
    /// or there are no cases.
    pub fn of(k: u32, cases: &[(String, Vec<bool>)]) -> Option<Repeats> {
        if k < 2 || cases.is_empty() {
            return None;
        }
        let share = |n: usize| n as f64 / cases.len() as f64;
        let any = cases.iter().filter(|(_, v)| v.iter().any(|p| *p)).count();
        let all = cases
            .iter()
            .filter(|(_, v)| !v.is_empty() && v.iter().all(|p| *p))
            .count();
        let flaky = cases
            .iter()
            .filter(|(_, v)| v.iter().any(|p| *p) && v.iter().any(|p| !*p))
            .map(|(name, _)| name.clone())
            .collect();
        Some(Repeats {
            k,
            pass_at_k: share(any),
            pass_all_k: share(all),
            flaky,
        })
    }
}

/// The mean over the runs with a cost, when they share one currency.
fn mean_cost(records: &[&RunRecord]) -> Option<MeanCost> {
    let costs: Vec<_> = records
        .iter()
        .filter_map(|r| r.observation.cost.as_ref())
        .collect();
    let currency = &costs.first()?.currency;
    if costs.iter().any(|c| &c.currency != currency) {
        return None;
    }
    let total: f64 = costs.iter().map(|c| c.amount).sum();
    Some(MeanCost {
        amount: total / costs.len() as f64,
        currency: currency.clone(),
        runs: costs.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn wilson_interval_matches_published_values() {
        // Reference values: Wilson (1927), as tabulated by Newcombe (1998) and `statsmodels`
        // `proportion_confint(method="wilson")`.
        let (lo, hi) = wilson_interval(5, 10, Z_95).unwrap();
        assert!(close(lo, 0.2366) && close(hi, 0.7634), "{lo} {hi}");
        let (lo, hi) = wilson_interval(0, 10, Z_95).unwrap();
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        let (lo, hi) = wilson_interval(10, 10, Z_95).unwrap();
        assert!(close(lo, 0.7225) && close(hi, 1.0), "{lo} {hi}");
        let (lo, hi) = wilson_interval(3, 3, Z_95).unwrap();
        assert!(close(lo, 0.4385) && close(hi, 1.0), "{lo} {hi}");
        let (lo, hi) = wilson_interval(81, 263, Z_95).unwrap();
        assert!(close(lo, 0.2553) && close(hi, 0.3662), "{lo} {hi}");
    }

    #[test]
    fn wilson_interval_of_no_trials_is_none() {
        assert_eq!(wilson_interval(0, 0, Z_95), None);
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let values = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&values, 50.0), Some(2.5));
        assert_eq!(percentile(&values, 0.0), Some(1.0));
        assert_eq!(percentile(&values, 100.0), Some(4.0));
        assert!(close(percentile(&values, 95.0).unwrap(), 3.85));
        assert_eq!(percentile(&[7.0], 95.0), Some(7.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn repeats_count_cases_passed_once_passed_always_and_flaky() {
        let cases = [
            ("always".to_owned(), vec![true, true, true]),
            ("once".to_owned(), vec![false, true, false]),
            ("never".to_owned(), vec![false, false, false]),
            ("twice".to_owned(), vec![true, false, true]),
        ];
        let repeats = Repeats::of(3, &cases).unwrap();
        assert_eq!(repeats.pass_at_k, 0.75);
        assert_eq!(repeats.pass_all_k, 0.25);
        assert_eq!(repeats.flaky, ["once", "twice"]);
        assert_eq!(
            Repeats::of(1, &cases),
            None,
            "one run per case has no pass@k"
        );
    }

    #[test]
    fn spread_sorts_its_values_first() {
        let spread = Spread::of(vec![3.0, 1.0, 2.0]).unwrap();
        assert_eq!(spread.median, 2.0);
        assert_eq!(spread.runs, 3);
        assert_eq!(Spread::of(Vec::new()), None);
    }
}
