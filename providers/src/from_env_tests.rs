//! The environment → provider mapping as a pure function of a variable table.

use secrecy::ExposeSecret;

use super::*;

const KEY: &str = "sk-canary-env-7e1d";

fn env(vars: &[(&str, &str)]) -> Result<EnvProvider, EnvError> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    EnvProvider::from_lookup(move |name| {
        vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
}

fn spec(vars: &[(&str, &str)]) -> ProviderSpec {
    env(vars)
        .and_then(|p| p.spec(Some("default-model")))
        .unwrap_or_else(|e| panic!("{vars:?}: {e}"))
}

#[test]
fn nothing_set_is_not_configured() {
    assert_eq!(env(&[]).unwrap_err(), EnvError::NotConfigured);
    assert_eq!(
        env(&[(OPENAI_API_KEY, "  "), (SKILLET_MODEL, "m")]).unwrap_err(),
        EnvError::NotConfigured,
        "an empty value is unset"
    );
}

#[test]
fn openai_key_alone_selects_openai_with_the_key_from_its_variable() {
    let spec = spec(&[(OPENAI_API_KEY, KEY), (SKILLET_MODEL, "gpt-4o-mini")]);
    assert_eq!(spec.kind, ProviderKind::Openai);
    assert_eq!(spec.model, "gpt-4o-mini");
    assert_eq!(spec.base_url, "https://api.openai.com/v1");
    assert_eq!(spec.api_key.as_ref().unwrap().expose_secret(), KEY);
    assert_eq!(
        spec.credential_source,
        CredentialSource::Env {
            var: OPENAI_API_KEY.to_owned()
        }
    );
}

#[test]
fn openai_base_url_selects_openai_compatible_with_an_optional_key() {
    let local = spec(&[(OPENAI_BASE_URL, "http://127.0.0.1:8080/v1/")]);
    assert_eq!(local.kind, ProviderKind::OpenaiCompatible);
    assert_eq!(local.base_url, "http://127.0.0.1:8080/v1");
    assert!(local.api_key.is_none());
    assert_eq!(local.model, "default-model", "the caller's default model");

    let gateway = spec(&[
        (OPENAI_BASE_URL, "https://gw.example/v1"),
        (OPENAI_API_KEY, KEY),
    ]);
    assert_eq!(gateway.kind, ProviderKind::OpenaiCompatible);
    assert_eq!(gateway.api_key.as_ref().unwrap().expose_secret(), KEY);

    let chosen = spec(&[
        (SKILLET_PROVIDER, "openai"),
        (OPENAI_BASE_URL, "https://gw.example/v1"),
        (OPENAI_API_KEY, KEY),
    ]);
    assert_eq!(chosen.kind, ProviderKind::Openai);
    assert_eq!(chosen.base_url, "https://gw.example/v1");
}

#[test]
fn anthropic_key_and_base_url() {
    let spec = spec(&[
        (ANTHROPIC_API_KEY, KEY),
        (ANTHROPIC_BASE_URL, "http://127.0.0.1:9000"),
    ]);
    assert_eq!(spec.kind, ProviderKind::Anthropic);
    assert_eq!(spec.base_url, "http://127.0.0.1:9000");
    assert_eq!(
        spec.credential_source,
        CredentialSource::Env {
            var: ANTHROPIC_API_KEY.to_owned()
        }
    );
}

#[test]
fn several_kinds_without_skillet_provider_are_ambiguous_naming_the_variables() {
    let error = env(&[
        (OPENAI_API_KEY, KEY),
        (ANTHROPIC_API_KEY, KEY),
        (OLLAMA_HOST, "x"),
    ])
    .unwrap_err();
    assert_eq!(
        error,
        EnvError::Ambiguous(vec![OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_HOST])
    );
    assert!(!error.to_string().contains(KEY));
    let chosen = spec(&[
        (SKILLET_PROVIDER, "Anthropic"),
        (OPENAI_API_KEY, KEY),
        (ANTHROPIC_API_KEY, KEY),
    ]);
    assert_eq!(chosen.kind, ProviderKind::Anthropic);
}

#[test]
fn a_chosen_kind_without_its_key_or_url_names_the_missing_variable() {
    assert_eq!(
        env(&[(SKILLET_PROVIDER, "anthropic")]).unwrap_err(),
        EnvError::Missing {
            kind: ProviderKind::Anthropic,
            var: ANTHROPIC_API_KEY
        }
    );
    assert_eq!(
        env(&[(SKILLET_PROVIDER, "openai-compatible")]).unwrap_err(),
        EnvError::Missing {
            kind: ProviderKind::OpenaiCompatible,
            var: OPENAI_BASE_URL
        }
    );
    assert_eq!(
        env(&[(SKILLET_PROVIDER, "gemini")]).unwrap_err(),
        EnvError::Missing {
            kind: ProviderKind::Gemini,
            var: GEMINI_API_KEY
        }
    );
    assert!(matches!(
        env(&[(SKILLET_PROVIDER, "bard")]).unwrap_err(),
        EnvError::UnknownProvider(name) if name == "bard"
    ));
}

#[test]
fn gemini_api_key_selects_gemini_and_its_base_url_variable_is_the_sdks() {
    let provider = env(&[
        (GEMINI_API_KEY, "g-key"),
        (SKILLET_MODEL, "gemini-2.5-flash"),
    ])
    .unwrap();
    assert_eq!(provider.kind(), ProviderKind::Gemini);
    assert_eq!(provider.key_var(), Some(GEMINI_API_KEY));
    let spec = provider.spec(None).unwrap();
    assert_eq!(spec.base_url, "https://generativelanguage.googleapis.com");
    assert!(!format!("{provider:?}{spec:?}").contains("g-key"));
    let provider = env(&[
        (GEMINI_API_KEY, "g-key"),
        (GOOGLE_GEMINI_BASE_URL, "http://127.0.0.1:9"),
    ])
    .unwrap();
    assert_eq!(provider.base_url(), Some("http://127.0.0.1:9"));
    assert_eq!(
        env(&[(GEMINI_API_KEY, "g"), (ANTHROPIC_API_KEY, "a")]).unwrap_err(),
        EnvError::Ambiguous(vec![ANTHROPIC_API_KEY, GEMINI_API_KEY])
    );
}

#[test]
fn skillet_model_wins_over_the_default_and_no_model_is_an_error() {
    let provider = env(&[(OLLAMA_HOST, "localhost"), (SKILLET_MODEL, "qwen3")]).unwrap();
    assert_eq!(provider.spec(Some("llama3.2")).unwrap().model, "qwen3");
    let provider = env(&[(OLLAMA_HOST, "localhost")]).unwrap();
    assert_eq!(
        provider.spec(None).unwrap_err(),
        EnvError::MissingModel(ProviderKind::Ollama)
    );
}

#[test]
fn ollama_host_is_read_as_the_ollama_cli_reads_it() {
    let cases = [
        ("localhost", "http://localhost:11434"),
        ("example.com:8080", "http://example.com:8080"),
        (":11435", "http://127.0.0.1:11435"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:9999", "http://127.0.0.1:9999"),
        ("10.1.2.3", "http://10.1.2.3:11434"),
        ("::1", "http://[::1]:11434"),
        ("[::1]:1234", "http://[::1]:1234"),
        ("[::]", "http://[::1]:11434"),
        ("http://gpu-box", "http://gpu-box:80"),
        ("https://ollama.example", "https://ollama.example:443"),
        (
            "https://ollama.example:8443/proxy/",
            "https://ollama.example:8443/proxy",
        ),
        ("HTTP://host:1", "http://host:1"),
        ("  host  ", "http://host:11434"),
    ];
    for (value, expected) in cases {
        assert_eq!(
            ollama_base_url(value).unwrap(),
            expected,
            "OLLAMA_HOST={value}"
        );
    }
    let spec = spec(&[(OLLAMA_HOST, "0.0.0.0")]);
    assert_eq!(spec.kind, ProviderKind::Ollama);
    assert_eq!(spec.base_url, "http://127.0.0.1:11434");
    assert!(spec.api_key.is_none());
}

#[test]
fn ollama_host_with_a_bad_port_or_scheme_is_an_error_naming_the_variable() {
    for value in ["host:99999", "host:abc", "ftp://host"] {
        let error = ollama_base_url(value).unwrap_err();
        assert!(
            matches!(&error, EnvError::Invalid { var, .. } if *var == OLLAMA_HOST),
            "{value}: {error}"
        );
    }
}

#[test]
fn debug_and_errors_never_show_the_key() {
    let provider = env(&[(OPENAI_API_KEY, KEY), (SKILLET_MODEL, "m")]).unwrap();
    let shown = format!("{provider:?} {:?}", provider.spec(None).unwrap());
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains(OPENAI_API_KEY), "{shown}");
    let error = env(&[(OPENAI_BASE_URL, "not a url"), (OPENAI_API_KEY, KEY)])
        .unwrap()
        .spec(Some("m"))
        .unwrap_err();
    assert!(!error.to_string().contains(KEY), "{error}");
    assert!(error.to_string().contains(OPENAI_BASE_URL), "{error}");
}

#[test]
fn the_base_url_of_a_chosen_kind_comes_from_its_own_variable() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let all = env(&[
        ("OPENAI_BASE_URL", " http://127.0.0.1:8000/v1 "),
        ("ANTHROPIC_BASE_URL", "http://gateway:9000"),
        ("OLLAMA_HOST", ":1234"),
    ]);
    let url = |kind| base_url_from_lookup(kind, &all).unwrap();
    assert_eq!(
        url(ProviderKind::OpenaiCompatible).as_deref(),
        Some("http://127.0.0.1:8000/v1")
    );
    assert_eq!(
        url(ProviderKind::Openai).as_deref(),
        Some("http://127.0.0.1:8000/v1")
    );
    assert_eq!(
        url(ProviderKind::Anthropic).as_deref(),
        Some("http://gateway:9000")
    );
    assert_eq!(
        url(ProviderKind::Ollama).as_deref(),
        Some("http://127.0.0.1:1234")
    );
    let empty = env(&[("OLLAMA_HOST", "  ")]);
    assert_eq!(base_url_from_lookup(ProviderKind::Ollama, &empty), Ok(None));
    let bad = env(&[("OLLAMA_HOST", "h:99999")]);
    assert!(matches!(
        base_url_from_lookup(ProviderKind::Ollama, &bad),
        Err(EnvError::Invalid {
            var: "OLLAMA_HOST",
            ..
        })
    ));
}
