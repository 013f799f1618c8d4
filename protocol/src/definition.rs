//! `SkillDefinition`, `SkillStatus` and `LLMConfig`: what a host advertises about a skill.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Availability of a skill (seed `SkillStatus`). Only `Published` skills run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum SkillStatus {
    /// Created but not yet available.
    Created,
    /// Blocked: a declared tool or toolkit is missing.
    Blocked,
    /// Discoverable and callable (the default): the only status a call runs in.
    #[default]
    Published,
    /// Retired: kept for the record, never run.
    Archived,
}

/// A skill manifest as advertised in `skill/discover/resp` (seed `SkillDefinition`).
///
/// `tools` and `toolkits` are always encoded (as `null` when absent, like the seed's example);
/// the other optional fields are omitted when absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillDefinition {
    /// The skill's name, unique among the skills a host serves; what `skill/call/req.name`
    /// names.
    pub name: String,
    /// The skill's own version string (from its `SKILL.md`), not the protocol's.
    pub version: String,
    /// Human-readable description.
    pub description: String,
    /// Trigger phrases for auto-invocation.
    pub triggers: Vec<String>,
    /// Tool dependencies (tool names, or objects with a `name`).
    #[serde(default)]
    pub tools: Option<Vec<Value>>,
    /// Toolkit dependencies (toolkit names, or objects with a `name`).
    #[serde(default)]
    pub toolkits: Option<Vec<Value>>,
    /// Whether the skill can be called: only a [`SkillStatus::Published`] skill runs.
    pub status: SkillStatus,
    /// JSON Schema for the input arguments (`{}` accepts anything).
    #[serde(default)]
    pub input_schema: Map<String, Value>,
    /// JSON Schema for the output (`{}` means no schema).
    #[serde(default)]
    pub output_schema: Map<String, Value>,
    /// Natural-language instructions (the SKILL.md body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Path to the skill definition file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    /// Default LLM configuration (credentials never leave the host: they encode redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_config: Option<LLMConfig>,
    /// Default arguments. The seed types this `list[str]` with default `{}`; an empty object or
    /// `null` decodes as absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_string_list"
    )]
    pub arguments: Option<Vec<String>>,
    /// Guidance on when an agent should use this skill.
    pub when_to_use: String,
    /// Hint for argument construction.
    pub argument_hint: String,
    /// Origin: `user`, `system` or `project`.
    pub source: String,
    /// A free-form grouping label for catalogues (e.g. `code`); None when the skill names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Free-form labels; `skill/discover/req.tags` keeps the skills having any of them. None when
    /// the skill names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// The most model turns one call may take (a turn is one provider request); None: the
    /// host's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Timeout for skill execution, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// An icon for user interfaces, as the skill gives it (a URL or a short text); None when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// Extra key/values the skill declares, passed to agents as they are; None when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

fn lenient_string_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) if m.is_empty() => Ok(None),
        Some(v) => Vec::<String>::deserialize(v)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

/// Provider credentials: secret values by name (e.g. `api_key`, or `api_key_env` naming an
/// environment variable).
///
/// They decode from the wire but always *encode redacted* (`"[REDACTED]"` per key), and `Debug`
/// shows only the key names, so no response, log or event can carry a credential.
#[derive(Clone, Default)]
pub struct Credentials(BTreeMap<String, SecretString>);

/// The text every credential value encodes as.
pub const REDACTED: &str = "[REDACTED]";

impl Credentials {
    /// Empty credentials.
    pub fn new() -> Self {
        Credentials::default()
    }

    /// Adds or replaces a credential.
    pub fn insert(&mut self, name: impl Into<String>, value: SecretString) {
        self.0.insert(name.into(), value);
    }

    /// The secret stored under `name`.
    pub fn get(&self, name: &str) -> Option<&SecretString> {
        self.0.get(name)
    }

    /// Whether no credential is present.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The credential names (never the values).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

impl PartialEq for Credentials {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0.iter())
                .all(|((ka, va), (kb, vb))| ka == kb && va.expose_secret() == vb.expose_secret())
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, REDACTED)))
            .finish()
    }
}

impl Serialize for Credentials {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.keys().map(|k| (k, REDACTED)))
    }
}

impl<'de> Deserialize<'de> for Credentials {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Option::<Map<String, Value>>::deserialize(d)?.unwrap_or_default();
        let secrets = raw
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| {
                let text = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, SecretString::from(text))
            })
            .collect();
        Ok(Credentials(secrets))
    }
}

/// Which model a skill runs on (seed `LLMConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LLMConfig {
    /// Provider name: `openai`, `openai-compatible`, `ollama` or `anthropic`.
    pub provider_name: String,
    /// Credentials (secret; encoded redacted). Absent decodes as empty.
    #[serde(default)]
    pub provider_credentials: Credentials,
    /// Provider-specific configuration (model, base URL, timeouts, extra headers, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_config: Option<Map<String, Value>>,
    /// Whether this is the default configuration.
    #[serde(default)]
    pub is_default: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "sk-canary-3f9a1c77";

    #[test]
    fn credentials_decode_but_encode_redacted() {
        let cfg: LLMConfig = serde_json::from_str(&format!(
            r#"{{"provider_name":"openai","provider_credentials":{{"api_key":"{CANARY}"}}}}"#
        ))
        .unwrap();
        assert_eq!(
            cfg.provider_credentials
                .get("api_key")
                .unwrap()
                .expose_secret(),
            CANARY
        );
        let encoded = serde_json::to_string(&cfg).unwrap();
        assert!(!encoded.contains(CANARY), "{encoded}");
        assert!(encoded.contains(r#""api_key":"[REDACTED]""#), "{encoded}");
        let debug = format!("{cfg:?}");
        assert!(!debug.contains(CANARY), "{debug}");
    }

    #[test]
    fn status_uses_the_seed_spelling() {
        for (s, text) in [
            (SkillStatus::Created, "\"Created\""),
            (SkillStatus::Blocked, "\"Blocked\""),
            (SkillStatus::Published, "\"Published\""),
            (SkillStatus::Archived, "\"Archived\""),
        ] {
            assert_eq!(serde_json::to_string(&s).unwrap(), text);
            assert_eq!(serde_json::from_str::<SkillStatus>(text).unwrap(), s);
        }
    }

    #[test]
    fn arguments_accept_the_seed_default_empty_object() {
        let mut v: Value =
            serde_json::from_str(include_str!("../tests/vectors/a2e/discover-resp.json")).unwrap();
        let skill = &mut v["skills"][0];
        skill["arguments"] = serde_json::json!({});
        let def: SkillDefinition = serde_json::from_value(skill.clone()).unwrap();
        assert_eq!(def.arguments, None);
        skill["arguments"] = serde_json::json!(["a"]);
        let def: SkillDefinition = serde_json::from_value(skill.clone()).unwrap();
        assert_eq!(def.arguments, Some(vec!["a".to_owned()]));
    }
}
