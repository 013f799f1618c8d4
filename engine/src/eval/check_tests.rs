//! Each check kind, holding and failing.

use serde_json::{Value, json};

use super::*;
use crate::eval::observation::{Observation, ObservedFile, RunOutcome};
use crate::protocol::CostEstimate;

fn run(data: Value) -> Observation {
    Observation {
        outcome: RunOutcome::Succeeded,
        data: Some(data),
        tool_calls: vec!["calculator".into(), "calculator".into(), "read_file".into()],
        turns: Some(3),
        repairs: 0,
        tokens: Some(120),
        cost: Some(CostEstimate {
            amount: 0.002,
            currency: "USD".into(),
        }),
        latency_ms: 10,
        events_truncated: false,
        files: Vec::new(),
    }
}

fn failed_run(code: ErrorCode) -> Observation {
    Observation {
        outcome: RunOutcome::Failed {
            code,
            message: "it broke".into(),
        },
        ..run(json!(null))
    }
}

fn pointer(pointer: &str, test: PointerTest) -> Check {
    Check::Output {
        pointer: pointer.into(),
        test,
    }
}

fn report() -> Value {
    json!({"total": 234.8, "currency": "EUR", "notes": "Lodging is most", "tags": ["a", "b"],
           "meta": {"k": 1, "j": 2}, "nothing": null})
}

fn message(check: &Check, seen: &Observation) -> String {
    check
        .judge(seen)
        .expect_err("the check should fail")
        .message
}

#[test]
fn outcome_success_holds_on_success_and_fails_with_the_runs_code() {
    let check = Check::Outcome(ExpectedOutcome::Success);
    assert!(check.judge(&run(report())).is_ok());
    let failure = check
        .judge(&failed_run(ErrorCode::SchemaViolation))
        .unwrap_err();
    assert_eq!(failure.code, "schema_violation");
    assert!(failure.message.contains("it broke"), "{}", failure.message);
}

#[test]
fn outcome_error_code_holds_on_that_code_only() {
    let check = Check::Outcome(ExpectedOutcome::Code(ErrorCode::SchemaViolation));
    assert!(check.judge(&failed_run(ErrorCode::SchemaViolation)).is_ok());
    assert_eq!(
        check
            .judge(&failed_run(ErrorCode::Timeout))
            .unwrap_err()
            .code,
        "timeout"
    );
    assert_eq!(check.judge(&run(report())).unwrap_err().code, "succeeded");
    let any = Check::Outcome(ExpectedOutcome::AnyFailure);
    assert!(any.judge(&failed_run(ErrorCode::Timeout)).is_ok());
    assert!(any.judge(&run(report())).is_err());
}

#[test]
fn schema_check_validates_the_data() {
    let schema = crate::schema::CompiledSchema::compile(&json!({
        "type": "object", "required": ["total"],
        "properties": {"total": {"type": "number", "minimum": 0}}
    }))
    .unwrap();
    let check = Check::Schema {
        schema,
        origin: "evals/total.schema.json".into(),
    };
    assert!(check.judge(&run(report())).is_ok());
    let why = message(&check, &run(json!({"total": -1})));
    assert!(
        why.contains("evals/total.schema.json") && why.contains("/total"),
        "{why}"
    );
    assert_eq!(check.kind(), CheckKind::Schema);
}

#[test]
fn equals_compares_json_values_numbers_by_value() {
    assert!(
        pointer("/total", PointerTest::Equals(json!(234.8)))
            .judge(&run(report()))
            .is_ok()
    );
    assert!(
        pointer("/meta", PointerTest::Equals(json!({"j": 2.0, "k": 1})))
            .judge(&run(report()))
            .is_ok()
    );
    assert!(
        pointer("/nothing", PointerTest::Equals(Value::Null))
            .judge(&run(report()))
            .is_ok()
    );
    let why = message(
        &pointer("/currency", PointerTest::Equals(json!("USD"))),
        &run(report()),
    );
    assert_eq!(why, "/currency: \"EUR\" is not \"USD\"");
}

#[test]
fn a_missing_pointer_fails_naming_it() {
    let why = message(
        &pointer("/absent", PointerTest::Equals(json!(1))),
        &run(report()),
    );
    assert_eq!(why, "/absent: no value there");
}

#[test]
fn contains_works_on_strings_arrays_and_objects() {
    let seen = run(report());
    assert!(
        pointer("/notes", PointerTest::Contains(json!("Lodging")))
            .judge(&seen)
            .is_ok()
    );
    assert!(
        pointer("/tags", PointerTest::Contains(json!("b")))
            .judge(&seen)
            .is_ok()
    );
    assert!(
        pointer("/meta", PointerTest::Contains(json!({"k": 1})))
            .judge(&seen)
            .is_ok()
    );
    assert!(
        message(
            &pointer("/notes", PointerTest::Contains(json!("Train"))),
            &seen
        )
        .contains("does not contain \"Train\"")
    );
    assert!(
        pointer("/tags", PointerTest::Contains(json!("z")))
            .judge(&seen)
            .is_err()
    );
    assert!(
        pointer("/meta", PointerTest::Contains(json!({"k": 2})))
            .judge(&seen)
            .is_err()
    );
    assert!(
        message(&pointer("/total", PointerTest::Contains(json!("2"))), &seen)
            .contains("a number cannot contain a string")
    );
}

#[test]
fn regex_matches_strings_only() {
    let seen = run(report());
    let three_letters = regex::Regex::new("^[A-Z]{3}$").unwrap();
    assert!(
        pointer("/currency", PointerTest::Regex(three_letters.clone()))
            .judge(&seen)
            .is_ok()
    );
    assert!(
        pointer("/notes", PointerTest::Regex(three_letters.clone()))
            .judge(&seen)
            .is_err()
    );
    assert!(
        message(&pointer("/total", PointerTest::Regex(three_letters)), &seen)
            .contains("is not a string")
    );
}

#[test]
fn range_bounds_are_inclusive_and_optional() {
    let seen = run(report());
    let range = |min, max| pointer("/total", PointerTest::Range { min, max });
    assert!(range(Some(234.8), Some(234.8)).judge(&seen).is_ok());
    assert!(range(Some(200.0), None).judge(&seen).is_ok());
    assert!(range(None, Some(300.0)).judge(&seen).is_ok());
    assert_eq!(
        message(&range(Some(0.0), Some(100.0)), &seen),
        "/total: 234.8 is outside [0, 100]"
    );
    assert!(
        message(
            &pointer(
                "/currency",
                PointerTest::Range {
                    min: Some(0.0),
                    max: None
                }
            ),
            &seen
        )
        .contains("is not a number")
    );
}

#[test]
fn tool_trace_checks_count_calls_by_name() {
    let seen = run(report());
    assert!(Check::ToolCalled("calculator".into()).judge(&seen).is_ok());
    assert_eq!(
        message(&Check::ToolCalled("web_fetch".into()), &seen),
        "web_fetch was never called (calls: calculator, calculator, read_file)"
    );
    assert!(
        Check::ToolNotCalled("web_fetch".into())
            .judge(&seen)
            .is_ok()
    );
    assert_eq!(
        message(&Check::ToolNotCalled("read_file".into()), &seen),
        "read_file was called 1 time(s)"
    );
    assert!(
        Check::ToolAtMost("calculator".into(), 2)
            .judge(&seen)
            .is_ok()
    );
    assert_eq!(
        message(&Check::ToolAtMost("calculator".into(), 1), &seen),
        "calculator was called 2 times, at most 1"
    );
    assert_eq!(Check::ToolAtMost("x".into(), 1).kind(), CheckKind::Tool);
}

#[test]
fn max_turns_holds_up_to_the_limit_and_fails_when_unknown() {
    let seen = run(report());
    assert!(Check::MaxTurns(3).judge(&seen).is_ok());
    assert_eq!(
        message(&Check::MaxTurns(2), &seen),
        "took 3 turns, at most 2"
    );
    let unknown = Observation {
        turns: None,
        ..run(report())
    };
    assert!(message(&Check::MaxTurns(9), &unknown).contains("unknown"));
}

#[test]
fn max_cost_holds_up_to_the_limit_and_an_unknown_cost_never_passes() {
    let seen = run(report());
    assert!(Check::MaxCost(0.002).judge(&seen).is_ok());
    let failure = Check::MaxCost(0.001).judge(&seen).unwrap_err();
    assert_eq!(failure.code, "max_cost");
    assert!(
        failure.message.contains("0.002000 USD"),
        "{}",
        failure.message
    );
    let unknown = Observation {
        cost: None,
        ..run(report())
    };
    assert!(message(&Check::MaxCost(1.0), &unknown).contains("the cost is unknown"));
}

#[test]
fn a_cut_trace_never_proves_an_absence_a_count_or_a_turn_limit() {
    let cut = Observation {
        events_truncated: true,
        files: Vec::new(),
        ..run(report())
    };
    assert!(Check::ToolCalled("calculator".into()).judge(&cut).is_ok());
    for check in [
        Check::ToolNotCalled("web_fetch".into()),
        Check::ToolAtMost("calculator".into(), 9),
        Check::MaxTurns(9),
    ] {
        assert!(
            message(&check, &cut).contains("events were cut"),
            "{check:?}"
        );
    }
}

fn with_files(files: Vec<ObservedFile>) -> Observation {
    Observation {
        files,
        ..run(json!(null))
    }
}

fn file(name: &str, media_type: &str, text: Option<&str>, size: u64) -> ObservedFile {
    ObservedFile {
        name: name.into(),
        media_type: media_type.into(),
        size,
        text: text.map(str::to_owned),
    }
}

fn file_check(raw: Value) -> Check {
    let raw: crate::eval::file_check::RawFileExpectation = serde_json::from_value(raw).unwrap();
    Check::File(raw.compile().unwrap())
}

#[test]
fn a_file_check_passes_on_the_produced_file_and_says_what_it_saw_otherwise() {
    let report = "# Report\n\nTotal: 234.80\n";
    let seen = with_files(vec![
        file(
            "report.md",
            "text/markdown",
            Some(report),
            report.len() as u64,
        ),
        file(
            "data/sum.json",
            "application/json",
            Some(r#"{"total": 234.8}"#),
            16,
        ),
        file("chart.png", "image/png", None, 2048),
    ]);
    let holds = [
        json!({"name": "report.md", "media_type": "text/markdown; charset=utf-8", "min_bytes": 10, "regex": "Total: \\d+"}),
        json!({"name": "data/sum.json", "pointer": "/total", "equals": 234.8}),
        json!({"name": "chart.png", "media_type": "IMAGE/PNG", "max_bytes": 4096}),
    ];
    for raw in holds {
        assert_eq!(file_check(raw.clone()).judge(&seen), Ok(()), "{raw}");
    }
    let fails = [
        (
            json!({"name": "missing.md"}),
            "missing.md was not produced (files: report.md, data/sum.json, chart.png)",
        ),
        (
            json!({"name": "report.md", "media_type": "text/html"}),
            "report.md is text/markdown, not text/html",
        ),
        (
            json!({"name": "report.md", "max_bytes": 5}),
            "report.md has 24 bytes, outside ..=5",
        ),
        (
            json!({"name": "report.md", "regex": "Average"}),
            "report.md: no match for \"Average\"",
        ),
        (
            json!({"name": "data/sum.json", "pointer": "/total", "equals": 1}),
            "data/sum.json at /total: 234.8 is not 1",
        ),
        (
            json!({"name": "chart.png", "regex": "x"}),
            "chart.png is binary (image/png); no text is extracted from it",
        ),
        (
            json!({"name": "report.md", "pointer": "/a", "contains": "x"}),
            "report.md is not JSON",
        ),
    ];
    for (raw, message) in fails {
        let failure = file_check(raw.clone()).judge(&seen).unwrap_err();
        assert_eq!(failure.kind, CheckKind::File);
        assert!(
            failure.message.starts_with(message),
            "{raw}: {}",
            failure.message
        );
    }
}

#[test]
fn a_file_expectation_that_cannot_be_checked_is_refused_when_the_cases_load() {
    let problems = [
        (json!({"name": ""}), "`name`"),
        (
            json!({"name": "a", "min_bytes": 9, "max_bytes": 1}),
            "above max_bytes",
        ),
        (
            json!({"name": "a", "pointer": "/x"}),
            "needs `equals` or `contains`",
        ),
        (json!({"name": "a", "equals": 1}), "need a `pointer`"),
        (
            json!({"name": "a", "pointer": "x", "equals": 1}),
            "not a JSON pointer",
        ),
        (json!({"name": "a", "regex": "("}), "regex"),
    ];
    for (raw, reason) in problems {
        let raw: crate::eval::file_check::RawFileExpectation =
            serde_json::from_value(raw.clone()).unwrap();
        let error = raw.compile().unwrap_err().to_string();
        assert!(error.contains(reason), "{error}");
    }
}
