//! `skillet validate` on skills as the public corpus writes them: a description over the
//! Agent Skills limit (the `claude-api` case) and an `allowed-tools` name Skillet cannot map are
//! warnings — the skill loads and is `Published` — and errors only with `--strict`.

use crate::cli_support;

use std::path::PathBuf;
use std::process::{Command, Output};

use cli_support::*;

fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/long-description")
        .display()
        .to_string()
}

fn skillet(args: &[&str]) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    Command::new(SKILLET)
        .current_dir(cwd.path())
        .args(args)
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .output()
        .expect("run skillet")
}

#[test]
fn a_long_description_is_a_warning_and_an_error_only_under_strict() {
    let lenient = skillet(&["validate", &fixture()]);
    let out = String::from_utf8_lossy(&lenient.stdout).into_owned()
        + &String::from_utf8_lossy(&lenient.stderr);
    assert_eq!(lenient.status.code(), Some(0), "{out}");
    assert!(
        out.contains("frontmatter.description: warning: `description` is 1068 characters long"),
        "{out}"
    );
    assert!(
        out.contains("`WebFetch` has no Skillet equivalent"),
        "{out}"
    );
    assert!(out.contains("0 error(s), 2 warning(s)"), "{out}");

    let strict = skillet(&["validate", "--strict", &fixture()]);
    assert_ne!(strict.status.code(), Some(0));
}

#[test]
fn a_long_description_skill_is_published_in_discover() {
    let root = PathBuf::from(fixture())
        .parent()
        .unwrap()
        .display()
        .to_string();
    let out = skillet(&["--skills-dir", &root, "discover", "--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let skills: serde_json::Value = serde_json::from_str(&text).expect("discover --json");
    let found = skills
        .as_array()
        .or_else(|| skills["skills"].as_array())
        .expect("a list of skills")
        .iter()
        .find(|s| s["name"] == "long-description")
        .cloned()
        .expect("listed");
    assert_eq!(found["status"], "Published", "{found}");
}
