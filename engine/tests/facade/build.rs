//! `build()` returns skill load problems (every one, with its file) instead of dropping them.

use skillet_engine::{BuildError, Skillet};
use skillet_providers::EnvError;

use crate::common::*;

#[test]
fn every_skill_that_fails_to_load_is_in_the_error_with_its_file() {
    let dir = skills(&[
        ("good", &skill_md("good", &[], "Fine.")),
        (
            "bad-schema",
            &skill_md(
                "bad-schema",
                &[("a2a-input-schema", "assets/missing.json")],
                "x",
            ),
        ),
        ("wrong-name", &skill_md("not-the-folder", &[], "x")),
    ]);
    let error = Skillet::builder()
        .skills_dir(dir.path())
        .build()
        .unwrap_err();
    let BuildError::Skills { problems } = &error else {
        panic!("expected Skills, got {error:?}");
    };
    let files: Vec<String> = problems
        .iter()
        .filter(|p| p.is_error())
        .map(|p| p.file.display().to_string())
        .collect();
    assert!(files.iter().any(|f| f.contains("bad-schema")), "{files:?}");
    assert!(files.iter().any(|f| f.contains("wrong-name")), "{files:?}");
    assert!(!files.iter().any(|f| f.contains("/good/")), "{files:?}");
    let shown = error.to_string();
    assert!(shown.contains("problems loading skills"), "{shown}");
    assert!(
        shown.contains("bad-schema") && shown.contains("wrong-name"),
        "{shown}"
    );
}

#[test]
fn a_missing_directory_and_a_duplicate_name_are_load_problems_too() {
    let error = Skillet::builder()
        .skills_dir("/nonexistent/skills")
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, BuildError::Skills { problems } if problems[0].file.ends_with("skills")),
        "{error:?}"
    );

    let first = skills(&[("twin", &skill_md("twin", &[], "a"))]);
    let second = skills(&[("twin", &skill_md("twin", &[], "b"))]);
    let error = Skillet::builder()
        .skills_dir(first.path())
        .skills_dir(second.path())
        .build()
        .unwrap_err();
    let BuildError::Skills { problems } = &error else {
        panic!("expected Skills, got {error:?}");
    };
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].file.starts_with(second.path()), "{problems:?}");
    assert!(
        problems[0].reason.contains("duplicate skill name `twin`"),
        "{problems:?}"
    );
}

#[test]
fn an_environment_without_a_provider_is_a_build_error() {
    let error = Skillet::builder()
        .provider_from_vars(|_| None)
        .build()
        .unwrap_err();
    assert_eq!(error, BuildError::Env(EnvError::NotConfigured));
    let error = Skillet::builder()
        .provider_from_vars(|var| (var == "OLLAMA_HOST").then(|| "localhost".to_owned()))
        .build()
        .unwrap_err();
    assert!(
        matches!(error, BuildError::Env(EnvError::MissingModel(_))),
        "{error:?}"
    );
}

#[test]
fn a_duplicate_tool_is_a_build_error() {
    let tool = || {
        skillet_engine::tool_fn(
            "t",
            "d",
            |_: std::collections::BTreeMap<String, String>| async move { Ok("x") },
        )
    };
    let error = Skillet::builder()
        .tool(tool())
        .tool(tool())
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::Tool(_)), "{error:?}");
}
