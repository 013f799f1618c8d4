//! Host policy around the run loop, against mock-llm over real sockets: `llm_override` allowed
//! and denied, skill `llm_config` resolution, pre-terminal gates (veto names the gate) and
//! terminal hooks (exactly once per outcome, isolated from panics, time-bounded).

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use skillet_engine::protocol::{ErrorCode, EventKind};
use skillet_engine::run::{GateContext, Limits, PreTerminalGate, TerminalEvent, TerminalHook};
use skillet_engine::tools::ToolRegistry;
use skillet_providers::{OverridePolicy, OverridePolicyConfig, ProviderKind};
use support::*;

const ANSWER: &str = r#"rules: [{ reply: { text: "an answer" } }]"#;

fn policy_for(server: &mock_llm::MockServer, credentials: bool) -> OverridePolicy {
    OverridePolicy::from_config(OverridePolicyConfig {
        allowed_providers: vec![ProviderKind::OpenaiCompatible],
        allowed_base_urls: vec![server.base_url()],
        allowed_models: vec!["override-*".into()],
        allow_request_credentials: credentials,
        allowed_credential_envs: vec![],
    })
    .unwrap()
}

#[tokio::test]
async fn allowed_override_runs_on_the_requested_model() {
    let dir = SkillSpec::new("plain", "Answer.").write();
    let server = start_mock(ANSWER).await;
    let policy = policy_for(&server, true);
    let h = harness_with(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
        |b| b.override_policy(policy),
    );
    let mut req = request("plain", json!({}));
    req.llm_override = Some(llm_config_for(
        &server,
        "openai-compatible",
        "override-large",
    ));
    let called = h.call(req).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(
        messages_of(result, EventKind::Status),
        vec!["turn 1/8 · openai-compatible/override-large".to_owned()]
    );
    assert_eq!(chat_bodies(&server)[0]["model"], "override-large");
    server.shutdown().await;
}

#[tokio::test]
async fn denied_override_is_unauthorized_and_nothing_runs() {
    let dir = SkillSpec::new("plain", "Answer.").write();
    let server = start_mock(ANSWER).await;
    let h = harness_with(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
        |b| b.override_policy(policy_for(&server, false)),
    );
    // A model outside the allowed globs.
    let mut req = request("plain", json!({}));
    req.llm_override = Some(llm_config_for(&server, "openai-compatible", "gpt-secret"));
    let error = h.call(req).await.response.error.unwrap();
    assert_eq!(error.code, ErrorCode::Unauthorized);
    assert!(error.message.contains("gpt-secret"), "{}", error.message);
    // An allowed model, but the request carries its own key and the policy forbids that.
    let mut req = request("plain", json!({}));
    req.llm_override = Some(llm_config_for(&server, "openai-compatible", "override-x"));
    let error = h.call(req).await.response.error.unwrap();
    assert_eq!(error.code, ErrorCode::Unauthorized);
    assert!(
        !error.message.contains("test-key"),
        "never echoes a credential"
    );
    // A host environment variable the policy does not list is refused before it is read.
    let mut req = request("plain", json!({}));
    req.llm_override = Some(
        serde_json::from_value(json!({
            "provider_name": "openai-compatible",
            "provider_credentials": {"api_key_env": "HOME"},
            "provider_config": {"model": "override-x", "base_url": format!("{}/v1", server.base_url())}
        }))
        .unwrap(),
    );
    let error = h.call(req).await.response.error.unwrap();
    assert_eq!(error.code, ErrorCode::Unauthorized);
    assert!(error.message.contains("HOME"), "{}", error.message);
    assert!(chat_bodies(&server).is_empty(), "nothing ran");
    server.shutdown().await;
}

#[tokio::test]
async fn skill_llm_config_inherits_the_host_defaults_base_url_and_credentials() {
    let dir = SkillSpec::new("own-model", "Answer.")
        .meta("a2e-provider", "openai-compatible")
        .meta("a2e-model", "skill-model")
        .write();
    let server = start_mock(ANSWER).await;
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    for _ in 0..2 {
        let called = h.call(request("own-model", json!({}))).await;
        assert!(called.result().success, "{:?}", called.result());
    }
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 2);
    assert!(bodies.iter().all(|b| b["model"] == "skill-model"));
    server.shutdown().await;
}

#[tokio::test]
async fn without_any_model_the_call_is_rejected() {
    let dir = SkillSpec::new("plain", "Answer.").write();
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        None,
        Limits::default(),
    );
    let error = h
        .call(request("plain", json!({})))
        .await
        .response
        .error
        .unwrap();
    assert_eq!(error.code, ErrorCode::RuntimeError);
    assert!(
        error.message.contains("no model configured"),
        "{}",
        error.message
    );
}

struct Gate {
    name: &'static str,
    seen: Mutex<Vec<Value>>,
}

#[async_trait]
impl PreTerminalGate for Gate {
    fn name(&self) -> &str {
        self.name
    }

    async fn check(&self, ctx: GateContext<'_>) -> Result<(), String> {
        self.seen.lock().unwrap().push(ctx.output.clone());
        match ctx.output.as_str() {
            Some(text) if text.contains("forbidden") => Err("mentions a forbidden word".into()),
            Some(text) if text.contains("explode") => panic!("gate bug"),
            _ => Ok(()),
        }
    }
}

#[tokio::test]
async fn gate_sees_the_output_and_its_veto_names_the_gate() {
    let dir = SkillSpec::new("plain", "Answer.").write();
    let server = start_mock(
        r#"
rules:
  - { when: { user_contains: "bad" }, reply: { text: "a forbidden answer" } }
  - { when: { user_contains: "bug" }, reply: { text: "explode" } }
  - { reply: { text: "a fine answer" } }
"#,
    )
    .await;
    let gate = Arc::new(Gate {
        name: "word-filter",
        seen: Mutex::default(),
    });
    let h = harness_with(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
        |b| b.gate(gate.clone()),
    );
    let ok = h.call(request("plain", json!({"prompt": "good"}))).await;
    assert!(ok.result().success);
    let vetoed = h.call(request("plain", json!({"prompt": "bad"}))).await;
    let result = vetoed.result();
    assert!(!result.success);
    assert_eq!(result.error_code, Some(ErrorCode::SkillError));
    let error = result.error.as_deref().unwrap();
    assert!(error.contains("gate `word-filter`"), "{error}");
    assert!(error.contains("mentions a forbidden word"), "{error}");
    let panicked = h.call(request("plain", json!({"prompt": "bug"}))).await;
    let result = panicked.result();
    assert_eq!(result.error_code, Some(ErrorCode::RuntimeError));
    assert!(
        result
            .error
            .as_deref()
            .unwrap()
            .contains("gate `word-filter` panicked")
    );
    assert_eq!(
        *gate.seen.lock().unwrap(),
        vec![
            json!("a fine answer"),
            json!("a forbidden answer"),
            json!("explode")
        ]
    );
    server.shutdown().await;
}

struct BadHook {
    panics: bool,
}

#[async_trait]
impl TerminalHook for BadHook {
    fn name(&self) -> &str {
        if self.panics { "panicking" } else { "sleepy" }
    }

    async fn on_terminal(&self, _event: TerminalEvent<'_>) {
        if self.panics {
            panic!("hook bug");
        }
        tokio::time::sleep(Duration::from_secs(600)).await;
    }
}

#[tokio::test]
async fn hooks_fire_once_per_outcome_and_a_panicking_or_slow_hook_cannot_hold_the_call() {
    let dir = SkillSpec::new("plain", "Answer.").write();
    let server = start_mock(ANSWER).await;
    let h = harness_with(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits {
            hook_timeout: Duration::from_millis(200),
            ..Limits::default()
        },
        |b| {
            b.hook(Arc::new(BadHook { panics: true }))
                .hook(Arc::new(BadHook { panics: false }))
        },
    );
    let success = request("plain", json!({}));
    let success_id = success.id.clone();
    assert!(h.call(success).await.result().success);
    assert_eq!(h.hooks.outcomes(&success_id), vec!["completed:true"]);

    let unknown = request("missing", json!({}));
    let unknown_id = unknown.id.clone();
    h.call(unknown).await;
    assert_eq!(
        h.hooks.outcomes(&unknown_id),
        vec!["rejected:unknown_skill"]
    );

    let mut timed_out = request("plain", json!({}));
    timed_out.timeout = 1;
    let timed_out_id = timed_out.id.clone();
    server.push_fault(mock_llm::Fault::latency(Duration::from_secs(60)));
    let called = h.call(timed_out).await;
    assert_eq!(called.result().error_code, Some(ErrorCode::Timeout));
    assert_eq!(h.hooks.outcomes(&timed_out_id), vec!["completed:false"]);
}
