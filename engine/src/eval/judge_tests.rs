//! The judge's prompt and the reading of its answer.

use serde_json::{Map, Value, json};

use super::*;
use crate::eval::observation::ObservedFile;

fn expectations() -> Vec<String> {
    vec![
        "The summary names Skillet".to_owned(),
        "The summary is in French".to_owned(),
    ]
}

fn case() -> EvalCase {
    let mut arguments = Map::new();
    arguments.insert("prompt".into(), json!("Summarize the notes."));
    EvalCase {
        id: "1".into(),
        name: "notes".into(),
        arguments,
        expected_output: Some("A short English summary.".into()),
        assertions: expectations(),
        checks: Vec::new(),
    }
}

fn observation() -> Observation {
    Observation {
        outcome: RunOutcome::Succeeded,
        data: Some(json!({"summary": "Skillet runs skills."})),
        tool_calls: vec!["calculator".into()],
        turns: Some(2),
        repairs: 0,
        tokens: None,
        cost: None,
        latency_ms: 5,
        events_truncated: false,
        files: vec![
            ObservedFile {
                name: "report.md".into(),
                media_type: "text/markdown".into(),
                size: 9,
                text: Some("# Report\n".into()),
            },
            ObservedFile {
                name: "chart.png".into(),
                media_type: "image/png".into(),
                size: 100,
                text: None,
            },
        ],
    }
}

#[test]
fn each_expectation_gets_the_verdict_and_evidence_the_judge_gave_it_by_number() {
    let answer = json!({"case": "notes", "expectations": [
        {"index": 2, "passed": false, "evidence": "The summary is English: 'Skillet runs skills.'"},
        {"index": 1, "passed": true, "evidence": "'Skillet runs skills.'"}
    ]});
    let grades = grades_of("notes", &expectations(), &answer, "mock/judge");
    assert_eq!(
        grades,
        [
            Grade {
                text: "The summary names Skillet".into(),
                passed: true,
                evidence: "'Skillet runs skills.'".into(),
                graded: true,
            },
            Grade {
                text: "The summary is in French".into(),
                passed: false,
                evidence: "The summary is English: 'Skillet runs skills.'".into(),
                graded: true,
            },
        ]
    );
}

#[test]
fn an_answer_that_leaves_an_expectation_out_or_garbles_it_leaves_it_ungraded_never_passed() {
    let answers = [
        json!("all good"),
        json!({"case": "notes", "expectations": []}),
        json!({"case": "notes", "expectations": [{"index": 1, "passed": true}]}),
        json!({"case": "notes", "expectations": [{"index": 1, "passed": "yes", "evidence": "x"}]}),
        json!({"case": "notes", "expectations": [
            {"index": 1, "passed": true, "evidence": "a"},
            {"index": 1, "passed": true, "evidence": "b"}
        ]}),
        json!({"case": "notes", "expectations": [{"index": 1, "passed": true, "evidence": "  "}]}),
        // What the mock synthesizes from the judge's schema when no rule scripts the judge.
        json!({"case": "case", "expectations": [{"index": 1, "passed": true, "evidence": "evidence"}, {"index": 2, "passed": true, "evidence": "evidence"}]}),
    ];
    for answer in answers {
        let grades = grades_of("notes", &expectations(), &answer, "mock/judge");
        assert_eq!(grades.len(), 2);
        assert!(
            grades[0].evidence.starts_with("ungraded: "),
            "{answer}: {:?}",
            grades[0]
        );
        assert!(!grades[0].passed && !grades[0].graded, "{answer}");
        assert!(!grades[1].passed && !grades[1].graded, "{answer}");
    }
}

#[test]
fn the_prompt_shows_the_request_the_outcome_the_data_the_files_and_the_numbered_expectations() {
    let prompt = judge_prompt("summarize", &case(), &observation(), None);
    for part in [
        "# A run of the skill `summarize` (case `notes`)",
        "## The request\nSummarize the notes.",
        "## What success looks like\nA short English summary.",
        "It succeeded.",
        "\"summary\": \"Skillet runs skills.\"",
        "### report.md (text/markdown, 9 bytes)\n# Report",
        "### chart.png (image/png, 100 bytes)\n(binary content; no text could be extracted)",
        "## Tool calls it made\n- calculator\n",
        "## Expectations to grade\n1. The summary names Skillet\n2. The summary is in French\n",
    ] {
        assert!(prompt.contains(part), "missing {part:?} in:\n{prompt}");
    }
}

#[test]
fn a_long_file_is_cut_with_a_note_so_one_file_cannot_fill_the_judges_context() {
    let mut seen = observation();
    seen.files[0].text = Some("x".repeat(50_000));
    let prompt = judge_prompt("summarize", &case(), &seen, None);
    assert!(prompt.contains("[... 42000 more characters not shown]"));
    assert!(prompt.len() < 30_000, "{}", prompt.len());
}

#[test]
fn the_judge_skill_compiles_and_its_output_schema_is_the_one_grades_are_read_with() {
    let registry = judge_registry();
    let judge = registry.get(JUDGE_SKILL).expect("registered");
    let schema = judge
        .compiled
        .output_schema
        .as_ref()
        .expect("an output schema");
    let good =
        json!({"case": "c", "expectations": [{"index": 1, "passed": true, "evidence": "seen"}]});
    assert!(schema.validate(&good).is_ok());
    let bad = json!({"expectations": [{"index": 0, "passed": "yes"}]});
    assert!(schema.validate(&bad).is_err());
    assert!(judge.compiled.spec.instructions.starts_with(JUDGE_HEADING));
    let _: Value = good;
}
