//! Successful loads: defaults, typed keys, bundled skills, roots with good and bad skills.

use serde_json::json;

use super::{OBJECT_SCHEMA, bundled_skills_root, load_ok, manifest, write_skill};
use crate::protocol::SkillStatus;
use crate::skill::{TemplateMode, load_skills_root};

#[test]
fn defaults_fill_the_required_a2e_fields() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(
        root.path(),
        "plain-skill",
        &manifest("plain-skill", &[], "Do it."),
        &[],
    );
    let skill = load_ok(&dir);
    let def = &skill.to_wire();
    assert_eq!(def.version, "0.0.0");
    assert_eq!(def.triggers, ["plain skill"]);
    assert_eq!(def.when_to_use, "A test skill.");
    assert_eq!(def.argument_hint, "Free-form JSON object");
    assert_eq!(def.source, "project");
    assert_eq!(def.status, SkillStatus::Published);
    assert_eq!(def.instructions.as_deref(), Some("Do it."));
    assert_eq!(
        def.file_path.as_deref(),
        Some(dir.join("SKILL.md").to_str().unwrap())
    );
    assert!(def.input_schema.is_empty() && def.output_schema.is_empty());
    assert!(def.tools.is_none() && def.toolkits.is_none() && def.llm_config.is_none());
    assert!(skill.input_schema.is_none() && skill.output_schema.is_none());
    assert_eq!(skill.a2a.id, "plain-skill");
    assert_eq!(skill.template_mode, TemplateMode::Literal);
    assert!(skill.warnings.is_empty(), "{:#?}", skill.warnings);
}

#[test]
fn every_key_is_typed_into_the_definition_hints_and_a2a_data() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest(
        "full",
        &[
            "a2a-id: full-v2",
            "a2a-name: Full Skill",
            "a2a-tags: '[\"a\",\"b\"]'",
            "a2a-examples: '[\"do a\"]'",
            "a2a-input-modes: '[\"application/json\"]'",
            "a2a-output-modes: '[\"text/plain\"]'",
            "a2a-security-requirements: '[{\"schemes\":{\"oauth\":{\"list\":[\"read\"]}}}]'",
            "a2a-max-tokens: '256'",
            "a2a-temperature: '0.3'",
            "a2a-top-p: '0.9'",
            "a2a-input-schema: assets/in.json",
            "a2a-provider-config: assets/provider.json",
            "a2e-version: 2.1.0",
            "a2e-triggers: '[\"full run\"]'",
            "a2e-tools: '[\"calculator\",\"search\"]'",
            "a2e-toolkits: '[\"github\"]'",
            "a2e-category: testing",
            "a2e-when-to-use: When testing.",
            "a2e-argument-hint: Give text.",
            "a2e-max-turns: '7'",
            "a2e-timeout-seconds: '30'",
            "a2e-status: Created",
            "a2e-icon: 🧪",
            "a2e-provider: ollama",
            "a2e-model: llama3.2",
            "a2e-arguments: '[\"--fast\"]'",
            "team: qa",
        ],
        "Text: {{ text }}",
    );
    let provider = r#"{"base_url":"http://127.0.0.1:11434","api_key_env":"OLLAMA_KEY"}"#;
    let dir = write_skill(
        root.path(),
        "full",
        &md,
        &[
            ("assets/in.json", OBJECT_SCHEMA),
            ("assets/provider.json", provider),
        ],
    );
    let skill = load_ok(&dir);
    let def = &skill.to_wire();
    assert_eq!(def.version, "2.1.0");
    assert_eq!(def.triggers, ["full run"]);
    assert_eq!(def.tools, Some(vec![json!("calculator"), json!("search")]));
    assert_eq!(skill.tools, ["calculator", "search"]);
    assert_eq!(skill.toolkits, ["github"]);
    assert_eq!(def.category.as_deref(), Some("testing"));
    assert_eq!(def.when_to_use, "When testing.");
    assert_eq!(def.argument_hint, "Give text.");
    assert_eq!((def.max_turns, def.timeout_seconds), (Some(7), Some(30)));
    assert_eq!(def.status, SkillStatus::Created);
    assert_eq!(def.icon.as_deref(), Some("🧪"));
    assert_eq!(def.arguments, Some(vec!["--fast".to_owned()]));
    assert_eq!(def.tags, Some(vec!["a".to_owned(), "b".to_owned()]));
    let llm = def.llm_config.as_ref().unwrap();
    assert_eq!(llm.provider_name, "ollama");
    assert!(llm.provider_credentials.is_empty());
    let config = llm.provider_config.as_ref().unwrap();
    assert_eq!(config["model"], "llama3.2");
    assert_eq!(config["base_url"], "http://127.0.0.1:11434");
    let metadata = def.metadata.as_ref().unwrap();
    assert_eq!(metadata["team"], "qa");
    assert_eq!(metadata["a2a"]["examples"], json!(["do a"]));
    assert_eq!(skill.hints.max_tokens, Some(256));
    assert_eq!(skill.hints.temperature, Some(0.3));
    assert_eq!(skill.hints.top_p, Some(0.9));
    assert_eq!(skill.a2a.id, "full-v2");
    assert_eq!(skill.a2a.display_name.as_deref(), Some("Full Skill"));
    assert_eq!(skill.a2a.security_requirements.len(), 1);
    assert_eq!(skill.template_mode, TemplateMode::Strict);
    assert_eq!(
        skill.render_instructions(&json!({"text": "hi"})).unwrap(),
        "Text: hi"
    );
    assert!(skill.warnings.is_empty(), "{:#?}", skill.warnings);
}

#[test]
fn argument_hint_default_describes_the_input_schema() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest(
        "s",
        &["a2a-input-schema: in.json", "a2a-tags: '[\"t\"]'"],
        "{{ text }}",
    );
    let dir = write_skill(root.path(), "s", &md, &[("in.json", OBJECT_SCHEMA)]);
    assert_eq!(
        load_ok(&dir).to_wire().argument_hint,
        "JSON object: text (string, required)"
    );
}

#[test]
fn unknown_top_level_keys_are_warnings_and_version_is_used() {
    let root = tempfile::tempdir().unwrap();
    let md = "---\nname: s\ndescription: d\nversion: 1.2\nauthor: me\n---\nbody";
    let skill = load_ok(&write_skill(root.path(), "s", md, &[]));
    assert_eq!(skill.to_wire().version, "1.2");
    let locations: Vec<_> = skill.warnings.iter().map(|w| w.location.as_str()).collect();
    assert_eq!(locations, ["frontmatter.version", "frontmatter.author"]);
}

#[test]
fn strict_template_warns_about_optional_and_undeclared_placeholders() {
    let root = tempfile::tempdir().unwrap();
    let schema = r#"{"type":"object","properties":{"text":{},"opt":{}},"required":["text"]}"#;
    let md = manifest(
        "s",
        &["a2a-input-schema: in.json", "a2a-tags: '[\"t\"]'"],
        "{{ text }} {{ opt }}\n{{ nope.x }}",
    );
    let skill = load_ok(&write_skill(root.path(), "s", &md, &[("in.json", schema)]));
    let reasons: Vec<_> = skill
        .warnings
        .iter()
        .map(|w| (w.line, w.reason.clone()))
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:#?}");
    assert!(reasons[0].1.contains("`opt` is optional"), "{reasons:#?}");
    assert_eq!(reasons[1].0, Some(9));
    assert!(reasons[1].1.contains("no property `nope`"), "{reasons:#?}");
}

#[test]
fn escaped_braces_in_a_strict_body_render_literally() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest(
        "s",
        &["a2e-template: strict"],
        r"Use \{{ var }} in Jinja. Hi {{ who }}.",
    );
    let skill = load_ok(&write_skill(root.path(), "s", &md, &[]));
    assert_eq!(
        skill.render_instructions(&json!({"who": "Ada"})).unwrap(),
        "Use {{ var }} in Jinja. Hi Ada."
    );
}

#[test]
fn root_loads_good_skills_and_reports_every_bad_one() {
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "good-b", &manifest("good-b", &[], "b"), &[]);
    write_skill(root.path(), "good-a", &manifest("good-a", &[], "a"), &[]);
    write_skill(root.path(), "bad-name", &manifest("other", &[], "x"), &[]);
    write_skill(
        root.path(),
        "bad-tags",
        &manifest("bad-tags", &["a2a-tags: '['"], "x"),
        &[],
    );
    std::fs::create_dir_all(root.path().join("not-a-skill")).unwrap();
    std::fs::create_dir_all(root.path().join(".hidden")).unwrap();
    std::fs::write(root.path().join(".hidden/SKILL.md"), "garbage").unwrap();
    let report = load_skills_root(root.path(), crate::skill::SkillSource::User);
    let names: Vec<_> = report.skills.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["good-a", "good-b"]);
    let failed: Vec<_> = report.errors.iter().map(|e| e.location.as_str()).collect();
    assert_eq!(failed, ["frontmatter.name", "metadata.a2a-tags"]);
}

#[test]
fn unreadable_root_is_reported() {
    let report = load_skills_root(
        std::path::Path::new("/nonexistent/skills-root"),
        crate::skill::SkillSource::User,
    );
    assert!(report.skills.is_empty());
    assert_eq!(report.errors[0].location, "directory");
}

#[test]
fn bundled_skills_load_without_warnings() {
    let report = load_skills_root(&bundled_skills_root(), crate::skill::SkillSource::System);
    assert!(report.errors.is_empty(), "{:#?}", report.errors);
    let names: Vec<_> = report.skills.iter().map(|s| s.name()).collect();
    for expected in ["code-review", "expense-report", "summarize"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    assert!(names.contains(&"table-report"), "{names:?}");
    for skill in &report.skills {
        assert!(
            skill.warnings.is_empty(),
            "{}: {:#?}",
            skill.name(),
            skill.warnings
        );
        if skill.resources.plain_agent_skill {
            // `table-report` is plain Agent Skills on purpose: no Skillet metadata at all.
            assert!(skill.resources.has_scripts() && skill.resources.uses_files());
            continue;
        }
        assert!(
            skill.input_schema.is_some() && skill.output_schema.is_some(),
            "{}",
            skill.name()
        );
        assert!(
            !skill.a2a.tags.is_empty() && !skill.a2a.examples.is_empty(),
            "{}",
            skill.name()
        );
        assert_eq!(skill.template_mode, TemplateMode::Strict);
    }
}

#[test]
fn bundled_skills_render_and_validate_realistic_calls() {
    let report = load_skills_root(&bundled_skills_root(), crate::skill::SkillSource::System);
    let get = |n: &str| report.skills.iter().find(|s| s.name() == n).unwrap();

    let summarize = get("summarize");
    let args = json!({"text": "Rust 1.0 shipped in 2015.", "max_words": 20});
    summarize
        .input_schema
        .as_ref()
        .unwrap()
        .validate(&args)
        .unwrap();
    assert!(
        summarize
            .render_instructions(&args)
            .unwrap()
            .ends_with("Rust 1.0 shipped in 2015.\n")
    );
    let out = json!({"summary": "Rust 1.0 shipped.", "key_points": ["2015"]});
    summarize
        .output_schema
        .as_ref()
        .unwrap()
        .validate(&out)
        .unwrap();

    let review = get("code-review");
    let out =
        json!({"verdict": "maybe", "issues": [{"line": 0, "severity": "fatal", "message": ""}]});
    let violations = review
        .output_schema
        .as_ref()
        .unwrap()
        .validate(&out)
        .unwrap_err();
    assert_eq!(violations.len(), 4, "{violations:#?}");

    let expense = get("expense-report");
    assert_eq!(expense.tools, ["calculator"]);
    let args = json!({"items": [{"description": "Hotel", "amount": 180}], "currency": "EUR"});
    expense
        .input_schema
        .as_ref()
        .unwrap()
        .validate(&args)
        .unwrap();
    let text = expense.render_instructions(&args).unwrap();
    assert!(
        text.contains(r#"[{"description":"Hotel","amount":180}]"#),
        "{text}"
    );
    assert!(text.contains(r#""currency": "EUR""#), "{text}");
}
