//! The eval results in Anthropic skill-creator's file shapes, so its viewer and scripts read
//! them: `grading.json` per run (each expectation with `text`, `passed`, `evidence`; a summary;
//! execution metrics; timing) and `benchmark.json` per model (every run `with_skill` and
//! `without_skill`, mean ± stddev per configuration, and the delta).
//!
//! A run's `result` counts its case's machine checks and expectations together: `passed` of
//! `total`. A run that did not end as its case expects passes none of them (the other checks
//! would judge a run that did not do what the case describes). Tokens a server did not report
//! are `null`, never 0, and are left out of the means.
//!
//! Not here: running (`runner`), the statistics of the text table (`stats`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::case::EvalCase;
use super::judge::Grade;
use super::report::ModelReport;
use super::runner::RunRecord;

/// The with-skill configuration's name, as the skill-creator viewer groups runs.
pub const WITH_SKILL: &str = "with_skill";
/// The baseline configuration's name.
pub const WITHOUT_SKILL: &str = "without_skill";

/// `grading.json` of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Grading {
    /// The expectations as graded (empty without a judge).
    pub expectations: Vec<Grade>,
    /// Counts over the expectations.
    pub summary: GradingSummary,
    /// What the run did.
    pub execution_metrics: ExecutionMetrics,
    /// How long the run and its grading took.
    pub timing: Timing,
}

/// `grading.json`'s `summary`.
#[derive(Debug, Clone, Serialize)]
pub struct GradingSummary {
    /// Expectations passed.
    pub passed: u64,
    /// Expectations failed or ungraded.
    pub failed: u64,
    /// Expectations.
    pub total: u64,
    /// `passed / total` (0 with none).
    pub pass_rate: f64,
}

/// `grading.json`'s `execution_metrics`.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionMetrics {
    /// Calls per tool.
    pub tool_calls: BTreeMap<String, u64>,
    /// All tool calls.
    pub total_tool_calls: u64,
    /// Turns the run took (`null` when unknown).
    pub total_steps: Option<u32>,
    /// 1 when the run failed, else 0.
    pub errors_encountered: u64,
    /// Characters of the data and produced files' text.
    pub output_chars: u64,
}

/// `grading.json`'s `timing`.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// The run.
    pub executor_duration_seconds: f64,
    /// The judge's call (`null` without one).
    pub grader_duration_seconds: Option<f64>,
    /// Both.
    pub total_duration_seconds: f64,
}

impl Grading {
    /// The grading of `run`.
    pub fn of(run: &RunRecord) -> Grading {
        let (passed, total) = run.expectation_score();
        let seen = &run.observation;
        let mut tool_calls = BTreeMap::new();
        for name in &seen.tool_calls {
            *tool_calls.entry(name.clone()).or_insert(0) += 1;
        }
        let data_chars = match &seen.data {
            Some(Value::String(text)) => text.chars().count(),
            Some(data) => data.to_string().chars().count(),
            None => 0,
        };
        let file_chars: usize = seen
            .files
            .iter()
            .filter_map(|f| f.text.as_ref())
            .map(|t| t.chars().count())
            .sum();
        let executor = seconds(seen.latency_ms);
        let grader = run.judge_ms.map(seconds);
        Grading {
            expectations: run.expectations.clone(),
            summary: GradingSummary {
                passed: passed as u64,
                failed: (total - passed) as u64,
                total: total as u64,
                pass_rate: ratio(passed, total),
            },
            execution_metrics: ExecutionMetrics {
                total_tool_calls: seen.tool_calls.len() as u64,
                tool_calls,
                total_steps: seen.turns,
                errors_encountered: u64::from(seen.outcome.error_code().is_some()),
                output_chars: (data_chars + file_chars) as u64,
            },
            timing: Timing {
                executor_duration_seconds: executor,
                grader_duration_seconds: grader,
                total_duration_seconds: executor + grader.unwrap_or(0.0),
            },
        }
    }
}

/// `benchmark.json` of one model: its runs with the skill and without it.
#[derive(Debug, Clone, Serialize)]
pub struct Benchmark {
    /// What was run.
    pub metadata: BenchmarkMetadata,
    /// Every run of both configurations.
    pub runs: Vec<BenchmarkRun>,
    /// Mean ± stddev per configuration, and the delta.
    pub run_summary: BTreeMap<String, Value>,
    /// Observations: cases that do not tell the configurations apart, flaky cases.
    pub notes: Vec<String>,
}

/// `benchmark.json`'s `metadata`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkMetadata {
    /// The skill.
    pub skill_name: String,
    /// Its folder, when it has one.
    pub skill_path: Option<String>,
    /// `provider/model` that ran the cases.
    pub executor_model: String,
    /// `provider/model` that graded the expectations (`null` without a judge).
    pub analyzer_model: Option<String>,
    /// When the benchmark was made (RFC 3339, UTC).
    pub timestamp: String,
    /// The cases' ids.
    pub evals_run: Vec<Value>,
    /// Runs of each case per configuration.
    pub runs_per_configuration: u32,
}

/// One run in `benchmark.json`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkRun {
    /// The case's id (a number when it is one).
    pub eval_id: Value,
    /// The case's name.
    pub eval_name: String,
    /// [`WITH_SKILL`] or [`WITHOUT_SKILL`].
    pub configuration: &'static str,
    /// Which repeat (1-based).
    pub run_number: u32,
    /// The run's counts and figures.
    pub result: BenchmarkResult,
    /// Its graded expectations.
    pub expectations: Vec<Grade>,
    /// The checks that failed, one line each.
    pub notes: Vec<String>,
}

/// A run's `result` in `benchmark.json`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkResult {
    /// `passed / total`.
    pub pass_rate: f64,
    /// Checks and expectations that held.
    pub passed: u64,
    /// Checks and expectations that did not.
    pub failed: u64,
    /// The case's checks and expectations.
    pub total: u64,
    /// The run's duration.
    pub time_seconds: f64,
    /// Input + output tokens (`null` when the server reported none).
    pub tokens: Option<u64>,
    /// Tool calls made.
    pub tool_calls: u64,
    /// 1 when the run failed, else 0.
    pub errors: u64,
}

impl Benchmark {
    /// The benchmark of one model's runs with the skill (`with`) and without it (`without`);
    /// `judge` names the model that graded, `timestamp` is RFC 3339.
    pub fn build(
        cases: &[EvalCase],
        with: &ModelReport,
        without: &ModelReport,
        skill: (&str, Option<String>),
        judge: Option<String>,
        timestamp: String,
    ) -> Benchmark {
        let mut runs = Vec::new();
        for (configuration, report) in [(WITH_SKILL, with), (WITHOUT_SKILL, without)] {
            for run in &report.runs {
                if let Some(case) = cases.iter().find(|c| c.name == run.case) {
                    runs.push(BenchmarkRun::of(case, run, configuration));
                }
            }
        }
        let mut run_summary = BTreeMap::new();
        let summary = |configuration: &str| {
            let of: Vec<&BenchmarkRun> = runs
                .iter()
                .filter(|r| r.configuration == configuration)
                .collect();
            let pass: Vec<f64> = of.iter().map(|r| r.result.pass_rate).collect();
            let time: Vec<f64> = of.iter().map(|r| r.result.time_seconds).collect();
            let tokens: Vec<f64> = of
                .iter()
                .filter_map(|r| r.result.tokens.map(|t| t as f64))
                .collect();
            (stats(&pass), stats(&time), stats(&tokens))
        };
        let (with_pass, with_time, with_tokens) = summary(WITH_SKILL);
        let (without_pass, without_time, without_tokens) = summary(WITHOUT_SKILL);
        let delta = |a: &Option<Stats>, b: &Option<Stats>, decimals: usize| match (a, b) {
            (Some(a), Some(b)) => Value::String(format!("{:+.*}", decimals, a.mean - b.mean)),
            _ => Value::Null,
        };
        run_summary.insert(
            "delta".to_owned(),
            serde_json::json!({
                "pass_rate": delta(&with_pass, &without_pass, 2),
                "time_seconds": delta(&with_time, &without_time, 1),
                "tokens": delta(&with_tokens, &without_tokens, 0),
            }),
        );
        for (configuration, (pass, time, tokens)) in [
            (WITH_SKILL, (with_pass, with_time, with_tokens)),
            (WITHOUT_SKILL, (without_pass, without_time, without_tokens)),
        ] {
            run_summary.insert(
                configuration.to_owned(),
                serde_json::json!({"pass_rate": pass, "time_seconds": time, "tokens": tokens}),
            );
        }
        let notes = notes(cases, &runs, with, without);
        Benchmark {
            metadata: BenchmarkMetadata {
                skill_name: skill.0.to_owned(),
                skill_path: skill.1,
                executor_model: with.model.clone(),
                analyzer_model: judge,
                timestamp,
                evals_run: cases.iter().map(|c| id_value(&c.id)).collect(),
                runs_per_configuration: with.repeat,
            },
            runs,
            run_summary,
            notes,
        }
    }

    /// The benchmark as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

impl BenchmarkRun {
    fn of(case: &EvalCase, run: &RunRecord, configuration: &'static str) -> BenchmarkRun {
        let (expectations_passed, expectations) = run.expectation_score();
        let checks = case.checks.len();
        let checks_passed = if run.outcome_failed() {
            0
        } else {
            checks - run.failures.len().min(checks)
        };
        let expectations_passed = if run.outcome_failed() {
            0
        } else {
            expectations_passed
        };
        let total = checks + expectations;
        let passed = checks_passed + expectations_passed;
        let mut notes: Vec<String> = run
            .failures
            .iter()
            .map(|f| format!("{} ({}): {}", f.kind.as_str(), f.code, f.message))
            .collect();
        notes.extend(
            run.expectations
                .iter()
                .filter(|g| !g.graded)
                .map(|g| format!("{}: {}", g.text, g.evidence)),
        );
        BenchmarkRun {
            eval_id: id_value(&case.id),
            eval_name: case.name.clone(),
            configuration,
            run_number: run.repeat,
            result: BenchmarkResult {
                pass_rate: ratio(passed, total),
                passed: passed as u64,
                failed: (total - passed) as u64,
                total: total as u64,
                time_seconds: seconds(run.observation.latency_ms),
                tokens: run.observation.tokens,
                tool_calls: run.observation.tool_calls.len() as u64,
                errors: u64::from(run.observation.outcome.error_code().is_some()),
            },
            expectations: run.expectations.clone(),
            notes,
        }
    }
}

/// Mean, sample standard deviation, min and max of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
struct Stats {
    mean: f64,
    stddev: f64,
    min: f64,
    max: f64,
}

fn stats(values: &[f64]) -> Option<Stats> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let round = |v: f64| (v * 10_000.0).round() / 10_000.0;
    Some(Stats {
        mean: round(mean),
        stddev: round(stddev),
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// What a reader should know: expectations that pass (or fail) in both configurations do not
/// measure the skill; flaky cases.
fn notes(
    cases: &[EvalCase],
    runs: &[BenchmarkRun],
    with: &ModelReport,
    without: &ModelReport,
) -> Vec<String> {
    let mut notes = Vec::new();
    for case in cases {
        for text in &case.assertions {
            let rate = |configuration: &str| {
                let verdicts: Vec<bool> = runs
                    .iter()
                    .filter(|r| r.configuration == configuration && r.eval_name == case.name)
                    .flat_map(|r| r.expectations.iter().filter(|g| &g.text == text))
                    .map(|g| g.passed)
                    .collect();
                (!verdicts.is_empty())
                    .then(|| verdicts.iter().filter(|p| **p).count() as f64 / verdicts.len() as f64)
            };
            if let (Some(a), Some(b)) = (rate(WITH_SKILL), rate(WITHOUT_SKILL))
                && a == b
                && (a == 1.0 || a == 0.0)
            {
                notes.push(format!(
                    "Expectation {text:?} ({}) {} in both configurations: it does not tell \
                     the skill's value",
                    case.name,
                    if a == 1.0 { "passes" } else { "fails" }
                ));
            }
        }
    }
    for (configuration, report) in [(WITH_SKILL, with), (WITHOUT_SKILL, without)] {
        if let Some(repeats) = &report.repeats
            && !repeats.flaky.is_empty()
        {
            notes.push(format!(
                "Flaky {configuration}: {} (both passed and failed over {} runs)",
                repeats.flaky.join(", "),
                repeats.k
            ));
        }
    }
    notes
}

fn id_value(id: &str) -> Value {
    id.parse::<u64>()
        .map_or_else(|_| Value::String(id.to_owned()), Value::from)
}

fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        ((part as f64 / whole as f64) * 10_000.0).round() / 10_000.0
    }
}

#[cfg(test)]
#[path = "benchmark_tests.rs"]
mod tests;
