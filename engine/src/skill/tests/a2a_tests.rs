//! A2A projection: AgentSkill fields, tag fallback, card builder rules, v0.3 input.

use serde_json::json;

use super::{bundled_skills_root, load_ok, manifest, write_skill};
use crate::skill::a2a::{AgentCard, AgentSkill, CardError, agent_skill, published_skills};
use crate::skill::{Registry, load_skills_root};
use skillet_core::card::AgentCapabilities;

#[test]
fn agent_skill_uses_a2a_keys_and_v1_field_names() {
    let root = tempfile::tempdir().unwrap();
    let md = manifest(
        "route-optimizer",
        &[
            "a2a-id: route-optimizer-traffic",
            "a2a-name: Traffic-Aware Route Optimizer",
            "a2a-tags: '[\"maps\",\"routing\"]'",
            "a2a-examples: '[\"Plan a route\"]'",
            "a2a-input-modes: '[\"application/json\",\"text/plain\"]'",
            "a2a-output-modes: '[\"application/vnd.geo+json\"]'",
            "a2a-security-requirements: '[{\"schemes\":{\"google\":{\"list\":[\"openid\"]}}}]'",
        ],
        "x",
    );
    let skill = load_ok(&write_skill(root.path(), "route-optimizer", &md, &[]));
    let projected = serde_json::to_value(agent_skill(&skill)).unwrap();
    assert_eq!(
        projected,
        json!({
            "id": "route-optimizer-traffic",
            "name": "Traffic-Aware Route Optimizer",
            "description": "A test skill.",
            "tags": ["maps", "routing"],
            "examples": ["Plan a route"],
            "inputModes": ["application/json", "text/plain"],
            "outputModes": ["application/vnd.geo+json"],
            "securityRequirements": [{"schemes": {"google": {"list": ["openid"]}}}]
        })
    );
}

#[test]
fn skill_without_tags_falls_back_to_category_then_skill() {
    let root = tempfile::tempdir().unwrap();
    let plain = load_ok(&write_skill(
        root.path(),
        "plain",
        &manifest("plain", &[], "x"),
        &[],
    ));
    let projected = agent_skill(&plain);
    assert_eq!(
        (projected.id.as_str(), projected.name.as_str()),
        ("plain", "plain")
    );
    assert_eq!(projected.tags, ["skill"]);
    let md = manifest("cat", &["a2e-category: research"], "x");
    let categorized = load_ok(&write_skill(root.path(), "cat", &md, &[]));
    assert_eq!(agent_skill(&categorized).tags, ["research"]);
    assert!(
        categorized
            .warnings
            .iter()
            .any(|w| w.location == "metadata.a2a-tags")
    );
}

#[test]
fn card_from_registry_lists_published_skills_with_defaults() {
    let registry = Registry::new();
    registry.register_all(
        load_skills_root(&bundled_skills_root(), crate::skill::SkillSource::System).skills,
    );
    registry.resolve_dependencies(&|_| false, &|_| true); // expense-report becomes Blocked
    let card = AgentCard::builder("Skillet", "Runs SKILL.md skills", "0.1.0")
        .url("http://127.0.0.1:8080/a2a")
        .capabilities(AgentCapabilities {
            streaming: Some(true),
            push_notifications: None,
            extended_agent_card: None,
        })
        .skills(published_skills(&registry))
        .build()
        .unwrap();
    let value = serde_json::to_value(&card).unwrap();
    assert_eq!(
        value["defaultInputModes"],
        json!(["application/json", "text/plain"])
    );
    assert_eq!(value["defaultOutputModes"], json!(["application/json"]));
    assert_eq!(value["capabilities"], json!({"streaming": true}));
    assert_eq!(
        value["supportedInterfaces"],
        json!([{"url": "http://127.0.0.1:8080/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}])
    );
    let ids: Vec<_> = card.skills.iter().map(|s| s.id.as_str()).collect();
    // `table-report` is a plain Agent Skill: no tags, so the card's fallback `["skill"]`.
    assert_eq!(ids, ["code-review", "summarize", "table-report"]);
    let back: AgentCard = serde_json::from_value(value).unwrap();
    assert_eq!(back, card);
}

#[test]
fn card_without_skills_or_interface_is_invalid() {
    let empty = AgentCard::builder("a", "b", "1")
        .url("http://127.0.0.1/")
        .build();
    assert_eq!(empty.unwrap_err(), CardError::NoSkills);
    let skill = AgentSkill {
        id: "s".into(),
        name: "s".into(),
        description: "d".into(),
        tags: vec!["t".into()],
        examples: vec![],
        input_modes: vec![],
        output_modes: vec![],
        security_requirements: vec![],
    };
    let no_url = AgentCard::builder("a", "b", "1")
        .skill(skill.clone())
        .build();
    assert_eq!(no_url.unwrap_err(), CardError::NoInterface);
    let untagged = AgentSkill {
        tags: vec![],
        ..skill
    };
    let err = AgentCard::builder("a", "b", "1")
        .url("http://x/")
        .skill(untagged)
        .build();
    assert_eq!(err.unwrap_err(), CardError::SkillWithoutTags("s".into()));
}

#[test]
fn reading_a_v03_card_accepts_security_and_url() {
    let v03 = json!({
        "name": "Geo", "description": "Routes", "url": "https://geo.example/a2a",
        "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0", "version": "1.0.0",
        "capabilities": {"streaming": true},
        "defaultInputModes": ["application/json"], "defaultOutputModes": ["image/png"],
        "security": [{"google": ["openid"]}],
        "skills": [{
            "id": "route", "name": "Route", "description": "d", "tags": ["maps"],
            "security": [{"google": ["openid", "profile"]}]
        }]
    });
    let card: AgentCard = serde_json::from_value(v03).unwrap();
    assert_eq!(card.supported_interfaces[0].url, "https://geo.example/a2a");
    assert_eq!(card.supported_interfaces[0].protocol_version, "0.3.0");
    assert_eq!(
        card.skills[0].security_requirements,
        [json!({"schemes": {"google": {"list": ["openid", "profile"]}}})]
    );
    assert_eq!(
        card.security_requirements,
        [json!({"schemes": {"google": {"list": ["openid"]}}})]
    );
    let written = serde_json::to_value(&card).unwrap();
    assert!(written.get("security").is_none() && written["skills"][0].get("security").is_none());
    assert!(written["skills"][0]["securityRequirements"].is_array());
}

#[test]
fn reading_a_card_with_an_untagged_skill_fails() {
    let bad = json!({
        "name": "x", "description": "y", "version": "1", "url": "http://x/",
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}]
    });
    let err = serde_json::from_value::<AgentCard>(bad).unwrap_err();
    assert!(err.to_string().contains("no tags"), "{err}");
}
