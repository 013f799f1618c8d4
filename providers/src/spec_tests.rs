//! Tests of `ProviderSpec::from_llm_config`: accepted keys, defaults, rejected configs, credential
//! sources and redaction.

use serde_json::json;

use super::*;

fn parse(name: &str, config: Value, key: Option<&str>) -> Result<ProviderSpec, ConfigError> {
    let credentials = |k: &str| {
        (k == "api_key")
            .then(|| key.map(|v| SecretString::from(v.to_owned())))
            .flatten()
    };
    ProviderSpec::from_llm_config(name, config.as_object(), &credentials)
}

#[test]
fn full_config_is_read() {
    let spec = parse(
        "Openai_Compatible",
        json!({"model": "m", "base_url": "http://127.0.0.1:8000/v1/", "connect_timeout_ms": 500,
               "read_timeout_ms": 700, "headers": {"X-Title": "skillet"}, "max_attempts": 5,
               "temperature": 0.2, "max_tokens": 99}),
        None,
    )
    .unwrap();
    assert_eq!(spec.kind, ProviderKind::OpenaiCompatible);
    assert_eq!(spec.base_url, "http://127.0.0.1:8000/v1");
    assert_eq!(spec.timeouts.connect, Duration::from_millis(500));
    assert_eq!(spec.timeouts.read, Duration::from_millis(700));
    assert_eq!(spec.retry.max_attempts, 5);
    assert!(spec.headers.contains_key("x-title"));
    assert_eq!(spec.default_hints.max_tokens, Some(99));
    assert_eq!(spec.credential_source, CredentialSource::None);
}

#[test]
fn http2_prior_knowledge_is_off_by_default_read_when_set_and_part_of_the_spec_identity() {
    let plain = parse("ollama", json!({"model": "m"}), None).unwrap();
    assert!(!plain.http2_prior_knowledge);
    let h2 = parse(
        "ollama",
        json!({"model": "m", "http2_prior_knowledge": true}),
        None,
    )
    .unwrap();
    assert!(h2.http2_prior_knowledge);
    // The pool tells specs apart by their serialized form: the setting must be in it.
    assert_ne!(
        serde_json::to_string(&plain).unwrap(),
        serde_json::to_string(&h2).unwrap()
    );
}

#[test]
fn kinds_default_their_base_url() {
    let spec = parse("ollama", json!({"model": "llama3"}), None).unwrap();
    assert_eq!(spec.base_url, "http://127.0.0.1:11434");
    let spec = parse("anthropic", json!({"model": "claude"}), Some("k")).unwrap();
    assert_eq!(spec.base_url, "https://api.anthropic.com");
    assert_eq!(spec.credential_source, CredentialSource::Inline);
}

#[test]
fn bad_configs_are_rejected_with_the_key_named() {
    let cases = [
        ("mystery", json!({"model": "m"}), "unknown provider"),
        ("ollama", json!({}), "provider_config.model is required"),
        (
            "ollama",
            json!({"model": "m", "base_ur": "x"}),
            "base_ur is not a known key",
        ),
        (
            "openai-compatible",
            json!({"model": "m"}),
            "base_url is required",
        ),
        (
            "ollama",
            json!({"model": "m", "base_url": "ftp://h"}),
            "scheme",
        ),
        (
            "ollama",
            json!({"model": "m", "base_url": "http://u:p@h"}),
            "credentials",
        ),
        (
            "ollama",
            json!({"model": "m", "max_attempts": 0}),
            "max_attempts",
        ),
        (
            "ollama",
            json!({"model": "m", "read_timeout_ms": "5"}),
            "read_timeout_ms",
        ),
        (
            "ollama",
            json!({"model": "m", "headers": {"host": "evil"}}),
            "headers.host",
        ),
        (
            "ollama",
            json!({"model": "m", "headers": {"x": "a\nb"}}),
            "headers.x",
        ),
        (
            "openai",
            json!({"model": "m"}),
            "needs provider_credentials",
        ),
        (
            "ollama",
            json!({"model": "m", "http2_prior_knowledge": "yes"}),
            "http2_prior_knowledge",
        ),
    ];
    for (name, config, expected) in cases {
        let error = parse(name, config.clone(), None).unwrap_err().to_string();
        assert!(error.contains(expected), "{config}: {error}");
    }
}

#[test]
fn api_key_env_reads_the_named_variable() {
    // PATH is set in every environment the tests run in; its value stands in for a key.
    let credentials = |k: &str| (k == "api_key_env").then(|| SecretString::from("PATH"));
    let spec =
        ProviderSpec::from_llm_config("openai", json!({"model": "m"}).as_object(), &credentials)
            .unwrap();
    assert_eq!(
        spec.api_key.as_ref().map(|k| k.expose_secret().to_owned()),
        std::env::var("PATH").ok()
    );
    assert_eq!(
        spec.credential_source,
        CredentialSource::Env { var: "PATH".into() }
    );
}

#[test]
fn api_key_env_naming_an_unset_variable_is_an_error() {
    let credentials =
        |k: &str| (k == "api_key_env").then(|| SecretString::from("SKILLET_SURELY_UNSET_VAR"));
    let error =
        ProviderSpec::from_llm_config("ollama", json!({"model": "m"}).as_object(), &credentials)
            .unwrap_err();
    assert_eq!(
        error,
        ConfigError::MissingCredentialEnv("SKILLET_SURELY_UNSET_VAR".into())
    );
}

#[test]
fn debug_and_serialize_redact_key_and_header_values() {
    let spec = parse(
        "openai",
        json!({"model": "m", "headers": {"x-token": "hdr-secret-1"}}),
        Some("key-secret-2"),
    )
    .unwrap();
    let debug = format!("{spec:?}");
    let json = serde_json::to_string(&spec).unwrap();
    for text in [&debug, &json] {
        assert!(
            !text.contains("hdr-secret-1") && !text.contains("key-secret-2"),
            "{text}"
        );
        assert!(text.contains("x-token"), "{text}");
    }
    assert!(json.contains("\"api_key\":\"[REDACTED]\""), "{json}");
}

#[test]
fn the_modes_are_read_and_an_unknown_mode_names_the_known_ones() {
    use crate::modes::{OutputMode, ToolMode};
    let spec = parse(
        "openai-compatible",
        json!({"model": "m", "base_url": "http://h/v1", "structured_output": "json_object",
               "tool_calling": "prompted"}),
        None,
    )
    .unwrap();
    assert_eq!(
        (spec.output_mode, spec.tool_mode),
        (OutputMode::JsonObject, ToolMode::Prompted)
    );
    for (key, value, says) in [
        ("structured_output", json!("grammar"), "auto, json_schema"),
        ("tool_calling", json!("loud"), "auto, native, prompted"),
        ("tool_calling", json!(true), "expected a string"),
    ] {
        let mut config = json!({"model": "m", "base_url": "http://h/v1"});
        config[key] = value;
        let err = parse("openai-compatible", config, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains(key) && err.contains(says), "{err}");
    }
}
