//! `grading.json` and `benchmark.json` carry the field names skill-creator's viewer reads
//! (`references/schemas.md`), with our figures.

use serde_json::{Map, Value, json};

use super::*;
use crate::eval::check::{Check, CheckFailure, CheckKind, ExpectedOutcome};
use crate::eval::observation::{Observation, RunOutcome};
use crate::eval::report::EvalReport;
use crate::eval::runner::EvalPlan;

fn case() -> EvalCase {
    EvalCase {
        id: "1".into(),
        name: "notes".into(),
        arguments: Map::new(),
        expected_output: None,
        assertions: vec!["names Skillet".into(), "is short".into()],
        checks: vec![Check::Outcome(ExpectedOutcome::Success)],
    }
}

fn grade(text: &str, passed: bool) -> Grade {
    Grade {
        text: text.into(),
        passed,
        evidence: "seen".into(),
        graded: true,
    }
}

fn run(model: &str, repeat: u32, grades: [bool; 2], ms: u64, tokens: Option<u64>) -> RunRecord {
    let expectations = vec![
        grade("names Skillet", grades[0]),
        grade("is short", grades[1]),
    ];
    RunRecord {
        model: model.into(),
        case: "notes".into(),
        repeat,
        passed: grades.iter().all(|g| *g),
        failures: Vec::new(),
        expectations,
        judge_ms: Some(500),
        observation: Observation {
            outcome: RunOutcome::Succeeded,
            data: Some(json!({"summary": "Skillet."})),
            tool_calls: vec!["calculator".into(), "calculator".into()],
            turns: Some(2),
            repairs: 0,
            tokens,
            cost: None,
            latency_ms: ms,
            events_truncated: false,
            files: Vec::new(),
        },
    }
}

fn report(runs: Vec<RunRecord>) -> EvalReport {
    let plan = EvalPlan {
        skill: "summarize".into(),
        cases: vec![case()],
        repeat: 2,
        concurrency: 1,
        timeout_seconds: 0,
    };
    EvalReport::build(&plan, &["mock/m".to_owned()], runs)
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[test]
fn grading_json_has_the_viewers_fields_and_this_runs_figures() {
    let grading =
        serde_json::to_value(Grading::of(&run("mock/m", 1, [true, false], 2000, None))).unwrap();
    assert_eq!(
        keys(&grading),
        ["execution_metrics", "expectations", "summary", "timing"]
    );
    assert_eq!(
        grading["expectations"][1],
        json!({"text": "is short", "passed": false, "evidence": "seen", "graded": true})
    );
    assert_eq!(
        grading["summary"],
        json!({"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5})
    );
    assert_eq!(
        grading["execution_metrics"]["tool_calls"],
        json!({"calculator": 2})
    );
    assert_eq!(grading["execution_metrics"]["total_tool_calls"], 2);
    assert_eq!(grading["execution_metrics"]["total_steps"], 2);
    assert_eq!(grading["timing"]["executor_duration_seconds"], 2.0);
    assert_eq!(grading["timing"]["grader_duration_seconds"], 0.5);
    assert_eq!(grading["timing"]["total_duration_seconds"], 2.5);
}

#[test]
fn benchmark_json_pairs_both_configurations_with_mean_stddev_and_the_delta() {
    let with = report(vec![
        run("mock/m", 1, [true, true], 5000, Some(300)),
        run("mock/m", 2, [true, false], 2000, Some(100)),
    ]);
    let without = report(vec![
        run("mock/m", 1, [false, false], 1000, Some(50)),
        run("mock/m", 2, [false, true], 1000, None),
    ]);
    let benchmark = Benchmark::build(
        &[case()],
        &with.models[0],
        &without.models[0],
        ("summarize", Some("/skills/summarize".into())),
        Some("mock/judge".into()),
        "2026-12-06T00:00:00Z".into(),
    );
    let json: Value = serde_json::from_str(&benchmark.to_json()).unwrap();
    assert_eq!(keys(&json), ["metadata", "notes", "run_summary", "runs"]);
    assert_eq!(json["metadata"]["skill_name"], "summarize");
    assert_eq!(json["metadata"]["executor_model"], "mock/m");
    assert_eq!(json["metadata"]["analyzer_model"], "mock/judge");
    assert_eq!(json["metadata"]["evals_run"], json!([1]));
    assert_eq!(json["metadata"]["runs_per_configuration"], 2);

    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert_eq!(
        keys(&runs[0]),
        [
            "configuration",
            "eval_id",
            "eval_name",
            "expectations",
            "notes",
            "result",
            "run_number"
        ]
    );
    assert_eq!(runs[0]["configuration"], "with_skill");
    assert_eq!(runs[3]["configuration"], "without_skill");
    assert_eq!(
        keys(&runs[0]["result"]),
        [
            "errors",
            "failed",
            "pass_rate",
            "passed",
            "time_seconds",
            "tokens",
            "tool_calls",
            "total"
        ]
    );
    // One outcome check and two expectations per run.
    assert_eq!(runs[1]["result"]["passed"], 2);
    assert_eq!(runs[1]["result"]["total"], 3);
    assert_eq!(runs[3]["result"]["tokens"], Value::Null, "unknown, never 0");

    let summary = &json["run_summary"];
    assert_eq!(keys(summary), ["delta", "with_skill", "without_skill"]);
    assert_eq!(
        keys(&summary["with_skill"]["pass_rate"]),
        ["max", "mean", "min", "stddev"]
    );
    // with: 3/3 and 2/3 (0.6667, rounded per run as skill-creator does); without: 1/3 and 2/3.
    assert_eq!(summary["with_skill"]["pass_rate"]["mean"], 0.8334);
    assert_eq!(summary["without_skill"]["pass_rate"]["mean"], 0.5);
    assert_eq!(summary["with_skill"]["time_seconds"]["stddev"], 2.1213);
    assert_eq!(
        summary["delta"],
        json!({"pass_rate": "+0.33", "time_seconds": "+2.5", "tokens": "+150"})
    );
    let notes: Vec<&str> = json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("Flaky with_skill: notes")),
        "{notes:?}"
    );
}

#[test]
fn a_run_that_failed_its_outcome_passes_none_of_its_checks_or_expectations() {
    let mut failed = run("mock/m", 1, [true, true], 10, None);
    failed.passed = false;
    failed.failures = vec![CheckFailure {
        kind: CheckKind::Outcome,
        code: "schema_violation".into(),
        message: "never valid".into(),
    }];
    let with = report(vec![failed]);
    let benchmark = Benchmark::build(
        &[case()],
        &with.models[0],
        &with.models[0],
        ("summarize", None),
        None,
        "t".into(),
    );
    assert_eq!(benchmark.runs[0].result.passed, 0);
    assert_eq!(benchmark.runs[0].result.total, 3);
    assert_eq!(
        benchmark.runs[0].notes[0],
        "outcome (schema_violation): never valid"
    );
}
