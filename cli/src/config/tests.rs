use std::path::Path;

use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str(text, Path::new("/etc/skillet/skillet.toml"))
}

#[test]
fn the_example_file_parses() {
    let text = include_str!("../../../skillet.example.toml");
    let config = parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert!(!config.providers.is_empty());
    assert!(config.llm_override.is_some());
}

#[test]
fn the_commented_out_extension_examples_parse_too() {
    let text = include_str!("../../../skillet.example.toml");
    let start = text.find("# Tools, toolkits and plugins").expect("section");
    let key = regex::Regex::new(r"^[A-Za-z_]+ = ").unwrap();
    let mut uncommented = text[..start].to_owned();
    for line in text[start..].lines() {
        match line.strip_prefix("# ") {
            Some(rest) if rest.starts_with('[') || key.is_match(rest) => {
                uncommented.push_str(rest);
            }
            _ => uncommented.push_str(line),
        }
        uncommented.push('\n');
    }
    let config = parse(&uncommented).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.tools.len(), 1);
    assert_eq!(config.toolkits.len(), 2);
    assert_eq!(config.plugins.len(), 1);
}

#[test]
fn an_empty_file_is_the_defaults_and_runs_on_the_embedded_mock() {
    let config = parse("").unwrap();
    assert_eq!(config.server.max_concurrent_calls, 64);
    let choice = ProviderChoice::resolve(&config, &ProviderShortcuts::default()).unwrap();
    assert!(matches!(
        choice,
        ProviderChoice::EmbeddedMock {
            requested_by: None,
            ..
        }
    ));
}

#[test]
fn the_runtime_worker_count_is_a_server_setting() {
    assert_eq!(parse("").unwrap().server.worker_threads, None);
    let config = parse("[server]\nworker_threads = 3").unwrap();
    assert_eq!(config.server.worker_threads, Some(3));
    for bad in ["-1", "100000", "\"two\""] {
        let err = parse(&format!("[server]\nworker_threads = {bad}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("worker_threads"), "{bad}: {err}");
    }
}

#[test]
fn an_inline_api_key_is_rejected_naming_the_key() {
    let err = parse("[providers.x]\nkind = \"openai\"\nmodel = \"m\"\napi_key = \"sk-123\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("providers.x.api_key"), "{err}");
    assert!(err.contains("api_key_env"), "{err}");
    assert!(
        !err.contains("sk-123"),
        "the key itself never appears: {err}"
    );
}

#[test]
fn credential_like_options_are_rejected() {
    let err = parse("[providers.x]\nkind = \"ollama\"\nmodel = \"m\"\n[providers.x.options]\nheaders = {a = \"b\"}")
        .unwrap_err()
        .to_string();
    assert!(err.contains("providers.x.options.headers"), "{err}");
    for credential in ["api_key", "auth_token", "client_secret", "password"] {
        let text = format!(
            "[providers.x]\nkind = \"ollama\"\nmodel = \"m\"\n[providers.x.options]\n{credential} = \"v\""
        );
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains(&format!("options.{credential}")), "{err}");
    }
}

#[test]
fn token_counts_and_modes_are_settings_not_credentials() {
    let text = "[providers.x]\nkind = \"ollama\"\nmodel = \"m\"\n[providers.x.options]\n\
                max_tokens = 256\nstructured_output = \"json_object\"\ntool_calling = \"prompted\"";
    parse(text).expect("max_tokens and the modes are accepted");
}

#[test]
fn unknown_keys_and_kinds_are_rejected_with_their_location() {
    let err = parse("[limits]\nmax_turn = 3").unwrap_err().to_string();
    assert!(err.contains("max_turn"), "{err}");
    let err = parse("[toolkits.fs]\nkind = \"carrier-pigeon\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("carrier-pigeon"), "{err}");
    assert!(err.contains("`mcp`"), "the known kinds are listed: {err}");
    let err =
        parse("[tools.t]\nkind = \"command\"\ndescription = \"d\"\nprogram = \"p\"\nshell = true")
            .unwrap_err()
            .to_string();
    assert!(err.contains("shell"), "{err}");
    let err = parse("colour = \"blue\"").unwrap_err().to_string();
    assert!(err.contains("colour"), "{err}");
}

#[test]
fn default_provider_must_name_a_table() {
    let err = parse("default_provider = \"nope\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("default_provider"), "{err}");
}

#[test]
fn relative_paths_are_anchored_at_the_file() {
    let config = parse(
        "skills_dirs = [\"skills\"]\n[toolkits.fs]\nkind = \"mcp\"\ncommand = \"npx\"\ncwd = \"work\"\n[tools.t]\nkind = \"command\"\ndescription = \"d\"\nprogram = \"bin/t\"\n[plugins.p]\nprogram = \"python3\"",
    )
    .unwrap();
    assert_eq!(config.skills_dirs, [Path::new("/etc/skillet/skills")]);
    let ToolkitConfig::Mcp(fs) = &config.toolkits["fs"];
    let skillet_toolkits::mcp::McpTransport::Stdio(server) = &fs.transport else {
        panic!("stdio");
    };
    assert_eq!(server.cwd.as_deref(), Some(Path::new("/etc/skillet/work")));
    assert_eq!(server.command, "npx");
    let ToolConfig::Command(t) = &config.tools["t"];
    assert_eq!(t.program, Path::new("/etc/skillet/bin/t"));
    assert_eq!(config.plugins["p"].program, Path::new("python3"));
}

#[test]
fn shortcuts_pick_a_configured_provider_or_make_one_from_a_kind() {
    let config = parse(
        "default_provider = \"local\"\n[providers.local]\nkind = \"ollama\"\nmodel = \"llama3.2\"\n[providers.cloud]\nkind = \"openai\"\nmodel = \"gpt-4o-mini\"\napi_key_env = \"MY_KEY\"",
    )
    .unwrap();
    let pick = |provider: Option<&str>, model: Option<&str>| {
        ProviderChoice::resolve(
            &config,
            &ProviderShortcuts {
                provider: provider.map(str::to_owned),
                model: model.map(str::to_owned),
                base_url: None,
            },
        )
    };
    assert_eq!(pick(None, None).unwrap().label(), "ollama/llama3.2");
    assert_eq!(
        pick(None, Some("qwen2.5")).unwrap().label(),
        "ollama/qwen2.5"
    );
    let ProviderChoice::Real { config: cloud, .. } = pick(Some("cloud"), None).unwrap() else {
        panic!("real");
    };
    assert!(cloud.provider_credentials.get("api_key_env").is_some());
    assert_eq!(
        pick(Some("anthropic"), Some("claude-x")).unwrap().label(),
        "anthropic/claude-x"
    );
    let err = pick(Some("anthropic"), None).unwrap_err().to_string();
    assert!(err.contains("--model"), "{err}");
    assert!(pick(Some("telepathy"), None).is_err());
    assert!(matches!(
        pick(Some("mock"), None).unwrap(),
        ProviderChoice::EmbeddedMock { .. }
    ));
}

#[test]
fn several_providers_without_a_default_is_an_error() {
    let config = parse(
        "[providers.a]\nkind = \"ollama\"\nmodel = \"m\"\n[providers.b]\nkind = \"ollama\"\nmodel = \"n\"",
    )
    .unwrap();
    assert!(ProviderChoice::resolve(&config, &ProviderShortcuts::default()).is_err());
}

#[test]
fn fallbacks_name_real_providers_one_level_deep() {
    let base = r#"
[providers.primary]
kind = "ollama"
model = "llama3.2"
fallback = ["claude", "local"]

[providers.claude]
kind = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "ANTHROPIC_API_KEY"

[providers.local]
kind = "openai-compatible"
model = "qwen"
base_url = "http://127.0.0.1:8000/v1"
"#;
    let config = parse(&format!("default_provider = \"primary\"\n{base}")).unwrap();
    let fallbacks = config.fallbacks_of("primary");
    let names: Vec<&str> = fallbacks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["claude", "local"]);
    assert_eq!(fallbacks[0].1.provider_name, "anthropic");
    assert!(config.fallbacks_of("claude").is_empty());

    for (bad, reason) in [
        (
            "[providers.x]\nkind = \"ollama\"\nmodel = \"m\"\nfallback = [\"nope\"]",
            "names no [providers.nope]",
        ),
        (
            "[providers.x]\nkind = \"ollama\"\nmodel = \"m\"\nfallback = [\"x\"]",
            "its own fallback",
        ),
        (
            "[providers.x]\nkind = \"ollama\"\nmodel = \"m\"\nfallback = [\"m\"]\n[providers.m]\nkind = \"mock\"",
            "the mock",
        ),
        (
            "[providers.x]\nkind = \"ollama\"\nmodel = \"m\"\nfallback = [\"primary\"]",
            "fallbacks of its own",
        ),
    ] {
        let err = parse(&format!("default_provider = \"primary\"\n{base}\n{bad}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(reason), "{err}");
        assert!(err.contains("providers.x.fallback"), "{err}");
    }
}
