//! Fallback chains against two mock-llm servers over real sockets: the host default 500s until
//! its retries are spent, the turn goes to the fallback, the events say so and the result names
//! the provider that answered; a failure that would repeat anywhere (a refused credential) does
//! not move on.

mod support;

use mock_llm::Fault;
use serde_json::json;
use skillet_engine::protocol::{ErrorCode, EventKind};
use skillet_engine::run::Limits;
use skillet_engine::tools::ToolRegistry;
use support::*;

const ANSWER: &str =
    r#"rules: [{ reply: { text: "from backup", usage: { input: 10, output: 2 } } }]"#;

#[tokio::test]
async fn a_provider_failing_after_its_retries_hands_the_turn_to_its_fallback() {
    let dir = SkillSpec::new("resilient", "Answer.").write();
    let primary = start_mock(r#"rules: [{ reply: { text: "from primary" } }]"#).await;
    let backup = start_mock(ANSWER).await;
    primary.push_fault(Fault::status(500).times(100));
    let h = harness_with(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&primary)),
        Limits::default(),
        |b| b.fallback_llm("backup", llm_config_for(&backup, "ollama", "backup-model")),
    );
    let called = h.call(request("resilient", json!({}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!("from backup")));
    assert_eq!(
        chat_bodies(&primary).len(),
        3,
        "the primary's three attempts were spent first"
    );
    assert_eq!(chat_bodies(&backup).len(), 1);
    let turns = &result.usage.as_ref().unwrap().turns;
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].provider.as_deref(), Some("backup"));
    assert_eq!(turns[0].model, "backup-model");
    assert_eq!(turns[0].input_tokens, Some(10));
    let logs = messages_of(result, EventKind::Log);
    assert!(
        logs.iter().any(|l| l.contains(&format!(
            "openai-compatible/{MODEL} failed (HTTP 500, unavailable); the turn goes to \
             fallback backup (backup-model)"
        ))),
        "{logs:?}"
    );
    let wire = serde_json::to_value(result).unwrap();
    assert_eq!(wire["usage"]["turns"][0]["provider"], "backup");
    primary.shutdown().await;
    backup.shutdown().await;
}

#[tokio::test]
async fn a_refused_credential_does_not_fall_back() {
    let dir = SkillSpec::new("resilient", "Answer.").write();
    let primary = start_mock(r#"rules: [{ reply: { text: "from primary" } }]"#).await;
    let backup = start_mock(ANSWER).await;
    primary.push_fault(Fault::status(401).times(1));
    let h = harness_with(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&primary)),
        Limits::default(),
        |b| b.fallback_llm("backup", llm_config(&backup)),
    );
    let called = h.call(request("resilient", json!({}))).await;
    let result = called.result();
    assert_eq!(
        result.error_code,
        Some(ErrorCode::RuntimeError),
        "{result:?}"
    );
    assert!(
        chat_bodies(&backup).is_empty(),
        "the backup was never asked"
    );
    // The primary answered on its own: no provider is named.
    let called = h.call(request("resilient", json!({}))).await;
    let result = called.result();
    assert_eq!(result.data, Some(json!("from primary")));
    assert_eq!(result.usage.as_ref().unwrap().turns[0].provider, None);
    primary.shutdown().await;
    backup.shutdown().await;
}
