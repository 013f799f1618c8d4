//! The A2A projection (seed 001): [`AgentSkill`] per skill and an [`AgentCard`] for the host,
//! with v1.0 JSON names (camelCase, `securityRequirements`, `supportedInterfaces`).
//!
//! Reading is tolerant of v0.3: `security` is accepted for `securityRequirements` (on cards and
//! skills; v0.3's `{"scheme": ["scope"]}` entries become v1.0's
//! `{"schemes": {"scheme": {"list": ["scope"]}}}`), and a top-level `url` (with
//! `preferredTransport`/`protocolVersion`) becomes the first `supportedInterfaces` entry.
//! Writing is always v1.0.
//!
//! Validity: a card needs at least one skill and one interface, and every skill needs at least
//! one tag. A skill without `a2a-tags` is projected with its category as the tag, or `["skill"]`
//! (the loader warns about it); so projection never fails on tags. Only `Published` skills are
//! put on a card built from a registry (the engine's `skill::a2a`).
//!
//! Not here: projecting a compiled skill onto an [`AgentSkill`] (the engine's `skill::a2a`), the
//! transports that serve the card (`skillet-host`).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};

/// One skill on an Agent Card (A2A `AgentSkill`, v1.0 field names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique skill id (`a2a-id`, else the skill name).
    pub id: String,
    /// Human-readable name (`a2a-name`, else the skill name).
    pub name: String,
    /// What the skill does.
    pub description: String,
    /// Keywords; never empty on a valid card.
    pub tags: Vec<String>,
    /// Example prompts or requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Accepted media types; replaces the card's `defaultInputModes` when non-empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    /// Produced media types; replaces the card's `defaultOutputModes` when non-empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    /// Security requirements (v0.3 `security` accepted on input).
    #[serde(
        default,
        alias = "security",
        deserialize_with = "security_requirements",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<Value>,
}

/// One way to reach the agent (`AgentInterface`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Where the interface is served.
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON`, or another binding name.
    pub protocol_binding: String,
    /// A2A protocol version of this interface (`1.0`).
    pub protocol_version: String,
}

/// Optional features the agent supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Whether responses can stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Whether push notifications are supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Whether an authenticated extended card is served (`GetExtendedAgentCard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// Who runs the agent (`AgentProvider`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProvider {
    /// The organization's name.
    pub organization: String,
    /// The organization's website.
    pub url: String,
}

/// An A2A Agent Card (v1.0 JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "RawCard")]
pub struct AgentCard {
    /// Agent name.
    pub name: String,
    /// What the agent does.
    pub description: String,
    /// Ordered interfaces; the first is preferred. Never empty.
    pub supported_interfaces: Vec<AgentInterface>,
    /// Agent version.
    pub version: String,
    /// Who runs the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// Optional features.
    pub capabilities: AgentCapabilities,
    /// Media types every skill accepts unless it says otherwise.
    pub default_input_modes: Vec<String>,
    /// Media types every skill produces unless it says otherwise.
    pub default_output_modes: Vec<String>,
    /// The skills; never empty.
    pub skills: Vec<AgentSkill>,
    /// Named security schemes (opaque A2A `SecurityScheme` objects).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub security_schemes: Map<String, Value>,
    /// Card-level security requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<Value>,
    /// Documentation link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
}

/// Why a card is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    /// A card must list at least one skill.
    #[error("an Agent Card needs at least one skill")]
    NoSkills,
    /// Every skill needs at least one tag.
    #[error("skill `{0}` has no tags; A2A requires at least one")]
    SkillWithoutTags(String),
    /// A card must say where the agent is served.
    #[error("an Agent Card needs at least one interface (url)")]
    NoInterface,
    /// Default modes must be non-empty.
    #[error("`{0}` must not be empty")]
    EmptyModes(&'static str),
    /// `name`, `description` and `version` must be non-empty.
    #[error("`{0}` must not be empty")]
    EmptyField(&'static str),
}

impl AgentCard {
    /// Starts a card; add interfaces and skills, then [`AgentCardBuilder::build`].
    pub fn builder(
        name: impl Into<String>,
        description: impl Into<String>,
        version: impl Into<String>,
    ) -> AgentCardBuilder {
        AgentCardBuilder {
            card: AgentCard {
                name: name.into(),
                description: description.into(),
                supported_interfaces: Vec::new(),
                version: version.into(),
                provider: None,
                capabilities: AgentCapabilities::default(),
                default_input_modes: vec!["application/json".into(), "text/plain".into()],
                default_output_modes: vec!["application/json".into()],
                skills: Vec::new(),
                security_schemes: Map::new(),
                security_requirements: Vec::new(),
                documentation_url: None,
            },
        }
    }

    /// Checks the A2A validity rules (non-empty skills, tags, interfaces, default modes).
    pub fn validate(&self) -> Result<(), CardError> {
        for (field, value) in [
            ("name", &self.name),
            ("description", &self.description),
            ("version", &self.version),
        ] {
            if value.is_empty() {
                return Err(CardError::EmptyField(field));
            }
        }
        if self.supported_interfaces.is_empty() {
            return Err(CardError::NoInterface);
        }
        if self.default_input_modes.is_empty() {
            return Err(CardError::EmptyModes("defaultInputModes"));
        }
        if self.default_output_modes.is_empty() {
            return Err(CardError::EmptyModes("defaultOutputModes"));
        }
        if self.skills.is_empty() {
            return Err(CardError::NoSkills);
        }
        match self.skills.iter().find(|s| s.tags.is_empty()) {
            Some(s) => Err(CardError::SkillWithoutTags(s.id.clone())),
            None => Ok(()),
        }
    }
}

/// Builds an [`AgentCard`]; defaults: input modes `application/json`, `text/plain`; output
/// mode `application/json`; no capabilities declared.
#[derive(Debug, Clone)]
pub struct AgentCardBuilder {
    card: AgentCard,
}

impl AgentCardBuilder {
    /// Adds an interface at `url` with binding `HTTP+JSON`, protocol version `1.0`.
    pub fn url(self, url: impl Into<String>) -> Self {
        self.interface(url, "HTTP+JSON", "1.0")
    }

    /// Adds an interface.
    pub fn interface(
        mut self,
        url: impl Into<String>,
        protocol_binding: impl Into<String>,
        protocol_version: impl Into<String>,
    ) -> Self {
        self.card.supported_interfaces.push(AgentInterface {
            url: url.into(),
            protocol_binding: protocol_binding.into(),
            protocol_version: protocol_version.into(),
        });
        self
    }

    /// Sets the capabilities.
    pub fn capabilities(mut self, capabilities: AgentCapabilities) -> Self {
        self.card.capabilities = capabilities;
        self
    }

    /// Replaces the default input modes.
    pub fn default_input_modes(mut self, modes: Vec<String>) -> Self {
        self.card.default_input_modes = modes;
        self
    }

    /// Replaces the default output modes.
    pub fn default_output_modes(mut self, modes: Vec<String>) -> Self {
        self.card.default_output_modes = modes;
        self
    }

    /// Adds a named security scheme and requires it card-wide with no scopes.
    pub fn security_scheme(mut self, name: impl Into<String>, scheme: Value) -> Self {
        let name = name.into();
        self.card
            .security_requirements
            .push(json!({"schemes": {name.clone(): {"list": []}}}));
        self.card.security_schemes.insert(name, scheme);
        self
    }

    /// Adds one skill.
    pub fn skill(mut self, skill: AgentSkill) -> Self {
        self.card.skills.push(skill);
        self
    }

    /// Adds `skills`, in their order.
    pub fn skills(mut self, skills: impl IntoIterator<Item = AgentSkill>) -> Self {
        self.card.skills.extend(skills);
        self
    }

    /// The card, if valid.
    pub fn build(self) -> Result<AgentCard, CardError> {
        self.card.validate()?;
        Ok(self.card)
    }
}

/// The card as read from JSON: v1.0 or v0.3.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCard {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    supported_interfaces: Vec<AgentInterface>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    preferred_transport: Option<String>,
    #[serde(default)]
    protocol_version: Option<String>,
    #[serde(default)]
    version: String,
    #[serde(default)]
    provider: Option<AgentProvider>,
    #[serde(default)]
    capabilities: AgentCapabilities,
    #[serde(default)]
    default_input_modes: Vec<String>,
    #[serde(default)]
    default_output_modes: Vec<String>,
    #[serde(default)]
    skills: Vec<AgentSkill>,
    #[serde(default)]
    security_schemes: Map<String, Value>,
    #[serde(
        default,
        alias = "security",
        deserialize_with = "security_requirements"
    )]
    security_requirements: Vec<Value>,
    #[serde(default)]
    documentation_url: Option<String>,
}

impl TryFrom<RawCard> for AgentCard {
    type Error = CardError;
    fn try_from(raw: RawCard) -> Result<AgentCard, CardError> {
        let mut interfaces = raw.supported_interfaces;
        if let Some(url) = raw.url.filter(|_| interfaces.is_empty()) {
            interfaces.push(AgentInterface {
                url,
                protocol_binding: raw.preferred_transport.unwrap_or_else(|| "JSONRPC".into()),
                protocol_version: raw.protocol_version.unwrap_or_else(|| "0.3".into()),
            });
        }
        let card = AgentCard {
            name: raw.name,
            description: raw.description,
            supported_interfaces: interfaces,
            version: raw.version,
            provider: raw.provider,
            capabilities: raw.capabilities,
            default_input_modes: raw.default_input_modes,
            default_output_modes: raw.default_output_modes,
            skills: raw.skills,
            security_schemes: raw.security_schemes,
            security_requirements: raw.security_requirements,
            documentation_url: raw.documentation_url,
        };
        card.validate()?;
        Ok(card)
    }
}

/// Accepts v1.0 `{"schemes": {...}}` entries as they are and converts v0.3
/// `{"scheme": ["scope", ...]}` entries to v1.0.
fn security_requirements<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    let entries = Option::<Vec<Value>>::deserialize(d)?.unwrap_or_default();
    Ok(entries
        .into_iter()
        .map(|entry| match entry {
            Value::Object(map) if !map.contains_key("schemes") => {
                let schemes: Map<String, Value> = map
                    .into_iter()
                    .map(|(scheme, scopes)| (scheme, json!({ "list": scopes })))
                    .collect();
                json!({ "schemes": schemes })
            }
            other => other,
        })
        .collect())
}
