//! `skillet eval`, the binary spawned for real on the embedded mock-llm: the bundled skills'
//! evals pass, the table, the JSON report and the JUnit XML say what ran, and a failing case
//! exits 1 with its reason shown; `--save` puts the report where the console's skill view
//! reads it, its models side by side.

use crate::cli_support;
use crate::serve_support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use cli_support::*;

fn skillet(cwd: &Path, args: &[&str]) -> Output {
    skillet_in(cwd, args)
}

fn bundled() -> String {
    bundled_skills().display().to_string()
}

/// Copies the bundled skill `name` under `root` and replaces its `evals/evals.json`.
fn skill_copy_with_evals(root: &Path, name: &str, evals: &str) -> std::path::PathBuf {
    let dir = bundled_copy(root, name);
    std::fs::write(dir.join("evals/evals.json"), evals).unwrap();
    dir
}

#[test]
fn eval_of_a_bundled_skill_passes_and_writes_the_table_the_json_and_the_junit_xml() {
    let cwd = tempfile::tempdir().unwrap();
    let json_path = cwd.path().join("eval.json");
    let junit_path = cwd.path().join("eval.xml");
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "eval",
            "expense-report",
            "--repeat",
            "3",
            "--json-out",
            json_path.to_str().unwrap(),
            "--junit",
            junit_path.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with(
            "expense-report on openai-compatible/mock-llm: 3 cases × 3 repeats = 9 runs, 9 passed\n"
        ),
        "{stdout}"
    );
    let all = stdout
        .lines()
        .find(|l| l.starts_with("all "))
        .expect("an all row");
    assert!(all.contains("100% (70–100%)"), "{stdout}");
    let sums = stdout
        .lines()
        .find(|l| l.starts_with("sums-with-the-calculator"))
        .expect("a row per case");
    assert!(sums.contains("2/2"), "two turns: {stdout}");
    assert!(!stdout.contains("failed runs"), "{stdout}");
    assert_eq!(
        stderr.matches("[eval] ").count(),
        9,
        "a progress line per run when stderr is not a terminal: {stderr}"
    );

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap())
        .expect("--json-out is JSON");
    assert_eq!(report["skill"], "expense-report");
    assert_eq!(report["passed"], true);
    let model = &report["models"][0];
    assert_eq!(model["summary"]["runs"], 9);
    assert_eq!(model["summary"]["passed"], 9);
    assert_eq!(model["cases"][0]["case"], "sums-with-the-calculator");
    assert_eq!(model["cases"][1]["case"], "sums-another-item-set");
    assert_eq!(
        model["cases"][2]["case"],
        "refuses-an-item-without-an-amount"
    );
    let run = &model["runs"][0];
    assert_eq!(
        run["observation"]["tool_calls"],
        serde_json::json!(["calculator"])
    );
    assert_eq!(run["observation"]["data"]["total"], 234.8);
    assert_eq!(model["runs"][3]["observation"]["data"]["total"], 99.4);
    let refused = &model["runs"][6];
    assert_eq!(refused["observation"]["outcome"]["status"], "rejected");
    assert_eq!(
        refused["observation"]["outcome"]["code"],
        "schema_violation"
    );

    let junit = std::fs::read_to_string(&junit_path).unwrap();
    assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    assert!(junit.contains("tests=\"9\" failures=\"0\""), "{junit}");
    assert_eq!(junit.matches("<testcase ").count(), 9, "{junit}");
    assert!(
        junit.contains("name=\"sums-with-the-calculator #3\""),
        "{junit}"
    );
    assert!(junit.trim_end().ends_with("</testsuites>"));
}

#[test]
fn every_bundled_skill_passes_its_evals_on_the_embedded_mock() {
    let cwd = tempfile::tempdir().unwrap();
    for skill in ["expense-report", "summarize", "code-review", "table-report"] {
        let out = skillet(cwd.path(), &["--skills-dir", &bundled(), "eval", skill]);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{skill}:\n{stdout}\n{}",
            text(&out.stderr)
        );
        assert!(stdout.starts_with(&format!("{skill} on ")), "{stdout}");
    }
}

#[test]
fn the_repair_turn_of_code_review_shows_in_the_repair_rate() {
    let cwd = tempfile::tempdir().unwrap();
    let out = skillet(
        cwd.path(),
        &["--skills-dir", &bundled(), "eval", "code-review"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let header = columns(stdout.lines().nth(1).unwrap());
    let all = columns(stdout.lines().find(|l| l.starts_with("all ")).unwrap());
    let repairs = header.iter().position(|h| *h == "repairs").unwrap();
    assert_eq!(all[repairs], "100%", "every run repaired once:\n{stdout}");
    let turns = header.iter().position(|h| *h == "turns p50/p95").unwrap();
    assert_eq!(all[turns], "2/2", "{stdout}");
}

/// A table row's cells (cells never hold two spaces in a row; columns are two apart at least).
fn columns(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect()
}

#[test]
fn a_failing_case_exits_1_and_shows_the_reason() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_copy_with_evals(
        root.path(),
        "expense-report",
        r#"{"skill_name": "expense-report", "evals": [
             {"id": 1, "name": "wrong-total", "arguments_file": "examples/basic.json",
              "expect": {"output": [{"pointer": "/total", "equals": 100}],
                         "tools": {"not_called": ["calculator"]}}},
             {"id": 2, "name": "right-total", "arguments_file": "examples/basic.json",
              "expect": {"output": [{"pointer": "/total", "equals": 234.8}]}}]}"#,
    );
    let junit_path = root.path().join("eval.xml");
    let out = skillet(
        root.path(),
        &[
            "eval",
            dir.to_str().unwrap(),
            "--junit",
            junit_path.to_str().unwrap(),
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("2 runs, 1 passed"), "{stdout}");
    assert!(stdout.contains("failed runs:"), "{stdout}");
    assert!(
        stdout.contains("wrong-total #1: output: /total: 234.8 is not 100"),
        "{stdout}"
    );
    assert!(
        stdout.contains("wrong-total #1: tool: calculator was called 1 time(s)"),
        "{stdout}"
    );
    let wrong = stdout
        .lines()
        .find(|l| l.starts_with("wrong-total"))
        .unwrap();
    assert!(
        wrong.contains("0% (0–79%)") && wrong.contains("output×1, tool×1"),
        "{stdout}"
    );
    let junit = std::fs::read_to_string(&junit_path).unwrap();
    assert!(junit.contains("tests=\"2\" failures=\"1\""), "{junit}");
    assert!(
        junit.contains("<failure type=\"output\" message=\"/total: 234.8 is not 100\">"),
        "{junit}"
    );
}

#[test]
fn each_model_gets_its_own_table() {
    let cwd = tempfile::tempdir().unwrap();
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "--provider",
            "mock",
            "--model",
            "small",
            "--model",
            "large",
            "eval",
            "summarize",
            "--case",
            "summarizes-in-one-turn",
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout
            .contains("summarize on openai-compatible/small: 1 case × 1 repeat = 1 run, 1 passed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("summarize on openai-compatible/large: "),
        "{stdout}"
    );
    assert!(
        !stdout.contains("refuses-empty-text"),
        "--case filters: {stdout}"
    );
}

#[test]
fn a_priced_model_shows_its_cost_and_max_cost_is_checked() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("skillet.toml"),
        "[pricing.mock-llm]\ninput_per_million = 1000.0\noutput_per_million = 2000.0\n",
    )
    .unwrap();
    let dir = skill_copy_with_evals(
        root.path(),
        "summarize",
        r#"{"skill_name": "summarize", "evals": [
             {"id": "cheap", "arguments_file": "examples/basic.json", "expect": {"max_cost": 10}},
             {"id": "free", "arguments_file": "examples/basic.json", "expect": {"max_cost": 0}}]}"#,
    );
    let json_path = root.path().join("eval.json");
    let out = skillet(
        root.path(),
        &[
            "eval",
            dir.to_str().unwrap(),
            "--json-out",
            json_path.to_str().unwrap(),
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains(" USD "), "a cost column figure: {stdout}");
    assert!(stdout.contains("free #1: max_cost: cost "), "{stdout}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let cost = &report["models"][0]["summary"]["cost"];
    assert!(cost["amount"].as_f64().unwrap() > 0.0, "{cost}");
    assert_eq!(cost["currency"], "USD");
}

#[test]
fn bad_arguments_and_bad_case_files_have_their_exit_codes() {
    let root = tempfile::tempdir().unwrap();
    let unknown_case = skillet(
        root.path(),
        &[
            "--skills-dir",
            &bundled(),
            "eval",
            "summarize",
            "--case",
            "nope",
        ],
    );
    assert_eq!(unknown_case.status.code(), Some(2));
    assert!(text(&unknown_case.stderr).contains("--case \"nope\": no such case"));

    let two_models_for_run = skillet(
        root.path(),
        &[
            "--provider",
            "mock",
            "--model",
            "a",
            "--model",
            "b",
            "discover",
        ],
    );
    assert_eq!(two_models_for_run.status.code(), Some(2));

    let dir = skill_copy_with_evals(
        root.path(),
        "summarize",
        r#"{"skill_name": "summarize", "evals": [{"id": 1, "expect": {"output": [{"pointer": "/a"}]}}]}"#,
    );
    let validated = skillet(root.path(), &["validate", dir.to_str().unwrap()]);
    assert_eq!(
        validated.status.code(),
        Some(1),
        "validate checks the evals too"
    );
    assert!(
        text(&validated.stdout)
            .contains("evals/evals.json:evals[0].expect.output[0]: give exactly one"),
        "{}",
        text(&validated.stdout)
    );
    let broken = skillet(root.path(), &["eval", dir.to_str().unwrap()]);
    assert_eq!(broken.status.code(), Some(5));
    assert!(
        text(&broken.stderr)
            .contains("evals/evals.json:evals[0].expect.output[0]: give exactly one"),
        "{}",
        text(&broken.stderr)
    );

    let unknown_skill = skillet(root.path(), &["--skills-dir", &bundled(), "eval", "nope"]);
    assert_eq!(unknown_skill.status.code(), Some(3));
}

#[tokio::test]
async fn a_saved_report_is_what_the_consoles_skill_view_reads_with_each_model_beside_the_other() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "[console]\nhistory_db = \"state/console.db\"\n",
    )
    .unwrap();
    let args = [
        "--skills-dir",
        &bundled(),
        "--provider",
        "mock",
        "--model",
        "small",
        "--model",
        "large",
        "eval",
        "summarize",
        "--save",
    ];
    let out = skillet(cwd.path(), &args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("saved the report in") && stderr.contains("console.db"),
        "{stderr}"
    );

    let server = serve_support::ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .skills_dir(bundled_skills())
        .spawn()
        .await;
    let client = reqwest::Client::new();
    let url = |skill: &str| format!("{}/console/api/skills/{skill}/evals", server.base);
    let answer = serve_support::get_json(&client, url("summarize")).await;
    let evals = answer["evals"].as_array().expect("a list");
    assert_eq!(evals.len(), 1, "{answer}");
    assert_eq!(evals[0]["skill"], "summarize");
    assert_eq!(evals[0]["passed"], true);
    let models: Vec<&str> = evals[0]["report"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        ["openai-compatible/small", "openai-compatible/large"],
        "{answer}"
    );
    for model in evals[0]["report"]["models"].as_array().unwrap() {
        let runs = model["summary"]["runs"].as_u64().unwrap();
        assert!(runs > 0 && model["summary"]["passed"] == runs, "{model}");
        assert!(!model["cases"].as_array().unwrap().is_empty(), "{model}");
    }
    // A skill with nothing saved has an empty list; an unknown one is not found.
    let none = serve_support::get_json(&client, url("expense-report")).await;
    assert_eq!(none["evals"], serde_json::json!([]), "{none}");
    let unknown = client.get(url("no-such-skill")).send().await.unwrap();
    assert_eq!(unknown.status(), 404);
}

#[test]
fn save_without_a_history_database_is_a_usage_error() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "[console]\nhistory = false\n",
    )
    .unwrap();
    let out = skillet(
        cwd.path(),
        &["--skills-dir", &bundled(), "eval", "summarize", "--save"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--save: [console] history = false"),
        "{stderr}"
    );
}
