//! Loading a root in parallel reports exactly what loading its directories one by one does
//! (skills, their order and warnings, every error in order), and identical schema documents
//! share one compiled validator.

use std::path::{Path, PathBuf};

use super::{OBJECT_SCHEMA, manifest, write_skill};
use crate::skill::{CompiledSkill, LoadReport, ManifestError, load_skill_dir, load_skills_root};

const OUTPUT_SCHEMA: &str =
    r#"{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}"#;
/// A schema with a typo'd keyword: a load error located in the asset.
const TYPO_SCHEMA: &str = r#"{"type":"object","properties":{"n":{"type":"integer","minimun":1}}}"#;

/// A root of `count` skill directories of every kind, written in an order unlike their names:
/// good ones sharing two schema documents, good ones with warnings, and bad ones (a shared
/// typo'd schema, a name mismatch, an unclosed placeholder, an empty SKILL.md, broken YAML).
fn mixed_root(root: &Path, count: usize) {
    for i in (0..count).rev() {
        let name = format!("skill-{i:03}");
        let schemas = [
            "a2a-input-schema: assets/in.json",
            "a2a-output-schema: assets/out.json",
            "a2a-tags: '[\"t\"]'",
        ];
        let assets = [
            ("assets/in.json", OBJECT_SCHEMA),
            ("assets/out.json", OUTPUT_SCHEMA),
        ];
        match i % 6 {
            0 | 1 => {
                write_skill(
                    root,
                    &name,
                    &manifest(&name, &schemas, "Text: {{ text }}"),
                    &assets,
                );
            }
            2 => {
                // Warnings: an undeclared placeholder and an unknown top-level key.
                let md = manifest(&name, &schemas, "Text: {{ text }} {{ extra }}").replacen(
                    "---\n",
                    "---\nflavour: mint\n",
                    1,
                );
                write_skill(root, &name, &md, &assets);
            }
            3 => {
                let md = manifest(&name, &["a2a-input-schema: assets/in.json"], "{{ n }}");
                write_skill(root, &name, &md, &[("assets/in.json", TYPO_SCHEMA)]);
            }
            4 => {
                write_skill(root, &name, &manifest("someone-else", &[], "x"), &[]);
            }
            _ => {
                let md = manifest(&name, &["a2e-template: strict"], "Broken: {{ text");
                write_skill(root, &name, &md, &[]);
            }
        }
    }
    write_skill(root, "empty-skill", "", &[]);
    write_skill(root, "yaml-broken", "---\nname: [unclosed\n---\nbody", &[]);
}

/// The report of loading every skill directory of `root` one by one, in name order, each with
/// its own (uncached) schema compilation.
fn sequential_report(root: &Path) -> LoadReport {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("SKILL.md").exists())
        .collect();
    dirs.sort();
    let mut report = LoadReport::default();
    for dir in dirs {
        match load_skill_dir(&dir, crate::skill::SkillSource::Project) {
            Ok(skill) => report.skills.push(skill),
            Err(problems) => report.errors.extend(problems),
        }
    }
    report.skills.sort_by(|a, b| a.name().cmp(b.name()));
    report
}

/// What a client can observe of a loaded skill.
fn observable(skill: &CompiledSkill) -> (String, Vec<ManifestError>, serde_json::Value) {
    (
        skill.name().to_owned(),
        skill.warnings.clone(),
        serde_json::to_value(skill.to_wire()).unwrap(),
    )
}

#[test]
fn parallel_load_reports_exactly_what_a_sequential_load_does() {
    let root = tempfile::tempdir().unwrap();
    mixed_root(root.path(), 60);
    let parallel = load_skills_root(root.path(), crate::skill::SkillSource::Project);
    let sequential = sequential_report(root.path());

    // Not vacuous: every kind of outcome is in there.
    assert_eq!(parallel.skills.len(), 30, "{:#?}", parallel.errors);
    assert!(parallel.warnings().count() >= 20);
    let locations: Vec<&str> = parallel
        .errors
        .iter()
        .map(|e| e.location.as_str())
        .collect();
    for expected in [
        "frontmatter.name",
        "body",
        "metadata.a2a-input-schema#/properties/n/minimun",
    ] {
        assert!(
            locations.contains(&expected),
            "{expected} missing: {locations:?}"
        );
    }

    assert_eq!(parallel.errors, sequential.errors);
    let parallel_skills: Vec<_> = parallel.skills.iter().map(observable).collect();
    let sequential_skills: Vec<_> = sequential.skills.iter().map(observable).collect();
    assert_eq!(parallel_skills, sequential_skills);
}

#[test]
fn a_shared_bad_schema_is_reported_once_per_skill_with_its_own_file() {
    let root = tempfile::tempdir().unwrap();
    mixed_root(root.path(), 24);
    let report = load_skills_root(root.path(), crate::skill::SkillSource::Project);
    let typo_files: Vec<String> = report
        .errors
        .iter()
        .filter(|e| e.location.ends_with("/minimun"))
        .map(|e| e.file.display().to_string())
        .collect();
    let expected: Vec<String> = [3, 9, 15, 21]
        .iter()
        .map(|i| {
            root.path()
                .join(format!("skill-{i:03}/assets/in.json"))
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(typo_files, expected);
}

#[test]
fn identical_schema_documents_share_one_compiled_validator() {
    let root = tempfile::tempdir().unwrap();
    mixed_root(root.path(), 12);
    let report = load_skills_root(root.path(), crate::skill::SkillSource::Project);
    let first = &report.skills[0];
    let input = first.input_schema.as_ref().expect("input schema");
    let output = first.output_schema.as_ref().expect("output schema");
    for other in &report.skills[1..] {
        let other_input = other.input_schema.as_ref().expect("input schema");
        let other_output = other.output_schema.as_ref().expect("output schema");
        assert!(
            input.shares_compilation_with(other_input),
            "{}",
            other.name()
        );
        assert!(
            output.shares_compilation_with(other_output),
            "{}",
            other.name()
        );
    }
    assert!(!input.shares_compilation_with(output));

    // One directory loaded on its own compiles its own: sharing is a load's cache, not global.
    let alone = load_skill_dir(
        &root.path().join("skill-000"),
        crate::skill::SkillSource::Project,
    )
    .unwrap();
    let alone_input = alone.input_schema.as_ref().expect("input schema");
    assert!(!alone_input.shares_compilation_with(input));
    assert_eq!(alone_input.source(), input.source());
}
