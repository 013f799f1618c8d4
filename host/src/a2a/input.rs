//! From an A2A message to a skill call: which skill (selection) and with which arguments.
//!
//! **Selection.** The skill is named by its card id under the metadata key `SKILL_ID_KEY`
//! (`"skillId"`) of the message, or else of the `SendMessage` request; when the card lists
//! exactly one skill, it is used without being named. Only the skills the caller may run count
//! (the door passes the core's visibility rule): a named skill that is unknown and one the
//! caller may not run are the same [`Unresolved::NotRunnable`], never told apart, and every
//! error that lists skill ids (`-32602`: no skill named, a name that is not a string) lists only
//! the caller's.
//!
//! **Arguments.** A message has at most one `data` part, any number of text parts and any
//! number of file parts (sorted by `parts`):
//! - the `data` part's value is the input object (`{}` without one);
//! - the text parts, joined by blank lines, fill the input of a skill without input schema (a
//!   plain Agent Skills skill) as `{"prompt": TEXT}`, or the one string property of a skill
//!   whose input has one to fill (its only required property, or its only property) as
//!   `{PROPERTY: TEXT}`; any other skill rejects text, and text filling a property the data part
//!   also sets is refused;
//! - the file parts (`raw` bytes) become the call's input files, `_files` — the engine writes
//!   them into the call's workspace; a file part by `url` is refused (`-32005`): the host never
//!   fetches a URL for a caller.
//!
//! The result is validated against the skill's input schema (compiled once, when the index is
//! built); violations are `-32602` with a `google.rpc.BadRequest` listing each one. The run
//! loop validates again — this check only lets a bad message be refused before a task exists.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::jsonrpc::{RpcCode, RpcError};
use super::parts::MessageParts;
use super::wire::Message;
use skillet_core::folder::INPUT_FILES_KEY;
use skillet_core::schema::Violation;
use skillet_core::service::SkillService;
use skillet_protocol::{SkillDefinition, SkillDiscoverRequest};

/// The metadata key that names the skill to run.
pub(crate) const SKILL_ID_KEY: &str = "skillId";

/// The argument a plain Agent Skills skill receives a text message as (the engine's one name).
pub(crate) use skillet_protocol::PROMPT_ARGUMENT;

/// Where a text part goes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TextTarget {
    /// `{"prompt": TEXT}` (no input schema).
    Prompt,
    /// `{PROPERTY: TEXT}`.
    Property(String),
    /// Text is not accepted.
    Refused,
}

#[derive(Debug, Clone)]
struct IndexedSkill {
    /// The A2E skill name the call uses.
    name: String,
    /// Its definition, for the caller's visibility rule.
    definition: SkillDefinition,
    text: TextTarget,
}

/// A resolved call: the A2E skill name and its arguments.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))] // the fuzz target names it
pub struct SkillInvocation {
    /// The card id the client named (or the only one).
    pub skill_id: String,
    /// The A2E skill name.
    pub name: String,
    /// The input object.
    pub arguments: Map<String, Value>,
}

/// Why a message selects no skill to run.
#[derive(Debug)]
pub(crate) enum Unresolved {
    /// The message names a skill the caller may not run — an unknown one or one its grants
    /// hide alike, so the answer cannot tell them apart.
    NotRunnable {
        /// The id the message named.
        id: String,
        /// The ids the caller may run, joined by `, `.
        runnable: String,
    },
    /// Anything else: the answer to give.
    Invalid(RpcError),
}

impl From<RpcError> for Unresolved {
    fn from(error: RpcError) -> Self {
        Unresolved::Invalid(error)
    }
}

impl Unresolved {
    /// The answer where no skill is hidden from the caller (no `[auth]`): a skill outside the
    /// index is unknown, `-32602` listing the ids there are.
    pub(crate) fn unknown_skill(self) -> RpcError {
        match self {
            Unresolved::NotRunnable { id, runnable } => RpcError::new(
                RpcCode::InvalidParams,
                format!("unknown skill {id:?}; available skill ids: {runnable}"),
            )
            .with_metadata("a2eCode", "unknown_skill"),
            Unresolved::Invalid(error) => error,
        }
    }
}

/// The card's skills by id, with where a message's text goes in their input. Built once per server, and again
/// whenever a hot reload announces changed skills (`methods`).
#[derive(Debug, Clone, Default)]
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))] // the fuzz target names it
pub struct SkillIndex {
    skills: BTreeMap<String, IndexedSkill>,
}

impl SkillIndex {
    /// Indexes the skills on `service`'s card (ids are the card's, names the A2E skill names).
    #[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))] // the fuzz target names it
    pub fn build(service: &dyn SkillService) -> SkillIndex {
        let card_ids: Vec<String> = service
            .agent_card()
            .map(|card| card.skills.into_iter().map(|skill| skill.id).collect())
            .unwrap_or_default();
        let definitions = service.discover(&SkillDiscoverRequest::default()).skills;
        let mut skills = BTreeMap::new();
        for definition in definitions {
            let id = definition
                .metadata
                .as_ref()
                .and_then(|m| m.get("a2a"))
                .and_then(|a2a| a2a.get("id"))
                .and_then(Value::as_str)
                .unwrap_or(&definition.name)
                .to_owned();
            if !card_ids.contains(&id) {
                continue;
            }
            let text = text_target(&definition.input_schema);
            skills.insert(
                id,
                IndexedSkill {
                    name: definition.name.clone(),
                    definition,
                    text,
                },
            );
        }
        SkillIndex { skills }
    }

    /// The card ids, sorted.
    #[cfg(feature = "fuzzing")]
    pub fn ids(&self) -> Vec<&str> {
        self.skills.keys().map(String::as_str).collect()
    }

    /// Resolves `message` (with the request's `metadata`) to a call of a skill `may_run`
    /// accepts whose input `check_input` (the service's, by skill name) finds valid, or why it
    /// selects none.
    pub(crate) fn resolve(
        &self,
        message: &Message,
        request_metadata: Option<&Map<String, Value>>,
        may_run: impl Fn(&SkillDefinition) -> bool,
        check_input: impl Fn(&str, &Map<String, Value>) -> Result<(), Vec<Violation>>,
    ) -> Result<SkillInvocation, Unresolved> {
        let (skill_id, skill) = self.select(message, request_metadata, may_run)?;
        let arguments = arguments_for(skill_id, skill, message)?;
        // Input files are taken out of the arguments before the engine validates them.
        let mut instance = arguments.clone();
        instance.remove(INPUT_FILES_KEY);
        if let Err(violations) = check_input(&skill.name, &instance) {
            return Err(input_violations(skill_id, &violations).into());
        }
        Ok(SkillInvocation {
            skill_id: skill_id.to_owned(),
            name: skill.name.clone(),
            arguments,
        })
    }

    fn select<'a>(
        &'a self,
        message: &Message,
        request_metadata: Option<&Map<String, Value>>,
        may_run: impl Fn(&SkillDefinition) -> bool,
    ) -> Result<(&'a str, &'a IndexedSkill), Unresolved> {
        let named = [message.metadata.as_ref(), request_metadata]
            .into_iter()
            .flatten()
            .find_map(|m| m.get(SKILL_ID_KEY));
        let runnable = || {
            let ids: Vec<&str> = self
                .skills
                .iter()
                .filter(|(_, skill)| may_run(&skill.definition))
                .map(|(id, _)| id.as_str())
                .collect();
            if ids.is_empty() {
                "none".to_owned()
            } else {
                ids.join(", ")
            }
        };
        let chosen = match named {
            Some(Value::String(id)) => self
                .skills
                .get_key_value(id.as_str())
                .ok_or_else(|| id.clone()),
            Some(_) => {
                return Err(RpcError::new(
                    RpcCode::InvalidParams,
                    format!(
                        "metadata.{SKILL_ID_KEY} must be a string; skill ids you may run: {}",
                        runnable()
                    ),
                )
                .into());
            }
            None if self.skills.len() == 1 => self.skills.iter().next().ok_or_else(String::new),
            None => {
                return Err(RpcError::new(
                    RpcCode::InvalidParams,
                    format!(
                        "name the skill to run in the message's metadata.{SKILL_ID_KEY}; skill \
                         ids you may run: {}",
                        runnable()
                    ),
                )
                .into());
            }
        };
        match chosen {
            Ok((id, skill)) if may_run(&skill.definition) => Ok((id.as_str(), skill)),
            Ok((id, _)) => Err(Unresolved::NotRunnable {
                id: id.clone(),
                runnable: runnable(),
            }),
            Err(id) => Err(Unresolved::NotRunnable {
                id,
                runnable: runnable(),
            }),
        }
    }
}

fn arguments_for(
    skill_id: &str,
    skill: &IndexedSkill,
    message: &Message,
) -> Result<Map<String, Value>, RpcError> {
    let parts = MessageParts::sort(message)?;
    let mut arguments = parts.data.cloned().unwrap_or_default();
    if let Some(text) = parts.text() {
        let key = match &skill.text {
            TextTarget::Prompt => PROMPT_ARGUMENT.to_owned(),
            TextTarget::Property(property) => property.clone(),
            TextTarget::Refused => {
                let violations = [Violation {
                    instance_path: String::new(),
                    schema_path: "/type".to_owned(),
                    message: "text is not an object".to_owned(),
                }];
                let mut error = input_violations(skill_id, &violations);
                error.message = format!(
                    "skill {skill_id:?} takes a JSON object, not text: send a data part ({})",
                    error.message
                );
                return Err(error);
            }
        };
        if arguments.contains_key(&key) {
            return Err(RpcError::new(
                RpcCode::InvalidParams,
                format!(
                    "the text parts fill `{key}`, which the data part sets too; send one of them"
                ),
            ));
        }
        arguments.insert(key, Value::String(text));
    }
    if !parts.files.is_empty() {
        if arguments.contains_key(INPUT_FILES_KEY) {
            return Err(RpcError::new(
                RpcCode::InvalidParams,
                format!(
                    "send files as file parts or in the data part's `{INPUT_FILES_KEY}`, not both"
                ),
            ));
        }
        arguments.insert(INPUT_FILES_KEY.to_owned(), Value::Array(parts.files));
    }
    Ok(arguments)
}

fn input_violations(skill_id: &str, violations: &[Violation]) -> RpcError {
    let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
    RpcError::new(
        RpcCode::InvalidParams,
        format!(
            "input of skill {skill_id:?} does not match its schema: {}",
            listed.join("; ")
        ),
    )
    .with_metadata("a2eCode", "schema_violation")
    .with_violations(
        violations
            .iter()
            .map(|v| (v.instance_path.clone(), v.message.clone()))
            .collect(),
    )
}

fn text_target(schema: &Map<String, Value>) -> TextTarget {
    if schema.is_empty() {
        return TextTarget::Prompt;
    }
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return TextTarget::Refused;
    };
    let is_string = |name: &str| {
        properties
            .get(name)
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            == Some("string")
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match (required.as_slice(), properties.len()) {
        ([only], _) if is_string(only) => TextTarget::Property((*only).to_owned()),
        ([], 1) => match properties.keys().next() {
            Some(only) if is_string(only) => TextTarget::Property(only.clone()),
            _ => TextTarget::Refused,
        },
        _ => TextTarget::Refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_goes_to_the_prompt_the_one_string_property_or_nowhere() {
        assert_eq!(text_target(&Map::new()), TextTarget::Prompt);
        let one_required = json!({"type": "object", "required": ["text"],
            "properties": {"text": {"type": "string"}, "max_words": {"type": "integer"}}});
        assert_eq!(
            text_target(one_required.as_object().unwrap()),
            TextTarget::Property("text".into())
        );
        let two_required = json!({"type": "object", "required": ["code", "language"],
            "properties": {"code": {"type": "string"}, "language": {"type": "string"}}});
        assert_eq!(
            text_target(two_required.as_object().unwrap()),
            TextTarget::Refused
        );
        let number = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(
            text_target(number.as_object().unwrap()),
            TextTarget::Refused
        );
    }
}
