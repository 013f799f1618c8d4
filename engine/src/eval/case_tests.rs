//! Reading `evals/evals.json`: the fields, the checks they become, and every problem reported
//! with its location.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::eval::check::CheckKind;

/// A skill folder `demo` with an output schema, an example and `evals/evals.json` = `evals`.
fn skill_with_evals(root: &Path, evals: &str) -> CompiledSkill {
    let dir = root.join("demo");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::create_dir_all(dir.join("evals/files")).unwrap();
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: demo\ndescription: A test skill.\nmetadata:\n  \
         a2a-output-schema: assets/output.schema.json\n---\nAnswer {{ text }}.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"total":{"type":"number"}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("examples/basic.json"),
        r#"{"text": "from the example"}"#,
    )
    .unwrap();
    std::fs::write(dir.join("evals/files/data.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(dir.join("evals/evals.json"), evals).unwrap();
    crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::Project)
        .expect("the test skill loads")
}

fn problems(evals: &str) -> Vec<String> {
    let root = tempfile::tempdir().unwrap();
    let skill = skill_with_evals(root.path(), evals);
    load_suite(&skill)
        .expect_err("the suite should be refused")
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_agent_skills_fields_and_expect_become_typed_cases() {
    let root = tempfile::tempdir().unwrap();
    let skill = skill_with_evals(
        root.path(),
        r#"{
          "skill_name": "demo",
          "evals": [
            {"id": 1, "prompt": "Sum the file", "files": ["evals/files/data.csv"],
             "expected_output": "A sum.", "assertions": ["The sum is 3"]},
            {"id": "from-example", "name": "example", "arguments_file": "examples/basic.json",
             "expect": {
               "schema": true,
               "output": [{"pointer": "/total", "equals": 3}, {"pointer": "/total", "min": 0},
                          {"pointer": "/text", "regex": "^f"}, {"pointer": "", "contains": {"a": 1}}],
               "tools": {"called": ["calculator"], "not_called": ["read_file"], "at_most": {"calculator": 2}},
               "max_turns": 3, "max_cost": 0.01}},
            {"id": 3, "arguments": {"text": 1}, "expect": {"error_code": "schema_violation"}}
          ]
        }"#,
    );
    let suite = load_suite(&skill).expect("the suite loads");
    assert_eq!(suite.skill_name, "demo");
    let [first, second, third] = &suite.cases[..] else {
        panic!("three cases: {:?}", suite.cases);
    };
    assert_eq!(first.name, "1");
    assert_eq!(first.arguments["prompt"], "Sum the file");
    assert_eq!(
        first.arguments["_files"],
        json!([{"name": "data.csv", "text": "a,b\n1,2\n"}])
    );
    assert_eq!(first.assertions, ["The sum is 3"]);
    assert_eq!(first.checks.len(), 1, "only the default outcome check");

    assert_eq!(
        (second.id.as_str(), second.name.as_str()),
        ("from-example", "example")
    );
    assert_eq!(second.arguments["text"], "from the example");
    let kinds: Vec<CheckKind> = second.checks.iter().map(Check::kind).collect();
    use CheckKind::*;
    assert_eq!(
        kinds,
        [
            Outcome, Schema, Output, Output, Output, Output, Tool, Tool, Tool, MaxTurns, MaxCost
        ]
    );

    assert!(matches!(
        third.checks[0],
        Check::Outcome(ExpectedOutcome::Code(ErrorCode::SchemaViolation))
    ));
}

#[test]
fn an_unknown_field_is_refused_with_its_line() {
    let found = problems("{\"skill_name\": \"demo\",\n \"evals\": [{\"id\": 1, \"expct\": {}}]}");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("unknown field `expct`"), "{found:?}");
    assert!(found[0].contains("line 2"), "{found:?}");
}

#[test]
fn paths_outside_the_skill_folder_are_refused() {
    let found = problems(
        r#"{"skill_name": "demo", "evals": [
            {"id": 1, "arguments_file": "../outside.json"},
            {"id": 2, "files": ["/etc/passwd"]},
            {"id": 3, "expect": {"schema": "../../schema.json"}}]}"#,
    );
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].contains("evals[0].arguments_file") && found[0].contains("`..`"));
    assert!(found[1].contains("evals[1].files[0]") && found[1].contains("absolute"));
    assert!(found[2].contains("evals[2].expect.schema") && found[2].contains("`..`"));
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_skill_folder_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("secret.json");
    std::fs::write(&outside, "{}").unwrap();
    let skill = skill_with_evals(
        root.path(),
        r#"{"skill_name": "demo", "evals": [{"id": 1, "arguments_file": "evals/link.json"}]}"#,
    );
    std::os::unix::fs::symlink(&outside, root.path().join("demo/evals/link.json")).unwrap();
    let found = load_suite(&skill).unwrap_err();
    assert!(
        found[0].reason.contains("outside the skill directory"),
        "{found:?}"
    );
}

#[test]
fn every_bad_check_is_reported_with_its_location() {
    let found = problems(
        r#"{"skill_name": "other", "evals": [{"id": 1, "expect": {
            "success": true, "error_code": "timeout",
            "output": [{"pointer": "total", "equals": 1},
                       {"pointer": "/a", "equals": 1, "regex": "x"},
                       {"pointer": "/a", "regex": "("},
                       {"pointer": "/a", "min": 5, "max": 1}],
            "max_cost": -1}}]}"#,
    );
    let joined = found.join("\n");
    for expected in [
        "skill_name: \"other\" is not this skill's name \"demo\"",
        "evals[0].expect.error_code: timeout contradicts",
        "evals[0].expect.output[0]: pointer \"total\" is not a JSON pointer",
        "evals[0].expect.output[1]: give exactly one of equals, contains, regex or min/max (found 2)",
        "evals[0].expect.output[2]: regex \"(\"",
        "evals[0].expect.output[3]: min 5 is above max 1",
        "evals[0].expect.max_cost: -1 is not a cost",
    ] {
        assert!(
            joined.contains(expected),
            "missing {expected:?} in\n{joined}"
        );
    }
}

#[test]
fn duplicate_names_and_conflicting_arguments_are_refused() {
    let found = problems(
        r#"{"skill_name": "demo", "evals": [
            {"id": 1, "name": "same"}, {"id": 2, "name": "same"},
            {"id": 3, "arguments": {}, "arguments_file": "examples/basic.json"},
            {"id": 4, "arguments": {"prompt": "x"}, "prompt": "y"}]}"#,
    );
    let joined = found.join("\n");
    assert!(joined.contains("a second case named \"same\""), "{joined}");
    assert!(
        joined.contains("give arguments or arguments_file, not both"),
        "{joined}"
    );
    assert!(joined.contains("already have a `prompt`"), "{joined}");
}

#[test]
fn a_missing_file_and_an_empty_suite_are_errors() {
    let root = tempfile::tempdir().unwrap();
    let skill = skill_with_evals(root.path(), r#"{"skill_name": "demo", "evals": []}"#);
    assert!(
        load_suite(&skill).unwrap_err()[0]
            .reason
            .contains("no cases")
    );
    std::fs::remove_file(root.path().join("demo/evals/evals.json")).unwrap();
    let missing = load_suite(&skill).unwrap_err();
    assert!(
        missing[0].to_string().contains("evals/evals.json"),
        "{missing:?}"
    );
}
