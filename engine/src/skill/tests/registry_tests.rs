//! Registry: duplicates, discover filters and order, dependency resolution, native skills.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{bundled_skills_root, load_ok, manifest, write_skill};
use crate::handler::{HandlerContext, HandlerError, SkillHandler};
use crate::protocol::{SkillDefinition, SkillStatus};
use crate::skill::{Implementation, Registry, RegistryError, load_skills_root};

struct Echo;

#[async_trait]
impl SkillHandler for Echo {
    async fn run(&self, arguments: Value, _ctx: HandlerContext) -> Result<Value, HandlerError> {
        Ok(arguments)
    }
}

fn native_definition(name: &str) -> SkillDefinition {
    serde_json::from_value(json!({
        "name": name, "version": "1.0.0", "description": "Echoes its arguments.",
        "triggers": ["echo"], "status": "Published",
        "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}}},
        "when_to_use": "Testing.", "argument_hint": "{x}", "source": "system",
        "category": "util", "tags": ["test"], "tools": [{"name": "clock"}]
    }))
    .unwrap()
}

fn skill_with(
    root: &std::path::Path,
    name: &str,
    metadata: &[&str],
) -> crate::skill::CompiledSkill {
    load_ok(&write_skill(
        root,
        name,
        &manifest(name, metadata, "x"),
        &[],
    ))
}

fn names(defs: &[SkillDefinition]) -> Vec<&str> {
    defs.iter().map(|d| d.name.as_str()).collect()
}

fn bundled_registry() -> Registry {
    let registry = Registry::new();
    let report = load_skills_root(&bundled_skills_root(), crate::skill::SkillSource::System);
    assert!(registry.register_all(report.skills).is_empty());
    registry
}

#[test]
fn duplicate_name_is_an_error_and_keeps_the_first() {
    let root = tempfile::tempdir().unwrap();
    let registry = Registry::new();
    registry
        .register(skill_with(root.path(), "dup", &["a2e-version: '1'"]))
        .unwrap();
    let other = tempfile::tempdir().unwrap();
    let err = registry
        .register(skill_with(other.path(), "dup", &["a2e-version: '2'"]))
        .unwrap_err();
    assert!(
        matches!(&err, RegistryError::Duplicate { name, .. } if name == "dup"),
        "{err}"
    );
    assert_eq!(registry.get("dup").unwrap().to_wire().version, "1");
    let err = registry
        .register_native(native_definition("dup"), Arc::new(Echo))
        .unwrap_err();
    assert!(
        err.to_string().contains("duplicate skill name `dup`"),
        "{err}"
    );
}

#[test]
fn native_skills_register_with_compiled_schemas() {
    let registry = Registry::new();
    registry
        .register_native(native_definition("code_echo"), Arc::new(Echo))
        .unwrap();
    let skill = registry.get("code_echo").unwrap();
    assert!(matches!(skill.implementation, Implementation::Native(_)));
    assert_eq!(skill.compiled.tools, ["clock"]);
    let schema = skill.compiled.input_schema.as_ref().unwrap();
    assert!(schema.validate(&json!({"x": "not a number"})).is_err());
    assert!(skill.compiled.output_schema.is_none());
}

#[test]
fn native_skill_with_a_bad_schema_is_refused() {
    let mut def = native_definition("bad");
    def.input_schema = json!({"type": "object", "propertys": {}})
        .as_object()
        .unwrap()
        .clone();
    let err = Registry::new()
        .register_native(def, Arc::new(Echo))
        .unwrap_err();
    let RegistryError::Invalid(problems) = err else {
        panic!("{err}")
    };
    assert_eq!(problems[0].location, "definition.input_schema#/propertys");
}

#[test]
fn native_skill_with_an_unknown_source_is_refused() {
    let mut def = native_definition("odd");
    def.source = "elsewhere".to_owned();
    let err = Registry::new()
        .register_native(def, Arc::new(Echo))
        .unwrap_err();
    let RegistryError::Invalid(problems) = err else {
        panic!("{err}")
    };
    assert_eq!(problems[0].location, "definition.source");
    assert!(
        problems[0].to_string().contains("elsewhere"),
        "{}",
        problems[0]
    );
}

#[test]
fn a_native_skill_is_advertised_as_registered_with_its_dependencies_as_names() {
    let registry = Registry::new();
    registry
        .register_native(native_definition("echo"), Arc::new(Echo))
        .unwrap();
    let skill = registry.get("echo").unwrap();
    assert_eq!(
        skill.compiled.spec.source,
        crate::skill::SkillSource::System
    );
    assert_eq!(skill.compiled.tools, ["clock"]);
    let mut expected = native_definition("echo");
    expected.tools = Some(vec![json!("clock")]);
    assert_eq!(registry.discover(&[], &[]), [expected]);
}

#[test]
fn discover_without_filters_returns_all_sorted_by_name() {
    let registry = bundled_registry();
    registry
        .register_native(native_definition("aardvark"), Arc::new(Echo))
        .unwrap();
    let all = registry.discover(&[], &[]);
    assert_eq!(
        names(&all),
        [
            "aardvark",
            "code-review",
            "expense-report",
            "summarize",
            "table-report"
        ]
    );
}

#[test]
fn discover_tags_are_or_and_case_insensitive() {
    let registry = bundled_registry();
    let tags = vec!["CODING".to_owned(), "finance".to_owned()];
    assert_eq!(
        names(&registry.discover(&tags, &[])),
        ["code-review", "expense-report"]
    );
    assert!(registry.discover(&["nothing".to_owned()], &[]).is_empty());
}

#[test]
fn discover_categories_filter_and_combine_with_tags() {
    let registry = bundled_registry();
    let writing = vec!["writing".to_owned()];
    assert_eq!(names(&registry.discover(&[], &writing)), ["summarize"]);
    let coding = vec!["coding".to_owned()];
    assert!(registry.discover(&coding, &writing).is_empty());
}

#[test]
fn missing_tool_blocks_and_reports_names_then_publishes_when_available() {
    let registry = bundled_registry();
    registry.resolve_dependencies(&|_| false, &|_| true);
    let blocked = registry.get("expense-report").unwrap();
    assert_eq!(blocked.status, SkillStatus::Blocked);
    assert!(!blocked.is_runnable());
    assert_eq!(blocked.blockers.missing_tools, ["calculator"]);
    let advertised = registry
        .discover(&["finance".to_owned()], &[])
        .pop()
        .unwrap();
    assert_eq!(advertised.status, SkillStatus::Blocked);
    let metadata = advertised.metadata.unwrap();
    assert_eq!(metadata["missing_tools"], json!(["calculator"]));
    assert_eq!(metadata["blocked_reason"], "missing tools: calculator");
    // Skills without dependencies are unaffected.
    assert_eq!(
        registry.get("summarize").unwrap().status,
        SkillStatus::Published
    );

    registry.resolve_dependencies(&|name| name == "calculator", &|_| true);
    let published = registry.get("expense-report").unwrap();
    assert_eq!(published.status, SkillStatus::Published);
    assert!(published.blockers.missing_tools.is_empty());
    let metadata = published.to_wire().metadata.clone().unwrap_or_default();
    assert!(!metadata.contains_key("blocked_reason") && !metadata.contains_key("missing_tools"));
    // A reference taken before the change still sees the old state.
    assert_eq!(blocked.status, SkillStatus::Blocked);
}

#[test]
fn missing_toolkits_are_reported_separately() {
    let root = tempfile::tempdir().unwrap();
    let registry = Registry::new();
    let skill = skill_with(
        root.path(),
        "kit",
        &["a2e-tools: '[\"t1\"]'", "a2e-toolkits: '[\"gh\",\"fs\"]'"],
    );
    registry.register(skill).unwrap();
    registry.resolve_dependencies(&|_| false, &|kit| kit == "fs");
    let skill = registry.get("kit").unwrap();
    assert_eq!(
        (
            skill.blockers.missing_tools.as_slice(),
            skill.blockers.missing_toolkits.as_slice()
        ),
        (&["t1".to_owned()][..], &["gh".to_owned()][..])
    );
    let wire = skill.to_wire();
    let metadata = wire.metadata.as_ref().unwrap();
    assert_eq!(metadata["missing_toolkits"], json!(["gh"]));
    assert_eq!(
        metadata["blocked_reason"],
        "missing tools: t1; missing toolkits: gh"
    );
}

#[test]
fn created_and_archived_skills_keep_their_status() {
    let root = tempfile::tempdir().unwrap();
    let registry = Registry::new();
    registry
        .register(skill_with(
            root.path(),
            "draft",
            &["a2e-status: Created", "a2e-tools: '[\"x\"]'"],
        ))
        .unwrap();
    registry.resolve_dependencies(&|_| false, &|_| false);
    assert_eq!(registry.get("draft").unwrap().status, SkillStatus::Created);
}

#[test]
fn availability_callbacks_may_read_the_registry() {
    let registry = Arc::new(bundled_registry());
    let inner = registry.clone();
    // Would deadlock if the callbacks ran under the registry's lock.
    registry.resolve_dependencies(&|_| inner.get("summarize").is_some(), &|_| true);
    assert_eq!(
        registry.get("expense-report").unwrap().status,
        SkillStatus::Published
    );
}

#[test]
fn concurrent_reads_see_consistent_snapshots() {
    let registry = Arc::new(bundled_registry());
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let r = registry.clone();
            std::thread::spawn(move || {
                for _ in 0..200 {
                    assert_eq!(r.discover(&[], &[]).len(), 4);
                    assert!(r.get("summarize").is_some());
                }
            })
        })
        .collect();
    for i in 0..50 {
        registry.resolve_dependencies(&|_| i % 2 == 0, &|_| true);
    }
    for reader in readers {
        reader.join().unwrap();
    }
}

#[test]
fn a_provider_verdict_blocks_survives_dependency_resolution_and_joins_the_reason() {
    let registry = bundled_registry();
    registry.resolve_providers(&|skill| {
        (skill.name() == "expense-report").then(|| "provider: not on this host".to_owned())
    });
    registry.resolve_dependencies(&|_| false, &|_| true);
    let blocked = registry.get("expense-report").unwrap();
    assert_eq!(blocked.status, SkillStatus::Blocked);
    assert_eq!(
        blocked.blockers.provider_denied.as_deref(),
        Some("provider: not on this host")
    );
    let metadata = blocked.to_wire().metadata.clone().unwrap();
    assert_eq!(
        metadata["blocked_reason"],
        "missing tools: calculator; provider: not on this host"
    );
    assert_eq!(metadata["provider_denied"], "provider: not on this host");
    // Tools arriving do not publish it; only a new verdict does.
    registry.resolve_dependencies(&|_| true, &|_| true);
    assert_eq!(
        registry.get("expense-report").unwrap().status,
        SkillStatus::Blocked
    );
    registry.resolve_providers(&|_| None);
    assert_eq!(
        registry.get("expense-report").unwrap().status,
        SkillStatus::Published
    );
    assert_eq!(
        registry.get("summarize").unwrap().status,
        SkillStatus::Published
    );
}

#[test]
fn an_environment_failure_blocks_survives_the_other_resolutions_and_lifts_on_success() {
    let registry = bundled_registry();
    let failure = "uv pip install failed: no-such-package was not found";
    registry
        .resolve_environments(&|skill| (skill.name() == "summarize").then(|| failure.to_owned()));
    registry.resolve_dependencies(&|_| true, &|_| true);
    registry.resolve_providers(&|_| None);
    let blocked = registry.get("summarize").unwrap();
    assert_eq!(blocked.status, SkillStatus::Blocked);
    assert_eq!(
        blocked.blockers.environment_failed.as_deref(),
        Some(failure)
    );
    let metadata = blocked.to_wire().metadata.clone().unwrap();
    assert_eq!(metadata["environment_failed"], failure);
    assert_eq!(
        metadata["blocked_reason"],
        format!("environment: {failure}")
    );
    registry.resolve_environments(&|_| None);
    let published = registry.get("summarize").unwrap();
    assert_eq!(published.status, SkillStatus::Published);
    assert!(
        published
            .to_wire()
            .metadata
            .as_ref()
            .is_none_or(|m| !m.contains_key("environment_failed"))
    );
}

#[test]
fn missing_system_tools_block_beside_other_blockers_and_each_kind_lifts_alone() {
    let registry = bundled_registry();
    let missing = "soffice (not offered: add it to `[skills.scripts] tools`)";
    registry.resolve_system_tools(&|skill| {
        if skill.name() == "summarize" {
            vec![missing.to_owned()]
        } else {
            Vec::new()
        }
    });
    registry.resolve_dependencies(&|tool| tool != "calculator", &|_| true);
    let blocked = registry.get("summarize").unwrap();
    assert_eq!(blocked.status, SkillStatus::Blocked);
    assert_eq!(blocked.blockers.missing_system_tools, [missing]);
    let metadata = blocked.to_wire().metadata.clone().unwrap();
    assert_eq!(metadata["missing_system_tools"], json!([missing]));
    assert!(
        metadata["blocked_reason"]
            .as_str()
            .unwrap()
            .contains(&format!("missing system tools: {missing}"))
    );
    registry.resolve_system_tools(&|_| Vec::new());
    let published = registry.get("summarize").unwrap();
    assert_eq!(
        published.status,
        SkillStatus::Published,
        "only the tools kind blocked it"
    );
    assert!(published.blockers.is_empty());
}
