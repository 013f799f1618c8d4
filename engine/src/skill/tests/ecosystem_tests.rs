//! A public-ecosystem-style SKILL.md (Agent Skills frontmatter, long markdown body, code blocks
//! full of other template languages) loads unmodified.

use serde_json::json;

use super::{load_ok, write_skill};
use crate::skill::{Severity, TemplateMode};

const ECOSYSTEM_SKILL: &str = r#"---
name: github-actions-helper
description: Writes and debugs GitHub Actions workflows. Use when the user asks about CI pipelines, workflow YAML, or failing Actions runs.
license: Apache-2.0
compatibility: Requires git and network access to github.com
allowed-tools: Bash(git:*) Read Write
metadata:
  author: example-org
  version: "1.0"
---

# GitHub Actions helper

## When to use this skill

Use this skill when the user wants to **create**, **fix** or **understand** a workflow.

## Workflow template

```yaml
name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, macos-latest]
    steps:
      - uses: actions/checkout@v4
      - run: echo "token=${{ secrets.GITHUB_TOKEN }}" >> "$GITHUB_ENV"
```

## Other template languages you may meet

Jinja: `{% for x in items %}{{ x.name }}{% endfor %}`; Go: `{{ .Values.image }}`;
Handlebars: `{{#each people}}{{this}}{{/each}}`; Vue: `<p>{{ message | capitalize }}</p>`.

## Checklist

1. Pin actions to a major version.
2. Use `permissions:` to restrict the token.
3. Cache dependencies (`actions/cache@v4`).

| Step | Why |
|------|-----|
| checkout | needs the code |
| test | proves it works |
"#;

#[test]
fn ecosystem_skill_md_loads_unmodified_with_a_literal_body() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_skill(root.path(), "github-actions-helper", ECOSYSTEM_SKILL, &[]);
    let skill = load_ok(&dir);
    assert_eq!(skill.template_mode, TemplateMode::Literal);
    let wire = skill.to_wire();
    let body = wire.instructions.as_deref().unwrap();
    assert!(body.starts_with("\n# GitHub Actions helper"), "{body:?}");
    // The body reaches the model exactly as written, whatever the arguments.
    assert_eq!(skill.render_instructions(&json!({})).unwrap(), body);
    let metadata = wire.metadata.as_ref().unwrap();
    assert_eq!(metadata["license"], "Apache-2.0");
    assert_eq!(metadata["author"], "example-org");
    assert_eq!(
        metadata["allowed_tools"],
        json!(["Bash(git:*)", "Read", "Write"])
    );
    assert_eq!(skill.to_wire().version, "0.0.0");
    assert!(
        skill.tools.is_empty(),
        "allowed-tools does not declare engine tools"
    );
    assert!(skill.warnings.is_empty(), "{:#?}", skill.warnings);
}

#[test]
fn literal_body_that_looks_like_a_template_gets_a_located_warning() {
    let root = tempfile::tempdir().unwrap();
    let md = "---\nname: s\ndescription: d\n---\nHello\n{{ name }}\n";
    let skill = load_ok(&write_skill(root.path(), "s", md, &[]));
    assert_eq!(
        skill.render_instructions(&json!({})).unwrap(),
        "Hello\n{{ name }}\n"
    );
    let warning = &skill.warnings[0];
    assert_eq!(warning.severity, Severity::Warning);
    assert_eq!((warning.location.as_str(), warning.line), ("body", Some(6)));
    assert!(warning.reason.contains("a2e-template: strict"), "{warning}");
}

#[test]
fn the_same_body_as_a_strict_template_is_rejected_with_a_location() {
    let root = tempfile::tempdir().unwrap();
    let strict = ECOSYSTEM_SKILL.replace("  author: example-org", "  a2e-template: strict");
    let dir = write_skill(root.path(), "github-actions-helper", &strict, &[]);
    let problems = crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::User).unwrap_err();
    let err = problems.iter().find(|p| p.is_error()).unwrap();
    assert_eq!(err.location, "body");
    assert!(err.line.is_some(), "{err}");
}
