//! `skillet validate DIR... [--strict]`: loads skill folders (or directories of them) without
//! running anything and prints every problem as `file:location: reason` on stdout; exits 1
//! when there are errors (or, with `--strict`, warnings).

use std::io::Write;
use std::path::Path;

use super::args::ValidateArgs;
use super::exit::{Failure, Outcome};
use super::setup::Console;
use crate::skill::{self, ManifestError, Registry};

/// Runs the command.
pub fn validate(args: &ValidateArgs, console: Console) -> Result<Outcome, Failure> {
    let registry = Registry::new();
    let mut problems: Vec<ManifestError> = Vec::new();
    let mut duplicates = Vec::new();
    let mut loaded = 0usize;
    for dir in &args.dirs {
        let (skills, found) = load(dir);
        problems.extend(found);
        for compiled in skills {
            loaded += 1;
            problems.extend(compiled.warnings.iter().cloned());
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
    let errors = problems.iter().filter(|p| p.is_error()).count() + duplicates.len();
    let warnings = problems.len() + duplicates.len() - errors;
    console.notice(format!(
        "{loaded} skill(s) loaded; {errors} error(s), {warnings} warning(s){}",
        if args.strict {
            " (--strict: warnings count as errors)"
        } else {
            ""
        }
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
        return match skill::load_skill_dir(dir, "project") {
            Ok(compiled) => (vec![compiled], Vec::new()),
            Err(problems) => (Vec::new(), problems),
        };
    }
    let report = skill::load_skills_root(dir, "project");
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
