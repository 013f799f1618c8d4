//! The query set, the catalog, and the trigger figures.

use serde_json::json;

use super::*;
use crate::eval::observation::{Observation, RunOutcome};

fn record(case: &str, calls: &[&str]) -> RunRecord {
    RunRecord {
        model: "m".into(),
        case: case.into(),
        repeat: 1,
        passed: true,
        failures: Vec::new(),
        expectations: Vec::new(),
        judge_ms: None,
        observation: Observation {
            outcome: RunOutcome::Succeeded,
            data: None,
            tool_calls: calls.iter().map(|c| (*c).to_owned()).collect(),
            turns: Some(1),
            repairs: 0,
            tokens: None,
            cost: None,
            latency_ms: 1,
            events_truncated: false,
            files: Vec::new(),
        },
    }
}

fn query(text: &str, should_trigger: bool) -> TriggerQuery {
    TriggerQuery {
        query: text.into(),
        should_trigger,
    }
}

#[test]
fn precision_recall_and_each_querys_rate_follow_skill_creators_rule() {
    let queries = [
        query("summarize this article", true),
        query("give me the gist of these notes", true),
        query("what is 2 + 2", false),
        query("review my code", false),
    ];
    let records = [
        record("q1", &["summarize"]),
        record("q1", &["summarize"]),
        record("q2", &[]),
        record("q2", &["summarize"]),
        record("q3", &[]),
        record("q3", &[]),
        record("q4", &["summarize", "code-review"]),
        record("q4", &["code-review"]),
    ];
    let report = TriggerReport::build("m", "summarize", &queries, &records);
    let rates: Vec<f64> = report.queries.iter().map(|q| q.trigger_rate).collect();
    assert_eq!(rates, [1.0, 0.5, 0.0, 0.5]);
    let passes: Vec<bool> = report.queries.iter().map(|q| q.pass).collect();
    // q2 triggers at 0.5 (passes: should trigger); q4 at 0.5 fails (should not).
    assert_eq!(passes, [true, true, true, false]);
    assert_eq!(
        report.queries[3].other_calls,
        ["code-review", "code-review"]
    );
    assert_eq!(report.precision, Some(2.0 / 3.0));
    assert_eq!(report.recall, Some(1.0));
    assert_eq!(report.accuracy, 0.75);
    assert!(!report.passed());
}

#[test]
fn the_catalog_offers_each_skill_as_a_tool_with_its_description() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
    let report = crate::skill::load_skills_root(&root, crate::skill::SkillSource::System);
    let skills: Vec<Arc<CompiledSkill>> = report.skills.into_iter().map(Arc::new).collect();
    let (registry, tools) = catalog(&skills);
    let router = registry.get(TRIGGER_SKILL).expect("the trigger skill");
    assert_eq!(router.compiled.tools.len(), skills.len());
    let summarize = tools.tool("summarize").expect("a stub per skill");
    let skill = skills.iter().find(|s| s.name() == "summarize").unwrap();
    assert_eq!(summarize.description(), skill.spec.description);
    assert_eq!(
        summarize.input_schema(),
        skill.input_schema.as_ref().unwrap().source()
    );
    let plain = tools.tool("table-report").expect("a plain skill too");
    assert_eq!(plain.input_schema()["required"], json!(["prompt"]));
}

#[test]
fn queries_become_cases_whose_prompt_is_the_query() {
    let cases = trigger_cases(&[query("a", true), query("b", false)]);
    assert_eq!(cases[1].name, "q2");
    assert_eq!(cases[1].arguments["prompt"], "b");
    assert!(cases[1].checks.is_empty());
}

#[test]
fn a_query_set_that_is_not_skill_creators_shape_is_refused_saying_what_it_expects() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("summarize");
    let bundled = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/summarize");
    for file in [
        "SKILL.md",
        "assets/input.schema.json",
        "assets/output.schema.json",
    ] {
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::copy(bundled.join(file), dir.join(file)).unwrap();
    }
    let skill = crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::Project).unwrap();
    assert_eq!(
        load_trigger_queries(&skill).unwrap(),
        None,
        "no file, no set"
    );
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    let cases = [
        (r#"{"queries": []}"#, "expected skill-creator's query set"),
        ("[]", "no queries"),
        (
            r#"[{"query": " ", "should_trigger": true}]"#,
            "query 0 is empty",
        ),
        (r#"[{"query": "a"}]"#, "should_trigger"),
    ];
    for (text, reason) in cases {
        std::fs::write(dir.join(TRIGGER_FILE), text).unwrap();
        let error = load_trigger_queries(&skill).unwrap_err().to_string();
        assert!(error.contains(reason), "{text}: {error}");
        assert!(error.contains("trigger.json"), "names the file: {error}");
    }
}
