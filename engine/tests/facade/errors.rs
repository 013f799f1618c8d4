//! Every `SkillError` kind, each from the situation a caller meets it in.

use std::time::Duration;

use serde_json::json;
use skillet_engine::protocol::{ErrorCode, LLMConfig};
use skillet_engine::{SkillError, Skillet};
use skillet_providers::ProviderErrorKind;
use tokio_util::sync::CancellationToken;

use crate::common::*;

const CANARY: &str = "sk-canary-facade-91b2";

async fn summarize_on_mock(yaml: &str) -> (mock_llm::MockServer, Skillet) {
    let server = start_mock(yaml).await;
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .default_spec(mock_spec(&server))
        .build()
        .unwrap();
    (server, skillet)
}

#[tokio::test]
async fn an_unknown_skill_names_the_closest_ones() {
    let (server, skillet) = summarize_on_mock(&summarize_scenario()).await;
    let error = skillet.run("sumarize", json!({})).await.unwrap_err();
    assert_eq!(
        error,
        SkillError::UnknownSkill {
            name: "sumarize".into(),
            closest: vec!["summarize".into()]
        }
    );
    assert_eq!(error.code(), ErrorCode::UnknownSkill);
    assert!(
        error.to_string().contains("did you mean `summarize`"),
        "{error}"
    );
    let far = skillet.run("zzzz", json!({})).await.unwrap_err();
    assert!(matches!(far, SkillError::UnknownSkill { closest, .. } if closest.is_empty()));
    assert!(chat_bodies(&server).is_empty(), "nothing reached the model");
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_arguments_list_every_violation_with_its_path() {
    let (server, skillet) = summarize_on_mock(&summarize_scenario()).await;
    let error = skillet
        .run(
            "summarize",
            json!({"text": "", "max_words": 1, "extra": true}),
        )
        .await
        .unwrap_err();
    let SkillError::InvalidArguments { skill, violations } = &error else {
        panic!("expected InvalidArguments, got {error:?}");
    };
    assert_eq!(skill, "summarize");
    let paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
    assert!(paths.contains(&"/text"), "{violations:?}");
    assert!(paths.contains(&"/max_words"), "{violations:?}");
    assert!(
        violations.len() >= 3,
        "additionalProperties too: {violations:?}"
    );
    assert_eq!(error.code(), ErrorCode::SchemaViolation);

    let not_object = skillet.run("summarize", json!(["text"])).await.unwrap_err();
    assert!(
        matches!(&not_object, SkillError::InvalidArguments { violations, .. }
            if violations[0].message.contains("not an array")),
        "{not_object:?}"
    );
    assert!(chat_bodies(&server).is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn a_blocked_skill_is_not_runnable_and_says_what_is_missing() {
    let dir = skills(&[(
        "needs-tool",
        &skill_md(
            "needs-tool",
            &[("a2e-tools", r#"["absent_tool"]"#)],
            "Use it.",
        ),
    )]);
    let skillet = Skillet::builder()
        .skills_dir(dir.path())
        .provider("scripted", Scripted::new("m", Behavior::Answer(json!("x"))))
        .default_provider("scripted")
        .build()
        .unwrap();
    let error = skillet.run("needs-tool", json!({})).await.unwrap_err();
    match &error {
        SkillError::NotRunnable { skill, reason } => {
            assert_eq!(skill, "needs-tool");
            assert!(reason.contains("absent_tool"), "{reason}");
        }
        other => panic!("expected NotRunnable, got {other:?}"),
    }
}

#[tokio::test]
async fn without_any_model_the_error_is_no_provider() {
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .build()
        .unwrap();
    let error = skillet
        .run("summarize", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SkillError::NoProvider { message, .. } if message.contains("no model")),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_override_the_policy_refuses_is_unauthorized_and_never_shows_its_key() {
    let (server, skillet) = summarize_on_mock(&summarize_scenario()).await;
    let config: LLMConfig = serde_json::from_value(json!({
        "provider_name": "openai",
        "provider_credentials": {"api_key": CANARY},
        "provider_config": {"model": "gpt-4o"}
    }))
    .unwrap();
    let error = skillet
        .call("summarize")
        .args(json!({"text": "x"}))
        .llm_override(config)
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(error, SkillError::Unauthorized { .. }),
        "{error:?}"
    );
    assert_eq!(error.code(), ErrorCode::Unauthorized);
    for shown in [
        error.to_string(),
        format!("{error:?}"),
        format!("{skillet:?}"),
    ] {
        assert!(!shown.contains(CANARY), "{shown}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn an_override_that_is_not_a_usable_config_is_an_invalid_request() {
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .provider(
            "scripted",
            Scripted::new("m1", Behavior::Answer(summary_json("s"))),
        )
        .default_provider("scripted")
        .allow_provider_override("scripted")
        .build()
        .unwrap();
    let config: LLMConfig = serde_json::from_value(json!({
        "provider_name": "scripted",
        "provider_config": {"model": "another-model"}
    }))
    .unwrap();
    let error = skillet
        .call("summarize")
        .args(json!({"text": "x"}))
        .llm_override(config)
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SkillError::InvalidRequest { message, .. } if message.contains("serves model")),
        "{error:?}"
    );
    assert_eq!(error.code(), ErrorCode::InvalidMessage);
}

#[tokio::test]
async fn output_that_never_validates_is_failed_with_its_code_and_the_violations() {
    let yaml = r#"
rules:
  - when: { system_contains: "You are a careful editor" }
    reply: { json: { summary: 7 } }
"#;
    let (server, skillet) = summarize_on_mock(yaml).await;
    let error = skillet
        .run("summarize", json!({"text": "x"}))
        .await
        .unwrap_err();
    let SkillError::Failed {
        code, message, run, ..
    } = &error
    else {
        panic!("expected Failed, got {error:?}");
    };
    assert_eq!(*code, ErrorCode::SchemaViolation);
    assert!(!message.is_empty());
    let data = run.data.as_ref().expect("the run keeps its violations");
    assert!(data["violations"].is_array(), "{data}");
    assert_eq!(
        data["turns_used"], 3,
        "summarize's a2e-max-turns, all repairs used"
    );
    assert_eq!(run.events.first().map(|e| e.seq), Some(0));
    assert_eq!(chat_bodies(&server).len(), 3);
    server.shutdown().await;
}

#[tokio::test]
async fn a_provider_failure_is_its_own_variant_with_the_provider_error_kind() {
    let yaml = r#"
rules:
  - when: { system_contains: "You are a careful editor" }
    fault: { kind: status, status: 401, message: "bad key" }
"#;
    let (server, skillet) = summarize_on_mock(yaml).await;
    let error = skillet
        .run("summarize", json!({"text": "x"}))
        .await
        .unwrap_err();
    match &error {
        SkillError::Provider { kind, run, .. } => {
            assert_eq!(*kind, ProviderErrorKind::Auth);
            assert!(!run.events.is_empty());
        }
        other => panic!("expected Provider, got {other:?}"),
    }
    assert_eq!(error.code(), ErrorCode::RuntimeError);
    server.shutdown().await;

    let rate_limited = Skillet::builder()
        .skills_dir(bundled_root())
        .provider(
            "busy",
            Scripted::new(
                "m",
                Behavior::Fail(ProviderErrorKind::RateLimited { retry_after: None }),
            ),
        )
        .default_provider("busy")
        .build()
        .unwrap()
        .run("summarize", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            rate_limited,
            SkillError::Provider {
                kind: ProviderErrorKind::RateLimited { .. },
                ..
            }
        ),
        "{rate_limited:?}"
    );
    assert_eq!(rate_limited.code(), ErrorCode::SkillError, "transient");
}

#[tokio::test]
async fn a_call_past_its_deadline_is_a_timeout() {
    let hang = Scripted::new("m", Behavior::Hang);
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .provider("hang", hang.clone())
        .default_provider("hang")
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let error = skillet
        .call("summarize")
        .args(json!({"text": "x"}))
        .timeout(Duration::from_millis(300))
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SkillError::Timeout { run, .. } if !run.events.is_empty()),
        "{error:?}"
    );
    assert_eq!(error.code(), ErrorCode::Timeout);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(hang.calls(), 1);
}

#[tokio::test]
async fn a_cancelled_call_is_cancelled_not_failed() {
    let hang = Scripted::new("m", Behavior::Hang);
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .provider("hang", hang.clone())
        .default_provider("hang")
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let watcher = hang.clone();
    tokio::spawn(async move {
        while watcher.calls() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
    });
    let error = skillet
        .call("summarize")
        .args(json!({"text": "x"}))
        .cancel_on(token)
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SkillError::Cancelled { skill, .. } if skill == "summarize"),
        "{error:?}"
    );
    assert_eq!(
        error.run().map(|r| r.events.first().map(|e| e.seq)),
        Some(Some(0))
    );
}
