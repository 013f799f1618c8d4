//! The allowed paths of `[skill_provider]` against mock-llm over real sockets: a skill's model
//! runs on the host's endpoint with the host's key (also when the host default is a ready
//! `ProviderSpec`), and an endpoint the host allows for skills runs without any host credential.
//! The refused paths are in `security_regressions.rs`.

mod support;

use std::path::Path;

use serde_json::json;
use skillet_engine::run::{Limits, SkillProviderPolicy, SkillProviderPolicyConfig};
use skillet_engine::skill;
use skillet_engine::tools::ToolRegistry;
use skillet_providers::{ProviderKind, ProviderSpec};
use support::*;

const ANSWER: &str = r#"rules: [{ reply: { text: "an answer" } }]"#;

/// `ROOT/NAME/` with `a2e-provider: PROVIDER` and `provider_config` as its provider config.
fn provider_skill(
    root: &Path,
    name: &str,
    provider: &str,
    config: serde_json::Value,
) -> skill::CompiledSkill {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Runs on the model it names.\nmetadata:\n  \
             a2e-provider: {provider}\n  a2a-provider-config: assets/provider.json\n---\nAnswer.\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("assets/provider.json"), config.to_string()).unwrap();
    skill::load_skill_dir(&dir, skillet_engine::skill::SkillSource::Project).unwrap()
}

fn has_credential(server: &mock_llm::MockServer) -> Vec<bool> {
    server
        .journal()
        .iter()
        .map(|e| {
            e.headers
                .iter()
                .any(|(name, _)| name == "authorization" || name == "x-api-key")
        })
        .collect()
}

#[tokio::test]
async fn a_skills_model_and_sampling_run_on_a_host_spec_with_the_hosts_key() {
    let server = start_mock(ANSWER).await;
    let root = tempfile::tempdir().unwrap();
    let skill = provider_skill(
        root.path(),
        "own-model",
        "openai-compatible",
        json!({"model": "skill-model", "temperature": 0.25}),
    );
    let host = ProviderSpec::new(
        ProviderKind::OpenaiCompatible,
        "host-model",
        Some(&format!("{}/v1", server.base_url())),
    )
    .unwrap()
    .with_api_key("host-key-0123456789".to_owned().into());
    let h = harness_with(
        registry([skill]),
        ToolRegistry::new(),
        None,
        Limits::default(),
        |b| b.default_provider(host),
    );
    let called = h.call(request("own-model", json!({}))).await;
    assert!(called.result().success, "{:?}", called.result());
    let bodies = chat_bodies(&server);
    assert_eq!(bodies[0]["model"], "skill-model");
    assert_eq!(bodies[0]["temperature"], 0.25);
    assert_eq!(
        has_credential(&server),
        vec![true],
        "the host's own endpoint gets its key"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_endpoint_the_host_allows_for_skills_runs_without_any_host_credential() {
    let host_server = start_mock(ANSWER).await;
    let skill_server = start_mock(ANSWER).await;
    let root = tempfile::tempdir().unwrap();
    let skill = provider_skill(
        root.path(),
        "own-endpoint",
        "ollama",
        json!({"model": "llama3.2", "base_url": skill_server.base_url()}),
    );
    let policy = SkillProviderPolicy::from_config(SkillProviderPolicyConfig {
        allowed_providers: vec![ProviderKind::Ollama],
        allowed_base_urls: vec![skill_server.base_url()],
        ..SkillProviderPolicyConfig::default()
    })
    .unwrap();
    let h = harness_with(
        registry([skill]),
        ToolRegistry::new(),
        Some(llm_config(&host_server)),
        Limits::default(),
        |b| b.skill_provider_policy(policy),
    );
    let called = h.call(request("own-endpoint", json!({}))).await;
    assert!(called.result().success, "{:?}", called.result());
    assert_eq!(chat_bodies(&skill_server)[0]["model"], "llama3.2");
    assert_eq!(
        has_credential(&skill_server),
        vec![false],
        "no host key travels there"
    );
    assert!(chat_bodies(&host_server).is_empty());
    host_server.shutdown().await;
    skill_server.shutdown().await;
}
