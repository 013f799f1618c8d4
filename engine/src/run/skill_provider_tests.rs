//! Unit tests of [`SkillProviderPolicy::admit`]: what a skill may choose by default, and what
//! the host can allow.

use serde_json::json;

use super::*;

fn skill(provider: &str, config: serde_json::Value) -> LLMConfig {
    serde_json::from_value(json!({"provider_name": provider, "provider_config": config})).unwrap()
}

fn host(provider: &str, base_url: Option<&str>) -> HostEndpoint {
    let mut config = json!({"model": "host-model"});
    if let Some(url) = base_url {
        config["base_url"] = json!(url);
    }
    HostEndpoint::of_config(&skill(provider, config)).unwrap()
}

fn denial(policy: &SkillProviderPolicy, skill: &LLMConfig, host: &HostEndpoint) -> String {
    match policy.admit(skill, Some(host)) {
        Err(SkillProviderDenial(message)) => message,
        Ok(admitted) => panic!("admitted: {admitted:?}"),
    }
}

#[test]
fn by_default_a_skill_chooses_the_model_and_sampling_on_the_hosts_provider() {
    let openai = host("openai", None);
    let own = skill(
        "openai",
        json!({"model": "gpt-4o-mini", "temperature": 0.2, "seed": 7}),
    );
    let Ok(SkillModel::HostProvider(keys)) =
        SkillProviderPolicy::default().admit(&own, Some(&openai))
    else {
        panic!("not admitted on the host's provider");
    };
    assert_eq!(keys["model"], "gpt-4o-mini");
    assert_eq!(keys["temperature"], 0.2);
    assert!(!keys.contains_key("base_url"));
}

#[test]
fn a_base_url_on_the_hosts_origin_is_the_hosts_endpoint_and_drops_the_skills_path() {
    let local = host("openai-compatible", Some("http://127.0.0.1:8000/v1"));
    let own = skill(
        "openai-compatible",
        json!({"model": "m", "base_url": "http://127.0.0.1:8000/other"}),
    );
    let Ok(SkillModel::HostProvider(keys)) =
        SkillProviderPolicy::default().admit(&own, Some(&local))
    else {
        panic!("not admitted on the host's provider");
    };
    assert!(!keys.contains_key("base_url"));
}

#[test]
fn by_default_a_skills_own_endpoint_is_denied_for_every_kind() {
    let policy = SkillProviderPolicy::default();
    let cases = [
        (host("openai", None), "openai", "http://127.0.0.1:9/v1"),
        (
            host("openai-compatible", Some("http://127.0.0.1:8000/v1")),
            "openai-compatible",
            "http://127.0.0.1:9/v1",
        ),
        (host("openai", None), "ollama", "http://169.254.169.254"),
        (host("anthropic", None), "anthropic", "http://127.0.0.1:9"),
    ];
    for (host, kind, url) in cases {
        let message = denial(
            &policy,
            &skill(kind, json!({"model": "m", "base_url": url})),
            &host,
        );
        assert!(message.contains("may choose only the model"), "{message}");
        assert!(message.contains("[skill_provider]"), "{message}");
    }
    // Another kind at its default URL is an endpoint choice too.
    let message = denial(
        &policy,
        &skill("ollama", json!({"model": "m"})),
        &host("openai", None),
    );
    assert!(message.contains("provider ollama"), "{message}");
}

#[test]
fn transport_settings_and_models_outside_the_globs_are_denied() {
    let openai = host("openai", None);
    let policy = SkillProviderPolicy::default();
    for key in [
        "headers",
        "read_timeout_ms",
        "max_attempts",
        "anthropic_version",
    ] {
        let mut config = json!({"model": "m"});
        config[key] = json!(1);
        let message = denial(&policy, &skill("openai", config), &openai);
        assert!(message.contains(key), "{message}");
        assert!(message.contains("allow_settings"), "{message}");
    }
    let strict = SkillProviderPolicy::from_config(SkillProviderPolicyConfig {
        allowed_models: vec!["gpt-4o-mini".into()],
        ..SkillProviderPolicyConfig::default()
    })
    .unwrap();
    let message = denial(
        &strict,
        &skill("openai", json!({"model": "o1-pro"})),
        &openai,
    );
    assert!(message.contains("o1-pro"), "{message}");
}

#[test]
fn an_allowed_endpoint_runs_without_any_credential_and_keyed_kinds_cannot_use_one() {
    let policy = SkillProviderPolicy::from_config(SkillProviderPolicyConfig {
        allowed_providers: vec![ProviderKind::Ollama, ProviderKind::Openai],
        allowed_base_urls: vec!["http://127.0.0.1:11434".into()],
        ..SkillProviderPolicyConfig::default()
    })
    .unwrap();
    let openai = host("openai", None);
    let Ok(SkillModel::OwnEndpoint(spec)) = policy.admit(
        &skill(
            "ollama",
            json!({"model": "llama3.2", "base_url": "http://127.0.0.1:11434"}),
        ),
        Some(&openai),
    ) else {
        panic!("allowed endpoint refused");
    };
    assert!(spec.api_key.is_none());
    assert_eq!(spec.secrets().count(), 0);
    // Same kind as the host, allowed origin, but the host's key never travels there.
    let message = denial(
        &policy,
        &skill(
            "openai",
            json!({"model": "m", "base_url": "http://127.0.0.1:11434/v1"}),
        ),
        &openai,
    );
    assert!(message.contains("needs a key"), "{message}");
    // Allowed kind, origin not listed.
    let message = denial(
        &policy,
        &skill(
            "ollama",
            json!({"model": "m", "base_url": "http://10.0.0.1:11434"}),
        ),
        &openai,
    );
    assert!(message.contains("10.0.0.1"), "{message}");
}

#[test]
fn a_broken_policy_fails_to_load_with_the_entry_named() {
    let err = SkillProviderPolicy::from_config(SkillProviderPolicyConfig {
        allowed_base_urls: vec!["not a url".into()],
        ..SkillProviderPolicyConfig::default()
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("not a url"), "{err}");
    let err = serde_json::from_value::<SkillProviderPolicy>(json!({"allowed_models": ["a[b"]}))
        .unwrap_err();
    assert!(err.to_string().contains("a[b"), "{err}");
    assert!(serde_json::from_value::<SkillProviderPolicy>(json!({"allow_setting": true})).is_err());
}
