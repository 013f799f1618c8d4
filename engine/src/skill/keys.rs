//! The `metadata` keys Skillet gives meaning to: the `a2a-*` family of seed 003 and the `a2e-*`
//! family (the A2E `SkillDefinition` fields Agent Skills lacks). The table of keys, their value
//! syntax and defaults is in the `skill` module doc and `docs/SKILL_FORMAT.md`.
//!
//! Parsing only: values become typed ([`DeclaredKeys`]) or a [`ManifestError`] at
//! `metadata.<key>`. Reading asset files is `assets`; defaults are applied in `loader`.

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
            problems.push(fail(reason));
        }
    }
    keys
}

fn apply(keys: &mut DeclaredKeys, key: &str, text: &str, entry: &Entry) -> Result<(), String> {
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
                    format!(
                        "`a2e-structured-output` must be one of {}, found {text:?}",
                        skillet_providers::OutputMode::NAMES
                    )
                })?)
        }
        "a2e-arguments" => keys.arguments = Some(string_array(text)?),
        "a2e-requirements" => keys.requirements = string_array(text)?,
        "a2e-system-tools" => keys.system_tools = system_tool_names(text)?,
        "a2e-approval" => keys.approval = string_array(text)?,
        "a2e-reasoning-effort" => {
            let effort = text.trim();
            if !skillet_providers::REASONING_EFFORTS.contains(&effort) {
                return Err(format!(
                    "`a2e-reasoning-effort` must be one of {}, found {text:?}",
                    skillet_providers::REASONING_EFFORTS.join(", ")
                ));
            }
            keys.reasoning.reasoning_effort = Some(effort.to_owned());
        }
        "a2e-thinking-budget-tokens" => {
            let budget: u32 = positive_int(text)?;
            if budget < 1024 {
                return Err(format!(
                    "`a2e-thinking-budget-tokens` must be at least 1024 (the APIs' minimum), \
                     found {budget}"
                ));
            }
            keys.reasoning.thinking_budget_tokens = Some(budget);
        }
        "a2e-think" => {
            keys.reasoning.think = Some(match text.trim() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(format!(
                        "`a2e-think` must be `true` or `false`, found {other:?}"
                    ));
                }
            })
        }
        "a2e-template" => {
            keys.template = Some(match text {
                "strict" => TemplateMode::Strict,
                "literal" => TemplateMode::Literal,
                other => {
                    return Err(format!(
                        "`a2e-template` must be `strict` or `literal`, found {other:?}"
                    ));
                }
            })
        }
        unknown => {
            let family = &unknown[..3];
            return Err(format!(
                "unknown `{family}-*` key `{unknown}`; the {family}-* keys are reserved (see \
                 docs/SKILL_FORMAT.md) — use a key without this prefix for your own metadata"
            ));
        }
    }
    Ok(())
}

fn non_empty(text: &str) -> Result<String, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        Err("value is empty".to_owned())
    } else {
        Ok(trimmed.to_owned())
    }
}

/// A compact JSON array of non-empty strings, e.g. `'["a","b"]'`.
fn string_array(text: &str) -> Result<Vec<String>, String> {
    let items = json_array(text)?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) if !s.trim().is_empty() => Ok(s),
            other => Err(format!(
                "item {i} must be a non-empty string, found {other}"
            )),
        })
        .collect()
}

/// `a2e-system-tools`: a JSON array of bare program names (`soffice`), never a path — where a
/// program lives is the host's business.
fn system_tool_names(text: &str) -> Result<Vec<String>, String> {
    let names = string_array(text)?;
    if let Some(bad) = names
        .iter()
        .find(|n| n.contains('/') || n.chars().any(char::is_whitespace) || *n == "." || *n == "..")
    {
        return Err(format!(
            "{bad:?} is not a program name (write `soffice`, not a path; the host says where \
             it lives)"
        ));
    }
    Ok(names)
}

fn object_array(text: &str) -> Result<Vec<Value>, String> {
    let items = json_array(text)?;
    if let Some((i, bad)) = items.iter().enumerate().find(|(_, v)| !v.is_object()) {
        return Err(format!("item {i} must be a JSON object, found {bad}"));
    }
    Ok(items)
}

fn json_array(text: &str) -> Result<Vec<Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Ok(items),
        Ok(other) => Err(format!(
            "must be a JSON array string like '[\"a\",\"b\"]', found {other}"
        )),
        Err(e) => Err(format!(
            "malformed JSON array {text:?}: {e} (write a compact JSON array in quotes, e.g. '[\"a\",\"b\"]')"
        )),
    }
}

fn positive_int<T: std::str::FromStr + PartialOrd + From<u8>>(text: &str) -> Result<T, String> {
    let trimmed = text.trim();
    match trimmed.parse::<T>() {
        Ok(n) if n >= T::from(1) && trimmed.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(format!(
            "must be a positive whole number as a decimal string, found {text:?}"
        )),
    }
}

fn decimal_in(text: &str, min: f32, max: f32) -> Result<f32, String> {
    let trimmed = text.trim();
    let value = DECIMAL
        .is_match(trimmed)
        .then(|| trimmed.parse::<f32>().ok())
        .flatten()
        .ok_or_else(|| format!("must be a decimal string like \"0.2\", found {text:?}"))?;
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is outside {min}..={max}"))
    }
}

/// A decimal string above zero, e.g. `"0.05"` (a cost cap).
fn positive_decimal(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let value = DECIMAL
        .is_match(trimmed)
        .then(|| trimmed.parse::<f64>().ok())
        .flatten()
        .ok_or_else(|| format!("must be a decimal string like \"0.05\", found {text:?}"))?;
    if value > 0.0 {
        Ok(value)
    } else {
        Err(format!("must be above 0, found {value}"))
    }
}

fn status(text: &str) -> Result<SkillStatus, String> {
    match text {
        "Created" | "created" => Ok(SkillStatus::Created),
        "Published" | "published" => Ok(SkillStatus::Published),
        "Archived" | "archived" => Ok(SkillStatus::Archived),
        "Blocked" | "blocked" => Err(
            "`Blocked` is computed from missing tools/toolkits and cannot be declared".to_owned(),
        ),
        other => Err(format!(
            "must be Created, Published or Archived, found {other:?}"
        )),
    }
}
