//! What `skillet validate` says about scripts: each skill's Python environment (ready, not
//! built yet, or why it cannot be built; `--prepare` builds the missing ones with uv), and with
//! `--scripts` the interpreter each extension resolves to and whether the sandbox can run it,
//! and the system tools the host offers (`[skills.scripts] tools`); a skill whose
//! `a2e-system-tools` names one not offered gets a line saying which and how to offer it.
//!
//! Lines go to stdout beside the load problems (`SKILL.md: environment: ...`,
//! `interpreters: .py: ...`). An environment that cannot be built is an error when scripts are
//! enabled or `--prepare` asked for it (the skill would be `Blocked`), a warning otherwise; an
//! interpreter the sandbox cannot run is an error when a loaded skill ships a script it would
//! run, a warning otherwise.
//!
//! Not here: resolving and building (`skillet_engine::environments`).

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::PathBuf;

use skillet_engine::environments::{
    EnvironmentKind, EnvironmentState, Environments, Requirements, SkillFolder,
};
use skillet_engine::files::{FileSupport, FilesConfig};
use skillet_engine::skill::CompiledSkill;

use super::args::ValidateArgs;
use super::setup::Console;

/// What validate needs of a loaded skill to talk about its scripts.
#[derive(Debug)]
pub(crate) struct ScriptedSkill {
    folder: SkillFolder,
    skill_md: PathBuf,
    extensions: BTreeSet<String>,
    system_tools: Vec<String>,
}

impl ScriptedSkill {
    pub(crate) fn of(skill: &CompiledSkill) -> Self {
        let extensions = skill
            .resources
            .files
            .iter()
            .filter(|f| f.path.starts_with("scripts/"))
            .filter_map(|f| f.path.rsplit_once('.').map(|(_, ext)| ext.to_owned()))
            .filter(|ext| !ext.contains('/'))
            .collect();
        ScriptedSkill {
            folder: SkillFolder::of(skill),
            skill_md: skill
                .spec
                .file_path
                .as_deref()
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("SKILL.md")),
            extensions,
            system_tools: skill.system_tools.clone(),
        }
    }
}

/// How many errors and warnings the lines counted.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub errors: usize,
    pub warnings: usize,
}

/// Prints the environment (and, with `--scripts`, interpreter) lines and counts them.
pub(crate) async fn report(
    skills: &[ScriptedSkill],
    config: &FilesConfig,
    args: &ValidateArgs,
    console: Console,
) -> Counts {
    let mut counts = Counts::default();
    let scripted: Vec<&ScriptedSkill> = skills
        .iter()
        .filter(|s| !s.extensions.is_empty() || !s.system_tools.is_empty())
        .collect();
    if scripted.is_empty() && !args.scripts {
        return counts;
    }
    // Judged as a host with scripts on would judge them (that is what the lines are about).
    let mut resolved = config.clone();
    resolved.scripts.enabled = true;
    let files = FileSupport::new(resolved);
    let mut lines = Vec::new();
    if args.scripts {
        for (ext, interpreter) in files.interpreters().entries() {
            match interpreter {
                Ok(found) => {
                    let version = found
                        .python_version
                        .as_deref()
                        .map(|v| format!(" (Python {v})"))
                        .unwrap_or_default();
                    let mut line = format!(
                        "interpreters: .{ext}: {} -> {}{version}",
                        found.configured.display(),
                        found.program.display()
                    );
                    if !found.skipped.is_empty() {
                        line.push_str(&format!(" (skipped: {})", found.skipped.join("; ")));
                    }
                    lines.push(line);
                }
                Err(why) => {
                    let needed = scripted.iter().any(|s| s.extensions.contains(ext));
                    let severity = count(&mut counts, needed);
                    lines.push(format!("interpreters: .{ext}: {severity}: {why}"));
                }
            }
        }
        for (name, tool) in files.system_tools().entries() {
            match tool {
                Ok(found) => lines.push(format!(
                    "tools: {name}: {} -> {}",
                    found.configured.display(),
                    found.program.display()
                )),
                Err(why) => {
                    let needed = scripted
                        .iter()
                        .any(|s| s.system_tools.iter().any(|t| t == name));
                    let severity = count(&mut counts, needed);
                    lines.push(format!("tools: {name}: {severity}: {why}"));
                }
            }
        }
        lines.push(format!(
            "environments: {} ({})",
            files.environments().root().display(),
            files.environments().installer_description()
        ));
    }
    let environments = files.environments();
    for skill in scripted {
        let missing = files.system_tools().missing_for(&skill.system_tools);
        if !missing.is_empty() {
            let severity = count(&mut counts, config.scripts.enabled);
            lines.push(format!(
                "{}: system tools: {severity}: {}",
                skill.skill_md.display(),
                missing.join(", ")
            ));
        }
        let md = skill.skill_md.display();
        for state in environments.states(&skill.folder) {
            let state = match state {
                EnvironmentState::NotBuilt { kind, .. } if args.prepare => {
                    prepared(environments, &skill.folder, kind, console).await
                }
                state => state,
            };
            match state {
                EnvironmentState::NotNeeded => {}
                EnvironmentState::Ready(env) => lines.push(format!(
                    "{md}: {}: ready ({}) at {}",
                    heading(env.kind),
                    env.requirements.lines.join(", "),
                    env.dir.display()
                )),
                EnvironmentState::NotBuilt {
                    kind,
                    requirements,
                    dir,
                } => lines.push(format!(
                    "{md}: {}: not built yet ({}; from {}); `skillet validate --prepare` \
                     builds it at {}",
                    heading(kind),
                    requirements.lines.join(", "),
                    requirements.sources.join(", "),
                    dir.display()
                )),
                EnvironmentState::Failed(why) => {
                    let severity = count(&mut counts, args.prepare || config.scripts.enabled);
                    lines.push(format!("{md}: environment: {severity}: {why}"));
                }
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(stdout, "{line}");
    }
    counts
}

/// `environment` (Python's, as before Node) or `node environment`.
fn heading(kind: EnvironmentKind) -> &'static str {
    match kind {
        EnvironmentKind::Python => "environment",
        EnvironmentKind::Node => "node environment",
    }
}

/// Builds the `kind` environment of `folder` now (`--prepare`) and says where it then stands.
async fn prepared(
    environments: &Environments,
    folder: &SkillFolder,
    kind: EnvironmentKind,
    console: Console,
) -> EnvironmentState {
    let on_build = |requirements: &Requirements| {
        console.notice(kind.build_notice(&folder.name, requirements));
    };
    match environments.prepare_kind(kind, folder, &on_build).await {
        Ok(Some(env)) => EnvironmentState::Ready(env),
        Ok(None) => EnvironmentState::NotNeeded,
        Err(why) => EnvironmentState::Failed(why),
    }
}

/// Counts one problem as an error when it would block something, a warning otherwise, and
/// names which.
fn count(counts: &mut Counts, blocks: bool) -> &'static str {
    if blocks {
        counts.errors += 1;
        "error"
    } else {
        counts.warnings += 1;
        "warning"
    }
}
