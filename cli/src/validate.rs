//! `skillet validate DIR... [--strict]`: loads skill folders (or directories of them) without
//! running anything and prints every problem as `file:location: reason` on stdout; exits 1
//! when there are errors (or, with `--strict`, warnings). A skill folder's `evals/evals.json`,
//! when there is one, is checked too (as `skillet eval` reads it), and so is what `run` would
//! refuse on this host although the folder loads (`validate_runnable`: undeclared tools and
//! toolkits, a `mock-scenario.yaml` that does not load), and Python scripts importing what no
//! requirement declares (`validate_imports`).
//!
//! A skill whose own provider settings this host's `[skill_provider]` policy does not allow is
//! an error: it would be `Blocked` when served. It is judged against the configured default
//! provider; with none configured, against a host of the skill's own provider kind at its
//! default endpoint (so only asking for an endpoint or a setting is reported). Nothing is read
//! from the environment and nothing is sent, except with `--prepare`, which builds the skills'
//! Python environments with uv (`validate_scripts`); `--scripts` reports the interpreters.

use std::io::Write;
use std::path::Path;

use super::args::{GlobalArgs, ValidateArgs};
use super::exit::{Failure, Outcome};
use super::setup::{Console, load_config};
use super::validate_imports;
use super::validate_runnable;
use super::validate_scripts;
use crate::config::{ProviderChoice, ProviderShortcuts};
use skillet_engine::run::HostEndpoint;
use skillet_engine::skill::{self, CompiledSkill, ManifestError, Registry};
use skillet_providers::ProviderKind;

/// Runs the command.
pub async fn validate(
    args: &ValidateArgs,
    global: &GlobalArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let config = load_config(global)?;
    let shortcuts = ProviderShortcuts {
        provider: global.provider.clone(),
        model: global.model(),
        base_url: global.base_url.clone(),
    };
    let configured = match ProviderChoice::resolve(&config, &shortcuts).map_err(Failure::setup)? {
        ProviderChoice::Real { config, .. } => Some(HostEndpoint::of_config(&config)),
        ProviderChoice::EmbeddedMock { .. } => None,
    };
    let provider_problem = |compiled: &CompiledSkill| {
        let llm_config = compiled.spec.llm_config.as_ref()?;
        let host = match &configured {
            Some(host) => host.clone(),
            None => ProviderKind::parse(&llm_config.provider_name).map(HostEndpoint::default_for),
        };
        let denial = config
            .skill_provider
            .admit(llm_config, host.as_ref())
            .err()?;
        let path = compiled.spec.file_path.as_deref().unwrap_or("SKILL.md");
        Some(ManifestError::error(
            std::path::Path::new(path),
            "metadata.a2e-provider",
            format!("Blocked on this host: provider: {denial}"),
        ))
    };
    // Asked once, only when a skill ships a Python script to judge.
    let ships_python = args
        .dirs
        .iter()
        .any(|dir| validate_imports::has_python_scripts(dir));
    let stdlib = ships_python
        .then(validate_imports::standard_library)
        .flatten();
    let registry = Registry::new();
    let mut problems: Vec<ManifestError> = Vec::new();
    let mut duplicates = Vec::new();
    let mut loaded = 0usize;
    let mut folders = Vec::new();
    for dir in &args.dirs {
        let (skills, found) = load(dir);
        problems.extend(found);
        for compiled in skills {
            loaded += 1;
            folders.push(validate_scripts::ScriptedSkill::of(&compiled));
            problems.extend(compiled.warnings.iter().cloned());
            problems.extend(provider_problem(&compiled));
            problems.extend(validate_runnable::problems(&compiled, &config));
            if let Some(stdlib) = &stdlib {
                let host = config
                    .skills
                    .environments
                    .get(compiled.name())
                    .map(|env| env.python.as_slice());
                problems.extend(validate_imports::undeclared_imports(
                    &compiled, host, stdlib,
                ));
            }
            let has_evals = compiled
                .dir
                .as_deref()
                .is_some_and(|dir| dir.join(skillet_engine::eval::EVALS_FILE).exists());
            if has_evals {
                match skillet_engine::eval::load_suite(&compiled) {
                    Ok(suite) => problems.extend(leak_warnings(&compiled, &suite)),
                    Err(found) => problems.extend(found),
                }
            }
            if let Err(refused) = registry.register(compiled) {
                duplicates.push(refused.to_string());
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    for problem in &problems {
        let _ = writeln!(stdout, "{problem}");
    }
    for duplicate in &duplicates {
        let _ = writeln!(stdout, "{duplicate}");
    }
    drop(stdout);
    let scripts = validate_scripts::report(&folders, &config.skills, args, console).await;
    let errors =
        problems.iter().filter(|p| p.is_error()).count() + duplicates.len() + scripts.errors;
    let warnings = problems.len() + duplicates.len() + scripts.warnings - (errors - scripts.errors);
    console.notice(format!(
        "{loaded} skill(s) loaded; {errors} error(s), {warnings} warning(s){}; config: {}",
        if args.strict {
            " (--strict: warnings count as errors)"
        } else {
            ""
        },
        config.origin()
    ));
    let failed = errors > 0 || (args.strict && warnings > 0);
    Ok(if failed {
        Outcome::Failed
    } else {
        Outcome::Success
    })
}

/// A skill folder (has SKILL.md) or a directory of skill folders.
fn load(dir: &Path) -> (Vec<skill::CompiledSkill>, Vec<ManifestError>) {
    if dir.join("SKILL.md").exists() {
        return match skill::load_skill_dir(dir, skill::SkillSource::Project) {
            Ok(compiled) => (vec![compiled], Vec::new()),
            Err(problems) => (Vec::new(), problems),
        };
    }
    let report = skill::load_skills_root(dir, skill::SkillSource::Project);
    if report.skills.is_empty() && report.errors.is_empty() {
        let none = ManifestError::error(
            dir,
            "directory",
            "no skill here: neither DIR/SKILL.md nor DIR/*/SKILL.md exists",
        );
        return (Vec::new(), vec![none]);
    }
    (report.skills, report.errors)
}

/// A warning per value the evals expect that the skill's instructions already show
/// (`skillet_engine::eval::leaked_values`).
fn leak_warnings(
    skill: &skillet_engine::skill::CompiledSkill,
    suite: &skillet_engine::eval::EvalSuite,
) -> Vec<skillet_engine::skill::ManifestError> {
    let Some(dir) = skill.dir.as_deref() else {
        return Vec::new();
    };
    let file = dir.join(skillet_engine::eval::EVALS_FILE);
    skillet_engine::eval::leaked_values(skill, suite)
        .into_iter()
        .map(|leak| {
            skillet_engine::skill::ManifestError::warning(&file, "leaked answer", leak.to_string())
        })
        .collect()
}
