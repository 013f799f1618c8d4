//! Your own `Provider` registered by name: as the default, from a skill's `a2e-provider`, from a
//! call the host allows, and the refusals around it.

use serde_json::json;
use skillet_engine::run::ProviderRegistryError;
use skillet_engine::{BuildError, SkillError, Skillet};

use crate::common::*;

#[tokio::test]
async fn a_registered_provider_is_the_default_and_counts_each_turn() {
    let mine = Scripted::new("mine-1", Behavior::Answer(summary_json("from my model")));
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .provider("mine", mine.clone())
        .default_provider("mine")
        .build()
        .unwrap();

    let output = skillet
        .run("summarize", json!({"text": "Hello."}))
        .await
        .unwrap();

    assert_eq!(output.data["summary"], "from my model");
    assert_eq!(mine.calls(), 1);
    assert_eq!(mine.prompts(), vec![r#"{"text":"Hello."}"#.to_owned()]);
    let status = output
        .events
        .iter()
        .find_map(|e| match &e.payload {
            skillet_engine::protocol::EventPayload::Status { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        status, "turn 1/3 · mine/mine-1",
        "labelled with its registered name"
    );
}

#[tokio::test]
async fn a_skill_naming_a_registered_provider_runs_on_it_not_on_the_default() {
    let server = start_mock(&summarize_scenario()).await;
    let mine = Scripted::new("mine-1", Behavior::Answer(json!("noted")));
    let dir = skills(&[
        (
            "on-mine",
            &skill_md("on-mine", &[("a2e-provider", "mine")], "Take a note."),
        ),
        (
            "on-mine-model",
            &skill_md(
                "on-mine-model",
                &[("a2e-provider", "mine"), ("a2e-model", "mine-1")],
                "Take a note.",
            ),
        ),
    ]);
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .skills_dir(dir.path())
        .provider("mine", mine.clone())
        .default_spec(mock_spec(&server))
        .build()
        .unwrap();

    let note = skillet
        .run("on-mine", json!({"prompt": "hi"}))
        .await
        .unwrap();
    assert_eq!(note.data, json!("noted"));
    let same_model = skillet
        .run("on-mine-model", json!({"prompt": "hi"}))
        .await
        .unwrap();
    assert_eq!(same_model.data, json!("noted"));
    assert_eq!(mine.calls(), 2);
    assert!(chat_bodies(&server).is_empty(), "the default never ran");

    skillet
        .run("summarize", json!({"text": "x"}))
        .await
        .expect("the default still serves other skills");
    assert_eq!(chat_bodies(&server).len(), 1);
    assert_eq!(mine.calls(), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_skill_reconfiguring_a_registered_provider_is_blocked() {
    let mine = Scripted::new("mine-1", Behavior::Answer(json!("x")));
    let dir = skills(&[(
        "other-model",
        &skill_md(
            "other-model",
            &[("a2e-provider", "mine"), ("a2e-model", "bigger")],
            "x",
        ),
    )]);
    let skillet = Skillet::builder()
        .skills_dir(dir.path())
        .provider("mine", mine.clone())
        .default_provider("mine")
        .build()
        .unwrap();
    let error = skillet
        .run("other-model", json!({"prompt": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SkillError::NotRunnable { reason, .. } if reason.contains("serves model")),
        "{error:?}"
    );
    assert_eq!(mine.calls(), 0);
}

#[tokio::test]
async fn a_call_may_choose_a_registered_provider_only_when_the_host_allows_it() {
    let server = start_mock(&summarize_scenario()).await;
    let mine = Scripted::new("mine-1", Behavior::Answer(summary_json("chosen")));
    let build = |allow: bool| {
        let mut builder = Skillet::builder()
            .skills_dir(bundled_root())
            .provider("mine", mine.clone())
            .default_spec(mock_spec(&server));
        if allow {
            builder = builder.allow_provider_override("mine");
        }
        builder.build().unwrap()
    };

    let denied = build(false)
        .call("summarize")
        .args(json!({"text": "x"}))
        .provider("mine")
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(denied, SkillError::Unauthorized { .. }),
        "{denied:?}"
    );
    assert_eq!(mine.calls(), 0);

    let chosen = build(true)
        .call("summarize")
        .args(json!({"text": "x"}))
        .provider("mine")
        .run()
        .await
        .unwrap();
    assert_eq!(chosen.data["summary"], "chosen");
    assert_eq!(mine.calls(), 1);
    assert!(chat_bodies(&server).is_empty());
    server.shutdown().await;
}

#[test]
fn registering_a_built_in_name_or_defaulting_to_an_unknown_one_fails_the_build() {
    let mine = Scripted::new("m", Behavior::Hang);
    let error = Skillet::builder()
        .provider("ollama", mine.clone())
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        BuildError::Provider(ProviderRegistryError::BuiltInName("ollama".into()))
    );
    let error = Skillet::builder()
        .provider("mine", mine.clone())
        .provider("mine", mine.clone())
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        BuildError::Provider(ProviderRegistryError::Duplicate("mine".into()))
    );
    let error = Skillet::builder()
        .provider("mine", mine)
        .default_provider("yours")
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, BuildError::DefaultProvider(m) if m.contains("`yours` is not registered") && m.contains("mine")),
        "{error:?}"
    );
}
