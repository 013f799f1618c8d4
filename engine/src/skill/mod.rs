//! Skills: the SKILL.md loader, the compiled skill, the registry, and the A2A projection.
//!
//! A skill directory holds a `SKILL.md` (YAML frontmatter + markdown body) and the asset files
//! its metadata names. [`load_skill_dir`] turns one directory into a [`CompiledSkill`] (or every
//! [`ManifestError`] it has), and [`SkillMd`] (`inline`) a SKILL.md text held in memory;
//! [`load_skills_root`] loads a directory of skill directories into a
//! [`LoadReport`] — in parallel (`parallel`), with identical schema documents compiled once, and
//! reporting exactly what a one-by-one load in directory-name order would. A skill is a
//! [`SkillSpec`] (what it declares, typed) inside the [`CompiledSkill`]; the wire's
//! `SkillDefinition` is only ever its projection, `to_wire` (`wire.rs`), made when discover
//! answers. The [`Registry`] serves manifest and native skills to discover and call;
//! `a2a.rs` projects them to A2A `AgentSkill`s and an Agent Card.
//!
//! Not here: running a skill (`run`), the wire types (`protocol`), template and schema engines
//! (`template`, `schema`). `docs/SKILL_FORMAT.md` is the author-facing version of this doc.
//!
//! # Frontmatter (Agent Skills)
//! `name` (1–64 of `[a-z0-9-]`, no leading/trailing/double `-`, equal to the directory name),
//! `description` (required; over 1024 characters is a warning, as published skills exceed it),
//! optional `license`, `compatibility` (≤ 500), `allowed-tools` (space-separated; kept in
//! `metadata.allowed_tools` and mapped onto Skillet's file tools, unmapped names are warnings:
//! [`SkillResources`]; host tools are declared with `a2e-tools`), `metadata` (string → string).
//! Other top-level keys are warnings (a top-level `version` is used when `a2e-version` is
//! absent).
//!
//! # `a2a-*` metadata keys (seed 003; unknown `a2a-*` keys are errors)
//! | key | value | becomes |
//! |---|---|---|
//! | `a2a-id` | string | A2A skill id (default: `name`) |
//! | `a2a-name` | string | A2A display name (default: `name`) |
//! | `a2a-tags` | JSON array string | `tags`; A2A tags |
//! | `a2a-examples`, `a2a-input-modes`, `a2a-output-modes` | JSON array string | A2A fields |
//! | `a2a-security-requirements` | JSON array of objects | A2A `securityRequirements` |
//! | `a2a-max-tokens` | positive integer string | [`ExecutionHints::max_tokens`] |
//! | `a2a-temperature` (0–2), `a2a-top-p` (0–1) | decimal string | [`ExecutionHints`] |
//! | `a2a-input-schema`, `a2a-output-schema` | asset path | compiled schemas, `input_schema`/`output_schema` |
//! | `a2a-provider-config` | asset path (JSON object) | `llm_config.provider_config` |
//!
//! # `a2e-*` metadata keys (the A2E fields Agent Skills lacks; unknown `a2e-*` keys are errors)
//! | key | value | `SkillDefinition` field | default when absent |
//! |---|---|---|---|
//! | `a2e-version` | string | `version` | top-level `version`, else `0.0.0` |
//! | `a2e-triggers` | JSON array string | `triggers` | `[name with "-" → " "]` |
//! | `a2e-tools` | JSON array string | `tools` (names) | none |
//! | `a2e-toolkits` | JSON array string | `toolkits` (names) | none |
//! | `a2e-category` | string | `category` | none |
//! | `a2e-when-to-use` | string | `when_to_use` | `description` |
//! | `a2e-argument-hint` | string | `argument_hint` | from the input schema (`JSON object: text (string, required), ...`), else `Free-form JSON object` |
//! | `a2e-max-turns` | positive integer string | `max_turns` | none (the run loop's default) |
//! | `a2e-max-cost-usd` | decimal string above 0 | `ExecutionHints::max_cost_usd` | none (the host's `[limits] max_cost_usd`, the smaller applies) |
//! | `a2e-timeout-seconds` | positive integer string | `timeout_seconds` | none |
//! | `a2e-status` | `Created`, `Published`, `Archived` | `status` | `Published` (`Blocked` is computed) |
//! | `a2e-icon` | string | `icon` | none |
//! | `a2e-provider` | provider name | `llm_config.provider_name` | the config's `provider` key |
//! | `a2e-model` | model name | `llm_config.provider_config.model` | none |
//! | `a2e-arguments` | JSON array string | `arguments` | none |
//! | `a2e-requirements` | JSON array string | (scripts' Python environment: `environments`) | none |
//! | `a2e-system-tools` | JSON array string of program names | (programs scripts run: `environments::SystemTools`) | none |
//! | `a2e-approval` | JSON array string of tool names | (their calls wait for a person's approval: `run::approval`; adds to the host's, never removes) | none |
//! | `a2e-template` | `strict` or `literal` | how the body is used | see below |
//!
//! `source` is the loader's argument (a [`SkillSource`]: `user`, `system`, `project`); `file_path` is the SKILL.md
//! path; `instructions` is the body as written. A manifest never carries credentials:
//! `llm_config.provider_credentials` is always empty, and a provider config with a key that
//! looks like a credential (`api_key`, `token`, `secret`, `password`, `authorization`; keys
//! ending in `_env` name an environment variable and are fine) is an error.
//!
//! `SkillDefinition.metadata` holds the author's other metadata keys as written, plus
//! `license`, `compatibility`, `allowed_tools`, `a2a` (`{id, name, examples, inputModes,
//! outputModes}` when declared) and, from the registry, `blocked_reason` / `missing_tools` /
//! `missing_toolkits` (`registry.rs`'s module doc). Author keys with those names are ignored
//! with a warning.
//!
//! # The body: template or plain instructions
//! With `a2e-template: strict` the body is a strict template (`template` module doc): `{{ a.b }}`
//! placeholders filled from the call's arguments, `\{{` for a literal `{{`, anything else a load
//! error located in SKILL.md. With `a2e-template: literal` it is used as written. When the key is
//! absent, a manifest that uses any `a2a-*`/`a2e-*` key (a Skillet or seed-003 manifest) is
//! `strict`, and a plain Agent Skills manifest is `literal` — so ecosystem skills whose bodies
//! show `${{ github.token }}`, Jinja or Go templates in code blocks load unmodified (with a
//! warning if the body looks like it has placeholders). Strict templates are checked against
//! the input schema: a placeholder for an undeclared or optional property is a warning.
//!
//! # Trust model
//! Nothing is executed, nothing is included, nothing is fetched. Only SKILL.md and the files
//! named by `a2a-input-schema`, `a2a-output-schema`, `a2a-provider-config` are read (the other
//! files beside SKILL.md are listed, name and size, for the `files` tools); their paths
//! must be relative, free of `..`, and resolve (after symlinks) inside the skill directory.
//! SKILL.md is capped at 1 MiB, the frontmatter at 64 KiB, each asset at 256 KiB; the YAML
//! parser runs with alias/anchor/event budgets and rejects duplicate keys.

pub(crate) mod a2a;
mod assets;
mod blockers;
mod compiled;
mod error;
mod frontmatter;
mod inline;
mod keys;
mod loader;
mod manifest_assets;
mod parallel;
mod registry;
mod reload;
mod resources;
mod spec;
pub(crate) mod suggest;
mod wire;

#[cfg(test)]
mod tests;

pub(crate) use assets::MAX_ASSET_BYTES;
pub(crate) use assets::{AssetProblem, SkillDir, read_capped, read_capped_bytes};
pub use blockers::Blockers;
pub use compiled::{A2aMetadata, CompiledSkill, ExecutionHints, TemplateMode};
pub use error::{ManifestError, Severity};
pub use frontmatter::name_problems;
pub use inline::SkillMd;
pub use loader::{LoadReport, load_skill_dir, load_skills_root};
pub use registry::{Implementation, RegisteredSkill, Registry, RegistryError};
pub use reload::ReloadReport;
pub use resources::{AllowedTools, MAX_LISTED_FILES, SkillFile, SkillResources};
pub(crate) use resources::{in_engine_dir, is_listed_path, list_files_upto};
pub use spec::{SkillSource, SkillSpec, UnknownSource};
pub use suggest::closest_names;
