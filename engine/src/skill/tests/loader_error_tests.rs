//! One test per loader error of the issue's done-when list, each asserting the location.

use std::path::Path;

use super::{OBJECT_SCHEMA, first_error, load_ok, manifest, write_skill};
use crate::skill::Severity;

#[test]
fn missing_frontmatter_delimiters_is_located_at_the_file_start() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(root.path(), "s", "name: s\ndescription: x\n\nbody", &[]);
    let err = first_error(&dir);
    assert_eq!(err.location, "SKILL.md");
    assert_eq!((err.line, err.column), (Some(1), Some(1)));
    assert!(err.reason.contains("delimiters"), "{err}");

    let dir = write_skill(
        root.path(),
        "t",
        "---\nname: t\ndescription: x\nbody, never closed",
        &[],
    );
    assert_eq!(first_error(&dir).location, "SKILL.md");
}

#[test]
fn name_different_from_directory_is_located_at_name() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "real-dir",
        &manifest("other-name", &[], "x"),
        &[],
    );
    let err = first_error(&dir);
    assert_eq!(err.location, "frontmatter.name");
    assert_eq!(err.line, Some(2));
    assert!(
        err.reason.contains("must equal the directory name"),
        "{err}"
    );
    assert_eq!(err.file, dir.join("SKILL.md"));
}

#[test]
fn bad_name_characters_are_located_at_name() {
    let root = tempfile::tempdir().unwrap();
    for bad in ["Bad_Name", "-lead", "trail-", "dou--ble"] {
        let dir = write_skill(root.path(), bad, &manifest(bad, &[], "x"), &[]);
        let err = first_error(&dir);
        assert_eq!(err.location, "frontmatter.name", "{bad}");
        assert!(err.reason.contains("[a-z0-9-]"), "{bad}: {err}");
    }
    let long = "a".repeat(65);
    let dir = write_skill(root.path(), &long, &manifest(&long, &[], "x"), &[]);
    assert!(first_error(&dir).reason.contains("1 to 64"));
}

#[test]
fn description_too_long_is_a_located_warning_not_an_error() {
    let root = tempfile::tempdir().unwrap();
    let text = format!("---\nname: s\ndescription: {}\n---\nbody", "d".repeat(1025));
    let dir = write_skill(root.path(), "s", &text, &[]);
    let skill = load_ok(&dir);
    assert_eq!(skill.to_wire().description.chars().count(), 1025);
    let warning = skill
        .warnings
        .iter()
        .find(|w| w.location == "frontmatter.description")
        .expect("a description warning");
    assert!(!warning.is_error());
    assert_eq!(warning.line, Some(3));
    assert!(warning.reason.contains("1025"), "{warning}");
}

#[test]
fn missing_name_and_description_are_both_reported() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(root.path(), "s", "---\nlicense: MIT\n---\nbody", &[]);
    let problems = crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::User).unwrap_err();
    let locations: Vec<_> = problems.iter().map(|p| p.location.as_str()).collect();
    assert!(locations.contains(&"frontmatter.name"), "{locations:?}");
    assert!(
        locations.contains(&"frontmatter.description"),
        "{locations:?}"
    );
}

#[test]
fn unknown_a2a_key_is_located_at_the_key() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest("s", &["a2a-tags: '[\"x\"]'", "a2a-colour: blue"], "x");
    let dir = write_skill(root.path(), "s", &md, &[]);
    let err = first_error(&dir);
    assert_eq!(err.location, "metadata.a2a-colour");
    assert_eq!((err.line, err.column), (Some(6), Some(15)));
    assert!(err.reason.contains("unknown `a2a-*` key"), "{err}");
}

#[test]
fn unknown_a2e_key_is_an_error_too() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "s",
        &manifest("s", &["a2e-flavour: x"], "x"),
        &[],
    );
    assert_eq!(first_error(&dir).location, "metadata.a2e-flavour");
}

#[test]
fn malformed_json_array_is_located_at_the_key() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "s",
        &manifest("s", &["a2a-tags: '[\"a\", '"], "x"),
        &[],
    );
    let err = first_error(&dir);
    assert_eq!(err.location, "metadata.a2a-tags");
    assert_eq!(err.line, Some(5));
    assert!(err.reason.contains("malformed JSON array"), "{err}");

    let dir = write_skill(
        root.path(),
        "t",
        &manifest("t", &["a2a-examples: '[1]'"], "x"),
        &[],
    );
    assert_eq!(first_error(&dir).location, "metadata.a2a-examples");
}

#[test]
fn bad_decimal_is_located_at_the_key() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "s",
        &manifest("s", &["a2a-temperature: warm"], "x"),
        &[],
    );
    let err = first_error(&dir);
    assert_eq!(err.location, "metadata.a2a-temperature");
    assert!(err.reason.contains("decimal"), "{err}");
    let dir = write_skill(
        root.path(),
        "t",
        &manifest("t", &["a2a-max-tokens: '12.5'"], "x"),
        &[],
    );
    assert_eq!(first_error(&dir).location, "metadata.a2a-max-tokens");
    let dir = write_skill(
        root.path(),
        "u",
        &manifest("u", &["a2a-top-p: '1.5'"], "x"),
        &[],
    );
    assert_eq!(first_error(&dir).location, "metadata.a2a-top-p");
}

fn asset_error(path: &str) -> crate::skill::ManifestError {
    let root = tempfile::tempdir().unwrap();
    let key = format!("a2a-input-schema: {path}");
    let dir = write_skill(root.path(), "s", &manifest("s", &[&key], "x"), &[]);
    let err = first_error(&dir);
    assert_eq!(err.location, "metadata.a2a-input-schema");
    assert_eq!(err.file, dir.join("SKILL.md"));
    assert_eq!(err.line, Some(5));
    err
}

#[test]
fn parent_dir_asset_is_rejected() {
    assert!(asset_error("../outside.json").reason.contains("`..`"));
    assert!(asset_error("assets/../../x.json").reason.contains("`..`"));
}

#[test]
fn absolute_asset_is_rejected() {
    assert!(asset_error("/etc/passwd").reason.contains("absolute"));
}

#[test]
fn missing_asset_is_rejected() {
    assert!(
        asset_error("assets/nope.json")
            .reason
            .contains("cannot be read")
    );
}

#[cfg(unix)]
#[test]
fn symlink_escaping_the_skill_directory_is_rejected() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("secret.json");
    std::fs::write(&outside, "{}").unwrap();
    let md = manifest("s", &["a2a-input-schema: assets/input.schema.json"], "x");
    let dir = write_skill(root.path(), "s", &md, &[]);
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("assets/input.schema.json")).unwrap();
    let err = first_error(&dir);
    assert_eq!(err.location, "metadata.a2a-input-schema");
    assert!(err.reason.contains("outside the skill directory"), "{err}");
}

#[cfg(unix)]
#[test]
fn symlink_inside_the_skill_directory_is_fine() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest("s", &["a2a-input-schema: assets/link.json"], "{{ text }}");
    let dir = write_skill(
        root.path(),
        "s",
        &md,
        &[("assets/real.json", OBJECT_SCHEMA)],
    );
    std::os::unix::fs::symlink(dir.join("assets/real.json"), dir.join("assets/link.json")).unwrap();
    super::load_ok(&dir);
}

#[test]
fn schema_with_unknown_keyword_is_located_at_its_pointer() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest("s", &["a2a-input-schema: assets/in.json"], "x");
    let schema = r#"{"type":"object","properties":{"x":{"type":"string","maxLenght":3}}}"#;
    let dir = write_skill(root.path(), "s", &md, &[("assets/in.json", schema)]);
    let err = first_error(&dir);
    assert_eq!(
        err.location,
        "metadata.a2a-input-schema#/properties/x/maxLenght"
    );
    assert_eq!(err.file, dir.join("assets/in.json"));
}

#[test]
fn schema_with_remote_ref_is_located_at_the_ref() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest("s", &["a2a-output-schema: assets/out.json"], "x");
    let schema = r#"{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}"#;
    let dir = write_skill(root.path(), "s", &md, &[("assets/out.json", schema)]);
    let err = first_error(&dir);
    assert_eq!(
        err.location,
        "metadata.a2a-output-schema#/properties/a/$ref"
    );
    assert!(err.reason.contains("not a local reference"), "{err}");
}

#[test]
fn schema_file_with_invalid_json_points_into_the_file() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest("s", &["a2a-input-schema: assets/in.json"], "x");
    let dir = write_skill(
        root.path(),
        "s",
        &md,
        &[("assets/in.json", "{\n  \"type\": ,\n}")],
    );
    let err = first_error(&dir);
    assert_eq!(err.location, "metadata.a2a-input-schema");
    assert_eq!(err.file, dir.join("assets/in.json"));
    assert_eq!(err.line, Some(2));
}

fn body_error(body: &str) -> crate::skill::ManifestError {
    let root = tempfile::tempdir().unwrap();
    // Lines: 1 ---, 2 name, 3 description, 4 metadata:, 5 a2e-template, 6 ---, body from 7.
    let md = manifest("s", &["a2e-template: strict"], body);
    let dir = write_skill(root.path(), "s", &md, &[]);
    let err = first_error(&dir);
    assert_eq!(err.location, "body");
    assert_eq!(err.file, dir.join("SKILL.md"));
    err
}

#[test]
fn template_helper_is_located_in_skill_md() {
    let err = body_error("intro\n\nsee {{ upper name }}");
    assert_eq!((err.line, err.column), (Some(9), Some(5)));
    assert!(err.reason.contains("helper call `upper`"), "{err}");
}

#[test]
fn template_block_is_located_in_skill_md() {
    let err = body_error("{{#each items}}x{{/each}}");
    assert_eq!((err.line, err.column), (Some(7), Some(1)));
    assert!(err.reason.contains("block"), "{err}");
}

#[test]
fn template_partial_is_located_in_skill_md() {
    let err = body_error("a\n  {{> footer }}");
    assert_eq!((err.line, err.column), (Some(8), Some(3)));
    assert!(err.reason.contains("partial"), "{err}");
}

#[test]
fn unterminated_placeholder_is_located_in_skill_md() {
    let err = body_error("one\ntwo {{ name");
    assert_eq!(err.line, Some(8));
    assert!(err.reason.contains("invalid template syntax"), "{err}");
}

#[test]
fn invalid_yaml_is_located_in_the_frontmatter() {
    let root = tempfile::tempdir().unwrap();
    let md = "---\nname: s\ndescription: [unclosed\n---\nbody";
    let dir = write_skill(root.path(), "s", md, &[]);
    let err = first_error(&dir);
    assert_eq!(err.location, "frontmatter");
    assert!(err.line.is_some_and(|l| l >= 3), "{err}");
}

#[test]
fn duplicate_yaml_keys_are_rejected() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "s",
        "---\nname: s\nname: s\ndescription: d\n---\n",
        &[],
    );
    assert_eq!(first_error(&dir).location, "frontmatter");
}

#[test]
fn declaring_blocked_status_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "s",
        &manifest("s", &["a2e-status: Blocked"], "x"),
        &[],
    );
    assert_eq!(first_error(&dir).location, "metadata.a2e-status");
}

#[test]
fn credentials_in_provider_config_are_rejected() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest(
        "s",
        &["a2e-provider: openai", "a2a-provider-config: assets/p.json"],
        "x",
    );
    let config = r#"{"model":"gpt-4o-mini","headers":{"Authorization":"Bearer sk-x"}}"#;
    let dir = write_skill(root.path(), "s", &md, &[("assets/p.json", config)]);
    let err = first_error(&dir);
    assert_eq!(
        err.location,
        "metadata.a2a-provider-config#/headers/Authorization"
    );
    assert!(!err.to_string().contains("sk-x"), "{err}");
}

#[test]
fn oversized_skill_md_is_rejected_without_reading_it_all() {
    let root = tempfile::tempdir().unwrap();
    let big = manifest(
        "s",
        &[],
        &"x".repeat(crate::skill::assets::MAX_SKILL_MD_BYTES as usize + 1),
    );
    let dir = write_skill(root.path(), "s", &big, &[]);
    let err = first_error(&dir);
    assert_eq!(err.location, "SKILL.md");
    assert!(err.reason.contains("limit"), "{err}");
}

#[test]
fn every_problem_of_a_skill_is_reported_not_just_the_first() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest(
        "s",
        &[
            "a2a-tags: nope",
            "a2a-temperature: hot",
            "a2e-max-turns: '0'",
            "odd: x",
        ],
        "x",
    );
    let dir = write_skill(root.path(), "s", &md, &[]);
    let problems = crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::User).unwrap_err();
    let errors: Vec<_> = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(|p| p.location.as_str())
        .collect();
    assert_eq!(
        errors,
        [
            "metadata.a2a-tags",
            "metadata.a2a-temperature",
            "metadata.a2e-max-turns"
        ]
    );
}

#[test]
fn display_is_file_location_reason() {
    let err = crate::skill::ManifestError::error(
        Path::new("skills/s/SKILL.md"),
        "frontmatter.name",
        "bad",
    )
    .at(2, 7);
    assert_eq!(
        err.to_string(),
        "skills/s/SKILL.md:frontmatter.name: bad (line 2, column 7)"
    );
}

#[test]
fn an_unknown_structured_output_hint_names_the_modes() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest("s", &["a2e-structured-output: grammar"], "x");
    let dir = write_skill(root.path(), "s", &md, &[]);
    let problems = crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::User).unwrap_err();
    let problem = problems
        .iter()
        .find(|p| p.location == "metadata.a2e-structured-output")
        .expect("the key is named");
    assert!(
        problem.reason.contains("json_object") && problem.reason.contains("\"grammar\""),
        "{problem}"
    );
    let fine = manifest("s", &["a2e-structured-output: prompted"], "x");
    let dir = write_skill(root.path(), "s", &fine, &[]);
    let skill = crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::User).unwrap();
    assert_eq!(
        skill.hints.structured_output,
        Some(skillet_providers::OutputMode::Prompted)
    );
}

#[test]
fn system_tools_are_program_names_and_keep_a_plain_skill_plain() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "office",
        &manifest(
            "office",
            &["a2e-system-tools: '[\"soffice\", \"pdftoppm\"]'"],
            "x",
        ),
        &[],
    );
    let skill = load_ok(&dir);
    assert_eq!(skill.system_tools, ["soffice", "pdftoppm"]);
    assert!(skill.resources.plain_agent_skill, "like a2e-requirements");
    for bad in [
        r#"["/usr/bin/soffice"]"#,
        r#"["two words"]"#,
        r#"[".."]"#,
        "soffice",
    ] {
        let name = "bad";
        let dir = write_skill(
            root.path(),
            name,
            &manifest(name, &[&format!("a2e-system-tools: '{bad}'")], "x"),
            &[],
        );
        let err = first_error(&dir);
        assert_eq!(err.location, "metadata.a2e-system-tools", "{bad}: {err}");
    }
}

#[test]
fn reasoning_keys_are_typed_and_bad_values_are_refused_naming_the_key() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "thinker",
        &manifest(
            "thinker",
            &[
                "a2e-reasoning-effort: low",
                "a2e-thinking-budget-tokens: '2048'",
                "a2e-think: 'false'",
            ],
            "x",
        ),
        &[],
    );
    let skill = load_ok(&dir);
    let reasoning = &skill.hints.reasoning;
    assert_eq!(reasoning.reasoning_effort.as_deref(), Some("low"));
    assert_eq!(reasoning.thinking_budget_tokens, Some(2048));
    assert_eq!(reasoning.think, Some(false));
    for (key, bad) in [
        ("a2e-reasoning-effort", "extreme"),
        ("a2e-thinking-budget-tokens", "'512'"),
        ("a2e-thinking-budget-tokens", "lots"),
        ("a2e-think", "maybe"),
    ] {
        let dir = write_skill(
            root.path(),
            "bad",
            &manifest("bad", &[&format!("{key}: {bad}")], "x"),
            &[],
        );
        let err = first_error(&dir);
        assert_eq!(err.location, format!("metadata.{key}"), "{bad}: {err}");
    }
}
