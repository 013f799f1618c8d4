//! Loading skill directories: SKILL.md → [`CompiledSkill`], and a root of skill directories →
//! [`LoadReport`] (every bad skill reported, every good one loaded).
//!
//! The steps for one directory: read SKILL.md (size-capped, inside the directory), parse the
//! frontmatter (`frontmatter`), type the metadata keys (`keys`), read and compile the named
//! schema and provider-config assets (`assets`, `schema`), compile the body (`template`), apply
//! the documented defaults, and collect every problem rather than stopping at the first.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::assets::{self, MAX_SKILL_MD_BYTES, SkillDir};
use super::compiled::{A2aMetadata, CompiledSkill, ExecutionHints};
use super::error::ManifestError;
use super::frontmatter::{self, Frontmatter};
use super::keys::{self, DeclaredKeys, TemplateMode};
use super::manifest_assets::{provider_config_asset, schema_asset};
use super::parallel;
use super::resources::{self, AllowedTools, SkillResources};
use super::spec::{SkillSource, SkillSpec};
use crate::protocol::{Credentials, LLMConfig, SkillStatus};
use crate::schema::{CompiledSchema, SchemaCache};
use crate::template::{Template, TemplateCache};

/// The outcome of loading a root of skill directories.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Skills that loaded, sorted by name (each carries its own warnings).
    pub skills: Vec<CompiledSkill>,
    /// Every problem of every skill that did not load (errors and their warnings), and problems
    /// with the root itself.
    pub errors: Vec<ManifestError>,
}

impl LoadReport {
    /// Warnings of the skills that loaded.
    pub fn warnings(&self) -> impl Iterator<Item = &ManifestError> {
        self.skills.iter().flat_map(|s| s.warnings.iter())
    }
}

/// Keys the engine itself writes into `SkillDefinition.metadata`; manifest keys with these names
/// are ignored with a warning.
pub(crate) const RESERVED_METADATA_KEYS: [&str; 7] = [
    "license",
    "compatibility",
    "allowed_tools",
    "a2a",
    "blocked_reason",
    "missing_tools",
    "missing_toolkits",
];

/// The compilations the skills of one load share: identical schema documents and identical
/// bodies are compiled once.
#[derive(Debug, Default)]
struct Compilations {
    schemas: SchemaCache,
    templates: TemplateCache,
}

/// Loads every immediate subdirectory of `root` that holds a SKILL.md (hidden directories are
/// skipped; subdirectories without SKILL.md are not skills and are ignored).
///
/// The directories load in parallel (one thread per available core) and share one
/// [`SchemaCache`] and [`TemplateCache`], so a schema document or a body that many skills
/// declare is compiled once. The report is the same as loading them one by one in
/// directory-name order: errors in that order, skills sorted by name.
pub fn load_skills_root(root: &Path, source: SkillSource) -> LoadReport {
    let mut report = LoadReport::default();
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) => {
            report.errors.push(ManifestError::error(
                root,
                "directory",
                format!("cannot read the skills directory: {e}"),
            ));
            return report;
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .filter(|p| p.join("SKILL.md").exists() || p.join("SKILL.md").is_symlink())
        .collect();
    dirs.sort();
    let shared = Compilations::default();
    let outcomes = parallel::map_in_order(&dirs, |dir| load_with(dir, source, &shared));
    for outcome in outcomes {
        match outcome {
            Ok(skill) => report.skills.push(skill),
            Err(problems) => report.errors.extend(problems),
        }
    }
    report.skills.sort_by(|a, b| a.name().cmp(b.name()));
    report
}

/// Loads and compiles one skill directory. `source` is where it comes from (A2E `source`). On
/// failure, every problem found (errors and warnings) is returned.
pub fn load_skill_dir(
    dir: &Path,
    source: SkillSource,
) -> Result<CompiledSkill, Vec<ManifestError>> {
    load_with(dir, source, &Compilations::default())
}

/// [`load_skill_dir`], compiling schemas and the body through `shared`.
fn load_with(
    dir: &Path,
    source: SkillSource,
    shared: &Compilations,
) -> Result<CompiledSkill, Vec<ManifestError>> {
    let skill_md = dir.join("SKILL.md");
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let skill_dir = SkillDir::new(dir);
    let text = skill_dir
        .resolve("SKILL.md")
        .and_then(|path| assets::read_capped(&path, MAX_SKILL_MD_BYTES))
        .map_err(|reason| {
            vec![ManifestError::error(
                &skill_md,
                "SKILL.md",
                reason.to_string(),
            )]
        })?;
    let mut problems = Vec::new();
    let Some(front) = frontmatter::parse(&skill_md, &text, &dir_name, &mut problems) else {
        return Err(problems);
    };
    let declared = keys::parse(&skill_md, &front.metadata, &mut problems);
    let assets = Assets {
        input_schema: schema_asset(
            &skill_dir,
            &skill_md,
            "a2a-input-schema",
            &declared.input_schema,
            &shared.schemas,
            &mut problems,
        ),
        output_schema: schema_asset(
            &skill_dir,
            &skill_md,
            "a2a-output-schema",
            &declared.output_schema,
            &shared.schemas,
            &mut problems,
        ),
        provider_config: provider_config_asset(&skill_dir, &skill_md, &declared, &mut problems),
        dir: Some(dir),
    };
    let built = build(
        &skill_md,
        Some(skill_md.display().to_string()),
        source,
        front,
        declared,
        assets,
        &shared.templates,
        &mut problems,
    );
    finish(built, problems)
}

/// The skill, carrying its warnings; or every problem when any is an error.
pub(super) fn finish(
    built: Option<CompiledSkill>,
    problems: Vec<ManifestError>,
) -> Result<CompiledSkill, Vec<ManifestError>> {
    if problems.iter().any(ManifestError::is_error) {
        return Err(problems);
    }
    let mut skill = built.ok_or_else(|| problems.clone())?;
    skill.warnings = problems;
    Ok(skill)
}

/// What a skill's metadata names besides SKILL.md, already read and compiled: from its folder
/// (`a2a-*-schema`, `a2a-provider-config`), or given as values for a skill defined in memory.
pub(super) struct Assets<'a> {
    pub input_schema: Option<CompiledSchema>,
    pub output_schema: Option<CompiledSchema>,
    pub provider_config: Option<Map<String, Value>>,
    /// The skill's folder (its files a run may read); `None` for a skill defined in memory.
    pub dir: Option<&'a Path>,
}

/// Assembles the skill from its parsed frontmatter, typed keys and assets. `skill_md` locates
/// problems; `file_path` is the spec's `file_path`.
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    skill_md: &Path,
    file_path: Option<String>,
    source: SkillSource,
    front: Frontmatter,
    keys: DeclaredKeys,
    assets: Assets<'_>,
    templates: &TemplateCache,
    problems: &mut Vec<ManifestError>,
) -> Option<CompiledSkill> {
    let Assets {
        input_schema,
        output_schema,
        provider_config,
        dir,
    } = assets;

    let mode = keys.template.unwrap_or(if keys.any_declared {
        TemplateMode::Strict
    } else {
        TemplateMode::Literal
    });
    let template = compile_body(
        skill_md,
        &front,
        mode,
        input_schema.as_ref(),
        templates,
        problems,
    )?;

    let tags_reported = problems.iter().any(|p| p.location == "metadata.a2a-tags");
    if keys.any_declared && keys.tags.is_empty() && !tags_reported {
        problems.push(ManifestError::warning(
            skill_md,
            "metadata.a2a-tags",
            "no `a2a-tags`: an A2A skill needs tags; the Agent Card uses the category, or \
             [\"skill\"]",
        ));
    }
    let version = keys.version.clone().or_else(|| {
        front
            .extra
            .iter()
            .find(|(k, _)| k == "version")
            .and_then(|(_, e)| frontmatter::scalar_text(&e.value))
    });
    let llm_config = if keys.provider.is_some() || provider_config.is_some() {
        let mut config = provider_config.unwrap_or_default();
        if let Some(model) = &keys.model {
            config.insert("model".to_owned(), Value::String(model.clone()));
        }
        let provider_name = keys.provider.clone().or_else(|| {
            config
                .get("provider")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        match provider_name {
            Some(provider_name) => Some(LLMConfig {
                provider_name,
                provider_credentials: Credentials::new(),
                provider_config: (!config.is_empty()).then_some(config),
                is_default: false,
            }),
            None => {
                problems.push(ManifestError::error(
                    skill_md,
                    "metadata.a2e-provider",
                    "`a2a-provider-config` needs a provider: set `a2e-provider` (or a \
                     `provider` key in the config)",
                ));
                None
            }
        }
    } else {
        None
    };
    let metadata = definition_metadata(skill_md, &front, &keys, problems);
    let resources = skill_resources(dir, skill_md, &front, &keys, problems);
    let argument_hint = keys
        .argument_hint
        .clone()
        .unwrap_or_else(|| default_argument_hint(input_schema.as_ref()));
    let spec = SkillSpec {
        name: front.name.clone(),
        version: version.unwrap_or_else(|| "0.0.0".to_owned()),
        description: front.description.clone(),
        triggers: keys
            .triggers
            .clone()
            .unwrap_or_else(|| vec![front.name.replace('-', " ")]),
        status: keys.status.unwrap_or(SkillStatus::Published),
        instructions: front.body.clone(),
        file_path,
        llm_config,
        arguments: keys.arguments.clone(),
        when_to_use: keys
            .when_to_use
            .clone()
            .unwrap_or_else(|| front.description.clone()),
        argument_hint,
        source,
        category: keys.category.clone(),
        tags: keys.tags.clone(),
        max_turns: keys.max_turns,
        timeout_seconds: keys.timeout_seconds,
        icon: keys.icon.clone(),
        metadata,
    };
    Some(CompiledSkill {
        a2a: A2aMetadata {
            id: keys.a2a_id.clone().unwrap_or_else(|| front.name.clone()),
            display_name: keys.a2a_name.clone(),
            tags: keys.tags.clone(),
            examples: keys.examples.clone(),
            input_modes: keys.input_modes.clone(),
            output_modes: keys.output_modes.clone(),
            security_requirements: keys.security_requirements.clone(),
        },
        hints: ExecutionHints {
            max_tokens: keys.max_tokens,
            temperature: keys.temperature,
            top_p: keys.top_p,
            structured_output: keys.structured_output,
            max_cost_usd: keys.max_cost_usd,
            reasoning: keys.reasoning.clone(),
        },
        template,
        template_mode: mode,
        input_schema,
        output_schema,
        dir: dir.map(Path::to_path_buf),
        warnings: Vec::new(),
        tools: keys.tools,
        toolkits: keys.toolkits,
        requirements: keys.requirements,
        system_tools: keys.system_tools,
        approval: keys.approval,
        resources,
        spec,
    })
}

/// The files a run may read and the mapped `allowed-tools`; unmapped names are warnings.
fn skill_resources(
    dir: Option<&Path>,
    skill_md: &Path,
    front: &Frontmatter,
    keys: &DeclaredKeys,
    problems: &mut Vec<ManifestError>,
) -> SkillResources {
    let allowed = AllowedTools::map(&front.allowed_tools);
    for name in &allowed.unmapped {
        problems.push(ManifestError::warning(
            skill_md,
            "frontmatter.allowed-tools",
            format!("`{name}` has no Skillet equivalent; ignored (Read, Write, Edit, Glob, Grep and Bash map to Skillet's file and script tools)"),
        ));
    }
    let named: Vec<String> = [
        &keys.input_schema,
        &keys.output_schema,
        &keys.provider_config,
    ]
    .into_iter()
    .filter_map(|k| k.as_ref().map(|(path, _)| path.clone()))
    .collect();
    let (files, listing_cut) = match dir {
        Some(dir) => resources::list_files(dir, &named),
        None => (Vec::new(), false),
    };
    SkillResources {
        files,
        listing_cut,
        plain_agent_skill: !keys.any_declared,
        allowed,
    }
}

fn compile_body(
    skill_md: &Path,
    front: &Frontmatter,
    mode: TemplateMode,
    input_schema: Option<&CompiledSchema>,
    templates: &TemplateCache,
    problems: &mut Vec<ManifestError>,
) -> Option<Template> {
    let absolute_line = |line: usize| front.body_line + line - 1;
    match mode {
        TemplateMode::Literal => {
            if let Ok(t) = templates.compile(&front.body)
                && let Some(p) = t.placeholders().next()
            {
                problems.push(
                    ManifestError::warning(
                        skill_md,
                        "body",
                        format!(
                            "`{{{{ {} }}}}` is literal text: this manifest has no `a2a-*`/`a2e-*` \
                             keys, so its body is plain instructions; add `a2e-template: strict` \
                             to fill placeholders from the arguments",
                            p.path
                        ),
                    )
                    .at(absolute_line(p.line), p.column),
                );
            }
            Some(Template::literal(&front.body))
        }
        TemplateMode::Strict => match templates.compile(&front.body) {
            Ok(t) => {
                check_placeholders(skill_md, &t, input_schema, &absolute_line, problems);
                Some(t)
            }
            Err(e) => {
                problems.push(
                    ManifestError::error(skill_md, "body", e.reason)
                        .at(absolute_line(e.line), e.column),
                );
                None
            }
        },
    }
}

/// Warns about placeholders that a schema-valid call may not supply.
fn check_placeholders(
    skill_md: &Path,
    template: &Template,
    input_schema: Option<&CompiledSchema>,
    absolute_line: &dyn Fn(usize) -> usize,
    problems: &mut Vec<ManifestError>,
) {
    let Some(Value::Object(schema)) = input_schema.map(CompiledSchema::source) else {
        return;
    };
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for p in template.placeholders() {
        let top = p.path.split('.').next().unwrap_or_default();
        let reason = if !properties.contains_key(top) {
            format!(
                "`{{{{ {} }}}}`: the input schema has no property `{top}`",
                p.path
            )
        } else if !required.contains(&top) {
            format!(
                "`{{{{ {} }}}}`: `{top}` is optional in the input schema, and a call without \
                 it fails to render",
                p.path
            )
        } else {
            continue;
        };
        problems.push(
            ManifestError::warning(skill_md, "body", reason).at(absolute_line(p.line), p.column),
        );
    }
}

fn definition_metadata(
    skill_md: &Path,
    front: &Frontmatter,
    keys: &DeclaredKeys,
    problems: &mut Vec<ManifestError>,
) -> Map<String, Value> {
    let mut metadata = Map::new();
    for (key, value) in &keys.custom {
        if RESERVED_METADATA_KEYS.contains(&key.as_str()) {
            problems.push(ManifestError::warning(
                skill_md,
                format!("metadata.{key}"),
                format!("`{key}` is written by the engine; this metadata key is ignored"),
            ));
        } else {
            metadata.insert(key.clone(), value.clone());
        }
    }
    if let Some(l) = &front.license {
        metadata.insert("license".to_owned(), Value::String(l.clone()));
    }
    if let Some(c) = &front.compatibility {
        metadata.insert("compatibility".to_owned(), Value::String(c.clone()));
    }
    if !front.allowed_tools.is_empty() {
        metadata.insert("allowed_tools".to_owned(), json!(front.allowed_tools));
    }
    let mut a2a = Map::new();
    if let Some(id) = &keys.a2a_id {
        a2a.insert("id".to_owned(), json!(id));
    }
    if let Some(name) = &keys.a2a_name {
        a2a.insert("name".to_owned(), json!(name));
    }
    for (field, list) in [
        ("examples", &keys.examples),
        ("inputModes", &keys.input_modes),
        ("outputModes", &keys.output_modes),
    ] {
        if !list.is_empty() {
            a2a.insert(field.to_owned(), json!(list));
        }
    }
    if !a2a.is_empty() {
        metadata.insert("a2a".to_owned(), Value::Object(a2a));
    }
    metadata
}

/// "JSON object: text (string, required), max_words (integer)".
fn default_argument_hint(input_schema: Option<&CompiledSchema>) -> String {
    let Some(Value::Object(schema)) = input_schema.map(CompiledSchema::source) else {
        return "Free-form JSON object".to_owned();
    };
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return "JSON object matching the input schema".to_owned();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, prop)| {
            let ty = prop.get("type").map(|t| match t {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let mut parts: Vec<String> = ty.into_iter().collect();
            if required.contains(&name.as_str()) {
                parts.push("required".to_owned());
            }
            if parts.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", parts.join(", "))
            }
        })
        .collect();
    format!("JSON object: {}", fields.join(", "))
}
