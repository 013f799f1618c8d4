//! The report of an eval: every run and the statistics per model and per case, written as JSON
//! (`--json-out`, the serde encoding of [`EvalReport`]) and as JUnit XML (`--junit`, one
//! `<testsuite>` per model, one `<testcase>` per run, a `<failure>` per failed run).
//!
//! The XML is written by hand (it is small and fixed): attribute and text values are escaped,
//! and characters XML 1.0 does not allow (control characters a model may emit) are replaced by
//! U+FFFD, so the file always parses.

use std::fmt::Write as _;

use serde::Serialize;

use super::benchmark::Benchmark;
use super::runner::{EvalPlan, RunRecord};
use super::stats::{Aggregate, Repeats};
use super::trigger::TriggerReport;

/// An eval's report.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// The skill evaluated.
    pub skill: String,
    /// Whether every run of every model passed.
    pub passed: bool,
    /// One entry per model, in the order given.
    pub models: Vec<ModelReport>,
    /// With `--baseline`: the same models and cases run without the skill's instructions
    /// (they do not count in `passed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Vec<ModelReport>>,
    /// With `--baseline`: per model, both configurations in skill-creator's `benchmark.json`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub benchmarks: Vec<Benchmark>,
    /// With `--trigger`: per model, whether it picked the skill for each query of the set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trigger: Vec<TriggerReport>,
}

/// One model's results.
#[derive(Debug, Clone, Serialize)]
pub struct ModelReport {
    /// `provider/model`.
    pub model: String,
    /// The `provider/model` that graded its expectations, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// Runs per case.
    pub repeat: u32,
    /// Over all its runs.
    pub summary: Aggregate,
    /// With more than one run per case: pass@k, pass^k and the flaky cases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// Per case, in file order.
    pub cases: Vec<CaseReport>,
    /// Every run, ordered by case and repeat.
    pub runs: Vec<RunRecord>,
}

/// One case's results on one model.
#[derive(Debug, Clone, Serialize)]
pub struct CaseReport {
    /// The case's name.
    pub case: String,
    /// Its natural-language expectations when no judge graded them (`--no-judge`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ungraded_assertions: Vec<String>,
    /// Over its runs.
    pub summary: Aggregate,
    /// Whether its runs both passed and failed.
    pub flaky: bool,
}

impl EvalReport {
    /// The report as a host keeps it (`skillet_core::workbench::EvalDocument`): the document
    /// `--json-out` writes, with the skill and the verdict beside it.
    pub fn document(&self) -> skillet_core::workbench::EvalDocument {
        skillet_core::workbench::EvalDocument {
            skill: self.skill.clone(),
            passed: self.passed,
            report: serde_json::to_value(self).unwrap_or(serde_json::Value::Null),
        }
    }

    /// Builds the report of `records` (as [`run_plan`](super::run_plan) returns them) for the
    /// models labelled `models`.
    pub fn build(plan: &EvalPlan, models: &[String], records: Vec<RunRecord>) -> EvalReport {
        let models: Vec<ModelReport> = models
            .iter()
            .map(|model| {
                let runs: Vec<RunRecord> = records
                    .iter()
                    .filter(|r| &r.model == model)
                    .cloned()
                    .collect();
                let verdicts: Vec<(String, Vec<bool>)> = plan
                    .cases
                    .iter()
                    .map(|case| {
                        let of_case = runs.iter().filter(|r| r.case == case.name);
                        (case.name.clone(), of_case.map(|r| r.passed).collect())
                    })
                    .collect();
                let cases = plan
                    .cases
                    .iter()
                    .zip(&verdicts)
                    .map(|(case, (_, passed))| {
                        let of_case = runs.iter().filter(|r| r.case == case.name);
                        let judged = of_case.clone().any(|r| !r.expectations.is_empty());
                        CaseReport {
                            case: case.name.clone(),
                            ungraded_assertions: if judged {
                                Vec::new()
                            } else {
                                case.assertions.clone()
                            },
                            summary: Aggregate::of(of_case),
                            flaky: passed.iter().any(|p| *p) && passed.iter().any(|p| !*p),
                        }
                    })
                    .collect();
                ModelReport {
                    model: model.clone(),
                    judge: None,
                    repeat: plan.repeat.max(1),
                    summary: Aggregate::of(&runs),
                    repeats: Repeats::of(plan.repeat.max(1), &verdicts),
                    cases,
                    runs,
                }
            })
            .collect();
        EvalReport {
            skill: plan.skill.clone(),
            passed: models.iter().all(|m| m.summary.passed == m.summary.runs),
            models,
            baseline: None,
            benchmarks: Vec::new(),
            trigger: Vec::new(),
        }
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

/// The report as a JUnit XML document.
pub fn write_junit(report: &EvalReport) -> String {
    let seconds = |runs: &[RunRecord]| {
        runs.iter()
            .map(|r| r.observation.latency_ms as f64 / 1000.0)
            .sum::<f64>()
    };
    let all_runs: Vec<RunRecord> = report.models.iter().flat_map(|m| m.runs.clone()).collect();
    let failures = all_runs.iter().filter(|r| !r.passed).count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{:.3}\">",
        escape(&format!("skillet eval {}", report.skill)),
        all_runs.len(),
        seconds(&all_runs),
    );
    for model in &report.models {
        let failed = model.runs.iter().filter(|r| !r.passed).count();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"0\" time=\"{:.3}\">",
            escape(&format!("{} on {}", report.skill, model.model)),
            model.runs.len(),
            seconds(&model.runs),
        );
        let classname = escape(&format!("{}.{}", report.skill, model.model));
        for run in &model.runs {
            let name = escape(&format!("{} #{}", run.case, run.repeat));
            let time = run.observation.latency_ms as f64 / 1000.0;
            if run.passed {
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{classname}\" name=\"{name}\" time=\"{time:.3}\"/>"
                );
                continue;
            }
            let _ = writeln!(
                xml,
                "    <testcase classname=\"{classname}\" name=\"{name}\" time=\"{time:.3}\">"
            );
            // (code, message, detail line): the checks that failed, then the expectations.
            let mut details: Vec<(String, String, String)> = run
                .failures
                .iter()
                .map(|f| {
                    let line = format!("{} ({}): {}", f.kind.as_str(), f.code, f.message);
                    (f.code.clone(), f.message.clone(), line)
                })
                .collect();
            for grade in run.expectations.iter().filter(|g| !g.passed) {
                let code = if grade.graded {
                    "expectation"
                } else {
                    "ungraded"
                };
                let message = format!("{} — {}", grade.text, grade.evidence);
                details.push((
                    code.to_owned(),
                    message.clone(),
                    format!("{code}: {message}"),
                ));
            }
            let (first_code, first_message, _) = details.first().cloned().unwrap_or_default();
            let lines: Vec<&str> = details.iter().map(|(_, _, line)| line.as_str()).collect();
            let _ = writeln!(
                xml,
                "      <failure type=\"{}\" message=\"{}\">{}</failure>",
                escape(&first_code),
                escape(&first_message),
                escape(&format!(
                    "{}\ntool calls: {}",
                    lines.join("\n"),
                    run.observation.trace_line()
                )),
            );
            let _ = writeln!(xml, "    </testcase>");
        }
        let _ = writeln!(xml, "  </testsuite>");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Escapes `text` for an XML attribute value or text node.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // In attributes a raw newline or tab would be normalized to a space when read.
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if allowed_in_xml(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// XML 1.0's `Char` production.
fn allowed_in_xml(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
