//! The skill author's first hour through the real `skillet` binary (issue 49): what a person
//! writing a skill sees when the model's answer is repaired, and when their schema has a typo.
//! Every run uses the embedded mock-llm from an empty working directory.
//!
//! Not here: hot reload (`hot_reload.rs`), the console (`console_*.rs`).

mod cli_support;

use std::path::Path;
use std::process::{Command, Output};

use cli_support::*;

fn skillet(cwd: &Path, args: &[&str]) -> Output {
    Command::new(SKILLET)
        .current_dir(cwd)
        .args(args)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("run skillet")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_repair_turn_says_which_value_failed_and_why() {
    let cwd = tempfile::tempdir().unwrap();
    let skills = bundled_skills().display().to_string();
    let example = bundled_skills().join("code-review/examples/basic.json");
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &skills,
            "run",
            "code-review",
            "--args",
            &format!("@{}", example.display()),
            "-v",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The scenario's first answer gives an unknown severity; the line names it.
    let repair = stderr
        .lines()
        .find(|line| line.contains("final answer rejected"))
        .unwrap_or_else(|| panic!("no repair line in:\n{stderr}"));
    assert!(
        repair.contains("1 problem: /issues/0/severity:"),
        "{repair}"
    );
    assert!(repair.contains("\"critical\""), "{repair}");
    assert!(
        repair.ends_with("asking the model to repair it"),
        "{repair}"
    );
}

#[test]
fn a_schema_typo_beside_additional_properties_false_is_blamed_on_the_typo() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("notes");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: notes\ndescription: Takes notes.\nmetadata:\n  a2a-output-schema: \
         assets/output.schema.json\n---\nTake notes.\n",
    )
    .unwrap();
    // What `skillet init` scaffolds, with one typo.
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type": "object",
            "properties": {"title": {"type": "string", "minLenght": 1}},
            "required": ["title"],
            "additionalProperties": false}"#,
    )
    .unwrap();
    let out = skillet(
        root.path(),
        &["validate", &root.path().display().to_string()],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("/properties/title/minLenght"), "{stdout}");
    assert!(stdout.contains("did you mean `minLength`?"), "{stdout}");
    assert!(
        !stdout.contains("keyword `additionalProperties`"),
        "a valid keyword is never blamed: {stdout}"
    );
}
