//! `skillet eval` grades natural-language expectations with a judge model, checks produced
//! files, runs a baseline without the skill's instructions, and writes skill-creator's
//! `grading.json` / `benchmark.json` — the binary spawned for real on the embedded mock, whose
//! scenario scripts both the skill's model and the judge.

use crate::cli_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use cli_support::*;

fn skillet(cwd: &Path, args: &[&str]) -> Output {
    skillet_in(cwd, args)
}

/// `skillet ARGS... --json-out r.json` in `root`: its output and the report it wrote (`Null`
/// when it wrote none).
fn eval_with_report(root: &Path, args: &[&str]) -> (Output, Value) {
    let json_path = root.join("r.json");
    let mut all: Vec<&str> = args.to_vec();
    let json_arg = json_path.to_str().unwrap().to_owned();
    all.extend(["--json-out", &json_arg]);
    let out = skillet(root, &all);
    let report = std::fs::read_to_string(&json_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    (out, report)
}

/// A plain Agent Skill (a prompt, no schemas) that writes `report.md` from its input file and
/// answers in text; `judge` is the YAML of the scenario's judge rules, `evals` the case file.
fn notes_skill(root: &Path, judge: &str, evals: &str) -> PathBuf {
    let dir = root.join("meeting-notes");
    std::fs::create_dir_all(dir.join("evals/files")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: meeting-notes\ndescription: Turns raw meeting notes into a short report \
         with decisions and action items.\n---\n# Meeting notes\n\nYou turn meeting notes \
         into report.md: decisions first, then action items with owners.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("evals/files/notes.txt"),
        "Ana: ship on Friday. Bo owns the release notes.\n",
    )
    .unwrap();
    let scenario = format!(
        r###"rules:
  - name: notes/write
    when: {{ system_contains: "You turn meeting notes into report.md", tool_results: false }}
    reply:
      tool_calls:
        - name: write_file
          arguments: {{ path: report.md, content: "# Report\n\n## Decisions\n- Ship on Friday.\n\n## Action items\n- Bo: release notes.\n" }}
  - name: notes/answer
    when: {{ system_contains: "You turn meeting notes into report.md" }}
    reply:
      text: "report.md lists one decision (ship on Friday) and one action item (Bo: release notes)."
{judge}"###
    );
    std::fs::write(dir.join("mock-scenario.yaml"), scenario).unwrap();
    std::fs::write(dir.join("evals/evals.json"), evals).unwrap();
    dir
}

const TWO_EXPECTATIONS: &str = r###"{
  "skill_name": "meeting-notes",
  "evals": [{
    "id": 1,
    "prompt": "Make the report of these notes.",
    "files": ["evals/files/notes.txt"],
    "expected_output": "report.md with the decision and Bo's action item.",
    "expectations": [
      "The report lists the decision to ship on Friday.",
      "The report gives every action item a due date."
    ],
    "expect": {
      "files": [{"name": "report.md", "media_type": "text/markdown", "min_bytes": 20, "regex": "## Decisions"}]
    }
  }]
}"###;

/// A judge that grades by what its prompt shows: the report's text and the file's heading.
const READING_JUDGE: &str = r###"  - name: judge/report-shown
    when: { system_contains: "You grade one run of an AI skill", user_regex: "(?s)## Files it produced\\n### report\\.md \\(text/markdown, \\d+ bytes\\)\\n# Report.*Ship on Friday" }
    reply:
      json:
        case: "1"
        expectations:
          - { index: 1, passed: true, evidence: "report.md, Decisions: \"Ship on Friday.\"" }
          - { index: 2, passed: false, evidence: "\"Bo: release notes.\" has no due date." }
  - name: judge/nothing-shown
    when: { system_contains: "You grade one run of an AI skill" }
    reply:
      json:
        case: "1"
        expectations:
          - { index: 1, passed: false, evidence: "No report was shown." }
          - { index: 2, passed: false, evidence: "No report was shown." }
"###;

#[test]
fn a_judge_passes_the_true_expectation_and_fails_the_false_one_with_evidence() {
    let root = tempfile::tempdir().unwrap();
    let skill = notes_skill(root.path(), READING_JUDGE, TWO_EXPECTATIONS);
    let (out, report) = eval_with_report(root.path(), &["eval", skill.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "expectation: \"The report gives every action item a due date.\": \
             \"Bo: release notes.\" has no due date."
        ),
        "{stdout}"
    );
    let model = &report["models"][0];
    assert_eq!(
        model["judge"], "openai-compatible/mock-llm",
        "each run's own model judges it"
    );
    let run = &model["runs"][0];
    assert_eq!(
        run["failures"],
        serde_json::json!([]),
        "the file check held: {run}"
    );
    assert_eq!(run["expectations"][0]["passed"], true);
    assert_eq!(
        run["expectations"][0]["evidence"],
        "report.md, Decisions: \"Ship on Friday.\""
    );
    assert_eq!(run["expectations"][1]["passed"], false);
    assert_eq!(run["expectations"][1]["graded"], true);
    assert_eq!(model["summary"]["expectations"]["passed"], 1);
    assert_eq!(model["summary"]["failure_codes"]["expectation"], 1);
    assert_eq!(run["observation"]["files"][0]["name"], "report.md");
}

#[test]
fn a_judge_that_answers_off_schema_leaves_the_expectations_ungraded_never_passed() {
    let root = tempfile::tempdir().unwrap();
    let garbage = r###"  - name: judge/garbage
    when: { system_contains: "You grade one run of an AI skill" }
    reply:
      text: "Looks great to me!"
"###;
    let skill = notes_skill(root.path(), garbage, TWO_EXPECTATIONS);
    let (out, report) = eval_with_report(root.path(), &["eval", skill.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let grades = report["models"][0]["runs"][0]["expectations"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(grades.len(), 2);
    for grade in &grades {
        assert_eq!(grade["passed"], false, "{grade}");
        assert_eq!(grade["graded"], false, "{grade}");
        let evidence = grade["evidence"].as_str().unwrap();
        assert!(
            evidence.starts_with("ungraded: the judge (openai-compatible/mock-llm) failed"),
            "{evidence}"
        );
    }
    assert!(
        stdout.contains("ungraded: \"The report lists the decision"),
        "{stdout}"
    );
    assert_eq!(
        report["models"][0]["summary"]["failure_codes"]["ungraded"],
        1
    );
}

#[test]
fn without_a_scripted_judge_the_mocks_made_up_answer_grades_nothing() {
    let root = tempfile::tempdir().unwrap();
    let skill = notes_skill(root.path(), "", TWO_EXPECTATIONS);
    let (out, report) = eval_with_report(root.path(), &["eval", skill.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let grade = &report["models"][0]["runs"][0]["expectations"][0];
    assert_eq!(grade["graded"], false, "{grade}");
    assert!(
        grade["evidence"]
            .as_str()
            .unwrap()
            .contains("script the judge in mock-scenario.yaml"),
        "{grade}"
    );
}

#[test]
fn no_judge_lists_the_expectations_ungraded_and_they_do_not_count() {
    let root = tempfile::tempdir().unwrap();
    let skill = notes_skill(root.path(), "", TWO_EXPECTATIONS);
    let out = skillet(
        root.path(),
        &["eval", skill.to_str().unwrap(), "--no-judge"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("--no-judge: 2 natural-language expectations not graded"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_produced_file_that_is_not_as_expected_fails_its_file_check_with_what_was_seen() {
    let root = tempfile::tempdir().unwrap();
    let evals = TWO_EXPECTATIONS.replace(
        r###""regex": "## Decisions""###,
        r###""regex": "## Risks""###,
    );
    let skill = notes_skill(root.path(), READING_JUDGE, &evals);
    let out = skillet(root.path(), &["eval", skill.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("file: report.md: no match for \"## Risks\""),
        "{stdout}"
    );
}

#[test]
fn baseline_writes_both_configurations_their_delta_and_skill_creators_files() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    let (out, report) = eval_with_report(
        root.path(),
        &[
            "--skills-dir",
            bundled_skills().to_str().unwrap(),
            "eval",
            "summarize",
            "--baseline",
            "--results",
            results.to_str().unwrap(),
        ],
    );
    let stdout = text(&out.stdout);
    // The skill's own runs pass; the baseline's count only in the benchmark.
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("summarize without its instructions (baseline)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("with the skill 100% of checks and expectations held"),
        "{stdout}"
    );

    let benchmark = &report["benchmarks"][0];
    let configurations: Vec<&str> = benchmark["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["configuration"].as_str().unwrap())
        .collect();
    assert_eq!(
        configurations,
        ["with_skill", "with_skill", "without_skill", "without_skill"]
    );
    let summary = &benchmark["run_summary"];
    let with = summary["with_skill"]["pass_rate"]["mean"].as_f64().unwrap();
    let without = summary["without_skill"]["pass_rate"]["mean"]
        .as_f64()
        .unwrap();
    assert_eq!(with, 1.0);
    assert!(
        without < with,
        "without the instructions the mock's rules do not answer: {summary}"
    );
    assert!(
        summary["delta"]["pass_rate"]
            .as_str()
            .unwrap()
            .starts_with('+'),
        "{summary}"
    );

    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("benchmark.json")).unwrap())
            .unwrap();
    assert_eq!(&on_disk, benchmark);
    let grading_path = results.join("eval-summarizes-in-one-turn/with_skill/run-1/grading.json");
    let grading: Value =
        serde_json::from_str(&std::fs::read_to_string(grading_path).unwrap()).unwrap();
    assert_eq!(grading["summary"]["passed"], 2);
    assert_eq!(grading["expectations"][0]["passed"], true);
    assert!(
        results
            .join("eval-summarizes-in-one-turn/without_skill/run-1/grading.json")
            .exists()
    );
}

#[test]
fn repeats_show_pass_at_k_and_the_judge_model_can_be_named() {
    let root = tempfile::tempdir().unwrap();
    let (out, report) = eval_with_report(
        root.path(),
        &[
            "--skills-dir",
            bundled_skills().to_str().unwrap(),
            "eval",
            "code-review",
            "--repeat",
            "3",
            "--judge-model",
            "judge-llm",
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "pass@3 100% (cases passed at least once) · pass^3 100% (cases passed every time)"
        ),
        "{stdout}"
    );
    assert_eq!(report["models"][0]["judge"], "openai-compatible/judge-llm");
    assert_eq!(report["models"][0]["repeats"]["pass_at_k"], 1.0);
}

#[test]
fn a_skill_without_evals_is_told_where_to_write_them() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: plain\ndescription: A plain skill.\n---\nDo it.\n",
    )
    .unwrap();
    let out = skillet(root.path(), &["eval", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("plain has no evals: write ") && stderr.contains("evals/evals.json"),
        "{stderr}"
    );
}

#[test]
fn a_trigger_set_reports_precision_and_recall_and_fails_a_query_the_model_does_not_pick() {
    let root = tempfile::tempdir().unwrap();
    let skill = bundled_copy(root.path(), "summarize");
    std::fs::write(
        skill.join("evals/trigger.json"),
        r###"[
  {"query": "Summarize this memo in two lines.", "should_trigger": true},
  {"query": "Condense this memo for my manager.", "should_trigger": true},
  {"query": "What is the capital of France?", "should_trigger": false}
]"###,
    )
    .unwrap();
    let (out, report) =
        eval_with_report(root.path(), &["eval", skill.to_str().unwrap(), "--trigger"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "trigger: summarize on openai-compatible/mock-llm: precision 100% · recall 50% · \
             2 of 3 queries passed"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL   0% picked (should trigger)  Condense this memo for my manager."),
        "{stdout}"
    );
    let trigger = &report["trigger"][0];
    assert_eq!(trigger["recall"], 0.5);
    assert_eq!(trigger["queries"][0]["trigger_rate"], 1.0);
    assert_eq!(report["passed"], false);
}

#[test]
fn trigger_without_a_query_set_says_what_to_write() {
    let root = tempfile::tempdir().unwrap();
    let skill = bundled_copy(root.path(), "summarize");
    std::fs::remove_file(skill.join("evals/trigger.json")).unwrap();
    let out = skillet(root.path(), &["eval", skill.to_str().unwrap(), "--trigger"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--trigger: summarize has no evals/trigger.json"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn every_bundled_skill_is_picked_for_its_trigger_set_among_the_others_on_the_mock() {
    let root = tempfile::tempdir().unwrap();
    for skill in ["summarize", "code-review", "expense-report", "table-report"] {
        let out = skillet(
            root.path(),
            &[
                "--skills-dir",
                bundled_skills().to_str().unwrap(),
                "eval",
                skill,
                "--trigger",
            ],
        );
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{skill}: {stdout}");
        assert!(
            stdout.contains("precision 100% · recall 100% · 4 of 4 queries passed"),
            "{skill}: {stdout}"
        );
    }
}

#[test]
fn validate_warns_when_skill_md_shows_a_value_the_evals_expect() {
    let root = tempfile::tempdir().unwrap();
    let skill = bundled_copy(root.path(), "expense-report");
    let manifest = std::fs::read_to_string(skill.join("SKILL.md")).unwrap();
    let leaked = manifest.replace(
        r#"{"total": 147.4, "currency": "{{ currency }}", "largest_item": "Rent", "notes": "..."}"#,
        r#"{"total": 234.8, "currency": "{{ currency }}", "largest_item": "Hotel", "notes": "..."}"#,
    );
    assert_ne!(
        leaked, manifest,
        "the bundled example line is where the test expects it"
    );
    let clean = skillet(
        root.path(),
        &["validate", skill.to_str().unwrap(), "--strict"],
    );
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean.stdout));

    std::fs::write(skill.join("SKILL.md"), leaked).unwrap();
    let warned = skillet(root.path(), &["validate", skill.to_str().unwrap()]);
    let stdout = text(&warned.stdout);
    assert_eq!(warned.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "case \"sums-with-the-calculator\" expects 234.8 at /total and SKILL.md shows it"
        ),
        "{stdout}"
    );
    // "Hotel" is shown too, but the case's input holds it: naming an input item is the task.
    assert!(!stdout.contains("\"Hotel\""), "{stdout}");
    let strict = skillet(
        root.path(),
        &["validate", skill.to_str().unwrap(), "--strict"],
    );
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict.stdout));
}
