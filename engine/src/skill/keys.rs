//! The `metadata` keys Skillet gives meaning to: the `a2a-*` family of seed 003 and the `a2e-*`
//! family (the A2E `SkillDefinition` fields Agent Skills lacks). The table of keys, their value
//! syntax and defaults is in the `skill` module doc and `docs/SKILL_FORMAT.md`.
//!
//! Parsing only: values become typed ([`DeclaredKeys`]) or a [`KeyError`], reported as a
//! [`ManifestError`] at `metadata.<key>`. Reading asset files is `assets`; defaults are applied
//! in `loader`.

use std::path::Path;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::error::ManifestError;
use super::frontmatter::{Entry, scalar_text};
use crate::protocol::SkillStatus;

/// Every `a2a-*` / `a2e-*` key, typed. `None`/empty = not declared.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeclaredKeys {
    pub a2a_id: Option<String>,
    pub a2a_name: Option<String>,
    pub tags: Vec<String>,
    pub examples: Vec<String>,
    pub input_modes: Vec<String>,
    pub output_modes: Vec<String>,
    pub security_requirements: Vec<Value>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub input_schema: Option<(String, Entry)>,
    pub output_schema: Option<(String, Entry)>,
    pub provider_config: Option<(String, Entry)>,

    pub version: Option<String>,
    pub triggers: Option<Vec<String>>,
    pub tools: Vec<String>,
    pub toolkits: Vec<String>,
    pub category: Option<String>,
    pub when_to_use: Option<String>,
    pub argument_hint: Option<String>,
    pub max_turns: Option<u32>,
    pub max_cost_usd: Option<f64>,
    pub timeout_seconds: Option<u64>,
    pub status: Option<SkillStatus>,
    pub icon: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub structured_output: Option<skillet_providers::OutputMode>,
    pub arguments: Option<Vec<String>>,
    pub template: Option<TemplateMode>,
    /// `a2e-requirements`: Python requirement lines for the skill's scripts.
    pub requirements: Vec<String>,
    /// `a2e-system-tools`: programs the skill's scripts run (`soffice`, `pdftoppm`).
    pub system_tools: Vec<String>,
    /// `a2e-approval`: tool names whose calls need a person's approval (adds to the host's).
    pub approval: Vec<String>,
    /// `a2e-reasoning-effort`, `a2e-thinking-budget-tokens`, `a2e-think`: the skill's
    /// reasoning settings, over its provider's.
    pub reasoning: skillet_providers::Reasoning,

    /// Whether any `a2a-*` or `a2e-*` key was present (decides the default template mode).
    pub any_declared: bool,
    /// Other metadata keys, as strings, in file order.
    pub custom: Map<String, Value>,
}

/// How the SKILL.md body is treated (`a2e-template`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateMode {
    /// A strict template: `{{ a.b }}` placeholders are filled from the call's arguments.
    Strict,
    /// Plain instructions: the body is used as written, `{{` has no meaning.
    Literal,
}

/// Why a metadata value was refused; the text is the reason a [`ManifestError`] shows at
/// `metadata.<key>`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    /// A value that must say something is blank.
    #[error("value is empty")]
    Empty,
    /// A string array's item is not a non-empty string.
    #[error("item {index} must be a non-empty string, found {found}")]
    NotANonEmptyString { index: usize, found: Value },
    /// An object array's item is not an object.
    #[error("item {index} must be a JSON object, found {found}")]
    NotAnObject { index: usize, found: Value },
    /// Valid JSON, but not an array.
    #[error("must be a JSON array string like '[\"a\",\"b\"]', found {0}")]
    NotAnArray(Value),
    /// Not JSON at all.
    #[error(
        "malformed JSON array {text:?}: {error} (write a compact JSON array in quotes, e.g. \
         '[\"a\",\"b\"]')"
    )]
    MalformedArray {
        text: String,
        error: serde_json::Error,
    },
    /// `a2e-system-tools` names a path (or a blank, `.`, `..`) instead of a program.
    #[error(
        "{0:?} is not a program name (write `soffice`, not a path; the host says where it lives)"
    )]
    NotAProgramName(String),
    /// Not a whole number of at least 1.
    #[error("must be a positive whole number as a decimal string, found {0:?}")]
    NotAPositiveWholeNumber(String),
    /// Not a decimal string; `example` shows one.
    #[error("must be a decimal string like \"{example}\", found {found:?}")]
    NotADecimal {
        example: &'static str,
        found: String,
    },
    /// A decimal outside its range.
    #[error("{value} is outside {min}..={max}")]
    OutOfRange { value: f32, min: f32, max: f32 },
    /// A cost cap of zero or less.
    #[error("must be above 0, found {0}")]
    NotAboveZero(f64),
    /// `a2e-status: Blocked`.
    #[error("`Blocked` is computed from missing tools/toolkits and cannot be declared")]
    BlockedDeclared,
    /// `a2e-status` is none of the declarable statuses.
    #[error("must be Created, Published or Archived, found {0:?}")]
    NotAStatus(String),
    /// A value outside a key's closed list.
    #[error("`{key}` must be one of {allowed}, found {found:?}")]
    NotOneOf {
        key: &'static str,
        allowed: String,
        found: String,
    },
    /// `a2e-thinking-budget-tokens` under the APIs' minimum.
    #[error("`a2e-thinking-budget-tokens` must be at least 1024 (the APIs' minimum), found {0}")]
    ThinkingBudgetTooSmall(u32),
    /// `a2e-think` is not a boolean.
    #[error("`a2e-think` must be `true` or `false`, found {0:?}")]
    NotABool(String),
    /// `a2e-template` is neither mode.
    #[error("`a2e-template` must be `strict` or `literal`, found {0:?}")]
    NotATemplateMode(String),
    /// An `a2a-*`/`a2e-*` key Skillet does not know.
    #[error(
        "unknown `{family}-*` key `{0}`; the {family}-* keys are reserved (see \
         docs/SKILL_FORMAT.md) — use a key without this prefix for your own metadata",
        family = &.0[..3]
    )]
    Unknown(String),
}

static DECIMAL: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"^-?[0-9]+(\.[0-9]+)?$").expect("decimal regex is valid"));

/// Parses the metadata entries of one SKILL.md.
pub(crate) fn parse(
    file: &Path,
    metadata: &[(String, Entry)],
    problems: &mut Vec<ManifestError>,
) -> DeclaredKeys {
    let mut keys = DeclaredKeys::default();
    for (key, entry) in metadata {
        let location = format!("metadata.{key}");
        let fail = |reason: String| {
            ManifestError::error(file, &location, reason).at(entry.line, entry.column)
        };
        let is_family = key.starts_with("a2a-") || key.starts_with("a2e-");
        if !is_family {
            match scalar_text(&entry.value) {
                Some(text) => {
                    keys.custom.insert(key.clone(), Value::String(text));
                }
                None => {
                    problems.push(
                        ManifestError::warning(
                            file,
                            &location,
                            "metadata values are strings in the Agent Skills spec; kept as JSON",
                        )
                        .at(entry.line, entry.column),
                    );
                    keys.custom.insert(key.clone(), entry.value.clone());
                }
            }
            continue;
        }
        // Requirements and system tools are about the scripts, not the A2E definition: declaring them keeps a
        // plain Agent Skill plain (its template mode, its file tools).
        keys.any_declared |= key != "a2e-requirements" && key != "a2e-system-tools";
        let Some(text) = scalar_text(&entry.value) else {
            problems.push(fail(format!(
                "`{key}` must be a string (metadata is string to string), found {}",
                entry.value
            )));
            continue;
        };
        if let Err(reason) = apply(&mut keys, key, &text, entry) {
            problems.push(fail(reason.to_string()));
        }
    }
    keys
}

fn apply(keys: &mut DeclaredKeys, key: &str, text: &str, entry: &Entry) -> Result<(), KeyError> {
    let asset = || Some((text.to_owned(), entry.clone()));
    match key {
        "a2a-id" => keys.a2a_id = Some(non_empty(text)?),
        "a2a-name" => keys.a2a_name = Some(non_empty(text)?),
        "a2a-tags" => keys.tags = string_array(text)?,
        "a2a-examples" => keys.examples = string_array(text)?,
        "a2a-input-modes" => keys.input_modes = string_array(text)?,
        "a2a-output-modes" => keys.output_modes = string_array(text)?,
        "a2a-security-requirements" => keys.security_requirements = object_array(text)?,
        "a2a-max-tokens" => keys.max_tokens = Some(positive_int(text)?),
        "a2a-temperature" => keys.temperature = Some(decimal_in(text, 0.0, 2.0)?),
        "a2a-top-p" => keys.top_p = Some(decimal_in(text, 0.0, 1.0)?),
        "a2a-input-schema" => keys.input_schema = asset(),
        "a2a-output-schema" => keys.output_schema = asset(),
        "a2a-provider-config" => keys.provider_config = asset(),

        "a2e-version" => keys.version = Some(non_empty(text)?),
        "a2e-triggers" => keys.triggers = Some(string_array(text)?),
        "a2e-tools" => keys.tools = string_array(text)?,
        "a2e-toolkits" => keys.toolkits = string_array(text)?,
        "a2e-category" => keys.category = Some(non_empty(text)?),
        "a2e-when-to-use" => keys.when_to_use = Some(non_empty(text)?),
        "a2e-argument-hint" => keys.argument_hint = Some(non_empty(text)?),
        "a2e-max-turns" => keys.max_turns = Some(positive_int(text)?),
        "a2e-max-cost-usd" => keys.max_cost_usd = Some(positive_decimal(text)?),
        "a2e-timeout-seconds" => keys.timeout_seconds = Some(positive_int::<u64>(text)?),
        "a2e-status" => keys.status = Some(status(text)?),
        "a2e-icon" => keys.icon = Some(non_empty(text)?),
        "a2e-provider" => keys.provider = Some(non_empty(text)?),
        "a2e-model" => keys.model = Some(non_empty(text)?),
        "a2e-structured-output" => {
            keys.structured_output =
                Some(skillet_providers::OutputMode::parse(text).ok_or_else(|| {
                    KeyError::NotOneOf {
                        key: "a2e-structured-output",
                        allowed: skillet_providers::OutputMode::NAMES.to_owned(),
                        found: text.to_owned(),
                    }
                })?)
        }
        "a2e-arguments" => keys.arguments = Some(string_array(text)?),
        "a2e-requirements" => keys.requirements = string_array(text)?,
        "a2e-system-tools" => keys.system_tools = system_tool_names(text)?,
        "a2e-approval" => keys.approval = string_array(text)?,
        "a2e-reasoning-effort" => {
            let effort = text.trim();
            if !skillet_providers::REASONING_EFFORTS.contains(&effort) {
                return Err(KeyError::NotOneOf {
                    key: "a2e-reasoning-effort",
                    allowed: skillet_providers::REASONING_EFFORTS.join(", "),
                    found: text.to_owned(),
                });
            }
            keys.reasoning.reasoning_effort = Some(effort.to_owned());
        }
        "a2e-thinking-budget-tokens" => {
            let budget: u32 = positive_int(text)?;
            if budget < 1024 {
                return Err(KeyError::ThinkingBudgetTooSmall(budget));
            }
            keys.reasoning.thinking_budget_tokens = Some(budget);
        }
        "a2e-think" => {
            keys.reasoning.think = Some(match text.trim() {
                "true" => true,
                "false" => false,
                other => return Err(KeyError::NotABool(other.to_owned())),
            })
        }
        "a2e-template" => {
            keys.template = Some(match text {
                "strict" => TemplateMode::Strict,
                "literal" => TemplateMode::Literal,
                other => return Err(KeyError::NotATemplateMode(other.to_owned())),
            })
        }
        unknown => {
            return Err(KeyError::Unknown(unknown.to_owned()));
        }
    }
    Ok(())
}

fn non_empty(text: &str) -> Result<String, KeyError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        Err(KeyError::Empty)
    } else {
        Ok(trimmed.to_owned())
    }
}

/// A compact JSON array of non-empty strings, e.g. `'["a","b"]'`.
fn string_array(text: &str) -> Result<Vec<String>, KeyError> {
    let items = json_array(text)?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) if !s.trim().is_empty() => Ok(s),
            found => Err(KeyError::NotANonEmptyString { index: i, found }),
        })
        .collect()
}

/// `a2e-system-tools`: a JSON array of bare program names (`soffice`), never a path — where a
/// program lives is the host's business.
fn system_tool_names(text: &str) -> Result<Vec<String>, KeyError> {
    let names = string_array(text)?;
    if let Some(bad) = names
        .iter()
        .find(|n| n.contains('/') || n.chars().any(char::is_whitespace) || *n == "." || *n == "..")
    {
        return Err(KeyError::NotAProgramName(bad.clone()));
    }
    Ok(names)
}

fn object_array(text: &str) -> Result<Vec<Value>, KeyError> {
    let items = json_array(text)?;
    if let Some((index, found)) = items.iter().enumerate().find(|(_, v)| !v.is_object()) {
        let found = found.clone();
        return Err(KeyError::NotAnObject { index, found });
    }
    Ok(items)
}

fn json_array(text: &str) -> Result<Vec<Value>, KeyError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Ok(items),
        Ok(found) => Err(KeyError::NotAnArray(found)),
        Err(error) => Err(KeyError::MalformedArray {
            text: text.to_owned(),
            error,
        }),
    }
}

fn positive_int<T: std::str::FromStr + PartialOrd + From<u8>>(text: &str) -> Result<T, KeyError> {
    let trimmed = text.trim();
    match trimmed.parse::<T>() {
        Ok(n) if n >= T::from(1) && trimmed.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(KeyError::NotAPositiveWholeNumber(text.to_owned())),
    }
}

fn decimal_in(text: &str, min: f32, max: f32) -> Result<f32, KeyError> {
    let trimmed = text.trim();
    let value = DECIMAL
        .is_match(trimmed)
        .then(|| trimmed.parse::<f32>().ok())
        .flatten()
        .ok_or_else(|| KeyError::NotADecimal {
            example: "0.2",
            found: text.to_owned(),
        })?;
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(KeyError::OutOfRange { value, min, max })
    }
}

/// A decimal string above zero, e.g. `"0.05"` (a cost cap).
fn positive_decimal(text: &str) -> Result<f64, KeyError> {
    let trimmed = text.trim();
    let value = DECIMAL
        .is_match(trimmed)
        .then(|| trimmed.parse::<f64>().ok())
        .flatten()
        .ok_or_else(|| KeyError::NotADecimal {
            example: "0.05",
            found: text.to_owned(),
        })?;
    if value > 0.0 {
        Ok(value)
    } else {
        Err(KeyError::NotAboveZero(value))
    }
}

fn status(text: &str) -> Result<SkillStatus, KeyError> {
    match text {
        "Created" | "created" => Ok(SkillStatus::Created),
        "Published" | "published" => Ok(SkillStatus::Published),
        "Archived" | "archived" => Ok(SkillStatus::Archived),
        "Blocked" | "blocked" => Err(KeyError::BlockedDeclared),
        other => Err(KeyError::NotAStatus(other.to_owned())),
    }
}
