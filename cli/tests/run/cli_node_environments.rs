//! Bundled Node scripts with their dependencies, through the real binary, the real `npm` and
//! the real sandbox: a skill whose `package.json` names `ms` gets a Node environment installed
//! once into the cache (a progress notice on first use, nothing on the second) — its folder
//! stays untouched — and both an ES module (`import ms from 'ms'`) and a CommonJS script
//! (`require('ms')`) find the package; `validate --scripts` reports the environment; a
//! dependency that would be fetched from git is refused and the skill is `Blocked` with why.
//!
//! The install reaches the npm registry. Without `node` and `npm` the tests are skipped with a
//! notice, and fail under `CI`.

use crate::cli_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use cli_support::SKILLET;

fn have_node() -> bool {
    let works = |program: &str| {
        Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works("node") && works("npm") {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but node or npm is missing"
    );
    eprintln!("\n==== SKIPPED Node environment test: no node/npm on PATH ====\n");
    false
}

/// A host folder with scripts on, an environments cache, and the skill `name` whose
/// `package.json` is `manifest`; its scenario runs `scripts/esm.mjs`, then `scripts/cjs.cjs`,
/// and answers `OK` when both printed what `ms` computes, else `FAILED`.
fn host_with(name: &str, manifest: &str) -> tempfile::TempDir {
    let host = tempfile::tempdir().unwrap();
    // The sandbox's uid (65534 when the tests run as root) reads the skill and the cache.
    std::fs::set_permissions(host.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        host.path().join("skillet.toml"),
        format!(
            "[skills]\nenvironments_dir = \"{}\"\n[skills.scripts]\nenabled = true\n",
            host.path().join("envs").display()
        ),
    )
    .unwrap();
    let skill = host.path().join("skills").join(name);
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Runs its scripts.\n---\nRun the scripts.\n"),
    )
    .unwrap();
    std::fs::write(skill.join("package.json"), manifest).unwrap();
    std::fs::write(
        skill.join("scripts/esm.mjs"),
        "import ms from 'ms';\nconsole.log('esm', ms('2h'));\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/cjs.cjs"),
        "const ms = require('ms');\nconsole.log('cjs', ms(1000));\n",
    )
    .unwrap();
    let call = |script: &str| {
        format!(
            "reply:\n      tool_calls:\n        - name: run_skill_script\n          \
             arguments: {{ path: scripts/{script} }}"
        )
    };
    std::fs::write(
        skill.join("mock-scenario.yaml"),
        format!(
            "rules:\n  - when: {{ turn: 1 }}\n    {}\n  - when: {{ tool_result_contains: \"cjs \
             1s\" }}\n    reply:\n      text: \"OK\"\n  - when: {{ tool_result_contains: \"esm \
             7200000\" }}\n    {}\n  - when: {{ tool_results: true }}\n    reply:\n      text: \
             \"FAILED\"\n",
            call("esm.mjs"),
            call("cjs.cjs")
        ),
    )
    .unwrap();
    host
}

fn skillet(host: &Path, args: &[&str]) -> Output {
    Command::new(SKILLET)
        .current_dir(host)
        .arg("--config")
        .arg(host.join("skillet.toml"))
        .arg("--skills-dir")
        .arg(host.join("skills"))
        .args(args)
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .output()
        .expect("run skillet")
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

const INSTALLING: &str = "installing the Node packages of skill `clock`";

#[test]
fn esm_and_commonjs_scripts_import_the_skills_packages_installed_once_outside_its_folder() {
    if !have_node() {
        return;
    }
    let host = host_with(
        "clock",
        r#"{"name": "clock", "dependencies": {"ms": "2.1.3"}}"#,
    );
    let path = host.path();

    let first = skillet(path, &["run", "clock", "what time is it"]);
    let out = text(&first);
    assert_eq!(first.status.code(), Some(0), "{out}");
    assert!(
        out.contains(INSTALLING),
        "the first use installs, and says so: {out}"
    );
    assert_eq!(String::from_utf8_lossy(&first.stdout).trim(), "OK", "{out}");
    let skill_files: Vec<String> = std::fs::read_dir(path.join("skills/clock"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !skill_files.iter().any(|f| f == "node_modules"),
        "nothing is installed into the skill's folder: {skill_files:?}"
    );
    let envs: Vec<_> = std::fs::read_dir(path.join("envs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("skillet-env.json").is_file())
        .collect();
    assert_eq!(envs.len(), 1, "{envs:?}");
    assert!(envs[0].join("node_modules/ms/package.json").is_file());

    let second = skillet(path, &["run", "clock", "what time is it"]);
    let out = text(&second);
    assert_eq!(
        String::from_utf8_lossy(&second.stdout).trim(),
        "OK",
        "{out}"
    );
    assert!(
        !out.contains(INSTALLING),
        "the second run installs nothing: {out}"
    );

    let validate = skillet(
        path,
        &[
            "validate",
            "--scripts",
            path.join("skills").to_str().unwrap(),
        ],
    );
    let out = text(&validate);
    assert_eq!(validate.status.code(), Some(0), "{out}");
    assert!(out.contains("node environment: ready (ms@2.1.3)"), "{out}");
}

#[test]
fn a_dependency_from_git_is_refused_and_blocks_the_skill_with_why() {
    if !have_node() {
        return;
    }
    let host = host_with(
        "clock",
        r#"{"dependencies": {"ms": "git+https://github.com/vercel/ms.git"}}"#,
    );
    let path = host.path();
    let validate = skillet(
        path,
        &[
            "validate",
            "--scripts",
            path.join("skills").to_str().unwrap(),
        ],
    );
    let out = text(&validate);
    assert_ne!(validate.status.code(), Some(0), "{out}");
    assert!(
        out.contains("environment: error: Node: package.json: \"ms\""),
        "{out}"
    );
    assert!(out.contains("only registry versions"), "{out}");

    let run = skillet(path, &["run", "clock", "what time is it"]);
    let out = text(&run);
    assert_ne!(run.status.code(), Some(0), "{out}");
    assert!(out.contains("only registry versions"), "{out}");
    assert!(
        !path.join("envs").exists() || std::fs::read_dir(path.join("envs")).unwrap().count() == 0
    );
}
