//! Skills defined in memory: [`SkillMd`] is a SKILL.md text, and optionally its input and output
//! schemas as JSON values, that [`SkillMd::load`] compiles into a [`CompiledSkill`] with no
//! folder on disk.
//!
//! The text goes through the same steps as a folder's SKILL.md (`loader`): the same size cap,
//! frontmatter parser and its budgets, key rules, body template and placeholder checks; the
//! schemas through the same 2020-12 checks, and the same size cap as a schema file. What differs
//! is only what a folder has: the skill's name is its frontmatter `name` (there is no directory
//! name to equal), keys that name files (`a2a-input-schema`, `a2a-output-schema`,
//! `a2a-provider-config`) are errors that say to give the schema as a value, and a run has no
//! skill files to read. A schema given as a value counts as its key: the body is then a strict
//! template, as it would be with `a2a-input-schema` in a folder.
//!
//! Not here: loading folders (`loader`), registering skills (`registry`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::assets::{MAX_ASSET_BYTES, MAX_SKILL_MD_BYTES};
use super::compiled::CompiledSkill;
use super::error::ManifestError;
use super::frontmatter;
use super::keys;
use super::loader::{Assets, build, finish};
use super::spec::SkillSource;
use crate::schema::CompiledSchema;
use crate::template::TemplateCache;

/// A skill defined in memory: its SKILL.md text and, optionally, its schemas as values.
///
/// ```
/// use serde_json::json;
/// use skillet_engine::skill::{SkillMd, SkillSource};
///
/// let skill = SkillMd::new("---\nname: greet\ndescription: Greets someone.\n---\nGreet {{ who }}.")
///     .input_schema(json!({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}))
///     .load(SkillSource::Project)
///     .expect("a valid skill");
/// assert_eq!(skill.name(), "greet");
/// assert!(skill.dir.is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct SkillMd {
    text: String,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
}

impl SkillMd {
    /// A skill from its SKILL.md text (frontmatter and body).
    pub fn new(text: impl Into<String>) -> Self {
        SkillMd {
            text: text.into(),
            input_schema: None,
            output_schema: None,
        }
    }

    /// The skill's input schema (what `a2a-input-schema` names in a folder).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The skill's output schema (what `a2a-output-schema` names in a folder).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Whether an output schema was given.
    pub fn has_output_schema(&self) -> bool {
        self.output_schema.is_some()
    }

    /// The name problems are reported under: `<in memory>/NAME/SKILL.md`, NAME as the
    /// frontmatter has it (or `skill` when it has none that can be read).
    pub fn file(&self) -> PathBuf {
        let name = self
            .front_name()
            .filter(|name| frontmatter::name_problems(name).is_empty())
            .unwrap_or_else(|| "skill".to_owned());
        Path::new("<in memory>").join(name).join("SKILL.md")
    }

    /// The frontmatter's `name` as written, when it is a string.
    fn front_name(&self) -> Option<String> {
        let front = skillet_core::manifest::frontmatter_object(&self.text).ok()?;
        front.get("name")?.as_str().map(str::to_owned)
    }

    /// Compiles the skill; every problem found (errors and warnings) when it does not load.
    pub fn load(&self, source: SkillSource) -> Result<CompiledSkill, Vec<ManifestError>> {
        let file = self.file();
        if self.text.len() as u64 > MAX_SKILL_MD_BYTES {
            return Err(vec![ManifestError::error(
                &file,
                "SKILL.md",
                format!("the text is larger than the {MAX_SKILL_MD_BYTES}-byte limit"),
            )]);
        }
        // No folder name to equal: the name is checked for itself only.
        let name = self.front_name().unwrap_or_default();
        let mut problems = Vec::new();
        let front = frontmatter::parse(&file, &self.text, &name, &mut problems);
        let Some(front) = front else {
            return Err(problems);
        };
        let mut declared = keys::parse(&file, &front.metadata, &mut problems);
        for (key, named) in [
            ("a2a-input-schema", &declared.input_schema),
            ("a2a-output-schema", &declared.output_schema),
            ("a2a-provider-config", &declared.provider_config),
        ] {
            if let Some((_, entry)) = named {
                problems.push(
                    ManifestError::error(
                        &file,
                        format!("metadata.{key}"),
                        format!(
                            "`{key}` names a file, and a skill defined in memory has no folder: \
                             give the schema as a value (`SkillMd::input_schema` / \
                             `output_schema`), or the provider settings on the host"
                        ),
                    )
                    .at(entry.line, entry.column),
                );
            }
        }
        declared.any_declared |= self.input_schema.is_some() || self.output_schema.is_some();
        let assets = Assets {
            input_schema: schema_value(
                &file,
                "input_schema",
                self.input_schema.as_ref(),
                &mut problems,
            ),
            output_schema: schema_value(
                &file,
                "output_schema",
                self.output_schema.as_ref(),
                &mut problems,
            ),
            provider_config: None,
            dir: None,
        };
        let built = build(
            &file,
            None,
            source,
            front,
            declared,
            assets,
            &TemplateCache::default(),
            &mut problems,
        );
        finish(built, problems)
    }
}

/// A schema given as a value, under a schema file's size cap and the engine's 2020-12 checks.
fn schema_value(
    file: &Path,
    location: &str,
    schema: Option<&Value>,
    problems: &mut Vec<ManifestError>,
) -> Option<CompiledSchema> {
    let schema = schema?;
    let size = serde_json::to_string(schema).map_or(usize::MAX, |text| text.len());
    if size as u64 > MAX_ASSET_BYTES {
        problems.push(ManifestError::error(
            file,
            location,
            format!("the schema is larger than the {MAX_ASSET_BYTES}-byte limit of a schema file"),
        ));
        return None;
    }
    match CompiledSchema::compile(schema) {
        Ok(compiled) => Some(compiled),
        Err(e) => {
            problems.push(ManifestError::error(
                file,
                format!("{location}#{}", e.pointer),
                e.reason,
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const GREET: &str = "---\nname: greet\ndescription: Greets someone.\n---\nGreet {{ who }}.";

    fn errors(result: Result<CompiledSkill, Vec<ManifestError>>) -> Vec<String> {
        result
            .expect_err("the skill must not load")
            .iter()
            .filter(|p| p.is_error())
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_skill_defined_in_memory_loads_with_its_schemas_and_no_folder() {
        let skill = SkillMd::new(GREET)
            .input_schema(json!({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}))
            .output_schema(json!({"type": "object", "properties": {"greeting": {"type": "string"}}}))
            .load(SkillSource::Project)
            .unwrap();
        assert_eq!(skill.name(), "greet");
        assert!(skill.dir.is_none());
        assert!(skill.spec.file_path.is_none());
        assert!(skill.resources.files.is_empty());
        assert!(skill.output_schema.is_some());
        assert_eq!(skill.template_mode, crate::skill::TemplateMode::Strict);
    }

    #[test]
    fn a_plain_skill_in_memory_keeps_its_body_as_written() {
        let skill = SkillMd::new(GREET).load(SkillSource::Project).unwrap();
        assert_eq!(skill.template_mode, crate::skill::TemplateMode::Literal);
        assert!(skill.resources.plain_agent_skill);
    }

    #[test]
    fn a_key_naming_a_file_is_an_error_that_says_to_give_the_schema_as_a_value() {
        let text = "---\nname: greet\ndescription: Greets.\nmetadata:\n  a2a-output-schema: out.json\n---\nHi.";
        let errors = errors(SkillMd::new(text).load(SkillSource::Project));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("<in memory>/greet/SKILL.md"),
            "{errors:?}"
        );
        assert!(
            errors[0].contains("give the schema as a value"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_schema_value_gets_the_keyword_check_with_its_pointer() {
        let schema =
            json!({"type": "object", "properties": {"who": {"type": "string", "minLenght": 1}}});
        let errors = errors(
            SkillMd::new(GREET)
                .input_schema(schema)
                .load(SkillSource::Project),
        );
        assert!(
            errors[0].contains("input_schema#/properties/who"),
            "{errors:?}"
        );
        assert!(errors[0].contains("minLength"), "{errors:?}");
    }

    #[test]
    fn text_over_the_skill_md_cap_is_refused_before_parsing() {
        let mut text = String::from(GREET);
        text.push_str(&"x".repeat(MAX_SKILL_MD_BYTES as usize));
        let errors = errors(SkillMd::new(text).load(SkillSource::Project));
        assert!(errors[0].contains("byte limit"), "{errors:?}");
    }

    #[test]
    fn a_schema_value_over_the_asset_cap_is_refused() {
        let big = json!({"type": "object", "description": "x".repeat(MAX_ASSET_BYTES as usize)});
        let errors = errors(
            SkillMd::new(GREET)
                .output_schema(big)
                .load(SkillSource::Project),
        );
        assert!(errors[0].contains("output_schema"), "{errors:?}");
        assert!(errors[0].contains("byte limit"), "{errors:?}");
    }

    #[test]
    fn a_bad_name_and_missing_frontmatter_are_the_folder_errors() {
        let bad_name = "---\nname: Greet_Me\ndescription: x\n---\nHi.";
        let errors = errors(SkillMd::new(bad_name).load(SkillSource::Project));
        assert!(errors.iter().any(|e| e.contains("lowercase")), "{errors:?}");
        let errors = errors_of("no frontmatter here");
        assert!(errors[0].contains("missing frontmatter"), "{errors:?}");
    }

    fn errors_of(text: &str) -> Vec<String> {
        errors(SkillMd::new(text).load(SkillSource::Project))
    }
}
