//! Issue 48's supply-chain findings through the real binary: nothing from a skill folder runs
//! outside the sandbox, and no host secret is written where a script can read it.
//!
//! - H3: a requirement in `metadata.a2e-requirements` that smuggles `--find-links` or `-e`
//!   behind a newline makes the skill `Blocked` with the reason and the source, and uv never
//!   runs (a stand-in `uv` records every invocation).
//! - E1: a folder's requirements are installed `--only-binary :all:` unless `[skills] builds`
//!   allows source distributions.
//! - H4: a `package.json` whose `optionalDependencies` names a local folder: the manifest npm
//!   reads has none, and nothing of it is installed (the real npm; it reaches the registry for
//!   `ms`; skipped without node/npm, failing under `CI`).
//! - H5: a canary password in `[skills] package_index` reaches uv only through its
//!   environment (not argv), and is in no file under the environments directory (the marker
//!   holds the index without it) and not on stderr at `-vvv`.

use crate::scripts_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use scripts_support::{Host, text};

/// A stand-in `uv` in its own folder: it records its arguments and the index it was given in
/// `uv.log` beside it, makes a venv of the interpreter it is given (a `bin/python` link and a
/// `pyvenv.cfg`), and installs nothing.
struct FakeUv {
    dir: tempfile::TempDir,
}

impl FakeUv {
    fn new() -> FakeUv {
        let dir = tempfile::tempdir().unwrap();
        let uv = dir.path().join("uv");
        std::fs::write(
            &uv,
            format!(
                "#!/bin/sh\necho \"argv: $*\" >> {log}\necho \"index: $UV_DEFAULT_INDEX home: \
                 $HOME\" >> {log}\nprev=; for arg; do [ \"$prev\" = --python ] && py=$arg; \
                 prev=$arg; done\ncase \"$*\" in\n  *\" venv \"*) for last; do :; done; \
                 mkdir -p \"$last/bin\"; ln -s \"$py\" \"$last/bin/python\"; printf 'home = \
                 %s\\n' \"$(dirname \"$py\")\" > \"$last/pyvenv.cfg\" ;;\nesac\nexit 0\n",
                log = dir.path().join("uv.log").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeUv { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("uv")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("uv.log")).unwrap_or_default()
    }
}

fn write_skill_md(host: &Host, name: &str, metadata: &str) {
    std::fs::write(
        host.path().join("skills").join(name).join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Runs its script.\n{metadata}---\nRun the script.\n"
        ),
    )
    .unwrap();
}

fn validate_prepare(host: &Host, extra: &[&str]) -> (Option<i32>, String, String) {
    let skills = host.path().join("skills");
    let mut args = extra.to_vec();
    args.extend(["validate", "--prepare", skills.to_str().unwrap()]);
    let out = host.run(&args);
    (
        out.status.code(),
        text(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_requirement_smuggling_uv_options_behind_a_newline_is_blocked_and_uv_never_runs() {
    for smuggled in [
        r#"["evilpkg\n--find-links /tmp/evil-wheels"]"#,
        r#"["evilpkg\r\n-e /tmp/evil-src"]"#,
    ] {
        let uv = FakeUv::new();
        let host = Host::new(&uv.path(), "");
        host.skill("smuggler", "", ("x.py", "print('hi')\n"), "hi");
        write_skill_md(
            &host,
            "smuggler",
            &format!("metadata:\n  a2e-requirements: '{smuggled}'\n"),
        );
        let (code, out, _) = validate_prepare(&host, &[]);
        assert_ne!(code, Some(0), "{out}");
        assert!(
            out.contains("environment: error: metadata.a2e-requirements: "),
            "the reason names the source: {out}"
        );
        assert!(out.contains("line break"), "{out}");
        // A script call is refused the same way.
        let run = host.run(&["run", "smuggler", "go"]);
        let run_out = text(&run);
        assert!(run_out.contains("line break"), "{run_out}");
        assert_eq!(uv.log(), "", "uv never ran");
    }
}

#[test]
fn a_folders_requirements_are_installed_from_wheels_only_unless_builds_allows_sdists() {
    let uv = FakeUv::new();
    let host = Host::new(&uv.path(), "");
    host.skill("pdf", "pypdf\n", ("x.py", "print('hi')\n"), "hi");
    let (code, out, _) = validate_prepare(&host, &[]);
    assert_eq!(code, Some(0), "{out}");
    let install = |log: &str| {
        log.lines()
            .filter(|l| l.contains(" pip install "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let default = install(&uv.log());
    assert_eq!(default.len(), 1, "{}", uv.log());
    assert!(default[0].contains("--only-binary :all:"), "{default:?}");

    let uv = FakeUv::new();
    let host = Host::new(&uv.path(), "builds = \"allow-sdist\"");
    host.skill("pdf", "pypdf\n", ("x.py", "print('hi')\n"), "hi");
    let (code, out, _) = validate_prepare(&host, &[]);
    assert_eq!(code, Some(0), "{out}");
    let allowed = install(&uv.log());
    assert_eq!(allowed.len(), 1, "{}", uv.log());
    assert!(!allowed[0].contains("--only-binary"), "{allowed:?}");
}

/// Every regular file under `dir` (symlinks are not followed).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            found.extend(files_under(&entry.path()));
        } else if kind.is_file() {
            found.push(entry.path());
        }
    }
    found
}

#[test]
fn a_canary_index_password_reaches_uv_only_through_its_environment_and_no_file_or_log() {
    const CANARY: &str = "canary-index-pw-5150";
    let uv = FakeUv::new();
    let host = Host::new(
        &uv.path(),
        &format!("package_index = \"https://me:{CANARY}@127.0.0.1:9/simple\""),
    );
    host.skill("pdf", "pypdf\n", ("x.py", "print('hi')\n"), "hi");
    let (code, out, stderr) = validate_prepare(&host, &["-vvv"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("environment: ready (pypdf)"), "{out}");
    assert!(!stderr.contains(CANARY), "not on stderr at -vvv: {stderr}");
    assert!(!out.contains(CANARY), "{out}");

    let log = uv.log();
    assert!(
        log.contains(&format!("index: https://me:{CANARY}@127.0.0.1:9/simple")),
        "uv is given the index in its environment: {log}"
    );
    assert!(
        !log.lines()
            .filter(|l| l.starts_with("argv:"))
            .any(|l| l.contains(CANARY)),
        "not in uv's argv: {log}"
    );
    let files = files_under(&host.envs());
    let marker = files
        .iter()
        .find(|f| f.ends_with("skillet-env.json"))
        .unwrap_or_else(|| panic!("a marker among {files:?}"));
    let marker_text = std::fs::read_to_string(marker).unwrap();
    assert!(
        marker_text.contains("\"https://127.0.0.1:9/simple\""),
        "the marker names the index without credentials: {marker_text}"
    );
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the index password",
            file.display()
        );
    }

    // From inside the sandbox: a script walks its environment and its own variables.
    let script = format!(
        "import os, sys\nleaks = [os.path.join(d, f) for d, _, fs in os.walk(sys.prefix) for f \
         in fs if '{CANARY}' in open(os.path.join(d, f), errors='ignore').read()]\nleaks += \
         ['env'] if '{CANARY}' in str(os.environ) else []\nprint('leaks=%d venv=%s' % \
         (len(leaks), sys.prefix != sys.base_prefix), leaks)\n"
    );
    host.skill("pdf", "pypdf\n", ("x.py", &script), "leaks=0 venv=True");
    let run = host.run(&["-vvv", "run", "pdf", "go"]);
    let out = text(&run);
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "OK", "{out}");
    assert!(!out.contains(CANARY), "{out}");
}

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

#[test]
fn npm_reads_only_the_registry_dependencies_of_a_skills_package_json() {
    if !have_node() {
        return;
    }
    let uv = FakeUv::new();
    let host = Host::new(&uv.path(), "");
    // A local package the manifest's optional dependencies point at.
    let evil = host.path().join("evil");
    std::fs::create_dir(&evil).unwrap();
    std::fs::write(
        evil.join("package.json"),
        r#"{"name": "evil", "version": "1.0.0"}"#,
    )
    .unwrap();
    host.skill("clock", "", ("x.mjs", "console.log('hi')\n"), "hi");
    let skill = host.path().join("skills/clock");
    std::fs::write(
        skill.join("package.json"),
        format!(
            r#"{{"name": "clock", "dependencies": {{"ms": "2.1.3"}},
                "optionalDependencies": {{"evil": "file:{}"}},
                "overrides": {{"left-pad": "file:{}"}},
                "scripts": {{"preinstall": "touch {}/ran"}}}}"#,
            evil.display(),
            evil.display(),
            host.path().display()
        ),
    )
    .unwrap();
    let (code, out, _) = validate_prepare(&host, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("node environment: ready (ms@2.1.3)"), "{out}");
    let env = std::fs::read_dir(host.envs())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("node-"))
                && p.join("skillet-env.json").is_file()
        })
        .expect("a Node environment");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.join("package.json")).unwrap()).unwrap();
    assert_eq!(
        manifest,
        serde_json::json!({"private": true, "dependencies": {"ms": "2.1.3"}}),
        "the manifest npm read"
    );
    assert!(env.join("node_modules/ms").is_dir());
    assert!(
        std::fs::symlink_metadata(env.join("node_modules/evil")).is_err(),
        "the optional dependency from a folder was not installed"
    );
    assert!(!host.path().join("ran").exists(), "no script ran");
}
