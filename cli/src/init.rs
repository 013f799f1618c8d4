//! `skillet init NAME [--dir DIR]`: scaffolds a skill folder that works as created — it passes
//! `skillet validate --strict`, runs on the embedded mock (`skillet run NAME --args
//! @DIR/NAME/examples/basic.json`) and passes `skillet eval NAME`:
//!
//! ```text
//! DIR/NAME/
//!   SKILL.md                    frontmatter + an instructions template using the `person` input
//!   assets/input.schema.json    the arguments
//!   assets/output.schema.json   the answer
//!   examples/basic.json         example arguments
//!   mock-scenario.yaml          what the embedded mock answers (valid against the output schema)
//!   evals/evals.json            one case `skillet eval` passes on the mock
//! ```
//!
//! The templates are the files under `init/`, with `__NAME__` replaced. A name the loader would
//! refuse and an existing folder are refused before anything is written (exit 2); a folder
//! half-written when the disk fails is removed again (exit 5).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::args::{GlobalArgs, InitArgs};
use super::exit::{Failure, Outcome};
use super::setup::Console;

/// The longest name the skill loader accepts (Agent Skills: 64 characters).
const MAX_NAME_CHARS: usize = 64;

/// What `init` writes: the path inside the skill folder and the template.
const FILES: [(&str, &str); 6] = [
    ("SKILL.md", include_str!("init/skill.md.tmpl")),
    (
        "assets/input.schema.json",
        include_str!("init/input.schema.json"),
    ),
    (
        "assets/output.schema.json",
        include_str!("init/output.schema.json"),
    ),
    ("examples/basic.json", include_str!("init/basic.json")),
    (
        "mock-scenario.yaml",
        include_str!("init/mock-scenario.yaml.tmpl"),
    ),
    ("evals/evals.json", include_str!("init/evals.json.tmpl")),
];

/// Runs the command.
pub fn init(args: &InitArgs, global: &GlobalArgs, console: Console) -> Result<Outcome, Failure> {
    check_name(&args.name).map_err(Failure::usage)?;
    let parent = args
        .dir
        .clone()
        .or_else(|| global.skills_dirs.first().cloned())
        .unwrap_or_else(|| PathBuf::from("skills"));
    let folder = parent.join(&args.name);
    if folder.exists() {
        return Err(Failure::usage(format!(
            "{}: already exists; choose another name or --dir (nothing was written)",
            folder.display()
        )));
    }
    std::fs::create_dir_all(&parent)
        .map_err(|e| Failure::setup(format!("{}: cannot create: {e}", parent.display())))?;
    // `create_dir`, not `_all`: a folder that appeared since the check above is not ours to
    // fill (or to remove on failure).
    match std::fs::create_dir(&folder) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Failure::usage(format!(
                "{}: already exists; choose another name or --dir (nothing was written)",
                folder.display()
            )));
        }
        Err(e) => {
            return Err(Failure::setup(format!(
                "{}: cannot create: {e}",
                folder.display()
            )));
        }
    }
    if let Err(e) = write_files(&folder, &args.name) {
        let _ = std::fs::remove_dir_all(&folder);
        return Err(Failure::setup(format!(
            "{}: cannot write the skill ({e}); nothing was left behind",
            folder.display()
        )));
    }
    let shown = folder.display();
    let mut stdout = std::io::stdout().lock();
    for (path, _) in FILES {
        let _ = writeln!(stdout, "{shown}/{path}");
    }
    console.notice(format!(
        "created skill {name} in {shown}; try:\n  skillet validate {shown} --strict\n  \
         skillet run {shown} --args @{shown}/examples/basic.json\n  skillet eval {shown}",
        name = args.name
    ));
    Ok(Outcome::Success)
}

fn write_files(folder: &Path, name: &str) -> std::io::Result<()> {
    for (path, template) in FILES {
        let file = folder.join(path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&file, template.replace("__NAME__", name))?;
    }
    Ok(())
}

/// The skill loader's rule for a name (`skillet_engine::skill::name_problems`), refused with a
/// valid name to use instead.
fn check_name(name: &str) -> Result<(), String> {
    let problems = skillet_engine::skill::name_problems(name);
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "skill name {name:?}: {}; e.g. {:?}",
        problems.join("; "),
        suggested_name(name)
    ))
}

/// `name` made valid, for the error message: lowercased, other characters as `-`, runs of
/// `-` collapsed, trimmed (`my-skill` when nothing is left).
fn suggested_name(name: &str) -> String {
    let mut fixed = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (fixed.is_empty() || fixed.ends_with('-'))) {
            fixed.push(c);
        }
    }
    let fixed: String = fixed
        .trim_end_matches('-')
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    let fixed = fixed.trim_end_matches('-');
    if fixed.is_empty() {
        "my-skill".to_owned()
    } else {
        fixed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_loaders_rule() {
        for good in ["greet", "a", "expense-report", "v2-tool", &"x".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Greet",
            "my_skill",
            "-a",
            "a-",
            "a--b",
            "a b",
            "ü",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_refused_name_comes_with_a_valid_one() {
        assert_eq!(suggested_name("My_Skill"), "my-skill");
        assert_eq!(suggested_name("--Hello  World--"), "hello-world");
        assert_eq!(suggested_name("___"), "my-skill");
        assert!(check_name(&suggested_name("Ünïcode Näme!")).is_ok());
    }

    #[test]
    fn every_template_names_the_skill_where_the_loader_and_the_mock_need_it() {
        let skill = FILES[0].1.replace("__NAME__", "greet");
        assert!(skill.contains("name: greet\n"));
        assert!(skill.contains("You are greet, a skill"));
        assert!(skill.contains("{{ person }}"));
        let scenario = FILES[4].1.replace("__NAME__", "greet");
        assert!(scenario.contains("system_contains: \"You are greet, a skill\""));
        let evals = FILES[5].1.replace("__NAME__", "greet");
        assert!(evals.contains("\"skill_name\": \"greet\""));
    }
}
