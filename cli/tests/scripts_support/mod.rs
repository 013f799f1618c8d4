//! The host folder the script-environment tests run the real binary in (`skills/`, an
//! environments cache, a `skillet.toml` with scripts on) and the `uv` they build with.
//!
//! uv is `$SKILLET_UV`, else `uv` beside `$SKILLET_PYTHON`, else `<workspace>/.venv/bin/uv`
//! (`mock-llm/tests/python/requirements.txt` pins it). Without uv a test is skipped with a
//! notice, and fails under `CI`.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::cli_support::SKILLET;

pub fn uv() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("SKILLET_UV").map(PathBuf::from),
        std::env::var_os("SKILLET_PYTHON")
            .map(PathBuf::from)
            .and_then(|p| p.parent().map(|d| d.join("uv"))),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/uv")),
        Some(PathBuf::from("/work/main/.venv/bin/uv")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no uv: set SKILLET_UV or install mock-llm/tests/python/requirements.txt"
        );
        eprintln!(
            "\n==== SKIPPED script environment test: no uv ($SKILLET_UV, .venv/bin/uv) ====\n"
        );
    }
    found
}

/// A host folder: `skills/`, an environments cache, and a `skillet.toml` with scripts on.
pub struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    pub fn new(uv: &Path, extra: &str) -> Host {
        Host::with_skills_lines(&format!("uv = \"{}\"\n{extra}", uv.display()))
    }

    /// A host whose config names no uv (a machine with Python alone: builds use venv + pip
    /// when no uv is on the `PATH` the command gets).
    pub fn without_uv(extra: &str) -> Host {
        Host::with_skills_lines(extra)
    }

    fn with_skills_lines(lines: &str) -> Host {
        let dir = tempfile::tempdir().unwrap();
        // The sandbox's uid (65534 when the tests run as root) reads the skills and the
        // environments under it.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir(dir.path().join("skills")).unwrap();
        std::fs::write(
            dir.path().join("skillet.toml"),
            format!(
                "[skills]\nenvironments_dir = \"{}\"\n{lines}\n[skills.scripts]\nenabled = true\n",
                dir.path().join("envs").display()
            ),
        )
        .unwrap();
        Host { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn envs(&self) -> PathBuf {
        self.path().join("envs")
    }

    /// A skill `name` with `requirements` whose scenario runs `script` (`scripts/<file>`) and
    /// answers `OK` when its output contains `expect`, else `FAILED: <what it got>`.
    pub fn skill(&self, name: &str, requirements: &str, script: (&str, &str), expect: &str) {
        let dir = self.path().join("skills").join(name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Runs its script.\n---\nRun the script.\n"),
        )
        .unwrap();
        if !requirements.is_empty() {
            std::fs::write(dir.join("requirements.txt"), requirements).unwrap();
        }
        std::fs::write(dir.join("scripts").join(script.0), script.1).unwrap();
        std::fs::write(
            dir.join("mock-scenario.yaml"),
            format!(
                "rules:\n  - when: {{ turn: 1 }}\n    reply:\n      tool_calls:\n        - name: \
                 run_skill_script\n          arguments: {{ path: scripts/{} }}\n  - when: {{ \
                 tool_result_contains: {expect:?} }}\n    reply:\n      text: \"OK\"\n  - \
                 when: {{ tool_results: true }}\n    reply:\n      text: \"FAILED\"\n",
                script.0
            ),
        )
        .unwrap();
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(SKILLET);
        command
            .current_dir(self.path())
            .arg("--config")
            .arg(self.path().join("skillet.toml"))
            .arg("--skills-dir")
            .arg(self.path().join("skills"))
            .args(args)
            .env_remove("SKILLET_CONFIG")
            .env_remove("RUST_LOG")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY");
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run skillet")
    }
}

pub fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Appends `line` to the host's `[skills.scripts]` table (the last one in its `skillet.toml`).
pub fn scripts_setting(host: &Host, line: &str) {
    let config = host.path().join("skillet.toml");
    let mut toml = std::fs::read_to_string(&config).unwrap();
    toml.push_str(line);
    toml.push('\n');
    std::fs::write(&config, toml).unwrap();
}

/// Gives skill `name` the frontmatter `metadata` line `a2e-system-tools: NEEDS`.
pub fn needs_system_tools(host: &Host, name: &str, needs: &str) {
    std::fs::write(
        host.path().join("skills").join(name).join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Runs its script.\nmetadata:\n  a2e-system-tools: \
             '{needs}'\n---\nRun the script.\n"
        ),
    )
    .unwrap();
}
